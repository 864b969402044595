/* SPDX-License-Identifier: Apache-2.0 */
/* store_int.h — what the store's source files share and nobody else sees: the
 * connection struct, the prepared-statement cache and small binding helpers. */
#ifndef TH_STORE_STORE_INT_H
#define TH_STORE_STORE_INT_H

#include <sqlite3.h>
#include <stddef.h>
#include <stdint.h>

#include "store/store.h"

/* Every fixed statement of the store. Each is prepared on first use with
 * SQLITE_PREPARE_PERSISTENT and kept until th_store_close. */
enum th_stmt_id {
	TH_STMT_BEGIN,
	TH_STMT_COMMIT,
	TH_STMT_ROLLBACK,
	TH_STMT_BEGIN_READ,
	TH_STMT_DATA_VERSION,
	TH_STMT_TASK_INSERT,
	TH_STMT_TASK_GET,
	TH_STMT_TASK_SET_STATUS,
	TH_STMT_TASK_SET_EXT,
	TH_STMT_TASK_LIST,
	TH_STMT_TASK_LIST_AFTER,
	TH_STMT_TASK_COUNT,
	TH_STMT_TASK_TOTAL,
	TH_STMT_PART_PUT,
	TH_STMT_PART_ROLE,
	TH_STMT_PART_LIST,
	TH_STMT_MSG_APPEND,
	TH_STMT_MSG_EXISTS,
	TH_STMT_MSG_GET,
	TH_STMT_MSG_FIRST,
	TH_STMT_MSG_HISTORY,
	TH_STMT_MSG_COUNT,
	TH_STMT_ART_PUT,
	TH_STMT_ART_LIST,
	TH_STMT_EV_LAST,
	TH_STMT_EV_INSERT,
	TH_STMT_EV_SINCE,
	TH_STMT_SUB_LINK,
	TH_STMT_SUB_LIST,
	TH_STMT_SUB_RESOLVE,
	TH_STMT_TURN_CREATE,
	TH_STMT_TURN_START,
	TH_STMT_TURN_RECORD,
	TH_STMT_TURN_GET,
	TH_STMT_TURN_FINISH,
	TH_STMT_TURNS_CUT,
	TH_STMT_TURN_IS_CUT,
	/* 002: collaboration, recovery, push, operator queries */
	TH_STMT_CHAN_CREATE,
	TH_STMT_CHAN_ADD_MEMBER,
	TH_STMT_CHAN_IS_MEMBER,
	TH_STMT_CHAN_MEMBERS,
	TH_STMT_CHAN_APPEND,
	TH_STMT_CHAN_LIST,
	TH_STMT_HELP_CREATE,
	TH_STMT_HELP_GET,
	TH_STMT_HELP_PENDING,
	TH_STMT_HELP_PENDING_FOR,
	TH_STMT_HELP_ANSWER,
	TH_STMT_HELP_STATE,
	TH_STMT_HELP_CANCEL,
	TH_STMT_PLAN_DELETE,
	TH_STMT_PLAN_INSERT,
	TH_STMT_PLAN_UPDATE,
	TH_STMT_PLAN_LIST,
	TH_STMT_SUB_NEXT,
	TH_STMT_SUB_PARENT,
	TH_STMT_A2UI_GET,
	TH_STMT_A2UI_PUT,
	TH_STMT_A2UI_NEXT,
	TH_STMT_TURNS_EXPIRED,
	TH_STMT_TURN_RELEASE,
	TH_STMT_TURN_TAKEOVER,
	TH_STMT_TURN_HOLD,
	TH_STMT_TURNS_EXPIRED_TASK,
	TH_STMT_TURN_GIVE_UP,
	TH_STMT_TURN_STATE,
	TH_STMT_PUSH_PUT,
	TH_STMT_PUSH_GET,
	TH_STMT_PUSH_LIST,
	TH_STMT_PUSH_DELETE,
	TH_STMT_PUSH_ENQUEUE,
	TH_STMT_PUSH_CLAIM,
	TH_STMT_PUSH_DELIVERED,
	TH_STMT_PUSH_RETRY,
	TH_STMT_PUSH_DEAD,
	TH_STMT_PUSH_PRUNE,
	TH_STMT_TASK_EXISTS,
	TH_STMT_OVERVIEW,
	TH_STMT_PURGE,
	/* 003: /confirm */
	TH_STMT_CONFIRM_CREATE,
	TH_STMT_CONFIRM_FIND,
	TH_STMT_CONFIRM_DECIDE,
	TH_STMT_PUSH_ANY_DUE,
	TH_STMT_CHAN_ANY,
	/* group commit (group.c): one member's part of a shared write transaction */
	TH_STMT_SAVEPOINT,
	TH_STMT_RELEASE,
	TH_STMT_ROLLBACK_TO,
	TH_STMT_COUNT_
};

struct th_store {
	sqlite3 *db;         /* the connection statements run on now: own_db, or inside a
	                        group transaction the group's writer (borrowed) */
	sqlite3_stmt **stmt; /* that connection's statement cache: own_stmt or the writer's */
	sqlite3 *own_db;     /* sqlite3_close_v2 (th_store_close) */
	sqlite3_stmt *own_stmt[TH_STMT_COUNT_]; /* sqlite3_finalize each (th_store_close) */
	struct th_store_group *group;           /* borrowed (th_store_join); NULL: this
	                                           connection writes for itself */
	int in_group;          /* 1 between th_store_begin and its commit/rollback in a group */
	int64_t group_writes;  /* rows this store's group transactions committed */
	char *path;            /* free (th_store_close) */
	char *wal_path;        /* path + "-wal"; free (th_store_close) */
	int64_t page_size;     /* PRAGMA page_size, read at open */
	uint64_t rng;          /* back-off jitter state, seeded per process */
	int busy_timeout_ms;   /* the configured busy timeout */
	int busy_limit_ms;     /* how long busy_wait waits now: the timeout, or
	                          th_store_wal_tend's shorter one */
	int64_t busy_since_ms; /* monotonic start of the current wait */
	int wal_frames;        /* frames in the WAL after this connection's
	                          last commit (the WAL hook) */
	int64_t wal_retry_ms;  /* monotonic time before which a failed reset
	                          is not tried again */
	int pushes_queued;     /* deliveries this connection queued since
	                          th_store_push_take_queued (a rolled-back
	                          one included: it only costs a look) */
};

/* The cached statement id into *out, prepared from sql on first use (each call site
 * passes the same text for an id, so the SQL stays next to the code that reads its
 * columns). */
th_err th_store_stmt(struct th_store *st, enum th_stmt_id id, const char *sql, sqlite3_stmt **out,
                     struct th_error *e);
/* The plain transaction calls on one connection: th_store_begin, th_store_commit and
 * th_store_rollback (group.c) use them for a store of its own and for a group's writer. */
th_err th_store_begin_own(struct th_store *st, struct th_error *e);
th_err th_store_commit_own(struct th_store *st, struct th_error *e);
void th_store_rollback_own(struct th_store *st);

/* Resets s and clears its bindings so it holds no read transaction open. */
void th_store_stmt_done(sqlite3_stmt *s);
/* Maps an SQLite result code to th_err and writes a message with sqlite3_errmsg:
 * BUSY/LOCKED -> TH_EBUSY, NOMEM -> TH_ENOMEM, anything else -> TH_EINTERNAL. */
th_err th_store_fail(struct th_store *st, int rc, const char *what, struct th_error *e);

/* Binding helpers: each does nothing and returns rc when rc is already an error, so
 * a run of binds can be chained and checked once. A NULL string binds SQL NULL. The
 * value is not copied (SQLITE_STATIC): it must stay valid until the statement is reset,
 * which every caller does (th_store_stmt_done) before it returns. */
int th_sql_bind_text(sqlite3_stmt *s, int i, const char *v, int rc);
int th_sql_bind_i64(sqlite3_stmt *s, int i, int64_t v, int rc);
/* Binds len bytes (SQL NULL when v is NULL). */
int th_sql_bind_blob(sqlite3_stmt *s, int i, const void *v, size_t len, int rc);

/* A typed statement parameter, bound at its place in an array (the first at ?1): the
 * compiler checks each one, unlike a format string of varargs. TH_T(NULL) binds NULL. */
struct th_arg {
	char t;        /* 't' text, 'i' integer, 'b' blob */
	const void *s; /* 't', 'b': borrowed for the call */
	int64_t i;     /* 'i' */
	size_t len;    /* 'b': bytes at s */
};
/* TH_T takes a string only: the compiler refuses anything else. */
static inline const void *th_arg_text(const char *v)
{
	return v;
}
#define TH_T(v) ((struct th_arg){.t = 't', .s = th_arg_text(v)})
#define TH_I(v) ((struct th_arg){.t = 'i', .i = (int64_t)(v)})
#define TH_B(v, n) ((struct th_arg){.t = 'b', .s = (v), .len = (n)})
/* An array of th_arg and its length, for the two parameters of th_store_exec. */
#define TH_ARGS(...)                                                                               \
	(const struct th_arg[]){__VA_ARGS__},                                                      \
	    sizeof((const struct th_arg[]){__VA_ARGS__}) / sizeof(struct th_arg)

/* Runs statement id (prepared from sql on first use) with args bound to ?1..?n, and resets
 * it. A statement may return one integer column (RETURNING …): *value receives it and
 * *rows counts the rows returned, else *rows is sqlite3_changes (value and rows may be
 * NULL). A failure is reported by th_store_fail naming what. */
th_err th_store_exec(struct th_store *st, enum th_stmt_id id, const char *sql,
                     const struct th_arg *args, size_t n, int64_t *value, int64_t *rows,
                     const char *what, struct th_error *e);

/* A column table: where each column of a result row goes in a row struct, by type.
 * Column k of the SELECT fills cols[k]. The TH_COL_* macros check at compile time that
 * the field has the type the column kind writes (a wrong one does not compile). */
struct th_col {
	char t;                     /* 't' text: char *, a copy (NULL for SQL NULL);
	                               'i' int64_t; 'n' int; 'e' int from a name (name);
	                               'b' blob: unsigned char * copy, its size at len_off */
	size_t off;                 /* the field */
	size_t len_off;             /* 'b': the size_t field */
	int (*name)(const char *v); /* 'e': the stored name to its value */
};
struct th_row_def {
	const struct th_col *cols;
	size_t ncols;
	size_t size; /* sizeof the row struct */
};
/* offsetof(T, f), refused at compile time unless T.f has type want. */
#define TH_FIELD_OF(T, f, want)                                                                    \
	(offsetof(T, f) +                                                                          \
	 0 * sizeof(char[__builtin_types_compatible_p(__typeof__(((T *)0)->f), want) ? 1 : -1]))
#define TH_COL_TEXT(T, f)                                                                          \
	{                                                                                          \
		.t = 't', .off = TH_FIELD_OF(T, f, char *)                                         \
	}
#define TH_COL_I64(T, f)                                                                           \
	{                                                                                          \
		.t = 'i', .off = TH_FIELD_OF(T, f, int64_t)                                        \
	}
#define TH_COL_INT(T, f)                                                                           \
	{                                                                                          \
		.t = 'n', .off = TH_FIELD_OF(T, f, int)                                            \
	}
#define TH_COL_ENUM(T, f, fn)                                                                      \
	{                                                                                          \
		.t = 'e', .off = TH_FIELD_OF(T, f, int), .name = (fn)                              \
	}
#define TH_COL_BLOB(T, f, lf)                                                                      \
	{                                                                                          \
		.t = 'b', .off = TH_FIELD_OF(T, f, unsigned char *),                               \
		.len_off = TH_FIELD_OF(T, lf, size_t)                                              \
	}
#define TH_ROW_DEF(T, cols)                                                                        \
	{                                                                                          \
		(cols), sizeof(cols) / sizeof((cols)[0]), sizeof(T)                                \
	}

/* The first row of statement id (args bound as th_store_exec does) into row, a def->size
 * struct zeroed first: TH_OK, TH_ENOTFOUND ("no <what>") when there is none, or the
 * failure. The caller frees row with th_row_free(def, row). */
th_err th_store_one(struct th_store *st, enum th_stmt_id id, const char *sql,
                    const struct th_arg *args, size_t n, const struct th_row_def *def, void *row,
                    const char *what, struct th_error *e);
/* Every row, as a new array of *count structs in *rows (NULL when none); freed by
 * th_rows_free(def, *rows, *count). */
th_err th_store_each(struct th_store *st, enum th_stmt_id id, const char *sql,
                     const struct th_arg *args, size_t n, const struct th_row_def *def, void **rows,
                     size_t *count, const char *what, struct th_error *e);
/* The first row's first column as a new string into *out (free; NULL for SQL NULL), or
 * TH_ENOTFOUND as th_store_one. */
th_err th_store_text(struct th_store *st, enum th_stmt_id id, const char *sql,
                     const struct th_arg *args, size_t n, char **out, const char *what,
                     struct th_error *e);
/* After a helper above failed: the SQLite extended result code of the failure (a
 * statement's reset leaves it on the connection), for a caller that words a constraint
 * failure itself (SQLITE_CONSTRAINT_UNIQUE: "duplicate …", _FOREIGNKEY: "no task …"). */
static inline int th_store_failed_with(const struct th_store *st)
{
	return sqlite3_extended_errcode(st->db);
}
/* Frees what def says row owns (text and blob fields) and zeroes it. */
void th_row_free(const struct th_row_def *def, void *row);
/* th_row_free for each of n rows of the array, then the array. */
void th_rows_free(const struct th_row_def *def, void *rows, size_t n);

/* Runs a statement that returns no row (when rc is SQLITE_OK) and resets it, so no read
 * transaction stays open; returns the result code (SQLITE_DONE on success, or rc when a
 * bind had already failed). */
int th_step_done(sqlite3_stmt *s, int rc);

/* Steps a statement that RETURNING one integer column (an INSERT or UPDATE): when rc
 * is SQLITE_OK, runs it, stores the value of its row in *value (left alone when there
 * is no row) and returns the final result code (SQLITE_DONE on success). */
int th_step_returning(sqlite3_stmt *s, int rc, int64_t *value);

/* Copies column i as a new string into *out (NULL for SQL NULL); returns -1 when the
 * copy could not be allocated. */
int th_col_dup(sqlite3_stmt *s, int i, char **out);
/* Copies blob column i into *out (malloc, NULL for SQL NULL) and its size into *len;
 * -1 when the copy could not be allocated. */
int th_col_blob(sqlite3_stmt *s, int i, unsigned char **out, size_t *len);

/* Makes room for one more element of size elem in *arr (capacity *cap, cnt used):
 * doubles the array when full. -1 (and *arr untouched) when out of memory. */
int th_grow(void **arr, size_t *cap, size_t cnt, size_t elem);

/* *exists = 1 when the task row exists, else 0. */
th_err th_store_task_exists(struct th_store *st, const char *task_id, int *exists,
                            struct th_error *e);

/* TaskState names as stored in tasks.state; "" for a value out of range. */
const char *th_store_state_name(int state);
int th_store_state_from_name(const char *name);

#endif
