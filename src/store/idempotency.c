/* SPDX-License-Identifier: Apache-2.0 */
/* idempotency.c — a send's Idempotency-Key, kept per caller with the task it went to
 * (A2A-11-IDEM-1, migration 015, decision-067). */
#include <stdlib.h>

#include "store/store.h"
#include "store/store_int.h"
#include "util/ids.h"

struct idem_row {
	char *task_id;
	char *fingerprint;
};

static const struct th_col idem_cols[] = {
    TH_COL_TEXT(struct idem_row, task_id),
    TH_COL_TEXT(struct idem_row, fingerprint),
};
static const struct th_row_def idem_row = TH_ROW_DEF(struct idem_row, idem_cols);

th_err th_store_idem_find(struct th_store *st, const char *tenant, const char *participant,
                          const char *key, char **task_id, char **fingerprint, struct th_error *e)
{
	*task_id = NULL;
	*fingerprint = NULL;
	if (participant == NULL || key == NULL)
		return th_error_set(e, TH_EINVAL,
		                    "an idempotency key needs a participant and a key");
	struct idem_row r = {0};
	th_err err =
	    th_store_one(st, TH_STMT_IDEM_FIND,
	                 "SELECT t.id, k.fingerprint FROM idempotency_keys k "
	                 "JOIN tasks t ON t.num = k.task_num "
	                 "WHERE k.participant_id = ?1 AND k.key = ?2 AND k.tenant = ?3",
	                 TH_ARGS(TH_T(participant), TH_T(key), TH_T(tenant != NULL ? tenant : "")),
	                 &idem_row, &r, "idempotency key", e);
	if (err != TH_OK)
		return err;
	*task_id = r.task_id;         /* the caller's now */
	*fingerprint = r.fingerprint; /* the caller's now */
	return TH_OK;
}

th_err th_store_idem_keep(struct th_store *st, const char *participant, const char *key,
                          const char *task_id, const char *fingerprint, struct th_error *e)
{
	if (participant == NULL || key == NULL || task_id == NULL || fingerprint == NULL)
		return th_error_set(e, TH_EINVAL,
		                    "an idempotency key needs a participant, a key, a task "
		                    "and a fingerprint");
	/* Found absent by th_store_idem_find in the same write transaction: a refusal here
	 * is a failure of the transaction, never an answer, so it may be queued. */
	return th_store_exec_later(st, TH_STMT_IDEM_KEEP,
	                           "INSERT INTO idempotency_keys (participant_id, key, task_num, "
	                           "fingerprint, created_ms, tenant) SELECT ?1, ?2, num, ?4, ?5, "
	                           "tenant FROM tasks WHERE id = ?3",
	                           TH_ARGS(TH_T(participant), TH_T(key), TH_T(task_id),
	                                   TH_T(fingerprint), TH_I(th_now_ms())),
	                           NULL, "no such task", "idempotency key", e);
}
