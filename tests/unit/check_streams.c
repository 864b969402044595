/* SPDX-License-Identifier: Apache-2.0 */
/* check_streams.c — the stream thread of a FastCGI worker (STREAM-6) inside one
 * process: a real app and store (harness_fixture), the real thread with its own
 * connection, and a socketpair standing in for the web server's FastCGI connection.
 * Each test parks a stream as the binding would, changes the task through the app's
 * own connection (as the worker's request loop does) and reads the FastCGI records the
 * thread writes. */
#include <check.h>
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "app.h"
#include "bind/bind.h"
#include "config/settings.h"
#include "http/http.h"
#include "harness_fixture.h"
#include "store/store.h"
#include "stderr_fixture.h"
#include "testvfs.h"
#include "util/ids.h"
#include "util/jsonx.h"
#include "worker/streams.h"

#define REQ_ID 7

static struct th_app app;
static struct th_streams *streams;

static void tweak(struct th_config *cfg)
{
	struct th_error e;
	ck_assert_int_eq(th_config_set(cfg, "heartbeat_ms", "150", &e), TH_OK);
	ck_assert_int_eq(th_config_set(cfg, "stream_poll_ms", "20", &e), TH_OK);
	ck_assert_int_eq(th_config_set(cfg, "stream_max", "2", &e), TH_OK);
}

static void setup(void)
{
	fx_open(&app, tweak);
	struct th_error e;
	th_error_clear(&e);
	ck_assert_int_eq(th_streams_start(app.cfg, &streams, &e), TH_OK);
	app.parker = th_streams_parker(streams);
}

static void teardown(void)
{
	th_streams_stop(streams);
	streams = NULL;
	app.parker = NULL;
	fx_close(&app);
}

/* What the web-server side of one parked stream has read so far. */
struct peer {
	int fd;              /* the web server's end of the socketpair */
	char stdout_[65536]; /* concatenated FCGI_STDOUT content */
	size_t n;
	int ended; /* an FCGI_END_REQUEST record arrived */
	int eof;   /* the thread closed the connection */
	int bad;   /* a record for another request id, or a malformed one */
	unsigned char raw[70000];
	size_t nraw;
};

/* room() for who, as a question: a slot it reserved is given back at once. */
static int has_room(const char *who)
{
	int r = app.parker->room(app.parker->impl, who);
	if (r == TH_PARKER_ROOM)
		app.parker->unreserve(app.parker->impl, who);
	return r;
}

/* Parks a JSON-RPC stream of task_id (request id "5") following after cursor, on a slot
 * reserved for alice as the binding reserves it. */
static void park(struct peer *p, const char *task_id, int64_t cursor, enum th_close_on on,
                 int max_ms)
{
	memset(p, 0, sizeof *p);
	int sv[2];
	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	p->fd = sv[1];
	struct th_bind_parked bp = {
	    .conn = {.fd = sv[0], .request_id = REQ_ID},
	    .rpc_id = strdup("5"),
	    .watch = {.task_id = strdup(task_id),
	              .viewer = strdup("alice"),
	              .cursor = cursor,
	              .close_on = on,
	              .deadline_ms = th_mono_ms() + max_ms},
	};
	ck_assert_int_eq(app.parker->room(app.parker->impl, "alice"), TH_PARKER_ROOM);
	ck_assert_int_eq(app.parker->take(app.parker->impl, &bp), 0);
	ck_assert_int_eq(bp.conn.fd, -1); /* moved */
	ck_assert_ptr_null(bp.watch.task_id);
}

/* Reads and decodes records until pred holds or ms pass. */
static void pump(struct peer *p, int ms, int (*pred)(const struct peer *))
{
	int64_t until = th_mono_ms() + ms;
	while (!pred(p) && !p->eof && th_mono_ms() < until) {
		struct pollfd pf = {.fd = p->fd, .events = POLLIN};
		if (poll(&pf, 1, 20) <= 0)
			continue;
		ssize_t k = read(p->fd, p->raw + p->nraw, sizeof p->raw - p->nraw);
		if (k <= 0) {
			p->eof = 1;
			break;
		}
		p->nraw += (size_t)k;
		size_t off = 0;
		while (p->nraw - off >= 8) {
			const unsigned char *h = p->raw + off;
			size_t len = (size_t)h[4] << 8 | h[5], pad = h[6];
			if (p->nraw - off < 8 + len + pad)
				break;
			if (h[0] != 1 || ((int)h[2] << 8 | h[3]) != REQ_ID)
				p->bad = 1;
			if (h[1] == 6 && p->n + len < sizeof p->stdout_) {
				memcpy(p->stdout_ + p->n, h + 8, len);
				p->n += len;
				p->stdout_[p->n] = '\0';
			} else if (h[1] == 3) {
				p->ended = 1;
			} else if (h[1] != 6) {
				p->bad = 1;
			}
			off += 8 + len + pad;
		}
		memmove(p->raw, p->raw + off, p->nraw - off);
		p->nraw -= off;
	}
}

static int got_input_required(const struct peer *p)
{
	return strstr(p->stdout_, "TASK_STATE_INPUT_REQUIRED") != NULL;
}

static int got_ping(const struct peer *p)
{
	return strstr(p->stdout_, ": ping") != NULL;
}

static int got_end(const struct peer *p)
{
	return p->ended;
}

static int64_t last_seq(const char *task_id)
{
	struct th_task_row row = {0};
	struct th_error e;
	th_error_clear(&e);
	ck_assert_int_eq(th_store_task_get(app.store, task_id, &row, &e), TH_OK);
	int64_t seq = row.last_seq;
	th_task_row_free(&row);
	return seq;
}

/* A new task whose first message is message_id (a message id already sent returns
 * the task it created). */
static char *new_task_with(const char *message_id)
{
	struct th_error e;
	th_error_clear(&e);
	json_object *t = fx_send_text(&app, "alice", NULL, message_id, "hello", &e);
	ck_assert_ptr_nonnull(t);
	char *id = strdup(fx_task_id(t));
	json_object_put(t);
	return id;
}

static char *new_task(void)
{
	return new_task_with("m-1");
}

/* A follow-up message from alice, committed through the app's connection (not the
 * stream thread's). */
static void follow_up(const char *task_id, const char *message_id)
{
	struct th_error e;
	th_error_clear(&e);
	json_object *t = fx_send_text(&app, "alice", task_id, message_id, "again", &e);
	ck_assert_msg(t != NULL, "SendMessage failed: %s", e.msg);
	json_object_put(t);
}

/* The "id: N" numbers in the SSE text, in order. */
static int ids_of(const char *sse, int64_t *ids, int max)
{
	int n = 0;
	for (const char *q = strstr(sse, "id: "); q != NULL && n < max; q = strstr(q + 4, "id: "))
		if (q == sse || q[-1] == '\n')
			ids[n++] = atoll(q + 4);
	return n;
}

START_TEST(test_stream6_parked_stream_gets_another_connections_events_once_in_order)
{
	char *task = new_task();
	int64_t cursor = last_seq(task);
	struct peer p;
	park(&p, task, cursor, TH_CLOSE_TERMINAL, 10000);
	follow_up(task, "m-2");
	pump(&p, 3000, got_input_required);
	ck_assert_msg(got_input_required(&p), "no INPUT_REQUIRED event; got: %s", p.stdout_);
	ck_assert_int_eq(p.bad, 0);
	ck_assert_int_eq(p.ended, 0); /* a subscription stays open at INPUT_REQUIRED */
	/* Every event after the cursor, each once, in order, as JSON-RPC responses. */
	int64_t ids[64];
	int n = ids_of(p.stdout_, ids, 64);
	int64_t last = last_seq(task);
	ck_assert_int_eq(n, (int)(last - cursor));
	for (int i = 0; i < n; i++)
		ck_assert_int_eq(ids[i], cursor + 1 + i);
	ck_assert_ptr_nonnull(
	    strstr(p.stdout_, "data: {\"jsonrpc\":\"2.0\",\"id\":5,\"result\":{"));
	/* Nothing new: heartbeats only. */
	pump(&p, 2000, got_ping);
	ck_assert(got_ping(&p));
	close(p.fd);
	free(task);
}
END_TEST

START_TEST(test_stream6_closing_event_ends_the_response_and_frees_the_slot)
{
	char *task = new_task();
	int64_t last = last_seq(task);
	struct peer p;
	/* The rest of a SendStreamingMessage: it ends at INPUT_REQUIRED, the last event. */
	park(&p, task, last - 1, TH_CLOSE_TERMINAL_OR_INTERRUPTED, 10000);
	pump(&p, 3000, got_end);
	ck_assert_msg(p.ended, "no FCGI_END_REQUEST; got: %s", p.stdout_);
	ck_assert(got_input_required(&p));
	pump(&p, 2000, got_end); /* then the connection is closed */
	char c;
	ck_assert_int_eq(read(p.fd, &c, 1), 0);
	int64_t until = th_mono_ms() + 2000;
	while (th_streams_count(streams) != 0 && th_mono_ms() < until)
		usleep(10000);
	ck_assert_uint_eq(th_streams_count(streams), 0);
	close(p.fd);
	free(task);
}
END_TEST

START_TEST(test_stream6_stream_max_refuses_then_a_gone_client_frees_its_slot)
{
	char *task = new_task();
	int64_t cursor = last_seq(task);
	struct peer a, b;
	ck_assert_int_eq((has_room("carol") == TH_PARKER_ROOM), 1);
	park(&a, task, cursor, TH_CLOSE_TERMINAL, 10000);
	park(&b, task, cursor, TH_CLOSE_TERMINAL, 10000);
	ck_assert_int_eq((has_room("carol") == TH_PARKER_ROOM), 0); /* stream_max = 2 */
	/* The web server drops one connection (its client went away). */
	close(a.fd);
	int64_t until = th_mono_ms() + 2000;
	while (!(has_room("carol") == TH_PARKER_ROOM) && th_mono_ms() < until)
		usleep(10000);
	ck_assert_int_eq((has_room("carol") == TH_PARKER_ROOM), 1);
	ck_assert_uint_eq(th_streams_count(streams), 1);
	close(b.fd);
	free(task);
}
END_TEST

START_TEST(test_stream6_abort_request_is_answered_with_the_end_record)
{
	char *task = new_task();
	struct peer p;
	park(&p, task, last_seq(task), TH_CLOSE_TERMINAL, 10000);
	/* FCGI_ABORT_REQUEST, sent in two pieces to cross a read boundary. */
	unsigned char abort_rec[8] = {1, 2, 0, REQ_ID, 0, 0, 0, 0};
	ck_assert_int_eq(write(p.fd, abort_rec, 3), 3);
	usleep(50000);
	ck_assert_int_eq(write(p.fd, abort_rec + 3, 5), 5);
	pump(&p, 3000, got_end);
	ck_assert(p.ended);
	close(p.fd);
	free(task);
}
END_TEST

/* SEC-3: a participant at stream_max_per_participant is refused while another still has
 * room, and its gone client gives the participant its slot back. */
START_TEST(test_sec3_streams_per_participant_capped_and_freed)
{
	app.cfg->stream_max_per_participant = 1;
	char *task = new_task();
	struct peer a;
	ck_assert_int_eq(has_room("alice"), TH_PARKER_ROOM);
	park(&a, task, last_seq(task), TH_CLOSE_TERMINAL, 10000);
	ck_assert_int_eq(has_room("alice"), TH_PARKER_MINE);
	ck_assert_int_eq(has_room("bob"), TH_PARKER_ROOM);
	close(a.fd);
	int64_t until = th_mono_ms() + 2000;
	while (has_room("alice") != TH_PARKER_ROOM && th_mono_ms() < until)
		usleep(10000);
	ck_assert_int_eq(has_room("alice"), TH_PARKER_ROOM);
	free(task);
}
END_TEST

/* SEC-3: sixteen request threads asking for a stream of one participant at once get
 * exactly stream_max_per_participant slots: the check and the count are one step. */
struct racer {
	pthread_barrier_t *go;
	int got;
};

static void *race_room(void *arg)
{
	struct racer *r = arg;
	pthread_barrier_wait(r->go);
	r->got = app.parker->room(app.parker->impl, "dave");
	return NULL;
}

START_TEST(test_sec3_concurrent_opens_never_pass_the_participant_cap)
{
	app.cfg->stream_max = 100;
	app.cfg->stream_max_per_participant = 3;
	enum { N = 16 };
	pthread_barrier_t go;
	pthread_barrier_init(&go, NULL, N);
	pthread_t t[N];
	struct racer r[N];
	for (int i = 0; i < N; i++) {
		r[i] = (struct racer){&go, -1};
		ck_assert_int_eq(pthread_create(&t[i], NULL, race_room, &r[i]), 0);
	}
	int room = 0, mine = 0;
	for (int i = 0; i < N; i++) {
		pthread_join(t[i], NULL);
		room += r[i].got == TH_PARKER_ROOM;
		mine += r[i].got == TH_PARKER_MINE;
	}
	pthread_barrier_destroy(&go);
	ck_assert_int_eq(room, 3);
	ck_assert_int_eq(mine, N - 3);
	ck_assert_uint_eq(th_streams_count(streams), 3);
	for (int i = 0; i < room; i++)
		app.parker->unreserve(app.parker->impl, "dave");
	ck_assert_uint_eq(th_streams_count(streams), 0);
	ck_assert_int_eq(has_room("dave"), TH_PARKER_ROOM);
}
END_TEST

START_TEST(test_stream6_stream_ends_at_stream_max_ms)
{
	char *task = new_task();
	struct peer p;
	park(&p, task, last_seq(task), TH_CLOSE_TERMINAL, 300);
	pump(&p, 3000, got_end);
	ck_assert(p.ended);
	ck_assert_int_eq(p.bad, 0);
	close(p.fd);
	free(task);
}
END_TEST

/* Makes every turn in the database look like its worker died mid-turn: running, held by
 * no live process, its lease ending at lease_until_ms. */
static void kill_all_turns(int64_t lease_until_ms)
{
	char sql[200];
	snprintf(sql, sizeof sql,
	         "UPDATE turn_rows SET state = 'running', worker_pid = 999999, attempts = 1, "
	         "lease_until_ms = %lld",
	         (long long)lease_until_ms);
	ck_assert_int_eq(sqlite3_exec(th_store_db(app.store), sql, NULL, NULL, NULL), SQLITE_OK);
}

/* Asserts that the stream thread hands exactly task over for recovery within ms
 * (th_streams_wait_recoveries, as the worker's recovery thread waits). */
static void expect_handed_over(const char *task, int ms)
{
	int64_t t0 = th_mono_ms();
	char **ids = NULL;
	size_t n = th_streams_wait_recoveries(streams, ms, &ids);
	int64_t took = th_mono_ms() - t0;
	/* Only the watched task: others are left to `tiny-harness recover`. */
	ck_assert_msg(n == 1, "%zu tasks handed over for recovery in %lld ms, expected %s", n,
	              (long long)took, task);
	ck_assert_str_eq(ids[0], task);
	for (size_t i = 0; i < n; i++)
		free(ids[i]);
	free(ids);
}

/* TURN-7, TURN-4: the stream thread asks for the watched task's own expired turn (by
 * task id, as GetTask does), so expired turns of other tasks, however many and however
 * much older, never hide it. */
/* A2A-11-GEN-4: a waiting GetTask that the parker cannot take (out of memory there) is
 * answered 503 on its own connection, and the slot it reserved is given back: stream_max
 * (2) such requests later there is still room. */
static int take_fails(void *impl, struct th_bind_parked *p)
{
	(void)impl;
	(void)p;
	return -1;
}

static int pair_fd = -1; /* the worker's end handed over by detach_pair */

static int detach_pair(void *impl, struct th_http_conn *out)
{
	(void)impl;
	out->fd = pair_fd;
	out->request_id = REQ_ID;
	pair_fd = -1;
	return 0;
}

/* Serves one JSON-RPC request to app as alice behind A2A-Version 1.1, with detach as the
 * carrier's (NULL: none); *out (free) is what the request wrote itself. */
static void serve_v11(const char *body, int (*detach)(void *, struct th_http_conn *), char **out)
{
	char cl[40];
	snprintf(cl, sizeof cl, "CONTENT_LENGTH=%zu", strlen(body));
	const char *params[] = {"REQUEST_METHOD=POST",
	                        "REQUEST_URI=/",
	                        "CONTENT_TYPE=application/json",
	                        "HTTP_A2A_VERSION=1.1",
	                        "HTTP_X_PARTICIPANT_ID=alice",
	                        "REMOTE_ADDR=127.0.0.1",
	                        cl,
	                        NULL};
	struct th_http_mem *m = th_http_mem_new(params, body, strlen(body));
	ck_assert_ptr_nonnull(m);
	struct th_http_io io;
	th_http_mem_io(m, &io);
	if (detach != NULL)
		io.detach = detach;
	th_bind_serve(&app, &io);
	size_t len;
	*out = strdup(th_http_mem_output(m, &len));
	th_http_mem_free(m);
}

START_TEST(test_a2a11_gen4_wait_the_parker_cannot_take_is_503_and_frees_its_slot)
{
	char *task = new_task();
	char body[512], *out;
	snprintf(body, sizeof body,
	         "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"GetTask\",\"params\":{\"id\":\"%s\"}}",
	         task);
	serve_v11(body, NULL, &out);
	const char *g = strstr(out, "\"generation\":\"");
	ck_assert_msg(g != NULL, "no generation in %s", out);
	char gen[32];
	ck_assert_int_eq(sscanf(g + 14, "%31[0-9]", gen), 1);
	free(out);

	struct th_parker *real = app.parker, failing = *app.parker;
	failing.take = take_fails;
	app.parker = &failing;
	snprintf(body, sizeof body,
	         "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"GetTask\",\"params\":{\"id\":\"%s\","
	         "\"currentGeneration\":\"%s\"}}",
	         task, gen);
	for (int i = 0; i < 3; i++) {
		int sv[2];
		ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
		pair_fd = sv[0];
		serve_v11(body, detach_pair, &out);
		ck_assert_int_eq(pair_fd, -1); /* it was handed over */
		ck_assert_str_eq(out, "");     /* and the request wrote nothing itself */
		free(out);
		struct peer p;
		memset(&p, 0, sizeof p);
		p.fd = sv[1];
		pump(&p, 2000, got_end);
		ck_assert_msg(p.ended, "no end record: %s", p.stdout_);
		ck_assert_msg(strncmp(p.stdout_, "Status: 503", 11) == 0, "got %s", p.stdout_);
		ck_assert_ptr_nonnull(strstr(p.stdout_, "Retry-After: 1\r\n"));
		ck_assert_ptr_nonnull(strstr(p.stdout_, "out of memory"));
		ck_assert_ptr_nonnull(strstr(p.stdout_, "\"id\":4"));
		close(sv[1]);
	}
	app.parker = real;
	ck_assert_int_eq(has_room("alice"), TH_PARKER_ROOM);
	free(task);
}
END_TEST

START_TEST(test_turn7_watched_tasks_expired_turn_is_found_behind_100_older_others)
{
	enum { OTHERS = 120 };
	char mid[32];
	for (int i = 0; i < OTHERS; i++) {
		snprintf(mid, sizeof mid, "other-%d", i);
		free(new_task_with(mid));
	}
	char *task = new_task_with("watched"); /* the newest turn: past the 100 oldest */
	kill_all_turns(1);
	struct peer p;
	park(&p, task, last_seq(task), TH_CLOSE_TERMINAL, 10000);
	expect_handed_over(task, 3000);
	close(p.fd);
	free(task);
}
END_TEST

/* TURN-7: the expiry is kept while nothing is committed, but time passes: a lease that
 * ends while the database stays the same is still seen ended, at the next look. */
START_TEST(test_turn7_lease_ending_while_nothing_is_committed_is_handed_over)
{
	char *task = new_task();
	int64_t until = th_now_ms() + 1500;
	kill_all_turns(until);
	struct peer p;
	park(&p, task, last_seq(task), TH_CLOSE_TERMINAL, 10000);
	char **ids = NULL;
	/* Not before the lease ends. */
	ck_assert_uint_eq(th_streams_wait_recoveries(streams, 1000, &ids), 0);
	free(ids);
	expect_handed_over(task, 3000);
	ck_assert_int_ge(th_now_ms(), until);
	close(p.fd);
	free(task);
}
END_TEST

/* STREAM-6, STREAM-3: a read of the event log that fails (SQLITE_BUSY, as under load) is
 * read again at the next tick, though nothing is committed after it. The commit's event
 * is often the task's last for a while (an agent's reply), so a thread that took the
 * failed read's data_version as seen would keep it from the stream until the task
 * changed again. The test VFS fails the stream thread's reads only: after its first
 * (data_version's look at page 1), every one until cleared. (An I/O error would not
 * show it: the store opens its connection again after one, and the new connection's
 * data_version differs.) */
START_TEST(test_stream6_a_failed_read_of_the_log_is_read_again_without_a_new_commit)
{
	char *task = new_task();
	struct peer p;
	park(&p, task, last_seq(task), TH_CLOSE_TERMINAL, 20000);
	pump(&p, 300, got_input_required); /* the adoption's read is done by then */
	ck_assert(!got_input_required(&p));
	char log[] = "/tmp/th-streams-log-XXXXXX";
	int saved = th_test_stderr_to(log);
	tv_fault_elsewhere(TV_READ, 2, SQLITE_BUSY, 1);
	follow_up(task, "m-2");
	pump(&p, 500, got_input_required);
	long hits = tv_fault_hits();
	tv_fault_clear();
	ck_assert_msg(hits > 0, "the stream thread read nothing while its reads failed");
	ck_assert_msg(!got_input_required(&p), "an event came through a failing read: %s",
	              p.stdout_);
	pump(&p, 3000, got_input_required);
	char *said = th_test_stderr_back(saved, log);
	ck_assert_msg(got_input_required(&p),
	              "the event committed while the reads failed never came (%ld failed)", hits);
	/* LIM-5: a busy spell is one line as it begins and one as it ends, not one per poll
	 * (20 ms here): the error log of a busy site stays readable. */
	ck_assert_msg(hits > 5, "too short a spell to tell: %ld failed reads", hits);
	/* (The captured lines are on stderr above; Check's message would be too long.) */
	ck_assert_msg(th_test_count(said, "stream thread: ") == 2,
	              "%ld failed reads logged in %d lines of the stream thread", hits,
	              th_test_count(said, "stream thread: "));
	ck_assert_msg(strstr(said, "reads again after") != NULL, "no line ends the spell");
	ck_assert_msg(th_test_count(said, "database (") <= 2,
	              "the store logged %d busy reads of %ld", th_test_count(said, "database ("),
	              hits);
	free(said);
	close(p.fd);
	free(task);
}
END_TEST

static void setup_vfs(void)
{
	tv_install(1);
	setup();
}

static void teardown_vfs(void)
{
	teardown();
	tv_uninstall();
}

static Suite *suite(void)
{
	Suite *s = suite_create("streams");
	TCase *tc = tcase_create("thread");
	tcase_set_timeout(tc, 30);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc,
	               test_stream6_parked_stream_gets_another_connections_events_once_in_order);
	tcase_add_test(tc, test_stream6_closing_event_ends_the_response_and_frees_the_slot);
	tcase_add_test(tc, test_stream6_stream_max_refuses_then_a_gone_client_frees_its_slot);
	tcase_add_test(tc, test_stream6_abort_request_is_answered_with_the_end_record);
	tcase_add_test(tc, test_stream6_stream_ends_at_stream_max_ms);
	tcase_add_test(tc, test_sec3_streams_per_participant_capped_and_freed);
	tcase_add_test(tc, test_sec3_concurrent_opens_never_pass_the_participant_cap);
	tcase_add_test(tc, test_turn7_watched_tasks_expired_turn_is_found_behind_100_older_others);
	tcase_add_test(tc, test_turn7_lease_ending_while_nothing_is_committed_is_handed_over);
	tcase_add_test(tc, test_a2a11_gen4_wait_the_parker_cannot_take_is_503_and_frees_its_slot);
	suite_add_tcase(s, tc);
	TCase *tf = tcase_create("faults");
	tcase_set_timeout(tf, 30);
	tcase_add_checked_fixture(tf, setup_vfs, teardown_vfs);
	tcase_add_test(tf,
	               test_stream6_a_failed_read_of_the_log_is_read_again_without_a_new_commit);
	suite_add_tcase(s, tf);
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
