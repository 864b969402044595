-- SPDX-License-Identifier: Apache-2.0
-- 008_api_keys.sql: API keys for `identity = bearer` (SEC-1, decision-037).
--
-- A key is shown once by `tiny-harness keys add`; only its SHA-256 (hex) is kept, which
-- is enough for 32 random bytes: nobody can search that space backwards. A revoked key
-- keeps its row (revoked_ms set) so `keys list` still shows who had it; lookups skip it.
CREATE TABLE api_keys (
	id TEXT PRIMARY KEY,
	participant TEXT NOT NULL,
	name TEXT,
	key_hash TEXT NOT NULL UNIQUE,
	created_ms INTEGER NOT NULL,
	revoked_ms INTEGER
) STRICT;
CREATE INDEX api_keys_by_name ON api_keys(name);
