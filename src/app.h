/* SPDX-License-Identifier: Apache-2.0 */
/* app.h — the process context: what one worker process holds across requests.
 * worker/process.h builds it once after the worker starts (never across fork) and
 * frees it at exit; every request borrows it (each thread of a worker has its own
 * struct th_app). It goes no lower than service/: the operations (ops/) and the turn
 * engine (turn/) are handed only what they use, the store and the settings or the
 * turn engine's context that th_app_turns lends (decision-056). */
#ifndef TH_APP_H
#define TH_APP_H

#include <json-c/json.h>
#include <stddef.h>
#include <stdint.h>

#include "turn/context.h"
#include "util/err.h"

struct th_config;
struct th_store;
struct th_registry;
struct th_memo;

/* Whoever takes open streams off the request that opened them (STREAM-6): the FastCGI
 * worker's stream thread. The binding reserves a slot with room() before it starts a
 * stream, and then either hands the stream over with take(), which uses the reservation,
 * or gives the reservation back with unreserve(); see struct th_bind_parked. */
struct th_bind_parked;
enum { TH_PARKER_ROOM = 0, TH_PARKER_FULL = 1, TH_PARKER_MINE = 2 };
struct th_parker {
	void *impl;
	/* Whether participant (NULL: none) may open one more stream, and if so the slot,
	 * counted for the worker and for participant in the same step (SEC-3: concurrent
	 * requests of one participant never pass the cap together): TH_PARKER_ROOM (reserved),
	 * or TH_PARKER_FULL at stream_max, or TH_PARKER_MINE when participant holds
	 * stream_max_per_participant already (nothing reserved). */
	int (*room)(void *impl, const char *participant);
	/* 0: *p was moved to the parker (zeroed here) on the slot room() reserved for
	 * p->watch.viewer; -1: nothing was taken and the reservation stands. */
	int (*take)(void *impl, struct th_bind_parked *p);
	/* Gives back a reservation of room() that no stream was handed over on. */
	void (*unreserve)(void *impl, const char *participant);
};

/* HOST-2 (decision-084): where a worker that is not its database's writer hands the
 * requests that write (worker/handoff.c). forward() passes the request io carries, whose
 * body (len bytes) the binding has read and which nothing was written to yet, to the
 * writer, which answers it on the web server's connection: 1 handed over (io is done
 * with), 0 not taken (serve it here: nothing of it was applied). */
struct th_http_io;
struct th_handoff {
	void *impl;
	int (*forward)(void *impl, struct th_http_io *io, const char *body, size_t len);
};

/* Work the worker runs after the response is finished (struct th_defer): a turn accepted
 * by a request that answered at once (returnImmediately, TURN-5) or a sub-task's first
 * turn (turn_id > 0, held by this worker), or the recovery of a task whose turn's lease a
 * read noticed expired (turn_id 0, TURN-7). */
struct th_pending_turn {
	char *task_id; /* free (th_app_run_pending) */
	int64_t turn_id;
};

struct th_app {
	struct th_config *cfg;           /* owned; th_app_close (th_config_free + free) */
	struct th_store *store;          /* owned; th_app_close (th_store_close) */
	struct th_registry *commands;    /* owned; th_app_close (th_registry_free) */
	json_object *card;               /* owned; the agent card, built on the first request
	                                    that needs it (th_service_card); NULL until then.
	                                    th_app_close (json_object_put) */
	char *card_text;                 /* owned; card as served, serialised with it; th_app_close
	                                    (free) */
	char card_etag[24];              /* card_text's entity tag (TH_CARD_ETAG_MAX) */
	json_object *tools;              /* owned; the intrinsic tools offered to models (TURN-3),
	                                    parsed from the embedded schemas on the first turn that
	                                    offers them (th_intrinsics_tools_of); NULL until then.
	                                    th_app_close (json_object_put) */
	struct th_pending_turn *pending; /* after-response work; free (th_app_close) */
	size_t npending, cap_pending;
	/* Queues on this app's pending work (impl: the app; th_app_defer), set by th_app_open.
	 * th_app_turns lends it with the app it is called on, so the app may be copied. */
	th_err (*defer)(void *impl, const char *task_id, int64_t turn_id);
	int64_t push_poll_ms;     /* monotonic time of the next look for due pushes
	                             queued by other workers (th_push_deliver_due) */
	struct th_parker *parker; /* borrowed from the worker loop; NULL (CGI, tests):
	                             each request follows its own stream */
	/* Borrowed from the worker loop; NULL (CGI, tests, PostgreSQL, the writer's own
	 * threads): every request is served here. */
	struct th_handoff *handoff;
	struct th_memo *answers; /* owned; GetTask answers while the database stays the
	                            same (ops/query.c); NULL: none kept. th_app_close
	                            (th_memo_free) */
};

/* What the turn engine, and the operations that run or notice turns, are lent of app for
 * one call (turn/context.h). */
static inline struct th_turn_ctx th_app_turns(struct th_app *app)
{
	return (struct th_turn_ctx){.store = app->store,
	                            .cfg = app->cfg,
	                            .commands = app->commands,
	                            .tools = &app->tools,
	                            .defer = {.queue = app->defer, .impl = app}};
}

#endif
