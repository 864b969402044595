/* SPDX-License-Identifier: Apache-2.0 */
/* tasks.c — task rows, listing and participants (STATUS-4, STREAM-5). */
#include <stdlib.h>
#include <string.h>

#include "store/store.h"
#include "store/store_int.h"
#include "util/ids.h"

/* Column list shared by every query that fills a struct th_task_row (see read_task). */
#define TASK_COLS                                                                                  \
	"t.id, t.context_id, t.state, t.sub_state, t.status_meta_json, t.status_message_json, "    \
	"t.status_ms, t.name, t.goal, t.ext_json, t.created_by, t.parent_id, t.created_ms, "       \
	"t.updated_ms, (SELECT coalesce(max(e.seq), 0) FROM events e WHERE e.task_id = t.id)"

void th_task_row_free(struct th_task_row *r)
{
	if (r == NULL)
		return;
	free(r->id);
	free(r->context_id);
	free(r->sub_state);
	free(r->status_meta_json);
	free(r->status_message_json);
	free(r->name);
	free(r->goal);
	free(r->ext_json);
	free(r->created_by);
	free(r->parent_id);
	memset(r, 0, sizeof *r);
}

void th_task_rows_free(struct th_task_row *rows, size_t n)
{
	if (rows == NULL)
		return;
	for (size_t i = 0; i < n; i++)
		th_task_row_free(&rows[i]);
	free(rows);
}

/* Fills r from a row of TASK_COLS; on allocation failure r is freed and -1 returned. */
static int read_task(sqlite3_stmt *s, struct th_task_row *r)
{
	memset(r, 0, sizeof *r);
	int bad = 0;
	bad |= th_col_dup(s, 0, &r->id);
	bad |= th_col_dup(s, 1, &r->context_id);
	r->state = th_store_state_from_name((const char *)sqlite3_column_text(s, 2));
	bad |= th_col_dup(s, 3, &r->sub_state);
	bad |= th_col_dup(s, 4, &r->status_meta_json);
	bad |= th_col_dup(s, 5, &r->status_message_json);
	r->status_ms = sqlite3_column_int64(s, 6);
	bad |= th_col_dup(s, 7, &r->name);
	bad |= th_col_dup(s, 8, &r->goal);
	bad |= th_col_dup(s, 9, &r->ext_json);
	bad |= th_col_dup(s, 10, &r->created_by);
	bad |= th_col_dup(s, 11, &r->parent_id);
	r->created_ms = sqlite3_column_int64(s, 12);
	r->updated_ms = sqlite3_column_int64(s, 13);
	r->last_seq = sqlite3_column_int64(s, 14);
	if (bad) {
		th_task_row_free(r);
		return -1;
	}
	return 0;
}

static const char *state_or_null(int state)
{
	const char *n = th_store_state_name(state);
	return n[0] != '\0' ? n : NULL;
}

th_err th_store_task_insert(struct th_store *st, const struct th_task_row *r, struct th_error *e)
{
	if (r == NULL || r->id == NULL || r->context_id == NULL || r->created_by == NULL)
		return th_error_set(e, TH_EINVAL,
		                    "task insert needs id, context_id and created_by");
	const char *state = state_or_null(r->state);
	if (state == NULL)
		return th_error_set(e, TH_EINVAL, "task %s: unknown state %d", r->id, r->state);
	sqlite3_stmt *s;
	th_err err =
	    th_store_stmt(st, TH_STMT_TASK_INSERT,
	                  "INSERT INTO tasks (id, context_id, state, sub_state, "
	                  "status_meta_json, status_message_json, status_ms, name, goal, "
	                  "ext_json, created_by, parent_id, created_ms, updated_ms) "
	                  "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)",
	                  &s, e);
	if (err != TH_OK)
		return err;
	int64_t now = th_now_ms();
	int64_t created = r->created_ms > 0 ? r->created_ms : now;
	int rc = th_bind_text(s, 1, r->id, SQLITE_OK);
	rc = th_bind_text(s, 2, r->context_id, rc);
	rc = th_bind_text(s, 3, state, rc);
	rc = th_bind_text(s, 4, r->sub_state, rc);
	rc = th_bind_text(s, 5, r->status_meta_json, rc);
	rc = th_bind_text(s, 6, r->status_message_json, rc);
	rc = th_bind_i64(s, 7, r->status_ms > 0 ? r->status_ms : created, rc);
	rc = th_bind_text(s, 8, r->name != NULL ? r->name : "", rc);
	rc = th_bind_text(s, 9, r->goal != NULL ? r->goal : "", rc);
	rc = th_bind_text(s, 10, r->ext_json != NULL ? r->ext_json : "{}", rc);
	rc = th_bind_text(s, 11, r->created_by, rc);
	rc = th_bind_text(s, 12, r->parent_id, rc);
	rc = th_bind_i64(s, 13, created, rc);
	rc = th_bind_i64(s, 14, r->updated_ms > 0 ? r->updated_ms : created, rc);
	rc = th_step_done(s, rc);
	if (rc == SQLITE_DONE)
		return TH_OK;
	if (rc == SQLITE_CONSTRAINT_PRIMARYKEY || rc == SQLITE_CONSTRAINT_UNIQUE)
		return th_error_set(e, TH_EINVAL, "duplicate task id %s", r->id);
	if (rc == SQLITE_CONSTRAINT_FOREIGNKEY)
		return th_error_set(e, TH_ENOTFOUND, "parent task %s not found",
		                    r->parent_id != NULL ? r->parent_id : "");
	return th_store_fail(st, rc, "task insert", e);
}

th_err th_store_task_get(struct th_store *st, const char *id, struct th_task_row *out,
                         struct th_error *e)
{
	memset(out, 0, sizeof *out);
	if (id == NULL)
		return th_error_set(e, TH_ENOTFOUND, "no task id");
	sqlite3_stmt *s;
	th_err err = th_store_stmt(st, TH_STMT_TASK_GET,
	                           "SELECT " TASK_COLS " FROM tasks t WHERE t.id = ?1", &s, e);
	if (err != TH_OK)
		return err;
	int rc = th_bind_text(s, 1, id, SQLITE_OK);
	if (rc == SQLITE_OK)
		rc = sqlite3_step(s);
	if (rc == SQLITE_ROW)
		err = read_task(s, out) == 0
		          ? TH_OK
		          : th_error_set(e, TH_ENOMEM, "out of memory reading task");
	else if (rc == SQLITE_DONE)
		err = th_error_set(e, TH_ENOTFOUND, "task %s not found", id);
	else
		err = th_store_fail(st, rc, "task get", e);
	th_store_stmt_done(s);
	return err;
}

/* Runs an UPDATE and turns "no row changed" into TH_ENOTFOUND. */
static th_err step_update(struct th_store *st, sqlite3_stmt *s, int rc, const char *what,
                          const char *id, struct th_error *e)
{
	rc = th_step_done(s, rc);
	if (rc != SQLITE_DONE)
		return th_store_fail(st, rc, what, e);
	if (sqlite3_changes(st->db) == 0)
		return th_error_set(e, TH_ENOTFOUND, "task %s not found", id);
	return TH_OK;
}

th_err th_store_task_set_status(struct th_store *st, const struct th_task_row *r,
                                struct th_error *e)
{
	if (r == NULL || r->id == NULL)
		return th_error_set(e, TH_EINVAL, "task status update needs an id");
	const char *state = state_or_null(r->state);
	if (state == NULL)
		return th_error_set(e, TH_EINVAL, "task %s: unknown state %d", r->id, r->state);
	sqlite3_stmt *s;
	th_err err = th_store_stmt(st, TH_STMT_TASK_SET_STATUS,
	                           "UPDATE tasks SET state = ?2, sub_state = ?3, "
	                           "status_meta_json = ?4, status_message_json = ?5, "
	                           "status_ms = ?6, updated_ms = ?7 WHERE id = ?1",
	                           &s, e);
	if (err != TH_OK)
		return err;
	int64_t now = th_now_ms();
	int rc = th_bind_text(s, 1, r->id, SQLITE_OK);
	rc = th_bind_text(s, 2, state, rc);
	rc = th_bind_text(s, 3, r->sub_state, rc);
	rc = th_bind_text(s, 4, r->status_meta_json, rc);
	rc = th_bind_text(s, 5, r->status_message_json, rc);
	rc = th_bind_i64(s, 6, r->status_ms > 0 ? r->status_ms : now, rc);
	rc = th_bind_i64(s, 7, r->updated_ms > 0 ? r->updated_ms : now, rc);
	return step_update(st, s, rc, "task status", r->id, e);
}

th_err th_store_task_set_ext(struct th_store *st, const struct th_task_row *r, struct th_error *e)
{
	if (r == NULL || r->id == NULL)
		return th_error_set(e, TH_EINVAL, "task update needs an id");
	sqlite3_stmt *s;
	th_err err = th_store_stmt(st, TH_STMT_TASK_SET_EXT,
	                           "UPDATE tasks SET name = ?2, goal = ?3, ext_json = ?4, "
	                           "updated_ms = ?5 WHERE id = ?1",
	                           &s, e);
	if (err != TH_OK)
		return err;
	int rc = th_bind_text(s, 1, r->id, SQLITE_OK);
	rc = th_bind_text(s, 2, r->name != NULL ? r->name : "", rc);
	rc = th_bind_text(s, 3, r->goal != NULL ? r->goal : "", rc);
	rc = th_bind_text(s, 4, r->ext_json != NULL ? r->ext_json : "{}", rc);
	rc = th_bind_i64(s, 5, th_now_ms(), rc);
	return step_update(st, s, rc, "task ext", r->id, e);
}

/* Both list statements share these filters, bound at the same positions:
 * ?1 participant, ?2 context_id or NULL, ?3 state name or NULL, ?4 status_ms lower bound.
 * The participant index (participant_id, status_ms DESC, task_id DESC) holds the caller's
 * tasks in list order, so a page is one range of it; each task is then fetched by primary
 * key. The index leaves the harness's own participant out (migration 004), and so must
 * the query for SQLite to use it. */
#define LIST_FROM                                                                                  \
	" FROM participants p JOIN tasks t ON t.id = p.task_id"                                    \
	" WHERE p.participant_id = ?1 AND p.participant_id <> 'tiny-harness'"                      \
	" AND (?2 IS NULL OR t.context_id = ?2)"                                                   \
	" AND (?3 IS NULL OR t.state = ?3) AND p.status_ms >= ?4"

static int bind_list_filters(sqlite3_stmt *s, const struct th_list_query *q, const char *state)
{
	int rc = th_bind_text(s, 1, q->participant, SQLITE_OK);
	rc = th_bind_text(s, 2, q->context_id, rc);
	rc = th_bind_text(s, 3, state, rc);
	return th_bind_i64(s, 4, q->status_after_ms >= 0 ? q->status_after_ms : INT64_MIN, rc);
}

th_err th_store_task_list(struct th_store *st, const struct th_list_query *q,
                          struct th_task_row **rows, size_t *n, int64_t *total, struct th_error *e)
{
	*rows = NULL;
	*n = 0;
	*total = 0;
	if (q == NULL || q->participant == NULL)
		return th_error_set(e, TH_EINVAL, "listing tasks needs a participant");
	const char *state = NULL;
	if (q->state != 0) {
		state = state_or_null(q->state);
		if (state == NULL)
			return th_error_set(e, TH_EINVAL, "unknown task state %d", q->state);
	}

	/* totalSize: without a filter it is the participant's kept count; a filter counts
	 * the matching rows of the same index range. */
	int filtered = q->context_id != NULL || state != NULL || q->status_after_ms >= 0;
	sqlite3_stmt *c;
	th_err err = filtered
	                 ? th_store_stmt(st, TH_STMT_TASK_COUNT, "SELECT count(*)" LIST_FROM, &c, e)
	                 : th_store_stmt(st, TH_STMT_TASK_TOTAL,
	                                 "SELECT coalesce((SELECT tasks FROM "
	                                 "participant_task_counts WHERE participant_id = ?1 "
	                                 "AND participant_id <> 'tiny-harness'), 0)",
	                                 &c, e);
	if (err != TH_OK)
		return err;
	int rc = filtered ? bind_list_filters(c, q, state)
	                  : th_bind_text(c, 1, q->participant, SQLITE_OK);
	if (rc == SQLITE_OK)
		rc = sqlite3_step(c);
	if (rc == SQLITE_ROW)
		*total = sqlite3_column_int64(c, 0);
	th_store_stmt_done(c);
	if (rc != SQLITE_ROW)
		return th_store_fail(st, rc, "task count", e);

	/* A later page starts right after the cursor: the row value is a range bound on the
	 * index, so a page deep in the list costs what the first one does (an OR of the two
	 * conditions would make SQLite walk every row before the cursor). */
	sqlite3_stmt *s;
	err = q->cursor_id == NULL
	          ? th_store_stmt(st, TH_STMT_TASK_LIST,
	                          "SELECT " TASK_COLS LIST_FROM
	                          " ORDER BY p.status_ms DESC, p.task_id DESC LIMIT ?7",
	                          &s, e)
	          : th_store_stmt(st, TH_STMT_TASK_LIST_AFTER,
	                          "SELECT " TASK_COLS LIST_FROM
	                          " AND (p.status_ms, p.task_id) < (?6, ?5)"
	                          " ORDER BY p.status_ms DESC, p.task_id DESC LIMIT ?7",
	                          &s, e);
	if (err != TH_OK)
		return err;
	rc = bind_list_filters(s, q, state);
	if (q->cursor_id != NULL) {
		rc = th_bind_text(s, 5, q->cursor_id, rc);
		rc = th_bind_i64(s, 6, q->cursor_ms, rc);
	}
	rc = th_bind_i64(s, 7, q->limit > 0 ? q->limit : -1, rc);
	struct th_task_row *out = NULL;
	size_t cnt = 0, cap = 0;
	while (rc == SQLITE_OK && (rc = sqlite3_step(s)) == SQLITE_ROW) {
		if (cnt == cap) {
			size_t ncap = cap == 0 ? 16 : cap * 2;
			struct th_task_row *grown = realloc(out, ncap * sizeof *out);
			if (grown == NULL) {
				rc = SQLITE_NOMEM;
				break;
			}
			out = grown;
			cap = ncap;
		}
		if (read_task(s, &out[cnt]) != 0) {
			rc = SQLITE_NOMEM;
			break;
		}
		cnt++;
		rc = SQLITE_OK;
	}
	if (rc != SQLITE_DONE)
		err = rc == SQLITE_NOMEM ? th_error_set(e, TH_ENOMEM, "out of memory listing tasks")
		                         : th_store_fail(st, rc, "task list", e);
	th_store_stmt_done(s);
	if (err != TH_OK) {
		th_task_rows_free(out, cnt);
		return err;
	}
	*rows = out;
	*n = cnt;
	return TH_OK;
}

/* ---- participants ------------------------------------------------------------------ */

void th_participant_free(struct th_participant *p)
{
	if (p == NULL)
		return;
	free(p->id);
	free(p->kind);
	free(p->role);
	free(p->display_name);
	memset(p, 0, sizeof *p);
}

void th_participants_free(struct th_participant *ps, size_t n)
{
	if (ps == NULL)
		return;
	for (size_t i = 0; i < n; i++)
		th_participant_free(&ps[i]);
	free(ps);
}

th_err th_store_participant_put(struct th_store *st, const char *task_id,
                                const struct th_participant *p, struct th_error *e)
{
	if (task_id == NULL || p == NULL || p->id == NULL || p->kind == NULL || p->role == NULL)
		return th_error_set(e, TH_EINVAL, "participant needs a task, id, kind and role");
	sqlite3_stmt *s;
	/* Upsert keeps added_ms (and so the listing order) of a participant already on it. */
	th_err err = th_store_stmt(st, TH_STMT_PART_PUT,
	                           "INSERT INTO participants (task_id, participant_id, kind, role, "
	                           "display_name, added_ms, status_ms) VALUES (?1, ?2, ?3, ?4, ?5, "
	                           "?6, coalesce((SELECT status_ms FROM tasks WHERE id = ?1), 0)) "
	                           "ON CONFLICT (task_id, participant_id) DO UPDATE SET "
	                           "kind = excluded.kind, role = excluded.role, "
	                           "display_name = excluded.display_name",
	                           &s, e);
	if (err != TH_OK)
		return err;
	int rc = th_bind_text(s, 1, task_id, SQLITE_OK);
	rc = th_bind_text(s, 2, p->id, rc);
	rc = th_bind_text(s, 3, p->kind, rc);
	rc = th_bind_text(s, 4, p->role, rc);
	rc = th_bind_text(s, 5, p->display_name != NULL ? p->display_name : "", rc);
	rc = th_bind_i64(s, 6, th_now_ms(), rc);
	rc = th_step_done(s, rc);
	if (rc == SQLITE_DONE)
		return TH_OK;
	if (rc == SQLITE_CONSTRAINT_CHECK)
		return th_error_set(e, TH_EINVAL,
		                    "participant %s: kind must be human|agent and role "
		                    "assignee|reporter|watcher|admin (got %s, %s)",
		                    p->id, p->kind, p->role);
	if (rc == SQLITE_CONSTRAINT_FOREIGNKEY)
		return th_error_set(e, TH_ENOTFOUND, "task %s not found", task_id);
	return th_store_fail(st, rc, "participant put", e);
}

th_err th_store_participant_role(struct th_store *st, const char *task_id,
                                 const char *participant_id, char **role, struct th_error *e)
{
	*role = NULL;
	if (task_id == NULL || participant_id == NULL)
		return th_error_set(e, TH_ENOTFOUND, "no participant");
	sqlite3_stmt *s;
	th_err err = th_store_stmt(st, TH_STMT_PART_ROLE,
	                           "SELECT role FROM participants "
	                           "WHERE task_id = ?1 AND participant_id = ?2",
	                           &s, e);
	if (err != TH_OK)
		return err;
	int rc = th_bind_text(s, 1, task_id, SQLITE_OK);
	rc = th_bind_text(s, 2, participant_id, rc);
	if (rc == SQLITE_OK)
		rc = sqlite3_step(s);
	if (rc == SQLITE_ROW)
		err = th_col_dup(s, 0, role) == 0 ? TH_OK
		                                  : th_error_set(e, TH_ENOMEM, "out of memory");
	else if (rc == SQLITE_DONE)
		err = th_error_set(e, TH_ENOTFOUND, "%s is not a participant of task %s",
		                   participant_id, task_id);
	else
		err = th_store_fail(st, rc, "participant role", e);
	th_store_stmt_done(s);
	return err;
}

th_err th_store_participants(struct th_store *st, const char *task_id, struct th_participant **out,
                             size_t *n, struct th_error *e)
{
	*out = NULL;
	*n = 0;
	sqlite3_stmt *s;
	th_err err = th_store_stmt(st, TH_STMT_PART_LIST,
	                           "SELECT participant_id, kind, role, display_name "
	                           "FROM participants WHERE task_id = ?1 ORDER BY added_ms, rowid",
	                           &s, e);
	if (err != TH_OK)
		return err;
	int rc = th_bind_text(s, 1, task_id, SQLITE_OK);
	struct th_participant *ps = NULL;
	size_t cnt = 0, cap = 0;
	while (rc == SQLITE_OK && (rc = sqlite3_step(s)) == SQLITE_ROW) {
		if (cnt == cap) {
			size_t ncap = cap == 0 ? 8 : cap * 2;
			struct th_participant *grown = realloc(ps, ncap * sizeof *ps);
			if (grown == NULL) {
				rc = SQLITE_NOMEM;
				break;
			}
			ps = grown;
			cap = ncap;
		}
		struct th_participant *p = &ps[cnt];
		memset(p, 0, sizeof *p);
		int bad = th_col_dup(s, 0, &p->id) | th_col_dup(s, 1, &p->kind) |
		          th_col_dup(s, 2, &p->role) | th_col_dup(s, 3, &p->display_name);
		if (bad) {
			th_participant_free(p);
			rc = SQLITE_NOMEM;
			break;
		}
		cnt++;
		rc = SQLITE_OK;
	}
	if (rc != SQLITE_DONE)
		err = rc == SQLITE_NOMEM
		          ? th_error_set(e, TH_ENOMEM, "out of memory listing participants")
		          : th_store_fail(st, rc, "participants", e);
	th_store_stmt_done(s);
	if (err != TH_OK) {
		th_participants_free(ps, cnt);
		return err;
	}
	*out = ps;
	*n = cnt;
	return TH_OK;
}
