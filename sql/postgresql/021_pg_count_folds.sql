-- SPDX-License-Identifier: Apache-2.0
-- 021_pg_count_folds.sql (PostgreSQL): a participation folds its participant's count
-- rows once in sixteen, not every time (SCALE-1).
--
-- Since migration 012 every new participation, and every removal, first folded the rows
-- of its participant that no other transaction holds into the one it inserts. With one
-- participant writing (one API client for a whole site), perf on the backends under
-- SendMessage load put 17% of all CPU in that fold: an index scan of the participant's
-- rows, most of them dead versions the folds before had deleted and autovacuum had not
-- yet removed, so the rate fell as a run went on (1,401, 1,198, 1,059 req/s in three
-- 8 s rounds). Now only a participation whose task id hashes to 0 modulo 16 folds; the
-- others insert their +1 or -1 row and nothing else. The view still sums every row, so
-- the totals stay exact; a participant keeps some sixteen rows more, which the sum reads
-- in the same index range. Which participations fold depends on the task id alone.
CREATE OR REPLACE FUNCTION th_participants_count_insert() RETURNS trigger
LANGUAGE plpgsql
AS $$
	BEGIN
		IF hashtext(NEW.task_id) & 15 = 0 THEN
			PERFORM th_participant_count_add(NEW.participant_id, 1);
		ELSE
			INSERT INTO participant_task_count_rows (participant_id, tasks)
			VALUES (NEW.participant_id, 1);
		END IF;
		RETURN NULL;
	END;
$$;

CREATE OR REPLACE FUNCTION th_participants_count_delete() RETURNS trigger
LANGUAGE plpgsql
AS $$
	BEGIN
		IF hashtext(OLD.task_id) & 15 = 0 THEN
			PERFORM th_participant_count_add(OLD.participant_id, -1);
		ELSE
			INSERT INTO participant_task_count_rows (participant_id, tasks)
			VALUES (OLD.participant_id, -1);
		END IF;
		RETURN NULL;
	END;
$$;

-- The fold itself reads the participant's rows with a plain index scan: PostgreSQL chose a
-- bitmap scan, which cannot mark the index entries of deleted rows as dead, so each fold
-- walked every row the folds before had deleted until autovacuum came (490 µs a fold in
-- an 8 s run; 94 µs with the index scan, which marks them and skips them afterwards).
ALTER FUNCTION th_participant_count_add(text, bigint) SET enable_bitmapscan = off;
