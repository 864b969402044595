/* SPDX-License-Identifier: Apache-2.0 */
/* jws.h — making a JSON Web Signature (RFC 7515) with a private key from a PEM file: the
 * signed agent card (CARD-SIG-1, decision-066). The cryptography is libcrypto's (loaded
 * on first use, util/dynlib.c); ours is reading the file, telling the operator precisely
 * what is wrong with it, the JOSE form of the signature, and the key's RFC 7638
 * thumbprint (the default `kid`).
 *
 * Keys and their algorithms (RFC 7518, RFC 8037):
 *   EC P-256          ES256  (raw r||s, 64 bytes)
 *   RSA, ≥ 2048 bits  RS256  (PKCS #1 v1.5, SHA-256)
 *   Ed25519           EdDSA
 * Any other key, an encrypted PEM or a public key alone is refused by name. */
#ifndef TH_UTIL_JWS_H
#define TH_UTIL_JWS_H

#include <stddef.h>

#include "util/err.h"

struct th_jws_key; /* a loaded private key; th_jws_key_free */

/* Reads the PEM private key at path. TH_OK with *out (the caller frees it with
 * th_jws_key_free); else TH_EINVAL with a message naming path and the trouble: it does
 * not exist, cannot be read (errno's words), is empty or over 64 KiB, holds no PEM
 * private key, is encrypted, or is a key of an unsupported type or size; TH_EINTERNAL
 * when libcrypto cannot be loaded. */
th_err th_jws_key_load(const char *path, struct th_jws_key **out, struct th_error *e);

void th_jws_key_free(struct th_jws_key *k);

/* The JWS `alg` of k: "ES256", "RS256" or "EdDSA". */
const char *th_jws_key_alg(const struct th_jws_key *k);

/* The RFC 7638 JWK thumbprint of k's public key (SHA-256, base64url: 43 characters)
 * into out (cap ≥ 44 bytes). TH_OK, or TH_EINTERNAL / TH_ENOMEM. */
th_err th_jws_key_thumbprint(const struct th_jws_key *k, char *out, size_t cap, struct th_error *e);

/* The public JWK of k ({"kty",…,"kid","alg","use":"sig"}, members in RFC 7638 order)
 * as a new string (free), or NULL with e set. kid may be NULL. */
char *th_jws_key_public_jwk(const struct th_jws_key *k, const char *kid, struct th_error *e);

/* Signs the JWS Signing Input (RFC 7515 §5.1: BASE64URL(protected) '.' BASE64URL(payload),
 * len bytes) with k. TH_OK with *sig, the base64url signature (the caller frees it with
 * free); else TH_EINTERNAL / TH_ENOMEM. */
th_err th_jws_sign(const struct th_jws_key *k, const char *input, size_t len, char **sig,
                   struct th_error *e);

#endif
