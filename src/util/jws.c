/* SPDX-License-Identifier: Apache-2.0 */
/* jws.c — a JWS signature with a private key from a PEM file (see jws.h). */
#include "util/jws.h"

#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/ecdsa.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/jwt.h"

#define KEY_FILE_MAX 65536

enum kind { K_ES256, K_RS256, K_EDDSA };

struct th_jws_key {
	EVP_PKEY *pkey; /* EVP_PKEY_free (th_jws_key_free) */
	enum kind kind;
};

static const char *const alg_names[] = {
    [K_ES256] = "ES256", [K_RS256] = "RS256", [K_EDDSA] = "EdDSA"};

/* The whole file into *buf (free), at most KEY_FILE_MAX bytes. */
static th_err read_file(const char *path, char **buf, size_t *len, struct th_error *e)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return th_error_set(e, TH_EINVAL, "card_signing_key %s: %s", path,
		                    errno == ENOENT ? "no such file" : strerror(errno));
	struct stat sb;
	if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
		close(fd);
		return th_error_set(e, TH_EINVAL, "card_signing_key %s: not a regular file", path);
	}
	if (sb.st_size == 0 || sb.st_size > KEY_FILE_MAX) {
		close(fd);
		return th_error_set(e, TH_EINVAL, "card_signing_key %s: %s", path,
		                    sb.st_size == 0 ? "the file is empty"
		                                    : "over 64 KiB: not a PEM private key");
	}
	*buf = malloc((size_t)sb.st_size + 1); /* the caller frees it */
	if (*buf == NULL) {
		close(fd);
		return th_error_set(e, TH_ENOMEM, "out of memory");
	}
	ssize_t got = read(fd, *buf, (size_t)sb.st_size);
	int err = errno;
	close(fd);
	if (got != (ssize_t)sb.st_size) {
		free(*buf);
		*buf = NULL;
		return th_error_set(e, TH_EINVAL, "card_signing_key %s: cannot be read: %s", path,
		                    got < 0 ? strerror(err) : "short read");
	}
	(*buf)[got] = '\0';
	*len = (size_t)got;
	return TH_OK;
}

/* libcrypto asks for a passphrase only for an encrypted key: say so, give none. */
static int no_passphrase(char *buf, int size, int rwflag, void *u)
{
	(void)buf;
	(void)size;
	(void)rwflag;
	*(int *)u = 1;
	return -1;
}

static th_err classify(const char *path, EVP_PKEY *pk, enum kind *kind, struct th_error *e)
{
	if (EVP_PKEY_is_a(pk, "EC")) {
		char group[64] = "";
		if (EVP_PKEY_get_utf8_string_param(pk, OSSL_PKEY_PARAM_GROUP_NAME, group,
		                                   sizeof group, NULL) == 1 &&
		    (strcmp(group, "prime256v1") == 0 || strcmp(group, "P-256") == 0 ||
		     strcmp(group, "secp256r1") == 0)) {
			*kind = K_ES256;
			return TH_OK;
		}
		return th_error_set(
		    e, TH_EINVAL,
		    "card_signing_key %s: an EC key on curve %s; only P-256 (ES256) "
		    "is supported for EC keys",
		    path, group[0] != '\0' ? group : "(unknown)");
	}
	if (EVP_PKEY_is_a(pk, "RSA")) {
		int bits = EVP_PKEY_get_bits(pk);
		if (bits >= 2048) {
			*kind = K_RS256;
			return TH_OK;
		}
		return th_error_set(
		    e, TH_EINVAL,
		    "card_signing_key %s: an RSA key of %d bits; RS256 needs at least "
		    "2048 (RFC 7518 §3.3)",
		    path, bits);
	}
	if (EVP_PKEY_is_a(pk, "ED25519")) {
		*kind = K_EDDSA;
		return TH_OK;
	}
	return th_error_set(e, TH_EINVAL,
	                    "card_signing_key %s: not a supported key type (EC P-256 for ES256, "
	                    "RSA of 2048 bits or more for RS256, Ed25519 for EdDSA)",
	                    path);
}

th_err th_jws_key_load(const char *path, struct th_jws_key **out, struct th_error *e)
{
	*out = NULL;
	char *pem = NULL; /* free (below) */
	size_t len = 0;
	th_err rc = read_file(path, &pem, &len, e);
	if (rc != TH_OK)
		return rc;
	BIO *bio = BIO_new_mem_buf(pem, (int)len);
	int encrypted = 0;
	EVP_PKEY *pk =
	    bio != NULL ? PEM_read_bio_PrivateKey(bio, NULL, no_passphrase, &encrypted) : NULL;
	BIO_free(bio);
	ERR_clear_error();
	if (pk == NULL) {
		if (bio == NULL)
			rc = th_error_set(e, TH_EINTERNAL,
			                  "card_signing_key %s: libcrypto is not available", path);
		else if (encrypted)
			rc = th_error_set(
			    e, TH_EINVAL,
			    "card_signing_key %s: the key is encrypted; store it without "
			    "a passphrase (readable by the server's user only)",
			    path);
		else if (strstr(pem, "PUBLIC KEY-----") != NULL)
			rc =
			    th_error_set(e, TH_EINVAL,
			                 "card_signing_key %s: holds a public key; the private key "
			                 "is needed to sign",
			                 path);
		else
			rc = th_error_set(e, TH_EINVAL,
			                  "card_signing_key %s: holds no PEM private key (expected "
			                  "-----BEGIN PRIVATE KEY-----, EC or RSA PRIVATE KEY)",
			                  path);
	}
	OPENSSL_cleanse(pem, len);
	free(pem);
	if (rc != TH_OK)
		return rc;
	enum kind kind;
	rc = classify(path, pk, &kind, e);
	struct th_jws_key *k = rc == TH_OK ? malloc(sizeof *k) : NULL;
	if (rc == TH_OK && k == NULL)
		rc = th_error_set(e, TH_ENOMEM, "out of memory");
	if (rc != TH_OK) {
		EVP_PKEY_free(pk);
		return rc;
	}
	k->pkey = pk;
	k->kind = kind;
	*out = k;
	return TH_OK;
}

void th_jws_key_free(struct th_jws_key *k)
{
	if (k == NULL)
		return;
	EVP_PKEY_free(k->pkey);
	free(k);
}

const char *th_jws_key_alg(const struct th_jws_key *k)
{
	return alg_names[k->kind];
}

/* The big-endian bytes of a key parameter (BIGNUM) as base64url into out; width 0: the
 * number's own length (RSA n, e), else padded to width (EC coordinates). */
static int param_b64(const EVP_PKEY *pk, const char *name, int width, char *out, size_t cap)
{
	BIGNUM *bn = NULL; /* BN_free (below) */
	unsigned char bin[1024];
	if (EVP_PKEY_get_bn_param(pk, name, &bn) != 1 || bn == NULL)
		return -1;
	int n = width > 0 ? width : (BN_num_bits(bn) + 7) / 8;
	int ok = n > 0 && (size_t)n <= sizeof bin && BN_bn2binpad(bn, bin, n) == n;
	BN_free(bn);
	return ok && th_b64url_encode(bin, (size_t)n, out, cap) >= 0 ? 0 : -1;
}

/* The members of the public JWK that RFC 7638 hashes, in its (lexicographic) order,
 * without braces: `"crv":…,"kty":"EC","x":…,"y":…` and the like. */
static int jwk_members(const struct th_jws_key *k, char *out, size_t cap)
{
	char a[1400], b[1400];
	int n = -1;
	if (k->kind == K_ES256 &&
	    param_b64(k->pkey, OSSL_PKEY_PARAM_EC_PUB_X, 32, a, sizeof a) == 0 &&
	    param_b64(k->pkey, OSSL_PKEY_PARAM_EC_PUB_Y, 32, b, sizeof b) == 0)
		n = snprintf(out, cap, "\"crv\":\"P-256\",\"kty\":\"EC\",\"x\":\"%s\",\"y\":\"%s\"",
		             a, b);
	else if (k->kind == K_RS256 &&
	         param_b64(k->pkey, OSSL_PKEY_PARAM_RSA_E, 0, a, sizeof a) == 0 &&
	         param_b64(k->pkey, OSSL_PKEY_PARAM_RSA_N, 0, b, sizeof b) == 0)
		n = snprintf(out, cap, "\"e\":\"%s\",\"kty\":\"RSA\",\"n\":\"%s\"", a, b);
	else if (k->kind == K_EDDSA) {
		unsigned char raw[32];
		size_t rl = sizeof raw;
		if (EVP_PKEY_get_raw_public_key(k->pkey, raw, &rl) == 1 &&
		    th_b64url_encode(raw, rl, a, sizeof a) >= 0)
			n = snprintf(out, cap, "\"crv\":\"Ed25519\",\"kty\":\"OKP\",\"x\":\"%s\"",
			             a);
	}
	return n > 0 && (size_t)n < cap ? 0 : -1;
}

th_err th_jws_key_thumbprint(const struct th_jws_key *k, char *out, size_t cap, struct th_error *e)
{
	char members[2900], jwk[2910];
	unsigned char md[32];
	unsigned int mdlen = 0;
	if (jwk_members(k, members, sizeof members) != 0)
		return th_error_set(e, TH_EINTERNAL,
		                    "the signing key's public part cannot be read");
	int n = snprintf(jwk, sizeof jwk, "{%s}", members);
	if (EVP_Digest(jwk, (size_t)n, md, &mdlen, EVP_sha256(), NULL) != 1 || mdlen != 32 ||
	    th_b64url_encode(md, 32, out, cap) < 0)
		return th_error_set(e, TH_EINTERNAL, "the signing key's thumbprint cannot be made");
	return TH_OK;
}

char *th_jws_key_public_jwk(const struct th_jws_key *k, const char *kid, struct th_error *e)
{
	char members[2900];
	if (jwk_members(k, members, sizeof members) != 0) {
		th_error_set(e, TH_EINTERNAL, "the signing key's public part cannot be read");
		return NULL;
	}
	/* kid is the operator's text: written through json-c so that it is escaped. */
	json_object *s = kid != NULL ? json_object_new_string(kid) : NULL;
	size_t cap = strlen(members) + (kid != NULL ? 6 * strlen(kid) : 0) + 64;
	char *out = malloc(cap); /* the caller frees it */
	if (out == NULL || (kid != NULL && s == NULL)) {
		free(out);
		json_object_put(s);
		th_error_set(e, TH_ENOMEM, "out of memory");
		return NULL;
	}
	snprintf(out, cap, "{%s,\"alg\":\"%s\",\"use\":\"sig\"%s%s}", members, alg_names[k->kind],
	         s != NULL ? ",\"kid\":" : "",
	         s != NULL ? json_object_to_json_string_ext(s, JSON_C_TO_STRING_PLAIN |
	                                                           JSON_C_TO_STRING_NOSLASHESCAPE)
	                   : "");
	json_object_put(s);
	return out;
}

/* ES256 in JOSE form: the DER ECDSA-Sig-Value libcrypto makes becomes r || s, 32 bytes
 * each (RFC 7518 §3.4). */
static int der_to_raw(const unsigned char *der, size_t len, unsigned char raw[64])
{
	const unsigned char *p = der;
	ECDSA_SIG *sig = d2i_ECDSA_SIG(NULL, &p, (long)len); /* ECDSA_SIG_free (below) */
	if (sig == NULL)
		return -1;
	const BIGNUM *r = NULL, *s = NULL;
	ECDSA_SIG_get0(sig, &r, &s);
	int ok = r != NULL && s != NULL && BN_bn2binpad(r, raw, 32) == 32 &&
	         BN_bn2binpad(s, raw + 32, 32) == 32;
	ECDSA_SIG_free(sig);
	return ok ? 0 : -1;
}

th_err th_jws_sign(const struct th_jws_key *k, const char *input, size_t len, char **sig,
                   struct th_error *e)
{
	*sig = NULL;
	EVP_MD_CTX *mc = EVP_MD_CTX_new(); /* EVP_MD_CTX_free (below) */
	unsigned char der[1100];
	size_t n = sizeof der;
	int ok = mc != NULL &&
	         EVP_DigestSignInit(mc, NULL, k->kind == K_EDDSA ? NULL : EVP_sha256(), NULL,
	                            k->pkey) == 1 &&
	         EVP_DigestSign(mc, NULL, &n, (const unsigned char *)input, len) == 1 &&
	         n <= sizeof der &&
	         EVP_DigestSign(mc, der, &n, (const unsigned char *)input, len) == 1;
	EVP_MD_CTX_free(mc);
	ERR_clear_error();
	unsigned char raw[64];
	const unsigned char *bytes = der;
	if (ok && k->kind == K_ES256) {
		ok = der_to_raw(der, n, raw) == 0;
		bytes = raw;
		n = 64;
	}
	if (!ok)
		return th_error_set(e, TH_EINTERNAL, "the agent card cannot be signed (libcrypto)");
	size_t cap = (n * 4) / 3 + 4;
	*sig = malloc(cap); /* the caller frees it */
	if (*sig == NULL)
		return th_error_set(e, TH_ENOMEM, "out of memory");
	th_b64url_encode(bytes, n, *sig, cap);
	return TH_OK;
}
