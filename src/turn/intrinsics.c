/* SPDX-License-Identifier: Apache-2.0 */
#include "turn/intrinsics.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "a2a/a2a.h"
#include "config/settings.h"
#include "domain/channel.h"
#include "domain/plan.h"
#include "domain/access.h"
#include "domain/ext.h"
#include "domain/status.h"
#include "domain/subtask.h"
#include "domain/ui.h"
#include "domain/view.h"
#include "util/buf.h"
#include "util/jsonx.h"

json_object *th_intrinsics_tools(void)
{
	json_object *tools = json_object_new_array();
	for (int i = 0; tools != NULL && i < th_intrinsic_schemas_n; i++) {
		json_object *schema = json_tokener_parse(th_intrinsic_schemas[i].schema);
		json_object *t = json_object_new_object();
		if (schema == NULL || t == NULL) {
			json_object_put(schema);
			json_object_put(t);
			json_object_put(tools);
			return NULL;
		}
		const char *desc = th_json_str(schema, "description");
		int bad =
		    th_json_put(t, "name", json_object_new_string(th_intrinsic_schemas[i].name));
		bad |= th_json_put(t, "description", json_object_new_string(desc ? desc : ""));
		bad |= th_json_put(t, "input_schema", schema);
		if (bad) {
			json_object_put(t);
			json_object_put(tools);
			return NULL;
		}
		if (th_json_push(tools, t) != 0) {
			json_object_put(tools);
			return NULL;
		}
	}
	return tools;
}

json_object *th_intrinsics_tools_of(json_object **kept)
{
	if (*kept == NULL)
		*kept = th_intrinsics_tools();
	return *kept;
}

void th_intrinsic_effects_free(struct th_intrinsic_effects *fx)
{
	json_object_put(fx->ask);
	json_object_put(fx->ask_parts);
	free(fx->ask_text);
	free(fx->child_task);
	memset(fx, 0, sizeof *fx);
}

/* A result the model reads: ok or not, and what happened in words. */
struct res {
	int ok;
	struct th_buf text;
};

static void fail(struct res *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void fail(struct res *r, const char *fmt, ...)
{
	r->ok = 0;
	va_list ap;
	va_start(ap, fmt);
	th_buf_vprintf(&r->text, fmt, ap);
	va_end(ap);
}

/* Only the keys a schema allows (additionalProperties false). */
static int only_keys(json_object *args, const char *const *keys, struct res *r)
{
	const char *bad = th_json_unknown_key(args, keys);
	if (bad != NULL)
		fail(r, "unknown argument '%s'", bad);
	return bad == NULL;
}

static const char *need_str(json_object *args, const char *key, struct res *r)
{
	const char *v = th_json_str(args, key);
	if (v == NULL || *v == '\0') {
		fail(r, "'%s' is required (a non-empty string)", key);
		return NULL;
	}
	return v;
}

/* "Write the tests" → "write-the-tests". */
static void slug(const char *name, char *out, size_t n)
{
	size_t j = 0;
	int dash = 0;
	for (const char *p = name; *p != '\0' && j + 1 < n; p++) {
		if (isalnum((unsigned char)*p)) {
			if (dash && j > 0 && j + 1 < n)
				out[j++] = '-';
			out[j++] = (char)tolower((unsigned char)*p);
			dash = 0;
		} else {
			dash = 1;
		}
	}
	out[j] = '\0';
	if (j == 0)
		snprintf(out, n, "step");
}

#define MAX_STEPS 100

/* The steps' names into rows[0..n) with their ids (slugs of the names, kept in ids):
 * 0, or -1 with r saying why (not an object, unknown key, no name, a repeated id). */
static int read_steps(json_object *steps, size_t n, char (*ids)[64], struct th_plan_step_in *rows,
                      struct res *r)
{
	static const char *const skeys[] = {"name", "description", "depends_on", NULL};
	for (size_t i = 0; i < n; i++) {
		json_object *s = json_object_array_get_idx(steps, i);
		if (!json_object_is_type(s, json_type_object) || !only_keys(s, skeys, r)) {
			if (r->ok)
				fail(r, "every step is an object {name, description, depends_on}");
			return -1;
		}
		const char *name = need_str(s, "name", r);
		if (name == NULL)
			return -1;
		slug(name, ids[i], sizeof ids[i]);
		for (size_t k = 0; k < i; k++)
			if (strcmp(ids[k], ids[i]) == 0) {
				fail(r, "two steps have the id '%s'", ids[i]);
				return -1;
			}
		rows[i].step_id = ids[i];
		rows[i].name = name;
		rows[i].description = th_json_str(s, "description");
		rows[i].state = TH_STEP_PENDING;
	}
	return 0;
}

/* depends_on: every name resolves to a step (its id goes into deps[i], a JSON array the
 * row borrows; free each), and the steps form no cycle. r says what is wrong. */
static th_err link_steps(json_object *steps, size_t n, char (*ids)[64],
                         struct th_plan_step_in *rows, char **deps, struct res *r,
                         struct th_error *e)
{
	int *edge = calloc(n * n, sizeof *edge);
	if (edge == NULL)
		return th_error_set(e, TH_ENOMEM, "out of memory");
	for (size_t i = 0; i < n && r->ok; i++) {
		json_object *d =
		    json_object_object_get(json_object_array_get_idx(steps, i), "depends_on");
		json_object *ids_json = json_object_new_array();
		int bad = ids_json == NULL;
		for (size_t k = 0; d != NULL && k < json_object_array_length(d) && r->ok; k++) {
			const char *dn = json_object_get_string(json_object_array_get_idx(d, k));
			char ds[64];
			slug(dn ? dn : "", ds, sizeof ds);
			size_t hit = n;
			for (size_t m = 0; m < n; m++)
				if (strcmp(ids[m], ds) == 0)
					hit = m;
			if (hit == n)
				fail(r, "depends_on names an unknown step '%s'", dn);
			else {
				edge[i * n + hit] = 1;
				bad |= th_json_push(ids_json, json_object_new_string(ids[hit]));
			}
		}
		deps[i] = bad ? NULL : strdup(th_json_text(ids_json));
		rows[i].depends_on_json = deps[i];
		json_object_put(ids_json);
		if (deps[i] == NULL) {
			free(edge);
			return th_error_set(e, TH_ENOMEM,
			                    "out of memory building a step's depends_on");
		}
	}
	/* Warshall's closure on at most 100 steps: a step reaching itself is a cycle. */
	for (size_t k = 0; k < n && r->ok; k++)
		for (size_t i = 0; i < n; i++)
			for (size_t j = 0; edge[i * n + k] && j < n; j++)
				edge[i * n + j] |= edge[k * n + j];
	for (size_t i = 0; i < n && r->ok; i++)
		if (edge[i * n + i])
			fail(r, "the steps' dependencies form a cycle through '%s'", ids[i]);
	free(edge);
	return TH_OK;
}

static th_err create_plan(const struct th_turn_ctx *tc, struct th_task_row *row, json_object *args,
                          struct res *r, struct th_error *e)
{
	static const char *const keys[] = {"steps", NULL};
	json_object *steps = json_object_object_get(args, "steps");
	if (!only_keys(args, keys, r))
		return TH_OK;
	size_t n =
	    json_object_is_type(steps, json_type_array) ? json_object_array_length(steps) : 0;
	if (n == 0 || n > MAX_STEPS || n > tc->cfg->lim.max_plan_steps) {
		r->ok = 0;
		th_buf_printf(&r->text, "'steps' must be an array of 1 to %zu steps",
		              tc->cfg->lim.max_plan_steps < MAX_STEPS ? tc->cfg->lim.max_plan_steps
		                                                      : (size_t)MAX_STEPS);
		return TH_OK;
	}
	char(*ids)[64] = calloc(n, sizeof *ids);
	struct th_plan_step_in *rows = calloc(n, sizeof *rows);
	char **deps = calloc(n, sizeof *deps);
	th_err rc = TH_OK;
	if (ids == NULL || rows == NULL || deps == NULL)
		rc = th_error_set(e, TH_ENOMEM, "out of memory");
	else if (read_steps(steps, n, ids, rows, r) == 0 &&
	         (rc = link_steps(steps, n, ids, rows, deps, r, e)) == TH_OK && r->ok &&
	         (rc = th_plan_replace(tc->store, row, rows, n, e)) == TH_OK)
		th_buf_printf(&r->text, "plan attached with %zu step%s", n, n == 1 ? "" : "s");
	for (size_t i = 0; deps != NULL && i < n; i++)
		free(deps[i]);
	free(deps);
	free(rows);
	free(ids);
	return rc;
}

static th_err complete_step(const struct th_turn_ctx *tc, struct th_task_row *row,
                            json_object *args, struct res *r, struct th_error *e)
{
	static const char *const keys[] = {"step", "output", "state", NULL};
	if (!only_keys(args, keys, r))
		return TH_OK;
	const char *step = need_str(args, "step", r);
	const char *output = step ? th_json_str(args, "output") : NULL;
	if (step == NULL)
		return TH_OK;
	if (output == NULL) {
		fail(r, "'output' is required (a string)");
		return TH_OK;
	}
	const char *st = th_json_str(args, "state");
	if (st != NULL && strcmp(st, "done") != 0 && strcmp(st, "failed") != 0) {
		fail(r, "'state' is done or failed, not '%s'", st);
		return TH_OK;
	}
	int state = st != NULL && strcmp(st, "failed") == 0 ? TH_STEP_FAILED : TH_STEP_DONE;
	struct th_plan_step *steps = NULL;
	size_t n = 0;
	th_err rc = th_store_plan(tc->store, row->id, &steps, &n, e);
	if (rc != TH_OK)
		return rc;
	const struct th_plan_step *found = th_plan_find_step(steps, n, step);
	const char *id = found != NULL ? found->step_id : NULL;
	if (n == 0)
		fail(r, "the task has no plan; create one with create_plan");
	else if (id == NULL)
		fail(r, "the plan has no step '%s'", step);
	else if ((rc = th_plan_step_set(tc->store, row, id, state, output, e)) == TH_OK)
		th_buf_printf(&r->text, "step %s is %s", id, th_store_step_state_name(state));
	th_plan_steps_free(steps, n);
	return rc;
}

static th_err spawn_subtask(const struct th_turn_ctx *tc, struct th_task_row *row,
                            json_object *args, struct th_intrinsic_effects *fx, struct res *r,
                            struct th_error *e)
{
	static const char *const keys[] = {"name", "goal", "step", NULL};
	if (!only_keys(args, keys, r))
		return TH_OK;
	const char *name = need_str(args, "name", r);
	const char *goal = name ? need_str(args, "goal", r) : NULL;
	if (goal == NULL)
		return TH_OK;
	if (fx->child_task != NULL) {
		fail(r, "one spawn_subtask per round; call it again in the next round");
		return TH_OK;
	}
	/* The step it works on, named by id or name, must exist before anything is spawned. */
	const char *step = th_json_str(args, "step");
	struct th_plan_step *steps = NULL;
	size_t n = 0;
	const struct th_plan_step *found = NULL;
	if (step != NULL) {
		th_err rc = th_store_plan(tc->store, row->id, &steps, &n, e);
		if (rc != TH_OK)
			return rc;
		if ((found = th_plan_find_step(steps, n, step)) == NULL) {
			fail(r, "the plan has no step '%s'", step);
			th_plan_steps_free(steps, n);
			return TH_OK;
		}
	}
	char child[TH_ID_BUF];
	int64_t turn = 0;
	/* CTL-7: spawned by the model on its own, so its turn's result may complete it. */
	th_err rc =
	    th_subtask_spawn(tc->store, tc->cfg, row, TH_AGENT_ID, name, goal, child, &turn, e);
	if (rc == TH_EINVAL) { /* a sub-task limit (TASK-4, SEC-5): nothing was written */
		th_plan_steps_free(steps, n);
		fail(r, "%s", e->msg);
		th_error_clear(e);
		return TH_OK;
	}
	if (rc == TH_OK && found != NULL)
		rc = th_plan_step_link(tc->store, row, found, child, e);
	th_plan_steps_free(steps, n);
	if (rc != TH_OK)
		return rc;
	fx->child_task = strdup(child);
	fx->child_turn = turn;
	th_buf_printf(&r->text, "spawned sub-task %s", child);
	return fx->child_task ? TH_OK : th_error_set(e, TH_ENOMEM, "out of memory");
}

static th_err ask_participant(const struct th_turn_ctx *tc, struct th_task_row *row,
                              json_object *args, struct th_intrinsic_effects *fx, struct res *r,
                              struct th_error *e)
{
	static const char *const keys[] = {"participant_id", "question", NULL};
	if (!only_keys(args, keys, r))
		return TH_OK;
	const char *who = need_str(args, "participant_id", r);
	const char *q = who ? need_str(args, "question", r) : NULL;
	if (q == NULL)
		return TH_OK;
	if (fx->ask != NULL) {
		fail(r, "one question per turn");
		return TH_OK;
	}
	char *role = NULL;
	th_err rc = th_store_participant_role(tc->store, row->id, who, &role, e);
	free(role);
	if (rc == TH_ENOTFOUND || strcmp(who, TH_AGENT_ID) == 0) {
		th_error_clear(e);
		fail(r, "'%s' is not a participant that can be asked", who);
		return TH_OK;
	}
	if (rc != TH_OK)
		return rc;
	char *request_id = NULL;
	json_object *part = NULL;
	if ((rc = th_channel_ask(tc->store, row, who, NULL, q, &request_id, &part, e)) != TH_OK)
		return rc;
	fx->ask = th_status_ext(TH_SUB_ANSWER, who, request_id);
	fx->ask_parts = json_object_new_array();
	int bad = th_json_push(fx->ask_parts, part);
	fx->ask_text = strdup(q);
	free(request_id);
	if (bad || fx->ask == NULL || fx->ask_text == NULL)
		return th_error_set(e, TH_ENOMEM, "out of memory building a question");
	th_buf_printf(&r->text, "asked %s; the turn ends and the task waits for the answer", who);
	return TH_OK;
}

static th_err set_role(const struct th_turn_ctx *tc, struct th_task_row *row, const char *actor,
                       json_object *args, struct res *r, struct th_error *e)
{
	static const char *const keys[] = {"participant_id", "role", NULL};
	if (!only_keys(args, keys, r))
		return TH_OK;
	const char *who = need_str(args, "participant_id", r);
	const char *role = who ? need_str(args, "role", r) : NULL;
	if (role == NULL)
		return TH_OK;
	if (strcmp(role, "assignee") && strcmp(role, "reporter") && strcmp(role, "watcher") &&
	    strcmp(role, "admin")) {
		fail(r, "'role' is one of assignee, reporter, watcher, admin, not '%s'", role);
		return TH_OK;
	}
	char *actor_role = NULL, *current = NULL;
	th_err rc = th_store_participant_role(tc->store, row->id, actor, &actor_role, e);
	if (rc == TH_ENOTFOUND)
		th_error_clear(e);
	else if (rc != TH_OK)
		return rc;
	/* ID-5: on behalf of an admin or the reporter only. */
	int may = actor_role != NULL &&
	          (strcmp(actor_role, "admin") == 0 || strcmp(actor_role, "reporter") == 0);
	free(actor_role);
	if (!may) {
		fail(r, "only an admin or the reporter may change roles; %s is not one", actor);
		return TH_OK;
	}
	rc = th_store_participant_role(tc->store, row->id, who, &current, e);
	free(current);
	if (rc == TH_ENOTFOUND) {
		th_error_clear(e);
		fail(r, "'%s' is not a participant of the task", who);
		return TH_OK;
	}
	if (rc != TH_OK)
		return rc;
	struct th_participant *ps = NULL;
	size_t np = 0;
	if ((rc = th_store_participants(tc->store, row->id, &ps, &np, e)) != TH_OK)
		return rc;
	for (size_t i = 0; i < np && rc == TH_OK; i++)
		if (strcmp(ps[i].id, who) == 0) {
			const struct th_participant_in p = {ps[i].id, ps[i].kind, role,
			                                    ps[i].display_name};
			rc = th_plan_participant_set(tc->store, row, &p, e);
		}
	th_participants_free(ps, np);
	if (rc == TH_OK)
		th_buf_printf(&r->text, "%s is now %s", who, role);
	return rc;
}

static th_err emit_ui(const struct th_turn_ctx *tc, struct th_task_row *row, json_object *args,
                      struct res *r, struct th_error *e)
{
	static const char *const keys[] = {"messages", NULL};
	if (!only_keys(args, keys, r))
		return TH_OK;
	json_object *msgs = json_object_object_get(args, "messages");
	if (!json_object_is_type(msgs, json_type_array) || json_object_array_length(msgs) == 0) {
		fail(r, "'messages' must be a non-empty array of A2UI messages");
		return TH_OK;
	}
	int renders = 0;
	th_err rc = th_ui_renders(tc->store, row->id, &renders, e);
	if (rc != TH_OK)
		return rc;
	if (!renders) {
		fail(r, "the task's client does not render A2UI; answer in text");
		return TH_OK;
	}
	char *artifact = NULL;
	struct th_error why;
	th_error_clear(&why);
	rc = th_ui_emit(tc->store, tc->cfg, row, msgs, &artifact, &why);
	if (rc == TH_EINVAL) {
		fail(r, "%s", why.msg);
		return TH_OK;
	}
	if (rc != TH_OK)
		return th_error_set(e, rc, "%s", why.msg);
	th_buf_printf(&r->text, "emitted %s", artifact);
	free(artifact);
	return TH_OK;
}

th_err th_intrinsic_apply(const struct th_turn_ctx *tc, struct th_task_row *row, const char *actor,
                          json_object *call, struct th_intrinsic_effects *fx, json_object **result,
                          struct th_error *e)
{
	*result = NULL;
	struct res r = {.ok = 1};
	th_buf_init(&r.text);
	const char *name = th_json_str(call, "name");
	json_object *args = json_object_object_get(call, "arguments");
	th_err rc = TH_OK;
	if (name == NULL)
		fail(&r, "a tool call needs a name");
	else if (!json_object_is_type(args, json_type_object))
		fail(&r, "the arguments of %s must be a JSON object", name);
	else if (strcmp(name, "create_plan") == 0)
		rc = create_plan(tc, row, args, &r, e);
	else if (strcmp(name, "complete_step") == 0)
		rc = complete_step(tc, row, args, &r, e);
	else if (strcmp(name, "spawn_subtask") == 0)
		rc = spawn_subtask(tc, row, args, fx, &r, e);
	else if (strcmp(name, "ask_participant") == 0)
		rc = ask_participant(tc, row, args, fx, &r, e);
	else if (strcmp(name, "set_participant_role") == 0)
		rc = set_role(tc, row, actor, args, &r, e);
	else if (strcmp(name, "emit_ui") == 0)
		rc = emit_ui(tc, row, args, &r, e);
	else
		fail(&r, "there is no tool '%s'", name);
	if (rc == TH_OK) {
		json_object *o = json_object_new_object();
		const char *id = th_json_str(call, "id");
		int bad = th_json_put(o, "id", json_object_new_string(id ? id : ""));
		bad |= th_json_put(o, "name", json_object_new_string(name ? name : ""));
		bad |= th_json_put(o, "ok", json_object_new_boolean(r.ok));
		bad |= th_json_put(o, "content",
		                   json_object_new_string(r.text.data ? r.text.data : ""));
		if (bad) {
			json_object_put(o);
			rc = th_error_set(e, TH_ENOMEM, "out of memory building a tool result");
		} else {
			*result = o;
		}
	}
	th_buf_free(&r.text);
	return rc;
}
