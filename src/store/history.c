/* SPDX-License-Identifier: Apache-2.0 */
/* history.c — messages, artifacts and the per-task event log (STREAM-3, STREAM-4). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "store/store.h"
#include "store/store_int.h"
#include "util/ids.h"
#include "util/jsonx.h"

/* A row of message_rows or event_rows takes its task's number (migration 014) from the
 * task row it is inserted for: INSERT ... SELECT ... FROM tasks t WHERE t.id = ?1, one
 * look-up, and no row at all for a task that does not exist, which th_store_exec_later's
 * `missing` reports as TH_ENOTFOUND. (A message's on SQLite differs: below.) */
#define NO_TASK "no such task"

th_err th_store_message_append(struct th_store *st, const char *task_id, const char *message_id,
                               const char *role, const char *sender, json_object *msg,
                               struct th_error *e)
{
	if (task_id == NULL || message_id == NULL || role == NULL || sender == NULL || msg == NULL)
		return th_error_set(e, TH_EINVAL,
		                    "message needs task, messageId, role, sender, json");
	/* STORE-10: kept without the task's ids, and without messageId and role where they
	 * lead (decision-061), which reading puts back (refs.c). */
	char *packed = NULL; /* free */
	th_err err = th_ref_msg_pack(msg, message_id, role, &packed, e);
	if (err != TH_OK)
		return err;
	/* pos = max + 1 is race-free because writers run inside BEGIN IMMEDIATE; the max
	 * comes from the primary-key index, not a scan. */
	/* decision-054: queued on PostgreSQL; a duplicate messageId is found before
	 * (th_store_message_exists, under the task's lock), not by this refusal. */
	/* On SQLite an INSERT ... SELECT that reads message_rows (the next pos) would copy the
	 * SELECT's row into a temporary b-tree first (decision-077): VALUES there, whose task
	 * number is NULL for no task, which the NOT NULL column refuses at once. */
	err = th_store_exec_later(
	    st, TH_STMT_MSG_APPEND,
	    th_sql_for(st,
	               "INSERT INTO message_rows (task_num, pos, message_id, role, sender, json, "
	               "created_ms) VALUES ((SELECT t.num FROM tasks t WHERE t.id = ?1), "
	               "(SELECT coalesce(max(m.pos), 0) + 1 FROM message_rows m "
	               "WHERE m.task_num = (SELECT t.num FROM tasks t WHERE t.id = ?1)), "
	               "?2, ?3, ?4, ?5, ?6)",
	               "INSERT INTO message_rows (task_num, pos, message_id, role, sender, json, "
	               "created_ms) SELECT t.num, (SELECT coalesce(max(m.pos), 0) + 1 FROM "
	               "message_rows m WHERE m.task_num = t.num), ?2, ?3, ?4, ?5, ?6 FROM tasks t "
	               "WHERE t.id = ?1"),
	    TH_ARGS(TH_T(task_id), TH_T(message_id), TH_T(role), TH_T(sender), TH_T(packed),
	            TH_I(th_now_ms())),
	    NULL, NO_TASK, "message append", e);
	free(packed);
	if (err == TH_OK)
		return TH_OK;
	if (err == TH_ENOTFOUND || th_store_failed_with(st) == TH_SQL_FAIL_NOTNULL)
		return th_error_set(e, TH_ENOTFOUND, "task %s not found", task_id);
	if (th_store_failed_with(st) == TH_SQL_FAIL_UNIQUE)
		return th_error_set(e, TH_EINVAL, "duplicate messageId %s in task %s", message_id,
		                    task_id);
	return err;
}

/* (task_id, message_id) is unique: at most one row. */
#define MSG_EXISTS_SQL "SELECT 1 FROM messages WHERE task_id = ?1 AND message_id = ?2"

int th_store_message_exists(struct th_store *st, const char *task_id, const char *message_id)
{
	int64_t found = 0;
	if (th_store_exec(st, TH_STMT_MSG_EXISTS, MSG_EXISTS_SQL,
	                  TH_ARGS(TH_T(task_id), TH_T(message_id)), NULL, &found, "message exists",
	                  NULL) != TH_OK)
		return 0;
	return found > 0;
}

void th_store_message_exists_soon(struct th_store *st, const char *task_id, const char *message_id)
{
	th_store_prefetch(st, TH_STMT_MSG_EXISTS, MSG_EXISTS_SQL,
	                  TH_ARGS(TH_T(task_id), TH_T(message_id)));
}

th_err th_store_task_by_first_message(struct th_store *st, const char *tenant, const char *sender,
                                      const char *message_id, char **task_id, struct th_error *e)
{
	*task_id = NULL;
	if (sender == NULL || message_id == NULL)
		return th_error_set(e, TH_ENOTFOUND, "no message");
	/* The oldest such task, in the partial index's own order (rowid ascends as rows are
	 * added): no sort, so no temporary b-tree for every new task. */
	th_err err = th_store_text(
	    st, TH_STMT_MSG_FIRST,
	    "SELECT task_id FROM messages WHERE message_id = ?1 "
	    "AND sender = ?2 AND pos = 1 AND (SELECT t.tenant FROM tasks t "
	    "WHERE t.id = messages.task_id) = ?3 ORDER BY rowid LIMIT 1",
	    TH_ARGS(TH_T(message_id), TH_T(sender), TH_T(tenant != NULL ? tenant : "")), task_id,
	    "task by first message", e);
	if (err == TH_ENOTFOUND)
		return th_error_set(e, TH_ENOTFOUND, "no task started by message %s", message_id);
	return err;
}

/* A message row's text and role (th_store_message_get). */
struct msg_text {
	char *json; /* free (th_row_free) */
	char *role; /* free (th_row_free) */
};
static const struct th_col msg_text_cols[] = {
    TH_COL_TEXT(struct msg_text, json),
    TH_COL_TEXT(struct msg_text, role),
};
static const struct th_row_def msg_text_row = TH_ROW_DEF(struct msg_text, msg_text_cols);

/* The stored JSON of one message, parsed. */
th_err th_store_message_get(struct th_store *st, const char *task_id, const char *message_id,
                            json_object **out, struct th_error *e)
{
	*out = NULL;
	struct msg_text m = {0};
	th_err err =
	    th_store_one(st, TH_STMT_MSG_GET,
	                 "SELECT json, role FROM messages WHERE task_id = ?1 "
	                 "AND message_id = ?2",
	                 TH_ARGS(TH_T(task_id), TH_T(message_id)), &msg_text_row, &m, "message", e);
	if (err == TH_ENOTFOUND)
		return th_error_set(e, TH_ENOTFOUND, "no message %s on task %s", message_id,
		                    task_id);
	char *ctx = NULL; /* free */
	if (err == TH_OK)
		err = th_store_task_context(st, task_id, &ctx, e);
	if (err != TH_OK) {
		th_row_free(&msg_text_row, &m);
		return err;
	}
	char *full = m.json != NULL ? th_ref_msg_unpack(m.json, message_id, m.role, task_id, ctx)
	                            : NULL; /* free */
	*out = full != NULL ? json_tokener_parse(full) : NULL;
	free(full);
	free(ctx);
	th_row_free(&msg_text_row, &m);
	if (*out == NULL)
		return th_error_set(e, TH_EINTERNAL, "message %s of task %s is not JSON",
		                    message_id, task_id);
	return TH_OK;
}

/* Collects rows' JSON texts into an array (th_store_texts' fn): parsed, or with raw set
 * as th_json_raw (no parse; a broken text would then reach the client as it is stored,
 * and only this program writes these columns). A history message's row is
 * (json, message_id, role). */
struct collect {
	json_object *arr; /* owned by the caller of th_store_texts */
	int raw;
	const char *what;
	const char *task_id;    /* history messages: their task and its context, to put */
	const char *context_id; /* back (th_ref_msg_unpack); NULL for other rows */
};

static th_err collect_one(void *arg, const char *const *col, struct th_error *e)
{
	struct collect *c = arg;
	const char *text = col[0];
	char *full = NULL; /* free */
	if (text != NULL && c->context_id != NULL) {
		full = th_ref_msg_unpack(text, col[1], col[2], c->task_id, c->context_id);
		if (full == NULL)
			return th_error_set(e, TH_ENOMEM, "out of memory (%s)", c->what);
		text = full;
	}
	json_object *v = text == NULL ? NULL
	                 : c->raw     ? th_json_raw(text)
	                              : json_tokener_parse(text);
	free(full);
	if (v == NULL)
		return th_error_set(e, TH_EINTERNAL, "%s: stored JSON does not parse", c->what);
	if (json_object_array_add(c->arr, v) != 0) {
		json_object_put(v);
		return th_error_set(e, TH_ENOMEM, "out of memory (%s)", c->what);
	}
	return TH_OK;
}

/* The first column of each row of statement id, as a new JSON array in *out; with
 * task_id, the rows are that task's history messages (unpacked). */
static th_err collect(struct th_store *st, enum th_stmt_id id, const char *sql,
                      const struct th_arg *args, size_t n, int raw, const char *what,
                      const char *task_id, const char *context_id, json_object **out,
                      struct th_error *e)
{
	*out = NULL;
	char *ctx = NULL; /* free */
	if (task_id != NULL && context_id == NULL) {
		th_err rc = th_store_task_context(st, task_id, &ctx, e);
		if (rc == TH_ENOTFOUND) {
			th_error_clear(e);
			*out = json_object_new_array(); /* no task, no history */
			return *out != NULL
			           ? TH_OK
			           : th_error_set(e, TH_ENOMEM, "out of memory (%s)", what);
		}
		if (rc != TH_OK)
			return rc;
	}
	struct collect c = {json_object_new_array(), raw, what, task_id,
	                    context_id != NULL ? context_id : ctx};
	if (c.arr == NULL) {
		free(ctx);
		return th_error_set(e, TH_ENOMEM, "out of memory (%s)", what);
	}
	th_err err = th_store_texts(st, id, sql, args, n, collect_one, &c, what, e);
	free(ctx);
	if (err != TH_OK) {
		json_object_put(c.arr);
		return err;
	}
	*out = c.arr;
	return TH_OK;
}

/* The newest `limit`, oldest first: positions are 1, 2, 3, ... per task, so they are the
 * ones after the last position minus limit, read in primary-key order (no subquery to
 * materialise, no sort). Read from message_rows, not the messages view: a plain-CGI
 * GetTask prepares it afresh each time, and expanding the view twice was a third of
 * its preparation (decision-095). */
#define MSG_HISTORY_SQL                                                                            \
	"SELECT m.json, m.message_id, m.role FROM tasks t JOIN message_rows m ON m.task_num = "    \
	"t.num WHERE t.id = ?1 AND m.pos > " TH_SQL_LAST_POS " - ?2 ORDER BY m.pos"

th_err th_store_history_of(struct th_store *st, const char *task_id, const char *context_id,
                           int limit, int raw, json_object **out, struct th_error *e)
{
	return collect(st, TH_STMT_MSG_HISTORY, MSG_HISTORY_SQL,
	               TH_ARGS(TH_T(task_id), TH_I(limit >= 0 ? limit : INT64_MAX / 2)), raw,
	               "history", task_id, context_id, out, e);
}

void th_store_history_soon(struct th_store *st, const char *task_id, int limit)
{
	th_store_prefetch(st, TH_STMT_MSG_HISTORY, MSG_HISTORY_SQL,
	                  TH_ARGS(TH_T(task_id), TH_I(limit >= 0 ? limit : INT64_MAX / 2)));
}

th_err th_store_history(struct th_store *st, const char *task_id, int limit, json_object **out,
                        struct th_error *e)
{
	return th_store_history_of(st, task_id, NULL, limit, 0, out, e);
}

th_err th_store_history_raw(struct th_store *st, const char *task_id, int limit, json_object **out,
                            struct th_error *e)
{
	return th_store_history_of(st, task_id, NULL, limit, 1, out, e);
}

th_err th_store_history_range(struct th_store *st, const char *task_id, int64_t after, int64_t upto,
                              int raw, json_object **out, struct th_error *e)
{
	return collect(st, TH_STMT_MSG_RANGE,
	               "SELECT json, message_id, role FROM messages WHERE task_id = ?1 "
	               "AND pos > ?2 AND pos <= ?3 ORDER BY pos",
	               TH_ARGS(TH_T(task_id), TH_I(after), TH_I(upto)), raw, "history", task_id,
	               NULL, out, e);
}

int64_t th_store_history_last_pos(struct th_store *st, const char *task_id)
{
	int64_t n = -1;
	if (th_store_exec(st, TH_STMT_MSG_LAST_POS,
	                  "SELECT coalesce(max(pos), 0) FROM messages WHERE task_id = ?1",
	                  TH_ARGS(TH_T(task_id)), &n, NULL, "history end", NULL) != TH_OK)
		return -1;
	return n;
}

int64_t th_store_message_count(struct th_store *st, const char *task_id)
{
	int64_t n = -1;
	if (th_store_exec(st, TH_STMT_MSG_COUNT, "SELECT count(*) FROM messages WHERE task_id = ?1",
	                  TH_ARGS(TH_T(task_id)), &n, NULL, "message count", NULL) != TH_OK)
		return -1;
	return n;
}

/* ---- artifacts ------------------------------------------------------------------------ */

th_err th_store_artifact_put(struct th_store *st, const char *task_id, const char *artifact_id,
                             const char *json, struct th_error *e)
{
	if (task_id == NULL || artifact_id == NULL || json == NULL)
		return th_error_set(e, TH_EINVAL, "artifact needs task, artifactId and json");
	th_err err =
	    th_store_exec(st, TH_STMT_ART_PUT,
	                  "INSERT INTO artifacts (task_id, artifact_id, json, created_ms, "
	                  "updated_ms) VALUES (?1, ?2, ?3, ?4, ?4) "
	                  "ON CONFLICT (task_id, artifact_id) DO UPDATE SET "
	                  "json = excluded.json, updated_ms = excluded.updated_ms",
	                  TH_ARGS(TH_T(task_id), TH_T(artifact_id), TH_T(json), TH_I(th_now_ms())),
	                  NULL, NULL, "artifact put", e);
	if (err != TH_OK && th_store_failed_with(st) == TH_SQL_FAIL_FOREIGNKEY)
		return th_error_set(e, TH_ENOTFOUND, "task %s not found", task_id);
	return err;
}

#define ART_LIST_SQL "SELECT json FROM artifacts WHERE task_id = ?1 ORDER BY created_ms, rowid"

th_err th_store_artifacts(struct th_store *st, const char *task_id, json_object **out,
                          struct th_error *e)
{
	return collect(st, TH_STMT_ART_LIST, ART_LIST_SQL, TH_ARGS(TH_T(task_id)), 0, "artifacts",
	               NULL, NULL, out, e);
}

void th_store_artifacts_soon(struct th_store *st, const char *task_id)
{
	th_store_prefetch(st, TH_STMT_ART_LIST, ART_LIST_SQL, TH_ARGS(TH_T(task_id)));
}

/* ---- events --------------------------------------------------------------------------- */

#define EV_LAST_SQL "SELECT coalesce(max(seq), 0) FROM events WHERE task_id = ?1"

th_err th_store_event_append(struct th_store *st, const char *task_id, const char *kind,
                             enum th_event_ends ends, json_object *event, int64_t *seq,
                             struct th_error *e)
{
	if (seq != NULL)
		*seq = 0;
	if (task_id == NULL || kind == NULL || event == NULL)
		return th_error_set(e, TH_EINVAL, "event needs task, kind and json");
	/* STREAM-3 numbers a task's events inside the write that appends them. */
	th_err err = th_store_need_txn(st, "event append", e);
	if (err != TH_OK)
		return err;
	/* The next seq is the log's own last one plus one: a seek to the end of the task's
	 * events in their primary key. Writers are serialised, and a task's events are only
	 * ever deleted with the task, so it is gap-free and never reused (STREAM-3). */
	int64_t last = 0;
	err = th_store_exec(st, TH_STMT_EV_LAST, EV_LAST_SQL, TH_ARGS(TH_T(task_id)), &last, NULL,
	                    "event seq", e);
	if (err != TH_OK)
		return err;
	int64_t next = last + 1;
	/* STORE-10: the history messages it carries as references, its timestamp against
	 * the row's time (refs.c). */
	int64_t now = th_now_ms();
	char *ctx = NULL;    /* free */
	char *packed = NULL; /* free */
	err = th_store_task_context(st, task_id, &ctx, e);
	if (err == TH_OK)
		err = th_ref_event_pack(st, task_id, ctx, event, now, &packed, e);
	free(ctx);
	if (err != TH_OK)
		return err;
	err = th_store_exec_later(
	    st, TH_STMT_EV_INSERT,
	    "INSERT INTO event_rows (task_num, seq, kind, json, created_ms, "
	    "ends) SELECT num, ?2, ?3, ?4, ?5, ?6 FROM tasks WHERE id = ?1",
	    TH_ARGS(TH_T(task_id), TH_I(next), TH_T(kind), TH_T(packed), TH_I(now), TH_I(ends)),
	    NULL, NO_TASK, "event append", e);
	free(packed);
	if (err == TH_ENOTFOUND)
		return th_error_set(e, TH_ENOTFOUND, "task %s not found", task_id);
	if (err != TH_OK)
		return err;
	if (seq != NULL)
		*seq = next;
	return TH_OK;
}

int th_event_is_mutation(const char *kind)
{
	return kind != NULL && (strcmp(kind, "task") == 0 || strcmp(kind, "status") == 0 ||
	                        strcmp(kind, "artifact") == 0);
}

/* A2A-11-GEN-1 (decision-073): the generation is the event sequence with the events that
 * are no mutation (messages, side-channel messages) left out, counted in the task's own
 * range of the events key; the same rule as th_event_is_mutation. */
#define EV_GEN_SQL                                                                                 \
	"SELECT count(*) FROM events WHERE task_id = ?1 AND seq <= ?2 AND "                        \
	"kind IN ('task', 'status', 'artifact')"

th_err th_store_task_generation(struct th_store *st, const char *task_id, int64_t upto,
                                int64_t *generation, int64_t *last_seq, struct th_error *e)
{
	*generation = 0;
	if (last_seq != NULL) {
		*last_seq = 0;
		th_err rc = th_store_exec(st, TH_STMT_EV_LAST, EV_LAST_SQL, TH_ARGS(TH_T(task_id)),
		                          last_seq, NULL, "event seq", e);
		if (rc != TH_OK)
			return rc;
	}
	return th_store_exec(st, TH_STMT_EV_GEN, EV_GEN_SQL, TH_ARGS(TH_T(task_id), TH_I(upto)),
	                     generation, NULL, "task generation", e);
}

void th_store_task_generation_soon(struct th_store *st, const char *task_id, int64_t upto)
{
	th_store_prefetch(st, TH_STMT_EV_LAST, EV_LAST_SQL, TH_ARGS(TH_T(task_id)));
	th_store_prefetch(st, TH_STMT_EV_GEN, EV_GEN_SQL, TH_ARGS(TH_T(task_id), TH_I(upto)));
}

static const struct th_col event_cols[] = {
    TH_COL_I64(struct th_event, seq),        TH_COL_TEXT(struct th_event, kind),
    TH_COL_TEXT(struct th_event, json),      TH_COL_INT(struct th_event, ends),
    TH_COL_I64(struct th_event, created_ms),
};
static const struct th_row_def event_row = TH_ROW_DEF(struct th_event, event_cols);

void th_events_free(struct th_event *ev, size_t n)
{
	if (ev == NULL)
		return;
	th_rows_free(&event_row, ev, n);
}

th_err th_store_events_since(struct th_store *st, const char *task_id, int64_t after, int limit,
                             th_event_whole_fn *whole, struct th_event **out, size_t *n,
                             struct th_error *e)
{
	*out = NULL;
	*n = 0;
	size_t cnt = 0;
	void *ev = NULL; /* struct th_event[cnt]; th_events_free, or the caller's */
	th_err err =
	    th_store_each(st, TH_STMT_EV_SINCE,
	                  "SELECT seq, kind, json, ends, created_ms FROM events WHERE task_id = ?1 "
	                  "AND seq > ?2 ORDER BY seq LIMIT ?3",
	                  TH_ARGS(TH_T(task_id), TH_I(after), TH_I(limit > 0 ? limit : -1)),
	                  &event_row, &ev, &cnt, "events since", e);
	if (err != TH_OK || cnt == 0) {
		if (err != TH_OK)
			th_events_free(ev, cnt);
		return err;
	}
	/* STORE-10: each event as it was recorded, its references filled in (refs.c), and
	 * whatever the reader keeps lean put back by whole. */
	struct th_event *evs = ev;
	char *ctx = NULL; /* free */
	err = th_store_task_context(st, task_id, &ctx, e);
	for (size_t i = 0; err == TH_OK && i < cnt; i++) {
		char *full = NULL;
		err = th_ref_event_unpack(st, task_id, ctx, evs[i].json, evs[i].created_ms, whole,
		                          &full, e);
		if (err == TH_OK) {
			free(evs[i].json);
			evs[i].json = full;
		}
	}
	free(ctx);
	if (err != TH_OK) {
		th_events_free(evs, cnt);
		return err;
	}
	*out = evs;
	*n = cnt;
	return TH_OK;
}
