/* SPDX-License-Identifier: Apache-2.0 */
/* stmt.c — the statement layer every store file runs its SQL through (decision-018):
 * the per-connection statement cache, typed parameter arrays (struct th_arg), and
 * column tables (struct th_row_def) that copy a result row into a row struct and free
 * it again, so no store function binds, steps, copies or frees column by column. */
#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/store.h"
#include "store/store_int.h"
#include "util/ids.h"
#include "util/log.h"

/* A busy database is the load's doing and lasts: a store that meets it at every poll or
 * request says so once a second (BUSY_LOG_MS) with how many it did not log meanwhile,
 * rather than a line per failed statement. */
#define BUSY_LOG_MS 1000

void th_store_log_busy(struct th_store *st, const char *what, const char *msg, const char *code)
{
	int64_t now = th_mono_ms();
	long unlogged = 0;
	if (st != NULL) {
		if (st->busy_logged_ms != 0 && now - st->busy_logged_ms < BUSY_LOG_MS) {
			st->busy_unlogged++;
			return;
		}
		unlogged = st->busy_unlogged;
		st->busy_logged_ms = now;
		st->busy_unlogged = 0;
	}
	if (unlogged > 0)
		th_log(TH_LOG_WARN, "database (%s): %s (%s; %ld more not logged in %d ms)", what,
		       msg, code, unlogged, BUSY_LOG_MS);
	else
		th_log(TH_LOG_WARN, "database (%s): %s (%s)", what, msg, code);
}

/* LIM-5: SQLite's own message can name the database file or the schema; it goes to
 * the server's log (th_log, with the request's operation and task), and the client is
 * told only what failed. */
th_err th_store_fail(struct th_store *st, int rc, const char *what, struct th_error *e)
{
	const char *msg =
	    st != NULL && st->db != NULL ? sqlite3_errmsg(st->db) : sqlite3_errstr(rc);
	int primary = rc & 0xff;
	int busy = primary == SQLITE_BUSY || primary == SQLITE_LOCKED;
	th_store_note(st, rc);
	/* Busy and constraint failures are the client's or the load's, not a broken store. */
	if (busy) {
		char code[24];
		snprintf(code, sizeof code, "code %d", rc);
		th_store_log_busy(st, what, msg, code);
	} else if (primary != SQLITE_NOMEM)
		th_log(primary == SQLITE_CONSTRAINT ? TH_LOG_WARN : TH_LOG_ERROR,
		       "database (%s): %s (code %d)", what, msg, rc);
	switch (rc & 0xff) {
	case SQLITE_BUSY:
	case SQLITE_LOCKED:
		return th_error_set(e, TH_EBUSY, "database busy (%s)", what);
	case SQLITE_NOMEM:
		return th_error_set(e, TH_ENOMEM, "out of memory (%s)", what);
	case SQLITE_CONSTRAINT:
		/* Writes check their inputs first; a constraint still failing means a caller
		 * broke the schema's rules, which is bad input rather than a broken store. */
		if (rc == SQLITE_CONSTRAINT_FOREIGNKEY)
			return th_error_set(e, TH_ENOTFOUND, "%s: no such task", what);
		return th_error_set(e, TH_EINVAL, "%s: the database refused the values", what);
	case SQLITE_FULL:
		return th_error_set(e, TH_EINTERNAL,
		                    "database error (%s): the disk or quota is full", what);
	case SQLITE_READONLY:
		return th_error_set(e, TH_EINTERNAL,
		                    "database error (%s): the database is read-only", what);
	default:
		return th_error_set(e, TH_EINTERNAL,
		                    "database error (%s); the server's error log has the details",
		                    what);
	}
}

th_err th_store_stmt(struct th_store *st, enum th_stmt_id id, const char *sql, sqlite3_stmt **out,
                     struct th_error *e)
{
	*out = NULL;
	/* SQLite ends a transaction by itself after SQLITE_FULL, an I/O error or no memory.
	 * A statement run after that would commit on its own: half of a write whose caller
	 * let the first error pass (a lookup that answers "no" on failure) would be stored.
	 * Nothing runs until the caller's rollback (which clears the flag first). */
	if (st->db != NULL && st->conn->txn_begun && sqlite3_get_autocommit(st->db)) {
		th_log(TH_LOG_ERROR,
		       "database %s: the transaction was rolled back by SQLite "
		       "after an error; refusing to go on outside it",
		       st->path);
		return th_error_set(e, TH_EINTERNAL,
		                    "database error: the transaction was rolled back after an "
		                    "earlier error");
	}
	*out = st->stmt[id];
	if (*out != NULL)
		return TH_OK;
	if (st->db == NULL) {
		th_err err = th_store_unopened(st, e);
		if (err != TH_OK)
			return err;
	}
	int rc =
	    sqlite3_prepare_v3(st->db, sql, -1, SQLITE_PREPARE_PERSISTENT, &st->stmt[id], NULL);
	if (rc != SQLITE_OK) {
		th_err err = th_store_fail(st, rc, "prepare", e);
		sqlite3_finalize(st->stmt[id]);
		st->stmt[id] = NULL;
		return err;
	}
	*out = st->stmt[id];
	return TH_OK;
}

void th_store_stmt_done(sqlite3_stmt *s)
{
	if (s == NULL)
		return;
	/* The step's error was already reported; reset repeats it, so its code is moot. */
	(void)sqlite3_reset(s);
	(void)sqlite3_clear_bindings(s);
}

/* Binding helpers: each does nothing and returns rc when rc is already an error, so a run
 * of binds can be chained and checked once. A NULL string binds SQL NULL. The value is
 * not copied (SQLITE_STATIC): it must stay valid until the statement is reset, which
 * every caller does (th_store_stmt_done) before it returns. */
static int th_sql_bind_text(sqlite3_stmt *s, int i, const char *v, int rc)
{
	if (rc != SQLITE_OK)
		return rc;
	if (v == NULL)
		return sqlite3_bind_null(s, i);
	return sqlite3_bind_text(s, i, v, -1, SQLITE_STATIC);
}

static int th_sql_bind_i64(sqlite3_stmt *s, int i, int64_t v, int rc)
{
	if (rc != SQLITE_OK)
		return rc;
	return sqlite3_bind_int64(s, i, v);
}

/* Copies column i as a new string into *out (NULL for SQL NULL); -1 when the copy could
 * not be allocated. */
static int th_col_dup(sqlite3_stmt *s, int i, char **out)
{
	const unsigned char *t = sqlite3_column_text(s, i);
	if (t == NULL) {
		*out = NULL;
		/* NULL text is either SQL NULL or an allocation failure while converting. */
		return sqlite3_column_type(s, i) == SQLITE_NULL ? 0 : -1;
	}
	*out = strdup((const char *)t);
	return *out == NULL ? -1 : 0;
}

static int th_sql_bind_blob(sqlite3_stmt *s, int i, const void *v, size_t len, int rc)
{
	if (rc != SQLITE_OK)
		return rc;
	if (v == NULL)
		return sqlite3_bind_null(s, i);
	return sqlite3_bind_blob64(s, i, v, (sqlite3_uint64)len, SQLITE_STATIC);
}

/* Copies blob column i into *out (malloc, NULL for SQL NULL) and its size into *len; -1
 * when the copy could not be allocated. */
static int th_col_blob(sqlite3_stmt *s, int i, unsigned char **out, size_t *len)
{
	*out = NULL;
	*len = 0;
	if (sqlite3_column_type(s, i) == SQLITE_NULL)
		return 0;
	const void *b = sqlite3_column_blob(s, i);
	int n = sqlite3_column_bytes(s, i);
	if (b == NULL && n > 0)
		return -1;
	/* One byte more so an empty blob is a non-NULL pointer, told apart from SQL NULL. */
	*out = malloc((size_t)n + 1);
	if (*out == NULL)
		return -1;
	if (n > 0)
		memcpy(*out, b, (size_t)n);
	*len = (size_t)n;
	return 0;
}

/* Binds args to ?1..?n; the first failure's code, or SQLITE_OK. */
static int bind_args(sqlite3_stmt *s, const struct th_arg *args, size_t n)
{
	int rc = SQLITE_OK;
	for (size_t k = 0; rc == SQLITE_OK && k < n; k++) {
		int i = (int)k + 1;
		switch (args[k].t) {
		case 'i':
			rc = th_sql_bind_i64(s, i, args[k].i, rc);
			break;
		case 't':
			rc = th_sql_bind_text(s, i, args[k].s, rc);
			break;
		default:
			assert(args[k].t == 'b');
			rc = th_sql_bind_blob(s, i, args[k].s, args[k].len, rc);
			break;
		}
	}
	return rc;
}

th_err th_store_exec(struct th_store *st, enum th_stmt_id id, const char *sql,
                     const struct th_arg *args, size_t n, int64_t *value, int64_t *rows,
                     const char *what, struct th_error *e)
{
	if (st->pg != NULL)
		return th_pg_exec(st, id, sql, args, n, value, rows, what, e);
	sqlite3_stmt *s;
	th_err err = th_store_stmt(st, id, sql, &s, e);
	if (err != TH_OK)
		return err;
	int rc = bind_args(s, args, n);
	int64_t returned = 0;
	while (rc == SQLITE_OK && (rc = sqlite3_step(s)) == SQLITE_ROW) {
		if (value != NULL)
			*value = sqlite3_column_int64(s, 0);
		returned++;
		rc = SQLITE_OK;
	}
	if (rc == SQLITE_DONE && rows != NULL)
		*rows = sqlite3_column_count(s) > 0 ? returned : sqlite3_changes(st->db);
	th_store_stmt_done(s);
	return rc == SQLITE_DONE ? TH_OK : th_store_fail(st, rc, what, e);
}

th_err th_store_exec_later(struct th_store *st, enum th_stmt_id id, const char *sql,
                           const struct th_arg *args, size_t n, int *tally, const char *missing,
                           const char *what, struct th_error *e)
{
	if (st->pg != NULL && th_pg_queues(st))
		return th_pg_exec_later(st, id, sql, args, n, tally, missing, what, e);
	/* Run now (SQLite, or nothing to queue behind): the same outcome, told at once. */
	int64_t rows = 0;
	th_err err = th_store_exec(st, id, sql, args, n, NULL, &rows, what, e);
	if (err != TH_OK)
		return err;
	if (tally != NULL)
		*tally += (int)rows;
	if (missing != NULL && rows == 0)
		return th_error_set(e, TH_ENOTFOUND, "%s", missing);
	return TH_OK;
}

int64_t th_store_round_trips(const struct th_store *st)
{
	return st != NULL && st->pg != NULL ? th_pg_round_trips(st) : 0;
}

int th_store_plan_counts(struct th_store *st, int64_t *custom, int64_t *generic)
{
	*custom = *generic = 0;
	return st->pg != NULL ? th_pg_plan_counts(st, custom, generic) : 0;
}

void th_store_prefetch(struct th_store *st, enum th_stmt_id id, const char *sql,
                       const struct th_arg *args, size_t n)
{
	if (st->pg != NULL)
		th_pg_prefetch(st, id, sql, args, n);
}

/* ---- rows --------------------------------------------------------------------------- */

#define FIELD(row, col, type) ((type *)(void *)((char *)(row) + (col)->off))

/* Copies the current result row of s into row (zeroed first) as def says; -1 when a copy
 * could not be allocated (row is then freed). */
static int read_row(sqlite3_stmt *s, const struct th_row_def *def, void *row)
{
	memset(row, 0, def->size);
	assert((size_t)sqlite3_column_count(s) >= def->ncols);
	int bad = 0;
	for (size_t k = 0; k < def->ncols; k++) {
		const struct th_col *c = &def->cols[k];
		int i = (int)k;
		switch (c->t) {
		case 't':
			bad |= th_col_dup(s, i, FIELD(row, c, char *));
			break;
		case 'i':
			*FIELD(row, c, int64_t) = sqlite3_column_int64(s, i);
			break;
		case 'n':
			*FIELD(row, c, int) = sqlite3_column_int(s, i);
			break;
		case 'e':
			*FIELD(row, c, int) = c->name((const char *)sqlite3_column_text(s, i));
			break;
		default:
			assert(c->t == 'b');
			bad |= th_col_blob(s, i, FIELD(row, c, unsigned char *),
			                   (size_t *)(void *)((char *)row + c->len_off));
			break;
		}
	}
	if (bad) {
		th_row_free(def, row);
		return -1;
	}
	return 0;
}

th_err th_store_one(struct th_store *st, enum th_stmt_id id, const char *sql,
                    const struct th_arg *args, size_t n, const struct th_row_def *def, void *row,
                    const char *what, struct th_error *e)
{
	memset(row, 0, def->size);
	if (st->pg != NULL) {
		void *first;
		size_t count;
		th_err err = th_pg_rows(st, id, sql, args, n, def, &first, &count, 1, what, e);
		if (err != TH_OK)
			return err;
		if (count == 0)
			return th_error_set(e, TH_ENOTFOUND, "no %s", what);
		memcpy(row, first, def->size); /* the row's fields move to row */
		free(first);
		return TH_OK;
	}
	sqlite3_stmt *s;
	th_err err = th_store_stmt(st, id, sql, &s, e);
	if (err != TH_OK)
		return err;
	int rc = bind_args(s, args, n);
	if (rc == SQLITE_OK)
		rc = sqlite3_step(s);
	if (rc == SQLITE_ROW)
		err = read_row(s, def, row) == 0
		          ? TH_OK
		          : th_error_set(e, TH_ENOMEM, "out of memory reading %s", what);
	else if (rc == SQLITE_DONE)
		err = th_error_set(e, TH_ENOTFOUND, "no %s", what);
	else
		err = th_store_fail(st, rc, what, e);
	th_store_stmt_done(s);
	return err;
}

th_err th_store_each(struct th_store *st, enum th_stmt_id id, const char *sql,
                     const struct th_arg *args, size_t n, const struct th_row_def *def, void **rows,
                     size_t *count, const char *what, struct th_error *e)
{
	if (st->pg != NULL)
		return th_pg_rows(st, id, sql, args, n, def, rows, count, SIZE_MAX, what, e);
	*rows = NULL;
	*count = 0;
	sqlite3_stmt *s;
	th_err err = th_store_stmt(st, id, sql, &s, e);
	if (err != TH_OK)
		return err;
	void *arr = NULL;
	size_t cap = 0, cnt = 0;
	int rc = bind_args(s, args, n);
	while (rc == SQLITE_OK && (rc = sqlite3_step(s)) == SQLITE_ROW) {
		if (th_grow(&arr, &cap, cnt, def->size) != 0 ||
		    read_row(s, def, (char *)arr + cnt * def->size) != 0) {
			rc = SQLITE_NOMEM;
			break;
		}
		cnt++;
		rc = SQLITE_OK;
	}
	th_store_stmt_done(s);
	if (rc != SQLITE_DONE) {
		th_rows_free(def, arr, cnt);
		return rc == SQLITE_NOMEM
		           ? th_error_set(e, TH_ENOMEM, "out of memory reading %s", what)
		           : th_store_fail(st, rc, what, e);
	}
	*rows = arr;
	*count = cnt;
	return TH_OK;
}

th_err th_store_text(struct th_store *st, enum th_stmt_id id, const char *sql,
                     const struct th_arg *args, size_t n, char **out, const char *what,
                     struct th_error *e)
{
	struct one_text {
		char *v;
	} row;
	static const struct th_col cols[] = {TH_COL_TEXT(struct one_text, v)};
	static const struct th_row_def def = TH_ROW_DEF(struct one_text, cols);
	th_err err = th_store_one(st, id, sql, args, n, &def, &row, what, e);
	*out = err == TH_OK ? row.v : NULL;
	return err;
}

th_err th_store_texts(struct th_store *st, enum th_stmt_id id, const char *sql,
                      const struct th_arg *args, size_t n,
                      th_err (*fn)(void *arg, const char *const *col, struct th_error *e),
                      void *arg, const char *what, struct th_error *e)
{
	if (st->pg != NULL)
		return th_pg_texts(st, id, sql, args, n, fn, arg, what, e);
	sqlite3_stmt *s;
	th_err err = th_store_stmt(st, id, sql, &s, e);
	if (err != TH_OK)
		return err;
	int ncol = sqlite3_column_count(s);
	int rc = bind_args(s, args, n);
	while (err == TH_OK && rc == SQLITE_OK && (rc = sqlite3_step(s)) == SQLITE_ROW) {
		const char *col[TH_TEXTS_COLS] = {NULL};
		for (int i = 0; i < TH_TEXTS_COLS && i < ncol; i++)
			col[i] = (const char *)sqlite3_column_text(s, i);
		err = fn(arg, col, e);
		rc = SQLITE_OK;
	}
	if (err == TH_OK && rc != SQLITE_DONE)
		err = th_store_fail(st, rc, what, e);
	th_store_stmt_done(s);
	return err;
}

enum th_sql_fail th_store_failed_with(const struct th_store *st)
{
	if (st->pg != NULL) {
		/* SQLSTATE class 23: integrity constraint violation. */
		static const struct {
			const char *state;
			enum th_sql_fail fail;
		} map[] = {{"23505", TH_SQL_FAIL_UNIQUE},
		           {"23503", TH_SQL_FAIL_FOREIGNKEY},
		           {"23514", TH_SQL_FAIL_CHECK},
		           {"23502", TH_SQL_FAIL_NOTNULL}};
		for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
			if (strcmp(st->pg_state, map[i].state) == 0)
				return map[i].fail;
		return TH_SQL_FAIL_OTHER;
	}
	switch (sqlite3_extended_errcode(st->db)) {
	case SQLITE_CONSTRAINT_UNIQUE:
	case SQLITE_CONSTRAINT_PRIMARYKEY:
		return TH_SQL_FAIL_UNIQUE;
	case SQLITE_CONSTRAINT_FOREIGNKEY:
		return TH_SQL_FAIL_FOREIGNKEY;
	case SQLITE_CONSTRAINT_CHECK:
		return TH_SQL_FAIL_CHECK;
	case SQLITE_CONSTRAINT_NOTNULL:
		return TH_SQL_FAIL_NOTNULL;
	default:
		return TH_SQL_FAIL_OTHER;
	}
}
