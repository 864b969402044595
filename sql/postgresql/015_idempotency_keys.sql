-- SPDX-License-Identifier: Apache-2.0
-- sql/postgresql/015_idempotency_keys.sql: PostgreSQL's twin of
-- sql/015_idempotency_keys.sql (A2A-11-IDEM-1, decision-067).
CREATE TABLE idempotency_keys (
	participant_id text NOT NULL,
	key            text NOT NULL,
	task_num       bigint NOT NULL REFERENCES tasks(num) ON DELETE CASCADE,
	fingerprint    text NOT NULL,
	created_ms     bigint NOT NULL,
	PRIMARY KEY (participant_id, key)
);
CREATE INDEX idempotency_keys_by_task ON idempotency_keys(task_num);
