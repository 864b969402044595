/* SPDX-License-Identifier: Apache-2.0 */
/* check_http.c — the carriers' shared half (src/http/http.c) through the in-memory
 * double: request line, strict body reading (LIM-1), query and percent-decoding,
 * response and SSE framing (A2A-5). */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "http/http.h"
#include "util/buf.h"

struct fx {
	struct th_http_mem *m;
	struct th_http_io io;
	struct th_http_req r;
	struct th_error e;
};

static void fx_open(struct fx *f, const char *const *params, const char *body)
{
	memset(f, 0, sizeof *f);
	f->m = th_http_mem_new(params, body, body != NULL ? strlen(body) : 0);
	ck_assert_ptr_nonnull(f->m);
	th_http_mem_io(f->m, &f->io);
	th_error_clear(&f->e);
}

static void fx_close(struct fx *f)
{
	th_http_req_free(&f->r);
	th_http_mem_free(f->m);
}

static th_err init(struct fx *f, const char *base)
{
	return th_http_req_init(&f->r, &f->io, base, &f->e);
}

START_TEST(test_mem_double_params_and_body)
{
	const char *p[] = {"REQUEST_METHOD=POST", "EMPTY=", NULL};
	struct fx f;
	fx_open(&f, p, "abc");
	ck_assert_str_eq(th_http_param(&f.io, "REQUEST_METHOD"), "POST");
	ck_assert_str_eq(th_http_param(&f.io, "EMPTY"), "");
	ck_assert_ptr_null(th_http_param(&f.io, "REQUEST"));
	char buf[8];
	ck_assert_int_eq(f.io.read(f.io.impl, buf, 2), 2);
	ck_assert_int_eq(f.io.read(f.io.impl, buf + 2, 8), 1);
	ck_assert_int_eq(f.io.read(f.io.impl, buf, 8), 0);
	ck_assert(memcmp(buf, "abc", 3) == 0);
	ck_assert_int_eq(f.io.write(f.io.impl, "xy", 2), 0);
	th_http_mem_disconnect(f.m);
	ck_assert_int_eq(f.io.write(f.io.impl, "z", 1), -1);
	ck_assert_int_eq(f.io.flush(f.io.impl), -1);
	size_t n;
	ck_assert_str_eq(th_http_mem_output(f.m, &n), "xy");
	ck_assert_uint_eq(n, 2);
	fx_close(&f);
}
END_TEST

/* ID-1, SEC-1: the request reader takes every parameter in one pass, with the rule of a
 * single look-up (th_http_param, getenv, FCGX_GetParam): the first "NAME=" wins, a name
 * is not the prefix of a longer one, an empty value is a value, an entry without "="
 * is nothing. A second X-Participant-Id behind the first is never the sender. */
START_TEST(test_id1_req_init_reads_each_parameter_as_one_lookup_would)
{
	const char *p[] = {
	    "HTTP_X_PARTICIPANT_IDX=mallory", "REQUEST_METHOD=POST",           "NOEQUALS",
	    "HTTP_X_PARTICIPANT_ID=alice",    "HTTP_X_PARTICIPANT_ID=mallory", "HTTP_HOST=",
	    "REQUEST_URI=/a2a/tasks?x=1",     "HTTP_A2A_VERSIONS=9.9",         NULL};
	struct fx f;
	fx_open(&f, p, NULL);
	ck_assert_int_eq(init(&f, "/a2a/"), TH_OK);
	ck_assert_str_eq(f.r.participant, "alice");
	ck_assert_str_eq(f.r.participant, th_http_param(&f.io, "HTTP_X_PARTICIPANT_ID"));
	ck_assert_str_eq(f.r.method, "POST");
	ck_assert_str_eq(f.r.host, "");
	ck_assert_str_eq(f.r.path, "/tasks");
	ck_assert_str_eq(f.r.query, "x=1");
	ck_assert_ptr_null(f.r.version);
	ck_assert_ptr_null(f.r.origin);
	ck_assert_ptr_null(f.r.authorization);
	ck_assert_ptr_null(th_http_param(&f.io, "NOEQUALS"));
	fx_close(&f);
}
END_TEST

START_TEST(test_req_init_root_base_keeps_path_and_splits_query)
{
	const char *p[] = {"REQUEST_METHOD=GET", "REQUEST_URI=/tasks/abc?historyLength=2",
	                   "HTTP_X_PARTICIPANT_ID=alice", "HTTP_IF_NONE_MATCH=\"x\"", NULL};
	struct fx f;
	fx_open(&f, p, NULL);
	ck_assert_int_eq(init(&f, "/"), TH_OK);
	ck_assert_str_eq(f.r.method, "GET");
	ck_assert_str_eq(f.r.path, "/tasks/abc");
	ck_assert_str_eq(f.r.query, "historyLength=2");
	ck_assert_int_eq(f.r.in_base, 1);
	ck_assert_str_eq(f.r.participant, "alice");
	ck_assert_str_eq(f.r.if_none_match, "\"x\"");
	ck_assert_ptr_null(f.r.version);
	fx_close(&f);
}
END_TEST

START_TEST(test_req_init_base_path_made_relative)
{
	const char *p[] = {"REQUEST_METHOD=POST", "REQUEST_URI=/a2a/message:send", NULL};
	struct fx f;
	fx_open(&f, p, NULL);
	ck_assert_int_eq(init(&f, "/a2a/"), TH_OK);
	ck_assert_str_eq(f.r.path, "/message:send");
	ck_assert_str_eq(f.r.query, "");
	ck_assert_int_eq(f.r.in_base, 1);
	fx_close(&f);
}
END_TEST

START_TEST(test_req_init_base_itself_with_and_without_slash)
{
	const char *uris[] = {"REQUEST_URI=/a2a/", "REQUEST_URI=/a2a", "REQUEST_URI=/a2a?x=1"};
	for (size_t i = 0; i < 3; i++) {
		const char *p[] = {uris[i], NULL};
		struct fx f;
		fx_open(&f, p, NULL);
		ck_assert_int_eq(init(&f, "/a2a/"), TH_OK);
		ck_assert_str_eq(f.r.path, "/");
		ck_assert_int_eq(f.r.in_base, 1);
		ck_assert_str_eq(f.r.method, "GET");
		fx_close(&f);
	}
}
END_TEST

START_TEST(test_req_init_outside_base_kept_whole)
{
	const char *p[] = {"REQUEST_URI=/.well-known/agent-card.json", NULL};
	struct fx f;
	fx_open(&f, p, NULL);
	ck_assert_int_eq(init(&f, "/a2a/"), TH_OK);
	ck_assert_str_eq(f.r.path, "/.well-known/agent-card.json");
	ck_assert_int_eq(f.r.in_base, 0);
	fx_close(&f);

	/* A prefix that is not a whole segment is not under the base. */
	const char *q[] = {"REQUEST_URI=/a2ax/tasks", NULL};
	fx_open(&f, q, NULL);
	ck_assert_int_eq(init(&f, "/a2a/"), TH_OK);
	ck_assert_str_eq(f.r.path, "/a2ax/tasks");
	ck_assert_int_eq(f.r.in_base, 0);
	fx_close(&f);
}
END_TEST

START_TEST(test_req_init_falls_back_to_script_name_and_path_info)
{
	const char *p[] = {"SCRIPT_NAME=/cgi-bin/th", "PATH_INFO=/tasks/t1",
	                   "QUERY_STRING=pageSize=3", NULL};
	struct fx f;
	fx_open(&f, p, NULL);
	ck_assert_int_eq(init(&f, "/cgi-bin/th/"), TH_OK);
	ck_assert_str_eq(f.r.path, "/tasks/t1");
	ck_assert_str_eq(f.r.query, "pageSize=3");
	ck_assert_int_eq(f.r.in_base, 1);
	fx_close(&f);
}
END_TEST

START_TEST(test_a2a3_version_from_header_wins_over_query)
{
	const char *p[] = {"REQUEST_URI=/?A2A-Version=0.3", "HTTP_A2A_VERSION=1.0", NULL};
	struct fx f;
	fx_open(&f, p, NULL);
	ck_assert_int_eq(init(&f, "/"), TH_OK);
	ck_assert_str_eq(f.r.version, "1.0");
	fx_close(&f);
}
END_TEST

START_TEST(test_a2a3_version_from_query_parameter)
{
	const char *p[] = {"REQUEST_URI=/tasks?pageSize=1&A2A-Version=1.0", NULL};
	struct fx f;
	fx_open(&f, p, NULL);
	ck_assert_int_eq(init(&f, "/"), TH_OK);
	ck_assert_str_eq(f.r.version, "1.0");
	ck_assert_ptr_eq(f.r.version, f.r.version_buf);
	fx_close(&f);

	/* An empty header counts as absent, so the query still speaks. */
	const char *q[] = {"REQUEST_URI=/?A2A-Version=1.0", "HTTP_A2A_VERSION=", NULL};
	fx_open(&f, q, NULL);
	ck_assert_int_eq(init(&f, "/"), TH_OK);
	ck_assert_str_eq(f.r.version, "1.0");
	fx_close(&f);
}
END_TEST

static th_err read_body(struct fx *f, size_t max)
{
	ck_assert_int_eq(init(f, "/"), TH_OK);
	return th_http_read_body(&f->r, &f->io, max, &f->e);
}

START_TEST(test_lim1_body_exact_length_read)
{
	const char *p[] = {"CONTENT_LENGTH=5", NULL};
	struct fx f;
	fx_open(&f, p, "hello");
	ck_assert_int_eq(read_body(&f, 5), TH_OK);
	ck_assert_str_eq(f.r.body, "hello");
	ck_assert_uint_eq(f.r.body_len, 5);
	fx_close(&f);
}
END_TEST

START_TEST(test_lim1_body_missing_length_is_empty)
{
	const char *p[] = {NULL};
	struct fx f;
	fx_open(&f, p, "ignored");
	ck_assert_int_eq(read_body(&f, 100), TH_OK);
	ck_assert_ptr_nonnull(f.r.body);
	ck_assert_uint_eq(f.r.body_len, 0);
	ck_assert_uint_eq(th_http_mem_reads(f.m), 0);
	fx_close(&f);
}
END_TEST

/* LIM-1: a body without Content-Length (chunked) is refused, naming the encoding, and
 * nothing of it is read; with a Content-Length the encoding header is not looked at. */
START_TEST(test_lim1_chunked_body_without_length_refused_naming_it)
{
	const char *p[] = {"HTTP_TRANSFER_ENCODING=chunked", NULL};
	struct fx f;
	fx_open(&f, p, "5\r\nhello\r\n0\r\n\r\n");
	ck_assert_int_eq(read_body(&f, 100), TH_ELENGTH);
	ck_assert_ptr_nonnull(strstr(f.e.msg, "Transfer-Encoding: chunked"));
	ck_assert_uint_eq(th_http_mem_reads(f.m), 0);
	fx_close(&f);
	const char *q[] = {"HTTP_TRANSFER_ENCODING=chunked", "CONTENT_LENGTH=5", NULL};
	fx_open(&f, q, "hello");
	ck_assert_int_eq(read_body(&f, 100), TH_OK);
	ck_assert_str_eq(f.r.body, "hello");
	fx_close(&f);
}
END_TEST

START_TEST(test_lim1_body_length_non_digits_refused)
{
	const char *bad[] = {"CONTENT_LENGTH=-1", "CONTENT_LENGTH=5x", "CONTENT_LENGTH= 5",
	                     "CONTENT_LENGTH=+5", "CONTENT_LENGTH=0x10"};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		const char *p[] = {bad[i], NULL};
		struct fx f;
		fx_open(&f, p, "hello");
		ck_assert_int_eq(read_body(&f, 100), TH_EINVALREQ);
		ck_assert_ptr_nonnull(strstr(f.e.msg, "Content-Length"));
		ck_assert_uint_eq(th_http_mem_reads(f.m), 0);
		fx_close(&f);
	}
}
END_TEST

START_TEST(test_lim1_body_length_overflow_is_too_large)
{
	const char *p[] = {"CONTENT_LENGTH=99999999999999999999999999", NULL};
	struct fx f;
	fx_open(&f, p, "x");
	th_http_mem_fail_reads(f.m);
	ck_assert_int_eq(read_body(&f, 100), TH_ETOOLARGE);
	ck_assert_uint_eq(th_http_mem_reads(f.m), 0);
	fx_close(&f);
}
END_TEST

START_TEST(test_lim1_body_over_max_refused_before_reading)
{
	const char *p[] = {"CONTENT_LENGTH=11", NULL};
	struct fx f;
	fx_open(&f, p, "0123456789a");
	/* Were the body read, the failing read would turn this into TH_EINVALREQ. */
	th_http_mem_fail_reads(f.m);
	ck_assert_int_eq(read_body(&f, 10), TH_ETOOLARGE);
	ck_assert_str_eq(f.e.msg, "request body is 11 bytes; the limit is 10 bytes");
	ck_assert_uint_eq(th_http_mem_reads(f.m), 0);
	ck_assert_ptr_null(f.r.body);
	fx_close(&f);
}
END_TEST

START_TEST(test_lim1_body_exactly_max_accepted)
{
	const char *p[] = {"CONTENT_LENGTH=10", NULL};
	struct fx f;
	fx_open(&f, p, "0123456789");
	ck_assert_int_eq(read_body(&f, 10), TH_OK);
	ck_assert_uint_eq(f.r.body_len, 10);
	fx_close(&f);
}
END_TEST

START_TEST(test_lim1_short_body_refused)
{
	const char *p[] = {"CONTENT_LENGTH=10", NULL};
	struct fx f;
	fx_open(&f, p, "short");
	ck_assert_int_eq(read_body(&f, 100), TH_EINVALREQ);
	ck_assert_ptr_nonnull(strstr(f.e.msg, "after 5 of the 10 bytes"));
	ck_assert_ptr_null(f.r.body);
	fx_close(&f);
}
END_TEST

START_TEST(test_lim1_read_error_refused)
{
	const char *p[] = {"CONTENT_LENGTH=3", NULL};
	struct fx f;
	fx_open(&f, p, "abc");
	th_http_mem_fail_reads(f.m);
	ck_assert_int_eq(read_body(&f, 100), TH_EINVALREQ);
	ck_assert_uint_eq(th_http_mem_reads(f.m), 1);
	fx_close(&f);
}
END_TEST

START_TEST(test_pct_decode)
{
	char *s = th_http_pct_decode("a%20b%2Fc+d%3a", 14);
	ck_assert_str_eq(s, "a b/c+d:");
	free(s);
	/* Only n bytes count. */
	s = th_http_pct_decode("abc%41", 3);
	ck_assert_str_eq(s, "abc");
	free(s);
	ck_assert_ptr_null(th_http_pct_decode("a%2", 3));
	ck_assert_ptr_null(th_http_pct_decode("a%", 2));
	ck_assert_ptr_null(th_http_pct_decode("%zz", 3));
	ck_assert_ptr_null(th_http_pct_decode("a%00b", 5));
	s = th_http_pct_decode("", 0);
	ck_assert_str_eq(s, "");
	free(s);
}
END_TEST

START_TEST(test_query_lookup)
{
	const char *q = "a=1&name=hello+world%21&empty=&flag&name=second&bad=%G1&nul=%00";
	char *v = th_http_query_get(q, "name");
	ck_assert_str_eq(v, "hello world!");
	free(v);
	v = th_http_query_get(q, "empty");
	ck_assert_str_eq(v, "");
	free(v);
	v = th_http_query_get(q, "flag");
	ck_assert_str_eq(v, "");
	free(v);
	ck_assert_ptr_null(th_http_query_get(q, "missing"));
	ck_assert_ptr_null(th_http_query_get(q, "nam"));
	ck_assert_int_eq(th_http_query_lookup(q, "bad", &v), -1);
	ck_assert_ptr_null(v);
	ck_assert_int_eq(th_http_query_lookup(q, "nul", &v), -1);
	ck_assert_int_eq(th_http_query_lookup(q, "missing", &v), 0);
	ck_assert_int_eq(th_http_query_lookup("", "a", &v), 0);
	/* Encoded names match too. */
	v = th_http_query_get("A2A%2DVersion=1.0", "A2A-Version");
	ck_assert_str_eq(v, "1.0");
	free(v);
}
END_TEST

START_TEST(test_respond_framing)
{
	const char *p[] = {NULL};
	struct fx f;
	fx_open(&f, p, NULL);
	ck_assert_int_eq(th_http_respond(&f.io, 404, "application/json", "X-A: 1\r\n", "{}", 2), 0);
	ck_assert_str_eq(th_http_mem_output(f.m, NULL), "Status: 404 Not Found\r\n"
	                                                "Content-Type: application/json\r\n"
	                                                "Content-Length: 2\r\n"
	                                                "X-A: 1\r\n"
	                                                "\r\n"
	                                                "{}");
	/* A whole response leaves with the end of the request, in one write. */
	ck_assert_uint_eq(th_http_mem_flushes(f.m), 0);
	fx_close(&f);
}
END_TEST

START_TEST(test_respond_304_has_no_body)
{
	const char *p[] = {NULL};
	struct fx f;
	fx_open(&f, p, NULL);
	ck_assert_int_eq(
	    th_http_respond(&f.io, 304, "application/json", "ETag: \"1\"\r\n", "{}", 2), 0);
	ck_assert_str_eq(th_http_mem_output(f.m, NULL),
	                 "Status: 304 Not Modified\r\nETag: \"1\"\r\n\r\n");
	fx_close(&f);
}
END_TEST

START_TEST(test_respond_client_gone)
{
	const char *p[] = {NULL};
	struct fx f;
	fx_open(&f, p, NULL);
	th_http_mem_disconnect(f.m);
	ck_assert_int_eq(th_http_respond(&f.io, 200, "text/plain", NULL, "x", 1), -1);
	fx_close(&f);
}
END_TEST

START_TEST(test_a2a5_sse_framing_flushes_each_event)
{
	const char *p[] = {NULL};
	struct fx f;
	fx_open(&f, p, NULL);
	ck_assert_int_eq(th_http_sse_start(&f.io, "A2A-Extensions: x\r\n"), 0);
	size_t f0 = th_http_mem_flushes(f.m);
	ck_assert_uint_ge(f0, 1);
	ck_assert_int_eq(th_http_sse_event(&f.io, "7", NULL, "{\"a\":1}"), 0);
	ck_assert_uint_eq(th_http_mem_flushes(f.m), f0 + 1);
	ck_assert_int_eq(th_http_sse_event(&f.io, NULL, "error", "{}"), 0);
	ck_assert_int_eq(th_http_sse_comment(&f.io, "ping"), 0);
	ck_assert_uint_eq(th_http_mem_flushes(f.m), f0 + 3);
	ck_assert_str_eq(th_http_mem_output(f.m, NULL), "Status: 200 OK\r\n"
	                                                "Content-Type: text/event-stream\r\n"
	                                                "Cache-Control: no-store\r\n"
	                                                "X-Accel-Buffering: no\r\n"
	                                                "A2A-Extensions: x\r\n"
	                                                "\r\n"
	                                                "id: 7\ndata: {\"a\":1}\n\n"
	                                                "event: error\ndata: {}\n\n"
	                                                ": ping\n\n");
	fx_close(&f);
}
END_TEST

START_TEST(test_a2a5_sse_line_breaks_cannot_forge_fields)
{
	const char *p[] = {NULL};
	struct fx f;
	fx_open(&f, p, NULL);
	ck_assert_int_eq(th_http_sse_event(&f.io, "1\nevent: x", NULL, "a\nid: 9\r\nb"), 0);
	ck_assert_str_eq(th_http_mem_output(f.m, NULL),
	                 "id: 1event: x\ndata: a\ndata: id: 9\ndata: b\n\n");
	th_http_mem_disconnect(f.m);
	ck_assert_int_eq(th_http_sse_event(&f.io, NULL, NULL, "x"), -1);
	fx_close(&f);
}
END_TEST

/* STREAM-6: the records a parked stream writes by hand. */
START_TEST(test_stream6_fcgi_stdout_splits_at_the_record_limit)
{
	size_t n = 70000;
	char *data = malloc(n);
	ck_assert_ptr_nonnull(data);
	memset(data, 'x', n);
	struct th_buf b;
	th_buf_init(&b);
	th_fcgi_stdout(&b, 0x1234, data, n);
	ck_assert_uint_eq(b.len, 8 + 65535 + 8 + (n - 65535));
	const unsigned char *h = (const unsigned char *)b.data;
	/* version 1, FCGI_STDOUT, request id, length 65535, no padding */
	ck_assert_int_eq(h[0], 1);
	ck_assert_int_eq(h[1], 6);
	ck_assert_int_eq(h[2] << 8 | h[3], 0x1234);
	ck_assert_int_eq(h[4] << 8 | h[5], 65535);
	h += 8 + 65535;
	ck_assert_int_eq(h[1], 6);
	ck_assert_int_eq(h[4] << 8 | h[5], (int)(n - 65535));
	th_buf_free(&b);
	th_buf_init(&b);
	th_fcgi_stdout(&b, 1, data, 0);
	ck_assert_uint_eq(b.len, 0); /* an empty write is not the end-of-stream record */
	th_buf_free(&b);
	free(data);
}
END_TEST

START_TEST(test_stream6_fcgi_end_is_empty_stdout_then_end_request)
{
	struct th_buf b;
	th_buf_init(&b);
	th_fcgi_end(&b, 3);
	static const unsigned char want[] = {1, 6, 0, 3, 0, 0, 0, 0, /* empty FCGI_STDOUT */
	                                     1, 3, 0, 3, 0, 8, 0, 0, /* FCGI_END_REQUEST */
	                                     0, 0, 0, 0, 0, 0, 0, 0};
	ck_assert_uint_eq(b.len, sizeof want);
	ck_assert_int_eq(memcmp(b.data, want, sizeof want), 0);
	th_buf_free(&b);
}
END_TEST

START_TEST(test_stream6_fcgi_input_sees_an_abort_across_reads_and_only_an_abort)
{
	struct th_fcgi_input in;
	memset(&in, 0, sizeof in);
	/* An FCGI_STDIN record with 5 content bytes and 3 of padding whose content looks
	 * like an abort header, then the real FCGI_ABORT_REQUEST split over two reads. */
	static const unsigned char stdin_rec[] = {1, 5, 0, 1, 0, 5, 3, 0, 1, 2, 0, 1, 0, 0, 0, 0};
	ck_assert_int_eq(th_fcgi_input_feed(&in, stdin_rec, 7), 0);
	ck_assert_int_eq(th_fcgi_input_feed(&in, stdin_rec + 7, sizeof stdin_rec - 7), 0);
	static const unsigned char abort_rec[] = {1, 2, 0, 1, 0, 0, 0, 0};
	ck_assert_int_eq(th_fcgi_input_feed(&in, abort_rec, 5), 0);
	ck_assert_int_eq(th_fcgi_input_feed(&in, abort_rec + 5, 3), 1);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("http");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, test_mem_double_params_and_body);
	tcase_add_test(tc, test_id1_req_init_reads_each_parameter_as_one_lookup_would);
	tcase_add_test(tc, test_req_init_root_base_keeps_path_and_splits_query);
	tcase_add_test(tc, test_req_init_base_path_made_relative);
	tcase_add_test(tc, test_req_init_base_itself_with_and_without_slash);
	tcase_add_test(tc, test_req_init_outside_base_kept_whole);
	tcase_add_test(tc, test_req_init_falls_back_to_script_name_and_path_info);
	tcase_add_test(tc, test_a2a3_version_from_header_wins_over_query);
	tcase_add_test(tc, test_a2a3_version_from_query_parameter);
	tcase_add_test(tc, test_lim1_body_exact_length_read);
	tcase_add_test(tc, test_lim1_body_missing_length_is_empty);
	tcase_add_test(tc, test_lim1_chunked_body_without_length_refused_naming_it);
	tcase_add_test(tc, test_lim1_body_length_non_digits_refused);
	tcase_add_test(tc, test_lim1_body_length_overflow_is_too_large);
	tcase_add_test(tc, test_lim1_body_over_max_refused_before_reading);
	tcase_add_test(tc, test_lim1_body_exactly_max_accepted);
	tcase_add_test(tc, test_lim1_short_body_refused);
	tcase_add_test(tc, test_lim1_read_error_refused);
	tcase_add_test(tc, test_pct_decode);
	tcase_add_test(tc, test_query_lookup);
	tcase_add_test(tc, test_respond_framing);
	tcase_add_test(tc, test_respond_304_has_no_body);
	tcase_add_test(tc, test_respond_client_gone);
	tcase_add_test(tc, test_a2a5_sse_framing_flushes_each_event);
	tcase_add_test(tc, test_a2a5_sse_line_breaks_cannot_forge_fields);
	tcase_add_test(tc, test_stream6_fcgi_stdout_splits_at_the_record_limit);
	tcase_add_test(tc, test_stream6_fcgi_end_is_empty_stdout_then_end_request);
	tcase_add_test(tc, test_stream6_fcgi_input_sees_an_abort_across_reads_and_only_an_abort);
	suite_add_tcase(s, tc);
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
