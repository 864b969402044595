-- 001_init.sql: the first schema of tiny-harness (STORE-1).
--
-- Applied by th_store_open inside one BEGIN IMMEDIATE under PRAGMA user_version; the
-- binary sets user_version and application_id itself after the last file, so a file
-- never touches those pragmas. Times are integer milliseconds since the Unix epoch.
-- Tables are STRICT so a wrong type is an error, not silently stored text.

-- One row per A2A task. `state` holds the TaskState name (TASK_STATE_WORKING, ...) so an
-- operator reads it directly; `sub_state` says why an INPUT_REQUIRED task waits (STATUS-4).
CREATE TABLE tasks (
	id                  TEXT PRIMARY KEY,
	context_id          TEXT NOT NULL,
	state               TEXT NOT NULL CHECK (state IN (
		'TASK_STATE_UNSPECIFIED', 'TASK_STATE_SUBMITTED', 'TASK_STATE_WORKING',
		'TASK_STATE_COMPLETED', 'TASK_STATE_FAILED', 'TASK_STATE_CANCELED',
		'TASK_STATE_INPUT_REQUIRED', 'TASK_STATE_REJECTED', 'TASK_STATE_AUTH_REQUIRED')),
	sub_state           TEXT CHECK (sub_state IS NULL OR (
		sub_state IN ('awaiting-next-message', 'awaiting-answer')
		AND state = 'TASK_STATE_INPUT_REQUIRED')),
	status_meta_json    TEXT,
	status_message_json TEXT,
	status_ms           INTEGER NOT NULL,
	name                TEXT NOT NULL,
	goal                TEXT NOT NULL,
	ext_json            TEXT NOT NULL,
	created_by          TEXT NOT NULL,
	parent_id           TEXT REFERENCES tasks(id) ON DELETE SET NULL,
	created_ms          INTEGER NOT NULL,
	updated_ms          INTEGER NOT NULL,
	last_seq            INTEGER NOT NULL DEFAULT 0
) STRICT;
-- ListTasks order (STREAM-5) and contextId filter.
CREATE INDEX tasks_by_status ON tasks(status_ms DESC, id DESC);
CREATE INDEX tasks_by_context ON tasks(context_id, status_ms DESC, id DESC);
CREATE INDEX tasks_by_parent ON tasks(parent_id) WHERE parent_id IS NOT NULL;

-- Who is on a task and in which role. rowid order is the order they were added.
CREATE TABLE participants (
	task_id        TEXT NOT NULL REFERENCES tasks(id) ON DELETE CASCADE,
	participant_id TEXT NOT NULL,
	kind           TEXT NOT NULL CHECK (kind IN ('human', 'agent')),
	role           TEXT NOT NULL CHECK (role IN ('assignee', 'reporter', 'watcher', 'admin')),
	display_name   TEXT NOT NULL DEFAULT '',
	added_ms       INTEGER NOT NULL,
	PRIMARY KEY (task_id, participant_id)
) STRICT;
-- ListTasks starts from the caller's participations.
CREATE INDEX participants_by_participant ON participants(participant_id);

-- Task history: pos = 1, 2, 3, ... per task; json is the A2A Message as sent on the wire.
CREATE TABLE messages (
	task_id    TEXT NOT NULL REFERENCES tasks(id) ON DELETE CASCADE,
	pos        INTEGER NOT NULL,
	message_id TEXT NOT NULL,
	role       TEXT NOT NULL, -- ROLE_USER | ROLE_AGENT
	sender     TEXT NOT NULL,
	json       TEXT NOT NULL,
	created_ms INTEGER NOT NULL,
	PRIMARY KEY (task_id, pos),
	UNIQUE (task_id, message_id)
) STRICT;
-- New-task de-duplication looks a message id up without knowing its task.
CREATE INDEX messages_by_message_id ON messages(message_id);

-- The per-task event log every stream, subscription and push delivery reads (STREAM-3).
-- seq = tasks.last_seq + 1, assigned in the transaction that changes the task.
CREATE TABLE events (
	task_id    TEXT NOT NULL REFERENCES tasks(id) ON DELETE CASCADE,
	seq        INTEGER NOT NULL,
	kind       TEXT NOT NULL, -- task | status | artifact | message
	json       TEXT NOT NULL, -- a StreamResponse
	created_ms INTEGER NOT NULL,
	PRIMARY KEY (task_id, seq)
) STRICT;

-- Latest version of each artifact of a task.
CREATE TABLE artifacts (
	task_id     TEXT NOT NULL REFERENCES tasks(id) ON DELETE CASCADE,
	artifact_id TEXT NOT NULL,
	json        TEXT NOT NULL,
	created_ms  INTEGER NOT NULL,
	updated_ms  INTEGER NOT NULL,
	PRIMARY KEY (task_id, artifact_id)
) STRICT;

-- Parent -> child links; a parent cannot complete while a child is unresolved (CTL-4).
CREATE TABLE subtask_links (
	parent_id   TEXT NOT NULL REFERENCES tasks(id) ON DELETE CASCADE,
	child_id    TEXT PRIMARY KEY REFERENCES tasks(id) ON DELETE CASCADE,
	created_ms  INTEGER NOT NULL,
	resolved_ms INTEGER
) STRICT;
CREATE INDEX subtask_links_by_parent ON subtask_links(parent_id);

-- Durable units of model work with a lease (TURN-4) and a cut flag (CTL-3).
CREATE TABLE turns (
	id             INTEGER PRIMARY KEY,
	task_id        TEXT NOT NULL REFERENCES tasks(id) ON DELETE CASCADE,
	message_id     TEXT NOT NULL,
	state          TEXT NOT NULL DEFAULT 'queued'
		CHECK (state IN ('queued', 'running', 'done', 'cut', 'failed')),
	attempts       INTEGER NOT NULL DEFAULT 0,
	worker_pid     INTEGER,
	lease_until_ms INTEGER,
	cut            INTEGER NOT NULL DEFAULT 0 CHECK (cut IN (0, 1)),
	error          TEXT,
	created_ms     INTEGER NOT NULL,
	updated_ms     INTEGER NOT NULL
) STRICT;
CREATE INDEX turns_by_task_state ON turns(task_id, state);
-- Recovery looks for running turns whose lease has expired.
CREATE INDEX turns_by_state_lease ON turns(state, lease_until_ms);

-- What each INPUT_REQUIRED task is waiting for (STATUS-1, STORE-1).
CREATE VIEW waiting_tasks AS
SELECT
	id,
	name,
	sub_state,
	CASE
		WHEN sub_state = 'awaiting-answer' THEN COALESCE(
			CASE WHEN json_valid(status_meta_json)
				THEN COALESCE(json_extract(status_meta_json, '$.participant_id'),
					json_extract(status_meta_json,
						'$."io.github.madarauchiha-314.tiny-harness/status".participant_id'))
			END,
			'(participant unknown)')
		ELSE 'next message from any participant'
	END AS waiting_for,
	strftime('%Y-%m-%dT%H:%M:%fZ', status_ms / 1000.0, 'unixepoch') AS since,
	updated_ms
FROM tasks
WHERE state = 'TASK_STATE_INPUT_REQUIRED';
