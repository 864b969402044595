-- SPDX-License-Identifier: Apache-2.0
-- 018_tenants.sql: the A2A 1.0 tenant, part of every stored key (TEN-1..TEN-7,
-- decision-074).
--
-- A task belongs to one tenant for its whole life ('' is the default tenant, the one a
-- request without a tenant addresses; every task written before this migration is
-- there). A participation carries its task's tenant too, as it carries status_ms: the
-- role look-up every operation starts with (ID-3) then refuses a task of another
-- tenant without reading the task, and ListTasks walks one (participant, tenant) range
-- of its index. The per-participant count that answers an unfiltered ListTasks'
-- totalSize counts the default tenant only; another tenant's total is counted on that
-- index range. An Idempotency-Key is the caller's within a tenant.
ALTER TABLE tasks ADD COLUMN tenant TEXT NOT NULL DEFAULT '';
ALTER TABLE participants ADD COLUMN tenant TEXT NOT NULL DEFAULT '';

DROP INDEX participants_by_participant;
CREATE INDEX participants_by_participant
	ON participants(participant_id, tenant, status_ms, task_id)
	WHERE participant_id <> 'tiny-harness';

DROP TRIGGER participants_count_insert;
DROP TRIGGER participants_count_delete;
CREATE TRIGGER participants_count_insert
AFTER INSERT ON participants WHEN NEW.participant_id <> 'tiny-harness' AND NEW.tenant = ''
BEGIN
	INSERT INTO participant_task_counts (participant_id, tasks) VALUES (NEW.participant_id, 1)
	ON CONFLICT (participant_id) DO UPDATE SET tasks = tasks + 1;
END;
CREATE TRIGGER participants_count_delete
AFTER DELETE ON participants WHEN OLD.participant_id <> 'tiny-harness' AND OLD.tenant = ''
BEGIN
	UPDATE participant_task_counts SET tasks = tasks - 1 WHERE participant_id = OLD.participant_id;
END;

CREATE TABLE idempotency_keys_018 (
	participant_id TEXT NOT NULL,
	tenant         TEXT NOT NULL DEFAULT '',
	key            TEXT NOT NULL,
	task_num       INTEGER NOT NULL REFERENCES tasks(num) ON DELETE CASCADE,
	fingerprint    TEXT NOT NULL,
	created_ms     INTEGER NOT NULL,
	PRIMARY KEY (participant_id, tenant, key)
) STRICT, WITHOUT ROWID;
INSERT INTO idempotency_keys_018 (participant_id, tenant, key, task_num, fingerprint, created_ms)
SELECT participant_id, '', key, task_num, fingerprint, created_ms FROM idempotency_keys;
DROP TABLE idempotency_keys;
ALTER TABLE idempotency_keys_018 RENAME TO idempotency_keys;
CREATE INDEX idempotency_keys_by_task ON idempotency_keys(task_num);
