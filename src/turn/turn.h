/* SPDX-License-Identifier: Apache-2.0 */
/* turn.h — one pass of the harness over a task (TURN-1): claim the queued turn,
 * hand the new input to the model outside any transaction, then write the reply and
 * park the task (CTL-7) in one transaction that first checks the cut flag (CTL-3), so
 * a cut turn can never overwrite a completed or canceled task. Built-in commands run
 * inside that last transaction. Turns hold leases (TURN-4). */
#ifndef TH_TURN_TURN_H
#define TH_TURN_TURN_H

#include <json-c/json.h>
#include <stdint.h>

#include "store/store.h"
#include "turn/context.h"
#include "util/err.h"

/* Every function here is handed the process's store, settings, commands, tools and
 * after-response queue in tc (turn/context.h), borrowed for the call. */

/* Runs a turn this worker queued to its end. A turn cut before it started, or taken
 * over by another worker after its lease expired, is left alone (TH_OK). */
th_err th_turn_run(const struct th_turn_ctx *tc, const char *task_id, int64_t turn_id,
                   struct th_error *e);

/* 1 when the configured model answers at once in this process (echo without a delay):
 * such a turn may run inside the transaction that accepts its message (th_turn_inline). */
int th_turn_instant(const struct th_config *cfg);

/* What an inline turn that only replied leaves (th_turn_inline). */
struct th_turn_reply {
	struct th_task_row row; /* the task as the turn left it; th_turn_reply_free */
	json_object *message;   /* the reply appended to its history; th_turn_reply_free */
};
void th_turn_reply_free(struct th_turn_reply *r);

/* Runs the turn for message_id of task_id to its end inside the caller's write
 * transaction: the message, the reply and the parked task commit together (one
 * transaction instead of two), and the turn needs no row and no lease: it cannot outlive
 * its transaction. Only for th_turn_instant models, never for a model that does I/O
 * (exec, openai), which must not run inside a transaction. input is the message as
 * stored (borrowed). With out (zeroed by the caller): when the turn's only change was
 * its reply and the move to INPUT_REQUIRED, out->message is the reply and out->row the
 * task after it (th_view_task_replied builds the view from them); when it did more (a
 * command, an A2UI decision, a failure, completing a sub-task), out->message stays NULL. */
th_err th_turn_inline(const struct th_turn_ctx *tc, const char *task_id, json_object *input,
                      struct th_turn_reply *out, struct th_error *e);

/* The moment (ms since the epoch) the task's first live turn expires (a running turn's
 * lease ends, or a queued one goes unclaimed for lease_ms): it stays the same while
 * nothing is committed. -1 when the task has no live turn, -2 when the database could
 * not tell. One indexed query on the task's live turns: every reader that watches a task
 * (GetTask, a stream, the stream thread) asks this, never a scan of all turns. */
int64_t th_turn_expiry(struct th_store *st, int lease_ms, const char *task_id);

/* 1 when th_turn_expiry has passed: a read that sees it hands the task to after-response
 * work (TURN-7). */
int th_turn_expired(struct th_store *st, int lease_ms, const char *task_id);

/* Takes over turns whose worker died (TURN-4): running turns whose lease expired and
 * queued turns nobody claimed within a lease; task_id limits it to one task (NULL: all).
 * A turn past the configured number of attempts fails its task with the reason;
 * the others run here to their end. *recovered (may be NULL) counts the turns handled. */
th_err th_turn_recover(const struct th_turn_ctx *tc, const char *task_id, int *recovered,
                       struct th_error *e);

#endif
