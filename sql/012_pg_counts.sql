-- SPDX-License-Identifier: Apache-2.0
-- 012_pg_counts.sql: nothing changes in SQLite. Its PostgreSQL twin
-- (sql/postgresql/012_pg_counts.sql, SCALE-1, decision-051) makes the per-participant
-- task counts conflict-free there; SQLite has one writer at a time, so its
-- participant_task_counts rows stay as migration 004 made them.
SELECT 1;
