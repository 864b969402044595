-- SPDX-License-Identifier: Apache-2.0
-- sql/postgresql/018_tenants.sql: PostgreSQL's twin of sql/018_tenants.sql (TEN-1..TEN-7,
-- decision-074). The count triggers keep their functions; only their WHEN changes.
ALTER TABLE tasks ADD COLUMN tenant text NOT NULL DEFAULT '';
ALTER TABLE participants ADD COLUMN tenant text NOT NULL DEFAULT '';

DROP INDEX participants_by_participant;
CREATE INDEX participants_by_participant
	ON participants(participant_id, tenant, status_ms, task_id)
	WHERE participant_id <> 'tiny-harness';

DROP TRIGGER participants_count_insert ON participants;
DROP TRIGGER participants_count_delete ON participants;
CREATE TRIGGER participants_count_insert
AFTER INSERT ON participants
FOR EACH ROW WHEN (NEW.participant_id <> 'tiny-harness' AND NEW.tenant = '')
EXECUTE FUNCTION th_participants_count_insert();
CREATE TRIGGER participants_count_delete
AFTER DELETE ON participants
FOR EACH ROW WHEN (OLD.participant_id <> 'tiny-harness' AND OLD.tenant = '')
EXECUTE FUNCTION th_participants_count_delete();

ALTER TABLE idempotency_keys ADD COLUMN tenant text NOT NULL DEFAULT '';
ALTER TABLE idempotency_keys DROP CONSTRAINT idempotency_keys_pkey;
ALTER TABLE idempotency_keys ADD PRIMARY KEY (participant_id, tenant, key);
