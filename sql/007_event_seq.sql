-- 007_event_seq.sql: an event's seq comes from the event log itself (STREAM-3, TURN-4).
--
-- Until now every appended event first bumped tasks.last_seq, so a SendMessage rewrote
-- its task's row once per event (three times for an echo reply) besides its status
-- change. The next seq is now max(events.seq) + 1 for the task, read through the events
-- primary key (task_id, seq) in the same write transaction; a task's events are only
-- deleted with the task, so the numbers stay gap-free and are never reused. The column
-- is dropped so that nothing can read a value nobody keeps. SQLite rewrites each row of
-- tasks once for this, inside the migration's transaction.
ALTER TABLE tasks DROP COLUMN last_seq;
