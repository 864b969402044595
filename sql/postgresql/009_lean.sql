-- 009_lean.sql (PostgreSQL): the same as sql/009_lean.sql (STORE-10, decision-047).
ALTER TABLE tasks ADD COLUMN status_pos bigint CHECK (status_pos IS NULL OR status_pos > 0);
UPDATE messages SET json = ((json::jsonb - 'taskId') - 'contextId')::text
WHERE jsonb_typeof(json::jsonb) = 'object';

