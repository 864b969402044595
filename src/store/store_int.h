/* store_int.h — what the store's source files share and nobody else sees: the
 * connection struct, the prepared-statement cache and small binding helpers. */
#ifndef TH_STORE_STORE_INT_H
#define TH_STORE_STORE_INT_H

#include <sqlite3.h>
#include <stdint.h>

#include "store/store.h"

/* Every fixed statement of the store. Each is prepared on first use with
 * SQLITE_PREPARE_PERSISTENT and kept until th_store_close. */
enum th_stmt_id {
	TH_STMT_BEGIN,
	TH_STMT_COMMIT,
	TH_STMT_ROLLBACK,
	TH_STMT_DATA_VERSION,
	TH_STMT_TASK_INSERT,
	TH_STMT_TASK_GET,
	TH_STMT_TASK_SET_STATUS,
	TH_STMT_TASK_SET_EXT,
	TH_STMT_TASK_LIST,
	TH_STMT_TASK_COUNT,
	TH_STMT_PART_PUT,
	TH_STMT_PART_ROLE,
	TH_STMT_PART_LIST,
	TH_STMT_MSG_APPEND,
	TH_STMT_MSG_EXISTS,
	TH_STMT_MSG_FIRST,
	TH_STMT_MSG_HISTORY,
	TH_STMT_MSG_COUNT,
	TH_STMT_ART_PUT,
	TH_STMT_ART_LIST,
	TH_STMT_EV_BUMP,
	TH_STMT_EV_INSERT,
	TH_STMT_EV_SINCE,
	TH_STMT_SUB_LINK,
	TH_STMT_SUB_LIST,
	TH_STMT_SUB_RESOLVE,
	TH_STMT_TURN_CREATE,
	TH_STMT_TURN_CLAIM,
	TH_STMT_TURN_GET,
	TH_STMT_TURN_FINISH,
	TH_STMT_TURNS_CUT,
	TH_STMT_TURN_IS_CUT,
	TH_STMT_COUNT_
};

struct th_store {
	sqlite3 *db;                        /* sqlite3_close_v2 (th_store_close) */
	char *path;                         /* free (th_store_close) */
	sqlite3_stmt *stmt[TH_STMT_COUNT_]; /* sqlite3_finalize each (th_store_close) */
	uint64_t rng;                       /* back-off jitter state, seeded per process */
};

/* The cached statement id into *out, prepared from sql on first use (each call site
 * passes the same text for an id, so the SQL stays next to the code that reads its
 * columns). */
th_err th_store_stmt(struct th_store *st, enum th_stmt_id id, const char *sql, sqlite3_stmt **out,
                     struct th_error *e);
/* Resets s and clears its bindings so it holds no read transaction open. */
void th_store_stmt_done(sqlite3_stmt *s);
/* Maps an SQLite result code to th_err and writes a message with sqlite3_errmsg:
 * BUSY/LOCKED -> TH_EBUSY, NOMEM -> TH_ENOMEM, anything else -> TH_EINTERNAL. */
th_err th_store_fail(struct th_store *st, int rc, const char *what, struct th_error *e);

/* Binding helpers: each does nothing and returns rc when rc is already an error, so
 * a run of binds can be chained and checked once. A NULL string binds SQL NULL. */
int th_bind_text(sqlite3_stmt *s, int i, const char *v, int rc);
int th_bind_i64(sqlite3_stmt *s, int i, int64_t v, int rc);

/* Copies column i as a new string into *out (NULL for SQL NULL); returns -1 when the
 * copy could not be allocated. */
int th_col_dup(sqlite3_stmt *s, int i, char **out);

/* TaskState names as stored in tasks.state; "" for a value out of range. */
const char *th_store_state_name(int state);
int th_store_state_from_name(const char *name);

#endif
