/* SPDX-License-Identifier: Apache-2.0 */
/* confirm.c — approvals asked with /confirm (UI-4), table `confirmations` (sql/003). */
#include <stddef.h>

#include "store/store.h"
#include "store/store_int.h"
#include "util/ids.h"

static const struct th_col confirm_cols[] = {
    TH_COL_TEXT(struct th_confirm, id),
    TH_COL_TEXT(struct th_confirm, surface_id),
    TH_COL_TEXT(struct th_confirm, question),
    TH_COL_TEXT(struct th_confirm, asked_by),
};
static const struct th_row_def confirm_row = TH_ROW_DEF(struct th_confirm, confirm_cols);

void th_confirm_free(struct th_confirm *c)
{
	th_row_free(&confirm_row, c);
}

th_err th_store_confirm_create(struct th_store *st, const char *task_id, const char *id,
                               const char *surface_id, const char *question, const char *asked_by,
                               struct th_error *e)
{
	return th_store_exec(st, TH_STMT_CONFIRM_CREATE,
	                     "INSERT INTO confirmations (id, task_id, surface_id, question, "
	                     "asked_by, created_ms) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
	                     TH_ARGS(TH_T(id), TH_T(task_id), TH_T(surface_id), TH_T(question),
	                             TH_T(asked_by), TH_I(th_now_ms())),
	                     NULL, NULL, "confirmation", e);
}

th_err th_store_confirm_pending(struct th_store *st, const char *task_id, const char *surface_id,
                                struct th_confirm *out, struct th_error *e)
{
	/* ?2 NULL selects the latest pending question asked in text. */
	return th_store_one(st, TH_STMT_CONFIRM_FIND,
	                    "SELECT id, surface_id, question, asked_by FROM confirmations "
	                    "WHERE task_id = ?1 AND state = 'pending' AND "
	                    "(surface_id = ?2 OR (?2 IS NULL AND surface_id IS NULL)) "
	                    "ORDER BY created_ms DESC LIMIT 1",
	                    TH_ARGS(TH_T(task_id), TH_T(surface_id)), &confirm_row, out,
	                    "pending confirmation", e);
}

th_err th_store_confirm_decide(struct th_store *st, const char *task_id, const char *id,
                               int approved, const char *decided_by, struct th_error *e)
{
	int64_t changed = 0;
	th_err err =
	    th_store_exec(st, TH_STMT_CONFIRM_DECIDE,
	                  "UPDATE confirmations SET state = ?3, decided_by = ?4, "
	                  "decided_ms = ?5 WHERE task_id = ?1 AND id = ?2 AND "
	                  "state = 'pending'",
	                  TH_ARGS(TH_T(task_id), TH_T(id), TH_T(approved ? "approved" : "rejected"),
	                          TH_T(decided_by), TH_I(th_now_ms())),
	                  NULL, &changed, "confirmation", e);
	if (err != TH_OK)
		return err;
	return changed == 1 ? TH_OK
	                    : th_error_set(e, TH_EINVAL, "the question was decided already");
}
