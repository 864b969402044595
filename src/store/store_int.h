/* SPDX-License-Identifier: Apache-2.0 */
/* store_int.h — what the store's source files share and nobody else sees: the
 * connection struct, the prepared-statement cache and small binding helpers. */
#ifndef TH_STORE_STORE_INT_H
#define TH_STORE_STORE_INT_H

#include <libpq-fe.h>
#include <sqlite3.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "store/store.h"
#include "util/buf.h"
#include "util/ids.h"

/* How many advisory-lock keys a PostgreSQL write transaction remembers holding (pg.c);
 * past that it asks the server again, which is harmless (the locks are re-entrant). */
#define TH_PG_LOCKS_MAX 32
/* How many statements a PostgreSQL transaction queues in its pipeline before it reads
 * their results (pg.c, decision-054). */
#define TH_PG_QUEUE_MAX 48

/* A task's last history position, for the task row aliased t (0 with no message): read
 * by a history page and by PostgreSQL's task row (history.c, tasks.c). */
#define TH_SQL_LAST_POS                                                                            \
	"(SELECT coalesce(max(h.pos), 0) FROM message_rows h WHERE h.task_num = t.num)"

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
	TH_STMT_PART_ADD_NEW,
	TH_STMT_PART_ROLE,
	TH_STMT_PART_LIST,
	TH_STMT_MSG_APPEND,
	TH_STMT_MSG_EXISTS,
	TH_STMT_MSG_GET,
	TH_STMT_MSG_FIRST,
	TH_STMT_MSG_HISTORY,
	TH_STMT_MSG_COUNT,
	TH_STMT_MSG_RANGE,
	TH_STMT_MSG_LAST_POS,
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
	TH_STMT_TURN_NEXT_EXPIRY,
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
	TH_STMT_PURGE_STUCK,
	TH_STMT_TASK_WINDOW,
	/* 003: /confirm */
	TH_STMT_CONFIRM_CREATE,
	TH_STMT_CONFIRM_FIND,
	TH_STMT_CONFIRM_DECIDE,
	TH_STMT_PUSH_ANY_DUE,
	TH_STMT_PUSH_CONFIGURED,
	TH_STMT_CHAN_ANY,
	/* group commit (group.c): one member's part of a shared write transaction */
	TH_STMT_SAVEPOINT,
	TH_STMT_RELEASE,
	TH_STMT_ROLLBACK_TO,
	/* pg.c, PostgreSQL's own: transactions, a write transaction's lock and announcement,
	 * the change counter, the savepoint around each writing statement; the per-task
	 * advisory locks of a write transaction (SCALE-1, decision-051) */
	TH_STMT_PG_BEGIN,
	TH_STMT_PG_COMMIT,
	TH_STMT_PG_BEGIN_READ,
	TH_STMT_PG_DATA_VERSION,
	TH_STMT_PG_LOCK,
	TH_STMT_PG_TRY_LOCK,
	TH_STMT_PG_TURN_LOCK,
	TH_STMT_PG_TURN_TRY_LOCK,
	TH_STMT_PG_NOTIFY,
	TH_STMT_PG_ANNOUNCE,
	TH_STMT_PG_FOLLOW,
	TH_STMT_PG_UNFOLLOW,
	TH_STMT_PG_FOLLOWS_PRUNE,
	TH_STMT_PG_STMT_SAVEPOINT,
	TH_STMT_PG_STMT_ROLLBACK_TO,
	TH_STMT_PG_STMT_RELEASE,
	TH_STMT_KEY_ADD,
	TH_STMT_KEY_FIND,
	TH_STMT_KEY_LIST,
	TH_STMT_KEY_REVOKE,
	/* window.c: a history read back from its end (SEC-3) */
	TH_STMT_MSG_BACK,
	/* refs.c: a message kept once (STORE-10) */
	TH_STMT_REF_BY_ID,
	TH_STMT_REF_BY_POS,
	TH_STMT_REF_LAST,
	TH_STMT_TASK_CONTEXT,
	/* idempotency.c: a send's Idempotency-Key (A2A-11-IDEM-1) */
	TH_STMT_IDEM_FIND,
	TH_STMT_IDEM_KEEP,
	/* push.c: the backlog the metrics endpoint shows (OBS-2) */
	TH_STMT_PUSH_BACKLOG,
	TH_STMT_PUSH_DEAD_COUNT,
	/* push.c: a participant's dead letters, a page of them (RET-4, decision-076) */
	TH_STMT_PUSH_DEAD_LETTERS,
	/* history.c: a task's generation, counted from its event log (A2A-11-GEN-1) */
	TH_STMT_EV_GEN,
	TH_STMT_COUNT_
};

/* A statement queued in a PostgreSQL pipeline whose result is read later (pg.c,
 * decision-054). */
struct th_pg_pend {
	int id;                 /* enum th_stmt_id */
	unsigned char kind;     /* pg.c: prepared, a result nobody waits for, or the caller's */
	int part;               /* the group part (pg_parts) it was sent in */
	const char *what;       /* borrowed: a string literal naming it, for the log */
	struct th_store *owner; /* borrowed: the store that ran it (its pg_changes) */
	int *tally;             /* borrowed or NULL: rows changed are added here */
	int must_change;        /* no row changed is a failure (missing) */
	char missing[96];       /* the message of that failure */
	void *result;           /* PGresult * of the caller's statement once read (PQclear) */
	struct th_arg_copy {    /* PEND_LEARN: its arguments, kept until it is read */
		char t;         /* 't' text or 'i' integer */
		char *s;        /* 't': a copy; free (pg.c, unqueue) */
		int64_t i;      /* 'i' */
	} learn[3];
	int nlearn; /* how many of learn are set */
	int stale;  /* PEND_LEARN: a write was queued after it (not learned) */
	int soft;   /* PEND_LEARN: its failure fails nothing (the data version read ahead) */
};

/* pg_memo.c (SCALE-1, decision-060): what a PostgreSQL write transaction on connection c
 * knows of the tasks it holds the lock of. pg.c resets it when the transaction begins or
 * ends and when a part of it is rolled back; reports each write as it is sent
 * (th_pg_memo_wrote: after it succeeded, or when it is queued) and each read's result
 * about a locked task (th_pg_memo_learn); and asks it before sending a read
 * (th_pg_memo_answer: 1 with *out a new PGresult, PQclear, as the server would answer). */
struct th_pg_memo;
struct th_arg;
void th_pg_memo_reset(struct th_store *c);
void th_pg_memo_wrote(struct th_store *c, enum th_stmt_id id, const char *sql,
                      const struct th_arg *args, size_t n);
void th_pg_memo_learn(struct th_store *c, enum th_stmt_id id, const struct th_arg *args, size_t n,
                      const PGresult *r);
/* In a read transaction (one snapshot): the answer r of read id with args, sent ahead,
 * kept to answer the same read with the same arguments until the transaction ends. */
void th_pg_memo_keep(struct th_store *c, enum th_stmt_id id, const struct th_arg *args, size_t n,
                     const PGresult *r);
int th_pg_memo_answer(struct th_store *c, enum th_stmt_id id, const struct th_arg *args, size_t n,
                      PGresult **out);

/* Logs a busy failure of st's statement what (stmt.c): at most once a second per store,
 * then with how many were left out; code is the backend's ("code 5", "SQLSTATE 40001"). */
void th_store_log_busy(struct th_store *st, const char *what, const char *msg, const char *code);

struct th_store {
	/* Exactly one backend per store: db (SQLite) or pg (PostgreSQL, pg.c) is NULL. */
	sqlite3 *db;         /* the connection statements run on now: own_db, or inside a
	                        group transaction the group's writer (borrowed) */
	sqlite3_stmt **stmt; /* that connection's statement cache: own_stmt or the writer's */
	sqlite3 *own_db;     /* sqlite3_close_v2 (th_store_close) */
	sqlite3_stmt *own_stmt[TH_STMT_COUNT_]; /* sqlite3_finalize each (th_store_close) */
	PGconn *pg;                             /* as db, for PostgreSQL: own_pg or the writer's */
	unsigned char *pg_prepared;             /* which ids pg has prepared: own or the writer's */
	PGconn *own_pg;                         /* PQfinish (th_pg_close) */
	unsigned char own_pg_prepared[TH_STMT_COUNT_];
	char pg_state[6];   /* SQLSTATE of the last failed statement on this store ("" none) */
	int pg_listening;   /* LISTEN tiny_harness was run on listen_pg (th_store_change_fd) */
	int pg_pooled;      /* own_pg goes through a transaction pooler (decision-055):
	                       unnamed statements, SET LOCAL, no LISTEN on it */
	PGconn *listen_pg;  /* where LISTEN runs: own_pg (borrowed), a connection of its
	                       own to listen_uri (PQfinish, th_pg_close), or NULL: none yet */
	char *listen_uri;   /* th_store_opts.listen, or NULL; free (th_pg_close) */
	int64_t listen_try; /* monotonic time before which listen_uri, after a failed
	                       connection, is not tried again */
	int pg_announced;   /* a NOTIFY arrived since th_store_change_seen last looked */
	/* This store's follower (th_store_follow, decision-083), made when it opened. */
	char pg_follower[TH_UUID_LEN + 1];
	int64_t pg_changes; /* rows this connection's statements changed (th_store_changes) */
	/* pg.c, on the store whose own connection it is: the open write transaction's
	 * advisory locks (SCALE-1, decision-051). */
	int pg_writing;                  /* th_pg_begin's transaction is open */
	char *pg_locks[TH_PG_LOCKS_MAX]; /* keys held; free (pg.c, forget_locks) */
	int pg_nlocks;                   /* how many of pg_locks are set */
	int pg_parts;                    /* SAVEPOINT th_member run in it (group.c) */
	int pg_part_mark;                /* pg_nlocks when the current part began */
	int pg_part_wrote;               /* the current part ran a writing statement */
	int pg_broken;                   /* a group split lost the transaction: every
	                                    statement is refused until the next BEGIN */
	/* pg.c's pipeline (SCALE-1, decision-054), on the store whose own connection it is */
	int pg_pipe;                             /* own_pg is in pipeline mode */
	struct th_pg_pend pg_q[TH_PG_QUEUE_MAX]; /* sent, results not read yet */
	int pg_nq;                               /* how many of pg_q are used */
	int pg_failed;                           /* a queued statement failed: pg_fail answers every
	                                            statement until ROLLBACK (TO) */
	/* The tasks the transaction appended events to (a task may repeat), as a text[]
	 * literal without its closing brace, for the announcement at COMMIT (decision-083);
	 * len 0: none. th_buf_free (th_pg_close). */
	struct th_buf pg_notify;
	struct th_error pg_fail;      /* that failure, as its statement would have said */
	char pg_fail_state[6];        /* its SQLSTATE */
	struct th_pg_memo *pg_memo;   /* what the write transaction knows of its locked tasks
	                                 (or the read transaction's reads sent ahead), or NULL;
	                                 th_pg_memo_reset frees it (pg_memo.c) */
	int pg_reading;               /* a pipelined read transaction (one snapshot) is open */
	int pg_sealed;                /* its ROLLBACK went out with its reads sent ahead
	                                 (th_pg_read_seal): it is over on the server, and only
	                                 those reads' answers are of its snapshot */
	int pg_torn;                  /* a read of a sealed read transaction was not sent
	                                 ahead: it was answered outside the snapshot */
	int64_t read_version;         /* th_store_read_begin_versioned's data version when
	                                 it was read alone (SQLite, no pipeline), else -1 */
	int pg_defer;                 /* a th_store_write function runs on this
	                                 connection: th_store_exec_later may queue */
	int64_t pg_trips;             /* round trips on own_pg (th_store_round_trips) */
	struct th_store_group *group; /* borrowed (th_store_join); NULL: this
	                                 connection writes for itself */
	int in_group;     /* 1 between th_store_begin and its commit/rollback in a group */
	int64_t write_ms; /* while a th_store_write function runs for this store: the
	                     clock as it began (th_store_now); 0 otherwise */
	/* The task (a UUID) th_store_task_insert made in the running th_store_write function
	 * while no push config of it has been put in it: no event of it has anyone to push
	 * to, nor (PostgreSQL) anyone to announce it to (decision-083); "" none. */
	char fresh_task[TH_UUID_LEN + 1];
	int64_t group_writes;   /* rows this store's group transactions committed */
	int64_t opens;          /* connections heal kept in place of own_db: joined to
	                           th_store_data_version, which each connection counts afresh */
	char *path;             /* free (th_store_close) */
	char *wal_path;         /* path + "-wal"; free (th_store_close) */
	uint64_t rng;           /* back-off jitter state, seeded per process */
	int busy_timeout_ms;    /* the configured busy timeout */
	char *db_group;         /* th_store_opts.group, or NULL; free (th_store_close) */
	gid_t gid;              /* its id, looked up at open (only when group != NULL) */
	int busy_limit_ms;      /* how long busy_wait waits now: the timeout, or
	                           th_store_wal_tend's shorter one */
	int64_t busy_since_ms;  /* monotonic start of the current wait */
	int64_t busy_logged_ms; /* monotonic time a busy failure was last logged (stmt.c) */
	long busy_unlogged;     /* busy failures since then, not logged */
	int wal_frames;         /* frames in the WAL after this connection's
	                           last commit (the WAL hook) */
	int64_t wal_retry_ms;   /* monotonic time before which a failed reset
	                           is not tried again */
	struct th_store *conn;  /* whose connection db is: this store, or in a group
	                           transaction the writer (th_store_use_conn); a failure
	                           there marks that store for healing, and its txn_begun
	                           is the one statements check */
	int heal;               /* STORE-9: own_db is read-only, missing, or met a write
	                           failure; replaced before its next transaction (db.c) */
	int sync_full;          /* as opened: a replacement is set up the same way */
	int keep_wal_files;     /* th_store_opts.keep_wal_files, for every connection */
	char trouble[384];      /* th_store_trouble; "" when the last open could write */
	int txn_begun;          /* 1 from this connection's BEGIN until its COMMIT or
	                           ROLLBACK, whether or not SQLite still has the
	                           transaction (th_store_stmt) */
	int pushes_queued;      /* deliveries this connection queued since
	                           th_store_push_take_queued (a rolled-back
	                           one included: it only costs a look) */
};

/* The cached statement id into *out, prepared from sql on first use (each call site
 * passes the same text for an id, so the SQL stays next to the code that reads its
 * columns). */
th_err th_store_stmt(struct th_store *st, enum th_stmt_id id, const char *sql, sqlite3_stmt **out,
                     struct th_error *e);
/* st has no connection (a worker's store opened with heal_later whose database could
 * not be opened yet): opens it now. TH_OK when st has one, else a client-safe error (the
 * log names the file and the cause). */
th_err th_store_unopened(struct th_store *st, struct th_error *e);
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
/* STORE-9: after SQLite result rc on st's connection, marks the store that owns that
 * connection for healing when rc says the connection may stay unable to write (read-only,
 * cannot open, I/O error, full); other codes change nothing. */
void th_store_note(struct th_store *st, int rc);

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
/* A writing statement whose outcome its caller needs only as the success or failure of
 * the whole transaction (or group part): inside a PostgreSQL write transaction it is
 * queued in the connection's pipeline and its result read with the next statement whose
 * result is needed (decision-054); a failure then fails the transaction (the part), with
 * the code th_store_exec would give but a message naming only what. Elsewhere it runs at
 * once like th_store_exec. The rows it changed are added to *tally (when not NULL, and
 * tally must outlive the transaction); with missing != NULL, changing no row is a
 * TH_ENOTFOUND failure with that message. Never for a statement whose refusal is a normal
 * outcome the caller answers (a duplicate it reports, a CHECK it relies on). */
th_err th_store_exec_later(struct th_store *st, enum th_stmt_id id, const char *sql,
                           const struct th_arg *args, size_t n, int *tally, const char *missing,
                           const char *what, struct th_error *e);

/* SCALE-1 (decision-060): read id (its text arguments only, three at most) will be asked
 * for soon by the write transaction st runs: on PostgreSQL it is sent now, with the next
 * statement whose answer is needed, and its answer kept for the transaction (pg_memo.c);
 * the later th_store_one/exec of the same statement and arguments is answered from it
 * unless a write came between. Elsewhere, and outside a pipelined write transaction,
 * nothing happens. */
void th_store_prefetch(struct th_store *st, enum th_stmt_id id, const char *sql,
                       const struct th_arg *args, size_t n);

/* th_store_prefetch of th_store_task_get, th_store_participant_role_in,
 * th_store_participants, th_store_task_context, th_store_message_exists, th_store_plan,
 * th_store_has_side_channels, th_store_history, th_store_artifacts,
 * th_store_turn_next_expiry and th_store_task_generation (last_seq too), with the same arguments
 * (for th_store_expect and th_store_expect_view, th_store_expect_view_checks: expect.c). */
void th_store_task_get_soon(struct th_store *st, const char *task_id);
void th_store_participant_role_soon(struct th_store *st, const char *tenant, const char *task_id,
                                    const char *participant_id);
void th_store_participants_soon(struct th_store *st, const char *task_id);
void th_store_task_context_soon(struct th_store *st, const char *task_id);
void th_store_message_exists_soon(struct th_store *st, const char *task_id, const char *message_id);
void th_store_plan_soon(struct th_store *st, const char *task_id);
void th_store_side_channels_soon(struct th_store *st, const char *task_id);
void th_store_history_soon(struct th_store *st, const char *task_id, int limit);
void th_store_artifacts_soon(struct th_store *st, const char *task_id);
void th_store_turn_next_expiry_soon(struct th_store *st, const char *task_id,
                                    int64_t queued_lease_ms);
void th_store_task_generation_soon(struct th_store *st, const char *task_id, int64_t upto);

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
/* Which rule of the schema a failed statement broke, the same on both backends. */
enum th_sql_fail {
	TH_SQL_FAIL_OTHER,  /* not a constraint (or no failure) */
	TH_SQL_FAIL_UNIQUE, /* a primary key or UNIQUE constraint */
	TH_SQL_FAIL_FOREIGNKEY,
	TH_SQL_FAIL_CHECK,
	TH_SQL_FAIL_NOTNULL,
};
/* After a helper above failed: the constraint it broke, for a caller that words a
 * constraint failure itself (UNIQUE: "duplicate …", FOREIGNKEY: "no task …"). SQLite
 * keeps the code on the connection; PostgreSQL's SQLSTATE is kept in pg_state. */
enum th_sql_fail th_store_failed_with(const struct th_store *st);

/* The statement text for this store's backend: lite for SQLite, pg for PostgreSQL. Only
 * statements whose SQL differs name both, at their call site; every other statement's
 * one text runs on both (pg.c turns ?N into $N). */
static inline const char *th_sql_for(const struct th_store *st, const char *lite, const char *pg)
{
	return st->pg != NULL ? pg : lite;
}

/* 1 while the connection st's statements run on has a transaction open. */
int th_store_in_txn(const struct th_store *st);
/* TH_OK inside a transaction; else the failure of the write whose connection went
 * (PostgreSQL, th_pg_write_failure), or TH_EINTERNAL "<what> outside a transaction". */
th_err th_store_need_txn(struct th_store *st, const char *what, struct th_error *e);
/* Points st's statements at w's connection (a group's writer), or back at its own when
 * w is st. */
void th_store_use_conn(struct th_store *st, struct th_store *w);
/* group.c, for pg.c (SCALE-1, decision-051): called on the combining thread inside the
 * part st runs in its group's batch, when that part's first task lock would wait while
 * the batch holds other parts' locks. Ends the part's savepoint, commits the batch so far
 * (its parts' owners are answered), opens a new transaction and the part's savepoint in
 * it, so the part waits holding nothing of anyone else's. The part must have written
 * nothing yet. On failure no transaction is open and the part must fail. */
th_err th_store_group_split(struct th_store *st, struct th_error *e);

/* How many columns of a row th_store_texts hands over. */
#define TH_TEXTS_COLS 3
/* Calls fn(arg, col) for each row of statement id with its first TH_TEXTS_COLS columns
 * as text: col[0] the first (NULL for SQL NULL, and for a column past the statement's
 * own), borrowed for the call; stops at fn's first non-zero return, which is the
 * result (a th_err fn set in e). Errors of the statement itself are reported as
 * th_store_fail does. */
th_err th_store_texts(struct th_store *st, enum th_stmt_id id, const char *sql,
                      const struct th_arg *args, size_t n,
                      th_err (*fn)(void *arg, const char *const *col, struct th_error *e),
                      void *arg, const char *what, struct th_error *e);

/* ---- a message kept once (refs.c, STORE-10, decision-047) -------------------------- */

/* The stored form of a history message (an object, borrowed and not changed): its text
 * without taskId and contextId, and without its leading messageId and role when they are
 * message_id and role, the row's columns (decision-061). *out is new text (free);
 * TH_EINVAL when msg is not an object or has no messageId. */
th_err th_ref_msg_pack(json_object *msg, const char *message_id, const char *role, char **out,
                       struct th_error *e);
/* A stored history message as sent: a compact one gets messageId and role (its row's
 * message_id and role) first again, and with task_id and context_id (both, or NULL: the
 * text as pack had it) the task's taskId and contextId at the end. New text (free), or
 * NULL when out of memory. */
char *th_ref_msg_unpack(const char *stored, const char *message_id, const char *role,
                        const char *task_id, const char *context_id);
/* The history position of the task's newest message when it reads back exactly as
 * message_json, or 0 (*pos); for a status that carries the message just appended. */
th_err th_ref_status_pos(struct th_store *st, const char *task_id, const char *context_id,
                         const char *message_json, int64_t *pos, struct th_error *e);
/* An event (a StreamResponse, not changed) in its stored form: the task's own ids
 * dropped, messages of the history as references, a status timestamp as the
 * milliseconds before created_ms, the row's time. *out new text (free). */
th_err th_ref_event_pack(struct th_store *st, const char *task_id, const char *context_id,
                         json_object *event, int64_t created_ms, char **out, struct th_error *e);
/* A stored event as sent: ids, referred messages and the timestamp put back (created_ms
 * is the row's), then given to whole (NULL: none). *out new text (free). */
th_err th_ref_event_unpack(struct th_store *st, const char *task_id, const char *context_id,
                           const char *stored, int64_t created_ms, th_event_whole_fn *whole,
                           char **out, struct th_error *e);
/* The task's contextId into *out (free), or TH_ENOTFOUND. */
th_err th_store_task_context(struct th_store *st, const char *task_id, char **out,
                             struct th_error *e);

/* ---- PostgreSQL (pg.c) ------------------------------------------------------------ */

/* 1 when a statement of st would be queued now (decision-054): inside a th_store_write
 * function's pipelined write transaction. Otherwise th_store_exec_later runs it at once. */
int th_pg_queues(const struct th_store *st);
/* Sends read id ahead inside a pipelined write transaction (th_store_prefetch). */
void th_pg_prefetch(struct th_store *st, enum th_stmt_id id, const char *sql,
                    const struct th_arg *args, size_t n);
/* The failure of the write transaction open on st's connection (PostgreSQL), as its
 * failed statement answered (a lost connection: TH_EUNAVAILABLE, "retry"), or TH_OK when
 * none of its statements failed. */
th_err th_pg_write_failure(struct th_store *st, struct th_error *e);
/* th_store_in_txn on PostgreSQL. */
int th_pg_in_txn(const struct th_store *st);
/* Connects st (its path is the URI) and migrates the schema; o->sync_full as in
 * th_store_opts (synchronous = full: synchronous_commit on), o->pooled and o->listen
 * for a transaction pooler in front (decision-055). */
th_err th_pg_open(struct th_store *st, const struct th_store_opts *o, struct th_error *e);
void th_pg_close(struct th_store *st);
/* The statement helpers of stmt.c, on st->pg: the same contracts. */
th_err th_pg_exec(struct th_store *st, enum th_stmt_id id, const char *sql,
                  const struct th_arg *args, size_t n, int64_t *value, int64_t *rows,
                  const char *what, struct th_error *e);
th_err th_pg_exec_later(struct th_store *st, enum th_stmt_id id, const char *sql,
                        const struct th_arg *args, size_t n, int *tally, const char *missing,
                        const char *what, struct th_error *e);
/* Round trips to the server on st's own connection so far (SCALE-1: tests count them). */
int64_t th_pg_round_trips(const struct th_store *st);
int th_pg_plan_counts(struct th_store *st, int64_t *custom, int64_t *generic);
th_err th_pg_rows(struct th_store *st, enum th_stmt_id id, const char *sql,
                  const struct th_arg *args, size_t n, const struct th_row_def *def, void **rows,
                  size_t *count, size_t max, const char *what, struct th_error *e);
th_err th_pg_texts(struct th_store *st, enum th_stmt_id id, const char *sql,
                   const struct th_arg *args, size_t n,
                   th_err (*fn)(void *arg, const char *const *col, struct th_error *e), void *arg,
                   const char *what, struct th_error *e);
/* Transactions: a write one (BEGIN; each statement then takes the advisory lock of the
 * task it is about first, pg.c), COMMIT, ROLLBACK, and a read-only one on one snapshot. */
th_err th_pg_begin(struct th_store *st, struct th_error *e);
th_err th_pg_commit(struct th_store *st, struct th_error *e);
void th_pg_rollback(struct th_store *st);
th_err th_pg_read_begin(struct th_store *st, struct th_error *e);
/* th_store_read_seal, th_store_read_torn, th_store_read_begin_versioned and
 * th_store_read_version on PostgreSQL. */
void th_pg_read_seal(struct th_store *st);
int th_pg_read_torn(const struct th_store *st);
th_err th_pg_read_begin_versioned(struct th_store *st, struct th_error *e);
int64_t th_pg_read_version(struct th_store *st);
/* A number that changes whenever anything was committed to the database (-1 on failure). */
int64_t th_pg_data_version(struct th_store *st);
/* th_store_change_fd / _seen on PostgreSQL; th_pg_change_wait waits up to ms for an
 * announcement (0), or returns -1 at once when the connection cannot listen (the caller
 * sleeps instead). */
int th_pg_change_fd(struct th_store *st);
int th_pg_change_seen(struct th_store *st);
int th_pg_change_wait(struct th_store *st, int ms);
/* Appends item to b as an element of a PostgreSQL text[] literal: '{' before the first,
 * ',' before the others, quoted, '"' and '\\' escaped. Close it with "}". An item longer
 * than TH_ID_MAX is cut. */
void th_pg_array_add(struct th_buf *b, const char *item);
/* The server's clock in epoch ms, as SQL: follows and the commits that look for them
 * (decision-083) compare against one clock, whatever the hosts' own say. */
#define TH_PG_NOW_MS "(extract(epoch FROM now()) * 1000)::bigint"
/* Frees what def says row owns (text and blob fields) and zeroes it. */
void th_row_free(const struct th_row_def *def, void *row);
/* th_row_free for each of n rows of the array, then the array. */
void th_rows_free(const struct th_row_def *def, void *rows, size_t n);

/* rows.c: the index of name in names[0..n), or absent when name is NULL or not there:
 * how the text of a TH_COL_ENUM column becomes its enum. TH_NAME_INDEX takes the count
 * from the array. */
int th_name_index(const char *const *names, size_t n, const char *name, int absent);
#define TH_NAME_INDEX(names, name, absent)                                                         \
	th_name_index((names), sizeof(names) / sizeof((names)[0]), (name), (absent))

/* rows.c: makes room for one more element of size elem in *arr (capacity *cap, cnt used):
 * doubles the array when full. -1 (and *arr untouched) when out of memory. */
int th_grow(void **arr, size_t *cap, size_t cnt, size_t elem);

/* *exists = 1 when the task row exists, else 0. */
th_err th_store_task_exists(struct th_store *st, const char *task_id, int *exists,
                            struct th_error *e);

/* TaskState names as stored in tasks.state; "" for a value out of range. */
const char *th_store_state_name(int state);
int th_store_state_from_name(const char *name);

#endif
