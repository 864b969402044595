-- SPDX-License-Identifier: Apache-2.0
-- 024_pg_domain_columns.sql (PostgreSQL): the checked columns of the rows every write
-- makes take their domains as their types, and the table CHECKs that only cast to a
-- domain or bound a number go (SCALE-1, decision-086).
--
-- PostgreSQL reads a table's CHECK constraints from their stored node text and plans
-- them again for every INSERT and UPDATE statement (decision-082); a domain's CHECK is
-- read once per session, and a column of a domain type is checked on every value put
-- into it. A SendMessage inserts or updates tasks, participants, turn_rows and
-- event_rows seven times and so read 16 constraint texts; now it reads one (tasks_check,
-- which ties sub_state to state). The values allowed and the SQLSTATE of a refusal
-- (23514, check_violation) are the same; a refusal names the domain's constraint.
--
-- The domains lose their constraint while the columns change type and get it back after:
-- a column changed to a domain without constraints keeps its rows where they are, and
-- adding the constraint back checks every row once (no table is rewritten). The views
-- that name these columns are made again from their own stored definitions.
DO $$
DECLARE
	views text[] := ARRAY['waiting_tasks', 'events', 'turns'];
	defs text[] := ARRAY[]::text[];
	v text;
BEGIN
	FOREACH v IN ARRAY views LOOP
		defs := defs || format('CREATE VIEW %I AS %s', v, pg_get_viewdef(v::regclass));
		EXECUTE format('DROP VIEW %I', v);
	END LOOP;

	ALTER TABLE tasks
		DROP CONSTRAINT tasks_state_check,
		DROP CONSTRAINT tasks_check,
		DROP CONSTRAINT tasks_child_count_check,
		DROP CONSTRAINT tasks_status_pos_check;
	ALTER TABLE participants
		DROP CONSTRAINT participants_role_check,
		DROP CONSTRAINT participants_kind_check;
	ALTER TABLE turn_rows
		DROP CONSTRAINT turns_state_check,
		DROP CONSTRAINT turns_cut_check;
	ALTER TABLE event_rows DROP CONSTRAINT event_rows_ends_check;

	ALTER DOMAIN th_task_state DROP CONSTRAINT th_task_state_check;
	ALTER DOMAIN th_sub_state DROP CONSTRAINT th_sub_state_check;
	ALTER DOMAIN th_turn_state DROP CONSTRAINT th_turn_state_check;
	ALTER DOMAIN th_participant_role DROP CONSTRAINT th_participant_role_check;
	ALTER DOMAIN th_participant_kind DROP CONSTRAINT th_participant_kind_check;
	CREATE DOMAIN th_count AS bigint;
	CREATE DOMAIN th_position AS bigint;
	CREATE DOMAIN th_flag AS bigint;
	CREATE DOMAIN th_event_ends AS smallint;

	ALTER TABLE tasks
		ALTER COLUMN state TYPE th_task_state,
		ALTER COLUMN sub_state TYPE th_sub_state,
		ALTER COLUMN child_count TYPE th_count,
		ALTER COLUMN status_pos TYPE th_position;
	ALTER TABLE participants
		ALTER COLUMN kind TYPE th_participant_kind,
		ALTER COLUMN role TYPE th_participant_role;
	ALTER TABLE turn_rows
		ALTER COLUMN state TYPE th_turn_state,
		ALTER COLUMN cut TYPE th_flag;
	ALTER TABLE event_rows ALTER COLUMN ends TYPE th_event_ends;

	ALTER DOMAIN th_task_state ADD CONSTRAINT th_task_state_check CHECK (VALUE = ANY (
		'{TASK_STATE_UNSPECIFIED,TASK_STATE_SUBMITTED,TASK_STATE_WORKING,
		TASK_STATE_COMPLETED,TASK_STATE_FAILED,TASK_STATE_CANCELED,
		TASK_STATE_INPUT_REQUIRED,TASK_STATE_REJECTED,TASK_STATE_AUTH_REQUIRED}'::text[]));
	ALTER DOMAIN th_sub_state ADD CONSTRAINT th_sub_state_check
		CHECK (VALUE = ANY ('{awaiting-next-message,awaiting-answer}'::text[]));
	ALTER DOMAIN th_turn_state ADD CONSTRAINT th_turn_state_check
		CHECK (VALUE = ANY ('{queued,running,done,cut,failed}'::text[]));
	ALTER DOMAIN th_participant_role ADD CONSTRAINT th_participant_role_check
		CHECK (VALUE = ANY ('{assignee,reporter,watcher,admin}'::text[]));
	ALTER DOMAIN th_participant_kind ADD CONSTRAINT th_participant_kind_check
		CHECK (VALUE = ANY ('{human,agent}'::text[]));
	ALTER DOMAIN th_count ADD CONSTRAINT th_count_check CHECK (VALUE >= 0);
	ALTER DOMAIN th_position ADD CONSTRAINT th_position_check CHECK (VALUE > 0);
	ALTER DOMAIN th_flag ADD CONSTRAINT th_flag_check CHECK (VALUE = 0 OR VALUE = 1);
	ALTER DOMAIN th_event_ends ADD CONSTRAINT th_event_ends_check
		CHECK (VALUE = 0 OR VALUE = 1 OR VALUE = 2);
	-- The one rule between two columns stays the table's.
	ALTER TABLE tasks ADD CONSTRAINT tasks_check
		CHECK (sub_state IS NULL OR state = 'TASK_STATE_INPUT_REQUIRED');

	FOREACH v IN ARRAY defs LOOP
		EXECUTE v;
	END LOOP;
END $$;
