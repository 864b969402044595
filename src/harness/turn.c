#include "harness/turn.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "a2a/a2a.h"
#include "config/config.h"
#include "harness/builtins.h"
#include "harness/commands.h"
#include "harness/status.h"
#include "model/model.h"
#include "util/buf.h"
#include "util/jsonx.h"

th_err th_turn_queue(struct th_store *st, const char *task_id, const char *message_id,
                     int64_t *turn_id, struct th_error *e)
{
	return th_store_turn_create(st, task_id, message_id, turn_id, e);
}

/* The text of a message: its text parts joined by new lines; other parts are named
 * so the model (and the echo) can see that something non-textual arrived. */
static char *message_text(json_object *msg)
{
	struct th_buf b;
	th_buf_init(&b);
	json_object *parts = NULL;
	if (msg != NULL && json_object_object_get_ex(msg, "parts", &parts)) {
		for (size_t i = 0; i < json_object_array_length(parts); i++) {
			json_object *p = json_object_array_get_idx(parts, i);
			const char *t = th_json_str(p, "text");
			const char *mt = th_json_str(p, "mediaType");
			if (b.len > 0)
				th_buf_puts(&b, "\n");
			if (t != NULL)
				th_buf_puts(&b, t);
			else
				th_buf_printf(&b, "[%s part]", mt ? mt : "non-text");
		}
	}
	if (b.data == NULL)
		th_buf_puts(&b, "");
	if (b.oom) {
		th_buf_free(&b);
		return NULL;
	}
	return th_buf_take(&b);
}

static json_object *find_message(json_object *history, const char *message_id)
{
	for (size_t i = json_object_array_length(history); i-- > 0;) {
		json_object *m = json_object_array_get_idx(history, i);
		const char *id = th_json_str(m, "messageId");
		if (id != NULL && strcmp(id, message_id) == 0)
			return m;
	}
	return NULL;
}

struct cut_arg {
	struct th_store *st;
	int64_t turn_id;
};

static int is_cut(void *arg)
{
	struct cut_arg *c = arg;
	return th_store_turn_is_cut(c->st, c->turn_id);
}

/* Claims the turn: TH_OK with *claimed = 1, or *claimed = 0 when the turn is not
 * queued any more (another worker has it, or it was cut before it started). */
static th_err claim(struct th_app *app, int64_t turn_id, int *claimed, struct th_error *e)
{
	*claimed = 0;
	struct th_turn_row t = {0};
	th_err rc = th_store_begin(app->store, e);
	if (rc != TH_OK)
		return rc;
	rc = th_store_turn_get(app->store, turn_id, &t, e);
	if (rc == TH_OK && t.state == TH_TURN_QUEUED && !t.cut) {
		rc = th_store_turn_claim(app->store, turn_id, (int)getpid(), app->cfg->lease_ms, e);
		*claimed = rc == TH_OK;
	}
	th_turn_row_free(&t);
	if (rc == TH_OK)
		rc = th_store_commit(app->store, e);
	if (rc != TH_OK)
		th_store_rollback(app->store);
	return rc;
}

/* Produces the reply: a built-in command answers itself; a file command expands to
 * a prompt for the model (CMD-4); anything else goes to the model as it is. */
static th_err think(struct th_app *app, const struct th_task_row *row, int64_t turn_id,
                    const char *message_id, struct th_model_output *out, struct th_error *e)
{
	json_object *history = NULL;
	th_err rc = th_store_history(app->store, row->id, -1, &history, e);
	if (rc != TH_OK)
		return rc;
	char *text = message_text(find_message(history, message_id));
	if (text == NULL) {
		json_object_put(history);
		return th_error_set(e, TH_ENOMEM, "out of memory");
	}
	const char *args = NULL;
	const struct th_command *c = th_registry_match(app->commands, text, &args);
	char *prompt = NULL;
	if (c != NULL && c->kind == TH_CMD_BUILTIN) {
		rc = th_builtin_run(app, c, row, args, &out->text, e);
	} else {
		if (c != NULL && (prompt = th_command_expand(c, args)) == NULL)
			rc = th_error_set(e, TH_ENOMEM, "out of memory");
		struct th_model_input in = {
			.task_id = row->id, .goal = row->goal, .history = history,
			.prompt = prompt ? prompt : text,
		};
		struct cut_arg ca = {app->store, turn_id};
		if (rc == TH_OK)
			rc = th_model_run(app->cfg, &in, is_cut, &ca, out, e);
	}
	free(prompt);
	free(text);
	json_object_put(history);
	return rc;
}

/* The turn's last write. Inside one transaction it re-reads the cut flag and the
 * task: a turn cut by complete/cancel in any process, or a task that ended while
 * the model ran, discards its result (CTL-3). Otherwise the reply is appended and
 * the participant's task parks awaiting the next message (CTL-7). */
static th_err settle(struct th_app *app, const char *task_id, int64_t turn_id,
                     const struct th_model_output *out, const char *failure, struct th_error *e)
{
	struct th_task_row row = {0};
	json_object *msg = NULL, *sub = NULL;
	th_err rc = th_store_begin(app->store, e);
	if (rc != TH_OK)
		return rc;
	rc = th_store_task_get(app->store, task_id, &row, e);
	int cut = rc == TH_OK && (out->cut || th_store_turn_is_cut(app->store, turn_id) ||
	                          th_state_terminal((enum th_state)row.state));
	if (rc == TH_OK && cut) {
		rc = th_store_turn_finish(app->store, turn_id, TH_TURN_CUT, NULL, e);
	} else if (rc == TH_OK && failure != NULL) {
		msg = th_status_agent_text(&row, failure);
		rc = msg ? th_status_transition(app->store, &row, TH_STATE_FAILED, NULL, msg, 1, e)
		         : th_error_set(e, TH_ENOMEM, "out of memory");
		if (rc == TH_OK)
			rc = th_store_turn_finish(app->store, turn_id, TH_TURN_FAILED, failure, e);
	} else if (rc == TH_OK) {
		msg = th_status_agent_text(&row, out->text);
		sub = th_status_ext(TH_SUB_NEXT_MESSAGE, NULL, NULL);
		rc = msg && sub ? th_status_transition(app->store, &row, TH_STATE_INPUT_REQUIRED, sub,
		                                       msg, 1, e)
		                : th_error_set(e, TH_ENOMEM, "out of memory");
		if (rc == TH_OK)
			rc = th_store_turn_finish(app->store, turn_id, TH_TURN_DONE, NULL, e);
	}
	if (rc == TH_OK)
		rc = th_store_commit(app->store, e);
	if (rc != TH_OK)
		th_store_rollback(app->store);
	json_object_put(msg);
	json_object_put(sub);
	th_task_row_free(&row);
	return rc;
}

th_err th_turn_run(struct th_app *app, const char *task_id, int64_t turn_id, struct th_error *e)
{
	int claimed = 0;
	th_err rc = claim(app, turn_id, &claimed, e);
	if (rc != TH_OK || !claimed)
		return rc;
	struct th_turn_row t = {0};
	struct th_task_row row = {0};
	struct th_model_output out = {0};
	rc = th_store_turn_get(app->store, turn_id, &t, e);
	if (rc == TH_OK)
		rc = th_store_task_get(app->store, task_id, &row, e);
	if (rc != TH_OK)
		goto done;
	struct th_error why;
	th_error_clear(&why);
	th_err mrc = think(app, &row, turn_id, t.message_id, &out, &why);
	char failure[TH_ERRMSG_MAX + 32];
	if (mrc != TH_OK)
		snprintf(failure, sizeof failure, "turn failed: %s", why.msg);
	rc = settle(app, task_id, turn_id, &out, mrc != TH_OK ? failure : NULL, e);
done:
	th_model_output_free(&out);
	th_turn_row_free(&t);
	th_task_row_free(&row);
	return rc;
}
