-- SPDX-License-Identifier: Apache-2.0
-- sql/postgresql/017_dead_letters.sql: PostgreSQL's twin of sql/017_dead_letters.sql
-- (RET-4, decision-071): the same columns; died_at is the same UTC text.
CREATE VIEW push_dead_letters AS
SELECT o.id, o.task_id, o.config_id, c.participant_id, c.url, o.seq, o.attempts,
	o.last_error, o.created_ms, o.updated_ms AS died_ms,
	to_char(to_timestamp(o.updated_ms / 1000) AT TIME ZONE 'UTC',
		'YYYY-MM-DD"T"HH24:MI:SS"Z"') AS died_at
FROM push_outbox o
JOIN push_configs c ON c.task_id = o.task_id AND c.config_id = o.config_id
WHERE o.state = 'dead';
