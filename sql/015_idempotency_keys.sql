-- SPDX-License-Identifier: Apache-2.0
-- 015_idempotency_keys.sql: a send's Idempotency-Key, kept per caller (A2A-11-IDEM-1,
-- decision-067).
--
-- A client that retries a send with the same Idempotency-Key header gets the task of the
-- first send back, and nothing is stored twice. The key is the caller's: the same key
-- from another participant is another key. fingerprint is the SHA-256 (hex) of the
-- message as the first send carried it, without its messageId (a retrying client may
-- mint a new one); a different message under the same key is refused. A key goes with
-- its task (the cascade from tasks.num, found through the second index).
CREATE TABLE idempotency_keys (
	participant_id TEXT NOT NULL,
	key            TEXT NOT NULL,
	task_num       INTEGER NOT NULL REFERENCES tasks(num) ON DELETE CASCADE,
	fingerprint    TEXT NOT NULL,
	created_ms     INTEGER NOT NULL,
	PRIMARY KEY (participant_id, key)
) STRICT, WITHOUT ROWID;
CREATE INDEX idempotency_keys_by_task ON idempotency_keys(task_num);
