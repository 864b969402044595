/* SPDX-License-Identifier: Apache-2.0 */
/* check_cardsig.c — the signed agent card (service/cardsig.c, util/jws.c; CARD-SIG-1..4,
 * decision-066): a card signed with an ES256, RS256 and EdDSA key verifies with
 * libcrypto over the RFC 8785 form of the card without `signatures`; the protected
 * header (alg, typ JOSE, kid = the key's RFC 7638 thumbprint computed here, jku); the
 * key read once per process; the weak ETag that does not move with the signature bytes;
 * and every kind of unusable key file named in the cause and never in the client's
 * message. */
#include "config.h"

#include <check.h>
#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/ecdsa.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "service/card.h"
#include "service/cardsig.h"
#include "util/jcs.h"
#include "util/jsonx.h"
#include "util/jwt.h"

#define BASE "http://127.0.0.1:8080/"

static char dir[64];
static struct th_config cfg;
static char base_url[] = BASE;
static char kid_text[] = "card-2026 \"12\"", kid_other[] = "other";
static char jku_text[] = "https://agent.example/jwks.json";

static void setup(void)
{
	snprintf(dir, sizeof dir, "/tmp/check_cardsig_%d", (int)getpid());
	ck_assert_int_eq(mkdir(dir, 0700), 0);
	memset(&cfg, 0, sizeof cfg);
	cfg.base_url = base_url;
}

static void teardown(void)
{
	char cmd[128];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	ck_assert_int_eq(system(cmd), 0);
}

/* A fresh key of type ("EC" P-256, "RSA" bits, "ED25519") written as PEM to dir/name;
 * the key is returned (EVP_PKEY_free). how: 0 private, 1 encrypted, 2 public only. */
static unsigned char passphrase[] = "secret";

static EVP_PKEY *write_key(const char *type, int param, const char *name, int how, char *path,
                           size_t n)
{
	EVP_PKEY *k = strcmp(type, "EC") == 0
	                  ? EVP_PKEY_Q_keygen(NULL, NULL, "EC", param == 384 ? "P-384" : "P-256")
	              : strcmp(type, "RSA") == 0
	                  ? EVP_PKEY_Q_keygen(NULL, NULL, "RSA", (size_t)param)
	                  : EVP_PKEY_Q_keygen(NULL, NULL, "ED25519");
	ck_assert_ptr_nonnull(k);
	snprintf(path, n, "%s/%s", dir, name);
	FILE *f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	if (how == 2)
		ck_assert_int_eq(PEM_write_PUBKEY(f, k), 1);
	else
		ck_assert_int_eq(PEM_write_PrivateKey(f, k, how == 1 ? EVP_aes_256_cbc() : NULL,
		                                      how == 1 ? passphrase : NULL,
		                                      how == 1 ? 6 : 0, NULL, NULL),
		                 1);
	fclose(f);
	return k;
}

/* The card of cfg as served: text and etag (text: free). */
static th_err serve(char **text, char etag[TH_CARD_ETAG_MAX], char *cause, size_t cn,
                    struct th_error *e)
{
	json_object *cmds = json_object_new_array();
	json_object *card = th_card_build(&cfg, cmds);
	ck_assert_ptr_nonnull(card);
	th_error_clear(e);
	th_err rc = th_card_serve(card, &cfg, text, etag, cause, cn, e);
	json_object_put(card);
	json_object_put(cmds);
	return rc;
}

static json_object *b64_json(const char *b64)
{
	unsigned char buf[1024];
	long n = th_b64url_decode(b64, strlen(b64), buf, sizeof buf - 1);
	ck_assert_int_gt(n, 0);
	buf[n] = '\0';
	json_object *v = json_tokener_parse((const char *)buf);
	ck_assert_ptr_nonnull(v);
	return v;
}

/* RFC 7638 computed here from libcrypto's own export of the public key. */
static void thumbprint_of(EVP_PKEY *k, char *out, size_t n)
{
	char jwk[3000], a[1400], b[1400];
	unsigned char bin[1024];
	BIGNUM *x = NULL, *y = NULL;
	if (EVP_PKEY_is_a(k, "EC")) {
		ck_assert(EVP_PKEY_get_bn_param(k, OSSL_PKEY_PARAM_EC_PUB_X, &x));
		ck_assert(EVP_PKEY_get_bn_param(k, OSSL_PKEY_PARAM_EC_PUB_Y, &y));
		BN_bn2binpad(x, bin, 32);
		th_b64url_encode(bin, 32, a, sizeof a);
		BN_bn2binpad(y, bin, 32);
		th_b64url_encode(bin, 32, b, sizeof b);
		snprintf(jwk, sizeof jwk,
		         "{\"crv\":\"P-256\",\"kty\":\"EC\",\"x\":\"%s\",\"y\":\"%s\"}", a, b);
	} else if (EVP_PKEY_is_a(k, "RSA")) {
		ck_assert(EVP_PKEY_get_bn_param(k, OSSL_PKEY_PARAM_RSA_E, &x));
		ck_assert(EVP_PKEY_get_bn_param(k, OSSL_PKEY_PARAM_RSA_N, &y));
		th_b64url_encode(bin, (size_t)BN_bn2bin(x, bin), a, sizeof a);
		th_b64url_encode(bin, (size_t)BN_bn2bin(y, bin), b, sizeof b);
		snprintf(jwk, sizeof jwk, "{\"e\":\"%s\",\"kty\":\"RSA\",\"n\":\"%s\"}", a, b);
	} else {
		size_t len = 32;
		ck_assert(EVP_PKEY_get_raw_public_key(k, bin, &len));
		th_b64url_encode(bin, len, a, sizeof a);
		snprintf(jwk, sizeof jwk, "{\"crv\":\"Ed25519\",\"kty\":\"OKP\",\"x\":\"%s\"}", a);
	}
	BN_free(x);
	BN_free(y);
	unsigned char md[32];
	unsigned int mdlen = 0;
	ck_assert(EVP_Digest(jwk, strlen(jwk), md, &mdlen, EVP_sha256(), NULL));
	th_b64url_encode(md, 32, out, n);
}

/* Verifies text's one signature with k's public key over what A2A §8.4.3 says the
 * verifier computes; returns the decoded protected header (json_object_put). */
static json_object *verify(const char *text, EVP_PKEY *k)
{
	json_object *card = json_tokener_parse(text);
	ck_assert_ptr_nonnull(card);
	json_object *sigs = th_json_get(card, "signatures");
	ck_assert_int_eq((int)json_object_array_length(sigs), 1);
	json_object *s0 = json_object_array_get_idx(sigs, 0);
	char prot[512], sigb64[1024];
	snprintf(prot, sizeof prot, "%s", th_json_str(s0, "protected"));
	snprintf(sigb64, sizeof sigb64, "%s", th_json_str(s0, "signature"));
	ck_assert_ptr_null(th_json_get(s0, "header"));
	json_object_object_del(card, "signatures");
	struct th_error e;
	th_error_clear(&e);
	char *payload = th_jcs_text(card, &e);
	ck_assert_ptr_nonnull(payload);
	static char input[16384];
	int n = snprintf(input, sizeof input, "%s.", prot);
	th_b64url_encode((const unsigned char *)payload, strlen(payload), input + n,
	                 sizeof input - (size_t)n);
	unsigned char sig[600], der[600];
	long slen = th_b64url_decode(sigb64, strlen(sigb64), sig, sizeof sig);
	ck_assert_int_gt(slen, 0);
	const unsigned char *vsig = sig;
	size_t vlen = (size_t)slen;
	if (EVP_PKEY_is_a(k, "EC")) { /* JOSE r||s back to DER for libcrypto */
		ck_assert_int_eq(slen, 64);
		ECDSA_SIG *es = ECDSA_SIG_new();
		ECDSA_SIG_set0(es, BN_bin2bn(sig, 32, NULL), BN_bin2bn(sig + 32, 32, NULL));
		unsigned char *p = der;
		vlen = (size_t)i2d_ECDSA_SIG(es, &p);
		ECDSA_SIG_free(es);
		vsig = der;
	}
	EVP_MD_CTX *mc = EVP_MD_CTX_new();
	ck_assert_int_eq(EVP_DigestVerifyInit(
	                     mc, NULL, EVP_PKEY_is_a(k, "ED25519") ? NULL : EVP_sha256(), NULL, k),
	                 1);
	ck_assert_msg(
	    EVP_DigestVerify(mc, vsig, vlen, (const unsigned char *)input, strlen(input)) == 1,
	    "the signature does not verify");
	EVP_MD_CTX_free(mc);
	/* …and a card changed by one byte does not. */
	input[strlen(input) - 1] ^= 1;
	mc = EVP_MD_CTX_new();
	EVP_DigestVerifyInit(mc, NULL, EVP_PKEY_is_a(k, "ED25519") ? NULL : EVP_sha256(), NULL, k);
	ck_assert_int_ne(
	    EVP_DigestVerify(mc, vsig, vlen, (const unsigned char *)input, strlen(input)), 1);
	EVP_MD_CTX_free(mc);
	free(payload);
	json_object_put(card);
	return b64_json(prot);
}

static void round_trip(const char *type, int param, const char *alg)
{
	char path[128], *text = NULL, etag[TH_CARD_ETAG_MAX], thumb[64];
	/* A file of its own per algorithm: a process keeps the key of a path it read, and
	 * without fork (valgrind's run) the round trips share one process. */
	char name[32];
	snprintf(name, sizeof name, "key-%s.pem", alg);
	EVP_PKEY *k = write_key(type, param, name, 0, path, sizeof path);
	cfg.card_signing_key = path;
	struct th_error e;
	ck_assert_msg(serve(&text, etag, NULL, 0, &e) == TH_OK, "%s", e.msg);
	json_object *h = verify(text, k);
	thumbprint_of(k, thumb, sizeof thumb);
	ck_assert_str_eq(th_json_str(h, "alg"), alg);
	ck_assert_str_eq(th_json_str(h, "typ"), "JOSE");
	ck_assert_str_eq(th_json_str(h, "kid"), thumb);
	ck_assert_ptr_null(th_json_get(h, "jku"));
	ck_assert_int_eq(json_object_object_length(h), 3);
	ck_assert_msg(strncmp(etag, "W/\"", 3) == 0, "a signed card's ETag is weak: %s", etag);
	json_object_put(h);
	free(text);
	EVP_PKEY_free(k);
}

START_TEST(test_card_sig1_es256_round_trip)
{
	round_trip("EC", 256, "ES256");
}
END_TEST

START_TEST(test_card_sig1_rs256_round_trip)
{
	round_trip("RSA", 2048, "RS256");
}
END_TEST

START_TEST(test_card_sig1_eddsa_round_trip)
{
	round_trip("ED25519", 0, "EdDSA");
}
END_TEST

/* Unset: no signatures, the strong ETag of the bytes as before. */
START_TEST(test_card_sig1_unset_key_leaves_card_unsigned)
{
	char *text = NULL, etag[TH_CARD_ETAG_MAX];
	struct th_error e;
	ck_assert_int_eq(serve(&text, etag, NULL, 0, &e), TH_OK);
	ck_assert_ptr_null(strstr(text, "signatures"));
	ck_assert_int_eq(etag[0], '"');
	free(text);
}
END_TEST

/* kid and jku from the configuration go into the protected header; the public JWKS
 * names the same kid. */
START_TEST(test_card_sig2_configured_kid_and_jku)
{
	char path[128], *text = NULL, etag[TH_CARD_ETAG_MAX];
	EVP_PKEY *k = write_key("EC", 256, "kid.pem", 0, path, sizeof path);
	cfg.card_signing_key = path;
	cfg.card_signing_kid = kid_text;
	cfg.card_signing_jku = jku_text;
	struct th_error e;
	ck_assert_msg(serve(&text, etag, NULL, 0, &e) == TH_OK, "%s", e.msg);
	json_object *h = verify(text, k);
	ck_assert_str_eq(th_json_str(h, "kid"), "card-2026 \"12\"");
	ck_assert_str_eq(th_json_str(h, "jku"), "https://agent.example/jwks.json");
	json_object_put(h);
	char *jwks = th_card_jwks(&cfg, &e);
	ck_assert_ptr_nonnull(jwks);
	json_object *set = json_tokener_parse(jwks);
	json_object *jwk = json_object_array_get_idx(th_json_get(set, "keys"), 0);
	ck_assert_str_eq(th_json_str(jwk, "kid"), "card-2026 \"12\"");
	ck_assert_str_eq(th_json_str(jwk, "kty"), "EC");
	ck_assert_str_eq(th_json_str(jwk, "alg"), "ES256");
	ck_assert_ptr_null(th_json_get(jwk, "d")); /* never the private part */
	json_object_put(set);
	free(jwks);
	free(text);
	EVP_PKEY_free(k);
}
END_TEST

/* The key is read once: removed after the first card, the next card is still signed.
 * The ETag stays with the content: another signature of the same card (a kid change and
 * back makes one; ES256 signatures differ each time) keeps the tag; another kid moves
 * it. */
START_TEST(test_card_sig3_key_read_once_and_etag_follows_content)
{
	char path[128], *t1 = NULL, *t2 = NULL, *t3 = NULL, e1[TH_CARD_ETAG_MAX],
	                e2[TH_CARD_ETAG_MAX], e3[TH_CARD_ETAG_MAX];
	EVP_PKEY *k = write_key("EC", 256, "once.pem", 0, path, sizeof path);
	cfg.card_signing_key = path;
	struct th_error e;
	ck_assert_int_eq(serve(&t1, e1, NULL, 0, &e), TH_OK);
	ck_assert_int_eq(unlink(path), 0);
	cfg.card_signing_kid = kid_other;
	ck_assert_msg(serve(&t2, e2, NULL, 0, &e) == TH_OK, "the key was read again: %s", e.msg);
	cfg.card_signing_kid = NULL;
	ck_assert_int_eq(serve(&t3, e3, NULL, 0, &e), TH_OK);
	ck_assert_str_ne(e1, e2);
	ck_assert_str_eq(e1, e3);
	ck_assert_str_ne(t1, t3); /* a new ES256 signature of the same card */
	json_object_put(verify(t3, k));
	free(t1);
	free(t2);
	free(t3);
	EVP_PKEY_free(k);
}
END_TEST

/* Each unusable key file: serving fails with TH_EINTERNAL and a message without the
 * path; the cause names the path and the trouble. */
static void refused(char *path, const char *words)
{
	char *text = NULL, etag[TH_CARD_ETAG_MAX], cause[TH_ERRMSG_MAX] = "";
	struct th_error e;
	cfg.card_signing_key = path;
	ck_assert_int_eq(serve(&text, etag, cause, sizeof cause, &e), TH_EINTERNAL);
	ck_assert_ptr_null(text);
	ck_assert_ptr_null(strstr(e.msg, dir));
	ck_assert_ptr_nonnull(strstr(e.msg, "signing key"));
	ck_assert_msg(strstr(cause, path) != NULL && strstr(cause, words) != NULL,
	              "cause '%s' should name %s and say '%s'", cause, path, words);
}

START_TEST(test_card_sig4_bad_key_files_named)
{
	char path[128], p2[160];
	snprintf(p2, sizeof p2, "%s/missing.pem", dir);
	refused(p2, "no such file");
	refused(dir, "not a regular file");
	snprintf(p2, sizeof p2, "%s/empty.pem", dir);
	fclose(fopen(p2, "w"));
	refused(p2, "empty");
	snprintf(p2, sizeof p2, "%s/junk.pem", dir);
	FILE *f = fopen(p2, "w");
	fputs("not a key\n", f);
	fclose(f);
	refused(p2, "holds no PEM private key");
	EVP_PKEY_free(write_key("EC", 256, "pub.pem", 2, path, sizeof path));
	refused(path, "holds a public key");
	EVP_PKEY_free(write_key("EC", 256, "enc.pem", 1, path, sizeof path));
	refused(path, "encrypted");
	EVP_PKEY_free(write_key("EC", 384, "p384.pem", 0, path, sizeof path));
	refused(path, "only P-256");
	EVP_PKEY_free(write_key("RSA", 1024, "rsa1024.pem", 0, path, sizeof path));
	refused(path, "at least 2048");
	if (geteuid() != 0) { /* root reads a 0000 file */
		EVP_PKEY_free(write_key("EC", 256, "noread.pem", 0, path, sizeof path));
		chmod(path, 0);
		refused(path, "Permission denied");
	}
	struct th_error e;
	ck_assert_ptr_null(th_card_jwks(&cfg, &e));
}
END_TEST

static Suite *cardsig_suite(void)
{
	Suite *s = suite_create("cardsig");
	TCase *tc = tcase_create("sign");
	tcase_set_timeout(tc, 60);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_card_sig1_es256_round_trip);
	tcase_add_test(tc, test_card_sig1_rs256_round_trip);
	tcase_add_test(tc, test_card_sig1_eddsa_round_trip);
	tcase_add_test(tc, test_card_sig1_unset_key_leaves_card_unsigned);
	tcase_add_test(tc, test_card_sig2_configured_kid_and_jku);
	tcase_add_test(tc, test_card_sig3_key_read_once_and_etag_follows_content);
	tcase_add_test(tc, test_card_sig4_bad_key_files_named);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(cardsig_suite());
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
