/* SPDX-License-Identifier: Apache-2.0 */
#include "domain/task.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "a2a/a2a.h"
#include "domain/events.h"
#include "domain/status.h"
#include "domain/view.h"
#include "util/jsonx.h"

static th_err store_plan(struct th_store *st, const char *task_id, json_object *plan,
                         struct th_error *e)
{
	json_object *steps = json_object_object_get(plan, "steps");
	size_t n = json_object_array_length(steps);
	if (n == 0)
		return TH_OK;
	struct th_plan_step_in *rows = calloc(n, sizeof *rows);
	if (rows == NULL)
		return th_error_set(e, TH_ENOMEM, "out of memory");
	for (size_t i = 0; i < n; i++) {
		json_object *s = json_object_array_get_idx(steps, i), *v = NULL;
		rows[i].step_id = th_json_str(s, "id");
		rows[i].name = th_json_str(s, "name");
		rows[i].description = th_json_str(s, "description");
		rows[i].output = th_json_str(s, "output");
		if (json_object_object_get_ex(s, "depends_on", &v))
			rows[i].depends_on_json = th_json_text(v);
		if (json_object_object_get_ex(s, "linked_tasks", &v))
			rows[i].linked_tasks_json = th_json_text(v);
		rows[i].state = th_store_step_state_from_name(th_json_str(s, "state"));
	}
	th_err rc = th_store_plan_replace(st, task_id, rows, n, e);
	free(rows);
	return rc;
}

/* *dst = a copy of src (NULL stays NULL); 1 when out of memory. */
static int dup_or_null(char **dst, const char *src)
{
	*dst = src != NULL ? strdup(src) : NULL;
	return src != NULL && *dst == NULL;
}

/* The Task event's snapshot of the task just inserted from in. th_view_task takes a
 * row, which owns its strings: this one holds copies of in's. */
static th_err view_inserted(struct th_store *st, const struct th_task_in *in, json_object **out,
                            struct th_error *e)
{
	struct th_task_row row = {
	    .state = in->state,
	    .status_ms = in->status_ms,
	    .created_ms = in->created_ms,
	    .updated_ms = in->updated_ms,
	};
	int bad = dup_or_null(&row.id, in->id);
	bad |= dup_or_null(&row.context_id, in->context_id);
	bad |= dup_or_null(&row.sub_state, in->sub_state);
	bad |= dup_or_null(&row.status_meta_json, in->status_meta_json);
	bad |= dup_or_null(&row.status_message_json, in->status_message_json);
	bad |= dup_or_null(&row.name, in->name);
	bad |= dup_or_null(&row.goal, in->goal);
	bad |= dup_or_null(&row.ext_json, in->ext_json);
	bad |= dup_or_null(&row.created_by, in->created_by);
	bad |= dup_or_null(&row.parent_id, in->parent_id);
	th_err rc = bad ? th_error_set(e, TH_ENOMEM, "out of memory building a task view")
	                : th_view_task(st, &row, NULL, -1, 0, out, e);
	th_task_row_free(&row);
	return rc;
}

th_err th_task_create(struct th_store *st, const struct th_new_task *nt, int64_t *turn_id,
                      json_object **snapshot_out, struct th_error *e)
{
	if (snapshot_out != NULL)
		*snapshot_out = NULL;
	json_object *ext = json_object_new_object();
	if (ext == NULL)
		return th_error_set(e, TH_ENOMEM, "out of memory");
	/* Only what differs from the defaults is stored (th_view_task_ext, STORE-10). */
	int bad = 0;
	if (nt->type != NULL)
		bad |= th_json_put(ext, "type", json_object_get(nt->type));
	if (nt->description != NULL && nt->description[0] != '\0')
		bad |= th_json_put(ext, "description", json_object_new_string(nt->description));
	if (nt->criteria != NULL && !(json_object_is_type(nt->criteria, json_type_array) &&
	                              json_object_array_length(nt->criteria) == 0))
		bad |= th_json_put(ext, "acceptance_criteria", json_object_get(nt->criteria));
	bad |= th_json_put(nt->first, "taskId", json_object_new_string(nt->id));
	bad |= th_json_put(nt->first, "contextId", json_object_new_string(nt->context_id));
	if (bad) {
		json_object_put(ext);
		return th_error_set(e, TH_ENOMEM, "out of memory building a new task");
	}
	int64_t now = th_store_now(st);
	const struct th_task_in in = {
	    .id = nt->id,
	    .context_id = nt->context_id,
	    /* An instant turn settles in this transaction, so no one could ever see the
	     * task SUBMITTED: it starts WORKING, with no status event of its own
	     * (decision-025). */
	    .state = nt->inline_turn ? TH_STATE_WORKING : TH_STATE_SUBMITTED,
	    .status_ms = now,
	    .name = nt->name,
	    .goal = nt->goal,
	    .ext_json = th_json_text(ext),
	    .created_by = nt->created_by,
	    .parent_id = nt->parent,
	    .created_ms = now,
	    .updated_ms = now,
	    .tenant = nt->tenant,
	};
	const char *mid = th_json_str(nt->first, "messageId");
	json_object *snapshot = NULL, *ev = NULL;
	th_err rc = th_store_task_insert(st, &in, e);
	if (rc == TH_OK)
		rc = th_store_participants_add_new(st, nt->id, nt->ps, nt->nps, e);
	if (rc == TH_OK && nt->parent != NULL)
		rc = th_store_subtask_link(st, nt->parent, nt->id, e);
	if (rc == TH_OK && nt->plan != NULL)
		rc = store_plan(st, nt->id, nt->plan, e);
	if (rc == TH_OK)
		rc = th_store_message_append(st, nt->id, mid, "ROLE_USER", nt->first_sender,
		                             nt->first, e);
	if (rc == TH_OK)
		rc = view_inserted(st, &in, &snapshot, e);
	json_object_put(ext);
	if (rc != TH_OK)
		return rc;
	/* The first event of every task is the Task itself (STREAM-1). */
	ev = json_object_new_object();
	json_object *kept = snapshot_out != NULL ? json_object_get(snapshot) : NULL;
	if (th_json_put(ev, "task", snapshot) != 0)
		rc = th_error_set(e, TH_ENOMEM, "out of memory building a task event");
	else
		rc = th_event_record(st, nt->id, "task", NULL, ev, e);
	json_object_put(ev);
	if (rc == TH_OK && snapshot_out != NULL)
		*snapshot_out = kept;
	else
		json_object_put(kept);
	struct th_task_row live = {0};
	if (rc == TH_OK && !nt->inline_turn)
		rc = th_store_task_get(st, nt->id, &live, e);
	if (rc == TH_OK && !nt->inline_turn)
		rc = th_status_transition(st, &live, TH_STATE_WORKING, NULL, NULL, 0, e);
	if (rc == TH_OK)
		rc = th_task_queue_turn(st, nt->id, mid, nt->lease_ms, nt->inline_turn, turn_id, e);
	th_task_row_free(&live);
	return rc;
}

th_err th_task_queue_turn(struct th_store *st, const char *task_id, const char *message_id,
                          int lease_ms, int inline_turn, int64_t *turn_id, struct th_error *e)
{
	if (inline_turn) {
		*turn_id = TH_TURN_INLINE;
		return TH_OK;
	}
	/* The worker that accepts a message runs its turn, so it takes the lease in the
	 * same transaction; if it dies first, the lease expires like any other (TURN-4). */
	struct th_lease l;
	th_err rc = th_store_turn_start(st, task_id, message_id, (int)getpid(), lease_ms, &l, e);
	*turn_id = l.turn_id;
	return rc;
}
