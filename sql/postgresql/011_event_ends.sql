-- SPDX-License-Identifier: Apache-2.0
-- sql/postgresql/011_event_ends.sql: PostgreSQL's twin of sql/011_event_ends.sql
-- (decision-052): the event records whether it ends the streams following its task.
ALTER TABLE events ADD COLUMN ends smallint NOT NULL DEFAULT 0
	CHECK (ends = 0 OR ends = 1 OR ends = 2);
UPDATE events SET ends = CASE coalesce(json::jsonb #>> '{statusUpdate,status,state}',
		json::jsonb #>> '{task,status,state}')
	WHEN 'TASK_STATE_INPUT_REQUIRED' THEN 1 WHEN 'TASK_STATE_AUTH_REQUIRED' THEN 1
	WHEN 'TASK_STATE_COMPLETED' THEN 2 WHEN 'TASK_STATE_FAILED' THEN 2
	WHEN 'TASK_STATE_CANCELED' THEN 2 WHEN 'TASK_STATE_REJECTED' THEN 2 ELSE 0 END
WHERE (kind = 'status' OR kind = 'task') AND jsonb_typeof(json::jsonb) = 'object';
