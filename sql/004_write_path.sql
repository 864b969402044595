-- 004_write_path.sql: fewer pages written per SendMessage, and a ListTasks page whose
-- cost does not grow with the number of tasks (STORE-1, STREAM-5, TURN-4).
--
-- Every index entry a message writes is a b-tree page dirtied and copied to the WAL. Each
-- index below either moved to where its one reader looks, or keeps only the rows that
-- reader wants (partial indexes), so ordinary traffic no longer touches it.

-- ---- ListTasks (STREAM-5) ---------------------------------------------------------------
-- A participant's tasks in status order, read from the participations themselves: each
-- participation carries its task's status time (kept in step by the trigger below), so a
-- page is a range of one index however many tasks there are. The harness's own
-- participant is on every task and never lists tasks (ID-6): it is left out.
ALTER TABLE participants ADD COLUMN status_ms INTEGER NOT NULL DEFAULT 0;
UPDATE participants
SET status_ms = (SELECT t.status_ms FROM tasks t WHERE t.id = participants.task_id);
DROP INDEX participants_by_participant;
CREATE INDEX participants_by_participant
	ON participants(participant_id, status_ms DESC, task_id DESC)
	WHERE participant_id <> 'tiny-harness';
CREATE TRIGGER tasks_status_ms_to_participants
AFTER UPDATE OF status_ms ON tasks WHEN NEW.status_ms <> OLD.status_ms
BEGIN
	UPDATE participants SET status_ms = NEW.status_ms
	WHERE task_id = NEW.id AND participant_id <> 'tiny-harness';
END;
-- ListTasks sorted on tasks itself no more.
DROP INDEX tasks_by_status;

-- How many tasks each participant is on: ListTasks' totalSize without counting rows
-- when no filter narrows the list. Kept by triggers (a purge's cascade fires them too).
CREATE TABLE participant_task_counts (
	participant_id TEXT PRIMARY KEY,
	tasks          INTEGER NOT NULL CHECK (tasks >= 0)
) STRICT, WITHOUT ROWID;
INSERT INTO participant_task_counts (participant_id, tasks)
SELECT participant_id, count(*) FROM participants
WHERE participant_id <> 'tiny-harness' GROUP BY participant_id;
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

-- ---- messages ---------------------------------------------------------------------------
-- Only a task's first message is looked up by its id alone (TASK-7 for new tasks).
DROP INDEX messages_by_message_id;
CREATE INDEX messages_first_by_message_id ON messages(message_id, sender) WHERE pos = 1;

-- ---- tasks ------------------------------------------------------------------------------
-- Purge looks for ended tasks by age, and the waiting_tasks view for tasks in
-- INPUT_REQUIRED; a task passing through SUBMITTED and WORKING no longer moves through an
-- index on every message.
DROP INDEX tasks_by_state;
-- (OR, not IN: SQLite checks a constant IN list of more than two values through a
-- temporary b-tree built on every statement that writes the row; an OR of equalities
-- costs nothing. Queries must spell the condition the same way to use the index.)
CREATE INDEX tasks_ended_by_updated ON tasks(updated_ms)
	WHERE state = 'TASK_STATE_COMPLETED' OR state = 'TASK_STATE_FAILED'
		OR state = 'TASK_STATE_CANCELED' OR state = 'TASK_STATE_REJECTED';
CREATE INDEX tasks_waiting ON tasks(status_ms) WHERE state = 'TASK_STATE_INPUT_REQUIRED';

-- ---- turns (TURN-4, TURN-6) -------------------------------------------------------------
-- Recovery and cuts only look for live turns; finished turns leave the indexes.
DROP INDEX turns_by_task_state;
DROP INDEX turns_by_state_lease;
DROP INDEX turns_by_state_updated;
CREATE INDEX turns_live_by_task ON turns(task_id) WHERE state IN ('queued', 'running');
CREATE INDEX turns_running_by_lease ON turns(lease_until_ms) WHERE state = 'running';
CREATE INDEX turns_queued_by_updated ON turns(updated_ms) WHERE state = 'queued';
