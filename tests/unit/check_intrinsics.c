/* SPDX-License-Identifier: Apache-2.0 */
/* check_intrinsics.c — turns with tool calls (TURN-1, TURN-3) driven by a real model
 * program through the exec backend (TURN-2): tests/unit/scripted_model.py turns a
 * prompt "call [...]" into those tool calls and then quotes the results back. The
 * harness applies each intrinsic in the turn's transaction; bad arguments give the
 * model an error result and never fail the turn. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "config/settings.h"
#include "domain/ext.h"
#include "harness_fixture.h"
#include "store/store.h"
#include "util/jsonx.h"

static struct th_app app;
static struct th_error err;

static void exec_model(struct th_config *cfg)
{
	struct th_error e;
	char cmd[1024];
	const char *src = getenv("TH_SRCDIR");
	snprintf(cmd, sizeof cmd, "%s/tests/unit/scripted_model.py", src ? src : ".");
	ck_assert_msg(th_config_set(cfg, "model", "exec", &e) == TH_OK, "%s", e.msg);
	ck_assert_msg(th_config_set(cfg, "model_command", cmd, &e) == TH_OK, "%s", e.msg);
}

static void setup(void)
{
	fx_open(&app, exec_model);
}

static void teardown(void)
{
	fx_close(&app);
}

/* A task from alice (reporter) with bob (assignee) and carol (assignee). */
static const char *task(void)
{
	static char id[128];
	json_object *t = fx_send_text(&app, "alice", NULL, "t0", "hello", &err);
	ck_assert_msg(t != NULL, "%s", err.msg);
	ck_assert_str_eq(fx_status_text(t), "model: hello");
	snprintf(id, sizeof id, "%s", fx_task_id(t));
	json_object_put(t);
	fx_add_participant(&app, id, "bob", "assignee");
	fx_add_participant(&app, id, "carol", "assignee");
	return id;
}

static json_object *call(const char *who, const char *id, const char *mid, const char *calls)
{
	char text[4096];
	snprintf(text, sizeof text, "call %s", calls);
	json_object *t = fx_send_text(&app, who, id, mid, text, &err);
	ck_assert_msg(t != NULL, "%s", err.msg);
	return t;
}

static json_object *plan_of(json_object *t)
{
	json_object *ext =
	    json_object_object_get(json_object_object_get(t, "metadata"), TH_META_TASK);
	return json_object_object_get(json_object_object_get(ext, "plan"), "steps");
}

START_TEST(test_turn3_the_model_is_offered_every_intrinsic)
{
	const char *id = task();
	json_object *t = fx_send_text(&app, "alice", id, "m1", "tools?", &err);
	ck_assert_str_eq(fx_status_text(t),
	                 "tools: ask_participant,complete_step,create_plan,emit_ui,"
	                 "set_participant_role,spawn_subtask");
	json_object_put(t);
}
END_TEST

START_TEST(test_turn3_create_plan_then_complete_step)
{
	const char *id = task();
	json_object *t =
	    call("alice", id, "m1",
	         "[{\"name\":\"create_plan\",\"arguments\":{\"steps\":[{\"name\":\"Write "
	         "code\"},{\"name\":\"Test it\",\"depends_on\":[\"Write code\"]}]}}]");
	ck_assert_str_eq(fx_status_text(t), "done: create_plan ok: plan attached with 2 steps");
	ck_assert_str_eq(fx_sub_state(t), "awaiting-next-message");
	json_object *steps = plan_of(t);
	ck_assert_uint_eq(json_object_array_length(steps), 2);
	json_object *s1 = json_object_array_get_idx(steps, 1);
	ck_assert_str_eq(th_json_str(s1, "id"), "test-it");
	ck_assert_str_eq(th_json_text(json_object_object_get(s1, "depends_on")),
	                 "[\"write-code\"]");
	json_object_put(t);
	t = call("bob", id, "m2",
	         "[{\"name\":\"complete_step\",\"arguments\":{\"step\":\"write-code\",\"output\":"
	         "\"it compiles\"}}]");
	ck_assert_str_eq(fx_status_text(t), "done: complete_step ok: step write-code is done");
	json_object *s0 = json_object_array_get_idx(plan_of(t), 0);
	ck_assert_str_eq(th_json_str(s0, "state"), "done");
	ck_assert_str_eq(th_json_str(s0, "output"), "it compiles");
	json_object_put(t);
	/* TASK-8: both changes were announced. */
	ck_assert_int_eq(
	    fx_count(&app, "events WHERE json LIKE '%plan_updated%' OR json LIKE '%step_updated%'"),
	    2);
}
END_TEST

START_TEST(test_turn3_bad_arguments_give_the_model_an_error_and_change_nothing)
{
	const char *id = task();
	static const char *const bad[][2] = {
	    {"[{\"name\":\"create_plan\",\"arguments\":{\"steps\":[{\"name\":\"A\",\"depends_on\":"
	     "[\"B\"]},{\"name\":\"B\",\"depends_on\":[\"A\"]}]}}]",
	     "create_plan error: the steps' dependencies form a cycle"},
	    {"[{\"name\":\"create_plan\",\"arguments\":{\"steps\":[{\"name\":\"A\"},{\"name\":"
	     "\"a\"}]}}]",
	     "create_plan error: two steps have the id 'a'"},
	    {"[{\"name\":\"create_plan\",\"arguments\":{\"steps\":[],\"extra\":1}}]",
	     "create_plan error: unknown argument 'extra'"},
	    {"[{\"name\":\"complete_step\",\"arguments\":{\"step\":\"x\",\"output\":\"y\"}}]",
	     "complete_step error: the task has no plan"},
	    {"[{\"name\":\"ask_participant\",\"arguments\":{\"participant_id\":\"nobody\","
	     "\"question\":\"?\"}}]",
	     "ask_participant error: 'nobody' is not a participant"},
	    {"[{\"name\":\"launch_rockets\",\"arguments\":{}}]",
	     "launch_rockets error: there is no tool"},
	    {"[{\"name\":\"spawn_subtask\",\"arguments\":{\"name\":\"x\"}}]",
	     "spawn_subtask error: 'goal' is required"},
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		char mid[16];
		snprintf(mid, sizeof mid, "b%zu", i);
		long steps = fx_count(&app, "plan_steps"), tasks = fx_count(&app, "tasks");
		long helps = fx_count(&app, "help_requests");
		json_object *t = call("alice", id, mid, bad[i][0]);
		ck_assert_msg(strstr(fx_status_text(t), bad[i][1]) != NULL, "case %zu: %s", i,
		              fx_status_text(t));
		ck_assert_str_eq(fx_sub_state(t), "awaiting-next-message");
		json_object_put(t);
		ck_assert_int_eq(fx_count(&app, "plan_steps"), steps);
		ck_assert_int_eq(fx_count(&app, "tasks"), tasks);
		ck_assert_int_eq(fx_count(&app, "help_requests"), helps);
	}
}
END_TEST

START_TEST(test_ctl7_a_subtask_the_model_spawns_is_completed_by_its_turn)
{
	const char *id = task();
	json_object *t =
	    call("alice", id, "m1",
	         "[{\"name\":\"spawn_subtask\",\"arguments\":{\"name\":\"Docs\",\"goal\":"
	         "\"write the docs\"}}]");
	char child[160];
	snprintf(child, sizeof child, "%s.1", id);
	ck_assert_ptr_nonnull(strstr(fx_status_text(t), child));
	json_object_put(t);
	th_app_run_pending(&app);
	t = fx_call(&app, "alice", TH_OP_GET_TASK, &err, "{\"id\":\"%s\"}", child);
	ck_assert_msg(t != NULL, "%s", err.msg);
	ck_assert_str_eq(fx_state(t), "TASK_STATE_COMPLETED");
	ck_assert_str_eq(fx_status_text(t), "model: write the docs");
	json_object_put(t);
	/* …and its end is noted in the parent, which a participant may now complete. */
	t = fx_complete(&app, "alice", id, &err);
	ck_assert_str_eq(fx_state(t), "TASK_STATE_COMPLETED");
	json_object_put(t);
}
END_TEST

/* TASK-8, TASK-4: spawn_subtask working on a plan step makes the step active with the
 * child linked, announced like every plan change; a step that does not exist, or the
 * sub-task limit (checked in one place for every way of spawning), refuses the spawn
 * with nothing written. */
START_TEST(test_task8_spawn_subtask_on_a_step_links_it_and_announces_it)
{
	const char *id = task();
	json_object *t = call("alice", id, "m1",
	                      "[{\"name\":\"create_plan\",\"arguments\":{\"steps\":[{\"name\":"
	                      "\"Docs\"},{\"name\":\"Ship\"}]}}]");
	json_object_put(t);
	long tasks = fx_count(&app, "tasks");
	t = call("alice", id, "m2",
	         "[{\"name\":\"spawn_subtask\",\"arguments\":{\"name\":\"Docs\",\"goal\":"
	         "\"write\",\"step\":\"Nope\"}}]");
	ck_assert_msg(strstr(fx_status_text(t), "spawn_subtask error: the plan has no step 'Nope'"),
	              "%s", fx_status_text(t));
	json_object_put(t);
	ck_assert_int_eq(fx_count(&app, "tasks"), tasks);
	t = call("alice", id, "m3",
	         "[{\"name\":\"spawn_subtask\",\"arguments\":{\"name\":\"Docs\",\"goal\":"
	         "\"write\",\"step\":\"Docs\"}}]");
	char child[160];
	snprintf(child, sizeof child, "%s.1", id);
	ck_assert_msg(strstr(fx_status_text(t), child), "%s", fx_status_text(t));
	json_object *s0 = json_object_array_get_idx(plan_of(t), 0);
	ck_assert_str_eq(th_json_str(s0, "state"), "active");
	json_object *linked = json_object_object_get(s0, "linked_tasks");
	ck_assert_int_eq(json_object_array_length(linked), 1);
	ck_assert_str_eq(json_object_get_string(json_object_array_get_idx(linked, 0)), child);
	json_object_put(t);
	ck_assert_int_eq(fx_count(&app, "events WHERE json LIKE '%step_updated%'"), 1);
	/* max_subtasks 1: the next spawn is refused naming the limit. */
	struct th_error ce;
	ck_assert_int_eq(th_config_set(app.cfg, "max_subtasks", "1", &ce), TH_OK);
	t = call("alice", id, "m4",
	         "[{\"name\":\"spawn_subtask\",\"arguments\":{\"name\":\"Ship\",\"goal\":"
	         "\"ship\"}}]");
	ck_assert_msg(strstr(fx_status_text(t), "the limit is 1 (max_subtasks)"), "%s",
	              fx_status_text(t));
	json_object_put(t);
	ck_assert_int_eq(fx_count(&app, "tasks"), tasks + 1);
}
END_TEST

START_TEST(test_ch4_ask_participant_ends_the_turn_awaiting_that_answer)
{
	const char *id = task();
	json_object *t =
	    call("alice", id, "m1",
	         "[{\"name\":\"ask_participant\",\"arguments\":{\"participant_id\":\"bob\","
	         "\"question\":\"Which branch?\"}}]");
	ck_assert_str_eq(fx_status_text(t), "Which branch?");
	json_object *st =
	    json_object_object_get(json_object_object_get(t, "metadata"), TH_META_STATUS);
	ck_assert_str_eq(th_json_str(st, "sub_state"), "awaiting-answer");
	ck_assert_str_eq(th_json_str(st, "participant_id"), "bob");
	ck_assert_ptr_nonnull(
	    strstr(th_json_text(json_object_object_get(t, "status")), "help_request"));
	json_object_put(t);
	t = fx_send_text(&app, "bob", id, "m2", "main", &err);
	ck_assert_str_eq(fx_sub_state(t), "awaiting-next-message");
	ck_assert_str_eq(fx_status_text(t), "model: main");
	json_object_put(t);
}
END_TEST

START_TEST(test_id5_set_participant_role_on_behalf_of_admin_or_reporter_only)
{
	const char *id = task();
	json_object *t =
	    call("carol", id, "m1",
	         "[{\"name\":\"set_participant_role\",\"arguments\":{\"participant_id\":"
	         "\"bob\",\"role\":\"admin\"}}]");
	ck_assert_ptr_nonnull(
	    strstr(fx_status_text(t), "set_participant_role error: only an admin"));
	json_object_put(t);
	t = call("alice", id, "m2",
	         "[{\"name\":\"set_participant_role\",\"arguments\":{\"participant_id\":\"bob\","
	         "\"role\":\"admin\"}}]");
	ck_assert_str_eq(fx_status_text(t), "done: set_participant_role ok: bob is now admin");
	json_object_put(t);
}
END_TEST

START_TEST(test_ui1_emit_ui_only_for_a2ui_clients)
{
	const char *id = task();
	static const char *const card =
	    "[{\"name\":\"emit_ui\",\"arguments\":{\"messages\":[{\"createSurface\":{\"surfaceId\":"
	    "\"s1\",\"catalogId\":\"https://a2ui.org/specification/v0_9/catalogs/basic/"
	    "catalog.json\"}},"
	    "{\"updateComponents\":{\"surfaceId\":\"s1\",\"components\":[{\"id\":\"root\","
	    "\"component\":"
	    "\"Text\",\"text\":\"hi\"}]}}]}}]";
	json_object *t = call("alice", id, "m1", card);
	ck_assert_ptr_nonnull(
	    strstr(fx_status_text(t), "emit_ui error: the task's client does not render A2UI"));
	json_object_put(t);
	ck_assert_int_eq(fx_count(&app, "artifacts"), 0);
	fx_extensions = TH_EXT_A2UI;
	t = call("alice", id, "m2", card);
	ck_assert_str_eq(fx_status_text(t), "done: emit_ui ok: emitted a2ui:1");
	json_object_put(t);
	ck_assert_int_eq(fx_count(&app, "artifacts"), 1);
}
END_TEST

/* ---- SEC-2: the model reads only what the turn's audience may read ------------------ */

/* A channel message from who on channel of task id (to and in_reply_to as extra JSON);
 * the SendMessage response, or NULL with err. */
static json_object *chan(const char *who, const char *id, const char *mid, const char *channel,
                         const char *kind, const char *text, const char *extra)
{
	return fx_call(
	    &app, who, TH_OP_SEND_MESSAGE, &err,
	    "{\"message\":{\"taskId\":\"%s\",\"messageId\":\"%s\",\"role\":\"ROLE_USER\","
	    "\"parts\":[{\"data\":{\"channel_id\":\"%s\",\"sender\":\"%s\",\"kind\":"
	    "\"%s\",\"text\":\"%s\"%s},\"mediaType\":\"%s\"}]}}",
	    id, mid, channel, who, kind, text, extra, TH_MT_CHANNEL);
}

static int task_has(const char *who, const char *id, const char *needle)
{
	json_object *t = fx_call(&app, who, TH_OP_GET_TASK, &err, "{\"id\":\"%s\"}", id);
	ck_assert_msg(t != NULL, "GetTask: %s", err.msg);
	int has = strstr(th_json_text(t), needle) != NULL;
	json_object_put(t);
	return has;
}

/* The audit's scenario: alice tells bob a secret on a side channel; carol, who is not in
 * it, asks the model in the task channel. The model (which repeats everything it was
 * given) was not given the secret, so neither carol's reply nor her GetTask has it. */
START_TEST(test_sec2_main_channel_turn_gets_no_side_channel_context)
{
	const char *id = task();
	json_object *r = chan("alice", id, "s1", "alice/sc", "message", "the password is hunter2",
	                      ",\"to\":[\"bob\"]");
	ck_assert_msg(r != NULL, "%s", err.msg);
	json_object_put(r);
	json_object *t = fx_send_text(&app, "carol", id, "c1", "context?", &err);
	ck_assert_msg(t != NULL, "%s", err.msg);
	const char *reply = fx_status_text(t);
	ck_assert_msg(strncmp(reply, "context: ", 9) == 0, "%s", reply);
	ck_assert_ptr_nonnull(strstr(reply, "hello")); /* the task channel is there */
	ck_assert_msg(strstr(reply, "hunter2") == NULL,
	              "the model was shown the side channel's secret");
	json_object_put(t);
	ck_assert(!task_has("carol", id, "hunter2"));
	ck_assert(task_has("bob", id, "hunter2"));
}
END_TEST

/* A turn started on a side channel (bob answers the harness's question there) reads the
 * task channel and that channel only, and answers there: carol, outside it, never sees
 * the reply, and the model never sees the channel bob is not in. */
START_TEST(test_sec2_side_channel_turn_reads_and_answers_in_its_channel)
{
	const char *id = task();
	json_object *r = chan("alice", id, "s1", "alice/sc", "message", "the password is hunter2",
	                      ",\"to\":[\"bob\"]");
	ck_assert_msg(r != NULL, "%s", err.msg);
	json_object_put(r);
	r = chan("alice", id, "s2", "alice/sc2", "message", "only-for-carol",
	         ",\"to\":[\"carol\"]");
	ck_assert_msg(r != NULL, "%s", err.msg);
	json_object_put(r);
	json_object *t = fx_send_text(&app, "alice", id, "a1", "/ask bob Which branch?", &err);
	ck_assert_msg(t != NULL, "%s", err.msg);
	char extra[160];
	snprintf(extra, sizeof extra, ",\"in_reply_to\":\"%s\"",
	         th_json_str(
	             json_object_object_get(json_object_object_get(t, "metadata"), TH_META_STATUS),
	             "request_id"));
	json_object_put(t);
	r = chan("bob", id, "b1", "alice/sc", "help_reply", "context?", extra);
	ck_assert_msg(r != NULL, "%s", err.msg);
	t = json_object_object_get(r, "task");
	ck_assert_str_eq(fx_state(t), "TASK_STATE_INPUT_REQUIRED");
	ck_assert_str_eq(fx_sub_state(t), "awaiting-next-message");
	/* No status message: every participant reads it. */
	ck_assert_ptr_null(json_object_object_get(json_object_object_get(t, "status"), "message"));
	json_object_put(r);
	ck_assert(task_has("bob", id, "context: "));
	ck_assert(task_has("bob", id, "hunter2"));
	ck_assert(!task_has("bob", id, "only-for-carol"));
	ck_assert(!task_has("carol", id, "context: "));
	ck_assert(!task_has("carol", id, "hunter2"));
	/* Offered no tools: their effects are everybody's. */
	ck_assert(task_has("bob", id, "\\\"tools\\\": null"));
}
END_TEST

/* ---- SEC-3: a turn reads a window of recent history, never the whole of it -------- */

/* BULK messages of about 4 KiB appended to task id with SQL (as an operator or a long
 * life would leave them): "bulk-<i>", every tenth on alice and bob's side channel "alice/sc". */
#define BULK 4000
static void bulk_history(const char *id)
{
	char sql[2048];
	snprintf(sql, sizeof sql,
	         "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < %d) "
	         "INSERT INTO message_rows (task_num, pos, message_id, role, sender, json, "
	         "created_ms) SELECT (SELECT num FROM tasks WHERE id = '%s'), "
	         "(SELECT max(pos) FROM messages WHERE task_id = '%s') + i, "
	         "'bulk-' || i, 'ROLE_USER', 'alice', CASE WHEN i %% 10 = 0 THEN "
	         "'{\"messageId\":\"bulk-' || i || '\",\"role\":\"ROLE_USER\",\"parts\":[{\"data\":"
	         "{\"channel_id\":\"alice/sc\",\"sender\":\"alice\",\"kind\":\"message\",\"text\":"
	         "\"side-secret-' || i || '\"},\"mediaType\":\"%s\"}]}' ELSE "
	         "'{\"messageId\":\"bulk-' || i || '\",\"role\":\"ROLE_USER\",\"parts\":[{\"text\":"
	         "\"' || replace(hex(zeroblob(2000)), '0', 'x') || '\"}]}' END, 0 FROM n",
	         BULK, id, id, TH_MT_CHANNEL);
	char *msg = NULL;
	ck_assert_msg(sqlite3_exec(th_store_db(app.store), sql, NULL, NULL, &msg) == SQLITE_OK,
	              "%s", msg ? msg : "");
}

/* The messageIds the model should see: the newest `n - 1` task-channel bulk messages,
 * then the input "w1". */
static void expected_window(char *out, size_t cap, int n)
{
	int ids[1000], k = 0;
	for (int i = BULK; i > 0 && k < n - 1; i--)
		if (i % 10 != 0)
			ids[k++] = i;
	size_t len = 0;
	for (int j = k; j-- > 0;)
		len += (size_t)snprintf(out + len, cap - len, "bulk-%d,", ids[j]);
	snprintf(out + len, cap - len, "w1");
}

/* 0 under valgrind (scripts/test.sh sets TH_UNDER_VALGRIND) or AddressSanitizer, whose
 * own memory (shadow bytes, red zones, the quarantine of freed blocks) makes a peak
 * resident size say nothing about the program's. */
static int rss_is_the_programs(void)
{
#if defined(__SANITIZE_ADDRESS__)
	return 0;
#else
	const char *v = getenv("TH_UNDER_VALGRIND");
	return v == NULL || *v == '\0' || strcmp(v, "0") == 0;
#endif
}

static long max_rss_kib(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_maxrss;
}

/* A task of 4,000 messages (16 MiB of text, a tenth on a side channel carol is not in):
 * carol's turn gives the model exactly the newest model_history_max messages of the task
 * channel, its input last, and reading them costs far less than the history. */
START_TEST(test_sec3_turn_gives_the_model_the_newest_window_only)
{
	const char *id = task();
	json_object *r =
	    chan("alice", id, "s1", "alice/sc", "message", "open", ",\"to\":[\"bob\"]");
	ck_assert_msg(r != NULL, "%s", err.msg);
	json_object_put(r);
	bulk_history(id);
	app.cfg->model_history_max = 50;
	long before = max_rss_kib();
	json_object *t = fx_send_text(&app, "carol", id, "w1", "window?", &err);
	long grew = max_rss_kib() - before;
	ck_assert_msg(t != NULL, "%s", err.msg);
	static char want[16384];
	snprintf(want, 9, "window: ");
	expected_window(want + 8, sizeof want - 8, 50);
	ck_assert_str_eq(fx_status_text(t), want);
	json_object_put(t);
	/* The old turn parsed all 16 MiB of history (tens of MiB of JSON objects). */
	if (rss_is_the_programs())
		ck_assert_msg(grew < 8 * 1024, "the turn's peak memory grew by %ld KiB", grew);
}
END_TEST

/* model_history_bytes ends the window earlier: only as many of the newest messages as
 * fit, the input always among them. */
START_TEST(test_sec3_turn_window_stops_at_its_byte_budget)
{
	const char *id = task();
	bulk_history(id);
	app.cfg->model_history_max = 1000;
	app.cfg->model_history_bytes = 40000; /* about nine messages of 4 KiB */
	json_object *t = fx_send_text(&app, "carol", id, "w1", "window?", &err);
	ck_assert_msg(t != NULL, "%s", err.msg);
	const char *got = fx_status_text(t);
	int n = 1;
	for (const char *p = got; *p != '\0'; p++)
		n += *p == ',';
	ck_assert_msg(n == 10, "%d messages: %.200s", n, got);
	static char want[16384];
	snprintf(want, 9, "window: ");
	expected_window(want + 8, sizeof want - 8, n);
	ck_assert_str_eq(got, want);
	json_object_put(t);
}
END_TEST

/* SEC-5: a failed model fails the task with a generic text; the program's path and its
 * stderr go to the server log only. */
START_TEST(test_sec5_model_failure_text_names_no_program_nor_its_stderr)
{
	const char *id = task();
	json_object *t = fx_send_text(&app, "alice", id, "f1", "fail!", &err);
	ck_assert_msg(t != NULL, "%s", err.msg);
	ck_assert_str_eq(fx_state(t), "TASK_STATE_FAILED");
	ck_assert_str_eq(fx_status_text(t),
	                 "turn failed: the model did not answer (the server log says why)");
	json_object_put(t);
	ck_assert(!task_has("alice", id, "scripted_model"));
	ck_assert(!task_has("alice", id, "weights.bin"));
}
END_TEST

int main(void)
{
	Suite *s = suite_create("intrinsics");
	TCase *tc = tcase_create("intrinsics");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_turn3_the_model_is_offered_every_intrinsic);
	tcase_add_test(tc, test_turn3_create_plan_then_complete_step);
	tcase_add_test(tc, test_turn3_bad_arguments_give_the_model_an_error_and_change_nothing);
	tcase_add_test(tc, test_ctl7_a_subtask_the_model_spawns_is_completed_by_its_turn);
	tcase_add_test(tc, test_task8_spawn_subtask_on_a_step_links_it_and_announces_it);
	tcase_add_test(tc, test_ch4_ask_participant_ends_the_turn_awaiting_that_answer);
	tcase_add_test(tc, test_id5_set_participant_role_on_behalf_of_admin_or_reporter_only);
	tcase_add_test(tc, test_ui1_emit_ui_only_for_a2ui_clients);
	tcase_add_test(tc, test_sec2_main_channel_turn_gets_no_side_channel_context);
	tcase_add_test(tc, test_sec2_side_channel_turn_reads_and_answers_in_its_channel);
	tcase_add_test(tc, test_sec5_model_failure_text_names_no_program_nor_its_stderr);
	tcase_add_test(tc, test_sec3_turn_gives_the_model_the_newest_window_only);
	tcase_add_test(tc, test_sec3_turn_window_stops_at_its_byte_budget);
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
