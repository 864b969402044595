/* SPDX-License-Identifier: Apache-2.0 */
/* events.h — the one way the harness records an event of a task (STREAM-3): the
 * StreamResponse becomes the task's next event in the caller's transaction, and a
 * delivery is queued for each push config of the task (PUSH-2) in that same
 * transaction, so a subscriber, a resuming client and a webhook all see one log. */
#ifndef TH_DOMAIN_EVENTS_H
#define TH_DOMAIN_EVENTS_H

#include <json-c/json.h>
#include <stdint.h>

#include "a2a/a2a.h"
#include "store/store.h"
#include "util/err.h"

/* What an event that leaves a task in state s does to the streams following it
 * (TH_ENDS_TERMINAL, TH_ENDS_INTERRUPTED or TH_ENDS_NONE): the one rule for the ends an
 * event is recorded with and for a stream's first snapshot (STREAM-1, STREAM-2). */
enum th_event_ends th_event_ends_at(enum th_state s);

/* kind labels the row for operators ("task", "status", "artifact", "message"); a
 * side-channel message passes its channel_id (its kind becomes "channel:<id>", and
 * only members' push configs get it, CH-3), others pass NULL. */
th_err th_event_record(struct th_store *st, const char *task_id, const char *kind,
                       const char *channel_id, json_object *stream_response, struct th_error *e);

/* The task's events after seq `after` as a client receives them: th_store_events_since
 * (same arguments and ownership: th_events_free), with each task snapshot's task
 * extension whole again (STORE-10, decision-061; its name, goal and participants from
 * the snapshot's first message, decision-075) and each status update's status extension.
 * Every reader of the log for a client, a stream or an operator uses this one. */
th_err th_events_since(struct th_store *st, const char *task_id, int64_t after, int limit,
                       struct th_event **out, size_t *n, struct th_error *e);

#endif
