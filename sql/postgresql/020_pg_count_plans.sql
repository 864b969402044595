-- SPDX-License-Identifier: Apache-2.0
-- 020_pg_count_plans.sql (PostgreSQL): th_participant_count_add in PL/pgSQL (SCALE-1).
--
-- Migration 012 wrote it in LANGUAGE sql. PostgreSQL parses and plans the body of such a
-- function again at every call from a trigger, and the participants_count_insert trigger
-- calls it once per new participation: with perf on the backends under SendMessage load,
-- fmgr_sql was 15% of PostgreSQL's CPU. A PL/pgSQL function keeps the plan of its
-- statement for the session. The statement is the same, so what it does is the same.
CREATE OR REPLACE FUNCTION th_participant_count_add(p text, delta bigint) RETURNS void
LANGUAGE plpgsql
AS $$
	BEGIN
		WITH folded AS (
			DELETE FROM participant_task_count_rows
			WHERE ctid = ANY (ARRAY(
				SELECT ctid FROM participant_task_count_rows
				WHERE participant_id = p
				FOR UPDATE SKIP LOCKED))
			RETURNING tasks)
		INSERT INTO participant_task_count_rows (participant_id, tasks)
		SELECT p, delta + coalesce(sum(tasks), 0) FROM folded;
	END;
$$;
