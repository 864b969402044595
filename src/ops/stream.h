/* SPDX-License-Identifier: Apache-2.0 */
/* stream.h — following a task's event log (STREAM-1, STREAM-2, STREAM-4).
 *
 * Every event of a task is a row in `events`, numbered in the transaction that made
 * the change; a stream reads them by sequence, from any worker process, polling with
 * PRAGMA data_version so idle polls cost nothing and no read transaction stays open
 * while it sleeps. The binding supplies a sink that frames what it is given. */
#ifndef TH_OPS_STREAM_H
#define TH_OPS_STREAM_H

#include <json-c/json.h>
#include <stdint.h>

#include "a2a/a2a.h"
#include "store/store.h"
#include "turn/context.h"
#include "util/err.h"

/* When a stream ends by itself: SubscribeToTask at a terminal state; the rest of a
 * SendStreamingMessage also at an interrupted one (INPUT_REQUIRED, AUTH_REQUIRED). */
enum th_close_on { TH_CLOSE_TERMINAL, TH_CLOSE_TERMINAL_OR_INTERRUPTED };

/* What a stream follows once its first event is out; everything a stream parked
 * outside the request needs to go on (STREAM-6). */
struct th_watch {
	char *task_id;  /* owned; th_watch_free */
	char *viewer;   /* owned; the participant whose side channels it may see */
	char *tenant;   /* owned; the request's tenant (TEN-2), "" the default one */
	int64_t cursor; /* the last seq it was sent (or skipped) */
	enum th_close_on close_on;
	int64_t deadline_ms; /* monotonic (th_mono_ms): stream_max_ms after it opened */
	/* A2A 1.1 (A2A-11-GEN-2, decision-073): the task's events carry the generation
	 * after them; generation is the task's at cursor, counted on by th_stream_deliver. */
	int generations;
	int64_t generation;
	/* A2A-11-GEN-4: a GetTask with currentGeneration waiting here, not a stream: it
	 * sends no event, and is answered (the Task, with history entries of its history
	 * length) once generation passes wait_above or at deadline_ms. */
	int long_poll;
	int64_t wait_above;
	int history;
};
void th_watch_free(struct th_watch *w);

struct th_sink {
	void *impl;
	/* Sends the stream's headers; called once, before the first event. 0 or -1. */
	int (*open)(void *impl);
	/* One StreamResponse as JSON text (borrowed) and its seq; -1 when the client is gone. */
	int (*event)(void *impl, int64_t seq, const char *stream_response);
	/* A comment line that keeps proxies from timing out; -1 when the client is gone. */
	int (*heartbeat)(void *impl);
	/* May be NULL. Hands the rest of the stream to someone else (STREAM-6): on 0 *w
	 * was taken (its strings belong to the taker and *w is zeroed) and this request
	 * is done with the stream; on -1 the request goes on following it itself. */
	int (*park)(void *impl, struct th_watch *w);
};

/* Sends the events of w's task in ev[0..n) (ascending seq) that w has not had and may
 * see, through emit, advancing w->cursor (and w->generation; with w->generations each
 * task, status and artifact event carries it). Returns 1 when the stream is over (an
 * event that closes it was sent, or emit failed; for a long poll: the generation passed
 * wait_above), -1 when st could not answer whether w's viewer may see a side-channel
 * event (CH-2, CH-3): w->cursor stays before it, for the caller to read again; else 0. */
int th_stream_deliver(struct th_store *st, struct th_watch *w, const struct th_event *ev, size_t n,
                      int (*emit)(void *arg, int64_t seq, const char *json), void *arg);

/* SendStreamingMessage: accepts the message like SendMessage, then streams the Task
 * and every event until the task is terminal or INPUT_REQUIRED, running the turn
 * this message queued in between. An error before anything was sent is returned
 * and the sink was never opened. */
th_err th_harness_stream_send(const struct th_turn_ctx *tc, const char *participant,
                              unsigned extensions, const struct th_send_req *req, int generations,
                              struct th_sink *sink, struct th_error *e);

/* SubscribeToTask: the current Task, then every new event until the task is
 * terminal, the client goes away or the configured maximum duration passes.
 * last_event_id >= 0 resumes after that sequence number instead of the Task. A task of
 * another tenant than tenant is not found (TEN-2). */
th_err th_harness_subscribe(const struct th_turn_ctx *tc, const char *participant,
                            const char *tenant, const char *task_id, int64_t last_event_id,
                            int generations, struct th_sink *sink, struct th_error *e);
/* generations (A2A 1.1, A2A-11-GEN-2): every Task, status and artifact event carries the
 * task's generation after it. */

#endif
