/* SPDX-License-Identifier: Apache-2.0 */
/* help_requests.c — help requests asked on a channel and their answers (CH-4, CH-5,
 * STATUS-1). Schema: sql/002. */
#include <string.h>

#include "store/store.h"
#include "store/store_int.h"
#include "util/ids.h"

static const char *const help_states[] = {
    [TH_HELP_PENDING] = "pending",
    [TH_HELP_ANSWERED] = "answered",
    [TH_HELP_CANCELED] = "canceled",
};

static int help_state_from_name(const char *s)
{
	return TH_NAME_INDEX(help_states, s, TH_HELP_CANCELED);
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

/* The oldest question asked_by (?3) asked of asked (?2) on task ?1 that is still pending. */
#define HELP_PENDING_FOR_SQL                                                                       \
	"SELECT " HELP_COLS " FROM help_requests "                                                 \
	"WHERE task_id = ?1 AND asked = ?2 AND state = 'pending' "                                 \
	"AND asked_by = ?3 ORDER BY created_ms, rowid LIMIT 1"

th_err th_store_help_pending_for(struct th_store *st, const char *task_id, const char *asked_by,
                                 const char *asked, struct th_help_request *out, struct th_error *e)
{
	memset(out, 0, sizeof *out);
	if (task_id == NULL || asked_by == NULL || asked == NULL)
		return th_error_set(e, TH_ENOTFOUND, "no task");
	return help_one(st, TH_STMT_HELP_PENDING_FOR, HELP_PENDING_FOR_SQL,
	                TH_ARGS(TH_T(task_id), TH_T(asked), TH_T(asked_by)),
	                "no pending help request for", asked, out, e);
}

void th_store_help_pending_for_soon(struct th_store *st, const char *task_id, const char *asked_by,
                                    const char *asked)
{
	if (task_id != NULL && asked_by != NULL && asked != NULL)
		th_store_prefetch(st, TH_STMT_HELP_PENDING_FOR, HELP_PENDING_FOR_SQL,
		                  TH_ARGS(TH_T(task_id), TH_T(asked), TH_T(asked_by)));
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

#define HELP_CANCEL_SQL                                                                            \
	"UPDATE help_requests SET state = 'canceled' WHERE task_id = ?1 AND state = 'pending'"

th_err th_store_help_cancel_pending(struct th_store *st, const char *task_id, int *n,
                                    struct th_error *e)
{
	/* decision-060: without a count to return it is queued on PostgreSQL (nothing in it
	 * can be refused); a count is read now. */
	if (n == NULL)
		return th_store_exec_later(st, TH_STMT_HELP_CANCEL, HELP_CANCEL_SQL,
		                           TH_ARGS(TH_T(task_id)), NULL, NULL,
		                           "help request cancel", e);
	*n = 0;
	int64_t changed = 0;
	th_err err = th_store_exec(st, TH_STMT_HELP_CANCEL, HELP_CANCEL_SQL, TH_ARGS(TH_T(task_id)),
	                           NULL, &changed, "help request cancel", e);
	if (err == TH_OK)
		*n = (int)changed;
	return err;
}
