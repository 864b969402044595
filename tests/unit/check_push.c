/* SPDX-License-Identifier: Apache-2.0 */
/* check_push.c — push notifications: callback URL checks (PUSH-3), sealed secrets
 * (PUSH-4), the decoders of the config requests (a2a/push.c), the four config operations
 * (ops/pushcfg.c) through th_service_call on a real store with participant scoping
 * (PUSH-1, ID-3, ID-4), and delivery to a webhook receiver this test
 * forks on 127.0.0.1 (PUSH-2): order, headers, retry, dead, expired claims, the re-check
 * of the URL at delivery. Every refusal checks the code, the words, and that nothing
 * was stored. */
#include <arpa/inet.h>
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "a2a/a2a.h"
#include "config/settings.h"
#include "domain/events.h"
#include "harness_fixture.h"
#include "push/push.h"
#include "push/push_int.h"
#include "store/store.h"
#include "util/ids.h"
#include "util/jsonx.h"

#define KEY_HEX "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f"
#define KEY2_HEX "ff0102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f"
#define PUBLIC_URL "http://93.184.216.34/hook"

static struct th_app app;
static struct th_error err;
static char task[128];

/* ---- PUSH-3: callback URLs ------------------------------------------------------------- */

static void refused(const char *url, int allow, const char *words)
{
	struct th_error e;
	th_error_clear(&e);
	struct th_push_target t;
	th_err rc = th_push_url_check(url, allow, &t, &e);
	ck_assert_msg(rc == TH_EINVAL, "PUSH-3 %s (allow=%d) should be refused, got %s", url, allow,
	              th_err_name(rc));
	ck_assert_msg(strncmp(e.msg, "url", 3) == 0, "PUSH-3 error should name the field: %s",
	              e.msg);
	ck_assert_msg(strstr(e.msg, words) != NULL, "PUSH-3 %s: expected '%s' in: %s", url, words,
	              e.msg);
	ck_assert_ptr_null(t.host);
	ck_assert_ptr_null(t.resolve);
}

static void accepted(const char *url, int allow, const char *host, long port)
{
	struct th_error e;
	th_error_clear(&e);
	struct th_push_target t;
	th_err rc = th_push_url_check(url, allow, &t, &e);
	ck_assert_msg(rc == TH_OK, "PUSH-3 %s (allow=%d) should be accepted: %s", url, allow,
	              e.msg);
	ck_assert_str_eq(t.host, host);
	ck_assert_int_eq(t.port, port);
	th_push_target_free(&t);
}

START_TEST(test_push3_urls_refused_with_the_reason)
{
	refused("", 0, "url is required");
	refused("ftp://93.184.216.34/x", 1, "scheme ftp is not allowed");
	refused("file:///etc/passwd", 1, "scheme file");
	refused("gopher://93.184.216.34/", 1, "scheme gopher");
	refused("93.184.216.34/hook", 1, "not an absolute");
	refused("//93.184.216.34/hook", 1, "not an absolute");
	refused("http://user:pw@93.184.216.34/", 1, "user name or password");
	refused("http://user@93.184.216.34/", 1, "user name or password");
	refused("http://:pw@93.184.216.34/", 1, "user name or password");
	refused("http:///hook", 1, "url 'http:///hook'");
	refused("http://93.184.216.34/a b", 1, "space");
	refused("http://93.184.216.34/a\r\nX: y", 1, "control character");
	refused("http://exa\xc3\xa9mple.com/", 1, "non-ASCII");
	char long_url[TH_PUSH_URL_MAX + 40];
	memset(long_url, 'a', sizeof long_url - 1);
	long_url[sizeof long_url - 1] = '\0';
	memcpy(long_url, "http://93.184.216.34/", 21);
	refused(long_url, 1, "bytes long");
	/* loopback, private, link-local, shared: refused unless allowed, naming the key */
	refused("http://127.0.0.1:8080/", 0, "loopback");
	refused("http://127.0.0.1:8080/", 0, "push_allow_private");
	refused("http://127.9.9.9/", 0, "loopback");
	refused("http://localhost:8080/hook", 0, "loopback");
	refused("http://2130706433/", 0, "loopback");
	refused("http://0x7f.1/", 0, "loopback");
	refused("http://10.1.2.3/", 0, "a private address");
	refused("http://172.16.0.1/", 0, "a private address");
	refused("http://172.31.255.255/", 0, "a private address");
	refused("http://192.168.1.1/", 0, "a private address");
	refused("http://169.254.169.254/latest/meta-data/", 0, "cloud metadata");
	refused("http://100.64.0.1/", 0, "shared");
	refused("http://[::1]:9000/", 0, "loopback");
	refused("http://[fe80::1]/", 0, "link-local");
	refused("http://[fc00::1]/", 0, "unique local");
	refused("http://[fd12:3456::1]/", 0, "unique local");
	refused("http://[::ffff:127.0.0.1]/", 0, "loopback");
	refused("http://[::ffff:10.0.0.1]/", 0, "a private address");
	refused("http://[64:ff9b::a00:1]/", 0, "a private address");
	refused("http://[2002:7f00:1::]/", 0, "loopback");
	/* never a webhook, whatever the configuration */
	refused("http://0.0.0.0:8080/", 1, "unspecified");
	refused("http://[::]:8080/", 1, "unspecified");
	refused("http://224.0.0.1/", 1, "multicast");
	refused("http://[ff02::1]/", 1, "multicast");
	refused("http://255.255.255.255/", 1, "broadcast");
	refused("http://[::ffff:0.0.0.0]/", 1, "unspecified");
	/* and the message says no switch helps */
	struct th_error e;
	th_error_clear(&e);
	ck_assert_int_eq(th_push_url_check("http://0.0.0.0/", 0, NULL, &e), TH_EINVAL);
	ck_assert_ptr_null(strstr(e.msg, "push_allow_private"));
	refused("http://[fe80::1%25eth0]/", 1, "zone");
	refused("http://no-such-host.invalid/hook", 1, "does not resolve");
	struct th_push_target t;
	ck_assert_int_eq(th_push_url_check("http://no-such-host.invalid/", 1, &t, &e), TH_EINVAL);
	ck_assert_msg(t.transient, "PUSH-2 a name that does not resolve may resolve later");
	ck_assert_int_eq(th_push_url_check("http://127.0.0.1/", 0, &t, &e), TH_EINVAL);
	ck_assert_msg(!t.transient, "PUSH-3 a refused address is final");
}
END_TEST

START_TEST(test_push3_urls_accepted)
{
	accepted(PUBLIC_URL, 0, "93.184.216.34", 80);
	accepted("https://93.184.216.34:8443/a/b?c=d#e", 0, "93.184.216.34", 8443);
	accepted("HTTPS://93.184.216.34/", 0, "93.184.216.34", 443);
	accepted("http://[2606:4700:4700::1111]/x", 0, "[2606:4700:4700::1111]", 80);
	accepted("http://8.8.8.8/", 0, "8.8.8.8", 80);
	/* push_allow_private = 1: loopback, private and link-local targets pass */
	accepted("http://127.0.0.1:9/", 1, "127.0.0.1", 9);
	accepted("http://[::1]:8080/h", 1, "[::1]", 8080);
	accepted("http://10.0.0.1/", 1, "10.0.0.1", 80);
	accepted("http://169.254.1.1/", 1, "169.254.1.1", 80);
	/* A name is pinned to the addresses that were checked (CURLOPT_RESOLVE). */
	struct th_error e;
	th_error_clear(&e);
	struct th_push_target t;
	ck_assert_int_eq(th_push_url_check("http://localhost:8080/x", 1, &t, &e), TH_OK);
	ck_assert_ptr_nonnull(t.resolve);
	ck_assert_msg(strncmp(t.resolve, "localhost:8080:", 15) == 0, "pin: %s", t.resolve);
	ck_assert_msg(strstr(t.resolve, "127.0.0.1") != NULL || strstr(t.resolve, "[::1]") != NULL,
	              "pin: %s", t.resolve);
	th_push_target_free(&t);
	ck_assert_int_eq(th_push_url_check(PUBLIC_URL, 0, &t, &e), TH_OK);
	ck_assert_ptr_null(t.resolve); /* a literal needs no pin */
	th_push_target_free(&t);
}
END_TEST

START_TEST(test_push3_address_classes)
{
	struct sockaddr_in in = {.sin_family = AF_INET};
	struct sockaddr_in6 in6 = {.sin6_family = AF_INET6};
	const struct {
		const char *addr;
		int allow;
		const char *words; /* NULL: accepted */
	} cases[] = {
	    {"93.184.216.34", 0, NULL},     {"1.1.1.1", 0, NULL},
	    {"127.0.0.1", 0, "loopback"},   {"127.0.0.1", 1, NULL},
	    {"10.255.0.1", 0, "private"},   {"172.15.0.1", 0, NULL},
	    {"172.32.0.1", 0, NULL},        {"192.169.0.1", 0, NULL},
	    {"169.254.0.1", 1, NULL},       {"100.128.0.1", 0, NULL},
	    {"198.18.0.1", 0, "benchmark"}, {"240.0.0.1", 0, "reserved"},
	    {"0.1.2.3", 1, "unspecified"},  {"239.255.255.250", 1, "multicast"},
	    {"2606:4700::1", 0, NULL},      {"::1", 1, NULL},
	    {"fe80::1", 1, NULL},           {"febf::1", 0, "link-local"},
	    {"fec0::1", 0, "site-local"},   {"2001:db8::1", 0, "documentation"},
	    {"::ffff:8.8.8.8", 0, NULL},    {"2001:0:4136:e378:8000:63bf:80ff:fffe", 0, "loopback"},
	    {"ff05::2", 1, "multicast"},    {"::", 1, "unspecified"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		const char *why;
		if (inet_pton(AF_INET, cases[i].addr, &in.sin_addr) == 1) {
			why = th_push_addr_refusal((const struct sockaddr *)&in, cases[i].allow);
		} else {
			ck_assert_int_eq(inet_pton(AF_INET6, cases[i].addr, &in6.sin6_addr), 1);
			why = th_push_addr_refusal((const struct sockaddr *)&in6, cases[i].allow);
		}
		if (cases[i].words == NULL)
			ck_assert_msg(why == NULL, "PUSH-3 %s (allow=%d) refused: %s",
			              cases[i].addr, cases[i].allow, why);
		else
			ck_assert_msg(why != NULL && strstr(why, cases[i].words) != NULL,
			              "PUSH-3 %s (allow=%d): expected %s, got %s", cases[i].addr,
			              cases[i].allow, cases[i].words, why ? why : "accepted");
	}
}
END_TEST

/* SEC-6: push_allow_private opens the LAN and loopback, never a cloud's metadata
 * service nor the rest of the IANA special-purpose registry. */
START_TEST(test_sec6_metadata_and_special_purpose_refused_with_private_allowed)
{
	refused("http://168.63.129.16/machine", 1, "cloud metadata");
	refused("http://169.254.169.254/latest/meta-data/", 1, "cloud metadata");
	refused("http://169.254.170.2/v2/credentials", 1, "cloud metadata");
	refused("http://100.100.100.200/latest/meta-data/", 1, "cloud metadata");
	refused("http://[fd00:ec2::254]/latest/meta-data/", 1, "cloud metadata");
	refused("http://[::ffff:169.254.169.254]/", 1, "cloud metadata");
	refused("http://192.0.0.8/", 1, "special-purpose");
	refused("http://192.0.2.1/", 1, "documentation");
	refused("http://198.18.0.1/", 1, "benchmarking");
	refused("http://240.0.0.1/", 1, "reserved");
	refused("http://[2001:db8::1]/", 1, "documentation");
	refused("http://[2001:2::1]/", 1, "special-purpose");
	refused("http://[100::1]/", 1, "discard");
	/* and the message does not point at push_allow_private, which cannot help */
	struct th_error e;
	th_error_clear(&e);
	ck_assert_int_eq(th_push_url_check("http://168.63.129.16/", 0, NULL, &e), TH_EINVAL);
	ck_assert_ptr_null(strstr(e.msg, "push_allow_private"));
	/* what stays open with the switch */
	accepted("http://169.254.1.1/", 1, "169.254.1.1", 80);
	accepted("http://100.64.0.1/", 1, "100.64.0.1", 80);
	accepted("http://[fd12:3456::1]/", 1, "[fd12:3456::1]", 80);
}
END_TEST

/* SEC-6: a URL as logs and last_error show it keeps no credentials or query values. */
START_TEST(test_sec6_url_redacted)
{
	char out[124];
	th_push_url_redact("https://user:s3cret@hook.example:8443/p/a?token=abc&x=1&flag#frag", out,
	                   sizeof out);
	ck_assert_str_eq(out, "https://***@hook.example:8443/p/a?token=***&x=***&flag");
	th_push_url_redact("http://hook.example/plain", out, sizeof out);
	ck_assert_str_eq(out, "http://hook.example/plain");
	th_push_url_redact("http://a@b@hook.example/?k=", out, sizeof out);
	ck_assert_str_eq(out, "http://***@hook.example/?k=***");
	char small[16];
	th_push_url_redact("http://hook.example/a/long/path", small, sizeof small);
	ck_assert_str_eq(small, "http://hook....");
	/* a refusal message quotes the redacted URL */
	struct th_error e;
	th_error_clear(&e);
	ck_assert_int_eq(th_push_url_check("http://u:pw@8.8.8.8/?token=zzsecret", 0, NULL, &e),
	                 TH_EINVAL);
	ck_assert_ptr_null(strstr(e.msg, "pw"));
	ck_assert_ptr_null(strstr(e.msg, "zzsecret"));
}
END_TEST

/* ---- PUSH-4: secrets ------------------------------------------------------------------------- */

static void key_of(const char *hex, unsigned char key[TH_PUSH_KEY_LEN])
{
	setenv(TH_PUSH_KEY_ENV, hex, 1);
	struct th_error e;
	th_error_clear(&e);
	ck_assert_int_eq(th_push_key(key, &e), TH_OK);
}

static int opens(const unsigned char *key, const char *field, const char *t, const char *c,
                 const unsigned char *blob, size_t n, const char *want)
{
	char *plain = NULL;
	struct th_error e;
	th_error_clear(&e);
	th_err rc = th_push_unseal(key, field, t, c, blob, n, &plain, &e);
	int ok = rc == TH_OK && strcmp(plain, want) == 0;
	if (rc != TH_OK) {
		ck_assert_ptr_null(plain);
		ck_assert_msg(strstr(e.msg, "cannot decrypt") != NULL, "%s", e.msg);
	}
	th_push_secret_free(plain);
	return ok;
}

START_TEST(test_push4_secret_round_trip_and_tamper_detection)
{
	unsigned char key[TH_PUSH_KEY_LEN], key2[TH_PUSH_KEY_LEN];
	key_of(KEY2_HEX, key2);
	key_of(KEY_HEX, key);
	const char *secret = "s3cret-token-value";
	unsigned char *blob = NULL, *blob2 = NULL;
	size_t n = 0, n2 = 0;
	struct th_error e;
	th_error_clear(&e);
	ck_assert_int_eq(th_push_seal(key, "token", "t1", "c1", secret, &blob, &n, &e), TH_OK);
	ck_assert_int_eq(th_push_seal(key, "token", "t1", "c1", secret, &blob2, &n2, &e), TH_OK);
	ck_assert_uint_eq(n, 3 + 12 + strlen(secret) + 16);
	ck_assert(memcmp(blob, "th1", 3) == 0);
	ck_assert_msg(memmem(blob, n, secret, strlen(secret)) == NULL, "PUSH-4 plaintext in blob");
	ck_assert_msg(memcmp(blob, blob2, n) != 0, "PUSH-4 each seal has its own nonce");
	ck_assert_msg(opens(key, "token", "t1", "c1", blob, n, secret), "PUSH-4 round trip");
	ck_assert(opens(key, "token", "t1", "c1", blob2, n2, secret));
	/* Any changed byte — magic, nonce, ciphertext, tag — is detected. */
	for (size_t i = 0; i < n; i++) {
		blob[i] ^= 0x01;
		ck_assert_msg(!opens(key, "token", "t1", "c1", blob, n, secret),
		              "PUSH-4 a flipped bit at byte %zu went unnoticed", i);
		blob[i] ^= 0x01;
	}
	ck_assert(!opens(key, "token", "t1", "c1", blob, n - 1, secret)); /* truncated */
	ck_assert(!opens(key, "token", "t1", "c1", blob, 10, secret));
	/* Bound to its place: another field, task or config does not open it. */
	ck_assert(!opens(key, "credentials", "t1", "c1", blob, n, secret));
	ck_assert(!opens(key, "token", "t2", "c1", blob, n, secret));
	ck_assert(!opens(key, "token", "t1", "c2", blob, n, secret));
	ck_assert(!opens(key2, "token", "t1", "c1", blob, n, secret));
	/* An empty secret round-trips too. */
	free(blob);
	ck_assert_int_eq(th_push_seal(key, "credentials", "t", "c", "", &blob, &n, &e), TH_OK);
	ck_assert(opens(key, "credentials", "t", "c", blob, n, ""));
	free(blob);
	free(blob2);
}
END_TEST

START_TEST(test_push4_key_from_the_environment)
{
	unsigned char key[TH_PUSH_KEY_LEN];
	struct th_error e;
	th_error_clear(&e);
	unsetenv(TH_PUSH_KEY_ENV);
	ck_assert_int_eq(th_push_key(key, &e), TH_EUNSUPPORTED);
	ck_assert_ptr_nonnull(strstr(e.msg, "TINY_HARNESS_PUSH_KEY"));
	setenv(TH_PUSH_KEY_ENV, "", 1);
	ck_assert_int_eq(th_push_key(key, &e), TH_EUNSUPPORTED);
	const char *bad[] = {"abc", KEY_HEX "00",
	                     "zz0102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f"};
	for (size_t i = 0; i < 3; i++) {
		setenv(TH_PUSH_KEY_ENV, bad[i], 1);
		ck_assert_int_eq(th_push_key(key, &e), TH_EINTERNAL);
		ck_assert_ptr_nonnull(strstr(e.msg, "64 hexadecimal digits"));
		ck_assert_msg(strstr(e.msg, bad[i]) == NULL, "PUSH-4 the key is never echoed");
	}
	setenv(TH_PUSH_KEY_ENV, "000102030405060708090A0B0C0D0E0F101112131415161718191A1B1C1D1E1F",
	       1);
	ck_assert_int_eq(th_push_key(key, &e), TH_OK);
	ck_assert_int_eq(key[0], 0);
	ck_assert_int_eq(key[31], 0x1f);
}
END_TEST

/* ---- PUSH-1: the requests, decoded in a2a/ ------------------------------------------------- */

static json_object *parse(const char *text)
{
	json_object *o = json_tokener_parse(text);
	ck_assert_msg(o != NULL, "bad test JSON: %s", text);
	return o;
}

START_TEST(test_push1_create_request_decoded_with_its_params_held)
{
	struct th_limits lim = {.max_id = 8};
	struct th_push_create_req r;
	struct th_error e;
	th_error_clear(&e);
	json_object *p = parse("{\"task_id\":\"t1\",\"id\":\"\",\"url\":\"" PUBLIC_URL "\","
	                       "\"token\":\"tok\",\"authentication\":{\"scheme\":\"Bearer\","
	                       "\"credentials\":\"cred\"}}");
	ck_assert_int_eq(th_a2a_push_create_decode(p, &lim, &r, &e), TH_OK);
	json_object_put(p); /* the request holds its own reference */
	ck_assert_str_eq(r.task_id, "t1");
	ck_assert_ptr_null(r.id); /* "" is absent: the server names the config */
	ck_assert_str_eq(r.url, PUBLIC_URL);
	ck_assert_str_eq(r.token, "tok");
	ck_assert_str_eq(r.scheme, "Bearer");
	ck_assert_str_eq(r.credentials, "cred");
	th_push_create_req_free(&r);
	ck_assert_ptr_null(r.params);

	/* taskId is required for Create, optional inline; a refusal leaves nothing held. */
	p = parse("{\"url\":\"" PUBLIC_URL "\"}");
	ck_assert_int_eq(th_a2a_push_create_decode(p, &lim, &r, &e), TH_EINVAL);
	ck_assert_ptr_nonnull(strstr(e.msg, "taskId is required"));
	ck_assert_ptr_null(r.params);
	ck_assert_int_eq(th_a2a_push_inline_decode(p, &lim, &r, &e), TH_OK);
	ck_assert_ptr_null(r.task_id);
	th_push_create_req_free(&r);
	json_object_put(p);

	/* ids are capped by lim->max_id */
	p = parse("{\"taskId\":\"t1\",\"id\":\"123456789\",\"url\":\"" PUBLIC_URL "\"}");
	ck_assert_int_eq(th_a2a_push_create_decode(p, &lim, &r, &e), TH_EINVAL);
	ck_assert_str_eq(e.msg, "id is 9 bytes long; at most 8 are accepted");
	json_object_put(p);
	ck_assert_int_eq(th_a2a_push_create_decode(NULL, &lim, &r, &e), TH_EINVAL);
	ck_assert_str_eq(e.msg, "params must be an object");
}
END_TEST

START_TEST(test_push1_get_and_list_requests_decoded)
{
	struct th_limits lim = {.max_id = 64};
	struct th_push_get_req g;
	struct th_push_list_req l;
	struct th_error e;
	th_error_clear(&e);
	json_object *p = parse("{\"taskId\":\"t1\"}");
	ck_assert_int_eq(th_a2a_push_get_decode(p, &lim, &g, &e), TH_EINVAL);
	ck_assert_str_eq(e.msg, "id is required: the push notification config's id");
	ck_assert_int_eq(th_a2a_push_list_decode(p, &lim, &l, &e), TH_OK);
	ck_assert_str_eq(l.task_id, "t1");
	ck_assert_int_eq(l.page_size, 50);
	ck_assert_ptr_null(l.page_token);
	th_push_list_req_free(&l);
	json_object_put(p);

	p = parse("{\"task_id\":\"t1\",\"id\":\"c1\"}");
	ck_assert_int_eq(th_a2a_push_get_decode(p, &lim, &g, &e), TH_OK);
	json_object_put(p);
	ck_assert_str_eq(g.task_id, "t1");
	ck_assert_str_eq(g.id, "c1");
	th_push_get_req_free(&g);

	/* pageSize: a number or decimal text (REST), 0 meaning the default */
	const char *sizes[] = {"0", "\"7\"", "2.0", "100"};
	const int want[] = {50, 7, 2, 100};
	for (size_t i = 0; i < 4; i++) {
		char text[128];
		snprintf(text, sizeof text,
		         "{\"taskId\":\"t\",\"pageSize\":%s,\"pageToken\":\"p2\"}", sizes[i]);
		p = parse(text);
		ck_assert_int_eq(th_a2a_push_list_decode(p, &lim, &l, &e), TH_OK);
		json_object_put(p);
		ck_assert_int_eq(l.page_size, want[i]);
		ck_assert_str_eq(l.page_token, "p2");
		th_push_list_req_free(&l);
	}
	const char *bad[] = {"101", "-1", "2.5", "true", "\"\"", "\"3x\""};
	for (size_t i = 0; i < 6; i++) {
		char text[128];
		snprintf(text, sizeof text, "{\"taskId\":\"t\",\"pageSize\":%s}", bad[i]);
		p = parse(text);
		ck_assert_int_eq(th_a2a_push_list_decode(p, &lim, &l, &e), TH_EINVAL);
		ck_assert_str_eq(e.msg, "pageSize must be a whole number from 1 to 100");
		ck_assert_ptr_null(l.params);
		json_object_put(p);
	}
}
END_TEST

/* ---- PUSH-1: the operations ------------------------------------------------------------------ */

static void allow_private(struct th_config *c)
{
	c->push_allow_private = 1;
	c->push_retry_base_ms = 20;
	c->push_retry_max_ms = 40;
	c->push_max_attempts = 3;
	c->push_timeout_ms = 2000;
}

static void two_configs_max(struct th_config *c)
{
	c->push_max_configs = 2;
}

static void open_with(void (*tweak)(struct th_config *))
{
	setenv(TH_PUSH_KEY_ENV, KEY_HEX, 1);
	fx_open(&app, tweak);
	json_object *t = fx_send_text(&app, "alice", NULL, "m1", "hello", &err);
	ck_assert_msg(t != NULL, "%s", err.msg);
	snprintf(task, sizeof task, "%s", fx_task_id(t));
	json_object_put(t);
	fx_add_participant(&app, task, "bob", "admin");
	fx_add_participant(&app, task, "wendy", "watcher");
}

static void setup(void)
{
	open_with(NULL);
}

static void teardown(void)
{
	fx_close(&app);
}

static json_object *create(const char *who, const char *fields)
{
	return fx_call(&app, who, TH_OP_CREATE_PUSH_CONFIG, &err, "{\"taskId\":\"%s\",%s}", task,
	               fields);
}

static json_object *get_cfg(const char *who, const char *id)
{
	return fx_call(&app, who, TH_OP_GET_PUSH_CONFIG, &err, "{\"taskId\":\"%s\",\"id\":\"%s\"}",
	               task, id);
}

static json_object *list_cfg(const char *who, const char *extra)
{
	return fx_call(&app, who, TH_OP_LIST_PUSH_CONFIGS, &err, "{\"taskId\":\"%s\"%s}", task,
	               extra);
}

static th_err delete_cfg(const char *who, const char *id)
{
	json_object *r = fx_call(&app, who, TH_OP_DELETE_PUSH_CONFIG, &err,
	                         "{\"taskId\":\"%s\",\"id\":\"%s\"}", task, id);
	ck_assert_ptr_null(r); /* Delete answers no result (null / {}) */
	return err.code;
}

static size_t list_len(json_object *l)
{
	return json_object_array_length(json_object_object_get(l, "configs"));
}

START_TEST(test_push1_create_get_list_delete)
{
	json_object *c = create("alice", "\"id\":\"c1\",\"url\":\"" PUBLIC_URL "\"");
	ck_assert_msg(c != NULL, "PUSH-1 create: %s", err.msg);
	ck_assert_str_eq(th_json_str(c, "taskId"), task);
	ck_assert_str_eq(th_json_str(c, "id"), "c1");
	ck_assert_str_eq(th_json_str(c, "url"), PUBLIC_URL);
	json_object_put(c);
	/* The server assigns an id (a UUID) when none is given; snake_case accepted. */
	c = fx_call(&app, "alice", TH_OP_CREATE_PUSH_CONFIG, &err,
	            "{\"task_id\":\"%s\",\"id\":\"\",\"url\":\"https://93.184.216.34/b\"}", task);
	ck_assert_msg(c != NULL, "PUSH-1 create without id: %s", err.msg);
	char id2[64];
	snprintf(id2, sizeof id2, "%s", th_json_str(c, "id"));
	ck_assert_uint_eq(strlen(id2), TH_UUID_LEN);
	json_object_put(c);
	ck_assert_int_eq(fx_count(&app, "push_configs"), 2);

	c = get_cfg("alice", "c1");
	ck_assert_msg(c != NULL, "PUSH-1 get: %s", err.msg);
	ck_assert_str_eq(th_json_str(c, "url"), PUBLIC_URL);
	json_object_put(c);

	json_object *l = list_cfg("alice", "");
	ck_assert_ptr_nonnull(l);
	ck_assert_uint_eq(list_len(l), 2);
	ck_assert_str_eq(th_json_str(l, "nextPageToken"), "");
	ck_assert_str_eq(
	    th_json_str(json_object_array_get_idx(json_object_object_get(l, "configs"), 0), "id"),
	    "c1");
	json_object_put(l);

	/* Creating again with the same id replaces the owner's own config. */
	c = create("alice", "\"id\":\"c1\",\"url\":\"http://93.184.216.34/new\"");
	ck_assert_ptr_nonnull(c);
	json_object_put(c);
	c = get_cfg("alice", "c1");
	ck_assert_str_eq(th_json_str(c, "url"), "http://93.184.216.34/new");
	json_object_put(c);
	ck_assert_int_eq(fx_count(&app, "push_configs"), 2);

	ck_assert_int_eq(delete_cfg("alice", "c1"), TH_OK);
	ck_assert_int_eq(fx_count(&app, "push_configs"), 1);
	ck_assert_ptr_null(get_cfg("alice", "c1"));
	ck_assert_int_eq(err.code, TH_ENOTFOUND);
	ck_assert_ptr_nonnull(strstr(err.msg, "c1"));
	ck_assert_str_eq(err.task_id, task);
	/* Delete is idempotent (A2A §3.7). */
	ck_assert_int_eq(delete_cfg("alice", "c1"), TH_OK);
	ck_assert_int_eq(delete_cfg("alice", id2), TH_OK);
	ck_assert_int_eq(fx_count(&app, "push_configs"), 0);
}
END_TEST

START_TEST(test_push1_list_pages)
{
	for (int i = 0; i < 3; i++) {
		char f[128];
		snprintf(f, sizeof f, "\"id\":\"p%d\",\"url\":\"" PUBLIC_URL "\"", i);
		json_object *c = create("alice", f);
		ck_assert_msg(c != NULL, "%s", err.msg);
		json_object_put(c);
	}
	json_object *l = list_cfg("alice", ",\"pageSize\":2");
	ck_assert_uint_eq(list_len(l), 2);
	char next[64];
	snprintf(next, sizeof next, "%s", th_json_str(l, "nextPageToken"));
	ck_assert_str_ne(next, "");
	json_object_put(l);
	char extra[128];
	snprintf(extra, sizeof extra, ",\"page_size\":\"2\",\"pageToken\":\"%s\"", next);
	l = list_cfg("alice", extra);
	ck_assert_msg(l != NULL, "%s", err.msg);
	ck_assert_uint_eq(list_len(l), 1);
	ck_assert_str_eq(
	    th_json_str(json_object_array_get_idx(json_object_object_get(l, "configs"), 0), "id"),
	    "p2");
	ck_assert_str_eq(th_json_str(l, "nextPageToken"), "");
	json_object_put(l);
	ck_assert_ptr_null(list_cfg("alice", ",\"pageToken\":\"garbage\""));
	ck_assert_int_eq(err.code, TH_EINVAL);
	ck_assert_ptr_nonnull(strstr(err.msg, "pageToken"));
	ck_assert_ptr_null(list_cfg("alice", ",\"pageSize\":101"));
	ck_assert_ptr_nonnull(strstr(err.msg, "pageSize"));
	ck_assert_ptr_null(list_cfg("alice", ",\"pageSize\":-1"));
	ck_assert_int_eq(err.code, TH_EINVAL);
}
END_TEST

/* ID-3: a stranger and an unknown task get the one TaskNotFound of GetTask. */
START_TEST(test_push1_stranger_and_unknown_task_are_not_found)
{
	json_object *c = create("alice", "\"id\":\"c1\",\"url\":\"" PUBLIC_URL "\"");
	json_object_put(c);
	ck_assert_ptr_null(fx_call(&app, "mallory", TH_OP_GET_TASK, &err, "{\"id\":\"%s\"}", task));
	char want[TH_ERRMSG_MAX];
	snprintf(want, sizeof want, "%s", err.msg);
	ck_assert_ptr_null(create("mallory", "\"url\":\"" PUBLIC_URL "\""));
	ck_assert_int_eq(err.code, TH_ENOTFOUND);
	ck_assert_str_eq(err.msg, want);
	ck_assert_ptr_null(get_cfg("mallory", "c1"));
	ck_assert_int_eq(err.code, TH_ENOTFOUND);
	ck_assert_str_eq(err.msg, want);
	ck_assert_ptr_null(list_cfg("mallory", ""));
	ck_assert_int_eq(err.code, TH_ENOTFOUND);
	ck_assert_str_eq(err.msg, want);
	ck_assert_int_eq(delete_cfg("mallory", "c1"), TH_ENOTFOUND);
	ck_assert_str_eq(err.msg, want);
	/* A stranger learns nothing about the URL either: not-found comes first. */
	ck_assert_ptr_null(create("mallory", "\"url\":\"http://127.0.0.1/\""));
	ck_assert_str_eq(err.msg, want);
	ck_assert_int_eq(fx_count(&app, "push_configs"), 1);

	ck_assert_ptr_null(fx_call(&app, "alice", TH_OP_GET_TASK, &err, "{\"id\":\"nope\"}"));
	snprintf(want, sizeof want, "%s", err.msg);
	ck_assert_ptr_null(fx_call(&app, "alice", TH_OP_CREATE_PUSH_CONFIG, &err,
	                           "{\"taskId\":\"nope\",\"url\":\"" PUBLIC_URL "\"}"));
	ck_assert_int_eq(err.code, TH_ENOTFOUND);
	ck_assert_str_eq(err.msg, want);
	ck_assert_ptr_null(
	    fx_call(&app, "alice", TH_OP_LIST_PUSH_CONFIGS, &err, "{\"taskId\":\"nope\"}"));
	ck_assert_str_eq(err.msg, want);
	/* No participant at all: said before anything about the params. */
	ck_assert_ptr_null(create(NULL, "\"url\":\"" PUBLIC_URL "\""));
	ck_assert_int_eq(err.code, TH_EINVAL);
	ck_assert_ptr_nonnull(strstr(err.msg, "no participant asserted"));
	const enum th_op ops[] = {TH_OP_CREATE_PUSH_CONFIG, TH_OP_GET_PUSH_CONFIG,
	                          TH_OP_LIST_PUSH_CONFIGS, TH_OP_DELETE_PUSH_CONFIG};
	for (size_t i = 0; i < 4; i++) {
		ck_assert_ptr_null(fx_call(&app, "", ops[i], &err, "{\"taskId\":7}"));
		ck_assert_ptr_nonnull(strstr(err.msg, "no participant asserted"));
	}
	ck_assert_int_eq(fx_count(&app, "push_configs"), 1);
}
END_TEST

START_TEST(test_push1_configs_belong_to_their_participant)
{
	json_object *c = create("alice", "\"id\":\"c1\",\"url\":\"" PUBLIC_URL "\"");
	json_object_put(c);
	ck_assert_ptr_null(get_cfg("bob", "c1"));
	ck_assert_int_eq(err.code, TH_ENOTFOUND);
	json_object *l = list_cfg("bob", "");
	ck_assert_ptr_nonnull(l);
	ck_assert_uint_eq(list_len(l), 0);
	json_object_put(l);
	/* bob's delete of alice's id changes nothing (and answers like a deleted one) */
	ck_assert_int_eq(delete_cfg("bob", "c1"), TH_OK);
	ck_assert_int_eq(fx_count(&app, "push_configs"), 1);
	/* nor can bob take the id over */
	ck_assert_ptr_null(create("bob", "\"id\":\"c1\",\"url\":\"http://93.184.216.34/bob\""));
	ck_assert_int_eq(err.code, TH_EINVAL);
	ck_assert_ptr_nonnull(strstr(err.msg, "already used"));
	c = get_cfg("alice", "c1");
	ck_assert_str_eq(th_json_str(c, "url"), PUBLIC_URL);
	json_object_put(c);
}
END_TEST

START_TEST(test_push1_watcher_manages_own_configs)
{
	/* ID-4: watchers may keep push configs for themselves. */
	json_object *c = create("wendy", "\"id\":\"w1\",\"url\":\"" PUBLIC_URL "\"");
	ck_assert_msg(c != NULL, "ID-4 watcher create: %s", err.msg);
	json_object_put(c);
	c = get_cfg("wendy", "w1");
	ck_assert_ptr_nonnull(c);
	json_object_put(c);
	json_object *l = list_cfg("wendy", "");
	ck_assert_uint_eq(list_len(l), 1);
	json_object_put(l);
	ck_assert_ptr_null(get_cfg("alice", "w1"));
	ck_assert_int_eq(delete_cfg("wendy", "w1"), TH_OK);
	ck_assert_int_eq(fx_count(&app, "push_configs"), 0);
}
END_TEST

static void bad_create(const char *fields, th_err code, const char *words)
{
	long before = fx_count(&app, "push_configs");
	json_object *c = create("alice", fields);
	ck_assert_msg(c == NULL, "PUSH-1 %s should be refused", fields);
	ck_assert_msg(err.code == code, "PUSH-1 %s: %s (%s)", fields, th_err_name(err.code),
	              err.msg);
	ck_assert_msg(strstr(err.msg, words) != NULL, "PUSH-1 %s: expected '%s' in: %s", fields,
	              words, err.msg);
	ck_assert_int_eq(fx_count(&app, "push_configs"), before);
}

START_TEST(test_push1_bad_params_name_the_field)
{
	ck_assert_ptr_null(
	    fx_call(&app, "alice", TH_OP_CREATE_PUSH_CONFIG, &err, "{\"url\":\"" PUBLIC_URL "\"}"));
	ck_assert_ptr_nonnull(strstr(err.msg, "taskId is required"));
	ck_assert_ptr_null(fx_call(&app, "alice", TH_OP_CREATE_PUSH_CONFIG, &err,
	                           "{\"taskId\":7,\"url\":\"" PUBLIC_URL "\"}"));
	ck_assert_ptr_nonnull(strstr(err.msg, "taskId must be a string"));
	ck_assert_ptr_null(
	    fx_call(&app, "alice", TH_OP_GET_PUSH_CONFIG, &err, "{\"taskId\":\"%s\"}", task));
	ck_assert_ptr_nonnull(strstr(err.msg, "id is required"));
	bad_create("\"id\":\"x\"", TH_EINVAL, "url is required");
	bad_create("\"pushNotificationConfig\":{\"url\":\"" PUBLIC_URL "\"}", TH_EINVAL,
	           "not inside pushNotificationConfig");
	bad_create("\"url\":42", TH_EINVAL, "url must be a string");
	bad_create("\"url\":\"ftp://93.184.216.34/\"", TH_EINVAL, "url 'ftp://93.184.216.34/'");
	bad_create("\"url\":\"" PUBLIC_URL "\",\"token\":\"a\\r\\nX-Evil: 1\"", TH_EINVAL, "token");
	bad_create("\"url\":\"" PUBLIC_URL "\",\"token\":[]", TH_EINVAL, "token must be a string");
	bad_create("\"url\":\"" PUBLIC_URL "\",\"authentication\":\"Bearer x\"", TH_EINVAL,
	           "authentication must be an object");
	bad_create("\"url\":\"" PUBLIC_URL "\",\"authentication\":{\"credentials\":\"x\"}",
	           TH_EINVAL, "authentication.scheme is required");
	bad_create("\"url\":\"" PUBLIC_URL "\",\"authentication\":{\"scheme\":\"Bea rer\"}",
	           TH_EINVAL, "authentication.scheme must be");
	bad_create("\"url\":\"" PUBLIC_URL "\",\"authentication\":{\"scheme\":\"Bearer\","
	           "\"credentials\":\"x\\ny\"}",
	           TH_EINVAL, "authentication.credentials");
	bad_create("\"id\":\"a\\tb\",\"url\":\"" PUBLIC_URL "\"", TH_EINVAL, "id may contain");
	/* a scheme without credentials is kept (no Authorization header is sent then) */
	json_object *c = create("alice", "\"url\":\"" PUBLIC_URL
	                                 "\",\"authentication\":{\"scheme\":\"Bearer\"}");
	ck_assert_msg(c != NULL, "%s", err.msg);
	json_object_put(c);
}
END_TEST

START_TEST(test_push3_private_url_refused_by_create)
{
	bad_create("\"url\":\"http://127.0.0.1:9999/hook\"", TH_EINVAL, "loopback");
	bad_create("\"url\":\"http://169.254.169.254/\"", TH_EINVAL, "cloud metadata");
	bad_create("\"url\":\"http://user:pw@93.184.216.34/\"", TH_EINVAL, "user name or password");
	bad_create("\"url\":\"http://no-such-host.invalid/\"", TH_EINVAL, "does not resolve");
}
END_TEST

START_TEST(test_push3_private_url_allowed_by_configuration)
{
	fx_close(&app);
	open_with(allow_private);
	json_object *c = create("alice", "\"url\":\"http://127.0.0.1:9999/hook\"");
	ck_assert_msg(c != NULL, "PUSH-3 push_allow_private = 1: %s", err.msg);
	json_object_put(c);
	bad_create("\"url\":\"http://0.0.0.0:9999/hook\"", TH_EINVAL, "unspecified");
}
END_TEST

START_TEST(test_push1_inline_config_in_send_message)
{
	/* Refused before anything is stored: a loopback URL without push_allow_private. */
	long tasks = fx_count(&app, "tasks"), cfgs = fx_count(&app, "push_configs");
	ck_assert_ptr_null(
	    fx_call(&app, "alice", TH_OP_SEND_MESSAGE, &err,
	            "{\"message\":{\"messageId\":\"i1\",\"role\":\"ROLE_USER\","
	            "\"parts\":[{\"text\":\"hi\"}]},\"configuration\":{"
	            "\"taskPushNotificationConfig\":{\"url\":\"http://127.0.0.1:9/h\"}}}"));
	ck_assert_int_eq(err.code, TH_EINVAL);
	ck_assert_ptr_nonnull(strstr(err.msg, "loopback"));
	ck_assert_int_eq(fx_count(&app, "tasks"), tasks);
	ck_assert_int_eq(fx_count(&app, "push_configs"), cfgs);
	/* Allowed: the config belongs to the new task and its sender. */
	fx_close(&app);
	open_with(allow_private);
	json_object *r = fx_call(&app, "alice", TH_OP_SEND_MESSAGE, &err,
	                         "{\"message\":{\"messageId\":\"i2\",\"role\":\"ROLE_USER\","
	                         "\"parts\":[{\"text\":\"hi\"}]},\"configuration\":{"
	                         "\"taskPushNotificationConfig\":{\"id\":\"inline\",\"url\":"
	                         "\"http://127.0.0.1:9/h\",\"token\":\"t0k\"}}}");
	ck_assert_msg(r != NULL, "%s", err.msg);
	char id[64];
	snprintf(id, sizeof id, "%s", fx_task_id(json_object_object_get(r, "task")));
	json_object_put(r);
	/* PUSH-2: the write that made the task and put its config queues the events after
	 * the config for it (the turn's reply and status), though a new task's events skip
	 * the outbox until a config of it is put (decision-081). */
	char where[160];
	snprintf(where, sizeof where, "push_outbox WHERE task_id = '%s' AND config_id = 'inline'",
	         id);
	ck_assert_int_ge(fx_count(&app, where), 1);
	json_object *c = fx_call(&app, "alice", TH_OP_GET_PUSH_CONFIG, &err,
	                         "{\"taskId\":\"%s\",\"id\":\"inline\"}", id);
	ck_assert_msg(c != NULL, "%s", err.msg);
	ck_assert_str_eq(th_json_str(c, "url"), "http://127.0.0.1:9/h");
	json_object_put(c);
	ck_assert_ptr_null(fx_call(&app, "bob", TH_OP_GET_PUSH_CONFIG, &err,
	                           "{\"taskId\":\"%s\",\"id\":\"inline\"}", id));
	ck_assert_int_eq(err.code, TH_ENOTFOUND);
}
END_TEST

START_TEST(test_push1_limit_per_participant)
{
	fx_close(&app);
	open_with(two_configs_max);
	json_object *c = create("alice", "\"id\":\"a\",\"url\":\"" PUBLIC_URL "\"");
	json_object_put(c);
	c = create("alice", "\"id\":\"b\",\"url\":\"" PUBLIC_URL "\"");
	json_object_put(c);
	bad_create("\"id\":\"c\",\"url\":\"" PUBLIC_URL "\"", TH_EINVAL, "push_max_configs");
	c = create("alice", "\"id\":\"b\",\"url\":\"http://93.184.216.34/replaced\"");
	ck_assert_msg(c != NULL, "replacing is not a new config: %s", err.msg);
	json_object_put(c);
	c = create("bob", "\"id\":\"c\",\"url\":\"" PUBLIC_URL "\"");
	ck_assert_msg(c != NULL, "the limit is per participant: %s", err.msg);
	json_object_put(c);
}
END_TEST

static void blob_of(const char *column, const char *config, unsigned char **out, size_t *n)
{
	char sql[200];
	snprintf(sql, sizeof sql, "SELECT %s FROM push_configs WHERE config_id = ?1", column);
	sqlite3_stmt *s;
	ck_assert_int_eq(sqlite3_prepare_v2(th_store_db(app.store), sql, -1, &s, NULL), SQLITE_OK);
	sqlite3_bind_text(s, 1, config, -1, SQLITE_STATIC);
	ck_assert_int_eq(sqlite3_step(s), SQLITE_ROW);
	*n = (size_t)sqlite3_column_bytes(s, 0);
	*out = malloc(*n + 1);
	memcpy(*out, sqlite3_column_blob(s, 0), *n);
	sqlite3_finalize(s);
}

START_TEST(test_push4_secrets_stored_sealed_and_never_returned)
{
	json_object *c = create("alice", "\"id\":\"s1\",\"url\":\"" PUBLIC_URL "\",\"token\":"
	                                 "\"tok-secret-123\",\"authentication\":{\"scheme\":"
	                                 "\"Bearer\",\"credentials\":\"cred-secret-456\"}");
	ck_assert_msg(c != NULL, "%s", err.msg);
	const char *text = th_json_text(c);
	ck_assert_msg(strstr(text, "secret") == NULL, "PUSH-4 create answered a secret: %s", text);
	ck_assert_str_eq(th_json_str(json_object_object_get(c, "authentication"), "scheme"),
	                 "Bearer");
	json_object_put(c);
	c = get_cfg("alice", "s1");
	ck_assert_msg(strstr(th_json_text(c), "secret") == NULL, "PUSH-4 get answered a secret");
	ck_assert_ptr_nonnull(json_object_object_get(c, "authentication"));
	json_object_put(c);
	json_object *l = list_cfg("alice", "");
	ck_assert_msg(strstr(th_json_text(l), "secret") == NULL, "PUSH-4 list answered a secret");
	json_object_put(l);

	unsigned char *tok, *cred, key[TH_PUSH_KEY_LEN];
	size_t tn, cn;
	blob_of("token_enc", "s1", &tok, &tn);
	blob_of("auth_credentials_enc", "s1", &cred, &cn);
	ck_assert_msg(memmem(tok, tn, "tok-secret", 10) == NULL, "PUSH-4 token stored in clear");
	ck_assert_msg(memmem(cred, cn, "cred-secret", 11) == NULL, "PUSH-4 credentials in clear");
	key_of(KEY_HEX, key);
	ck_assert(opens(key, "token", task, "s1", tok, tn, "tok-secret-123"));
	ck_assert(opens(key, "credentials", task, "s1", cred, cn, "cred-secret-456"));
	free(tok);
	free(cred);
}
END_TEST

START_TEST(test_push4_secrets_need_the_key)
{
	unsetenv(TH_PUSH_KEY_ENV);
	bad_create("\"url\":\"" PUBLIC_URL "\",\"token\":\"t\"", TH_EUNSUPPORTED,
	           "TINY_HARNESS_PUSH_KEY");
	bad_create("\"url\":\"" PUBLIC_URL "\",\"authentication\":{\"scheme\":\"Basic\","
	           "\"credentials\":\"dTpw\"}",
	           TH_EUNSUPPORTED, "TINY_HARNESS_PUSH_KEY");
	/* a config with neither works without the key */
	json_object *c = create("alice", "\"url\":\"" PUBLIC_URL "\"");
	ck_assert_msg(c != NULL, "%s", err.msg);
	json_object_put(c);
	setenv(TH_PUSH_KEY_ENV, "not-hex", 1);
	bad_create("\"url\":\"" PUBLIC_URL "\",\"token\":\"t\"", TH_EINTERNAL,
	           "TINY_HARNESS_PUSH_KEY");
}
END_TEST

/* ---- PUSH-2: delivery --------------------------------------------------------------------------
 */

/* A webhook receiver forked on 127.0.0.1: answers the statuses listed (then 200), saves
 * each request as DIR/NNN. Stopped by pid; exits by itself after 60 s. */
struct receiver {
	pid_t pid;
	int port;
	char dir[64];
};
static struct receiver rx;

static void serve(int ls, const char *dir, const int *statuses, int nstatus)
{
	alarm(60);
	for (int n = 0;; n++) {
		int c = accept(ls, NULL, NULL);
		if (c < 0)
			_exit(1);
		static char buf[1 << 20];
		size_t len = 0;
		long want = -1;
		while (len < sizeof buf - 1) {
			ssize_t r = read(c, buf + len, sizeof buf - 1 - len);
			if (r <= 0)
				break;
			len += (size_t)r;
			buf[len] = '\0';
			char *end = strstr(buf, "\r\n\r\n");
			if (end == NULL)
				continue;
			if (want < 0) {
				char *cl = strcasestr(buf, "\r\nContent-Length:");
				want = (end - buf) + 4 + (cl ? strtol(cl + 17, NULL, 10) : 0);
			}
			if ((long)len >= want)
				break;
		}
		char path[128];
		snprintf(path, sizeof path, "%s/%03d", dir, n);
		FILE *f = fopen(path, "w");
		if (f != NULL) {
			fwrite(buf, 1, len, f);
			fclose(f);
		}
		int status = n < nstatus ? statuses[n] : 200;
		char resp[160];
		int rn = snprintf(
		    resp, sizeof resp,
		    "HTTP/1.1 %d X\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok", status);
		if (write(c, resp, (size_t)rn) != rn)
			_exit(1);
		close(c);
	}
}

static void rx_start(const int *statuses, int nstatus)
{
	int ls = socket(AF_INET, SOCK_STREAM, 0);
	ck_assert_int_ge(ls, 0);
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	ck_assert_int_eq(bind(ls, (struct sockaddr *)&a, sizeof a), 0);
	ck_assert_int_eq(listen(ls, 16), 0);
	socklen_t al = sizeof a;
	ck_assert_int_eq(getsockname(ls, (struct sockaddr *)&a, &al), 0);
	rx.port = ntohs(a.sin_port);
	snprintf(rx.dir, sizeof rx.dir, "/tmp/th-push-rx-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(rx.dir));
	rx.pid = fork();
	ck_assert_int_ge(rx.pid, 0);
	if (rx.pid == 0) {
		/* Check's handler would pass SIGTERM on to the whole process group. */
		signal(SIGTERM, SIG_DFL);
		serve(ls, rx.dir, statuses, nstatus);
	}
	close(ls);
}

static void rx_stop(void)
{
	if (rx.pid > 0) {
		/* SIGKILL: a child that has not yet reset Check's SIGTERM handler would pass
		 * SIGTERM on to the whole process group. */
		kill(rx.pid, SIGKILL);
		waitpid(rx.pid, NULL, 0);
		rx.pid = 0;
	}
	char cmd[128];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", rx.dir);
	ck_assert_int_eq(system(cmd), 0);
}

/* Request n as text (caller frees), or NULL. */
static char *rx_request(int n)
{
	char path[128];
	snprintf(path, sizeof path, "%s/%03d", rx.dir, n);
	FILE *f = fopen(path, "r");
	if (f == NULL)
		return NULL;
	char *buf = calloc(1, 1 << 20);
	size_t len = fread(buf, 1, (1 << 20) - 1, f);
	buf[len] = '\0';
	fclose(f);
	return buf;
}

static int rx_count(void)
{
	int n = 0;
	char *r;
	while ((r = rx_request(n)) != NULL) {
		free(r);
		n++;
	}
	return n;
}

static const char *header(const char *req, const char *name, char *out, size_t cap)
{
	char pat[80];
	snprintf(pat, sizeof pat, "\r\n%s: ", name);
	const char *p = strcasestr(req, pat);
	if (p == NULL)
		return NULL;
	p += strlen(pat);
	size_t n = strcspn(p, "\r");
	snprintf(out, cap, "%.*s", (int)n, p);
	return out;
}

static void hook_setup(void)
{
	open_with(allow_private);
}

static void hook_teardown(void)
{
	rx_stop();
	fx_close(&app);
}

static long long sql_int(const char *sql)
{
	sqlite3_stmt *s;
	ck_assert_int_eq(sqlite3_prepare_v2(th_store_db(app.store), sql, -1, &s, NULL), SQLITE_OK);
	ck_assert_int_eq(sqlite3_step(s), SQLITE_ROW);
	long long v = sqlite3_column_int64(s, 0);
	sqlite3_finalize(s);
	return v;
}

static void hook_config(const char *extra)
{
	char f[512];
	snprintf(f, sizeof f, "\"id\":\"h1\",\"url\":\"http://127.0.0.1:%d/hook\"%s", rx.port,
	         extra);
	json_object *c = create("alice", f);
	ck_assert_msg(c != NULL, "%s", err.msg);
	json_object_put(c);
}

START_TEST(test_push2_every_event_in_order_with_token_and_authorization)
{
	static const int none[1] = {0};
	rx_start(none, 0);
	long long first = sql_int("SELECT max(seq) FROM events") + 1;
	hook_config(",\"token\":\"tok-1\",\"authentication\":{\"scheme\":\"Bearer\","
	            "\"credentials\":\"cred-1\"}");
	json_object *t = fx_send_text(&app, "alice", task, "m2", "follow-up", &err);
	ck_assert_msg(t != NULL, "%s", err.msg);
	json_object_put(t);
	t = fx_complete(&app, "alice", task, &err);
	ck_assert_msg(t != NULL, "%s", err.msg);
	ck_assert_str_eq(fx_state(t), "TASK_STATE_COMPLETED");
	json_object_put(t);
	char sql[120];
	snprintf(sql, sizeof sql, "SELECT count(*) FROM events WHERE seq >= %lld", first);
	long long events = sql_int(sql);
	ck_assert_int_ge(events, 2); /* INPUT_REQUIRED after the reply, COMPLETED */
	ck_assert_int_eq(fx_count(&app, "push_outbox"), events);

	int n = th_push_deliver_due(app.store, app.cfg, 10000);
	ck_assert_int_eq(n, events);
	ck_assert_int_eq(rx_count(), events);
	ck_assert_int_eq(sql_int("SELECT count(*) FROM push_outbox WHERE state = 'delivered'"),
	                 events);

	/* Each body is the event as a stream reads it back (STORE-10: stored with
	 * references and short keys, read whole). */
	struct th_event *evs = NULL;
	size_t nev = 0;
	ck_assert_int_eq(th_events_since(app.store, task, first - 1, 0, &evs, &nev, &err), TH_OK);
	ck_assert_int_eq((long long)nev, events);
	for (size_t i = 0; i < nev; i++) {
		char *req = rx_request((int)i);
		ck_assert_ptr_nonnull(req);
		char v[200];
		ck_assert_msg(strncmp(req, "POST /hook HTTP/1.1\r\n", 21) == 0, "PUSH-2 %.60s",
		              req);
		ck_assert_str_eq(header(req, "Content-Type", v, sizeof v), "application/a2a+json");
		ck_assert_str_eq(header(req, "X-A2A-Notification-Token", v, sizeof v), "tok-1");
		ck_assert_str_eq(header(req, "Authorization", v, sizeof v), "Bearer cred-1");
		ck_assert_int_eq(atoll(header(req, "X-Tiny-Harness-Event-Seq", v, sizeof v)),
		                 evs[i].seq);
		const char *body = strstr(req, "\r\n\r\n") + 4;
		json_object *sr = json_tokener_parse(body);
		json_object *want = json_tokener_parse(evs[i].json);
		ck_assert_ptr_nonnull(sr);
		ck_assert_msg(json_object_equal(sr, want), "PUSH-2 event %zu body differs:\n%s\n%s",
		              i, body, evs[i].json);
		json_object_put(want);
		int kinds = json_object_object_get(sr, "task") != NULL;
		kinds += json_object_object_get(sr, "message") != NULL;
		kinds += json_object_object_get(sr, "statusUpdate") != NULL;
		kinds += json_object_object_get(sr, "artifactUpdate") != NULL;
		ck_assert_msg(kinds == 1, "PUSH-2 a StreamResponse has one member: %s", body);
		json_object_put(sr);
		free(req);
	}
	th_events_free(evs, nev);
	/* Nothing is due any more. */
	ck_assert_int_eq(th_push_deliver_due(app.store, app.cfg, 2000), 0);
	ck_assert_int_eq(rx_count(), events);
}
END_TEST

START_TEST(test_push2_5xx_is_retried_4xx_is_dead)
{
	static const int statuses[] = {500, 503, 404};
	rx_start(statuses, 3);
	app.cfg->push_retry_base_ms = 300; /* nothing comes due again within one cycle */
	app.cfg->push_retry_max_ms = 300;
	hook_config("");
	json_object *t = fx_send_text(&app, "alice", task, "m2", "follow-up", &err);
	json_object_put(t);
	t = fx_send_text(&app, "alice", task, "m3", "and another", &err);
	json_object_put(t);
	t = fx_send_text(&app, "alice", task, "m4", "and a third", &err);
	json_object_put(t);
	/* One INPUT_REQUIRED event per instant reply (decision-025): three to deliver. */
	long long queued = fx_count(&app, "push_outbox");
	ck_assert_int_ge(queued, 3);
	long long first = sql_int("SELECT min(id) FROM push_outbox");
	/* 500 → retried later, the next event goes on (503 → retried, 404 → dead) */
	th_push_deliver_due(app.store, app.cfg, 5000);
	char sql[200];
	snprintf(sql, sizeof sql,
	         "SELECT count(*) FROM push_outbox WHERE id = %lld AND state = 'pending' AND "
	         "attempts = 1 AND last_error LIKE '%%HTTP 500%%' AND next_attempt_ms > 0",
	         first);
	ck_assert_msg(sql_int(sql) == 1, "PUSH-2 a 500 leaves the delivery pending for a retry");
	ck_assert_int_eq(sql_int("SELECT count(*) FROM push_outbox WHERE state = 'dead' AND "
	                         "last_error LIKE '%HTTP 404%'"),
	                 1);
	/* After the back-off the retries succeed. */
	usleep(400 * 1000);
	th_push_deliver_due(app.store, app.cfg, 5000);
	snprintf(sql, sizeof sql,
	         "SELECT count(*) FROM push_outbox WHERE id = %lld AND state = 'delivered' AND "
	         "attempts = 2",
	         first);
	ck_assert_msg(sql_int(sql) == 1, "PUSH-2 the retried delivery arrived on attempt 2");
	ck_assert_int_eq(sql_int("SELECT count(*) FROM push_outbox WHERE state = 'pending'"), 0);
	ck_assert_int_eq(sql_int("SELECT count(*) FROM push_outbox WHERE state = 'delivered'"),
	                 queued - 1);
}
END_TEST

START_TEST(test_push2_unreachable_webhook_retries_until_dead)
{
	static const int none[1] = {0};
	rx_start(none, 0);
	hook_config("");
	rx_stop(); /* nobody listens any more: connection refused */
	snprintf(rx.dir, sizeof rx.dir, "/tmp/th-push-rx-gone");
	json_object *t = fx_send_text(&app, "alice", task, "m2", "x", &err);
	json_object_put(t);
	long long queued = fx_count(&app, "push_outbox");
	for (int i = 0; i < 3; i++) {
		ck_assert_int_eq(th_push_deliver_due(app.store, app.cfg, 3000), 0);
		usleep(100 * 1000);
	}
	/* push_max_attempts = 3 */
	char sql[120];
	snprintf(sql, sizeof sql,
	         "SELECT count(*) FROM push_outbox WHERE state = 'dead' AND attempts = 3");
	ck_assert_int_eq(sql_int(sql), queued);
}
END_TEST

START_TEST(test_push2_expired_claim_is_delivered_again)
{
	static const int none[1] = {0};
	rx_start(none, 0);
	hook_config("");
	json_object *t = fx_send_text(&app, "alice", task, "m2", "x", &err);
	json_object_put(t);
	long long queued = fx_count(&app, "push_outbox");
	/* A worker claims everything and is killed before it reports (lease 100 ms). */
	struct th_push_delivery *d;
	size_t n;
	ck_assert_int_eq(th_store_begin(app.store, &err), TH_OK);
	ck_assert_int_eq(th_store_push_claim_due(app.store, th_now_ms(), 100, 100, &d, &n, &err),
	                 TH_OK);
	ck_assert_int_eq(th_store_commit(app.store, &err), TH_OK);
	ck_assert_int_eq((long long)n, queued);
	th_push_deliveries_free(d, n);
	ck_assert_int_eq(th_push_deliver_due(app.store, app.cfg, 2000), 0); /* still claimed */
	usleep(150 * 1000);
	ck_assert_int_eq(th_push_deliver_due(app.store, app.cfg, 5000), queued);
	ck_assert_int_eq(rx_count(), queued);
	ck_assert_int_eq(sql_int("SELECT count(*) FROM push_outbox WHERE state = 'delivered' AND "
	                         "attempts = 2"),
	                 queued);
}
END_TEST

START_TEST(test_push3_url_is_checked_again_at_delivery)
{
	static const int none[1] = {0};
	rx_start(none, 0);
	hook_config("");
	json_object *t = fx_send_text(&app, "alice", task, "m2", "x", &err);
	json_object_put(t);
	/* The configuration no longer allows loopback targets (as after a DNS change). */
	app.cfg->push_allow_private = 0;
	ck_assert_int_eq(th_push_deliver_due(app.store, app.cfg, 3000), 0);
	ck_assert_int_eq(rx_count(), 0);
	ck_assert_int_eq(sql_int("SELECT count(*) FROM push_outbox WHERE state != 'dead' OR "
	                         "last_error NOT LIKE '%loopback%'"),
	                 0);
}
END_TEST

START_TEST(test_push4_wrong_key_at_delivery_sends_nothing)
{
	static const int none[1] = {0};
	rx_start(none, 0);
	hook_config(",\"token\":\"tok-1\"");
	json_object *t = fx_send_text(&app, "alice", task, "m2", "x", &err);
	json_object_put(t);
	setenv(TH_PUSH_KEY_ENV, KEY2_HEX, 1);
	ck_assert_int_eq(th_push_deliver_due(app.store, app.cfg, 3000), 0);
	ck_assert_int_eq(rx_count(), 0);
	ck_assert_int_eq(sql_int("SELECT count(*) FROM push_outbox WHERE state != 'pending' OR "
	                         "last_error NOT LIKE '%cannot decrypt%'"),
	                 0);
	/* The operator puts the right key back: the retry goes out with the token. */
	setenv(TH_PUSH_KEY_ENV, KEY_HEX, 1);
	usleep(100 * 1000);
	ck_assert_int_eq(th_push_deliver_due(app.store, app.cfg, 5000),
	                 fx_count(&app, "push_outbox"));
	char *req = rx_request(0), v[64];
	ck_assert_ptr_nonnull(req);
	ck_assert_str_eq(header(req, "X-A2A-Notification-Token", v, sizeof v), "tok-1");
	ck_assert_ptr_null(header(req, "Authorization", v, sizeof v));
	free(req);
}
END_TEST

START_TEST(test_push2_deleted_config_drops_its_deliveries)
{
	static const int none[1] = {0};
	rx_start(none, 0);
	hook_config("");
	json_object *t = fx_send_text(&app, "alice", task, "m2", "x", &err);
	json_object_put(t);
	ck_assert_int_gt(fx_count(&app, "push_outbox"), 0);
	ck_assert_int_eq(delete_cfg("alice", "h1"), TH_OK);
	ck_assert_int_eq(fx_count(&app, "push_outbox"), 0);
	ck_assert_int_eq(th_push_deliver_due(app.store, app.cfg, 2000), 0);
	ck_assert_int_eq(rx_count(), 0);
}
END_TEST

START_TEST(test_push2_owner_no_longer_on_the_task_hears_nothing)
{
	static const int none[1] = {0};
	rx_start(none, 0);
	json_object *c =
	    fx_call(&app, "bob", TH_OP_CREATE_PUSH_CONFIG, &err,
	            "{\"taskId\":\"%s\",\"id\":\"b1\",\"url\":\"http://127.0.0.1:%d/hook\"}", task,
	            rx.port);
	ck_assert_msg(c != NULL, "%s", err.msg);
	json_object_put(c);
	json_object *t = fx_send_text(&app, "alice", task, "m2", "x", &err);
	json_object_put(t);
	ck_assert_int_gt(fx_count(&app, "push_outbox"), 0);
	/* bob leaves the task (no operation does this yet; the store can) */
	ck_assert_int_eq(sqlite3_exec(th_store_db(app.store),
	                              "DELETE FROM participants WHERE participant_id = 'bob'", NULL,
	                              NULL, NULL),
	                 SQLITE_OK);
	ck_assert_int_eq(th_push_deliver_due(app.store, app.cfg, 3000), 0);
	ck_assert_int_eq(rx_count(), 0);
	ck_assert_int_eq(sql_int("SELECT count(*) FROM push_outbox WHERE state != 'dead' OR "
	                         "last_error NOT LIKE '%no longer a participant%'"),
	                 0);
}
END_TEST

int main(void)
{
	signal(SIGPIPE, SIG_IGN);
	Suite *s = suite_create("push");
	TCase *urls = tcase_create("urls-and-secrets");
	tcase_add_test(urls, test_push3_urls_refused_with_the_reason);
	tcase_add_test(urls, test_push3_urls_accepted);
	tcase_add_test(urls, test_push3_address_classes);
	tcase_add_test(urls, test_push4_secret_round_trip_and_tamper_detection);
	tcase_add_test(urls, test_push4_key_from_the_environment);
	tcase_add_test(urls, test_sec6_metadata_and_special_purpose_refused_with_private_allowed);
	tcase_add_test(urls, test_sec6_url_redacted);
	suite_add_tcase(s, urls);

	TCase *req = tcase_create("requests");
	tcase_add_test(req, test_push1_create_request_decoded_with_its_params_held);
	tcase_add_test(req, test_push1_get_and_list_requests_decoded);
	suite_add_tcase(s, req);

	TCase *ops = tcase_create("operations");
	tcase_add_checked_fixture(ops, setup, teardown);
	tcase_set_timeout(ops, 30);
	tcase_add_test(ops, test_push1_create_get_list_delete);
	tcase_add_test(ops, test_push1_list_pages);
	tcase_add_test(ops, test_push1_stranger_and_unknown_task_are_not_found);
	tcase_add_test(ops, test_push1_configs_belong_to_their_participant);
	tcase_add_test(ops, test_push1_watcher_manages_own_configs);
	tcase_add_test(ops, test_push1_bad_params_name_the_field);
	tcase_add_test(ops, test_push3_private_url_refused_by_create);
	tcase_add_test(ops, test_push3_private_url_allowed_by_configuration);
	tcase_add_test(ops, test_push1_inline_config_in_send_message);
	tcase_add_test(ops, test_push1_limit_per_participant);
	tcase_add_test(ops, test_push4_secrets_stored_sealed_and_never_returned);
	tcase_add_test(ops, test_push4_secrets_need_the_key);
	suite_add_tcase(s, ops);

	TCase *del = tcase_create("delivery");
	tcase_add_checked_fixture(del, hook_setup, hook_teardown);
	tcase_set_timeout(del, 60);
	tcase_add_test(del, test_push2_every_event_in_order_with_token_and_authorization);
	tcase_add_test(del, test_push2_5xx_is_retried_4xx_is_dead);
	tcase_add_test(del, test_push2_unreachable_webhook_retries_until_dead);
	tcase_add_test(del, test_push2_expired_claim_is_delivered_again);
	tcase_add_test(del, test_push3_url_is_checked_again_at_delivery);
	tcase_add_test(del, test_push4_wrong_key_at_delivery_sends_nothing);
	tcase_add_test(del, test_push2_deleted_config_drops_its_deliveries);
	tcase_add_test(del, test_push2_owner_no_longer_on_the_task_hears_nothing);
	suite_add_tcase(s, del);

	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
