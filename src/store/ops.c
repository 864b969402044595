/* SPDX-License-Identifier: Apache-2.0 */
/* ops.c — operator queries: the task overview of `tiny-harness tasks list` and `purge`
 * (STORE-1, STORE-2). */
#include <stdlib.h>
#include <string.h>

#include "store/store.h"
#include "store/store_int.h"

void th_task_briefs_free(struct th_task_brief *b, size_t n)
{
	if (b == NULL)
		return;
	for (size_t i = 0; i < n; i++) {
		free(b[i].id);
		free(b[i].sub_state);
		free(b[i].name);
		free(b[i].parent_id);
	}
	free(b);
}

th_err th_store_tasks_overview(struct th_store *st, int state, int limit,
                               struct th_task_brief **out, size_t *n, struct th_error *e)
{
	*out = NULL;
	*n = 0;
	const char *state_name = NULL;
	if (state != 0) {
		state_name = th_store_state_name(state);
		if (state_name[0] == '\0')
			return th_error_set(e, TH_EINVAL, "unknown task state %d", state);
	}
	sqlite3_stmt *s;
	/* With a state, the (state, updated_ms) index gives the order; without, the CLI
	 * sorts every task once, which is fine off the request path. */
	th_err err = th_store_stmt(st, TH_STMT_OVERVIEW,
	                           "SELECT id, state, sub_state, name, parent_id, updated_ms "
	                           "FROM tasks WHERE ?1 IS NULL OR state = ?1 "
	                           "ORDER BY updated_ms DESC, id DESC LIMIT ?2",
	                           &s, e);
	if (err != TH_OK)
		return err;
	int rc = th_bind_text(s, 1, state_name, SQLITE_OK);
	rc = th_bind_i64(s, 2, limit > 0 ? limit : -1, rc);
	struct th_task_brief *v = NULL;
	size_t cnt = 0, cap = 0;
	while (rc == SQLITE_OK && (rc = sqlite3_step(s)) == SQLITE_ROW) {
		if (th_grow((void **)&v, &cap, cnt, sizeof *v) != 0) {
			rc = SQLITE_NOMEM;
			break;
		}
		struct th_task_brief *b = &v[cnt++];
		memset(b, 0, sizeof *b);
		b->state = th_store_state_from_name((const char *)sqlite3_column_text(s, 1));
		b->updated_ms = sqlite3_column_int64(s, 5);
		if ((th_col_dup(s, 0, &b->id) | th_col_dup(s, 2, &b->sub_state) |
		     th_col_dup(s, 3, &b->name) | th_col_dup(s, 4, &b->parent_id)) != 0) {
			rc = SQLITE_NOMEM;
			break;
		}
		rc = SQLITE_OK;
	}
	if (rc != SQLITE_DONE)
		err = rc == SQLITE_NOMEM ? th_error_set(e, TH_ENOMEM, "out of memory listing tasks")
		                         : th_store_fail(st, rc, "tasks overview", e);
	th_store_stmt_done(s);
	if (err != TH_OK) {
		th_task_briefs_free(v, cnt);
		return err;
	}
	*out = v;
	*n = cnt;
	return TH_OK;
}

th_err th_store_purge(struct th_store *st, int64_t before_ms, int limit, int64_t *n,
                      struct th_error *e)
{
	if (n != NULL)
		*n = 0;
	sqlite3_stmt *s;
	/* Foreign keys with ON DELETE CASCADE remove every row that references a task
	 * (participants, messages, events, artifacts, links, turns, channels, help requests,
	 * plan steps, A2UI registry, push configs and deliveries); a surviving child of a
	 * purged parent keeps running with parent_id set to NULL. changes() counts the tasks
	 * only, not the cascaded rows. */
	th_err err = th_store_stmt(st, TH_STMT_PURGE,
	                           "DELETE FROM tasks WHERE id IN (SELECT id FROM tasks "
	                           "WHERE (state = 'TASK_STATE_COMPLETED' OR state = "
	                           "'TASK_STATE_FAILED' OR state = 'TASK_STATE_CANCELED' OR "
	                           "state = 'TASK_STATE_REJECTED') AND updated_ms < ?1 LIMIT ?2)",
	                           &s, e);
	if (err != TH_OK)
		return err;
	int rc = th_bind_i64(s, 1, before_ms, SQLITE_OK);
	rc = th_bind_i64(s, 2, limit > 0 ? limit : -1, rc);
	rc = th_step_done(s, rc);
	if (rc != SQLITE_DONE)
		return th_store_fail(st, rc, "purge", e);
	if (n != NULL)
		*n = sqlite3_changes64(st->db);
	return TH_OK;
}
