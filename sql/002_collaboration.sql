-- 002_collaboration.sql: channels, help requests, plans, sub-task numbering, A2UI
-- surfaces, turn recovery and push notifications (CH-1..CH-5, STATUS-1, TASK-1, TASK-4,
-- UI-1..UI-3, TURN-4, PUSH-1, PUSH-2, STORE-1).
--
-- Applied after 001 inside the same kind of BEGIN IMMEDIATE; every table references
-- tasks(id) with ON DELETE CASCADE, so deleting a task (purge) deletes its rows here too.

-- Task states an operator filters on (tasks overview, purge of terminal tasks).
CREATE INDEX tasks_by_state ON tasks(state, updated_ms);

-- Sub-task numbering (TASK-4): children are named <parent>.<n>; n = ++child_count, so a
-- number is never handed out twice even when a link or a child is deleted later. Tasks
-- that already have children start after them.
ALTER TABLE tasks ADD COLUMN child_count INTEGER NOT NULL DEFAULT 0 CHECK (child_count >= 0);
UPDATE tasks SET child_count = (SELECT count(*) FROM subtask_links l WHERE l.parent_id = tasks.id);

-- ---- channels (CH-1..CH-3) ----------------------------------------------------------------
-- Side channels only. The task channel (channel_id = the task id) has no row: it always
-- exists and its members are the task's participants, so it can never disagree with them.
CREATE TABLE channels (
	task_id    TEXT NOT NULL REFERENCES tasks(id) ON DELETE CASCADE,
	channel_id TEXT NOT NULL CHECK (channel_id <> '' AND channel_id <> task_id),
	created_by TEXT NOT NULL,
	created_ms INTEGER NOT NULL,
	PRIMARY KEY (task_id, channel_id)
) STRICT;

-- Members of a side channel; each must be a participant of the task (leaving the task
-- leaves its channels).
CREATE TABLE channel_members (
	task_id        TEXT NOT NULL,
	channel_id     TEXT NOT NULL,
	participant_id TEXT NOT NULL,
	added_ms       INTEGER NOT NULL,
	PRIMARY KEY (task_id, channel_id, participant_id),
	FOREIGN KEY (task_id, channel_id) REFERENCES channels(task_id, channel_id)
		ON DELETE CASCADE,
	FOREIGN KEY (task_id, participant_id) REFERENCES participants(task_id, participant_id)
		ON DELETE CASCADE
) STRICT;
-- The cascade from participants looks members up by participant.
CREATE INDEX channel_members_by_participant ON channel_members(task_id, participant_id);

-- Messages on any channel of a task (the task channel included); seq = 1, 2, 3, ... per
-- channel. json is the channel part's value as received (CH-1 object).
CREATE TABLE channel_messages (
	task_id     TEXT NOT NULL REFERENCES tasks(id) ON DELETE CASCADE,
	channel_id  TEXT NOT NULL,
	seq         INTEGER NOT NULL CHECK (seq >= 1),
	message_id  TEXT NOT NULL, -- the A2A messageId that carried it
	sender      TEXT NOT NULL,
	kind        TEXT NOT NULL CHECK (kind IN ('message', 'help_request', 'help_reply')),
	text        TEXT NOT NULL DEFAULT '',
	json        TEXT NOT NULL,
	in_reply_to TEXT,
	created_ms  INTEGER NOT NULL,
	PRIMARY KEY (task_id, channel_id, seq),
	CHECK (kind <> 'help_reply' OR in_reply_to IS NOT NULL)
) STRICT;

-- ---- help requests (CH-4, CH-5, STATUS-1) -----------------------------------------------
CREATE TABLE help_requests (
	id                TEXT PRIMARY KEY,
	task_id           TEXT NOT NULL REFERENCES tasks(id) ON DELETE CASCADE,
	channel_id        TEXT NOT NULL,
	asked_by          TEXT NOT NULL, -- who asks (tiny-harness for ask_participant and /ask)
	asked             TEXT NOT NULL, -- the participant asked
	question          TEXT NOT NULL,
	state             TEXT NOT NULL DEFAULT 'pending'
		CHECK (state IN ('pending', 'answered', 'canceled')),
	created_ms        INTEGER NOT NULL,
	answered_ms       INTEGER,
	answer_message_id TEXT,
	CHECK ((state = 'answered') = (answered_ms IS NOT NULL))
) STRICT;
-- The pending request of a task (latest first), and the cancel of all of them.
CREATE INDEX help_requests_by_task_state ON help_requests(task_id, state, created_ms);

-- What each INPUT_REQUIRED task is waiting for (STATUS-1, STORE-1): for awaiting-answer,
-- the participant asked, the question and the request id (from the help request named in
-- the status metadata, else the task's latest pending request, else the metadata alone).
DROP VIEW waiting_tasks;
CREATE VIEW waiting_tasks AS
SELECT
	w.id,
	w.name,
	w.sub_state,
	CASE
		WHEN w.sub_state = 'awaiting-answer'
			THEN COALESCE(h.asked, w.meta_participant, '(participant unknown)')
		ELSE 'next message from any participant'
	END AS waiting_for,
	CASE WHEN w.sub_state = 'awaiting-answer' THEN h.question END AS question,
	CASE WHEN w.sub_state = 'awaiting-answer' THEN COALESCE(h.id, w.meta_request) END
		AS request_id,
	CASE WHEN w.sub_state = 'awaiting-answer' THEN h.asked_by END AS asked_by,
	strftime('%Y-%m-%dT%H:%M:%fZ', w.status_ms / 1000.0, 'unixepoch') AS since,
	w.status_ms AS since_ms,
	w.updated_ms
FROM (
	SELECT t.id, t.name, t.sub_state, t.status_ms, t.updated_ms,
		CASE WHEN json_valid(t.status_meta_json) THEN COALESCE(
			json_extract(t.status_meta_json, '$.participant_id'),
			json_extract(t.status_meta_json,
				'$."io.github.madarauchiha-314.tiny-harness/status".participant_id'))
		END AS meta_participant,
		CASE WHEN json_valid(t.status_meta_json) THEN COALESCE(
			json_extract(t.status_meta_json, '$.request_id'),
			json_extract(t.status_meta_json,
				'$."io.github.madarauchiha-314.tiny-harness/status".request_id'))
		END AS meta_request
	FROM tasks t
	WHERE t.state = 'TASK_STATE_INPUT_REQUIRED'
) w
LEFT JOIN help_requests h
	ON w.sub_state = 'awaiting-answer' AND h.task_id = w.id
	AND h.id = COALESCE(w.meta_request,
		(SELECT p.id FROM help_requests p WHERE p.task_id = w.id AND p.state = 'pending'
		 ORDER BY p.created_ms DESC, p.rowid DESC LIMIT 1));

-- ---- plans (TASK-1, CMD-3 /plan /step) ----------------------------------------------------
-- A task's plan, one row per step in order pos = 1, 2, 3, ... (no rows: no plan).
CREATE TABLE plan_steps (
	task_id           TEXT NOT NULL REFERENCES tasks(id) ON DELETE CASCADE,
	step_id           TEXT NOT NULL CHECK (step_id <> ''),
	pos               INTEGER NOT NULL CHECK (pos >= 1),
	name              TEXT NOT NULL,
	description       TEXT NOT NULL DEFAULT '',
	depends_on_json   TEXT NOT NULL DEFAULT '[]'
		CHECK (json_valid(depends_on_json) AND json_type(depends_on_json) = 'array'),
	state             TEXT NOT NULL DEFAULT 'pending'
		CHECK (state IN ('pending', 'active', 'done', 'failed')),
	output            TEXT,
	linked_tasks_json TEXT NOT NULL DEFAULT '[]'
		CHECK (json_valid(linked_tasks_json) AND json_type(linked_tasks_json) = 'array'),
	updated_ms        INTEGER NOT NULL,
	PRIMARY KEY (task_id, step_id),
	UNIQUE (task_id, pos)
) STRICT;

-- ---- A2UI surfaces (UI-1..UI-3) ---------------------------------------------------------
-- The harness's registry of a task's surfaces (one JSON object) and the next n of the
-- artifact id a2ui:<n>.
CREATE TABLE a2ui_registry (
	task_id       TEXT PRIMARY KEY REFERENCES tasks(id) ON DELETE CASCADE,
	json          TEXT NOT NULL CHECK (json_valid(json)),
	next_artifact INTEGER NOT NULL DEFAULT 1 CHECK (next_artifact >= 1),
	updated_ms    INTEGER NOT NULL
) STRICT;

-- ---- turns (TURN-4) ---------------------------------------------------------------------
-- Recovery also looks for queued turns nobody claimed (their worker died first).
CREATE INDEX turns_by_state_updated ON turns(state, updated_ms);

-- ---- push notifications (PUSH-1, PUSH-2) ------------------------------------------------
-- One row per push config; each belongs to the participant who created it. Token and
-- credentials are stored as the harness gives them (encrypted, PUSH-4).
CREATE TABLE push_configs (
	task_id              TEXT NOT NULL REFERENCES tasks(id) ON DELETE CASCADE,
	config_id            TEXT NOT NULL CHECK (config_id <> ''),
	participant_id       TEXT NOT NULL,
	url                  TEXT NOT NULL CHECK (url <> ''),
	token_enc            BLOB,
	auth_scheme          TEXT,
	auth_credentials_enc BLOB,
	created_ms           INTEGER NOT NULL,
	updated_ms           INTEGER NOT NULL,
	PRIMARY KEY (task_id, config_id)
) STRICT;
CREATE INDEX push_configs_by_participant ON push_configs(task_id, participant_id);

-- Deliveries: one row per (config, event). 'sending' rows carry their claim's expiry in
-- next_attempt_ms, so a row whose sender died becomes due again.
CREATE TABLE push_outbox (
	id              INTEGER PRIMARY KEY,
	task_id         TEXT NOT NULL REFERENCES tasks(id) ON DELETE CASCADE,
	config_id       TEXT NOT NULL,
	seq             INTEGER NOT NULL, -- events.seq of the event delivered
	body            TEXT NOT NULL,    -- the StreamResponse POSTed
	attempts        INTEGER NOT NULL DEFAULT 0 CHECK (attempts >= 0),
	next_attempt_ms INTEGER NOT NULL,
	state           TEXT NOT NULL DEFAULT 'pending'
		CHECK (state IN ('pending', 'sending', 'delivered', 'dead')),
	last_error      TEXT,
	created_ms      INTEGER NOT NULL,
	updated_ms      INTEGER NOT NULL,
	UNIQUE (task_id, config_id, seq),
	FOREIGN KEY (task_id, config_id) REFERENCES push_configs(task_id, config_id)
		ON DELETE CASCADE
) STRICT;
-- Senders claim due rows.
CREATE INDEX push_outbox_due ON push_outbox(state, next_attempt_ms);
