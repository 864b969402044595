/* SPDX-License-Identifier: Apache-2.0 */
#include "turn/turn.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "a2a/a2a.h"
#include "config/settings.h"
#include "turn/builtins.h"
#include "turn/commands.h"
#include "domain/access.h"
#include "domain/channel.h"
#include "domain/ext.h"
#include "domain/inbound.h"
#include "domain/task.h"
#include "turn/intrinsics.h"
#include "domain/view.h"
#include "domain/status.h"
#include "domain/ui.h"
#include "model/model.h"
#include "util/buf.h"
#include "util/ids.h"
#include "util/jsonx.h"
#include "util/log.h"
#include "util/metrics.h"

struct cut_arg {
	struct th_store *st;
	const struct th_lease *lease;
	int lease_ms;
	int64_t renewed_ms; /* monotonic time of the last lease renewal */
};

/* Asked by the model between steps: has complete/cancel cut this turn? It also keeps
 * the lease alive while the model works, renewing it every third of its length; a
 * lease that is no longer ours (taken over after a stall) counts as a cut (TURN-6). */
static int is_cut(void *arg)
{
	struct cut_arg *c = arg;
	if (th_store_turn_is_cut(c->st, c->lease->turn_id))
		return 1;
	int64_t now = th_mono_ms();
	if (now - c->renewed_ms >= c->lease_ms / 3) {
		struct th_error e;
		th_error_clear(&e);
		int held = 1;
		/* A busy database is no verdict: the next call tries again. */
		if (th_store_turn_hold(c->st, c->lease, c->lease_ms, &held, &e) == TH_OK && !held)
			return 1;
		c->renewed_ms = now;
	}
	return 0;
}

/* The lease was lost (TURN-6): another worker took the turn over or it was cut. Nothing
 * of this attempt was written; say so in the server's log. */
static void lost(const char *task_id, const struct th_lease *l, const char *where)
{
	th_log(TH_LOG_WARN,
	       "turn %lld on task %s: attempt %d no longer holds the lease (%s); its result is "
	       "discarded",
	       (long long)l->turn_id, task_id, l->epoch, where);
}

/* A write the holder of a lease makes (write_held): body runs with tc->store inside the
 * transaction; arg is the caller's. */
typedef th_err (*held_body)(const struct th_turn_ctx *tc, void *arg, struct th_error *e);

struct held_write {
	const struct th_turn_ctx *tc;
	const struct th_lease *l;
	held_body body;
	void *arg;
	int held;
};

static th_err held_part(struct th_store *st, void *arg, struct th_error *e)
{
	struct held_write *h = arg;
	th_err rc = th_store_turn_hold(st, h->l, h->tc->cfg->lease_ms, &h->held, e);
	if (rc != TH_OK || !h->held)
		return rc; /* the lease is gone: the hold changed no row, nothing is written */
	return h->body(h->tc, h->arg, e);
}

/* Runs body in one write transaction (th_store_write) that first checks and renews the
 * lease l holds (th_store_turn_hold), so the lease check and the turn's writes commit
 * together (TURN-6). *held = 0 when the lease is gone: body does not run, nothing is
 * written, the loss is logged, and rc is TH_OK. */
static th_err write_held(const struct th_turn_ctx *tc, const char *task_id,
                         const struct th_lease *l, const char *where, held_body body, void *arg,
                         int *held, struct th_error *e)
{
	struct held_write h = {.tc = tc, .l = l, .body = body, .arg = arg, .held = 0};
	th_err rc = th_store_write(tc->store, held_part, &h, e);
	*held = h.held;
	if (rc == TH_OK && !h.held)
		lost(task_id, l, where);
	return rc;
}

/* Whether the turn is still held with l: running, not cut, at l's epoch. */
static th_err held_now(const struct th_turn_ctx *tc, const struct th_lease *l, int *held,
                       struct th_error *e)
{
	struct th_turn_row t = {0};
	th_err rc = th_store_turn_get(tc->store, l->turn_id, &t, e);
	*held = rc == TH_OK && t.state == TH_TURN_RUNNING && !t.cut && t.attempts == l->epoch;
	th_turn_row_free(&t);
	return rc;
}

/* What the turn decided outside any transaction. */
struct plan {
	const struct th_command *builtin; /* runs inside settle's transaction */
	json_object *decision;            /* the input, when it answers a /confirm (UI-4) */
	struct th_inbound decided;        /* what decision carries, borrowed from it */
	char *args;                       /* its argument text; free */
	char *sender;                     /* who sent the input; free */
	char *channel;                    /* the side channel the input came on, or NULL;
	                                     free (SEC-2: the reply goes there) */
	struct th_model_output out;       /* the model's reply (no built-in) */
};

static void plan_free(struct plan *p)
{
	free(p->args);
	free(p->sender);
	free(p->channel);
	json_object_put(p->decision);
	th_model_output_free(&p->out);
}

/* The turn's input, read once (th_inbound_read, issue 30): *own, the message (the one
 * given, as stored, or else read back; the caller puts it), *in, what it carries
 * (borrowed from *own), *words, what the model is given of it, and *sender, who sent it
 * (the caller frees it). A stored message reads as it did when it was accepted; one that
 * no longer does (a limit lowered since) fails the turn with the reason. */
static th_err read_input(const struct th_turn_ctx *tc, const struct th_task_row *row,
                         const char *message_id, json_object *given, json_object **own,
                         struct th_inbound *in, struct th_buf *words, char **sender,
                         struct th_error *e)
{
	memset(in, 0, sizeof *in);
	th_err rc =
	    given != NULL ? TH_OK : th_store_message_get(tc->store, row->id, message_id, own, e);
	if (rc != TH_OK)
		return rc;
	if (given != NULL)
		*own = json_object_get(given);
	const char *who = th_json_str(json_object_object_get(*own, "metadata"), "participant_id");
	th_buf_puts(words, "");
	if ((*sender = strdup(who ? who : "")) == NULL)
		return th_error_set(e, TH_ENOMEM, "out of memory");
	struct th_error why;
	th_error_clear(&why);
	if (*own != NULL && th_inbound_read(*own, *sender, &tc->cfg->lim, in, words, &why) != 0)
		return th_error_set(e, why.code == TH_ENOMEM ? TH_ENOMEM : TH_EINTERNAL,
		                    "message %.100s no longer reads as it did when accepted: %s",
		                    th_json_str(*own, "messageId"), why.msg);
	return words->oom ? th_error_set(e, TH_ENOMEM, "out of memory") : TH_OK;
}

/* The side channel a message came on (SEC-2: its reply goes there), or NULL for the
 * task channel. */
static const char *side_channel(const struct th_inbound *in, const char *task_id)
{
	return in->has_channel && strcmp(in->channel.channel_id, task_id) != 0
	           ? in->channel.channel_id
	           : NULL;
}

/* For a backend that reads the context, the newest history the audience of chan (NULL:
 * the task channel) may read (SEC-2, decision-034), bounded by model_history_max and
 * model_history_bytes and read back from the history's end without reading the rest
 * (SEC-3): *history, the caller's to put; NULL for a backend that does not. */
static th_err load_history(const struct th_turn_ctx *tc, const struct th_task_row *row,
                           const char *chan, json_object **history, struct th_error *e)
{
	if (!th_model_wants_context(tc->cfg))
		return TH_OK;
	return th_view_history_window(tc->store, row->id, chan, tc->cfg->model_history_max,
	                              (size_t)tc->cfg->model_history_bytes, history, e);
}

/* The model's part of a turn: the prompt with the context the turn's audience may
 * read. A side-channel turn is offered no intrinsic tools: their effects (plan, roles,
 * questions, surfaces) are seen by every participant (SEC-2). */
static th_err ask_model(const struct th_turn_ctx *tc, const struct th_task_row *row,
                        const struct th_lease *l, json_object *history, const char *prompt,
                        json_object *rounds, struct plan *p, struct th_error *e)
{
	json_object *task = NULL, *tools = NULL;
	th_err rc = TH_OK;
	int context = th_model_wants_context(tc->cfg);
	if (context)
		rc = th_view_task_ext(tc->store, row, &task, e);
	/* Parsed on the first turn that offers them, not at start-up (PKG-4). */
	if (rc == TH_OK && context && p->channel == NULL &&
	    (tools = th_intrinsics_tools_of(tc->tools)) == NULL)
		rc = th_error_set(e, TH_ENOMEM, "out of memory");
	struct th_model_input in = {
	    .task_id = row->id,
	    .goal = row->goal,
	    .task = task,
	    .history = history,
	    .prompt = prompt,
	    .tools = tools,
	    .rounds = json_object_array_length(rounds) > 0 ? rounds : NULL,
	};
	struct cut_arg ca = {tc->store, l, tc->cfg->lease_ms, th_mono_ms()};
	struct th_error why;
	th_error_clear(&why);
	if (rc == TH_OK &&
	    th_model_run(tc->cfg, &in, l != NULL ? is_cut : NULL, &ca, &p->out, &why) != TH_OK) {
		/* SEC-5: what failed (program path, its stderr, an endpoint) is for the
		 * operator; the participants read only that the model failed. */
		th_log(TH_LOG_WARN, "turn on task %s: model %s failed: %s", row->id, tc->cfg->model,
		       why.msg);
		rc = th_error_set(e, why.code == TH_ENOMEM ? TH_ENOMEM : TH_EINTERNAL,
		                  "the model did not answer (the server log says why)");
	}
	json_object_put(task);
	return rc;
}

/* A built-in command answers inside settle; a file command expands into a prompt for
 * the model (CMD-4); anything else goes to the model as it is. A command is the first
 * text part (CMD-2), as the intake read it. A message on a side channel is only ever
 * words for the model: commands and decisions act on the whole task, where every
 * participant would see what they carry (SEC-2). */
static th_err decide(const struct th_turn_ctx *tc, const struct th_task_row *row,
                     const struct th_lease *l, json_object *input, const struct th_inbound *in,
                     json_object *history, const char *words, json_object *rounds, struct plan *p,
                     struct th_error *e)
{
	const char *args = NULL;
	const struct th_command *c =
	    p->channel == NULL ? th_registry_match(tc->commands, in->text, &args) : NULL;
	if (p->channel == NULL && input != NULL &&
	    th_ui_is_decision(tc->store, row->id, input, in)) {
		p->decision = json_object_get(input);
		p->decided = *in; /* borrowed from p->decision */
		return TH_OK;
	}
	if (c != NULL && c->kind == TH_CMD_BUILTIN) {
		p->builtin = c;
		return (p->args = strdup(args)) != NULL
		           ? TH_OK
		           : th_error_set(e, TH_ENOMEM, "out of memory");
	}
	char *prompt = c != NULL ? th_command_expand(c, args) : NULL;
	th_err rc = c != NULL && prompt == NULL
	                ? th_error_set(e, TH_ENOMEM, "out of memory")
	                : ask_model(tc, row, l, history, prompt ? prompt : words, rounds, p, e);
	free(prompt);
	return rc;
}

/* What the turn does with its input (struct plan), decided outside any transaction. */
static th_err think(const struct th_turn_ctx *tc, const struct th_task_row *row,
                    const struct th_lease *l, const char *message_id, json_object *given,
                    json_object *rounds, struct plan *p, struct th_error *e)
{
	json_object *history = NULL, *own = NULL;
	struct th_inbound in;
	struct th_buf words;
	th_buf_init(&words);
	th_err rc = read_input(tc, row, message_id, given, &own, &in, &words, &p->sender, e);
	const char *chan = rc == TH_OK ? side_channel(&in, row->id) : NULL;
	if (chan != NULL && (p->channel = strdup(chan)) == NULL)
		rc = th_error_set(e, TH_ENOMEM, "out of memory");
	if (rc == TH_OK)
		rc = load_history(tc, row, chan, &history, e);
	if (rc == TH_OK)
		rc = decide(tc, row, l, own, &in, history, words.data, rounds, p, e);
	th_buf_free(&words);
	json_object_put(history);
	json_object_put(own);
	return rc;
}

/* The reply message: text, plus the parts a built-in added. */
static json_object *reply_message(const struct th_task_row *row, const char *text,
                                  json_object *extra_parts)
{
	json_object *parts = json_object_new_array();
	if (parts == NULL)
		return NULL;
	int bad = th_json_push(parts, th_a2a_text_part(text));
	for (size_t i = 0; extra_parts != NULL && i < json_object_array_length(extra_parts); i++)
		bad |=
		    th_json_push(parts, json_object_get(json_object_array_get_idx(extra_parts, i)));
	if (bad) {
		json_object_put(parts);
		return NULL; /* decision-026: the caller reports TH_ENOMEM */
	}
	return th_a2a_agent_message(row->context_id, row->id, parts, NULL);
}

/* Ends the turn held with l (none for an inline turn: it has no row). */
static th_err finish(const struct th_turn_ctx *tc, const struct th_lease *l, int state,
                     const char *error, struct th_error *e)
{
	return l != NULL ? th_store_turn_finish(tc->store, l, state, error, e) : TH_OK;
}

/* SEC-2: a turn whose input came on a side channel answers on that channel, so only
 * its members read the reply: a channel message from the harness, kept in history and
 * delivered as a side-channel event. The task parks with no status message, which
 * every participant would read. */
static th_err answer_in_channel(const struct th_turn_ctx *tc, struct th_task_row *row,
                                const char *channel, const char *text, struct th_error *e)
{
	json_object *value = json_object_new_object(), *parts = json_object_new_array();
	int bad = value == NULL || parts == NULL;
	bad |= th_json_put(value, "channel_id", json_object_new_string(channel));
	bad |= th_json_put(value, "sender", json_object_new_string(TH_AGENT_ID));
	bad |= th_json_put(value, "kind", json_object_new_string("message"));
	bad |= th_json_put(value, "text", json_object_new_string(text));
	bad |= th_json_push(parts, th_a2a_data_part(json_object_get(value), TH_MT_CHANNEL));
	json_object *msg = bad ? NULL : reply_message(row, text, parts);
	json_object *sub = th_status_ext(TH_SUB_NEXT_MESSAGE, NULL, NULL);
	th_err rc = msg != NULL && sub != NULL
	                ? th_channel_record(tc->store, row, TH_AGENT_ID, channel, "message", text,
	                                    NULL, value, th_json_str(msg, "messageId"), e)
	                : th_error_set(e, TH_ENOMEM, "out of memory building a channel reply");
	if (rc == TH_OK)
		rc = th_channel_deliver(tc->store, row, TH_AGENT_ID, channel, msg, e);
	if (rc == TH_OK)
		rc = th_status_transition(tc->store, row, TH_STATE_INPUT_REQUIRED, sub, NULL, 0, e);
	json_object_put(value);
	json_object_put(parts);
	json_object_put(msg);
	json_object_put(sub);
	return rc;
}

/* The turn's result, written in the caller's transaction by the holder of l (NULL for
 * an inline turn). A turn
 * cut by complete/cancel in any process, or whose task ended while the model ran,
 * discards its result (CTL-3). Otherwise a built-in runs here, the reply is appended and
 * the participant's task parks — awaiting the next message (CTL-7), or an answer when
 * the command asked a question (CH-4). A sub-task a built-in spawned is left in res.
 * With replied, *replied is the reply (a new reference) when that was all: row moved to
 * INPUT_REQUIRED with the reply appended to its history, nothing else of the task
 * changed (no command, decision or question); else it stays NULL. */
static th_err apply_result(const struct th_turn_ctx *tc, struct th_task_row *row,
                           const struct th_lease *l, struct plan *p,
                           struct th_intrinsic_effects *fx, const char *failure,
                           struct th_cmd_result *res, json_object **replied, struct th_error *e)
{
	json_object *msg = NULL, *sub = NULL;
	th_err rc = TH_OK;
	if (p->out.cut || th_state_terminal((enum th_state)row->state)) {
		rc = finish(tc, l, TH_TURN_CUT, NULL, e);
	} else if (failure == NULL && p->channel != NULL) {
		rc = answer_in_channel(tc, row, p->channel, p->out.text ? p->out.text : "", e);
		if (rc == TH_OK)
			rc = finish(tc, l, TH_TURN_DONE, NULL, e);
	} else if (failure != NULL) {
		msg = th_status_agent_text(row, failure);
		rc = msg ? th_status_transition(tc->store, row, TH_STATE_FAILED, NULL, msg, 1, e)
		         : th_error_set(e, TH_ENOMEM, "out of memory");
		if (rc == TH_OK)
			rc = finish(tc, l, TH_TURN_FAILED, failure, e);
	} else {
		if (p->decision != NULL)
			rc = th_ui_decide(tc->store, tc->cfg, row, p->sender, p->decision,
			                  &p->decided, res, e);
		else if (p->builtin != NULL)
			rc = th_builtin_run(tc, p->builtin, row, p->sender, p->args, res, e);
		const char *text = p->builtin != NULL || p->decision != NULL
		                       ? (res->text.data ? res->text.data : "")
		                   : fx->ask_text ? fx->ask_text
		                   : p->out.text  ? p->out.text
		                                  : "";
		msg = rc == TH_OK ? reply_message(row, text, fx->ask ? fx->ask_parts : res->parts)
		                  : NULL;
		/* CTL-7: only a sub-task the model spawned on its own is completed by its
		 * turn's result; everything else parks. */
		int completes = p->builtin == NULL && p->decision == NULL && fx->ask == NULL &&
		                strcmp(row->created_by, TH_AGENT_ID) == 0 && row->parent_id != NULL;
		/* A built-in that asks nothing leaves a waiting task waiting for the same
		 * thing (an answer it awaits stays awaited). */
		if (completes)
			sub = NULL;
		else if (fx->ask != NULL)
			sub = json_object_get(fx->ask);
		else if (res->sub_ext != NULL)
			sub = json_object_get(res->sub_ext);
		else if ((p->builtin != NULL || p->decision != NULL) &&
		         row->state == TH_STATE_INPUT_REQUIRED && row->status_meta_json != NULL)
			sub = json_tokener_parse(row->status_meta_json);
		else
			sub = th_status_ext(TH_SUB_NEXT_MESSAGE, NULL, NULL);
		if (rc == TH_OK && completes)
			rc = msg ? th_status_transition(tc->store, row, TH_STATE_COMPLETED, NULL,
			                                msg, 1, e)
			         : th_error_set(e, TH_ENOMEM, "out of memory");
		else if (rc == TH_OK)
			rc = msg && sub
			         ? th_status_transition(tc->store, row, TH_STATE_INPUT_REQUIRED,
			                                sub, msg, 1, e)
			         : th_error_set(e, TH_ENOMEM, "out of memory");
		if (rc == TH_OK)
			rc = finish(tc, l, TH_TURN_DONE, NULL, e);
		if (rc == TH_OK && replied != NULL && !completes && p->builtin == NULL &&
		    p->decision == NULL && fx->ask == NULL)
			*replied = json_object_get(msg);
	}
	json_object_put(msg);
	json_object_put(sub);
	return rc;
}

/* What settle's transaction needs (settle_part; the caller owns every pointer). */
struct settle_arg {
	const char *task_id;
	const struct th_lease *l;
	struct plan *p;
	struct th_intrinsic_effects *fx;
	const char *failure;
	struct th_task_row *row;
	struct th_cmd_result *res;
};

static th_err settle_part(const struct th_turn_ctx *tc, void *arg, struct th_error *e)
{
	struct settle_arg *a = arg;
	th_err rc = th_store_task_get(tc->store, a->task_id, a->row, e);
	return rc == TH_OK
	           ? apply_result(tc, a->row, a->l, a->p, a->fx, a->failure, a->res, NULL, e)
	           : rc;
}

/* The turn's last write, in one transaction that first checks and renews the lease
 * (TURN-6), so a worker that lost it while stalled writes nothing at all. */
static th_err settle(const struct th_turn_ctx *tc, const char *task_id, const struct th_lease *l,
                     struct plan *p, struct th_intrinsic_effects *fx, const char *failure,
                     struct th_error *e)
{
	struct th_task_row row = {0};
	struct th_cmd_result res = {0};
	th_buf_init(&res.text);
	struct settle_arg a = {task_id, l, p, fx, failure, &row, &res};
	int held = 0;
	th_err rc = write_held(tc, task_id, l, "settle", settle_part, &a, &held, e);
	/* A sub-task's first turn runs once the parent's reply is safe. */
	if (rc == TH_OK && held && res.child_task != NULL)
		(void)th_defer_turn(&tc->defer, res.child_task, res.child_turn);
	th_cmd_result_free(&res);
	th_task_row_free(&row);
	return rc;
}

th_err th_defer_turn(const struct th_defer *d, const char *task_id, int64_t turn_id)
{
	return d->queue != NULL ? d->queue(d->impl, task_id, turn_id) : TH_ENOMEM;
}

int th_turn_instant(const struct th_config *cfg)
{
	return strcmp(cfg->model, "echo") == 0 && cfg->echo_delay_ms == 0;
}

th_err th_turn_inline(const struct th_turn_ctx *tc, const char *task_id, json_object *input,
                      struct th_turn_reply *out, struct th_error *e)
{
	const char *message_id = th_json_str(input, "messageId");
	struct th_task_row row = {0};
	struct th_cmd_result res = {0};
	struct plan p = {0};
	struct th_intrinsic_effects fx = {0};
	th_buf_init(&res.text);
	json_object *rounds = json_object_new_array();
	struct th_error why;
	th_error_clear(&why);
	th_err rc = rounds ? th_store_task_get(tc->store, task_id, &row, e)
	                   : th_error_set(e, TH_ENOMEM, "out of memory");
	th_err mrc = TH_OK;
	if (rc == TH_OK)
		mrc = think(tc, &row, NULL, message_id, input, rounds, &p, &why);
	if (mrc == TH_OK && p.out.tool_calls != NULL && json_object_array_length(p.out.tool_calls))
		mrc = th_error_set(&why, TH_EINTERNAL, "an instant model called tools");
	char failure[TH_ERRMSG_MAX + 32];
	if (mrc != TH_OK)
		snprintf(failure, sizeof failure, "turn failed: %s", why.msg);
	if (rc == TH_OK)
		rc = apply_result(tc, &row, NULL, &p, &fx, mrc != TH_OK ? failure : NULL, &res,
		                  out != NULL ? &out->message : NULL, e);
	/* Operators still see one turn per message in `turns`. */
	if (rc == TH_OK)
		rc = th_store_turn_record(tc->store, task_id, message_id, (int)getpid(),
		                          mrc != TH_OK ? TH_TURN_FAILED : TH_TURN_DONE,
		                          mrc != TH_OK ? failure : NULL, e);
	if (rc == TH_OK)
		th_mx_turn(mrc != TH_OK); /* OBS-2: counted even if the caller then rolls back */
	/* Runs after the response; if the caller rolls back instead, the child's turn is
	 * not found then and nothing runs. */
	if (rc == TH_OK && res.child_task != NULL)
		(void)th_defer_turn(&tc->defer, res.child_task, res.child_turn);
	th_cmd_result_free(&res);
	json_object_put(rounds);
	plan_free(&p);
	if (out != NULL && rc == TH_OK && out->message != NULL) {
		out->row = row; /* the task as the turn left it: the caller's now */
	} else {
		th_task_row_free(&row);
		if (out != NULL) {
			json_object_put(out->message);
			out->message = NULL;
		}
	}
	return rc;
}

void th_turn_reply_free(struct th_turn_reply *r)
{
	th_task_row_free(&r->row);
	json_object_put(r->message);
	r->message = NULL;
}

#define MAX_ROUNDS 8

/* Queues a sub-task's first turn to run once its parent's change is committed. */
static void defer_child(const struct th_turn_ctx *tc, struct th_intrinsic_effects *fx)
{
	if (fx->child_task != NULL)
		(void)th_defer_turn(&tc->defer, fx->child_task, fx->child_turn);
}

/* What a tool round's transaction needs (round_part; the caller owns every pointer). */
struct round_arg {
	const char *task_id;
	const struct th_lease *l;
	const char *actor;
	json_object *calls;
	json_object *results; /* each call's result is appended */
	struct th_intrinsic_effects *fx;
	struct th_task_row *row;
	int *stopped;
};

static th_err round_part(const struct th_turn_ctx *tc, void *arg, struct th_error *e)
{
	struct round_arg *a = arg;
	th_err rc = th_store_task_get(tc->store, a->task_id, a->row, e);
	if (rc == TH_OK && th_state_terminal((enum th_state)a->row->state)) {
		*a->stopped = 1;
		rc = th_store_turn_finish(tc->store, a->l, TH_TURN_CUT, NULL, e);
	}
	for (size_t i = 0; rc == TH_OK && !*a->stopped && i < json_object_array_length(a->calls);
	     i++) {
		json_object *res = NULL;
		rc = th_intrinsic_apply(tc, a->row, a->actor,
		                        json_object_array_get_idx(a->calls, i), a->fx, &res, e);
		if (rc == TH_OK && th_json_push(a->results, res) != 0)
			rc = th_error_set(e, TH_ENOMEM, "out of memory building a tool round");
	}
	return rc;
}

/* One round of tool calls (TURN-3), applied in one transaction that first re-checks
 * the cut flag and the task (CTL-3). *stopped = 1 when the turn was cut meanwhile (it is
 * then finished as cut). The calls and their results are appended to rounds. */
static th_err apply_round(const struct th_turn_ctx *tc, const char *task_id,
                          const struct th_lease *l, const char *actor, json_object *calls,
                          json_object *rounds, struct th_intrinsic_effects *fx, int *stopped,
                          struct th_error *e)
{
	*stopped = 0;
	struct th_task_row row = {0};
	json_object *results = json_object_new_array();
	if (results == NULL)
		return th_error_set(e, TH_ENOMEM, "out of memory");
	struct round_arg a = {task_id, l, actor, calls, results, fx, &row, stopped};
	int held = 0;
	th_err rc = write_held(tc, task_id, l, "tool round", round_part, &a, &held, e);
	if (rc == TH_OK && !held)
		*stopped = 1; /* TURN-6: cut or taken over meanwhile; this attempt writes no more */
	if (rc != TH_OK)
		th_intrinsic_effects_free(fx); /* nothing of the round was kept: nor its effects */
	if (rc == TH_OK && !*stopped) {
		/* Committed: a round the model cannot be shown for want of memory ends the turn
		 * with an error, and recovery runs it again from what is stored. */
		json_object *round = json_object_new_object();
		int bad = th_json_put(round, "tool_calls", json_object_get(calls));
		bad |= th_json_put(round, "results", results);
		results = NULL;
		bad |= th_json_push(rounds, round);
		defer_child(tc, fx);
		if (bad)
			rc = th_error_set(e, TH_ENOMEM, "out of memory building a tool round");
	}
	json_object_put(results);
	th_task_row_free(&row);
	return rc;
}

/* Runs a turn this worker holds (claimed or taken over) to its end: rounds of model
 * calls and intrinsic tools until the model answers in words (TURN-1), then settle. */
static th_err run_held(const struct th_turn_ctx *tc, const char *task_id, const struct th_lease *l,
                       struct th_error *e)
{
	struct th_turn_row t = {0};
	struct th_task_row row = {0};
	struct plan p = {0};
	struct th_intrinsic_effects fx = {0};
	json_object *rounds = json_object_new_array();
	if (rounds == NULL)
		return th_error_set(e, TH_ENOMEM, "out of memory");
	th_err rc = th_store_turn_get(tc->store, l->turn_id, &t, e);
	struct th_error why;
	th_error_clear(&why);
	th_err mrc = TH_OK;
	int stopped = 0;
	for (int round = 0; rc == TH_OK; round++) {
		th_task_row_free(&row);
		plan_free(&p);
		memset(&p, 0, sizeof p);
		if ((rc = th_store_task_get(tc->store, task_id, &row, e)) != TH_OK)
			break;
		mrc = think(tc, &row, l, t.message_id, NULL, rounds, &p, &why);
		/* A side-channel turn was offered no tools: calls it makes anyway are not
		 * applied (SEC-2). */
		size_t ncalls = p.out.tool_calls && p.channel == NULL
		                    ? json_object_array_length(p.out.tool_calls)
		                    : 0;
		if (mrc != TH_OK || p.builtin != NULL || p.decision != NULL || p.out.cut ||
		    ncalls == 0)
			break;
		if (round + 1 >= MAX_ROUNDS) {
			mrc = th_error_set(&why, TH_EINTERNAL,
			                   "the model was still calling tools after %d rounds",
			                   MAX_ROUNDS);
			break;
		}
		rc = apply_round(tc, task_id, l, p.sender, p.out.tool_calls, rounds, &fx, &stopped,
		                 e);
		if (stopped || fx.ask != NULL)
			break; /* cut meanwhile, or a question ends the turn (CH-4) */
	}
	if (rc == TH_OK && !stopped) {
		char failure[TH_ERRMSG_MAX + 32];
		if (mrc != TH_OK)
			snprintf(failure, sizeof failure, "turn failed: %s", why.msg);
		rc = settle(tc, task_id, l, &p, &fx, mrc != TH_OK ? failure : NULL, e);
		if (rc == TH_OK)
			th_mx_turn(mrc != TH_OK); /* OBS-2 */
	}
	th_intrinsic_effects_free(&fx);
	json_object_put(rounds);
	plan_free(&p);
	th_turn_row_free(&t);
	th_task_row_free(&row);
	return rc;
}

th_err th_turn_run(const struct th_turn_ctx *tc, const char *task_id, int64_t turn_id,
                   struct th_error *e)
{
	/* The worker that queued the turn holds its first lease (th_task_queue_turn). */
	const struct th_lease l = {turn_id, TH_LEASE_FIRST};
	int held = 0;
	th_err rc = held_now(tc, &l, &held, e);
	if (rc != TH_OK || !held)
		return rc;
	return run_held(tc, task_id, &l, e);
}

/* What give_up's transaction needs (give_up_part; the caller owns every pointer). */
struct give_up_arg {
	const struct th_turn_row *t;
	const char *why;
	struct th_task_row *row;
	json_object **msg;
};

static th_err give_up_part(struct th_store *st, void *arg, struct th_error *e)
{
	struct give_up_arg *a = arg;
	/* Only while nobody took the turn over since it was seen expired (TURN-6). */
	int done = 0;
	th_err rc = th_store_turn_give_up(st, a->t, th_now_ms(), a->why, &done, e);
	if (rc == TH_OK && done)
		rc = th_store_task_get(st, a->t->task_id, a->row, e);
	if (rc == TH_OK && done && !th_state_terminal((enum th_state)a->row->state)) {
		*a->msg = th_status_agent_text(a->row, a->why);
		rc = *a->msg
		         ? th_status_transition(st, a->row, TH_STATE_FAILED, NULL, *a->msg, 1, e)
		         : th_error_set(e, TH_ENOMEM, "out of memory");
	}
	return rc;
}

/* The last attempt is spent: the turn fails and so does its task, saying why
 * (TURN-4: no task stays WORKING forever). */
static th_err give_up(const struct th_turn_ctx *tc, const struct th_turn_row *t, struct th_error *e)
{
	struct th_task_row row = {0};
	json_object *msg = NULL;
	char why[256];
	snprintf(why, sizeof why,
	         "turn failed: its worker stopped %d time%s before finishing (lease expired)",
	         t->attempts, t->attempts == 1 ? "" : "s");
	struct give_up_arg a = {t, why, &row, &msg};
	th_err rc = th_store_write(tc->store, give_up_part, &a, e);
	json_object_put(msg);
	th_task_row_free(&row);
	return rc;
}

int64_t th_turn_expiry(struct th_store *st, int lease_ms, const char *task_id)
{
	int64_t at = -1;
	struct th_error e;
	th_error_clear(&e);
	/* A queued turn counts as expired one lease after it was queued, as for recovery
	 * (th_store_turns_expired). */
	if (th_store_turn_next_expiry(st, task_id, lease_ms, &at, &e) != TH_OK)
		return -2;
	return at;
}

int th_turn_expired(struct th_store *st, int lease_ms, const char *task_id)
{
	int64_t at = th_turn_expiry(st, lease_ms, task_id);
	return at >= 0 && at < th_now_ms();
}

/* A takeover (takeover_part): held = 1 and l the new lease when this worker won it. */
struct takeover_arg {
	const struct th_turn_row *t;
	int lease_ms;
	struct th_lease l;
	int held;
};

static th_err takeover_part(struct th_store *st, void *arg, struct th_error *e)
{
	(void)e;
	struct takeover_arg *a = arg;
	struct th_error lost;
	th_error_clear(&lost);
	a->held = th_store_turn_takeover(st, a->t->id, (int)getpid(), a->lease_ms, th_now_ms(),
	                                 &a->l, &lost) == TH_OK;
	return TH_OK;
}

th_err th_turn_recover(const struct th_turn_ctx *tc, const char *task_id, int *recovered,
                       struct th_error *e)
{
	if (recovered != NULL)
		*recovered = 0;
	int64_t now = th_now_ms();
	struct th_turn_row *rows = NULL;
	size_t n = 0;
	th_err rc = th_store_turns_expired(tc->store, task_id, now, now - tc->cfg->lease_ms, 100,
	                                   &rows, &n, e);
	for (size_t i = 0; rc == TH_OK && i < n; i++) {
		struct th_turn_row *t = &rows[i];
		if (t->attempts >= tc->cfg->max_attempts) {
			rc = give_up(tc, t, e);
		} else {
			/* Two recoverers may race: the takeover inside a transaction lets one win.
			 */
			struct takeover_arg a = {.t = t, .lease_ms = tc->cfg->lease_ms};
			rc = th_store_write(tc->store, takeover_part, &a, e);
			if (rc == TH_OK && a.held)
				rc = run_held(tc, t->task_id, &a.l, e);
		}
		if (rc == TH_OK && recovered != NULL)
			(*recovered)++;
	}
	th_turn_rows_free(rows, n);
	return rc;
}
