/* SPDX-License-Identifier: Apache-2.0 */
/* check_bind.c — th_bind_serve driven through the in-memory carrier: routing, the
 * header checks (A2A-3, EXT-1, EXT-2, ID-1), bad input (LIM-1, LIM-2, LIM-3), error
 * shapes (A2A-4), the agent card (CARD-1), and what each binding hands the service
 * (A2A-1), seen through a recorder put in th_bind_service. */
#include <check.h>
#include <ftw.h>
#include <sys/stat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app.h"
#include "worker/process.h"
#include "bind/bind.h"
#include "bind/bind_int.h"
#include "config/settings.h"
#include "domain/ext.h"
#include "http/http.h"
#include "store/store.h"
#include "text_fixture.h"
#include "util/rate.h"
#include "util/metrics.h"
#include "util/jsonx.h"

/* ---- fixture -------------------------------------------------------------- */

static struct th_config cfg;
static struct th_app app;

/* The recorder: what the binding passed, and what to answer. */
static struct {
	int calls;
	int op;
	char params[2048];
	char participant[128];
	int has_participant;
	unsigned extensions;
	const char *answer; /* JSON text of the result; NULL = no result (Empty) */
	th_err fail;        /* TH_OK = succeed */
	const char *fail_msg;
	const char *fail_task;
	int minor; /* call->a2a_minor */
} rec;

static th_err recorder(struct th_app *a, const struct th_call *call, enum th_op op,
                       json_object *params, json_object **result, struct th_error *e)
{
	(void)a;
	rec.calls++;
	rec.op = (int)op;
	snprintf(rec.params, sizeof rec.params, "%s", params != NULL ? th_json_text(params) : "");
	rec.has_participant = call->participant != NULL;
	snprintf(rec.participant, sizeof rec.participant, "%s",
	         call->participant != NULL ? call->participant : "");
	rec.extensions = call->extensions;
	rec.minor = call->a2a_minor;
	*result = NULL;
	if (rec.fail != TH_OK) {
		th_error_set(e, rec.fail, "%s", rec.fail_msg != NULL ? rec.fail_msg : "failed");
		if (rec.fail_task != NULL)
			snprintf(e->task_id, sizeof e->task_id, "%s", rec.fail_task);
		return rec.fail;
	}
	if (rec.answer != NULL)
		*result = json_tokener_parse(rec.answer);
	return TH_OK;
}

/* Streams are recorded the same way: the op and params, then an empty stream. */
static th_err stream_recorder(struct th_app *a, const struct th_call *call, enum th_op op,
                              json_object *params, const char *last_event_id, struct th_sink *sink,
                              struct th_error *e)
{
	(void)last_event_id;
	(void)sink;
	json_object *result = NULL;
	th_err rc = recorder(a, call, op, params, &result, e);
	json_object_put(result);
	return rc;
}

static void setup(void)
{
	ck_assert_int_eq(th_config_defaults(&cfg), TH_OK);
	memset(&app, 0, sizeof app);
	app.cfg = &cfg;
	app.card = json_tokener_parse("{\"name\":\"tiny-harness\",\"url\":\"http://x/a/b\"}");
	ck_assert_ptr_nonnull(app.card);
	/* card_text and card_etag are made from card on the first card request
	 * (th_service_card). */
	memset(&rec, 0, sizeof rec);
	rec.answer = "{\"ok\":true}";
	th_bind_service = recorder;
	th_bind_stream_service = stream_recorder;
}

static void teardown(void)
{
	json_object_put(app.card);
	app.card = NULL;
	free(app.card_text);
	app.card_text = NULL;
	th_config_free(&cfg);
	th_bind_service = th_service_call;
	th_bind_stream_service = th_service_stream;
}

/* Sets the configuration's base path (the loader derives it from base_url). */
static void set_base(const char *base_url)
{
	struct th_error e;
	ck_assert_int_eq(th_config_set(&cfg, "base_url", base_url, &e), TH_OK);
}

struct resp {
	int status;
	char *head;        /* header lines after Status; free */
	char *body;        /* free */
	json_object *json; /* parsed body or NULL; json_object_put */
	size_t reads;
};

static void resp_free(struct resp *r)
{
	free(r->head);
	free(r->body);
	json_object_put(r->json);
	memset(r, 0, sizeof *r);
}

/* Runs one request: params are "NAME=value" strings; body may be NULL. A body gets a
 * matching CONTENT_LENGTH and the request REMOTE_ADDR=127.0.0.1 unless the params
 * already carry one. */
static struct resp run_ex(const char *const *params, const char *body, int fail_reads)
{
	const char *all[32];
	char cl[40];
	size_t n = 0, blen = body != NULL ? strlen(body) : 0;
	int has_cl = 0, has_addr = 0;
	for (; params[n] != NULL; n++) {
		ck_assert_uint_lt(n, 29);
		all[n] = params[n];
		if (strncmp(params[n], "CONTENT_LENGTH=", 15) == 0)
			has_cl = 1;
		if (strncmp(params[n], "REMOTE_ADDR=", 12) == 0)
			has_addr = 1;
	}
	if (body != NULL && !has_cl) {
		snprintf(cl, sizeof cl, "CONTENT_LENGTH=%zu", blen);
		all[n++] = cl;
	}
	/* A web server always names the peer; these requests come from this machine. */
	if (!has_addr)
		all[n++] = "REMOTE_ADDR=127.0.0.1";
	all[n] = NULL;
	struct th_http_mem *m = th_http_mem_new(all, body, blen);
	ck_assert_ptr_nonnull(m);
	if (fail_reads)
		th_http_mem_fail_reads(m);
	struct th_http_io io;
	th_http_mem_io(m, &io);
	th_bind_serve(&app, &io);

	struct resp r;
	memset(&r, 0, sizeof r);
	r.reads = th_http_mem_reads(m);
	size_t len;
	const char *out = th_http_mem_output(m, &len);
	ck_assert_msg(strncmp(out, "Status: ", 8) == 0, "no Status line in: %s", out);
	r.status = atoi(out + 8);
	const char *eol = strstr(out, "\r\n");
	const char *sep = strstr(out, "\r\n\r\n");
	ck_assert_ptr_nonnull(eol);
	ck_assert_ptr_nonnull(sep);
	r.head = strndup(eol + 2, (size_t)(sep + 2 - (eol + 2)));
	r.body = strdup(sep + 4);
	if (r.body[0] != '\0')
		r.json = json_tokener_parse(r.body);
	th_http_mem_free(m);
	return r;
}

static struct resp run(const char *const *params, const char *body)
{
	return run_ex(params, body, 0);
}

/* A header's value (without CRLF) into a static buffer, or NULL. */
static const char *header(const struct resp *r, const char *name)
{
	static char v[512];
	size_t n = strlen(name);
	for (const char *p = r->head; p != NULL && *p != '\0';) {
		const char *e = strstr(p, "\r\n");
		if (e == NULL)
			break;
		if (strncmp(p, name, n) == 0 && p[n] == ':') {
			const char *s = p + n + 1;
			while (*s == ' ')
				s++;
			snprintf(v, sizeof v, "%.*s", (int)(e - s), s);
			return v;
		}
		p = e + 2;
	}
	return NULL;
}

/* A value by a dotted path ("error.data.0.reason"); numbers index arrays. */
static json_object *jget(json_object *o, const char *path)
{
	char buf[256];
	snprintf(buf, sizeof buf, "%s", path);
	char *save = NULL;
	for (char *t = strtok_r(buf, ".", &save); t != NULL; t = strtok_r(NULL, ".", &save)) {
		if (o == NULL)
			return NULL;
		if (json_object_is_type(o, json_type_array)) {
			size_t i = (size_t)atoi(t);
			if (i >= json_object_array_length(o))
				return NULL;
			o = json_object_array_get_idx(o, i);
		} else if (!json_object_object_get_ex(o, t, &o)) {
			return NULL;
		}
	}
	return o;
}

static const char *jstr(const struct resp *r, const char *path)
{
	json_object *v = jget(r->json, path);
	return v != NULL && json_object_is_type(v, json_type_string) ? json_object_get_string(v)
	                                                             : NULL;
}

static int jint(const struct resp *r, const char *path)
{
	json_object *v = jget(r->json, path);
	ck_assert_msg(v != NULL, "no %s in %s", path, r->body);
	return json_object_get_int(v);
}

static void assert_contains(const char *s, const char *part)
{
	ck_assert_msg(s != NULL && strstr(s, part) != NULL, "'%s' does not contain '%s'",
	              s != NULL ? s : "(null)", part);
}

#define RPC_BODY(method, params)                                                                   \
	"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"" method "\",\"params\":" params "}"

static const char *const RPC_V[] = {"REQUEST_METHOD=POST", "REQUEST_URI=/",
                                    "CONTENT_TYPE=application/json", "HTTP_A2A_VERSION=1.0", NULL};

/* A JSON-RPC error envelope with code and (when reason != NULL) one ErrorInfo. */
static void assert_rpc_error(const struct resp *r, int code, const char *reason)
{
	ck_assert_msg(r->json != NULL, "not JSON: %s", r->body);
	ck_assert_str_eq(jstr(r, "jsonrpc"), "2.0");
	ck_assert_int_eq(jint(r, "error.code"), code);
	ck_assert_ptr_nonnull(jstr(r, "error.message"));
	ck_assert_ptr_null(jget(r->json, "result"));
	if (reason != NULL) {
		ck_assert_str_eq(jstr(r, "error.data.0.@type"),
		                 "type.googleapis.com/google.rpc.ErrorInfo");
		ck_assert_str_eq(jstr(r, "error.data.0.reason"), reason);
		ck_assert_str_eq(jstr(r, "error.data.0.domain"), "a2a-protocol.org");
	} else {
		ck_assert_ptr_null(jget(r->json, "error.data"));
	}
	/* Only code, message and data (the TCK checks for extra keys). */
	json_object_object_foreach(jget(r->json, "error"), k, v)
	{
		(void)v;
		ck_assert_msg(strcmp(k, "code") == 0 || strcmp(k, "message") == 0 ||
		                  strcmp(k, "data") == 0,
		              "unexpected key %s", k);
	}
}

/* A google.rpc.Status body whose code matches the HTTP status. */
static void assert_rest_error(const struct resp *r, int status, const char *grpc,
                              const char *reason)
{
	ck_assert_int_eq(r->status, status);
	ck_assert_msg(r->json != NULL, "not JSON: %s", r->body);
	ck_assert_int_eq(jint(r, "error.code"), status);
	ck_assert_str_eq(jstr(r, "error.status"), grpc);
	ck_assert_ptr_nonnull(jstr(r, "error.message"));
	if (reason != NULL) {
		ck_assert_str_eq(jstr(r, "error.details.0.@type"),
		                 "type.googleapis.com/google.rpc.ErrorInfo");
		ck_assert_str_eq(jstr(r, "error.details.0.reason"), reason);
		ck_assert_str_eq(jstr(r, "error.details.0.domain"), "a2a-protocol.org");
	}
	ck_assert_str_eq(header(r, "Content-Type"), "application/a2a+json");
}

static int is_null_id(const struct resp *r)
{
	json_object *v = NULL;
	return json_object_object_get_ex(r->json, "id", &v) && v == NULL;
}

/* ---- A2A-3: version ------------------------------------------------------ */

static struct resp rpc_with_version(const char *version_param)
{
	const char *p[] = {"REQUEST_METHOD=POST", "REQUEST_URI=/", "CONTENT_TYPE=application/json",
	                   version_param, NULL};
	return run(p, RPC_BODY("GetTask", "{\"id\":\"t1\"}"));
}

/* CARD-1: the card's Last-Modified is RFC 9110's IMF-fixdate (its own example), in
 * English, and a buffer too short for it is refused rather than cut. */
START_TEST(test_card1_last_modified_is_an_imf_fixdate)
{
	char d[40];
	ck_assert_int_eq(th_bind_http_date((time_t)784111777, d, sizeof d), 1);
	ck_assert_str_eq(d, "Sun, 06 Nov 1994 08:49:37 GMT");
	ck_assert_int_eq(th_bind_http_date((time_t)1709164800, d, sizeof d), 1);
	ck_assert_str_eq(d, "Thu, 29 Feb 2024 00:00:00 GMT");
	ck_assert_int_eq(th_bind_http_date((time_t)0, d, 29), 0);
}
END_TEST

START_TEST(test_a2a3_missing_version_refused)
{
	struct resp r = rpc_with_version(NULL);
	ck_assert_int_eq(r.status, 200);
	assert_rpc_error(&r, -32009, "VERSION_NOT_SUPPORTED");
	assert_contains(jstr(&r, "error.message"), "(none)");
	assert_contains(jstr(&r, "error.message"), "supported: 1.0");
	ck_assert_int_eq(jint(&r, "id"), 1);
	ck_assert_int_eq(rec.calls, 0);
	resp_free(&r);
}
END_TEST

START_TEST(test_a2a3_empty_version_refused)
{
	struct resp r = rpc_with_version("HTTP_A2A_VERSION=");
	assert_rpc_error(&r, -32009, "VERSION_NOT_SUPPORTED");
	ck_assert_int_eq(rec.calls, 0);
	resp_free(&r);
}
END_TEST

START_TEST(test_a2a3_other_versions_refused_naming_value)
{
	const char *bad[] = {"0.3", "2.0", "1.2", "1.0.", "1.0.x", "1.01", "1", "1.1.", "1.10"};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		char p[64];
		snprintf(p, sizeof p, "HTTP_A2A_VERSION=%s", bad[i]);
		struct resp r = rpc_with_version(p);
		assert_rpc_error(&r, -32009, "VERSION_NOT_SUPPORTED");
		char want[32];
		snprintf(want, sizeof want, "'%s'", bad[i]);
		assert_contains(jstr(&r, "error.message"), want);
		assert_contains(jstr(&r, "error.message"), "supported: 1.0");
		resp_free(&r);
	}
	ck_assert_int_eq(rec.calls, 0);
}
END_TEST

/* A2A-11-GEN-1: 1.1 (and 1.1.x) is accepted and reaches the service as minor 1; 1.0 as
 * minor 0, so that only a 1.1 client sees generations. */
START_TEST(test_a2a_11_gen_1_version_1_1_accepted_as_minor_1)
{
	const char *v[] = {"HTTP_A2A_VERSION=1.1", "HTTP_A2A_VERSION=1.1.3", "HTTP_A2A_VERSION=1.0",
	                   "HTTP_A2A_VERSION=1.0.2"};
	const int minor[] = {1, 1, 0, 0};
	for (size_t i = 0; i < 4; i++) {
		rec.minor = -1;
		struct resp r = rpc_with_version(v[i]);
		ck_assert_int_eq(r.status, 200);
		ck_assert_ptr_nonnull(jget(r.json, "result"));
		ck_assert_msg(rec.minor == minor[i], "%s reached the service as minor %d", v[i],
		              rec.minor);
		resp_free(&r);
	}
}
END_TEST

START_TEST(test_a2a3_version_1_0_and_patch_accepted)
{
	const char *good[] = {"HTTP_A2A_VERSION=1.0", "HTTP_A2A_VERSION=1.0.1",
	                      "HTTP_A2A_VERSION=1.0.17"};
	for (size_t i = 0; i < 3; i++) {
		struct resp r = rpc_with_version(good[i]);
		ck_assert_int_eq(r.status, 200);
		ck_assert_ptr_nonnull(jget(r.json, "result"));
		resp_free(&r);
	}
	ck_assert_int_eq(rec.calls, 3);
}
END_TEST

START_TEST(test_a2a3_version_query_parameter_accepted)
{
	/* A read may name the version in the query (an EventSource cannot set headers). */
	const char *q[] = {"REQUEST_METHOD=GET", "REQUEST_URI=/tasks/t1?A2A-Version=1.0", NULL};
	struct resp r = run(q, NULL);
	ck_assert_int_eq(r.status, 200);
	ck_assert_int_eq(rec.op, TH_OP_GET_TASK);
	resp_free(&r);
}
END_TEST

/* SEC-4: a request that can change state names A2A-Version in a header; a page on
 * another site can write any URL but cannot set the header without a preflight. */
START_TEST(test_sec4_version_in_query_refused_on_post)
{
	const char *p[] = {"REQUEST_METHOD=POST", "REQUEST_URI=/?A2A-Version=1.0",
	                   "CONTENT_TYPE=application/json", NULL};
	struct resp r = run(p, RPC_BODY("SendMessage", "{}"));
	ck_assert_int_eq(jint(&r, "error.code"), -32009);
	assert_contains(jstr(&r, "error.message"), "header");
	ck_assert_int_eq(rec.calls, 0);
	resp_free(&r);

	const char *c[] = {"REQUEST_METHOD=POST", "REQUEST_URI=/tasks/t1:cancel?A2A-Version=1.0",
	                   "CONTENT_TYPE=application/json", NULL};
	r = run(c, "");
	assert_rest_error(&r, 400, "FAILED_PRECONDITION", "VERSION_NOT_SUPPORTED");
	assert_contains(jstr(&r, "error.message"), "query string");
	ck_assert_int_eq(rec.calls, 0);
	resp_free(&r);

	const char *d[] = {"REQUEST_METHOD=DELETE",
	                   "REQUEST_URI=/tasks/t1/pushNotificationConfigs/c1?A2A-Version=1.0",
	                   NULL};
	r = run(d, NULL);
	assert_rest_error(&r, 400, "FAILED_PRECONDITION", "VERSION_NOT_SUPPORTED");
	ck_assert_int_eq(rec.calls, 0);
	resp_free(&r);
}
END_TEST

START_TEST(test_a2a3_rest_missing_version_is_400_failed_precondition)
{
	const char *p[] = {"REQUEST_METHOD=GET", "REQUEST_URI=/tasks/t1", NULL};
	struct resp r = run(p, NULL);
	assert_rest_error(&r, 400, "FAILED_PRECONDITION", "VERSION_NOT_SUPPORTED");
	assert_contains(jstr(&r, "error.message"), "(none)");
	ck_assert_int_eq(rec.calls, 0);
	resp_free(&r);
}
END_TEST

/* ---- LIM-2: malformed requests ------------------------------------------ */

START_TEST(test_lim2_malformed_json_is_parse_error_with_null_id)
{
	struct resp r = run(RPC_V, "{\"jsonrpc\":\"2.0\",\"id\":1,");
	ck_assert_int_eq(r.status, 200);
	assert_rpc_error(&r, -32700, NULL);
	ck_assert(is_null_id(&r));
	resp_free(&r);

	r = run(RPC_V, "");
	assert_rpc_error(&r, -32700, NULL);
	resp_free(&r);
	ck_assert_int_eq(rec.calls, 0);
}
END_TEST

START_TEST(test_lim2_not_jsonrpc_2_0_is_invalid_request)
{
	struct resp r = run(RPC_V, "{\"jsonrpc\":\"1.0\",\"id\":\"x\",\"method\":\"GetTask\"}");
	assert_rpc_error(&r, -32600, NULL);
	assert_contains(jstr(&r, "error.message"), "\"jsonrpc\"");
	ck_assert_str_eq(jstr(&r, "id"), "x");
	resp_free(&r);

	r = run(RPC_V, "{\"id\":2,\"method\":\"GetTask\"}");
	assert_rpc_error(&r, -32600, NULL);
	resp_free(&r);

	r = run(RPC_V, "\"just a string\"");
	assert_rpc_error(&r, -32600, NULL);
	ck_assert(is_null_id(&r));
	resp_free(&r);
	ck_assert_int_eq(rec.calls, 0);
}
END_TEST

START_TEST(test_lim2_batch_array_refused)
{
	struct resp r = run(RPC_V, "[" RPC_BODY("GetTask", "{}") "]");
	assert_rpc_error(&r, -32600, NULL);
	assert_contains(jstr(&r, "error.message"), "batch");
	ck_assert(is_null_id(&r));
	ck_assert_int_eq(rec.calls, 0);
	resp_free(&r);
}
END_TEST

START_TEST(test_lim2_bad_or_missing_id_refused)
{
	struct resp r = run(RPC_V, "{\"jsonrpc\":\"2.0\",\"method\":\"GetTask\"}");
	assert_rpc_error(&r, -32600, NULL);
	assert_contains(jstr(&r, "error.message"), "\"id\"");
	resp_free(&r);

	r = run(RPC_V, "{\"jsonrpc\":\"2.0\",\"id\":{\"a\":1},\"method\":\"GetTask\"}");
	assert_rpc_error(&r, -32600, NULL);
	ck_assert(is_null_id(&r));
	resp_free(&r);

	r = run(RPC_V, "{\"jsonrpc\":\"2.0\",\"id\":true,\"method\":\"GetTask\"}");
	assert_rpc_error(&r, -32600, NULL);
	resp_free(&r);

	r = run(RPC_V, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":7}");
	assert_rpc_error(&r, -32600, NULL);
	assert_contains(jstr(&r, "error.message"), "\"method\"");
	resp_free(&r);
	ck_assert_int_eq(rec.calls, 0);
}
END_TEST

START_TEST(test_lim2_unknown_method_named)
{
	struct resp r = run(RPC_V, RPC_BODY("message/send", "{}"));
	assert_rpc_error(&r, -32601, NULL);
	assert_contains(jstr(&r, "error.message"), "message/send");
	ck_assert_int_eq(jint(&r, "id"), 1);
	ck_assert_int_eq(rec.calls, 0);
	resp_free(&r);
}
END_TEST

START_TEST(test_lim2_params_not_object_invalid_params)
{
	struct resp r = run(RPC_V, RPC_BODY("GetTask", "[1]"));
	assert_rpc_error(&r, -32602, "INVALID_PARAMS");
	assert_contains(jstr(&r, "error.message"), "\"params\"");
	ck_assert_int_eq(rec.calls, 0);
	resp_free(&r);

	/* params may be absent (GetExtendedAgentCard) or null. */
	r = run(RPC_V, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"GetExtendedAgentCard\"}");
	ck_assert_ptr_nonnull(jget(r.json, "result"));
	ck_assert_str_eq(rec.params, "");
	resp_free(&r);
}
END_TEST

START_TEST(test_lim2_jsonrpc_wrong_content_type)
{
	const char *p[] = {"REQUEST_METHOD=POST", "REQUEST_URI=/", "CONTENT_TYPE=text/plain",
	                   "HTTP_A2A_VERSION=1.0", NULL};
	struct resp r = run(p, RPC_BODY("GetTask", "{}"));
	ck_assert_int_eq(r.status, 200);
	assert_rpc_error(&r, -32005, "CONTENT_TYPE_NOT_SUPPORTED");
	assert_contains(jstr(&r, "error.message"), "text/plain");
	resp_free(&r);

	const char *q[] = {"REQUEST_METHOD=POST", "REQUEST_URI=/", "HTTP_A2A_VERSION=1.0", NULL};
	r = run(q, RPC_BODY("GetTask", "{}"));
	assert_rpc_error(&r, -32005, "CONTENT_TYPE_NOT_SUPPORTED");
	resp_free(&r);
	ck_assert_int_eq(rec.calls, 0);
}
END_TEST

START_TEST(test_lim2_jsonrpc_content_type_variants_accepted)
{
	const char *cts[] = {"CONTENT_TYPE=application/json; charset=utf-8",
	                     "CONTENT_TYPE=application/a2a+json", "CONTENT_TYPE=Application/JSON"};
	for (size_t i = 0; i < 3; i++) {
		const char *p[] = {"REQUEST_METHOD=POST", "REQUEST_URI=/", cts[i],
		                   "HTTP_A2A_VERSION=1.0", NULL};
		struct resp r = run(p, RPC_BODY("GetTask", "{}"));
		ck_assert_msg(jget(r.json, "result") != NULL, "%s refused: %s", cts[i], r.body);
		resp_free(&r);
	}
}
END_TEST

START_TEST(test_lim2_rest_wrong_content_type_is_415)
{
	const char *p[] = {"REQUEST_METHOD=POST", "REQUEST_URI=/message:send",
	                   "CONTENT_TYPE=text/plain", "HTTP_A2A_VERSION=1.0", NULL};
	struct resp r = run(p, "{\"message\":{}}");
	assert_rest_error(&r, 415, "INVALID_ARGUMENT", "CONTENT_TYPE_NOT_SUPPORTED");
	ck_assert_int_eq(rec.calls, 0);
	resp_free(&r);

	/* A body without any Content-Type is refused too. */
	const char *q[] = {"REQUEST_METHOD=POST", "REQUEST_URI=/message:send",
	                   "HTTP_A2A_VERSION=1.0", NULL};
	r = run(q, "{\"message\":{}}");
	assert_rest_error(&r, 415, "INVALID_ARGUMENT", "CONTENT_TYPE_NOT_SUPPORTED");
	resp_free(&r);
}
END_TEST

/* SEC-4: the forged cancel (no body, no Content-Type: what fetch no-cors sends) is
 * refused; the same cancel with a JSON type, as clients send it, runs. */
START_TEST(test_sec4_rest_empty_post_needs_json_content_type)
{
	const char *p[] = {"REQUEST_METHOD=POST", "REQUEST_URI=/tasks/t1:cancel",
	                   "HTTP_A2A_VERSION=1.0", NULL};
	struct resp r = run(p, NULL);
	assert_rest_error(&r, 415, "INVALID_ARGUMENT", "CONTENT_TYPE_NOT_SUPPORTED");
	ck_assert_int_eq(rec.calls, 0);
	resp_free(&r);

	const char *t[] = {"REQUEST_METHOD=POST", "REQUEST_URI=/tasks/t1:cancel",
	                   "HTTP_A2A_VERSION=1.0", "CONTENT_TYPE=text/plain", NULL};
	r = run(t, "");
	assert_rest_error(&r, 415, "INVALID_ARGUMENT", "CONTENT_TYPE_NOT_SUPPORTED");
	ck_assert_int_eq(rec.calls, 0);
	resp_free(&r);

	const char *j[] = {"REQUEST_METHOD=POST", "REQUEST_URI=/tasks/t1:cancel",
	                   "HTTP_A2A_VERSION=1.0", "CONTENT_TYPE=application/json", NULL};
	r = run(j, NULL);
	ck_assert_int_eq(r.status, 200);
	ck_assert_int_eq(rec.op, TH_OP_CANCEL_TASK);
	ck_assert_str_eq(rec.params, "{\"id\":\"t1\"}");
	resp_free(&r);
}
END_TEST

/* SEC-4: Host must be base_url's (DNS rebinding), an Origin must be same-origin or
 * configured; both refusals are 403 naming the header, before any route runs. */
START_TEST(test_sec4_host_and_origin_checked)
{
	set_base("https://agents.example.com/a2a/");
	const char *rebind[] = {"REQUEST_METHOD=GET",
	                        "REQUEST_URI=/a2a/tasks/t1",
	                        "HTTP_A2A_VERSION=1.0",
	                        "HTTP_HOST=rebind.attacker.example",
	                        "HTTP_ORIGIN=http://rebind.attacker.example",
	                        NULL};
	struct resp r = run(rebind, NULL);
	assert_rest_error(&r, 403, "PERMISSION_DENIED", NULL);
	assert_contains(jstr(&r, "error.message"), "Host 'rebind.attacker.example'");
	ck_assert_str_eq(header(&r, "Cache-Control"), "no-store");
	ck_assert_int_eq(rec.calls, 0);
	resp_free(&r);

	const char *card[] = {"REQUEST_METHOD=GET", "REQUEST_URI=/.well-known/agent-card.json",
	                      "HTTP_HOST=rebind.attacker.example", NULL};
	r = run(card, NULL);
	ck_assert_int_eq(r.status, 403);
	resp_free(&r);

	const char *foreign[] = {"REQUEST_METHOD=POST",
	                         "REQUEST_URI=/a2a/",
	                         "CONTENT_TYPE=application/json",
	                         "HTTP_A2A_VERSION=1.0",
	                         "HTTP_HOST=agents.example.com",
	                         "HTTP_ORIGIN=https://evil.example",
	                         NULL};
	r = run(foreign, RPC_BODY("GetTask", "{\"id\":\"t1\"}"));
	assert_rest_error(&r, 403, "PERMISSION_DENIED", NULL);
	assert_contains(jstr(&r, "error.message"), "Origin 'https://evil.example'");
	ck_assert_int_eq(rec.calls, 0);
	resp_free(&r);

	const char *same[] = {"REQUEST_METHOD=POST",
	                      "REQUEST_URI=/a2a/",
	                      "CONTENT_TYPE=application/json",
	                      "HTTP_A2A_VERSION=1.0",
	                      "HTTP_HOST=agents.example.com:443",
	                      "HTTP_ORIGIN=https://Agents.example.com",
	                      NULL};
	r = run(same, RPC_BODY("GetTask", "{\"id\":\"t1\"}"));
	ck_assert_int_eq(r.status, 200);
	ck_assert_ptr_nonnull(jget(r.json, "result"));
	ck_assert_str_eq(header(&r, "Cache-Control"), "no-store");
	resp_free(&r);

	const char *null_origin[] = {"REQUEST_METHOD=GET",   "REQUEST_URI=/a2a/tasks/t1",
	                             "HTTP_A2A_VERSION=1.0", "HTTP_HOST=agents.example.com",
	                             "HTTP_ORIGIN=null",     NULL};
	r = run(null_origin, NULL);
	ck_assert_int_eq(r.status, 403);
	resp_free(&r);

	/* The configured lists open more. */
	struct th_error e;
	ck_assert_int_eq(
	    th_config_set(&cfg, "allowed_hosts", "alias.example, other.example:8443", &e), TH_OK);
	ck_assert_int_eq(th_config_set(&cfg, "allowed_origins", "https://app.example/", &e), TH_OK);
	const char *listed[] = {"REQUEST_METHOD=GET",
	                        "REQUEST_URI=/a2a/tasks/t1",
	                        "HTTP_A2A_VERSION=1.0",
	                        "HTTP_HOST=ALIAS.example:9000",
	                        "HTTP_ORIGIN=https://app.example",
	                        NULL};
	r = run(listed, NULL);
	ck_assert_int_eq(r.status, 200);
	resp_free(&r);
	const char *wrong_port[] = {"REQUEST_METHOD=GET", "REQUEST_URI=/a2a/tasks/t1",
	                            "HTTP_A2A_VERSION=1.0", "HTTP_HOST=other.example:8444", NULL};
	r = run(wrong_port, NULL);
	ck_assert_int_eq(r.status, 403);
	resp_free(&r);
}
END_TEST

/* SEC-4: a loopback base URL (the default) serves any loopback Host on any port, and
 * never a name; a request without Host (not a browser) passes. */
START_TEST(test_sec4_loopback_base_and_no_host)
{
	set_base("http://127.0.0.1:8080/");
	const char *hosts[] = {"HTTP_HOST=127.0.0.1:8080", "HTTP_HOST=localhost:9999",
	                       "HTTP_HOST=[::1]:8080", "HTTP_HOST=127.0.0.2"};
	for (size_t i = 0; i < sizeof hosts / sizeof hosts[0]; i++) {
		const char *p[] = {"REQUEST_METHOD=GET", "REQUEST_URI=/tasks/t1",
		                   "HTTP_A2A_VERSION=1.0", hosts[i], NULL};
		struct resp r = run(p, NULL);
		ck_assert_msg(r.status == 200, "SEC-4 %s: %d %s", hosts[i], r.status, r.body);
		resp_free(&r);
	}
	const char *bad[] = {"HTTP_HOST=127.0.0.1.attacker.example", "HTTP_HOST=localhost.evil",
	                     "HTTP_HOST=evil@127.0.0.1", "HTTP_HOST=127.0.0.1:99999"};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		const char *p[] = {"REQUEST_METHOD=GET", "REQUEST_URI=/tasks/t1",
		                   "HTTP_A2A_VERSION=1.0", bad[i], NULL};
		struct resp r = run(p, NULL);
		ck_assert_msg(r.status == 403, "SEC-4 %s: %d", bad[i], r.status);
		resp_free(&r);
	}
	/* Origin of the loopback page the browser was sent to. */
	const char *o[] = {"REQUEST_METHOD=GET",
	                   "REQUEST_URI=/tasks/t1",
	                   "HTTP_A2A_VERSION=1.0",
	                   "HTTP_HOST=localhost:9999",
	                   "HTTP_ORIGIN=http://localhost:9999",
	                   NULL};
	struct resp r = run(o, NULL);
	ck_assert_int_eq(r.status, 200);
	resp_free(&r);
	const char *o2[] = {"REQUEST_METHOD=GET",
	                    "REQUEST_URI=/tasks/t1",
	                    "HTTP_A2A_VERSION=1.0",
	                    "HTTP_HOST=localhost:9999",
	                    "HTTP_ORIGIN=http://localhost:1234",
	                    NULL};
	r = run(o2, NULL);
	ck_assert_int_eq(r.status, 403);
	resp_free(&r);
}
END_TEST

START_TEST(test_lim2_unknown_rest_route_404)
{
	const char *paths[] = {"REQUEST_URI=/nope",
	                       "REQUEST_URI=/tasks/t1:frobnicate",
	                       "REQUEST_URI=/tasks/t1/other",
	                       "REQUEST_URI=/tasks/",
	                       "REQUEST_URI=/tasks/:cancel",
	                       "REQUEST_URI=/v1/v2/message:send", /* one tenant at most */
	                       "REQUEST_URI=/a.b/message:send",   /* no tenant has a '.' */
	                       "REQUEST_URI=/tasks/tasks/t1",     /* "tasks" is no tenant */
	                       "REQUEST_URI=/tasks/a/pushNotificationConfigs/b/c"};
	for (size_t i = 0; i < sizeof paths / sizeof paths[0]; i++) {
		const char *p[] = {"REQUEST_METHOD=GET", paths[i], "HTTP_A2A_VERSION=1.0", NULL};
		struct resp r = run(p, NULL);
		assert_rest_error(&r, 404, "NOT_FOUND", NULL);
		assert_contains(jstr(&r, "error.message"), paths[i] + strlen("REQUEST_URI="));
		resp_free(&r);
	}
	ck_assert_int_eq(rec.calls, 0);
}
END_TEST

static void assert_405(const char *method, const char *uri, const char *allow)
{
	char m[64], u[128];
	snprintf(m, sizeof m, "REQUEST_METHOD=%s", method);
	snprintf(u, sizeof u, "REQUEST_URI=%s", uri);
	const char *p[] = {m, u, "HTTP_A2A_VERSION=1.0", "CONTENT_TYPE=application/json", NULL};
	struct resp r = run(p, NULL);
	ck_assert_msg(r.status == 405, "%s %s gave %d", method, uri, r.status);
	ck_assert_str_eq(header(&r, "Allow"), allow);
	ck_assert_ptr_nonnull(r.json);
	resp_free(&r);
}

START_TEST(test_lim2_wrong_http_method_405_with_allow)
{
	assert_405("GET", "/", "POST");
	assert_405("PUT", "/message:send", "POST");
	assert_405("GET", "/message:stream", "POST");
	assert_405("DELETE", "/tasks/t1", "GET, HEAD");
	assert_405("POST", "/tasks", "GET, HEAD");
	assert_405("GET", "/tasks/t1:cancel", "POST");
	assert_405("DELETE", "/tasks/t1:subscribe", "GET, POST");
	assert_405("HEAD", "/tasks/t1:subscribe", "GET, POST");
	assert_405("DELETE", "/tasks/t1/pushNotificationConfigs", "GET, HEAD, POST");
	assert_405("POST", "/tasks/t1/pushNotificationConfigs/c1", "GET, HEAD, DELETE");
	assert_405("POST", "/extendedAgentCard", "GET, HEAD");
	assert_405("POST", "/.well-known/agent-card.json", "GET, HEAD");
	ck_assert_int_eq(rec.calls, 0);
}
END_TEST

/* PKG-1: HEAD wherever GET answers one document (RFC 9110 §9.3.2): the same status and headers,
 * Content-Length of the body GET would send, and no body. The card also carries
 * Last-Modified beside its ETag. */
START_TEST(test_pkg1_head_answers_like_get_without_a_body)
{
	const char *g[] = {"REQUEST_METHOD=GET", "REQUEST_URI=/.well-known/agent-card.json", NULL};
	struct resp get = run(g, NULL);
	ck_assert_int_eq(get.status, 200);
	ck_assert_ptr_nonnull(header(&get, "Last-Modified"));
	ck_assert_ptr_nonnull(strstr(header(&get, "Last-Modified"), " GMT"));
	const char *h[] = {"REQUEST_METHOD=HEAD", "REQUEST_URI=/.well-known/agent-card.json", NULL};
	struct resp head = run(h, NULL);
	ck_assert_int_eq(head.status, 200);
	ck_assert_str_eq(header(&head, "Content-Length"), header(&get, "Content-Length"));
	ck_assert_str_eq(header(&head, "ETag"), header(&get, "ETag"));
	ck_assert_str_eq(header(&head, "Last-Modified"), header(&get, "Last-Modified"));
	ck_assert_str_eq(head.body, "");
	resp_free(&get);
	resp_free(&head);

	const char *t[] = {"REQUEST_METHOD=HEAD", "REQUEST_URI=/tasks/t1", "HTTP_A2A_VERSION=1.0",
	                   "HTTP_X_PARTICIPANT_ID=alice", NULL};
	head = run(t, NULL);
	ck_assert_int_eq(head.status, 200);
	ck_assert_int_eq(rec.calls, 1);
	ck_assert_int_eq(rec.op, TH_OP_GET_TASK);
	ck_assert_str_eq(head.body, "");
	ck_assert_int_gt(atoi(header(&head, "Content-Length")), 0);
	resp_free(&head);
}
END_TEST

/* ---- LIM-1: body limit ---------------------------------------------------- */

START_TEST(test_lim1_oversized_jsonrpc_body_413_before_reading)
{
	cfg.lim.max_body = 16;
	const char *p[] = {
	    "REQUEST_METHOD=POST",  "REQUEST_URI=/",     "CONTENT_TYPE=application/json",
	    "HTTP_A2A_VERSION=1.0", "CONTENT_LENGTH=17", NULL};
	/* The carrier fails every read: had the body been read, this would not be 413. */
	struct resp r = run_ex(p, "{\"aaaaaaaaaaaaa\":1}", 1);
	ck_assert_int_eq(r.status, 413);
	ck_assert_uint_eq(r.reads, 0);
	assert_rpc_error(&r, -32600, NULL);
	assert_contains(jstr(&r, "error.message"), "the limit is 16 bytes");
	ck_assert_int_eq(rec.calls, 0);
	resp_free(&r);
}
END_TEST

START_TEST(test_lim1_oversized_rest_body_413_before_reading)
{
	cfg.lim.max_body = 16;
	const char *p[] = {"REQUEST_METHOD=POST",           "REQUEST_URI=/message:send",
	                   "CONTENT_TYPE=application/json", "HTTP_A2A_VERSION=1.0",
	                   "CONTENT_LENGTH=1000000",        NULL};
	struct resp r = run_ex(p, "{}", 1);
	assert_rest_error(&r, 413, "INVALID_ARGUMENT", NULL);
	ck_assert_uint_eq(r.reads, 0);
	assert_contains(jstr(&r, "error.message"), "the limit is 16 bytes");
	ck_assert_int_eq(rec.calls, 0);
	resp_free(&r);
}
END_TEST

START_TEST(test_lim1_json_depth_limit_named)
{
	cfg.lim.json_depth = 4;
	struct resp r = run(RPC_V, RPC_BODY("GetTask", "{\"a\":{\"b\":{\"c\":{\"d\":1}}}}"));
	assert_rpc_error(&r, -32602, "INVALID_PARAMS");
	assert_contains(jstr(&r, "error.message"), "4 levels");
	ck_assert_int_eq(rec.calls, 0);
	resp_free(&r);
}
END_TEST

/* SEC-3: a parked stream keeps the JSON-RPC id's text for every event it sends, so the id
 * obeys max_id (a string) or 64 characters (a number); the refusal names the limit, echoes
 * no id and runs nothing. */
START_TEST(test_sec3_jsonrpc_id_over_max_id_refused)
{
	cfg.lim.max_id = 16;
	struct resp r =
	    run(RPC_V, "{\"jsonrpc\":\"2.0\",\"id\":\"0123456789abcdefX\",\"method\":\"GetTask\","
	               "\"params\":{\"id\":\"t1\"}}");
	assert_rpc_error(&r, -32600, NULL);
	assert_contains(jstr(&r, "error.message"), "17 bytes; the limit is 16 (max_id)");
	ck_assert(is_null_id(&r));
	ck_assert_int_eq(rec.calls, 0);
	resp_free(&r);

	char body[300];
	char digits[80];
	memset(digits, '7', 70);
	digits[70] = '\0';
	snprintf(body, sizeof body,
	         "{\"jsonrpc\":\"2.0\",\"id\":%s.5,\"method\":\"GetTask\","
	         "\"params\":{\"id\":\"t1\"}}",
	         digits);
	r = run(RPC_V, body);
	assert_rpc_error(&r, -32600, NULL);
	assert_contains(jstr(&r, "error.message"), "the limit is 64");
	ck_assert_int_eq(rec.calls, 0);
	resp_free(&r);

	/* At the limit the request runs and the id comes back as it was. */
	r = run(RPC_V, "{\"jsonrpc\":\"2.0\",\"id\":\"0123456789abcdef\",\"method\":\"GetTask\","
	               "\"params\":{\"id\":\"t1\"}}");
	ck_assert_int_eq(rec.calls, 1);
	ck_assert_str_eq(jstr(&r, "id"), "0123456789abcdef");
	resp_free(&r);
}
END_TEST

START_TEST(test_lim1_short_body_refused)
{
	const char *p[] = {
	    "REQUEST_METHOD=POST",  "REQUEST_URI=/",      "CONTENT_TYPE=application/json",
	    "HTTP_A2A_VERSION=1.0", "CONTENT_LENGTH=100", NULL};
	struct resp r = run(p, "{}");
	assert_rpc_error(&r, -32600, NULL);
	ck_assert_int_eq(rec.calls, 0);
	resp_free(&r);
}
END_TEST

/* ---- EXT-1 / EXT-2 ------------------------------------------------------ */

START_TEST(test_ext1_unknown_extension_refused_naming_it)
{
	const char *p[] = {"REQUEST_METHOD=POST",
	                   "REQUEST_URI=/",
	                   "CONTENT_TYPE=application/json",
	                   "HTTP_A2A_VERSION=1.0",
	                   "HTTP_A2A_EXTENSIONS=" TH_EXT_URI_TASK ", https://example.com/ext/x/v1",
	                   NULL};
	struct resp r = run(p, RPC_BODY("SendMessage", "{}"));
	assert_rpc_error(&r, -32004, "UNSUPPORTED_OPERATION");
	assert_contains(jstr(&r, "error.message"), "https://example.com/ext/x/v1");
	ck_assert_int_eq(rec.calls, 0);
	ck_assert_ptr_null(header(&r, "A2A-Extensions"));
	resp_free(&r);

	const char *q[] = {"REQUEST_METHOD=GET", "REQUEST_URI=/tasks/t1", "HTTP_A2A_VERSION=1.0",
	                   "HTTP_A2A_EXTENSIONS=urn:nope", NULL};
	r = run(q, NULL);
	assert_rest_error(&r, 400, "FAILED_PRECONDITION", "UNSUPPORTED_OPERATION");
	assert_contains(jstr(&r, "error.message"), "urn:nope");
	ck_assert_int_eq(rec.calls, 0);
	resp_free(&r);
}
END_TEST

START_TEST(test_ext2_activated_extensions_echoed)
{
	const char *p[] = {"REQUEST_METHOD=POST",
	                   "REQUEST_URI=/",
	                   "CONTENT_TYPE=application/json",
	                   "HTTP_A2A_VERSION=1.0",
	                   "HTTP_A2A_EXTENSIONS=" TH_EXT_URI_STATUS " , " TH_EXT_URI_TASK
	                   "," TH_EXT_URI_TASK,
	                   NULL};
	struct resp r = run(p, RPC_BODY("SendMessage", "{}"));
	ck_assert_ptr_nonnull(jget(r.json, "result"));
	ck_assert_str_eq(header(&r, "A2A-Extensions"), TH_EXT_URI_TASK "," TH_EXT_URI_STATUS);
	ck_assert_uint_eq(rec.extensions, TH_EXT_TASK | TH_EXT_STATUS);
	resp_free(&r);

	/* Echoed on errors from the service too, and on REST. */
	rec.fail = TH_ENOTFOUND;
	const char *q[] = {"REQUEST_METHOD=GET", "REQUEST_URI=/tasks/t1", "HTTP_A2A_VERSION=1.0",
	                   "HTTP_A2A_EXTENSIONS=" TH_EXT_URI_A2UI, NULL};
	r = run(q, NULL);
	ck_assert_int_eq(r.status, 404);
	ck_assert_str_eq(header(&r, "A2A-Extensions"), TH_EXT_URI_A2UI);
	resp_free(&r);
}
END_TEST

START_TEST(test_ext2_no_header_when_none_activated)
{
	struct resp r = run(RPC_V, RPC_BODY("SendMessage", "{}"));
	ck_assert_ptr_null(header(&r, "A2A-Extensions"));
	ck_assert_uint_eq(rec.extensions, 0);
	resp_free(&r);
}
END_TEST

/* ---- CARD-1 --------------------------------------------------------------- */

START_TEST(test_card1_served_without_version_or_participant)
{
	const char *p[] = {"REQUEST_METHOD=GET", "REQUEST_URI=/.well-known/agent-card.json", NULL};
	struct resp r = run(p, NULL);
	ck_assert_int_eq(r.status, 200);
	ck_assert_str_eq(header(&r, "Content-Type"), "application/json");
	ck_assert_str_eq(header(&r, "Cache-Control"), "public, max-age=300");
	ck_assert_str_eq(r.body, th_json_text(app.card));
	const char *etag = header(&r, "ETag");
	ck_assert_ptr_nonnull(etag);
	ck_assert_uint_eq(strlen(etag), 18);
	ck_assert_int_eq(etag[0], '"');
	ck_assert_int_eq(rec.calls, 0);
	resp_free(&r);
}
END_TEST

START_TEST(test_card1_etag_if_none_match_304)
{
	const char *p[] = {"REQUEST_METHOD=GET", "REQUEST_URI=/.well-known/agent-card.json", NULL};
	struct resp r = run(p, NULL);
	char etag[64], inm[128], weak[128], list[160];
	snprintf(etag, sizeof etag, "%s", header(&r, "ETag"));
	resp_free(&r);
	snprintf(inm, sizeof inm, "HTTP_IF_NONE_MATCH=%s", etag);
	snprintf(weak, sizeof weak, "HTTP_IF_NONE_MATCH=W/%s", etag);
	snprintf(list, sizeof list, "HTTP_IF_NONE_MATCH=\"other\", %s", etag);
	const char *variants[] = {inm, weak, list, "HTTP_IF_NONE_MATCH=*"};
	for (size_t i = 0; i < 4; i++) {
		const char *q[] = {"REQUEST_METHOD=GET", "REQUEST_URI=/.well-known/agent-card.json",
		                   variants[i], NULL};
		r = run(q, NULL);
		ck_assert_msg(r.status == 304, "%s gave %d", variants[i], r.status);
		ck_assert_str_eq(r.body, "");
		ck_assert_str_eq(header(&r, "ETag"), etag);
		resp_free(&r);
	}
	const char *q[] = {"REQUEST_METHOD=GET", "REQUEST_URI=/.well-known/agent-card.json",
	                   "HTTP_IF_NONE_MATCH=\"stale\"", NULL};
	r = run(q, NULL);
	ck_assert_int_eq(r.status, 200);
	resp_free(&r);

	/* A different card gives a different tag. */
	json_object_object_add(app.card, "name", json_object_new_string("changed"));
	free(app.card_text);
	app.card_text = NULL;
	r = run(p, NULL);
	ck_assert_str_ne(header(&r, "ETag"), etag);
	resp_free(&r);
}
END_TEST

START_TEST(test_card1_at_origin_root_and_under_base_path)
{
	set_base("http://h/a2a/");
	const char *uris[] = {"REQUEST_URI=/.well-known/agent-card.json",
	                      "REQUEST_URI=/a2a/.well-known/agent-card.json"};
	for (size_t i = 0; i < 2; i++) {
		const char *p[] = {"REQUEST_METHOD=GET", uris[i], NULL};
		struct resp r = run(p, NULL);
		ck_assert_int_eq(r.status, 200);
		ck_assert_str_eq(r.body, th_json_text(app.card));
		resp_free(&r);
	}
}
END_TEST

START_TEST(test_a2a1_routes_relative_to_base_path)
{
	set_base("http://h/a2a/");
	const char *p[] = {"REQUEST_METHOD=GET", "REQUEST_URI=/a2a/tasks/t9",
	                   "HTTP_A2A_VERSION=1.0", NULL};
	struct resp r = run(p, NULL);
	ck_assert_int_eq(r.status, 200);
	ck_assert_str_eq(rec.params, "{\"id\":\"t9\"}");
	resp_free(&r);

	const char *q[] = {"REQUEST_METHOD=POST", "REQUEST_URI=/a2a",
	                   "CONTENT_TYPE=application/json", "HTTP_A2A_VERSION=1.0", NULL};
	r = run(q, RPC_BODY("GetTask", "{\"id\":\"t2\"}"));
	ck_assert_ptr_nonnull(jget(r.json, "result"));
	resp_free(&r);

	/* Outside the base path nothing but the card is served. */
	const char *o[] = {"REQUEST_METHOD=GET", "REQUEST_URI=/tasks/t9", "HTTP_A2A_VERSION=1.0",
	                   NULL};
	r = run(o, NULL);
	assert_rest_error(&r, 404, "NOT_FOUND", NULL);
	resp_free(&r);
	const char *root[] = {"REQUEST_METHOD=POST", "REQUEST_URI=/",
	                      "CONTENT_TYPE=application/json", "HTTP_A2A_VERSION=1.0", NULL};
	r = run(root, RPC_BODY("GetTask", "{}"));
	ck_assert_int_eq(r.status, 404);
	resp_free(&r);
	ck_assert_int_eq(rec.calls, 2);
}
END_TEST

/* ---- A2A-1: what each route hands the service ---------------------------- */

static void assert_rest_call(const char *method, const char *uri, const char *body, int op,
                             const char *params)
{
	char m[64], u[256];
	snprintf(m, sizeof m, "REQUEST_METHOD=%s", method);
	snprintf(u, sizeof u, "REQUEST_URI=%s", uri);
	const char *p[] = {m, u, "HTTP_A2A_VERSION=1.0", "CONTENT_TYPE=application/json", NULL};
	rec.calls = 0;
	struct resp r = run(p, body);
	ck_assert_msg(r.status == 200, "%s %s gave %d: %s", method, uri, r.status, r.body);
	ck_assert_int_eq(rec.calls, 1);
	ck_assert_msg(rec.op == op, "%s %s ran op %d", method, uri, rec.op);
	ck_assert_str_eq(rec.params, params);
	resp_free(&r);
}

START_TEST(test_a2a1_rest_routes_build_params)
{
	assert_rest_call("POST", "/message:send", "{\"message\":{\"messageId\":\"m\"}}",
	                 TH_OP_SEND_MESSAGE, "{\"message\":{\"messageId\":\"m\"}}");
	assert_rest_call("POST", "/message:stream", "{\"message\":{}}",
	                 TH_OP_SEND_STREAMING_MESSAGE, "{\"message\":{}}");
	assert_rest_call("GET", "/tasks/a%2Fb%3Ac?historyLength=3", NULL, TH_OP_GET_TASK,
	                 "{\"id\":\"a/b:c\",\"historyLength\":\"3\"}");
	assert_rest_call(
	    "GET",
	    "/tasks?contextId=c%201&status=TASK_STATE_WORKING&page_size=5"
	    "&pageToken=x&historyLength=0&statusTimestampAfter=2026-01-01T00:00:00Z"
	    "&includeArtifacts=true&other=1",
	    NULL, TH_OP_LIST_TASKS,
	    "{\"contextId\":\"c 1\",\"status\":\"TASK_STATE_WORKING\",\"pageSize\":\"5\","
	    "\"pageToken\":\"x\",\"historyLength\":\"0\","
	    "\"statusTimestampAfter\":\"2026-01-01T00:00:00Z\","
	    "\"includeArtifacts\":\"true\"}");
	assert_rest_call("GET", "/tasks", NULL, TH_OP_LIST_TASKS, "{}");
	assert_rest_call("POST", "/tasks/t1:cancel", "{\"id\":\"other\",\"metadata\":{\"k\":1}}",
	                 TH_OP_CANCEL_TASK, "{\"id\":\"t1\",\"metadata\":{\"k\":1}}");
	assert_rest_call("POST", "/tasks/t1:cancel", "null", TH_OP_CANCEL_TASK, "{\"id\":\"t1\"}");
	assert_rest_call("POST", "/tasks/t1:cancel", "{}", TH_OP_CANCEL_TASK, "{\"id\":\"t1\"}");
	assert_rest_call("GET", "/tasks/t1:subscribe", NULL, TH_OP_SUBSCRIBE_TO_TASK,
	                 "{\"id\":\"t1\"}");
	assert_rest_call("POST", "/tasks/t1:subscribe", NULL, TH_OP_SUBSCRIBE_TO_TASK,
	                 "{\"id\":\"t1\"}");
	assert_rest_call("POST", "/tasks/t1/pushNotificationConfigs",
	                 "{\"taskId\":\"x\",\"url\":\"https://cb\"}", TH_OP_CREATE_PUSH_CONFIG,
	                 "{\"taskId\":\"t1\",\"url\":\"https://cb\"}");
	assert_rest_call("GET", "/tasks/t1/pushNotificationConfigs?pageSize=2", NULL,
	                 TH_OP_LIST_PUSH_CONFIGS, "{\"taskId\":\"t1\",\"pageSize\":\"2\"}");
	assert_rest_call("GET", "/tasks/t1/pushNotificationConfigs/c%201", NULL,
	                 TH_OP_GET_PUSH_CONFIG, "{\"taskId\":\"t1\",\"id\":\"c 1\"}");
	assert_rest_call("DELETE", "/tasks/t1/pushNotificationConfigs/c1", NULL,
	                 TH_OP_DELETE_PUSH_CONFIG, "{\"taskId\":\"t1\",\"id\":\"c1\"}");
	assert_rest_call("GET", "/extendedAgentCard", NULL, TH_OP_GET_EXTENDED_CARD, "{}");
}
END_TEST

START_TEST(test_a2a1_rest_bad_values_are_invalid_params)
{
	const char *bad[][3] = {
	    {"GET", "/tasks/a%zz", NULL},          {"GET", "/tasks/a%00b", NULL},
	    {"GET", "/tasks?pageSize=%G0", NULL},  {"POST", "/tasks/t1:cancel", "[1]"},
	    {"POST", "/message:send", "\"text\""},
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		char m[64], u[128];
		snprintf(m, sizeof m, "REQUEST_METHOD=%s", bad[i][0]);
		snprintf(u, sizeof u, "REQUEST_URI=%s", bad[i][1]);
		const char *p[] = {m, u, "HTTP_A2A_VERSION=1.0", "CONTENT_TYPE=application/json",
		                   NULL};
		struct resp r = run(p, bad[i][2]);
		assert_rest_error(&r, 400, "INVALID_ARGUMENT", "INVALID_PARAMS");
		resp_free(&r);
	}
	const char *p[] = {"REQUEST_METHOD=POST", "REQUEST_URI=/message:send",
	                   "HTTP_A2A_VERSION=1.0", "CONTENT_TYPE=application/json", NULL};
	struct resp r = run(p, "{\"message\":");
	assert_rest_error(&r, 400, "INVALID_ARGUMENT", NULL);
	resp_free(&r);
	ck_assert_int_eq(rec.calls, 0);
}
END_TEST

START_TEST(test_a2a1_rest_success_shape)
{
	rec.answer = "{\"task\":{\"id\":\"t1\"}}";
	const char *p[] = {"REQUEST_METHOD=POST", "REQUEST_URI=/message:send",
	                   "HTTP_A2A_VERSION=1.0", "CONTENT_TYPE=application/a2a+json", NULL};
	struct resp r = run(p, "{\"message\":{}}");
	ck_assert_int_eq(r.status, 200);
	ck_assert_str_eq(header(&r, "Content-Type"), "application/a2a+json");
	ck_assert_str_eq(r.body, "{\"task\":{\"id\":\"t1\"}}");
	resp_free(&r);

	rec.answer = NULL;
	const char *q[] = {"REQUEST_METHOD=DELETE",
	                   "REQUEST_URI=/tasks/t1/pushNotificationConfigs/c",
	                   "HTTP_A2A_VERSION=1.0", NULL};
	r = run(q, NULL);
	ck_assert_int_eq(r.status, 200);
	ck_assert_str_eq(r.body, "{}");
	resp_free(&r);
}
END_TEST

START_TEST(test_a2a1_jsonrpc_success_echoes_id_and_type)
{
	rec.answer = "{\"task\":{\"id\":\"t1\"}}";
	struct resp r = run(RPC_V, "{\"jsonrpc\":\"2.0\",\"id\":\"abc\",\"method\":\"SendMessage\","
	                           "\"params\":{\"message\":{}}}");
	ck_assert_int_eq(r.status, 200);
	ck_assert_str_eq(header(&r, "Content-Type"), "application/json");
	ck_assert_str_eq(
	    r.body, "{\"jsonrpc\":\"2.0\",\"id\":\"abc\",\"result\":{\"task\":{\"id\":\"t1\"}}}");
	ck_assert_int_eq(rec.op, TH_OP_SEND_MESSAGE);
	ck_assert_str_eq(rec.params, "{\"message\":{}}");
	resp_free(&r);

	r = run(RPC_V, "{\"jsonrpc\":\"2.0\",\"id\":42,\"method\":\"GetTask\",\"params\":{}}");
	assert_contains(r.body, "\"id\":42,");
	resp_free(&r);
	r = run(RPC_V, "{\"jsonrpc\":\"2.0\",\"id\":null,\"method\":\"GetTask\"}");
	assert_contains(r.body, "\"id\":null,");
	resp_free(&r);
	r = run(RPC_V, "{\"jsonrpc\":\"2.0\",\"id\":1.5,\"method\":\"GetTask\"}");
	assert_contains(r.body, "\"id\":1.5,");
	resp_free(&r);

	/* Delete answers Empty: result null. */
	rec.answer = NULL;
	r = run(RPC_V,
	        RPC_BODY("DeleteTaskPushNotificationConfig", "{\"taskId\":\"t\",\"id\":\"c\"}"));
	ck_assert_str_eq(r.body, "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":null}");
	resp_free(&r);
}
END_TEST

/* ---- A2A-4: error shapes ---------------------------------------------------- */

START_TEST(test_a2a4_service_errors_both_bindings)
{
	rec.fail = TH_ENOTFOUND;
	rec.fail_msg = "task t1 not found";
	rec.fail_task = "t1";
	struct resp r = run(RPC_V, RPC_BODY("GetTask", "{\"id\":\"t1\"}"));
	ck_assert_int_eq(r.status, 200);
	assert_rpc_error(&r, -32001, "TASK_NOT_FOUND");
	ck_assert_str_eq(jstr(&r, "error.message"), "task t1 not found");
	ck_assert_str_eq(jstr(&r, "error.data.0.metadata.taskId"), "t1");
	ck_assert_int_eq(jint(&r, "id"), 1);
	resp_free(&r);

	const char *p[] = {"REQUEST_METHOD=GET", "REQUEST_URI=/tasks/t1", "HTTP_A2A_VERSION=1.0",
	                   NULL};
	r = run(p, NULL);
	assert_rest_error(&r, 404, "NOT_FOUND", "TASK_NOT_FOUND");
	ck_assert_str_eq(jstr(&r, "error.message"), "task t1 not found");
	ck_assert_str_eq(jstr(&r, "error.details.0.metadata.taskId"), "t1");
	resp_free(&r);

	/* No task id, no metadata. */
	rec.fail = TH_ENOTCANCELABLE;
	rec.fail_task = NULL;
	r = run(p, NULL);
	assert_rest_error(&r, 400, "FAILED_PRECONDITION", "TASK_NOT_CANCELABLE");
	ck_assert_ptr_null(jget(r.json, "error.details.0.metadata"));
	resp_free(&r);

	rec.fail = TH_EINTERNAL;
	r = run(p, NULL);
	assert_rest_error(&r, 500, "INTERNAL", NULL);
	ck_assert_ptr_null(jget(r.json, "error.details"));
	resp_free(&r);
}
END_TEST

START_TEST(test_a2a4_busy_says_retry)
{
	rec.fail = TH_EBUSY;
	rec.fail_msg = "database is locked";
	const char *p[] = {"REQUEST_METHOD=GET", "REQUEST_URI=/tasks/t1", "HTTP_A2A_VERSION=1.0",
	                   NULL};
	struct resp r = run(p, NULL);
	assert_rest_error(&r, 503, "UNAVAILABLE", NULL);
	ck_assert_str_eq(header(&r, "Retry-After"), "1");
	assert_contains(jstr(&r, "error.message"), "retry");
	resp_free(&r);

	r = run(RPC_V, RPC_BODY("GetTask", "{}"));
	assert_rpc_error(&r, -32603, NULL);
	assert_contains(jstr(&r, "error.message"), "retry");
	resp_free(&r);
}
END_TEST

/* STREAM-6: a worker at stream_max refuses a stream before anything runs. */
static int full_room(void *impl, const char *participant)
{
	(void)impl;
	(void)participant;
	return TH_PARKER_FULL;
}

static int never_take(void *impl, struct th_bind_parked *p)
{
	(void)impl;
	(void)p;
	ck_abort_msg("a refused stream was handed over");
	return -1;
}

START_TEST(test_stream6_stream_at_stream_max_is_503_with_retry_after_and_runs_nothing)
{
	struct th_parker full = {NULL, full_room, never_take, NULL};
	app.parker = &full;
	struct resp r = run(RPC_V, RPC_BODY("SubscribeToTask", "{\"id\":\"t1\"}"));
	ck_assert_int_eq(r.status, 503);
	ck_assert_str_eq(header(&r, "Retry-After"), "1");
	assert_rpc_error(&r, -32603, NULL);
	assert_contains(jstr(&r, "error.message"), "stream_max");
	ck_assert_int_eq(rec.calls, 0);
	resp_free(&r);

	const char *p[] = {"REQUEST_METHOD=GET", "REQUEST_URI=/tasks/t1:subscribe",
	                   "HTTP_A2A_VERSION=1.0", NULL};
	r = run(p, NULL);
	assert_rest_error(&r, 503, "UNAVAILABLE", NULL);
	ck_assert_str_eq(header(&r, "Retry-After"), "1");
	assert_contains(jstr(&r, "error.message"), "stream_max");
	ck_assert_int_eq(rec.calls, 0);
	resp_free(&r);

	/* Ordinary requests are not limited by it. */
	r = run(RPC_V, RPC_BODY("GetTask", "{\"id\":\"t1\"}"));
	ck_assert_int_eq(r.status, 200);
	ck_assert_int_eq(rec.calls, 1);
	resp_free(&r);
	app.parker = NULL;
}
END_TEST

/* SEC-3: a participant at stream_max_per_participant gets 429 with Retry-After on both
 * bindings, naming the key; nothing runs. */
static int mine_room(void *impl, const char *participant)
{
	(void)impl;
	return participant != NULL && strcmp(participant, "alice") == 0 ? TH_PARKER_MINE
	                                                                : TH_PARKER_FULL;
}

START_TEST(test_sec3_stream_over_participant_cap_is_429_with_retry_after)
{
	struct th_parker mine = {NULL, mine_room, never_take, NULL};
	app.parker = &mine;
	const char *p[] = {"REQUEST_METHOD=POST",           "REQUEST_URI=/",
	                   "CONTENT_TYPE=application/json", "HTTP_A2A_VERSION=1.0",
	                   "HTTP_X_PARTICIPANT_ID=alice",   NULL};
	struct resp r = run(p, RPC_BODY("SubscribeToTask", "{\"id\":\"t1\"}"));
	ck_assert_int_eq(r.status, 429);
	ck_assert_str_eq(header(&r, "Retry-After"), "1");
	assert_contains(jstr(&r, "error.message"), "stream_max_per_participant");
	ck_assert_int_eq(rec.calls, 0);
	resp_free(&r);
	const char *q[] = {"REQUEST_METHOD=GET", "REQUEST_URI=/tasks/t1:subscribe",
	                   "HTTP_A2A_VERSION=1.0", "HTTP_X_PARTICIPANT_ID=alice", NULL};
	r = run(q, NULL);
	assert_rest_error(&r, 429, "RESOURCE_EXHAUSTED", NULL);
	ck_assert_str_eq(header(&r, "Retry-After"), "1");
	ck_assert_int_eq(rec.calls, 0);
	resp_free(&r);
	app.parker = NULL;
}
END_TEST

/* SEC-3: with rate_limit_rps the burst passes, the next request gets 429 with
 * Retry-After naming the key, and another participant is not affected. */
START_TEST(test_sec3_rate_limit_is_429_with_retry_after)
{
	th_rate_reset();
	cfg.rate_limit_rps = 1;
	cfg.rate_limit_burst = 3;
	const char *p[] = {"REQUEST_METHOD=GET", "REQUEST_URI=/tasks/t1", "HTTP_A2A_VERSION=1.0",
	                   "HTTP_X_PARTICIPANT_ID=alice", NULL};
	for (int i = 0; i < 3; i++) {
		struct resp r = run(p, NULL);
		ck_assert_int_eq(r.status, 200);
		resp_free(&r);
	}
	struct resp r = run(p, NULL);
	assert_rest_error(&r, 429, "RESOURCE_EXHAUSTED", NULL);
	ck_assert_str_eq(header(&r, "Retry-After"), "1");
	assert_contains(jstr(&r, "error.message"), "rate_limit_rps");
	ck_assert_int_eq(rec.calls, 3);
	resp_free(&r);
	r = run(RPC_V, RPC_BODY("GetTask", "{\"id\":\"t1\"}"));
	ck_assert_int_eq(r.status, 200); /* no participant: counted by address, not alice */
	resp_free(&r);
	const char *q[] = {"REQUEST_METHOD=POST",           "REQUEST_URI=/",
	                   "CONTENT_TYPE=application/json", "HTTP_A2A_VERSION=1.0",
	                   "HTTP_X_PARTICIPANT_ID=alice",   NULL};
	r = run(q, RPC_BODY("GetTask", "{\"id\":\"t1\"}"));
	ck_assert_int_eq(r.status, 429);
	ck_assert_str_eq(header(&r, "Retry-After"), "1");
	assert_rpc_error(&r, -32603, NULL);
	resp_free(&r);
	th_rate_reset();
}
END_TEST

START_TEST(test_a2a4_error_table)
{
	static const struct {
		th_err code;
		int rpc, http;
		const char *grpc, *reason;
	} t[] = {
	    {TH_EPARSE, -32700, 400, "INVALID_ARGUMENT", ""},
	    {TH_EINVALREQ, -32600, 400, "INVALID_ARGUMENT", ""},
	    {TH_ENOMETHOD, -32601, 404, "NOT_FOUND", ""},
	    {TH_EINVAL, -32602, 400, "INVALID_ARGUMENT", "INVALID_PARAMS"},
	    {TH_EINTERNAL, -32603, 500, "INTERNAL", ""},
	    {TH_ENOMEM, -32603, 500, "INTERNAL", ""},
	    {TH_ENOTFOUND, -32001, 404, "NOT_FOUND", "TASK_NOT_FOUND"},
	    {TH_ENOTCANCELABLE, -32002, 400, "FAILED_PRECONDITION", "TASK_NOT_CANCELABLE"},
	    {TH_EPUSHUNSUPPORTED, -32003, 400, "FAILED_PRECONDITION",
	     "PUSH_NOTIFICATION_NOT_SUPPORTED"},
	    {TH_EUNSUPPORTED, -32004, 400, "FAILED_PRECONDITION", "UNSUPPORTED_OPERATION"},
	    {TH_ECONTENTTYPE, -32005, 400, "INVALID_ARGUMENT", "CONTENT_TYPE_NOT_SUPPORTED"},
	    {TH_EEXTCARD, -32007, 400, "FAILED_PRECONDITION", "EXTENDED_AGENT_CARD_NOT_CONFIGURED"},
	    {TH_EEXTREQUIRED, -32008, 400, "FAILED_PRECONDITION", "EXTENSION_SUPPORT_REQUIRED"},
	    {TH_EVERSION, -32009, 400, "FAILED_PRECONDITION", "VERSION_NOT_SUPPORTED"},
	    /* A2A-11-GEN-5: TaskGenerationMismatchError of the 1.1 draft. */
	    {TH_EGENERATION, -32010, 409, "ABORTED", "TASK_GENERATION_MISMATCH"},
	    {TH_EBUSY, -32603, 503, "UNAVAILABLE", ""},
	    {TH_ETOOLARGE, -32600, 413, "INVALID_ARGUMENT", ""},
	    {TH_EMETHOD, -32600, 405, "UNIMPLEMENTED", ""},
	};
	for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
		ck_assert_msg(th_bind_rpc_code(t[i].code) == t[i].rpc, "%s",
		              th_err_name(t[i].code));
		ck_assert_msg(th_bind_http_status(t[i].code) == t[i].http, "%s",
		              th_err_name(t[i].code));
		ck_assert_str_eq(th_bind_grpc_status(t[i].code), t[i].grpc);
		ck_assert_str_eq(th_bind_reason(t[i].code), t[i].reason);
	}
	/* Out of range never crashes and reads as internal. */
	ck_assert_int_eq(th_bind_rpc_code((th_err)999), -32603);
}
END_TEST

/* ---- ID-1 --------------------------------------------------------------------- */

START_TEST(test_id1_participant_from_header)
{
	const char *p[] = {"REQUEST_METHOD=GET",   "REQUEST_URI=/tasks/t1",
	                   "HTTP_A2A_VERSION=1.0", "HTTP_X_PARTICIPANT_ID=alice",
	                   "REMOTE_USER=bob",      NULL};
	struct resp r = run(p, NULL);
	ck_assert_int_eq(rec.has_participant, 1);
	ck_assert_str_eq(rec.participant, "alice");
	resp_free(&r);

	const char *q[] = {"REQUEST_METHOD=GET", "REQUEST_URI=/tasks/t1", "HTTP_A2A_VERSION=1.0",
	                   "HTTP_X_PARTICIPANT_ID=", NULL};
	r = run(q, NULL);
	ck_assert_int_eq(rec.calls, 2);
	ck_assert_int_eq(rec.has_participant, 0);
	resp_free(&r);
}
END_TEST

/* ID-6: the agent's own id and an id over max_id are refused as senders, and the
 * operation never runs. */
START_TEST(test_id6_agent_id_and_overlong_participant_are_refused)
{
	const char *p[] = {"REQUEST_METHOD=GET", "REQUEST_URI=/tasks/t1", "HTTP_A2A_VERSION=1.0",
	                   "HTTP_X_PARTICIPANT_ID=tiny-harness", NULL};
	struct resp r = run(p, NULL);
	assert_rest_error(&r, 400, "INVALID_ARGUMENT", NULL);
	assert_contains(jstr(&r, "error.message"), "agent's own id");
	ck_assert_int_eq(rec.calls, 0);
	resp_free(&r);

	char hdr[6000];
	int n = snprintf(hdr, sizeof hdr, "HTTP_X_PARTICIPANT_ID=");
	memset(hdr + n, 'p', 5000);
	hdr[n + 5000] = '\0';
	const char *q[] = {"REQUEST_METHOD=GET", "REQUEST_URI=/tasks/t1", "HTTP_A2A_VERSION=1.0",
	                   hdr, NULL};
	r = run(q, NULL);
	assert_rest_error(&r, 400, "INVALID_ARGUMENT", NULL);
	assert_contains(jstr(&r, "error.message"), "max_id");
	ck_assert_int_eq(rec.calls, 0);
	resp_free(&r);

	/* The id rule: one word, UTF-8, no control characters. */
	static const char *const bad[][2] = {
	    {"HTTP_X_PARTICIPANT_ID=bob smith", "X-Participant-Id contains white space (byte 3)"},
	    {"HTTP_X_PARTICIPANT_ID=bob\x7f", "X-Participant-Id contains a control character"},
	    {"HTTP_X_PARTICIPANT_ID=b\xf6"
	     "b",
	     "X-Participant-Id is not UTF-8 (byte 1)"},
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		const char *b[] = {"REQUEST_METHOD=GET", "REQUEST_URI=/tasks/t1",
		                   "HTTP_A2A_VERSION=1.0", bad[i][0], NULL};
		r = run(b, NULL);
		assert_rest_error(&r, 400, "INVALID_ARGUMENT", NULL);
		assert_contains(jstr(&r, "error.message"), bad[i][1]);
		ck_assert_int_eq(rec.calls, 0);
		resp_free(&r);
	}
}
END_TEST

/* PKG-5: with anonymous_participant set, a request without X-Participant-Id acts as
 * that participant (header identity only); a sent header still wins. */
START_TEST(test_pkg5_anonymous_participant_is_opt_in)
{
	const char *p[] = {"REQUEST_METHOD=GET", "REQUEST_URI=/tasks/t1", "HTTP_A2A_VERSION=1.0",
	                   NULL};
	struct resp r = run(p, NULL);
	ck_assert_int_eq(rec.calls, 1);
	ck_assert_int_eq(rec.has_participant, 0); /* the service refuses it (ID-3) */
	resp_free(&r);
	char guest[] = "guest", *saved = cfg.anonymous_participant;
	cfg.anonymous_participant = guest;
	r = run(p, NULL);
	ck_assert_int_eq(r.status, 200);
	ck_assert_int_eq(rec.has_participant, 1);
	ck_assert_str_eq(rec.participant, "guest");
	resp_free(&r);
	const char *q[] = {"REQUEST_METHOD=GET", "REQUEST_URI=/tasks/t1", "HTTP_A2A_VERSION=1.0",
	                   "HTTP_X_PARTICIPANT_ID=alice", NULL};
	r = run(q, NULL);
	ck_assert_str_eq(rec.participant, "alice");
	resp_free(&r);
	cfg.identity = TH_IDENTITY_REMOTE_USER;
	r = run(p, NULL);
	ck_assert_int_eq(rec.has_participant, 0);
	resp_free(&r);
	cfg.anonymous_participant = saved;
}
END_TEST

/* SEC-1: the header mode believes X-Participant-Id only from loopback or a peer in
 * trusted_proxies (REMOTE_ADDR as the web server saw it); everyone else gets 403 naming
 * the setting, before the service runs. remote_user mode does not look at the peer. */
START_TEST(test_sec1_id1_header_mode_serves_only_loopback_and_trusted_proxies)
{
	static const char *const peers[][2] = {
	    {"REMOTE_ADDR=127.0.0.1", "200"},   {"REMOTE_ADDR=127.8.9.10", "200"},
	    {"REMOTE_ADDR=::1", "200"},         {"REMOTE_ADDR=::ffff:127.0.0.1", "200"},
	    {"REMOTE_ADDR=203.0.113.7", "403"}, {"REMOTE_ADDR=10.0.0.5", "403"},
	    {"REMOTE_ADDR=2001:db8::7", "403"}, {"REMOTE_ADDR=", "403"},
	    {"REMOTE_ADDR=localhost", "403"}};
	for (size_t i = 0; i < sizeof peers / sizeof peers[0]; i++) {
		const char *p[] = {"REQUEST_METHOD=GET",
		                   "REQUEST_URI=/tasks/t1",
		                   "HTTP_A2A_VERSION=1.0",
		                   "HTTP_X_PARTICIPANT_ID=alice",
		                   peers[i][0],
		                   NULL};
		rec.calls = 0;
		struct resp r = run(p, NULL);
		ck_assert_msg(r.status == atoi(peers[i][1]), "%s: status %d, want %s", peers[i][0],
		              r.status, peers[i][1]);
		if (r.status == 403) {
			assert_contains(jstr(&r, "error.message"), "trusted_proxies");
			ck_assert_int_eq(rec.calls, 0);
		}
		resp_free(&r);
	}
	char list[] = "198.51.100.0/24, 10.0.0.5 2001:db8::/32";
	cfg.trusted_proxies = list;
	static const char *const trusted[][2] = {
	    {"REMOTE_ADDR=10.0.0.5", "200"},       {"REMOTE_ADDR=10.0.0.6", "403"},
	    {"REMOTE_ADDR=198.51.100.200", "200"}, {"REMOTE_ADDR=198.51.101.1", "403"},
	    {"REMOTE_ADDR=2001:db8::7", "200"},    {"REMOTE_ADDR=::ffff:10.0.0.5", "200"}};
	for (size_t i = 0; i < sizeof trusted / sizeof trusted[0]; i++) {
		const char *p[] = {"REQUEST_METHOD=GET",   "REQUEST_URI=/tasks/t1",
		                   "HTTP_A2A_VERSION=1.0", "HTTP_X_PARTICIPANT_ID=alice",
		                   trusted[i][0],          NULL};
		struct resp r = run(p, NULL);
		ck_assert_msg(r.status == atoi(trusted[i][1]), "%s: status %d, want %s",
		              trusted[i][0], r.status, trusted[i][1]);
		resp_free(&r);
	}
	cfg.trusted_proxies = NULL;
	/* JSON-RPC is refused the same way; remote_user mode serves any peer. */
	const char *j[] = {"REQUEST_METHOD=POST",
	                   "REQUEST_URI=/",
	                   "CONTENT_TYPE=application/json",
	                   "HTTP_A2A_VERSION=1.0",
	                   "HTTP_X_PARTICIPANT_ID=alice",
	                   "REMOTE_ADDR=203.0.113.7",
	                   NULL};
	const char *body = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"GetTask\","
	                   "\"params\":{\"id\":\"t1\"}}";
	struct resp r = run(j, body);
	ck_assert_int_eq(r.status, 403);
	assert_contains(r.body, "trusted_proxies");
	resp_free(&r);
	/* The card stays public: it names no participant. */
	const char *card[] = {"REQUEST_METHOD=GET", "REQUEST_URI=/.well-known/agent-card.json",
	                      "REMOTE_ADDR=203.0.113.7", NULL};
	r = run(card, NULL);
	ck_assert_int_eq(r.status, 200);
	resp_free(&r);
	cfg.identity = TH_IDENTITY_REMOTE_USER;
	const char *u[] = {"REQUEST_METHOD=GET", "REQUEST_URI=/tasks/t1",   "HTTP_A2A_VERSION=1.0",
	                   "REMOTE_USER=alice",  "REMOTE_ADDR=203.0.113.7", NULL};
	r = run(u, NULL);
	ck_assert_int_eq(r.status, 200);
	ck_assert_str_eq(rec.participant, "alice");
	resp_free(&r);
}
END_TEST

START_TEST(test_id1_remote_user_mode_ignores_header)
{
	cfg.identity = TH_IDENTITY_REMOTE_USER;
	const char *p[] = {"REQUEST_METHOD=POST",
	                   "REQUEST_URI=/",
	                   "CONTENT_TYPE=application/json",
	                   "HTTP_A2A_VERSION=1.0",
	                   "HTTP_X_PARTICIPANT_ID=mallory",
	                   "REMOTE_USER=bob",
	                   NULL};
	struct resp r = run(p, RPC_BODY("GetTask", "{}"));
	ck_assert_str_eq(rec.participant, "bob");
	resp_free(&r);

	const char *q[] = {"REQUEST_METHOD=POST",           "REQUEST_URI=/",
	                   "CONTENT_TYPE=application/json", "HTTP_A2A_VERSION=1.0",
	                   "HTTP_X_PARTICIPANT_ID=mallory", NULL};
	r = run(q, RPC_BODY("GetTask", "{}"));
	ck_assert_int_eq(rec.calls, 2);
	ck_assert_int_eq(rec.has_participant, 0);
	resp_free(&r);
}
END_TEST

/* ---- LIM-3: nothing crashes, everything is answered -------------------------- */

START_TEST(test_lim3_garbage_always_answered)
{
	static const char *const methods[] = {"GET", "POST", "DELETE", "PUT", "", "\x01"};
	static const char *const uris[] = {"/",
	                                   "/tasks/%",
	                                   "/tasks/%%%",
	                                   "//",
	                                   "/message:send",
	                                   "/tasks/x:cancel",
	                                   "/tasks/\xff\xfe",
	                                   "",
	                                   "?",
	                                   "/?&&=",
	                                   "http://host",
	                                   "http://host/tasks/x",
	                                   "/.well-known/",
	                                   "/tasks/a/pushNotificationConfigs/"};
	static const char *const bodies[] = {NULL,
	                                     "",
	                                     "{",
	                                     "[]",
	                                     "null",
	                                     "\"\\ud800\"",
	                                     "{\"a\":\xff}",
	                                     RPC_BODY("SendMessage", "null"),
	                                     "{}{}",
	                                     "1e999999"};
	unsigned seed = 7;
	for (int i = 0; i < 400; i++) {
		seed = seed * 1103515245u + 12345u;
		char m[32], u[64], v[64];
		snprintf(m, sizeof m, "REQUEST_METHOD=%s", methods[seed % 6]);
		snprintf(u, sizeof u, "REQUEST_URI=%s", uris[(seed >> 8) % 14]);
		snprintf(v, sizeof v, "HTTP_A2A_VERSION=%s", (seed >> 4) % 3 ? "1.0" : "9");
		const char *p[] = {m,
		                   u,
		                   v,
		                   (seed >> 12) % 2 ? "CONTENT_TYPE=application/json" : "X=1",
		                   (seed >> 13) % 4 == 0 ? "HTTP_A2A_EXTENSIONS=,, ," : "Y=1",
		                   NULL};
		rec.fail = (seed >> 16) % 5 == 0 ? TH_EBUSY : TH_OK;
		struct resp r = run(p, bodies[(seed >> 20) % 10]);
		ck_assert_int_ge(r.status, 200);
		ck_assert_int_lt(r.status, 600);
		if (r.status != 304)
			ck_assert_msg(r.json != NULL, "not JSON: %s", r.body);
		resp_free(&r);
	}
}
END_TEST

START_TEST(test_lim3_client_gone_is_harmless)
{
	const char *all[] = {
	    "REQUEST_METHOD=POST",  "REQUEST_URI=/",    "CONTENT_TYPE=application/json",
	    "HTTP_A2A_VERSION=1.0", "CONTENT_LENGTH=2", NULL};
	struct th_http_mem *m = th_http_mem_new(all, "{}", 2);
	ck_assert_ptr_nonnull(m);
	th_http_mem_disconnect(m);
	struct th_http_io io;
	th_http_mem_io(m, &io);
	th_bind_serve(&app, &io);
	size_t len;
	th_http_mem_output(m, &len);
	ck_assert_uint_eq(len, 0);
	th_http_mem_free(m);
}
END_TEST

/* ---- A2A-1 end to end: the real service behind both bindings -------------- */

static struct th_app real;
static char tmpdir[64];

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

/* ---- WEB-1, WEB-3: the web app ------------------------------------------- */

START_TEST(test_web1_accept_prefers_html)
{
	/* Browsers (Chromium, Firefox, Safari) ask for HTML first. */
	ck_assert(th_bind_web_prefers_html("text/html,application/xhtml+xml,application/xml;q=0.9,"
	                                   "image/avif,image/webp,*/*;q=0.8"));
	ck_assert(th_bind_web_prefers_html("text/html,application/xhtml+xml,application/xml;q=0.9,"
	                                   "*/*;q=0.8"));
	ck_assert(th_bind_web_prefers_html("application/xhtml+xml"));
	ck_assert(th_bind_web_prefers_html("TEXT/HTML"));
	ck_assert(th_bind_web_prefers_html("application/json;q=0.5, text/html"));
	ck_assert(th_bind_web_prefers_html("text/html;level=1;q=0.9, application/*;q=0.2"));
	/* JSON clients, curl, SDKs and no header at all stay with JSON-RPC. */
	ck_assert(!th_bind_web_prefers_html(NULL));
	ck_assert(!th_bind_web_prefers_html(""));
	ck_assert(!th_bind_web_prefers_html("*/*"));
	ck_assert(!th_bind_web_prefers_html("application/json"));
	ck_assert(!th_bind_web_prefers_html("application/json, text/plain, */*"));
	ck_assert(!th_bind_web_prefers_html("text/event-stream"));
	ck_assert(!th_bind_web_prefers_html("text/html, application/json"));
	ck_assert(!th_bind_web_prefers_html("text/html;q=0.5, application/json"));
	ck_assert(!th_bind_web_prefers_html("text/html;q=0, */*"));
	ck_assert(!th_bind_web_prefers_html("text/html;q=0.8, application/*;q=0.9"));
	ck_assert(!th_bind_web_prefers_html("application/a2a+json, text/html;q=0.9"));
	ck_assert(!th_bind_web_prefers_html("text/htmlx"));
	/* The most specific range covering JSON decides, not the broadest. */
	ck_assert(th_bind_web_prefers_html("text/html;q=0.5, */*;q=0.9, application/json;q=0.1"));
}
END_TEST

START_TEST(test_web1_file_names_checked)
{
	const char *good[] = {"index.html",   "app.js",     "style.css",
	                      "img/logo.png", "a-b_c.1.js", "x/y/z.txt"};
	for (size_t i = 0; i < sizeof good / sizeof good[0]; i++)
		ck_assert_msg(th_bind_web_name_ok(good[i]), "refused %s", good[i]);
	const char *bad[] = {"",     "..",         "../x",        "a/../b",   "a/..",
	                     ".",    "./a",        ".htaccess",   "a/.git/x", "/etc/passwd",
	                     "a//b", "a/",         "%2e%2e/x",    "a%2fb",    "a\\b",
	                     "a b",  "a?b",        "\xc3\xa9.js", "a:b",      "~root",
	                     "a\nb", "index.html/"};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
		ck_assert_msg(!th_bind_web_name_ok(bad[i]), "accepted '%s'", bad[i]);
	char longname[260];
	memset(longname, 'a', sizeof longname - 1);
	longname[sizeof longname - 1] = '\0';
	ck_assert(!th_bind_web_name_ok(longname));
	ck_assert_str_eq(th_bind_web_ctype("index.html"), "text/html; charset=utf-8");
	ck_assert_str_eq(th_bind_web_ctype("app.js"), "text/javascript; charset=utf-8");
	ck_assert_str_eq(th_bind_web_ctype("style.css"), "text/css; charset=utf-8");
	ck_assert_str_eq(th_bind_web_ctype("a/b.png"), "image/png");
	ck_assert_str_eq(th_bind_web_ctype("a.d/README"), "application/octet-stream");
	ck_assert_str_eq(th_bind_web_ctype("blob"), "application/octet-stream");
}
END_TEST

static char webdir[64];

static void web_file(const char *name, const char *text)
{
	char path[160];
	snprintf(path, sizeof path, "%s/%s", webdir, name);
	FILE *f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
}

static void web_setup(void)
{
	snprintf(webdir, sizeof webdir, "/tmp/th-check-web-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(webdir));
	web_file("index.html", "<!doctype html><title>t</title>");
	web_file("app.js", "console.log(1);");
	web_file(".secret", "no");
	char sub[128];
	snprintf(sub, sizeof sub, "%s/dir", webdir);
	ck_assert_int_eq(mkdir(sub, 0700), 0);
	struct th_error e;
	ck_assert_int_eq(th_config_set(&cfg, "web_dir", webdir, &e), TH_OK);
}

static void web_teardown(void)
{
	nftw(webdir, rm_entry, 8, FTW_DEPTH | FTW_PHYS);
}

#define BROWSER "HTTP_ACCEPT=text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"

START_TEST(test_web1_browser_get_of_base_redirects_to_ui)
{
	const char *g[] = {"REQUEST_METHOD=GET", "REQUEST_URI=/", BROWSER, NULL};
	struct resp r = run(g, NULL);
	ck_assert_int_eq(r.status, 303);
	ck_assert_str_eq(header(&r, "Location"), "/ui/");
	ck_assert_str_eq(header(&r, "Vary"), "Accept");
	resp_free(&r);
	const char *h[] = {"REQUEST_METHOD=HEAD", "REQUEST_URI=/", BROWSER, NULL};
	r = run(h, NULL);
	ck_assert_int_eq(r.status, 303);
	ck_assert_str_eq(r.body, "");
	resp_free(&r);
	/* Under a deeper base path the redirect stays under it. */
	set_base("http://h/a2a/");
	const char *d[] = {"REQUEST_METHOD=GET", "REQUEST_URI=/a2a/", BROWSER, NULL};
	r = run(d, NULL);
	ck_assert_int_eq(r.status, 303);
	ck_assert_str_eq(header(&r, "Location"), "/a2a/ui/");
	resp_free(&r);
	ck_assert_int_eq(rec.calls, 0);
}
END_TEST

START_TEST(test_web1_json_clients_unchanged)
{
	/* GET without a browser's Accept is still the JSON-RPC endpoint's 405. */
	const char *g[] = {"REQUEST_METHOD=GET", "REQUEST_URI=/", "HTTP_ACCEPT=*/*", NULL};
	struct resp r = run(g, NULL);
	ck_assert_int_eq(r.status, 405);
	ck_assert_str_eq(header(&r, "Allow"), "POST");
	resp_free(&r);
	/* POST with a browser's Accept is JSON-RPC. */
	const char *p[] = {"REQUEST_METHOD=POST",
	                   "REQUEST_URI=/",
	                   "CONTENT_TYPE=application/json",
	                   "HTTP_A2A_VERSION=1.0",
	                   "HTTP_X_PARTICIPANT_ID=alice",
	                   BROWSER,
	                   NULL};
	r = run(p, RPC_BODY("GetTask", "{\"id\":\"t1\"}"));
	ck_assert_int_eq(r.status, 200);
	ck_assert_int_eq(rec.calls, 1);
	ck_assert_int_eq(rec.op, TH_OP_GET_TASK);
	resp_free(&r);
	/* The card and the REST routes ignore Accept. */
	const char *c[] = {"REQUEST_METHOD=GET", "REQUEST_URI=/.well-known/agent-card.json",
	                   BROWSER, NULL};
	r = run(c, NULL);
	ck_assert_int_eq(r.status, 200);
	ck_assert_str_eq(r.body, th_json_text(app.card));
	resp_free(&r);
	const char *t[] = {"REQUEST_METHOD=GET",
	                   "REQUEST_URI=/tasks/t1",
	                   "HTTP_A2A_VERSION=1.0",
	                   "HTTP_X_PARTICIPANT_ID=alice",
	                   BROWSER,
	                   NULL};
	r = run(t, NULL);
	ck_assert_int_eq(r.status, 200);
	ck_assert_int_eq(rec.calls, 2);
	resp_free(&r);
}
END_TEST

START_TEST(test_web1_ui_serves_files_with_csp_and_validators)
{
	const char *g[] = {"REQUEST_METHOD=GET", "REQUEST_URI=/ui/", BROWSER, NULL};
	struct resp r = run(g, NULL);
	ck_assert_int_eq(r.status, 200);
	ck_assert_str_eq(r.body, "<!doctype html><title>t</title>");
	ck_assert_str_eq(header(&r, "Content-Type"), "text/html; charset=utf-8");
	const char *csp = header(&r, "Content-Security-Policy");
	assert_contains(csp, "script-src 'self';");
	assert_contains(csp, "default-src 'self'");
	assert_contains(csp, "object-src 'none'");
	ck_assert_ptr_null(strstr(csp, "unsafe"));
	ck_assert_str_eq(header(&r, "X-Content-Type-Options"), "nosniff");
	ck_assert_str_eq(header(&r, "X-Frame-Options"), "DENY"); /* SEC-4 */
	assert_contains(header(&r, "Last-Modified"), " GMT");
	char etag[64];
	snprintf(etag, sizeof etag, "HTTP_IF_NONE_MATCH=%s", header(&r, "ETag"));
	resp_free(&r);
	const char *c[] = {"REQUEST_METHOD=GET", "REQUEST_URI=/ui/", etag, NULL};
	r = run(c, NULL);
	ck_assert_int_eq(r.status, 304);
	ck_assert_str_eq(r.body, "");
	resp_free(&r);
	const char *js[] = {"REQUEST_METHOD=GET", "REQUEST_URI=/ui/app.js?v=1", NULL};
	r = run(js, NULL);
	ck_assert_int_eq(r.status, 200);
	ck_assert_str_eq(r.body, "console.log(1);");
	ck_assert_str_eq(header(&r, "Content-Type"), "text/javascript; charset=utf-8");
	resp_free(&r);
	const char *h[] = {"REQUEST_METHOD=HEAD", "REQUEST_URI=/ui/app.js", NULL};
	r = run(h, NULL);
	ck_assert_int_eq(r.status, 200);
	ck_assert_str_eq(header(&r, "Content-Length"), "15");
	ck_assert_str_eq(r.body, "");
	resp_free(&r);
	/* <base>ui without the slash goes to the folder. */
	const char *u[] = {"REQUEST_METHOD=GET", "REQUEST_URI=/ui", NULL};
	r = run(u, NULL);
	ck_assert_int_eq(r.status, 301);
	ck_assert_str_eq(header(&r, "Location"), "/ui/");
	resp_free(&r);
	const char *post[] = {"REQUEST_METHOD=POST", "REQUEST_URI=/ui/app.js", NULL};
	r = run(post, NULL);
	ck_assert_int_eq(r.status, 405);
	ck_assert_str_eq(header(&r, "Allow"), "GET, HEAD");
	resp_free(&r);
	ck_assert_int_eq(rec.calls, 0);
}
END_TEST

/* ID-1: the app asks how the sender is known, to show the Participant field only when the
 * header counts. */
START_TEST(test_web1_session_says_how_identity_is_known)
{
	const char *g[] = {"REQUEST_METHOD=GET", "REQUEST_URI=/ui/session.json", "REMOTE_USER=bob",
	                   NULL};
	struct resp r = run(g, NULL);
	ck_assert_int_eq(r.status, 200);
	ck_assert_str_eq(r.body, "{\"identity\":\"header\"}");
	ck_assert_str_eq(header(&r, "Cache-Control"), "no-store");
	resp_free(&r);
	struct th_error e;
	ck_assert_int_eq(th_config_set(&cfg, "identity", "remote_user", &e), TH_OK);
	r = run(g, NULL);
	ck_assert_int_eq(r.status, 200);
	ck_assert_str_eq(r.body, "{\"identity\":\"remote_user\",\"participant\":\"bob\"}");
	resp_free(&r);
	const char *anon[] = {"REQUEST_METHOD=GET", "REQUEST_URI=/ui/session.json", NULL};
	r = run(anon, NULL);
	ck_assert_str_eq(r.body, "{\"identity\":\"remote_user\",\"participant\":null}");
	resp_free(&r);
	ck_assert_int_eq(rec.calls, 0);
}
END_TEST

START_TEST(test_web1_ui_refuses_bad_names_and_missing_files)
{
	const char *uris[] = {"REQUEST_URI=/ui/nope.js",       "REQUEST_URI=/ui/.secret",
	                      "REQUEST_URI=/ui/../index.html", "REQUEST_URI=/ui/dir/../app.js",
	                      "REQUEST_URI=/ui/%2e%2e/x",      "REQUEST_URI=/ui//etc/passwd",
	                      "REQUEST_URI=/ui/dir",           "REQUEST_URI=/ui/dir/",
	                      "REQUEST_URI=/ui/app.js/"};
	for (size_t i = 0; i < sizeof uris / sizeof uris[0]; i++) {
		const char *p[] = {"REQUEST_METHOD=GET", uris[i], NULL};
		struct resp r = run(p, NULL);
		ck_assert_msg(r.status == 404, "%s gave %d", uris[i], r.status);
		ck_assert_str_ne(r.body, "no");
		ck_assert_ptr_nonnull(r.json);
		resp_free(&r);
	}
	/* A missing web_dir is a 404 too, never a crash. */
	struct th_error e;
	ck_assert_int_eq(th_config_set(&cfg, "web_dir", "/nonexistent/th-web", &e), TH_OK);
	const char *p[] = {"REQUEST_METHOD=GET", "REQUEST_URI=/ui/", NULL};
	struct resp r = run(p, NULL);
	ck_assert_int_eq(r.status, 404);
	resp_free(&r);
	ck_assert_int_eq(rec.calls, 0);
}
END_TEST

/* OBS-1: the request line's fields, in order, as key=value; "-" for none; a value with a
 * space, '"', '=', '\' or a control character (or "-" itself) quoted with '"' and '\'
 * escaped. */
START_TEST(test_obs1_log_line_is_key_value_in_a_fixed_order)
{
	char l[512];
	th_bind_log_line(l, sizeof l, "SendMessage", "jsonrpc", "t-1", "alice", 200, "ok", 1234);
	ck_assert_str_eq(l, "request method=SendMessage binding=jsonrpc task=t-1 participant=alice "
	                    "status=200 outcome=ok ms=1.234");
	th_bind_log_line(l, sizeof l, "unknown", "http", NULL, "a b\"c=d\\", 404,
	                 "method_not_found", 5);
	ck_assert_str_eq(
	    l, "request method=unknown binding=http task=- participant=\"a b\\\"c=d\\\\\" "
	       "status=404 outcome=method_not_found ms=0.005");
	th_bind_log_line(l, sizeof l, "GetTask", "rest", "-", "", 0, "ok", 2000000);
	ck_assert_str_eq(l, "request method=GetTask binding=rest task=\"-\" participant=- status=0 "
	                    "outcome=ok ms=2000.000");
	/* SEC-6: control characters (C0, DEL, C1 in UTF-8) are quoted and written as \xHH;
	 * other UTF-8 passes as it is. */
	th_bind_log_line(l, sizeof l, "GetTask", "rest", "t\x1b[31m", "caf\xc3\xa9\xc2\x9b\x7f",
	                 200, "ok", 1);
	ck_assert_str_eq(l, "request method=GetTask binding=rest task=\"t\\x1b[31m\" "
	                    "participant=\"caf\xc3\xa9\\x9b\\x7f\" status=200 outcome=ok ms=0.001");
	th_bind_log_line(l, sizeof l, "GetTask", "rest", "caf\xc3\xa9", "x", 200, "ok", 1);
	ck_assert_str_eq(l, "request method=GetTask binding=rest task=caf\xc3\xa9 participant=x "
	                    "status=200 outcome=ok ms=0.001");
	/* Cut to fit, never past the buffer. */
	char small[16];
	th_bind_log_line(small, sizeof small, "SendMessage", "jsonrpc", "t", "p", 200, "ok", 1);
	ck_assert_uint_eq(strlen(small), sizeof small - 1);
	ck_assert_str_eq(th_bind_mx_outcome_name(TH_ENOTFOUND), "task_not_found");
	ck_assert_str_eq(th_bind_mx_method_name(TH_BIND_MX_METRICS), "Metrics");
	ck_assert_str_eq(th_bind_mx_method_name(TH_OP_GET_TASK), "GetTask");
}
END_TEST

/* OBS-2: the histogram in the exposition is cumulative, its +Inf bucket is its _count,
 * and only methods and outcomes that happened have rows. */
START_TEST(test_obs2_histogram_is_cumulative_and_inf_is_the_count)
{
	static struct th_mx_snapshot sn;
	memset(&sn, 0, sizeof sn);
	sn.d.requests[TH_OP_SEND_MESSAGE][TH_OK] = 4;
	sn.d.requests[TH_OP_SEND_MESSAGE][TH_EINVAL] = 1;
	sn.d.latency[TH_OP_SEND_MESSAGE][0] = 2;
	sn.d.latency[TH_OP_SEND_MESSAGE][3] = 2;
	sn.d.latency[TH_OP_SEND_MESSAGE][TH_MX_BOUNDS] = 1;
	sn.d.latency_sum_us[TH_OP_SEND_MESSAGE] = 21500000;
	sn.d.turns[0] = 4;
	sn.open_streams = 3;
	struct th_site_gauges g = {
	    .db_bytes = 4096, .wal_bytes = 0, .push_backlog = 2, .push_dead = 1};
	struct th_buf b;
	th_buf_init(&b);
	th_bind_metrics_render(&b, &sn, &g);
	ck_assert(!b.oom);
	const char *want[] = {
	    "tiny_harness_requests_total{method=\"SendMessage\",outcome=\"ok\"} 4\n",
	    "tiny_harness_requests_total{method=\"SendMessage\",outcome=\"invalid_params\"} 1\n",
	    "_bucket{method=\"SendMessage\",le=\"0.0005\"} 2\n",
	    "_bucket{method=\"SendMessage\",le=\"0.001\"} 2\n",
	    "_bucket{method=\"SendMessage\",le=\"0.005\"} 4\n",
	    "_bucket{method=\"SendMessage\",le=\"10\"} 4\n",
	    "_bucket{method=\"SendMessage\",le=\"+Inf\"} 5\n",
	    "_sum{method=\"SendMessage\"} 21.500000\n",
	    "_count{method=\"SendMessage\"} 5\n",
	    "tiny_harness_turns_total{outcome=\"done\"} 4\n",
	    "tiny_harness_open_streams 3\n",
	    "tiny_harness_database_bytes 4096\n",
	    "tiny_harness_wal_bytes 0\n",
	    "tiny_harness_push_backlog 2\n",
	    "tiny_harness_push_dead 1\n",
	    "# TYPE tiny_harness_request_duration_seconds histogram\n",
	};
	for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
		ck_assert_msg(strstr(b.data, want[i]) != NULL, "missing %s in:\n%s", want[i],
		              b.data);
	ck_assert_ptr_null(strstr(b.data, "method=\"GetTask\""));
	th_buf_free(&b);
	/* PostgreSQL: no file sizes at all rather than a made-up 0. */
	g.db_bytes = g.wal_bytes = -1;
	th_buf_init(&b);
	th_bind_metrics_render(&b, &sn, &g);
	ck_assert_ptr_null(strstr(b.data, "database_bytes"));
	th_buf_free(&b);
}
END_TEST

/* OBS-3: the endpoint's guard is the extended card's: an authenticated participant, so
 * never identity = header; metrics_readers narrows it; metrics = 0 removes the route. */
START_TEST(test_obs3_metrics_refuse_header_mode_anonymous_and_unlisted_readers)
{
	struct th_error e;
	const char *hdr[] = {"REQUEST_METHOD=GET", "REQUEST_URI=/metrics",
	                     "HTTP_X_PARTICIPANT_ID=alice", NULL};
	struct resp r = run(hdr, NULL);
	ck_assert_int_eq(r.status, 403);
	ck_assert_msg(strstr(r.body, "identity = header") != NULL, "%s", r.body);
	resp_free(&r);
	ck_assert_int_eq(th_config_set(&cfg, "identity", "remote_user", &e), TH_OK);
	const char *anon[] = {"REQUEST_METHOD=GET", "REQUEST_URI=/metrics", NULL};
	r = run(anon, NULL);
	ck_assert_int_eq(r.status, 401);
	resp_free(&r);
	ck_assert_int_eq(th_config_set(&cfg, "metrics_readers", "prom, ops", &e), TH_OK);
	const char *alice[] = {"REQUEST_METHOD=GET", "REQUEST_URI=/metrics", "REMOTE_USER=alice",
	                       NULL};
	r = run(alice, NULL);
	ck_assert_int_eq(r.status, 403);
	ck_assert_msg(strstr(r.body, "metrics_readers") != NULL, "%s", r.body);
	resp_free(&r);
	const char *post[] = {"REQUEST_METHOD=POST", "REQUEST_URI=/metrics", "REMOTE_USER=ops",
	                      NULL};
	r = run(post, NULL);
	ck_assert_int_eq(r.status, 405);
	resp_free(&r);
	/* ops is listed: past the guard, this unit process counts into no file (503). */
	const char *ops[] = {"REQUEST_METHOD=GET", "REQUEST_URI=/metrics", "REMOTE_USER=ops", NULL};
	r = run(ops, NULL);
	ck_assert_int_eq(r.status, 503);
	resp_free(&r);
	ck_assert_int_eq(th_config_set(&cfg, "metrics", "0", &e), TH_OK);
	r = run(ops, NULL);
	ck_assert_int_eq(r.status, 404);
	resp_free(&r);
	ck_assert_int_eq(rec.calls, 0);
}
END_TEST

static void real_setup(void)
{
	snprintf(tmpdir, sizeof tmpdir, "/tmp/th-check-bind-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(tmpdir));
	struct th_config *c = malloc(sizeof *c);
	ck_assert_ptr_nonnull(c);
	ck_assert_int_eq(th_config_defaults(c), TH_OK);
	char db[128];
	snprintf(db, sizeof db, "%s/t.db", tmpdir);
	struct th_error e;
	th_error_clear(&e);
	ck_assert_int_eq(th_config_set(c, "db", db, &e), TH_OK);
	ck_assert_int_eq(th_config_set(c, "commands_dir", tmpdir, &e), TH_OK);
	ck_assert_msg(th_app_open(&real, c, 0, &e) == TH_OK, "%s", e.msg);
	th_bind_service = th_service_call;
	th_bind_stream_service = th_service_stream;
}

static void real_teardown(void)
{
	th_app_close(&real);
	nftw(tmpdir, rm_entry, 8, FTW_DEPTH | FTW_PHYS);
}

static struct resp run_real(const char *const *params, const char *body)
{
	struct th_app saved = app;
	app = real;
	struct resp r = run(params, body);
	real = app;
	app = saved;
	return r;
}

#define SEND_PARAMS(mid)                                                                           \
	"{\"message\":{\"messageId\":\"" mid "\",\"role\":\"ROLE_USER\","                          \
	"\"parts\":[{\"text\":\"hello\"}]}}"

START_TEST(test_a2a1_send_message_round_trip_jsonrpc)
{
	const char *p[] = {"REQUEST_METHOD=POST",           "REQUEST_URI=/",
	                   "CONTENT_TYPE=application/json", "HTTP_A2A_VERSION=1.0",
	                   "HTTP_X_PARTICIPANT_ID=alice",   NULL};
	struct resp r = run_real(p, "{\"jsonrpc\":\"2.0\",\"id\":\"r1\",\"method\":\"SendMessage\","
	                            "\"params\":" SEND_PARAMS("m-rpc-1") "}");
	ck_assert_int_eq(r.status, 200);
	ck_assert_msg(jget(r.json, "result.task.id") != NULL, "no task: %s", r.body);
	ck_assert_str_eq(jstr(&r, "id"), "r1");
	const char *state = jstr(&r, "result.task.status.state");
	ck_assert_ptr_nonnull(state);
	char id[128];
	snprintf(id, sizeof id, "%s", jstr(&r, "result.task.id"));
	resp_free(&r);

	/* The task is there for GetTask over the other binding. */
	char uri[200];
	snprintf(uri, sizeof uri, "REQUEST_URI=/tasks/%s", id);
	const char *q[] = {"REQUEST_METHOD=GET", uri, "HTTP_A2A_VERSION=1.0",
	                   "HTTP_X_PARTICIPANT_ID=alice", NULL};
	r = run_real(q, NULL);
	ck_assert_msg(r.status == 200, "%s", r.body);
	ck_assert_str_eq(jstr(&r, "id"), id);
	resp_free(&r);
}
END_TEST

START_TEST(test_a2a1_send_message_round_trip_rest)
{
	const char *p[] = {"REQUEST_METHOD=POST",           "REQUEST_URI=/message:send",
	                   "CONTENT_TYPE=application/json", "HTTP_A2A_VERSION=1.0",
	                   "HTTP_X_PARTICIPANT_ID=bob",     NULL};
	struct resp r = run_real(p, SEND_PARAMS("m-rest-1"));
	ck_assert_msg(r.status == 200, "%s", r.body);
	ck_assert_str_eq(header(&r, "Content-Type"), "application/a2a+json");
	ck_assert_msg(jget(r.json, "result") == NULL && jget(r.json, "task.id") != NULL,
	              "not a bare SendMessageResponse: %s", r.body);
	char id[128];
	snprintf(id, sizeof id, "%s", jstr(&r, "task.id"));
	resp_free(&r);

	/* A stranger does not see it: TaskNotFound (ID-3) in the REST error shape. */
	char uri[200];
	snprintf(uri, sizeof uri, "REQUEST_URI=/tasks/%s", id);
	const char *q[] = {"REQUEST_METHOD=GET", uri, "HTTP_A2A_VERSION=1.0",
	                   "HTTP_X_PARTICIPANT_ID=mallory", NULL};
	r = run_real(q, NULL);
	assert_rest_error(&r, 404, "NOT_FOUND", "TASK_NOT_FOUND");
	resp_free(&r);

	/* The list over JSON-RPC has it for bob. */
	const char *l[] = {"REQUEST_METHOD=POST",           "REQUEST_URI=/",
	                   "CONTENT_TYPE=application/json", "HTTP_A2A_VERSION=1.0",
	                   "HTTP_X_PARTICIPANT_ID=bob",     NULL};
	r = run_real(l, RPC_BODY("ListTasks", "{}"));
	ck_assert_msg(jget(r.json, "result.tasks.0.id") != NULL, "%s", r.body);
	ck_assert_str_eq(jstr(&r, "result.tasks.0.id"), id);
	resp_free(&r);
}
END_TEST

/* OBS-2: requests through the binding move the shared counters by exactly what was sent,
 * by method and outcome, and the endpoint shows them with the site's gauges. */
START_TEST(test_obs2_endpoint_counts_each_request_by_method_and_outcome)
{
	char path[160];
	snprintf(path, sizeof path, "%s/metrics", tmpdir);
	struct th_error e;
	ck_assert_msg(th_mx_open(path, &e) == TH_OK, "%s", e.msg);
	ck_assert_int_eq(th_config_set(real.cfg, "identity", "remote_user", &e), TH_OK);
	for (int i = 0; i < 3; i++) {
		char body[300];
		snprintf(body, sizeof body,
		         "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"SendMessage\",\"params\":{"
		         "\"message\":{\"messageId\":\"m-obs-%d\",\"role\":\"ROLE_USER\","
		         "\"parts\":[{\"text\":\"hi\"}]}}}",
		         i);
		const char *p[] = {
		    "REQUEST_METHOD=POST",  "REQUEST_URI=/",     "CONTENT_TYPE=application/json",
		    "HTTP_A2A_VERSION=1.0", "REMOTE_USER=alice", NULL};
		struct resp r = run_real(p, body);
		ck_assert_int_eq(r.status, 200);
		resp_free(&r);
	}
	const char *nf[] = {"REQUEST_METHOD=GET", "REQUEST_URI=/tasks/no-such-task",
	                    "HTTP_A2A_VERSION=1.0", "REMOTE_USER=alice", NULL};
	struct resp r = run_real(nf, NULL);
	ck_assert_int_eq(r.status, 404);
	resp_free(&r);
	const char *m[] = {"REQUEST_METHOD=GET", "REQUEST_URI=/metrics", "REMOTE_USER=alice", NULL};
	r = run_real(m, NULL);
	ck_assert_int_eq(r.status, 200);
	ck_assert_str_eq(header(&r, "Content-Type"), "text/plain; version=0.0.4; charset=utf-8");
	const char *want[] = {
	    "tiny_harness_requests_total{method=\"SendMessage\",outcome=\"ok\"} 3\n",
	    "tiny_harness_requests_total{method=\"GetTask\",outcome=\"task_not_found\"} 1\n",
	    "_count{method=\"SendMessage\"} 3\n",
	    "tiny_harness_turns_total{outcome=\"done\"} 3\n",
	    "tiny_harness_push_backlog 0\n",
	    "tiny_harness_database_bytes ",
	};
	for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
		ck_assert_msg(strstr(r.body, want[i]) != NULL, "missing %s in:\n%s", want[i],
		              r.body);
	/* The scrape counts itself after its answer: not in its own body. */
	ck_assert_ptr_null(strstr(r.body, "method=\"Metrics\""));
	resp_free(&r);
	th_mx_close();
}
END_TEST

/* ---- RET-4: the caller's push dead letters (decision-076) ---------------------- */

/* A dead letter of config config_id, owned by who, on task, made as a worker makes one:
 * queued for event seq, claimed, then given up with the error a refused POST leaves. */
static void make_dead_letter(const char *task, const char *config_id, const char *who, int64_t seq)
{
	struct th_store *st = real.store;
	struct th_error e;
	th_error_clear(&e);
	char t[128], c[64], p[64], url[] = "http://127.0.0.1:9/hook?token=s3cret-hook-token";
	snprintf(t, sizeof t, "%s", task);
	snprintf(c, sizeof c, "%s", config_id);
	snprintf(p, sizeof p, "%s", who);
	struct th_push_config cfg1 = {
	    .task_id = t, .config_id = c, .participant_id = p, .url = url};
	ck_assert_msg(th_store_begin(st, &e) == TH_OK, "%s", e.msg);
	ck_assert_msg(th_store_push_config_put(st, &cfg1, &e) == TH_OK, "%s", e.msg);
	int q = 0;
	ck_assert_int_eq(th_test_push_enqueue(st, t, seq, "{\"task\":{}}", NULL, &q, &e), TH_OK);
	ck_assert_int_eq(q, 1);
	struct th_push_delivery *d = NULL;
	size_t n = 0;
	ck_assert_int_eq(th_store_push_claim_due(st, th_now_ms(), 30000, 0, &d, &n, &e), TH_OK);
	ck_assert_uint_eq(n, 1);
	ck_assert_int_eq(th_store_push_dead(st, d[0].id,
	                                    "http://127.0.0.1:9/hook?token=***: Connection refused",
	                                    &e),
	                 TH_OK);
	th_push_deliveries_free(d, n);
	ck_assert_msg(th_store_commit(st, &e) == TH_OK, "%s", e.msg);
}

/* GET <base>[tenant/]pushNotificationDeadLetters[?query] as who (header mode). */
static struct resp dead_letters(const char *tenant, const char *query, const char *who)
{
	char uri[300], qs[300], id[200];
	snprintf(uri, sizeof uri, "REQUEST_URI=/%s%spushNotificationDeadLetters%s%s",
	         tenant != NULL ? tenant : "", tenant != NULL ? "/" : "", query != NULL ? "?" : "",
	         query != NULL ? query : "");
	snprintf(qs, sizeof qs, "QUERY_STRING=%s", query != NULL ? query : "");
	snprintf(id, sizeof id, "HTTP_X_PARTICIPANT_ID=%s", who != NULL ? who : "");
	const char *p[] = {"REQUEST_METHOD=GET", uri, qs, who != NULL ? id : NULL, NULL};
	return run_real(p, NULL);
}

/* A task of alice's, made through the binding with message mid: its id into id. */
static void alice_task(const char *mid, char *id, size_t n)
{
	char body[300];
	snprintf(body, sizeof body,
	         "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"SendMessage\",\"params\":{"
	         "\"message\":{\"messageId\":\"%s\",\"role\":\"ROLE_USER\","
	         "\"parts\":[{\"text\":\"hello\"}]}}}",
	         mid);
	const char *p[] = {"REQUEST_METHOD=POST",           "REQUEST_URI=/",
	                   "CONTENT_TYPE=application/json", "HTTP_A2A_VERSION=1.0",
	                   "HTTP_X_PARTICIPANT_ID=alice",   NULL};
	struct resp r = run_real(p, body);
	ck_assert_msg(jstr(&r, "result.task.id") != NULL, "%s", r.body);
	snprintf(id, n, "%s", jstr(&r, "result.task.id"));
	resp_free(&r);
}

/* RET-4: the owner reads their dead letters, newest first, a page at a time, with the URL's
 * query values redacted (SEC-6); another participant and another tenant see none. */
START_TEST(test_ret4_dead_letters_owner_only_paged_redacted)
{
	char task[128], other[128], third[128];
	alice_task("m-dead-1", task, sizeof task);
	alice_task("m-dead-2", other, sizeof other);
	alice_task("m-dead-3", third, sizeof third);
	make_dead_letter(other, "hook-1", "alice", 1);
	make_dead_letter(task, "hook-2", "alice", 2);
	make_dead_letter(third, "bobs", "bob", 3);
	struct resp r = dead_letters(NULL, NULL, "alice");
	ck_assert_msg(r.status == 200, "%s", r.body);
	ck_assert_str_eq(header(&r, "Content-Type"), "application/json");
	ck_assert_str_eq(header(&r, "Cache-Control"), "no-store");
	ck_assert_int_eq(json_object_array_length(jget(r.json, "deadLetters")), 2);
	ck_assert_str_eq(jstr(&r, "deadLetters.0.taskId"), task);
	ck_assert_str_eq(jstr(&r, "deadLetters.0.configId"), "hook-2"); /* newest first */
	ck_assert_int_eq(jint(&r, "deadLetters.0.eventSeq"), 2);
	ck_assert_int_eq(jint(&r, "deadLetters.0.attempts"), 1);
	ck_assert_str_eq(jstr(&r, "deadLetters.0.url"), "http://127.0.0.1:9/hook?token=***");
	assert_contains(jstr(&r, "deadLetters.0.lastError"), "Connection refused");
	ck_assert_ptr_nonnull(jstr(&r, "deadLetters.0.diedAt"));
	ck_assert_ptr_nonnull(jstr(&r, "deadLetters.0.queuedAt"));
	ck_assert_str_eq(jstr(&r, "nextPageToken"), "");
	ck_assert_ptr_null(strstr(r.body, "s3cret"));
	ck_assert_ptr_null(strstr(r.body, "bobs"));
	resp_free(&r);

	r = dead_letters(NULL, "pageSize=1", "alice");
	ck_assert_msg(r.status == 200, "%s", r.body);
	ck_assert_int_eq(json_object_array_length(jget(r.json, "deadLetters")), 1);
	ck_assert_str_eq(jstr(&r, "deadLetters.0.configId"), "hook-2");
	char next[200];
	snprintf(next, sizeof next, "page_size=1&pageToken=%s", jstr(&r, "nextPageToken"));
	ck_assert_int_gt(strlen(next), strlen("page_size=1&pageToken="));
	resp_free(&r);
	r = dead_letters(NULL, next, "alice");
	ck_assert_msg(r.status == 200, "%s", r.body);
	ck_assert_int_eq(json_object_array_length(jget(r.json, "deadLetters")), 1);
	ck_assert_str_eq(jstr(&r, "deadLetters.0.configId"), "hook-1");
	ck_assert_str_eq(jstr(&r, "nextPageToken"), "");
	resp_free(&r);

	r = dead_letters(NULL, NULL, "bob");
	ck_assert_int_eq(json_object_array_length(jget(r.json, "deadLetters")), 1);
	ck_assert_str_eq(jstr(&r, "deadLetters.0.configId"), "bobs");
	resp_free(&r);
	r = dead_letters(NULL, NULL, "mallory");
	ck_assert_msg(r.status == 200, "%s", r.body);
	ck_assert_int_eq(json_object_array_length(jget(r.json, "deadLetters")), 0);
	resp_free(&r);
	/* TEN-2: the default tenant's letters are not another tenant's. */
	r = dead_letters("acme", NULL, "alice");
	ck_assert_msg(r.status == 200, "%s", r.body);
	ck_assert_int_eq(json_object_array_length(jget(r.json, "deadLetters")), 0);
	resp_free(&r);
}
END_TEST

/* RET-4: what the route refuses, each naming what to change, and none of it crashes or
 * stores anything: another method, no caller, a caller nobody may be, pageSize out of its
 * range, a pageToken it did not issue, a tenant not served, and with identity = bearer a
 * request without credentials (401 with WWW-Authenticate). */
START_TEST(test_ret4_dead_letters_refusals_name_the_field)
{
	char task[128];
	alice_task("m-dead-1", task, sizeof task);
	make_dead_letter(task, "hook-1", "alice", 1);
	const char *post[] = {"REQUEST_METHOD=POST", "REQUEST_URI=/pushNotificationDeadLetters",
	                      "HTTP_X_PARTICIPANT_ID=alice", NULL};
	struct resp r = run_real(post, NULL);
	ck_assert_int_eq(r.status, 405);
	ck_assert_str_eq(header(&r, "Allow"), "GET, HEAD");
	resp_free(&r);
	r = dead_letters(NULL, NULL, NULL);
	assert_rest_error(&r, 400, "INVALID_ARGUMENT", "INVALID_PARAMS");
	assert_contains(r.body, "X-Participant-Id");
	resp_free(&r);
	r = dead_letters(NULL, NULL, "tiny-harness");
	ck_assert_int_eq(r.status, 400);
	assert_contains(r.body, "agent's own id");
	resp_free(&r);
	const char *bad_size[] = {"pageSize=101", "pageSize=-1", "pageSize=ten", "page_size=1.5"};
	for (size_t i = 0; i < sizeof bad_size / sizeof bad_size[0]; i++) {
		r = dead_letters(NULL, bad_size[i], "alice");
		assert_rest_error(&r, 400, "INVALID_ARGUMENT", "INVALID_PARAMS");
		assert_contains(r.body, "pageSize must be a whole number from 1 to 100");
		resp_free(&r);
	}
	const char *bad_token[] = {"pageToken=zzz", "pageToken=d1", "pageToken=d.1",
	                           "pageToken=dffffffffffffffff.1", "pageToken=p1"};
	for (size_t i = 0; i < sizeof bad_token / sizeof bad_token[0]; i++) {
		r = dead_letters(NULL, bad_token[i], "alice");
		assert_rest_error(&r, 400, "INVALID_ARGUMENT", "INVALID_PARAMS");
		assert_contains(r.body, "pageToken is not a token this server issued");
		resp_free(&r);
	}
	r = dead_letters(NULL, "pageToken=%zz", "alice");
	ck_assert_int_eq(r.status, 400);
	assert_contains(r.body, "query parameter pageToken has a bad percent escape");
	resp_free(&r);
	struct th_error e;
	ck_assert_int_eq(th_config_set(real.cfg, "tenants", "acme", &e), TH_OK);
	r = dead_letters("other", NULL, "alice");
	assert_rest_error(&r, 400, "INVALID_ARGUMENT", "INVALID_PARAMS");
	assert_contains(r.body, "tenant 'other' is not served here");
	resp_free(&r);
	r = dead_letters("acme", NULL, "alice");
	ck_assert_msg(r.status == 200, "%s", r.body);
	resp_free(&r);
	ck_assert_int_eq(th_config_set(real.cfg, "identity", "bearer", &e), TH_OK);
	r = dead_letters(NULL, NULL, "alice"); /* the header names nobody here (SEC-1) */
	ck_assert_int_eq(r.status, 401);
	assert_contains(header(&r, "WWW-Authenticate"), "Bearer");
	resp_free(&r);
	ck_assert_int_eq(th_config_set(real.cfg, "identity", "header", &e), TH_OK);
	/* Nothing of it changed the letter. */
	r = dead_letters(NULL, NULL, "alice");
	ck_assert_int_eq(json_object_array_length(jget(r.json, "deadLetters")), 1);
	ck_assert_int_eq(jint(&r, "deadLetters.0.attempts"), 1);
	resp_free(&r);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("bind");
	TCase *tc = tcase_create("serve");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_card1_last_modified_is_an_imf_fixdate);
	tcase_add_test(tc, test_a2a3_missing_version_refused);
	tcase_add_test(tc, test_a2a3_empty_version_refused);
	tcase_add_test(tc, test_a2a3_other_versions_refused_naming_value);
	tcase_add_test(tc, test_a2a3_version_1_0_and_patch_accepted);
	tcase_add_test(tc, test_a2a_11_gen_1_version_1_1_accepted_as_minor_1);
	tcase_add_test(tc, test_a2a3_version_query_parameter_accepted);
	tcase_add_test(tc, test_sec4_version_in_query_refused_on_post);
	tcase_add_test(tc, test_sec4_host_and_origin_checked);
	tcase_add_test(tc, test_sec4_loopback_base_and_no_host);
	tcase_add_test(tc, test_a2a3_rest_missing_version_is_400_failed_precondition);
	tcase_add_test(tc, test_lim2_malformed_json_is_parse_error_with_null_id);
	tcase_add_test(tc, test_lim2_not_jsonrpc_2_0_is_invalid_request);
	tcase_add_test(tc, test_lim2_batch_array_refused);
	tcase_add_test(tc, test_lim2_bad_or_missing_id_refused);
	tcase_add_test(tc, test_lim2_unknown_method_named);
	tcase_add_test(tc, test_lim2_params_not_object_invalid_params);
	tcase_add_test(tc, test_lim2_jsonrpc_wrong_content_type);
	tcase_add_test(tc, test_lim2_jsonrpc_content_type_variants_accepted);
	tcase_add_test(tc, test_lim2_rest_wrong_content_type_is_415);
	tcase_add_test(tc, test_sec4_rest_empty_post_needs_json_content_type);
	tcase_add_test(tc, test_lim2_unknown_rest_route_404);
	tcase_add_test(tc, test_lim2_wrong_http_method_405_with_allow);
	tcase_add_test(tc, test_pkg1_head_answers_like_get_without_a_body);
	tcase_add_test(tc, test_lim1_oversized_jsonrpc_body_413_before_reading);
	tcase_add_test(tc, test_lim1_oversized_rest_body_413_before_reading);
	tcase_add_test(tc, test_lim1_json_depth_limit_named);
	tcase_add_test(tc, test_sec3_jsonrpc_id_over_max_id_refused);
	tcase_add_test(tc, test_sec3_stream_over_participant_cap_is_429_with_retry_after);
	tcase_add_test(tc, test_sec3_rate_limit_is_429_with_retry_after);
	tcase_add_test(tc, test_lim1_short_body_refused);
	tcase_add_test(tc, test_ext1_unknown_extension_refused_naming_it);
	tcase_add_test(tc, test_ext2_activated_extensions_echoed);
	tcase_add_test(tc, test_ext2_no_header_when_none_activated);
	tcase_add_test(tc, test_card1_served_without_version_or_participant);
	tcase_add_test(tc, test_card1_etag_if_none_match_304);
	tcase_add_test(tc, test_card1_at_origin_root_and_under_base_path);
	tcase_add_test(tc, test_a2a1_routes_relative_to_base_path);
	tcase_add_test(tc, test_a2a1_rest_routes_build_params);
	tcase_add_test(tc, test_a2a1_rest_bad_values_are_invalid_params);
	tcase_add_test(tc, test_a2a1_rest_success_shape);
	tcase_add_test(tc, test_a2a1_jsonrpc_success_echoes_id_and_type);
	tcase_add_test(tc, test_a2a4_service_errors_both_bindings);
	tcase_add_test(tc, test_a2a4_busy_says_retry);
	tcase_add_test(tc,
	               test_stream6_stream_at_stream_max_is_503_with_retry_after_and_runs_nothing);
	tcase_add_test(tc, test_a2a4_error_table);
	tcase_add_test(tc, test_id1_participant_from_header);
	tcase_add_test(tc, test_id6_agent_id_and_overlong_participant_are_refused);
	tcase_add_test(tc, test_id1_remote_user_mode_ignores_header);
	tcase_add_test(tc, test_pkg5_anonymous_participant_is_opt_in);
	tcase_add_test(tc, test_sec1_id1_header_mode_serves_only_loopback_and_trusted_proxies);
	tcase_add_test(tc, test_lim3_garbage_always_answered);
	tcase_add_test(tc, test_lim3_client_gone_is_harmless);
	tcase_add_test(tc, test_obs1_log_line_is_key_value_in_a_fixed_order);
	tcase_add_test(tc, test_obs2_histogram_is_cumulative_and_inf_is_the_count);
	tcase_add_test(tc, test_obs3_metrics_refuse_header_mode_anonymous_and_unlisted_readers);
	suite_add_tcase(s, tc);

	TCase *web = tcase_create("web");
	tcase_add_checked_fixture(web, setup, teardown);
	tcase_add_checked_fixture(web, web_setup, web_teardown);
	tcase_add_test(web, test_web1_accept_prefers_html);
	tcase_add_test(web, test_web1_file_names_checked);
	tcase_add_test(web, test_web1_browser_get_of_base_redirects_to_ui);
	tcase_add_test(web, test_web1_json_clients_unchanged);
	tcase_add_test(web, test_web1_ui_serves_files_with_csp_and_validators);
	tcase_add_test(web, test_web1_session_says_how_identity_is_known);
	tcase_add_test(web, test_web1_ui_refuses_bad_names_and_missing_files);
	suite_add_tcase(s, web);

	TCase *svc = tcase_create("service");
	tcase_add_checked_fixture(svc, setup, teardown);
	tcase_add_checked_fixture(svc, real_setup, real_teardown);
	tcase_add_test(svc, test_a2a1_send_message_round_trip_jsonrpc);
	tcase_add_test(svc, test_a2a1_send_message_round_trip_rest);
	tcase_add_test(svc, test_obs2_endpoint_counts_each_request_by_method_and_outcome);
	tcase_add_test(svc, test_ret4_dead_letters_owner_only_paged_redacted);
	tcase_add_test(svc, test_ret4_dead_letters_refusals_name_the_field);
	suite_add_tcase(s, svc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(suite());
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
