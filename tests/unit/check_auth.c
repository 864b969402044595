/* SPDX-License-Identifier: Apache-2.0 */
/* check_auth.c — SEC-1: bearer credentials. Real tokens are signed here with libcrypto
 * (RSA 2048, P-256, HMAC) and checked by util/jwt.c and ops/auth.c: every algorithm
 * family, the claim rules, the attacks (alg none, key confusion, wrong key, unknown
 * kid), a key rotated in the JWKS file, malformed tokens, and API keys. */
#include <check.h>
#include <json-c/json.h>
#include <openssl/core_names.h>
#include <openssl/ecdsa.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rsa.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "config/settings.h"
#include "ops/auth.h"
#include "store/store.h"
#include "util/jwt.h"

static const char secret[] = "0123456789abcdef0123456789abcdef-test";
static EVP_PKEY *rsa1, *rsa2, *ec1;
static char jwks_path[64];

static void b64(const unsigned char *p, size_t n, char *out, size_t cap)
{
	ck_assert_int_ge(th_b64url_encode(p, n, out, cap), 0);
}

/* ES signatures go out as r || s of the curve's size. */
static size_t der_to_raw(unsigned char *sig, size_t len, int coord)
{
	const unsigned char *p = sig;
	ECDSA_SIG *s = d2i_ECDSA_SIG(NULL, &p, (long)len);
	ck_assert_ptr_nonnull(s);
	const BIGNUM *r = NULL, *v = NULL;
	ECDSA_SIG_get0(s, &r, &v);
	BN_bn2binpad(r, sig, coord);
	BN_bn2binpad(v, sig + coord, coord);
	ECDSA_SIG_free(s);
	return 2 * (size_t)coord;
}

static size_t sign(const char *alg, EVP_PKEY *key, const void *hkey, size_t hlen, const char *data,
                   unsigned char *sig)
{
	int bits = atoi(alg + 2);
	const EVP_MD *md = bits == 256 ? EVP_sha256() : bits == 384 ? EVP_sha384() : EVP_sha512();
	if (alg[0] == 'H') {
		unsigned n = 0;
		HMAC(md, hkey, (int)hlen, (const unsigned char *)data, strlen(data), sig, &n);
		return n;
	}
	EVP_MD_CTX *mc = EVP_MD_CTX_new();
	EVP_PKEY_CTX *pc = NULL;
	ck_assert_int_eq(EVP_DigestSignInit(mc, &pc, md, NULL, key), 1);
	if (alg[0] == 'P') {
		EVP_PKEY_CTX_set_rsa_padding(pc, RSA_PKCS1_PSS_PADDING);
		EVP_PKEY_CTX_set_rsa_pss_saltlen(pc, RSA_PSS_SALTLEN_DIGEST);
	}
	size_t n = 1024;
	ck_assert_int_eq(EVP_DigestSign(mc, sig, &n, (const unsigned char *)data, strlen(data)), 1);
	EVP_MD_CTX_free(mc);
	return alg[0] == 'E' ? der_to_raw(sig, n, 32) : n;
}

/* A token of alg (kid may be NULL) over the claims JSON, signed with key or hkey. */
static char *token(const char *alg, const char *kid, const char *claims, EVP_PKEY *key,
                   const void *hkey, size_t hlen)
{
	char hdr[256], data[4096], part[2048];
	if (kid != NULL)
		snprintf(hdr, sizeof hdr, "{\"alg\":\"%s\",\"typ\":\"JWT\",\"kid\":\"%s\"}", alg,
		         kid);
	else
		snprintf(hdr, sizeof hdr, "{\"alg\":\"%s\",\"typ\":\"JWT\"}", alg);
	b64((const unsigned char *)hdr, strlen(hdr), data, sizeof data);
	strcat(data, ".");
	b64((const unsigned char *)claims, strlen(claims), part, sizeof part);
	strcat(data, part);
	unsigned char sig[1024];
	size_t n = strcmp(alg, "none") == 0 ? 0 : sign(alg, key, hkey, hlen, data, sig);
	b64(sig, n, part, sizeof part);
	char *out = malloc(strlen(data) + strlen(part) + 2);
	sprintf(out, "%s.%s", data, part);
	return out;
}

static char *claims(long exp_in, long nbf_in, const char *iss, const char *aud, const char *sub)
{
	static char buf[512];
	long now = (long)time(NULL);
	snprintf(buf, sizeof buf,
	         "{\"sub\":\"%s\",\"iss\":\"%s\",\"aud\":%s,\"exp\":%ld,\"nbf\":%ld}", sub, iss,
	         aud, now + exp_in, now + nbf_in);
	return buf;
}

static char *good(void)
{
	return claims(300, -10, "https://issuer.test/", "[\"other\",\"th\"]", "alice");
}

static void bn_b64(EVP_PKEY *k, const char *name, int pad, char *out, size_t cap)
{
	BIGNUM *bn = NULL;
	ck_assert_int_eq(EVP_PKEY_get_bn_param(k, name, &bn), 1);
	unsigned char buf[512];
	int n = pad > 0 ? BN_bn2binpad(bn, buf, pad) : BN_bn2bin(bn, buf);
	BN_free(bn);
	b64(buf, (size_t)n, out, cap);
}

static void jwk(EVP_PKEY *k, const char *kid, char *out, size_t cap)
{
	char a[700], b[700];
	if (EVP_PKEY_is_a(k, "EC")) {
		bn_b64(k, OSSL_PKEY_PARAM_EC_PUB_X, 32, a, sizeof a);
		bn_b64(k, OSSL_PKEY_PARAM_EC_PUB_Y, 32, b, sizeof b);
		snprintf(
		    out, cap,
		    "{\"kty\":\"EC\",\"crv\":\"P-256\",\"kid\":\"%s\",\"x\":\"%s\",\"y\":\"%s\"}",
		    kid, a, b);
	} else {
		bn_b64(k, OSSL_PKEY_PARAM_RSA_N, 0, a, sizeof a);
		bn_b64(k, OSSL_PKEY_PARAM_RSA_E, 0, b, sizeof b);
		snprintf(
		    out, cap,
		    "{\"kty\":\"RSA\",\"kid\":\"%s\",\"use\":\"sig\",\"n\":\"%s\",\"e\":\"%s\"}",
		    kid, a, b);
	}
}

/* Writes the JWKS file with the keys given (NULL-terminated kid, key pairs). */
static void write_jwks(const char *kid1, EVP_PKEY *k1, const char *kid2, EVP_PKEY *k2)
{
	char one[2048], two[2048] = "";
	jwk(k1, kid1, one, sizeof one);
	if (kid2 != NULL)
		jwk(k2, kid2, two, sizeof two);
	FILE *f = fopen(jwks_path, "w");
	ck_assert_ptr_nonnull(f);
	fprintf(f, "{\"keys\":[%s%s%s]}", one, kid2 ? "," : "", two);
	fclose(f);
}

static struct th_jwt_rules rules(void)
{
	struct th_jwt_rules r = {
	    .secret = (const unsigned char *)secret,
	    .secret_len = sizeof secret - 1,
	    .jwks_path = jwks_path,
	    .issuer = "https://issuer.test/",
	    .audience = "th",
	    .claim = "sub",
	    .leeway_s = 5,
	    .now_s = (int64_t)time(NULL),
	    .max_id = 256,
	};
	return r;
}

/* The result of verifying t (freed here) under r; who gets the participant. */
static th_err check(const struct th_jwt_rules *r, char *t, struct th_error *e)
{
	char who[300] = "";
	th_error_clear(e);
	th_err rc = th_jwt_verify(r, t, who, sizeof who, e);
	if (rc == TH_OK)
		ck_assert_str_eq(who, "alice");
	free(t);
	return rc;
}

static void refused(char *t, const char *why)
{
	struct th_jwt_rules r = rules();
	struct th_error e;
	th_err rc = check(&r, t, &e);
	ck_assert_msg(rc == TH_EUNAUTHENTICATED, "expected a refusal (%s), got %s", why,
	              th_err_name(rc));
	ck_assert_msg(strstr(e.msg, why) != NULL, "'%s' does not say '%s'", e.msg, why);
}

static void accepted(char *t)
{
	struct th_jwt_rules r = rules();
	struct th_error e;
	th_err rc = check(&r, t, &e);
	ck_assert_msg(rc == TH_OK, "refused: %s", e.msg);
}

static void setup(void)
{
	if (rsa1 == NULL) {
		rsa1 = EVP_PKEY_Q_keygen(NULL, NULL, "RSA", (size_t)2048);
		rsa2 = EVP_PKEY_Q_keygen(NULL, NULL, "RSA", (size_t)2048);
		ec1 = EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-256");
	}
	ck_assert_ptr_nonnull(rsa1);
	ck_assert_ptr_nonnull(ec1);
	snprintf(jwks_path, sizeof jwks_path, "/tmp/check_auth_%d.jwks", (int)getpid());
	write_jwks("r1", rsa1, "e1", ec1);
}

static void teardown(void)
{
	unlink(jwks_path);
}

START_TEST(test_sec1_jwt_valid_hs_rs_ps_es)
{
	accepted(token("HS256", NULL, good(), NULL, secret, sizeof secret - 1));
	accepted(token("HS384", NULL, good(), NULL, secret, sizeof secret - 1));
	accepted(token("HS512", NULL, good(), NULL, secret, sizeof secret - 1));
	accepted(token("RS256", "r1", good(), rsa1, NULL, 0));
	accepted(token("RS512", "r1", good(), rsa1, NULL, 0));
	accepted(token("PS256", "r1", good(), rsa1, NULL, 0));
	accepted(token("ES256", "e1", good(), ec1, NULL, 0));
}
END_TEST

START_TEST(test_sec1_jwt_claims_refused)
{
	refused(token("HS256", NULL, claims(-100, -200, "https://issuer.test/", "\"th\"", "alice"),
	              NULL, secret, sizeof secret - 1),
	        "expired");
	refused(token("RS256", "r1", claims(600, 300, "https://issuer.test/", "\"th\"", "alice"),
	              rsa1, NULL, 0),
	        "not valid yet");
	refused(token("RS256", "r1", claims(300, 0, "https://issuer.test/", "\"them\"", "alice"),
	              rsa1, NULL, 0),
	        "aud");
	refused(token("ES256", "e1", claims(300, 0, "https://evil.test/", "\"th\"", "alice"), ec1,
	              NULL, 0),
	        "iss");
	refused(token("HS256", NULL, "{\"sub\":\"alice\"}", NULL, secret, sizeof secret - 1),
	        "no exp");
	refused(token("HS256", NULL, claims(300, 0, "https://issuer.test/", "\"th\"", "a b"), NULL,
	              secret, sizeof secret - 1),
	        "claim sub");
	/* Within the leeway (5 s here) a just-expired token still counts. */
	accepted(token("HS256", NULL, claims(-2, -20, "https://issuer.test/", "\"th\"", "alice"),
	               NULL, secret, sizeof secret - 1));
}
END_TEST

START_TEST(test_sec1_jwt_attacks_refused)
{
	refused(token("none", NULL, good(), NULL, NULL, 0), "alg");
	refused(token("RS256", "r1", good(), rsa2, NULL, 0), "signature does not verify");
	refused(token("HS256", NULL, good(), NULL, "wrong secret wrong secret wrong secret", 38),
	        "signature does not verify");
	refused(token("RS256", "nope", good(), rsa1, NULL, 0), "no key of the JWKS file has");
	/* Key confusion: HS256 "signed" with the public key as the secret. */
	char pub[2048];
	jwk(rsa1, "r1", pub, sizeof pub);
	refused(token("HS256", "r1", good(), NULL, pub, strlen(pub)), "signature does not verify");
	/* An RS token naming the EC key's kid: the key's type must fit the alg. */
	refused(token("RS256", "e1", good(), rsa1, NULL, 0), "not a signing key for its alg");
	/* PS signed, RS claimed. */
	char *t = token("PS256", "r1", good(), rsa1, NULL, 0);
	memcpy(t, "eyJhbGciOiJSUzI1NiIsInR5cCI6IkpXVCIsImtpZCI6InIxIn0", 50);
	refused(t, "");
}
END_TEST

START_TEST(test_sec1_jwt_jwks_rotation_without_restart)
{
	accepted(token("RS256", "r1", good(), rsa1, NULL, 0));
	/* r1 leaves the file, r2 comes in: the verifier sees it without being told. */
	write_jwks("r2", rsa2, NULL, NULL);
	struct timespec ts[2] = {{0, UTIME_NOW}, {time(NULL) + 2, 0}};
	utimensat(AT_FDCWD, jwks_path, ts, 0);
	refused(token("RS256", "r1", good(), rsa1, NULL, 0), "no key of the JWKS file has");
	accepted(token("RS256", "r2", good(), rsa2, NULL, 0));
}
END_TEST

START_TEST(test_sec1_jwt_malformed_refused)
{
	static const char *const bad[] = {
	    "",
	    "a",
	    "a.b",
	    "a.b.c.d",
	    "..",
	    "!!.e30.e30",
	    "e30.e30.",
	    "e30.e30.!!",
	    "bm90anNvbg.e30.AAAA",
	    "W10.e30.AAAA" /* header [] */,
	    "eyJhbGciOjF9.e30.AAAA" /* alg 1 */,
	    "eyJhbGciOiJIUzI1NiJ9.W10.AAAA",
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		struct th_jwt_rules r = rules();
		struct th_error e;
		char who[64];
		th_error_clear(&e);
		ck_assert_msg(th_jwt_verify(&r, bad[i], who, sizeof who, &e) == TH_EUNAUTHENTICATED,
		              "'%s' not refused", bad[i]);
	}
	/* A payload that is not an object, signed correctly. */
	refused(token("HS256", NULL, "[1]", NULL, secret, sizeof secret - 1), "payload");
	/* A header with crit. */
	struct th_jwt_rules r = rules();
	struct th_error e;
	char who[64];
	const char *crit = "eyJhbGciOiJIUzI1NiIsImNyaXQiOlsieCJdfQ.e30.AAAA";
	ck_assert_int_eq(th_jwt_verify(&r, crit, who, sizeof who, &e), TH_EUNAUTHENTICATED);
	ck_assert_ptr_nonnull(strstr(e.msg, "crit"));
}
END_TEST

START_TEST(test_sec1_api_key_add_verify_revoke)
{
	char db[64];
	snprintf(db, sizeof db, "/tmp/check_auth_%d.db", (int)getpid());
	struct th_store_opts o = {.path = db, .busy_timeout_ms = 1000};
	struct th_store *st = NULL;
	struct th_error e;
	th_error_clear(&e);
	ck_assert_int_eq(th_store_open(&o, &st, &e), TH_OK);
	struct th_config cfg;
	ck_assert_int_eq(th_config_defaults(&cfg), TH_OK);
	char key[TH_KEY_BUF], hash[TH_KEY_HASH_BUF], who[300];
	ck_assert_int_eq(th_auth_key_new(key, hash, &e), TH_OK);
	ck_assert_uint_eq(strlen(key), 46);
	ck_assert_int_eq(th_store_key_add(st, "k1", "bob", "laptop", hash, &e), TH_OK);
	ck_assert_int_eq(th_auth_bearer(st, &cfg, key, who, sizeof who, &e), TH_OK);
	ck_assert_str_eq(who, "bob");
	/* One character off, or a stranger's shape: refused, and the message has no key. */
	key[10] = key[10] == 'A' ? 'B' : 'A';
	ck_assert_int_eq(th_auth_bearer(st, &cfg, key, who, sizeof who, &e), TH_EUNAUTHENTICATED);
	ck_assert_ptr_null(strstr(e.msg, key + 3));
	ck_assert_int_eq(th_auth_bearer(st, &cfg, "hunter2", who, sizeof who, &e),
	                 TH_EUNAUTHENTICATED);
	key[10] = key[10] == 'A' ? 'B' : 'A';
	int64_t n = 0;
	ck_assert_int_eq(th_store_key_revoke(st, "laptop", &n, &e), TH_OK);
	ck_assert_int_eq(n, 1);
	ck_assert_int_eq(th_auth_bearer(st, &cfg, key, who, sizeof who, &e), TH_EUNAUTHENTICATED);
	ck_assert_ptr_nonnull(strstr(e.msg, "revoked"));
	struct th_api_key *k = NULL;
	size_t count = 0;
	ck_assert_int_eq(th_store_key_list(st, &k, &count, &e), TH_OK);
	ck_assert_uint_eq(count, 1);
	ck_assert_int_ne(k[0].revoked_ms, 0);
	th_api_keys_free(k, count);
	th_store_close(st);
	th_config_free(&cfg);
	unlink(db);
	char side[80];
	snprintf(side, sizeof side, "%s-wal", db);
	unlink(side);
	snprintf(side, sizeof side, "%s-shm", db);
	unlink(side);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("auth");
	TCase *tc = tcase_create("sec1");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_sec1_jwt_valid_hs_rs_ps_es);
	tcase_add_test(tc, test_sec1_jwt_claims_refused);
	tcase_add_test(tc, test_sec1_jwt_attacks_refused);
	tcase_add_test(tc, test_sec1_jwt_jwks_rotation_without_restart);
	tcase_add_test(tc, test_sec1_jwt_malformed_refused);
	tcase_add_test(tc, test_sec1_api_key_add_verify_revoke);
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	srunner_set_fork_status(sr, CK_NOFORK);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? 0 : 1;
}
