/* SPDX-License-Identifier: Apache-2.0 */
/* control.h — ending a task: completion by control envelope (CTL-1..CTL-7, CTL-9)
 * and cancellation (CTL-6, CTL-8). Both act at once in the worker that receives
 * them and cut any running turn, in whichever process it runs (CTL-3). */
#ifndef TH_OPS_CONTROL_H
#define TH_OPS_CONTROL_H

#include <json-c/json.h>

#include "util/err.h"

struct th_config;
struct th_store;

/* Completes task_id for participant (CTL-2..CTL-6), or parks it saying which sub-tasks
 * are unresolved (CTL-4). msg is the canonical control message (kept in history when the
 * completion succeeds). Builds no view: the SendMessage that carried it answers with the
 * task as it is then, as every SendMessage does (th_harness_send). */
th_err th_control_complete(struct th_store *st, const char *participant, const char *tenant,
                           const char *task_id, json_object *msg, struct th_error *e);

/* Cancels task_id and its unresolved sub-tasks (CTL-6, CTL-8). Both find task_id only in
 * tenant (TEN-2). */
th_err th_control_cancel(struct th_store *st, const struct th_config *cfg, const char *participant,
                         const char *tenant, const char *task_id, json_object **task,
                         struct th_error *e);

#endif
