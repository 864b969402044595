/* SPDX-License-Identifier: Apache-2.0 */
#include "domain/plan.h"

#include <string.h>

#include "domain/status.h"
#include "domain/view.h"
#include "util/jsonx.h"

/* TASK-8: kind (plan_updated, step_updated) with {step?, plan}; step is consumed. */
static th_err announce(struct th_store *st, const struct th_task_row *row, const char *kind,
                       json_object *step, struct th_error *e)
{
	json_object *plan = NULL;
	th_err rc = th_view_plan(st, row->id, &plan, e);
	json_object *payload = rc == TH_OK ? json_object_new_object() : NULL;
	if (rc == TH_OK && payload == NULL)
		rc = th_error_set(e, TH_ENOMEM, "out of memory");
	if (rc != TH_OK) {
		json_object_put(plan);
		json_object_put(step);
		return rc;
	}
	int bad = step != NULL && th_json_put(payload, "step", step) != 0;
	bad |= th_json_put_null(payload, "plan", plan); /* no plan: null */
	if (bad) {
		json_object_put(payload);
		return th_error_set(e, TH_ENOMEM, "out of memory building a plan event");
	}
	return th_status_announce(st, row, kind, payload, e);
}

th_err th_plan_replace(struct th_store *st, const struct th_task_row *row,
                       const struct th_plan_step_in *steps, size_t n, struct th_error *e)
{
	th_err rc = th_store_plan_replace(st, row->id, steps, n, e);
	return rc == TH_OK ? announce(st, row, "plan_updated", NULL, e) : rc;
}

const struct th_plan_step *th_plan_find_step(const struct th_plan_step *steps, size_t n,
                                             const char *id_or_name)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(steps[i].step_id, id_or_name) == 0 ||
		    strcmp(steps[i].name, id_or_name) == 0)
			return &steps[i];
	return NULL;
}

th_err th_plan_step_set(struct th_store *st, const struct th_task_row *row, const char *step_id,
                        int state, const char *output, struct th_error *e)
{
	th_err rc = th_store_plan_step_update(st, row->id, step_id, state, output, NULL, e);
	if (rc != TH_OK)
		return rc;
	json_object *step = json_object_new_object();
	int bad = th_json_put(step, "id", json_object_new_string(step_id));
	bad |= th_json_put(step, "state", json_object_new_string(th_store_step_state_name(state)));
	if (output != NULL)
		bad |= th_json_put(step, "output", json_object_new_string(output));
	if (bad) {
		json_object_put(step);
		return th_error_set(e, TH_ENOMEM, "out of memory building a step_updated event");
	}
	return announce(st, row, "step_updated", step, e);
}

th_err th_plan_step_link(struct th_store *st, const struct th_task_row *row,
                         const struct th_plan_step *step, const char *task_id, struct th_error *e)
{
	json_object *linked =
	    step->linked_tasks_json != NULL ? json_tokener_parse(step->linked_tasks_json) : NULL;
	if (!json_object_is_type(linked, json_type_array)) { /* none yet (or unreadable) */
		json_object_put(linked);
		linked = json_object_new_array();
	}
	json_object *ev = json_object_new_object();
	int bad = linked == NULL || th_json_push(linked, json_object_new_string(task_id)) != 0;
	bad |= th_json_put(ev, "id", json_object_new_string(step->step_id));
	bad |= th_json_put(ev, "state",
	                   json_object_new_string(th_store_step_state_name(TH_STEP_ACTIVE)));
	const char *text = bad ? NULL : th_json_text(linked);
	if (text == NULL || th_json_put(ev, "linked_tasks", json_object_get(linked)) != 0) {
		json_object_put(linked);
		json_object_put(ev);
		return th_error_set(e, TH_ENOMEM, "out of memory building a step's linked tasks");
	}
	th_err rc =
	    th_store_plan_step_update(st, row->id, step->step_id, TH_STEP_ACTIVE, NULL, text, e);
	json_object_put(linked);
	if (rc != TH_OK) {
		json_object_put(ev);
		return rc;
	}
	return announce(st, row, "step_updated", ev, e);
}

th_err th_plan_participant_set(struct th_store *st, const struct th_task_row *row,
                               const struct th_participant_in *p, struct th_error *e)
{
	th_err rc = th_store_participant_put(st, row->id, p, e);
	return rc == TH_OK ? th_status_announce_participants(st, row, p->id, p->role, e) : rc;
}
