/* SPDX-License-Identifier: Apache-2.0 */
/* check_ui.c — A2UI through the service layer on a real store: surfaces only for
 * A2UI clients (EXT-4, UI-1), the /confirm card and its decision (UI-4), actions
 * admitted only for this task's live surfaces (UI-2, UI-3), the text form. Every
 * refusal: InvalidParams, the reason named, nothing stored. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "a2ui/a2ui.h"
#include "domain/ext.h"
#include "harness_fixture.h"
#include "store/store.h"
#include "util/jsonx.h"

static struct th_app app;
static struct th_error err;
static char task[128], surface[64];

static void setup(void)
{
	fx_open(&app, NULL);
}

static void teardown(void)
{
	fx_close(&app);
}

/* alice asks for an approval with A2UI activated; task and surface are remembered. */
static void confirm_card(void)
{
	fx_extensions = TH_EXT_A2UI;
	json_object *t = fx_send_text(&app, "alice", NULL, "c1", "/confirm Deploy to prod?", &err);
	ck_assert_msg(t != NULL, "%s", err.msg);
	snprintf(task, sizeof task, "%s", fx_task_id(t));
	ck_assert_ptr_nonnull(strstr(fx_status_text(t), "Deploy to prod?"));
	ck_assert_str_eq(fx_sub_state(t), "awaiting-next-message");
	json_object_put(t);
	char *id = fx_text(&app, "SELECT surface_id FROM confirmations");
	snprintf(surface, sizeof surface, "%s", id);
	free(id);
}

static json_object *action(const char *mid, const char *surface_id, const char *component,
                           const char *name, const char *context)
{
	return fx_call(
	    &app, "alice", TH_OP_SEND_MESSAGE, &err,
	    "{\"message\":{\"taskId\":\"%s\",\"messageId\":\"%s\",\"role\":\"ROLE_USER\","
	    "\"parts\":[{\"data\":[{\"version\":\"v0.9\",\"action\":{\"name\":\"%s\","
	    "\"surfaceId\":\"%s\",\"sourceComponentId\":\"%s\",\"timestamp\":"
	    "\"2026-11-30T00:00:00Z\",\"context\":%s}}],\"mediaType\":\"%s\"}]}}",
	    task, mid, name, surface_id, component, context, TH_A2UI_MEDIA_TYPE);
}

START_TEST(test_ui1_confirm_emits_a_validated_card_artifact)
{
	confirm_card();
	json_object *t = fx_call(&app, "alice", TH_OP_GET_TASK, &err, "{\"id\":\"%s\"}", task);
	json_object *art = json_object_array_get_idx(json_object_object_get(t, "artifacts"), 0);
	ck_assert_str_eq(th_json_str(art, "artifactId"), "a2ui:1");
	ck_assert_str_eq(th_json_str(art, "name"), "a2ui");
	json_object *part = json_object_array_get_idx(json_object_object_get(art, "parts"), 0);
	ck_assert_str_eq(th_json_str(part, "mediaType"), TH_A2UI_MEDIA_TYPE);
	ck_assert_str_eq(th_json_str(json_object_object_get(part, "metadata"), "mimeType"),
	                 TH_A2UI_MEDIA_TYPE);
	json_object *msgs = json_object_object_get(part, "data");
	ck_assert_uint_eq(json_object_array_length(msgs), 2);
	ck_assert_str_eq(th_json_str(json_object_array_get_idx(msgs, 0), "version"), "v0.9");
	ck_assert_ptr_nonnull(
	    json_object_object_get(json_object_array_get_idx(msgs, 0), "createSurface"));
	ck_assert(strstr(th_json_text(msgs), "Deploy to prod?") != NULL);
	json_object_put(t);
	/* It is in the event log as an artifactUpdate. */
	ck_assert_int_eq(
	    fx_count(&app,
	             "events WHERE kind = 'artifact' AND json LIKE '%\"artifactUpdate\"%a2ui:1%'"),
	    1);
}
END_TEST

START_TEST(test_ext4_without_a2ui_confirm_asks_in_text)
{
	json_object *t = fx_send_text(&app, "bob", NULL, "c1", "/confirm Merge?", &err);
	char id[64];
	snprintf(id, sizeof id, "%s", fx_task_id(t));
	ck_assert_str_eq(fx_status_text(t), "Please answer approve or reject: Merge?");
	ck_assert_ptr_null(json_object_object_get(t, "artifacts"));
	json_object_put(t);
	ck_assert_int_eq(fx_count(&app, "artifacts"), 0);
	t = fx_send_text(&app, "bob", id, "c2", " Approve ", &err);
	ck_assert_str_eq(fx_status_text(t), "bob approved: Merge?");
	ck_assert_str_eq(fx_sub_state(t), "awaiting-next-message");
	json_object_put(t);
	/* Decided: the same word again is just a message for the model. */
	t = fx_send_text(&app, "bob", id, "c3", "approve", &err);
	ck_assert_str_eq(fx_status_text(t), "echo: approve");
	json_object_put(t);
}
END_TEST

START_TEST(test_ui4_approve_click_is_recorded_and_the_card_closed)
{
	confirm_card();
	json_object *r = action("a1", surface, "approve", "approve", "{}");
	ck_assert_msg(r != NULL, "%s", err.msg);
	json_object *t = json_object_object_get(r, "task");
	ck_assert_str_eq(fx_status_text(t), "alice approved: Deploy to prod?");
	ck_assert_str_eq(fx_sub_state(t), "awaiting-next-message");
	json_object_put(r);
	char *said =
	    fx_text(&app, "SELECT text FROM channel_messages ORDER BY created_ms DESC LIMIT 1");
	ck_assert_str_eq(said, "alice approved: Deploy to prod?");
	free(said);
	/* The card was deleted: a second click is refused, nothing stored. */
	long msgs = fx_count(&app, "messages");
	ck_assert_ptr_null(action("a2", surface, "approve", "approve", "{}"));
	ck_assert_int_eq(err.code, TH_EINVAL);
	ck_assert_ptr_nonnull(strstr(err.msg, "deleted surface"));
	ck_assert_int_eq(fx_count(&app, "messages"), msgs);
}
END_TEST

START_TEST(test_ui4_a_click_is_answered_even_while_the_task_awaits_an_answer)
{
	confirm_card();
	fx_add_participant(&app, task, "bob", "assignee");
	json_object *t = fx_send_text(&app, "alice", task, "q1", "/ask bob Ready?", &err);
	ck_assert_str_eq(fx_sub_state(t), "awaiting-answer");
	json_object_put(t);
	json_object *r = action("a1", surface, "approve", "approve", "{}");
	ck_assert_msg(r != NULL, "%s", err.msg);
	t = json_object_object_get(r, "task");
	ck_assert_str_eq(fx_status_text(t), "alice approved: Deploy to prod?");
	/* The decision is recorded, and the task still waits for bob. */
	ck_assert_str_eq(fx_sub_state(t), "awaiting-answer");
	json_object_put(r);
}
END_TEST

START_TEST(test_ui2_forged_and_mismatched_actions_are_refused_storing_nothing)
{
	confirm_card();
	char big[20000];
	memset(big, 'x', sizeof big);
	memcpy(big, "{\"k\":\"", 6);
	memcpy(big + sizeof big - 3, "\"}", 3);
	static const char *const reasons[] = {"unknown surface", "unknown component",
	                                      "action name mismatch", "context"};
	long msgs = fx_count(&app, "messages"), turns = fx_count(&app, "turns");
	ck_assert_ptr_null(action("f1", "forged", "approve", "approve", "{}"));
	ck_assert_ptr_nonnull(strstr(err.msg, reasons[0]));
	ck_assert_ptr_null(action("f2", surface, "nosuch", "approve", "{}"));
	ck_assert_ptr_nonnull(strstr(err.msg, reasons[1]));
	ck_assert_ptr_null(action("f3", surface, "approve", "reject", "{}"));
	ck_assert_ptr_nonnull(strstr(err.msg, reasons[2]));
	ck_assert_ptr_null(action("f4", surface, "approve", "approve", big));
	ck_assert_int_eq(err.code, TH_EINVAL);
	ck_assert_ptr_nonnull(strstr(err.msg, reasons[3]));
	/* An action on a brand-new task has no surface to be on. */
	ck_assert_ptr_null(
	    fx_call(&app, "alice", TH_OP_SEND_MESSAGE, &err,
	            "{\"message\":{\"messageId\":\"f5\",\"role\":\"ROLE_USER\",\"parts\":"
	            "[{\"data\":{\"version\":\"v0.9\",\"action\":{\"name\":\"approve\","
	            "\"surfaceId\":\"%s\",\"sourceComponentId\":\"approve\",\"timestamp\":"
	            "\"2026-11-30T00:00:00Z\",\"context\":{}}},\"mediaType\":\"%s\"}]}}",
	            surface, TH_A2UI_MEDIA_TYPE));
	ck_assert_int_eq(err.code, TH_EINVAL);
	ck_assert_ptr_nonnull(strstr(err.msg, "unknown surface"));
	/* Inline catalogs in the client's capabilities are refused. */
	ck_assert_ptr_null(fx_call(&app, "alice", TH_OP_SEND_MESSAGE, &err,
	                           "{\"message\":{\"taskId\":\"%s\",\"messageId\":\"f6\",\"role\":"
	                           "\"ROLE_USER\",\"metadata\":{\"a2uiClientCapabilities\":{"
	                           "\"supportedCatalogIds\":[\"%s\"],\"inlineCatalogs\":[{}]}},"
	                           "\"parts\":[{\"text\":\"hi\"}]}}",
	                           task, TH_A2UI_BASIC_CATALOG));
	ck_assert_int_eq(err.code, TH_EINVAL);
	ck_assert_ptr_nonnull(strstr(err.msg, "inline catalog"));
	ck_assert_int_eq(fx_count(&app, "messages"), msgs);
	ck_assert_int_eq(fx_count(&app, "turns"), turns);
}
END_TEST

START_TEST(test_ui2_client_error_reports_are_kept_but_start_no_turn)
{
	confirm_card();
	long turns = fx_count(&app, "turns"), msgs = fx_count(&app, "messages");
	json_object *r =
	    fx_call(&app, "alice", TH_OP_SEND_MESSAGE, &err,
	            "{\"message\":{\"taskId\":\"%s\",\"messageId\":\"e1\",\"role\":"
	            "\"ROLE_USER\",\"parts\":[{\"data\":{\"version\":\"v0.9\",\"error\":"
	            "{\"code\":\"RENDER\",\"surfaceId\":\"%s\",\"message\":\"oops\"}},"
	            "\"metadata\":{\"mimeType\":\"%s\"}}]}}",
	            task, surface, TH_A2UI_MEDIA_TYPE);
	ck_assert_msg(r != NULL, "%s", err.msg);
	json_object_put(r);
	ck_assert_int_eq(fx_count(&app, "turns"), turns);
	ck_assert_int_eq(fx_count(&app, "messages"), msgs + 1);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("ui");
	TCase *tc = tcase_create("ui");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_ui1_confirm_emits_a_validated_card_artifact);
	tcase_add_test(tc, test_ext4_without_a2ui_confirm_asks_in_text);
	tcase_add_test(tc, test_ui4_approve_click_is_recorded_and_the_card_closed);
	tcase_add_test(tc, test_ui4_a_click_is_answered_even_while_the_task_awaits_an_answer);
	tcase_add_test(tc, test_ui2_forged_and_mismatched_actions_are_refused_storing_nothing);
	tcase_add_test(tc, test_ui2_client_error_reports_are_kept_but_start_no_turn);
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
