-- SPDX-License-Identifier: Apache-2.0
-- postgresql/013_list_index_order.sql: ListTasks' index in ascending order (STORE-10,
-- HOST-2, decision-057).
--
-- participants_by_participant holds each participant's tasks by (status_ms, task_id).
-- 004 declared both DESC, the order ListTasks pages in. But status_ms only grows, so in
-- a DESC index every new task and every status change inserts at the front of the
-- participant's range: each full leaf splits in two half-full ones and stays so. Measured
-- on 3,000 simulated tasks: 84 pages DESC, 48 ASC. SQLite (and PostgreSQL) read an
-- ascending index backwards for ORDER BY ... DESC, with the same range bounds, so the
-- queries do not change; tests/unit/statements.py checks that ListTasks still uses it
-- without a sort.
DROP INDEX participants_by_participant;
CREATE INDEX participants_by_participant
	ON participants(participant_id, status_ms, task_id)
	WHERE participant_id <> 'tiny-harness';
