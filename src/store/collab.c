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

static th_err add_member(struct th_store *st, const char *task_id, const char *channel_id,
                         const char *participant_id, int64_t now, struct th_error *e)
{
	sqlite3_stmt *s;
	th_err err = th_store_stmt(st, TH_STMT_CHAN_ADD_MEMBER,
	                           "INSERT INTO channel_members (task_id, channel_id, "
	                           "participant_id, added_ms) VALUES (?1, ?2, ?3, ?4) "
	                           "ON CONFLICT DO NOTHING",
	                           &s, e);
	if (err != TH_OK)
		return err;
	int rc = th_bind_text(s, 1, task_id, SQLITE_OK);
	rc = th_bind_text(s, 2, channel_id, rc);
	rc = th_bind_text(s, 3, participant_id, rc);
	rc = th_bind_i64(s, 4, now, rc);
	rc = th_step_done(s, rc);
	if (rc == SQLITE_DONE)
		return TH_OK;
	/* The channel row was inserted just before, so a broken foreign key is the member. */
	if (rc == SQLITE_CONSTRAINT_FOREIGNKEY)
		return th_error_set(e, TH_EINVAL, "%s is not a participant of task %s",
		                    participant_id, task_id);
	return th_store_fail(st, rc, "channel member", e);
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
	sqlite3_stmt *s;
	th_err err = th_store_stmt(st, TH_STMT_CHAN_CREATE,
	                           "INSERT INTO channels (task_id, channel_id, created_by, "
	                           "created_ms) VALUES (?1, ?2, ?3, ?4)",
	                           &s, e);
	if (err != TH_OK)
		return err;
	int64_t now = th_now_ms();
	int rc = th_bind_text(s, 1, task_id, SQLITE_OK);
	rc = th_bind_text(s, 2, channel_id, rc);
	rc = th_bind_text(s, 3, created_by, rc);
	rc = th_bind_i64(s, 4, now, rc);
	rc = th_step_done(s, rc);
	if (rc == SQLITE_CONSTRAINT_PRIMARYKEY || rc == SQLITE_CONSTRAINT_UNIQUE)
		return th_error_set(e, TH_EINVAL, "channel %s already exists", channel_id);
	if (rc == SQLITE_CONSTRAINT_FOREIGNKEY)
		return th_error_set(e, TH_ENOTFOUND, "task %s not found", task_id);
	if (rc != SQLITE_DONE)
		return th_store_fail(st, rc, "channel create", e);
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
	sqlite3_stmt *s;
	/* One statement for both channel kinds; every lookup is a primary-key probe. */
	th_err err = th_store_stmt(
	    st, TH_STMT_CHAN_IS_MEMBER,
	    "SELECT CASE WHEN ?2 = ?1 THEN EXISTS (SELECT 1 FROM tasks WHERE id = ?1) "
	    "ELSE EXISTS (SELECT 1 FROM channels WHERE task_id = ?1 AND channel_id = ?2) END, "
	    "CASE WHEN ?2 = ?1 THEN EXISTS (SELECT 1 FROM participants "
	    "WHERE task_id = ?1 AND participant_id = ?3) "
	    "ELSE EXISTS (SELECT 1 FROM channel_members WHERE task_id = ?1 AND channel_id = ?2 "
	    "AND participant_id = ?3) END",
	    &s, e);
	if (err != TH_OK)
		return err;
	int rc = th_bind_text(s, 1, task_id, SQLITE_OK);
	rc = th_bind_text(s, 2, channel_id, rc);
	rc = th_bind_text(s, 3, participant_id, rc);
	if (rc == SQLITE_OK)
		rc = sqlite3_step(s);
	if (rc == SQLITE_ROW) {
		if (exists != NULL)
			*exists = sqlite3_column_int(s, 0) != 0;
		*is_member = sqlite3_column_int(s, 1) != 0;
	} else {
		err = th_store_fail(st, rc, "channel membership", e);
	}
	th_store_stmt_done(s);
	return err;
}

th_err th_store_channel_members(struct th_store *st, const char *task_id, const char *channel_id,
                                char ***ids, size_t *n, struct th_error *e)
{
	*ids = NULL;
	*n = 0;
	sqlite3_stmt *s;
	th_err err = th_store_stmt(
	    st, TH_STMT_CHAN_MEMBERS,
	    "SELECT participant_id FROM ("
	    "SELECT participant_id, added_ms, rowid AS r FROM participants "
	    "WHERE ?2 = ?1 AND task_id = ?1 "
	    "UNION ALL SELECT participant_id, added_ms, rowid AS r FROM channel_members "
	    "WHERE ?2 <> ?1 AND task_id = ?1 AND channel_id = ?2) ORDER BY added_ms, r",
	    &s, e);
	if (err != TH_OK)
		return err;
	int rc = th_bind_text(s, 1, task_id, SQLITE_OK);
	rc = th_bind_text(s, 2, channel_id, rc);
	char **v = NULL;
	size_t cnt = 0, cap = 0;
	while (rc == SQLITE_OK && (rc = sqlite3_step(s)) == SQLITE_ROW) {
		if (th_grow((void **)&v, &cap, cnt, sizeof *v) != 0 ||
		    th_col_dup(s, 0, &v[cnt]) != 0) {
			rc = SQLITE_NOMEM;
			break;
		}
		cnt++;
		rc = SQLITE_OK;
	}
	if (rc != SQLITE_DONE)
		err = rc == SQLITE_NOMEM
		          ? th_error_set(e, TH_ENOMEM, "out of memory listing channel members")
		          : th_store_fail(st, rc, "channel members", e);
	th_store_stmt_done(s);
	if (err != TH_OK) {
		th_strings_free(v, cnt);
		return err;
	}
	*ids = v;
	*n = cnt;
	return TH_OK;
}

void th_channel_msgs_free(struct th_channel_msg *m, size_t n)
{
	if (m == NULL)
		return;
	for (size_t i = 0; i < n; i++) {
		free(m[i].channel_id);
		free(m[i].message_id);
		free(m[i].sender);
		free(m[i].text);
		free(m[i].json);
		free(m[i].in_reply_to);
	}
	free(m);
}

th_err th_store_channel_append(struct th_store *st, const char *task_id,
                               const struct th_channel_msg *m, int64_t *seq, struct th_error *e)
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
	sqlite3_stmt *s;
	/* seq = max + 1 under the write lock, found through the primary key. */
	th_err err = th_store_stmt(
	    st, TH_STMT_CHAN_APPEND,
	    "INSERT INTO channel_messages (task_id, channel_id, seq, message_id, sender, kind, "
	    "text, json, in_reply_to, created_ms) VALUES (?1, ?2, (SELECT coalesce(max(seq), 0) "
	    "+ 1 FROM channel_messages WHERE task_id = ?1 AND channel_id = ?2), ?3, ?4, ?5, ?6, "
	    "?7, ?8, ?9) RETURNING seq",
	    &s, e);
	if (err != TH_OK)
		return err;
	int rc = th_bind_text(s, 1, task_id, SQLITE_OK);
	rc = th_bind_text(s, 2, m->channel_id, rc);
	rc = th_bind_text(s, 3, m->message_id, rc);
	rc = th_bind_text(s, 4, m->sender, rc);
	rc = th_bind_text(s, 5, chan_kinds[m->kind], rc);
	rc = th_bind_text(s, 6, m->text != NULL ? m->text : "", rc);
	rc = th_bind_text(s, 7, m->json, rc);
	rc = th_bind_text(s, 8, m->in_reply_to, rc);
	rc = th_bind_i64(s, 9, th_now_ms(), rc);
	int64_t got = 0;
	rc = th_step_returning(s, rc, &got);
	th_store_stmt_done(s);
	if (rc == SQLITE_CONSTRAINT_FOREIGNKEY)
		return th_error_set(e, TH_ENOTFOUND, "task %s not found", task_id);
	if (rc != SQLITE_DONE)
		return th_store_fail(st, rc, "channel message append", e);
	if (seq != NULL)
		*seq = got;
	return TH_OK;
}

th_err th_store_channel_messages(struct th_store *st, const char *task_id, const char *channel_id,
                                 int64_t after, int limit, struct th_channel_msg **out, size_t *n,
                                 struct th_error *e)
{
	*out = NULL;
	*n = 0;
	sqlite3_stmt *s;
	th_err err = th_store_stmt(st, TH_STMT_CHAN_LIST,
	                           "SELECT channel_id, seq, message_id, sender, kind, text, json, "
	                           "in_reply_to, created_ms FROM channel_messages "
	                           "WHERE task_id = ?1 AND channel_id = ?2 AND seq > ?3 "
	                           "ORDER BY seq LIMIT ?4",
	                           &s, e);
	if (err != TH_OK)
		return err;
	int rc = th_bind_text(s, 1, task_id, SQLITE_OK);
	rc = th_bind_text(s, 2, channel_id, rc);
	rc = th_bind_i64(s, 3, after, rc);
	rc = th_bind_i64(s, 4, limit > 0 ? limit : -1, rc);
	struct th_channel_msg *v = NULL;
	size_t cnt = 0, cap = 0;
	while (rc == SQLITE_OK && (rc = sqlite3_step(s)) == SQLITE_ROW) {
		if (th_grow((void **)&v, &cap, cnt, sizeof *v) != 0) {
			rc = SQLITE_NOMEM;
			break;
		}
		struct th_channel_msg *m = &v[cnt++];
		memset(m, 0, sizeof *m);
		m->seq = sqlite3_column_int64(s, 1);
		m->kind = chan_kind_from_name((const char *)sqlite3_column_text(s, 4));
		m->created_ms = sqlite3_column_int64(s, 8);
		if ((th_col_dup(s, 0, &m->channel_id) | th_col_dup(s, 2, &m->message_id) |
		     th_col_dup(s, 3, &m->sender) | th_col_dup(s, 5, &m->text) |
		     th_col_dup(s, 6, &m->json) | th_col_dup(s, 7, &m->in_reply_to)) != 0) {
			rc = SQLITE_NOMEM;
			break;
		}
		rc = SQLITE_OK;
	}
	if (rc != SQLITE_DONE)
		err = rc == SQLITE_NOMEM
		          ? th_error_set(e, TH_ENOMEM, "out of memory reading channel messages")
		          : th_store_fail(st, rc, "channel messages", e);
	th_store_stmt_done(s);
	if (err != TH_OK) {
		th_channel_msgs_free(v, cnt);
		return err;
	}
	*out = v;
	*n = cnt;
	return TH_OK;
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

void th_help_request_free(struct th_help_request *h)
{
	if (h == NULL)
		return;
	free(h->id);
	free(h->task_id);
	free(h->channel_id);
	free(h->asked_by);
	free(h->asked_for);
	free(h->asked);
	free(h->question);
	free(h->answer_message_id);
	memset(h, 0, sizeof *h);
}

/* Reads one row of HELP_COLS into out after the statement's bindings were made (rc). */
static th_err read_help(struct th_store *st, sqlite3_stmt *s, int rc, const char *what,
                        const char *key, struct th_help_request *out, struct th_error *e)
{
	th_err err = TH_OK;
	if (rc == SQLITE_OK)
		rc = sqlite3_step(s);
	if (rc == SQLITE_ROW) {
		out->state = help_state_from_name((const char *)sqlite3_column_text(s, 6));
		out->created_ms = sqlite3_column_int64(s, 7);
		out->answered_ms = sqlite3_column_int64(s, 8);
		if ((th_col_dup(s, 0, &out->id) | th_col_dup(s, 1, &out->task_id) |
		     th_col_dup(s, 2, &out->channel_id) | th_col_dup(s, 3, &out->asked_by) |
		     th_col_dup(s, 4, &out->asked) | th_col_dup(s, 5, &out->question) |
		     th_col_dup(s, 9, &out->answer_message_id) |
		     th_col_dup(s, 10, &out->asked_for)) != 0) {
			th_help_request_free(out);
			err = th_error_set(e, TH_ENOMEM, "out of memory reading help request");
		}
	} else if (rc == SQLITE_DONE) {
		err = th_error_set(e, TH_ENOTFOUND, "%s %s", what, key);
	} else {
		err = th_store_fail(st, rc, what, e);
	}
	th_store_stmt_done(s);
	return err;
}

th_err th_store_help_create(struct th_store *st, const struct th_help_request *r,
                            struct th_error *e)
{
	if (r == NULL || r->id == NULL || r->task_id == NULL || r->channel_id == NULL ||
	    r->asked_by == NULL || r->asked == NULL || r->question == NULL)
		return th_error_set(e, TH_EINVAL,
		                    "help request needs id, task, channel, asked_by, asked, "
		                    "question");
	sqlite3_stmt *s;
	th_err err = th_store_stmt(st, TH_STMT_HELP_CREATE,
	                           "INSERT INTO help_requests (id, task_id, channel_id, asked_by, "
	                           "asked, question, state, created_ms, asked_for) "
	                           "VALUES (?1, ?2, ?3, ?4, ?5, ?6, 'pending', ?7, ?8)",
	                           &s, e);
	if (err != TH_OK)
		return err;
	int rc = th_bind_text(s, 1, r->id, SQLITE_OK);
	rc = th_bind_text(s, 2, r->task_id, rc);
	rc = th_bind_text(s, 3, r->channel_id, rc);
	rc = th_bind_text(s, 4, r->asked_by, rc);
	rc = th_bind_text(s, 5, r->asked, rc);
	rc = th_bind_text(s, 6, r->question, rc);
	rc = th_bind_i64(s, 7, th_now_ms(), rc);
	rc = th_bind_text(s, 8, r->asked_for, rc);
	rc = th_step_done(s, rc);
	if (rc == SQLITE_DONE)
		return TH_OK;
	if (rc == SQLITE_CONSTRAINT_PRIMARYKEY || rc == SQLITE_CONSTRAINT_UNIQUE)
		return th_error_set(e, TH_EINVAL, "duplicate help request id %s", r->id);
	if (rc == SQLITE_CONSTRAINT_FOREIGNKEY)
		return th_error_set(e, TH_ENOTFOUND, "task %s not found", r->task_id);
	return th_store_fail(st, rc, "help request create", e);
}

th_err th_store_help_get(struct th_store *st, const char *task_id, const char *id,
                         struct th_help_request *out, struct th_error *e)
{
	memset(out, 0, sizeof *out);
	if (task_id == NULL || id == NULL)
		return th_error_set(e, TH_ENOTFOUND, "no help request");
	sqlite3_stmt *s;
	th_err err = th_store_stmt(st, TH_STMT_HELP_GET,
	                           "SELECT " HELP_COLS " FROM help_requests "
	                           "WHERE id = ?1 AND task_id = ?2",
	                           &s, e);
	if (err != TH_OK)
		return err;
	int rc = th_bind_text(s, 1, id, SQLITE_OK);
	rc = th_bind_text(s, 2, task_id, rc);
	return read_help(st, s, rc, "no such help request", id, out, e);
}

th_err th_store_help_pending(struct th_store *st, const char *task_id, struct th_help_request *out,
                             struct th_error *e)
{
	memset(out, 0, sizeof *out);
	if (task_id == NULL)
		return th_error_set(e, TH_ENOTFOUND, "no task");
	sqlite3_stmt *s;
	th_err err = th_store_stmt(st, TH_STMT_HELP_PENDING,
	                           "SELECT " HELP_COLS " FROM help_requests "
	                           "WHERE task_id = ?1 AND state = 'pending' "
	                           "ORDER BY created_ms DESC, rowid DESC LIMIT 1",
	                           &s, e);
	if (err != TH_OK)
		return err;
	int rc = th_bind_text(s, 1, task_id, SQLITE_OK);
	return read_help(st, s, rc, "no pending help request on task", task_id, out, e);
}

th_err th_store_help_pending_for(struct th_store *st, const char *task_id, const char *asked_by,
                                 const char *asked, struct th_help_request *out, struct th_error *e)
{
	memset(out, 0, sizeof *out);
	if (task_id == NULL || asked_by == NULL || asked == NULL)
		return th_error_set(e, TH_ENOTFOUND, "no task");
	sqlite3_stmt *s;
	th_err err = th_store_stmt(st, TH_STMT_HELP_PENDING_FOR,
	                           "SELECT " HELP_COLS " FROM help_requests "
	                           "WHERE task_id = ?1 AND asked = ?2 AND state = 'pending' "
	                           "AND asked_by = ?3 ORDER BY created_ms, rowid LIMIT 1",
	                           &s, e);
	if (err != TH_OK)
		return err;
	int rc = th_bind_text(s, 1, task_id, SQLITE_OK);
	rc = th_bind_text(s, 2, asked, rc);
	rc = th_bind_text(s, 3, asked_by, rc);
	return read_help(st, s, rc, "no pending help request for", asked, out, e);
}

th_err th_store_help_answer(struct th_store *st, const char *task_id, const char *id,
                            const char *answer_message_id, int *prev, struct th_error *e)
{
	if (prev != NULL)
		*prev = TH_HELP_PENDING;
	if (task_id == NULL || id == NULL)
		return th_error_set(e, TH_ENOTFOUND, "no such help request");
	sqlite3_stmt *s;
	th_err err = th_store_stmt(st, TH_STMT_HELP_ANSWER,
	                           "UPDATE help_requests SET state = 'answered', answered_ms = ?3, "
	                           "answer_message_id = ?4 WHERE id = ?1 AND task_id = ?2 "
	                           "AND state = 'pending'",
	                           &s, e);
	if (err != TH_OK)
		return err;
	int rc = th_bind_text(s, 1, id, SQLITE_OK);
	rc = th_bind_text(s, 2, task_id, rc);
	rc = th_bind_i64(s, 3, th_now_ms(), rc);
	rc = th_bind_text(s, 4, answer_message_id, rc);
	rc = th_step_done(s, rc);
	if (rc != SQLITE_DONE)
		return th_store_fail(st, rc, "help request answer", e);
	if (sqlite3_changes(st->db) == 1)
		return TH_OK;

	/* Nothing changed: say why (unknown, answered, canceled). */
	err =
	    th_store_stmt(st, TH_STMT_HELP_STATE,
	                  "SELECT state FROM help_requests WHERE id = ?1 AND task_id = ?2", &s, e);
	if (err != TH_OK)
		return err;
	rc = th_bind_text(s, 1, id, SQLITE_OK);
	rc = th_bind_text(s, 2, task_id, rc);
	if (rc == SQLITE_OK)
		rc = sqlite3_step(s);
	if (rc == SQLITE_ROW) {
		int state = help_state_from_name((const char *)sqlite3_column_text(s, 0));
		if (prev != NULL)
			*prev = state;
		err = state == TH_HELP_ANSWERED
		          ? th_error_set(e, TH_EINVAL, "help request %s was already answered", id)
		          : th_error_set(e, TH_EINVAL, "help request %s was canceled", id);
	} else if (rc == SQLITE_DONE) {
		err = th_error_set(e, TH_ENOTFOUND, "no such help request %s", id);
	} else {
		err = th_store_fail(st, rc, "help request state", e);
	}
	th_store_stmt_done(s);
	return err;
}

th_err th_store_help_cancel_pending(struct th_store *st, const char *task_id, int *n,
                                    struct th_error *e)
{
	if (n != NULL)
		*n = 0;
	sqlite3_stmt *s;
	th_err err = th_store_stmt(st, TH_STMT_HELP_CANCEL,
	                           "UPDATE help_requests SET state = 'canceled' "
	                           "WHERE task_id = ?1 AND state = 'pending'",
	                           &s, e);
	if (err != TH_OK)
		return err;
	int rc = th_bind_text(s, 1, task_id, SQLITE_OK);
	rc = th_step_done(s, rc);
	if (rc != SQLITE_DONE)
		return th_store_fail(st, rc, "help request cancel", e);
	if (n != NULL)
		*n = sqlite3_changes(st->db);
	return TH_OK;
}

/* ---- plans ---------------------------------------------------------------------------------- */

static const char *const step_states[] = {
    [TH_STEP_PENDING] = "pending",
    [TH_STEP_ACTIVE] = "active",
    [TH_STEP_DONE] = "done",
    [TH_STEP_FAILED] = "failed",
};
#define N_STEP_STATES ((int)(sizeof step_states / sizeof step_states[0]))

static int step_state_from_name(const char *s)
{
	for (int i = 0; s != NULL && i < N_STEP_STATES; i++)
		if (strcmp(step_states[i], s) == 0)
			return i;
	return TH_STEP_PENDING;
}

void th_plan_steps_free(struct th_plan_step *s, size_t n)
{
	if (s == NULL)
		return;
	for (size_t i = 0; i < n; i++) {
		free(s[i].step_id);
		free(s[i].name);
		free(s[i].description);
		free(s[i].depends_on_json);
		free(s[i].output);
		free(s[i].linked_tasks_json);
	}
	free(s);
}

static th_err plan_insert(struct th_store *st, const char *task_id, const struct th_plan_step *p,
                          int64_t pos, int64_t now, struct th_error *e)
{
	if (p->step_id == NULL || p->step_id[0] == '\0' || p->name == NULL)
		return th_error_set(e, TH_EINVAL, "plan step %lld needs an id and a name",
		                    (long long)pos);
	if (p->state < 0 || p->state >= N_STEP_STATES)
		return th_error_set(e, TH_EINVAL, "plan step %s: unknown state %d", p->step_id,
		                    p->state);
	sqlite3_stmt *s;
	th_err err = th_store_stmt(st, TH_STMT_PLAN_INSERT,
	                           "INSERT INTO plan_steps (task_id, step_id, pos, name, "
	                           "description, depends_on_json, state, output, "
	                           "linked_tasks_json, updated_ms) "
	                           "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
	                           &s, e);
	if (err != TH_OK)
		return err;
	int rc = th_bind_text(s, 1, task_id, SQLITE_OK);
	rc = th_bind_text(s, 2, p->step_id, rc);
	rc = th_bind_i64(s, 3, pos, rc);
	rc = th_bind_text(s, 4, p->name, rc);
	rc = th_bind_text(s, 5, p->description != NULL ? p->description : "", rc);
	rc = th_bind_text(s, 6, p->depends_on_json != NULL ? p->depends_on_json : "[]", rc);
	rc = th_bind_text(s, 7, step_states[p->state], rc);
	rc = th_bind_text(s, 8, p->output, rc);
	rc = th_bind_text(s, 9, p->linked_tasks_json != NULL ? p->linked_tasks_json : "[]", rc);
	rc = th_bind_i64(s, 10, now, rc);
	rc = th_step_done(s, rc);
	if (rc == SQLITE_DONE)
		return TH_OK;
	if (rc == SQLITE_CONSTRAINT_PRIMARYKEY || rc == SQLITE_CONSTRAINT_UNIQUE)
		return th_error_set(e, TH_EINVAL, "duplicate plan step id %s", p->step_id);
	if (rc == SQLITE_CONSTRAINT_CHECK)
		return th_error_set(e, TH_EINVAL,
		                    "plan step %s: depends_on and linked_tasks must be JSON arrays",
		                    p->step_id);
	if (rc == SQLITE_CONSTRAINT_FOREIGNKEY)
		return th_error_set(e, TH_ENOTFOUND, "task %s not found", task_id);
	return th_store_fail(st, rc, "plan step insert", e);
}

th_err th_store_plan_replace(struct th_store *st, const char *task_id,
                             const struct th_plan_step *steps, size_t n, struct th_error *e)
{
	if (task_id == NULL || (steps == NULL && n > 0))
		return th_error_set(e, TH_EINVAL, "plan needs a task");
	int exists = 0;
	th_err err = th_store_task_exists(st, task_id, &exists, e);
	if (err != TH_OK)
		return err;
	if (!exists)
		return th_error_set(e, TH_ENOTFOUND, "task %s not found", task_id);
	sqlite3_stmt *s;
	err = th_store_stmt(st, TH_STMT_PLAN_DELETE, "DELETE FROM plan_steps WHERE task_id = ?1",
	                    &s, e);
	if (err != TH_OK)
		return err;
	int rc = th_bind_text(s, 1, task_id, SQLITE_OK);
	rc = th_step_done(s, rc);
	if (rc != SQLITE_DONE)
		return th_store_fail(st, rc, "plan delete", e);
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
	sqlite3_stmt *s;
	th_err err =
	    th_store_stmt(st, TH_STMT_PLAN_UPDATE,
	                  "UPDATE plan_steps SET state = ?3, output = coalesce(?4, output), "
	                  "linked_tasks_json = coalesce(?5, linked_tasks_json), "
	                  "updated_ms = ?6 WHERE task_id = ?1 AND step_id = ?2",
	                  &s, e);
	if (err != TH_OK)
		return err;
	int rc = th_bind_text(s, 1, task_id, SQLITE_OK);
	rc = th_bind_text(s, 2, step_id, rc);
	rc = th_bind_text(s, 3, step_states[state], rc);
	rc = th_bind_text(s, 4, output, rc);
	rc = th_bind_text(s, 5, linked_tasks_json, rc);
	rc = th_bind_i64(s, 6, th_now_ms(), rc);
	rc = th_step_done(s, rc);
	if (rc == SQLITE_CONSTRAINT_CHECK)
		return th_error_set(e, TH_EINVAL, "plan step %s: linked_tasks must be a JSON array",
		                    step_id);
	if (rc != SQLITE_DONE)
		return th_store_fail(st, rc, "plan step update", e);
	if (sqlite3_changes(st->db) == 0)
		return th_error_set(e, TH_ENOTFOUND, "task %s has no plan step %s",
		                    task_id != NULL ? task_id : "", step_id != NULL ? step_id : "");
	return TH_OK;
}

th_err th_store_plan(struct th_store *st, const char *task_id, struct th_plan_step **out, size_t *n,
                     struct th_error *e)
{
	*out = NULL;
	*n = 0;
	sqlite3_stmt *s;
	th_err err = th_store_stmt(st, TH_STMT_PLAN_LIST,
	                           "SELECT step_id, name, description, depends_on_json, state, "
	                           "output, linked_tasks_json, updated_ms FROM plan_steps "
	                           "WHERE task_id = ?1 ORDER BY pos",
	                           &s, e);
	if (err != TH_OK)
		return err;
	int rc = th_bind_text(s, 1, task_id, SQLITE_OK);
	struct th_plan_step *v = NULL;
	size_t cnt = 0, cap = 0;
	while (rc == SQLITE_OK && (rc = sqlite3_step(s)) == SQLITE_ROW) {
		if (th_grow((void **)&v, &cap, cnt, sizeof *v) != 0) {
			rc = SQLITE_NOMEM;
			break;
		}
		struct th_plan_step *p = &v[cnt++];
		memset(p, 0, sizeof *p);
		p->state = step_state_from_name((const char *)sqlite3_column_text(s, 4));
		p->updated_ms = sqlite3_column_int64(s, 7);
		if ((th_col_dup(s, 0, &p->step_id) | th_col_dup(s, 1, &p->name) |
		     th_col_dup(s, 2, &p->description) | th_col_dup(s, 3, &p->depends_on_json) |
		     th_col_dup(s, 5, &p->output) | th_col_dup(s, 6, &p->linked_tasks_json)) != 0) {
			rc = SQLITE_NOMEM;
			break;
		}
		rc = SQLITE_OK;
	}
	if (rc != SQLITE_DONE)
		err = rc == SQLITE_NOMEM ? th_error_set(e, TH_ENOMEM, "out of memory reading plan")
		                         : th_store_fail(st, rc, "plan", e);
	th_store_stmt_done(s);
	if (err != TH_OK) {
		th_plan_steps_free(v, cnt);
		return err;
	}
	*out = v;
	*n = cnt;
	return TH_OK;
}

/* ---- sub-task numbering ------------------------------------------------------------------ */

th_err th_store_subtask_next_number(struct th_store *st, const char *parent_id, int64_t *n,
                                    struct th_error *e)
{
	*n = 0;
	sqlite3_stmt *s;
	th_err err = th_store_stmt(st, TH_STMT_SUB_NEXT,
	                           "UPDATE tasks SET child_count = child_count + 1 WHERE id = ?1 "
	                           "RETURNING child_count",
	                           &s, e);
	if (err != TH_OK)
		return err;
	int rc = th_bind_text(s, 1, parent_id, SQLITE_OK);
	int64_t got = 0;
	rc = th_step_returning(s, rc, &got);
	th_store_stmt_done(s);
	if (rc != SQLITE_DONE)
		return th_store_fail(st, rc, "sub-task number", e);
	if (got == 0)
		return th_error_set(e, TH_ENOTFOUND, "task %s not found",
		                    parent_id != NULL ? parent_id : "");
	*n = got;
	return TH_OK;
}

th_err th_store_subtask_parent(struct th_store *st, const char *child_id, char **parent_id,
                               struct th_error *e)
{
	*parent_id = NULL;
	sqlite3_stmt *s;
	th_err err =
	    th_store_stmt(st, TH_STMT_SUB_PARENT,
	                  "SELECT parent_id FROM subtask_links WHERE child_id = ?1", &s, e);
	if (err != TH_OK)
		return err;
	int rc = th_bind_text(s, 1, child_id, SQLITE_OK);
	if (rc == SQLITE_OK)
		rc = sqlite3_step(s);
	if (rc == SQLITE_ROW)
		err = th_col_dup(s, 0, parent_id) == 0
		          ? TH_OK
		          : th_error_set(e, TH_ENOMEM, "out of memory reading sub-task link");
	else if (rc == SQLITE_DONE)
		err = th_error_set(e, TH_ENOTFOUND, "task %s is not a sub-task",
		                   child_id != NULL ? child_id : "");
	else
		err = th_store_fail(st, rc, "sub-task parent", e);
	th_store_stmt_done(s);
	return err;
}

/* ---- A2UI surface registry ------------------------------------------------------------------ */

th_err th_store_a2ui_get(struct th_store *st, const char *task_id, char **json, struct th_error *e)
{
	*json = NULL;
	sqlite3_stmt *s;
	th_err err = th_store_stmt(st, TH_STMT_A2UI_GET,
	                           "SELECT json FROM a2ui_registry WHERE task_id = ?1", &s, e);
	if (err != TH_OK)
		return err;
	int rc = th_bind_text(s, 1, task_id, SQLITE_OK);
	if (rc == SQLITE_OK)
		rc = sqlite3_step(s);
	if (rc == SQLITE_ROW)
		err = th_col_dup(s, 0, json) == 0
		          ? TH_OK
		          : th_error_set(e, TH_ENOMEM, "out of memory reading A2UI registry");
	else if (rc != SQLITE_DONE)
		err = th_store_fail(st, rc, "A2UI registry", e);
	th_store_stmt_done(s);
	return err;
}

th_err th_store_a2ui_put(struct th_store *st, const char *task_id, const char *json,
                         struct th_error *e)
{
	if (task_id == NULL || json == NULL)
		return th_error_set(e, TH_EINVAL, "A2UI registry needs a task and JSON");
	sqlite3_stmt *s;
	th_err err = th_store_stmt(st, TH_STMT_A2UI_PUT,
	                           "INSERT INTO a2ui_registry (task_id, json, updated_ms) "
	                           "VALUES (?1, ?2, ?3) ON CONFLICT (task_id) DO UPDATE SET "
	                           "json = excluded.json, updated_ms = excluded.updated_ms",
	                           &s, e);
	if (err != TH_OK)
		return err;
	int rc = th_bind_text(s, 1, task_id, SQLITE_OK);
	rc = th_bind_text(s, 2, json, rc);
	rc = th_bind_i64(s, 3, th_now_ms(), rc);
	rc = th_step_done(s, rc);
	if (rc == SQLITE_DONE)
		return TH_OK;
	if (rc == SQLITE_CONSTRAINT_CHECK)
		return th_error_set(e, TH_EINVAL, "A2UI registry of task %s is not valid JSON",
		                    task_id);
	if (rc == SQLITE_CONSTRAINT_FOREIGNKEY)
		return th_error_set(e, TH_ENOTFOUND, "task %s not found", task_id);
	return th_store_fail(st, rc, "A2UI registry put", e);
}

th_err th_store_a2ui_next_artifact(struct th_store *st, const char *task_id, int64_t *n,
                                   struct th_error *e)
{
	*n = 0;
	if (task_id == NULL)
		return th_error_set(e, TH_EINVAL, "A2UI artifact number needs a task");
	sqlite3_stmt *s;
	/* A task without a registry row gets one with an empty registry. */
	th_err err = th_store_stmt(st, TH_STMT_A2UI_NEXT,
	                           "INSERT INTO a2ui_registry (task_id, json, next_artifact, "
	                           "updated_ms) VALUES (?1, '{}', 2, ?2) ON CONFLICT (task_id) "
	                           "DO UPDATE SET next_artifact = next_artifact + 1, "
	                           "updated_ms = excluded.updated_ms RETURNING next_artifact - 1",
	                           &s, e);
	if (err != TH_OK)
		return err;
	int rc = th_bind_text(s, 1, task_id, SQLITE_OK);
	rc = th_bind_i64(s, 2, th_now_ms(), rc);
	int64_t got = 0;
	rc = th_step_returning(s, rc, &got);
	th_store_stmt_done(s);
	if (rc == SQLITE_CONSTRAINT_FOREIGNKEY)
		return th_error_set(e, TH_ENOTFOUND, "task %s not found", task_id);
	if (rc != SQLITE_DONE)
		return th_store_fail(st, rc, "A2UI artifact number", e);
	*n = got;
	return TH_OK;
}

int th_store_has_side_channels(struct th_store *st, const char *task_id)
{
	sqlite3_stmt *s;
	if (th_store_stmt(st, TH_STMT_CHAN_ANY, "SELECT 1 FROM channels WHERE task_id = ?1 LIMIT 1",
	                  &s, NULL) != TH_OK)
		return 0;
	int any =
	    th_bind_text(s, 1, task_id, SQLITE_OK) == SQLITE_OK && sqlite3_step(s) == SQLITE_ROW;
	th_store_stmt_done(s);
	return any;
}
