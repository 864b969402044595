-- SPDX-License-Identifier: Apache-2.0
-- 017_dead_letters.sql: push deliveries that gave up, for an operator to read (RET-4,
-- decision-071).
--
-- A delivery is dead once push_max_attempts POSTs failed, or at once on a refusal that
-- retrying cannot mend (HTTP 4xx other than 408 and 429, a refused address). Its row
-- stays in push_outbox for retain_dead_letters, then `tiny-harness purge` (and a
-- worker's pruning after it sends) deletes it; deleting its task or config deletes it
-- too. This view names what an operator needs to find the webhook and the event:
--   sqlite3 -readonly DB 'SELECT * FROM push_dead_letters'
-- died_ms is when it was given up (the row's updated_ms, which nothing changes after);
-- died_at is the same instant as UTC text. The body is left out (it can be large):
-- SELECT body FROM push_outbox WHERE id = ... gives it.
CREATE VIEW push_dead_letters AS
SELECT o.id, o.task_id, o.config_id, c.participant_id, c.url, o.seq, o.attempts,
	o.last_error, o.created_ms, o.updated_ms AS died_ms,
	strftime('%Y-%m-%dT%H:%M:%SZ', o.updated_ms / 1000, 'unixepoch') AS died_at
FROM push_outbox o
JOIN push_configs c ON c.task_id = o.task_id AND c.config_id = o.config_id
WHERE o.state = 'dead';
