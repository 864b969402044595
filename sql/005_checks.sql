-- 005_checks.sql: the CHECK constraints every message runs, spelled as ORs of equalities
-- (STORE-1).
--
-- SQLite evaluates a constant IN list of more than two values through a temporary b-tree
-- that it builds on every statement writing the row: for a SendMessage, six of them
-- (tasks.state on the insert and two status changes, participants.role twice, turns.state
-- once), each with a zeroed page. An OR of equalities accepts exactly the same values and
-- costs a few comparisons. A CHECK constraint may be rewritten in place (SQLite's
-- documented writable_schema procedure for changing constraints): the values stored are
-- untouched, the new text is equivalent to the old, and th_store_open bumps
-- schema_version after migrating so that every connection reads the new text.
PRAGMA writable_schema = ON;
UPDATE sqlite_schema SET sql = replace(sql, 'CHECK (state IN (
		''TASK_STATE_UNSPECIFIED'', ''TASK_STATE_SUBMITTED'', ''TASK_STATE_WORKING'',
		''TASK_STATE_COMPLETED'', ''TASK_STATE_FAILED'', ''TASK_STATE_CANCELED'',
		''TASK_STATE_INPUT_REQUIRED'', ''TASK_STATE_REJECTED'', ''TASK_STATE_AUTH_REQUIRED''))',
	'CHECK (state = ''TASK_STATE_UNSPECIFIED'' OR state = ''TASK_STATE_SUBMITTED''
		OR state = ''TASK_STATE_WORKING'' OR state = ''TASK_STATE_COMPLETED''
		OR state = ''TASK_STATE_FAILED'' OR state = ''TASK_STATE_CANCELED''
		OR state = ''TASK_STATE_INPUT_REQUIRED'' OR state = ''TASK_STATE_REJECTED''
		OR state = ''TASK_STATE_AUTH_REQUIRED'')')
WHERE type = 'table' AND name = 'tasks';
UPDATE sqlite_schema SET sql = replace(sql,
	'CHECK (role IN (''assignee'', ''reporter'', ''watcher'', ''admin''))',
	'CHECK (role = ''assignee'' OR role = ''reporter'' OR role = ''watcher''
		OR role = ''admin'')')
WHERE type = 'table' AND name = 'participants';
UPDATE sqlite_schema SET sql = replace(sql,
	'CHECK (state IN (''queued'', ''running'', ''done'', ''cut'', ''failed''))',
	'CHECK (state = ''queued'' OR state = ''running'' OR state = ''done'' OR state = ''cut''
		OR state = ''failed'')')
WHERE type = 'table' AND name = 'turns';
PRAGMA writable_schema = OFF;
