/* SPDX-License-Identifier: Apache-2.0 */
/* ops.h — the operations the service layer calls: send, get, list, cancel, and the
 * control envelope a client completes a task with. They are written against the
 * domain (domain/), the turn engine (turn/) and the store; nothing here knows a
 * binding. Task results are ProtoJSON Task objects. */
#ifndef TH_OPS_OPS_H
#define TH_OPS_OPS_H

#include <json-c/json.h>

#include "a2a/a2a.h"
#include "turn/context.h"
#include "util/err.h"

struct th_config;
struct th_memo;
struct th_store;

/* Each operation is handed what it uses of the process, borrowed for the call: the store
 * and the settings, and where it runs or notices turns the turn engine's context
 * (turn/context.h: also the commands, the tools and the after-response queue), never the
 * process context (decision-056). */

/* SendMessage (TASK-2, TASK-6, TASK-7, CTL-1..CTL-7): creates a task or continues
 * one, or completes it when the message is a control envelope. Runs the turn unless
 * req->return_immediately, in which case the turn is left to tc->defer; an expired turn
 * of another message is only ever left there (TURN-7). *task is the Task as a
 * GetTask with req's historyLength (else the configured default) shows it after the last
 * commit, built in one place (decision-049). */
th_err th_harness_send(const struct th_turn_ctx *tc, const char *participant, unsigned extensions,
                       const struct th_send_req *req, json_object **task, struct th_error *e);

/* GetTask (ID-3, STREAM-5). *task serialises to the Task; it may be the Task's text kept
 * verbatim (th_json_raw, decision-029), so it is for writing out, not for reading.
 * answers (NULL: none) keeps answers while the database stays the same (util/memo.h). A
 * noticed expired turn is left to tc->defer (TURN-7). */
th_err th_harness_get(const struct th_turn_ctx *tc, struct th_memo *answers,
                      const char *participant, const struct th_get_req *req, json_object **task,
                      struct th_error *e);

/* A2A-11-GEN-1, A2A-11-GEN-4: the Task as GetTask shows it to participant (read access
 * checked), with history entries of history, as JSON text carrying its generation
 * (*text: free), with *generation and the task's *last_seq, all in one snapshot (on
 * PostgreSQL one round trip, as th_harness_get's). Used for a 1.1 client's GetTask, and
 * by the stream thread to answer a waiting one. expiry (NULL: not read) gets the expiry
 * of the task's first live turn as th_turn_expiry gives it, lease_ms after queueing. */
th_err th_harness_task_text(struct th_store *st, const char *participant, const char *tenant,
                            const char *task_id, int history, int lease_ms, int64_t *expiry,
                            char **text, int64_t *generation, int64_t *last_seq,
                            struct th_error *e);

/* ListTasks (ID-3, STREAM-5): a ListTasksResponse. */
th_err th_harness_list(struct th_store *st, const char *participant, const struct th_list_req *req,
                       json_object **response, struct th_error *e);

/* CancelTask (CTL-6, CTL-8). */
th_err th_harness_cancel(struct th_store *st, const struct th_config *cfg, const char *participant,
                         const struct th_cancel_req *req, json_object **task, struct th_error *e);

/* The completion message of CTL-9: a Message whose only part is the control
 * envelope {"kind":"control","action":"complete"}, for task_id, asserting
 * participant_id in metadata. A new reference. */
json_object *th_complete_message(const char *task_id, const char *participant_id);

#endif
