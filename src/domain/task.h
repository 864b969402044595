/* SPDX-License-Identifier: Apache-2.0 */
/* task.h — creating a task, whichever way it starts: a participant's plain text
 * (TASK-2), a task envelope (TASK-4), or /subtask (TASK-4). One function writes the
 * rows, the first message, the opening events and the first turn. */
#ifndef TH_DOMAIN_TASK_H
#define TH_DOMAIN_TASK_H

#include <json-c/json.h>
#include <stdint.h>

#include "store/store.h"
#include "util/err.h"

struct th_new_task {
	const char *id; /* the id to use (sub-tasks: "<parent>.<n>") */
	const char *context_id;
	const char *name;
	const char *goal;
	json_object *type;                  /* string or null, or NULL = null */
	const char *description;            /* NULL = "" */
	json_object *criteria;              /* [{text, met}] or NULL = [] */
	const struct th_participant_in *ps; /* every participant, harness included; each once */
	size_t nps;
	const char *parent;     /* parent task id or NULL */
	json_object *plan;      /* {steps:[…]} or NULL */
	const char *created_by; /* whose message started it (CTL-7) */
	json_object *first;     /* the first message (taskId/contextId are set here) */
	const char *first_sender;
	int lease_ms;       /* the first turn's lease (configuration) */
	int inline_turn;    /* the caller runs the first turn inline (th_task_queue_turn) */
	const char *tenant; /* TEN-2: NULL or "" the default; a sub-task's is its parent's */
};

/* Inside the caller's transaction: inserts the task (SUBMITTED), its participants,
 * plan and parent link, the first message, the Task event, the move to WORKING and a
 * queued turn for the first message (*turn_id). With snapshot, *snapshot is the Task
 * event's Task (a view as th_view_task builds it for no viewer, every message, no
 * artifacts; the caller's reference, json_object_put), else NULL. */
th_err th_task_create(struct th_store *st, const struct th_new_task *nt, int64_t *turn_id,
                      json_object **snapshot, struct th_error *e);

/* *turn_id of a turn that th_turn_inline will run before the transaction commits. */
#define TH_TURN_INLINE (-1)

/* Queues the turn that answers message_id, inside the caller's transaction, leased at
 * once to this worker, which will run it (now, or after its response: TURN-5). With
 * inline_turn the caller runs it with th_turn_inline before committing: no row is
 * written and *turn_id is TH_TURN_INLINE. */
th_err th_task_queue_turn(struct th_store *st, const char *task_id, const char *message_id,
                          int lease_ms, int inline_turn, int64_t *turn_id, struct th_error *e);

#endif
