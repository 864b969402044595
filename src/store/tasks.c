/* SPDX-License-Identifier: Apache-2.0 */
/* tasks.c — task rows, listing and participants (STATUS-4, STREAM-5). */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/store.h"
#include "store/store_int.h"
#include "util/ids.h"

/* Column list shared by every query that fills a struct th_task_row (task_cols). */
#define TASK_COLS                                                                                  \
	"t.id, t.context_id, t.state, t.sub_state, coalesce(t.status_meta_json, CASE WHEN "        \
	"t.sub_state IS NOT NULL THEN '{\"sub_state\":\"' || t.sub_state || '\"}' END), "          \
	"coalesce(t.status_message_json, m.json), coalesce(t.status_pos, 0), m.message_id, "       \
	"m.role, t.status_ms, t.name, t.goal, "                                                    \
	"t.ext_json, t.created_by, t.parent_id, t.created_ms, t.updated_ms, "                      \
	"(SELECT coalesce(max(e.seq), 0) FROM event_rows e WHERE e.task_num = t.num)"
/* The status message's history row, when it is one (STORE-10): its json, and the
 * message_id and role a lean one is unpacked with (decision-061). */
#define STATUS_JOIN " LEFT JOIN message_rows m ON m.task_num = t.num AND m.pos = t.status_pos"

/* TASK_GET's end: on PostgreSQL the row comes with the task's last history position,
 * which a write transaction keeps for the messages it appends (pg_memo.c, decision-060);
 * the column table reads only TASK_COLS. */
#define TASK_GET_FROM " FROM tasks t" STATUS_JOIN " WHERE t.id = ?1"
#define TASK_GET_PG_FROM ", " TH_SQL_LAST_POS " FROM tasks t" STATUS_JOIN " WHERE t.id = ?1"
/* TEN-2: ?3 is the tenant the asking request addresses (NULL: any, for the harness's own
 * look-ups inside a task already found); a participation carries its task's tenant. */
#define PART_ROLE_SQL                                                                              \
	"SELECT role FROM participants WHERE task_id = ?1 AND participant_id = ?2 "                \
	"AND (?3 IS NULL OR tenant = ?3)"
#define PART_LIST_SQL                                                                              \
	"SELECT participant_id, kind, role, display_name "                                         \
	"FROM participants WHERE task_id = ?1 ORDER BY added_ms, rowid"
#define TASK_CONTEXT_SQL "SELECT context_id FROM tasks WHERE id = ?1"

static const struct th_col task_cols[] = {
    TH_COL_TEXT(struct th_task_row, id),
    TH_COL_TEXT(struct th_task_row, context_id),
    TH_COL_ENUM(struct th_task_row, state, th_store_state_from_name),
    TH_COL_TEXT(struct th_task_row, sub_state),
    TH_COL_TEXT(struct th_task_row, status_meta_json),
    TH_COL_TEXT(struct th_task_row, status_message_json),
    TH_COL_I64(struct th_task_row, status_pos),
    TH_COL_TEXT(struct th_task_row, status_message_id),
    TH_COL_TEXT(struct th_task_row, status_role),
    TH_COL_I64(struct th_task_row, status_ms),
    TH_COL_TEXT(struct th_task_row, name),
    TH_COL_TEXT(struct th_task_row, goal),
    TH_COL_TEXT(struct th_task_row, ext_json),
    TH_COL_TEXT(struct th_task_row, created_by),
    TH_COL_TEXT(struct th_task_row, parent_id),
    TH_COL_I64(struct th_task_row, created_ms),
    TH_COL_I64(struct th_task_row, updated_ms),
    TH_COL_I64(struct th_task_row, last_seq),
};
static const struct th_row_def task_row = TH_ROW_DEF(struct th_task_row, task_cols);

void th_task_row_free(struct th_task_row *r)
{
	if (r == NULL)
		return;
	th_row_free(&task_row, r);
}

void th_task_rows_free(struct th_task_row *rows, size_t n)
{
	if (rows == NULL)
		return;
	th_rows_free(&task_row, rows, n);
}

static const char *state_or_null(int state)
{
	const char *n = th_store_state_name(state);
	return n[0] != '\0' ? n : NULL;
}

th_err th_store_task_context(struct th_store *st, const char *task_id, char **out,
                             struct th_error *e)
{
	*out = NULL;
	th_err err = th_store_text(st, TH_STMT_TASK_CONTEXT, TASK_CONTEXT_SQL,
	                           TH_ARGS(TH_T(task_id)), out, "task context", e);
	if (err == TH_ENOTFOUND)
		return th_error_set(e, TH_ENOTFOUND, "task %s not found", task_id);
	return err;
}

/* STORE-10: the status extension {"sub_state": …} that says no more than sub_state is
 * not stored (TASK_COLS derives it); any other is. */
static const char *meta_to_store(const char *meta, const char *sub_state)
{
	static const char head[] = "{\"sub_state\":\"";
	size_t hl = sizeof head - 1;
	if (meta == NULL || sub_state == NULL || strncmp(meta, head, hl) != 0)
		return meta;
	size_t sl = strlen(sub_state);
	if (strncmp(meta + hl, sub_state, sl) == 0 && strcmp(meta + hl + sl, "\"}") == 0)
		return NULL;
	return meta;
}

/* STORE-10: a status message read from the history (status_pos) gets the task's ids
 * back; rows are changed in place. */
static th_err status_messages(struct th_task_row *rows, size_t n, struct th_error *e)
{
	for (size_t i = 0; i < n; i++) {
		struct th_task_row *r = &rows[i];
		if (r->status_pos <= 0 || r->status_message_json == NULL)
			continue;
		char *full = th_ref_msg_unpack(r->status_message_json, r->status_message_id,
		                               r->status_role, r->id, r->context_id);
		if (full == NULL)
			return th_error_set(e, TH_ENOMEM, "out of memory (task %s)", r->id);
		free(r->status_message_json);
		r->status_message_json = full;
	}
	return TH_OK;
}

th_err th_store_task_insert(struct th_store *st, const struct th_task_in *r, struct th_error *e)
{
	if (r == NULL || r->id == NULL || r->context_id == NULL || r->created_by == NULL)
		return th_error_set(e, TH_EINVAL,
		                    "task insert needs id, context_id and created_by");
	const char *state = state_or_null(r->state);
	if (state == NULL)
		return th_error_set(e, TH_EINVAL, "task %s: unknown state %d", r->id, r->state);
	int64_t created = r->created_ms > 0 ? r->created_ms : th_now_ms();
	/* A new task has no history yet: its status message is kept inline. */
	/* decision-054: queued on PostgreSQL. Its refusals (a duplicate id: ids are new
	 * UUIDs; a missing parent: the caller checked and locked it) are not outcomes a
	 * request expects, and fail the whole transaction there. */
	th_err err = th_store_exec_later(
	    st, TH_STMT_TASK_INSERT,
	    "INSERT INTO tasks (id, context_id, state, sub_state, "
	    "status_meta_json, status_message_json, status_ms, name, goal, "
	    "ext_json, created_by, parent_id, created_ms, updated_ms, tenant) "
	    "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, "
	    "coalesce((SELECT p.tenant FROM tasks p WHERE p.id = ?12), ?15))",
	    TH_ARGS(TH_T(r->id), TH_T(r->context_id), TH_T(state), TH_T(r->sub_state),
	            TH_T(meta_to_store(r->status_meta_json, r->sub_state)),
	            TH_T(r->status_message_json), TH_I(r->status_ms > 0 ? r->status_ms : created),
	            TH_T(r->name != NULL ? r->name : ""), TH_T(r->goal != NULL ? r->goal : ""),
	            TH_T(r->ext_json != NULL ? r->ext_json : "{}"), TH_T(r->created_by),
	            TH_T(r->parent_id), TH_I(created),
	            TH_I(r->updated_ms > 0 ? r->updated_ms : created),
	            TH_T(r->tenant != NULL ? r->tenant : "")),
	    NULL, NULL, "task insert", e);
	if (err == TH_OK) {
		/* Inside a write, the task is this write's own: no push config can name it until
		 * this write puts one (th_store_push_config_put), so its events skip the outbox
		 * (th_store_push_enqueue). A longer id than a UUID is looked up as before. */
		if (st->write_ms > 0 && strlen(r->id) < sizeof st->fresh_task)
			memcpy(st->fresh_task, r->id, strlen(r->id) + 1);
		return TH_OK;
	}
	enum th_sql_fail rc = th_store_failed_with(st);
	if (rc == TH_SQL_FAIL_UNIQUE)
		return th_error_set(e, TH_EINVAL, "duplicate task id %s", r->id);
	if (rc == TH_SQL_FAIL_FOREIGNKEY)
		return th_error_set(e, TH_ENOTFOUND, "parent task %s not found",
		                    r->parent_id != NULL ? r->parent_id : "");
	return err;
}

th_err th_store_task_get(struct th_store *st, const char *id, struct th_task_row *out,
                         struct th_error *e)
{
	memset(out, 0, sizeof *out);
	if (id == NULL)
		return th_error_set(e, TH_ENOTFOUND, "no task id");
	th_err err = th_store_one(
	    st, TH_STMT_TASK_GET,
	    th_sql_for(st, "SELECT " TASK_COLS TASK_GET_FROM, "SELECT " TASK_COLS TASK_GET_PG_FROM),
	    TH_ARGS(TH_T(id)), &task_row, out, "task get", e);
	if (err == TH_ENOTFOUND)
		return th_error_set(e, TH_ENOTFOUND, "task %s not found", id);
	if (err == TH_OK && (err = status_messages(out, 1, e)) != TH_OK)
		th_task_row_free(out);
	return err;
}

/* The result of an UPDATE of task id: "no row changed" is TH_ENOTFOUND. */
static th_err updated(th_err err, int64_t changed, const char *id, struct th_error *e)
{
	if (err == TH_OK && changed == 0)
		return th_error_set(e, TH_ENOTFOUND, "task %s not found", id);
	return err;
}

th_err th_store_task_set_status(struct th_store *st, const struct th_task_row *r,
                                struct th_error *e)
{
	if (r == NULL || r->id == NULL)
		return th_error_set(e, TH_EINVAL, "task status update needs an id");
	const char *state = state_or_null(r->state);
	if (state == NULL)
		return th_error_set(e, TH_EINVAL, "task %s: unknown state %d", r->id, r->state);
	int64_t now = th_now_ms();
	/* STORE-10: a status message already in the history is kept as its position. */
	int64_t pos = 0;
	th_err err = th_ref_status_pos(st, r->id, r->context_id, r->status_message_json, &pos, e);
	if (err != TH_OK)
		return err;
	/* decision-054: queued on PostgreSQL; no task changed fails the transaction. */
	char missing[TH_ID_BUF + 32];
	snprintf(missing, sizeof missing, "task %s not found", r->id);
	return th_store_exec_later(
	    st, TH_STMT_TASK_SET_STATUS,
	    "UPDATE tasks SET state = ?2, sub_state = ?3, "
	    "status_meta_json = ?4, status_message_json = ?5, status_pos = NULLIF(?8, 0), "
	    "status_ms = ?6, updated_ms = ?7 WHERE id = ?1",
	    TH_ARGS(TH_T(r->id), TH_T(state), TH_T(r->sub_state),
	            TH_T(meta_to_store(r->status_meta_json, r->sub_state)),
	            TH_T(pos > 0 ? NULL : r->status_message_json),
	            TH_I(r->status_ms > 0 ? r->status_ms : now),
	            TH_I(r->updated_ms > 0 ? r->updated_ms : now), TH_I(pos)),
	    NULL, missing, "task status", e);
}

th_err th_store_task_set_ext(struct th_store *st, const struct th_task_row *r, struct th_error *e)
{
	if (r == NULL || r->id == NULL)
		return th_error_set(e, TH_EINVAL, "task update needs an id");
	int64_t changed = 0;
	th_err err = th_store_exec(st, TH_STMT_TASK_SET_EXT,
	                           "UPDATE tasks SET name = ?2, goal = ?3, ext_json = ?4, "
	                           "updated_ms = ?5 WHERE id = ?1",
	                           TH_ARGS(TH_T(r->id), TH_T(r->name != NULL ? r->name : ""),
	                                   TH_T(r->goal != NULL ? r->goal : ""),
	                                   TH_T(r->ext_json != NULL ? r->ext_json : "{}"),
	                                   TH_I(th_now_ms())),
	                           NULL, &changed, "task ext", e);
	return updated(err, changed, r->id, e);
}

/* Both list statements share these filters, bound at the same positions:
 * ?1 participant, ?2 context_id or NULL, ?3 state name or NULL, ?4 status_ms lower bound.
 * The participant index (participant_id, status_ms, task_id; ascending since 013) holds
 * the caller's tasks in list order read backwards, so a page is one range of it; each task
 * is then fetched by primary key. The index leaves the harness's own participant out (migration
 * 004), and so must the query for SQLite to use it. */
#define LIST_TABLES " FROM participants p JOIN tasks t ON t.id = p.task_id"
#define LIST_WHERE                                                                                 \
	" WHERE p.participant_id = ?1 AND p.participant_id <> 'tiny-harness' AND p.tenant = ?5"    \
	" AND (?2 IS NULL OR t.context_id = ?2)"                                                   \
	" AND (?3 IS NULL OR t.state = ?3) AND p.status_ms >= ?4"
#define LIST_FROM LIST_TABLES LIST_WHERE

/* The five filter arguments ?1..?5 of LIST_FROM, for a TH_ARGS list. */
#define LIST_ARGS(q, state)                                                                        \
	TH_T((q)->participant), TH_T((q)->context_id), TH_T(state),                                \
	    TH_I((q)->status_after_ms >= 0 ? (q)->status_after_ms : INT64_MIN),                    \
	    TH_T((q)->tenant != NULL ? (q)->tenant : "")

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
	int filtered = q->context_id != NULL || state != NULL || q->status_after_ms >= 0 ||
	               (q->tenant != NULL && q->tenant[0] != '\0'); /* TEN-4: counts are ''s */
	th_err err =
	    filtered ? th_store_exec(st, TH_STMT_TASK_COUNT, "SELECT count(*)" LIST_FROM,
	                             TH_ARGS(LIST_ARGS(q, state)), total, NULL, "task count", e)
	             : th_store_exec(st, TH_STMT_TASK_TOTAL,
	                             "SELECT coalesce((SELECT tasks FROM "
	                             "participant_task_counts WHERE participant_id = ?1 "
	                             "AND participant_id <> 'tiny-harness'), 0)",
	                             TH_ARGS(TH_T(q->participant)), total, NULL, "task count", e);
	if (err != TH_OK)
		return err;

	/* A later page starts right after the cursor: the row value is a range bound on the
	 * index, so a page deep in the list costs what the first one does (an OR of the two
	 * conditions would make SQLite walk every row before the cursor). The first page's
	 * statement does not use ?6 and ?7; they are bound all the same. */
	size_t cnt = 0;
	void *out = NULL; /* struct th_task_row[cnt]; th_task_rows_free, or the caller's */
	int64_t limit = q->limit > 0 ? q->limit : -1;
	err = q->cursor_id == NULL
	          ? th_store_each(st, TH_STMT_TASK_LIST,
	                          "SELECT " TASK_COLS LIST_TABLES STATUS_JOIN LIST_WHERE
	                          " ORDER BY p.status_ms DESC, p.task_id DESC LIMIT ?8",
	                          TH_ARGS(LIST_ARGS(q, state), TH_T(NULL), TH_I(0), TH_I(limit)),
	                          &task_row, &out, &cnt, "task list", e)
	          : th_store_each(st, TH_STMT_TASK_LIST_AFTER,
	                          "SELECT " TASK_COLS LIST_TABLES STATUS_JOIN LIST_WHERE
	                          " AND (p.status_ms, p.task_id) < (?7, ?6)"
	                          " ORDER BY p.status_ms DESC, p.task_id DESC LIMIT ?8",
	                          TH_ARGS(LIST_ARGS(q, state), TH_T(q->cursor_id),
	                                  TH_I(q->cursor_ms), TH_I(limit)),
	                          &task_row, &out, &cnt, "task list", e);
	if (err == TH_OK)
		err = status_messages(out, cnt, e);
	if (err != TH_OK) {
		th_task_rows_free(out, cnt);
		return err;
	}
	*rows = out;
	*n = cnt;
	return TH_OK;
}

/* ---- participants ------------------------------------------------------------------ */

static const struct th_col participant_cols[] = {
    TH_COL_TEXT(struct th_participant, id),
    TH_COL_TEXT(struct th_participant, kind),
    TH_COL_TEXT(struct th_participant, role),
    TH_COL_TEXT(struct th_participant, display_name),
};
static const struct th_row_def participant_row =
    TH_ROW_DEF(struct th_participant, participant_cols);

void th_participant_free(struct th_participant *p)
{
	if (p == NULL)
		return;
	th_row_free(&participant_row, p);
}

void th_participants_free(struct th_participant *ps, size_t n)
{
	if (ps == NULL)
		return;
	th_rows_free(&participant_row, ps, n);
}

/* The schema's CHECK of p, asked here: on PostgreSQL a participant's insert is queued
 * (decision-054), where a refusal would fail the transaction instead of answering this. */
static th_err participant_valid(const struct th_participant_in *p, struct th_error *e)
{
	if (p == NULL || p->id == NULL || p->kind == NULL || p->role == NULL)
		return th_error_set(e, TH_EINVAL, "participant needs a task, id, kind and role");
	static const char *const kinds[] = {"human", "agent", NULL};
	static const char *const roles[] = {"assignee", "reporter", "watcher", "admin", NULL};
	int kind_ok = 0, role_ok = 0;
	for (size_t i = 0; kinds[i] != NULL; i++)
		kind_ok |= strcmp(p->kind, kinds[i]) == 0;
	for (size_t i = 0; roles[i] != NULL; i++)
		role_ok |= strcmp(p->role, roles[i]) == 0;
	if (!kind_ok || !role_ok)
		return th_error_set(e, TH_EINVAL,
		                    "participant %s: kind must be human|agent and role "
		                    "assignee|reporter|watcher|admin (got %s, %s)",
		                    p->id, p->kind, p->role);
	return TH_OK;
}

th_err th_store_participant_put(struct th_store *st, const char *task_id,
                                const struct th_participant_in *p, struct th_error *e)
{
	th_err err = participant_valid(p, e);
	if (err != TH_OK || task_id == NULL)
		return err != TH_OK ? err : th_error_set(e, TH_EINVAL, "participant needs a task");
	/* Upsert keeps added_ms and rowid (and so the listing order) of a participant already
	 * on it. A new one's rowid is the task's next number: participants is a WITHOUT ROWID
	 * table whose rowid is an ordinary column (016, decision-068). status_ms and tenant
	 * come from the task's row, and a task that does not exist stores nothing:
	 *   - PostgreSQL: INSERT ... SELECT ... FROM tasks, one look-up; no row is `missing`;
	 *   - SQLite: VALUES, whose task look-ups give NULL for no task, which the NOT NULL
	 *     columns refuse at once (the statement only). An INSERT ... SELECT that reads
	 *     participants (the next rowid) would make SQLite copy the SELECT's row into a
	 *     temporary b-tree first: 10% of a SendMessage's instructions for two upserts
	 *     and a message append (decision-077). */
	err = th_store_exec_later(
	    st, TH_STMT_PART_PUT,
	    th_sql_for(st,
	               "INSERT INTO participants (task_id, participant_id, kind, role, "
	               "display_name, added_ms, status_ms, tenant, rowid) "
	               "VALUES (?1, ?2, ?3, ?4, ?5, ?6, "
	               "(SELECT status_ms FROM tasks WHERE id = ?1), "
	               "(SELECT tenant FROM tasks WHERE id = ?1), "
	               "(SELECT coalesce(max(rowid), 0) + 1 FROM participants WHERE task_id = ?1)) "
	               "ON CONFLICT (task_id, participant_id) DO UPDATE SET "
	               "kind = excluded.kind, role = excluded.role, "
	               "display_name = excluded.display_name",
	               "INSERT INTO participants (task_id, participant_id, kind, role, "
	               "display_name, added_ms, status_ms, tenant, rowid) "
	               "SELECT ?1, ?2, ?3, ?4, ?5, ?6, t.status_ms, t.tenant, "
	               "(SELECT coalesce(max(p.rowid), 0) + 1 FROM participants p "
	               "WHERE p.task_id = ?1) "
	               "FROM tasks t WHERE t.id = ?1 "
	               "ON CONFLICT (task_id, participant_id) DO UPDATE SET "
	               "kind = excluded.kind, role = excluded.role, "
	               "display_name = excluded.display_name"),
	    TH_ARGS(TH_T(task_id), TH_T(p->id), TH_T(p->kind), TH_T(p->role),
	            TH_T(p->display_name != NULL ? p->display_name : ""), TH_I(th_now_ms())),
	    NULL, "no such task", "participant put", e);
	if (err == TH_ENOTFOUND ||
	    (err != TH_OK && th_store_failed_with(st) == TH_SQL_FAIL_NOTNULL))
		return th_error_set(e, TH_ENOTFOUND, "task %s not found", task_id);
	return err;
}

/* A new task has no participant to update and none numbered yet: plain inserts, its
 * rowids the order given, status_ms and tenant from the task's row as for the upsert.
 *   - SQLite: one participant a statement (?1..?7), VALUES with the task's look-ups; an
 *     INSERT ... SELECT from tasks cost SQLite ~15k instructions more per row;
 *   - PostgreSQL: two a statement (?8..?12 the second, ?9 NULL when n is odd), the
 *     task's row joined to their VALUES: 12% less of PostgreSQL's CPU per new task than
 *     two upserts; a UNION ALL of two look-ups saved nothing (decision-089). */
th_err th_store_participants_add_new(struct th_store *st, const char *task_id,
                                     const struct th_participant_in *ps, size_t n,
                                     struct th_error *e)
{
	if (task_id == NULL)
		return th_error_set(e, TH_EINVAL, "participant needs a task");
	for (size_t i = 0; i < n; i++) {
		th_err err = participant_valid(&ps[i], e);
		if (err != TH_OK)
			return err;
		for (size_t j = 0; j < i; j++)
			if (strcmp(ps[j].id, ps[i].id) == 0)
				return th_error_set(e, TH_EINVAL, "participant %s is listed twice",
				                    ps[i].id);
	}
	const size_t per = st->pg != NULL ? 2 : 1;
	int64_t now = th_store_now(st);
	th_err err = TH_OK;
	for (size_t i = 0; err == TH_OK && i < n; i += per) {
		const struct th_participant_in *a = &ps[i],
		                               *b = per == 2 && i + 1 < n ? &ps[i + 1] : NULL;
		const struct th_arg args[] = {
		    TH_T(task_id),
		    TH_I(now),
		    TH_I((int64_t)i + 1),
		    TH_T(a->id),
		    TH_T(a->kind),
		    TH_T(a->role),
		    TH_T(a->display_name != NULL ? a->display_name : ""),
		    TH_I((int64_t)i + 2),
		    TH_T(b != NULL ? b->id : NULL),
		    TH_T(b != NULL ? b->kind : NULL),
		    TH_T(b != NULL ? b->role : NULL),
		    TH_T(b == NULL || b->display_name == NULL ? "" : b->display_name)};
		err = th_store_exec_later(
		    st, TH_STMT_PART_ADD_NEW,
		    th_sql_for(st,
		               "INSERT INTO participants (task_id, participant_id, kind, role, "
		               "display_name, added_ms, status_ms, tenant, rowid) "
		               "VALUES (?1, ?4, ?5, ?6, ?7, ?2, "
		               "(SELECT status_ms FROM tasks WHERE id = ?1), "
		               "(SELECT tenant FROM tasks WHERE id = ?1), ?3)",
		               "INSERT INTO participants (task_id, participant_id, kind, role, "
		               "display_name, added_ms, status_ms, tenant, rowid) "
		               "SELECT t.id, v.column1, v.column2, v.column3, v.column4, ?2, "
		               "t.status_ms, t.tenant, v.column5 FROM tasks t, "
		               "(VALUES (?4, ?5, ?6, ?7, ?3), (?9, ?10, ?11, ?12, ?8)) v "
		               "WHERE t.id = ?1 AND v.column1 IS NOT NULL"),
		    args, per == 2 ? 12 : 7, NULL, "no such task", "participants of a new task", e);
	}
	if (err == TH_ENOTFOUND ||
	    (err != TH_OK && th_store_failed_with(st) == TH_SQL_FAIL_NOTNULL))
		return th_error_set(e, TH_ENOTFOUND, "task %s not found", task_id);
	return err;
}

th_err th_store_participant_role(struct th_store *st, const char *task_id,
                                 const char *participant_id, char **role, struct th_error *e)
{
	return th_store_participant_role_in(st, NULL, task_id, participant_id, role, e);
}

th_err th_store_participant_role_in(struct th_store *st, const char *tenant, const char *task_id,
                                    const char *participant_id, char **role, struct th_error *e)
{
	*role = NULL;
	if (task_id == NULL || participant_id == NULL)
		return th_error_set(e, TH_ENOTFOUND, "no participant");
	th_err err = th_store_text(st, TH_STMT_PART_ROLE, PART_ROLE_SQL,
	                           TH_ARGS(TH_T(task_id), TH_T(participant_id), TH_T(tenant)), role,
	                           "participant role", e);
	if (err == TH_ENOTFOUND)
		return th_error_set(e, TH_ENOTFOUND, "%s is not a participant of task %s",
		                    participant_id, task_id);
	return err;
}

th_err th_store_participants(struct th_store *st, const char *task_id, struct th_participant **out,
                             size_t *n, struct th_error *e)
{
	*out = NULL;
	*n = 0;
	size_t cnt = 0;
	void *ps = NULL; /* struct th_participant[cnt]; th_participants_free, or the caller's */
	th_err err = th_store_each(st, TH_STMT_PART_LIST, PART_LIST_SQL, TH_ARGS(TH_T(task_id)),
	                           &participant_row, &ps, &cnt, "participants", e);
	if (err != TH_OK)
		return err;
	*out = ps;
	*n = cnt;
	return TH_OK;
}

/* The reads of this file a view or a request sends ahead (th_store_prefetch; expect.c):
 * the same statements and arguments as th_store_task_get, th_store_participant_role_in,
 * th_store_participants and th_store_task_context. */
void th_store_task_get_soon(struct th_store *st, const char *task_id)
{
	th_store_prefetch(
	    st, TH_STMT_TASK_GET,
	    th_sql_for(st, "SELECT " TASK_COLS TASK_GET_FROM, "SELECT " TASK_COLS TASK_GET_PG_FROM),
	    TH_ARGS(TH_T(task_id)));
}

void th_store_participant_role_soon(struct th_store *st, const char *tenant, const char *task_id,
                                    const char *participant_id)
{
	th_store_prefetch(st, TH_STMT_PART_ROLE, PART_ROLE_SQL,
	                  TH_ARGS(TH_T(task_id), TH_T(participant_id), TH_T(tenant)));
}

void th_store_participants_soon(struct th_store *st, const char *task_id)
{
	th_store_prefetch(st, TH_STMT_PART_LIST, PART_LIST_SQL, TH_ARGS(TH_T(task_id)));
}

void th_store_task_context_soon(struct th_store *st, const char *task_id)
{
	th_store_prefetch(st, TH_STMT_TASK_CONTEXT, TASK_CONTEXT_SQL, TH_ARGS(TH_T(task_id)));
}
