/* SPDX-License-Identifier: Apache-2.0 */
/* check_collab.c — collaboration through the service layer on a real store: task
 * envelopes (TASK-3..TASK-5, TASK-8), sub-tasks (TASK-4, CTL-4, CTL-8), channels and
 * help requests (CH-1..CH-5, STATUS-1), commands (CMD-3, CMD-5), roles (ID-4, ID-5),
 * the waiting_tasks view (STORE-1) and turn recovery (TURN-4). Every refusal checks
 * the code, a key word, and that nothing was stored. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "a2a/a2a.h"
#include "config/settings.h"
#include "domain/ext.h"
#include "domain/inbound.h"
#include "service/service.h"
#include "turn/turn.h"
#include "domain/status.h"
#include "domain/task.h"
#include "util/idrule.h"
#include "util/ids.h"
#include "harness_fixture.h"
#include "store/store.h"
#include "util/jsonx.h"

static struct th_app app;
static struct th_error err;
static char task[128];

#define ENV(kind_payload)                                                                          \
	"{\"data\":" kind_payload ",\"mediaType\":\"application/vnd.tiny-harness.event+json\"}"

static void setup(void)
{
	fx_open(&app, NULL);
}

static void teardown(void)
{
	fx_close(&app);
}

/* alice (reporter), bob (admin), wendy (watcher), made by a task envelope. */
static void team_task(void)
{
	json_object *r = fx_call(
	    &app, "alice", TH_OP_SEND_MESSAGE, &err,
	    "{\"message\":{\"messageId\":\"t1\",\"role\":\"ROLE_USER\",\"parts\":[" ENV(
	        "{\"kind\":\"task\",\"payload\":{\"name\":\"Ship\",\"goal\":\"Release 1.0\","
	        "\"participants\":[{\"id\":\"bob\",\"role\":\"admin\"},{\"id\":\"wendy\","
	        "\"role\":\"watcher\"}]}}") "]}}");
	ck_assert_msg(r != NULL, "%s", err.msg);
	snprintf(task, sizeof task, "%s", fx_task_id(json_object_object_get(r, "task")));
	json_object_put(r);
}

static json_object *get(const char *who, const char *id)
{
	json_object *t = fx_call(&app, who, TH_OP_GET_TASK, &err, "{\"id\":\"%s\"}", id);
	ck_assert_msg(t != NULL, "GetTask: %s", err.msg);
	return t;
}

static json_object *ext_of(json_object *t)
{
	return json_object_object_get(json_object_object_get(t, "metadata"), TH_META_TASK);
}

static const char *role_of(json_object *t, const char *who)
{
	json_object *ps = json_object_object_get(ext_of(t), "participants");
	for (size_t i = 0; i < json_object_array_length(ps); i++) {
		json_object *p = json_object_array_get_idx(ps, i);
		if (strcmp(th_json_str(p, "id"), who) == 0)
			return th_json_str(p, "role");
	}
	return NULL;
}

static int history_has(json_object *t, const char *needle)
{
	return strstr(th_json_text(json_object_object_get(t, "history")), needle) != NULL;
}

/* ---- task envelopes --------------------------------------------------------------- */

START_TEST(test_task4_envelope_creates_task_with_its_attributes)
{
	json_object *r =
	    fx_call(&app, "alice", TH_OP_SEND_MESSAGE, &err,
	            "{\"message\":{\"messageId\":\"t1\",\"role\":\"ROLE_USER\","
	            "\"parts\":[" ENV("{\"kind\":\"task\",\"payload\":{\"name\":\"Ship\",\"goal\":"
	                              "\"Release 1.0\","
	                              "\"type\":\"release\",\"description\":\"d\",\"acceptance_"
	                              "criteria\":[{\"text\":"
	                              "\"tests "
	                              "pass\"}],\"participants\":[{\"id\":\"bob\",\"role\":"
	                              "\"assignee\"}]}}") ","
	                                                  "{\"text\":\"let us start\"}]}}");
	ck_assert_msg(r != NULL, "%s", err.msg);
	json_object *t = json_object_object_get(r, "task"), *ext = ext_of(t);
	ck_assert_str_eq(th_json_str(ext, "name"), "Ship");
	ck_assert_str_eq(th_json_str(ext, "goal"), "Release 1.0");
	ck_assert_str_eq(th_json_str(ext, "type"), "release");
	ck_assert_str_eq(th_json_text(json_object_object_get(ext, "acceptance_criteria")),
	                 "[{\"text\":\"tests pass\",\"met\":false}]");
	/* The sender joins as reporter; bob is the named assignee, so no harness assignee. */
	ck_assert_str_eq(role_of(t, "alice"), "reporter");
	ck_assert_str_eq(role_of(t, "bob"), "assignee");
	ck_assert_ptr_null(role_of(t, "tiny-harness"));
	/* The text is the first message, and its turn ran. */
	ck_assert_str_eq(fx_status_text(t),
	                 "echo: [application/vnd.tiny-harness.event+json part]\nlet us start");
	json_object_put(r);
}
END_TEST

/* The harness listed in another role, and no assignee named: it is the assignee, and
 * on the task once (a new task's participants are plain inserts, SCALE-1). */
START_TEST(test_task4_envelope_listing_the_harness_without_an_assignee_makes_it_assignee)
{
	json_object *r =
	    fx_call(&app, "alice", TH_OP_SEND_MESSAGE, &err,
	            "{\"message\":{\"messageId\":\"t1\",\"role\":\"ROLE_USER\",\"parts\":[" ENV(
	                "{\"kind\":\"task\",\"payload\":{\"name\":\"Ship\",\"goal\":\"Release\","
	                "\"participants\":[{\"id\":\"wendy\",\"role\":\"watcher\"},"
	                "{\"id\":\"tiny-harness\",\"role\":\"watcher\"}]}}") "]}}");
	ck_assert_msg(r != NULL, "%s", err.msg);
	json_object *t = json_object_object_get(r, "task");
	json_object *ps = json_object_object_get(ext_of(t), "participants");
	ck_assert_uint_eq(json_object_array_length(ps), 3);
	ck_assert_str_eq(role_of(t, "wendy"), "watcher");
	ck_assert_str_eq(role_of(t, "tiny-harness"), "assignee");
	ck_assert_str_eq(role_of(t, "alice"), "reporter");
	json_object_put(r);
}
END_TEST

START_TEST(test_task3_bad_envelopes_are_refused_naming_the_field)
{
	static const char *const bad[][2] = {
	    {"{\"kind\":\"task\",\"payload\":{\"name\":\"x\",\"goal\":\"y\",\"colour\":1}}",
	     "colour"},
	    {"{\"kind\":\"task\",\"payload\":{\"goal\":\"y\"}}", "name"},
	    {"{\"kind\":\"task\",\"payload\":{\"name\":\"x\"}}", "goal"},
	    {"{\"kind\":\"task\"}", "payload"},
	    {"{\"kind\":\"task\",\"payload\":{\"name\":\"x\",\"goal\":\"y\"},\"extra\":1}",
	     "extra"},
	    {"{\"kind\":\"plan_updated\",\"payload\":{}}", "plan_updated"},
	    {"{\"kind\":\"task\",\"payload\":{\"name\":\"x\",\"goal\":\"y\",\"participants\":[{"
	     "\"id\":\"b\",\"role\":\"boss\"}]}}",
	     "role"},
	    {"{\"kind\":\"task\",\"payload\":{\"name\":\"x\",\"goal\":\"y\",\"sub_tasks\":[]}}",
	     "sub_tasks"},
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		ck_assert_ptr_null(
		    fx_call(&app, "alice", TH_OP_SEND_MESSAGE, &err,
		            "{\"message\":{\"messageId\":\"b%zu\",\"role\":\"ROLE_USER\","
		            "\"parts\":[{\"data\":%s,\"mediaType\":\"%s\"}]}}",
		            i, bad[i][0], TH_MT_EVENT));
		ck_assert_int_eq(err.code, TH_EINVAL);
		ck_assert_msg(strstr(err.msg, bad[i][1]) != NULL, "case %zu: %s", i, err.msg);
	}
	ck_assert_int_eq(fx_count(&app, "tasks"), 0);
	ck_assert_int_eq(fx_count(&app, "messages"), 0);
}
END_TEST

START_TEST(test_task5_envelope_updates_name_description_and_criteria)
{
	team_task();
	json_object *r = fx_call(
	    &app, "bob", TH_OP_SEND_MESSAGE, &err,
	    "{\"message\":{\"taskId\":\"%s\",\"messageId\":\"u1\",\"role\":\"ROLE_USER\",\"parts\":"
	    "[" ENV("{\"kind\":\"task\",\"payload\":{\"name\":\"Ship it\",\"description\":\"now\","
	            "\"acceptance_criteria\":[{\"text\":\"green\",\"met\":true}]}}") "]}}",
	    task);
	ck_assert_msg(r != NULL, "%s", err.msg);
	json_object *ext = ext_of(json_object_object_get(r, "task"));
	ck_assert_str_eq(th_json_str(ext, "name"), "Ship it");
	ck_assert_str_eq(th_json_str(ext, "description"), "now");
	ck_assert_str_eq(th_json_str(ext, "goal"), "Release 1.0");
	json_object_put(r);
	/* goal, plan, sub_tasks, parent_tasks cannot change; the key is named. */
	long msgs = fx_count(&app, "messages");
	ck_assert_ptr_null(
	    fx_call(&app, "bob", TH_OP_SEND_MESSAGE, &err,
	            "{\"message\":{\"taskId\":\"%s\",\"messageId\":\"u2\",\"role\":"
	            "\"ROLE_USER\",\"parts\":[" ENV(
	                "{\"kind\":\"task\",\"payload\":{\"goal\":\"other\"}}") "]}}",
	            task));
	ck_assert_int_eq(err.code, TH_EINVAL);
	ck_assert_ptr_nonnull(strstr(err.msg, "goal"));
	ck_assert_int_eq(fx_count(&app, "messages"), msgs);
}
END_TEST

START_TEST(test_id5_participants_change_only_by_admin_or_reporter)
{
	team_task();
	fx_add_participant(&app, task, "carol", "assignee");
	long parts = fx_count(&app, "participants"), msgs = fx_count(&app, "messages");
	ck_assert_ptr_null(
	    fx_call(&app, "carol", TH_OP_SEND_MESSAGE, &err,
	            "{\"message\":{\"taskId\":\"%s\",\"messageId\":\"p1\",\"role\":"
	            "\"ROLE_USER\",\"parts\":[" ENV(
	                "{\"kind\":\"task\",\"payload\":{"
	                "\"participants\":[{\"id\":\"dave\",\"role\":\"admin\"}]}}") "]}}",
	            task));
	ck_assert_int_eq(err.code, TH_EUNSUPPORTED);
	ck_assert_ptr_nonnull(strstr(err.msg, "admin"));
	ck_assert_ptr_null(fx_send_text(&app, "carol", task, "p2", "/invite dave admin", &err));
	ck_assert_int_eq(err.code, TH_EUNSUPPORTED);
	ck_assert_ptr_null(fx_send_text(&app, "carol", task, "p3", "/role bob watcher", &err));
	ck_assert_int_eq(err.code, TH_EUNSUPPORTED);
	ck_assert_int_eq(fx_count(&app, "participants"), parts);
	ck_assert_int_eq(fx_count(&app, "messages"), msgs);
	/* The reporter may; the change is announced (TASK-8) and shown in metadata. */
	long events = fx_count(&app, "events");
	json_object *t = fx_send_text(&app, "alice", task, "p4", "/invite dave assignee", &err);
	ck_assert_str_eq(fx_status_text(t), "dave joined as assignee.");
	ck_assert_str_eq(role_of(t, "dave"), "assignee");
	json_object_put(t);
	ck_assert_int_gt(fx_count(&app, "events"), events);
	t = fx_send_text(&app, "bob", task, "p5", "/role dave watcher", &err);
	ck_assert_str_eq(role_of(t, "dave"), "watcher");
	json_object_put(t);
	ck_assert_int_eq(fx_count(&app, "events WHERE json LIKE '%participants_updated%'"), 2);
}
END_TEST

/* ---- commands ------------------------------------------------------------------------ */

START_TEST(test_cmd3_plan_and_step_update_the_plan_in_metadata)
{
	team_task();
	json_object *t =
	    fx_send_text(&app, "alice", task, "c1", "/plan write code; test it; ship", &err);
	json_object *steps =
	    json_object_object_get(json_object_object_get(ext_of(t), "plan"), "steps");
	ck_assert_uint_eq(json_object_array_length(steps), 3);
	ck_assert_str_eq(th_json_str(json_object_array_get_idx(steps, 1), "name"), "test it");
	json_object_put(t);
	t = fx_send_text(&app, "alice", task, "c2", "/step test it done 12 passing", &err);
	steps = json_object_object_get(json_object_object_get(ext_of(t), "plan"), "steps");
	json_object *s1 = json_object_array_get_idx(steps, 1);
	ck_assert_str_eq(th_json_str(s1, "state"), "done");
	ck_assert_str_eq(th_json_str(s1, "output"), "12 passing");
	json_object_put(t);
	ck_assert_int_eq(
	    fx_count(&app, "events WHERE json LIKE '%plan_updated%' OR json LIKE '%step_updated%'"),
	    2);
}
END_TEST

START_TEST(test_cmd5_bad_arguments_reply_with_usage_and_change_nothing)
{
	team_task();
	static const char *const cmds[] = {
	    "/ask bob",      "/ask nobody why?", "/subtask no colon here",
	    "/step nothing", "/role bob boss",   "/invite",
	    "/plan ;;"};
	for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++) {
		char mid[16];
		snprintf(mid, sizeof mid, "u%zu", i);
		long parts = fx_count(&app, "participants"), subs = fx_count(&app, "subtask_links");
		long steps = fx_count(&app, "plan_steps"), helps = fx_count(&app, "help_requests");
		json_object *t = fx_send_text(&app, "alice", task, mid, cmds[i], &err);
		ck_assert_msg(t != NULL, "%s: %s", cmds[i], err.msg);
		ck_assert_msg(strstr(fx_status_text(t), "Usage: /") != NULL, "%s: %s", cmds[i],
		              fx_status_text(t));
		ck_assert_str_eq(fx_sub_state(t), "awaiting-next-message");
		json_object_put(t);
		ck_assert_int_eq(fx_count(&app, "participants"), parts);
		ck_assert_int_eq(fx_count(&app, "subtask_links"), subs);
		ck_assert_int_eq(fx_count(&app, "plan_steps"), steps);
		ck_assert_int_eq(fx_count(&app, "help_requests"), helps);
	}
}
END_TEST

/* ID-6: a participant id is one word of at most max_id bytes with no control
 * characters, wherever it comes from; it is refused whole, never cut to fit or stored. */
static json_object *channel_msg(const char *who, const char *mid, const char *channel,
                                const char *kind, const char *extra);

START_TEST(test_id6_participant_ids_in_params_obey_the_id_rule)
{
	team_task();
	long parts = fx_count(&app, "participants"), chans = fx_count(&app, "channels");
	/* A task envelope's participants. */
	ck_assert_ptr_null(
	    fx_call(&app, "alice", TH_OP_SEND_MESSAGE, &err,
	            "{\"message\":{\"messageId\":\"i1\",\"role\":\"ROLE_USER\",\"parts\":[" ENV(
	                "{\"kind\":\"task\",\"payload\":{\"name\":\"N\",\"goal\":\"G\","
	                "\"participants\":[{\"id\":\"bob smith\",\"role\":\"admin\"}]}}") "]}}"));
	ck_assert_int_eq(err.code, TH_EINVAL);
	ck_assert_str_eq(err.msg, "payload.participants[0].id contains white space (byte 3); a "
	                          "participant id is one word");
	ck_assert_ptr_null(
	    fx_call(&app, "alice", TH_OP_SEND_MESSAGE, &err,
	            "{\"message\":{\"messageId\":\"i2\",\"role\":\"ROLE_USER\",\"parts\":[" ENV(
	                "{\"kind\":\"task\",\"payload\":{\"name\":\"N\",\"goal\":\"G\","
	                "\"participants\":[{\"id\":\"bo\\u0007b\",\"role\":\"admin\"}]}}") "]}}"));
	ck_assert_str_eq(err.msg,
	                 "payload.participants[0].id contains a control character (byte 2)");
	/* A channel's members. */
	ck_assert_ptr_null(
	    channel_msg("alice", "i3", "side", "message", ",\"to\":[\"b\\u0000ob\"]"));
	ck_assert_int_eq(err.code, TH_EINVAL);
	ck_assert_ptr_nonnull(strstr(err.msg, "message.parts[0].data.to[0] contains a control"));
	/* /invite with an id over max_id (256) is refused whole, not cut to 256 bytes. */
	char cmd[400] = "/invite ";
	memset(cmd + 8, 'd', 300);
	strcpy(cmd + 308, " watcher");
	json_object *t = fx_send_text(&app, "alice", task, "i4", cmd, &err);
	ck_assert_msg(t != NULL, "%s", err.msg);
	ck_assert_ptr_nonnull(strstr(fx_status_text(t), "is 300 bytes; the limit is 256"));
	json_object_put(t);
	t = fx_send_text(&app, "alice", task, "i5", "/ask d\x01x why?", &err);
	ck_assert_msg(t != NULL, "%s", err.msg);
	ck_assert_ptr_nonnull(strstr(fx_status_text(t), "contains a control character"));
	json_object_put(t);
	ck_assert_int_eq(fx_count(&app, "participants"), parts);
	ck_assert_int_eq(fx_count(&app, "channels"), chans);
	ck_assert_int_eq(fx_count(&app, "help_requests"), 0);
}
END_TEST

START_TEST(test_cmd1_card_lists_every_builtin)
{
	const char *names = th_service_card(&app, NULL, NULL);
	ck_assert_ptr_nonnull(names);
	static const char *const builtins[] = {"help",    "status", "plan", "step",   "ask",
	                                       "subtask", "invite", "role", "confirm"};
	for (size_t i = 0; i < sizeof builtins / sizeof builtins[0]; i++) {
		char needle[64];
		snprintf(needle, sizeof needle, "\"name\":\"%s\"", builtins[i]);
		ck_assert_msg(strstr(names, needle) != NULL, "card lacks /%s", builtins[i]);
	}
}
END_TEST

START_TEST(test_cmd2_status_reports_the_task_as_it_stands_and_keeps_it_waiting)
{
	team_task();
	json_object *t = fx_send_text(&app, "alice", task, "s1", "/status", &err);
	ck_assert_ptr_nonnull(
	    strstr(fx_status_text(t), "TASK_STATE_INPUT_REQUIRED · awaiting-next-message"));
	json_object_put(t);
	t = fx_send_text(&app, "alice", task, "s2", "/ask bob Which branch?", &err);
	json_object_put(t);
	/* A command while the task waits for bob runs, and the task still waits for bob. */
	t = fx_send_text(&app, "alice", task, "s3", "/status", &err);
	ck_assert_ptr_nonnull(strstr(fx_status_text(t), "awaiting-answer"));
	ck_assert_str_eq(fx_sub_state(t), "awaiting-answer");
	json_object_put(t);
	t = fx_send_text(&app, "bob", task, "s4", "main", &err);
	ck_assert_str_eq(fx_sub_state(t), "awaiting-next-message");
	json_object_put(t);
}
END_TEST

/* ---- reading a message once (issue 30) ------------------------------------------------- */

/* TASK-3, CTL-1, CH-1, CMD-2, UI-2: th_inbound_read describes a message from one pass over
 * its parts, and refuses a malformed one naming the part and the field. */
START_TEST(test_task3_inbound_describes_a_message_from_one_reading)
{
	static const struct {
		const char *parts;
		int ok, control, payload, channel, a2ui;
		const char *text;  /* NULL: none; else the first text part */
		const char *error; /* a piece of the refusal */
	} cases[] = {
	    {"[{\"text\":\"/help\"},{\"text\":\"more\"}]", 1, 0, 0, 0, 0, "/help", NULL},
	    {"[{\"data\":{\"kind\":\"control\",\"action\":\"complete\"},\"mediaType\":"
	     "\"" TH_MT_EVENT "\"}]",
	     1, 1, 0, 0, 0, NULL, NULL},
	    {"[{\"text\":\"x\"},{\"data\":{\"kind\":\"control\",\"action\":\"complete\"},"
	     "\"mediaType\":\"" TH_MT_EVENT "\"}]",
	     0, 0, 0, 0, 0, NULL, "the only part of its message; this message has 2 parts"},
	    {"[{\"data\":{\"kind\":\"control\",\"action\":\"stop\"},\"mediaType\":\"" TH_MT_EVENT
	     "\"}]",
	     0, 0, 0, 0, 0, NULL, "message.parts[0].data.action 'stop' is unknown"},
	    {"[{\"text\":\"hi\"},{\"data\":{\"kind\":\"task\",\"payload\":{\"name\":\"n\"}},"
	     "\"mediaType\":\"" TH_MT_EVENT "\"}]",
	     1, 0, 1, 0, 0, "hi", NULL},
	    {"[{\"data\":{\"kind\":\"task\",\"payload\":{}},\"mediaType\":\"" TH_MT_EVENT
	     "\"},{\"data\":{\"kind\":\"task\",\"payload\":{}},\"mediaType\":\"" TH_MT_EVENT "\"}]",
	     0, 0, 0, 0, 0, NULL, "at most one task envelope"},
	    {"[{\"data\":{\"kind\":\"task\",\"payload\":3},\"mediaType\":\"" TH_MT_EVENT "\"}]", 0,
	     0, 0, 0, 0, NULL, "message.parts[0].data.payload is required and must be an object"},
	    {"[{\"data\":{\"kind\":\"note\"},\"mediaType\":\"" TH_MT_EVENT "\"}]", 0, 0, 0, 0, 0,
	     NULL, "data.kind 'note' is not an envelope kind"},
	    {"[{\"text\":\"psst\"},{\"data\":{\"channel_id\":\"alice/"
	     "x\",\"sender\":\"alice\",\"text\":\"psst\"},"
	     "\"mediaType\":\"" TH_MT_CHANNEL "\"}]",
	     1, 0, 0, 1, 0, "psst", NULL},
	    {"[{\"data\":{\"channel_id\":\"alice/x\",\"colour\":1},\"mediaType\":\"" TH_MT_CHANNEL
	     "\"}]",
	     0, 0, 0, 0, 0, NULL, "colour"},
	    {"[{\"data\":{\"channel_id\":\"alice/"
	     "a\",\"sender\":\"alice\"},\"mediaType\":\"" TH_MT_CHANNEL
	     "\"},{\"data\":{\"channel_id\":\"alice/"
	     "b\",\"sender\":\"alice\"},\"mediaType\":\"" TH_MT_CHANNEL "\"}]",
	     0, 0, 0, 0, 0, NULL, "at most one channel part"},
	    {"[{\"data\":{\"version\":\"v0.9\"},\"mediaType\":\"" TH_MT_A2UI "\"}]", 1, 0, 0, 0, 1,
	     NULL, NULL},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char text[1024];
		snprintf(text, sizeof text,
		         "{\"messageId\":\"m\",\"role\":\"ROLE_USER\",\"parts\":%s}",
		         cases[i].parts);
		json_object *msg = json_tokener_parse(text);
		ck_assert_msg(msg != NULL, "case %zu does not parse: %s", i, text);
		struct th_inbound in;
		struct th_error e;
		th_error_clear(&e);
		int rc = th_inbound_read(msg, "alice", &app.cfg->lim, &in, NULL, &e);
		if (!cases[i].ok) {
			ck_assert_msg(rc == -1 && e.code == TH_EINVAL, "case %zu accepted", i);
			ck_assert_msg(strstr(e.msg, cases[i].error) != NULL, "case %zu: %s", i,
			              e.msg);
		} else {
			ck_assert_msg(rc == 0, "case %zu: %s", i, e.msg);
			ck_assert_int_eq(in.control, cases[i].control);
			ck_assert_int_eq(in.payload != NULL, cases[i].payload);
			ck_assert_int_eq(in.has_channel, cases[i].channel);
			ck_assert_int_eq(in.a2ui, cases[i].a2ui);
			if (cases[i].text == NULL)
				ck_assert_ptr_null(in.text);
			else
				ck_assert_str_eq(in.text, cases[i].text);
			if (cases[i].channel)
				ck_assert_str_eq(in.channel.channel_id, "alice/x");
		}
		json_object_put(msg);
	}
}
END_TEST

/* ---- sub-tasks ----------------------------------------------------------------------- */

START_TEST(test_task4_subtask_inherits_participants_with_a_dotted_id)
{
	team_task();
	json_object *t =
	    fx_send_text(&app, "alice", task, "s1", "/subtask Docs: write the docs", &err);
	char child[160];
	snprintf(child, sizeof child, "%s.1", task);
	ck_assert_ptr_nonnull(strstr(fx_status_text(t), child));
	json_object *subs = json_object_object_get(ext_of(t), "sub_tasks");
	ck_assert_str_eq(th_json_str(json_object_array_get_idx(subs, 0), "task_id"), child);
	json_object_put(t);
	th_app_run_pending(&app);
	t = get("wendy", child);
	ck_assert_str_eq(role_of(t, "bob"), "admin");
	ck_assert_str_eq(role_of(t, "wendy"), "watcher");
	ck_assert_str_eq(role_of(t, "tiny-harness"), "assignee");
	ck_assert_str_eq(th_json_str(ext_of(t), "goal"), "write the docs");
	ck_assert_str_eq(th_json_str(json_object_array_get_idx(
	                                 json_object_object_get(ext_of(t), "parent_tasks"), 0),
	                             "task_id"),
	                 task);
	ck_assert_str_eq(fx_state(t), "TASK_STATE_INPUT_REQUIRED");
	json_object_put(t);
	/* A second one is .2, a grandchild .1.1 (two levels). */
	t = fx_send_text(&app, "alice", task, "s2", "/subtask Tests: write tests", &err);
	json_object_put(t);
	t = fx_send_text(&app, "alice", child, "s3", "/subtask Intro: the intro", &err);
	json_object_put(t);
	char grandchild[200], second[160];
	snprintf(second, sizeof second, "%s.2", task);
	snprintf(grandchild, sizeof grandchild, "%s.1", child);
	json_object_put(get("alice", second));
	json_object_put(get("alice", grandchild));
}
END_TEST

/* A task envelope creating a child of `task`, as message k<n>, sent by who. */
static json_object *send_child_envelope(const char *who, int n)
{
	return fx_call(&app, who, TH_OP_SEND_MESSAGE, &err,
	               "{\"message\":{\"messageId\":\"k%d\",\"role\":\"ROLE_USER\",\"parts\":[{"
	               "\"data\":{\"kind\":\"task\",\"payload\":{\"name\":\"Child\",\"goal\":"
	               "\"g\",\"parent_tasks\":[{\"task_id\":\"%s\"}]}},\"mediaType\":\"%s\"}]}}",
	               n, task, TH_MT_EVENT);
}

START_TEST(test_task4_envelope_parent_links_under_a_writable_parent_only)
{
	team_task();
	long tasks = fx_count(&app, "tasks");
	ck_assert_ptr_null(send_child_envelope("wendy", 1));
	ck_assert_int_eq(err.code, TH_EUNSUPPORTED);
	ck_assert_ptr_null(send_child_envelope("mallory", 2));
	ck_assert_int_eq(err.code, TH_ENOTFOUND);
	ck_assert_int_eq(fx_count(&app, "tasks"), tasks);
	json_object *r = send_child_envelope("bob", 3);
	ck_assert_msg(r != NULL, "%s", err.msg);
	char child[160];
	snprintf(child, sizeof child, "%s.1", task);
	ck_assert_str_eq(fx_task_id(json_object_object_get(r, "task")), child);
	json_object_put(r);
	/* CTL-4 then CTL-8: completion refused naming the child; cancel takes it along. */
	json_object *t = fx_complete(&app, "alice", task, &err);
	ck_assert_ptr_nonnull(strstr(fx_status_text(t), child));
	ck_assert_ptr_nonnull(strstr(fx_status_text(t), "Child"));
	json_object_put(t);
	t = fx_call(&app, "alice", TH_OP_CANCEL_TASK, &err, "{\"id\":\"%s\"}", task);
	json_object_put(t);
	t = get("bob", child);
	ck_assert_str_eq(fx_state(t), "TASK_STATE_CANCELED");
	json_object_put(t);
}
END_TEST

START_TEST(test_ctl4_resolved_child_is_noted_in_the_parent)
{
	team_task();
	json_object *t =
	    fx_send_text(&app, "alice", task, "s1", "/subtask Docs: write the docs", &err);
	json_object_put(t);
	char child[160];
	snprintf(child, sizeof child, "%s.1", task);
	t = fx_complete(&app, "bob", child, &err);
	ck_assert_str_eq(fx_state(t), "TASK_STATE_COMPLETED");
	json_object_put(t);
	t = get("alice", task);
	char note[256];
	snprintf(note, sizeof note, "sub-task %s (Docs) is TASK_STATE_COMPLETED", child);
	ck_assert(history_has(t, note));
	json_object_put(t);
	t = fx_complete(&app, "alice", task, &err);
	ck_assert_str_eq(fx_state(t), "TASK_STATE_COMPLETED");
	json_object_put(t);
}
END_TEST

/* ---- channels and help requests --------------------------------------------------------- */

static json_object *channel_msg(const char *who, const char *mid, const char *channel,
                                const char *kind, const char *extra)
{
	return fx_call(
	    &app, who, TH_OP_SEND_MESSAGE, &err,
	    "{\"message\":{\"taskId\":\"%s\",\"messageId\":\"%s\",\"role\":\"ROLE_USER\","
	    "\"parts\":[{\"data\":{\"channel_id\":\"%s\",\"sender\":\"%s\",\"kind\":\"%s\","
	    "\"text\":\"hi from %s\"%s},\"mediaType\":\"%s\"}]}}",
	    task, mid, channel, who, kind, who, extra, TH_MT_CHANNEL);
}

START_TEST(test_ch3_channel_message_is_kept_and_starts_no_turn)
{
	team_task();
	long turns = fx_count(&app, "turns");
	json_object *r = channel_msg("alice", "ch1", task, "message", "");
	ck_assert_msg(r != NULL, "%s", err.msg);
	json_object_put(r);
	ck_assert_int_eq(fx_count(&app, "turns"), turns);
	ck_assert_int_eq(fx_count(&app, "channel_messages"), 1);
	json_object *t = get("wendy", task);
	ck_assert(history_has(t, "hi from alice"));
	ck_assert_str_eq(fx_sub_state(t), "awaiting-next-message");
	json_object_put(t);
	/* Delivered as a message event (read as streams get it: the stored event refers to
	 * the history message, STORE-10). */
	struct th_event *ev = NULL;
	size_t n = 0;
	ck_assert_int_eq(th_store_events_since(app.store, task, 0, 0, NULL, &ev, &n, &err), TH_OK);
	int found = 0;
	for (size_t i = 0; i < n; i++)
		found += strcmp(ev[i].kind, "message") == 0 && strstr(ev[i].json, "hi from alice");
	th_events_free(ev, n);
	ck_assert_int_eq(found, 1);
}
END_TEST

START_TEST(test_ch2_side_channel_is_for_its_members_only)
{
	team_task();
	json_object *r = channel_msg("alice", "sc1", "alice/side", "message", ",\"to\":[\"bob\"]");
	ck_assert_msg(r != NULL, "%s", err.msg);
	json_object_put(r);
	r = channel_msg("bob", "sc2", "alice/side", "message", "");
	ck_assert_msg(r != NULL, "%s", err.msg);
	json_object_put(r);
	/* wendy is not in it: the history she sees leaves it out. */
	json_object *t = get("wendy", task);
	ck_assert(!history_has(t, "hi from alice"));
	json_object_put(t);
	t = get("bob", task);
	ck_assert(history_has(t, "hi from alice"));
	json_object_put(t);
	/* carol (a participant, not a member) gets the same refusal for a channel that
	 * exists and one that does not. */
	fx_add_participant(&app, task, "carol", "assignee");
	long msgs = fx_count(&app, "messages");
	ck_assert_ptr_null(channel_msg("carol", "x1", "alice/side", "message", ""));
	char first[TH_ERRMSG_MAX];
	snprintf(first, sizeof first, "%s", err.msg);
	ck_assert_int_eq(err.code, TH_EINVAL);
	ck_assert_ptr_null(channel_msg("carol", "x2", "alice/nowhere", "message", ""));
	ck_assert_int_eq(err.code, TH_EINVAL);
	char *p = strstr(first, "alice/side");
	ck_assert_ptr_nonnull(p);
	ck_assert_str_eq(p + 10, strstr(err.msg, "alice/nowhere") + 13);
	ck_assert_int_eq(fx_count(&app, "messages"), msgs);
}
END_TEST

/* CH-2, decision-042: carol "opening" a channel under an id that is taken, or naming
 * someone who is not a participant in 'to', is answered exactly as the same message for
 * an id that is free; only an id of her own ("carol/NAME") opens a channel. */
START_TEST(test_ch2_opening_under_a_taken_id_tells_nothing)
{
	team_task();
	fx_add_participant(&app, task, "carol", "assignee");
	json_object *r = channel_msg("alice", "sc1", "alice/side", "message", ",\"to\":[\"bob\"]");
	ck_assert_msg(r != NULL, "%s", err.msg);
	json_object_put(r);
	long msgs = fx_count(&app, "messages"), chans = fx_count(&app, "channels");
	static const char *const extras[] = {",\"to\":[\"bob\"]", ",\"to\":[\"mallory\"]",
	                                     ",\"to\":[]", ""};
	static const char *const kinds[] = {"message", "help_request", "help_reply"};
	for (size_t k = 0; k < 3; k++)
		for (size_t i = 0; i < 4; i++) {
			char extra[96];
			snprintf(extra, sizeof extra, "%s%s", extras[i],
			         k == 2 ? ",\"in_reply_to\":\"r1\"" : "");
			ck_assert_ptr_null(
			    channel_msg("carol", "p1", "alice/side", kinds[k], extra));
			char taken[TH_ERRMSG_MAX + 16];
			snprintf(taken, sizeof taken, "%d %s", err.code, err.msg);
			ck_assert_ptr_null(
			    channel_msg("carol", "p2", "alice/side", kinds[k], extra));
			ck_assert_ptr_null(
			    channel_msg("carol", "p3", "alice/free", kinds[k], extra));
			char free_[TH_ERRMSG_MAX + 16];
			snprintf(free_, sizeof free_, "%d %s", err.code,
			         err.msg); /* the id differs by its own letters only */
			char *a = strstr(taken, "alice/side"), *b = strstr(free_, "alice/free");
			ck_assert_ptr_nonnull(a);
			ck_assert_ptr_nonnull(b);
			ck_assert_str_eq(a + 10, b + 10);
			ck_assert_int_eq(a - taken, b - free_);
		}
	ck_assert_int_eq(fx_count(&app, "messages"), msgs);
	ck_assert_int_eq(fx_count(&app, "channels"), chans);
	/* Her own id opens one. */
	r = channel_msg("carol", "p4", "carol/side", "message", ",\"to\":[\"bob\"]");
	ck_assert_msg(r != NULL, "%s", err.msg);
	json_object_put(r);
	ck_assert_int_eq(fx_count(&app, "channels"), chans + 1);
}
END_TEST

START_TEST(test_ch4_ask_parks_awaiting_answer_and_ch5_only_the_asked_answers)
{
	team_task();
	json_object *t = fx_send_text(&app, "alice", task, "a1", "/ask bob Which branch?", &err);
	ck_assert_str_eq(fx_state(t), "TASK_STATE_INPUT_REQUIRED");
	json_object *st =
	    json_object_object_get(json_object_object_get(t, "metadata"), TH_META_STATUS);
	ck_assert_str_eq(th_json_str(st, "sub_state"), "awaiting-answer");
	ck_assert_str_eq(th_json_str(st, "participant_id"), "bob");
	char req[64];
	snprintf(req, sizeof req, "%s", th_json_str(st, "request_id"));
	ck_assert(strstr(th_json_text(json_object_object_get(t, "status")),
	                 "\"kind\":\"help_request\"") != NULL);
	json_object_put(t);
	/* STORE-1: an operator sees who the task waits for. */
	char *waiting = fx_text(&app,
	                        "SELECT waiting_for || '|' || question FROM waiting_tasks "
	                        "WHERE id = '%s'",
	                        task);
	ck_assert_str_eq(waiting, "bob|Which branch?");
	free(waiting);
	/* A reply from wendy (not asked) is refused; nothing stored. */
	char extra[128];
	snprintf(extra, sizeof extra, ",\"in_reply_to\":\"%s\"", req);
	long msgs = fx_count(&app, "messages");
	ck_assert_ptr_null(channel_msg("wendy", "w1", task, "help_reply", extra));
	ck_assert_int_eq(err.code, TH_EINVAL);
	ck_assert_ptr_nonnull(strstr(err.msg, "bob"));
	ck_assert_ptr_null(
	    channel_msg("bob", "b0", task, "help_reply", ",\"in_reply_to\":\"nope\""));
	ck_assert_int_eq(err.code, TH_EINVAL);
	ck_assert_ptr_nonnull(strstr(err.msg, "no help request"));
	ck_assert_int_eq(fx_count(&app, "messages"), msgs);
	/* alice's ordinary message is kept but the task still waits for bob. */
	long turns = fx_count(&app, "turns");
	t = fx_send_text(&app, "alice", task, "a2", "any news?", &err);
	ck_assert_str_eq(fx_sub_state(t), "awaiting-answer");
	json_object_put(t);
	ck_assert_int_eq(fx_count(&app, "turns"), turns);
	ck_assert_int_eq(fx_count(&app, "messages"), msgs + 1);
	/* bob's reply resumes the task, which parks awaiting the next message. */
	t = channel_msg("bob", "b1", task, "help_reply", extra);
	ck_assert_msg(t != NULL, "%s", err.msg);
	json_object *task_obj = json_object_object_get(t, "task");
	ck_assert_str_eq(fx_sub_state(task_obj), "awaiting-next-message");
	ck_assert_str_eq(fx_status_text(task_obj), "echo: hi from bob");
	json_object_put(t);
	ck_assert_int_eq(fx_count(&app, "turns"), turns + 1);
	/* The request is answered: a second answer is refused. */
	ck_assert_ptr_null(channel_msg("bob", "b2", task, "help_reply", extra));
	ck_assert_int_eq(err.code, TH_EINVAL);
	ck_assert_ptr_nonnull(strstr(err.msg, "already answered"));
}
END_TEST

/* The row of waiting_tasks for task as "waiting_for|asked_by|confirmations|subtasks|
 * questions" (asked_by "-" when NULL). */
static void waiting_row(char *out, size_t n)
{
	sqlite3_stmt *s = NULL;
	ck_assert_int_eq(sqlite3_prepare_v2(th_store_db(app.store),
	                                    "SELECT waiting_for || '|' || COALESCE(asked_by, '-') "
	                                    "|| '|' || confirmations_pending || '|' || "
	                                    "subtasks_open || '|' || questions_pending "
	                                    "FROM waiting_tasks WHERE id = ?",
	                                    -1, &s, NULL),
	                 SQLITE_OK);
	sqlite3_bind_text(s, 1, task, -1, SQLITE_TRANSIENT);
	ck_assert_int_eq(sqlite3_step(s), SQLITE_ROW);
	snprintf(out, n, "%s", (const char *)sqlite3_column_text(s, 0));
	sqlite3_finalize(s);
}

/* CH-4, CH-5, CTL-4, STORE-1, decision-019: a refused completion parks the task
 * awaiting-next-message but leaves bob's question pending; bob's plain answer still
 * answers it (and runs the turn), so nothing stays pending with no way to resolve it.
 * waiting_tasks says who typed /ask and what else the task waits on. */
START_TEST(test_ch5_question_outlives_a_refused_completion_and_is_answered)
{
	team_task();
	json_object *t =
	    fx_send_text(&app, "alice", task, "s1", "/subtask Docs: write the docs", &err);
	json_object_put(t);
	t = fx_send_text(&app, "alice", task, "a1", "/ask bob Which branch?", &err);
	ck_assert_str_eq(fx_sub_state(t), "awaiting-answer");
	json_object_put(t);
	char row[256];
	waiting_row(row, sizeof row);
	ck_assert_str_eq(row, "bob|alice|0|1|1");
	t = fx_complete(&app, "alice", task, &err);
	ck_assert_str_eq(fx_state(t), "TASK_STATE_INPUT_REQUIRED");
	ck_assert_str_eq(fx_sub_state(t), "awaiting-next-message");
	json_object_put(t);
	waiting_row(row, sizeof row);
	ck_assert_str_eq(row, "next message from any participant|-|0|1|1");
	long turns = fx_count(&app, "turns");
	t = fx_send_text(&app, "bob", task, "b1", "main", &err);
	ck_assert_msg(t != NULL, "%s", err.msg);
	ck_assert_str_eq(fx_status_text(t), "echo: main");
	json_object_put(t);
	ck_assert_int_eq(fx_count(&app, "turns"), turns + 1);
	ck_assert_int_eq(fx_count(&app, "help_requests WHERE state = 'answered' AND "
	                                "answer_message_id = 'b1'"),
	                 1);
	waiting_row(row, sizeof row);
	ck_assert_str_eq(row, "next message from any participant|-|0|1|0");
	/* A /confirm question counts too. */
	t = fx_send_text(&app, "alice", task, "c1", "/confirm Ship it?", &err);
	json_object_put(t);
	waiting_row(row, sizeof row);
	ck_assert_str_eq(row, "next message from any participant|-|1|1|0");
}
END_TEST

START_TEST(test_id4_watcher_may_answer_a_question_addressed_to_them)
{
	team_task();
	json_object *t = fx_send_text(&app, "alice", task, "a1", "/ask wendy Looks good?", &err);
	json_object_put(t);
	t = fx_send_text(&app, "wendy", task, "w1", "yes", &err);
	ck_assert_msg(t != NULL, "%s", err.msg);
	ck_assert_str_eq(fx_sub_state(t), "awaiting-next-message");
	ck_assert_str_eq(fx_status_text(t), "echo: yes");
	json_object_put(t);
	/* …and nothing else. */
	ck_assert_ptr_null(fx_send_text(&app, "wendy", task, "w2", "and another thing", &err));
	ck_assert_int_eq(err.code, TH_EUNSUPPORTED);
}
END_TEST

/* ---- recovery ------------------------------------------------------------------------------- */

/* Makes the task's last turn look like its worker died mid-turn. */
static void kill_turn(int attempts)
{
	char sql[256];
	snprintf(sql, sizeof sql,
	         "UPDATE turn_rows SET state = 'running', worker_pid = 999999, attempts = %d, "
	         "lease_until_ms = 1 WHERE id = (SELECT MAX(id) FROM turn_rows)",
	         attempts);
	ck_assert_int_eq(sqlite3_exec(th_store_db(app.store), sql, NULL, NULL, NULL), SQLITE_OK);
}

/* The team task with a follow-up "survive" (r1) accepted with returnImmediately, whose
 * worker "dies" before running the turn: its lease is expired, attempt 1 spent. */
static void dead_worker_turn(void)
{
	team_task();
	json_object_put(fx_send_later(&app, "alice", task, "r1", "survive", &err));
	free(app.pending[0].task_id);
	app.npending = 0; /* the worker "dies" before running it */
	kill_turn(1);
}

START_TEST(test_turn4_expired_lease_is_taken_over_and_the_message_kept_once)
{
	dead_worker_turn();
	int n = 0;
	struct th_turn_ctx tc = th_app_turns(&app);
	ck_assert_int_eq(th_turn_recover(&tc, NULL, &n, &err), TH_OK);
	ck_assert_int_eq(n, 1);
	json_object *t = get("alice", task);
	ck_assert_str_eq(fx_state(t), "TASK_STATE_INPUT_REQUIRED");
	ck_assert_str_eq(fx_status_text(t), "echo: survive");
	json_object_put(t);
	ck_assert_int_eq(fx_count(&app, "messages WHERE message_id = 'r1'"), 1);
}
END_TEST

START_TEST(test_turn4_last_attempt_fails_the_task_with_a_reason)
{
	team_task();
	json_object_put(fx_send_later(&app, "alice", task, "r1", "doomed", &err));
	free(app.pending[0].task_id);
	app.npending = 0;
	kill_turn(app.cfg->max_attempts);
	/* A follow-up that touches the task is accepted and answered, and hands the spent
	 * turn to after-response work (TURN-7), which fails the task saying why. */
	json_object *t = fx_send_text(&app, "alice", task, "r2", "hello?", &err);
	ck_assert_msg(t != NULL, "%s", err.msg);
	json_object_put(t);
	ck_assert_int_eq(app.npending, 1);
	th_app_run_pending(&app);
	t = get("alice", task);
	ck_assert_str_eq(fx_state(t), "TASK_STATE_FAILED");
	ck_assert_ptr_nonnull(strstr(fx_status_text(t), "lease expired"));
	json_object_put(t);
	/* …and it stays failed: the next message is refused naming the state. */
	ck_assert_ptr_null(fx_send_text(&app, "alice", task, "r3", "hello?", &err));
	ck_assert_int_eq(err.code, TH_EUNSUPPORTED);
	ck_assert_ptr_nonnull(strstr(err.msg, "TASK_STATE_FAILED"));
}
END_TEST

/* Where the message whose only text part is text sits in a Task's history; -1 when it is
 * not there. */
static int history_index(json_object *t, const char *text)
{
	json_object *h = json_object_object_get(t, "history");
	for (size_t i = 0; i < json_object_array_length(h); i++) {
		json_object *parts =
		    json_object_object_get(json_object_array_get_idx(h, i), "parts");
		const char *got = th_json_str(json_object_array_get_idx(parts, 0), "text");
		if (got != NULL && strcmp(got, text) == 0)
			return (int)i;
	}
	return -1;
}

/* TURN-7 on the write path (issue 30): a blocking follow-up to a task whose turn's worker
 * died is accepted and answered with its own reply without running that turn: its answer
 * holds no reply to the earlier message, whose turn is still as the dead worker left it,
 * handed to this worker's after-response work. That work then answers the earlier
 * message once (TURN-4, TURN-6). */
START_TEST(test_turn7_send_message_never_runs_an_expired_turn_inline)
{
	dead_worker_turn();
	json_object *t = fx_send_text(&app, "alice", task, "r2", "next", &err);
	ck_assert_msg(t != NULL, "%s", err.msg);
	ck_assert_str_eq(fx_state(t), "TASK_STATE_INPUT_REQUIRED");
	ck_assert_str_eq(fx_status_text(t), "echo: next");
	ck_assert_int_ge(history_index(t, "survive"), 0);
	ck_assert_int_eq(history_index(t, "echo: survive"), -1);
	json_object_put(t);
	ck_assert_int_eq(fx_count(&app, "turns WHERE message_id = 'r1' AND state = 'running' "
	                                "AND attempts = 1 AND worker_pid = 999999"),
	                 1);
	ck_assert_int_eq(app.npending, 1);
	ck_assert_str_eq(app.pending[0].task_id, task);
	ck_assert_int_eq(app.pending[0].turn_id, 0); /* recover the task's expired turns */
	th_app_run_pending(&app);
	ck_assert_int_eq(fx_count(&app, "turns WHERE message_id = 'r1' AND state = 'done' "
	                                "AND attempts = 2"),
	                 1);
	t = get("alice", task);
	ck_assert_str_eq(fx_state(t), "TASK_STATE_INPUT_REQUIRED");
	ck_assert_str_eq(fx_status_text(t), "echo: survive");
	ck_assert_int_ge(history_index(t, "echo: next"), 0);
	ck_assert_int_ge(history_index(t, "echo: survive"), 0);
	json_object_put(t);
	ck_assert_int_eq(fx_count(&app, "turns WHERE state IN ('queued', 'running')"), 0);
}
END_TEST

/* TURN-7, TURN-4: with returnImmediately the recovery of the expired turn is queued before
 * the follow-up's own turn, so after the response the earlier message is answered first. */
START_TEST(test_turn7_deferred_follow_up_lets_the_expired_turn_answer_first)
{
	dead_worker_turn();
	json_object *r = fx_send_later(&app, "alice", task, "r2", "next", &err);
	ck_assert_msg(r != NULL, "%s", err.msg);
	ck_assert_str_eq(fx_state(r), "TASK_STATE_WORKING");
	json_object_put(r);
	ck_assert_int_eq(fx_count(&app, "turns WHERE message_id = 'r1' AND attempts = 1"), 1);
	ck_assert_int_eq(app.npending, 2);
	ck_assert_int_eq(app.pending[0].turn_id, 0);
	ck_assert_int_gt(app.pending[1].turn_id, 0);
	th_app_run_pending(&app);
	json_object *t = get("alice", task);
	int survive = history_index(t, "echo: survive"), next = history_index(t, "echo: next");
	ck_assert_int_ge(survive, 0);
	ck_assert_int_gt(next, survive);
	ck_assert_str_eq(fx_status_text(t), "echo: next");
	json_object_put(t);
}
END_TEST

/* CTL-4, TURN-6 (the torture run's seed 22100289): a completion refused for an open
 * sub-task cuts no turn. A follow-up accepted with returnImmediately, whose turn is still
 * to run, gets its one reply after the refusal; before, the refusal cut that turn and the
 * message stayed unanswered in a parked task. */
START_TEST(test_ctl4_turn6_refused_completion_leaves_a_pending_turn_to_answer)
{
	team_task();
	json_object *t =
	    fx_send_text(&app, "alice", task, "s1", "/subtask Docs: write the docs", &err);
	ck_assert_msg(t != NULL, "%s", err.msg);
	json_object_put(t);
	th_app_run_pending(&app); /* the sub-task's first turn */
	json_object *r = fx_send_later(&app, "alice", task, "r1", "pending", &err);
	ck_assert_msg(r != NULL, "%s", err.msg);
	json_object_put(r);
	ck_assert_int_eq(app.npending, 1);
	t = fx_complete(&app, "alice", task, &err);
	ck_assert_msg(t != NULL, "%s", err.msg);
	ck_assert_str_eq(fx_state(t), "TASK_STATE_INPUT_REQUIRED");
	ck_assert_ptr_nonnull(strstr(fx_status_text(t), "cannot be completed"));
	json_object_put(t);
	ck_assert_int_eq(fx_count(&app, "turns WHERE message_id = 'r1' AND state = 'running' "
	                                "AND cut = 0"),
	                 1);
	th_app_run_pending(&app);
	t = get("alice", task);
	ck_assert_str_eq(fx_state(t), "TASK_STATE_INPUT_REQUIRED");
	ck_assert_str_eq(fx_sub_state(t), "awaiting-next-message");
	ck_assert_str_eq(fx_status_text(t), "echo: pending");
	json_object_put(t);
	ck_assert_int_eq(fx_count(&app, "turns WHERE message_id = 'r1' AND state = 'done'"), 1);
	ck_assert_int_eq(fx_count(&app, "messages WHERE role = 'ROLE_AGENT' AND "
	                                "json_extract(json, '$.parts[0].text') = 'echo: pending'"),
	                 1);
}
END_TEST

/* ---- SEC-5: roles decide, and no tree is a dead end ------------------------------------ */

/* The audit's scenario: a watcher's "approve", typed while a /confirm is pending, decides
 * nothing: it answers the question asked of them, and the confirmation stays pending. */
START_TEST(test_sec5_watcher_typed_approve_decides_nothing)
{
	team_task();
	json_object *t = fx_send_text(&app, "alice", task, "c1", "/confirm Deploy to prod?", &err);
	ck_assert_msg(t != NULL, "%s", err.msg);
	json_object_put(t);
	t = fx_send_text(&app, "alice", task, "a1", "/ask wendy are you there?", &err);
	ck_assert_msg(t != NULL, "%s", err.msg);
	json_object_put(t);
	t = fx_send_text(&app, "wendy", task, "w1", "approve", &err);
	ck_assert_msg(t != NULL, "%s", err.msg);
	ck_assert_msg(strstr(fx_status_text(t), "approved") == NULL, "%s", fx_status_text(t));
	json_object_put(t);
	ck_assert_int_eq(fx_count(&app, "confirmations WHERE state = 'pending'"), 1);
	ck_assert_int_eq(fx_count(&app, "confirmations WHERE decided_by IS NOT NULL"), 0);
	/* Her question was answered by it (ID-4); alice may still decide. */
	ck_assert_int_eq(fx_count(&app, "help_requests WHERE answer_message_id = 'w1'"), 1);
	t = fx_send_text(&app, "alice", task, "a2", "approve", &err);
	ck_assert_str_eq(fx_status_text(t), "alice approved: Deploy to prod?");
	json_object_put(t);
}
END_TEST

/* A new sub-task under parent (as bob, the admin) by a task envelope; its id, or NULL with
 * err. */
static const char *envelope_child(const char *parent, int n)
{
	static char id[512];
	json_object *r =
	    fx_call(&app, "bob", TH_OP_SEND_MESSAGE, &err,
	            "{\"message\":{\"messageId\":\"d%d\",\"role\":\"ROLE_USER\",\"parts\":[" ENV(
	                "{\"kind\":\"task\",\"payload\":{\"name\":\"D\",\"goal\":\"deeper\","
	                "\"parent_tasks\":[{\"task_id\":\"%s\"}]}}") "]}}",
	            n, parent);
	if (r == NULL)
		return NULL;
	snprintf(id, sizeof id, "%s", fx_task_id(json_object_object_get(r, "task")));
	json_object_put(r);
	return id;
}

/* A task envelope's child of `task` is refused with code, naming the field and saying
 * words; no task is made. */
static void expect_child_refused(th_err code, const char *words)
{
	long tasks = fx_count(&app, "tasks");
	ck_assert_ptr_null(envelope_child(task, 1));
	ck_assert_int_eq(err.code, code);
	ck_assert_msg(strncmp(err.msg, "payload.parent_tasks: ", 22) == 0 &&
	                  strstr(err.msg, words) != NULL,
	              "%s", err.msg);
	ck_assert_int_eq(fx_count(&app, "tasks"), tasks);
}

START_TEST(test_sec5_subtask_nesting_is_capped_at_creation_naming_the_limit)
{
	team_task();
	char parent[512];
	snprintf(parent, sizeof parent, "%s", task);
	for (int i = 1; i <= 32; i++) {
		const char *c = envelope_child(parent, i);
		ck_assert_msg(c != NULL, "level %d: %s", i, err.msg);
		snprintf(parent, sizeof parent, "%s", c);
	}
	long tasks = fx_count(&app, "tasks");
	ck_assert_ptr_null(envelope_child(parent, 33));
	ck_assert_int_eq(err.code, TH_EINVAL);
	ck_assert_msg(strstr(err.msg, "at most 32 levels") != NULL, "%s", err.msg);
	ck_assert_int_eq(fx_count(&app, "tasks"), tasks);
	/* /subtask at the bottom explains instead of failing the turn. */
	json_object *t = fx_send_text(&app, "bob", parent, "s1", "/subtask Deeper: more", &err);
	ck_assert_msg(t != NULL, "%s", err.msg);
	ck_assert_msg(strstr(fx_status_text(t), "at most 32 levels") != NULL, "%s",
	              fx_status_text(t));
	json_object_put(t);
	ck_assert_int_eq(fx_count(&app, "tasks"), tasks);
}
END_TEST

/* TASK-4: the sub-task limit is one rule whichever way a child is asked for (/subtask, a
 * task envelope's parent_tasks; the model's spawn_subtask in check_intrinsics): refused
 * naming the limit, nothing written. */
START_TEST(test_task4_subtask_limit_is_one_rule_for_every_way_of_spawning)
{
	team_task();
	struct th_error ce;
	ck_assert_int_eq(th_config_set(app.cfg, "max_subtasks", "1", &ce), TH_OK);
	json_object *t = fx_send_text(&app, "alice", task, "s1", "/subtask Docs: write", &err);
	ck_assert_msg(t != NULL, "%s", err.msg);
	json_object_put(t);
	long tasks = fx_count(&app, "tasks");
	t = fx_send_text(&app, "alice", task, "s2", "/subtask Tests: test", &err);
	ck_assert_msg(t != NULL, "%s", err.msg);
	ck_assert_msg(strstr(fx_status_text(t), "already has 1 sub-tasks; the limit is 1 "
	                                        "(max_subtasks)") != NULL,
	              "%s", fx_status_text(t));
	json_object_put(t);
	ck_assert_int_eq(fx_count(&app, "tasks"), tasks);
	expect_child_refused(TH_EINVAL, "the limit is 1 (max_subtasks)");
}
END_TEST

/* TASK-4, CTL-6: a task that ended takes no new sub-task, by a task envelope's
 * parent_tasks: refused naming the field and the parent's state; nothing written, not
 * even an event on the parent, whose final status stays its last (decision-096). */
START_TEST(test_task4_ctl6_a_task_that_ended_takes_no_new_subtask)
{
	team_task();
	json_object *t = fx_call(&app, "alice", TH_OP_CANCEL_TASK, &err, "{\"id\":\"%s\"}", task);
	ck_assert_msg(t != NULL, "%s", err.msg);
	json_object_put(t);
	long events = fx_count(&app, "events");
	expect_child_refused(TH_EUNSUPPORTED, "TASK_STATE_CANCELED");
	ck_assert_int_eq(fx_count(&app, "events"), events);
}
END_TEST

/* The model failed: the task ends FAILED (as turn.c's apply_result ends it). */
static th_err fail_part(struct th_store *st, void *arg, struct th_error *e)
{
	struct th_task_row row = {0};
	th_err rc = th_store_task_get(st, arg, &row, e);
	json_object *msg = rc == TH_OK ? th_status_agent_text(&row, "the model failed") : NULL;
	if (rc == TH_OK)
		rc = msg ? th_status_transition(st, &row, TH_STATE_FAILED, NULL, msg, 1, e)
		         : th_error_set(e, TH_ENOMEM, "out of memory");
	json_object_put(msg);
	th_task_row_free(&row);
	return rc;
}

static long rows_of(const char *table, const char *task_id)
{
	char *n = fx_text(&app, "SELECT count(*) FROM %s WHERE task_id = '%s'", table, task_id);
	long v = strtol(n, NULL, 10);
	free(n);
	return v;
}

/* TASK-8, decision-096: a parent that ended first (FAILED while its sub-task ran) keeps
 * its final status last: the sub-task's end resolves the link and appends nothing to
 * the parent's history or events, which its push configs and a late subscriber would
 * otherwise get after the final update. */
START_TEST(test_task8_a_subtask_ending_after_its_parent_ended_adds_no_parent_event)
{
	team_task();
	char child[512];
	const char *c = envelope_child(task, 1);
	ck_assert_msg(c != NULL, "%s", err.msg);
	snprintf(child, sizeof child, "%s", c);
	ck_assert_int_eq(th_store_write(app.store, fail_part, (void *)task, &err), TH_OK);
	long events = rows_of("events", task), msgs = rows_of("messages", task);
	json_object *t = fx_complete(&app, "bob", child, &err);
	ck_assert_msg(t != NULL, "%s", err.msg);
	ck_assert_str_eq(fx_state(t), "TASK_STATE_COMPLETED");
	json_object_put(t);
	ck_assert_int_eq(rows_of("events", task), events);
	ck_assert_int_eq(rows_of("messages", task), msgs);
	char *last = fx_text(&app,
	                     "SELECT json_extract(json, '$.statusUpdate.status.state') FROM events "
	                     "WHERE task_id = '%s' ORDER BY seq DESC LIMIT 1",
	                     task);
	ck_assert_str_eq(last, "TASK_STATE_FAILED");
	free(last);
	struct th_subtask_ref *open = NULL;
	size_t n = 9;
	ck_assert_int_eq(th_store_subtasks(app.store, task, 1, &open, &n, &err), TH_OK);
	th_subtask_refs_free(open, n);
	ck_assert_msg(n == 0, "the ended sub-task's link is still unresolved");
}
END_TEST

/* A chain of depth sub-tasks "<prefix>-1" … under root, written straight through the
 * store as a database from before the cap may hold it. */
static void deep_chain(const char *root, const char *prefix, int depth)
{
	const struct th_participant_in ps[] = {{"alice", "human", "reporter", ""},
	                                       {"bob", "human", "admin", ""},
	                                       {"tiny-harness", "agent", "assignee", ""}};
	char parent[160], id[64];
	snprintf(parent, sizeof parent, "%s", root);
	ck_assert_int_eq(th_store_begin(app.store, &err), TH_OK);
	for (int i = 1; i <= depth; i++) {
		snprintf(id, sizeof id, "%s-%d", prefix, i);
		char text[256];
		snprintf(text, sizeof text,
		         "{\"messageId\":\"%s:goal\",\"role\":\"ROLE_USER\",\"parts\":[{\"text\":"
		         "\"deeper\"}],\"metadata\":{\"participant_id\":\"bob\"}}",
		         id);
		json_object *first = json_tokener_parse(text);
		struct th_new_task nt = {.id = id,
		                         .context_id = "ctx-deep",
		                         .name = "D",
		                         .goal = "deeper",
		                         .ps = ps,
		                         .nps = 3,
		                         .parent = parent,
		                         .created_by = "bob",
		                         .first = first,
		                         .first_sender = "bob",
		                         .lease_ms = app.cfg->lease_ms};
		int64_t turn = 0;
		ck_assert_msg(th_task_create(app.store, &nt, &turn, NULL, &err) == TH_OK, "%s",
		              err.msg);
		json_object_put(first);
		snprintf(parent, sizeof parent, "%s", id);
	}
	ck_assert_int_eq(th_store_commit(app.store, &err), TH_OK);
}

/* One write of a new task and a later status change, 5 ms apart inside the write. */
struct one_time {
	const char *id;
	int64_t before, inside;
};

static th_err create_then_wait(struct th_store *st, void *arg, struct th_error *e)
{
	struct one_time *o = arg;
	const struct th_participant_in ps[] = {{"alice", "human", "reporter", ""},
	                                       {"bob", "human", "admin", ""},
	                                       {"tiny-harness", "agent", "assignee", ""}};
	json_object *first = json_tokener_parse(
	    "{\"messageId\":\"one-time\",\"role\":\"ROLE_USER\",\"parts\":[{\"text\":\"go\"}],"
	    "\"metadata\":{\"participant_id\":\"alice\"}}");
	struct th_new_task nt = {.id = o->id,
	                         .context_id = "ctx-one-time",
	                         .name = "T",
	                         .goal = "go",
	                         .ps = ps,
	                         .nps = 3,
	                         .created_by = "alice",
	                         .first = first,
	                         .first_sender = "alice",
	                         .lease_ms = app.cfg->lease_ms};
	int64_t turn = 0;
	o->inside = th_store_now(st);
	th_err rc = th_task_create(st, &nt, &turn, NULL, e);
	json_object_put(first);
	usleep(5000);
	struct th_task_row row = {0};
	json_object *sub = json_tokener_parse("{\"sub_state\":\"awaiting-next-message\"}");
	if (rc == TH_OK)
		rc = th_store_task_get(st, o->id, &row, e);
	if (rc == TH_OK)
		rc = th_status_transition(st, &row, TH_STATE_INPUT_REQUIRED, sub, NULL, 0, e);
	json_object_put(sub);
	th_task_row_free(&row);
	/* The same time after the wait: the write's, not the clock's. */
	if (rc == TH_OK && th_store_now(st) != o->inside)
		rc = th_error_set(e, TH_EINTERNAL, "th_store_now moved inside one write");
	return rc;
}

static th_err settle_later(struct th_store *st, void *arg, struct th_error *e)
{
	struct one_time *o = arg;
	struct th_task_row row = {0};
	th_err rc = th_store_task_get(st, o->id, &row, e);
	if (rc == TH_OK)
		rc = th_status_transition(st, &row, TH_STATE_WORKING, NULL, NULL, 0, e);
	th_task_row_free(&row);
	return rc;
}

/* STREAM-5 (decision-080): a write records one time. A task created and moved on in one
 * write has one status time even when the write takes 5 ms, so its participants' copy of
 * it (the index ListTasks reads by status time) is the task's without a second update;
 * the next write carries the clock's later time to the task and to the copy alike. */
START_TEST(test_stream5_one_write_records_one_time_for_task_and_participants)
{
	struct one_time o = {.id = "one-time-task", .before = th_now_ms()};
	ck_assert_msg(th_store_write(app.store, create_then_wait, &o, &err) == TH_OK, "%s",
	              err.msg);
	ck_assert_int_ge(o.inside, o.before);
	ck_assert_int_eq(fx_count(&app, "tasks WHERE id = 'one-time-task' AND status_ms = "
	                                "created_ms AND updated_ms = created_ms AND state = "
	                                "'TASK_STATE_INPUT_REQUIRED'"),
	                 1);
	const char *copies_differ =
	    "participants p JOIN tasks t ON t.id = p.task_id WHERE t.id = 'one-time-task' "
	    "AND p.participant_id <> 'tiny-harness' AND p.status_ms <> t.status_ms";
	ck_assert_int_eq(fx_count(&app, copies_differ), 0);
	ck_assert_int_eq(fx_count(&app, "participants WHERE task_id = 'one-time-task' AND "
	                                "participant_id <> 'tiny-harness'"),
	                 2);
	/* Outside a write: the clock. */
	usleep(5000);
	ck_assert_int_ge(th_store_now(app.store), o.inside + 5);
	ck_assert_msg(th_store_write(app.store, settle_later, &o, &err) == TH_OK, "%s", err.msg);
	ck_assert_int_eq(fx_count(&app, "tasks WHERE id = 'one-time-task' AND status_ms >= "
	                                "created_ms + 5 AND state = 'TASK_STATE_WORKING'"),
	                 1);
	ck_assert_int_eq(fx_count(&app, copies_differ), 0);
}
END_TEST

static json_object *cancel(const char *who, const char *id)
{
	return fx_call(&app, who, TH_OP_CANCEL_TASK, &err, "{\"id\":\"%s\"}", id);
}

/* The audit's dead end: under a chain 70 deep, the chain's creator cancels its first
 * child and the reporter cancels the task; every level ends CANCELED. */
START_TEST(test_sec5_a_tree_deeper_than_ever_allowed_is_still_cancelable)
{
	team_task();
	deep_chain(task, "deep", 70);
	json_object *t = cancel("bob", "deep-1");
	ck_assert_msg(t != NULL, "%s", err.msg);
	ck_assert_str_eq(fx_state(t), "TASK_STATE_CANCELED");
	json_object_put(t);
	t = get("alice", "deep-70");
	ck_assert_str_eq(fx_state(t), "TASK_STATE_CANCELED");
	ck_assert_str_eq(fx_status_text(t), "canceled by bob (parent task deep-69 was canceled)");
	json_object_put(t);
	deep_chain(task, "again", 70);
	t = cancel("alice", task);
	ck_assert_msg(t != NULL, "%s", err.msg);
	ck_assert_str_eq(fx_state(t), "TASK_STATE_CANCELED");
	json_object_put(t);
	ck_assert_int_eq(fx_count(&app, "tasks WHERE state != 'TASK_STATE_CANCELED'"), 0);
}
END_TEST

/* ID-6, SEC-5: the agent's id in another case, or in look-alike letters, is nobody's. */
START_TEST(test_sec5_id6_ids_that_look_like_the_agent_are_refused)
{
	team_task();
	static const char *const fakes[] = {
	    "Tiny-Harness",       "TINY-HARNESS",       "tiny\\u2010harness",  "t\\u0456ny-harness",
	    "tiny-h\\u0430rness", "\\uff54iny-harness", "tiny-har\\u200bness", "t\\u00edny-harness",
	};
	for (size_t i = 0; i < sizeof fakes / sizeof fakes[0]; i++) {
		ck_assert_ptr_null(fx_call(
		    &app, "alice", TH_OP_SEND_MESSAGE, &err,
		    "{\"message\":{\"taskId\":\"%s\",\"messageId\":\"f%zu\",\"role\":\"ROLE_USER\","
		    "\"parts\":[" ENV("{\"kind\":\"task\",\"payload\":{\"participants\":[{\"id\":"
		                      "\"%s\",\"role\":\"admin\"}]}}") "]}}",
		    task, i, fakes[i]));
		ck_assert_int_eq(err.code, TH_EINVAL);
		ck_assert_msg(strstr(err.msg, "looks like the agent's own id") != NULL, "%s: %s",
		              fakes[i], err.msg);
	}
	ck_assert_int_eq(fx_count(&app, "participants WHERE lower(participant_id) LIKE 't%'"), 1);
	/* Ids that merely resemble it stay usable. */
	ck_assert(!th_id_mimics_agent("tiny-harnesses", 14));
	ck_assert(!th_id_mimics_agent("tiny-harness", 12));
}
END_TEST

/* SEC-5: a stranger's message to a task whose turn's worker died is refused without
 * recovering the turn, now or after the response: they cannot see the task, so they do
 * no work for it. */
START_TEST(test_sec5_a_strangers_request_recovers_no_turn)
{
	dead_worker_turn();
	ck_assert_ptr_null(fx_send_text(&app, "mallory", task, "m1", "hello?", &err));
	ck_assert_int_eq(err.code, TH_ENOTFOUND);
	ck_assert_int_eq(app.npending, 0);
	ck_assert_int_eq(fx_count(&app, "turns WHERE worker_pid = 999999 AND state = 'running'"),
	                 1);
	/* A participant's request hands it to after-response work (TURN-7), which recovers
	 * it. */
	json_object *t = fx_send_text(&app, "bob", task, "b1", "hello?", &err);
	ck_assert_msg(t != NULL, "%s", err.msg);
	json_object_put(t);
	ck_assert_int_eq(app.npending, 1);
	th_app_run_pending(&app);
	ck_assert_int_eq(fx_count(&app, "turns WHERE worker_pid = 999999 AND state = 'running'"),
	                 0);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("collab");
	TCase *tc = tcase_create("collab");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_task4_envelope_creates_task_with_its_attributes);
	tcase_add_test(
	    tc, test_task4_envelope_listing_the_harness_without_an_assignee_makes_it_assignee);
	tcase_add_test(tc, test_task3_bad_envelopes_are_refused_naming_the_field);
	tcase_add_test(tc, test_task5_envelope_updates_name_description_and_criteria);
	tcase_add_test(tc, test_id5_participants_change_only_by_admin_or_reporter);
	tcase_add_test(tc, test_cmd3_plan_and_step_update_the_plan_in_metadata);
	tcase_add_test(tc, test_cmd5_bad_arguments_reply_with_usage_and_change_nothing);
	tcase_add_test(tc, test_id6_participant_ids_in_params_obey_the_id_rule);
	tcase_add_test(tc, test_cmd1_card_lists_every_builtin);
	tcase_add_test(tc, test_cmd2_status_reports_the_task_as_it_stands_and_keeps_it_waiting);
	tcase_add_test(tc, test_task4_subtask_inherits_participants_with_a_dotted_id);
	tcase_add_test(tc, test_task4_envelope_parent_links_under_a_writable_parent_only);
	tcase_add_test(tc, test_ctl4_resolved_child_is_noted_in_the_parent);
	tcase_add_test(tc, test_ch3_channel_message_is_kept_and_starts_no_turn);
	tcase_add_test(tc, test_ch2_side_channel_is_for_its_members_only);
	tcase_add_test(tc, test_ch2_opening_under_a_taken_id_tells_nothing);
	tcase_add_test(tc, test_ch4_ask_parks_awaiting_answer_and_ch5_only_the_asked_answers);
	tcase_add_test(tc, test_ch5_question_outlives_a_refused_completion_and_is_answered);
	tcase_add_test(tc, test_id4_watcher_may_answer_a_question_addressed_to_them);
	tcase_add_test(tc, test_turn4_expired_lease_is_taken_over_and_the_message_kept_once);
	tcase_add_test(tc, test_turn4_last_attempt_fails_the_task_with_a_reason);
	tcase_add_test(tc, test_turn7_send_message_never_runs_an_expired_turn_inline);
	tcase_add_test(tc, test_turn7_deferred_follow_up_lets_the_expired_turn_answer_first);
	tcase_add_test(tc, test_ctl4_turn6_refused_completion_leaves_a_pending_turn_to_answer);
	tcase_add_test(tc, test_sec5_watcher_typed_approve_decides_nothing);
	tcase_add_test(tc, test_sec5_subtask_nesting_is_capped_at_creation_naming_the_limit);
	tcase_add_test(tc, test_task4_subtask_limit_is_one_rule_for_every_way_of_spawning);
	tcase_add_test(tc, test_task4_ctl6_a_task_that_ended_takes_no_new_subtask);
	tcase_add_test(tc, test_task8_a_subtask_ending_after_its_parent_ended_adds_no_parent_event);
	tcase_add_test(tc, test_task3_inbound_describes_a_message_from_one_reading);
	tcase_add_test(tc, test_sec5_a_tree_deeper_than_ever_allowed_is_still_cancelable);
	tcase_add_test(tc, test_stream5_one_write_records_one_time_for_task_and_participants);
	tcase_add_test(tc, test_sec5_id6_ids_that_look_like_the_agent_are_refused);
	tcase_add_test(tc, test_sec5_a_strangers_request_recovers_no_turn);
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
