/* SPDX-License-Identifier: Apache-2.0 */
/* turns.c — turns with leases and the cut flag (CTL-3, TURN-4), and their recovery. */
#include <assert.h>
#include <string.h>

#include "store/store.h"
#include "store/store_int.h"
#include "util/ids.h"

/* ---- turns ------------------------------------------------------------------------------ */

/* Since migration 019 a turn is stored in turn_rows under its task's number (STORE-10,
 * decision-075); reads name the view turns, which gives the task's id as before. A
 * write that names a task finds its number in the same statement: no task, no row. */

static const char *const turn_states[] = {
    [TH_TURN_QUEUED] = "queued", [TH_TURN_RUNNING] = "running", [TH_TURN_DONE] = "done",
    [TH_TURN_CUT] = "cut",       [TH_TURN_FAILED] = "failed",
};
#define N_TURN_STATES ((int)(sizeof turn_states / sizeof turn_states[0]))

static int turn_state_from_name(const char *s)
{
	return TH_NAME_INDEX(turn_states, s, TH_TURN_FAILED);
}

/* The columns of TURN_COLS, in order. */
static const struct th_col turn_cols[] = {
    TH_COL_I64(struct th_turn_row, id),
    TH_COL_TEXT(struct th_turn_row, task_id),
    TH_COL_TEXT(struct th_turn_row, message_id),
    TH_COL_ENUM(struct th_turn_row, state, turn_state_from_name),
    TH_COL_INT(struct th_turn_row, attempts),
    TH_COL_I64(struct th_turn_row, lease_until_ms),
    TH_COL_INT(struct th_turn_row, worker_pid),
    TH_COL_INT(struct th_turn_row, cut),
    TH_COL_TEXT(struct th_turn_row, error),
};
static const struct th_row_def turn_row = TH_ROW_DEF(struct th_turn_row, turn_cols);
#define TURN_COLS                                                                                  \
	"id, task_id, message_id, state, attempts, coalesce(lease_until_ms, 0), "                  \
	"coalesce(worker_pid, 0), cut, error"

/* Only state and worker_pid of a turn row (turn_refused): nothing to free. */
static const struct th_col turn_state_cols[] = {
    TH_COL_ENUM(struct th_turn_row, state, turn_state_from_name),
    TH_COL_INT(struct th_turn_row, worker_pid),
};
static const struct th_row_def turn_state_row = TH_ROW_DEF(struct th_turn_row, turn_state_cols);

void th_turn_row_free(struct th_turn_row *t)
{
	if (t == NULL)
		return;
	th_row_free(&turn_row, t);
}

/* After a conditional UPDATE changed nothing: TH_ENOTFOUND for an unknown turn, else
 * TH_EINVAL naming its state and why (what). */
static th_err turn_refused(struct th_store *st, int64_t turn_id, const char *what,
                           struct th_error *e)
{
	struct th_turn_row t;
	th_err err = th_store_one(st, TH_STMT_TURN_STATE,
	                          "SELECT state, coalesce(worker_pid, 0) FROM turns WHERE id = ?1",
	                          TH_ARGS(TH_I(turn_id)), &turn_state_row, &t, "turn state", e);
	if (err == TH_ENOTFOUND)
		return th_error_set(e, TH_ENOTFOUND, "turn %lld not found", (long long)turn_id);
	if (err != TH_OK)
		return err;
	/* The CHECK on turns.state admits only the names of turn_states. */
	assert(t.state >= 0 && (size_t)t.state < sizeof turn_states / sizeof turn_states[0]);
	return th_error_set(e, TH_EINVAL, "turn %lld (%s, worker %d): %s", (long long)turn_id,
	                    turn_states[t.state], t.worker_pid, what);
}

/* After a conditional write changed n rows: none -> turn_refused(what). */
static th_err turn_cond(struct th_store *st, th_err err, int64_t n, int64_t turn_id,
                        const char *what, struct th_error *e)
{
	if (err == TH_OK && n == 0)
		return turn_refused(st, turn_id, what, e);
	return err;
}

th_err th_store_turn_create(struct th_store *st, const char *task_id, const char *message_id,
                            int64_t *turn_id, struct th_error *e)
{
	if (turn_id != NULL)
		*turn_id = 0;
	if (task_id == NULL || message_id == NULL)
		return th_error_set(e, TH_EINVAL, "turn needs a task and a message");
	int64_t id = 0, rows = 0;
	th_err err =
	    th_store_exec(st, TH_STMT_TURN_CREATE,
	                  "INSERT INTO turn_rows (task_num, message_id, state, created_ms, "
	                  "updated_ms) SELECT num, ?2, 'queued', ?3, ?3 FROM tasks "
	                  "WHERE id = ?1 RETURNING id",
	                  TH_ARGS(TH_T(task_id), TH_T(message_id), TH_I(th_now_ms())), &id, &rows,
	                  "turn create", e);
	if (err == TH_ENOTFOUND || (err == TH_OK && rows == 0))
		return th_error_set(e, TH_ENOTFOUND, "task %s not found", task_id);
	if (err == TH_OK && turn_id != NULL)
		*turn_id = id;
	return err;
}

th_err th_store_turn_start(struct th_store *st, const char *task_id, const char *message_id,
                           int pid, int lease_ms, struct th_lease *out, struct th_error *e)
{
	out->turn_id = 0;
	out->epoch = 0;
	if (task_id == NULL || message_id == NULL)
		return th_error_set(e, TH_EINVAL, "turn needs a task and a message");
	int64_t now = th_now_ms(), id = 0, rows = 0;
	th_err err =
	    th_store_exec(st, TH_STMT_TURN_START,
	                  "INSERT INTO turn_rows (task_num, message_id, state, attempts, "
	                  "worker_pid, lease_until_ms, created_ms, updated_ms) "
	                  "SELECT num, ?2, 'running', ?3, ?4, ?5, ?6, ?6 FROM tasks "
	                  "WHERE id = ?1 RETURNING id",
	                  TH_ARGS(TH_T(task_id), TH_T(message_id), TH_I(TH_LEASE_FIRST), TH_I(pid),
	                          TH_I(now + (lease_ms > 0 ? lease_ms : 0)), TH_I(now)),
	                  &id, &rows, "turn start", e);
	if (err == TH_ENOTFOUND || (err == TH_OK && rows == 0))
		return th_error_set(e, TH_ENOTFOUND, "task %s not found", task_id);
	if (err == TH_OK) {
		out->turn_id = id;
		out->epoch = TH_LEASE_FIRST;
	}
	return err;
}

th_err th_store_turn_record(struct th_store *st, const char *task_id, const char *message_id,
                            int pid, int state, const char *error, struct th_error *e)
{
	if (task_id == NULL || message_id == NULL || state < TH_TURN_DONE || state >= N_TURN_STATES)
		return th_error_set(e, TH_EINVAL,
		                    "an inline turn needs a task, a message and an end");
	/* decision-054: queued on PostgreSQL (the task is locked and exists). */
	th_err err =
	    th_store_exec_later(st, TH_STMT_TURN_RECORD,
	                        "INSERT INTO turn_rows (task_num, message_id, state, attempts, "
	                        "error, worker_pid, created_ms, updated_ms) "
	                        "SELECT num, ?2, ?3, 1, ?4, ?5, ?6, ?6 FROM tasks WHERE id = ?1",
	                        TH_ARGS(TH_T(task_id), TH_T(message_id), TH_T(turn_states[state]),
	                                TH_T(error), TH_I(pid), TH_I(th_now_ms())),
	                        NULL, "no such task", "turn record", e);
	if (err == TH_ENOTFOUND)
		return th_error_set(e, TH_ENOTFOUND, "task %s not found", task_id);
	return err;
}

th_err th_store_turn_get(struct th_store *st, int64_t turn_id, struct th_turn_row *out,
                         struct th_error *e)
{
	th_err err =
	    th_store_one(st, TH_STMT_TURN_GET, "SELECT " TURN_COLS " FROM turns WHERE id = ?1",
	                 TH_ARGS(TH_I(turn_id)), &turn_row, out, "turn get", e);
	if (err == TH_ENOTFOUND)
		return th_error_set(e, TH_ENOTFOUND, "turn %lld not found", (long long)turn_id);
	return err;
}

th_err th_store_turn_finish(struct th_store *st, const struct th_lease *l, int state,
                            const char *error, struct th_error *e)
{
	if (state < 0 || state >= N_TURN_STATES)
		return th_error_set(e, TH_EINVAL, "turn %lld: unknown state %d",
		                    (long long)l->turn_id, state);
	int64_t n = 0;
	th_err err =
	    th_store_exec(st, TH_STMT_TURN_FINISH,
	                  "UPDATE turn_rows SET state = ?3, error = ?4, updated_ms = ?5 "
	                  "WHERE id = ?1 AND attempts = ?2 AND state = 'running'",
	                  TH_ARGS(TH_I(l->turn_id), TH_I(l->epoch), TH_T(turn_states[state]),
	                          TH_T(error), TH_I(th_now_ms())),
	                  NULL, &n, "turn finish", e);
	return turn_cond(st, err, n, l->turn_id, "lease no longer held; nothing written", e);
}

#define TURNS_CUT_SQL                                                                              \
	"UPDATE turn_rows SET cut = 1, state = 'cut', updated_ms = ?2 "                            \
	"WHERE task_num = (SELECT num FROM tasks WHERE id = ?1) "                                  \
	"AND state IN ('queued', 'running')"

th_err th_store_turns_cut(struct th_store *st, const char *task_id, int *n, struct th_error *e)
{
	/* decision-060: without a count to return it is queued on PostgreSQL (nothing in it
	 * can be refused); a count is read now. */
	if (n == NULL)
		return th_store_exec_later(st, TH_STMT_TURNS_CUT, TURNS_CUT_SQL,
		                           TH_ARGS(TH_T(task_id), TH_I(th_now_ms())), NULL, NULL,
		                           "turns cut", e);
	int64_t cut = 0;
	th_err err =
	    th_store_exec(st, TH_STMT_TURNS_CUT, TURNS_CUT_SQL,
	                  TH_ARGS(TH_T(task_id), TH_I(th_now_ms())), NULL, &cut, "turns cut", e);
	*n = err == TH_OK ? (int)cut : 0;
	return err;
}

int th_store_turn_is_cut(struct th_store *st, int64_t turn_id)
{
	int64_t cut = 0;
	/* No error to report: a failure (logged by th_store_fail) reads as not cut. */
	if (th_store_exec(st, TH_STMT_TURN_IS_CUT, "SELECT cut FROM turns WHERE id = ?1",
	                  TH_ARGS(TH_I(turn_id)), &cut, NULL, "turn is cut", NULL) != TH_OK)
		return 0;
	return cut != 0;
}

/* ---- turn recovery (TURN-4) ------------------------------------------------------------ */

void th_turn_rows_free(struct th_turn_row *t, size_t n)
{
	th_rows_free(&turn_row, t, n);
}

th_err th_store_turns_expired(struct th_store *st, const char *task_id, int64_t now_ms,
                              int64_t queued_before_ms, int limit, struct th_turn_row **out,
                              size_t *n, struct th_error *e)
{
	/* ?4, the task, only for TURNS_EXPIRED_TASK. */
	const struct th_arg args[] = {TH_I(now_ms), TH_I(queued_before_ms),
	                              TH_I(limit > 0 ? limit : -1), TH_T(task_id)};
	/* Both read the live turns only, through the partial index turns_live_by_task (its
	 * condition spelled the same way): across tasks all of it, for one task its range.
	 * "+id" keeps SQLite from walking the whole table in id order instead (migration
	 * 010, decision-048); the live turns are few, so sorting them is cheap. */
	if (task_id == NULL)
		return th_store_each(
		    st, TH_STMT_TURNS_EXPIRED,
		    "SELECT " TURN_COLS " "
		    "FROM turns WHERE state IN ('queued', 'running') "
		    "AND ((state = 'running' AND lease_until_ms < ?1) OR "
		    "(state = 'queued' AND updated_ms < ?2)) ORDER BY +id LIMIT ?3",
		    args, 3, &turn_row, (void **)out, n, "expired turns", e);
	return th_store_each(st, TH_STMT_TURNS_EXPIRED_TASK,
	                     "SELECT " TURN_COLS " "
	                     "FROM turns WHERE task_id = ?4 AND state IN ('queued', 'running') "
	                     "AND ((state = 'running' AND lease_until_ms < ?1) OR "
	                     "(state = 'queued' AND updated_ms < ?2)) ORDER BY id LIMIT ?3",
	                     args, 4, &turn_row, (void **)out, n, "expired turns", e);
}

/* The first live turn's expiry (th_store_turn_next_expiry, th_store_expect_view_checks).
 * From turn_rows, not the turns view, which every plain-CGI GetTask would expand
 * (decision-095); the state test is the partial index turns_live_by_task's. */
#define TURN_NEXT_EXPIRY_SQL                                                                       \
	"SELECT coalesce(min(CASE WHEN u.state = 'running' THEN u.lease_until_ms "                 \
	"ELSE u.updated_ms + ?2 END), -1) FROM tasks t JOIN turn_rows u ON u.task_num = t.num "    \
	"WHERE t.id = ?1 AND u.state IN ('queued', 'running')"

th_err th_store_turn_next_expiry(struct th_store *st, const char *task_id, int64_t queued_lease_ms,
                                 int64_t *at, struct th_error *e)
{
	*at = -1;
	return th_store_exec(st, TH_STMT_TURN_NEXT_EXPIRY, TURN_NEXT_EXPIRY_SQL,
	                     TH_ARGS(TH_T(task_id), TH_I(queued_lease_ms)), at, NULL, "turn expiry",
	                     e);
}

void th_store_turn_next_expiry_soon(struct th_store *st, const char *task_id,
                                    int64_t queued_lease_ms)
{
	th_store_prefetch(st, TH_STMT_TURN_NEXT_EXPIRY, TURN_NEXT_EXPIRY_SQL,
	                  TH_ARGS(TH_T(task_id), TH_I(queued_lease_ms)));
}

th_err th_store_turn_release(struct th_store *st, int64_t turn_id, int64_t now_ms,
                             struct th_error *e)
{
	int64_t n = 0;
	th_err err = th_store_exec(st, TH_STMT_TURN_RELEASE,
	                           "UPDATE turn_rows SET state = 'queued', worker_pid = NULL, "
	                           "lease_until_ms = NULL, updated_ms = ?3 WHERE id = ?1 "
	                           "AND state = 'running' AND coalesce(lease_until_ms, 0) < ?2",
	                           TH_ARGS(TH_I(turn_id), TH_I(now_ms), TH_I(th_now_ms())), NULL,
	                           &n, "turn release", e);
	return turn_cond(st, err, n, turn_id,
	                 "only a running turn whose lease expired can be released", e);
}

th_err th_store_turn_takeover(struct th_store *st, int64_t turn_id, int pid, int lease_ms,
                              int64_t now_ms, struct th_lease *out, struct th_error *e)
{
	out->turn_id = turn_id;
	out->epoch = 0;
	int64_t now = th_now_ms(), epoch = 0, n = 0;
	th_err err = th_store_exec(st, TH_STMT_TURN_TAKEOVER,
	                           "UPDATE turn_rows SET state = 'running', worker_pid = ?2, "
	                           "lease_until_ms = ?3, attempts = attempts + 1, updated_ms = ?4 "
	                           "WHERE id = ?1 AND cut = 0 AND (state = 'queued' OR "
	                           "(state = 'running' AND coalesce(lease_until_ms, 0) < ?5)) "
	                           "RETURNING attempts",
	                           TH_ARGS(TH_I(turn_id), TH_I(pid),
	                                   TH_I(now + (lease_ms > 0 ? lease_ms : 0)), TH_I(now),
	                                   TH_I(now_ms)),
	                           &epoch, &n, "turn takeover", e);
	err = turn_cond(st, err, n, turn_id, "held by a worker or ended; not taken over", e);
	if (err == TH_OK)
		out->epoch = (int)epoch;
	return err;
}

th_err th_store_turn_hold(struct th_store *st, const struct th_lease *l, int lease_ms, int *held,
                          struct th_error *e)
{
	int64_t now = th_now_ms(), n = 0;
	th_err err = th_store_exec(st, TH_STMT_TURN_HOLD,
	                           "UPDATE turn_rows SET lease_until_ms = ?3, updated_ms = ?4 "
	                           "WHERE id = ?1 AND attempts = ?2 AND state = 'running' "
	                           "AND cut = 0",
	                           TH_ARGS(TH_I(l->turn_id), TH_I(l->epoch),
	                                   TH_I(now + (lease_ms > 0 ? lease_ms : 0)), TH_I(now)),
	                           NULL, &n, "turn lease", e);
	*held = err == TH_OK && n == 1;
	return err;
}

th_err th_store_turn_give_up(struct th_store *st, const struct th_turn_row *seen, int64_t now_ms,
                             const char *why, int *done, struct th_error *e)
{
	int64_t n = 0;
	th_err err =
	    th_store_exec(st, TH_STMT_TURN_GIVE_UP,
	                  "UPDATE turn_rows SET state = 'failed', error = ?3, updated_ms = ?4 "
	                  "WHERE id = ?1 AND attempts = ?2 AND cut = 0 AND "
	                  "(state = 'queued' OR (state = 'running' AND "
	                  "coalesce(lease_until_ms, 0) < ?4))",
	                  TH_ARGS(TH_I(seen->id), TH_I(seen->attempts), TH_T(why), TH_I(now_ms)),
	                  NULL, &n, "turn give up", e);
	*done = err == TH_OK && n == 1;
	return err;
}
