/* SPDX-License-Identifier: Apache-2.0 */
#include "ops/control.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "a2a/a2a.h"
#include "config/settings.h"
#include "domain/access.h"
#include "domain/ext.h"
#include "ops/ops.h"
#include "domain/status.h"
#include "domain/view.h"
#include "store/store.h"
#include "util/buf.h"
#include "util/ids.h"
#include "util/jsonx.h"

static th_err refuse_terminal(const struct th_task_row *row, th_err code, const char *what,
                              struct th_error *e)
{
	th_error_set(e, code, "task %.200s is already %s; it cannot be %s", row->id,
	             th_state_name((enum th_state)row->state), what);
	th_error_task(e, row->id);
	return code;
}

/* The refusal text of CTL-4: every unresolved sub-task by id and name. */
static char *unresolved_text(const struct th_task_row *row, const struct th_subtask_ref *subs,
                             size_t n)
{
	struct th_buf b;
	th_buf_init(&b);
	th_buf_printf(&b, "task %s cannot be completed: %zu sub-task%s still unresolved: ", row->id,
	              n, n == 1 ? " is" : "s are");
	for (size_t i = 0; i < n; i++)
		th_buf_printf(&b, "%s%s (%s, %s)", i ? "; " : "", subs[i].id, subs[i].name,
		              th_state_name((enum th_state)subs[i].state));
	if (b.oom) {
		th_buf_free(&b);
		return NULL;
	}
	return th_buf_take(&b);
}

/* What the completion's transaction needs and leaves (complete_part; the caller owns and
 * frees every pointer). */
struct complete_arg {
	const char *participant;
	const char *tenant;
	const char *task_id;
	json_object *msg;
	struct th_task_row row;
	struct th_subtask_ref *subs;
	size_t ns;
	json_object *status_msg;
	json_object *sub;
	char *text;
};

static th_err complete_part(struct th_store *st, void *arg, struct th_error *e)
{
	struct complete_arg *a = arg;
	const char *task_id = a->task_id, *participant = a->participant;
	struct th_task_row *row = &a->row;
	th_err rc = th_access_check(st, a->tenant, task_id, participant, TH_ACCESS_WRITE,
	                            "complete", NULL, e);
	if (rc == TH_OK)
		rc = th_store_task_get(st, task_id, row, e);
	const char *mid = th_json_str(a->msg, "messageId");
	int duplicate = rc == TH_OK && th_store_message_exists(st, task_id, mid);
	if (rc != TH_OK || duplicate)
		return rc;
	if (th_state_terminal((enum th_state)row->state))
		return refuse_terminal(row, TH_EUNSUPPORTED, "completed", e);
	rc = th_store_subtasks(st, task_id, 1, &a->subs, &a->ns, e);
	if (rc == TH_OK && a->ns > 0) {
		/* CTL-4: refused, parked awaiting the next message, saying why. Nothing else
		 * changes: a turn in progress is not cut (CTL-3 is the completion's), so the
		 * message it answers still gets its one reply (TURN-6). */
		a->text = unresolved_text(row, a->subs, a->ns);
		a->status_msg = a->text ? th_status_agent_text(row, a->text) : NULL;
		a->sub = th_status_ext(TH_SUB_NEXT_MESSAGE, NULL, NULL);
		rc = a->status_msg && a->sub
		         ? th_status_transition(st, row, TH_STATE_INPUT_REQUIRED, a->sub,
		                                a->status_msg, 0, e)
		         : th_error_set(e, TH_ENOMEM, "out of memory");
	} else if (rc == TH_OK) {
		/* CTL-3: a turn in progress is cut. CTL-5: the participant's control message
		 * stays in history, and the task ends for every subscriber with "completed by
		 * <id>". */
		rc = th_store_turns_cut(st, task_id, NULL, e);
		if (rc == TH_OK)
			rc = th_store_message_append(st, task_id, mid, "ROLE_USER", participant,
			                             a->msg, e);
		struct th_buf b;
		th_buf_init(&b);
		th_buf_printf(&b, "completed by %s", participant);
		a->status_msg = b.oom ? NULL : th_status_agent_text(row, b.data);
		th_buf_free(&b);
		if (rc == TH_OK)
			rc = a->status_msg ? th_status_transition(st, row, TH_STATE_COMPLETED, NULL,
			                                          a->status_msg, 1, e)
			                   : th_error_set(e, TH_ENOMEM, "out of memory");
	}
	return rc;
}

th_err th_control_complete(struct th_store *st, const char *participant, const char *tenant,
                           const char *task_id, json_object *msg, struct th_error *e)
{
	struct complete_arg a = {
	    .participant = participant, .tenant = tenant, .task_id = task_id, .msg = msg};
	th_err rc = th_store_write(st, complete_part, &a, e);
	free(a.text);
	json_object_put(a.status_msg);
	json_object_put(a.sub);
	th_subtask_refs_free(a.subs, a.ns);
	th_task_row_free(&a.row);
	return rc;
}

/* One task of a tree being canceled: its id and its parent's index (-1: the root). */
struct tree_node {
	char *id; /* free (free_tree) */
	size_t parent;
};

static void free_tree(struct tree_node *t, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(t[i].id);
	free(t);
}

/* The unresolved tree under root_id, breadth first, without recursion: however deep a
 * tree is, it can be canceled (SEC-5). Links are made only when their child is created,
 * so the tree has no cycle. *out (free_tree) lists every parent before its children. */
static th_err collect_tree(struct th_store *st, const char *root_id, struct tree_node **out,
                           size_t *n, struct th_error *e)
{
	size_t cap = 8;
	struct tree_node *t = calloc(cap, sizeof *t);
	*n = 0;
	if (t == NULL || (t[0].id = strdup(root_id)) == NULL) {
		free(t);
		return th_error_set(e, TH_ENOMEM, "out of memory");
	}
	t[0].parent = (size_t)-1;
	size_t len = 1;
	th_err rc = TH_OK;
	for (size_t i = 0; rc == TH_OK && i < len; i++) {
		struct th_subtask_ref *subs = NULL;
		size_t ns = 0;
		rc = th_store_subtasks(st, t[i].id, 1, &subs, &ns, e);
		for (size_t k = 0; rc == TH_OK && k < ns; k++) {
			if (len == cap) {
				struct tree_node *more = realloc(t, 2 * cap * sizeof *t);
				if (more == NULL) {
					rc = th_error_set(e, TH_ENOMEM, "out of memory");
					break;
				}
				t = more;
				cap *= 2;
			}
			t[len] = (struct tree_node){strdup(subs[k].id), i};
			if (t[len++].id == NULL)
				rc = th_error_set(e, TH_ENOMEM, "out of memory");
		}
		th_subtask_refs_free(subs, ns);
	}
	if (rc != TH_OK) {
		free_tree(t, len);
		return rc;
	}
	*out = t;
	*n = len;
	return TH_OK;
}

/* Cuts row's turns and ends it CANCELED, naming its canceled parent (or NULL). */
static th_err cancel_one(struct th_store *st, struct th_task_row *row, const char *participant,
                         const char *parent, struct th_error *e)
{
	th_err rc = th_store_turns_cut(st, row->id, NULL, e);
	if (rc != TH_OK)
		return rc;
	struct th_buf b;
	th_buf_init(&b);
	th_buf_printf(&b, "canceled by %s", participant);
	if (parent != NULL)
		th_buf_printf(&b, " (parent task %s was canceled)", parent);
	json_object *msg = b.oom ? NULL : th_status_agent_text(row, b.data);
	th_buf_free(&b);
	rc = msg ? th_status_transition(st, row, TH_STATE_CANCELED, NULL, msg, 1, e)
	         : th_error_set(e, TH_ENOMEM, "out of memory");
	json_object_put(msg);
	return rc;
}

/* Cancels row (already loaded, not terminal) and its unresolved sub-tasks (CTL-8),
 * inside the caller's transaction: children before their parents, so each parent hears
 * of its children's end while it is still open. */
static th_err cancel_tree(struct th_store *st, struct th_task_row *row, const char *participant,
                          struct th_error *e)
{
	struct tree_node *t = NULL;
	size_t n = 0;
	th_err rc = collect_tree(st, row->id, &t, &n, e);
	for (size_t i = n; rc == TH_OK && i-- > 1;) {
		struct th_task_row child = {0};
		rc = th_store_task_get(st, t[i].id, &child, e);
		if (rc == TH_OK && !th_state_terminal((enum th_state)child.state))
			rc = cancel_one(st, &child, participant, t[t[i].parent].id, e);
		th_task_row_free(&child);
	}
	if (rc == TH_OK)
		rc = cancel_one(st, row, participant, NULL, e);
	free_tree(t, n);
	return rc;
}

/* What the cancellation's transaction needs and leaves (cancel_part). */
struct cancel_arg {
	const char *participant;
	const char *tenant;
	const char *task_id;
	struct th_task_row row; /* th_task_row_free (th_control_cancel) */
};

static th_err cancel_part(struct th_store *st, void *arg, struct th_error *e)
{
	struct cancel_arg *a = arg;
	/* SCALE-1: the role, the row and the open sub-tasks (collect_tree's first read) leave
	 * together on PostgreSQL (decision-060, decision-088). */
	th_store_expect(st, a->tenant, a->task_id, a->participant, NULL);
	th_store_subtasks_soon(st, a->task_id, 1);
	th_err rc = th_access_check(st, a->tenant, a->task_id, a->participant, TH_ACCESS_WRITE,
	                            "cancel", NULL, e);
	if (rc == TH_OK)
		rc = th_store_task_get(st, a->task_id, &a->row, e);
	/* CTL-6: stricter than the SDKs' idempotent cancel (docs/decisions). */
	if (rc == TH_OK && th_state_terminal((enum th_state)a->row.state))
		rc = refuse_terminal(&a->row, TH_ENOTCANCELABLE, "canceled", e);
	if (rc == TH_OK)
		rc = cancel_tree(st, &a->row, a->participant, e);
	return rc;
}

th_err th_control_cancel(struct th_store *st, const struct th_config *cfg, const char *participant,
                         const char *tenant, const char *task_id, json_object **task,
                         struct th_error *e)
{
	struct cancel_arg a = {.participant = participant, .tenant = tenant, .task_id = task_id};
	*task = NULL;
	th_err rc = th_store_write(st, cancel_part, &a, e);
	/* The answer is the task as committed, read as GetTask reads it: in one snapshot,
	 * on PostgreSQL one round trip (SCALE-1, decision-069). */
	if (rc == TH_OK)
		rc = th_view_task_by_id(st, task_id, participant, cfg->history_default, 1, task, e);
	th_task_row_free(&a.row);
	return rc;
}

json_object *th_complete_message(const char *task_id, const char *participant_id)
{
	char mid[TH_UUID_LEN + 1];
	th_uuid(mid);
	json_object *msg = json_object_new_object();
	json_object *parts = json_object_new_array();
	json_object *env = json_object_new_object();
	json_object *meta = json_object_new_object();
	if (msg == NULL || parts == NULL || env == NULL || meta == NULL) {
		json_object_put(msg);
		json_object_put(parts);
		json_object_put(env);
		json_object_put(meta);
		return NULL;
	}
	int bad = th_json_put(env, "kind", json_object_new_string("control"));
	bad |= th_json_put(env, "action", json_object_new_string("complete"));
	bad |= th_json_put(msg, "messageId", json_object_new_string(mid));
	bad |= th_json_put(msg, "taskId", json_object_new_string(task_id));
	bad |= th_json_put(msg, "role", json_object_new_string("ROLE_USER"));
	bad |= th_json_push(parts, th_a2a_data_part(env, TH_MT_EVENT));
	bad |= th_json_put(msg, "parts", parts);
	bad |= th_json_put(meta, "participant_id", json_object_new_string(participant_id));
	bad |= th_json_put(msg, "metadata", meta);
	if (bad) {
		json_object_put(msg);
		return NULL; /* decision-026: out of memory */
	}
	return msg;
}

th_err th_harness_cancel(struct th_store *st, const struct th_config *cfg, const char *participant,
                         const struct th_cancel_req *req, json_object **task, struct th_error *e)
{
	return th_control_cancel(st, cfg, participant, req->tenant, req->id, task, e);
}
