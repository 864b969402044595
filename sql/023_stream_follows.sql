-- SPDX-License-Identifier: Apache-2.0
-- 023_stream_follows.sql: nothing changes in SQLite. Its PostgreSQL twin
-- (sql/postgresql/023_stream_follows.sql, SCALE-1) records which tasks streams follow, so
-- that a commit sends NOTIFY only when a stream listens for it; SQLite announces nothing
-- (its streams look at PRAGMA data_version).
SELECT 1;
