/* SPDX-License-Identifier: Apache-2.0 */
/* auth.h — who a bearer credential names (SEC-1, decision-037): a JWT verified under the
 * configured rules (util/jwt.h), or an API key looked up by its hash in the store. Also
 * the making of new API keys for `tiny-harness keys add`. */
#ifndef TH_OPS_AUTH_H
#define TH_OPS_AUTH_H

#include <stddef.h>

#include "util/err.h"

struct th_config;
struct th_store;

/* An API key: "th_" and 43 base64url characters (32 random bytes). */
#define TH_KEY_PREFIX "th_"
#define TH_KEY_BUF 48
/* Its length: the prefix and 43 characters. */
#define TH_KEY_LEN 46
/* The hex SHA-256 of a key, NUL included. */
#define TH_KEY_HASH_BUF 65

/* The participant that token (the part after "Bearer ") names into who (n bytes): a
 * token with two dots is a JWT, any other an API key. TH_EUNAUTHENTICATED says what was
 * wrong without repeating the token; TH_EINTERNAL for the server's own trouble. */
th_err th_auth_bearer(struct th_store *st, const struct th_config *cfg, const char *token,
                      char *who, size_t n, struct th_error *e);

/* A new random key into key and its hash into hash; TH_EINTERNAL without libcrypto. */
th_err th_auth_key_new(char key[TH_KEY_BUF], char hash[TH_KEY_HASH_BUF], struct th_error *e);
/* The hex SHA-256 of key into hash; 0, or -1 without libcrypto. */
int th_auth_key_hash(const char *key, char hash[TH_KEY_HASH_BUF]);

#endif
