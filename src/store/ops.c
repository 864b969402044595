/* SPDX-License-Identifier: Apache-2.0 */
/* ops.c — operator queries: the task overview of `tiny-harness tasks list` and `purge`
 * with its retention sweeps (STORE-1, STORE-2, RET-1, RET-2). */
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

/* A task in a state it never leaves: tasks_ended_by_updated's predicate, spelled as the
 * index spells it (ORs of equalities) so that purge's planner uses it. The column is not
 * qualified: in a subquery it is the subquery's own task's (SQL's innermost scope). */
#define ENDED                                                                                      \
	"(state = 'TASK_STATE_COMPLETED' OR state = 'TASK_STATE_FAILED' OR "                       \
	"state = 'TASK_STATE_CANCELED' OR state = 'TASK_STATE_REJECTED')"

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
	                     "WHERE " ENDED " AND updated_ms < ?1 LIMIT ?2)",
	                     TH_ARGS(TH_I(before_ms), TH_I(limit > 0 ? limit : -1)), NULL, n,
	                     "purge", e);
}

th_err th_store_purge_stuck(struct th_store *st, int64_t before_ms, int64_t after_num,
                            int64_t upto_num, int64_t *n, struct th_error *e)
{
	if (n != NULL)
		*n = 0;
	/* A number range of the primary key; within it each candidate costs a few index
	 * look-ups: its live turns (turns_live_by_task), its open sub-tasks, by parent_id
	 * (tasks_by_parent) and by link (subtask_links_by_parent, the relation CTL-4
	 * reads), its newest event and newest message (the primary keys read backwards).
	 * The cascade is purge's. */
	return th_store_exec(
	    st, TH_STMT_PURGE_STUCK,
	    "DELETE FROM tasks WHERE num > ?2 AND num <= ?3 AND NOT " ENDED " AND updated_ms < ?1 "
	    "AND NOT EXISTS (SELECT 1 FROM turn_rows u WHERE u.task_num = tasks.num "
	    "AND u.state IN ('queued', 'running')) "
	    "AND NOT EXISTS (SELECT 1 FROM tasks c WHERE c.parent_id = tasks.id "
	    "AND NOT " ENDED ") "
	    "AND NOT EXISTS (SELECT 1 FROM subtask_links l JOIN tasks k ON k.id = l.child_id "
	    "WHERE l.parent_id = tasks.id AND NOT " ENDED ") "
	    "AND COALESCE((SELECT e.created_ms FROM event_rows e WHERE e.task_num = tasks.num "
	    "ORDER BY e.seq DESC LIMIT 1), 0) < ?1 "
	    "AND COALESCE((SELECT m.created_ms FROM message_rows m WHERE m.task_num = tasks.num "
	    "ORDER BY m.pos DESC LIMIT 1), 0) < ?1",
	    TH_ARGS(TH_I(before_ms), TH_I(after_num), TH_I(upto_num)), NULL, n, "purge stuck", e);
}

th_err th_store_task_window(struct th_store *st, int64_t after_num, int size, int64_t *upto,
                            struct th_error *e)
{
	*upto = 0;
	return th_store_exec(st, TH_STMT_TASK_WINDOW,
	                     "SELECT COALESCE(MAX(w.num), 0) FROM (SELECT num FROM tasks "
	                     "WHERE num > ?1 ORDER BY num LIMIT ?2) w",
	                     TH_ARGS(TH_I(after_num), TH_I(size > 0 ? size : 1)), upto, NULL,
	                     "task window", e);
}
