/* SPDX-License-Identifier: Apache-2.0 */
/* view.h — how a stored task looks on the wire: the Task object with its status,
 * history, artifacts and the task and status extensions in metadata (TASK-1,
 * STATUS-1..3). Built from rows on every read, so nothing derivable is stored twice. */
#ifndef TH_DOMAIN_VIEW_H
#define TH_DOMAIN_VIEW_H

#include <json-c/json.h>
#include <stddef.h>

#include "store/store.h"
#include "util/err.h"

/* TaskStatus of row (state, stored status message, timestamp). A new reference. */
json_object *th_view_status(const struct th_task_row *row);

/* th_view_status of a row whose status_message_json was just set to th_json_text(message)
 * (message NULL: none): the same TaskStatus without parsing that text back. message is
 * borrowed; the status holds a reference to it. */
json_object *th_view_status_of(const struct th_task_row *row, json_object *message);

/* {"…/status": {sub_state…}} while INPUT_REQUIRED, else NULL (STATUS-2). */
json_object *th_view_status_metadata(const struct th_task_row *row);

/* The task-extension object: name, goal, the stored attributes, participants,
 * parent_tasks and sub_tasks from their tables (TASK-1). */
th_err th_view_task_ext(struct th_store *st, const struct th_task_row *row, json_object **out,
                        struct th_error *e);

/* The plan object {steps:[…]} from the task's plan_steps, or NULL (no plan). */
th_err th_view_plan(struct th_store *st, const char *task_id, json_object **out,
                    struct th_error *e);

/* The whole Task as viewer sees it: side-channel messages of channels viewer is not a
 * member of are left out of the history (CH-2); viewer NULL shows everything.
 * history_length < 0 or over TH_HISTORY_MAX: TH_HISTORY_MAX; 0: no history key. The
 * history is read from its end in pages and stops growing before TH_HISTORY_BYTES_MAX
 * bytes of messages (the newest message is always given) (SEC-3). */
th_err th_view_task(struct th_store *st, const struct th_task_row *row, const char *viewer,
                    int history_length, int include_artifacts, json_object **out,
                    struct th_error *e);

/* SEC-3: the most messages one task view carries, whatever historyLength asks (the
 * official SDKs' page limit), and the most bytes of stored message text it holds. */
#define TH_HISTORY_MAX 1000
#define TH_HISTORY_BYTES_MAX (8 * 1024 * 1024)

/* SCALE-1: the reads th_view_task_within will make for row, sent ahead in the read
 * transaction st has begun (th_store_expect_view), so that the views of a ListTasks page
 * cost one round trip on PostgreSQL rather than several each; on SQLite nothing. */
void th_view_expect_within(struct th_store *st, const struct th_task_row *row, const char *viewer,
                           int history_length, int include_artifacts);

/* th_view_task with the history's bytes taken from *left (decreased), so that the views
 * of one ListTasks page share one TH_HISTORY_BYTES_MAX (SEC-3). */
th_err th_view_task_within(struct th_store *st, const struct th_task_row *row, const char *viewer,
                           int history_length, int include_artifacts, size_t *left,
                           json_object **out, struct th_error *e);

/* The Task th_view_task(row, any viewer, history_length, with artifacts) builds for a
 * task whose only change since `before` was a status transition (row is the task after
 * it) that appended `reply` to the history; before is the Task th_task_create recorded
 * for a task with no side channels and no artifacts. Built without reading the task
 * again (the blocking answer to a new task's first message). before and reply are
 * borrowed; NULL when out of memory. */
json_object *th_view_task_replied(json_object *before, const struct th_task_row *row,
                                  json_object *reply, int history_length);

/* Loads the row and builds the Task; TH_ENOTFOUND if the task is gone. */
th_err th_view_task_by_id(struct th_store *st, const char *id, const char *viewer,
                          int history_length, int include_artifacts, json_object **out,
                          struct th_error *e);

/* What th_view_task_read reads in the view's snapshot besides the view (decision-069). */
struct th_view_checks {
	const char *access;  /* not NULL: th_access_check(viewer, TH_ACCESS_READ, access) first;
	                        its refusal is returned and no view is built */
	const char *tenant;  /* with access: the request's tenant (TEN-2); borrowed */
	int64_t *expiry;     /* not NULL: the first live turn's expiry into it, as th_turn_expiry
	                        gives it (-1 none, -2 not known) */
	int lease_ms;        /* with expiry: a queued turn expires lease_ms after it was queued */
	int64_t *version;    /* not NULL: th_store_data_version read just before the snapshot
	                        into it (th_store_read_version; -1 not known) */
	int64_t *generation; /* not NULL: after the view, the task's generation into it and its
	                        last event seq into *last_seq (A2A-11-GEN-1) */
	int64_t *last_seq;
};

/* th_view_task_by_id with the checks of x (NULL: none) in the same snapshot. On
 * PostgreSQL the snapshot's BEGIN, every read a usual view makes and its ROLLBACK take
 * one round trip (th_store_read_seal); a view that needs more (a long history, a side
 * channel's members) is read again in a snapshot of its own (SCALE-1). */
th_err th_view_task_read(struct th_store *st, const char *id, const char *viewer,
                         int history_length, int include_artifacts, const struct th_view_checks *x,
                         json_object **out, struct th_error *e);

/* The side channel a message was posted on (borrowed), or NULL when it is not a
 * side-channel message (the task channel is everybody's). */
const char *th_view_side_channel(json_object *msg, const char *task_id);

/* SEC-3, SEC-2: a turn's model context without reading the whole history: the newest
 * messages a turn's audience may read (decision-034: the task channel's and, when channel
 * is a side channel, that channel's; channel NULL: a turn for the task channel), at most max_msgs
 * of them and, once one is taken, no more than max_bytes of stored text (the newest is always
 * given), oldest first, as a new array in *out. The history is walked back from its end
 * (th_store_history_back): a message left out is freed before the next is read, and the
 * walk stops once the window is full. max_msgs 0: an empty window. */
th_err th_view_history_window(struct th_store *st, const char *task_id, const char *channel,
                              int max_msgs, size_t max_bytes, json_object **out,
                              struct th_error *e);

#endif
