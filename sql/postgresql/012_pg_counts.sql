-- SPDX-License-Identifier: Apache-2.0
-- 012_pg_counts.sql (PostgreSQL): the per-participant task counts without a row every
-- writer waits for (SCALE-1, decision-051).
--
-- Until now every new participation incremented the one participant_task_counts row of
-- its participant (an upsert): that row stayed locked until the transaction committed,
-- so on PostgreSQL, where writes to different tasks run side by side, every task a busy
-- participant (one API client for a whole site) started waited for the one before, and
-- two group-commit batches that each added a participation for alice and for bob, in
-- opposite orders, deadlocked. The counts now live in rows that are only ever inserted:
-- a participation adds a row of +1, its removal a row of -1, and each of those first
-- folds the participant's rows that no other transaction holds (FOR UPDATE SKIP LOCKED:
-- it never waits) into the one it inserts, so a participant has about as many rows as
-- transactions writing its counts at once. participant_task_counts becomes a view with
-- the same columns, so ListTasks' total (src/store/tasks.c) reads it as before.
ALTER TABLE participant_task_counts RENAME TO participant_task_count_rows;
ALTER TABLE participant_task_count_rows DROP CONSTRAINT participant_task_counts_pkey;
ALTER TABLE participant_task_count_rows DROP CONSTRAINT participant_task_counts_tasks_check;
CREATE INDEX participant_task_count_rows_by_participant
	ON participant_task_count_rows (participant_id);

CREATE VIEW participant_task_counts AS
SELECT participant_id, sum(tasks)::bigint AS tasks
FROM participant_task_count_rows
GROUP BY participant_id;

-- Adds delta to p's count: the rows of p nobody else holds, and delta, become one row.
CREATE FUNCTION th_participant_count_add(p text, delta bigint) RETURNS void
LANGUAGE sql
AS $$
	WITH folded AS (
		DELETE FROM participant_task_count_rows
		WHERE ctid = ANY (ARRAY(
			SELECT ctid FROM participant_task_count_rows
			WHERE participant_id = p
			FOR UPDATE SKIP LOCKED))
		RETURNING tasks)
	INSERT INTO participant_task_count_rows (participant_id, tasks)
	SELECT p, delta + coalesce(sum(tasks), 0) FROM folded;
$$;

CREATE OR REPLACE FUNCTION th_participants_count_insert() RETURNS trigger
LANGUAGE plpgsql
AS $$
	BEGIN
		PERFORM th_participant_count_add(NEW.participant_id, 1);
		RETURN NULL;
	END;
$$;

CREATE OR REPLACE FUNCTION th_participants_count_delete() RETURNS trigger
LANGUAGE plpgsql
AS $$
	BEGIN
		PERFORM th_participant_count_add(OLD.participant_id, -1);
		RETURN NULL;
	END;
$$;
