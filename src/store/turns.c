/* SPDX-License-Identifier: Apache-2.0 */
/* turns.c — sub-task links (CTL-4) and turns with leases and the cut flag (CTL-3,
 * TURN-4). */
#include <stdlib.h>
#include <string.h>

#include "store/store.h"
#include "store/store_int.h"
#include "util/ids.h"

/* ---- sub-task links ------------------------------------------------------------------- */

th_err th_store_subtask_link(struct th_store *st, const char *parent_id, const char *child_id,
                             struct th_error *e)
{
	if (parent_id == NULL || child_id == NULL)
		return th_error_set(e, TH_EINVAL, "sub-task link needs parent and child");
	if (strcmp(parent_id, child_id) == 0)
		return th_error_set(e, TH_EINVAL, "task %s cannot be its own sub-task", child_id);
	sqlite3_stmt *s;
	th_err err = th_store_stmt(st, TH_STMT_SUB_LINK,
	                           "INSERT INTO subtask_links (parent_id, child_id, created_ms) "
	                           "VALUES (?1, ?2, ?3)",
	                           &s, e);
	if (err != TH_OK)
		return err;
	int rc = th_bind_text(s, 1, parent_id, SQLITE_OK);
	rc = th_bind_text(s, 2, child_id, rc);
	rc = th_bind_i64(s, 3, th_now_ms(), rc);
	rc = th_step_done(s, rc);
	if (rc == SQLITE_DONE)
		return TH_OK;
	if (rc == SQLITE_CONSTRAINT_PRIMARYKEY || rc == SQLITE_CONSTRAINT_UNIQUE)
		return th_error_set(e, TH_EINVAL, "task %s is already a sub-task", child_id);
	if (rc == SQLITE_CONSTRAINT_FOREIGNKEY)
		return th_error_set(e, TH_ENOTFOUND, "task %s or %s not found", parent_id,
		                    child_id);
	return th_store_fail(st, rc, "sub-task link", e);
}

void th_subtask_refs_free(struct th_subtask_ref *r, size_t n)
{
	if (r == NULL)
		return;
	for (size_t i = 0; i < n; i++) {
		free(r[i].id);
		free(r[i].name);
	}
	free(r);
}

th_err th_store_subtasks(struct th_store *st, const char *parent_id, int unresolved_only,
                         struct th_subtask_ref **out, size_t *n, struct th_error *e)
{
	*out = NULL;
	*n = 0;
	sqlite3_stmt *s;
	/* Unresolved: the link is open and the child is not terminal, so a child that ended
	 * counts as resolved even before anyone called th_store_subtask_resolve. */
	th_err err = th_store_stmt(
	    st, TH_STMT_SUB_LIST,
	    "SELECT t.id, t.name, t.state FROM subtask_links l JOIN tasks t ON t.id = l.child_id "
	    "WHERE l.parent_id = ?1 AND (?2 = 0 OR (l.resolved_ms IS NULL AND t.state NOT IN ("
	    "'TASK_STATE_COMPLETED', 'TASK_STATE_FAILED', 'TASK_STATE_CANCELED', "
	    "'TASK_STATE_REJECTED'))) ORDER BY l.created_ms, l.rowid",
	    &s, e);
	if (err != TH_OK)
		return err;
	int rc = th_bind_text(s, 1, parent_id, SQLITE_OK);
	rc = th_bind_i64(s, 2, unresolved_only ? 1 : 0, rc);
	struct th_subtask_ref *refs = NULL;
	size_t cnt = 0, cap = 0;
	while (rc == SQLITE_OK && (rc = sqlite3_step(s)) == SQLITE_ROW) {
		if (cnt == cap) {
			size_t ncap = cap == 0 ? 8 : cap * 2;
			struct th_subtask_ref *grown = realloc(refs, ncap * sizeof *refs);
			if (grown == NULL) {
				rc = SQLITE_NOMEM;
				break;
			}
			refs = grown;
			cap = ncap;
		}
		struct th_subtask_ref *r = &refs[cnt++];
		r->id = NULL;
		r->name = NULL;
		r->state = th_store_state_from_name((const char *)sqlite3_column_text(s, 2));
		if ((th_col_dup(s, 0, &r->id) | th_col_dup(s, 1, &r->name)) != 0) {
			rc = SQLITE_NOMEM;
			break;
		}
		rc = SQLITE_OK;
	}
	if (rc != SQLITE_DONE)
		err = rc == SQLITE_NOMEM
		          ? th_error_set(e, TH_ENOMEM, "out of memory listing sub-tasks")
		          : th_store_fail(st, rc, "sub-tasks", e);
	th_store_stmt_done(s);
	if (err != TH_OK) {
		th_subtask_refs_free(refs, cnt);
		return err;
	}
	*out = refs;
	*n = cnt;
	return TH_OK;
}

th_err th_store_subtask_resolve(struct th_store *st, const char *child_id, struct th_error *e)
{
	sqlite3_stmt *s;
	/* Resolving twice keeps the first time. */
	th_err err =
	    th_store_stmt(st, TH_STMT_SUB_RESOLVE,
	                  "UPDATE subtask_links SET resolved_ms = coalesce(resolved_ms, ?2) "
	                  "WHERE child_id = ?1",
	                  &s, e);
	if (err != TH_OK)
		return err;
	int rc = th_bind_text(s, 1, child_id, SQLITE_OK);
	rc = th_bind_i64(s, 2, th_now_ms(), rc);
	rc = th_step_done(s, rc);
	if (rc != SQLITE_DONE)
		return th_store_fail(st, rc, "sub-task resolve", e);
	if (sqlite3_changes(st->db) == 0)
		return th_error_set(e, TH_ENOTFOUND, "task %s is not a sub-task",
		                    child_id != NULL ? child_id : "");
	return TH_OK;
}

/* ---- turns ------------------------------------------------------------------------------ */

static const char *const turn_states[] = {
    [TH_TURN_QUEUED] = "queued", [TH_TURN_RUNNING] = "running", [TH_TURN_DONE] = "done",
    [TH_TURN_CUT] = "cut",       [TH_TURN_FAILED] = "failed",
};
#define N_TURN_STATES ((int)(sizeof turn_states / sizeof turn_states[0]))

static int turn_state_from_name(const char *s)
{
	for (int i = 0; s != NULL && i < N_TURN_STATES; i++)
		if (strcmp(turn_states[i], s) == 0)
			return i;
	return TH_TURN_FAILED;
}

void th_turn_row_free(struct th_turn_row *t)
{
	if (t == NULL)
		return;
	free(t->task_id);
	free(t->message_id);
	free(t->error);
	memset(t, 0, sizeof *t);
}

/* After a conditional UPDATE changed nothing: TH_ENOTFOUND for an unknown turn, else
 * TH_EINVAL naming its state and why (what). */
static th_err turn_refused(struct th_store *st, int64_t turn_id, const char *what,
                           struct th_error *e)
{
	sqlite3_stmt *s;
	th_err err =
	    th_store_stmt(st, TH_STMT_TURN_STATE,
	                  "SELECT state, coalesce(worker_pid, 0) FROM turns WHERE id = ?1", &s, e);
	if (err != TH_OK)
		return err;
	int rc = th_bind_i64(s, 1, turn_id, SQLITE_OK);
	if (rc == SQLITE_OK)
		rc = sqlite3_step(s);
	if (rc == SQLITE_ROW) {
		const char *state = (const char *)sqlite3_column_text(s, 0);
		err =
		    th_error_set(e, TH_EINVAL, "turn %lld (%s, worker %d): %s", (long long)turn_id,
		                 state != NULL ? state : "?", sqlite3_column_int(s, 1), what);
	} else if (rc == SQLITE_DONE) {
		err = th_error_set(e, TH_ENOTFOUND, "turn %lld not found", (long long)turn_id);
	} else {
		err = th_store_fail(st, rc, "turn state", e);
	}
	th_store_stmt_done(s);
	return err;
}

/* Steps a conditional UPDATE on one turn; nothing changed -> turn_refused(what). */
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
	int64_t id = 0;
	th_err err = th_store_exec(st, TH_STMT_TURN_CREATE,
	                           "INSERT INTO turns (task_id, message_id, state, created_ms, "
	                           "updated_ms) VALUES (?1, ?2, 'queued', ?3, ?3) RETURNING id",
	                           TH_ARGS(TH_T(task_id), TH_T(message_id), TH_I(th_now_ms())), &id,
	                           NULL, "turn create", e);
	if (err == TH_ENOTFOUND)
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
	int64_t now = th_now_ms(), id = 0;
	th_err err =
	    th_store_exec(st, TH_STMT_TURN_START,
	                  "INSERT INTO turns (task_id, message_id, state, attempts, "
	                  "worker_pid, lease_until_ms, created_ms, updated_ms) "
	                  "VALUES (?1, ?2, 'running', ?3, ?4, ?5, ?6, ?6) RETURNING id",
	                  TH_ARGS(TH_T(task_id), TH_T(message_id), TH_I(TH_LEASE_FIRST), TH_I(pid),
	                          TH_I(now + (lease_ms > 0 ? lease_ms : 0)), TH_I(now)),
	                  &id, NULL, "turn start", e);
	if (err == TH_ENOTFOUND)
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
	th_err err =
	    th_store_exec(st, TH_STMT_TURN_RECORD,
	                  "INSERT INTO turns (task_id, message_id, state, attempts, error, "
	                  "worker_pid, created_ms, updated_ms) "
	                  "VALUES (?1, ?2, ?3, 1, ?4, ?5, ?6, ?6)",
	                  TH_ARGS(TH_T(task_id), TH_T(message_id), TH_T(turn_states[state]),
	                          TH_T(error), TH_I(pid), TH_I(th_now_ms())),
	                  NULL, NULL, "turn record", e);
	if (err == TH_ENOTFOUND)
		return th_error_set(e, TH_ENOTFOUND, "task %s not found", task_id);
	return err;
}

th_err th_store_turn_get(struct th_store *st, int64_t turn_id, struct th_turn_row *out,
                         struct th_error *e)
{
	memset(out, 0, sizeof *out);
	sqlite3_stmt *s;
	th_err err =
	    th_store_stmt(st, TH_STMT_TURN_GET,
	                  "SELECT id, task_id, message_id, state, attempts, "
	                  "coalesce(lease_until_ms, 0), coalesce(worker_pid, 0), cut, error "
	                  "FROM turns WHERE id = ?1",
	                  &s, e);
	if (err != TH_OK)
		return err;
	int rc = th_bind_i64(s, 1, turn_id, SQLITE_OK);
	if (rc == SQLITE_OK)
		rc = sqlite3_step(s);
	if (rc == SQLITE_ROW) {
		out->id = sqlite3_column_int64(s, 0);
		out->state = turn_state_from_name((const char *)sqlite3_column_text(s, 3));
		out->attempts = sqlite3_column_int(s, 4);
		out->lease_until_ms = sqlite3_column_int64(s, 5);
		out->worker_pid = sqlite3_column_int(s, 6);
		out->cut = sqlite3_column_int(s, 7);
		if ((th_col_dup(s, 1, &out->task_id) | th_col_dup(s, 2, &out->message_id) |
		     th_col_dup(s, 8, &out->error)) != 0) {
			th_turn_row_free(out);
			err = th_error_set(e, TH_ENOMEM, "out of memory reading turn");
		}
	} else if (rc == SQLITE_DONE) {
		err = th_error_set(e, TH_ENOTFOUND, "turn %lld not found", (long long)turn_id);
	} else {
		err = th_store_fail(st, rc, "turn get", e);
	}
	th_store_stmt_done(s);
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
	                  "UPDATE turns SET state = ?3, error = ?4, updated_ms = ?5 "
	                  "WHERE id = ?1 AND attempts = ?2 AND state = 'running'",
	                  TH_ARGS(TH_I(l->turn_id), TH_I(l->epoch), TH_T(turn_states[state]),
	                          TH_T(error), TH_I(th_now_ms())),
	                  NULL, &n, "turn finish", e);
	return turn_cond(st, err, n, l->turn_id, "lease no longer held; nothing written", e);
}

th_err th_store_turns_cut(struct th_store *st, const char *task_id, int *n, struct th_error *e)
{
	int64_t cut = 0;
	th_err err =
	    th_store_exec(st, TH_STMT_TURNS_CUT,
	                  "UPDATE turns SET cut = 1, state = 'cut', updated_ms = ?2 "
	                  "WHERE task_id = ?1 AND state IN ('queued', 'running')",
	                  TH_ARGS(TH_T(task_id), TH_I(th_now_ms())), NULL, &cut, "turns cut", e);
	if (n != NULL)
		*n = err == TH_OK ? (int)cut : 0;
	return err;
}

int th_store_turn_is_cut(struct th_store *st, int64_t turn_id)
{
	sqlite3_stmt *s;
	if (th_store_stmt(st, TH_STMT_TURN_IS_CUT, "SELECT cut FROM turns WHERE id = ?1", &s,
	                  NULL) != TH_OK)
		return 0;
	int cut = 0;
	if (th_bind_i64(s, 1, turn_id, SQLITE_OK) == SQLITE_OK && sqlite3_step(s) == SQLITE_ROW)
		cut = sqlite3_column_int(s, 0) != 0;
	th_store_stmt_done(s);
	return cut;
}

/* ---- turn recovery (TURN-4) ------------------------------------------------------------ */

void th_turn_rows_free(struct th_turn_row *t, size_t n)
{
	if (t == NULL)
		return;
	for (size_t i = 0; i < n; i++)
		th_turn_row_free(&t[i]);
	free(t);
}

th_err th_store_turns_expired(struct th_store *st, const char *task_id, int64_t now_ms,
                              int64_t queued_before_ms, int limit, struct th_turn_row **out,
                              size_t *n, struct th_error *e)
{
	*out = NULL;
	*n = 0;
	sqlite3_stmt *s;
	/* Across tasks each half is a range on its own index: (state, lease_until_ms) for
	 * running turns, (state, updated_ms) for queued ones; for one task, its live turns
	 * on (task_id, state). */
	th_err err =
	    task_id == NULL
	        ? th_store_stmt(st, TH_STMT_TURNS_EXPIRED,
	                        "SELECT id, task_id, message_id, state, attempts, "
	                        "coalesce(lease_until_ms, 0), coalesce(worker_pid, 0), cut, error "
	                        "FROM (SELECT * FROM turns WHERE state = 'running' AND "
	                        "lease_until_ms < ?1 UNION ALL SELECT * FROM turns WHERE "
	                        "state = 'queued' AND updated_ms < ?2) ORDER BY id LIMIT ?3",
	                        &s, e)
	        : th_store_stmt(st, TH_STMT_TURNS_EXPIRED_TASK,
	                        "SELECT id, task_id, message_id, state, attempts, "
	                        "coalesce(lease_until_ms, 0), coalesce(worker_pid, 0), cut, error "
	                        "FROM turns WHERE task_id = ?4 AND state IN ('queued', 'running') "
	                        "AND ((state = 'running' AND lease_until_ms < ?1) OR "
	                        "(state = 'queued' AND updated_ms < ?2)) ORDER BY id LIMIT ?3",
	                        &s, e);
	if (err != TH_OK)
		return err;
	int rc = th_bind_i64(s, 1, now_ms, SQLITE_OK);
	rc = th_bind_i64(s, 2, queued_before_ms, rc);
	rc = th_bind_i64(s, 3, limit > 0 ? limit : -1, rc);
	if (task_id != NULL)
		rc = th_bind_text(s, 4, task_id, rc);
	struct th_turn_row *v = NULL;
	size_t cnt = 0, cap = 0;
	while (rc == SQLITE_OK && (rc = sqlite3_step(s)) == SQLITE_ROW) {
		if (th_grow((void **)&v, &cap, cnt, sizeof *v) != 0) {
			rc = SQLITE_NOMEM;
			break;
		}
		struct th_turn_row *t = &v[cnt++];
		memset(t, 0, sizeof *t);
		t->id = sqlite3_column_int64(s, 0);
		t->state = turn_state_from_name((const char *)sqlite3_column_text(s, 3));
		t->attempts = sqlite3_column_int(s, 4);
		t->lease_until_ms = sqlite3_column_int64(s, 5);
		t->worker_pid = sqlite3_column_int(s, 6);
		t->cut = sqlite3_column_int(s, 7);
		if ((th_col_dup(s, 1, &t->task_id) | th_col_dup(s, 2, &t->message_id) |
		     th_col_dup(s, 8, &t->error)) != 0) {
			rc = SQLITE_NOMEM;
			break;
		}
		rc = SQLITE_OK;
	}
	if (rc != SQLITE_DONE)
		err = rc == SQLITE_NOMEM
		          ? th_error_set(e, TH_ENOMEM, "out of memory listing expired turns")
		          : th_store_fail(st, rc, "expired turns", e);
	th_store_stmt_done(s);
	if (err != TH_OK) {
		th_turn_rows_free(v, cnt);
		return err;
	}
	*out = v;
	*n = cnt;
	return TH_OK;
}

th_err th_store_turn_release(struct th_store *st, int64_t turn_id, int64_t now_ms,
                             struct th_error *e)
{
	int64_t n = 0;
	th_err err = th_store_exec(st, TH_STMT_TURN_RELEASE,
	                           "UPDATE turns SET state = 'queued', worker_pid = NULL, "
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
	                           "UPDATE turns SET state = 'running', worker_pid = ?2, "
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
	                           "UPDATE turns SET lease_until_ms = ?3, updated_ms = ?4 "
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
	                  "UPDATE turns SET state = 'failed', error = ?3, updated_ms = ?4 "
	                  "WHERE id = ?1 AND attempts = ?2 AND cut = 0 AND "
	                  "(state = 'queued' OR (state = 'running' AND "
	                  "coalesce(lease_until_ms, 0) < ?4))",
	                  TH_ARGS(TH_I(seen->id), TH_I(seen->attempts), TH_T(why), TH_I(now_ms)),
	                  NULL, &n, "turn give up", e);
	*done = err == TH_OK && n == 1;
	return err;
}
