/* SPDX-License-Identifier: Apache-2.0 */
/* intake.h — accepting a SendMessage (TASK-2, TASK-6, TASK-7, CTL-1): the message is
 * committed with its turn queued, and nothing has run yet. th_harness_send and the
 * streaming send build on it. */
#ifndef TH_OPS_INTAKE_H
#define TH_OPS_INTAKE_H

#include <json-c/json.h>
#include <stdint.h>

#include "a2a/a2a.h"
#include "app.h"
#include "util/err.h"

/* On TH_OK: task_id names the task; *turn_id is the queued turn (0 when none: a
 * resend, TASK-7, or a turn that already ran: with inline_turn set (an instant model),
 * th_turn_inline runs it in the transaction that accepts the message); *final_task is set (a new
 * reference) when the message was a completion that already produced the task's final view (CTL-5)
 * or its CTL-4 refusal, or, when an inline turn ran, the blocking send's answer: the task as
 * that transaction left it, as the participant sees it, with the request's historyLength. */
th_err th_intake_accept(struct th_app *app, const char *participant, unsigned extensions,
                        const struct th_send_req *req, int inline_turn, char task_id[TH_ID_BUF],
                        int64_t *turn_id, json_object **final_task, struct th_error *e);

#endif
