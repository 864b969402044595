-- 006_waiting.sql: who asked, and what else a waiting task waits on (STORE-1, CH-4).
--
-- help_requests.asked_by names the request's sender in the channel: the agent for every
-- request the harness manages (the model's ask_participant and a participant's /ask),
-- which is what tells them from help requests participants send each other. asked_for
-- keeps the participant who typed /ask (NULL when the model asked), so that an operator
-- sees who wanted to know.
ALTER TABLE help_requests ADD COLUMN asked_for TEXT;
CREATE INDEX help_requests_pending_by_asked ON help_requests(task_id, asked, created_ms)
	WHERE state = 'pending';

-- waiting_tasks: one row per INPUT_REQUIRED task, as before, with asked_by showing the
-- person behind a /ask, and two more columns: how many /confirm questions of the task are
-- pending, and how many of its sub-tasks are unresolved (what blocks a completion, CTL-4).
DROP VIEW waiting_tasks;
CREATE VIEW waiting_tasks AS
SELECT
	w.id,
	w.name,
	w.sub_state,
	CASE
		WHEN w.sub_state = 'awaiting-answer'
			THEN COALESCE(h.asked, w.meta_participant, '(participant unknown)')
		ELSE 'next message from any participant'
	END AS waiting_for,
	CASE WHEN w.sub_state = 'awaiting-answer' THEN h.question END AS question,
	CASE WHEN w.sub_state = 'awaiting-answer' THEN COALESCE(h.id, w.meta_request) END
		AS request_id,
	CASE WHEN w.sub_state = 'awaiting-answer' THEN COALESCE(h.asked_for, h.asked_by) END
		AS asked_by,
	strftime('%Y-%m-%dT%H:%M:%fZ', w.status_ms / 1000.0, 'unixepoch') AS since,
	w.status_ms AS since_ms,
	w.updated_ms,
	(SELECT count(*) FROM confirmations c WHERE c.task_id = w.id AND c.state = 'pending')
		AS confirmations_pending,
	(SELECT count(*) FROM subtask_links l WHERE l.parent_id = w.id AND l.resolved_ms IS NULL)
		AS subtasks_open,
	(SELECT count(*) FROM help_requests p WHERE p.task_id = w.id AND p.state = 'pending')
		AS questions_pending
FROM (
	SELECT t.id, t.name, t.sub_state, t.status_ms, t.updated_ms,
		CASE WHEN json_valid(t.status_meta_json) THEN COALESCE(
			json_extract(t.status_meta_json, '$.participant_id'),
			json_extract(t.status_meta_json,
				'$."io.github.madarauchiha-314.tiny-harness/status".participant_id'))
		END AS meta_participant,
		CASE WHEN json_valid(t.status_meta_json) THEN COALESCE(
			json_extract(t.status_meta_json, '$.request_id'),
			json_extract(t.status_meta_json,
				'$."io.github.madarauchiha-314.tiny-harness/status".request_id'))
		END AS meta_request
	FROM tasks t
	WHERE t.state = 'TASK_STATE_INPUT_REQUIRED'
) w
LEFT JOIN help_requests h
	ON w.sub_state = 'awaiting-answer' AND h.task_id = w.id
	AND h.id = COALESCE(w.meta_request,
		(SELECT p.id FROM help_requests p WHERE p.task_id = w.id AND p.state = 'pending'
		 ORDER BY p.created_ms DESC, p.rowid DESC LIMIT 1));
