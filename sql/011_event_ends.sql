-- SPDX-License-Identifier: Apache-2.0
-- 011_event_ends.sql: an event says whether it ends the streams that follow its task
-- (STREAM-1, STREAM-2, decision-052).
--
-- A stream ends at the event that leaves its task terminal (every stream) or interrupted
-- (the rest of a SendStreamingMessage). That was learnt by parsing each task and status
-- event's JSON again as every stream read it, although the writer knew the state when it
-- wrote the event. The writer now records it once:
--   ends = 0  the task goes on (every artifact, message and channel event, and a task or
--             status event of a working state)
--   ends = 1  the task waits for someone (INPUT_REQUIRED, AUTH_REQUIRED)
--   ends = 2  the task is over (COMPLETED, FAILED, CANCELED, REJECTED)
-- Existing rows are classified from their JSON here, by the same rule: only task and
-- status events carry a state (a snapshot's task.status.state, an update's
-- statusUpdate.status.state).
ALTER TABLE events ADD COLUMN ends INTEGER NOT NULL DEFAULT 0
	CHECK (ends = 0 OR ends = 1 OR ends = 2);
UPDATE events SET ends = CASE coalesce(json_extract(json, '$.statusUpdate.status.state'),
		json_extract(json, '$.task.status.state'))
	WHEN 'TASK_STATE_INPUT_REQUIRED' THEN 1 WHEN 'TASK_STATE_AUTH_REQUIRED' THEN 1
	WHEN 'TASK_STATE_COMPLETED' THEN 2 WHEN 'TASK_STATE_FAILED' THEN 2
	WHEN 'TASK_STATE_CANCELED' THEN 2 WHEN 'TASK_STATE_REJECTED' THEN 2 ELSE 0 END
WHERE (kind = 'status' OR kind = 'task') AND json_valid(json);
