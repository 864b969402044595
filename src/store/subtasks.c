/* SPDX-License-Identifier: Apache-2.0 */
/* subtasks.c — sub-tasks (CTL-4, TASK-4): the link of a child to its parent
 * (subtask_links), the next sub-task number of a parent (tasks.child_count) and the
 * parent of a child. */
#include <string.h>

#include "store/store.h"
#include "store/store_int.h"
#include "util/ids.h"

th_err th_store_subtask_link(struct th_store *st, const char *parent_id, const char *child_id,
                             struct th_error *e)
{
	if (parent_id == NULL || child_id == NULL)
		return th_error_set(e, TH_EINVAL, "sub-task link needs parent and child");
	if (strcmp(parent_id, child_id) == 0)
		return th_error_set(e, TH_EINVAL, "task %s cannot be its own sub-task", child_id);
	th_err err = th_store_exec(st, TH_STMT_SUB_LINK,
	                           "INSERT INTO subtask_links (parent_id, child_id, created_ms) "
	                           "VALUES (?1, ?2, ?3)",
	                           TH_ARGS(TH_T(parent_id), TH_T(child_id), TH_I(th_now_ms())),
	                           NULL, NULL, "sub-task link", e);
	/* Both ids are set and the table has no CHECK or trigger, so th_store_fail's TH_EINVAL
	 * is the primary key (the child is linked already) and TH_ENOTFOUND a foreign key. */
	if (err == TH_EINVAL)
		return th_error_set(e, TH_EINVAL, "task %s is already a sub-task", child_id);
	if (err == TH_ENOTFOUND)
		return th_error_set(e, TH_ENOTFOUND, "task %s or %s not found", parent_id,
		                    child_id);
	return err;
}

static const struct th_col subtask_cols[] = {
    TH_COL_TEXT(struct th_subtask_ref, id),
    TH_COL_TEXT(struct th_subtask_ref, name),
    TH_COL_ENUM(struct th_subtask_ref, state, th_store_state_from_name),
};
static const struct th_row_def subtask_row = TH_ROW_DEF(struct th_subtask_ref, subtask_cols);

void th_subtask_refs_free(struct th_subtask_ref *r, size_t n)
{
	th_rows_free(&subtask_row, r, n);
}

/* Unresolved: the link is open and the child is not terminal, so a child that ended
 * counts as resolved even before anyone called th_store_subtask_resolve. */
#define SUB_LIST_SQL                                                                               \
	"SELECT t.id, t.name, t.state FROM subtask_links l JOIN tasks t ON t.id = l.child_id "     \
	"WHERE l.parent_id = ?1 AND (?2 = 0 OR (l.resolved_ms IS NULL AND t.state NOT IN ("        \
	"'TASK_STATE_COMPLETED', 'TASK_STATE_FAILED', 'TASK_STATE_CANCELED', "                     \
	"'TASK_STATE_REJECTED'))) ORDER BY l.created_ms, l.rowid"

th_err th_store_subtasks(struct th_store *st, const char *parent_id, int unresolved_only,
                         struct th_subtask_ref **out, size_t *n, struct th_error *e)
{
	return th_store_each(st, TH_STMT_SUB_LIST, SUB_LIST_SQL,
	                     TH_ARGS(TH_T(parent_id), TH_I(unresolved_only ? 1 : 0)), &subtask_row,
	                     (void **)out, n, "sub-tasks", e);
}

void th_store_subtasks_soon(struct th_store *st, const char *parent_id, int unresolved_only)
{
	th_store_prefetch(st, TH_STMT_SUB_LIST, SUB_LIST_SQL,
	                  TH_ARGS(TH_T(parent_id), TH_I(unresolved_only ? 1 : 0)));
}

th_err th_store_subtask_resolve(struct th_store *st, const char *child_id, struct th_error *e)
{
	int64_t changed = 0;
	/* Resolving twice keeps the first time. */
	th_err err = th_store_exec(
	    st, TH_STMT_SUB_RESOLVE,
	    "UPDATE subtask_links SET resolved_ms = coalesce(resolved_ms, ?2) "
	    "WHERE child_id = ?1",
	    TH_ARGS(TH_T(child_id), TH_I(th_now_ms())), NULL, &changed, "sub-task resolve", e);
	if (err == TH_OK && changed == 0)
		return th_error_set(e, TH_ENOTFOUND, "task %s is not a sub-task",
		                    child_id != NULL ? child_id : "");
	return err;
}

th_err th_store_subtask_next_number(struct th_store *st, const char *parent_id, int64_t *n,
                                    struct th_error *e)
{
	*n = 0;
	int64_t got = 0;
	th_err err = th_store_exec(st, TH_STMT_SUB_NEXT,
	                           "UPDATE tasks SET child_count = child_count + 1 WHERE id = ?1 "
	                           "RETURNING child_count",
	                           TH_ARGS(TH_T(parent_id)), &got, NULL, "sub-task number", e);
	if (err != TH_OK)
		return err;
	if (got == 0)
		return th_error_set(e, TH_ENOTFOUND, "task %s not found",
		                    parent_id != NULL ? parent_id : "");
	*n = got;
	return TH_OK;
}

th_err th_store_subtask_parent(struct th_store *st, const char *child_id, char **parent_id,
                               struct th_error *e)
{
	th_err err = th_store_text(st, TH_STMT_SUB_PARENT,
	                           "SELECT parent_id FROM subtask_links WHERE child_id = ?1",
	                           TH_ARGS(TH_T(child_id)), parent_id, "sub-task parent", e);
	if (err == TH_ENOTFOUND)
		return th_error_set(e, TH_ENOTFOUND, "task %s is not a sub-task",
		                    child_id != NULL ? child_id : "");
	return err;
}
