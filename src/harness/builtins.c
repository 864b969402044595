#include "harness/builtins.h"

#include <stdlib.h>
#include <string.h>

#include "a2a/a2a.h"
#include "util/buf.h"
#include "util/jsonx.h"

static void help(const struct th_registry *r, struct th_buf *b)
{
	th_buf_puts(b, "Commands:");
	for (size_t i = 0; i < r->n; i++) {
		const struct th_command *c = &r->cmds[i];
		th_buf_printf(b, "\n/%s%s%s — %s", c->name, c->argument_hint[0] ? " " : "",
		              c->argument_hint, c->description);
	}
}

static th_err status(struct th_app *app, const struct th_task_row *row, struct th_buf *b,
                     struct th_error *e)
{
	struct th_participant *ps = NULL;
	size_t np = 0;
	struct th_subtask_ref *subs = NULL;
	size_t ns = 0;
	th_err rc = th_store_participants(app->store, row->id, &ps, &np, e);
	if (rc == TH_OK)
		rc = th_store_subtasks(app->store, row->id, 0, &subs, &ns, e);
	if (rc != TH_OK) {
		th_participants_free(ps, np);
		return rc;
	}
	th_buf_printf(b, "Task %s: %s\nGoal: %s\nState: %s", row->id, row->name, row->goal,
	              th_state_name((enum th_state)row->state));
	if (row->sub_state != NULL)
		th_buf_printf(b, " · %s", row->sub_state);
	th_buf_puts(b, "\nParticipants:");
	for (size_t i = 0; i < np; i++)
		th_buf_printf(b, " %s (%s)%s", ps[i].id, ps[i].role, i + 1 < np ? "," : "");
	json_object *ext = row->ext_json ? json_tokener_parse(row->ext_json) : NULL;
	json_object *plan = NULL, *steps = NULL;
	if (ext != NULL && json_object_object_get_ex(ext, "plan", &plan) && plan != NULL &&
	    json_object_object_get_ex(plan, "steps", &steps) &&
	    json_object_array_length(steps) > 0) {
		th_buf_puts(b, "\nPlan:");
		for (size_t i = 0; i < json_object_array_length(steps); i++) {
			json_object *s = json_object_array_get_idx(steps, i);
			const char *name = th_json_str(s, "name"), *st = th_json_str(s, "state");
			th_buf_printf(b, "\n  %zu. %s [%s]", i + 1, name ? name : "?", st ? st : "pending");
		}
	} else {
		th_buf_puts(b, "\nPlan: none");
	}
	json_object_put(ext);
	if (ns == 0) {
		th_buf_puts(b, "\nSub-tasks: none");
	} else {
		th_buf_puts(b, "\nSub-tasks:");
		for (size_t i = 0; i < ns; i++)
			th_buf_printf(b, "\n  %s %s [%s]", subs[i].id, subs[i].name,
			              th_state_name((enum th_state)subs[i].state));
	}
	th_participants_free(ps, np);
	th_subtask_refs_free(subs, ns);
	return TH_OK;
}

th_err th_builtin_run(struct th_app *app, const struct th_command *c, const struct th_task_row *row,
                      const char *args, char **reply, struct th_error *e)
{
	(void)args;
	*reply = NULL;
	struct th_buf b;
	th_buf_init(&b);
	th_err rc = TH_OK;
	if (strcmp(c->name, "help") == 0)
		help(app->commands, &b);
	else if (strcmp(c->name, "status") == 0)
		rc = status(app, row, &b, e);
	else
		rc = th_error_set(e, TH_EINTERNAL, "built-in /%s has no handler", c->name);
	if (rc == TH_OK && b.oom)
		rc = th_error_set(e, TH_ENOMEM, "out of memory");
	if (rc != TH_OK) {
		th_buf_free(&b);
		return rc;
	}
	*reply = th_buf_take(&b);
	return TH_OK;
}
