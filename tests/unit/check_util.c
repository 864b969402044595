/* SPDX-License-Identifier: Apache-2.0 */
/* check_util.c — the small shared pieces: strict JSON parsing (LIM-1, LIM-2),
 * timestamps (A2A-2), UUIDs, and extension activation (EXT-1). */
#include <check.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <sys/stat.h>
#include <unistd.h>

#include "stderr_fixture.h"
#include "domain/ext.h"
#include "util/buf.h"
#include "util/err.h"
#include "util/ids.h"
#include "util/jsonx.h"
#include "util/log.h"
#include "util/memo.h"
#include "util/metrics.h"
#include "util/text.h"

/* decision-026: the consuming add takes its value whatever happens, so a builder never
 * leaks or double-frees when an allocation fails. */
START_TEST(test_oom1_json_put_consumes_its_value)
{
	json_object *o = json_object_new_object();
	json_object *v = json_object_new_string("x");
	json_object_get(v); /* a reference of our own, to see what th_json_put left */
	ck_assert_int_eq(th_json_put(o, "k", v), 0);
	ck_assert_str_eq(th_json_str(o, "k"), "x");
	ck_assert_int_eq(json_object_put(v), 0); /* o still holds it */
	json_object *w = json_object_new_string("y");
	json_object_get(w);
	ck_assert_int_eq(th_json_put(NULL, "k", w), -1); /* no object: w is dropped */
	ck_assert_int_eq(json_object_put(w), 1);         /* ours was the last reference */
	ck_assert_int_eq(th_json_put(o, "n", NULL), -1); /* a failed allocation */
	ck_assert_ptr_null(json_object_object_get(o, "n"));
	json_object_put(o);
}
END_TEST

START_TEST(test_oom1_json_push_consumes_its_value)
{
	json_object *a = json_object_new_array();
	json_object *v = json_object_new_string("x");
	json_object_get(v);
	ck_assert_int_eq(th_json_push(a, v), 0);
	ck_assert_int_eq(json_object_array_length(a), 1);
	ck_assert_int_eq(json_object_put(v), 0); /* a still holds it */
	json_object *w = json_object_new_string("y");
	json_object_get(w);
	ck_assert_int_eq(th_json_push(NULL, w), -1); /* no array: w is dropped */
	ck_assert_int_eq(json_object_put(w), 1);
	ck_assert_int_eq(th_json_push(a, NULL), -1); /* a failed allocation */
	ck_assert_int_eq(json_object_array_length(a), 1);
	json_object_put(a);
}
END_TEST

/* decision-029: a memo answers only under the stamp its texts were kept for. */
START_TEST(test_stream5_memo_forgets_on_a_new_stamp_and_stays_small)
{
	struct th_memo *m = th_memo_new();
	ck_assert_ptr_nonnull(m);
	struct th_memo_stamp s1 = {1, 0}, s2 = {1, 1};
	ck_assert_ptr_null(th_memo_get(m, s1, "k"));
	th_memo_put(m, s1, "k", "text one");
	ck_assert_str_eq(th_memo_get(m, s1, "k"), "text one");
	ck_assert_ptr_null(th_memo_get(m, s1, "other"));
	th_memo_put(m, s1, "k", "text two"); /* the same key: replaced */
	ck_assert_str_eq(th_memo_get(m, s1, "k"), "text two");
	ck_assert_ptr_null(th_memo_get(m, s2, "k")); /* a commit since: forgotten */
	ck_assert_ptr_null(th_memo_get(m, s1, "k")); /* and not back under the old stamp */
	/* A text longer than TH_MEMO_TEXT_MAX is not kept. */
	char *big = malloc(TH_MEMO_TEXT_MAX + 2);
	memset(big, 'x', TH_MEMO_TEXT_MAX + 1);
	big[TH_MEMO_TEXT_MAX + 1] = '\0';
	th_memo_put(m, s2, "big", big);
	ck_assert_ptr_null(th_memo_get(m, s2, "big"));
	free(big);
	/* Full: the oldest key goes first. */
	char key[16];
	for (int i = 0; i < 17; i++) {
		snprintf(key, sizeof key, "k%d", i);
		th_memo_put(m, s2, key, key);
	}
	ck_assert_ptr_null(th_memo_get(m, s2, "k0"));
	ck_assert_str_eq(th_memo_get(m, s2, "k16"), "k16");
	ck_assert_str_eq(th_memo_get(m, s2, "k1"), "k1");
	th_memo_free(m);
}
END_TEST

/* The helpers the configuration and command-file readers share (issue 11). */
START_TEST(test_store3_text_helpers_trim_split_and_read_hex)
{
	char line[] = "  db = a.db = b  ";
	char *key = NULL, *value = NULL;
	ck_assert_int_eq(th_split_pair(line, '=', &key, &value), 0);
	ck_assert_str_eq(key, "db");
	ck_assert_str_eq(value, "a.db = b"); /* the first separator splits */
	char none[] = "no separator";
	ck_assert_int_eq(th_split_pair(none, ':', &key, &value), -1);
	char blank[] = " \t\n";
	ck_assert_str_eq(th_trim(blank), "");
	ck_assert_int_eq(th_hexval('0'), 0);
	ck_assert_int_eq(th_hexval('f'), 15);
	ck_assert_int_eq(th_hexval('F'), 15);
	ck_assert_int_eq(th_hexval('g'), -1);
	/* LIM-4: page tokens are lowercase hex; an uppercase digit is refused. */
	ck_assert_int_eq(th_hexval_lower('f'), 15);
	ck_assert_int_eq(th_hexval_lower('9'), 9);
	ck_assert_int_eq(th_hexval_lower('F'), -1);
	ck_assert_int_eq(th_hexval_lower('\0'), -1);
}
END_TEST

/* STORE-6: which db values select PostgreSQL (the store, the metrics file and the site
 * gauges all ask this one predicate). */
START_TEST(test_store6_a_postgresql_uri_is_told_from_a_file_name)
{
	ck_assert_int_eq(th_is_pg_uri("postgresql://th@127.0.0.1/th"), 1);
	ck_assert_int_eq(th_is_pg_uri("postgres://h/db"), 1);
	ck_assert_int_eq(th_is_pg_uri("var/tiny-harness.db"), 0);
	ck_assert_int_eq(th_is_pg_uri("postgresql:/one-slash"), 0);
	ck_assert_int_eq(th_is_pg_uri("./postgresql://x"), 0);
	ck_assert_int_eq(th_is_pg_uri(""), 0);
	ck_assert_int_eq(th_is_pg_uri(NULL), 0);
}
END_TEST

/* TEN-2, decision-029: the GetTask memo key's number (th_buf_put_i64) is the text
 * "%" PRId64 writes, for every value a key or a kept answer's expiry can hold. */
START_TEST(test_ten2_buf_put_i64_writes_what_prid64_writes)
{
	const int64_t vs[] = {0, 1, -1, 9, 10, -10, 123456789, INT64_MAX, INT64_MIN, INT32_MIN};
	for (size_t i = 0; i < sizeof vs / sizeof vs[0]; i++) {
		char want[32];
		snprintf(want, sizeof want, "x%" PRId64 "y", vs[i]);
		struct th_buf b;
		th_buf_init(&b);
		th_buf_puts(&b, "x");
		ck_assert_int_eq(th_buf_put_i64(&b, vs[i]), 0);
		th_buf_puts(&b, "y");
		ck_assert_str_eq(b.data, want);
		th_buf_free(&b);
		/* SCALE-1: the text PostgreSQL's integer parameters are sent as. */
		char t[TH_I64_TEXT + 1];
		memset(t, 'z', sizeof t);
		size_t len = th_i64_text(t, vs[i]);
		ck_assert_uint_eq(len, strlen(want) - 2);
		ck_assert_int_eq(t[len], '\0');
		ck_assert_int_eq(strncmp(t, want + 1, len), 0);
		ck_assert_int_eq(t[TH_I64_TEXT], 'z'); /* nothing past TH_I64_TEXT */
	}
}
END_TEST

START_TEST(test_lim2_parse_refuses_trailing_data_and_bad_utf8)
{
	json_object *v = NULL;
	struct th_error e;
	ck_assert_int_eq(th_json_parse("{\"a\":1} x", 9, 32, &v, &e), TH_EPARSE);
	ck_assert_ptr_nonnull(strstr(e.msg, "offset"));
	ck_assert_int_eq(th_json_parse("{\"a\":\"\xff\"}", 9, 32, &v, &e), TH_EPARSE);
	ck_assert_int_eq(th_json_parse("{\"a\":1", 6, 32, &v, &e), TH_EPARSE);
	ck_assert_ptr_nonnull(strstr(e.msg, "end of input"));
	/* Not JSON, though json-c's strict mode would take them. */
	ck_assert_int_eq(th_json_parse("{'a':1}", 7, 32, &v, &e), TH_EPARSE);
	ck_assert_int_eq(th_json_parse("[NaN]", 5, 32, &v, &e), TH_EPARSE);
	ck_assert_int_eq(th_json_parse("[Infinity]", 10, 32, &v, &e), TH_EPARSE);
	ck_assert_int_eq(th_json_parse("[\"it's\",1e5,true]", 17, 32, &v, &e), TH_OK);
	json_object_put(v);
	ck_assert_int_eq(th_json_parse(" {\"a\":[1,2]}\n", 13, 32, &v, &e), TH_OK);
	json_object_put(v);
}
END_TEST

/* LIM-4: every kind of invalid UTF-8 is a parse error naming the offset, and valid
 * text of every length (and escaped surrogate pairs) still parses. */
static void utf8_bad(const char *in, const char *want)
{
	json_object *v = NULL;
	struct th_error e;
	th_error_clear(&e);
	ck_assert_msg(th_json_parse(in, strlen(in), 32, &v, &e) == TH_EPARSE, "accepted %s", in);
	ck_assert_msg(strstr(e.msg, want) != NULL, "%s: %s", in, e.msg);
	ck_assert_ptr_null(v);
}

static void utf8_good(const char *in)
{
	json_object *v = NULL;
	struct th_error e;
	th_error_clear(&e);
	ck_assert_msg(th_json_parse(in, strlen(in), 32, &v, &e) == TH_OK, "%s: %s", in, e.msg);
	json_object_put(v);
}

START_TEST(test_lim4_invalid_utf8_of_every_kind_is_a_parse_error)
{
	utf8_bad("{\"a\":\"\xc0\x80\"}", "invalid UTF-8 at offset 6");         /* overlong NUL */
	utf8_bad("{\"a\":\"\xe0\x80\xaf\"}", "invalid UTF-8 at offset 6");     /* overlong '/' */
	utf8_bad("{\"a\":\"\xed\xa0\x80\"}", "invalid UTF-8 at offset 6");     /* encoded U+D800 */
	utf8_bad("{\"a\":\"\xf4\x90\x80\x80\"}", "invalid UTF-8 at offset 6"); /* > U+10FFFF */
	utf8_bad("{\"a\":\"\x80\"}", "invalid UTF-8 at offset 6");             /* stray */
	utf8_bad("{\"a\":\"x\\ud800\"}", "unpaired UTF-16 surrogate escape at offset 7");
	utf8_bad("{\"a\":\"\\udc00y\"}", "unpaired UTF-16 surrogate escape at offset 6");
	utf8_bad("{\"a\":\"\\ud800\\u0041\"}", "unpaired UTF-16 surrogate escape at offset 6");
	utf8_good("{\"a\":\"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80\"}");
	utf8_good("{\"a\":\"\\ud83d\\ude00 and \\\\ud800 is text\"}");
}
END_TEST

/* LIM-4: a name repeated in one object is refused, naming it, wherever the object is
 * (nested, after arrays, after an object whose repeated member held objects), and
 * however the name is spelled ("a" and "\u0061" are one name). */
START_TEST(test_lim4_duplicate_names_are_a_parse_error)
{
	utf8_bad("{\"messageId\":\"a\",\"messageId\":\"b\"}", "\"messageId\" appears twice");
	utf8_bad("{\"p\":{\"x\":[{\"k\":1},{\"k\":2,\"k\":3}]}}", "\"k\" appears twice");
	utf8_bad("{\"a\":{\"x\":{}},\"b\":1,\"a\":{\"y\":1,\"z\":2}}", "\"a\" appears twice");
	utf8_bad("{\"ab\":1,\"a\\u0062\":2}", "\"ab\" appears twice");
	utf8_bad("[{\"s\":\"a:b\",\"t\":\"{\"},{\"m\":1,\"n\":{\"q\":[]},\"m\":2}]",
	         "\"m\" appears twice");
	utf8_good(
	    "{\"a\":{\"a\":{\"a\":1}},\"b\":[{\"a\":1},{\"a\":2}],\"c\":\"a:b,{\\\"a\\\":1}\"}");
	utf8_good(
	    "{\"message_id\":\"x\",\"messageId\":\"y\"}"); /* two names; the decoder decides */
}
END_TEST

START_TEST(test_lim2_parse_accepts_bare_values)
{
	json_object *v = NULL;
	struct th_error e;
	ck_assert_int_eq(th_json_parse("1", 1, 32, &v, &e), TH_OK);
	ck_assert_int_eq(json_object_get_int(v), 1);
	json_object_put(v);
	ck_assert_int_eq(th_json_parse("null", 4, 32, &v, &e), TH_OK);
	ck_assert_ptr_null(v);
	ck_assert_int_eq(th_json_parse("true ", 5, 32, &v, &e), TH_OK);
	json_object_put(v);
}
END_TEST

START_TEST(test_lim1_parse_depth_limit_is_named)
{
	char deep[200];
	memset(deep, '[', 100);
	memset(deep + 100, ']', 100);
	json_object *v = NULL;
	struct th_error e;
	ck_assert_int_eq(th_json_parse(deep, 200, 32, &v, &e), TH_EINVAL);
	ck_assert_ptr_nonnull(strstr(e.msg, "32"));
	ck_assert_int_eq(th_json_parse(deep + 80, 40, 32, &v, &e), TH_OK);
	json_object_put(v);
}
END_TEST

START_TEST(test_task3_unknown_keys_are_found)
{
	static const char *const keys[] = {"kind", "action", NULL};
	json_object *v = json_tokener_parse("{\"kind\":1,\"action\":2}");
	ck_assert_ptr_null(th_json_unknown_key(v, keys));
	json_object_put(v);
	v = json_tokener_parse("{\"kind\":1,\"reason\":2}");
	ck_assert_str_eq(th_json_unknown_key(v, keys), "reason");
	json_object_put(v);
	ck_assert_ptr_null(th_json_unknown_key(NULL, keys));
}
END_TEST

START_TEST(test_a2a2_timestamps_round_trip_with_milliseconds)
{
	char ts[TH_TS_LEN + 1];
	th_ts_format(1767225600123LL, ts);
	ck_assert_str_eq(ts, "2026-01-01T00:00:00.123Z");
	/* Every field zero-padded to its width (the digits are written by hand). */
	const struct {
		int64_t ms;
		const char *text;
	} known[] = {{0, "1970-01-01T00:00:00.000Z"},
	             {1000007, "1970-01-01T00:16:40.007Z"},
	             {951782400050LL, "2000-02-29T00:00:00.050Z"},
	             {253402300799999LL, "9999-12-31T23:59:59.999Z"}};
	for (size_t i = 0; i < sizeof known / sizeof known[0]; i++) {
		char k[TH_TS_LEN + 1];
		th_ts_format(known[i].ms, k);
		ck_assert_str_eq(k, known[i].text);
	}
	int64_t ms;
	ck_assert_int_eq(th_ts_parse(ts, &ms), 0);
	ck_assert_int_eq(ms, 1767225600123LL);
	ck_assert_int_eq(th_ts_parse("2026-01-01T00:00:00Z", &ms), 0);
	ck_assert_int_eq(ms, 1767225600000LL);
	ck_assert_int_eq(th_ts_parse("2026-01-01T00:00:00.123456789Z", &ms), 0);
	ck_assert_int_eq(ms, 1767225600123LL);
	ck_assert_int_eq(th_ts_parse("2026-13-01T00:00:00Z", &ms), -1);
	ck_assert_int_eq(th_ts_parse("yesterday", &ms), -1);
}
END_TEST

/* A2A-2, PKG-4: th_utc_split (arithmetic, no time zone file) agrees with the C library's
 * gmtime_r on every day from 1600 to 2400 at a second that moves through the day, and on
 * the edges around the epoch and the leap days; th_ts_format writes 1969 the right way. */
START_TEST(test_a2a2_utc_split_agrees_with_gmtime_across_eight_centuries)
{
	setenv("TZ", "UTC", 1);
	const int64_t first = -11676096000LL, last = 13569465600LL; /* 1600-01-01, 2400-01-01 */
	int64_t step = 86400 + 7;
	for (int64_t secs = first; secs < last; secs += step) {
		time_t t = (time_t)secs;
		struct tm tm;
		ck_assert_ptr_nonnull(gmtime_r(&t, &tm));
		struct th_utc u;
		th_utc_split(secs, &u);
		if (u.year != tm.tm_year + 1900 || u.mon != tm.tm_mon + 1 || u.mday != tm.tm_mday ||
		    u.hour != tm.tm_hour || u.min != tm.tm_min || u.sec != tm.tm_sec ||
		    u.wday != tm.tm_wday)
			ck_abort_msg("at %lld: %lld-%d-%d %d:%d:%d wday %d, gmtime_r %d-%d-%d "
			             "%d:%d:%d wday %d",
			             (long long)secs, (long long)u.year, u.mon, u.mday, u.hour,
			             u.min, u.sec, u.wday, tm.tm_year + 1900, tm.tm_mon + 1,
			             tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, tm.tm_wday);
	}
	char ts[TH_TS_LEN + 1];
	th_ts_format(-1, ts);
	ck_assert_str_eq(ts, "1969-12-31T23:59:59.999Z");
	th_ts_format(-86400000LL * 365 + 1, ts);
	ck_assert_str_eq(ts, "1969-01-01T00:00:00.001Z");
	th_ts_format(4107542400000LL, ts); /* 2100 is not a leap year */
	ck_assert_str_eq(ts, "2100-03-01T00:00:00.000Z");
	th_ts_format(1709164800000LL, ts);
	ck_assert_str_eq(ts, "2024-02-29T00:00:00.000Z");
}
END_TEST

/* LIM-4: RFC 3339 parsed strictly and correctly: numeric offsets are valid and move
 * the instant; a date the calendar does not have, a sign or space where a digit
 * belongs, or anything after the zone is refused. */
START_TEST(test_lim4_rfc3339_timestamps_are_calendar_checked_with_offsets)
{
	int64_t ms;
	ck_assert_int_eq(th_ts_parse("2026-01-01T01:00:00+01:00", &ms), 0);
	ck_assert_int_eq(ms, 1767225600000LL);
	ck_assert_int_eq(th_ts_parse("2025-12-31T19:30:00.5-04:30", &ms), 0);
	ck_assert_int_eq(ms, 1767225600500LL);
	ck_assert_int_eq(th_ts_parse("2026-01-01t00:00:00z", &ms), 0);
	ck_assert_int_eq(ms, 1767225600000LL);
	ck_assert_int_eq(th_ts_parse("2024-02-29T00:00:00Z", &ms), 0); /* a leap year */
	ck_assert_int_eq(ms, 1709164800000LL);
	ck_assert_int_eq(th_ts_parse("1969-12-31T23:59:59Z", &ms), 0);
	ck_assert_int_eq(ms, -1000);
	static const char *const bad[] = {
	    "2026-02-30T00:00:00Z",     "2025-02-29T00:00:00Z",
	    "2100-02-29T00:00:00Z",     "2026-04-31T00:00:00Z",
	    "2026-01-01T24:00:00Z",     "2026-01-01T00:60:00Z",
	    "+026-01-01T00:00:00Z",     "2026-1-01T00:00:00Z",
	    "2026-01-01 00:00:00Z",     "2026-01-01T00:00:00",
	    "2026-01-01T00:00:00+0100", "2026-01-01T00:00:00+24:00",
	    "2026-01-01T00:00:00.Z",    "2026-01-01T00:00:00.1234567890Z",
	    "2026-01-01T00:00:00Zx",    "2026-01-01T0 :00:00Z"};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
		ck_assert_msg(th_ts_parse(bad[i], &ms) == -1, "accepted %s", bad[i]);
}
END_TEST

START_TEST(test_task2_uuids_are_version_7_distinct_and_ordered)
{
	char a[TH_UUID_LEN + 1], b[TH_UUID_LEN + 1];
	int64_t before = th_now_ms();
	th_uuid(a);
	struct timespec pause = {0, 2000000}; /* 2 ms: b falls in a later millisecond */
	nanosleep(&pause, NULL);
	th_uuid(b);
	ck_assert_uint_eq(strlen(a), 36);
	ck_assert_int_eq(a[8], '-');
	ck_assert_int_eq(a[14], '7');
	ck_assert(strchr("89ab", a[19]) != NULL);
	ck_assert_str_ne(a, b);
	ck_assert_msg(strcmp(a, b) < 0, "%s made before %s sorts after it", a, b);
	/* The first 48 bits are the Unix time in milliseconds. */
	char hex[13];
	memcpy(hex, a, 8);
	memcpy(hex + 8, a + 9, 4);
	hex[12] = '\0';
	int64_t ms = (int64_t)strtoll(hex, NULL, 16);
	ck_assert_int_ge(ms, before);
	ck_assert_int_le(ms, before + 1000);
}
END_TEST

/* Ids draw their random bits from a per-thread pool (util/ids.c): a forked child does
 * not hand out the bytes its parent will, and ids in one thread do not repeat. */
static int cmp_id(const void *a, const void *b)
{
	return strcmp(a, b);
}

START_TEST(test_task2_uuids_of_a_forked_child_differ_from_its_parents)
{
	char warm[TH_UUID_LEN + 1];
	th_uuid(warm); /* the pool is filled before the fork */
	int fds[2];
	ck_assert_int_eq(pipe(fds), 0);
	pid_t pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		char c[TH_UUID_LEN + 1];
		th_uuid(c);
		ssize_t w = write(fds[1], c + 19, 17); /* the random digits */
		_exit(w == 17 ? 0 : 1);
	}
	char p[TH_UUID_LEN + 1], child[18] = {0};
	th_uuid(p);
	ck_assert_int_eq(read(fds[0], child, 17), 17);
	int status = 0;
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	close(fds[0]);
	close(fds[1]);
	ck_assert_msg(strncmp(p + 19, child, 17) != 0, "parent and child drew the same bits %s",
	              child);
	/* 1,000 ids from one thread (31 pool refills): all different. */
	static char ids[1000][TH_UUID_LEN + 1];
	for (int i = 0; i < 1000; i++)
		th_uuid(ids[i]);
	/* Sorted, a repeat sits next to its twin: 999 checks instead of 499,500 (each a
	 * mark point written to the parent under CK_FORK, which timed out under ASan on a
	 * loaded machine). */
	qsort(ids, 1000, sizeof ids[0], cmp_id);
	for (int i = 1; i < 1000; i++)
		ck_assert_msg(strcmp(ids[i - 1], ids[i]) != 0, "id %s repeats", ids[i]);
}
END_TEST

START_TEST(test_ext1_known_extensions_activate_and_unknown_are_named)
{
	unsigned bits;
	struct th_error e;
	ck_assert_int_eq(th_ext_parse(NULL, &bits, &e), TH_OK);
	ck_assert_uint_eq(bits, 0);
	ck_assert_int_eq(
	    th_ext_parse(" " TH_EXT_URI_TASK " ,," TH_EXT_URI_A2UI "," TH_EXT_URI_TASK, &bits, &e),
	    TH_OK);
	ck_assert_uint_eq(bits, TH_EXT_TASK | TH_EXT_A2UI);
	struct th_buf b;
	th_buf_init(&b);
	th_ext_format(bits, &b);
	ck_assert_str_eq(b.data, TH_EXT_URI_TASK "," TH_EXT_URI_A2UI);
	th_buf_free(&b);
	ck_assert_int_eq(th_ext_parse(TH_EXT_URI_STATUS ", https://x.example/ext/v1, urn:y, "
	                                                "https://x.example/ext/v1",
	                              &bits, &e),
	                 TH_EUNSUPPORTED);
	ck_assert_ptr_nonnull(strstr(e.msg, "https://x.example/ext/v1, urn:y;"));
	ck_assert_uint_eq(bits, 0);
	/* A prefix of a supported URI is not that URI. */
	ck_assert_int_eq(th_ext_parse(TH_EXT_ROOT "/a2a/ext/task", &bits, &e), TH_EUNSUPPORTED);
}
END_TEST

/* SEC-6: a log line cannot carry a raw escape code, a forged line break or a C1
 * control; ordinary UTF-8 passes untouched. */
static void a_busy_spell(struct th_log_spell *sp)
{
	for (int i = 0; i < 20; i++)
		th_log_spell_failed(sp, "stream", "database busy (events since)");
	th_log_spell_failed(sp, "stream", "database error (events since): the disk is full");
	th_log_spell_failed(sp, "stream", "database error (events since): the disk is full");
	th_log_spell_over(sp, "stream", "the event log reads");
	th_log_spell_over(sp, "stream", "the event log reads"); /* no spell: nothing */
}

/* LIM-5: a failure tried again at every poll is logged when its spell begins and when
 * its cause changes, then once when the work succeeds again, with the count. */
START_TEST(test_lim5_a_spell_of_failures_is_logged_at_its_start_cause_and_end)
{
	struct th_log_spell sp = {0};
	char log[] = "/tmp/th-util-log-XXXXXX";
	int saved = th_test_stderr_to(log);
	a_busy_spell(&sp);
	char *out = th_test_stderr_back(saved, log);
	ck_assert_int_eq(th_test_count(out, "\n"), 3);
	ck_assert_int_eq(th_test_count(out, "stream: database busy (events since) (tried again"),
	                 1);
	ck_assert_int_eq(th_test_count(out, "the disk is full (tried again at every poll)"), 1);
	ck_assert_int_eq(
	    th_test_count(out, "stream: the event log reads again after 22 failed tries"), 1);
	ck_assert_int_eq(sp.failures, 0);
	free(out);
}
END_TEST

START_TEST(test_sec6_log_escapes_control_characters)
{
	char out[128];
	th_log_escape(out, sizeof out, "a\x1b[31mred\r\nforged: line\x7f");
	ck_assert_str_eq(out, "a\\x1b[31mred\\x0d\\x0aforged: line\\x7f");
	th_log_escape(out, sizeof out,
	              "caf\xc3\xa9 \xc2\x9b"
	              "2J \xe2\x82\xac");
	ck_assert_str_eq(out, "caf\xc3\xa9 \\x9b"
	                      "2J \xe2\x82\xac");
	char small[8];
	ck_assert_uint_eq(th_log_escape(small, sizeof small, "ab\x1b\x1b"), 6);
	ck_assert_str_eq(small, "ab\\x1b");

	/* th_log itself: what reaches stderr is escaped. */
	int fds[2];
	ck_assert_int_eq(pipe(fds), 0);
	fflush(stderr);
	int saved = dup(2);
	dup2(fds[1], 2);
	th_log_request("SendMessage", "t\x1b]0;x\x07");
	th_log(TH_LOG_WARN, "model said %s", "\x1b[2Jgone");
	th_log_request(NULL, NULL);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	close(fds[1]);
	char line[512] = "";
	ssize_t n = read(fds[0], line, sizeof line - 1);
	close(fds[0]);
	ck_assert_int_gt(n, 0);
	line[n] = '\0';
	ck_assert_ptr_null(strchr(line, 0x1b));
	ck_assert_ptr_null(strchr(line, 0x07));
	ck_assert_ptr_nonnull(
	    strstr(line, "SendMessage t\\x1b]0;x\\x07: model said \\x1b[2Jgone\n"));

	/* The request's names are kept cut to their fields, a missing one as "". */
	char long_id[400];
	memset(long_id, 'i', sizeof long_id - 1);
	long_id[sizeof long_id - 1] = '\0';
	th_log_request("GetTask", long_id);
	const struct th_log_ctx *c = th_log_ctx_self();
	ck_assert_str_eq(c->op, "GetTask");
	ck_assert_uint_eq(strlen(c->task), sizeof c->task - 1);
	ck_assert_int_eq(strncmp(c->task, long_id, sizeof c->task - 1), 0);
	th_log_request(NULL, NULL);
	ck_assert_str_eq(c->op, "");
	ck_assert_str_eq(c->task, "");
}
END_TEST

/* A2A-4: th_error_set sets every field of the record, so an error body never carries a
 * taskId left over from a struct that was never cleared (stack garbage) or from an
 * earlier error; th_error_task names the task only when asked. */
START_TEST(test_a2a4_error_set_leaves_no_stale_task_id)
{
	struct th_error e;
	memset(&e, 'x', sizeof e); /* what an uncleared stack struct may hold */
	ck_assert_int_eq(th_error_set(&e, TH_EINVAL, "bad %s", "field"), TH_EINVAL);
	ck_assert_int_eq(e.code, TH_EINVAL);
	ck_assert_str_eq(e.msg, "bad field");
	ck_assert_str_eq(e.task_id, "");

	th_error_task(&e, "t-1");
	ck_assert_str_eq(e.task_id, "t-1");
	th_error_set(&e, TH_ENOTFOUND, "another error");
	ck_assert_str_eq(e.task_id, "");

	th_error_task(NULL, "t-1"); /* a caller without a record is fine */
	ck_assert_int_eq(th_error_set(NULL, TH_EINTERNAL, "x"), TH_EINTERNAL);
}
END_TEST

/* A fresh counters file in /tmp, mapped by this process; the caller unlinks path and
 * calls th_mx_close. */
static void mx_fresh(char *path, size_t n)
{
	snprintf(path, n, "/tmp/th-check-mx-%ld", (long)getpid());
	unlink(path);
	struct th_error e;
	th_error_clear(&e);
	ck_assert_msg(th_mx_open(path, &e) == TH_OK, "%s", e.msg);
	ck_assert(th_mx_on());
}

/* OBS-2, decision-070: what another process counts is in this process's scrape, and the
 * counts outlive the process that made them (they are the file's, not a process's). */
START_TEST(test_obs2_counters_are_shared_across_processes_and_outlive_them)
{
	char path[64];
	mx_fresh(path, sizeof path);
	th_mx_request(0, 0, 1200);
	pid_t pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		th_mx_request(0, 0, 100);
		th_mx_request(0, 7, 30000000); /* above the last bound: +Inf only */
		th_mx_turn(1);
		_exit(0);
	}
	int status = 0;
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	struct th_mx_snapshot s;
	struct th_error e;
	ck_assert_int_eq(th_mx_snapshot(&s, &e), TH_OK);
	ck_assert_uint_eq(s.d.requests[0][0], 2);
	ck_assert_uint_eq(s.d.requests[0][7], 1);
	ck_assert_uint_eq(s.d.turns[1], 1);
	ck_assert_uint_eq(s.d.latency_sum_us[0], 1200 + 100 + 30000000);
	/* 100 us in the first bucket (<= 500), 1200 in the third (<= 2500), 30 s past all. */
	ck_assert_uint_eq(s.d.latency[0][0], 1);
	ck_assert_uint_eq(s.d.latency[0][2], 1);
	ck_assert_uint_eq(s.d.latency[0][TH_MX_BOUNDS], 1);
	th_mx_close();
	/* Mapped again (a new process would do the same): the counts are still there. */
	ck_assert_int_eq(th_mx_open(path, &e), TH_OK);
	ck_assert_int_eq(th_mx_snapshot(&s, &e), TH_OK);
	ck_assert_uint_eq(s.d.requests[0][0], 2);
	/* Out-of-range indexes are ignored, not written past the table. */
	th_mx_request(TH_MX_METHODS, 0, 1);
	th_mx_request(0, -1, 1);
	ck_assert_int_eq(th_mx_snapshot(&s, &e), TH_OK);
	ck_assert_uint_eq(s.d.requests[0][0], 2);
	th_mx_close();
	unlink(path);
	ck_assert(!th_mx_on());
	ck_assert_int_eq(th_mx_snapshot(&s, &e), TH_EINTERNAL);
}
END_TEST

/* OBS-2: open streams are a gauge per process; a process killed with streams open stops
 * counting once it is gone, and its slot is taken by the next process. */
START_TEST(test_obs2_open_streams_of_a_gone_process_stop_counting)
{
	char path[64];
	mx_fresh(path, sizeof path);
	th_mx_streams(1);
	th_mx_streams(1);
	int up[2], down[2]; /* child -> parent: counted; parent -> child: looked */
	ck_assert_int_eq(pipe(up), 0);
	ck_assert_int_eq(pipe(down), 0);
	pid_t pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		th_mx_streams(1);
		th_mx_streams(1);
		th_mx_streams(1);
		char c = 'x';
		ssize_t w = write(up[1], &c, 1);
		ssize_t got = read(down[0], &c, 1);
		_exit(w == 1 && got >= 0 ? 0 : 1);
	}
	char c;
	ck_assert_int_eq(read(up[0], &c, 1), 1);
	struct th_mx_snapshot s;
	struct th_error e;
	ck_assert_int_eq(th_mx_snapshot(&s, &e), TH_OK);
	ck_assert_int_eq(s.open_streams, 5);
	ck_assert_int_eq(write(down[1], &c, 1), 1);
	int status = 0;
	ck_assert_int_eq(waitpid(pid, &status, 0), pid); /* gone with three streams open */
	close(up[0]);
	close(up[1]);
	close(down[0]);
	close(down[1]);
	ck_assert_int_eq(th_mx_snapshot(&s, &e), TH_OK);
	ck_assert_int_eq(s.open_streams, 2);
	th_mx_streams(-1);
	th_mx_streams(-1);
	ck_assert_int_eq(th_mx_snapshot(&s, &e), TH_OK);
	ck_assert_int_eq(s.open_streams, 0);
	th_mx_close();
	unlink(path);
}
END_TEST

/* OBS-2: a file that holds something else is neither counted into nor overwritten. */
START_TEST(test_obs2_a_file_of_another_kind_is_refused_by_name)
{
	char path[64];
	snprintf(path, sizeof path, "/tmp/th-check-mx-foreign-%ld", (long)getpid());
	int fd = open(path, O_CREAT | O_TRUNC | O_WRONLY, 0600);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, "SQLite format 3", 15), 15);
	close(fd);
	struct th_error e;
	th_error_clear(&e);
	ck_assert_int_eq(th_mx_open(path, &e), TH_EINTERNAL);
	ck_assert_msg(strstr(e.msg, path) != NULL, "%s", e.msg);
	ck_assert(!th_mx_on());
	/* Refused before anything was written to it: not grown, not changed. */
	struct stat sb;
	ck_assert_int_eq(stat(path, &sb), 0);
	ck_assert_int_eq((long)sb.st_size, 15);
	th_mx_request(0, 0, 1); /* no file: nothing happens */
	th_error_clear(&e);
	ck_assert_int_eq(th_mx_open("/nonexistent-dir/x/metrics", &e), TH_EINTERNAL);
	ck_assert_msg(strstr(e.msg, "/nonexistent-dir/x/metrics") != NULL, "%s", e.msg);
	unlink(path);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("util");
	TCase *tc = tcase_create("util");
	tcase_add_test(tc, test_ten2_buf_put_i64_writes_what_prid64_writes);
	tcase_add_test(tc, test_lim2_parse_refuses_trailing_data_and_bad_utf8);
	tcase_add_test(tc, test_lim4_invalid_utf8_of_every_kind_is_a_parse_error);
	tcase_add_test(tc, test_lim4_duplicate_names_are_a_parse_error);
	tcase_add_test(tc, test_lim2_parse_accepts_bare_values);
	tcase_add_test(tc, test_lim1_parse_depth_limit_is_named);
	tcase_add_test(tc, test_a2a2_timestamps_round_trip_with_milliseconds);
	tcase_add_test(tc, test_a2a2_utc_split_agrees_with_gmtime_across_eight_centuries);
	tcase_add_test(tc, test_lim4_rfc3339_timestamps_are_calendar_checked_with_offsets);
	tcase_add_test(tc, test_task3_unknown_keys_are_found);
	tcase_add_test(tc, test_task2_uuids_are_version_7_distinct_and_ordered);
	tcase_add_test(tc, test_task2_uuids_of_a_forked_child_differ_from_its_parents);
	tcase_add_test(tc, test_ext1_known_extensions_activate_and_unknown_are_named);
	tcase_add_test(tc, test_oom1_json_put_consumes_its_value);
	tcase_add_test(tc, test_oom1_json_push_consumes_its_value);
	tcase_add_test(tc, test_store3_text_helpers_trim_split_and_read_hex);
	tcase_add_test(tc, test_stream5_memo_forgets_on_a_new_stamp_and_stays_small);
	tcase_add_test(tc, test_sec6_log_escapes_control_characters);
	tcase_add_test(tc, test_lim5_a_spell_of_failures_is_logged_at_its_start_cause_and_end);
	tcase_add_test(tc, test_a2a4_error_set_leaves_no_stale_task_id);
	tcase_add_test(tc, test_obs2_counters_are_shared_across_processes_and_outlive_them);
	tcase_add_test(tc, test_obs2_open_streams_of_a_gone_process_stop_counting);
	tcase_add_test(tc, test_obs2_a_file_of_another_kind_is_refused_by_name);
	tcase_add_test(tc, test_store6_a_postgresql_uri_is_told_from_a_file_name);
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
