-- SPDX-License-Identifier: Apache-2.0
-- 020_pg_count_plans.sql: nothing changes in SQLite. Its PostgreSQL twin
-- (sql/postgresql/020_pg_count_plans.sql, SCALE-1) keeps the plan of the per-participant
-- count's statement for the session; SQLite has no such function.
SELECT 1;
