/* SPDX-License-Identifier: Apache-2.0 */
/* check_stream.c — the streaming operations end to end inside one process: the
 * real bindings (th_bind_serve) over the in-memory carrier, the real service and a
 * temp-file store. SSE framing per binding (A2A-5), the Task first and the close at
 * INPUT_REQUIRED (STREAM-1), a subscription seeing a completion (STREAM-2, CTL-5),
 * Last-Event-ID resumption (STREAM-4), errors before the stream (A2A-4). */
#include <check.h>
#include <pthread.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "app.h"
#include "bind/bind.h"
#include "config/settings.h"
#include "domain/ext.h"
#include "harness_fixture.h"
#include "http/http.h"
#include "store/store.h"
#include "testvfs.h"
#include "util/jsonx.h"

static struct th_app app;
static struct th_error err;

static void tweak(struct th_config *cfg)
{
	struct th_error e;
	/* A subscription to a task nobody touches ends quickly in these tests. */
	ck_assert_int_eq(th_config_set(cfg, "stream_max_ms", "300", &e), TH_OK);
	ck_assert_int_eq(th_config_set(cfg, "heartbeat_ms", "100", &e), TH_OK);
}

static void setup(void)
{
	fx_open(&app, tweak);
}

static void teardown(void)
{
	fx_close(&app);
}

/* Runs one request through th_bind_serve; returns the whole output (caller frees). */
static char *serve(const char *method, const char *uri, const char *last_event_id, const char *body)
{
	char clen[48], uri_p[512], lei[128];
	snprintf(clen, sizeof clen, "CONTENT_LENGTH=%zu", body ? strlen(body) : 0);
	snprintf(uri_p, sizeof uri_p, "REQUEST_URI=%s", uri);
	snprintf(lei, sizeof lei, "HTTP_LAST_EVENT_ID=%s", last_event_id ? last_event_id : "");
	char m[32];
	snprintf(m, sizeof m, "REQUEST_METHOD=%s", method);
	const char *params[] = {m,
	                        uri_p,
	                        clen,
	                        "CONTENT_TYPE=application/json",
	                        "HTTP_A2A_VERSION=1.0",
	                        "HTTP_X_PARTICIPANT_ID=alice",
	                        "REMOTE_ADDR=127.0.0.1",
	                        last_event_id ? lei : NULL,
	                        NULL};
	struct th_http_mem *mem =
	    th_http_mem_new(params, body ? body : "", body ? strlen(body) : 0);
	struct th_http_io io;
	th_http_mem_io(mem, &io);
	th_bind_serve(&app, &io);
	size_t len;
	char *out = strdup(th_http_mem_output(mem, &len));
	th_http_mem_free(mem);
	return out;
}

/* The data lines of an SSE body as parsed JSON, and their id lines. */
struct events {
	json_object *data[32];
	long ids[32];
	char kind[32][16];
	int n;
};

static void parse_events(const char *out, struct events *ev)
{
	memset(ev, 0, sizeof *ev);
	const char *body = strstr(out, "\r\n\r\n");
	ck_assert_ptr_nonnull(body);
	char *copy = strdup(body + 4), *save = NULL;
	long id = -1;
	char kind[16] = "";
	for (char *line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (strncmp(line, "id: ", 4) == 0)
			id = atol(line + 4);
		else if (strncmp(line, "event: ", 7) == 0)
			snprintf(kind, sizeof kind, "%s", line + 7);
		else if (strncmp(line, "data: ", 6) == 0 && ev->n < 32) {
			ev->data[ev->n] = json_tokener_parse(line + 6);
			ck_assert_ptr_nonnull(ev->data[ev->n]);
			ev->ids[ev->n] = id;
			snprintf(ev->kind[ev->n], sizeof ev->kind[0], "%s", kind);
			ev->n++;
			id = -1;
			kind[0] = '\0';
		}
	}
	free(copy);
}

static void free_events(struct events *ev)
{
	for (int i = 0; i < ev->n; i++)
		json_object_put(ev->data[i]);
}

static const char *state_in(json_object *resp)
{
	json_object *h = json_object_object_get(resp, "statusUpdate");
	if (h == NULL)
		h = json_object_object_get(resp, "task");
	return th_json_str(json_object_object_get(h, "status"), "state");
}

/* A task alice started with "hello", parked in INPUT_REQUIRED; its id into id. */
static void new_task(char id[64])
{
	json_object *t = fx_send_text(&app, "alice", NULL, "m1", "hello", &err);
	ck_assert_msg(t != NULL, "%s", err.msg);
	snprintf(id, 64, "%s", fx_task_id(t));
	json_object_put(t);
}

START_TEST(test_stream1_jsonrpc_streams_task_first_and_closes_at_input_required)
{
	char *out = serve("POST", "/", NULL,
	                  "{\"jsonrpc\":\"2.0\",\"id\":\"s-1\",\"method\":\"SendStreamingMessage\","
	                  "\"params\":{\"message\":{\"messageId\":\"m1\",\"role\":\"ROLE_USER\","
	                  "\"parts\":[{\"text\":\"hi\"}]}}}");
	ck_assert_ptr_nonnull(strstr(out, "Content-Type: text/event-stream"));
	struct events ev;
	parse_events(out, &ev);
	ck_assert_int_ge(ev.n, 2);
	for (int i = 0; i < ev.n; i++) {
		/* A2A-5: whole JSON-RPC responses carrying the request id, each with an id: line.
		 */
		ck_assert_str_eq(th_json_str(ev.data[i], "jsonrpc"), "2.0");
		ck_assert_str_eq(th_json_str(ev.data[i], "id"), "s-1");
		ck_assert_int_gt(ev.ids[i], 0);
		if (i > 0)
			ck_assert_int_gt(ev.ids[i], ev.ids[i - 1]);
	}
	json_object *first = json_object_object_get(ev.data[0], "result");
	ck_assert_ptr_nonnull(json_object_object_get(first, "task"));
	json_object *last = json_object_object_get(ev.data[ev.n - 1], "result");
	ck_assert_str_eq(state_in(last), "TASK_STATE_INPUT_REQUIRED");
	json_object *meta =
	    json_object_object_get(json_object_object_get(last, "statusUpdate"), "metadata");
	ck_assert_str_eq(th_json_str(json_object_object_get(meta, TH_META_STATUS), "sub_state"),
	                 "awaiting-next-message");
	free_events(&ev);
	free(out);
}
END_TEST

START_TEST(test_a2a5_rest_stream_events_are_bare_stream_responses)
{
	char *out = serve("POST", "/message:stream", NULL,
	                  "{\"message\":{\"messageId\":\"m1\",\"role\":\"ROLE_USER\","
	                  "\"parts\":[{\"text\":\"hi\"}]}}");
	struct events ev;
	parse_events(out, &ev);
	ck_assert_int_ge(ev.n, 2);
	ck_assert_ptr_nonnull(json_object_object_get(ev.data[0], "task"));
	ck_assert_ptr_null(json_object_object_get(ev.data[0], "jsonrpc"));
	ck_assert_str_eq(state_in(ev.data[ev.n - 1]), "TASK_STATE_INPUT_REQUIRED");
	free_events(&ev);
	free(out);
}
END_TEST

START_TEST(test_stream2_subscription_sees_a_completion_and_closes)
{
	char id[64], uri[128];
	new_task(id);
	/* A subscription stays open across INPUT_REQUIRED: here it ends by the maximum
	 * duration (300 ms) with the Task snapshot and at least one heartbeat. */
	snprintf(uri, sizeof uri, "/tasks/%s:subscribe", id);
	char *out = serve("GET", uri, NULL, NULL);
	struct events ev;
	parse_events(out, &ev);
	ck_assert_int_eq(ev.n, 1);
	ck_assert_str_eq(state_in(ev.data[0]), "TASK_STATE_INPUT_REQUIRED");
	ck_assert_ptr_nonnull(strstr(out, ": ping"));
	free_events(&ev);
	free(out);
	/* After the completion, resuming from the snapshot's seq yields the final update. */
	long snap = 0;
	json_object *t = fx_complete(&app, "alice", id, &err);
	json_object_put(t);
	struct th_event *rows = NULL;
	size_t n = 0;
	ck_assert_int_eq(th_store_events_since(app.store, id, 0, 0, NULL, &rows, &n, &err), TH_OK);
	snap = (long)rows[n - 2].seq;
	th_events_free(rows, n);
	char lei[32];
	snprintf(lei, sizeof lei, "%ld", snap);
	out = serve("POST", uri, lei, NULL);
	parse_events(out, &ev);
	ck_assert_int_eq(ev.n, 1);
	ck_assert_int_eq(ev.ids[0], snap + 1);
	ck_assert_str_eq(state_in(ev.data[0]), "TASK_STATE_COMPLETED");
	free_events(&ev);
	free(out);
}
END_TEST

/* STREAM-1, STREAM-2: every event is written with what it does to streams (events.ends,
 * 011), the same answer a reader of its JSON would give, so no stream parses it again. */
START_TEST(test_stream1_each_event_records_whether_it_ends_streams)
{
	char id[64];
	new_task(id);
	json_object *t = fx_complete(&app, "alice", id, &err);
	json_object_put(t);
	struct th_event *rows = NULL;
	size_t n = 0;
	ck_assert_int_eq(th_store_events_since(app.store, id, 0, 0, NULL, &rows, &n, &err), TH_OK);
	int seen[3] = {0, 0, 0};
	for (size_t i = 0; i < n; i++) {
		json_object *sr = json_tokener_parse(rows[i].json);
		ck_assert_ptr_nonnull(sr);
		const char *state = state_in(sr);
		int want = TH_ENDS_NONE;
		if (state != NULL && (strcmp(state, "TASK_STATE_INPUT_REQUIRED") == 0 ||
		                      strcmp(state, "TASK_STATE_AUTH_REQUIRED") == 0))
			want = TH_ENDS_INTERRUPTED;
		else if (state != NULL && (strcmp(state, "TASK_STATE_COMPLETED") == 0 ||
		                           strcmp(state, "TASK_STATE_CANCELED") == 0 ||
		                           strcmp(state, "TASK_STATE_FAILED") == 0 ||
		                           strcmp(state, "TASK_STATE_REJECTED") == 0))
			want = TH_ENDS_TERMINAL;
		ck_assert_msg(rows[i].ends == want, "event %lld (%s) ends %d, want %d: %s",
		              (long long)rows[i].seq, rows[i].kind, rows[i].ends, want,
		              rows[i].json);
		seen[want]++;
		json_object_put(sr);
	}
	th_events_free(rows, n);
	/* The snapshot going on, the reply waiting for the next message, the completion. */
	ck_assert_int_ge(seen[TH_ENDS_NONE], 1);
	ck_assert_int_ge(seen[TH_ENDS_INTERRUPTED], 1);
	ck_assert_int_eq(seen[TH_ENDS_TERMINAL], 1);
}
END_TEST

START_TEST(test_stream4_last_event_id_replays_exactly_the_missed_events)
{
	char id[64], uri[128];
	new_task(id);
	json_object *t = fx_send_text(&app, "alice", id, "m2", "more", &err);
	json_object_put(t);
	t = fx_complete(&app, "alice", id, &err);
	json_object_put(t);
	long total = fx_count(&app, "events");
	snprintf(uri, sizeof uri, "/tasks/%s:subscribe?lastEventId=2", id);
	char *out = serve("GET", uri, NULL, NULL);
	struct events ev;
	parse_events(out, &ev);
	/* Every seq from 3 to the last exactly once, in order, ending at COMPLETED. */
	ck_assert_int_eq(ev.n, total - 2);
	for (int i = 0; i < ev.n; i++)
		ck_assert_int_eq(ev.ids[i], 3 + i);
	ck_assert_str_eq(state_in(ev.data[ev.n - 1]), "TASK_STATE_COMPLETED");
	free_events(&ev);
	free(out);
	/* A number past the end, or not a number, is refused before any stream. */
	out = serve("GET", uri, "999", NULL);
	ck_assert_ptr_nonnull(strstr(out, "Status: 400"));
	ck_assert_ptr_nonnull(strstr(out, "Last-Event-ID"));
	free(out);
	snprintf(uri, sizeof uri, "/tasks/%s:subscribe", id);
	out = serve("GET", uri, "abc", NULL);
	ck_assert_ptr_nonnull(strstr(out, "Status: 400"));
	free(out);
}
END_TEST

START_TEST(test_stream2_errors_before_the_stream_are_ordinary_responses)
{
	char id[64], body[256];
	new_task(id);
	json_object *t = fx_complete(&app, "alice", id, &err);
	json_object_put(t);
	/* A terminal task has nothing to subscribe to (A2A §3.6). */
	snprintf(body, sizeof body,
	         "{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"SubscribeToTask\",\"params\":{\"id\":"
	         "\"%s\"}}",
	         id);
	char *out = serve("POST", "/", NULL, body);
	ck_assert_ptr_null(strstr(out, "text/event-stream"));
	ck_assert_ptr_nonnull(strstr(out, "-32004"));
	ck_assert_ptr_nonnull(strstr(out, "TASK_STATE_COMPLETED"));
	free(out);
	/* Unknown task: TaskNotFound, 404 on REST. */
	out = serve("GET", "/tasks/nope:subscribe", NULL, NULL);
	ck_assert_ptr_nonnull(strstr(out, "Status: 404"));
	ck_assert_ptr_nonnull(strstr(out, "TASK_NOT_FOUND"));
	free(out);
	/* A streaming send to a terminal task is refused naming the state. */
	snprintf(body, sizeof body,
	         "{\"message\":{\"taskId\":\"%s\",\"messageId\":\"x\",\"role\":\"ROLE_USER\","
	         "\"parts\":[{\"text\":\"x\"}]}}",
	         id);
	out = serve("POST", "/message:stream", NULL, body);
	ck_assert_ptr_nonnull(strstr(out, "Status: 400"));
	ck_assert_ptr_nonnull(strstr(out, "TASK_STATE_COMPLETED"));
	free(out);
}
END_TEST

/* A second app on app's database, as another worker process would have: its own
 * configuration and connection. th_app_close frees it. */
static void open_beside(struct th_app *other)
{
	struct th_config *cfg = malloc(sizeof *cfg);
	ck_assert_ptr_nonnull(cfg);
	ck_assert_int_eq(th_config_defaults(cfg), TH_OK);
	struct th_error e;
	ck_assert_int_eq(th_config_set(cfg, "db", app.cfg->db_path, &e), TH_OK);
	ck_assert_int_eq(th_config_set(cfg, "commands_dir", "/nonexistent", &e), TH_OK);
	ck_assert_msg(th_app_open(other, cfg, 0, &e) == TH_OK, "%s", e.msg);
}

struct served {
	const char *uri;
	char *out; /* the whole response; free */
};

static void *serve_subscription(void *arg)
{
	struct served *s = arg;
	s->out = serve("GET", s->uri, NULL, NULL);
	return NULL;
}

/* STREAM-2, STREAM-6: a subscription that a request follows itself (plain CGI) and whose
 * read of the event log fails (SQLITE_BUSY here; a disk error alike) stays open and
 * reads again at the next poll: the completion committed meanwhile by another
 * connection still reaches it, and then closes it. Before, the failed read ended the
 * stream without its final event. The test VFS fails the serving thread's reads only,
 * after its first once the completion is committed, until cleared. */
START_TEST(test_stream2_a_failed_read_of_the_log_keeps_the_subscription_open)
{
	char id[64], uri[128];
	new_task(id);
	snprintf(uri, sizeof uri, "/tasks/%s:subscribe", id);
	struct th_app other;
	open_beside(&other);
	struct served s = {uri, NULL};
	pthread_t th;
	ck_assert_int_eq(pthread_create(&th, NULL, serve_subscription, &s), 0);
	usleep(300 * 1000); /* the snapshot is out; the stream polls */
	tv_fault_elsewhere(TV_READ, 2, SQLITE_BUSY, 1);
	json_object *t = fx_complete(&other, "alice", id, &err);
	ck_assert_msg(t != NULL, "%s", err.msg);
	json_object_put(t);
	usleep(400 * 1000);
	long hits = tv_fault_hits();
	tv_fault_clear();
	ck_assert_int_eq(pthread_join(th, NULL), 0);
	th_app_close(&other);
	ck_assert_msg(hits > 0, "the stream read nothing while its reads failed");
	struct events ev;
	parse_events(s.out, &ev);
	ck_assert_msg(ev.n == 2, "%d events after %ld failed reads:\n%.600s", ev.n, hits, s.out);
	ck_assert_str_eq(state_in(ev.data[0]), "TASK_STATE_INPUT_REQUIRED");
	ck_assert_str_eq(state_in(ev.data[1]), "TASK_STATE_COMPLETED");
	free_events(&ev);
	free(s.out);
}
END_TEST

static void tweak_long(struct th_config *cfg)
{
	struct th_error e;
	ck_assert_int_eq(th_config_set(cfg, "stream_max_ms", "5000", &e), TH_OK);
	ck_assert_int_eq(th_config_set(cfg, "heartbeat_ms", "100", &e), TH_OK);
}

static void setup_vfs(void)
{
	tv_install(1);
	fx_open(&app, tweak_long);
}

static void teardown_vfs(void)
{
	fx_close(&app);
	tv_uninstall();
}

int main(void)
{
	Suite *s = suite_create("stream");
	TCase *tc = tcase_create("sse");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_stream1_jsonrpc_streams_task_first_and_closes_at_input_required);
	tcase_add_test(tc, test_a2a5_rest_stream_events_are_bare_stream_responses);
	tcase_add_test(tc, test_stream2_subscription_sees_a_completion_and_closes);
	tcase_add_test(tc, test_stream1_each_event_records_whether_it_ends_streams);
	tcase_add_test(tc, test_stream4_last_event_id_replays_exactly_the_missed_events);
	tcase_add_test(tc, test_stream2_errors_before_the_stream_are_ordinary_responses);
	suite_add_tcase(s, tc);
	TCase *tf = tcase_create("faults");
	tcase_add_checked_fixture(tf, setup_vfs, teardown_vfs);
	tcase_set_timeout(tf, 30);
	tcase_add_test(tf, test_stream2_a_failed_read_of_the_log_keeps_the_subscription_open);
	suite_add_tcase(s, tf);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
