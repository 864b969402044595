/* SPDX-License-Identifier: Apache-2.0 */
/* check_harness.c — the harness's rules through the service layer, on a real
 * temp-file store: tasks (TASK-2, TASK-6, TASK-7), identity (ID-1..ID-4), the status
 * extension (STATUS-1..STATUS-4), completion and cancel (CTL-1..CTL-9), commands
 * (CMD-1..CMD-3), turns (CTL-3, CTL-7, TURN-5). */
#include <check.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "a2a/a2a.h"
#include "config/settings.h"
#include "domain/events.h"
#include "domain/ext.h"
#include "ops/ops.h"
#include "ops/stream.h"
#include "domain/view.h"
#include "harness_fixture.h"
#include "store/store.h"
#include "text_fixture.h"
#include "util/jsonx.h"

static struct th_app app;
static struct th_error err;

static void setup(void)
{
	fx_open(&app, NULL);
}

static void teardown(void)
{
	fx_close(&app);
}

/* A new task from alice; returns its id in a static buffer. */
static const char *new_task(const char *text)
{
	static char id[128];
	static int n;
	char mid[32];
	snprintf(mid, sizeof mid, "new-%d", ++n);
	json_object *t = fx_send_text(&app, "alice", NULL, mid, text, &err);
	ck_assert_msg(t != NULL, "SendMessage failed: %s", err.msg);
	snprintf(id, sizeof id, "%s", fx_task_id(t));
	json_object_put(t);
	return id;
}

static json_object *task_ext(json_object *task)
{
	return json_object_object_get(json_object_object_get(task, "metadata"), TH_META_TASK);
}

/* ---- tasks ---------------------------------------------------------------- */

START_TEST(test_task2_plain_text_creates_task_with_reporter_and_agent)
{
	json_object *t =
	    fx_send_text(&app, "alice", NULL, "m1", "Fix the build\nIt fails on CI", &err);
	ck_assert_ptr_nonnull(t);
	ck_assert_uint_eq(strlen(fx_task_id(t)), 36);
	ck_assert_ptr_nonnull(th_json_str(t, "contextId"));
	json_object *ext = task_ext(t);
	ck_assert_str_eq(th_json_str(ext, "name"), "Fix the build");
	ck_assert_str_eq(th_json_str(ext, "goal"), "Fix the build\nIt fails on CI");
	json_object *ps = json_object_object_get(ext, "participants");
	ck_assert_uint_eq(json_object_array_length(ps), 2);
	json_object *p0 = json_object_array_get_idx(ps, 0), *p1 = json_object_array_get_idx(ps, 1);
	ck_assert_str_eq(th_json_str(p0, "id"), "alice");
	ck_assert_str_eq(th_json_str(p0, "kind"), "human");
	ck_assert_str_eq(th_json_str(p0, "role"), "reporter");
	ck_assert_str_eq(th_json_str(p1, "id"), "tiny-harness");
	ck_assert_str_eq(th_json_str(p1, "kind"), "agent");
	ck_assert_str_eq(th_json_str(p1, "role"), "assignee");
	json_object_put(t);
}
END_TEST

START_TEST(test_task2_name_is_first_line_cut_to_60_characters)
{
	/* 70 two-byte characters: the cut counts characters and never splits one. */
	char text[200] = "";
	for (int i = 0; i < 70; i++)
		strcat(text, "é");
	json_object *t = fx_send_text(&app, "alice", NULL, "m1", text, &err);
	ck_assert_ptr_nonnull(t);
	const char *name = th_json_str(task_ext(t), "name");
	ck_assert_uint_eq(strlen(name), 120);
	ck_assert_str_eq(th_json_str(task_ext(t), "goal"), text);
	json_object_put(t);
}
END_TEST

START_TEST(test_task2_client_context_id_is_kept)
{
	json_object *r = fx_call(&app, "alice", TH_OP_SEND_MESSAGE, &err,
	                         "{\"message\":{\"messageId\":\"m1\",\"contextId\":\"ctx-1\","
	                         "\"role\":\"ROLE_USER\",\"parts\":[{\"text\":\"hi\"}]}}");
	ck_assert_ptr_nonnull(r);
	ck_assert_str_eq(th_json_str(json_object_object_get(r, "task"), "contextId"), "ctx-1");
	json_object_put(r);
}
END_TEST

START_TEST(test_task6_follow_up_starts_a_turn)
{
	const char *id = new_task("hello");
	long turns = fx_count(&app, "turns");
	json_object *t = fx_send_text(&app, "alice", id, "m2", "and more", &err);
	ck_assert_ptr_nonnull(t);
	ck_assert_int_eq(fx_count(&app, "turns"), turns + 1);
	ck_assert_str_eq(fx_status_text(t), "echo: and more");
	ck_assert_uint_eq(json_object_array_length(json_object_object_get(t, "history")), 4);
	json_object_put(t);
}
END_TEST

/* decision-014 (TURN-4, TURN-6): with the instant echo model a blocking send runs its turn
 * inside the transaction that accepts the message: the turn is recorded done by this
 * worker with no lease. decision-025: the events are the Task (WORKING) and
 * INPUT_REQUIRED; no WORKING step nobody could see is recorded. */
START_TEST(test_turn4_instant_turn_commits_with_its_message)
{
	const char *id = new_task("hello");
	char sql[400];
	snprintf(
	    sql, sizeof sql,
	    "SELECT state || '|' || attempts || '|' || coalesce(lease_until_ms, 'none') || '|' "
	    "|| (worker_pid = %d) FROM turns WHERE task_id = '%s'",
	    (int)getpid(), id);
	sqlite3_stmt *q = NULL;
	ck_assert_int_eq(sqlite3_prepare_v2(th_store_db(app.store), sql, -1, &q, NULL), SQLITE_OK);
	ck_assert_int_eq(sqlite3_step(q), SQLITE_ROW);
	ck_assert_str_eq((const char *)sqlite3_column_text(q, 0), "done|1|none|1");
	ck_assert_int_eq(sqlite3_step(q), SQLITE_DONE);
	sqlite3_finalize(q);
	struct th_event *ev = NULL;
	size_t n = 0;
	ck_assert_int_eq(th_store_events_since(app.store, id, 0, 0, NULL, &ev, &n, &err), TH_OK);
	ck_assert_uint_eq(n, 2);
	ck_assert_ptr_nonnull(strstr(ev[0].json, "\"task\""));
	ck_assert_ptr_nonnull(strstr(ev[0].json, "TASK_STATE_WORKING"));
	ck_assert_ptr_nonnull(strstr(ev[1].json, "TASK_STATE_INPUT_REQUIRED"));
	th_events_free(ev, n);
}
END_TEST

/* STORE-10, decision-061: a task extension without its defaults, and back. */
static void lean_case(const char *whole, const char *want_lean)
{
	json_object *ext = json_tokener_parse(whole);
	ck_assert_ptr_nonnull(ext);
	json_object *lean = th_ext_task_lean(ext);
	if (want_lean == NULL) {
		ck_assert_msg(lean == NULL, "STORE-10 kept whole: %s", th_json_text(lean));
	} else {
		ck_assert_ptr_nonnull(lean);
		ck_assert_str_eq(th_json_text(lean), want_lean);
		json_object *back = th_ext_task_full(lean);
		ck_assert_str_eq(th_json_text(back), whole);
		json_object_put(back);
	}
	/* A whole extension in wire order reads back as it is. */
	json_object *same = want_lean != NULL ? th_ext_task_full(ext) : NULL;
	if (same != NULL)
		ck_assert_str_eq(th_json_text(same), whole);
	json_object_put(same);
	json_object_put(lean);
	json_object_put(ext);
}

START_TEST(test_store10_task_ext_lean_leaves_out_only_defaults)
{
	/* Nothing but defaults besides name, goal and participants. */
	lean_case("{\"name\":\"n\",\"goal\":\"g\",\"type\":null,\"description\":\"\","
	          "\"acceptance_criteria\":[],\"participants\":[{\"id\":\"a\",\"kind\":\"human\","
	          "\"role\":\"reporter\",\"display_name\":\"\"}],\"parent_tasks\":[],"
	          "\"sub_tasks\":[],\"plan\":null}",
	          "{\"name\":\"n\",\"goal\":\"g\",\"participants\":[{\"id\":\"a\",\"kind\":"
	          "\"human\",\"role\":\"reporter\"}]}");
	/* What is not a default stays, in its place. */
	lean_case("{\"name\":\"n\",\"goal\":\"g\",\"type\":\"bug\",\"description\":\"d\","
	          "\"acceptance_criteria\":[\"c\"],\"participants\":[{\"id\":\"a\",\"kind\":"
	          "\"human\",\"role\":\"reporter\",\"display_name\":\"Ann\"},{\"id\":\"b\","
	          "\"kind\":\"agent\",\"role\":\"watcher\",\"display_name\":\"\"}],"
	          "\"parent_tasks\":[{\"task_id\":\"p\"}],\"sub_tasks\":[{\"task_id\":\"s\"}],"
	          "\"plan\":{\"steps\":[]}}",
	          "{\"name\":\"n\",\"goal\":\"g\",\"type\":\"bug\",\"description\":\"d\","
	          "\"acceptance_criteria\":[\"c\"],\"participants\":[{\"id\":\"a\",\"kind\":"
	          "\"human\",\"role\":\"reporter\",\"display_name\":\"Ann\"},{\"id\":\"b\","
	          "\"kind\":\"agent\",\"role\":\"watcher\"}],\"parent_tasks\":[{\"task_id\":"
	          "\"p\"}],\"sub_tasks\":[{\"task_id\":\"s\"}],\"plan\":{\"steps\":[]}}");
	/* A member it does not know, last, stays last; one missing is not made up. */
	lean_case("{\"name\":\"n\",\"goal\":\"g\",\"type\":null,\"participants\":[],\"plan\":null,"
	          "\"x\":\"\"}",
	          NULL);
	lean_case("{\"name\":\"n\",\"goal\":\"g\",\"type\":null,\"description\":\"\","
	          "\"acceptance_criteria\":[],\"participants\":[],\"parent_tasks\":[],"
	          "\"sub_tasks\":[],\"plan\":null,\"x\":[]}",
	          "{\"name\":\"n\",\"goal\":\"g\",\"participants\":[],\"x\":[]}");
	/* Another order would not come back the same: kept whole. */
	lean_case("{\"goal\":\"g\",\"name\":\"n\",\"type\":null,\"description\":\"\","
	          "\"acceptance_criteria\":[],\"participants\":[],\"parent_tasks\":[],"
	          "\"sub_tasks\":[],\"plan\":null}",
	          NULL);
}
END_TEST

/* The task extension of a new task from alice named "lean snapshot", as a client
 * receives it and as every build before decision-061 stored it. */
#define WHOLE_EXT                                                                                  \
	"\"" TH_META_TASK "\":{\"name\":\"lean snapshot\",\"goal\":\"lean snapshot\",\"type\":"    \
	"null,\"description\":\"\",\"acceptance_criteria\":[],\"participants\":[{\"id\":"          \
	"\"alice\",\"kind\":\"human\",\"role\":\"reporter\",\"display_name\":\"\"},{\"id\":"       \
	"\"tiny-harness\",\"kind\":\"agent\",\"role\":\"assignee\",\"display_name\":\"\"}],"       \
	"\"parent_tasks\":[],\"sub_tasks\":[],\"plan\":null}"
/* Stored: the name, goal and participants are the first message's (decision-075). */
#define LEAN_EXT "\"$task\":{\"$first\":\"gnp\"}"

/* The task's first event as th_events_since gives it (free). */
static char *first_event(const char *id)
{
	struct th_event *ev = NULL;
	size_t n = 0;
	ck_assert_int_eq(th_events_since(app.store, id, 0, 1, &ev, &n, &err), TH_OK);
	ck_assert_uint_eq(n, 1);
	char *json = strdup(ev[0].json);
	th_events_free(ev, n);
	return json;
}

START_TEST(test_store10_task_snapshot_stored_lean_read_whole)
{
	const char *id = new_task("lean snapshot");
	char *stored =
	    fx_text(&app, "SELECT json FROM events WHERE task_id = '%s' AND seq = 1", id);
	ck_assert_msg(strstr(stored, LEAN_EXT) != NULL && strstr(stored, TH_META_TASK) == NULL,
	              "STORE-10 the snapshot's task extension is stored lean: %s", stored);
	free(stored);
	char *now = first_event(id);
	ck_assert_msg(strstr(now, WHOLE_EXT) != NULL && strstr(now, "$task") == NULL,
	              "STORE-10 a stream gets the task extension whole: %s", now);
	/* The same as GetTask's, which is built from the rows. */
	json_object *t = fx_call(&app, "alice", TH_OP_GET_TASK, &err, "{\"id\":\"%s\"}", id);
	ck_assert_ptr_nonnull(t);
	ck_assert_ptr_nonnull(strstr(WHOLE_EXT, th_json_text(task_ext(t))));
	json_object_put(t);
	/* The row as builds before decision-061 wrote it reads the same, byte for byte. */
	char sql[1024];
	snprintf(sql, sizeof sql,
	         "UPDATE event_rows SET json = replace(json, '%s', '%s') WHERE task_num = "
	         "(SELECT num FROM tasks WHERE id = '%s') AND seq = 1",
	         LEAN_EXT, WHOLE_EXT, id);
	ck_assert_int_eq(sqlite3_exec(th_store_db(app.store), sql, NULL, NULL, NULL), SQLITE_OK);
	stored = fx_text(&app, "SELECT json FROM events WHERE task_id = '%s' AND seq = 1", id);
	ck_assert_ptr_nonnull(strstr(stored, WHOLE_EXT));
	free(stored);
	char *old = first_event(id);
	ck_assert_str_eq(old, now);
	free(old);
	free(now);
}
END_TEST

/* STREAM-5 (A2A §3.1): the blocking answer of a SendMessage whose instant turn ran inside
 * its write transaction carries the latest status and the history the request's
 * historyLength asks for: the newest N messages, none for 0, all when unset. */
START_TEST(test_stream5_blocking_answer_honours_history_length)
{
	const char *id = new_task("hello"); /* history: hello, echo: hello */
	const int lengths[] = {1, 0, 3};
	const size_t want[] = {1, 0, 3};
	for (int i = 0; i < 3; i++) {
		json_object *r = fx_call(&app, "alice", TH_OP_SEND_MESSAGE, &err,
		                         "{\"message\":{\"taskId\":\"%s\",\"messageId\":\"h%d\","
		                         "\"role\":\"ROLE_USER\",\"parts\":[{\"text\":\"n%d\"}]},"
		                         "\"configuration\":{\"historyLength\":%d}}",
		                         id, i, i, lengths[i]);
		ck_assert_msg(r != NULL, "%s", err.msg);
		json_object *t = json_object_object_get(r, "task");
		ck_assert_str_eq(fx_state(t), "TASK_STATE_INPUT_REQUIRED");
		char echo[16];
		snprintf(echo, sizeof echo, "echo: n%d", i);
		ck_assert_str_eq(fx_status_text(t), echo);
		json_object *h = json_object_object_get(t, "history");
		ck_assert_uint_eq(h != NULL ? json_object_array_length(h) : 0, want[i]);
		if (want[i] > 0) { /* the newest last: the reply */
			json_object *last = json_object_array_get_idx(h, want[i] - 1);
			json_object *part =
			    json_object_array_get_idx(json_object_object_get(last, "parts"), 0);
			ck_assert_str_eq(th_json_str(part, "text"), echo);
		}
		json_object_put(r);
	}
	/* unset: the configured default (all): 2 + 3 x 2 + 2 messages */
	json_object *t = fx_send_text(&app, "alice", id, "h9", "last", &err);
	ck_assert_ptr_nonnull(t);
	ck_assert_uint_eq(json_object_array_length(json_object_object_get(t, "history")), 10);
	json_object_put(t);
}
END_TEST

START_TEST(test_task6_message_to_terminal_task_names_the_state)
{
	const char *id = new_task("hello");
	json_object *t = fx_complete(&app, "alice", id, &err);
	ck_assert_ptr_nonnull(t);
	json_object_put(t);
	long msgs = fx_count(&app, "messages"), events = fx_count(&app, "events");
	ck_assert_ptr_null(fx_send_text(&app, "alice", id, "late", "one more", &err));
	ck_assert_int_eq(err.code, TH_EUNSUPPORTED);
	ck_assert_ptr_nonnull(strstr(err.msg, "TASK_STATE_COMPLETED"));
	ck_assert_int_eq(fx_count(&app, "messages"), msgs);
	ck_assert_int_eq(fx_count(&app, "events"), events);
}
END_TEST

START_TEST(test_task7_resent_message_id_is_not_processed_twice)
{
	json_object *t = fx_send_text(&app, "alice", NULL, "first", "hello", &err);
	char id[64];
	snprintf(id, sizeof id, "%s", fx_task_id(t));
	json_object_put(t);
	t = fx_send_text(&app, "alice", id, "m2", "again", &err);
	json_object_put(t);
	long msgs = fx_count(&app, "messages"), turns = fx_count(&app, "turns");
	t = fx_send_text(&app, "alice", id, "m2", "again", &err);
	ck_assert_ptr_nonnull(t);
	ck_assert_str_eq(fx_task_id(t), id);
	ck_assert_int_eq(fx_count(&app, "messages"), msgs);
	ck_assert_int_eq(fx_count(&app, "turns"), turns);
	json_object_put(t);
	/* A resent first message is the same task too, not a second one. */
	long tasks = fx_count(&app, "tasks");
	t = fx_send_text(&app, "alice", NULL, "first", "hello", &err);
	ck_assert_ptr_nonnull(t);
	ck_assert_str_eq(fx_task_id(t), id);
	ck_assert_int_eq(fx_count(&app, "tasks"), tasks);
	json_object_put(t);
}
END_TEST

START_TEST(test_task6_context_id_mismatch_is_refused)
{
	const char *id = new_task("hello");
	ck_assert_ptr_null(
	    fx_call(&app, "alice", TH_OP_SEND_MESSAGE, &err,
	            "{\"message\":{\"taskId\":\"%s\",\"contextId\":\"other\","
	            "\"messageId\":\"m2\",\"role\":\"ROLE_USER\",\"parts\":[{\"text\":\"x\"}]}}",
	            id));
	ck_assert_int_eq(err.code, TH_EINVAL);
	ck_assert_ptr_nonnull(strstr(err.msg, "contextId"));
}
END_TEST

/* ---- identity ---------------------------------------------------------------- */

START_TEST(test_id3_no_participant_is_invalid_params)
{
	ck_assert_ptr_null(fx_send_text(&app, NULL, NULL, "m1", "hello", &err));
	ck_assert_int_eq(err.code, TH_EINVAL);
	ck_assert_ptr_nonnull(strstr(err.msg, "no participant asserted"));
	ck_assert_int_eq(fx_count(&app, "tasks"), 0);
	ck_assert_ptr_null(fx_call(&app, NULL, TH_OP_LIST_TASKS, &err, "{}"));
	ck_assert_int_eq(err.code, TH_EINVAL);
}
END_TEST

/* LIM-4: one TH_ID_MAX: an unknown id up to it comes back whole in ErrorInfo's
 * metadata.taskId (it was cut to 127 bytes); a longer one is refused naming the limit. */
START_TEST(test_lim4_error_info_echoes_a_long_id_whole)
{
	char id[TH_ID_MAX + 2];
	memset(id, 'x', TH_ID_MAX);
	id[TH_ID_MAX] = '\0';
	ck_assert_ptr_null(fx_call(&app, "alice", TH_OP_GET_TASK, &err, "{\"id\":\"%s\"}", id));
	ck_assert_int_eq(err.code, TH_ENOTFOUND);
	ck_assert_str_eq(err.task_id, id);
	ck_assert_ptr_null(fx_call(&app, "alice", TH_OP_CANCEL_TASK, &err, "{\"id\":\"%s\"}", id));
	ck_assert_int_eq(err.code, TH_ENOTFOUND);
	ck_assert_str_eq(err.task_id, id);
	id[TH_ID_MAX] = 'x';
	id[TH_ID_MAX + 1] = '\0';
	ck_assert_ptr_null(fx_call(&app, "alice", TH_OP_GET_TASK, &err, "{\"id\":\"%s\"}", id));
	ck_assert_int_eq(err.code, TH_EINVAL);
	ck_assert_str_eq(err.msg, "id is 1025 bytes; the limit is 1024");
}
END_TEST

START_TEST(test_id3_stranger_sees_the_same_not_found_as_for_a_missing_task)
{
	const char *id = new_task("hello");
	ck_assert_ptr_null(fx_call(&app, "mallory", TH_OP_GET_TASK, &err, "{\"id\":\"%s\"}", id));
	ck_assert_int_eq(err.code, TH_ENOTFOUND);
	char foreign[TH_ERRMSG_MAX];
	snprintf(foreign, sizeof foreign, "%s", err.msg);
	/* The same id, deleted from view: a task that does not exist at all. */
	ck_assert_ptr_null(fx_call(&app, "alice", TH_OP_GET_TASK, &err, "{\"id\":\"%s\"}",
	                           "00000000-0000-4000-8000-000000000000"));
	ck_assert_int_eq(err.code, TH_ENOTFOUND);
	char missing[TH_ERRMSG_MAX];
	snprintf(missing, sizeof missing, "%s", err.msg);
	/* Same wording with the id swapped. */
	char *p = strstr(foreign, id);
	ck_assert_ptr_nonnull(p);
	memcpy(p, "00000000-0000-4000-8000-000000000000", 36);
	ck_assert_str_eq(foreign, missing);
	/* And a stranger's follow-up and cancel are not found either, storing nothing. */
	long msgs = fx_count(&app, "messages");
	ck_assert_ptr_null(fx_send_text(&app, "mallory", id, "x1", "hi", &err));
	ck_assert_int_eq(err.code, TH_ENOTFOUND);
	ck_assert_ptr_null(
	    fx_call(&app, "mallory", TH_OP_CANCEL_TASK, &err, "{\"id\":\"%s\"}", id));
	ck_assert_int_eq(err.code, TH_ENOTFOUND);
	ck_assert_int_eq(fx_count(&app, "messages"), msgs);
}
END_TEST

START_TEST(test_id3_list_tasks_returns_only_the_senders_tasks)
{
	new_task("one");
	new_task("two");
	json_object *t = fx_send_text(&app, "bob", NULL, "b1", "bob's", &err);
	json_object_put(t);
	json_object *r = fx_call(&app, "alice", TH_OP_LIST_TASKS, &err, "{}");
	ck_assert_ptr_nonnull(r);
	ck_assert_int_eq(json_object_get_int(json_object_object_get(r, "totalSize")), 2);
	json_object_put(r);
	r = fx_call(&app, "mallory", TH_OP_LIST_TASKS, &err, "{}");
	ck_assert_int_eq(json_object_get_int(json_object_object_get(r, "totalSize")), 0);
	ck_assert_uint_eq(json_object_array_length(json_object_object_get(r, "tasks")), 0);
	json_object_put(r);
}
END_TEST

START_TEST(test_id1_metadata_participant_must_equal_the_sender)
{
	ck_assert_ptr_null(
	    fx_call(&app, "alice", TH_OP_SEND_MESSAGE, &err,
	            "{\"message\":{\"messageId\":\"m1\",\"role\":\"ROLE_USER\","
	            "\"metadata\":{\"participant_id\":\"bob\"},\"parts\":[{\"text\":\"x\"}]}}"));
	ck_assert_int_eq(err.code, TH_EINVAL);
	ck_assert_ptr_nonnull(strstr(err.msg, "participant_id"));
	ck_assert_int_eq(fx_count(&app, "tasks"), 0);
	/* When it matches, the stored message records the sender. */
	json_object *t = fx_send_text(&app, "alice", NULL, "m2", "x", &err);
	/* Read as a client reads it: the view's history is the stored text, written out. */
	json_object *wire = json_tokener_parse(th_json_text(t));
	json_object *first = json_object_array_get_idx(json_object_object_get(wire, "history"), 0);
	ck_assert_str_eq(th_json_str(json_object_object_get(first, "metadata"), "participant_id"),
	                 "alice");
	json_object_put(wire);
	json_object_put(t);
}
END_TEST

/* The text of GetTask(id) as participant sees it, with history_length (-1: default);
 * NULL when refused. Caller frees. */
static char *get_text(const char *participant, const char *id, int history_length)
{
	json_object *r =
	    history_length < 0
	        ? fx_call(&app, participant, TH_OP_GET_TASK, &err, "{\"id\":\"%s\"}", id)
	        : fx_call(&app, participant, TH_OP_GET_TASK, &err,
	                  "{\"id\":\"%s\",\"historyLength\":%d}", id, history_length);
	char *text = r != NULL ? strdup(th_json_text(r)) : NULL;
	json_object_put(r);
	return text;
}

/* SEC-5 (ID-3): a GetTask with no sender is invalid params, never the answer kept for
 * a participant whose id reads like a missing one ("(null)"). */
START_TEST(test_sec5_get_task_without_sender_is_never_a_kept_answer)
{
	json_object *t = fx_send_text(&app, "(null)", NULL, "n1", "mine alone", &err);
	ck_assert_msg(t != NULL, "%s", err.msg);
	char id[128];
	snprintf(id, sizeof id, "%s", fx_task_id(t));
	json_object_put(t);
	char *kept = get_text("(null)", id, -1);
	ck_assert_ptr_nonnull(kept);
	free(kept);
	for (int i = 0; i < 3; i++) {
		ck_assert_ptr_null(get_text(NULL, id, -1));
		ck_assert_int_eq(err.code, TH_EINVAL);
		ck_assert_ptr_nonnull(strstr(err.msg, "no participant asserted"));
	}
}
END_TEST

/* decision-029: a GetTask answer is kept only while nothing is committed, and only for
 * the participant and historyLength it was built for. */
START_TEST(test_id4_stream5_kept_get_answer_is_never_stale_nor_shared)
{
	const char *id = new_task("hello");
	char *a1 = get_text("alice", id, -1), *a2 = get_text("alice", id, -1);
	ck_assert_ptr_nonnull(a1);
	ck_assert_str_eq(a1, a2);
	/* Kept for alice: mallory is still refused, and a shorter history is another answer. */
	ck_assert_ptr_null(get_text("mallory", id, -1));
	ck_assert_int_eq(err.code, TH_ENOTFOUND);
	char *short_history = get_text("alice", id, 1);
	ck_assert_str_ne(short_history, a1);
	/* A participant added, a message sent: the next answer shows each at once. */
	fx_add_participant(&app, id, "wendy", "watcher");
	char *a3 = get_text("alice", id, -1);
	ck_assert_ptr_nonnull(strstr(a3, "\"wendy\""));
	char *w = get_text("wendy", id, -1);
	ck_assert_ptr_nonnull(w);
	free(w);
	json_object *t = fx_send_text(&app, "alice", id, "m-later", "said later", &err);
	ck_assert_ptr_nonnull(t);
	json_object_put(t);
	char *a4 = get_text("alice", id, -1);
	ck_assert_ptr_nonnull(strstr(a4, "said later"));
	free(a1);
	free(a2);
	free(short_history);
	free(a3);
	free(a4);
}
END_TEST

static void tenant_acme(struct th_config *c)
{
	free(c->tenants);
	c->tenants = strdup("acme");
}

/* TEN-2, decision-029: a GetTask answer kept for one tenant is never another tenant's
 * answer. The same id, asked by the same participant through the default tenant right
 * after it was read (and kept) through acme, is TaskNotFound. */
START_TEST(test_ten2_kept_get_answer_is_never_another_tenants)
{
	fx_close(&app);
	fx_open(&app, tenant_acme);
	json_object *t = fx_call(&app, "alice", TH_OP_SEND_MESSAGE, &err,
	                         "{\"tenant\":\"acme\",\"message\":{\"messageId\":\"t1\","
	                         "\"role\":\"ROLE_USER\",\"parts\":[{\"text\":\"acme's\"}]}}");
	ck_assert_msg(t != NULL, "%s", err.msg);
	char id[128];
	snprintf(id, sizeof id, "%s", fx_task_id(json_object_object_get(t, "task")));
	json_object_put(t);
	for (int i = 0; i < 2; i++) {
		json_object *r = fx_call(&app, "alice", TH_OP_GET_TASK, &err,
		                         "{\"id\":\"%s\",\"tenant\":\"acme\"}", id);
		ck_assert_msg(r != NULL, "%s", err.msg);
		json_object_put(r);
		ck_assert_ptr_null(
		    fx_call(&app, "alice", TH_OP_GET_TASK, &err, "{\"id\":\"%s\"}", id));
		ck_assert_int_eq(err.code, TH_ENOTFOUND);
	}
}
END_TEST

START_TEST(test_id4_watcher_may_read_but_not_send_complete_or_cancel)
{
	const char *id = new_task("hello");
	fx_add_participant(&app, id, "wendy", "watcher");
	json_object *r = fx_call(&app, "wendy", TH_OP_GET_TASK, &err, "{\"id\":\"%s\"}", id);
	ck_assert_ptr_nonnull(r);
	json_object_put(r);
	long msgs = fx_count(&app, "messages"), events = fx_count(&app, "events");
	ck_assert_ptr_null(fx_send_text(&app, "wendy", id, "w1", "hi", &err));
	ck_assert_int_eq(err.code, TH_EUNSUPPORTED);
	ck_assert_ptr_nonnull(strstr(err.msg, "watcher"));
	ck_assert_ptr_null(fx_complete(&app, "wendy", id, &err));
	ck_assert_int_eq(err.code, TH_EUNSUPPORTED);
	ck_assert_ptr_nonnull(strstr(err.msg, "watcher"));
	ck_assert_ptr_null(fx_call(&app, "wendy", TH_OP_CANCEL_TASK, &err, "{\"id\":\"%s\"}", id));
	ck_assert_int_eq(err.code, TH_EUNSUPPORTED);
	ck_assert_ptr_nonnull(strstr(err.msg, "watcher"));
	ck_assert_int_eq(fx_count(&app, "messages"), msgs);
	ck_assert_int_eq(fx_count(&app, "events"), events);
	r = fx_call(&app, "alice", TH_OP_GET_TASK, &err, "{\"id\":\"%s\"}", id);
	ck_assert_str_eq(fx_state(r), "TASK_STATE_INPUT_REQUIRED");
	json_object_put(r);
}
END_TEST

/* ---- status extension ----------------------------------------------------------- */

START_TEST(test_status1_turn_end_parks_awaiting_next_message_in_both_places)
{
	const char *id = new_task("hello");
	json_object *r = fx_call(&app, "alice", TH_OP_GET_TASK, &err, "{\"id\":\"%s\"}", id);
	ck_assert_str_eq(fx_state(r), "TASK_STATE_INPUT_REQUIRED");
	ck_assert_str_eq(fx_sub_state(r), "awaiting-next-message");
	json_object_put(r);
	/* The statusUpdate event that entered the state carries it in its metadata, as
	 * streams read it (stored under "$status", decision-068). */
	struct th_event *ev = NULL;
	size_t n = 0;
	ck_assert_int_eq(th_events_since(app.store, id, 0, 0, &ev, &n, &err), TH_OK);
	ck_assert_uint_ge(n, 2);
	json_object *last = json_tokener_parse(ev[n - 1].json);
	json_object *upd = json_object_object_get(last, "statusUpdate");
	ck_assert_str_eq(th_json_str(json_object_object_get(upd, "status"), "state"),
	                 "TASK_STATE_INPUT_REQUIRED");
	json_object *meta = json_object_object_get(upd, "metadata");
	ck_assert_str_eq(th_json_str(json_object_object_get(meta, TH_META_STATUS), "sub_state"),
	                 "awaiting-next-message");
	json_object_put(last);
	th_events_free(ev, n);
}
END_TEST

START_TEST(test_status2_key_absent_outside_input_required)
{
	const char *id = new_task("hello");
	json_object *t = fx_complete(&app, "alice", id, &err);
	ck_assert_str_eq(fx_state(t), "TASK_STATE_COMPLETED");
	ck_assert_ptr_null(
	    json_object_object_get(json_object_object_get(t, "metadata"), TH_META_STATUS));
	ck_assert_ptr_nonnull(task_ext(t));
	json_object_put(t);
}
END_TEST

START_TEST(test_status4_sub_state_has_its_own_column)
{
	const char *id = new_task("hello");
	sqlite3_stmt *s = NULL;
	ck_assert_int_eq(sqlite3_prepare_v2(th_store_db(app.store),
	                                    "SELECT state, sub_state FROM tasks WHERE id = ?", -1,
	                                    &s, NULL),
	                 SQLITE_OK);
	sqlite3_bind_text(s, 1, id, -1, SQLITE_TRANSIENT);
	ck_assert_int_eq(sqlite3_step(s), SQLITE_ROW);
	ck_assert_str_eq((const char *)sqlite3_column_text(s, 0), "TASK_STATE_INPUT_REQUIRED");
	ck_assert_str_eq((const char *)sqlite3_column_text(s, 1), "awaiting-next-message");
	sqlite3_finalize(s);
}
END_TEST

/* ---- completion ---------------------------------------------------------------------- */

START_TEST(test_ctl5_completion_ends_the_task_completed_by_sender)
{
	const char *id = new_task("hello");
	fx_add_participant(&app, id, "bob", "assignee");
	json_object *t = fx_complete(&app, "bob", id, &err);
	ck_assert_msg(t != NULL, "%s", err.msg);
	ck_assert_str_eq(fx_state(t), "TASK_STATE_COMPLETED");
	ck_assert_str_eq(fx_status_text(t), "completed by bob");
	json_object_put(t);
	/* Every subscriber sees it: the last event is the final status update. */
	struct th_event *ev = NULL;
	size_t n = 0;
	ck_assert_int_eq(th_store_events_since(app.store, id, 0, 0, NULL, &ev, &n, &err), TH_OK);
	ck_assert_ptr_nonnull(strstr(ev[n - 1].json, "TASK_STATE_COMPLETED"));
	ck_assert_ptr_nonnull(strstr(ev[n - 1].json, "completed by bob"));
	th_events_free(ev, n);
}
END_TEST

START_TEST(test_ctl1_control_envelope_with_other_parts_is_refused)
{
	const char *id = new_task("hello");
	long msgs = fx_count(&app, "messages");
	ck_assert_ptr_null(
	    fx_call(&app, "alice", TH_OP_SEND_MESSAGE, &err,
	            "{\"message\":{\"taskId\":\"%s\",\"messageId\":\"c\",\"role\":\"ROLE_USER\","
	            "\"parts\":[{\"text\":\"bye\"},{\"data\":{\"kind\":\"control\",\"action\":"
	            "\"complete\"},\"mediaType\":\"%s\"}]}}",
	            id, TH_MT_EVENT));
	ck_assert_int_eq(err.code, TH_EINVAL);
	ck_assert_ptr_nonnull(strstr(err.msg, "only part"));
	ck_assert_int_eq(fx_count(&app, "messages"), msgs);
}
END_TEST

START_TEST(test_ctl1_unknown_action_or_extra_field_is_refused)
{
	const char *id = new_task("hello");
	ck_assert_ptr_null(
	    fx_call(&app, "alice", TH_OP_SEND_MESSAGE, &err,
	            "{\"message\":{\"taskId\":\"%s\",\"messageId\":\"c\",\"role\":\"ROLE_USER\","
	            "\"parts\":[{\"data\":{\"kind\":\"control\",\"action\":\"finish\"},"
	            "\"mediaType\":\"%s\"}]}}",
	            id, TH_MT_EVENT));
	ck_assert_int_eq(err.code, TH_EINVAL);
	ck_assert_ptr_nonnull(strstr(err.msg, "finish"));
	ck_assert_ptr_null(
	    fx_call(&app, "alice", TH_OP_SEND_MESSAGE, &err,
	            "{\"message\":{\"taskId\":\"%s\",\"messageId\":\"c\",\"role\":\"ROLE_USER\","
	            "\"parts\":[{\"data\":{\"kind\":\"control\",\"action\":\"complete\","
	            "\"reason\":\"done\"},\"mediaType\":\"%s\"}]}}",
	            id, TH_MT_EVENT));
	ck_assert_int_eq(err.code, TH_EINVAL);
	ck_assert_ptr_nonnull(strstr(err.msg, "reason"));
	ck_assert_ptr_null(
	    fx_call(&app, "alice", TH_OP_SEND_MESSAGE, &err,
	            "{\"message\":{\"taskId\":\"%s\",\"messageId\":\"c\",\"role\":\"ROLE_USER\","
	            "\"parts\":[{\"data\":{\"kind\":\"shutdown\"},\"mediaType\":\"%s\"}]}}",
	            id, TH_MT_EVENT));
	ck_assert_int_eq(err.code, TH_EINVAL);
	ck_assert_ptr_nonnull(strstr(err.msg, "shutdown"));
	json_object *r = fx_call(&app, "alice", TH_OP_GET_TASK, &err, "{\"id\":\"%s\"}", id);
	ck_assert_str_eq(fx_state(r), "TASK_STATE_INPUT_REQUIRED");
	json_object_put(r);
}
END_TEST

START_TEST(test_ctl2_refused_senders_store_and_interrupt_nothing)
{
	const char *id = new_task("hello");
	fx_add_participant(&app, id, "wendy", "watcher");
	long msgs = fx_count(&app, "messages"), events = fx_count(&app, "events");
	ck_assert_ptr_null(fx_complete(&app, NULL, id, &err));
	ck_assert_int_eq(err.code, TH_EINVAL);
	ck_assert_ptr_nonnull(strstr(err.msg, "no participant asserted"));
	ck_assert_ptr_null(fx_complete(&app, "mallory", id, &err));
	ck_assert_int_eq(err.code, TH_ENOTFOUND);
	ck_assert_ptr_null(fx_complete(&app, "wendy", id, &err));
	ck_assert_int_eq(err.code, TH_EUNSUPPORTED);
	ck_assert_int_eq(fx_count(&app, "messages"), msgs);
	ck_assert_int_eq(fx_count(&app, "events"), events);
}
END_TEST

START_TEST(test_ctl3_completion_cuts_a_queued_turn_that_then_changes_nothing)
{
	const char *id = new_task("hello");
	/* returnImmediately: the turn is queued, not yet run. */
	json_object *r = fx_call(
	    &app, "alice", TH_OP_SEND_MESSAGE, &err,
	    "{\"message\":{\"taskId\":\"%s\",\"messageId\":\"m2\",\"role\":\"ROLE_USER\","
	    "\"parts\":[{\"text\":\"slow\"}]},\"configuration\":{\"returnImmediately\":true}}",
	    id);
	ck_assert_ptr_nonnull(r);
	ck_assert_str_eq(fx_state(json_object_object_get(r, "task")), "TASK_STATE_WORKING");
	json_object_put(r);
	ck_assert_int_eq(app.npending, 1);
	json_object *t = fx_complete(&app, "alice", id, &err);
	ck_assert_str_eq(fx_state(t), "TASK_STATE_COMPLETED");
	json_object_put(t);
	long events = fx_count(&app, "events"), msgs = fx_count(&app, "messages");
	th_app_run_pending(&app);
	r = fx_call(&app, "alice", TH_OP_GET_TASK, &err, "{\"id\":\"%s\"}", id);
	ck_assert_str_eq(fx_state(r), "TASK_STATE_COMPLETED");
	ck_assert_str_eq(fx_status_text(r), "completed by alice");
	json_object_put(r);
	ck_assert_int_eq(fx_count(&app, "events"), events);
	ck_assert_int_eq(fx_count(&app, "messages"), msgs);
	char *turn = fx_text(&app, "SELECT state || '|' || cut FROM turns WHERE message_id = 'm2'");
	ck_assert_str_eq(turn, "cut|1");
	free(turn);
}
END_TEST

static void link_child(const char *parent, const char *child)
{
	ck_assert_int_eq(th_store_begin(app.store, &err), TH_OK);
	ck_assert_int_eq(th_store_subtask_link(app.store, parent, child, &err), TH_OK);
	ck_assert_int_eq(th_store_commit(app.store, &err), TH_OK);
}

START_TEST(test_ctl4_unresolved_subtask_refuses_completion)
{
	char parent[64], child[64];
	snprintf(parent, sizeof parent, "%s", new_task("parent work"));
	snprintf(child, sizeof child, "%s", new_task("Write the tests"));
	link_child(parent, child);
	long msgs = fx_count(&app, "messages");
	json_object *t = fx_complete(&app, "alice", parent, &err);
	ck_assert_msg(t != NULL, "%s", err.msg);
	ck_assert_str_eq(fx_state(t), "TASK_STATE_INPUT_REQUIRED");
	ck_assert_str_eq(fx_sub_state(t), "awaiting-next-message");
	const char *why = fx_status_text(t);
	ck_assert_ptr_nonnull(strstr(why, child));
	ck_assert_ptr_nonnull(strstr(why, "Write the tests"));
	json_object *status_msg =
	    json_object_object_get(json_object_object_get(t, "status"), "message");
	ck_assert_str_eq(th_json_str(status_msg, "role"), "ROLE_AGENT");
	json_object_put(t);
	ck_assert_int_eq(fx_count(&app, "messages"), msgs);
	/* Once the child is resolved, the same completion succeeds. */
	t = fx_complete(&app, "alice", child, &err);
	json_object_put(t);
	t = fx_complete(&app, "alice", parent, &err);
	ck_assert_str_eq(fx_state(t), "TASK_STATE_COMPLETED");
	json_object_put(t);
}
END_TEST

START_TEST(test_ctl6_completion_or_cancel_of_a_terminal_task_names_the_state)
{
	const char *id = new_task("hello");
	json_object *t = fx_call(&app, "alice", TH_OP_CANCEL_TASK, &err, "{\"id\":\"%s\"}", id);
	ck_assert_str_eq(fx_state(t), "TASK_STATE_CANCELED");
	ck_assert_str_eq(fx_status_text(t), "canceled by alice");
	json_object_put(t);
	long events = fx_count(&app, "events");
	ck_assert_ptr_null(fx_complete(&app, "alice", id, &err));
	ck_assert_int_eq(err.code, TH_EUNSUPPORTED);
	ck_assert_ptr_nonnull(strstr(err.msg, "TASK_STATE_CANCELED"));
	/* Cancelling a canceled task is refused too (the brief's rule). */
	ck_assert_ptr_null(fx_call(&app, "alice", TH_OP_CANCEL_TASK, &err, "{\"id\":\"%s\"}", id));
	ck_assert_int_eq(err.code, TH_ENOTCANCELABLE);
	ck_assert_ptr_nonnull(strstr(err.msg, "TASK_STATE_CANCELED"));
	ck_assert_int_eq(fx_count(&app, "events"), events);
}
END_TEST

START_TEST(test_ctl8_cancel_cancels_unresolved_subtasks)
{
	char parent[64], child[64], grandchild[64], done[64];
	snprintf(parent, sizeof parent, "%s", new_task("parent"));
	snprintf(child, sizeof child, "%s", new_task("child"));
	snprintf(grandchild, sizeof grandchild, "%s", new_task("grandchild"));
	snprintf(done, sizeof done, "%s", new_task("finished child"));
	link_child(parent, child);
	link_child(child, grandchild);
	link_child(parent, done);
	json_object *t = fx_complete(&app, "alice", done, &err);
	json_object_put(t);
	t = fx_call(&app, "alice", TH_OP_CANCEL_TASK, &err, "{\"id\":\"%s\"}", parent);
	ck_assert_str_eq(fx_state(t), "TASK_STATE_CANCELED");
	json_object_put(t);
	const char *expect[][2] = {{child, "TASK_STATE_CANCELED"},
	                           {grandchild, "TASK_STATE_CANCELED"},
	                           {done, "TASK_STATE_COMPLETED"}};
	for (size_t i = 0; i < 3; i++) {
		t = fx_call(&app, "alice", TH_OP_GET_TASK, &err, "{\"id\":\"%s\"}", expect[i][0]);
		ck_assert_str_eq(fx_state(t), expect[i][1]);
		json_object_put(t);
	}
}
END_TEST

START_TEST(test_ctl9_complete_message_is_a_lone_control_envelope)
{
	json_object *m = th_complete_message("t-1", "alice");
	ck_assert_str_eq(th_json_str(m, "taskId"), "t-1");
	ck_assert_str_eq(th_json_str(m, "role"), "ROLE_USER");
	ck_assert_ptr_nonnull(th_json_str(m, "messageId"));
	json_object *parts = json_object_object_get(m, "parts");
	ck_assert_uint_eq(json_object_array_length(parts), 1);
	json_object *p = json_object_array_get_idx(parts, 0);
	ck_assert_str_eq(th_json_str(p, "mediaType"), TH_MT_EVENT);
	ck_assert_str_eq(th_json_text(json_object_object_get(p, "data")),
	                 "{\"kind\":\"control\",\"action\":\"complete\"}");
	ck_assert_str_eq(th_json_str(json_object_object_get(m, "metadata"), "participant_id"),
	                 "alice");
	/* It really completes a task through the service. */
	const char *id = new_task("hello");
	json_object *req = json_object_new_object();
	json_object_object_add(req, "message", th_complete_message(id, "alice"));
	struct th_call call = {.participant = "alice"};
	json_object *res = NULL;
	ck_assert_int_eq(th_service_call(&app, &call, TH_OP_SEND_MESSAGE, req, &res, &err), TH_OK);
	ck_assert_str_eq(fx_state(json_object_object_get(res, "task")), "TASK_STATE_COMPLETED");
	json_object_put(res);
	json_object_put(req);
	json_object_put(m);
}
END_TEST

START_TEST(test_ctl7_turns_never_complete_a_participants_task)
{
	const char *id = new_task("hello");
	for (int i = 0; i < 5; i++) {
		char mid[16];
		snprintf(mid, sizeof mid, "f%d", i);
		json_object *t = fx_send_text(&app, "alice", id, mid, "please finish", &err);
		ck_assert_str_eq(fx_state(t), "TASK_STATE_INPUT_REQUIRED");
		json_object_put(t);
	}
}
END_TEST

START_TEST(test_status3_ext3_sub_state_and_commands_work_with_or_without_activation)
{
	/* No extension activated: the sub-state is still written and /help still runs. */
	json_object *t = fx_send_text(&app, "alice", NULL, "m1", "/help", &err);
	ck_assert_str_eq(fx_sub_state(t), "awaiting-next-message");
	ck_assert_ptr_nonnull(strstr(fx_status_text(t), "/status"));
	json_object_put(t);
	/* All five activated: the same. */
	fx_extensions =
	    TH_EXT_TASK | TH_EXT_CHANNEL | TH_EXT_STATUS | TH_EXT_COMMANDS | TH_EXT_A2UI;
	t = fx_send_text(&app, "alice", NULL, "m2", "/help", &err);
	ck_assert_str_eq(fx_sub_state(t), "awaiting-next-message");
	ck_assert_ptr_nonnull(strstr(fx_status_text(t), "/status"));
	json_object_put(t);
	/* The state itself is always the standard one (STATUS-4: no new TaskState). */
	t = fx_send_text(&app, "alice", NULL, "m3", "plain", &err);
	ck_assert_str_eq(fx_state(t), "TASK_STATE_INPUT_REQUIRED");
	json_object_put(t);
}
END_TEST

/* ---- commands, events, returnImmediately ------------------------------------------- */

START_TEST(test_cmd2_help_lists_registered_commands_without_a_model)
{
	json_object *t = fx_send_text(&app, "alice", NULL, "m1", "/help", &err);
	ck_assert_ptr_nonnull(t);
	const char *text = fx_status_text(t);
	ck_assert_ptr_nonnull(strstr(text, "/help"));
	ck_assert_ptr_nonnull(strstr(text, "/status"));
	ck_assert_str_eq(fx_sub_state(t), "awaiting-next-message");
	json_object_put(t);
}
END_TEST

START_TEST(test_cmd3_status_reports_state_and_participants)
{
	const char *id = new_task("hello");
	json_object *t = fx_send_text(&app, "alice", id, "m2", "/status", &err);
	const char *text = fx_status_text(t);
	ck_assert_ptr_nonnull(strstr(text, id));
	ck_assert_ptr_nonnull(strstr(text, "alice (reporter)"));
	ck_assert_ptr_nonnull(strstr(text, "Sub-tasks: none"));
	json_object_put(t);
}
END_TEST

START_TEST(test_cmd2_unregistered_slash_text_is_an_ordinary_message)
{
	json_object *t = fx_send_text(&app, "alice", NULL, "m1", "/nosuch thing", &err);
	ck_assert_str_eq(fx_status_text(t), "echo: /nosuch thing");
	json_object_put(t);
	t = fx_send_text(&app, "alice", NULL, "m2", "/helpme", &err);
	ck_assert_str_eq(fx_status_text(t), "echo: /helpme");
	json_object_put(t);
}
END_TEST

/* CMD-2: the command is the first text part, for the turn as for the intake (issue 30: the
 * turn reads its input with the intake's classifier); parts before it do not hide it. */
START_TEST(test_cmd2_a_command_after_a_data_part_runs_as_the_intake_saw_it)
{
	const char *id = new_task("hello");
	json_object *r = fx_call(&app, "alice", TH_OP_SEND_MESSAGE, &err,
	                         "{\"message\":{\"messageId\":\"m2\",\"taskId\":\"%s\","
	                         "\"role\":\"ROLE_USER\",\"parts\":[{\"data\":{\"k\":1},"
	                         "\"mediaType\":\"application/json\"},{\"text\":\"/status\"}]}}",
	                         id);
	ck_assert_msg(r != NULL, "%s", err.msg);
	json_object *t = json_object_object_get(r, "task");
	const char *text = fx_status_text(t);
	ck_assert_msg(strstr(text, "alice (reporter)") != NULL, "%s", text);
	ck_assert_ptr_null(strstr(text, "echo:"));
	json_object_put(r);
}
END_TEST

START_TEST(test_stream3_task_events_are_numbered_in_order)
{
	const char *id = new_task("hello");
	json_object *t = fx_send_text(&app, "alice", id, "m2", "more", &err);
	json_object_put(t);
	struct th_event *ev = NULL;
	size_t n = 0;
	ck_assert_int_eq(th_store_events_since(app.store, id, 0, 0, NULL, &ev, &n, &err), TH_OK);
	/* task, INPUT_REQUIRED, INPUT_REQUIRED: instant turns record no WORKING step
	 * (decision-025) */
	ck_assert_uint_eq(n, 3);
	for (size_t i = 0; i < n; i++)
		ck_assert_int_eq(ev[i].seq, (int64_t)i + 1);
	ck_assert_ptr_nonnull(strstr(ev[0].json, "\"task\""));
	ck_assert_ptr_nonnull(strstr(ev[1].json, "TASK_STATE_INPUT_REQUIRED"));
	ck_assert_ptr_nonnull(strstr(ev[2].json, "TASK_STATE_INPUT_REQUIRED"));
	th_events_free(ev, n);
}
END_TEST

/* TURN-5, decision-056: the after-response queue is lent with the context it is asked of,
 * so a context copied after it was opened (the FastCGI main loop's) queues its
 * returnImmediately turn on itself and runs it, not on the copy it was opened as. */
START_TEST(test_turn5_a_moved_context_runs_its_own_deferred_turn)
{
	struct th_app moved = app;
	memset(&app, 0, sizeof app); /* the original is gone; teardown closes moved */
	json_object *r = fx_send_later(&moved, "alice", NULL, "m1", "later", &err);
	ck_assert_msg(r != NULL, "%s", err.msg);
	char id[64];
	snprintf(id, sizeof id, "%s", fx_task_id(r));
	json_object_put(r);
	ck_assert_uint_eq(moved.npending, 1);
	ck_assert_uint_eq(app.npending, 0);
	th_app_run_pending(&moved);
	r = fx_call(&moved, "alice", TH_OP_GET_TASK, &err, "{\"id\":\"%s\"}", id);
	app = moved;
	ck_assert_str_eq(fx_state(r), "TASK_STATE_INPUT_REQUIRED");
	json_object_put(r);
}
END_TEST

START_TEST(test_turn5_return_immediately_answers_before_the_turn)
{
	json_object *t = fx_send_later(&app, "alice", NULL, "m1", "later", &err);
	ck_assert_msg(t != NULL, "%s", err.msg);
	ck_assert_str_eq(fx_state(t), "TASK_STATE_WORKING");
	char id[64];
	snprintf(id, sizeof id, "%s", fx_task_id(t));
	json_object_put(t);
	th_app_run_pending(&app);
	json_object *r = fx_call(&app, "alice", TH_OP_GET_TASK, &err, "{\"id\":\"%s\"}", id);
	ck_assert_str_eq(fx_state(r), "TASK_STATE_INPUT_REQUIRED");
	ck_assert_str_eq(fx_status_text(r), "echo: later");
	json_object_put(r);
	/* decision-025: a turn run after the response was WORKING for all to see, with its
	 * own status update between the Task (SUBMITTED) and INPUT_REQUIRED. */
	struct th_event *ev = NULL;
	size_t n = 0;
	ck_assert_int_eq(th_store_events_since(app.store, id, 0, 0, NULL, &ev, &n, &err), TH_OK);
	ck_assert_uint_eq(n, 3);
	ck_assert_ptr_nonnull(strstr(ev[0].json, "TASK_STATE_SUBMITTED"));
	ck_assert_ptr_nonnull(strstr(ev[1].json, "TASK_STATE_WORKING"));
	ck_assert_ptr_nonnull(strstr(ev[2].json, "TASK_STATE_INPUT_REQUIRED"));
	th_events_free(ev, n);
}
END_TEST

START_TEST(test_stream5_history_length_and_pagination)
{
	const char *id = new_task("hello");
	json_object *r =
	    fx_call(&app, "alice", TH_OP_GET_TASK, &err, "{\"id\":\"%s\",\"historyLength\":1}", id);
	ck_assert_uint_eq(json_object_array_length(json_object_object_get(r, "history")), 1);
	json_object_put(r);
	r = fx_call(&app, "alice", TH_OP_GET_TASK, &err, "{\"id\":\"%s\",\"historyLength\":0}", id);
	ck_assert_ptr_null(json_object_object_get(r, "history"));
	json_object_put(r);
	for (int i = 0; i < 4; i++)
		new_task("more");
	/* 5 tasks, pages of 2: 2 + 2 + 1, every id once, newest first. */
	char token[512] = "";
	int seen = 0;
	for (int page = 0; page < 3; page++) {
		r = fx_call(&app, "alice", TH_OP_LIST_TASKS, &err, "{\"pageSize\":2%s%s%s}",
		            token[0] ? ",\"pageToken\":\"" : "", token, token[0] ? "\"" : "");
		ck_assert_msg(r != NULL, "%s", err.msg);
		ck_assert_int_eq(json_object_get_int(json_object_object_get(r, "totalSize")), 5);
		seen += (int)json_object_array_length(json_object_object_get(r, "tasks"));
		snprintf(token, sizeof token, "%s", th_json_str(r, "nextPageToken"));
		json_object_put(r);
	}
	ck_assert_int_eq(seen, 5);
	ck_assert_str_eq(token, "");
	ck_assert_ptr_null(
	    fx_call(&app, "alice", TH_OP_LIST_TASKS, &err, "{\"pageToken\":\"zz\"}"));
	ck_assert_int_eq(err.code, TH_EINVAL);
	ck_assert_ptr_nonnull(strstr(err.msg, "pageToken"));
}
END_TEST

/* Appends n messages with text of `size` bytes to task id, straight through the store. */
static void append_messages(const char *id, int from, int n, size_t size)
{
	char *json = malloc(size + 100);
	ck_assert_ptr_nonnull(json);
	ck_assert_int_eq(th_store_begin(app.store, &err), TH_OK);
	for (int i = from; i < from + n; i++) {
		char mid[32];
		snprintf(mid, sizeof mid, "bulk-%d", i);
		int k = snprintf(json, size + 100, "{\"messageId\":\"%s\",\"pad\":\"", mid);
		memset(json + k, 'p', size);
		snprintf(json + k + size, 100, "\"}");
		ck_assert_int_eq(
		    th_test_message_append(app.store, id, mid, "ROLE_USER", "alice", json, &err),
		    TH_OK);
	}
	ck_assert_int_eq(th_store_commit(app.store, &err), TH_OK);
	free(json);
}

static json_object *history_of(const char *id, const char *extra)
{
	json_object *r =
	    fx_call(&app, "alice", TH_OP_GET_TASK, &err, "{\"id\":\"%s\"%s}", id, extra);
	ck_assert_msg(r != NULL, "%s", err.msg);
	return r;
}

/* SEC-3: historyLength over 1,000, and none at all, give the newest 1,000 messages; a
 * history of large messages stops before TH_HISTORY_BYTES_MAX bytes (newest kept). */
START_TEST(test_sec3_history_capped_at_1000_and_by_bytes)
{
	const char *id = new_task("hello");
	append_messages(id, 1, 1100, 10);
	static const char *const asks[] = {",\"historyLength\":5000", "",
	                                   ",\"historyLength\":1000"};
	for (size_t a = 0; a < sizeof asks / sizeof asks[0]; a++) {
		json_object *r = history_of(id, asks[a]);
		json_object *h = json_object_object_get(r, "history");
		ck_assert_uint_eq(json_object_array_length(h), TH_HISTORY_MAX);
		ck_assert_str_eq(
		    th_json_str(json_object_array_get_idx(h, TH_HISTORY_MAX - 1), "messageId"),
		    "bulk-1100");
		ck_assert_str_eq(th_json_str(json_object_array_get_idx(h, 0), "messageId"),
		                 "bulk-101");
		json_object_put(r);
	}
	json_object *r = history_of(id, ",\"historyLength\":3");
	ck_assert_uint_eq(json_object_array_length(json_object_object_get(r, "history")), 3);
	json_object_put(r);

	/* Three messages of 3 MiB: two fit in 8 MiB, the third does not. */
	append_messages(id, 2000, 3, 3u << 20);
	r = history_of(id, ",\"historyLength\":10");
	json_object *h = json_object_object_get(r, "history");
	ck_assert_uint_eq(json_object_array_length(h), 2);
	ck_assert_str_eq(th_json_str(json_object_array_get_idx(h, 1), "messageId"), "bulk-2002");
	json_object_put(r);
}
END_TEST

/* LIM-4: a pageToken is parsed strictly, in the exact form the server writes (hex of
 * "<ms>.<id>", lowercase); anything else is refused, never read as the first page. */
START_TEST(test_lim4_page_tokens_are_parsed_strictly)
{
	new_task("hello");
	/* 1 KB of hex that is not a token; uppercase, signs, spaces, leading zeros, NUL. */
	char kb[1025];
	memset(kb, 'a', 1024);
	kb[1024] = '\0';
	const char *bad[] = {
	    kb,
	    "312E61",                                         /* "1.a" in uppercase hex */
	    "2b312e61",                                       /* "+1.a" */
	    "20312e61",                                       /* " 1.a" */
	    "30312e61",                                       /* "01.a" */
	    "312e",                                           /* "1." */
	    "2e61",                                           /* ".a" */
	    "312e6100",                                       /* "1.a\0" */
	    "312e610a",                                       /* "1.a\n" */
	    "3132333435363738393031323334353637383930312e61", /* 21 digits */
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		ck_assert_msg(fx_call(&app, "alice", TH_OP_LIST_TASKS, &err,
		                      "{\"pageToken\":\"%s\"}", bad[i]) == NULL,
		              "accepted %.40s", bad[i]);
		ck_assert_int_eq(err.code, TH_EINVAL);
		ck_assert_ptr_nonnull(strstr(err.msg, "pageToken"));
	}
	/* The form the server writes is taken. */
	json_object *r =
	    fx_call(&app, "alice", TH_OP_LIST_TASKS, &err, "{\"pageToken\":\"312e61\"}");
	ck_assert_msg(r != NULL, "%s", err.msg);
	json_object_put(r);
}
END_TEST

/* ---- one rule for answers (decision-049) ------------------------------------------------ */

/* SendMessage of message (JSON text) with configuration (JSON text) as alice; checks that
 * the answer's task is, byte for byte, what a GetTask with the same historyLength shows
 * right after, and returns that task (caller puts). */
static json_object *send_and_compare(const char *message, const char *configuration, int history)
{
	json_object *r = fx_call(&app, "alice", TH_OP_SEND_MESSAGE, &err,
	                         "{\"message\":%s,\"configuration\":%s}", message, configuration);
	ck_assert_msg(r != NULL, "SendMessage %s: %s", message, err.msg);
	json_object *t = json_object_get(json_object_object_get(r, "task"));
	json_object_put(r);
	json_object *g = fx_call(&app, "alice", TH_OP_GET_TASK, &err,
	                         "{\"id\":\"%s\",\"historyLength\":%d}", fx_task_id(t), history);
	ck_assert_msg(g != NULL, "GetTask: %s", err.msg);
	ck_assert_str_eq(json_object_to_json_string_ext(t, JSON_C_TO_STRING_PLAIN),
	                 json_object_to_json_string_ext(g, JSON_C_TO_STRING_PLAIN));
	json_object_put(g);
	return t;
}

#define TEXT_MSG(task_field, mid, text)                                                            \
	"{" task_field "\"messageId\":\"" mid                                                      \
	"\",\"role\":\"ROLE_USER\",\"parts\":[{\"text\":\"" text "\"}]}"

/* TASK-2, TASK-6, TASK-7, TURN-5, CTL-5 (A2A §3.1): every SendMessage is answered by one
 * rule, whatever it did: the task as a GetTask with the request's historyLength shows it
 * right after — a new task and a follow-up whose instant turns ran inline, a resend, a
 * returnImmediately send whose turn is still to run, and a completion. */
START_TEST(test_task7_ctl5_every_send_answers_the_task_as_get_task_shows_it)
{
	json_object *t = send_and_compare(TEXT_MSG("", "m1", "hello"), "{\"historyLength\":1}", 1);
	char id[128], field[200];
	snprintf(id, sizeof id, "%s", fx_task_id(t));
	ck_assert_str_eq(fx_status_text(t), "echo: hello");
	json_object_put(t);
	snprintf(field, sizeof field, "\"taskId\":\"%s\",", id);
	char msg[400];
	snprintf(msg, sizeof msg, TEXT_MSG("%s", "m2", "more"), field);
	t = send_and_compare(msg, "{\"historyLength\":3}", 3);
	ck_assert_str_eq(fx_status_text(t), "echo: more");
	ck_assert_uint_eq(json_object_array_length(json_object_object_get(t, "history")), 3);
	json_object_put(t);
	/* TASK-7: the resend is answered with the task as it is. */
	json_object_put(send_and_compare(msg, "{\"historyLength\":2}", 2));
	snprintf(msg, sizeof msg, TEXT_MSG("%s", "m3", "later"), field);
	t = send_and_compare(msg, "{\"historyLength\":0,\"returnImmediately\":true}", 0);
	ck_assert_str_eq(fx_state(t), "TASK_STATE_WORKING");
	json_object_put(t);
	th_app_run_pending(&app);
	snprintf(msg, sizeof msg,
	         "{%s\"messageId\":\"c1\",\"role\":\"ROLE_USER\",\"parts\":[{\"data\":{\"kind\":"
	         "\"control\",\"action\":\"complete\"},\"mediaType\":\"" TH_MT_EVENT "\"}]}",
	         field);
	t = send_and_compare(msg, "{\"historyLength\":2}", 2);
	ck_assert_str_eq(fx_state(t), "TASK_STATE_COMPLETED");
	json_object_put(t);
}
END_TEST

static void history_default_one(struct th_config *c)
{
	c->history_default = 1;
}

/* CTL-5 (A2A §3.1): a completion is answered with the request's historyLength, like every
 * other SendMessage, not with the configured default cut down to it. */
START_TEST(test_ctl5_a_completion_answers_with_the_requests_history_length)
{
	fx_close(&app);
	fx_open(&app, history_default_one);
	const char *id = new_task("hello");
	char field[200], msg[400];
	snprintf(field, sizeof field, "\"taskId\":\"%s\",", id);
	snprintf(msg, sizeof msg,
	         "{%s\"messageId\":\"c1\",\"role\":\"ROLE_USER\",\"parts\":[{\"data\":{\"kind\":"
	         "\"control\",\"action\":\"complete\"},\"mediaType\":\"" TH_MT_EVENT "\"}]}",
	         field);
	json_object *t = send_and_compare(msg, "{\"historyLength\":3}", 3);
	ck_assert_str_eq(fx_state(t), "TASK_STATE_COMPLETED");
	ck_assert_uint_eq(json_object_array_length(json_object_object_get(t, "history")), 3);
	json_object_put(t);
}
END_TEST

/* A2A-11-IDEM-1: a send with an Idempotency-Key, as the binding passes it on. Returns the
 * answered task's id (static buffer; "" when refused, err set) and sets *replayed. */
static const char *keyed_send(const char *who, const char *key, const char *task_id,
                              const char *message_id, const char *text, int *replayed)
{
	static char id[128];
	char tid[200] = "";
	if (task_id != NULL)
		snprintf(tid, sizeof tid, "\"taskId\":\"%s\",", task_id);
	char buf[600];
	snprintf(buf, sizeof buf,
	         "{\"message\":{%s\"messageId\":\"%s\",\"role\":\"ROLE_USER\",\"parts\":[{\"text\":"
	         "\"%s\"}]}}",
	         tid, message_id, text);
	json_object *params = json_tokener_parse(buf);
	ck_assert_ptr_nonnull(params);
	*replayed = 0;
	struct th_call call = {.participant = who, .idempotency_key = key, .replayed = replayed};
	json_object *result = NULL;
	th_error_clear(&err);
	th_err rc = th_service_call(&app, &call, TH_OP_SEND_MESSAGE, params, &result, &err);
	json_object_put(params);
	id[0] = '\0';
	if (rc == TH_OK) {
		json_object *task = json_object_object_get(result, "task");
		snprintf(id, sizeof id, "%s", th_json_str(task, "id"));
	}
	json_object_put(result);
	return id;
}

START_TEST(test_a2a11_idem1_a_retried_first_send_answers_the_same_task)
{
	int replayed = -1;
	char first[128];
	snprintf(first, sizeof first, "%s",
	         keyed_send("alice", "k-1", NULL, "m1", "ship", &replayed));
	ck_assert_msg(first[0] != '\0', "%s", err.msg);
	ck_assert_int_eq(replayed, 0);
	long tasks = fx_count(&app, "tasks"), messages = fx_count(&app, "messages");
	/* The retry mints a new messageId, as the JS client does for every call. */
	const char *again = keyed_send("alice", "k-1", NULL, "m1-retry", "ship", &replayed);
	ck_assert_str_eq(again, first);
	ck_assert_int_eq(replayed, 1);
	ck_assert_int_eq(fx_count(&app, "tasks"), tasks);
	ck_assert_int_eq(fx_count(&app, "messages"), messages);
}
END_TEST

START_TEST(test_a2a11_idem1_another_message_under_the_key_is_refused_naming_it)
{
	int replayed = -1;
	char first[128];
	snprintf(first, sizeof first, "%s",
	         keyed_send("alice", "k-2", NULL, "m1", "ship", &replayed));
	ck_assert_msg(first[0] != '\0', "%s", err.msg);
	long tasks = fx_count(&app, "tasks"), messages = fx_count(&app, "messages");
	ck_assert_str_eq(keyed_send("alice", "k-2", NULL, "m2", "sink", &replayed), "");
	ck_assert_int_eq(err.code, TH_EINVAL);
	ck_assert_msg(strstr(err.msg, "'k-2'") != NULL && strstr(err.msg, first) != NULL,
	              "names the key and its task: %s", err.msg);
	ck_assert_int_eq(replayed, 0);
	ck_assert_int_eq(fx_count(&app, "tasks"), tasks);
	ck_assert_int_eq(fx_count(&app, "messages"), messages);
}
END_TEST

START_TEST(test_a2a11_idem1_a_key_is_the_callers_own)
{
	int replayed = -1;
	char a[128];
	snprintf(a, sizeof a, "%s", keyed_send("alice", "k-3", NULL, "m1", "ship", &replayed));
	const char *b = keyed_send("bob", "k-3", NULL, "m1", "ship", &replayed);
	ck_assert_msg(a[0] != '\0' && b[0] != '\0', "%s", err.msg);
	ck_assert_str_ne(a, b);
	ck_assert_int_eq(replayed, 0);
}
END_TEST

START_TEST(test_a2a11_idem1_a_retried_follow_up_is_kept_once)
{
	int replayed = -1;
	char t[128];
	snprintf(t, sizeof t, "%s", keyed_send("alice", NULL, NULL, "m1", "ship", &replayed));
	ck_assert_msg(t[0] != '\0', "%s", err.msg);
	ck_assert_str_eq(keyed_send("alice", "k-4", t, "m2", "and test", &replayed), t);
	ck_assert_int_eq(replayed, 0);
	long messages = fx_count(&app, "messages");
	ck_assert_str_eq(keyed_send("alice", "k-4", t, "m2-retry", "and test", &replayed), t);
	ck_assert_int_eq(replayed, 1);
	ck_assert_int_eq(fx_count(&app, "messages"), messages);
}
END_TEST

/* ---- A2A 1.1 generation (A2A-11-GEN-1..6, decision-073) ------------------------------ */

/* A call as a 1.1 (minor 1) or 1.0 (minor 0) client makes it; the result as parsed JSON
 * (a 1.1 Task is kept text), or NULL with err set. */
static json_object *gen_call(int minor, enum th_op op, const char *params_json)
{
	json_object *params = json_tokener_parse(params_json);
	ck_assert_msg(params != NULL, "bad test JSON %s", params_json);
	struct th_call call = {.participant = "alice", .a2a_minor = minor};
	json_object *result = NULL;
	th_error_clear(&err);
	th_err rc = th_service_call(&app, &call, op, params, &result, &err);
	json_object_put(params);
	json_object *parsed = rc == TH_OK ? json_tokener_parse(th_json_text(result)) : NULL;
	json_object_put(result);
	return parsed;
}

/* The generation a 1.1 GetTask shows for task (-1 when absent). */
static long long shown_generation(const char *task)
{
	char buf[300];
	snprintf(buf, sizeof buf, "{\"id\":\"%s\",\"historyLength\":0}", task);
	json_object *t = gen_call(1, TH_OP_GET_TASK, buf);
	ck_assert_msg(t != NULL, "%s", err.msg);
	const char *g = th_json_str(t, "generation");
	long long v = g != NULL ? atoll(g) : -1;
	json_object_put(t);
	return v;
}

static char *mutations_in_log(const char *task)
{
	return fx_text(&app,
	               "SELECT count(*) FROM events WHERE task_id = '%s' AND kind IN ('task', "
	               "'status', 'artifact')",
	               task);
}

START_TEST(test_a2a11_gen1_generation_starts_at_1_and_grows_by_one_per_mutation)
{
	json_object *t = gen_call(1, TH_OP_SEND_MESSAGE,
	                          "{\"message\":{\"messageId\":\"g1\",\"role\":\"ROLE_USER\","
	                          "\"parts\":[{\"text\":\"ship\"}]}}");
	ck_assert_msg(t != NULL, "%s", err.msg);
	json_object *task = json_object_object_get(t, "task");
	char id[128];
	snprintf(id, sizeof id, "%s", fx_task_id(task));
	/* Created (1), then the echo reply leaves it INPUT_REQUIRED (2). */
	ck_assert_str_eq(th_json_str(task, "generation"), "2");
	json_object_put(t);
	ck_assert_int_eq(shown_generation(id), 2);
	char *n = mutations_in_log(id);
	ck_assert_str_eq(n, "2");
	free(n);
	/* One more turn: one more status mutation, one more generation. */
	json_object *again = fx_send_text(&app, "alice", id, "g2", "again", &err);
	ck_assert_msg(again != NULL, "%s", err.msg);
	json_object_put(again);
	ck_assert_int_eq(shown_generation(id), 3);
	n = mutations_in_log(id);
	ck_assert_str_eq(n, "3");
	free(n);
}
END_TEST

static int collect(void *arg, int64_t seq, const char *json)
{
	(void)seq;
	json_object *list = arg;
	json_object_array_add(list, json_tokener_parse(json));
	return 0;
}

START_TEST(test_a2a11_gen2_each_mutation_is_one_event_carrying_the_generation_after_it)
{
	json_object *t = fx_send_text(&app, "alice", NULL, "g1", "ship", &err);
	ck_assert_msg(t != NULL, "%s", err.msg);
	char id[128];
	snprintf(id, sizeof id, "%s", fx_task_id(t));
	json_object_put(t);
	json_object_put(fx_send_text(&app, "alice", id, "g2", "again", &err));
	json_object_put(fx_complete(&app, "alice", id, &err));
	struct th_event *ev = NULL;
	size_t n = 0;
	ck_assert_int_eq(th_events_since(app.store, id, 0, 0, &ev, &n, &err), TH_OK);
	char viewer[] = "alice";
	struct th_watch w = {.task_id = id, .viewer = viewer, .generations = 1};
	json_object *seen = json_object_new_array();
	th_stream_deliver(app.store, &w, ev, n, collect, seen);
	long long want = 0;
	size_t carried = 0;
	for (size_t i = 0; i < json_object_array_length(seen); i++) {
		json_object *e = json_object_array_get_idx(seen, i);
		json_object *body = NULL;
		json_object_object_foreach(e, key, val)
		{
			(void)key;
			body = val;
		}
		const char *g = th_json_str(body, "generation");
		if (json_object_object_get(e, "message") != NULL) {
			ck_assert_ptr_null(g); /* a message is no mutation */
			continue;
		}
		ck_assert_msg(g != NULL, "event %zu carries no generation: %s", i, th_json_text(e));
		ck_assert_int_eq(atoll(g), ++want); /* 1, 2, 3, ...: one per event, no gap */
		carried++;
	}
	ck_assert_uint_ge(carried, 4); /* task, INPUT_REQUIRED, INPUT_REQUIRED, COMPLETED */
	ck_assert_int_eq(w.generation, want);
	ck_assert_int_eq(shown_generation(id), want);
	json_object_put(seen);
	th_events_free(ev, n);
	/* A 1.0 watcher gets the events as stored. */
	struct th_watch w10 = {.task_id = id, .viewer = viewer};
	json_object *plain = json_object_new_array();
	ck_assert_int_eq(th_events_since(app.store, id, 0, 0, &ev, &n, &err), TH_OK);
	th_stream_deliver(app.store, &w10, ev, n, collect, plain);
	ck_assert_ptr_null(strstr(th_json_text(plain), "generation"));
	json_object_put(plain);
	th_events_free(ev, n);
}
END_TEST

/* CH-2, STREAM-3: a side-channel event whose audience cannot be read (its membership
 * table is gone for a moment here; busy or an I/O error in a worker) is neither sent nor
 * skipped: delivery stops before it with the cursor on the event before, and the next
 * read offers it again. Skipping it would lose it for the channel's members. */
START_TEST(test_ch2_side_channel_event_is_not_skipped_while_its_audience_is_unknown)
{
	const char *id = new_task("ship");
	char k_status[] = "status", k_side[] = "channel:side-1";
	char j1[] = "{\"message\":{\"messageId\":\"a\"}}",
	     j2[] = "{\"message\":{\"messageId\":\"b\"}}",
	     j3[] = "{\"message\":{\"messageId\":\"c\"}}";
	const struct th_event ev[3] = {{.seq = 5, .kind = k_status, .json = j1},
	                               {.seq = 6, .kind = k_side, .json = j2},
	                               {.seq = 7, .kind = k_status, .json = j3}};
	char viewer[] = "alice";
	char task[128];
	snprintf(task, sizeof task, "%s", id);
	struct th_watch w = {.task_id = task, .viewer = viewer, .cursor = 4};
	json_object *seen = json_object_new_array();
	sqlite3 *db = th_store_db(app.store);
	ck_assert_int_eq(
	    sqlite3_exec(db, "ALTER TABLE channel_members RENAME TO cm_away", NULL, NULL, NULL),
	    SQLITE_OK);
	ck_assert_int_eq(th_stream_deliver(app.store, &w, ev, 3, collect, seen), -1);
	ck_assert_int_eq(w.cursor, 5);
	ck_assert_uint_eq(json_object_array_length(seen), 1);
	ck_assert_int_eq(
	    sqlite3_exec(db, "ALTER TABLE cm_away RENAME TO channel_members", NULL, NULL, NULL),
	    SQLITE_OK);
	/* Read again: alice is no member of side-1, so it is passed over, and 7 comes. */
	ck_assert_int_eq(th_stream_deliver(app.store, &w, ev, 3, collect, seen), 0);
	ck_assert_int_eq(w.cursor, 7);
	ck_assert_uint_eq(json_object_array_length(seen), 2);
	ck_assert_str_eq(
	    th_json_str(json_object_object_get(json_object_array_get_idx(seen, 1), "message"),
	                "messageId"),
	    "c");
	json_object_put(seen);
}
END_TEST

START_TEST(test_a2a11_gen4_get_task_waits_only_while_not_past_current_generation)
{
	json_object *t = fx_send_text(&app, "alice", NULL, "g1", "ship", &err);
	char id[128];
	snprintf(id, sizeof id, "%s", fx_task_id(t));
	json_object_put(t);
	struct th_call call = {.participant = "alice", .a2a_minor = 1};
	char buf[300];
	json_object *result = NULL;
	struct th_watch w;
	/* Already past 1: answered at once. */
	snprintf(buf, sizeof buf, "{\"id\":\"%s\",\"currentGeneration\":\"1\"}", id);
	json_object *params = json_tokener_parse(buf);
	ck_assert_int_eq(th_service_get_task(&app, &call, params, &result, &w, &err), TH_OK);
	ck_assert_ptr_nonnull(result);
	ck_assert_ptr_null(w.task_id);
	json_object_put(result);
	json_object_put(params);
	/* At 2: held, watching from the task's last event. */
	snprintf(buf, sizeof buf, "{\"id\":\"%s\",\"currentGeneration\":2}", id);
	params = json_tokener_parse(buf);
	ck_assert_int_eq(th_service_get_task(&app, &call, params, &result, &w, &err), TH_OK);
	ck_assert_ptr_null(result);
	ck_assert_int_eq(w.long_poll, 1);
	ck_assert_int_eq(w.wait_above, 2);
	ck_assert_int_eq(w.generation, 2);
	/* A message of another request moves the task on: the wait is over. */
	json_object_put(fx_send_text(&app, "alice", id, "g2", "again", &err));
	struct th_event *ev = NULL;
	size_t n = 0;
	ck_assert_int_eq(th_events_since(app.store, id, w.cursor, 0, &ev, &n, &err), TH_OK);
	ck_assert_int_eq(th_stream_deliver(app.store, &w, ev, n, collect, NULL), 1);
	ck_assert_int_eq(w.generation, 3);
	th_events_free(ev, n);
	th_watch_free(&w);
	/* 1.0: currentGeneration is not read; answered at once, without a generation. */
	call.a2a_minor = 0;
	ck_assert_int_eq(th_service_get_task(&app, &call, params, &result, &w, &err), TH_OK);
	ck_assert_ptr_nonnull(result);
	ck_assert_ptr_null(strstr(th_json_text(result), "generation"));
	json_object_put(result);
	json_object_put(params);
	/* A negative one is refused naming the field. */
	snprintf(buf, sizeof buf, "{\"id\":\"%s\",\"currentGeneration\":-1}", id);
	ck_assert_ptr_null(gen_call(1, TH_OP_GET_TASK, buf));
	ck_assert_int_eq(err.code, TH_EINVAL);
	ck_assert_ptr_nonnull(strstr(err.msg, "currentGeneration"));
}
END_TEST

static json_object *send_if(int minor, const char *task, const char *mid, const char *gen)
{
	char buf[500];
	snprintf(buf, sizeof buf,
	         "{\"message\":{\"taskId\":\"%s\",\"messageId\":\"%s\",\"role\":\"ROLE_USER\","
	         "\"parts\":[{\"text\":\"go\"}]},\"configuration\":{\"ifGenerationMatch\":%s}}",
	         task, mid, gen);
	return gen_call(minor, TH_OP_SEND_MESSAGE, buf);
}

START_TEST(test_a2a11_gen5_a_stale_if_generation_match_is_refused_storing_nothing)
{
	json_object *t = fx_send_text(&app, "alice", NULL, "g1", "ship", &err);
	char id[128];
	snprintf(id, sizeof id, "%s", fx_task_id(t));
	json_object_put(t);
	long msgs = fx_count(&app, "messages"), evs = fx_count(&app, "events");
	ck_assert_ptr_null(send_if(1, id, "g2", "\"1\""));
	ck_assert_int_eq(err.code, TH_EGENERATION);
	ck_assert_msg(strstr(err.msg, "generation 2, not 1") != NULL, "%s", err.msg);
	ck_assert_str_eq(err.task_id, id);
	ck_assert_int_eq(err.has_generations, 1);
	ck_assert_int_eq(err.expected_generation, 1);
	ck_assert_int_eq(err.current_generation, 2);
	ck_assert_int_eq(fx_count(&app, "messages"), msgs);
	ck_assert_int_eq(fx_count(&app, "events"), evs);
	ck_assert_int_eq(shown_generation(id), 2);
	/* The current generation goes through and moves it on. */
	json_object *ok = send_if(1, id, "g3", "2");
	ck_assert_msg(ok != NULL, "%s", err.msg);
	ck_assert_str_eq(th_json_str(json_object_object_get(ok, "task"), "generation"), "3");
	json_object_put(ok);
	/* A 1.0 client's ifGenerationMatch is not read: a stale one changes nothing. */
	json_object *old = send_if(0, id, "g4", "1");
	ck_assert_msg(old != NULL, "%s", err.msg);
	ck_assert_ptr_null(strstr(th_json_text(old), "generation"));
	json_object_put(old);
}
END_TEST

START_TEST(test_a2a11_gen6_a_1_0_answer_is_the_1_1_answer_without_its_generation)
{
	json_object *t = fx_send_text(&app, "alice", NULL, "g1", "ship", &err);
	char id[128];
	snprintf(id, sizeof id, "%s", fx_task_id(t));
	json_object_put(t);
	char buf[300];
	snprintf(buf, sizeof buf, "{\"id\":\"%s\"}", id);
	json_object *a10 = gen_call(0, TH_OP_GET_TASK, buf);
	json_object *a11 = gen_call(1, TH_OP_GET_TASK, buf);
	ck_assert_ptr_nonnull(a10);
	ck_assert_ptr_nonnull(a11);
	char *t10 = strdup(th_json_text(a10));
	char *t11 = strdup(th_json_text(a11));
	ck_assert_ptr_null(strstr(t10, "generation"));
	char *cut = strstr(t11, ",\"generation\":\"2\"");
	ck_assert_ptr_nonnull(cut);
	memmove(cut, cut + strlen(",\"generation\":\"2\""), strlen(cut + 17) + 1);
	ck_assert_str_eq(t10, t11);
	free(t10);
	free(t11);
	json_object_put(a10);
	json_object_put(a11);
	/* ListTasks: the same rule for every task listed. */
	json_object *l10 = gen_call(0, TH_OP_LIST_TASKS, "{}");
	json_object *l11 = gen_call(1, TH_OP_LIST_TASKS, "{}");
	ck_assert_ptr_null(strstr(th_json_text(l10), "generation"));
	ck_assert_str_eq(
	    th_json_str(json_object_array_get_idx(json_object_object_get(l11, "tasks"), 0),
	                "generation"),
	    "2");
	json_object_put(l10);
	json_object_put(l11);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("harness");
	TCase *tc = tcase_create("rules");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_task2_plain_text_creates_task_with_reporter_and_agent);
	tcase_add_test(tc, test_a2a11_idem1_a_retried_first_send_answers_the_same_task);
	tcase_add_test(tc, test_a2a11_idem1_another_message_under_the_key_is_refused_naming_it);
	tcase_add_test(tc, test_a2a11_idem1_a_key_is_the_callers_own);
	tcase_add_test(tc, test_a2a11_idem1_a_retried_follow_up_is_kept_once);
	tcase_add_test(tc, test_a2a11_gen1_generation_starts_at_1_and_grows_by_one_per_mutation);
	tcase_add_test(tc,
	               test_a2a11_gen2_each_mutation_is_one_event_carrying_the_generation_after_it);
	tcase_add_test(tc,
	               test_ch2_side_channel_event_is_not_skipped_while_its_audience_is_unknown);
	tcase_add_test(tc, test_a2a11_gen4_get_task_waits_only_while_not_past_current_generation);
	tcase_add_test(tc, test_a2a11_gen5_a_stale_if_generation_match_is_refused_storing_nothing);
	tcase_add_test(tc, test_a2a11_gen6_a_1_0_answer_is_the_1_1_answer_without_its_generation);
	tcase_add_test(tc, test_task7_ctl5_every_send_answers_the_task_as_get_task_shows_it);
	tcase_add_test(tc, test_ctl5_a_completion_answers_with_the_requests_history_length);
	tcase_add_test(tc, test_task2_name_is_first_line_cut_to_60_characters);
	tcase_add_test(tc, test_task2_client_context_id_is_kept);
	tcase_add_test(tc, test_task6_follow_up_starts_a_turn);
	tcase_add_test(tc, test_turn4_instant_turn_commits_with_its_message);
	tcase_add_test(tc, test_store10_task_ext_lean_leaves_out_only_defaults);
	tcase_add_test(tc, test_store10_task_snapshot_stored_lean_read_whole);
	tcase_add_test(tc, test_stream5_blocking_answer_honours_history_length);
	tcase_add_test(tc, test_task6_message_to_terminal_task_names_the_state);
	tcase_add_test(tc, test_task6_context_id_mismatch_is_refused);
	tcase_add_test(tc, test_task7_resent_message_id_is_not_processed_twice);
	tcase_add_test(tc, test_id3_no_participant_is_invalid_params);
	tcase_add_test(tc, test_id3_stranger_sees_the_same_not_found_as_for_a_missing_task);
	tcase_add_test(tc, test_lim4_error_info_echoes_a_long_id_whole);
	tcase_add_test(tc, test_lim4_page_tokens_are_parsed_strictly);
	tcase_add_test(tc, test_id3_list_tasks_returns_only_the_senders_tasks);
	tcase_add_test(tc, test_id1_metadata_participant_must_equal_the_sender);
	tcase_add_test(tc, test_id4_watcher_may_read_but_not_send_complete_or_cancel);
	tcase_add_test(tc, test_id4_stream5_kept_get_answer_is_never_stale_nor_shared);
	tcase_add_test(tc, test_ten2_kept_get_answer_is_never_another_tenants);
	tcase_add_test(tc, test_sec5_get_task_without_sender_is_never_a_kept_answer);
	tcase_add_test(tc, test_status1_turn_end_parks_awaiting_next_message_in_both_places);
	tcase_add_test(tc, test_status2_key_absent_outside_input_required);
	tcase_add_test(tc, test_status4_sub_state_has_its_own_column);
	tcase_add_test(tc,
	               test_status3_ext3_sub_state_and_commands_work_with_or_without_activation);
	tcase_add_test(tc, test_ctl1_control_envelope_with_other_parts_is_refused);
	tcase_add_test(tc, test_ctl1_unknown_action_or_extra_field_is_refused);
	tcase_add_test(tc, test_ctl2_refused_senders_store_and_interrupt_nothing);
	tcase_add_test(tc, test_ctl3_completion_cuts_a_queued_turn_that_then_changes_nothing);
	tcase_add_test(tc, test_ctl4_unresolved_subtask_refuses_completion);
	tcase_add_test(tc, test_ctl5_completion_ends_the_task_completed_by_sender);
	tcase_add_test(tc, test_ctl6_completion_or_cancel_of_a_terminal_task_names_the_state);
	tcase_add_test(tc, test_ctl7_turns_never_complete_a_participants_task);
	tcase_add_test(tc, test_ctl8_cancel_cancels_unresolved_subtasks);
	tcase_add_test(tc, test_ctl9_complete_message_is_a_lone_control_envelope);
	tcase_add_test(tc, test_cmd2_help_lists_registered_commands_without_a_model);
	tcase_add_test(tc, test_cmd3_status_reports_state_and_participants);
	tcase_add_test(tc, test_cmd2_unregistered_slash_text_is_an_ordinary_message);
	tcase_add_test(tc, test_cmd2_a_command_after_a_data_part_runs_as_the_intake_saw_it);
	tcase_add_test(tc, test_stream3_task_events_are_numbered_in_order);
	tcase_add_test(tc, test_turn5_return_immediately_answers_before_the_turn);
	tcase_add_test(tc, test_turn5_a_moved_context_runs_its_own_deferred_turn);
	tcase_add_test(tc, test_stream5_history_length_and_pagination);
	tcase_add_test(tc, test_sec3_history_capped_at_1000_and_by_bytes);
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
