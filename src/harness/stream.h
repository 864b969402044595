/* stream.h — following a task's event log (STREAM-1, STREAM-2, STREAM-4).
 *
 * Every event of a task is a row in `events`, numbered in the transaction that made
 * the change; a stream reads them by sequence, from any worker process, polling with
 * PRAGMA data_version so idle polls cost nothing and no read transaction stays open
 * while it sleeps. The binding supplies a sink that frames what it is given. */
#ifndef TH_HARNESS_STREAM_H
#define TH_HARNESS_STREAM_H

#include <json-c/json.h>
#include <stdint.h>

#include "a2a/a2a.h"
#include "app.h"
#include "util/err.h"

struct th_sink {
	void *impl;
	/* Sends the stream's headers; called once, before the first event. 0 or -1. */
	int (*open)(void *impl);
	/* One StreamResponse (borrowed) and its sequence number; -1 when the client is gone. */
	int (*event)(void *impl, int64_t seq, json_object *stream_response);
	/* A comment line that keeps proxies from timing out; -1 when the client is gone. */
	int (*heartbeat)(void *impl);
};

/* SendStreamingMessage: accepts the message like SendMessage, then streams the Task
 * and every event until the task is terminal or INPUT_REQUIRED, running the turn
 * this message queued in between. An error before anything was sent is returned
 * and the sink was never opened. */
th_err th_harness_stream_send(struct th_app *app, const char *participant, unsigned extensions,
                              const struct th_send_req *req, struct th_sink *sink,
                              struct th_error *e);

/* SubscribeToTask: the current Task, then every new event until the task is
 * terminal, the client goes away or the configured maximum duration passes.
 * last_event_id >= 0 resumes after that sequence number instead of the Task. */
th_err th_harness_subscribe(struct th_app *app, const char *participant, const char *task_id,
                            int64_t last_event_id, struct th_sink *sink, struct th_error *e);

#endif
