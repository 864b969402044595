-- SPDX-License-Identifier: Apache-2.0
-- sql/postgresql/019_turn_numbers.sql: PostgreSQL's twin of sql/019_turn_numbers.sql
-- (STORE-10, decision-075): turns keyed by the task's number.
--
-- The table is renamed and takes the task's number in place of its id (the identity
-- column id and its sequence go with it); turns becomes a view with the old columns.
ALTER TABLE turns RENAME TO turn_rows;
ALTER TABLE turn_rows ADD COLUMN task_num bigint;
UPDATE turn_rows u SET task_num = t.num FROM tasks t WHERE t.id = u.task_id;
ALTER TABLE turn_rows ALTER COLUMN task_num SET NOT NULL;
ALTER TABLE turn_rows ADD CONSTRAINT turn_rows_task_num_fkey
	FOREIGN KEY (task_num) REFERENCES tasks(num) ON DELETE CASCADE;
DROP INDEX turns_live_by_task;
ALTER TABLE turn_rows DROP COLUMN task_id;
CREATE INDEX turns_live_by_task ON turn_rows(task_num) WHERE state IN ('queued', 'running');

CREATE VIEW turns AS
SELECT u.id, t.id AS task_id, u.message_id, u.state, u.attempts, u.worker_pid,
	u.lease_until_ms, u.cut, u.error, u.created_ms, u.updated_ms
FROM turn_rows u JOIN tasks t ON t.num = u.task_num;
