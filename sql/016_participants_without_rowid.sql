-- SPDX-License-Identifier: Apache-2.0
-- 016_participants_without_rowid.sql: participants is kept in its primary key's order,
-- with no second copy of the key (STORE-10, decision-068).
--
-- A rowid table with a text primary key stores every row twice over: once in the table
-- under its rowid, once more in the key's index (sqlite_autoindex_participants_1), each
-- entry repeating the 36-character task id. bench/pages.sh's database (decision-065)
-- spends about 100 bytes per echo task on that index alone. A WITHOUT ROWID table is its
-- primary key's b-tree, so the index goes.
--
-- The store orders a task's participants by (added_ms, rowid): the order they joined in,
-- which a WITHOUT ROWID table does not keep. The table therefore has an ordinary column
-- named rowid, which the insert fills with the task's next number (1, 2, 3 ...), and the
-- statements that order by rowid read it unchanged. Existing rows keep their rowid.
--
-- The table is rebuilt the way 014 rebuilt tasks (foreign keys off, checked before
-- commit). channel_members refers to participants by name, and so to the new table. The
-- triggers and the index on participants go with the old table and are made again, and
-- so is the trigger on tasks that writes participants (the rename checks every trigger).
DROP TRIGGER tasks_status_ms_to_participants;
CREATE TABLE participants_016 (
	task_id        TEXT NOT NULL REFERENCES tasks(id) ON DELETE CASCADE,
	participant_id TEXT NOT NULL,
	kind           TEXT NOT NULL CHECK (kind IN ('human', 'agent')),
	role           TEXT NOT NULL CHECK (role = 'assignee' OR role = 'reporter' OR role = 'watcher'
		OR role = 'admin'),
	display_name   TEXT NOT NULL DEFAULT '',
	added_ms       INTEGER NOT NULL,
	status_ms      INTEGER NOT NULL DEFAULT 0,
	rowid          INTEGER NOT NULL,
	PRIMARY KEY (task_id, participant_id)
) STRICT, WITHOUT ROWID;
INSERT INTO participants_016 (task_id, participant_id, kind, role, display_name, added_ms,
	status_ms, rowid)
SELECT task_id, participant_id, kind, role, display_name, added_ms, status_ms, rowid
FROM participants;
DROP TABLE participants;
ALTER TABLE participants_016 RENAME TO participants;

CREATE INDEX participants_by_participant
	ON participants(participant_id, status_ms, task_id)
	WHERE participant_id <> 'tiny-harness';
CREATE TRIGGER participants_count_insert
AFTER INSERT ON participants WHEN NEW.participant_id <> 'tiny-harness'
BEGIN
	INSERT INTO participant_task_counts (participant_id, tasks) VALUES (NEW.participant_id, 1)
	ON CONFLICT (participant_id) DO UPDATE SET tasks = tasks + 1;
END;
CREATE TRIGGER participants_count_delete
AFTER DELETE ON participants WHEN OLD.participant_id <> 'tiny-harness'
BEGIN
	UPDATE participant_task_counts SET tasks = tasks - 1 WHERE participant_id = OLD.participant_id;
END;
CREATE TRIGGER tasks_status_ms_to_participants
AFTER UPDATE OF status_ms ON tasks WHEN NEW.status_ms <> OLD.status_ms
BEGIN
	UPDATE participants SET status_ms = NEW.status_ms
	WHERE task_id = NEW.id AND participant_id <> 'tiny-harness';
END;
