-- SPDX-License-Identifier: Apache-2.0
-- 010_lean_schema.sql: fewer indexes and a shorter inspection view (STORE-10, PKG-4,
-- decision-048).
--
-- Every process parses the whole schema when it opens the database, so a plain-CGI
-- request pays for each index, trigger and view text; and every index entry is bytes on
-- disk and a page dirtied per write. EXPLAIN QUERY PLAN of every statement in src/store
-- (tests/unit/statements.py) showed six indexes no statement uses, or whose work the
-- primary key of a narrow range does as well:
--
--   tasks_by_context            no statement reads it (ListTasks starts from the caller's
--                               participations and filters the contextId per task)
--   turns_running_by_lease,     recovery of every task reads the live turns through
--   turns_queued_by_updated     turns_live_by_task (only queued and running turns are in it)
--   channel_members_by_participant  the foreign-key look-up from participants uses the
--                               primary key's task_id prefix: one task's members
--   push_configs_by_participant  the same: one task's push configs, by primary key
--   api_keys_by_name            `keys revoke NAME` reads the small api_keys table
DROP INDEX tasks_by_context;
DROP INDEX turns_running_by_lease;
DROP INDEX turns_queued_by_updated;
DROP INDEX channel_members_by_participant;
DROP INDEX push_configs_by_participant;
DROP INDEX api_keys_by_name;

-- waiting_tasks: the same columns and rows as 006's, in fewer expression nodes (its parse
-- was a quarter of the schema's). Column names are written without table prefixes where
-- only one table of the FROM clause has them: the derived table calls the task id
-- waiting_id and the metadata's participant meta_asked, so that no name of it is also a
-- column of help_requests. The help request's id is worked out once, inside the derived
-- table (the one named in the status metadata, else the task's latest pending one, and
-- only for awaiting-answer); the join finds that request, so question and asked_by need
-- no test of sub_state, and request_id is the request found or else the named id.
DROP VIEW waiting_tasks;
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
