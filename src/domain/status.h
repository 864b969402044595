/* SPDX-License-Identifier: Apache-2.0 */
/* status.h — task state transitions and the status extension (STATUS-1..STATUS-4).
 *
 * Every change of a task's status goes through th_status_transition, which writes
 * the row (state, sub_state column, status metadata, status message) and appends
 * the matching statusUpdate event in the caller's transaction (STREAM-3). */
#ifndef TH_DOMAIN_STATUS_H
#define TH_DOMAIN_STATUS_H

#include <json-c/json.h>

#include "a2a/a2a.h"
#include "store/store.h"
#include "util/err.h"

/* Moves row to state. sub_state must be given exactly when state is INPUT_REQUIRED
 * (STATUS-1/2). message (borrowed, may be NULL) becomes the status message and, when
 * append_history is set, is also appended to the task's history. Updates row in
 * memory, writes it and appends {"statusUpdate":…} as the task's next event. */
th_err th_status_transition(struct th_store *st, struct th_task_row *row, enum th_state state,
                            json_object *sub_state_ext, json_object *message, int append_history,
                            struct th_error *e);

/* Announces a harness-side event that A2A has no object for (TASK-8): a statusUpdate
 * event whose status keeps the task's state and whose message is an agent message
 * carrying the envelope {"kind": kind, "payload": payload} as a data part. The stored
 * status is not changed. Takes ownership of payload. */
th_err th_status_announce(struct th_store *st, const struct th_task_row *row, const char *kind,
                          json_object *payload, struct th_error *e);

/* TASK-8: announces the task's participants after a change; who and role name the
 * participant changed (both NULL when several changed at once). */
th_err th_status_announce_participants(struct th_store *st, const struct th_task_row *row,
                                       const char *who, const char *role, struct th_error *e);

/* An agent message with one text part for row's task (a new reference). */
json_object *th_status_agent_text(const struct th_task_row *row, const char *text);

#endif
