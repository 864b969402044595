/* SPDX-License-Identifier: Apache-2.0 */
/* collab.c — channels, help requests, plans, sub-task numbering and the A2UI surface
 * registry (CH-1..CH-5, STATUS-1, TASK-1, TASK-4, CMD-3, UI-1..UI-3). Schema: sql/002. */
#include <stdlib.h>
#include <string.h>

#include "store/store.h"
#include "store/store_int.h"
#include "util/ids.h"

void th_strings_free(char **v, size_t n)
{
	if (v == NULL)
		return;
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

/* ---- channels ---------------------------------------------------------------------------- */

static const char *const chan_kinds[] = {
    [TH_CHAN_MESSAGE] = "message",
    [TH_CHAN_HELP_REQUEST] = "help_request",
    [TH_CHAN_HELP_REPLY] = "help_reply",
};
#define N_CHAN_KINDS ((int)(sizeof chan_kinds / sizeof chan_kinds[0]))

static int chan_kind_from_name(const char *s)
{
	for (int i = 0; s != NULL && i < N_CHAN_KINDS; i++)
		if (strcmp(chan_kinds[i], s) == 0)
			return i;
	return TH_CHAN_MESSAGE;
}

static const struct th_col chan_msg_cols[] = {
    TH_COL_TEXT(struct th_channel_msg, channel_id),
    TH_COL_I64(struct th_channel_msg, seq),
    TH_COL_TEXT(struct th_channel_msg, message_id),
    TH_COL_TEXT(struct th_channel_msg, sender),
    TH_COL_ENUM(struct th_channel_msg, kind, chan_kind_from_name),
    TH_COL_TEXT(struct th_channel_msg, text),
    TH_COL_TEXT(struct th_channel_msg, json),
    TH_COL_TEXT(struct th_channel_msg, in_reply_to),
    TH_COL_I64(struct th_channel_msg, created_ms),
};
static const struct th_row_def chan_msg_row = TH_ROW_DEF(struct th_channel_msg, chan_msg_cols);

/* Whether a channel exists and has the participant as a member (0 or 1 each). */
struct membership {
	int exists;
	int member;
};
static const struct th_col membership_cols[] = {
    TH_COL_INT(struct membership, exists),
    TH_COL_INT(struct membership, member),
};
static const struct th_row_def membership_row = TH_ROW_DEF(struct membership, membership_cols);

/* One member id: nothing but the pointer, so an array of them is the char * array that
 * th_store_channel_members hands out and th_strings_free frees. */
struct member_id {
	char *id; /* free (th_strings_free) */
};
_Static_assert(sizeof(struct member_id) == sizeof(char *), "a member_id is one char *");
static const struct th_col member_id_cols[] = {TH_COL_TEXT(struct member_id, id)};
static const struct th_row_def member_id_row = TH_ROW_DEF(struct member_id, member_id_cols);

static th_err add_member(struct th_store *st, const char *task_id, const char *channel_id,
                         const char *participant_id, int64_t now, struct th_error *e)
{
	th_err err =
	    th_store_exec(st, TH_STMT_CHAN_ADD_MEMBER,
	                  "INSERT INTO channel_members (task_id, channel_id, "
	                  "participant_id, added_ms) VALUES (?1, ?2, ?3, ?4) "
	                  "ON CONFLICT DO NOTHING",
	                  TH_ARGS(TH_T(task_id), TH_T(channel_id), TH_T(participant_id), TH_I(now)),
	                  NULL, NULL, "channel member", e);
	/* The channel row was inserted just before, so a broken foreign key is the member. */
	if (err != TH_OK && th_store_failed_with(st) == TH_SQL_FAIL_FOREIGNKEY)
		return th_error_set(e, TH_EINVAL, "%s is not a participant of task %s",
		                    participant_id, task_id);
	return err;
}

th_err th_store_channel_create(struct th_store *st, const char *task_id, const char *channel_id,
                               const char *created_by, const char *const *members, size_t n_members,
                               struct th_error *e)
{
	if (task_id == NULL || channel_id == NULL || created_by == NULL ||
	    (members == NULL && n_members > 0))
		return th_error_set(e, TH_EINVAL, "channel needs a task, an id and a creator");
	if (channel_id[0] == '\0' || strcmp(channel_id, task_id) == 0)
		return th_error_set(e, TH_EINVAL,
		                    "channel id must be new and differ from the task id");
	int64_t now = th_now_ms();
	th_err err =
	    th_store_exec(st, TH_STMT_CHAN_CREATE,
	                  "INSERT INTO channels (task_id, channel_id, created_by, "
	                  "created_ms) VALUES (?1, ?2, ?3, ?4)",
	                  TH_ARGS(TH_T(task_id), TH_T(channel_id), TH_T(created_by), TH_I(now)),
	                  NULL, NULL, "channel create", e);
	if (err != TH_OK) {
		enum th_sql_fail rc = th_store_failed_with(st);
		if (rc == TH_SQL_FAIL_UNIQUE)
			return th_error_set(e, TH_EINVAL, "channel %s already exists", channel_id);
		if (rc == TH_SQL_FAIL_FOREIGNKEY)
			return th_error_set(e, TH_ENOTFOUND, "task %s not found", task_id);
		return err;
	}
	err = add_member(st, task_id, channel_id, created_by, now, e);
	for (size_t i = 0; err == TH_OK && i < n_members; i++) {
		if (members[i] == NULL)
			return th_error_set(e, TH_EINVAL, "channel member %zu has no id", i);
		err = add_member(st, task_id, channel_id, members[i], now, e);
	}
	return err;
}

th_err th_store_channel_is_member(struct th_store *st, const char *task_id, const char *channel_id,
                                  const char *participant_id, int *exists, int *is_member,
                                  struct th_error *e)
{
	*is_member = 0;
	if (exists != NULL)
		*exists = 0;
	if (task_id == NULL || channel_id == NULL || participant_id == NULL)
		return TH_OK;
	struct membership row;
	/* One statement for both channel kinds; every lookup is a primary-key probe. */
	th_err err = th_store_one(
	    st, TH_STMT_CHAN_IS_MEMBER,
	    "SELECT CASE WHEN ?2 = ?1 THEN EXISTS (SELECT 1 FROM tasks WHERE id = ?1) "
	    "ELSE EXISTS (SELECT 1 FROM channels WHERE task_id = ?1 AND channel_id = ?2) END, "
	    "CASE WHEN ?2 = ?1 THEN EXISTS (SELECT 1 FROM participants "
	    "WHERE task_id = ?1 AND participant_id = ?3) "
	    "ELSE EXISTS (SELECT 1 FROM channel_members WHERE task_id = ?1 AND channel_id = ?2 "
	    "AND participant_id = ?3) END",
	    TH_ARGS(TH_T(task_id), TH_T(channel_id), TH_T(participant_id)), &membership_row, &row,
	    "channel membership", e);
	if (err != TH_OK)
		return err;
	if (exists != NULL)
		*exists = row.exists != 0;
	*is_member = row.member != 0;
	return TH_OK;
}

th_err th_store_channel_members(struct th_store *st, const char *task_id, const char *channel_id,
                                char ***ids, size_t *n, struct th_error *e)
{
	/* The rows are member_id structs, that is the char * array *ids promises. */
	return th_store_each(
	    st, TH_STMT_CHAN_MEMBERS,
	    "SELECT participant_id FROM ("
	    "SELECT participant_id, added_ms, rowid AS r FROM participants "
	    "WHERE ?2 = ?1 AND task_id = ?1 "
	    "UNION ALL SELECT participant_id, added_ms, rowid AS r FROM channel_members "
	    "WHERE ?2 <> ?1 AND task_id = ?1 AND channel_id = ?2) AS m ORDER BY added_ms, r",
	    TH_ARGS(TH_T(task_id), TH_T(channel_id)), &member_id_row, (void **)ids, n,
	    "channel members", e);
}

void th_channel_msgs_free(struct th_channel_msg *m, size_t n)
{
	th_rows_free(&chan_msg_row, m, n);
}

th_err th_store_channel_append(struct th_store *st, const char *task_id,
                               const struct th_channel_msg_in *m, int64_t *seq, struct th_error *e)
{
	if (seq != NULL)
		*seq = 0;
	if (task_id == NULL || m == NULL || m->channel_id == NULL || m->message_id == NULL ||
	    m->sender == NULL || m->json == NULL)
		return th_error_set(
		    e, TH_EINVAL,
		    "channel message needs task, channel_id, messageId, sender, json");
	if (m->kind < 0 || m->kind >= N_CHAN_KINDS)
		return th_error_set(e, TH_EINVAL, "channel message: unknown kind %d", m->kind);
	if (m->kind == TH_CHAN_HELP_REPLY && m->in_reply_to == NULL)
		return th_error_set(e, TH_EINVAL, "a help_reply needs in_reply_to");
	int64_t got = 0;
	/* seq = max + 1 under the write lock, found through the primary key. */
	th_err err = th_store_exec(
	    st, TH_STMT_CHAN_APPEND,
	    "INSERT INTO channel_messages (task_id, channel_id, seq, message_id, sender, kind, "
	    "text, json, in_reply_to, created_ms) VALUES (?1, ?2, (SELECT coalesce(max(seq), 0) "
	    "+ 1 FROM channel_messages WHERE task_id = ?1 AND channel_id = ?2), ?3, ?4, ?5, ?6, "
	    "?7, ?8, ?9) RETURNING seq",
	    TH_ARGS(TH_T(task_id), TH_T(m->channel_id), TH_T(m->message_id), TH_T(m->sender),
	            TH_T(chan_kinds[m->kind]), TH_T(m->text != NULL ? m->text : ""), TH_T(m->json),
	            TH_T(m->in_reply_to), TH_I(th_now_ms())),
	    &got, NULL, "channel message append", e);
	if (err != TH_OK)
		return th_store_failed_with(st) == TH_SQL_FAIL_FOREIGNKEY
		           ? th_error_set(e, TH_ENOTFOUND, "task %s not found", task_id)
		           : err;
	if (seq != NULL)
		*seq = got;
	return TH_OK;
}

th_err th_store_channel_messages(struct th_store *st, const char *task_id, const char *channel_id,
                                 int64_t after, int limit, struct th_channel_msg **out, size_t *n,
                                 struct th_error *e)
{
	return th_store_each(
	    st, TH_STMT_CHAN_LIST,
	    "SELECT channel_id, seq, message_id, sender, kind, text, json, "
	    "in_reply_to, created_ms FROM channel_messages "
	    "WHERE task_id = ?1 AND channel_id = ?2 AND seq > ?3 "
	    "ORDER BY seq LIMIT ?4",
	    TH_ARGS(TH_T(task_id), TH_T(channel_id), TH_I(after), TH_I(limit > 0 ? limit : -1)),
	    &chan_msg_row, (void **)out, n, "channel messages", e);
}

/* ---- help requests ----------------------------------------------------------------------- */

static const char *const help_states[] = {
    [TH_HELP_PENDING] = "pending",
    [TH_HELP_ANSWERED] = "answered",
    [TH_HELP_CANCELED] = "canceled",
};

static int help_state_from_name(const char *s)
{
	for (int i = 0; s != NULL && i < (int)(sizeof help_states / sizeof help_states[0]); i++)
		if (strcmp(help_states[i], s) == 0)
			return i;
	return TH_HELP_CANCELED;
}

#define HELP_COLS                                                                                  \
	"id, task_id, channel_id, asked_by, asked, question, state, created_ms, "                  \
	"coalesce(answered_ms, 0), answer_message_id, asked_for"

/* The columns of HELP_COLS, in its order. */
static const struct th_col help_cols[] = {
    TH_COL_TEXT(struct th_help_request, id),
    TH_COL_TEXT(struct th_help_request, task_id),
    TH_COL_TEXT(struct th_help_request, channel_id),
    TH_COL_TEXT(struct th_help_request, asked_by),
    TH_COL_TEXT(struct th_help_request, asked),
    TH_COL_TEXT(struct th_help_request, question),
    TH_COL_ENUM(struct th_help_request, state, help_state_from_name),
    TH_COL_I64(struct th_help_request, created_ms),
    TH_COL_I64(struct th_help_request, answered_ms),
    TH_COL_TEXT(struct th_help_request, answer_message_id),
    TH_COL_TEXT(struct th_help_request, asked_for),
};
static const struct th_row_def help_row = TH_ROW_DEF(struct th_help_request, help_cols);

/* A help request's state alone (enum th_help_state). */
struct help_state {
	int state;
};
static const struct th_col help_state_cols[] = {
    TH_COL_ENUM(struct help_state, state, help_state_from_name),
};
static const struct th_row_def help_state_row = TH_ROW_DEF(struct help_state, help_state_cols);

void th_help_request_free(struct th_help_request *h)
{
	if (h == NULL)
		return;
	th_row_free(&help_row, h);
}

/* The first row of a HELP_COLS query into out; no row is TH_ENOTFOUND "<missing> <key>". */
static th_err help_one(struct th_store *st, enum th_stmt_id id, const char *sql,
                       const struct th_arg *args, size_t n, const char *missing, const char *key,
                       struct th_help_request *out, struct th_error *e)
{
	th_err err = th_store_one(st, id, sql, args, n, &help_row, out, "help request", e);
	if (err == TH_ENOTFOUND)
		return th_error_set(e, TH_ENOTFOUND, "%s %s", missing, key);
	return err;
}

th_err th_store_help_create(struct th_store *st, const struct th_help_request_in *r,
                            struct th_error *e)
{
	if (r == NULL || r->id == NULL || r->task_id == NULL || r->channel_id == NULL ||
	    r->asked_by == NULL || r->asked == NULL || r->question == NULL)
		return th_error_set(e, TH_EINVAL,
		                    "help request needs id, task, channel, asked_by, asked, "
		                    "question");
	th_err err = th_store_exec(st, TH_STMT_HELP_CREATE,
	                           "INSERT INTO help_requests (id, task_id, channel_id, asked_by, "
	                           "asked, question, state, created_ms, asked_for) "
	                           "VALUES (?1, ?2, ?3, ?4, ?5, ?6, 'pending', ?7, ?8)",
	                           TH_ARGS(TH_T(r->id), TH_T(r->task_id), TH_T(r->channel_id),
	                                   TH_T(r->asked_by), TH_T(r->asked), TH_T(r->question),
	                                   TH_I(th_now_ms()), TH_T(r->asked_for)),
	                           NULL, NULL, "help request create", e);
	if (err == TH_OK)
		return TH_OK;
	enum th_sql_fail rc = th_store_failed_with(st);
	if (rc == TH_SQL_FAIL_UNIQUE)
		return th_error_set(e, TH_EINVAL, "duplicate help request id %s", r->id);
	if (rc == TH_SQL_FAIL_FOREIGNKEY)
		return th_error_set(e, TH_ENOTFOUND, "task %s not found", r->task_id);
	return err;
}

th_err th_store_help_get(struct th_store *st, const char *task_id, const char *id,
                         struct th_help_request *out, struct th_error *e)
{
	memset(out, 0, sizeof *out);
	if (task_id == NULL || id == NULL)
		return th_error_set(e, TH_ENOTFOUND, "no help request");
	return help_one(st, TH_STMT_HELP_GET,
	                "SELECT " HELP_COLS " FROM help_requests "
	                "WHERE id = ?1 AND task_id = ?2",
	                TH_ARGS(TH_T(id), TH_T(task_id)), "no such help request", id, out, e);
}

th_err th_store_help_pending(struct th_store *st, const char *task_id, struct th_help_request *out,
                             struct th_error *e)
{
	memset(out, 0, sizeof *out);
	if (task_id == NULL)
		return th_error_set(e, TH_ENOTFOUND, "no task");
	return help_one(st, TH_STMT_HELP_PENDING,
	                "SELECT " HELP_COLS " FROM help_requests "
	                "WHERE task_id = ?1 AND state = 'pending' "
	                "ORDER BY created_ms DESC, rowid DESC LIMIT 1",
	                TH_ARGS(TH_T(task_id)), "no pending help request on task", task_id, out, e);
}

th_err th_store_help_pending_for(struct th_store *st, const char *task_id, const char *asked_by,
                                 const char *asked, struct th_help_request *out, struct th_error *e)
{
	memset(out, 0, sizeof *out);
	if (task_id == NULL || asked_by == NULL || asked == NULL)
		return th_error_set(e, TH_ENOTFOUND, "no task");
	return help_one(st, TH_STMT_HELP_PENDING_FOR,
	                "SELECT " HELP_COLS " FROM help_requests "
	                "WHERE task_id = ?1 AND asked = ?2 AND state = 'pending' "
	                "AND asked_by = ?3 ORDER BY created_ms, rowid LIMIT 1",
	                TH_ARGS(TH_T(task_id), TH_T(asked), TH_T(asked_by)),
	                "no pending help request for", asked, out, e);
}

th_err th_store_help_answer(struct th_store *st, const char *task_id, const char *id,
                            const char *answer_message_id, int *prev, struct th_error *e)
{
	if (prev != NULL)
		*prev = TH_HELP_PENDING;
	if (task_id == NULL || id == NULL)
		return th_error_set(e, TH_ENOTFOUND, "no such help request");
	int64_t changed = 0;
	th_err err = th_store_exec(
	    st, TH_STMT_HELP_ANSWER,
	    "UPDATE help_requests SET state = 'answered', answered_ms = ?3, "
	    "answer_message_id = ?4 WHERE id = ?1 AND task_id = ?2 "
	    "AND state = 'pending'",
	    TH_ARGS(TH_T(id), TH_T(task_id), TH_I(th_now_ms()), TH_T(answer_message_id)), NULL,
	    &changed, "help request answer", e);
	if (err != TH_OK || changed == 1)
		return err;

	/* Nothing changed: say why (unknown, answered, canceled). */
	struct help_state row;
	err = th_store_one(st, TH_STMT_HELP_STATE,
	                   "SELECT state FROM help_requests WHERE id = ?1 AND task_id = ?2",
	                   TH_ARGS(TH_T(id), TH_T(task_id)), &help_state_row, &row,
	                   "help request state", e);
	if (err == TH_ENOTFOUND)
		return th_error_set(e, TH_ENOTFOUND, "no such help request %s", id);
	if (err != TH_OK)
		return err;
	if (prev != NULL)
		*prev = row.state;
	return row.state == TH_HELP_ANSWERED
	           ? th_error_set(e, TH_EINVAL, "help request %s was already answered", id)
	           : th_error_set(e, TH_EINVAL, "help request %s was canceled", id);
}

th_err th_store_help_cancel_pending(struct th_store *st, const char *task_id, int *n,
                                    struct th_error *e)
{
	if (n != NULL)
		*n = 0;
	int64_t changed = 0;
	th_err err =
	    th_store_exec(st, TH_STMT_HELP_CANCEL,
	                  "UPDATE help_requests SET state = 'canceled' "
	                  "WHERE task_id = ?1 AND state = 'pending'",
	                  TH_ARGS(TH_T(task_id)), NULL, &changed, "help request cancel", e);
	if (err == TH_OK && n != NULL)
		*n = (int)changed;
	return err;
}

/* ---- plans ---------------------------------------------------------------------------------- */

static const char *const step_states[] = {
    [TH_STEP_PENDING] = "pending",
    [TH_STEP_ACTIVE] = "active",
    [TH_STEP_DONE] = "done",
    [TH_STEP_FAILED] = "failed",
};
#define N_STEP_STATES ((int)(sizeof step_states / sizeof step_states[0]))

const char *th_store_step_state_name(int state)
{
	return state >= 0 && state < N_STEP_STATES ? step_states[state] : "";
}

int th_store_step_state_from_name(const char *s)
{
	for (int i = 0; s != NULL && i < N_STEP_STATES; i++)
		if (strcmp(step_states[i], s) == 0)
			return i;
	return TH_STEP_PENDING;
}

static const struct th_col plan_step_cols[] = {
    TH_COL_TEXT(struct th_plan_step, step_id),
    TH_COL_TEXT(struct th_plan_step, name),
    TH_COL_TEXT(struct th_plan_step, description),
    TH_COL_TEXT(struct th_plan_step, depends_on_json),
    TH_COL_ENUM(struct th_plan_step, state, th_store_step_state_from_name),
    TH_COL_TEXT(struct th_plan_step, output),
    TH_COL_TEXT(struct th_plan_step, linked_tasks_json),
    TH_COL_I64(struct th_plan_step, updated_ms),
};
static const struct th_row_def plan_step_row = TH_ROW_DEF(struct th_plan_step, plan_step_cols);

void th_plan_steps_free(struct th_plan_step *s, size_t n)
{
	th_rows_free(&plan_step_row, s, n);
}

static th_err plan_insert(struct th_store *st, const char *task_id, const struct th_plan_step_in *p,
                          int64_t pos, int64_t now, struct th_error *e)
{
	if (p->step_id == NULL || p->step_id[0] == '\0' || p->name == NULL)
		return th_error_set(e, TH_EINVAL, "plan step %lld needs an id and a name",
		                    (long long)pos);
	if (p->state < 0 || p->state >= N_STEP_STATES)
		return th_error_set(e, TH_EINVAL, "plan step %s: unknown state %d", p->step_id,
		                    p->state);
	th_err err = th_store_exec(
	    st, TH_STMT_PLAN_INSERT,
	    "INSERT INTO plan_steps (task_id, step_id, pos, name, "
	    "description, depends_on_json, state, output, "
	    "linked_tasks_json, updated_ms) "
	    "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
	    TH_ARGS(TH_T(task_id), TH_T(p->step_id), TH_I(pos), TH_T(p->name),
	            TH_T(p->description != NULL ? p->description : ""),
	            TH_T(p->depends_on_json != NULL ? p->depends_on_json : "[]"),
	            TH_T(step_states[p->state]), TH_T(p->output),
	            TH_T(p->linked_tasks_json != NULL ? p->linked_tasks_json : "[]"), TH_I(now)),
	    NULL, NULL, "plan step insert", e);
	if (err == TH_OK)
		return TH_OK;
	enum th_sql_fail rc = th_store_failed_with(st);
	if (rc == TH_SQL_FAIL_UNIQUE)
		return th_error_set(e, TH_EINVAL, "duplicate plan step id %s", p->step_id);
	if (rc == TH_SQL_FAIL_CHECK)
		return th_error_set(e, TH_EINVAL,
		                    "plan step %s: depends_on and linked_tasks must be JSON arrays",
		                    p->step_id);
	if (rc == TH_SQL_FAIL_FOREIGNKEY)
		return th_error_set(e, TH_ENOTFOUND, "task %s not found", task_id);
	return err;
}

th_err th_store_plan_replace(struct th_store *st, const char *task_id,
                             const struct th_plan_step_in *steps, size_t n, struct th_error *e)
{
	if (task_id == NULL || (steps == NULL && n > 0))
		return th_error_set(e, TH_EINVAL, "plan needs a task");
	int exists = 0;
	th_err err = th_store_task_exists(st, task_id, &exists, e);
	if (err != TH_OK)
		return err;
	if (!exists)
		return th_error_set(e, TH_ENOTFOUND, "task %s not found", task_id);
	err = th_store_exec(st, TH_STMT_PLAN_DELETE, "DELETE FROM plan_steps WHERE task_id = ?1",
	                    TH_ARGS(TH_T(task_id)), NULL, NULL, "plan delete", e);
	int64_t now = th_now_ms();
	for (size_t i = 0; err == TH_OK && i < n; i++)
		err = plan_insert(st, task_id, &steps[i], (int64_t)i + 1, now, e);
	return err;
}

th_err th_store_plan_step_update(struct th_store *st, const char *task_id, const char *step_id,
                                 int state, const char *output, const char *linked_tasks_json,
                                 struct th_error *e)
{
	if (state < 0 || state >= N_STEP_STATES)
		return th_error_set(e, TH_EINVAL, "plan step %s: unknown state %d",
		                    step_id != NULL ? step_id : "", state);
	int64_t changed = 0;
	th_err err =
	    th_store_exec(st, TH_STMT_PLAN_UPDATE,
	                  "UPDATE plan_steps SET state = ?3, output = coalesce(?4, output), "
	                  "linked_tasks_json = coalesce(?5, linked_tasks_json), "
	                  "updated_ms = ?6 WHERE task_id = ?1 AND step_id = ?2",
	                  TH_ARGS(TH_T(task_id), TH_T(step_id), TH_T(step_states[state]),
	                          TH_T(output), TH_T(linked_tasks_json), TH_I(th_now_ms())),
	                  NULL, &changed, "plan step update", e);
	if (err != TH_OK)
		return th_store_failed_with(st) == TH_SQL_FAIL_CHECK
		           ? th_error_set(e, TH_EINVAL,
		                          "plan step %s: linked_tasks must be a JSON array",
		                          step_id)
		           : err;
	if (changed == 0)
		return th_error_set(e, TH_ENOTFOUND, "task %s has no plan step %s",
		                    task_id != NULL ? task_id : "", step_id != NULL ? step_id : "");
	return TH_OK;
}

th_err th_store_plan(struct th_store *st, const char *task_id, struct th_plan_step **out, size_t *n,
                     struct th_error *e)
{
	return th_store_each(st, TH_STMT_PLAN_LIST,
	                     "SELECT step_id, name, description, depends_on_json, state, "
	                     "output, linked_tasks_json, updated_ms FROM plan_steps "
	                     "WHERE task_id = ?1 ORDER BY pos",
	                     TH_ARGS(TH_T(task_id)), &plan_step_row, (void **)out, n, "plan", e);
}

/* ---- sub-task numbering ------------------------------------------------------------------ */

th_err th_store_subtask_next_number(struct th_store *st, const char *parent_id, int64_t *n,
                                    struct th_error *e)
{
	*n = 0;
	int64_t got = 0;
	th_err err = th_store_exec(st, TH_STMT_SUB_NEXT,
	                           "UPDATE tasks SET child_count = child_count + 1 WHERE id = ?1 "
	                           "RETURNING child_count",
	                           TH_ARGS(TH_T(parent_id)), &got, NULL, "sub-task number", e);
	if (err != TH_OK)
		return err;
	if (got == 0)
		return th_error_set(e, TH_ENOTFOUND, "task %s not found",
		                    parent_id != NULL ? parent_id : "");
	*n = got;
	return TH_OK;
}

th_err th_store_subtask_parent(struct th_store *st, const char *child_id, char **parent_id,
                               struct th_error *e)
{
	th_err err = th_store_text(st, TH_STMT_SUB_PARENT,
	                           "SELECT parent_id FROM subtask_links WHERE child_id = ?1",
	                           TH_ARGS(TH_T(child_id)), parent_id, "sub-task parent", e);
	if (err == TH_ENOTFOUND)
		return th_error_set(e, TH_ENOTFOUND, "task %s is not a sub-task",
		                    child_id != NULL ? child_id : "");
	return err;
}

/* ---- A2UI surface registry ------------------------------------------------------------------ */

th_err th_store_a2ui_get(struct th_store *st, const char *task_id, char **json, struct th_error *e)
{
	th_err err =
	    th_store_text(st, TH_STMT_A2UI_GET, "SELECT json FROM a2ui_registry WHERE task_id = ?1",
	                  TH_ARGS(TH_T(task_id)), json, "A2UI registry", e);
	/* No registry row: *json is NULL. */
	if (err == TH_ENOTFOUND) {
		th_error_clear(e);
		return TH_OK;
	}
	return err;
}

th_err th_store_a2ui_put(struct th_store *st, const char *task_id, const char *json,
                         struct th_error *e)
{
	if (task_id == NULL || json == NULL)
		return th_error_set(e, TH_EINVAL, "A2UI registry needs a task and JSON");
	th_err err = th_store_exec(st, TH_STMT_A2UI_PUT,
	                           "INSERT INTO a2ui_registry (task_id, json, updated_ms) "
	                           "VALUES (?1, ?2, ?3) ON CONFLICT (task_id) DO UPDATE SET "
	                           "json = excluded.json, updated_ms = excluded.updated_ms",
	                           TH_ARGS(TH_T(task_id), TH_T(json), TH_I(th_now_ms())), NULL,
	                           NULL, "A2UI registry put", e);
	if (err == TH_OK)
		return TH_OK;
	enum th_sql_fail rc = th_store_failed_with(st);
	if (rc == TH_SQL_FAIL_CHECK)
		return th_error_set(e, TH_EINVAL, "A2UI registry of task %s is not valid JSON",
		                    task_id);
	if (rc == TH_SQL_FAIL_FOREIGNKEY)
		return th_error_set(e, TH_ENOTFOUND, "task %s not found", task_id);
	return err;
}

th_err th_store_a2ui_next_artifact(struct th_store *st, const char *task_id, int64_t *n,
                                   struct th_error *e)
{
	*n = 0;
	if (task_id == NULL)
		return th_error_set(e, TH_EINVAL, "A2UI artifact number needs a task");
	int64_t got = 0;
	/* A task without a registry row gets one with an empty registry. */
	th_err err = th_store_exec(st, TH_STMT_A2UI_NEXT,
	                           "INSERT INTO a2ui_registry (task_id, json, next_artifact, "
	                           "updated_ms) VALUES (?1, '{}', 2, ?2) ON CONFLICT (task_id) "
	                           "DO UPDATE SET next_artifact = a2ui_registry.next_artifact + 1, "
	                           "updated_ms = excluded.updated_ms RETURNING next_artifact - 1",
	                           TH_ARGS(TH_T(task_id), TH_I(th_now_ms())), &got, NULL,
	                           "A2UI artifact number", e);
	if (err != TH_OK)
		return th_store_failed_with(st) == TH_SQL_FAIL_FOREIGNKEY
		           ? th_error_set(e, TH_ENOTFOUND, "task %s not found", task_id)
		           : err;
	*n = got;
	return TH_OK;
}

int th_store_has_side_channels(struct th_store *st, const char *task_id)
{
	int64_t rows = 0;
	return th_store_exec(st, TH_STMT_CHAN_ANY,
	                     "SELECT 1 FROM channels WHERE task_id = ?1 LIMIT 1",
	                     TH_ARGS(TH_T(task_id)), NULL, &rows, "side channels", NULL) == TH_OK &&
	       rows > 0;
}
