/* SPDX-License-Identifier: Apache-2.0 */
/* intake.c — SendMessage: a message creates a task (TASK-2), continues one (TASK-6),
 * is recognised as a resend (TASK-7), or completes the task (CTL-1). The message is
 * committed, with its turn queued, before any turn runs (TURN-4). */
#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "a2a/a2a.h"
#include "config/settings.h"
#include "domain/access.h"
#include "ops/auth.h"
#include "ops/control.h"
#include "domain/ext.h"
#include "turn/builtins.h"
#include "domain/channel.h"
#include "domain/envelope.h"
#include "domain/inbound.h"
#include "ops/ops.h"
#include "ops/intake.h"
#include "domain/subtask.h"
#include "domain/task.h"
#include "domain/ui.h"
#include "ops/pushcfg.h"
#include "domain/status.h"
#include "turn/turn.h"
#include "domain/view.h"
#include "store/store.h"
#include "util/buf.h"
#include "util/ids.h"
#include "util/jsonx.h"
#include "util/log.h"

#define NAME_MAX_CHARS 60

/* ID-1: metadata.participant_id, when present, must be the sender; the stored
 * message records the sender there. Returns a copy of msg for storage. */
static th_err stamp_sender(json_object *msg, const char *participant, json_object **out,
                           struct th_error *e)
{
	*out = NULL;
	json_object *meta = NULL;
	if (json_object_object_get_ex(msg, "metadata", &meta) && meta != NULL) {
		json_object *pid = NULL;
		if (json_object_object_get_ex(meta, "participant_id", &pid)) {
			if (!json_object_is_type(pid, json_type_string) ||
			    strcmp(json_object_get_string(pid), participant) != 0)
				return th_error_set(
				    e, TH_EINVAL,
				    "message.metadata.participant_id must equal the sender "
				    "(%.100s) asserted by X-Participant-Id",
				    participant);
		}
	}
	json_object *copy = NULL;
	if (json_object_deep_copy(msg, &copy, NULL) != 0)
		return th_error_set(e, TH_ENOMEM, "out of memory");
	if (!json_object_object_get_ex(copy, "metadata", &meta) || meta == NULL) {
		meta = json_object_new_object();
		if (th_json_put(copy, "metadata", meta) != 0)
			meta = NULL; /* freed by th_json_put */
	}
	if (th_json_put(meta, "participant_id", json_object_new_string(participant)) != 0) {
		json_object_put(copy);
		return th_error_set(e, TH_ENOMEM, "out of memory building a message's metadata");
	}
	*out = copy;
	return TH_OK;
}

/* The task's text: its text parts joined by new lines (may be empty). */
static char *joined_text(json_object *msg)
{
	struct th_buf b;
	th_buf_init(&b);
	th_buf_puts(&b, "");
	json_object *parts = NULL;
	json_object_object_get_ex(msg, "parts", &parts);
	for (size_t i = 0; i < json_object_array_length(parts); i++) {
		const char *t = th_json_str(json_object_array_get_idx(parts, i), "text");
		if (t == NULL)
			continue;
		if (b.len > 0)
			th_buf_puts(&b, "\n");
		th_buf_puts(&b, t);
	}
	if (b.oom) {
		th_buf_free(&b);
		return NULL;
	}
	return th_buf_take(&b);
}

/* TASK-2: the first line, cut to 60 characters (not bytes: never split UTF-8). */
static char *task_name(const char *text)
{
	while (*text == ' ' || *text == '\t' || *text == '\n' || *text == '\r')
		text++;
	size_t n = 0, chars = 0;
	while (text[n] != '\0' && text[n] != '\n' && text[n] != '\r' && chars < NAME_MAX_CHARS) {
		n++;
		while (((unsigned char)text[n] & 0xC0) == 0x80)
			n++;
		chars++;
	}
	while (n > 0 && (text[n - 1] == ' ' || text[n - 1] == '\t'))
		n--;
	return n > 0 ? strndup(text, n) : strdup("task");
}

/* TASK-4: the payload's participants, the sender as reporter unless listed, and the
 * harness as assignee unless an assignee is named (a harness listed in another role
 * becomes the assignee: each participant is on a task once). *ps is freed with free()
 * only (the strings stay borrowed from the payload and literals). */
static th_err envelope_participants(const struct th_task_payload *pl, const char *sender,
                                    const struct th_limits *lim, struct th_participant_in **ps,
                                    size_t *n, struct th_error *e)
{
	*ps = calloc(pl->nps + 2, sizeof **ps);
	if (*ps == NULL)
		return th_error_set(e, TH_ENOMEM, "out of memory");
	int has_sender = 0, has_assignee = 0;
	struct th_participant_in *harness = NULL;
	for (size_t i = 0; i < pl->nps; i++) {
		const struct th_participant *p = &pl->ps[i];
		(*ps)[i] = (struct th_participant_in){p->id, p->kind, p->role, p->display_name};
		has_sender |= strcmp(p->id, sender) == 0;
		has_assignee |= strcmp(p->role, "assignee") == 0;
		if (strcmp(p->id, TH_AGENT_ID) == 0)
			harness = &(*ps)[i];
	}
	*n = pl->nps;
	if (!has_sender)
		(*ps)[(*n)++] = (struct th_participant_in){sender, "human", "reporter", ""};
	if (!has_assignee) {
		struct th_participant_in *agent = harness != NULL ? harness : &(*ps)[(*n)++];
		*agent = (struct th_participant_in){TH_AGENT_ID, "agent", "assignee", ""};
	}
	if (*n > lim->max_participants)
		return th_error_set(e, TH_EINVAL,
		                    "a task has at most %zu participants; this one would have %zu",
		                    lim->max_participants, *n);
	return TH_OK;
}

/* TASK-4: a new task linked under parent. The sender may link a sub-task only under a
 * task they may write to, within the sub-task limit; the child's id becomes
 * "<parent>.<n>" and, unless the client chose a context (ctx_given), it lives in its
 * parent's context. id and ctx are rewritten in place. */
static th_err under_parent(const struct th_turn_ctx *tc, const char *participant,
                           const char *tenant, const char *parent, int ctx_given,
                           char id[TH_ID_BUF], char ctx[TH_ID_BUF], struct th_error *e)
{
	struct th_store *st = tc->store;
	th_err rc = th_access_check(st, tenant, parent, participant, TH_ACCESS_WRITE,
	                            "add sub-tasks to", NULL, e);
	struct th_task_row row = {0};
	if (rc == TH_OK)
		rc = th_store_task_get(st, parent, &row, e);
	if (rc == TH_OK)
		rc = th_subtask_parent_open(&row, e);
	if (rc == TH_OK)
		rc = th_subtask_next_id(st, tc->cfg->lim.max_subtasks, parent, id, e);
	if (rc == TH_OK && !ctx_given)
		snprintf(ctx, TH_ID_BUF, "%s", row.context_id);
	th_task_row_free(&row);
	if (rc == TH_EINVAL || rc == TH_EUNSUPPORTED) { /* name the field it came from */
		char why[TH_ERRMSG_MAX];
		snprintf(why, sizeof why, "%s", e->msg);
		return th_error_set(e, rc, "payload.parent_tasks: %s", why);
	}
	return rc;
}

/* TASK-7: when the same sender resent the message that created a task, *resent = 1 and
 * task_id_out names that task. Otherwise the message starts a new one, which has no
 * surfaces yet: any A2UI action in it is refused (UI-2). */
static th_err resent_or_new(struct th_store *st, const char *participant, const char *tenant,
                            json_object *msg, const struct th_inbound *in,
                            char task_id_out[TH_ID_BUF], int *resent, struct th_error *e)
{
	char *existing = NULL;
	/* TEN-5: only a resend in the same tenant is one. */
	th_err rc = th_store_task_by_first_message(st, tenant, participant,
	                                           th_json_str(msg, "messageId"), &existing, e);
	if (rc == TH_OK) {
		snprintf(task_id_out, TH_ID_BUF, "%s", existing);
		free(existing);
		*resent = 1;
		return TH_OK;
	}
	if (rc != TH_ENOTFOUND)
		return rc;
	th_error_clear(e);
	int actions = 0, reports = 0;
	return in->a2ui > 0 ? th_ui_check_inbound(st, NULL, msg, &actions, &reports, e) : TH_OK;
}

static th_err create_task(const struct th_turn_ctx *tc, const char *participant, const char *tenant,
                          json_object *msg, const struct th_inbound *in, int inline_turn,
                          char task_id_out[TH_ID_BUF], int64_t *turn_id, json_object **created,
                          struct th_error *e)
{
	struct th_store *st = tc->store;
	int resent = 0;
	*turn_id = 0;
	*created = NULL;
	th_err rc = resent_or_new(st, participant, tenant, msg, in, task_id_out, &resent, e);
	if (rc != TH_OK || resent)
		return rc;

	char uuid[TH_UUID_LEN + 1], ctx[TH_ID_BUF], id[TH_ID_BUF];
	th_uuid(uuid);
	snprintf(id, sizeof id, "%s", uuid);
	/* A copy: the message's own contextId is replaced when the task is written. */
	const char *given_ctx = th_json_str(msg, "contextId");
	if (given_ctx != NULL)
		snprintf(ctx, sizeof ctx, "%s", given_ctx);
	else
		th_uuid(ctx);
	struct th_task_payload pl = {0};
	struct th_participant_in *ps = NULL;
	size_t nps = 0;
	char *text = joined_text(msg);
	char *name = text ? task_name(text) : NULL;
	if (text == NULL || name == NULL) {
		rc = th_error_set(e, TH_ENOMEM, "out of memory");
		goto out;
	}
	const struct th_participant_in plain[2] = {
	    {participant, "human", "reporter", ""},
	    {TH_AGENT_ID, "agent", "assignee", ""},
	};
	struct th_new_task nt = {
	    .id = id,
	    .context_id = ctx,
	    .name = name,
	    .goal = text,
	    .ps = plain,
	    .nps = 2,
	    .created_by = participant,
	    .first = msg,
	    .first_sender = participant,
	    .lease_ms = tc->cfg->lease_ms,
	    .inline_turn = inline_turn,
	    .tenant = tenant,
	};
	if (in->payload != NULL) {
		if ((rc = th_task_payload_parse(in->payload, 1, &tc->cfg->lim, &pl, e)) != TH_OK ||
		    (rc = envelope_participants(&pl, participant, &tc->cfg->lim, &ps, &nps, e)) !=
		        TH_OK)
			goto out;
		if (pl.parent != NULL &&
		    (rc = under_parent(tc, participant, tenant, pl.parent, given_ctx != NULL, id,
		                       ctx, e)) != TH_OK)
			goto out;
		nt.name = pl.name;
		nt.goal = pl.goal;
		nt.type = pl.type;
		nt.description = pl.description;
		nt.criteria = pl.criteria;
		nt.ps = ps;
		nt.nps = nps;
		nt.parent = pl.parent;
		nt.plan = pl.plan;
	}
	if ((rc = th_task_create(st, &nt, turn_id, created, e)) != TH_OK)
		goto out;
	if (nt.parent != NULL && (rc = th_subtask_announce(st, nt.parent, id, nt.name, e)) != TH_OK)
		goto out;
	snprintf(task_id_out, TH_ID_BUF, "%s", id);
out:
	free(ps);
	th_task_payload_free(&pl);
	free(text);
	free(name);
	return rc;
}

/* TASK-5: a task envelope on an existing task changes name, description,
 * acceptance_criteria (any non-watcher) and participants (admin or reporter, ID-5). */
static th_err update_task(const struct th_turn_ctx *tc, struct th_task_row *row,
                          const char *participant, const char *role, json_object *payload,
                          struct th_error *e)
{
	struct th_store *st = tc->store;
	struct th_task_payload pl = {0};
	th_err rc = th_task_payload_parse(payload, 0, &tc->cfg->lim, &pl, e);
	if (rc != TH_OK)
		return rc;
	if (pl.has_participants && strcmp(role, "admin") != 0 && strcmp(role, "reporter") != 0) {
		rc = th_error_set(
		    e, TH_EUNSUPPORTED,
		    "changing participants takes an admin or the reporter; %.100s is %s",
		    participant, role);
		goto out;
	}
	if (pl.name != NULL || pl.description != NULL || pl.criteria != NULL) {
		json_object *ext = row->ext_json ? json_tokener_parse(row->ext_json) : NULL;
		if (ext == NULL)
			ext = json_object_new_object();
		int bad = ext == NULL;
		if (pl.description != NULL)
			bad |=
			    th_json_put(ext, "description", json_object_new_string(pl.description));
		if (pl.criteria != NULL)
			bad |=
			    th_json_put(ext, "acceptance_criteria", json_object_get(pl.criteria));
		if (bad) {
			json_object_put(ext);
			rc = th_error_set(e, TH_ENOMEM, "out of memory building a task extension");
			goto out;
		}
		char *name = strdup(pl.name ? pl.name : row->name);
		char *ext_text = strdup(th_json_text(ext));
		json_object_put(ext);
		if (name == NULL || ext_text == NULL) {
			free(name);
			free(ext_text);
			rc = th_error_set(e, TH_ENOMEM, "out of memory");
			goto out;
		}
		free(row->name);
		free(row->ext_json);
		row->name = name;
		row->ext_json = ext_text;
		if ((rc = th_store_task_set_ext(st, row, e)) != TH_OK)
			goto out;
	}
	if (pl.has_participants) {
		if (pl.nps > tc->cfg->lim.max_participants) {
			rc = th_error_set(e, TH_EINVAL, "a task has at most %zu participants",
			                  tc->cfg->lim.max_participants);
			goto out;
		}
		for (size_t i = 0; rc == TH_OK && i < pl.nps; i++) {
			const struct th_participant *p = &pl.ps[i];
			const struct th_participant_in in = {p->id, p->kind, p->role,
			                                     p->display_name};
			rc = th_store_participant_put(st, row->id, &in, e);
		}
		if (rc == TH_OK)
			rc = th_status_announce_participants(st, row, NULL, NULL, e);
	}
out:
	th_task_payload_free(&pl);
	return rc;
}

/* ID-4: a watcher may only answer a question addressed to them — an explicit help
 * reply, or plain text while a question the harness asked them is pending. */
static int watcher_answers(struct th_store *st, const struct th_task_row *row,
                           const char *participant, const struct th_chan_part *cp, int has_cp)
{
	if (has_cp)
		return strcmp(cp->kind, "help_reply") == 0;
	struct th_help_request h = {0};
	struct th_error e;
	th_error_clear(&e);
	int yes = th_store_help_pending_for(st, row->id, TH_AGENT_ID, participant, &h, &e) == TH_OK;
	th_help_request_free(&h);
	return yes;
}

/* SCALE-1: on PostgreSQL a follow-up's reads leave at once, with its lock: the task's
 * row, the sender's role, the messageId look-up (decision-060) and the look for a
 * question the harness asked the sender (th_channel_answer_pending, decision-088). */
static void expect_follow_up(struct th_store *st, const char *tenant, const char *task_id,
                             const char *participant, const char *mid)
{
	th_store_expect(st, tenant, task_id, participant, mid);
	th_store_help_pending_for_soon(st, task_id, TH_AGENT_ID, participant);
}

/* A follow-up is refused by an ended task (with the task's id for the error's data) and
 * when it names another context than the task's. */
static th_err open_to(const struct th_task_row *row, json_object *msg, struct th_error *e)
{
	if (th_state_terminal((enum th_state)row->state)) {
		th_err rc = th_error_set(
		    e, TH_EUNSUPPORTED,
		    "task %.200s is %s; it accepts no more messages (start a new task in "
		    "the same context)",
		    row->id, th_state_name((enum th_state)row->state));
		th_error_task(e, row->id);
		return rc;
	}
	const char *ctx = th_json_str(msg, "contextId");
	if (ctx != NULL && strcmp(ctx, row->context_id) != 0)
		return th_error_set(
		    e, TH_EINVAL,
		    "message.contextId %.100s does not match task %.100s's context %.100s", ctx,
		    row->id, row->context_id);
	return TH_OK;
}

/* A follow-up outside any side channel: it answers the sender's pending question if it
 * is one, and joins the history. *resume says whether it starts a turn: not while the
 * task waits for someone else's answer (CH-5), nor for client error reports alone or an
 * envelope alone (a task envelope and no text part). */
static th_err keep_message(struct th_store *st, struct th_task_row *row, const char *participant,
                           json_object *msg, const struct th_inbound *in, int reports_only,
                           int *resume, struct th_error *e)
{
	int answered = 0;
	*resume = 0;
	th_err rc = th_channel_answer_pending(st, row, participant, msg, &answered, e);
	if (rc == TH_OK)
		rc = th_store_message_append(st, row->id, th_json_str(msg, "messageId"),
		                             "ROLE_USER", participant, msg, e);
	if (rc != TH_OK)
		return rc;
	int awaiting_other =
	    !answered && row->sub_state != NULL && strcmp(row->sub_state, TH_SUB_ANSWER) == 0;
	*resume = !awaiting_other && !reports_only &&
	          (answered || in->text != NULL || in->payload == NULL);
	return TH_OK;
}

/* CMD-2: *builtin = 1 when the message's text calls a built-in command, which runs
 * whenever its text arrives — also while the task waits for someone's answer — and
 * answers about the task as it stands, so the task is not moved to WORKING for it.
 * A built-in the sender's role may not use is refused (ID-5). */
static th_err which_builtin(const struct th_turn_ctx *tc, const struct th_inbound *in,
                            const char *participant, const char *role, int *builtin,
                            struct th_error *e)
{
	const char *cmd = in->text; /* a slash command is the first text part (CMD-2) */
	*builtin = 0;
	if (cmd == NULL)
		return TH_OK;
	th_err rc = th_builtin_permitted(tc->commands, cmd, participant, role, e);
	const struct th_command *c = th_registry_match(tc->commands, cmd, NULL);
	*builtin = rc == TH_OK && c != NULL && c->kind == TH_CMD_BUILTIN;
	return rc;
}

/* UI-2: every A2UI action must be for a surface of this task (th_ui_check_inbound).
 * SEC-5: a click is a decision, and a watcher never decides: refused as ID-4 refuses. */
static th_err inbound_ui(struct th_store *st, const char *tenant, const char *task_id,
                         const char *participant, const char *role, json_object *msg,
                         const struct th_inbound *in, int *actions, int *reports,
                         struct th_error *e)
{
	*actions = *reports = 0;
	if (in->a2ui == 0)
		return TH_OK;
	th_err rc = th_ui_check_inbound(st, task_id, msg, actions, reports, e);
	if (rc == TH_OK && *actions > 0 && strcmp(role, "watcher") == 0)
		rc = th_access_check(st, tenant, task_id, participant, TH_ACCESS_WRITE,
		                     "act on the surfaces of", NULL, e);
	return rc;
}

/* A2A-11-GEN-5: a 1.1 send that names ifGenerationMatch goes on only while the task is
 * at that generation, read in the send's own write transaction; otherwise it is refused
 * before anything is stored (the transaction rolls back). */
static th_err generation_matches(struct th_store *st, const char *task_id,
                                 const struct th_send_req *req, struct th_error *e)
{
	if (!req->has_if_generation)
		return TH_OK;
	int64_t now = 0;
	th_err rc = th_store_task_generation(st, task_id, INT64_MAX, &now, NULL, e);
	if (rc != TH_OK || now == req->if_generation)
		return rc;
	rc = th_error_set(e, TH_EGENERATION,
	                  "task %.200s is at generation %lld, not %lld "
	                  "(configuration.ifGenerationMatch): nothing was stored; read the task "
	                  "again and decide whether to send",
	                  task_id, (long long)now, (long long)req->if_generation);
	th_error_task(e, task_id);
	e->has_generations = 1;
	e->expected_generation = (long long)req->if_generation;
	e->current_generation = (long long)now;
	return rc;
}

static th_err follow_up(const struct th_turn_ctx *tc, const char *participant, const char *tenant,
                        json_object *msg, const struct th_inbound *in, const char *task_id,
                        const struct th_send_req *req, int inline_turn, int64_t *turn_id,
                        struct th_error *e)
{
	struct th_store *st = tc->store;
	struct th_task_row row = {0};
	json_object *payload = in->payload;
	int has_cp = in->has_channel;
	char *role = NULL;
	const char *mid = th_json_str(msg, "messageId");
	*turn_id = 0;
	/* SCALE-1: the reads below leave together on PostgreSQL (expect_follow_up). */
	expect_follow_up(st, tenant, task_id, participant, mid);
	/* TEN-2: a taskId of another tenant is not found. */
	th_err rc = th_access_check(st, tenant, task_id, participant, TH_ACCESS_READ,
	                            "send messages to", &role, e);
	if (rc != TH_OK || (rc = th_store_task_get(st, task_id, &row, e)) != TH_OK)
		goto out;
	/* TASK-7: already processed, the response is the current task; else A2A-11-GEN-5. */
	if (th_store_message_exists(st, task_id, mid) ||
	    (rc = generation_matches(st, task_id, req, e)) != TH_OK)
		goto out;
	if (strcmp(role, "watcher") == 0 &&
	    (payload != NULL || !watcher_answers(st, &row, participant, &in->channel, has_cp))) {
		/* ID-4: the same refusal as th_access_check gives watchers. */
		rc = th_access_check(st, tenant, task_id, participant, TH_ACCESS_WRITE,
		                     "send messages to", NULL, e);
		goto out;
	}
	if ((rc = open_to(&row, msg, e)) != TH_OK)
		goto out;
	int builtin = 0;
	if ((rc = which_builtin(tc, in, participant, role, &builtin, e)) != TH_OK)
		goto out;
	builtin = builtin && payload == NULL && !has_cp;
	if (th_json_put(msg, "contextId", json_object_new_string(row.context_id)) != 0) {
		rc = th_error_set(e, TH_ENOMEM, "out of memory building a message's contextId");
		goto out;
	}
	if (payload != NULL && (rc = update_task(tc, &row, participant, role, payload, e)) != TH_OK)
		goto out;

	/* UI-2: every A2UI action must be for a surface of this task; an accepted one
	 * resumes the task (UI-3), client error reports are kept only. */
	int actions = 0, reports = 0;
	if ((rc = inbound_ui(st, tenant, task_id, participant, role, msg, in, &actions, &reports,
	                     e)) != TH_OK)
		goto out;
	/* UI-4: a click on a /confirm card, or approve/reject typed to a question asked in
	 * text, is answered at once like a command, whatever else the task waits for. */
	int instant = builtin || (!has_cp && th_ui_is_decision(st, task_id, msg, in));
	int resume = 0;
	if (has_cp) {
		/* CH-3: stored and delivered; only a reply to the harness's question resumes. */
		struct th_chan_outcome oc = {0};
		if ((rc = th_channel_accept(st, &row, participant, msg, &in->channel, &oc, e)) !=
		    TH_OK)
			goto out;
		resume = oc.resume;
	} else {
		int reports_only = reports > 0 && actions == 0 && in->text == NULL;
		if ((rc = keep_message(st, &row, participant, msg, in, reports_only, &resume, e)) !=
		    TH_OK)
			goto out;
		resume = resume || instant;
	}
	if (!resume)
		goto out;
	/* An instant turn settles in this transaction: a WORKING step nobody could see is
	 * neither written nor announced (decision-025). */
	if (!instant && !inline_turn && row.state != TH_STATE_WORKING &&
	    (rc = th_status_transition(st, &row, TH_STATE_WORKING, NULL, NULL, 0, e)) != TH_OK)
		goto out;
	rc = th_task_queue_turn(st, task_id, mid, tc->cfg->lease_ms, inline_turn, turn_id, e);
out:
	free(role);
	th_task_row_free(&row);
	return rc;
}

/* What the intake's write transaction needs (th_store_write runs accept_part, maybe on
 * another request thread of the worker: everything it uses is here). */
struct accept_arg {
	const struct th_turn_ctx *tc;
	const char *participant;
	const char *tenant; /* TEN-1: the request's, "" for the default tenant */
	unsigned extensions;
	json_object *msg;
	const struct th_inbound *in; /* what msg carries (th_inbound_read) */
	const char *given;           /* message.taskId, or NULL for a new task */
	const struct th_push_create_req *push;
	const struct th_send_req *req;
	int inline_turn;
	const char *key;         /* the Idempotency-Key, or NULL (A2A-11-IDEM-1) */
	const char *fingerprint; /* the message's, when key is set */
	struct th_intake *out;   /* what the commit returns; th_intake_accept's caller's */
};

/* A2A-11-IDEM-1: the caller sent this key before. The same message (fingerprint) is a
 * replay: out names the task that send went to and nothing else is done; another
 * message under the key is refused naming the key and that task. *seen = 0 and TH_OK
 * when the key is new. */
static th_err idem_replay(struct th_store *st, const struct accept_arg *a, int *seen,
                          struct th_error *e)
{
	char *task = NULL; /* free */
	char *was = NULL;  /* free */
	*seen = 0;
	th_err rc = th_store_idem_find(st, a->tenant, a->participant, a->key, &task, &was, e);
	if (rc == TH_ENOTFOUND) {
		th_error_clear(e);
		return TH_OK;
	}
	if (rc == TH_OK && strcmp(was, a->fingerprint) != 0) {
		rc = th_error_set(e, TH_EINVAL,
		                  "Idempotency-Key '%s' was already used by %s for another message "
		                  "(task %s); a different message needs a new key",
		                  a->key, a->participant, task);
	} else if (rc == TH_OK) {
		snprintf(a->out->task_id, TH_ID_BUF, "%s", task);
		a->out->replayed = 1;
		*seen = 1;
	}
	free(task);
	free(was);
	return rc;
}

static th_err accept_part(struct th_store *st, void *arg, struct th_error *e)
{
	struct accept_arg *a = arg;
	const struct th_turn_ctx *tc = a->tc;
	struct th_intake *out = a->out;
	assert(st == tc->store);
	/* A part runs once per th_store_write; whatever an earlier run left is not ours. */
	json_object_put(out->created);
	out->created = NULL;
	th_turn_reply_free(&out->reply);
	out->turn_id = 0;
	out->replayed = 0;
	int seen = 0;
	if (a->key != NULL) {
		th_err rc = idem_replay(st, a, &seen, e);
		if (rc != TH_OK || seen)
			return rc;
	}
	th_err rc = a->given == NULL
	                ? create_task(tc, a->participant, a->tenant, a->msg, a->in, a->inline_turn,
	                              out->task_id, &out->turn_id, &out->created, e)
	                : follow_up(tc, a->participant, a->tenant, a->msg, a->in, out->task_id,
	                            a->req, a->inline_turn, &out->turn_id, e);
	/* EXT-4: remember that this task's client renders A2UI. */
	if (rc == TH_OK)
		rc = th_ui_note_client(st, out->task_id, a->extensions, a->msg, e);
	/* PUSH-1: a config sent with the message belongs to its task and sender. */
	if (rc == TH_OK && a->push->url != NULL)
		rc =
		    th_pushcfg_inline_attach(st, tc->cfg, a->participant, out->task_id, a->push, e);
	/* An instant turn commits with its message: one write transaction (TURN-4 holds:
	 * nothing is accepted, or the message and its reply are). Last, so that the
	 * reply's events reach a push config sent with the message. A new task's turn that
	 * only replied leaves its reply in out (the answer is built from it). */
	/* A2A-11-IDEM-1: the key goes with the task this send went to, in its transaction. */
	if (rc == TH_OK && a->key != NULL)
		rc =
		    th_store_idem_keep(st, a->participant, a->key, out->task_id, a->fingerprint, e);
	if (rc == TH_OK && out->turn_id == TH_TURN_INLINE &&
	    (rc = th_turn_inline(tc, out->task_id, a->msg, out->created ? &out->reply : NULL, e)) ==
	        TH_OK)
		out->turn_id = 0;
	return rc;
}

/* What kind of message msg is, read once into *in (th_inbound_read): 1 a control
 * envelope, 0 a message for a task, -1 refused with e set (a bad envelope or channel part,
 * or a channel message without message.taskId). */
static int classify(const struct th_turn_ctx *tc, const char *participant, json_object *msg,
                    const char *given, struct th_inbound *in, struct th_error *e)
{
	if (th_inbound_read(msg, participant, &tc->cfg->lim, in, NULL, e) != 0)
		return -1;
	if (in->control)
		return 1;
	if (given == NULL && in->has_channel) {
		th_error_set(e, TH_EINVAL,
		             "a channel message belongs to a task: message.taskId is required");
		return -1;
	}
	return 0;
}

/* A2A-11-IDEM-1: the SHA-256 (hex) of msg as sent, without its messageId, which a
 * retrying client may mint anew. msg is left as it was. */
static th_err fingerprint_of(json_object *msg, char fp[TH_KEY_HASH_BUF], struct th_error *e)
{
	json_object *copy = NULL; /* json_object_put */
	if (json_object_deep_copy(msg, &copy, NULL) != 0)
		return th_error_set(e, TH_ENOMEM, "out of memory");
	json_object_object_del(copy, "messageId");
	const char *text = json_object_to_json_string_ext(copy, JSON_C_TO_STRING_PLAIN);
	int bad = text == NULL || th_auth_key_hash(text, fp) != 0;
	json_object_put(copy);
	return bad ? th_error_set(e, TH_EINTERNAL,
	                          "cannot fingerprint the message for its "
	                          "Idempotency-Key")
	           : TH_OK;
}

/* TURN-4, TURN-7: when a turn of task_id has outlived its lease, its worker died: the
 * task is queued for this worker's after-response work (tc->defer, turn 0), which
 * recovers it once the answer is sent. Only for a message the task accepted, so its
 * sender may see the task: a stranger's request does no work for it (SEC-5). Asked
 * after the commit, on this thread's own connection, as GetTask asks (th_turn_expiry):
 * expiry is what that read found, or -3 to read it here. */
static void defer_expired(const struct th_turn_ctx *tc, const char *task_id, int64_t expiry)
{
	if (expiry == -3)
		expiry = th_turn_expiry(tc->store, tc->cfg->lease_ms, task_id);
	if (expiry >= 0 && expiry < th_now_ms())
		(void)th_defer_turn(&tc->defer, task_id, 0); /* TH_ENOMEM: left to `recover` */
}

void th_intake_look_lease(const struct th_turn_ctx *tc, const struct th_intake *in)
{
	if (in->lease_due)
		defer_expired(tc, in->task_id, -3);
}

void th_intake_free(struct th_intake *in)
{
	json_object_put(in->created);
	in->created = NULL;
	th_turn_reply_free(&in->reply);
}

th_err th_intake_accept(const struct th_turn_ctx *tc, const char *participant, unsigned extensions,
                        const struct th_send_req *req, int inline_turn, struct th_intake *out,
                        struct th_error *e)
{
	memset(out, 0, sizeof *out);
	if (participant == NULL || *participant == '\0')
		return th_access_no_participant(e);
	const char *tenant = req->tenant != NULL ? req->tenant : "";
	json_object *msg = NULL;
	struct th_push_create_req push = {0}; /* the inline config, once checked */
	char fp[TH_KEY_HASH_BUF] = "";
	th_err rc = stamp_sender(req->message, participant, &msg, e);
	if (rc != TH_OK)
		return rc;
	const char *given = th_json_str(msg, "taskId");
	if (given != NULL)
		snprintf(out->task_id, TH_ID_BUF, "%s", given);
	struct th_inbound in;
	int ctl = classify(tc, participant, msg, given, &in, e);
	if (ctl < 0) {
		rc = TH_EINVAL;
	} else if (ctl == 1) {
		rc = given != NULL
		         ? th_control_complete(tc->store, participant, tenant, out->task_id, msg, e)
		         : th_error_set(e, TH_EINVAL,
		                        "a control envelope completes an existing task: "
		                        "message.taskId is required");
	} else if (req->push_config != NULL &&
	           (rc = th_pushcfg_inline_check(tc->cfg, req->push_config, &push, e)) != TH_OK) {
		/* refused before anything is stored */
	} else if (req->idempotency_key != NULL && (rc = fingerprint_of(msg, fp, e)) != TH_OK) {
		/* nothing stored */
	} else {
		struct accept_arg a = {.tc = tc,
		                       .participant = participant,
		                       .tenant = tenant,
		                       .extensions = extensions,
		                       .msg = msg,
		                       .in = &in,
		                       .given = given,
		                       .push = &push,
		                       .req = req,
		                       .inline_turn = inline_turn,
		                       .key = req->idempotency_key,
		                       .fingerprint = fp,
		                       .out = out};
		rc = th_store_write(tc->store, accept_part, &a, e);
		if (rc == TH_OK && out->replayed && req->replayed != NULL)
			*req->replayed = 1;
		/* A new task's Task event is kept only with the reply it is answered with. */
		if (rc != TH_OK || out->reply.message == NULL)
			th_intake_free(out);
		/* TURN-7 as for reads: an expired turn of the task this follow-up joined is
		 * handed to after-response work, queued before this message's own turn, and
		 * never run here (decision-049). With no turn of its own queued, the caller
		 * looks, with its answer's read when it has one (decision-069). */
		if (rc == TH_OK && given != NULL && out->turn_id > 0)
			defer_expired(tc, out->task_id, -3);
		else if (rc == TH_OK && given != NULL)
			out->lease_due = 1;
	}
	th_push_create_req_free(&push);
	json_object_put(msg);
	return rc;
}

/* The historyLength of a blocking SendMessage's answer: the request's, else the
 * configured default (A2A §3.1). */
static int answer_history(const struct th_turn_ctx *tc, const struct th_send_req *req)
{
	return req->history_length >= 0 ? req->history_length : tc->cfg->history_default;
}

/* The one rule for a SendMessage's answer (decision-049), whatever the message did
 * (created, continued, resent or completed a task; its turn ran inline, here or later):
 * built once, after the last commit it answers, from what that commit returned. A new
 * task whose inline turn only replied is answered from its Task event and the reply,
 * without reading the task again (th_view_task_replied); any other task is read as
 * GetTask reads it, in one snapshot (TURN-7). A2A §3.1: the latest status and all
 * artifacts, with the request's historyLength. */
static th_err answer(const struct th_turn_ctx *tc, const char *participant, int history,
                     const struct th_intake *in, int64_t *generation, json_object **task,
                     struct th_error *e)
{
	*task = in->reply.message != NULL
	            ? th_view_task_replied(in->created, &in->reply.row, in->reply.message, history)
	            : NULL;
	if (*task != NULL) {
		th_intake_look_lease(tc, in);
		/* A2A-11-GEN-1: a new task that only replied is at the generation its reply
		 * left it (no one else knows its id yet). */
		th_err rc = generation != NULL
		                ? th_store_task_generation(tc->store, in->task_id, INT64_MAX,
		                                           generation, NULL, e)
		                : TH_OK;
		if (rc != TH_OK) {
			json_object_put(*task);
			*task = NULL;
		}
		return rc;
	}
	/* Out of memory building it from the reply, the committed task is read instead. A
	 * follow-up's lease look (TURN-7) is read in the same snapshot: on PostgreSQL the
	 * answer is then one round trip (SCALE-1, decision-069). A 1.1 client's generation
	 * (A2A-11-GEN-1) is read in it too, a snapshot held open for it. */
	int64_t expiry = -1;
	struct th_view_checks checks = {.expiry = &expiry, .lease_ms = tc->cfg->lease_ms};
	int began = 0;
	th_err rc = generation != NULL ? th_store_read_begin(tc->store, &began, e) : TH_OK;
	if (rc == TH_OK)
		rc = th_view_task_read(tc->store, in->task_id, participant, history, 1,
		                       in->lease_due ? &checks : NULL, task, e);
	if (rc == TH_OK && generation != NULL)
		rc = th_store_task_generation(tc->store, in->task_id, INT64_MAX, generation, NULL,
		                              e);
	th_store_read_end(tc->store, began);
	if (in->lease_due)
		defer_expired(tc, in->task_id, rc == TH_OK ? expiry : -3);
	if (rc != TH_OK) {
		json_object_put(*task);
		*task = NULL;
	}
	return rc;
}

th_err th_harness_send(const struct th_turn_ctx *tc, const char *participant, unsigned extensions,
                       const struct th_send_req *req, json_object **task, struct th_error *e)
{
	*task = NULL;
	struct th_intake in;
	/* A blocking send of an instant model commits the message with its reply; with
	 * returnImmediately the answer comes first and the turn after it (TURN-5). */
	int inline_turn = !req->return_immediately && th_turn_instant(tc->cfg);
	th_err rc = th_intake_accept(tc, participant, extensions, req, inline_turn, &in, e);
	if (rc == TH_OK && in.turn_id > 0 &&
	    (!req->return_immediately ||
	     th_defer_turn(&tc->defer, in.task_id, in.turn_id) != TH_OK)) {
		/* A turn that fails leaves its lease to recovery; the message is safe. */
		struct th_error te;
		th_error_clear(&te);
		if (th_turn_run(tc, in.task_id, in.turn_id, &te) != TH_OK)
			th_log(TH_LOG_WARN, "turn %lld on task %s: %s", (long long)in.turn_id,
			       in.task_id, te.msg);
	}
	if (rc == TH_OK)
		rc =
		    answer(tc, participant, answer_history(tc, req), &in, req->generation, task, e);
	else if (in.lease_due)
		th_intake_look_lease(tc, &in);
	th_intake_free(&in);
	return rc;
}
