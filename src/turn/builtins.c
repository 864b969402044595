/* SPDX-License-Identifier: Apache-2.0 */
#include "turn/builtins.h"

#include <ctype.h>
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
#include "util/jsonx.h"
#include "util/idrule.h"

static void usage(struct th_cmd_result *res, const struct th_command *c, const char *why)
{
	th_buf_printf(&res->text, "%s\nUsage: /%s %s", why, c->name, c->argument_hint);
}

/* Splits the first white-space separated word off args into word (NUL-terminated,
 * cut to n-1 bytes); returns the rest with leading white space skipped. */
static const char *word(const char *args, char *w, size_t n)
{
	while (isspace((unsigned char)*args))
		args++;
	size_t i = 0;
	while (*args != '\0' && !isspace((unsigned char)*args)) {
		if (i + 1 < n)
			w[i++] = *args;
		args++;
	}
	w[i] = '\0';
	while (isspace((unsigned char)*args))
		args++;
	return args;
}

/* The participant id that starts args, copied whole into who; *rest is what follows.
 * 0 when it breaks the id rule (ID-6: too long, white space, control characters),
 * with the reason in why for the usage reply; an id is never cut to fit. */
static int participant_word(const struct th_turn_ctx *tc, const char *args, char who[TH_ID_BUF],
                            const char **rest, char *why, size_t whysz)
{
	while (isspace((unsigned char)*args))
		args++;
	size_t n = 0;
	while (args[n] != '\0' && !isspace((unsigned char)args[n]))
		n++;
	struct th_error e;
	th_error_clear(&e);
	if (n > 0 && th_id_check(args, n, tc->cfg->lim.max_id, "The participant id", &e) != TH_OK) {
		snprintf(why, whysz, "%.300s.", e.msg);
		return 0;
	}
	memcpy(who, args, n);
	who[n] = '\0';
	args += n;
	while (isspace((unsigned char)*args))
		args++;
	*rest = args;
	return 1;
}

static int valid_role(const char *r)
{
	return strcmp(r, "assignee") == 0 || strcmp(r, "reporter") == 0 ||
	       strcmp(r, "watcher") == 0 || strcmp(r, "admin") == 0;
}

static void help(const struct th_registry *r, struct th_buf *b)
{
	th_buf_puts(b, "Commands:");
	for (size_t i = 0; i < r->n; i++) {
		const struct th_command *c = &r->cmds[i];
		th_buf_printf(b, "\n/%s%s%s — %s", c->name, c->argument_hint[0] ? " " : "",
		              c->argument_hint, c->description);
	}
}

static th_err status(const struct th_turn_ctx *tc, const struct th_task_row *row, struct th_buf *b,
                     struct th_error *e)
{
	struct th_participant *ps = NULL;
	size_t np = 0;
	struct th_subtask_ref *subs = NULL;
	size_t ns = 0;
	struct th_plan_step *steps = NULL;
	size_t nst = 0;
	th_err rc = th_store_participants(tc->store, row->id, &ps, &np, e);
	if (rc == TH_OK)
		rc = th_store_subtasks(tc->store, row->id, 0, &subs, &ns, e);
	if (rc == TH_OK)
		rc = th_store_plan(tc->store, row->id, &steps, &nst, e);
	if (rc == TH_OK) {
		th_buf_printf(b, "Task %s: %s\nGoal: %s\nState: %s", row->id, row->name, row->goal,
		              th_state_name((enum th_state)row->state));
		if (row->sub_state != NULL)
			th_buf_printf(b, " · %s", row->sub_state);
		th_buf_puts(b, "\nParticipants:");
		for (size_t i = 0; i < np; i++)
			th_buf_printf(b, " %s (%s)%s", ps[i].id, ps[i].role, i + 1 < np ? "," : "");
		if (nst == 0)
			th_buf_puts(b, "\nPlan: none");
		else
			th_buf_puts(b, "\nPlan:");
		for (size_t i = 0; i < nst; i++)
			th_buf_printf(b, "\n  %s. %s [%s]%s%s", steps[i].step_id, steps[i].name,
			              th_store_step_state_name(steps[i].state),
			              steps[i].output ? " — " : "",
			              steps[i].output ? steps[i].output : "");
		if (ns == 0)
			th_buf_puts(b, "\nSub-tasks: none");
		else
			th_buf_puts(b, "\nSub-tasks:");
		for (size_t i = 0; i < ns; i++)
			th_buf_printf(b, "\n  %s %s [%s]", subs[i].id, subs[i].name,
			              th_state_name((enum th_state)subs[i].state));
	}
	th_participants_free(ps, np);
	th_subtask_refs_free(subs, ns);
	th_plan_steps_free(steps, nst);
	return rc;
}

/* /plan step; step; … replaces the plan (CMD-3, TASK-8 plan_updated). */
static th_err plan(const struct th_turn_ctx *tc, const struct th_command *c,
                   struct th_task_row *row, const char *args, struct th_cmd_result *res,
                   struct th_error *e)
{
	char *copy = strdup(args);
	if (copy == NULL)
		return th_error_set(e, TH_ENOMEM, "out of memory");
	struct th_plan_step_in *steps = calloc(tc->cfg->lim.max_plan_steps + 1, sizeof *steps);
	char ids[101][8];
	size_t n = 0;
	th_err rc = TH_OK;
	char *save = NULL;
	for (char *s = strtok_r(copy, ";", &save); steps != NULL && s != NULL;
	     s = strtok_r(NULL, ";", &save)) {
		while (isspace((unsigned char)*s))
			s++;
		char *end = s + strlen(s);
		while (end > s && isspace((unsigned char)end[-1]))
			*--end = '\0';
		if (*s == '\0')
			continue;
		if (n == tc->cfg->lim.max_plan_steps || n == 100) {
			n = (size_t)-1;
			break;
		}
		snprintf(ids[n], sizeof ids[n], "%zu", n + 1);
		steps[n].step_id = ids[n];
		steps[n].name = s;
		steps[n].state = TH_STEP_PENDING;
		n++;
	}
	if (steps == NULL) {
		rc = th_error_set(e, TH_ENOMEM, "out of memory");
	} else if (n == (size_t)-1) {
		char why[96];
		snprintf(why, sizeof why, "A plan has at most %zu steps.",
		         tc->cfg->lim.max_plan_steps);
		usage(res, c, why);
	} else if (n == 0) {
		usage(res, c, "Name at least one step.");
	} else if ((rc = th_plan_replace(tc->store, row, steps, n, e)) == TH_OK) {
		th_buf_printf(&res->text, "Plan set: %zu step%s.", n, n == 1 ? "" : "s");
		for (size_t i = 0; i < n; i++)
			th_buf_printf(&res->text, "\n  %s. %s", steps[i].step_id, steps[i].name);
	}
	free(steps);
	free(copy);
	return rc;
}

/* /step NAME done|failed [output] (CMD-3, TASK-8 step_updated). NAME is a step id or
 * a step's name. */
static th_err step(const struct th_turn_ctx *tc, const struct th_command *c,
                   struct th_task_row *row, const char *args, struct th_cmd_result *res,
                   struct th_error *e)
{
	struct th_plan_step *steps = NULL;
	size_t n = 0;
	th_err rc = th_store_plan(tc->store, row->id, &steps, &n, e);
	if (rc != TH_OK)
		return rc;
	/* The state is the first word "done" or "failed" after the step; a step name may
	 * hold spaces ("/step Write the tests done 12 passing"). */
	const char *hit = NULL;
	int state = -1;
	for (const char *w = args; *w != '\0';) {
		while (isspace((unsigned char)*w))
			w++;
		const char *end = w;
		while (*end != '\0' && !isspace((unsigned char)*end))
			end++;
		size_t len = (size_t)(end - w);
		if (w != args && len == 4 && strncmp(w, "done", 4) == 0)
			state = TH_STEP_DONE;
		else if (w != args && len == 6 && strncmp(w, "failed", 6) == 0)
			state = TH_STEP_FAILED;
		if (state >= 0) {
			hit = w;
			break;
		}
		w = end;
	}
	const struct th_plan_step *found = NULL;
	char name[256] = "";
	if (hit != NULL) {
		size_t len = (size_t)(hit - args);
		while (len > 0 && isspace((unsigned char)args[len - 1]))
			len--;
		snprintf(name, sizeof name, "%.*s",
		         (int)(len < sizeof name ? len : sizeof name - 1), args);
		found = th_plan_find_step(steps, n, name);
	}
	if (n == 0) {
		usage(res, c, "The task has no plan; set one with /plan first.");
	} else if (hit == NULL || name[0] == '\0') {
		usage(res, c, "Say which step and whether it is done or failed.");
	} else if (found == NULL) {
		char why[320];
		snprintf(why, sizeof why, "The plan has no step '%s'.", name);
		usage(res, c, why);
	} else {
		const char *output = hit + (state == TH_STEP_DONE ? 4 : 6);
		while (isspace((unsigned char)*output))
			output++;
		rc = th_plan_step_set(tc->store, row, found->step_id, state,
		                      *output ? output : NULL, e);
		if (rc == TH_OK)
			th_buf_printf(&res->text, "Step %s (%s) is %s.", found->step_id,
			              found->name, th_store_step_state_name(state));
	}
	th_plan_steps_free(steps, n);
	return rc;
}

/* /ask PARTICIPANT QUESTION (CH-4): the task waits for that participant's answer. */
static th_err ask(const struct th_turn_ctx *tc, const struct th_command *c, struct th_task_row *row,
                  const char *sender, const char *args, struct th_cmd_result *res,
                  struct th_error *e)
{
	char who[TH_ID_BUF], why[320];
	const char *question;
	if (!participant_word(tc, args, who, &question, why, sizeof why)) {
		usage(res, c, why);
		return TH_OK;
	}
	char *role = NULL;
	if (who[0] == '\0' || *question == '\0') {
		usage(res, c, "Name a participant and the question.");
		return TH_OK;
	}
	th_err rc = th_store_participant_role(tc->store, row->id, who, &role, e);
	free(role);
	if (rc == TH_ENOTFOUND || strcmp(who, TH_AGENT_ID) == 0) {
		th_error_clear(e);
		snprintf(why, sizeof why, "%.200s is not a participant I can ask.", who);
		usage(res, c, why);
		return TH_OK;
	}
	if (rc != TH_OK)
		return rc;
	char *request_id = NULL;
	json_object *part = NULL;
	const char *asker = sender != NULL && strcmp(sender, TH_AGENT_ID) != 0 ? sender : NULL;
	if ((rc = th_channel_ask(tc->store, row, who, asker, question, &request_id, &part, e)) !=
	    TH_OK)
		return rc;
	res->parts = json_object_new_array();
	if (th_json_push(res->parts, part) != 0) {
		free(request_id);
		return th_error_set(e, TH_ENOMEM, "out of memory building a question");
	}
	res->sub_ext = th_status_ext(TH_SUB_ANSWER, who, request_id);
	th_buf_puts(&res->text, question);
	free(request_id);
	return TH_OK;
}

/* /invite PARTICIPANT [ROLE] and /role PARTICIPANT ROLE (ID-5). */
static th_err invite_or_role(const struct th_turn_ctx *tc, const struct th_command *c,
                             struct th_task_row *row, const char *args, int inviting,
                             struct th_cmd_result *res, struct th_error *e)
{
	char who[TH_ID_BUF], role[32], why[320];
	const char *rest;
	if (!participant_word(tc, args, who, &rest, why, sizeof why)) {
		usage(res, c, why);
		return TH_OK;
	}
	rest = word(rest, role, sizeof role);
	if (who[0] == '\0' || (!inviting && role[0] == '\0') || *rest != '\0') {
		usage(res, c,
		      inviting ? "Name the participant to invite."
		               : "Name a participant and a role.");
		return TH_OK;
	}
	if (role[0] == '\0')
		snprintf(role, sizeof role, "watcher");
	if (!valid_role(role)) {
		usage(res, c, "The role is one of assignee, reporter, watcher, admin.");
		return TH_OK;
	}
	char *current = NULL;
	th_err rc = th_store_participant_role(tc->store, row->id, who, &current, e);
	if (rc != TH_OK && rc != TH_ENOTFOUND)
		return rc;
	th_error_clear(e);
	int on_task = rc == TH_OK;
	free(current);
	if (inviting && on_task) {
		snprintf(why, sizeof why,
		         "%.200s is already a participant; use /role to change the role.", who);
		usage(res, c, why);
		return TH_OK;
	}
	if (!inviting && !on_task) {
		snprintf(why, sizeof why, "%.200s is not a participant; use /invite.", who);
		usage(res, c, why);
		return TH_OK;
	}
	if (inviting) {
		struct th_participant *ps = NULL;
		size_t np = 0;
		if ((rc = th_store_participants(tc->store, row->id, &ps, &np, e)) != TH_OK)
			return rc;
		th_participants_free(ps, np);
		if (np >= tc->cfg->lim.max_participants) {
			snprintf(why, sizeof why, "A task has at most %zu participants.",
			         tc->cfg->lim.max_participants);
			usage(res, c, why);
			return TH_OK;
		}
	}
	char kind[] = "human";
	const struct th_participant_in p = {who, kind, role, ""};
	if (!inviting) {
		/* Keep the kind and display name a participant already has. */
		struct th_participant *ps = NULL;
		size_t np = 0;
		if ((rc = th_store_participants(tc->store, row->id, &ps, &np, e)) != TH_OK)
			return rc;
		for (size_t i = 0; i < np; i++)
			if (strcmp(ps[i].id, who) == 0) {
				snprintf(kind, sizeof kind, "%s", ps[i].kind);
			}
		th_participants_free(ps, np);
	}
	if ((rc = th_plan_participant_set(tc->store, row, &p, e)) != TH_OK)
		return rc;
	th_buf_printf(&res->text, inviting ? "%s joined as %s." : "%s is now %s.", who, role);
	return TH_OK;
}

/* /subtask NAME: GOAL (TASK-4). */
static th_err subtask(const struct th_turn_ctx *tc, const struct th_command *c,
                      struct th_task_row *row, const char *sender, const char *args,
                      struct th_cmd_result *res, struct th_error *e)
{
	const char *colon = strchr(args, ':');
	char name[256];
	const char *goal = colon ? colon + 1 : NULL;
	while (goal != NULL && isspace((unsigned char)*goal))
		goal++;
	size_t nlen = colon ? (size_t)(colon - args) : 0;
	while (nlen > 0 && isspace((unsigned char)args[nlen - 1]))
		nlen--;
	if (colon == NULL || nlen == 0 || goal == NULL || *goal == '\0') {
		usage(res, c, "Give the sub-task a name and a goal.");
		return TH_OK;
	}
	snprintf(name, sizeof name, "%.*s", (int)(nlen < sizeof name ? nlen : sizeof name - 1),
	         args);
	char child[TH_ID_BUF];
	int64_t turn = 0;
	th_err rc = th_subtask_spawn(tc->store, tc->cfg, row, sender, name, goal, child, &turn, e);
	if (rc == TH_EINVAL) { /* a sub-task limit (TASK-4, SEC-5): nothing was written */
		char why[TH_ERRMSG_MAX + 2];
		snprintf(why, sizeof why, "%s.", e->msg);
		th_error_clear(e);
		usage(res, c, why);
		return TH_OK;
	}
	if (rc != TH_OK)
		return rc;
	res->child_task = strdup(child);
	res->child_turn = turn;
	th_buf_printf(&res->text, "Created sub-task %s (%s).", child, name);
	return res->child_task ? TH_OK : th_error_set(e, TH_ENOMEM, "out of memory");
}

th_err th_builtin_run(const struct th_turn_ctx *tc, const struct th_command *c,
                      struct th_task_row *row, const char *sender, const char *args,
                      struct th_cmd_result *res, struct th_error *e)
{
	th_err rc = TH_OK;
	if (strcmp(c->name, "help") == 0)
		help(tc->commands, &res->text);
	else if (strcmp(c->name, "status") == 0)
		rc = status(tc, row, &res->text, e);
	else if (strcmp(c->name, "plan") == 0)
		rc = plan(tc, c, row, args, res, e);
	else if (strcmp(c->name, "step") == 0)
		rc = step(tc, c, row, args, res, e);
	else if (strcmp(c->name, "ask") == 0)
		rc = ask(tc, c, row, sender, args, res, e);
	else if (strcmp(c->name, "invite") == 0)
		rc = invite_or_role(tc, c, row, args, 1, res, e);
	else if (strcmp(c->name, "role") == 0)
		rc = invite_or_role(tc, c, row, args, 0, res, e);
	else if (strcmp(c->name, "subtask") == 0)
		rc = subtask(tc, c, row, sender, args, res, e);
	else if (strcmp(c->name, "confirm") == 0 && *args == '\0')
		usage(res, c, "Say what needs approving.");
	else if (strcmp(c->name, "confirm") == 0)
		rc = th_ui_confirm(tc->store, tc->cfg, row, sender, args, res, e);
	else
		rc = th_error_set(e, TH_EINTERNAL, "built-in /%s has no handler", c->name);
	if (rc == TH_OK && res->text.oom)
		rc = th_error_set(e, TH_ENOMEM, "out of memory");
	return rc;
}

th_err th_builtin_permitted(const struct th_registry *r, const char *text, const char *sender,
                            const char *role, struct th_error *e)
{
	const struct th_command *c = th_registry_match(r, text, NULL);
	if (c == NULL || c->kind != TH_CMD_BUILTIN ||
	    (strcmp(c->name, "invite") != 0 && strcmp(c->name, "role") != 0))
		return TH_OK;
	if (strcmp(role, "admin") == 0 || strcmp(role, "reporter") == 0)
		return TH_OK;
	return th_error_set(e, TH_EUNSUPPORTED,
	                    "/%s changes participants, which only an admin or the reporter may do; "
	                    "%.100s is %s",
	                    c->name, sender, role);
}
