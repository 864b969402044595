-- SPDX-License-Identifier: Apache-2.0
-- 022_pg_check_domains.sql: nothing changes in SQLite. Its PostgreSQL twin
-- (sql/postgresql/022_pg_check_domains.sql, SCALE-1) checks the enumerated columns
-- through domains, which PostgreSQL plans once per session; SQLite compiles a CHECK into
-- each prepared statement once, so its constraints stay as they are.
SELECT 1;
