/* SPDX-License-Identifier: Apache-2.0 */
/* check_jcs.c — RFC 8785 canonical JSON (util/jcs.c), the bytes the signed card is
 * signed over (CARD-SIG-1). The number cases are the IEEE 754 values RFC 8785 lists in
 * its Appendix B with the text ECMAScript gives them (checked against Node's
 * JSON.stringify); the rest is our own data for each rule. */
#include "config.h"

#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util/jcs.h"
#include "util/jsonx.h"

static double from_bits(uint64_t bits)
{
	double d;
	memcpy(&d, &bits, sizeof d);
	return d;
}

/* The canonical text of the JSON text in, which must parse. */
static char *canon(const char *in)
{
	json_object *v = NULL;
	struct th_error e;
	th_error_clear(&e);
	ck_assert_int_eq(th_json_parse(in, strlen(in), 32, &v, &e), TH_OK);
	char *out = th_jcs_text(v, &e);
	ck_assert_msg(out != NULL, "th_jcs_text: %s", e.msg);
	json_object_put(v);
	return out;
}

static void canon_is(const char *in, const char *want)
{
	char *got = canon(in);
	ck_assert_str_eq(got, want);
	free(got);
}

START_TEST(test_card_sig1_jcs_numbers_rfc8785_appendix_b)
{
	static const struct {
		uint64_t bits;
		const char *text;
	} cases[] = {
	    {0x0000000000000000, "0"},
	    {0x8000000000000000, "0"},
	    {0x0000000000000001, "5e-324"},
	    {0x8000000000000001, "-5e-324"},
	    {0x7fefffffffffffff, "1.7976931348623157e+308"},
	    {0xffefffffffffffff, "-1.7976931348623157e+308"},
	    {0x4340000000000000, "9007199254740992"},
	    {0xc340000000000000, "-9007199254740992"},
	    {0x4430000000000000, "295147905179352830000"},
	    {0x44b52d02c7e14af5, "9.999999999999997e+22"},
	    {0x44b52d02c7e14af6, "1e+23"},
	    {0x44b52d02c7e14af7, "1.0000000000000001e+23"},
	    {0x444b1ae4d6e2ef4e, "999999999999999700000"},
	    {0x444b1ae4d6e2ef4f, "999999999999999900000"},
	    {0x444b1ae4d6e2ef50, "1e+21"},
	    {0x3eb0c6f7a0b5ed8c, "9.999999999999997e-7"},
	    {0x3eb0c6f7a0b5ed8d, "0.000001"},
	    {0x41b3de4355555553, "333333333.3333332"},
	    {0x41b3de4355555554, "333333333.33333325"},
	    {0x41b3de4355555555, "333333333.3333333"},
	    {0x41b3de4355555556, "333333333.3333334"},
	    {0x41b3de4355555557, "333333333.33333343"},
	    {0xbecbf647612f3696, "-0.0000033333333333333333"},
	    {0x43143ff3c1cb0959, "1424953923781206.2"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char out[32];
		ck_assert_int_gt(th_jcs_number(from_bits(cases[i].bits), out, sizeof out), 0);
		ck_assert_msg(strcmp(out, cases[i].text) == 0, "%016llx: got %s, want %s",
		              (unsigned long long)cases[i].bits, out, cases[i].text);
	}
}
END_TEST

START_TEST(test_card_sig1_jcs_refuses_nan_and_infinity)
{
	char out[32];
	ck_assert_int_eq(th_jcs_number(from_bits(0x7fffffffffffffff), out, sizeof out), -1);
	ck_assert_int_eq(th_jcs_number(from_bits(0x7ff0000000000000), out, sizeof out), -1);
	ck_assert_int_eq(th_jcs_number(from_bits(0xfff0000000000000), out, sizeof out), -1);
	json_object *v = json_object_new_array();
	json_object_array_add(v, json_object_new_double(from_bits(0x7ff0000000000000)));
	struct th_error e;
	th_error_clear(&e);
	ck_assert_ptr_null(th_jcs_text(v, &e));
	ck_assert_int_eq(e.code, TH_EINVAL);
	ck_assert_ptr_nonnull(strstr(e.msg, "not finite"));
	json_object_put(v);
}
END_TEST

/* Numbers as parsed: integers are doubles to JCS too; the written form never matters. */
START_TEST(test_card_sig1_jcs_numbers_as_parsed)
{
	canon_is("[333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001]",
	         "[333333333.3333333,1e+30,4.5,0.002,1e-27]");
	canon_is("[0, -0, 1.0, 100, -7, 1e2, 12345678901234567890]",
	         "[0,0,1,100,-7,100,12345678901234567000]");
	canon_is("[1e21, 1e-6, 1e-7, 0.1, 0.5e-6]", "[1e+21,0.000001,1e-7,0.1,5e-7]");
}
END_TEST

/* Strings: the two-character escapes, \u00xx in lower case for the other control
 * characters, and everything else (/, DEL, non-ASCII) as it is. */
START_TEST(test_card_sig1_jcs_string_escapes)
{
	canon_is("\"\\u20ac$\\u000F\\u000aA'\\u0042\\u0022\\u005c\\\\\\\"\\/\"",
	         "\"\xe2\x82\xac$\\u000f\\nA'B\\\"\\\\\\\\\\\"/\"");
	canon_is("\"\\b\\t\\n\\f\\r\\u0000\\u001f\\u007f \\u2028\"",
	         "\"\\b\\t\\n\\f\\r\\u0000\\u001f\x7f \xe2\x80\xa8\"");
	canon_is("[null,true,false,\"\",[],{}]", "[null,true,false,\"\",[],{}]");
}
END_TEST

/* Member names sort by UTF-16 code units: U+1F600 (a surrogate pair, D83D DE00) comes
 * before U+FB33 although its code point is larger; nested objects sort too; arrays
 * keep their order; no white space anywhere. */
START_TEST(test_card_sig1_jcs_sorts_names_by_utf16_units)
{
	canon_is("{\"\\u20ac\": \"Euro Sign\", \"\\r\": \"Carriage Return\", \"\\ufb33\": "
	         "\"Hebrew Letter Dalet With Dagesh\", \"1\": \"One\", \"\\ud83d\\ude00\": "
	         "\"Emoji: Grinning Face\", \"\\u0080\": \"Control\", \"\\u00f6\": \"Latin Small "
	         "Letter O With Diaeresis\"}",
	         "{\"\\r\":\"Carriage Return\",\"1\":\"One\",\"\xc2\x80\":\"Control\","
	         "\"\xc3\xb6\":\"Latin Small Letter O With Diaeresis\",\"\xe2\x82\xac\":\"Euro "
	         "Sign\",\"\xf0\x9f\x98\x80\":\"Emoji: Grinning Face\",\"\xef\xac\xb3\":\"Hebrew "
	         "Letter Dalet With Dagesh\"}");
	canon_is("{ \"b\": [3, {\"z\": 1, \"a\": 2}], \"a\": {\"y\": null, \"x\": \"\"}, \"aa\": 0 "
	         "}",
	         "{\"a\":{\"x\":\"\",\"y\":null},\"aa\":0,\"b\":[3,{\"a\":2,\"z\":1}]}");
	ck_assert_int_lt(th_jcs_name_cmp("\xf0\x9f\x98\x80", "\xef\xac\xb3"), 0);
	ck_assert_int_gt(th_jcs_name_cmp("\xef\xbf\xbf", "\xf0\x90\x80\x80"), 0);
	ck_assert_int_lt(th_jcs_name_cmp("a", "ab"), 0);
	ck_assert_int_eq(th_jcs_name_cmp("", ""), 0);
}
END_TEST

/* A string json-c holds that is not well-formed UTF-8 has no canonical form. */
START_TEST(test_card_sig1_jcs_refuses_bad_utf8)
{
	json_object *v = json_object_new_object();
	json_object_object_add(v, "k", json_object_new_string_len("\xc0\xaf", 2));
	struct th_error e;
	th_error_clear(&e);
	ck_assert_ptr_null(th_jcs_text(v, &e));
	ck_assert_int_eq(e.code, TH_EINVAL);
	ck_assert_ptr_nonnull(strstr(e.msg, "UTF-8"));
	json_object_put(v);
	v = json_object_new_object();
	json_object_object_add(v, "\xed\xa0\x80", json_object_new_int(1)); /* a lone surrogate */
	th_error_clear(&e);
	ck_assert_ptr_null(th_jcs_text(v, &e));
	ck_assert_ptr_nonnull(strstr(e.msg, "member name"));
	json_object_put(v);
}
END_TEST

static Suite *jcs_suite(void)
{
	Suite *s = suite_create("jcs");
	TCase *tc = tcase_create("rfc8785");
	tcase_add_test(tc, test_card_sig1_jcs_numbers_rfc8785_appendix_b);
	tcase_add_test(tc, test_card_sig1_jcs_refuses_nan_and_infinity);
	tcase_add_test(tc, test_card_sig1_jcs_numbers_as_parsed);
	tcase_add_test(tc, test_card_sig1_jcs_string_escapes);
	tcase_add_test(tc, test_card_sig1_jcs_sorts_names_by_utf16_units);
	tcase_add_test(tc, test_card_sig1_jcs_refuses_bad_utf8);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(jcs_suite());
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
