-- SPDX-License-Identifier: Apache-2.0
-- 022_pg_check_domains.sql (PostgreSQL): the enumerated columns are checked through
-- domains (SCALE-1, decision-082).
--
-- PostgreSQL reads a table's CHECK constraints from their stored node text and plans them
-- again for every INSERT and UPDATE statement (ExecConstraints: stringToNode and
-- ExecPrepareExpr per statement, not per session). The lists of allowed values were the
-- longest of those texts: 4,100 characters for the task's state, 2,089 for a turn's,
-- 1,707 for a participant's role. With perf on the backends under SendMessage load,
-- ExecConstraints was 12.7% of PostgreSQL's CPU. A domain's CHECK is parsed and planned
-- once per session (the type cache), so each list is now a domain and the table's
-- constraint, under its old name, only casts the column to it. Which values are allowed
-- is unchanged; a refused value still fails with SQLSTATE 23514 (check_violation), now
-- naming the domain's constraint (th_task_state_check, ...).
CREATE DOMAIN th_task_state AS text CHECK (VALUE = ANY ('{TASK_STATE_UNSPECIFIED,
TASK_STATE_SUBMITTED,TASK_STATE_WORKING,TASK_STATE_COMPLETED,TASK_STATE_FAILED,
TASK_STATE_CANCELED,TASK_STATE_INPUT_REQUIRED,TASK_STATE_REJECTED,TASK_STATE_AUTH_REQUIRED}'
	::text[]));
CREATE DOMAIN th_sub_state AS text
	CHECK (VALUE = ANY ('{awaiting-next-message,awaiting-answer}'::text[]));
CREATE DOMAIN th_turn_state AS text
	CHECK (VALUE = ANY ('{queued,running,done,cut,failed}'::text[]));
CREATE DOMAIN th_participant_role AS text
	CHECK (VALUE = ANY ('{assignee,reporter,watcher,admin}'::text[]));
CREATE DOMAIN th_participant_kind AS text CHECK (VALUE = ANY ('{human,agent}'::text[]));

-- A cast to a domain is NULL only for NULL (the columns below are NOT NULL, and
-- sub_state's NULL is allowed first), and raises check_violation for a value outside it.
ALTER TABLE tasks
	DROP CONSTRAINT tasks_state_check,
	DROP CONSTRAINT tasks_check,
	ADD CONSTRAINT tasks_state_check CHECK ((state::th_task_state) IS NOT NULL),
	ADD CONSTRAINT tasks_check CHECK (sub_state IS NULL OR
		((sub_state::th_sub_state) IS NOT NULL AND state = 'TASK_STATE_INPUT_REQUIRED'));
ALTER TABLE turn_rows
	DROP CONSTRAINT turns_state_check,
	ADD CONSTRAINT turns_state_check CHECK ((state::th_turn_state) IS NOT NULL);
ALTER TABLE participants
	DROP CONSTRAINT participants_role_check,
	DROP CONSTRAINT participants_kind_check,
	ADD CONSTRAINT participants_role_check CHECK ((role::th_participant_role) IS NOT NULL),
	ADD CONSTRAINT participants_kind_check CHECK ((kind::th_participant_kind) IS NOT NULL);
