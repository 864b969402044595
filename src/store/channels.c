/* SPDX-License-Identifier: Apache-2.0 */
/* channels.c — side channels, their members and every channel's messages (CH-1..CH-3).
 * Schema: sql/002. */
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

static const char *const chan_kinds[] = {
    [TH_CHAN_MESSAGE] = "message",
    [TH_CHAN_HELP_REQUEST] = "help_request",
    [TH_CHAN_HELP_REPLY] = "help_reply",
};
#define N_CHAN_KINDS ((int)(sizeof chan_kinds / sizeof chan_kinds[0]))

static int chan_kind_from_name(const char *s)
{
	return TH_NAME_INDEX(chan_kinds, s, TH_CHAN_MESSAGE);
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

#define CHAN_ANY_SQL "SELECT 1 FROM channels WHERE task_id = ?1 LIMIT 1"

int th_store_has_side_channels(struct th_store *st, const char *task_id)
{
	int64_t rows = 0;
	return th_store_exec(st, TH_STMT_CHAN_ANY, CHAN_ANY_SQL, TH_ARGS(TH_T(task_id)), NULL,
	                     &rows, "side channels", NULL) == TH_OK &&
	       rows > 0;
}

void th_store_side_channels_soon(struct th_store *st, const char *task_id)
{
	th_store_prefetch(st, TH_STMT_CHAN_ANY, CHAN_ANY_SQL, TH_ARGS(TH_T(task_id)));
}
