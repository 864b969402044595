-- SPDX-License-Identifier: Apache-2.0
-- sql/postgresql/010_lean_schema.sql: PostgreSQL's twin of sql/010_lean_schema.sql
-- (STORE-10, decision-048): the same six indexes go. The waiting_tasks view stays as
-- 007_schema.sql made it: SQLite's 010 only respells its own view with fewer expression
-- nodes (its text is parsed by every process that opens the file); the columns and rows
-- are the same as before, and PostgreSQL parses a view once, when it is created.
DROP INDEX tasks_by_context;
DROP INDEX turns_running_by_lease;
DROP INDEX turns_queued_by_updated;
DROP INDEX channel_members_by_participant;
DROP INDEX push_configs_by_participant;
DROP INDEX api_keys_by_name;
