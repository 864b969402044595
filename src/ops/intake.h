/* SPDX-License-Identifier: Apache-2.0 */
/* intake.h — accepting a SendMessage (TASK-2, TASK-6, TASK-7, CTL-1): the message is
 * committed with its turn queued, and nothing has run yet. th_harness_send and the
 * streaming send build on it. */
#ifndef TH_OPS_INTAKE_H
#define TH_OPS_INTAKE_H

#include <json-c/json.h>
#include <stdint.h>

#include "a2a/a2a.h"
#include "turn/turn.h"
#include "util/err.h"

/* What the commit of a SendMessage returned: everything its answer is built from
 * (th_harness_send builds it, in one place). th_intake_accept fills it; th_intake_free
 * frees it. */
struct th_intake {
	char task_id[TH_ID_BUF]; /* the task the message went to */
	int64_t turn_id;         /* the turn queued for the message, held by this worker; 0
	                            when none: a resend (TASK-7), a completion, no turn to
	                            start, or one that already ran inline */
	/* A new task whose inline turn only replied: the Task event th_task_create recorded
	 * and the turn's reply with the task after it (th_view_task_replied builds the answer
	 * from them). Otherwise NULL and empty. Both freed by th_intake_free. */
	json_object *created;
	struct th_turn_reply reply;
	int replayed;  /* 1: the Idempotency-Key named an earlier send of this message, whose
	                  task task_id names; nothing was stored (A2A-11-IDEM-1) */
	int lease_due; /* 1: a follow-up that queued no turn; whether a turn of its task
	                  outlived its lease (TURN-7) is still to be looked at, by the
	                  answer's read (SCALE-1, decision-069) or th_intake_look_lease */
};
void th_intake_free(struct th_intake *in);

/* Accepts the message into a new or existing task, or completes the task (CTL-1), in
 * one write transaction, and fills *out (zeroed first; on failure nothing is left to
 * free). With inline_turn set (an instant model), th_turn_inline runs the message's turn
 * in that transaction. Builds no answer and runs no turn of another message: a follow-up
 * to a task whose turn's worker died leaves that task to this worker's after-response
 * work (TURN-7), looked at here when the follow-up queued a turn (so that it is queued
 * before that turn), else left to the caller (out->lease_due). */
th_err th_intake_accept(const struct th_turn_ctx *tc, const char *participant, unsigned extensions,
                        const struct th_send_req *req, int inline_turn, struct th_intake *out,
                        struct th_error *e);

/* TURN-7 for an accepted follow-up whose lease look is still due (in->lease_due): a turn
 * of its task that outlived its lease is left to this worker's after-response work. For
 * a caller whose answer does not read it (th_view_checks.expiry). */
void th_intake_look_lease(const struct th_turn_ctx *tc, const struct th_intake *in);

#endif
