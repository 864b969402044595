/* SPDX-License-Identifier: Apache-2.0 */
/* ops.c — operator queries: the task overview of `tiny-harness tasks list` and `purge`
 * (STORE-1, STORE-2). */
#include <stddef.h>

#include "store/store.h"
#include "store/store_int.h"

/* A row of the overview's SELECT. */
static const struct th_col brief_cols[] = {
    TH_COL_TEXT(struct th_task_brief, id),
    TH_COL_ENUM(struct th_task_brief, state, th_store_state_from_name),
    TH_COL_TEXT(struct th_task_brief, sub_state),
    TH_COL_TEXT(struct th_task_brief, name),
    TH_COL_TEXT(struct th_task_brief, parent_id),
    TH_COL_I64(struct th_task_brief, updated_ms),
};
static const struct th_row_def brief_row = TH_ROW_DEF(struct th_task_brief, brief_cols);

void th_task_briefs_free(struct th_task_brief *b, size_t n)
{
	th_rows_free(&brief_row, b, n); /* NULL: nothing */
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
	/* With a state, the (state, updated_ms) index gives the order; without, the CLI
	 * sorts every task once, which is fine off the request path. */
	return th_store_each(st, TH_STMT_OVERVIEW,
	                     "SELECT id, state, sub_state, name, parent_id, updated_ms "
	                     "FROM tasks WHERE ?1 IS NULL OR state = ?1 "
	                     "ORDER BY updated_ms DESC, id DESC LIMIT ?2",
	                     TH_ARGS(TH_T(state_name), TH_I(limit > 0 ? limit : -1)), &brief_row,
	                     (void **)out, n, "tasks overview", e);
}

th_err th_store_purge(struct th_store *st, int64_t before_ms, int limit, int64_t *n,
                      struct th_error *e)
{
	if (n != NULL)
		*n = 0;
	/* Foreign keys with ON DELETE CASCADE remove every row that references a task
	 * (participants, messages, events, artifacts, links, turns, channels, help requests,
	 * plan steps, A2UI registry, push configs and deliveries); a surviving child of a
	 * purged parent keeps running with parent_id set to NULL. changes() counts the tasks
	 * only, not the cascaded rows. */
	return th_store_exec(st, TH_STMT_PURGE,
	                     "DELETE FROM tasks WHERE id IN (SELECT id FROM tasks "
	                     "WHERE (state = 'TASK_STATE_COMPLETED' OR state = "
	                     "'TASK_STATE_FAILED' OR state = 'TASK_STATE_CANCELED' OR "
	                     "state = 'TASK_STATE_REJECTED') AND updated_ms < ?1 LIMIT ?2)",
	                     TH_ARGS(TH_I(before_ms), TH_I(limit > 0 ? limit : -1)), NULL, n,
	                     "purge", e);
}
