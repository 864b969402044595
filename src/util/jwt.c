/* SPDX-License-Identifier: Apache-2.0 */
/* jwt.c — see jwt.h. Every signature check and digest is libcrypto's; nothing here
 * computes a cryptographic function itself. */
#include "util/jwt.h"

#include <json-c/json.h>
#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/ecdsa.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/param_build.h>
#include <openssl/rsa.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "util/idrule.h"
#include "util/log.h"

/* A token is at most this long: a header is sent in one FastCGI parameter anyway, and
 * bounding it bounds every buffer below. */
#define JWT_MAX 8192
/* The JWKS file's limit: thousands of keys. */
#define JWKS_MAX (1024 * 1024)

static const char b64url[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

long th_b64url_encode(const unsigned char *in, size_t len, char *out, size_t cap)
{
	size_t need = len / 3 * 4 + (len % 3 ? len % 3 + 1 : 0);
	if (need + 1 > cap)
		return -1;
	size_t j = 0;
	for (size_t i = 0; i < len; i += 3) {
		unsigned v = (unsigned)in[i] << 16;
		if (i + 1 < len)
			v |= (unsigned)in[i + 1] << 8;
		if (i + 2 < len)
			v |= in[i + 2];
		out[j++] = b64url[(v >> 18) & 63];
		out[j++] = b64url[(v >> 12) & 63];
		if (i + 1 < len)
			out[j++] = b64url[(v >> 6) & 63];
		if (i + 2 < len)
			out[j++] = b64url[v & 63];
	}
	out[j] = '\0';
	return (long)j;
}

long th_b64url_decode(const char *in, size_t len, unsigned char *out, size_t cap)
{
	if (len % 4 == 1 || len / 4 * 3 + (len % 4 ? len % 4 - 1 : 0) > cap)
		return -1;
	unsigned acc = 0;
	int bits = 0;
	size_t j = 0;
	for (size_t i = 0; i < len; i++) {
		const char *p = in[i] != '\0' ? strchr(b64url, in[i]) : NULL;
		if (p == NULL)
			return -1;
		acc = (acc << 6) | (unsigned)(p - b64url);
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			out[j++] = (unsigned char)(acc >> bits);
			acc &= (1u << bits) - 1;
		}
	}
	/* The leftover bits must be zero, so one token has one spelling. */
	if (acc != 0)
		return -1;
	return (long)j;
}

int th_jwt_is_jwt(const char *token)
{
	const char *a = strchr(token, '.');
	const char *b = a != NULL ? strchr(a + 1, '.') : NULL;
	return b != NULL && strchr(b + 1, '.') == NULL;
}

/* ---- the JWKS file, cached per process ------------------------------------------ */

static pthread_mutex_t jwks_lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
	char *path;        /* the file last read; free on replacement */
	struct stat seen;  /* its stat then */
	json_object *keys; /* its "keys" array (a new reference), or NULL */
} jwks;

static int same_file(const struct stat *a, const struct stat *b)
{
	return a->st_ino == b->st_ino && a->st_dev == b->st_dev && a->st_size == b->st_size &&
	       a->st_mtim.tv_sec == b->st_mtim.tv_sec && a->st_mtim.tv_nsec == b->st_mtim.tv_nsec;
}

/* Reads path into a new JSON value (json_object_put), or NULL with the cause logged. */
static json_object *read_jwks(const char *path, const struct stat *st)
{
	if (st->st_size <= 0 || st->st_size > JWKS_MAX) {
		th_log(TH_LOG_ERROR, "JWKS file %s: size %lld is not 1..%d bytes", path,
		       (long long)st->st_size, JWKS_MAX);
		return NULL;
	}
	FILE *f = fopen(path, "r");
	char *text = f != NULL ? malloc((size_t)st->st_size + 1) : NULL;
	size_t got = text != NULL ? fread(text, 1, (size_t)st->st_size, f) : 0;
	if (f != NULL)
		fclose(f);
	json_object *v = NULL;
	if (text != NULL) {
		text[got] = '\0';
		v = json_tokener_parse(text);
	}
	free(text);
	json_object *keys = NULL;
	if (v == NULL || !json_object_object_get_ex(v, "keys", &keys) ||
	    !json_object_is_type(keys, json_type_array)) {
		th_log(TH_LOG_ERROR, "JWKS file %s: not a JSON object with a \"keys\" array", path);
		json_object_put(v);
		return NULL;
	}
	json_object_get(keys);
	json_object_put(v);
	return keys;
}

/* The current "keys" array of path as a new reference (json_object_put), or NULL. A
 * changed file replaces the cache; a file that cannot be read now keeps nothing, so a
 * removed key file stops every token signed for it. */
static json_object *jwks_current(const char *path)
{
	struct stat st;
	if (stat(path, &st) != 0) {
		th_log(TH_LOG_ERROR, "JWKS file %s: cannot be read", path);
		return NULL;
	}
	pthread_mutex_lock(&jwks_lock);
	if (jwks.path == NULL || strcmp(jwks.path, path) != 0 || !same_file(&st, &jwks.seen)) {
		json_object_put(jwks.keys);
		free(jwks.path);
		jwks.keys = read_jwks(path, &st);
		jwks.path = strdup(path);
		jwks.seen = st;
	}
	json_object *keys = jwks.keys != NULL ? json_object_get(jwks.keys) : NULL;
	pthread_mutex_unlock(&jwks_lock);
	return keys;
}

/* ---- algorithms ------------------------------------------------------------------ */

enum fam { FAM_HS, FAM_RS, FAM_PS, FAM_ES };

struct alg {
	const char *name;
	enum fam fam;
	int bits;          /* the SHA-2 size */
	const char *crv;   /* ES: the JWK curve */
	const char *group; /* ES: libcrypto's name of it */
	int coord;         /* ES: bytes of one coordinate */
};

static const struct alg algs[] = {
    {"HS256", FAM_HS, 256, NULL, NULL, 0},
    {"HS384", FAM_HS, 384, NULL, NULL, 0},
    {"HS512", FAM_HS, 512, NULL, NULL, 0},
    {"RS256", FAM_RS, 256, NULL, NULL, 0},
    {"RS384", FAM_RS, 384, NULL, NULL, 0},
    {"RS512", FAM_RS, 512, NULL, NULL, 0},
    {"PS256", FAM_PS, 256, NULL, NULL, 0},
    {"PS384", FAM_PS, 384, NULL, NULL, 0},
    {"PS512", FAM_PS, 512, NULL, NULL, 0},
    {"ES256", FAM_ES, 256, "P-256", "prime256v1", 32},
    {"ES384", FAM_ES, 384, "P-384", "secp384r1", 48},
    {"ES512", FAM_ES, 512, "P-521", "secp521r1", 66},
};

static const EVP_MD *md_of(int bits)
{
	return bits == 256 ? EVP_sha256() : bits == 384 ? EVP_sha384() : EVP_sha512();
}

static th_err unauth(struct th_error *e, const char *what)
{
	return th_error_set(e, TH_EUNAUTHENTICATED, "bearer token refused: %s", what);
}

/* A JWK member decoded from base64url into a new buffer (free) of *len bytes. */
static unsigned char *jwk_bytes(json_object *jwk, const char *name, size_t *len)
{
	json_object *v = NULL;
	if (!json_object_object_get_ex(jwk, name, &v) || !json_object_is_type(v, json_type_string))
		return NULL;
	size_t n = (size_t)json_object_get_string_len(v);
	unsigned char *out = malloc(n + 1);
	long got = out != NULL ? th_b64url_decode(json_object_get_string(v), n, out, n + 1) : -1;
	if (got <= 0) {
		free(out);
		return NULL;
	}
	*len = (size_t)got;
	return out;
}

/* Fills bld with the public RSA (n, e) or EC (group, point) of jwk for a; 0 or -1. The
 * builder keeps pointers, not copies, until OSSL_PARAM_BLD_to_param: bn[0], bn[1] and
 * *pt are the caller's to free after that (jwk_key). */
static int jwk_params(OSSL_PARAM_BLD *bld, json_object *jwk, const struct alg *a, BIGNUM **bn,
                      unsigned char **pt_out)
{
	size_t l1 = 0, l2 = 0;
	int bad = -1;
	if (a->fam != FAM_ES) {
		unsigned char *n = jwk_bytes(jwk, "n", &l1), *x = jwk_bytes(jwk, "e", &l2);
		/* RFC 7518 §3.3: RSA keys of 2048 bits or more. */
		if (n != NULL && x != NULL && l1 >= 256 && l2 <= 8) {
			bn[0] = BN_bin2bn(n, (int)l1, NULL);
			bn[1] = BN_bin2bn(x, (int)l2, NULL);
			bad = bn[0] == NULL || bn[1] == NULL ||
			      !OSSL_PARAM_BLD_push_BN(bld, OSSL_PKEY_PARAM_RSA_N, bn[0]) ||
			      !OSSL_PARAM_BLD_push_BN(bld, OSSL_PKEY_PARAM_RSA_E, bn[1]);
			bad = bad ? -1 : 0;
		}
		free(n);
		free(x);
		return bad;
	}
	const char *crv = json_object_get_string(json_object_object_get(jwk, "crv"));
	unsigned char *x = jwk_bytes(jwk, "x", &l1), *y = jwk_bytes(jwk, "y", &l2);
	size_t c = (size_t)a->coord;
	unsigned char *pt = malloc(1 + 2 * c);
	*pt_out = pt;
	if (crv != NULL && strcmp(crv, a->crv) == 0 && x != NULL && y != NULL && l1 == c &&
	    l2 == c && pt != NULL) {
		/* The uncompressed point; libcrypto refuses one that is not on the curve. */
		pt[0] = 4;
		memcpy(pt + 1, x, c);
		memcpy(pt + 1 + c, y, c);
		bad =
		    OSSL_PARAM_BLD_push_utf8_string(bld, OSSL_PKEY_PARAM_GROUP_NAME, a->group, 0) &&
		            OSSL_PARAM_BLD_push_octet_string(bld, OSSL_PKEY_PARAM_PUB_KEY, pt,
		                                             1 + 2 * c)
		        ? 0
		        : -1;
	}
	free(x);
	free(y);
	return bad;
}

/* The libcrypto public key of jwk for a (EVP_PKEY_free), or NULL. */
static EVP_PKEY *jwk_key(json_object *jwk, const struct alg *a)
{
	OSSL_PARAM_BLD *bld = OSSL_PARAM_BLD_new();
	BIGNUM *bn[2] = {NULL, NULL};
	unsigned char *pt = NULL;
	OSSL_PARAM *params = NULL;
	EVP_PKEY_CTX *pc = EVP_PKEY_CTX_new_from_name(NULL, a->fam == FAM_ES ? "EC" : "RSA", NULL);
	EVP_PKEY *key = NULL;
	if (bld != NULL && pc != NULL && jwk_params(bld, jwk, a, bn, &pt) == 0 &&
	    (params = OSSL_PARAM_BLD_to_param(bld)) != NULL && EVP_PKEY_fromdata_init(pc) == 1 &&
	    EVP_PKEY_fromdata(pc, &key, EVP_PKEY_PUBLIC_KEY, params) != 1)
		key = NULL;
	OSSL_PARAM_free(params);
	OSSL_PARAM_BLD_free(bld);
	free(pt);
	BN_free(bn[0]);
	BN_free(bn[1]);
	EVP_PKEY_CTX_free(pc);
	return key;
}

/* 1 when jwk may verify a token of alg a: its type fits a (RSA for RS and PS, EC for
 * ES; never a symmetric key), its "alg" (if any) is a's and its "use" (if any) is sig. */
static int jwk_fits(json_object *jwk, const struct alg *a)
{
	const char *kty = json_object_get_string(json_object_object_get(jwk, "kty"));
	const char *alg = json_object_get_string(json_object_object_get(jwk, "alg"));
	const char *use = json_object_get_string(json_object_object_get(jwk, "use"));
	if (kty == NULL || strcmp(kty, a->fam == FAM_ES ? "EC" : "RSA") != 0)
		return 0;
	return (alg == NULL || strcmp(alg, a->name) == 0) &&
	       (use == NULL || strcmp(use, "sig") == 0);
}

/* The key of the JWKS for a and kid (NULL: the file's only key of a's type). */
static th_err find_key(const struct th_jwt_rules *r, const struct alg *a, const char *kid,
                       EVP_PKEY **out, struct th_error *e)
{
	if (r->jwks_path == NULL)
		return unauth(e, "no JWKS file is configured for RS, PS and ES tokens");
	json_object *keys = jwks_current(r->jwks_path);
	if (keys == NULL)
		return th_error_set(e, TH_EINTERNAL, "the server's JWKS file cannot be used");
	json_object *pick = NULL;
	int found = 0;
	for (size_t i = 0; i < json_object_array_length(keys); i++) {
		json_object *k = json_object_array_get_idx(keys, i);
		const char *id = json_object_get_string(json_object_object_get(k, "kid"));
		if (kid != NULL ? id != NULL && strcmp(id, kid) == 0 : jwk_fits(k, a)) {
			pick = k;
			found++;
		}
	}
	th_err rc = TH_OK;
	if (found == 0)
		rc = unauth(e, kid != NULL ? "no key of the JWKS file has the token's kid"
		                           : "the token names no kid and the JWKS file has no key "
		                             "for its alg");
	else if (found > 1)
		rc = unauth(e, kid != NULL ? "several keys of the JWKS file have the token's kid"
		                           : "the token names no kid and the JWKS file has several "
		                             "keys for its alg");
	else if (!jwk_fits(pick, a))
		rc = unauth(e, "the key with the token's kid is not a signing key for its alg");
	else if ((*out = jwk_key(pick, a)) == NULL)
		rc = unauth(e, "the key with the token's kid is not a usable public key");
	json_object_put(keys);
	return rc;
}

/* JWS signatures of ES* are r || s (RFC 7518 §3.4); libcrypto takes DER. */
static unsigned char *es_der(const unsigned char *sig, size_t len, int coord, size_t *der_len)
{
	if (len != 2 * (size_t)coord)
		return NULL;
	ECDSA_SIG *s = ECDSA_SIG_new();
	BIGNUM *br = BN_bin2bn(sig, coord, NULL), *bs = BN_bin2bn(sig + coord, coord, NULL);
	unsigned char *der = NULL;
	if (s != NULL && br != NULL && bs != NULL && ECDSA_SIG_set0(s, br, bs) == 1) {
		br = bs = NULL; /* s owns them now */
		int n = i2d_ECDSA_SIG(s, &der);
		*der_len = n > 0 ? (size_t)n : 0;
		if (n <= 0)
			der = NULL;
	}
	BN_free(br);
	BN_free(bs);
	ECDSA_SIG_free(s);
	return der;
}

static int verify_pkey(EVP_PKEY *key, const struct alg *a, const unsigned char *data, size_t dlen,
                       const unsigned char *sig, size_t slen)
{
	unsigned char *der = NULL;
	if (a->fam == FAM_ES) {
		der = es_der(sig, slen, a->coord, &slen);
		if (der == NULL)
			return 0;
		sig = der;
	}
	EVP_MD_CTX *mc = EVP_MD_CTX_new();
	EVP_PKEY_CTX *pc = NULL;
	int ok = mc != NULL && EVP_DigestVerifyInit(mc, &pc, md_of(a->bits), NULL, key) == 1;
	/* PS*: PSS with MGF1 of the same hash and a salt as long as the hash (RFC 7518 §3.5). */
	if (ok && a->fam == FAM_PS)
		ok = EVP_PKEY_CTX_set_rsa_padding(pc, RSA_PKCS1_PSS_PADDING) == 1 &&
		     EVP_PKEY_CTX_set_rsa_pss_saltlen(pc, RSA_PSS_SALTLEN_DIGEST) == 1;
	ok = ok && EVP_DigestVerify(mc, sig, slen, data, dlen) == 1;
	EVP_MD_CTX_free(mc);
	OPENSSL_free(der);
	return ok;
}

static th_err verify_sig(const struct th_jwt_rules *r, const struct alg *a, const char *kid,
                         const char *token, size_t dlen, const unsigned char *sig, size_t slen,
                         struct th_error *e)
{
	if (a->fam == FAM_HS) {
		/* HS takes only the configured secret, never a JWKS key: a public key cannot
		 * become an HMAC secret (key confusion). */
		if (r->secret == NULL)
			return unauth(e,
			              "HS tokens are not accepted (no jwt secret is configured)");
		if (r->secret_len < 32)
			return th_error_set(e, TH_EINTERNAL,
			                    "the server's jwt secret is shorter than 32 bytes");
		unsigned char mac[EVP_MAX_MD_SIZE];
		unsigned maclen = 0;
		if (HMAC(md_of(a->bits), r->secret, (int)r->secret_len,
		         (const unsigned char *)token, dlen, mac, &maclen) == NULL)
			return th_error_set(e, TH_EINTERNAL, "libcrypto is not available");
		if (slen != maclen || CRYPTO_memcmp(mac, sig, maclen) != 0)
			return unauth(e, "the signature does not verify");
		return TH_OK;
	}
	EVP_PKEY *key = NULL;
	th_err rc = find_key(r, a, kid, &key, e);
	if (rc != TH_OK)
		return rc;
	int ok = verify_pkey(key, a, (const unsigned char *)token, dlen, sig, slen);
	EVP_PKEY_free(key);
	return ok ? TH_OK : unauth(e, "the signature does not verify");
}

/* ---- claims ---------------------------------------------------------------------- */

/* A NumericDate claim into *t: 1 present and a number, 0 absent, -1 not a number. */
static int numeric_date(json_object *claims, const char *name, double *t)
{
	json_object *v = NULL;
	if (!json_object_object_get_ex(claims, name, &v))
		return 0;
	if (!json_object_is_type(v, json_type_int) && !json_object_is_type(v, json_type_double))
		return -1;
	*t = json_object_get_double(v);
	return 1;
}

static int aud_names(json_object *aud, const char *want)
{
	if (json_object_is_type(aud, json_type_string))
		return strcmp(json_object_get_string(aud), want) == 0;
	if (!json_object_is_type(aud, json_type_array))
		return 0;
	for (size_t i = 0; i < json_object_array_length(aud); i++) {
		json_object *v = json_object_array_get_idx(aud, i);
		if (json_object_is_type(v, json_type_string) &&
		    strcmp(json_object_get_string(v), want) == 0)
			return 1;
	}
	return 0;
}

static th_err check_claims(const struct th_jwt_rules *r, json_object *c, char *who, size_t n,
                           struct th_error *e)
{
	double exp = 0, nbf = 0, now = (double)r->now_s, lee = (double)r->leeway_s;
	int has = numeric_date(c, "exp", &exp);
	/* A token without exp would be a credential for ever: API keys are that, and they
	 * can be revoked. */
	if (has <= 0)
		return unauth(e, has == 0 ? "the token has no exp claim" : "exp is not a number");
	if (now - lee >= exp)
		return th_error_set(e, TH_EUNAUTHENTICATED, "bearer token refused: it expired");
	has = numeric_date(c, "nbf", &nbf);
	if (has < 0)
		return unauth(e, "nbf is not a number");
	if (has > 0 && now + lee < nbf)
		return unauth(e, "it is not valid yet (nbf)");
	const char *iss = json_object_get_string(json_object_object_get(c, "iss"));
	if (r->issuer != NULL && (iss == NULL || strcmp(iss, r->issuer) != 0))
		return unauth(e, "iss is not the configured issuer");
	json_object *aud = NULL;
	if (r->audience != NULL &&
	    (!json_object_object_get_ex(c, "aud", &aud) || !aud_names(aud, r->audience)))
		return unauth(e, "aud does not name the configured audience");
	json_object *id = NULL;
	if (!json_object_object_get_ex(c, r->claim, &id) ||
	    !json_object_is_type(id, json_type_string))
		return th_error_set(
		    e, TH_EUNAUTHENTICATED,
		    "bearer token refused: claim %s (the participant) is missing or "
		    "not a string",
		    r->claim);
	size_t len = (size_t)json_object_get_string_len(id);
	char what[96];
	snprintf(what, sizeof what, "the token's claim %s", r->claim);
	struct th_error sub;
	th_error_clear(&sub);
	if (th_id_check(json_object_get_string(id), len, r->max_id, what, &sub) != TH_OK)
		return th_error_set(e, TH_EUNAUTHENTICATED, "bearer token refused: %s", sub.msg);
	if (len + 1 > n)
		return unauth(e, "the participant id is too long");
	memcpy(who, json_object_get_string(id), len + 1);
	return TH_OK;
}

/* ---- the token ------------------------------------------------------------------- */

/* Decodes one base64url part holding a JSON object into a new value (json_object_put). */
static json_object *json_part(const char *p, size_t len)
{
	unsigned char *buf = malloc(len + 1);
	long n = buf != NULL ? th_b64url_decode(p, len, buf, len) : -1;
	json_object *v = NULL;
	if (n > 0) {
		buf[n] = '\0';
		struct json_tokener *tok = json_tokener_new_ex(16);
		if (tok != NULL && strlen((char *)buf) == (size_t)n)
			v = json_tokener_parse_ex(tok, (char *)buf, (int)n);
		/* One JSON value and nothing after it. */
		if (tok != NULL && (json_tokener_get_error(tok) != json_tokener_success ||
		                    json_tokener_get_parse_end(tok) != (size_t)n)) {
			json_object_put(v);
			v = NULL;
		}
		json_tokener_free(tok);
	}
	free(buf);
	if (v != NULL && !json_object_is_type(v, json_type_object)) {
		json_object_put(v);
		v = NULL;
	}
	return v;
}

static const struct alg *alg_of(json_object *hdr, struct th_error *e)
{
	const char *name = json_object_get_string(json_object_object_get(hdr, "alg"));
	if (name == NULL ||
	    !json_object_is_type(json_object_object_get(hdr, "alg"), json_type_string)) {
		unauth(e, "the header has no alg");
		return NULL;
	}
	for (size_t i = 0; i < sizeof algs / sizeof algs[0]; i++)
		if (strcmp(algs[i].name, name) == 0)
			return &algs[i];
	/* "none" and every other name: unsigned or unknown tokens are never accepted. */
	unauth(e, "its alg is not one of HS256/384/512, RS256/384/512, PS256/384/512, "
	          "ES256/384/512");
	return NULL;
}

th_err th_jwt_verify(const struct th_jwt_rules *r, const char *token, char *who, size_t n,
                     struct th_error *e)
{
	size_t len = strlen(token);
	if (len > JWT_MAX || !th_jwt_is_jwt(token))
		return unauth(e, "it is not a compact JWS (three base64url parts) of at most 8192 "
		                 "bytes");
	const char *d1 = strchr(token, '.'), *d2 = strchr(d1 + 1, '.');
	json_object *hdr = json_part(token, (size_t)(d1 - token));
	if (hdr == NULL)
		return unauth(e, "its header is not base64url of a JSON object");
	const struct alg *a = alg_of(hdr, e);
	json_object *kidv = json_object_object_get(hdr, "kid");
	const char *kid =
	    json_object_is_type(kidv, json_type_string) ? json_object_get_string(kidv) : NULL;
	th_err rc = a == NULL ? TH_EUNAUTHENTICATED : TH_OK;
	/* RFC 7515 §4.1.11: an extension we do not understand must not be ignored. */
	if (rc == TH_OK && json_object_object_get_ex(hdr, "crit", NULL))
		rc = unauth(e, "its header has crit extensions, which this server does not know");
	unsigned char sig[1024];
	long slen = th_b64url_decode(d2 + 1, strlen(d2 + 1), sig, sizeof sig);
	if (rc == TH_OK && slen <= 0)
		rc = unauth(e, "its signature is not base64url");
	if (rc == TH_OK)
		rc = verify_sig(r, a, kid, token, (size_t)(d2 - token), sig, (size_t)slen, e);
	json_object_put(hdr);
	if (rc != TH_OK)
		return rc;
	/* Claims are read only once the signature holds. */
	json_object *claims = json_part(d1 + 1, (size_t)(d2 - d1 - 1));
	if (claims == NULL)
		return unauth(e, "its payload is not base64url of a JSON object");
	rc = check_claims(r, claims, who, n, e);
	json_object_put(claims);
	return rc;
}
