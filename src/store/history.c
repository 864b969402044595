/* SPDX-License-Identifier: Apache-2.0 */
/* history.c — messages, artifacts and the per-task event log (STREAM-3, STREAM-4). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "store/store.h"
#include "store/store_int.h"
#include "util/ids.h"
#include "util/jsonx.h"

th_err th_store_message_append(struct th_store *st, const char *task_id, const char *message_id,
                               const char *role, const char *sender, const char *json,
                               struct th_error *e)
{
	if (task_id == NULL || message_id == NULL || role == NULL || sender == NULL || json == NULL)
		return th_error_set(e, TH_EINVAL,
		                    "message needs task, messageId, role, sender, json");
	sqlite3_stmt *s;
	/* pos = max + 1 is race-free because writers run inside BEGIN IMMEDIATE; the max
	 * comes from the primary-key index, not a scan. */
	th_err err =
	    th_store_stmt(st, TH_STMT_MSG_APPEND,
	                  "INSERT INTO messages (task_id, pos, message_id, role, sender, "
	                  "json, created_ms) VALUES (?1, (SELECT coalesce(max(pos), 0) + 1 "
	                  "FROM messages WHERE task_id = ?1), ?2, ?3, ?4, ?5, ?6)",
	                  &s, e);
	if (err != TH_OK)
		return err;
	int rc = th_bind_text(s, 1, task_id, SQLITE_OK);
	rc = th_bind_text(s, 2, message_id, rc);
	rc = th_bind_text(s, 3, role, rc);
	rc = th_bind_text(s, 4, sender, rc);
	rc = th_bind_text(s, 5, json, rc);
	rc = th_bind_i64(s, 6, th_now_ms(), rc);
	rc = th_step_done(s, rc);
	if (rc == SQLITE_DONE)
		return TH_OK;
	if (rc == SQLITE_CONSTRAINT_UNIQUE || rc == SQLITE_CONSTRAINT_PRIMARYKEY)
		return th_error_set(e, TH_EINVAL, "duplicate messageId %s in task %s", message_id,
		                    task_id);
	if (rc == SQLITE_CONSTRAINT_FOREIGNKEY)
		return th_error_set(e, TH_ENOTFOUND, "task %s not found", task_id);
	return th_store_fail(st, rc, "message append", e);
}

int th_store_message_exists(struct th_store *st, const char *task_id, const char *message_id)
{
	sqlite3_stmt *s;
	if (th_store_stmt(st, TH_STMT_MSG_EXISTS,
	                  "SELECT 1 FROM messages WHERE task_id = ?1 AND message_id = ?2", &s,
	                  NULL) != TH_OK)
		return 0;
	int rc = th_bind_text(s, 1, task_id, SQLITE_OK);
	rc = th_bind_text(s, 2, message_id, rc);
	int found = rc == SQLITE_OK && sqlite3_step(s) == SQLITE_ROW;
	th_store_stmt_done(s);
	return found;
}

th_err th_store_task_by_first_message(struct th_store *st, const char *sender,
                                      const char *message_id, char **task_id, struct th_error *e)
{
	*task_id = NULL;
	if (sender == NULL || message_id == NULL)
		return th_error_set(e, TH_ENOTFOUND, "no message");
	sqlite3_stmt *s;
	/* The oldest such task, in the partial index's own order (rowid ascends as rows are
	 * added): no sort, so no temporary b-tree for every new task. */
	th_err err = th_store_stmt(st, TH_STMT_MSG_FIRST,
	                           "SELECT task_id FROM messages WHERE message_id = ?1 "
	                           "AND sender = ?2 AND pos = 1 ORDER BY rowid LIMIT 1",
	                           &s, e);
	if (err != TH_OK)
		return err;
	int rc = th_bind_text(s, 1, message_id, SQLITE_OK);
	rc = th_bind_text(s, 2, sender, rc);
	if (rc == SQLITE_OK)
		rc = sqlite3_step(s);
	if (rc == SQLITE_ROW)
		err = th_col_dup(s, 0, task_id) == 0 ? TH_OK
		                                     : th_error_set(e, TH_ENOMEM, "out of memory");
	else if (rc == SQLITE_DONE)
		err = th_error_set(e, TH_ENOTFOUND, "no task started by message %s", message_id);
	else
		err = th_store_fail(st, rc, "task by first message", e);
	th_store_stmt_done(s);
	return err;
}

/* Parses every row's column col (stored JSON text) into a new array. */
th_err th_store_message_get(struct th_store *st, const char *task_id, const char *message_id,
                            json_object **out, struct th_error *e)
{
	*out = NULL;
	sqlite3_stmt *s;
	th_err err = th_store_stmt(
	    st, TH_STMT_MSG_GET, "SELECT json FROM messages WHERE task_id = ?1 AND message_id = ?2",
	    &s, e);
	if (err != TH_OK)
		return err;
	int rc = th_bind_text(s, 1, task_id, SQLITE_OK);
	rc = th_bind_text(s, 2, message_id, rc);
	if (rc == SQLITE_OK)
		rc = sqlite3_step(s);
	if (rc == SQLITE_ROW) {
		const char *text = (const char *)sqlite3_column_text(s, 0);
		*out = text != NULL ? json_tokener_parse(text) : NULL;
		if (*out == NULL)
			err = th_error_set(e, TH_EINTERNAL, "message %s of task %s is not JSON",
			                   message_id, task_id);
	} else if (rc == SQLITE_DONE) {
		err =
		    th_error_set(e, TH_ENOTFOUND, "no message %s on task %s", message_id, task_id);
	} else {
		err = th_store_fail(st, rc, "message", e);
	}
	th_store_stmt_done(s);
	return err;
}

/* Each row's JSON text column col as an element of a new array: parsed, or with raw set
 * as th_json_raw (no parse; a broken text would then reach the client as it is stored,
 * and only this program writes these columns). */
static th_err collect(struct th_store *st, sqlite3_stmt *s, int rc, int col, int raw,
                      const char *what, json_object **out, struct th_error *e)
{
	*out = NULL;
	json_object *arr = json_object_new_array();
	th_err err = TH_OK;
	if (arr == NULL)
		err = th_error_set(e, TH_ENOMEM, "out of memory (%s)", what);
	while (err == TH_OK && rc == SQLITE_OK && (rc = sqlite3_step(s)) == SQLITE_ROW) {
		const char *text = (const char *)sqlite3_column_text(s, col);
		json_object *v = text == NULL ? NULL
		                 : raw        ? th_json_raw(text)
		                              : json_tokener_parse(text);
		if (v == NULL) {
			err = th_error_set(e, TH_EINTERNAL, "%s: stored JSON does not parse", what);
			break;
		}
		if (json_object_array_add(arr, v) != 0) {
			json_object_put(v);
			err = th_error_set(e, TH_ENOMEM, "out of memory (%s)", what);
			break;
		}
		rc = SQLITE_OK;
	}
	if (err == TH_OK && rc != SQLITE_DONE)
		err = th_store_fail(st, rc, what, e);
	th_store_stmt_done(s);
	if (err != TH_OK) {
		json_object_put(arr);
		return err;
	}
	*out = arr;
	return TH_OK;
}

static th_err collect_json(struct th_store *st, sqlite3_stmt *s, int rc, int col, const char *what,
                           json_object **out, struct th_error *e)
{
	return collect(st, s, rc, col, 0, what, out, e);
}

static th_err history(struct th_store *st, const char *task_id, int limit, int raw,
                      json_object **out, struct th_error *e)
{
	*out = NULL;
	sqlite3_stmt *s;
	/* The newest `limit`, oldest first: positions are 1, 2, 3, ... per task, so they
	 * are the ones after the last position minus limit, read in primary-key order (no
	 * subquery to materialise, no sort). */
	th_err err = th_store_stmt(st, TH_STMT_MSG_HISTORY,
	                           "SELECT json FROM messages WHERE task_id = ?1 AND pos > "
	                           "(SELECT coalesce(max(pos), 0) FROM messages WHERE task_id = ?1)"
	                           " - ?2 ORDER BY pos",
	                           &s, e);
	if (err != TH_OK)
		return err;
	int rc = th_bind_text(s, 1, task_id, SQLITE_OK);
	rc = th_bind_i64(s, 2, limit >= 0 ? limit : INT64_MAX / 2, rc);
	return collect(st, s, rc, 0, raw, "history", out, e);
}

th_err th_store_history(struct th_store *st, const char *task_id, int limit, json_object **out,
                        struct th_error *e)
{
	return history(st, task_id, limit, 0, out, e);
}

th_err th_store_history_raw(struct th_store *st, const char *task_id, int limit, json_object **out,
                            struct th_error *e)
{
	return history(st, task_id, limit, 1, out, e);
}

int64_t th_store_message_count(struct th_store *st, const char *task_id)
{
	sqlite3_stmt *s;
	if (th_store_stmt(st, TH_STMT_MSG_COUNT, "SELECT count(*) FROM messages WHERE task_id = ?1",
	                  &s, NULL) != TH_OK)
		return -1;
	int64_t n = -1;
	int rc = th_bind_text(s, 1, task_id, SQLITE_OK);
	if (rc == SQLITE_OK && sqlite3_step(s) == SQLITE_ROW)
		n = sqlite3_column_int64(s, 0);
	th_store_stmt_done(s);
	return n;
}

/* ---- artifacts ------------------------------------------------------------------------ */

th_err th_store_artifact_put(struct th_store *st, const char *task_id, const char *artifact_id,
                             const char *json, struct th_error *e)
{
	if (task_id == NULL || artifact_id == NULL || json == NULL)
		return th_error_set(e, TH_EINVAL, "artifact needs task, artifactId and json");
	sqlite3_stmt *s;
	th_err err = th_store_stmt(st, TH_STMT_ART_PUT,
	                           "INSERT INTO artifacts (task_id, artifact_id, json, created_ms, "
	                           "updated_ms) VALUES (?1, ?2, ?3, ?4, ?4) "
	                           "ON CONFLICT (task_id, artifact_id) DO UPDATE SET "
	                           "json = excluded.json, updated_ms = excluded.updated_ms",
	                           &s, e);
	if (err != TH_OK)
		return err;
	int rc = th_bind_text(s, 1, task_id, SQLITE_OK);
	rc = th_bind_text(s, 2, artifact_id, rc);
	rc = th_bind_text(s, 3, json, rc);
	rc = th_bind_i64(s, 4, th_now_ms(), rc);
	rc = th_step_done(s, rc);
	if (rc == SQLITE_DONE)
		return TH_OK;
	if (rc == SQLITE_CONSTRAINT_FOREIGNKEY)
		return th_error_set(e, TH_ENOTFOUND, "task %s not found", task_id);
	return th_store_fail(st, rc, "artifact put", e);
}

th_err th_store_artifacts(struct th_store *st, const char *task_id, json_object **out,
                          struct th_error *e)
{
	*out = NULL;
	sqlite3_stmt *s;
	th_err err = th_store_stmt(st, TH_STMT_ART_LIST,
	                           "SELECT json FROM artifacts WHERE task_id = ?1 "
	                           "ORDER BY created_ms, rowid",
	                           &s, e);
	if (err != TH_OK)
		return err;
	int rc = th_bind_text(s, 1, task_id, SQLITE_OK);
	return collect_json(st, s, rc, 0, "artifacts", out, e);
}

/* ---- events --------------------------------------------------------------------------- */

th_err th_store_event_append(struct th_store *st, const char *task_id, const char *kind,
                             const char *json, int64_t *seq, struct th_error *e)
{
	if (seq != NULL)
		*seq = 0;
	if (task_id == NULL || kind == NULL || json == NULL)
		return th_error_set(e, TH_EINVAL, "event needs task, kind and json");
	if (sqlite3_get_autocommit(st->db))
		return th_error_set(e, TH_EINTERNAL,
		                    "event append outside a transaction (STREAM-3 needs one)");
	sqlite3_stmt *m, *s;
	/* The next seq is the log's own last one plus one: a seek to the end of the task's
	 * events in their primary key. Writers are serialised, and a task's events are only
	 * ever deleted with the task, so it is gap-free and never reused (STREAM-3). */
	th_err err =
	    th_store_stmt(st, TH_STMT_EV_LAST,
	                  "SELECT coalesce(max(seq), 0) FROM events WHERE task_id = ?1", &m, e);
	if (err != TH_OK)
		return err;
	err = th_store_stmt(st, TH_STMT_EV_INSERT,
	                    "INSERT INTO events (task_id, seq, kind, json, created_ms) "
	                    "VALUES (?1, ?2, ?3, ?4, ?5)",
	                    &s, e);
	if (err != TH_OK)
		return err;

	int64_t next = 0;
	int rc = th_bind_text(m, 1, task_id, SQLITE_OK);
	if (rc == SQLITE_OK)
		rc = sqlite3_step(m);
	if (rc == SQLITE_ROW)
		next = sqlite3_column_int64(m, 0) + 1;
	th_store_stmt_done(m);
	if (rc != SQLITE_ROW)
		return th_store_fail(st, rc, "event seq", e);

	rc = th_bind_text(s, 1, task_id, SQLITE_OK);
	rc = th_bind_i64(s, 2, next, rc);
	rc = th_bind_text(s, 3, kind, rc);
	rc = th_bind_text(s, 4, json, rc);
	rc = th_bind_i64(s, 5, th_now_ms(), rc);
	rc = th_step_done(s, rc);
	if (rc == SQLITE_CONSTRAINT_FOREIGNKEY)
		return th_error_set(e, TH_ENOTFOUND, "task %s not found", task_id);
	if (rc != SQLITE_DONE)
		return th_store_fail(st, rc, "event append", e);
	if (seq != NULL)
		*seq = next;
	return TH_OK;
}

void th_events_free(struct th_event *ev, size_t n)
{
	if (ev == NULL)
		return;
	for (size_t i = 0; i < n; i++) {
		free(ev[i].kind);
		free(ev[i].json);
	}
	free(ev);
}

th_err th_store_events_since(struct th_store *st, const char *task_id, int64_t after, int limit,
                             struct th_event **out, size_t *n, struct th_error *e)
{
	*out = NULL;
	*n = 0;
	sqlite3_stmt *s;
	th_err err = th_store_stmt(st, TH_STMT_EV_SINCE,
	                           "SELECT seq, kind, json FROM events WHERE task_id = ?1 "
	                           "AND seq > ?2 ORDER BY seq LIMIT ?3",
	                           &s, e);
	if (err != TH_OK)
		return err;
	int rc = th_bind_text(s, 1, task_id, SQLITE_OK);
	rc = th_bind_i64(s, 2, after, rc);
	rc = th_bind_i64(s, 3, limit > 0 ? limit : -1, rc);
	struct th_event *ev = NULL;
	size_t cnt = 0, cap = 0;
	while (rc == SQLITE_OK && (rc = sqlite3_step(s)) == SQLITE_ROW) {
		if (cnt == cap) {
			size_t ncap = cap == 0 ? 16 : cap * 2;
			struct th_event *grown = realloc(ev, ncap * sizeof *ev);
			if (grown == NULL) {
				rc = SQLITE_NOMEM;
				break;
			}
			ev = grown;
			cap = ncap;
		}
		ev[cnt].seq = sqlite3_column_int64(s, 0);
		ev[cnt].kind = NULL;
		ev[cnt].json = NULL;
		if ((th_col_dup(s, 1, &ev[cnt].kind) | th_col_dup(s, 2, &ev[cnt].json)) != 0) {
			cnt++; /* so th_events_free releases what was copied */
			rc = SQLITE_NOMEM;
			break;
		}
		cnt++;
		rc = SQLITE_OK;
	}
	if (rc != SQLITE_DONE)
		err = rc == SQLITE_NOMEM
		          ? th_error_set(e, TH_ENOMEM, "out of memory reading events")
		          : th_store_fail(st, rc, "events since", e);
	th_store_stmt_done(s);
	if (err != TH_OK) {
		th_events_free(ev, cnt);
		return err;
	}
	*out = ev;
	*n = cnt;
	return TH_OK;
}
