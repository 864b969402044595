-- SPDX-License-Identifier: Apache-2.0
-- 021_pg_count_folds.sql: nothing changes in SQLite. Its PostgreSQL twin
-- (sql/postgresql/021_pg_count_folds.sql, SCALE-1) folds a participant's count rows once
-- in sixteen participations; SQLite keeps one count row per participant.
SELECT 1;
