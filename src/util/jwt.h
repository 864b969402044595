/* SPDX-License-Identifier: Apache-2.0 */
/* jwt.h — verifying a JSON Web Token (RFC 7519, a JWS in compact form, RFC 7515) that a
 * client sends as `Authorization: Bearer` (SEC-1, decision-037).
 *
 * The cryptography is OpenSSL's libcrypto (loaded on first use, util/dynlib.c); what is
 * ours is the small part around it: base64url, the JSON of the header and claims
 * (json-c), turning a JWK into a libcrypto key, and the claim rules. HS256/384/512 take
 * the configured secret; RS*, PS* and ES256/384/512 take a key of the configured JWKS
 * file, chosen by `kid`. The JWKS file is read again when its modification time, size
 * or inode changes, so a rotated key is used without a restart. */
#ifndef TH_UTIL_JWT_H
#define TH_UTIL_JWT_H

#include <stddef.h>
#include <stdint.h>

#include "util/err.h"

/* What a token must satisfy. Every pointer is borrowed for the call. */
struct th_jwt_rules {
	const unsigned char *secret; /* HS*: the shared secret, or NULL (HS* refused) */
	size_t secret_len;           /* at least 32 bytes (RFC 7518 §3.2), else refused */
	const char *jwks_path;       /* RS*, PS*, ES*: the JWKS file, or NULL (refused) */
	const char *issuer;          /* `iss` must equal it; NULL: not checked */
	const char *audience; /* `aud` (a string or an array) must name it; NULL: not checked */
	const char *claim;    /* the claim naming the participant ("sub") */
	long leeway_s;        /* clock skew allowed on `exp` and `nbf`, in seconds */
	int64_t now_s;        /* the time to check against, Unix seconds */
	size_t max_id;        /* the participant id's limit (ID-6) */
};

/* 1 when token has the shape of a compact JWS (exactly two dots); an API key has none. */
int th_jwt_is_jwt(const char *token);

/* Verifies token under r. TH_OK with the participant id in who (n bytes, NUL-terminated);
 * else TH_EUNAUTHENTICATED with a message saying what was wrong (never the token or a
 * key), or TH_EINTERNAL when the server's own keys cannot be used (a missing JWKS file,
 * libcrypto missing) — the log then names the cause. */
th_err th_jwt_verify(const struct th_jwt_rules *r, const char *token, char *who, size_t n,
                     struct th_error *e);

/* base64url without padding (RFC 4648 §5) into out (cap bytes): the decoded length, or
 * -1 for a character outside the alphabet, padding, an impossible length or too little
 * room. */
long th_b64url_decode(const char *in, size_t len, unsigned char *out, size_t cap);
/* base64url without padding of in into out (cap bytes, room for the NUL): the length,
 * or -1 when out is too small. */
long th_b64url_encode(const unsigned char *in, size_t len, char *out, size_t cap);

#endif
