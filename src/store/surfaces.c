/* SPDX-License-Identifier: Apache-2.0 */
/* surfaces.c — the A2UI surface registry of a task and its artifact numbers (UI-1..UI-3).
 * Schema: sql/002. */
#include <stddef.h>

#include "store/store.h"
#include "store/store_int.h"
#include "util/ids.h"

th_err th_store_a2ui_get(struct th_store *st, const char *task_id, char **json, struct th_error *e)
{
	th_err err =
	    th_store_text(st, TH_STMT_A2UI_GET, "SELECT json FROM a2ui_registry WHERE task_id = ?1",
	                  TH_ARGS(TH_T(task_id)), json, "A2UI registry", e);
	/* No registry row: *json is NULL. */
	if (err == TH_ENOTFOUND) {
		th_error_clear(e);
		return TH_OK;
	}
	return err;
}

th_err th_store_a2ui_put(struct th_store *st, const char *task_id, const char *json,
                         struct th_error *e)
{
	if (task_id == NULL || json == NULL)
		return th_error_set(e, TH_EINVAL, "A2UI registry needs a task and JSON");
	th_err err = th_store_exec(st, TH_STMT_A2UI_PUT,
	                           "INSERT INTO a2ui_registry (task_id, json, updated_ms) "
	                           "VALUES (?1, ?2, ?3) ON CONFLICT (task_id) DO UPDATE SET "
	                           "json = excluded.json, updated_ms = excluded.updated_ms",
	                           TH_ARGS(TH_T(task_id), TH_T(json), TH_I(th_now_ms())), NULL,
	                           NULL, "A2UI registry put", e);
	if (err == TH_OK)
		return TH_OK;
	enum th_sql_fail rc = th_store_failed_with(st);
	if (rc == TH_SQL_FAIL_CHECK)
		return th_error_set(e, TH_EINVAL, "A2UI registry of task %s is not valid JSON",
		                    task_id);
	if (rc == TH_SQL_FAIL_FOREIGNKEY)
		return th_error_set(e, TH_ENOTFOUND, "task %s not found", task_id);
	return err;
}

th_err th_store_a2ui_next_artifact(struct th_store *st, const char *task_id, int64_t *n,
                                   struct th_error *e)
{
	*n = 0;
	if (task_id == NULL)
		return th_error_set(e, TH_EINVAL, "A2UI artifact number needs a task");
	int64_t got = 0;
	/* A task without a registry row gets one with an empty registry. */
	th_err err = th_store_exec(st, TH_STMT_A2UI_NEXT,
	                           "INSERT INTO a2ui_registry (task_id, json, next_artifact, "
	                           "updated_ms) VALUES (?1, '{}', 2, ?2) ON CONFLICT (task_id) "
	                           "DO UPDATE SET next_artifact = a2ui_registry.next_artifact + 1, "
	                           "updated_ms = excluded.updated_ms RETURNING next_artifact - 1",
	                           TH_ARGS(TH_T(task_id), TH_I(th_now_ms())), &got, NULL,
	                           "A2UI artifact number", e);
	if (err != TH_OK)
		return th_store_failed_with(st) == TH_SQL_FAIL_FOREIGNKEY
		           ? th_error_set(e, TH_ENOTFOUND, "task %s not found", task_id)
		           : err;
	*n = got;
	return TH_OK;
}
