-- 003: approvals asked with /confirm (UI-4). One row per question; surface_id names the
-- A2UI Card when the client renders A2UI, NULL when the question was asked in text.
CREATE TABLE confirmations (
	id TEXT PRIMARY KEY,
	task_id TEXT NOT NULL REFERENCES tasks(id) ON DELETE CASCADE,
	surface_id TEXT,
	question TEXT NOT NULL,
	asked_by TEXT NOT NULL,
	state TEXT NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'approved', 'rejected')),
	decided_by TEXT,
	created_ms INTEGER NOT NULL,
	decided_ms INTEGER
) STRICT;
CREATE INDEX confirmations_task ON confirmations(task_id, state, created_ms);
CREATE UNIQUE INDEX confirmations_surface ON confirmations(task_id, surface_id)
	WHERE surface_id IS NOT NULL;
