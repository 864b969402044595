-- SPDX-License-Identifier: Apache-2.0
-- sql/postgresql/008_api_keys.sql: PostgreSQL's twin of sql/008_api_keys.sql (SEC-1):
-- API keys kept as the SHA-256 (hex) of the key, never the key.
CREATE TABLE api_keys (
	id text PRIMARY KEY,
	participant text NOT NULL,
	name text,
	key_hash text NOT NULL UNIQUE,
	created_ms bigint NOT NULL,
	revoked_ms bigint
);
CREATE INDEX api_keys_by_name ON api_keys(name);
