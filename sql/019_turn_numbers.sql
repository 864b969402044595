-- SPDX-License-Identifier: Apache-2.0
-- 019_turn_numbers.sql: a turn is keyed by its task's number, not by the 36-character
-- task id (STORE-10, decision-075).
--
-- Every message a participant sends leaves a turn row (an instant one is recorded when it
-- ends, so that operators see one turn per message), and each repeated the text task id
-- that tasks.num (migration 014) already numbers. The rows move to turn_rows, keyed by the
-- task's number as event_rows and message_rows are; turns becomes a view with the columns
-- it had, so every statement and operator query that reads it keeps working, and the
-- store writes the table. Turn ids are kept (the rowid, an INTEGER PRIMARY KEY as before),
-- and so is the name of the index of live turns, on the new table.
CREATE TABLE turn_rows (
	id             INTEGER PRIMARY KEY,
	task_num       INTEGER NOT NULL REFERENCES tasks(num) ON DELETE CASCADE,
	message_id     TEXT NOT NULL,
	state          TEXT NOT NULL DEFAULT 'queued'
		CHECK (state = 'queued' OR state = 'running' OR state = 'done' OR state = 'cut'
		OR state = 'failed'),
	attempts       INTEGER NOT NULL DEFAULT 0,
	worker_pid     INTEGER,
	lease_until_ms INTEGER,
	cut            INTEGER NOT NULL DEFAULT 0 CHECK (cut IN (0, 1)),
	error          TEXT,
	created_ms     INTEGER NOT NULL,
	updated_ms     INTEGER NOT NULL
) STRICT;
INSERT INTO turn_rows (id, task_num, message_id, state, attempts, worker_pid, lease_until_ms,
	cut, error, created_ms, updated_ms)
SELECT u.id, t.num, u.message_id, u.state, u.attempts, u.worker_pid, u.lease_until_ms, u.cut,
	u.error, u.created_ms, u.updated_ms
FROM turns u JOIN tasks t ON t.id = u.task_id ORDER BY u.id;
DROP TABLE turns;
CREATE INDEX turns_live_by_task ON turn_rows(task_num) WHERE state IN ('queued', 'running');

-- The old name, for reading: the same columns as before, the task id joined back in.
CREATE VIEW turns AS
SELECT u.id, t.id AS task_id, u.message_id, u.state, u.attempts, u.worker_pid,
	u.lease_until_ms, u.cut, u.error, u.created_ms, u.updated_ms
FROM turn_rows u JOIN tasks t ON t.num = u.task_num;
