-- SPDX-License-Identifier: Apache-2.0
-- 014_task_numbers.sql: a task's events and messages are keyed by an integer task number,
-- not by the 36-character task id (STORE-10, HOST-2, decision-065).
--
-- decision-057 measured where an echo task's bytes are: the text task id is repeated in
-- every row and every index entry of events and messages (six times for an echo task's
-- two events and two messages), about a sixth of the task's bytes. Each task now has a
-- number, tasks.num (SQLite's rowid, an INTEGER PRIMARY KEY; an identity column on
-- PostgreSQL), and the rows live in event_rows and message_rows under (task_num, ...).
-- The names events and messages become views with the columns they had, so every
-- statement that reads them, and every operator query in docs/, keeps working; the store
-- writes the tables.
--
-- tasks is rebuilt with the new column. The program runs migrations with foreign keys
-- off (as SQLite's documentation prescribes for a table rebuild: dropping the old table
-- must not cascade to the rows that refer to it) and checks PRAGMA foreign_key_check
-- before it commits. The view and the trigger and indexes on tasks are dropped with the
-- old table and made again on the new one, unchanged.
DROP VIEW waiting_tasks;
CREATE TABLE tasks_014 (
	id                  TEXT NOT NULL UNIQUE,
	context_id          TEXT NOT NULL,
	state               TEXT NOT NULL CHECK (state = 'TASK_STATE_UNSPECIFIED' OR state = 'TASK_STATE_SUBMITTED'
		OR state = 'TASK_STATE_WORKING' OR state = 'TASK_STATE_COMPLETED'
		OR state = 'TASK_STATE_FAILED' OR state = 'TASK_STATE_CANCELED'
		OR state = 'TASK_STATE_INPUT_REQUIRED' OR state = 'TASK_STATE_REJECTED'
		OR state = 'TASK_STATE_AUTH_REQUIRED'),
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
	child_count         INTEGER NOT NULL DEFAULT 0 CHECK (child_count >= 0),
	status_pos          INTEGER CHECK (status_pos IS NULL OR status_pos > 0),
	num                 INTEGER PRIMARY KEY
) STRICT;
INSERT INTO tasks_014 (id, context_id, state, sub_state, status_meta_json,
	status_message_json, status_ms, name, goal, ext_json, created_by, parent_id, created_ms,
	updated_ms, child_count, status_pos, num)
SELECT id, context_id, state, sub_state, status_meta_json, status_message_json, status_ms,
	name, goal, ext_json, created_by, parent_id, created_ms, updated_ms, child_count,
	status_pos, rowid
FROM tasks;

CREATE TABLE event_rows (
	task_num   INTEGER NOT NULL REFERENCES tasks(num) ON DELETE CASCADE,
	seq        INTEGER NOT NULL,
	kind       TEXT NOT NULL, -- task | status | artifact | message
	json       TEXT NOT NULL, -- a StreamResponse
	created_ms INTEGER NOT NULL,
	ends       INTEGER NOT NULL DEFAULT 0 CHECK (ends = 0 OR ends = 1 OR ends = 2),
	PRIMARY KEY (task_num, seq)
) STRICT;
INSERT INTO event_rows (task_num, seq, kind, json, created_ms, ends)
SELECT t.num, e.seq, e.kind, e.json, e.created_ms, e.ends
FROM events e JOIN tasks_014 t ON t.id = e.task_id ORDER BY t.num, e.seq;

CREATE TABLE message_rows (
	task_num   INTEGER NOT NULL REFERENCES tasks(num) ON DELETE CASCADE,
	pos        INTEGER NOT NULL,
	message_id TEXT NOT NULL,
	role       TEXT NOT NULL, -- ROLE_USER | ROLE_AGENT
	sender     TEXT NOT NULL,
	json       TEXT NOT NULL,
	created_ms INTEGER NOT NULL,
	PRIMARY KEY (task_num, pos),
	UNIQUE (task_num, message_id)
) STRICT;
INSERT INTO message_rows (task_num, pos, message_id, role, sender, json, created_ms)
SELECT t.num, m.pos, m.message_id, m.role, m.sender, m.json, m.created_ms
FROM messages m JOIN tasks_014 t ON t.id = m.task_id ORDER BY m.rowid;

DROP TABLE events;
DROP TABLE messages;
DROP TABLE tasks;
ALTER TABLE tasks_014 RENAME TO tasks;
CREATE INDEX message_rows_first_by_message_id ON message_rows(message_id, sender)
	WHERE pos = 1;

CREATE INDEX tasks_by_parent ON tasks(parent_id) WHERE parent_id IS NOT NULL;
CREATE INDEX tasks_ended_by_updated ON tasks(updated_ms)
	WHERE state = 'TASK_STATE_COMPLETED' OR state = 'TASK_STATE_FAILED'
		OR state = 'TASK_STATE_CANCELED' OR state = 'TASK_STATE_REJECTED';
CREATE INDEX tasks_waiting ON tasks(status_ms) WHERE state = 'TASK_STATE_INPUT_REQUIRED';
CREATE TRIGGER tasks_status_ms_to_participants
AFTER UPDATE OF status_ms ON tasks WHEN NEW.status_ms <> OLD.status_ms
BEGIN
	UPDATE participants SET status_ms = NEW.status_ms
	WHERE task_id = NEW.id AND participant_id <> 'tiny-harness';
END;

-- The old names, for reading: the same columns as before, the task id joined back in.
-- messages keeps the insertion order it had as its rowid column.
CREATE VIEW events AS
SELECT t.id AS task_id, e.seq, e.kind, e.json, e.created_ms, e.ends
FROM event_rows e JOIN tasks t ON t.num = e.task_num;
CREATE VIEW messages AS
SELECT t.id AS task_id, m.pos, m.message_id, m.role, m.sender, m.json, m.created_ms,
	m.rowid AS rowid
FROM message_rows m JOIN tasks t ON t.num = m.task_num;
CREATE VIEW waiting_tasks AS
SELECT
	waiting_id AS id,
	name,
	sub_state,
	CASE WHEN sub_state = 'awaiting-answer'
		THEN COALESCE(asked, meta_asked, '(participant unknown)')
		ELSE 'next message from any participant' END AS waiting_for,
	question,
	COALESCE(id, request) AS request_id,
	COALESCE(asked_for, asked_by) AS asked_by,
	strftime('%Y-%m-%dT%H:%M:%fZ', status_ms / 1000.0, 'unixepoch') AS since,
	status_ms AS since_ms,
	updated_ms,
	(SELECT count(*) FROM confirmations WHERE task_id = waiting_id AND state = 'pending')
		AS confirmations_pending,
	(SELECT count(*) FROM subtask_links WHERE parent_id = waiting_id AND resolved_ms IS NULL)
		AS subtasks_open,
	(SELECT count(*) FROM help_requests WHERE task_id = waiting_id AND state = 'pending')
		AS questions_pending
FROM (
	SELECT id AS waiting_id, name, sub_state, status_ms, updated_ms,
		CASE WHEN json_valid(status_meta_json) THEN COALESCE(
			json_extract(status_meta_json, '$.participant_id'),
			json_extract(status_meta_json,
				'$."io.github.madarauchiha-314.tiny-harness/status".participant_id'))
		END AS meta_asked,
		CASE WHEN sub_state = 'awaiting-answer' THEN COALESCE(
			CASE WHEN json_valid(status_meta_json) THEN COALESCE(
				json_extract(status_meta_json, '$.request_id'),
				json_extract(status_meta_json,
					'$."io.github.madarauchiha-314.tiny-harness/status".request_id'))
			END,
			(SELECT id FROM help_requests WHERE task_id = tasks.id AND state = 'pending'
			 ORDER BY created_ms DESC, rowid DESC LIMIT 1))
		END AS request
	FROM tasks
	WHERE state = 'TASK_STATE_INPUT_REQUIRED'
)
LEFT JOIN help_requests ON id = request AND task_id = waiting_id;
