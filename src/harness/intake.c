/* intake.c — SendMessage: a message creates a task (TASK-2), continues one (TASK-6),
 * is recognised as a resend (TASK-7), or completes the task (CTL-1). The message is
 * committed, with its turn queued, before any turn runs (TURN-4). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "a2a/a2a.h"
#include "config/config.h"
#include "harness/access.h"
#include "harness/control.h"
#include "harness/ext.h"
#include "harness/harness.h"
#include "harness/intake.h"
#include "harness/status.h"
#include "harness/turn.h"
#include "harness/view.h"
#include "store/store.h"
#include "util/buf.h"
#include "util/ids.h"
#include "util/jsonx.h"

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
				return th_error_set(e, TH_EINVAL,
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
		json_object_object_add(copy, "metadata", meta);
	}
	json_object_object_add(meta, "participant_id", json_object_new_string(participant));
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

static const char *str_or(const char *s, const char *dflt)
{
	return s != NULL ? s : dflt;
}

static th_err create_task(struct th_app *app, const char *participant, json_object *msg,
                          char task_id_out[TH_INTAKE_ID_MAX], int64_t *turn_id, struct th_error *e)
{
	struct th_store *st = app->store;
	const char *mid = th_json_str(msg, "messageId");
	char *existing = NULL;
	th_err rc = th_store_task_by_first_message(st, participant, mid, &existing, e);
	if (rc == TH_OK) {
		/* TASK-7: the same sender resent the message that created a task. */
		snprintf(task_id_out, TH_INTAKE_ID_MAX, "%s", existing);
		free(existing);
		*turn_id = 0;
		return TH_OK;
	}
	if (rc != TH_ENOTFOUND)
		return rc;
	th_error_clear(e);

	char id[TH_UUID_LEN + 1], ctx[TH_UUID_LEN + 1];
	th_uuid(id);
	th_uuid(ctx);
	char *text = joined_text(msg);
	char *name = text ? task_name(text) : NULL;
	/* The row and participant structs hold mutable pointers; give them copies. */
	char *sender = strdup(participant);
	char *context = strdup(str_or(th_json_str(msg, "contextId"), ctx));
	int64_t now = th_now_ms();
	struct th_task_row row = {
		.id = id,
		.context_id = context,
		.state = TH_STATE_SUBMITTED,
		.status_ms = now,
		.name = name,
		.goal = text,
		.ext_json = "{\"type\":null,\"description\":\"\",\"acceptance_criteria\":[],\"plan\":null}",
		.created_by = sender,
		.created_ms = now,
		.updated_ms = now,
	};
	if (text == NULL || name == NULL || sender == NULL || context == NULL) {
		rc = th_error_set(e, TH_ENOMEM, "out of memory");
		goto out;
	}
	char agent_id[] = TH_AGENT_ID;
	struct th_participant reporter = {sender, "human", "reporter", ""};
	struct th_participant agent = {agent_id, "agent", "assignee", ""};
	json_object_object_add(msg, "taskId", json_object_new_string(id));
	json_object_object_add(msg, "contextId", json_object_new_string(row.context_id));
	json_object *snapshot = NULL, *ev = NULL;
	if ((rc = th_store_task_insert(st, &row, e)) != TH_OK ||
	    (rc = th_store_participant_put(st, id, &reporter, e)) != TH_OK ||
	    (rc = th_store_participant_put(st, id, &agent, e)) != TH_OK ||
	    (rc = th_store_message_append(st, id, mid, "ROLE_USER", participant, th_json_text(msg),
	                                  e)) != TH_OK ||
	    (rc = th_view_task(st, &row, NULL, -1, 0, &snapshot, e)) != TH_OK)
		goto out;
	/* The first event of every task is the Task itself (STREAM-1). */
	ev = json_object_new_object();
	json_object_object_add(ev, "task", snapshot);
	rc = th_store_event_append(st, id, "task", th_json_text(ev), NULL, e);
	json_object_put(ev);
	if (rc != TH_OK)
		goto out;
	/* th_status_transition rewrites the status strings; give it owned ones. */
	struct th_task_row live = {0};
	if ((rc = th_store_task_get(st, id, &live, e)) == TH_OK &&
	    (rc = th_status_transition(st, &live, TH_STATE_WORKING, NULL, NULL, 0, e)) == TH_OK)
		rc = th_turn_queue(st, id, mid, turn_id, e);
	th_task_row_free(&live);
	if (rc == TH_OK)
		snprintf(task_id_out, TH_INTAKE_ID_MAX, "%s", id);
out:
	free(text);
	free(name);
	free(sender);
	free(context);
	return rc;
}

static th_err follow_up(struct th_app *app, const char *participant, json_object *msg,
                        const char *task_id, int64_t *turn_id, struct th_error *e)
{
	struct th_store *st = app->store;
	struct th_task_row row = {0};
	const char *mid = th_json_str(msg, "messageId");
	*turn_id = 0;
	th_err rc = th_access_check(st, task_id, participant, TH_ACCESS_WRITE, "send messages to",
	                            NULL, e);
	if (rc == TH_OK)
		rc = th_store_task_get(st, task_id, &row, e);
	if (rc != TH_OK)
		goto out;
	if (th_store_message_exists(st, task_id, mid))
		goto out; /* TASK-7: already processed; the response is the current task */
	if (th_state_terminal((enum th_state)row.state)) {
		rc = th_error_set(e, TH_EUNSUPPORTED,
		                  "task %.200s is %s; it accepts no more messages (start a new task in "
		                  "the same context)",
		                  task_id, th_state_name((enum th_state)row.state));
		snprintf(e->task_id, sizeof e->task_id, "%s", task_id);
		goto out;
	}
	const char *ctx = th_json_str(msg, "contextId");
	if (ctx != NULL && strcmp(ctx, row.context_id) != 0) {
		rc = th_error_set(e, TH_EINVAL,
		                  "message.contextId %.100s does not match task %.100s's context %.100s",
		                  ctx, task_id, row.context_id);
		goto out;
	}
	json_object_object_add(msg, "contextId", json_object_new_string(row.context_id));
	if ((rc = th_store_message_append(st, task_id, mid, "ROLE_USER", participant,
	                                  th_json_text(msg), e)) != TH_OK)
		goto out;
	if (row.state != TH_STATE_WORKING &&
	    (rc = th_status_transition(st, &row, TH_STATE_WORKING, NULL, NULL, 0, e)) != TH_OK)
		goto out;
	rc = th_turn_queue(st, task_id, mid, turn_id, e);
out:
	th_task_row_free(&row);
	return rc;
}

th_err th_intake_accept(struct th_app *app, const char *participant,
                        const struct th_send_req *req, char task_id[TH_INTAKE_ID_MAX],
                        int64_t *turn_id, json_object **final_task, struct th_error *e)
{
	*turn_id = 0;
	*final_task = NULL;
	task_id[0] = '\0';
	if (participant == NULL || *participant == '\0')
		return th_access_no_participant(e);
	json_object *msg = NULL;
	th_err rc = stamp_sender(req->message, participant, &msg, e);
	if (rc != TH_OK)
		return rc;
	const char *given = th_json_str(msg, "taskId");
	if (given != NULL)
		snprintf(task_id, TH_INTAKE_ID_MAX, "%s", given);
	int ctl = th_control_detect(msg, e);
	if (ctl < 0) {
		rc = TH_EINVAL;
	} else if (ctl == 1) {
		rc = given != NULL ? th_control_complete(app, participant, task_id, msg, final_task, e)
		                   : th_error_set(e, TH_EINVAL,
		                                  "a control envelope completes an existing task: "
		                                  "message.taskId is required");
	} else if ((rc = th_store_begin(app->store, e)) == TH_OK) {
		if (given == NULL)
			rc = create_task(app, participant, msg, task_id, turn_id, e);
		else
			rc = follow_up(app, participant, msg, task_id, turn_id, e);
		if (rc == TH_OK)
			rc = th_store_commit(app->store, e);
		if (rc != TH_OK)
			th_store_rollback(app->store);
	}
	json_object_put(msg);
	return rc;
}

th_err th_harness_send(struct th_app *app, const char *participant, unsigned extensions,
                       const struct th_send_req *req, json_object **task, struct th_error *e)
{
	(void)extensions;
	*task = NULL;
	char id[TH_INTAKE_ID_MAX];
	int64_t turn_id = 0;
	json_object *final_task = NULL;
	th_err rc = th_intake_accept(app, participant, req, id, &turn_id, &final_task, e);
	int history = req->history_length >= 0 ? req->history_length : app->cfg->history_default;
	if (rc != TH_OK)
		return rc;
	if (final_task != NULL) {
		th_a2a_trim_history(json_object_object_get(final_task, "history"), history);
		*task = final_task;
		return TH_OK;
	}
	if (turn_id > 0) {
		if (req->return_immediately && app->npending < TH_APP_MAX_PENDING &&
		    (app->pending[app->npending].task_id = strdup(id)) != NULL) {
			app->pending[app->npending++].turn_id = turn_id;
		} else {
			/* A turn that fails leaves its lease to recovery; the message is safe. */
			struct th_error te;
			th_error_clear(&te);
			if (th_turn_run(app, id, turn_id, &te) != TH_OK)
				fprintf(stderr, "tiny-harness: turn %lld on task %s: %s\n",
				        (long long)turn_id, id, te.msg);
		}
	}
	return th_view_task_by_id(app->store, id, participant, history, 0, task, e);
}
