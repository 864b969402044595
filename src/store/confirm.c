/* SPDX-License-Identifier: Apache-2.0 */
/* confirm.c — approvals asked with /confirm (UI-4), table `confirmations` (sql/003). */
#include <stdlib.h>
#include <string.h>

#include "store/store.h"
#include "store/store_int.h"
#include "util/ids.h"

void th_confirm_free(struct th_confirm *c)
{
	free(c->id);
	free(c->surface_id);
	free(c->question);
	free(c->asked_by);
	memset(c, 0, sizeof *c);
}

th_err th_store_confirm_create(struct th_store *st, const char *task_id, const char *id,
                               const char *surface_id, const char *question, const char *asked_by,
                               struct th_error *e)
{
	sqlite3_stmt *s;
	th_err err = th_store_stmt(st, TH_STMT_CONFIRM_CREATE,
	                           "INSERT INTO confirmations (id, task_id, surface_id, question, "
	                           "asked_by, created_ms) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
	                           &s, e);
	if (err != TH_OK)
		return err;
	int rc = th_bind_text(s, 1, id, SQLITE_OK);
	rc = th_bind_text(s, 2, task_id, rc);
	rc = th_bind_text(s, 3, surface_id, rc);
	rc = th_bind_text(s, 4, question, rc);
	rc = th_bind_text(s, 5, asked_by, rc);
	rc = th_bind_i64(s, 6, th_now_ms(), rc);
	rc = th_step_done(s, rc);
	return rc == SQLITE_DONE ? TH_OK : th_store_fail(st, rc, "confirmation", e);
}

th_err th_store_confirm_pending(struct th_store *st, const char *task_id, const char *surface_id,
                                struct th_confirm *out, struct th_error *e)
{
	memset(out, 0, sizeof *out);
	sqlite3_stmt *s;
	/* ?2 NULL selects the latest pending question asked in text. */
	th_err err = th_store_stmt(st, TH_STMT_CONFIRM_FIND,
	                           "SELECT id, surface_id, question, asked_by FROM confirmations "
	                           "WHERE task_id = ?1 AND state = 'pending' AND "
	                           "(surface_id = ?2 OR (?2 IS NULL AND surface_id IS NULL)) "
	                           "ORDER BY created_ms DESC LIMIT 1",
	                           &s, e);
	if (err != TH_OK)
		return err;
	int rc = th_bind_text(s, 1, task_id, SQLITE_OK);
	rc = th_bind_text(s, 2, surface_id, rc);
	if (rc == SQLITE_OK)
		rc = sqlite3_step(s);
	if (rc == SQLITE_ROW) {
		if (th_col_dup(s, 0, &out->id) || th_col_dup(s, 1, &out->surface_id) ||
		    th_col_dup(s, 2, &out->question) || th_col_dup(s, 3, &out->asked_by))
			err = th_error_set(e, TH_ENOMEM, "out of memory reading a confirmation");
	} else if (rc == SQLITE_DONE) {
		err = th_error_set(e, TH_ENOTFOUND, "no pending confirmation");
	} else {
		err = th_store_fail(st, rc, "confirmation", e);
	}
	th_store_stmt_done(s);
	if (err != TH_OK)
		th_confirm_free(out);
	return err;
}

th_err th_store_confirm_decide(struct th_store *st, const char *task_id, const char *id,
                               int approved, const char *decided_by, struct th_error *e)
{
	sqlite3_stmt *s;
	th_err err = th_store_stmt(st, TH_STMT_CONFIRM_DECIDE,
	                           "UPDATE confirmations SET state = ?3, decided_by = ?4, "
	                           "decided_ms = ?5 WHERE task_id = ?1 AND id = ?2 AND "
	                           "state = 'pending'",
	                           &s, e);
	if (err != TH_OK)
		return err;
	int rc = th_bind_text(s, 1, task_id, SQLITE_OK);
	rc = th_bind_text(s, 2, id, rc);
	rc = th_bind_text(s, 3, approved ? "approved" : "rejected", rc);
	rc = th_bind_text(s, 4, decided_by, rc);
	rc = th_bind_i64(s, 5, th_now_ms(), rc);
	if (rc == SQLITE_OK)
		rc = sqlite3_step(s);
	int changed = sqlite3_changes(sqlite3_db_handle(s));
	th_store_stmt_done(s);
	if (rc != SQLITE_DONE)
		return th_store_fail(st, rc, "confirmation", e);
	return changed == 1 ? TH_OK
	                    : th_error_set(e, TH_EINVAL, "the question was decided already");
}
