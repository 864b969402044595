/* SPDX-License-Identifier: Apache-2.0 */
/* check_a2a.c — unit tests for the A2A 1.0 wire model (src/a2a): decoding and validating
 * client input (A2A-2, LIM-1, §9.5 historyLength) and the ProtoJSON shapes of the builders. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "a2a/a2a.h"
#include "util/buf.h"
#include "util/ids.h"
#include "util/jsonx.h"

/* Small limits so each one is easy to cross in a test. */
static const struct th_limits lim = {
    .max_parts = 4,
    .max_text = 16,
    .max_metadata = 64,
    .max_id = 32,
};

static json_object *J(const char *s)
{
	json_object *v = NULL;
	struct th_error e;
	th_error_clear(&e);
	th_err rc = th_json_parse(s, strlen(s), 64, &v, &e);
	ck_assert_msg(rc == TH_OK, "test JSON does not parse: %s (%s)", s, e.msg);
	return v;
}

/* Decodes a message given as JSON text; returns the canonical form as text or NULL. */
static char *msg_text(const char *in, th_err *rc, struct th_error *e)
{
	json_object *v = J(in), *out = NULL;
	th_error_clear(e);
	*rc = th_a2a_message_decode(v, &lim, &out, e);
	char *s = NULL;
	if (*rc == TH_OK) {
		ck_assert_ptr_nonnull(out);
		s = strdup(th_json_text(out));
	} else {
		ck_assert_ptr_null(out);
	}
	json_object_put(out);
	json_object_put(v);
	return s;
}

static void msg_ok(const char *in, const char *want)
{
	th_err rc;
	struct th_error e;
	char *got = msg_text(in, &rc, &e);
	ck_assert_msg(rc == TH_OK, "refused %s: %s", in, e.msg);
	ck_assert_str_eq(got, want);
	free(got);
}

static void msg_bad(const char *in, const char *want_msg)
{
	th_err rc;
	struct th_error e;
	char *got = msg_text(in, &rc, &e);
	ck_assert_msg(rc == TH_EINVAL, "accepted %s as %s", in, got ? got : "(null)");
	ck_assert_str_eq(e.msg, want_msg);
	free(got);
}

#define MSG_HEAD "{\"messageId\":\"m1\",\"role\":\"ROLE_USER\","
#define OUT_HEAD "{\"messageId\":\"m1\",\"role\":\"ROLE_USER\","

/* ---- messages (A2A-2) ---------------------------------------------------- */

START_TEST(test_a2a2_message_canonical_form)
{
	msg_ok(
	    "{\"messageId\":\"m1\",\"contextId\":\"c1\",\"taskId\":\"t1\",\"role\":\"ROLE_USER\","
	    "\"parts\":[{\"text\":\"hi\"}],\"metadata\":{\"k\":1},\"extensions\":[\"urn:x\"],"
	    "\"referenceTaskIds\":[\"t0\"]}",
	    "{\"messageId\":\"m1\",\"contextId\":\"c1\",\"taskId\":\"t1\",\"role\":\"ROLE_USER\","
	    "\"parts\":[{\"text\":\"hi\"}],\"metadata\":{\"k\":1},\"extensions\":[\"urn:x\"],"
	    "\"referenceTaskIds\":[\"t0\"]}");
}
END_TEST

START_TEST(test_a2a2_snake_case_fields_accepted)
{
	msg_ok(
	    "{\"message_id\":\"m1\",\"context_id\":\"c1\",\"task_id\":\"t1\",\"role\":\"ROLE_"
	    "USER\","
	    "\"parts\":[{\"text\":\"hi\",\"media_type\":\"text/plain\"}],"
	    "\"reference_task_ids\":[\"t0\"]}",
	    "{\"messageId\":\"m1\",\"contextId\":\"c1\",\"taskId\":\"t1\",\"role\":\"ROLE_USER\","
	    "\"parts\":[{\"text\":\"hi\",\"mediaType\":\"text/plain\"}],"
	    "\"referenceTaskIds\":[\"t0\"]}");
}
END_TEST

START_TEST(test_a2a2_role_enum_number_accepted)
{
	msg_ok("{\"messageId\":\"m1\",\"role\":1,\"parts\":[{\"text\":\"a\"}]}",
	       OUT_HEAD "\"parts\":[{\"text\":\"a\"}]}");
}
END_TEST

START_TEST(test_a2a2_agent_role_refused)
{
	msg_bad("{\"messageId\":\"m1\",\"role\":\"ROLE_AGENT\",\"parts\":[{\"text\":\"a\"}]}",
	        "message.role must be ROLE_USER");
	msg_bad("{\"messageId\":\"m1\",\"role\":2,\"parts\":[{\"text\":\"a\"}]}",
	        "message.role must be ROLE_USER");
	msg_bad("{\"messageId\":\"m1\",\"role\":\"ROLE_UNSPECIFIED\",\"parts\":[{\"text\":\"a\"}]}",
	        "message.role must be ROLE_USER");
	msg_bad("{\"messageId\":\"m1\",\"role\":true,\"parts\":[{\"text\":\"a\"}]}",
	        "message.role must be ROLE_USER");
	msg_bad("{\"messageId\":\"m1\",\"parts\":[{\"text\":\"a\"}]}", "message.role is required");
}
END_TEST

START_TEST(test_a2a2_message_id_required_string)
{
	msg_bad("{\"role\":\"ROLE_USER\",\"parts\":[{\"text\":\"a\"}]}",
	        "message.messageId is required");
	msg_bad("{\"messageId\":null,\"role\":\"ROLE_USER\",\"parts\":[{\"text\":\"a\"}]}",
	        "message.messageId is required");
	msg_bad("{\"messageId\":7,\"role\":\"ROLE_USER\",\"parts\":[{\"text\":\"a\"}]}",
	        "message.messageId must be a string");
	msg_bad("{\"messageId\":\"\",\"role\":\"ROLE_USER\",\"parts\":[{\"text\":\"a\"}]}",
	        "message.messageId must not be empty");
}
END_TEST

START_TEST(test_a2a2_wrong_type_names_field)
{
	msg_bad(MSG_HEAD "\"contextId\":5,\"parts\":[{\"text\":\"a\"}]}",
	        "message.contextId must be a string");
	msg_bad(MSG_HEAD "\"task_id\":[],\"parts\":[{\"text\":\"a\"}]}",
	        "message.taskId must be a string");
	msg_bad(MSG_HEAD "\"metadata\":[],\"parts\":[{\"text\":\"a\"}]}",
	        "message.metadata must be an object");
	msg_bad(MSG_HEAD "\"extensions\":\"urn:x\",\"parts\":[{\"text\":\"a\"}]}",
	        "message.extensions must be an array of strings");
	msg_bad(MSG_HEAD "\"referenceTaskIds\":[\"a\",1],\"parts\":[{\"text\":\"a\"}]}",
	        "message.referenceTaskIds[1] must be a string");
	msg_bad(MSG_HEAD "\"parts\":{\"text\":\"a\"}}", "message.parts must be an array");
	msg_bad(MSG_HEAD "\"parts\":[\"a\"]}", "message.parts[0] must be an object");
	msg_bad(MSG_HEAD "\"parts\":[{\"text\":1}]}", "message.parts[0].text must be a string");
	msg_bad(MSG_HEAD "\"parts\":[{\"text\":\"a\",\"mediaType\":1}]}",
	        "message.parts[0].mediaType must be a string");
	msg_bad(MSG_HEAD "\"parts\":[{\"text\":\"a\",\"filename\":false}]}",
	        "message.parts[0].filename must be a string");
	msg_bad(MSG_HEAD "\"parts\":[{\"text\":\"a\",\"metadata\":\"x\"}]}",
	        "message.parts[0].metadata must be an object");
}
END_TEST

START_TEST(test_a2a2_message_not_object_refused)
{
	json_object *out = (json_object *)1;
	struct th_error e;
	th_error_clear(&e);
	ck_assert_int_eq(th_a2a_message_decode(NULL, &lim, &out, &e), TH_EINVAL);
	ck_assert_ptr_null(out);
	ck_assert_str_eq(e.msg, "message is required");
	json_object *v = J("[1]");
	ck_assert_int_eq(th_a2a_message_decode(v, &lim, &out, &e), TH_EINVAL);
	ck_assert_str_eq(e.msg, "message must be an object");
	json_object_put(v);
}
END_TEST

START_TEST(test_a2a2_parts_required_nonempty)
{
	msg_bad("{\"messageId\":\"m1\",\"role\":\"ROLE_USER\"}", "message.parts is required");
	msg_bad(MSG_HEAD "\"parts\":[]}", "message.parts must hold at least one part");
}
END_TEST

START_TEST(test_a2a2_empty_optional_strings_dropped)
{
	/* The JS client sends contextId:"" on a first message. */
	msg_ok(MSG_HEAD "\"contextId\":\"\",\"taskId\":\"\",\"parts\":[{\"text\":\"a\","
	                "\"mediaType\":\"\",\"filename\":\"\"}],\"extensions\":[]}",
	       OUT_HEAD "\"parts\":[{\"text\":\"a\"}]}");
}
END_TEST

START_TEST(test_a2a2_unknown_keys_ignored)
{
	msg_ok(MSG_HEAD "\"kind\":\"message\",\"parts\":[{\"kind\":\"text\",\"text\":\"a\"}],"
	                "\"zzz\":{\"deep\":[1]}}",
	       OUT_HEAD "\"parts\":[{\"text\":\"a\"}]}");
}
END_TEST

/* ---- parts (A2A-2) ------------------------------------------------------- */

START_TEST(test_a2a2_part_oneof_single_member_accepted)
{
	msg_ok(MSG_HEAD "\"parts\":[{\"text\":\"\"},{\"url\":\"https://x/a.pdf\","
	                "\"filename\":\"a.pdf\",\"mediaType\":\"application/pdf\"},"
	                "{\"data\":{\"k\":[1,2]},\"metadata\":{\"a\":1}},{\"raw\":\"aGk=\"}]}",
	       OUT_HEAD "\"parts\":[{\"text\":\"\"},{\"url\":\"https://x/a.pdf\","
	                "\"mediaType\":\"application/pdf\",\"filename\":\"a.pdf\"},"
	                "{\"data\":{\"k\":[1,2]},\"metadata\":{\"a\":1}},{\"raw\":\"aGk=\"}]}");
}
END_TEST

START_TEST(test_a2a2_part_oneof_zero_or_two_refused)
{
	msg_bad(MSG_HEAD "\"parts\":[{\"mediaType\":\"text/plain\"}]}",
	        "message.parts[0]: a part needs exactly one of text, raw, url, data");
	msg_bad(MSG_HEAD "\"parts\":[{\"text\":\"a\"},{\"text\":\"a\",\"url\":\"u\"}]}",
	        "message.parts[1]: a part needs exactly one of text, raw, url, data");
	msg_bad(MSG_HEAD "\"parts\":[{\"raw\":\"aGk=\",\"data\":1}]}",
	        "message.parts[0]: a part needs exactly one of text, raw, url, data");
	msg_bad(MSG_HEAD "\"parts\":[{}]}",
	        "message.parts[0]: a part needs exactly one of text, raw, url, data");
}
END_TEST

START_TEST(test_a2a2_part_data_null_is_member)
{
	msg_ok(MSG_HEAD "\"parts\":[{\"data\":null},{\"data\":\"s\"},{\"data\":[]}]}",
	       OUT_HEAD "\"parts\":[{\"data\":null},{\"data\":\"s\"},{\"data\":[]}]}");
	msg_bad(MSG_HEAD "\"parts\":[{\"data\":null,\"text\":\"a\"}]}",
	        "message.parts[0]: a part needs exactly one of text, raw, url, data");
	/* text:null is "not set" in ProtoJSON, so it does not count as a member. */
	msg_ok(MSG_HEAD "\"parts\":[{\"text\":null,\"url\":\"u\"}]}",
	       OUT_HEAD "\"parts\":[{\"url\":\"u\"}]}");
}
END_TEST

START_TEST(test_a2a2_part_raw_base64_accepted_and_canonical)
{
	msg_ok(MSG_HEAD "\"parts\":[{\"raw\":\"aGVsbG8=\"},{\"raw\":\"aGVsbG8\"},{\"raw\":\"-_8\"},"
	                "{\"raw\":\"+/8=\"}]}",
	       OUT_HEAD
	       "\"parts\":[{\"raw\":\"aGVsbG8=\"},{\"raw\":\"aGVsbG8=\"},{\"raw\":\"+/8=\"},"
	       "{\"raw\":\"+/8=\"}]}");
	msg_ok(MSG_HEAD "\"parts\":[{\"raw\":\"\"},{\"raw\":\"YWI\"},{\"raw\":\"YQ\"}]}",
	       OUT_HEAD "\"parts\":[{\"raw\":\"\"},{\"raw\":\"YWI=\"},{\"raw\":\"YQ==\"}]}");
}
END_TEST

START_TEST(test_a2a2_part_raw_base64_invalid_refused)
{
	static const char *bad[] = {
	    "abc!", "a", "ab=c", "a+b_", "abc==", "ab==c", "a b=", "=", "abcde"};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		char in[256];
		snprintf(in, sizeof in, MSG_HEAD "\"parts\":[{\"raw\":\"%s\"}]}", bad[i]);
		msg_bad(in, "message.parts[0].raw must be base64 (standard or URL-safe alphabet)");
	}
	msg_bad(MSG_HEAD "\"parts\":[{\"raw\":12}]}",
	        "message.parts[0].raw must be a base64 string");
}
END_TEST

START_TEST(test_a2a2_part_url_nonempty)
{
	msg_bad(MSG_HEAD "\"parts\":[{\"url\":\"\"}]}",
	        "message.parts[0].url must be a non-empty string");
	msg_bad(MSG_HEAD "\"parts\":[{\"url\":{}}]}",
	        "message.parts[0].url must be a non-empty string");
	msg_ok(MSG_HEAD "\"parts\":[{\"url\":\"file:///x\"}]}",
	       OUT_HEAD "\"parts\":[{\"url\":\"file:///x\"}]}");
}
END_TEST

/* ---- limits (LIM-1) ------------------------------------------------------ */

START_TEST(test_lim1_parts_limit_names_field)
{
	msg_bad(MSG_HEAD "\"parts\":[{\"text\":\"a\"},{\"text\":\"b\"},{\"text\":\"c\"},"
	                 "{\"text\":\"d\"},{\"text\":\"e\"}]}",
	        "message.parts has 5 parts; the limit is 4");
	msg_ok(MSG_HEAD "\"parts\":[{\"text\":\"a\"},{\"text\":\"b\"},{\"text\":\"c\"},"
	                "{\"text\":\"d\"}]}",
	       OUT_HEAD "\"parts\":[{\"text\":\"a\"},{\"text\":\"b\"},{\"text\":\"c\"},"
	                "{\"text\":\"d\"}]}");
}
END_TEST

START_TEST(test_lim1_text_limit_names_field)
{
	msg_bad(MSG_HEAD "\"parts\":[{\"text\":\"a\"},{\"text\":\"0123456789abcdefg\"}]}",
	        "message.parts[1].text is 17 bytes; the limit is 16");
	msg_ok(MSG_HEAD "\"parts\":[{\"text\":\"0123456789abcdef\"}]}",
	       OUT_HEAD "\"parts\":[{\"text\":\"0123456789abcdef\"}]}");
}
END_TEST

START_TEST(test_lim1_message_metadata_limit_names_field)
{
	/* {"k":"<58 x's>"} is 66 bytes serialised, over 64; with 56 x's it is 64. */
	char in[512], want[512], x[64];
	memset(x, 'x', 58);
	x[58] = '\0';
	snprintf(in, sizeof in,
	         MSG_HEAD "\"metadata\":{\"k\":\"%s\"},\"parts\":[{\"text\":\"a\"}]}", x);
	msg_bad(in, "message.metadata is 66 bytes serialised; the limit is 64");
	x[56] = '\0';
	snprintf(in, sizeof in,
	         MSG_HEAD "\"metadata\":{\"k\":\"%s\"},\"parts\":[{\"text\":\"a\"}]}", x);
	snprintf(want, sizeof want,
	         OUT_HEAD "\"parts\":[{\"text\":\"a\"}],\"metadata\":{\"k\":\"%s\"}}", x);
	msg_ok(in, want);
}
END_TEST

START_TEST(test_lim1_part_metadata_limit_names_field)
{
	char in[512], x[64];
	memset(x, 'x', 58);
	x[58] = '\0';
	snprintf(in, sizeof in,
	         MSG_HEAD "\"parts\":[{\"text\":\"a\",\"metadata\":{\"k\":\"%s\"}}]}", x);
	msg_bad(in, "message.parts[0].metadata is 66 bytes serialised; the limit is 64");
}
END_TEST

START_TEST(test_lim1_id_limit_names_field)
{
	/* 33 bytes against max_id 32. */
	msg_bad("{\"messageId\":\"0123456789abcdef0123456789abcdef0\",\"role\":\"ROLE_USER\","
	        "\"parts\":[{\"text\":\"a\"}]}",
	        "message.messageId is 33 bytes; the limit is 32");
	msg_bad(MSG_HEAD "\"contextId\":\"0123456789abcdef0123456789abcdef0\","
	                 "\"parts\":[{\"text\":\"a\"}]}",
	        "message.contextId is 33 bytes; the limit is 32");
	msg_bad(MSG_HEAD "\"taskId\":\"0123456789abcdef0123456789abcdef0\","
	                 "\"parts\":[{\"text\":\"a\"}]}",
	        "message.taskId is 33 bytes; the limit is 32");
	msg_ok("{\"messageId\":\"0123456789abcdef0123456789abcdef\",\"role\":\"ROLE_USER\","
	       "\"parts\":[{\"text\":\"a\"}]}",
	       "{\"messageId\":\"0123456789abcdef0123456789abcdef\",\"role\":\"ROLE_USER\","
	       "\"parts\":[{\"text\":\"a\"}]}");
}
END_TEST

/* SEC-3: the part strings that have no configured limit still have one, named in the
 * refusal. */
START_TEST(test_sec3_part_strings_have_limits)
{
	static char in[12000], want[200], x[9000];
	memset(x, 'x', sizeof x);
	x[TH_A2A_MEDIA_TYPE_MAX + 1] = '\0';
	snprintf(in, sizeof in, MSG_HEAD "\"parts\":[{\"text\":\"a\",\"mediaType\":\"%s\"}]}", x);
	snprintf(want, sizeof want, "message.parts[0].mediaType is %d bytes; the limit is %d",
	         TH_A2A_MEDIA_TYPE_MAX + 1, TH_A2A_MEDIA_TYPE_MAX);
	msg_bad(in, want);
	memset(x, 'x', sizeof x);
	x[TH_A2A_FILENAME_MAX + 1] = '\0';
	snprintf(in, sizeof in, MSG_HEAD "\"parts\":[{\"text\":\"a\",\"filename\":\"%s\"}]}", x);
	snprintf(want, sizeof want, "message.parts[0].filename is %d bytes; the limit is %d",
	         TH_A2A_FILENAME_MAX + 1, TH_A2A_FILENAME_MAX);
	msg_bad(in, want);
	memset(x, 'x', sizeof x);
	x[TH_A2A_URL_MAX + 1] = '\0';
	snprintf(in, sizeof in, MSG_HEAD "\"parts\":[{\"url\":\"%s\"}]}", x);
	snprintf(want, sizeof want, "message.parts[0].url is %d bytes; the limit is %d",
	         TH_A2A_URL_MAX + 1, TH_A2A_URL_MAX);
	msg_bad(in, want);
}
END_TEST

/* ---- SendMessageRequest -------------------------------------------------- */

#define GOOD_MSG                                                                                   \
	"\"message\":{\"messageId\":\"m1\",\"role\":\"ROLE_USER\",\"parts\":[{\"text\":\"a\"}]}"

static th_err send_dec(const char *in, struct th_send_req *r, struct th_error *e)
{
	json_object *v = J(in);
	th_error_clear(e);
	th_err rc = th_a2a_send_decode(v, &lim, r, e);
	json_object_put(v); /* the request must hold its own references */
	return rc;
}

static void send_bad(const char *in, const char *want_msg)
{
	struct th_send_req r;
	struct th_error e;
	ck_assert_msg(send_dec(in, &r, &e) == TH_EINVAL, "accepted %s", in);
	ck_assert_str_eq(e.msg, want_msg);
	ck_assert_ptr_null(r.message);
	ck_assert_ptr_null(r.metadata);
	ck_assert_ptr_null(r.accepted_output_modes);
	th_send_req_free(&r);
}

/* SEC-3: acceptedOutputModes and tenant are bounded too. */
START_TEST(test_sec3_send_strings_have_limits)
{
	static char in[8000], want[200];
	int n =
	    snprintf(in, sizeof in, "{" GOOD_MSG ",\"configuration\":{\"acceptedOutputModes\":[");
	for (int i = 0; i <= TH_A2A_MODES_MAX; i++)
		n += snprintf(in + n, sizeof in - (size_t)n, "%s\"text/plain\"", i ? "," : "");
	snprintf(in + n, sizeof in - (size_t)n, "]}}");
	snprintf(want, sizeof want,
	         "configuration.acceptedOutputModes has %d entries; the limit is %d",
	         TH_A2A_MODES_MAX + 1, TH_A2A_MODES_MAX);
	send_bad(in, want);
	char x[TH_TENANT_MAX + 2];
	memset(x, 't', sizeof x - 1);
	x[sizeof x - 1] = '\0';
	snprintf(in, sizeof in, "{" GOOD_MSG ",\"tenant\":\"%s\"}", x);
	snprintf(want, sizeof want, "tenant is %d bytes; the limit is %d", TH_TENANT_MAX + 1,
	         TH_TENANT_MAX);
	send_bad(in, want);
}
END_TEST

START_TEST(test_a2a2_send_minimal_and_empty_configuration)
{
	struct th_send_req r;
	struct th_error e;
	ck_assert_int_eq(send_dec("{" GOOD_MSG "}", &r, &e), TH_OK);
	ck_assert_str_eq(th_json_text(r.message), OUT_HEAD "\"parts\":[{\"text\":\"a\"}]}");
	ck_assert_int_eq(r.history_length, -1);
	ck_assert_int_eq(r.return_immediately, 0);
	ck_assert_ptr_null(r.metadata);
	ck_assert_ptr_null(r.accepted_output_modes);
	th_send_req_free(&r);
	ck_assert_int_eq(send_dec("{" GOOD_MSG ",\"configuration\":{},\"tenant\":\"x\"}", &r, &e),
	                 TH_OK);
	ck_assert_int_eq(r.history_length, -1);
	th_send_req_free(&r);
	th_send_req_free(&r); /* idempotent */
}
END_TEST

START_TEST(test_a2a2_send_configuration_fields)
{
	struct th_send_req r;
	struct th_error e;
	ck_assert_int_eq(send_dec("{" GOOD_MSG ",\"configuration\":{\"acceptedOutputModes\":"
	                          "[\"text/plain\"],\"historyLength\":0,\"returnImmediately\":true,"
	                          "\"taskPushNotificationConfig\":{\"url\":\"https://x\"}},"
	                          "\"metadata\":{\"a\":1}}",
	                          &r, &e),
	                 TH_OK);
	ck_assert_int_eq(r.history_length, 0);
	ck_assert_int_eq(r.return_immediately, 1);
	ck_assert_str_eq(th_json_text(r.accepted_output_modes), "[\"text/plain\"]");
	ck_assert_str_eq(th_json_text(r.metadata), "{\"a\":1}");
	th_send_req_free(&r);
}
END_TEST

START_TEST(test_a2a2_send_snake_case_configuration_accepted)
{
	struct th_send_req r;
	struct th_error e;
	ck_assert_int_eq(send_dec("{" GOOD_MSG ",\"configuration\":{\"accepted_output_modes\":"
	                          "[\"a/b\"],\"history_length\":3,\"return_immediately\":true}}",
	                          &r, &e),
	                 TH_OK);
	ck_assert_int_eq(r.history_length, 3);
	ck_assert_int_eq(r.return_immediately, 1);
	ck_assert_ptr_nonnull(r.accepted_output_modes);
	th_send_req_free(&r);
}
END_TEST

START_TEST(test_a2a2_send_params_must_be_object)
{
	struct th_send_req r;
	struct th_error e;
	th_error_clear(&e);
	ck_assert_int_eq(th_a2a_send_decode(NULL, &lim, &r, &e), TH_EINVAL);
	ck_assert_str_eq(e.msg, "params must be an object");
	send_bad("[]", "params must be an object");
	send_bad("{}", "message is required");
	send_bad("{\"message\":null}", "message is required");
	send_bad("{\"message\":\"hi\"}", "message must be an object");
}
END_TEST

START_TEST(test_a2a2_send_history_length_negative_refused)
{
	send_bad("{" GOOD_MSG ",\"configuration\":{\"historyLength\":-1}}",
	         "configuration.historyLength must not be negative (got -1)");
	send_bad("{" GOOD_MSG ",\"configuration\":{\"historyLength\":\"x\"}}",
	         "configuration.historyLength must be an integer");
	send_bad("{" GOOD_MSG ",\"configuration\":{\"historyLength\":1.5}}",
	         "configuration.historyLength must be an integer");
	send_bad("{" GOOD_MSG ",\"configuration\":{\"historyLength\":1e300}}",
	         "configuration.historyLength must be at most 2147483647");
}
END_TEST

START_TEST(test_a2a2_send_configuration_types)
{
	send_bad("{" GOOD_MSG ",\"configuration\":[]}", "configuration must be an object");
	send_bad("{" GOOD_MSG ",\"configuration\":{\"returnImmediately\":\"yes\"}}",
	         "configuration.returnImmediately must be a boolean");
	send_bad("{" GOOD_MSG ",\"configuration\":{\"acceptedOutputModes\":\"text/plain\"}}",
	         "configuration.acceptedOutputModes must be an array of strings");
	send_bad("{" GOOD_MSG ",\"configuration\":{\"acceptedOutputModes\":[1]}}",
	         "configuration.acceptedOutputModes[0] must be a string");
	send_bad("{" GOOD_MSG ",\"configuration\":{\"taskPushNotificationConfig\":1}}",
	         "configuration.taskPushNotificationConfig must be an object");
	send_bad("{" GOOD_MSG ",\"metadata\":5}", "metadata must be an object");
	send_bad("{" GOOD_MSG ",\"tenant\":5}", "tenant must be a string");
}
END_TEST

START_TEST(test_lim1_send_message_limits_apply)
{
	send_bad("{\"message\":{\"messageId\":\"m\",\"role\":\"ROLE_USER\",\"parts\":"
	         "[{\"text\":\"0123456789abcdefg\"}]}}",
	         "message.parts[0].text is 17 bytes; the limit is 16");
}
END_TEST

/* ---- GetTask / CancelTask ----------------------------------------------- */

static void get_bad(const char *in, const char *want_msg)
{
	struct th_get_req r;
	struct th_error e;
	json_object *v = in ? J(in) : NULL;
	th_error_clear(&e);
	ck_assert_msg(th_a2a_get_decode(v, &r, &e) == TH_EINVAL, "accepted %s", in);
	ck_assert_str_eq(e.msg, want_msg);
	ck_assert_ptr_null(r.id);
	json_object_put(v);
}

/* LIM-4: an id with a NUL inside is refused naming the field, never cut at the NUL. */
START_TEST(test_lim4_nul_in_ids_is_refused_naming_the_field)
{
	send_bad("{\"message\":{\"messageId\":\"m1\\u0000x\",\"role\":\"ROLE_USER\","
	         "\"parts\":[{\"text\":\"a\"}]}}",
	         "message.messageId contains a NUL character (\\u0000)");
	send_bad("{\"message\":{\"messageId\":\"m1\",\"taskId\":\"t\\u0000\",\"role\":"
	         "\"ROLE_USER\",\"parts\":[{\"text\":\"a\"}]}}",
	         "message.taskId contains a NUL character (\\u0000)");
	send_bad("{\"message\":{\"messageId\":\"m1\",\"contextId\":\"c\\u0000d\",\"role\":"
	         "\"ROLE_USER\",\"parts\":[{\"text\":\"a\"}]}}",
	         "message.contextId contains a NUL character (\\u0000)");
	get_bad("{\"id\":\"real-id\\u0000junk\"}", "id contains a NUL character (\\u0000)");
}
END_TEST

/* LIM-4: message.extensions (and referenceTaskIds) have a limit on entries. */
START_TEST(test_lim4_message_string_arrays_have_limits)
{
	struct th_buf b;
	th_buf_init(&b);
	th_buf_puts(&b, "{\"message\":{\"messageId\":\"m1\",\"role\":\"ROLE_USER\","
	                "\"parts\":[{\"text\":\"a\"}],\"extensions\":[");
	for (int i = 0; i < 65; i++)
		th_buf_printf(&b, "%s\"urn:x:%d\"", i ? "," : "", i);
	th_buf_puts(&b, "]}}");
	ck_assert(!b.oom);
	send_bad(b.data, "message.extensions has 65 entries; the limit is 64");
	th_buf_free(&b);
}
END_TEST

/* LIM-4: one field in both spellings is two values for it; refused at every level a
 * decoder reads, naming both names. */
START_TEST(test_lim4_camel_and_snake_spelling_of_one_field_is_refused)
{
	send_bad("{\"message\":{\"messageId\":\"m1\",\"message_id\":\"m2\",\"role\":\"ROLE_USER\","
	         "\"parts\":[{\"text\":\"a\"}]}}",
	         "message.messageId and message.message_id are one field; send it once");
	send_bad("{\"message\":{\"messageId\":\"m1\",\"role\":\"ROLE_USER\",\"parts\":[{\"text\":"
	         "\"a\"}]},\"configuration\":{\"historyLength\":1,\"history_length\":2}}",
	         "configuration.historyLength and configuration.history_length are one field; "
	         "send it once");
	send_bad("{\"message\":{\"messageId\":\"m1\",\"role\":\"ROLE_USER\",\"parts\":[{\"text\":"
	         "\"a\",\"mediaType\":\"text/plain\",\"media_type\":\"x/y\"}]}}",
	         "message.parts[0].mediaType and message.parts[0].media_type are one field; "
	         "send it once");
	struct th_list_req l;
	struct th_error e;
	json_object *v = J("{\"contextId\":\"c\",\"context_id\":\"d\"}");
	ck_assert_int_eq(th_a2a_list_decode(v, &l, &e), TH_EINVAL);
	ck_assert_str_eq(e.msg, "contextId and context_id are one field; send it once");
	json_object_put(v);
	/* Free-form data is the client's: both names are kept as sent. */
	struct th_send_req r;
	ck_assert_int_eq(send_dec("{\"message\":{\"messageId\":\"m1\",\"role\":\"ROLE_USER\","
	                          "\"parts\":[{\"data\":{\"a_b\":1,\"aB\":2}}],"
	                          "\"metadata\":{\"x_y\":1,\"xY\":2}}}",
	                          &r, &e),
	                 TH_OK);
	th_send_req_free(&r);
}
END_TEST

START_TEST(test_a2a2_get_request_decoded)
{
	struct th_get_req r;
	struct th_error e;
	json_object *v = J("{\"id\":\"t1\",\"historyLength\":\"2\",\"tenant\":\"\"}");
	ck_assert_int_eq(th_a2a_get_decode(v, &r, &e), TH_OK);
	json_object_put(v);
	ck_assert_str_eq(r.id, "t1");
	ck_assert_int_eq(r.history_length, 2);
	th_get_req_free(&r);
	v = J("{\"id\":\"t1\"}");
	ck_assert_int_eq(th_a2a_get_decode(v, &r, &e), TH_OK);
	ck_assert_int_eq(r.history_length, -1);
	th_get_req_free(&r);
	json_object_put(v);
}
END_TEST

START_TEST(test_a2a2_get_request_refusals)
{
	get_bad(NULL, "params must be an object");
	get_bad("\"t1\"", "params must be an object");
	get_bad("{}", "id is required");
	get_bad("{\"id\":1}", "id must be a string");
	get_bad("{\"id\":\"\"}", "id must not be empty");
	char in[TH_ID_MAX + 16] = "{\"id\":\"";
	memset(in + 7, 'a', TH_ID_MAX + 1);
	strcpy(in + 7 + TH_ID_MAX + 1, "\"}");
	get_bad(in, "id is 1025 bytes; the limit is 1024");
	get_bad("{\"id\":\"t\",\"history_length\":-3}",
	        "historyLength must not be negative (got -3)");
}
END_TEST

START_TEST(test_a2a2_cancel_request_decoded)
{
	struct th_cancel_req r;
	struct th_error e;
	json_object *v = J("{\"id\":\"t1\",\"metadata\":{\"why\":\"x\"}}");
	ck_assert_int_eq(th_a2a_cancel_decode(v, &r, &e), TH_OK);
	json_object_put(v);
	ck_assert_str_eq(r.id, "t1");
	ck_assert_str_eq(th_json_text(r.metadata), "{\"why\":\"x\"}");
	th_cancel_req_free(&r);
	th_error_clear(&e);
	ck_assert_int_eq(th_a2a_cancel_decode(NULL, &r, &e), TH_EINVAL);
	ck_assert_str_eq(e.msg, "params must be an object");
	v = J("{\"id\":\"t1\",\"metadata\":[]}");
	ck_assert_int_eq(th_a2a_cancel_decode(v, &r, &e), TH_EINVAL);
	ck_assert_str_eq(e.msg, "metadata must be an object");
	ck_assert_ptr_null(r.id);
	json_object_put(v);
	v = J("{\"metadata\":{}}");
	ck_assert_int_eq(th_a2a_cancel_decode(v, &r, &e), TH_EINVAL);
	ck_assert_str_eq(e.msg, "id is required");
	json_object_put(v);
}
END_TEST

/* ---- ListTasksRequest ---------------------------------------------------- */

static th_err list_dec(const char *in, struct th_list_req *r, struct th_error *e)
{
	json_object *v = J(in);
	th_error_clear(e);
	th_err rc = th_a2a_list_decode(v, r, e);
	json_object_put(v);
	return rc;
}

static void list_bad(const char *in, const char *want_msg)
{
	struct th_list_req r;
	struct th_error e;
	ck_assert_msg(list_dec(in, &r, &e) == TH_EINVAL, "accepted %s", in);
	ck_assert_str_eq(e.msg, want_msg);
	ck_assert_ptr_null(r.context_id);
	ck_assert_ptr_null(r.page_token);
}

START_TEST(test_a2a2_list_defaults)
{
	struct th_list_req r;
	struct th_error e;
	ck_assert_int_eq(list_dec("{}", &r, &e), TH_OK);
	ck_assert_ptr_null(r.context_id);
	ck_assert_int_eq(r.status, 0);
	ck_assert_int_eq(r.status_after_ms, -1);
	ck_assert_int_eq(r.page_size, 50);
	ck_assert_ptr_null(r.page_token);
	ck_assert_int_eq(r.history_length, -1);
	ck_assert_int_eq(r.include_artifacts, 0);
	th_list_req_free(&r);
	th_error_clear(&e);
	ck_assert_int_eq(th_a2a_list_decode(NULL, &r, &e), TH_EINVAL);
	ck_assert_str_eq(e.msg, "params must be an object");
}
END_TEST

START_TEST(test_a2a2_list_all_fields_json_and_snake)
{
	struct th_list_req r;
	struct th_error e;
	ck_assert_int_eq(
	    list_dec("{\"contextId\":\"c\",\"status\":\"TASK_STATE_WORKING\",\"pageSize\":"
	             "10,\"pageToken\":\"tok\",\"historyLength\":0,"
	             "\"statusTimestampAfter\":\"2026-01-01T00:00:00.000Z\","
	             "\"includeArtifacts\":true}",
	             &r, &e),
	    TH_OK);
	ck_assert_str_eq(r.context_id, "c");
	ck_assert_int_eq(r.status, TH_STATE_WORKING);
	ck_assert_int_eq(r.page_size, 10);
	ck_assert_str_eq(r.page_token, "tok");
	ck_assert_int_eq(r.history_length, 0);
	ck_assert_int_eq(r.status_after_ms, 1767225600000LL);
	ck_assert_int_eq(r.include_artifacts, 1);
	th_list_req_free(&r);
	ck_assert_int_eq(list_dec("{\"context_id\":\"c\",\"status\":6,\"page_size\":1,"
	                          "\"page_token\":\"\",\"history_length\":4,"
	                          "\"status_timestamp_after\":\"2026-01-01T00:00:01Z\","
	                          "\"include_artifacts\":false}",
	                          &r, &e),
	                 TH_OK);
	ck_assert_str_eq(r.context_id, "c");
	ck_assert_int_eq(r.status, TH_STATE_INPUT_REQUIRED);
	ck_assert_int_eq(r.page_size, 1);
	ck_assert_ptr_null(r.page_token); /* "" means first page */
	ck_assert_int_eq(r.history_length, 4);
	ck_assert_int_eq(r.status_after_ms, 1767225601000LL);
	ck_assert_int_eq(r.include_artifacts, 0);
	th_list_req_free(&r);
}
END_TEST

START_TEST(test_a2a2_list_query_text_values)
{
	/* REST query values arrive as strings. */
	struct th_list_req r;
	struct th_error e;
	ck_assert_int_eq(list_dec("{\"pageSize\":\"100\",\"historyLength\":\"7\",\"status\":\"3\","
	                          "\"includeArtifacts\":\"true\"}",
	                          &r, &e),
	                 TH_OK);
	ck_assert_int_eq(r.page_size, 100);
	ck_assert_int_eq(r.history_length, 7);
	ck_assert_int_eq(r.status, TH_STATE_COMPLETED);
	ck_assert_int_eq(r.include_artifacts, 1);
	th_list_req_free(&r);
	ck_assert_int_eq(list_dec("{\"includeArtifacts\":\"false\"}", &r, &e), TH_OK);
	ck_assert_int_eq(r.include_artifacts, 0);
	list_bad("{\"includeArtifacts\":\"yes\"}", "includeArtifacts must be a boolean");
	list_bad("{\"includeArtifacts\":1}", "includeArtifacts must be a boolean");
	list_bad("{\"pageSize\":\"ten\"}", "pageSize must be an integer");
	list_bad("{\"pageSize\":\"\"}", "pageSize must be an integer");
	list_bad("{\"historyLength\":\"-1\"}", "historyLength must not be negative (got -1)");
}
END_TEST

START_TEST(test_a2a2_list_page_size_bounds)
{
	struct th_list_req r;
	struct th_error e;
	list_bad("{\"pageSize\":0}", "pageSize must be between 1 and 100");
	list_bad("{\"pageSize\":101}", "pageSize must be between 1 and 100");
	list_bad("{\"pageSize\":-5}", "pageSize must be between 1 and 100");
	list_bad("{\"pageSize\":99999999999999999999999}", "pageSize must be between 1 and 100");
	list_bad("{\"pageSize\":\"99999999999999999999999\"}",
	         "pageSize must be between 1 and 100");
	list_bad("{\"pageSize\":4294967297}", "pageSize must be between 1 and 100");
	list_bad("{\"pageSize\":true}", "pageSize must be an integer");
	ck_assert_int_eq(list_dec("{\"pageSize\":1}", &r, &e), TH_OK);
	ck_assert_int_eq(r.page_size, 1);
	ck_assert_int_eq(list_dec("{\"pageSize\":100.0}", &r, &e), TH_OK);
	ck_assert_int_eq(r.page_size, 100);
}
END_TEST

START_TEST(test_a2a2_list_status_names_and_numbers)
{
	struct th_list_req r;
	struct th_error e;
	for (int s = 0; s <= 8; s++) {
		char in[128];
		snprintf(in, sizeof in, "{\"status\":\"%s\"}", th_state_name((enum th_state)s));
		ck_assert_int_eq(list_dec(in, &r, &e), TH_OK);
		ck_assert_int_eq(r.status, s);
		snprintf(in, sizeof in, "{\"status\":%d}", s);
		ck_assert_int_eq(list_dec(in, &r, &e), TH_OK);
		ck_assert_int_eq(r.status, s);
	}
	list_bad("{\"status\":\"WORKING\"}", "status: unknown task state 'WORKING'");
	list_bad("{\"status\":\"task_state_working\"}",
	         "status: unknown task state 'task_state_working'");
	list_bad("{\"status\":9}", "status: unknown task state '9'");
	list_bad("{\"status\":-1}", "status: unknown task state '-1'");
	list_bad("{\"status\":\"\"}", "status: unknown task state ''");
	list_bad("{\"status\":[2]}", "status must be a task state name or number");
}
END_TEST

START_TEST(test_a2a2_list_timestamp_fraction_digits)
{
	static const struct {
		const char *ts;
		long long ms;
	} ok[] = {
	    {"2026-01-01T00:00:00Z", 1767225600000LL},
	    {"2026-01-01T00:00:00.123Z", 1767225600123LL},
	    {"2026-01-01T00:00:00.123456Z", 1767225600123LL},
	    {"2026-01-01T00:00:00.123456789Z", 1767225600123LL},
	    {"2026-01-01T01:00:00+01:00", 1767225600000LL},
	};
	struct th_list_req r;
	struct th_error e;
	for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
		char in[128];
		snprintf(in, sizeof in, "{\"statusTimestampAfter\":\"%s\"}", ok[i].ts);
		ck_assert_msg(list_dec(in, &r, &e) == TH_OK, "refused %s: %s", ok[i].ts, e.msg);
		ck_assert_int_eq(r.status_after_ms, ok[i].ms);
	}
	static const char *bad[] = {
	    "2026-02-30T00:00:00Z", "2026-01-01T00:00:00.000",
	    "2026-01-01",           "2026-01-01T00:00:00.1234567890Z",
	    "2026-13-01T00:00:00Z", "yesterday",
	};
	const char *want = "statusTimestampAfter must be an RFC 3339 timestamp such as "
	                   "2026-01-01T00:00:00.000Z or 2026-01-01T01:00:00+01:00 (a real date)";
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		char in[128];
		snprintf(in, sizeof in, "{\"statusTimestampAfter\":\"%s\"}", bad[i]);
		list_bad(in, want);
	}
	list_bad("{\"statusTimestampAfter\":5}", "statusTimestampAfter must be a string");
}
END_TEST

/* ---- enums --------------------------------------------------------------- */

START_TEST(test_a2a2_state_names_and_classes)
{
	ck_assert_str_eq(th_state_name(TH_STATE_INPUT_REQUIRED), "TASK_STATE_INPUT_REQUIRED");
	ck_assert_str_eq(th_state_name(TH_STATE_CANCELED), "TASK_STATE_CANCELED");
	ck_assert_str_eq(th_state_name((enum th_state)42), "TASK_STATE_UNSPECIFIED");
	ck_assert_str_eq(th_state_name((enum th_state) - 1), "TASK_STATE_UNSPECIFIED");
	for (int s = 0; s <= 8; s++)
		ck_assert_int_eq(th_state_from_text(th_state_name((enum th_state)s)), s);
	ck_assert_int_eq(th_state_from_text("2"), 2);
	ck_assert_int_eq(th_state_from_text("02"), 2);
	ck_assert_int_eq(th_state_from_text("9"), -1);
	ck_assert_int_eq(th_state_from_text("2x"), -1);
	ck_assert_int_eq(th_state_from_text("99999999999999999999"), -1);
	ck_assert_int_eq(th_state_from_text(NULL), -1);
	json_object *v = json_object_new_boolean(1);
	ck_assert_int_eq(th_state_from_json(v), -1);
	json_object_put(v);
	v = json_object_new_int(3);
	ck_assert_int_eq(th_state_from_json(v), TH_STATE_COMPLETED);
	json_object_put(v);
	ck_assert_int_eq(th_state_from_json(NULL), -1);
	int terminal = 0, interrupted = 0;
	for (int s = 0; s <= 8; s++) {
		terminal += th_state_terminal((enum th_state)s);
		interrupted += th_state_interrupted((enum th_state)s);
	}
	ck_assert_int_eq(terminal, 4);
	ck_assert_int_eq(interrupted, 2);
	ck_assert(th_state_terminal(TH_STATE_REJECTED));
	ck_assert(!th_state_terminal(TH_STATE_WORKING));
	ck_assert(th_state_interrupted(TH_STATE_AUTH_REQUIRED));
}
END_TEST

/* ---- builders (A2A-2, reference §2) ------------------------------------- */

static void text_is(json_object *v, const char *want)
{
	ck_assert_ptr_nonnull(v);
	ck_assert_str_eq(th_json_text(v), want);
	json_object_put(v);
}

START_TEST(test_a2a2_parts_built_protojson)
{
	text_is(th_a2a_text_part("hi / there"), "{\"text\":\"hi / there\"}");
	text_is(th_a2a_text_part(NULL), "{\"text\":\"\"}");
	text_is(th_a2a_data_part(J("{\"k\":1}"), "application/json"),
	        "{\"data\":{\"k\":1},\"mediaType\":\"application/json\"}");
	text_is(th_a2a_data_part(NULL, NULL), "{\"data\":null}");
}
END_TEST

/* The ids come last, where the store puts them back when it reads a history message
 * (STORE-10), so a message reads back as it was built. */
START_TEST(test_a2a2_agent_message_built_protojson)
{
	json_object *parts = json_object_new_array();
	json_object_array_add(parts, th_a2a_text_part("HELLO"));
	json_object *m = th_a2a_agent_message("c1", "t1", parts, J("{\"x\":true}"));
	ck_assert_ptr_nonnull(m);
	const char *id = th_json_str(m, "messageId");
	ck_assert_ptr_nonnull(id);
	ck_assert_uint_eq(strlen(id), TH_UUID_LEN);
	char want[256];
	snprintf(want, sizeof want,
	         "{\"messageId\":\"%s\",\"role\":\"ROLE_AGENT\",\"parts\":[{\"text\":\"HELLO\"}],"
	         "\"metadata\":{\"x\":true},\"taskId\":\"t1\",\"contextId\":\"c1\"}",
	         id);
	ck_assert_str_eq(th_json_text(m), want);
	/* Two messages never share an id. */
	json_object *m2 = th_a2a_agent_message("c1", NULL, NULL, NULL);
	ck_assert_str_ne(th_json_str(m2, "messageId"), id);
	snprintf(want, sizeof want,
	         "{\"messageId\":\"%s\",\"role\":\"ROLE_AGENT\",\"parts\":[],\"contextId\":\"c1\"}",
	         th_json_str(m2, "messageId"));
	ck_assert_str_eq(th_json_text(m2), want);
	json_object_put(m);
	json_object_put(m2);
}
END_TEST

START_TEST(test_a2a2_status_built_protojson)
{
	text_is(th_a2a_status(TH_STATE_WORKING, NULL, 1767225600123LL),
	        "{\"state\":\"TASK_STATE_WORKING\",\"timestamp\":\"2026-01-01T00:00:00.123Z\"}");
	text_is(th_a2a_status(TH_STATE_INPUT_REQUIRED, J("{\"messageId\":\"m\"}"), 0),
	        "{\"state\":\"TASK_STATE_INPUT_REQUIRED\",\"message\":{\"messageId\":\"m\"},"
	        "\"timestamp\":\"1970-01-01T00:00:00.000Z\"}");
	text_is(th_a2a_status(TH_STATE_SUBMITTED, NULL, -1),
	        "{\"state\":\"TASK_STATE_SUBMITTED\"}");
}
END_TEST

START_TEST(test_a2a2_task_built_omits_absent_keys)
{
	text_is(
	    th_a2a_task("t", "c", th_a2a_status(TH_STATE_SUBMITTED, NULL, -1), NULL, NULL, NULL),
	    "{\"id\":\"t\",\"contextId\":\"c\",\"status\":{\"state\":\"TASK_STATE_SUBMITTED\"}}");
	text_is(
	    th_a2a_task("t", "c", th_a2a_status(TH_STATE_COMPLETED, NULL, -1), J("[]"), J("[]"),
	                NULL),
	    "{\"id\":\"t\",\"contextId\":\"c\",\"status\":{\"state\":\"TASK_STATE_COMPLETED\"}}");
	text_is(th_a2a_task("t", "c", th_a2a_status(TH_STATE_COMPLETED, NULL, -1),
	                    J("[{\"messageId\":\"m\"}]"),
	                    J("[{\"artifactId\":\"a1\",\"parts\":[{\"text\":\"HELLO\"}]}]"),
	                    J("{\"k\":1}")),
	        "{\"id\":\"t\",\"contextId\":\"c\",\"status\":{\"state\":\"TASK_STATE_COMPLETED\"},"
	        "\"artifacts\":[{\"artifactId\":\"a1\",\"parts\":[{\"text\":\"HELLO\"}]}],"
	        "\"history\":[{\"messageId\":\"m\"}],\"metadata\":{\"k\":1}}");
	/* status is required: without it there is no task, and the others are released. */
	ck_assert_ptr_null(th_a2a_task("t", "c", NULL, J("[1]"), NULL, J("{}")));
}
END_TEST

START_TEST(test_a2a2_stream_events_built_protojson)
{
	text_is(
	    th_a2a_status_update("t", "c", th_a2a_status(TH_STATE_WORKING, NULL, -1), NULL),
	    "{\"taskId\":\"t\",\"contextId\":\"c\",\"status\":{\"state\":\"TASK_STATE_WORKING\"}}");
	text_is(
	    th_a2a_status_update("t", "c", th_a2a_status(TH_STATE_WORKING, NULL, -1),
	                         J("{\"m\":1}")),
	    "{\"taskId\":\"t\",\"contextId\":\"c\",\"status\":{\"state\":\"TASK_STATE_WORKING\"},"
	    "\"metadata\":{\"m\":1}}");
	text_is(th_a2a_artifact_update("t", "c", J("{\"artifactId\":\"a1\",\"parts\":[]}"), 0, 1),
	        "{\"taskId\":\"t\",\"contextId\":\"c\",\"artifact\":{\"artifactId\":\"a1\","
	        "\"parts\":[]},\"lastChunk\":true}");
	text_is(th_a2a_artifact_update("t", "c", J("{\"artifactId\":\"a1\"}"), 1, 0),
	        "{\"taskId\":\"t\",\"contextId\":\"c\",\"artifact\":{\"artifactId\":\"a1\"},"
	        "\"append\":true}");
	text_is(th_a2a_artifact_update("t", "c", J("{\"artifactId\":\"a1\"}"), 0, 0),
	        "{\"taskId\":\"t\",\"contextId\":\"c\",\"artifact\":{\"artifactId\":\"a1\"}}");
	text_is(
	    th_a2a_stream_response(
	        "statusUpdate",
	        th_a2a_status_update("t", "c", th_a2a_status(TH_STATE_COMPLETED, NULL, -1), NULL)),
	    "{\"statusUpdate\":{\"taskId\":\"t\",\"contextId\":\"c\",\"status\":"
	    "{\"state\":\"TASK_STATE_COMPLETED\"}}}");
	ck_assert_ptr_null(th_a2a_stream_response(NULL, J("{}")));
}
END_TEST

START_TEST(test_a2a2_list_response_always_has_token_and_sizes)
{
	text_is(th_a2a_list_response(NULL, NULL, 50, 0),
	        "{\"nextPageToken\":\"\",\"pageSize\":50,\"totalSize\":0,\"tasks\":[]}");
	text_is(th_a2a_list_response(J("[{\"id\":\"t\"}]"), "abc", 1, 2),
	        "{\"nextPageToken\":\"abc\",\"pageSize\":1,\"totalSize\":2,\"tasks\":[{\"id\":"
	        "\"t\"}]}");
}
END_TEST

START_TEST(test_a2a2_trim_history_history_length)
{
	json_object *h = J("[1,2,3,4]");
	th_a2a_trim_history(h, -1);
	ck_assert_str_eq(th_json_text(h), "[1,2,3,4]");
	th_a2a_trim_history(h, 10);
	ck_assert_str_eq(th_json_text(h), "[1,2,3,4]");
	th_a2a_trim_history(h, 2);
	ck_assert_str_eq(th_json_text(h), "[3,4]");
	th_a2a_trim_history(h, 0);
	ck_assert_str_eq(th_json_text(h), "[]");
	json_object_put(h);
	th_a2a_trim_history(NULL, 1);
	h = J("{\"a\":1}");
	th_a2a_trim_history(h, 0); /* not an array: left alone */
	ck_assert_str_eq(th_json_text(h), "{\"a\":1}");
	json_object_put(h);
}
END_TEST

/* ---- robustness (LIM-3) ------------------------------------------------- */

START_TEST(test_lim3_decoders_survive_odd_inputs)
{
	static const char *inputs[] = {
	    "null",
	    "0",
	    "-1",
	    "1e308",
	    "\"\"",
	    "[]",
	    "[[]]",
	    "{}",
	    "{\"\":null}",
	    "{\"message\":{}}",
	    "{\"message\":[]}",
	    "{\"message\":{\"parts\":null}}",
	    "{\"message\":{\"messageId\":\"m\",\"role\":1,\"parts\":[null,1,\"x\",[],{}]}}",
	    "{\"message\":{\"messageId\":\"m\",\"role\":1,\"parts\":[{\"raw\":\"====\"}]}}",
	    "{\"message\":{\"messageId\":\"m\",\"role\":1,\"parts\":[{\"raw\":\"\\u0000\"}]}}",
	    "{\"id\":\"a\\u0000b\",\"historyLength\":-9223372036854775808}",
	    "{\"id\":{},\"status\":{},\"pageSize\":[],\"pageToken\":1,\"contextId\":false}",
	    "{\"pageSize\":-1e400,\"historyLength\":1e400}",
	    "{\"pageSize\":\"-\",\"historyLength\":\"+\",\"status\":\"+2\"}",
	    "{\"configuration\":null,\"metadata\":null,\"message\":null}",
	    "{\"statusTimestampAfter\":\"9999-12-31T23:59:60.999999999Z\"}",
	    "{\"statusTimestampAfter\":\"0000-01-01T00:00:00Z\"}",
	};
	for (size_t i = 0; i < sizeof inputs / sizeof inputs[0]; i++) {
		json_object *v = NULL;
		struct th_error e;
		th_error_clear(&e);
		if (th_json_parse(inputs[i], strlen(inputs[i]), 64, &v, &e) != TH_OK)
			continue; /* the parser's refusal is its own test's business */
		struct th_send_req s;
		struct th_get_req g;
		struct th_list_req l;
		struct th_cancel_req c;
		json_object *m = NULL;
		th_err rc[5] = {
		    th_a2a_send_decode(v, &lim, &s, &e),    th_a2a_get_decode(v, &g, &e),
		    th_a2a_list_decode(v, &l, &e),          th_a2a_cancel_decode(v, &c, &e),
		    th_a2a_message_decode(v, NULL, &m, &e),
		};
		for (int k = 0; k < 5; k++)
			ck_assert_msg(rc[k] == TH_OK || rc[k] == TH_EINVAL,
			              "input %s decoder %d: %s", inputs[i], k, th_err_name(rc[k]));
		th_send_req_free(&s);
		th_get_req_free(&g);
		th_list_req_free(&l);
		th_cancel_req_free(&c);
		json_object_put(m);
		json_object_put(v);
	}
}
END_TEST

/* A2A-11-GEN-1, A2A-11-GEN-2: the generation is spliced into text as ProtoJSON writes an
 * int64 (a decimal string), as the last member of the Task or of the event's update. */
START_TEST(test_a2a_11_gen_splices_generation_into_task_and_event_text)
{
	char *t = th_a2a_with_generation("{\"id\":\"t\"}", 7);
	ck_assert_str_eq(t, "{\"id\":\"t\",\"generation\":\"7\"}");
	free(t);
	t = th_a2a_with_generation("{}", 1);
	ck_assert_str_eq(t, "{\"generation\":\"1\"}");
	free(t);
	ck_assert_ptr_null(th_a2a_with_generation("[1]", 1));
	t = th_a2a_event_with_generation("{\"statusUpdate\":{\"taskId\":\"t\"}}", 12);
	ck_assert_str_eq(t, "{\"statusUpdate\":{\"taskId\":\"t\",\"generation\":\"12\"}}");
	free(t);
	t = th_a2a_event_with_generation("{\"artifactUpdate\":{\"a\":{\"b\":1}}}", 3);
	ck_assert_str_eq(t, "{\"artifactUpdate\":{\"a\":{\"b\":1},\"generation\":\"3\"}}");
	free(t);
	t = th_a2a_event_with_generation("{\"task\":{\"id\":\"t\"}}", 1);
	ck_assert_str_eq(t, "{\"task\":{\"id\":\"t\",\"generation\":\"1\"}}");
	free(t);
	/* A message carries no generation. */
	ck_assert_ptr_null(th_a2a_event_with_generation("{\"message\":{\"messageId\":\"m\"}}", 1));
}
END_TEST

START_TEST(test_a2a_11_gen_generation_params_are_whole_numbers_from_zero)
{
	json_object *o = json_tokener_parse("{\"a\":\"5\",\"b\":6,\"c\":-1,\"d\":\"x\"}");
	int present = 0;
	int64_t v = 0;
	struct th_error e;
	ck_assert_int_eq(th_a2a_generation_param(o, "a", "a", "", &present, &v, &e), TH_OK);
	ck_assert_int_eq(present, 1);
	ck_assert_int_eq(v, 5);
	ck_assert_int_eq(th_a2a_generation_param(o, "b", "b", "", &present, &v, &e), TH_OK);
	ck_assert_int_eq(v, 6);
	ck_assert_int_eq(th_a2a_generation_param(o, "c", "c", "configuration.", &present, &v, &e),
	                 TH_EINVAL);
	ck_assert_ptr_nonnull(strstr(e.msg, "configuration.c must not be negative"));
	ck_assert_int_eq(th_a2a_generation_param(o, "d", "d", "", &present, &v, &e), TH_EINVAL);
	ck_assert_int_eq(th_a2a_generation_param(o, "z", "z", "", &present, &v, &e), TH_OK);
	ck_assert_int_eq(present, 0);
	json_object_put(o);
}
END_TEST

static Suite *a2a_suite(void)
{
	Suite *s = suite_create("a2a");
	TCase *tc = tcase_create("message");
	tcase_add_test(tc, test_a2a2_message_canonical_form);
	tcase_add_test(tc, test_a2a2_snake_case_fields_accepted);
	tcase_add_test(tc, test_a2a2_role_enum_number_accepted);
	tcase_add_test(tc, test_a2a2_agent_role_refused);
	tcase_add_test(tc, test_a2a2_message_id_required_string);
	tcase_add_test(tc, test_a2a2_wrong_type_names_field);
	tcase_add_test(tc, test_a2a2_message_not_object_refused);
	tcase_add_test(tc, test_a2a2_parts_required_nonempty);
	tcase_add_test(tc, test_a2a2_empty_optional_strings_dropped);
	tcase_add_test(tc, test_a2a2_unknown_keys_ignored);
	suite_add_tcase(s, tc);

	tc = tcase_create("part");
	tcase_add_test(tc, test_a2a2_part_oneof_single_member_accepted);
	tcase_add_test(tc, test_a2a2_part_oneof_zero_or_two_refused);
	tcase_add_test(tc, test_a2a2_part_data_null_is_member);
	tcase_add_test(tc, test_a2a2_part_raw_base64_accepted_and_canonical);
	tcase_add_test(tc, test_a2a2_part_raw_base64_invalid_refused);
	tcase_add_test(tc, test_a2a2_part_url_nonempty);
	suite_add_tcase(s, tc);

	tc = tcase_create("limits");
	tcase_add_test(tc, test_lim1_parts_limit_names_field);
	tcase_add_test(tc, test_lim1_text_limit_names_field);
	tcase_add_test(tc, test_lim1_message_metadata_limit_names_field);
	tcase_add_test(tc, test_lim1_part_metadata_limit_names_field);
	tcase_add_test(tc, test_lim1_id_limit_names_field);
	tcase_add_test(tc, test_sec3_part_strings_have_limits);
	tcase_add_test(tc, test_sec3_send_strings_have_limits);
	tcase_add_test(tc, test_lim1_send_message_limits_apply);
	suite_add_tcase(s, tc);

	tc = tcase_create("requests");
	tcase_add_test(tc, test_a2a2_send_minimal_and_empty_configuration);
	tcase_add_test(tc, test_a2a2_send_configuration_fields);
	tcase_add_test(tc, test_a2a2_send_snake_case_configuration_accepted);
	tcase_add_test(tc, test_a2a2_send_params_must_be_object);
	tcase_add_test(tc, test_a2a2_send_history_length_negative_refused);
	tcase_add_test(tc, test_a2a2_send_configuration_types);
	tcase_add_test(tc, test_a2a2_get_request_decoded);
	tcase_add_test(tc, test_lim4_nul_in_ids_is_refused_naming_the_field);
	tcase_add_test(tc, test_lim4_message_string_arrays_have_limits);
	tcase_add_test(tc, test_lim4_camel_and_snake_spelling_of_one_field_is_refused);
	tcase_add_test(tc, test_a2a2_get_request_refusals);
	tcase_add_test(tc, test_a2a2_cancel_request_decoded);
	tcase_add_test(tc, test_a2a2_list_defaults);
	tcase_add_test(tc, test_a2a2_list_all_fields_json_and_snake);
	tcase_add_test(tc, test_a2a2_list_query_text_values);
	tcase_add_test(tc, test_a2a2_list_page_size_bounds);
	tcase_add_test(tc, test_a2a2_list_status_names_and_numbers);
	tcase_add_test(tc, test_a2a2_list_timestamp_fraction_digits);
	tcase_add_test(tc, test_lim3_decoders_survive_odd_inputs);
	suite_add_tcase(s, tc);

	tc = tcase_create("encode");
	tcase_add_test(tc, test_a2a2_state_names_and_classes);
	tcase_add_test(tc, test_a2a2_parts_built_protojson);
	tcase_add_test(tc, test_a2a2_agent_message_built_protojson);
	tcase_add_test(tc, test_a2a2_status_built_protojson);
	tcase_add_test(tc, test_a2a2_task_built_omits_absent_keys);
	tcase_add_test(tc, test_a2a2_stream_events_built_protojson);
	tcase_add_test(tc, test_a2a2_list_response_always_has_token_and_sizes);
	tcase_add_test(tc, test_a2a2_trim_history_history_length);
	tcase_add_test(tc, test_a2a_11_gen_splices_generation_into_task_and_event_text);
	tcase_add_test(tc, test_a2a_11_gen_generation_params_are_whole_numbers_from_zero);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(a2a_suite());
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
