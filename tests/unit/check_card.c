/* SPDX-License-Identifier: Apache-2.0 */
/* check_card.c — the agent card built by th_card_build (CARD-1..CARD-3). */
#include "config.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "domain/ext.h"
#include "service/card.h"

#define BASE "http://127.0.0.1:8080/"

static const char *const modes[] = {
    "text/plain",
    "application/vnd.tiny-harness.task+json",
    "application/vnd.tiny-harness.channel+json",
    "application/vnd.tiny-harness.event+json",
    "application/a2ui+json",
};

/* Filled by hand so that the test depends on nothing but card.c: the card reads only
 * base_url from the configuration. */
static struct th_config cfg;
static json_object *commands;
static json_object *card;

static json_object *sample_commands(void)
{
	json_object *arr = json_object_new_array();
	json_object *help = json_object_new_object();
	json_object_object_add(help, "name", json_object_new_string("help"));
	json_object_object_add(help, "description", json_object_new_string("list the commands"));
	json_object_object_add(help, "argument_hint", json_object_new_string(""));
	json_object_array_add(arr, help);
	json_object *plan = json_object_new_object();
	json_object_object_add(plan, "name", json_object_new_string("plan"));
	json_object_object_add(plan, "description", json_object_new_string("replace the plan"));
	json_object_object_add(plan, "argument_hint", json_object_new_string("step; step; ..."));
	json_object_array_add(arr, plan);
	return arr;
}

static void setup(void)
{
	memset(&cfg, 0, sizeof(cfg));
	cfg.base_url = strdup(BASE);
	ck_assert_ptr_nonnull(cfg.base_url);
	commands = sample_commands();
	card = th_card_build(&cfg, commands);
	ck_assert_ptr_nonnull(card);
}

static void teardown(void)
{
	json_object_put(card);
	json_object_put(commands);
	free(cfg.base_url);
	card = NULL;
	commands = NULL;
}

static json_object *get(json_object *obj, const char *key)
{
	json_object *v = NULL;
	if (obj == NULL || !json_object_object_get_ex(obj, key, &v))
		return NULL;
	return v;
}

static const char *str(json_object *obj, const char *key)
{
	json_object *v = get(obj, key);
	return v != NULL && json_object_is_type(v, json_type_string) ? json_object_get_string(v)
	                                                             : NULL;
}

static json_object *arr(json_object *obj, const char *key)
{
	json_object *v = get(obj, key);
	ck_assert_msg(v != NULL && json_object_is_type(v, json_type_array), "%s is not an array",
	              key);
	return v;
}

static json_object *ext_at(int i)
{
	return json_object_array_get_idx(arr(get(card, "capabilities"), "extensions"), (size_t)i);
}

START_TEST(test_card1_identity)
{
	ck_assert_str_eq(str(card, "name"), "tiny-harness");
	ck_assert_ptr_nonnull(str(card, "description"));
	ck_assert_int_gt((int)strlen(str(card, "description")), 20);
	ck_assert_str_eq(str(card, "version"), PACKAGE_VERSION);
	ck_assert_str_eq(str(card, "version"), "0.1.0");
}
END_TEST

START_TEST(test_card1_interfaces_use_base_url)
{
	json_object *ifs = arr(card, "supportedInterfaces");
	ck_assert_uint_eq(json_object_array_length(ifs), 2);
	static const char *const bindings[] = {"JSONRPC", "HTTP+JSON"};
	for (size_t i = 0; i < 2; i++) {
		json_object *it = json_object_array_get_idx(ifs, i);
		ck_assert_str_eq(str(it, "url"), BASE);
		ck_assert_str_eq(str(it, "protocolBinding"), bindings[i]);
		ck_assert_str_eq(str(it, "protocolVersion"), "1.0");
		ck_assert_int_eq(json_object_object_length(it), 3);
	}
}
END_TEST

START_TEST(test_card1_other_base_url)
{
	struct th_config other;
	memset(&other, 0, sizeof(other));
	other.base_url = strdup("https://agents.example.test/harness/");
	ck_assert_ptr_nonnull(other.base_url);
	json_object *c = th_card_build(&other, NULL);
	ck_assert_ptr_nonnull(c);
	json_object *ifs = arr(c, "supportedInterfaces");
	for (size_t i = 0; i < json_object_array_length(ifs); i++)
		ck_assert_str_eq(str(json_object_array_get_idx(ifs, i), "url"),
		                 "https://agents.example.test/harness/");
	json_object_put(c);
	free(other.base_url);
}
END_TEST

START_TEST(test_card1_no_base_url_is_refused)
{
	struct th_config none;
	memset(&none, 0, sizeof(none));
	ck_assert_ptr_null(th_card_build(&none, NULL));
	ck_assert_ptr_null(th_card_build(NULL, NULL));
}
END_TEST

START_TEST(test_card1_capabilities)
{
	json_object *caps = get(card, "capabilities");
	ck_assert_ptr_nonnull(caps);
	ck_assert(json_object_is_type(get(caps, "streaming"), json_type_boolean));
	ck_assert(json_object_get_boolean(get(caps, "streaming")));
	ck_assert(json_object_is_type(get(caps, "pushNotifications"), json_type_boolean));
	ck_assert(json_object_get_boolean(get(caps, "pushNotifications")));
	/* No extended card: GetExtendedAgentCard must then answer UnsupportedOperation. */
	ck_assert_ptr_null(get(caps, "extendedAgentCard"));
}
END_TEST

START_TEST(test_card1_one_skill)
{
	json_object *sk = arr(card, "skills");
	ck_assert_uint_eq(json_object_array_length(sk), 1);
	json_object *s = json_object_array_get_idx(sk, 0);
	ck_assert_str_eq(str(s, "id"), "harness");
	ck_assert_ptr_nonnull(str(s, "name"));
	ck_assert_ptr_nonnull(str(s, "description"));
	json_object *tags = arr(s, "tags");
	ck_assert_uint_gt(json_object_array_length(tags), 0);
	for (size_t i = 0; i < json_object_array_length(tags); i++)
		ck_assert(
		    json_object_is_type(json_object_array_get_idx(tags, i), json_type_string));
}
END_TEST

START_TEST(test_card1_no_security)
{
	ck_assert_ptr_null(get(card, "securitySchemes"));
	ck_assert_ptr_null(get(card, "securityRequirements"));
	ck_assert_ptr_null(get(card, "security"));
}
END_TEST

START_TEST(test_card1_key_order_stable)
{
	static const char *const keys[] = {
	    "name",
	    "description",
	    "version",
	    "supportedInterfaces",
	    "capabilities",
	    "defaultInputModes",
	    "defaultOutputModes",
	    "skills",
	};
	size_t n = 0;
	json_object_object_foreach(card, k, v)
	{
		(void)v;
		ck_assert_uint_lt(n, sizeof(keys) / sizeof(keys[0]));
		ck_assert_str_eq(k, keys[n]);
		n++;
	}
	ck_assert_uint_eq(n, sizeof(keys) / sizeof(keys[0]));
	/* Two builds from the same input serialise to the same bytes (the ETag relies on it). */
	json_object *again = th_card_build(&cfg, commands);
	ck_assert_ptr_nonnull(again);
	ck_assert_str_eq(json_object_to_json_string_ext(card, JSON_C_TO_STRING_PLAIN),
	                 json_object_to_json_string_ext(again, JSON_C_TO_STRING_PLAIN));
	json_object_put(again);
}
END_TEST

START_TEST(test_card2_five_extensions_in_order)
{
	json_object *exts = arr(get(card, "capabilities"), "extensions");
	ck_assert_uint_eq(json_object_array_length(exts), 5);
	static const char *const uris[] = {
	    "https://madarauchiha-314.github.io/tiny-harness/a2a/ext/task/v1",
	    "https://madarauchiha-314.github.io/tiny-harness/a2a/ext/channel/v1",
	    "https://madarauchiha-314.github.io/tiny-harness/a2a/ext/status/v1",
	    "https://madarauchiha-314.github.io/tiny-harness/a2a/ext/commands/v1",
	    "https://a2ui.org/a2a-extension/a2ui/v0.9.1",
	};
	for (int i = 0; i < 5; i++) {
		json_object *e = ext_at(i);
		ck_assert_str_eq(str(e, "uri"), uris[i]);
		ck_assert_str_eq(str(e, "uri"), th_ext_uri(i));
		ck_assert_ptr_nonnull(str(e, "description"));
		ck_assert_int_gt((int)strlen(str(e, "description")), 0);
	}
}
END_TEST

START_TEST(test_card2_none_required)
{
	for (int i = 0; i < 5; i++) {
		json_object *req = get(ext_at(i), "required");
		/* Absent is ProtoJSON's false; a present value must at least not be true. */
		ck_assert_msg(req == NULL, "extension %d carries required", i);
	}
}
END_TEST

START_TEST(test_card2_params_only_for_commands_and_a2ui)
{
	ck_assert_ptr_null(get(ext_at(0), "params"));
	ck_assert_ptr_null(get(ext_at(1), "params"));
	ck_assert_ptr_null(get(ext_at(2), "params"));
	ck_assert_ptr_nonnull(get(ext_at(3), "params"));
	ck_assert_ptr_nonnull(get(ext_at(4), "params"));
}
END_TEST

START_TEST(test_card2_commands_params_list_registry)
{
	json_object *params = get(ext_at(3), "params");
	ck_assert_int_eq(json_object_object_length(params), 1);
	json_object *cmds = arr(params, "commands");
	ck_assert(json_object_equal(cmds, commands));
	ck_assert_str_eq(str(json_object_array_get_idx(cmds, 0), "name"), "help");
	ck_assert_str_eq(str(json_object_array_get_idx(cmds, 1), "argument_hint"),
	                 "step; step; ...");
	/* The card keeps its own copy: a later change to the registry's array must not leak in. */
	json_object_array_add(commands, json_object_new_object());
	ck_assert_uint_eq(json_object_array_length(cmds), 2);
}
END_TEST

START_TEST(test_card2_commands_params_without_registry)
{
	json_object *c = th_card_build(&cfg, NULL);
	ck_assert_ptr_nonnull(c);
	json_object *e = json_object_array_get_idx(arr(get(c, "capabilities"), "extensions"), 3);
	json_object *cmds = arr(get(e, "params"), "commands");
	ck_assert_uint_eq(json_object_array_length(cmds), 0);
	json_object_put(c);
}
END_TEST

START_TEST(test_card2_a2ui_params)
{
	json_object *params = get(ext_at(4), "params");
	json_object *want = json_tokener_parse(
	    "{\"supportedCatalogIds\":"
	    "[\"https://a2ui.org/specification/v0_9/catalogs/basic/catalog.json\"],"
	    "\"acceptsInlineCatalogs\":false}");
	ck_assert_ptr_nonnull(want);
	ck_assert_msg(json_object_equal(params, want), "a2ui params: %s",
	              json_object_to_json_string(params));
	json_object_put(want);
}
END_TEST

static void check_modes(const char *key)
{
	json_object *a = arr(card, key);
	ck_assert_uint_eq(json_object_array_length(a), 5);
	for (size_t i = 0; i < 5; i++)
		ck_assert_str_eq(json_object_get_string(json_object_array_get_idx(a, i)), modes[i]);
}

START_TEST(test_card3_input_modes)
{
	check_modes("defaultInputModes");
}
END_TEST

START_TEST(test_card3_output_modes_include_event_envelope)
{
	check_modes("defaultOutputModes");
}
END_TEST

static Suite *card_suite(void)
{
	Suite *s = suite_create("card");
	TCase *tc = tcase_create("card");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_card1_identity);
	tcase_add_test(tc, test_card1_interfaces_use_base_url);
	tcase_add_test(tc, test_card1_other_base_url);
	tcase_add_test(tc, test_card1_no_base_url_is_refused);
	tcase_add_test(tc, test_card1_capabilities);
	tcase_add_test(tc, test_card1_one_skill);
	tcase_add_test(tc, test_card1_no_security);
	tcase_add_test(tc, test_card1_key_order_stable);
	tcase_add_test(tc, test_card2_five_extensions_in_order);
	tcase_add_test(tc, test_card2_none_required);
	tcase_add_test(tc, test_card2_params_only_for_commands_and_a2ui);
	tcase_add_test(tc, test_card2_commands_params_list_registry);
	tcase_add_test(tc, test_card2_commands_params_without_registry);
	tcase_add_test(tc, test_card2_a2ui_params);
	tcase_add_test(tc, test_card3_input_modes);
	tcase_add_test(tc, test_card3_output_modes_include_event_envelope);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(card_suite());
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
