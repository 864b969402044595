/* SPDX-License-Identifier: Apache-2.0 */
/* plans.c — a task's plan: its steps, their states and outputs (TASK-1, CMD-3).
 * Schema: sql/002. */
#include <stddef.h>

#include "store/store.h"
#include "store/store_int.h"
#include "util/ids.h"

static const char *const step_states[] = {
    [TH_STEP_PENDING] = "pending",
    [TH_STEP_ACTIVE] = "active",
    [TH_STEP_DONE] = "done",
    [TH_STEP_FAILED] = "failed",
};
#define N_STEP_STATES ((int)(sizeof step_states / sizeof step_states[0]))

const char *th_store_step_state_name(int state)
{
	return state >= 0 && state < N_STEP_STATES ? step_states[state] : "";
}

int th_store_step_state_from_name(const char *s)
{
	return TH_NAME_INDEX(step_states, s, TH_STEP_PENDING);
}

static const struct th_col plan_step_cols[] = {
    TH_COL_TEXT(struct th_plan_step, step_id),
    TH_COL_TEXT(struct th_plan_step, name),
    TH_COL_TEXT(struct th_plan_step, description),
    TH_COL_TEXT(struct th_plan_step, depends_on_json),
    TH_COL_ENUM(struct th_plan_step, state, th_store_step_state_from_name),
    TH_COL_TEXT(struct th_plan_step, output),
    TH_COL_TEXT(struct th_plan_step, linked_tasks_json),
    TH_COL_I64(struct th_plan_step, updated_ms),
};
static const struct th_row_def plan_step_row = TH_ROW_DEF(struct th_plan_step, plan_step_cols);

void th_plan_steps_free(struct th_plan_step *s, size_t n)
{
	th_rows_free(&plan_step_row, s, n);
}

static th_err plan_insert(struct th_store *st, const char *task_id, const struct th_plan_step_in *p,
                          int64_t pos, int64_t now, struct th_error *e)
{
	if (p->step_id == NULL || p->step_id[0] == '\0' || p->name == NULL)
		return th_error_set(e, TH_EINVAL, "plan step %lld needs an id and a name",
		                    (long long)pos);
	if (p->state < 0 || p->state >= N_STEP_STATES)
		return th_error_set(e, TH_EINVAL, "plan step %s: unknown state %d", p->step_id,
		                    p->state);
	th_err err = th_store_exec(
	    st, TH_STMT_PLAN_INSERT,
	    "INSERT INTO plan_steps (task_id, step_id, pos, name, "
	    "description, depends_on_json, state, output, "
	    "linked_tasks_json, updated_ms) "
	    "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
	    TH_ARGS(TH_T(task_id), TH_T(p->step_id), TH_I(pos), TH_T(p->name),
	            TH_T(p->description != NULL ? p->description : ""),
	            TH_T(p->depends_on_json != NULL ? p->depends_on_json : "[]"),
	            TH_T(step_states[p->state]), TH_T(p->output),
	            TH_T(p->linked_tasks_json != NULL ? p->linked_tasks_json : "[]"), TH_I(now)),
	    NULL, NULL, "plan step insert", e);
	if (err == TH_OK)
		return TH_OK;
	enum th_sql_fail rc = th_store_failed_with(st);
	if (rc == TH_SQL_FAIL_UNIQUE)
		return th_error_set(e, TH_EINVAL, "duplicate plan step id %s", p->step_id);
	if (rc == TH_SQL_FAIL_CHECK)
		return th_error_set(e, TH_EINVAL,
		                    "plan step %s: depends_on and linked_tasks must be JSON arrays",
		                    p->step_id);
	if (rc == TH_SQL_FAIL_FOREIGNKEY)
		return th_error_set(e, TH_ENOTFOUND, "task %s not found", task_id);
	return err;
}

th_err th_store_plan_replace(struct th_store *st, const char *task_id,
                             const struct th_plan_step_in *steps, size_t n, struct th_error *e)
{
	if (task_id == NULL || (steps == NULL && n > 0))
		return th_error_set(e, TH_EINVAL, "plan needs a task");
	int exists = 0;
	th_err err = th_store_task_exists(st, task_id, &exists, e);
	if (err != TH_OK)
		return err;
	if (!exists)
		return th_error_set(e, TH_ENOTFOUND, "task %s not found", task_id);
	err = th_store_exec(st, TH_STMT_PLAN_DELETE, "DELETE FROM plan_steps WHERE task_id = ?1",
	                    TH_ARGS(TH_T(task_id)), NULL, NULL, "plan delete", e);
	int64_t now = th_now_ms();
	for (size_t i = 0; err == TH_OK && i < n; i++)
		err = plan_insert(st, task_id, &steps[i], (int64_t)i + 1, now, e);
	return err;
}

th_err th_store_plan_step_update(struct th_store *st, const char *task_id, const char *step_id,
                                 int state, const char *output, const char *linked_tasks_json,
                                 struct th_error *e)
{
	if (state < 0 || state >= N_STEP_STATES)
		return th_error_set(e, TH_EINVAL, "plan step %s: unknown state %d",
		                    step_id != NULL ? step_id : "", state);
	int64_t changed = 0;
	th_err err =
	    th_store_exec(st, TH_STMT_PLAN_UPDATE,
	                  "UPDATE plan_steps SET state = ?3, output = coalesce(?4, output), "
	                  "linked_tasks_json = coalesce(?5, linked_tasks_json), "
	                  "updated_ms = ?6 WHERE task_id = ?1 AND step_id = ?2",
	                  TH_ARGS(TH_T(task_id), TH_T(step_id), TH_T(step_states[state]),
	                          TH_T(output), TH_T(linked_tasks_json), TH_I(th_now_ms())),
	                  NULL, &changed, "plan step update", e);
	if (err != TH_OK)
		return th_store_failed_with(st) == TH_SQL_FAIL_CHECK
		           ? th_error_set(e, TH_EINVAL,
		                          "plan step %s: linked_tasks must be a JSON array",
		                          step_id)
		           : err;
	if (changed == 0)
		return th_error_set(e, TH_ENOTFOUND, "task %s has no plan step %s",
		                    task_id != NULL ? task_id : "", step_id != NULL ? step_id : "");
	return TH_OK;
}

#define PLAN_LIST_SQL                                                                              \
	"SELECT step_id, name, description, depends_on_json, state, "                              \
	"output, linked_tasks_json, updated_ms FROM plan_steps WHERE task_id = ?1 ORDER BY pos"

th_err th_store_plan(struct th_store *st, const char *task_id, struct th_plan_step **out, size_t *n,
                     struct th_error *e)
{
	return th_store_each(st, TH_STMT_PLAN_LIST, PLAN_LIST_SQL, TH_ARGS(TH_T(task_id)),
	                     &plan_step_row, (void **)out, n, "plan", e);
}

void th_store_plan_soon(struct th_store *st, const char *task_id)
{
	th_store_prefetch(st, TH_STMT_PLAN_LIST, PLAN_LIST_SQL, TH_ARGS(TH_T(task_id)));
}
