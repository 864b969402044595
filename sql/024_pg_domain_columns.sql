-- SPDX-License-Identifier: Apache-2.0
-- 024_pg_domain_columns.sql: nothing changes in SQLite. Its PostgreSQL twin
-- (sql/postgresql/024_pg_domain_columns.sql, SCALE-1, decision-086) gives the checked
-- columns of tasks, participants, turn_rows and event_rows their domains as types, so
-- that PostgreSQL does not read their CHECK texts again at every INSERT and UPDATE;
-- SQLite compiles its CHECKs into each prepared statement once.
SELECT 1;
