/* SPDX-License-Identifier: Apache-2.0 */
/* context.h — what the turn engine, and the operations that start or notice turns, are
 * handed of the process that runs them (issue 30, decision-056): the store, the settings,
 * the command registry, the place the intrinsic tools are kept, and a way to leave work
 * for after the response. Nothing here knows the process context (app.h) or the
 * worker: the process fills these in (app.h, th_app_turns) and lends them for one call. */
#ifndef TH_TURN_CONTEXT_H
#define TH_TURN_CONTEXT_H

#include <json-c/json.h>
#include <stdint.h>

#include "util/err.h"

struct th_config;
struct th_registry;
struct th_store;

/* Work for after the response is finished (TURN-5, TURN-7): run turn turn_id of task_id
 * (a turn this worker holds: a returnImmediately send's, a sub-task's first), or, with
 * turn_id 0, recover the task's expired turns. Each is also a row in `turns`, so work
 * lost with its worker is left to lease recovery. The worker implements it over its
 * queue (worker/process.c); queue is NULL where nothing runs after a response. */
struct th_defer {
	/* TH_OK when queued (a recovery queued twice is queued once); TH_ENOMEM when nothing
	 * was queued (the turn stays in `turns` for recovery). */
	th_err (*queue)(void *impl, const char *task_id, int64_t turn_id);
	void *impl; /* the queue's, borrowed */
};

/* Leaves task_id's turn_id (0: its recovery) for after the response through d.
 * TH_ENOMEM, queueing nothing, when d has no queue. */
th_err th_defer_turn(const struct th_defer *d, const char *task_id, int64_t turn_id);

/* Everything borrowed from the process for the length of one call. */
struct th_turn_ctx {
	struct th_store *store;             /* the thread's connection */
	const struct th_config *cfg;        /* the settings */
	const struct th_registry *commands; /* the slash commands (CMD-1) */
	json_object **tools;                /* where the intrinsic tools are kept once parsed
	                                       (th_intrinsics_tools_of); *tools is owned by the
	                                       process context, which puts it at its close */
	struct th_defer defer;              /* after-response work */
};

#endif
