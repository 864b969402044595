/* SPDX-License-Identifier: Apache-2.0 */
#include "domain/envelope.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "a2a/a2a.h"
#include "domain/ext.h"
#include "util/jsonx.h"
#include "util/idrule.h"

void th_task_payload_free(struct th_task_payload *p)
{
	json_object_put(p->criteria);
	for (size_t i = 0; i < p->nps; i++) {
		free(p->ps[i].id);
		free(p->ps[i].kind);
		free(p->ps[i].role);
		free(p->ps[i].display_name);
	}
	free(p->ps);
	memset(p, 0, sizeof *p);
}

static const char *one_of(const char *v, const char *const *allowed)
{
	for (size_t i = 0; allowed[i] != NULL; i++)
		if (strcmp(v, allowed[i]) == 0)
			return allowed[i];
	return NULL;
}

static const char *const roles[] = {"assignee", "reporter", "watcher", "admin", NULL};
static const char *const kinds[] = {"human", "agent", NULL};

static th_err need_string(json_object *v, const char *path, int nonempty, struct th_error *e)
{
	if (!json_object_is_type(v, json_type_string))
		return th_error_set(e, TH_EINVAL, "%s must be a string", path);
	if (nonempty && json_object_get_string_len(v) == 0)
		return th_error_set(e, TH_EINVAL, "%s must not be empty", path);
	return TH_OK;
}

static th_err parse_participants(json_object *arr, const struct th_limits *lim,
                                 struct th_task_payload *out, struct th_error *e)
{
	if (!json_object_is_type(arr, json_type_array))
		return th_error_set(e, TH_EINVAL, "payload.participants must be an array");
	size_t n = json_object_array_length(arr);
	if (n > lim->max_participants)
		return th_error_set(
		    e, TH_EINVAL,
		    "payload.participants has %zu entries; the limit is %zu participants "
		    "per task",
		    n, lim->max_participants);
	out->ps = calloc(n ? n : 1, sizeof *out->ps);
	if (out->ps == NULL)
		return th_error_set(e, TH_ENOMEM, "out of memory");
	for (size_t i = 0; i < n; i++) {
		json_object *p = json_object_array_get_idx(arr, i);
		if (!json_object_is_type(p, json_type_object))
			return th_error_set(e, TH_EINVAL,
			                    "payload.participants[%zu] must be an object", i);
		static const char *const keys[] = {"id", "kind", "role", "display_name", NULL};
		const char *bad = th_json_unknown_key(p, keys);
		if (bad != NULL)
			return th_error_set(
			    e, TH_EINVAL,
			    "payload.participants[%zu]: unknown key '%.60s' (allowed: id, "
			    "kind, role, display_name)",
			    i, bad);
		json_object *id = json_object_object_get(p, "id"),
		            *role = json_object_object_get(p, "role");
		json_object *kind = json_object_object_get(p, "kind");
		json_object *dn = json_object_object_get(p, "display_name");
		char path[64];
		snprintf(path, sizeof path, "payload.participants[%zu].id", i);
		if (id == NULL)
			return th_error_set(e, TH_EINVAL, "%s is required", path);
		th_err rc = need_string(id, path, 1, e);
		if (rc != TH_OK)
			return rc;
		if ((rc = th_id_check(json_object_get_string(id),
		                      (size_t)json_object_get_string_len(id), lim->max_id, path,
		                      e)) != TH_OK)
			return rc;
		if (role == NULL || !json_object_is_type(role, json_type_string) ||
		    one_of(json_object_get_string(role), roles) == NULL)
			return th_error_set(
			    e, TH_EINVAL,
			    "payload.participants[%zu].role must be one of assignee, "
			    "reporter, watcher, admin",
			    i);
		if (kind != NULL && (!json_object_is_type(kind, json_type_string) ||
		                     one_of(json_object_get_string(kind), kinds) == NULL))
			return th_error_set(e, TH_EINVAL,
			                    "payload.participants[%zu].kind must be human or agent",
			                    i);
		if (dn != NULL && !json_object_is_type(dn, json_type_string))
			return th_error_set(
			    e, TH_EINVAL, "payload.participants[%zu].display_name must be a string",
			    i);
		for (size_t j = 0; j < out->nps; j++)
			if (strcmp(out->ps[j].id, json_object_get_string(id)) == 0)
				return th_error_set(
				    e, TH_EINVAL,
				    "payload.participants: '%.100s' is listed twice (one role "
				    "per participant)",
				    out->ps[j].id);
		struct th_participant *q = &out->ps[out->nps++];
		q->id = strdup(json_object_get_string(id));
		q->role = strdup(json_object_get_string(role));
		q->kind = strdup(kind ? json_object_get_string(kind) : "human");
		q->display_name = strdup(dn ? json_object_get_string(dn) : "");
		if (!q->id || !q->role || !q->kind || !q->display_name)
			return th_error_set(e, TH_ENOMEM, "out of memory");
	}
	out->has_participants = 1;
	return TH_OK;
}

static th_err parse_criteria(json_object *arr, struct th_task_payload *out, struct th_error *e)
{
	if (!json_object_is_type(arr, json_type_array))
		return th_error_set(e, TH_EINVAL, "payload.acceptance_criteria must be an array");
	out->criteria = json_object_new_array();
	if (out->criteria == NULL)
		return th_error_set(e, TH_ENOMEM, "out of memory");
	for (size_t i = 0; i < json_object_array_length(arr); i++) {
		json_object *c = json_object_array_get_idx(arr, i), *text = NULL, *met = NULL;
		if (!json_object_is_type(c, json_type_object))
			return th_error_set(
			    e, TH_EINVAL,
			    "payload.acceptance_criteria[%zu] must be an object {text, met}", i);
		static const char *const keys[] = {"text", "met", NULL};
		const char *bad = th_json_unknown_key(c, keys);
		if (bad != NULL)
			return th_error_set(e, TH_EINVAL,
			                    "payload.acceptance_criteria[%zu]: unknown key '%.60s'",
			                    i, bad);
		text = json_object_object_get(c, "text");
		met = json_object_object_get(c, "met");
		if (text == NULL || !json_object_is_type(text, json_type_string) ||
		    json_object_get_string_len(text) == 0)
			return th_error_set(
			    e, TH_EINVAL,
			    "payload.acceptance_criteria[%zu].text must be a non-empty string", i);
		if (met != NULL && !json_object_is_type(met, json_type_boolean))
			return th_error_set(
			    e, TH_EINVAL,
			    "payload.acceptance_criteria[%zu].met must be true or false", i);
		json_object *n = json_object_new_object();
		int oom = th_json_put(n, "text", json_object_get(text));
		oom |= th_json_put(n, "met",
		                   json_object_new_boolean(met ? json_object_get_boolean(met) : 0));
		oom |= th_json_push(out->criteria, n);
		if (oom)
			return th_error_set(e, TH_ENOMEM,
			                    "out of memory building the acceptance criteria");
	}
	return TH_OK;
}

static th_err parse_parents(json_object *arr, struct th_task_payload *out, struct th_error *e)
{
	if (!json_object_is_type(arr, json_type_array))
		return th_error_set(e, TH_EINVAL, "payload.parent_tasks must be an array");
	size_t n = json_object_array_length(arr);
	if (n > 1)
		return th_error_set(
		    e, TH_EINVAL, "payload.parent_tasks names %zu tasks; a sub-task has one parent",
		    n);
	if (n == 0)
		return TH_OK;
	json_object *ref = json_object_array_get_idx(arr, 0), *tid = NULL;
	if (!json_object_is_type(ref, json_type_object) ||
	    !json_object_object_get_ex(ref, "task_id", &tid) ||
	    !json_object_is_type(tid, json_type_string) || json_object_get_string_len(tid) == 0 ||
	    json_object_object_length(ref) != 1)
		return th_error_set(
		    e, TH_EINVAL,
		    "payload.parent_tasks[0] must be {\"task_id\": \"<parent task id>\"}");
	out->parent = json_object_get_string(tid);
	return TH_OK;
}

static th_err parse_plan(json_object *plan, const struct th_limits *lim,
                         struct th_task_payload *out, struct th_error *e)
{
	if (plan == NULL || json_object_is_type(plan, json_type_null))
		return TH_OK;
	json_object *steps = NULL;
	if (!json_object_is_type(plan, json_type_object) ||
	    !json_object_object_get_ex(plan, "steps", &steps) ||
	    !json_object_is_type(steps, json_type_array) || json_object_object_length(plan) != 1)
		return th_error_set(e, TH_EINVAL,
		                    "payload.plan must be null or {\"steps\": [...]}");
	size_t n = json_object_array_length(steps);
	if (n > lim->max_plan_steps)
		return th_error_set(e, TH_EINVAL, "payload.plan has %zu steps; the limit is %zu", n,
		                    lim->max_plan_steps);
	for (size_t i = 0; i < n; i++) {
		json_object *s = json_object_array_get_idx(steps, i);
		const char *id = th_json_str(s, "id"), *name = th_json_str(s, "name");
		if (id == NULL || *id == '\0' || name == NULL || *name == '\0')
			return th_error_set(e, TH_EINVAL,
			                    "payload.plan.steps[%zu] needs a non-empty id and name",
			                    i);
		static const char *const keys[] = {"id",    "name",   "description",  "depends_on",
		                                   "state", "output", "linked_tasks", NULL};
		const char *bad = th_json_unknown_key(s, keys);
		if (bad != NULL)
			return th_error_set(e, TH_EINVAL,
			                    "payload.plan.steps[%zu]: unknown key '%.60s'", i, bad);
	}
	out->plan = plan;
	return TH_OK;
}

th_err th_task_payload_parse(json_object *payload, int creating, const struct th_limits *lim,
                             struct th_task_payload *out, struct th_error *e)
{
	memset(out, 0, sizeof *out);
	static const char *const create_keys[] = {
	    "name",         "goal",         "type", "description", "acceptance_criteria",
	    "participants", "parent_tasks", "plan", NULL};
	static const char *const update_keys[] = {"name", "description", "acceptance_criteria",
	                                          "participants", NULL};
	th_err rc = TH_OK;
	json_object_object_foreach(payload, key, val)
	{
		if (one_of(key, creating ? create_keys : update_keys) == NULL) {
			if (!creating && one_of(key, create_keys) != NULL)
				rc = th_error_set(
				    e, TH_EINVAL,
				    "a task envelope cannot change '%.60s' of an existing task "
				    "(only name, description, acceptance_criteria, participants)",
				    key);
			else if (strcmp(key, "sub_tasks") == 0)
				rc = th_error_set(
				    e, TH_EINVAL,
				    "a task envelope cannot set 'sub_tasks': a sub-task names its "
				    "parent in parent_tasks, or is made with /subtask");
			else
				rc = th_error_set(e, TH_EINVAL,
				                  "payload: unknown key '%.60s' (see the task "
				                  "extension's schema, docs/a2a/ext/task.json)",
				                  key);
			break;
		}
		if (strcmp(key, "name") == 0) {
			if ((rc = need_string(val, "payload.name", 1, e)) == TH_OK)
				out->name = json_object_get_string(val);
		} else if (strcmp(key, "goal") == 0) {
			if ((rc = need_string(val, "payload.goal", 0, e)) == TH_OK)
				out->goal = json_object_get_string(val);
		} else if (strcmp(key, "type") == 0) {
			if (val != NULL && !json_object_is_type(val, json_type_string))
				rc = th_error_set(e, TH_EINVAL,
				                  "payload.type must be a string or null");
			else
				out->type = val;
		} else if (strcmp(key, "description") == 0) {
			if ((rc = need_string(val, "payload.description", 0, e)) == TH_OK)
				out->description = json_object_get_string(val);
		} else if (strcmp(key, "acceptance_criteria") == 0) {
			rc = parse_criteria(val, out, e);
		} else if (strcmp(key, "participants") == 0) {
			rc = parse_participants(val, lim, out, e);
		} else if (strcmp(key, "parent_tasks") == 0) {
			rc = parse_parents(val, out, e);
		} else if (strcmp(key, "plan") == 0) {
			rc = parse_plan(val, lim, out, e);
		}
		if (rc != TH_OK)
			break;
	}
	if (rc == TH_OK && creating && out->name == NULL)
		rc = th_error_set(e, TH_EINVAL, "payload.name is required to create a task");
	if (rc == TH_OK && creating && out->goal == NULL)
		rc = th_error_set(e, TH_EINVAL, "payload.goal is required to create a task");
	if (rc != TH_OK)
		th_task_payload_free(out);
	return rc;
}

json_object *th_envelope_part(const char *kind, json_object *payload)
{
	json_object *env = json_object_new_object();
	int bad = th_json_put(env, "kind", json_object_new_string(kind));
	bad |= th_json_put(env, "payload", payload);
	if (bad) {
		json_object_put(env);
		return NULL; /* decision-026: the caller reports TH_ENOMEM */
	}
	return th_a2a_data_part(env, TH_MT_EVENT);
}
