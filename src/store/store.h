/* SPDX-License-Identifier: Apache-2.0 */
/* store.h — every SQL statement of the project lives behind this header.
 *
 * One SQLite database file in WAL mode, opened once per worker process after it
 * starts. Schema: sql/NNN_*.sql, embedded in the binary and applied in order under
 * PRAGMA user_version inside one BEGIN IMMEDIATE (STORE-1). The harness groups calls
 * into write transactions given as functions to th_store_write; every function below
 * that writes must be called inside one. Each change to a task is paired by the caller
 * with th_store_event_append in the same transaction (STREAM-3).
 *
 * Rows are returned in structs whose string fields are owned: every owned pointer says
 * which *_free frees it. New rows go in through input structs (th_task_in,
 * th_participant_in, th_plan_step_in, th_channel_msg_in, th_help_request_in) whose
 * `const char *` fields stay the caller's: the store reads them during the call and frees
 * none of them. A caller writing back a row it read builds the input struct from the
 * row's fields. Updates that take a row struct (th_store_task_set_status, ..._set_ext,
 * th_store_push_config_put) only read it. JSON columns travel as text. */
#ifndef TH_STORE_STORE_H
#define TH_STORE_STORE_H

#include <json-c/json.h>
#include <sqlite3.h>
#include <stddef.h>
#include <stdint.h>

#include "util/err.h"

struct th_store;

struct th_store_opts {
	const char *path;    /* database file; its directory is created if missing */
	int sync_full;       /* PRAGMA synchronous = FULL instead of NORMAL */
	int busy_timeout_ms; /* sqlite3_busy_timeout */
	const char *group;   /* SEC-6: NULL, or the group (a name) a new database file and the
	                        directories made for it get: the file 0640, directories 02750
	                        (setgid, so -wal and -shm get the group too). An unknown
	                        group, or one the process cannot give a file, fails the open */
	int heal_later;      /* a worker's: a database that cannot be opened for a cause that
	                        can pass (its directory missing or unwritable, permissions, a
	                        full disk) still opens, without a connection; every request
	                        tries again (STORE-9). th_store_trouble says why */
	int pooled;          /* PostgreSQL: path leads to a transaction pooler (PgBouncer's
	                        pool_mode = transaction, decision-055): no named prepared
	                        statements, settings per transaction, no LISTEN on it */
	const char *listen;  /* PostgreSQL: NULL, or the URI LISTEN connects to (straight to
	                        the server); unset and pooled, streams poll (decision-055) */
	int keep_wal_files;  /* SQLite, a process that answers one request (plain CGI):
	                        the last connection to close still checkpoints and empties
	                        the WAL, but leaves -wal and -shm in place for the next
	                        process instead of removing them (SQLITE_FCNTL_PERSIST_WAL;
	                        PKG-4, decision-062) */
};

/* Opens (creating if needed) and migrates the database. *out is freed by
 * th_store_close. A database whose user_version is newer than this binary knows,
 * or whose application_id is not ours, is refused with a message naming it. */
th_err th_store_open(const struct th_store_opts *o, struct th_store **out, struct th_error *e);
/* 1 when o names a database server (PostgreSQL) rather than a file. Its connections write
 * side by side, each transaction holding only the locks of the tasks it touches
 * (decision-051), so a worker gives each request thread its own writer there instead of
 * one group writer for the process (decision-059). */
int th_store_writes_side_by_side(const struct th_store_opts *o);
void th_store_close(struct th_store *st);
/* STORE-9: why st could not write when it was opened, or at its last attempt to heal,
 * as a sentence naming the file (read-only, or could not be opened); NULL when it could.
 * Borrowed from st, valid until its next call. A connection that finds itself read-only,
 * or meets an I/O error, a full disk or a file it cannot open, is replaced by a new one
 * before its next transaction; a healthy one is never reopened. */
const char *th_store_trouble(const struct th_store *st);
/* The schema version the binary brings (the highest migration number). */
int th_store_schema_version(void);
/* The raw handle, for tests and the `tasks` CLI only. */
sqlite3 *th_store_db(struct th_store *st);

/* STORE-5: the WAL stays bounded. SQLite's own autocheckpoint is a passive checkpoint
 * run inside the commit that crosses 1000 frames; it never restarts a WAL that
 * overlapping readers keep in use, so under steady load from several workers the WAL
 * grew without end. Instead the WAL hook only notes the WAL's size, and once it holds
 * TH_WAL_CHECKPOINT_FRAMES frames the worker, after its response, runs
 * th_store_wal_tend: a RESTART checkpoint that waits at most TH_WAL_TEND_WAIT_MS for
 * the writer lock and for readers to leave the WAL (TRUNCATE when the file grew past
 * TH_WAL_SIZE_LIMIT). One worker checkpoints at a time; the others find it busy or
 * already reset and skip. journal_size_limit caps what a restarted WAL keeps on disk.
 * docs/store.md has the policy. */
#define TH_WAL_CHECKPOINT_FRAMES 1024
#define TH_WAL_TEND_WAIT_MS 250
#define TH_WAL_SIZE_LIMIT (16 * 1024 * 1024)
#define TH_WAL_RETRY_MS 1000

/* Checkpoints and resets the WAL when this connection's (or its group's) last commit
 * left it with TH_WAL_CHECKPOINT_FRAMES frames or more (a no-op otherwise, inside a
 * transaction, or within TH_WAL_RETRY_MS of a failed try). Returns 1 when it reset the
 * WAL, 0 when there was nothing to do or it stayed busy (tried again after a later
 * commit). */
int th_store_wal_tend(struct th_store *st);
/* Frames in the WAL after this connection's last commit, or for a group member the last
 * batch that held its part (0 before any). */
int th_store_wal_frames(struct th_store *st);

/* RET-3 (decision-071): after a purge, the space it freed goes back to the file system.
 * SQLite: on a database whose auto_vacuum is INCREMENTAL (every database created since
 * 017; an older one after th_store_vacuum) the free pages are released with
 * PRAGMA incremental_vacuum, a few thousand pages per write transaction so live workers
 * wait little, then a TRUNCATE checkpoint copies the WAL in and cuts it to 0 bytes (best
 * effort: a reader that stays in the WAL makes it a RESTART's worth). Sizes are read
 * before and after. PostgreSQL reclaims with its autovacuum: nothing is done, known = 0. */
struct th_compact {
	int known;         /* 1: the sizes below are the SQLite files' */
	int incremental;   /* 1: auto_vacuum = INCREMENTAL, free pages were released */
	int64_t db_before; /* bytes of the database file */
	int64_t db_after;
	int64_t wal_before; /* bytes of the -wal file (0 when absent) */
	int64_t wal_after;
	int64_t freed_pages; /* pages incremental_vacuum gave back */
	int wal_truncated;   /* 1: the TRUNCATE checkpoint completed */
};
th_err th_store_compact(struct th_store *st, struct th_compact *out, struct th_error *e);
/* RET-3: VACUUM, once, switching an older database to auto_vacuum = INCREMENTAL; it
 * rewrites the whole file (needs as much free disk again and holds the write lock for
 * the time it takes). PostgreSQL: TH_EUNSUPPORTED with a sentence saying why not. */
th_err th_store_vacuum(struct th_store *st, struct th_compact *out, struct th_error *e);

/* BEGIN IMMEDIATE, retried with randomised back-off when SQLITE_BUSY outlives the
 * busy timeout; TH_EBUSY only after every retry failed. For a store that joined no
 * group (the tests, and th_store_write underneath); src/ writes with th_store_write. */
th_err th_store_begin(struct th_store *st, struct th_error *e);
th_err th_store_commit(struct th_store *st, struct th_error *e);
/* A read transaction, so that several SELECTs see one snapshot (TURN-7: a task view is
 * never torn by another worker's commit). Inside a transaction already open it does
 * nothing; *began tells th_store_read_end whether to end one. */
th_err th_store_read_begin(struct th_store *st, int *began, struct th_error *e);
void th_store_read_end(struct th_store *st, int began);
/* SCALE-1 (decision-069): the read transaction st has just begun will ask nothing but
 * what th_store_expect_view sent ahead. On PostgreSQL its end goes out with those reads,
 * so that BEGIN, the reads and ROLLBACK take one round trip; a read it did not send ahead
 * then fails (TH_EINTERNAL, no round trip) and th_store_read_torn says so (1) until
 * th_store_read_end: the caller reads again in a transaction it does not seal. On SQLite,
 * or in no read transaction of its own, nothing happens and th_store_read_torn is 0. */
void th_store_read_seal(struct th_store *st);
int th_store_read_torn(const struct th_store *st);
/* th_store_read_begin that also reads th_store_data_version just before the snapshot
 * (on PostgreSQL in the same round trip as the transaction's reads sent ahead, before
 * its BEGIN); th_store_read_version gives it inside the transaction: an answer read in
 * it is at least as new as that version (decision-029's stamp). -1 when not known, or
 * when a transaction was open already. */
th_err th_store_read_begin_versioned(struct th_store *st, int *began, struct th_error *e);
int64_t th_store_read_version(struct th_store *st);
void th_store_rollback(struct th_store *st); /* safe to call when no transaction is open */
/* A write transaction as a function: fn runs with st inside it; TH_OK from fn commits
 * what it wrote, anything else undoes it and is returned with fn's error in e. In a
 * group (decision-030) fn may run on another request thread of the worker, which runs
 * the queued parts back to back while their owners wait: fn must use only st, arg and e
 * (and thread-safe globals) and must not begin a transaction of its own. Returns once
 * the COMMIT holding the part returned, with its result. On PostgreSQL the writes fn
 * makes whose refusal is no normal outcome (th_store_exec_later in store_int.h) are
 * queued, and such a refusal fails a later call of fn, or the COMMIT, instead of its own
 * (decision-054); nothing of the part is stored either way. */
typedef th_err (*th_store_write_fn)(struct th_store *st, void *arg, struct th_error *e);
th_err th_store_write(struct th_store *st, th_store_write_fn fn, void *arg, struct th_error *e);

/* The time (Unix ms) of the write st is in: inside a th_store_write function, the clock
 * read once as it began, holding the write lock, so that everything one write records
 * carries one time (a task created and settled by its inline turn has one status time,
 * and its participants' copy of it needs no second update, decision-080); anywhere
 * else, the clock now. */
int64_t th_store_now(const struct th_store *st);

/* ---- group commit (decision-023, decision-030) ------------------------------
 * The request threads of one FastCGI worker share one writer connection: the
 * th_store_write functions that overlap in time run back to back on it, each in a
 * SAVEPOINT of its own, and commit together. th_store_write of a joined store returns
 * once the batch that holds its part committed, with that COMMIT's result; a failing
 * function undoes only its own part. Reads stay on each store's own connection.
 * th_store_begin/commit/rollback are for a store that joined no group.
 * store/group.c has the protocol. */
struct th_store_group;
struct th_store_group_stats {
	int64_t batches;     /* batches committed or failed with at least one part */
	int64_t parts;       /* parts those batches held */
	int64_t splits;      /* PostgreSQL: batches committed early because a part's task was
	                        locked elsewhere (th_store_group_split, decision-051) */
	int waiting;         /* th_store_write parts queued, not yet run */
	int64_t round_trips; /* PostgreSQL: round trips to the server on the writer's
	                        connection so far (SCALE-1, decision-054); 0 on SQLite */
};
/* PostgreSQL: round trips to the server on st's own connection so far (SCALE-1); 0 on
 * SQLite. */
int64_t th_store_round_trips(const struct th_store *st);
/* PostgreSQL: how many times st's own connection has planned its prepared statements
 * for their arguments (*custom) and without them (*generic), from pg_prepared_statements
 * (decision-085 asks for no custom plan). 0 when it could ask (both 0 on SQLite), -1
 * when it cannot (in pipeline mode: inside a pipelined transaction; behind a transaction
 * pooler, whose statements are not prepared). For tests. */
int th_store_plan_counts(struct th_store *st, int64_t *custom, int64_t *generic);
/* Opens the writer connection (as th_store_open). Freed by th_store_group_close, after
 * every member store has left its last transaction. */
th_err th_store_group_open(const struct th_store_opts *o, struct th_store_group **out,
                           struct th_error *e);
void th_store_group_close(struct th_store_group *g);
/* From now on st's write transactions are parts of g's batches (g is borrowed; it must
 * outlive st's last transaction). Call it outside a transaction. */
void th_store_join(struct th_store *st, struct th_store_group *g);
void th_store_group_stats(struct th_store_group *g, struct th_store_group_stats *out);

/* ---- tasks ------------------------------------------------------------- */

struct th_task_row {
	char *id;                  /* free (th_task_row_free) */
	char *context_id;          /* free */
	int state;                 /* enum th_state; column `state` holds its name */
	char *sub_state;           /* "awaiting-next-message" | "awaiting-answer" | NULL; free */
	char *status_meta_json;    /* status-extension object {"sub_state":…} or NULL; free */
	char *status_message_json; /* the status Message, or NULL; free */
	int64_t status_pos;        /* its history position when kept there (STORE-10), or 0 */
	char *status_message_id;   /* with status_pos: that message's row's message_id and */
	char *status_role;         /* role, to unpack it (decision-061); else NULL; free */
	int64_t status_ms;         /* status timestamp */
	char *name;                /* free */
	char *goal;                /* free */
	char *ext_json;            /* task-extension object without participants; free */
	char *created_by;          /* participant whose message started the task; free */
	char *parent_id;           /* parent task id or NULL; free */
	int64_t created_ms;
	int64_t updated_ms;
	int64_t last_seq; /* highest event seq of the task (read from events) */
};
void th_task_row_free(struct th_task_row *r);

/* A new task (th_store_task_insert): the columns of th_task_row, borrowed. NULL name
 * and goal are stored as "", NULL ext_json as "{}"; created_ms <= 0 means now, and
 * status_ms or updated_ms <= 0 the creation time. */
struct th_task_in {
	const char *id;         /* required */
	const char *context_id; /* required */
	int state;              /* enum th_state */
	const char *sub_state;
	const char *status_meta_json;
	const char *status_message_json;
	int64_t status_ms;
	const char *name;
	const char *goal;
	const char *ext_json;
	const char *created_by; /* required */
	const char *parent_id;  /* or NULL */
	int64_t created_ms;
	int64_t updated_ms;
	const char *tenant; /* TEN-2: NULL or "" = the default tenant; a sub-task is always
	                       stored in its parent's tenant, whatever this says */
};

/* TH_EINVAL for a duplicate id or a missing field, TH_ENOTFOUND for an unknown parent. */
th_err th_store_task_insert(struct th_store *st, const struct th_task_in *r, struct th_error *e);
/* TH_ENOTFOUND when there is no such task (the message is the caller's to write). */
th_err th_store_task_get(struct th_store *st, const char *id, struct th_task_row *out,
                         struct th_error *e);
/* SCALE-1 (decision-060): the write transaction st runs is about to read task_id's row
 * (th_store_task_get), participant_id's role on it (th_store_participant_role) and
 * whether message_id is in its history (th_store_message_exists); either may be NULL; the
 * role as th_store_participant_role_in asks it in tenant. On
 * PostgreSQL they go out together with the next statement whose answer is needed, so
 * that those calls cost no round trip of their own; on SQLite nothing happens. */
void th_store_expect(struct th_store *st, const char *tenant, const char *task_id,
                     const char *participant_id, const char *message_id);
/* SCALE-1 (decision-060): the read transaction st has just begun is about to read
 * task_id's view: its row (when row; a list has it already), participants, sub-tasks,
 * plan, side channels (when side_channels), context, the newest history_page messages
 * (when > 0) and artifacts (when artifacts). On PostgreSQL they go out together,
 * answered from that one snapshot; on SQLite, or outside a read transaction of its own,
 * nothing happens. */
void th_store_expect_view(struct th_store *st, const char *task_id, int row, int history_page,
                          int side_channels, int artifacts);
/* SCALE-1 (decision-069): as th_store_expect_view, for the reads a request makes in the
 * same snapshot before its view: participant_id's role on the task in tenant (when not
 * NULL; TEN-2) and the expiry of its first live turn, queued ones counted queued_lease_ms
 * after they were queued (th_store_turn_next_expiry; when queued_lease_ms >= 0). */
void th_store_expect_view_checks(struct th_store *st, const char *tenant, const char *task_id,
                                 const char *participant_id, int64_t queued_lease_ms);
/* The same for a read after the view: the task's whole generation and last seq
 * (th_store_task_generation up to INT64_MAX; A2A-11-GEN-1). */
void th_store_expect_generation(struct th_store *st, const char *task_id);
/* Sets state, sub_state, status_meta_json, status_message_json, status_ms and
 * updated_ms from r (other fields ignored). */
th_err th_store_task_set_status(struct th_store *st, const struct th_task_row *r,
                                struct th_error *e);
/* Sets name, goal and ext_json from r. */
th_err th_store_task_set_ext(struct th_store *st, const struct th_task_row *r, struct th_error *e);

struct th_list_query {
	const char *participant; /* only tasks this participant is on (required) */
	const char *context_id;  /* or NULL */
	int state;               /* enum th_state, 0 = any */
	int64_t status_after_ms; /* status_ms >= this; -1 = any */
	int limit;               /* rows to return */
	int64_t cursor_ms;       /* with cursor_id: rows strictly after this key in */
	const char *cursor_id;   /* (status_ms DESC, id DESC) order; NULL = first page */
	const char *tenant;      /* TEN-4: only this tenant's tasks; NULL = "" (the default) */
};
/* Rows in (status_ms DESC, id DESC) order; *total counts every match ignoring the
 * cursor and limit. *rows is an array of *n rows, freed by th_task_rows_free. */
th_err th_store_task_list(struct th_store *st, const struct th_list_query *q,
                          struct th_task_row **rows, size_t *n, int64_t *total, struct th_error *e);
void th_task_rows_free(struct th_task_row *rows, size_t n);

/* ---- participants ------------------------------------------------------ */

struct th_participant {
	char *id;           /* free (th_participant_free) */
	char *kind;         /* "human" | "agent"; free */
	char *role;         /* "assignee" | "reporter" | "watcher" | "admin"; free */
	char *display_name; /* may be ""; free */
};
void th_participant_free(struct th_participant *p);
void th_participants_free(struct th_participant *ps, size_t n);

/* A participant to put on a task (th_store_participant_put); borrowed. */
struct th_participant_in {
	const char *id;           /* required */
	const char *kind;         /* required */
	const char *role;         /* required */
	const char *display_name; /* NULL = "" */
};

/* Inserts or, when already on the task, updates kind/role/display_name. */
th_err th_store_participant_put(struct th_store *st, const char *task_id,
                                const struct th_participant_in *p, struct th_error *e);
/* The participants ps[0..n) of task_id, a task this write has just inserted
 * (th_store_task_insert) and put no participant on yet: each id once (a second is
 * TH_EINVAL, naming it), listed in that order. Two rows per statement, where the
 * upsert above takes one statement and three look-ups per participant. */
th_err th_store_participants_add_new(struct th_store *st, const char *task_id,
                                     const struct th_participant_in *ps, size_t n,
                                     struct th_error *e);
/* The participant's role into *role (caller frees), or TH_ENOTFOUND. Any tenant: for
 * the harness's own look-ups on a task already found. */
th_err th_store_participant_role(struct th_store *st, const char *task_id,
                                 const char *participant_id, char **role, struct th_error *e);
/* TEN-2: the same, but a task of another tenant than tenant (NULL: any) is not found
 * either, in the same one statement (a participation carries its task's tenant). */
th_err th_store_participant_role_in(struct th_store *st, const char *tenant, const char *task_id,
                                    const char *participant_id, char **role, struct th_error *e);
/* Participants in the order they were added. */
th_err th_store_participants(struct th_store *st, const char *task_id, struct th_participant **out,
                             size_t *n, struct th_error *e);

/* ---- messages (history) ------------------------------------------------ */

/* Appends msg (a Message object, borrowed and not changed) to the task's history.
 * TH_EINVAL with "duplicate" in the message when (task_id, message_id) is already
 * stored. */
th_err th_store_message_append(struct th_store *st, const char *task_id, const char *message_id,
                               const char *role, const char *sender, json_object *msg,
                               struct th_error *e);
/* 1 when (task_id, message_id) is stored, 0 when not. */
int th_store_message_exists(struct th_store *st, const char *task_id, const char *message_id);
/* The task whose first message is message_id from sender (new-task de-duplication):
 * *task_id (caller frees) or TH_ENOTFOUND. Only tasks of tenant (NULL: "") count (TEN-5). */
th_err th_store_task_by_first_message(struct th_store *st, const char *tenant, const char *sender,
                                      const char *message_id, char **task_id, struct th_error *e);

/* A2A-11-IDEM-1: the task and message fingerprint a caller's Idempotency-Key was first
 * used with: TH_OK with *task_id and *fingerprint (new strings; free), TH_ENOTFOUND when
 * the key is new for this participant, or the failure. */
th_err th_store_idem_find(struct th_store *st, const char *tenant, const char *participant,
                          const char *key, char **task_id, char **fingerprint, struct th_error *e);
/* Keeps a key with the task its send went to, inside the send's write transaction; the
 * key is kept in the task's tenant (TEN-5: find asks in the request's, NULL = ""). */
th_err th_store_idem_keep(struct th_store *st, const char *participant, const char *key,
                          const char *task_id, const char *fingerprint, struct th_error *e);
/* The last `limit` messages (limit < 0: all) oldest first, as a new JSON array. */
th_err th_store_history(struct th_store *st, const char *task_id, int limit, json_object **out,
                        struct th_error *e);
/* The same, each message as its stored text (th_json_raw): for a view that is only
 * serialised (a response, an event snapshot), never read. */
th_err th_store_history_raw(struct th_store *st, const char *task_id, int limit, json_object **out,
                            struct th_error *e);
/* Either of the two above (raw as th_store_history_raw) for a task whose context the
 * caller has read already (its row): the messages are unpacked with context_id (NULL:
 * read it) instead of another statement for it (PKG-4). */
th_err th_store_history_of(struct th_store *st, const char *task_id, const char *context_id,
                           int limit, int raw, json_object **out, struct th_error *e);
/* SEC-3: the messages whose position lies in (after, upto], oldest first, as a new JSON
 * array (raw: each as its stored text, th_json_raw); for reading a long history in pages
 * from its end. */
th_err th_store_history_range(struct th_store *st, const char *task_id, int64_t after, int64_t upto,
                              int raw, json_object **out, struct th_error *e);
/* The position of the task's newest message (0: none), or -1 when it cannot be read. */
int64_t th_store_history_last_pos(struct th_store *st, const char *task_id);
/* SEC-3 (window.c): calls fn(arg, text) with each of the task's messages from the newest
 * back to the oldest, its JSON text without the task's taskId and contextId borrowed for
 * the call, until fn returns
 * non-zero: 1 stops the walk (TH_OK), -1 fails it (fn set e). The messages are read in
 * statements of at most `page` rows (page < 1: 32), so that a long history is never
 * held, by SQLite or by libpq, more than one page at a time. */
th_err th_store_history_back(struct th_store *st, const char *task_id, int page,
                             int (*fn)(void *arg, const char *text, struct th_error *e), void *arg,
                             struct th_error *e);
/* The stored message (task_id, message_id) as a new JSON object, or TH_ENOTFOUND. */
th_err th_store_message_get(struct th_store *st, const char *task_id, const char *message_id,
                            json_object **out, struct th_error *e);
/* Number of messages stored for the task. */
int64_t th_store_message_count(struct th_store *st, const char *task_id);

/* ---- artifacts ----------------------------------------------------------- */

th_err th_store_artifact_put(struct th_store *st, const char *task_id, const char *artifact_id,
                             const char *json, struct th_error *e);
/* All artifacts oldest first, as a new JSON array (possibly empty). */
th_err th_store_artifacts(struct th_store *st, const char *task_id, json_object **out,
                          struct th_error *e);

/* ---- events (the per-task log every stream reads) ------------------------ */

/* What an event does to the streams that follow its task, by the state it leaves the
 * task in; recorded with the event (events.ends, 011) so that no reader parses an event
 * to learn it. */
enum th_event_ends {
	TH_ENDS_NONE = 0,        /* the task goes on */
	TH_ENDS_INTERRUPTED = 1, /* INPUT_REQUIRED or AUTH_REQUIRED: it waits for someone */
	TH_ENDS_TERMINAL = 2,    /* COMPLETED, FAILED, CANCELED or REJECTED */
};

/* Appends event (a StreamResponse object, borrowed and not changed) as the next seq of
 * the task (its last event's seq + 1; inside the caller's write transaction); *seq
 * receives it (may be NULL). kind is a
 * short label for operators: "task", "status", "artifact", "message"; ends what the
 * event does to streams. */
th_err th_store_event_append(struct th_store *st, const char *task_id, const char *kind,
                             enum th_event_ends ends, json_object *event, int64_t *seq,
                             struct th_error *e);

struct th_event {
	int64_t seq;
	char *kind;         /* free (th_events_free) */
	char *json;         /* free */
	int ends;           /* enum th_event_ends, as written (th_store_event_append) */
	int64_t created_ms; /* when the row was written */
};
void th_events_free(struct th_event *ev, size_t n);
/* What a reader of the event log does to each event after the store has put back what it
 * keeps once (references, ids, timestamps; refs.c): sr is the parsed StreamResponse
 * (borrowed); the result is a new reference to the one to send, sr itself or a new object
 * sharing its members, or NULL when out of memory. */
typedef json_object *th_event_whole_fn(json_object *sr);
/* Events with seq > after, in order, at most limit (limit <= 0: all), each read whole:
 * parsed once, given to whole (NULL: none), written out once. */
th_err th_store_events_since(struct th_store *st, const char *task_id, int64_t after, int limit,
                             th_event_whole_fn *whole, struct th_event **out, size_t *n,
                             struct th_error *e);
/* A2A-11-GEN-1 (decision-073): the task's generation as of its event upto (INT64_MAX:
 * now), derived from the event log: the number of its "task", "status" and "artifact"
 * events with seq <= upto (each is one mutation; message and side-channel events are
 * none). 0 when the task has no such event (or does not exist). *last_seq (may be NULL)
 * gets the task's last event seq, read in the same call. */
th_err th_store_task_generation(struct th_store *st, const char *task_id, int64_t upto,
                                int64_t *generation, int64_t *last_seq, struct th_error *e);
/* 1 when an event of this kind (th_store_event_append's label) is a mutation that
 * advances its task's generation: "task", "status", "artifact". */
int th_event_is_mutation(const char *kind);
/* PRAGMA data_version, to skip polls when nothing was committed elsewhere; -1 when it
 * cannot be read. It also changes when the store opened its connection again (STORE-9),
 * so a reader that compares it reads again after any change of connection. */
int64_t th_store_data_version(struct th_store *st);
/* STORE-6: news of other connections' commits without polling. On PostgreSQL a write
 * transaction that appended an event to a followed task (th_store_follow) announces
 * itself at commit (NOTIFY tiny_harness), and th_store_change_fd makes this connection
 * listen: the descriptor becomes readable when an announcement may have arrived (it can
 * change after a lost connection was opened again: ask again after each wait). -1 on
 * SQLite, whose callers keep polling th_store_data_version. */
int th_store_change_fd(struct th_store *st);
/* 1 when a commit was announced to this connection since the last call (reading what
 * arrived on the descriptor), else 0. Polling data_version stays the fallback. */
int th_store_change_seen(struct th_store *st);
/* Waits up to ms for an announced commit (PostgreSQL, once listening) or simply ms. */
void th_store_change_wait(struct th_store *st, int ms);
/* SCALE-1 (decision-083): on PostgreSQL, this connection's follower (one per store)
 * starts (on) or stops following task_id: while a follow lasts, a commit that appends an
 * event to the task announces itself (above); other commits do not. A follow lapses
 * TH_FOLLOW_LAPSE_MS after it was put unless put again: a follower puts each of its
 * follows again every TH_FOLLOW_RENEW_MS, so those of a follower that died lapse. Outside
 * a transaction. Only a shorter wait depends on it: streams keep polling
 * th_store_data_version. Nothing on SQLite. */
#define TH_FOLLOW_RENEW_MS 10000
#define TH_FOLLOW_LAPSE_MS 30000
th_err th_store_follow(struct th_store *st, const char *task_id, int on, struct th_error *e);
/* Puts the follows of n tasks (repeats allowed) in one statement: a follower's renewal. */
th_err th_store_follows_renew(struct th_store *st, const char *const *task_ids, size_t n,
                              struct th_error *e);
/* Deletes every lapsed follow (of followers that died); a follower that renews calls it
 * with each round. Outside a transaction; nothing on SQLite. */
th_err th_store_follows_prune(struct th_store *st, struct th_error *e);
/* Rows this connection has inserted, updated or deleted since it opened: a request that
 * left it unchanged wrote nothing (the worker then has nothing to tell its streams). */
int64_t th_store_changes(struct th_store *st);

/* ---- sub-task links -------------------------------------------------------- */

th_err th_store_subtask_link(struct th_store *st, const char *parent_id, const char *child_id,
                             struct th_error *e);
/* Children of parent_id not in a terminal state, as {id, name} rows (ids in
 * creation order); *out freed by th_participants_free-like th_subtask_refs_free. */
struct th_subtask_ref {
	char *id;   /* free (th_subtask_refs_free) */
	char *name; /* free */
	int state;  /* enum th_state */
};
void th_subtask_refs_free(struct th_subtask_ref *r, size_t n);
th_err th_store_subtasks(struct th_store *st, const char *parent_id, int unresolved_only,
                         struct th_subtask_ref **out, size_t *n, struct th_error *e);
/* SCALE-1: st is about to ask th_store_subtasks with these arguments: on PostgreSQL the
 * read is sent ahead, with the reads th_store_expect sends (a cancellation, decision-088)
 * or a view's (th_store_expect_view); nothing on SQLite. */
void th_store_subtasks_soon(struct th_store *st, const char *parent_id, int unresolved_only);
/* Marks the link parent→child resolved (resolved_ms = now). */
th_err th_store_subtask_resolve(struct th_store *st, const char *child_id, struct th_error *e);

/* ---- turns (durable units of model work, with leases) ---------------------- */

enum th_turn_state { TH_TURN_QUEUED, TH_TURN_RUNNING, TH_TURN_DONE, TH_TURN_CUT, TH_TURN_FAILED };

struct th_turn_row {
	int64_t id;
	char *task_id;    /* free (th_turn_row_free) */
	char *message_id; /* the input message that started it; free */
	int state;        /* enum th_turn_state; column `state` holds "queued"… */
	int attempts;
	int64_t lease_until_ms;
	int worker_pid;
	int cut;     /* set by complete/cancel from any process */
	char *error; /* free; NULL unless failed */
};
void th_turn_row_free(struct th_turn_row *t);

/* A lease on a turn (TURN-6): the turn and the attempt number its holder claimed it
 * with. Every claim and takeover increments turns.attempts, so the number names one
 * holder; each write a turn makes is conditioned on it, and a holder whose number is
 * no longer the turn's changes nothing. A turn started by the worker that accepted its
 * message holds epoch TH_LEASE_FIRST. */
struct th_lease {
	int64_t turn_id;
	int epoch;
};
#define TH_LEASE_FIRST 1

/* A queued turn nobody holds yet (recovery claims it). */
th_err th_store_turn_create(struct th_store *st, const char *task_id, const char *message_id,
                            int64_t *turn_id, struct th_error *e);
/* A turn started at once by pid: running, attempts = TH_LEASE_FIRST, leased for
 * lease_ms; *out receives its lease. */
th_err th_store_turn_start(struct th_store *st, const char *task_id, const char *message_id,
                           int pid, int lease_ms, struct th_lease *out, struct th_error *e);
/* A turn that ran in worker pid inside the transaction that accepted its message,
 * recorded as it ended (state done or failed, error may be NULL): attempts 1, no lease,
 * and it never enters the indexes of live turns. */
th_err th_store_turn_record(struct th_store *st, const char *task_id, const char *message_id,
                            int pid, int state, const char *error, struct th_error *e);
th_err th_store_turn_get(struct th_store *st, int64_t turn_id, struct th_turn_row *out,
                         struct th_error *e);
/* Renews the lease (lease_until = now + lease_ms) while the turn is running, not cut and
 * still at l->epoch; *held = 1 then, else 0 (cut, finished or taken over: stop working
 * on it and write nothing). Run first in every transaction a turn writes in, so the
 * check and the writes commit together. */
th_err th_store_turn_hold(struct th_store *st, const struct th_lease *l, int lease_ms, int *held,
                          struct th_error *e);
/* Ends the turn held with l in state (and error text, may be NULL). TH_EINVAL when the
 * lease is no longer held (call th_store_turn_hold first in the same transaction). */
th_err th_store_turn_finish(struct th_store *st, const struct th_lease *l, int state,
                            const char *error, struct th_error *e);
/* Sets cut = 1 and state = cut on every queued or running turn of the task; *n gets
 * how many (may be NULL). */
th_err th_store_turns_cut(struct th_store *st, const char *task_id, int *n, struct th_error *e);
/* 1 when the turn's cut flag is set (read outside or inside a transaction). */
int th_store_turn_is_cut(struct th_store *st, int64_t turn_id);

/* ---- channels (CH-1..CH-3) ------------------------------------------------------------ */

/* Every task has a channel whose id is the task id and whose members are the task's
 * participants; it has no row of its own. Side channels among some participants are rows
 * of `channels` with their members in `channel_members`. */

/* Opens side channel channel_id on the task with the given members (each must be a
 * participant of the task; created_by is added when not listed). TH_EINVAL when
 * channel_id is empty, equals the task id or is already a channel of the task, or a
 * member is not a participant; TH_ENOTFOUND when the task does not exist. */
th_err th_store_channel_create(struct th_store *st, const char *task_id, const char *channel_id,
                               const char *created_by, const char *const *members, size_t n_members,
                               struct th_error *e);
/* *is_member = 1 when participant_id may use channel_id of the task (task channel: any
 * participant of the task; side channel: a member), else 0. *exists (may be NULL) = 1
 * when the channel exists (the task channel exists when the task does). The caller words
 * one refusal for "no such channel" and "not a member" (CH-2). */
th_err th_store_channel_is_member(struct th_store *st, const char *task_id, const char *channel_id,
                                  const char *participant_id, int *exists, int *is_member,
                                  struct th_error *e);
/* Member ids of a channel (task channel: the participants, in the order added), as an
 * array of *n strings freed by th_strings_free. */
th_err th_store_channel_members(struct th_store *st, const char *task_id, const char *channel_id,
                                char ***ids, size_t *n, struct th_error *e);
void th_strings_free(char **v, size_t n);
/* 1 when the task has at least one side channel (0 also on error): readers skip the
 * per-message membership filter of history when it has none. */
int th_store_has_side_channels(struct th_store *st, const char *task_id);

enum th_chan_kind { TH_CHAN_MESSAGE, TH_CHAN_HELP_REQUEST, TH_CHAN_HELP_REPLY };

struct th_channel_msg {
	char *channel_id;  /* free (th_channel_msgs_free) */
	int64_t seq;       /* 1, 2, 3, ... per channel */
	char *message_id;  /* the A2A messageId that carried it; free */
	char *sender;      /* free */
	int kind;          /* enum th_chan_kind */
	char *text;        /* never NULL on output (may be ""); free */
	char *json;        /* the channel part's value (CH-1 object) as text; free */
	char *in_reply_to; /* help request id or NULL; free */
	int64_t created_ms;
};
void th_channel_msgs_free(struct th_channel_msg *m, size_t n);

/* A channel message to append (th_store_channel_append); borrowed. */
struct th_channel_msg_in {
	const char *channel_id;  /* required */
	const char *message_id;  /* required */
	const char *sender;      /* required */
	int kind;                /* enum th_chan_kind */
	const char *text;        /* NULL = "" */
	const char *json;        /* required */
	const char *in_reply_to; /* required for a help_reply, else may be NULL */
};
/* Appends m to the channel (seq and created_ms are assigned); *seq receives it (may be
 * NULL). Does not check membership (th_store_channel_is_member) nor that a side channel
 * exists. A help_reply needs in_reply_to (TH_EINVAL). */
th_err th_store_channel_append(struct th_store *st, const char *task_id,
                               const struct th_channel_msg_in *m, int64_t *seq, struct th_error *e);
/* Messages of a channel with seq > after, oldest first, at most limit (<= 0: all). */
th_err th_store_channel_messages(struct th_store *st, const char *task_id, const char *channel_id,
                                 int64_t after, int limit, struct th_channel_msg **out, size_t *n,
                                 struct th_error *e);

/* ---- help requests (CH-4, CH-5, STATUS-1) ----------------------------------------------- */

enum th_help_state { TH_HELP_PENDING, TH_HELP_ANSWERED, TH_HELP_CANCELED };

struct th_help_request {
	char *id;         /* free (th_help_request_free) */
	char *task_id;    /* free */
	char *channel_id; /* free */
	char *asked_by;   /* the request's sender (the agent for /ask and ask_participant); free */
	char *asked_for;  /* who typed /ask, NULL when the model asked (006); free */
	char *asked;      /* the participant asked; free */
	char *question;   /* free */
	int state;        /* enum th_help_state */
	int64_t created_ms;
	int64_t answered_ms;     /* 0 unless answered */
	char *answer_message_id; /* NULL unless answered; free */
};
void th_help_request_free(struct th_help_request *h);

/* A help request to store (th_store_help_create); borrowed. Fields as in
 * th_help_request; every one is required but asked_for (may be NULL). */
struct th_help_request_in {
	const char *id;
	const char *task_id;
	const char *channel_id;
	const char *asked_by;
	const char *asked_for;
	const char *asked;
	const char *question;
};

/* Stores a pending request from r. TH_EINVAL for a duplicate id or a missing field,
 * TH_ENOTFOUND when the task does not exist. */
th_err th_store_help_create(struct th_store *st, const struct th_help_request_in *r,
                            struct th_error *e);
/* TH_ENOTFOUND when there is no request id on task_id (a request of another task is not
 * found either). */
th_err th_store_help_get(struct th_store *st, const char *task_id, const char *id,
                         struct th_help_request *out, struct th_error *e);
/* The task's latest pending request, or TH_ENOTFOUND when none is pending. */
th_err th_store_help_pending(struct th_store *st, const char *task_id, struct th_help_request *out,
                             struct th_error *e);
/* The oldest pending request of the task that asked_by sent to asked, or TH_ENOTFOUND. */
th_err th_store_help_pending_for(struct th_store *st, const char *task_id, const char *asked_by,
                                 const char *asked, struct th_help_request *out,
                                 struct th_error *e);
/* SCALE-1 (decision-088): the write transaction st runs is about to ask
 * th_store_help_pending_for with these arguments: on PostgreSQL the read is sent ahead,
 * with the reads th_store_expect sends, and its answer kept until the transaction writes
 * a help request; nothing on SQLite. */
void th_store_help_pending_for_soon(struct th_store *st, const char *task_id, const char *asked_by,
                                    const char *asked);
/* pending -> answered (answered_ms = now, answer_message_id). Only from pending:
 * TH_ENOTFOUND for an unknown request (or one of another task); TH_EINVAL with
 * "already answered" when it was answered before (*prev = TH_HELP_ANSWERED) or
 * "was canceled" (*prev = TH_HELP_CANCELED). prev may be NULL; on TH_OK it is
 * TH_HELP_PENDING. */
th_err th_store_help_answer(struct th_store *st, const char *task_id, const char *id,
                            const char *answer_message_id, int *prev, struct th_error *e);
/* Every pending request of the task -> canceled; *n (may be NULL) gets how many. */
th_err th_store_help_cancel_pending(struct th_store *st, const char *task_id, int *n,
                                    struct th_error *e);

/* ---- plans (TASK-1, CMD-3) ------------------------------------------------------------ */

enum th_step_state { TH_STEP_PENDING, TH_STEP_ACTIVE, TH_STEP_DONE, TH_STEP_FAILED };
/* A step state's name, as stored and as on the wire ("pending", "active", "done",
 * "failed"); "" for a value out of range. The one table of them. */
const char *th_store_step_state_name(int state);
/* The state a name stands for; TH_STEP_PENDING for NULL or an unknown name. */
int th_store_step_state_from_name(const char *name);

struct th_plan_step {
	char *step_id;           /* free (th_plan_steps_free) */
	char *name;              /* free */
	char *description;       /* never NULL on output; free */
	char *depends_on_json;   /* JSON array of step ids; free */
	int state;               /* enum th_step_state */
	char *output;            /* NULL until set; free */
	char *linked_tasks_json; /* JSON array of task ids; free */
	int64_t updated_ms;
};
void th_plan_steps_free(struct th_plan_step *s, size_t n);

/* A plan step to store (th_store_plan_replace); borrowed. Fields as in th_plan_step
 * (updated_ms is assigned). */
struct th_plan_step_in {
	const char *step_id;           /* required, not "" */
	const char *name;              /* required */
	const char *description;       /* NULL = "" */
	const char *depends_on_json;   /* NULL = "[]" */
	int state;                     /* enum th_step_state */
	const char *output;            /* or NULL */
	const char *linked_tasks_json; /* NULL = "[]" */
};

/* Replaces the task's plan by steps[0..n) in that order (n = 0: no plan). TH_EINVAL for
 * a duplicate or empty step id, an unknown state or a JSON field that is not an array
 * (the caller rolls back); TH_ENOTFOUND when the task does not exist. */
th_err th_store_plan_replace(struct th_store *st, const char *task_id,
                             const struct th_plan_step_in *steps, size_t n, struct th_error *e);
/* Sets one step's state; output and linked_tasks_json are changed only when not NULL.
 * TH_ENOTFOUND when the task has no such step. */
th_err th_store_plan_step_update(struct th_store *st, const char *task_id, const char *step_id,
                                 int state, const char *output, const char *linked_tasks_json,
                                 struct th_error *e);
/* The plan's steps in order (*n = 0: the task has no plan). */
th_err th_store_plan(struct th_store *st, const char *task_id, struct th_plan_step **out, size_t *n,
                     struct th_error *e);

/* ---- sub-task numbering and parents (TASK-4, CTL-4) ------------------------------------- */

/* The next child number of parent_id (1, 2, 3, ...), for the child id "<parent>.<n>".
 * Atomic within the caller's transaction (a rollback gives the number back together with
 * the child it did not create); a committed number is never handed out again, even when
 * the link or the child is deleted later. TH_ENOTFOUND when the parent does not exist. */
th_err th_store_subtask_next_number(struct th_store *st, const char *parent_id, int64_t *n,
                                    struct th_error *e);
/* The parent of a linked sub-task into *parent_id (caller frees), or TH_ENOTFOUND. */
th_err th_store_subtask_parent(struct th_store *st, const char *child_id, char **parent_id,
                               struct th_error *e);

/* ---- A2UI surfaces (UI-1..UI-3) --------------------------------------------------------- */

/* The task's surface registry (JSON text, caller frees) into *json; *json = NULL and
 * TH_OK when the task has none yet. */
th_err th_store_a2ui_get(struct th_store *st, const char *task_id, char **json, struct th_error *e);
/* Stores the registry (valid JSON, else TH_EINVAL); keeps the artifact numbering. */
th_err th_store_a2ui_put(struct th_store *st, const char *task_id, const char *json,
                         struct th_error *e);
/* The next n (1, 2, 3, ...) of artifact id "a2ui:<n>" for the task, never reused. */
th_err th_store_a2ui_next_artifact(struct th_store *st, const char *task_id, int64_t *n,
                                   struct th_error *e);

/* ---- turn recovery (TURN-4) ------------------------------------------------------------- */

void th_turn_rows_free(struct th_turn_row *t, size_t n);
/* Turns to recover, oldest id first, at most limit (<= 0: all): running turns whose
 * lease_until_ms < now_ms, and queued turns not touched since queued_before_ms (their
 * worker died before claiming them; pass 0 to leave queued turns out). task_id limits
 * the search to one task (NULL: every task). */
th_err th_store_turns_expired(struct th_store *st, const char *task_id, int64_t now_ms,
                              int64_t queued_before_ms, int limit, struct th_turn_row **out,
                              size_t *n, struct th_error *e);
/* running -> queued (worker_pid and lease cleared, attempts kept), only while the lease
 * is expired at now_ms (pass INT64_MAX to release a turn one holds). TH_EINVAL when the
 * turn is not running or its lease was renewed meanwhile; TH_ENOTFOUND when unknown. */
th_err th_store_turn_release(struct th_store *st, int64_t turn_id, int64_t now_ms,
                             struct th_error *e);
/* When the first of task_id's live turns counts as expired for th_store_turns_expired:
 * the earliest lease_until_ms of a running one, or updated_ms + queued_lease_ms of a
 * queued one; -1 when the task has no live turn. Expired at now means *at < now. */
th_err th_store_turn_next_expiry(struct th_store *st, const char *task_id, int64_t queued_lease_ms,
                                 int64_t *at, struct th_error *e);
/* Claims a turn that is queued, or running with a lease expired at now_ms, for pid:
 * attempts + 1, which is the new holder's epoch (*out). TH_EINVAL when another worker
 * holds it or it ended (so two recoverers never both run it); TH_ENOTFOUND when
 * unknown. */
th_err th_store_turn_takeover(struct th_store *st, int64_t turn_id, int pid, int lease_ms,
                              int64_t now_ms, struct th_lease *out, struct th_error *e);
/* The last attempt of a turn seen expired (seen: a row of th_store_turns_expired) is
 * spent: failed with why, but only while it is still expired at now_ms and nobody took
 * it over since (attempts unchanged); *done = 1 when it was failed here, else 0. */
th_err th_store_turn_give_up(struct th_store *st, const struct th_turn_row *seen, int64_t now_ms,
                             const char *why, int *done, struct th_error *e);

/* ---- push notifications (PUSH-1, PUSH-2) ------------------------------------------------ */

struct th_push_config {
	char *task_id;            /* free (th_push_config_free) */
	char *config_id;          /* free */
	char *participant_id;     /* the owner; free */
	char *url;                /* free */
	unsigned char *token_enc; /* opaque (encrypted) bytes or NULL; free */
	size_t token_len;
	char *auth_scheme;       /* e.g. "Bearer" or NULL; free */
	unsigned char *auth_enc; /* opaque (encrypted) credentials or NULL; free */
	size_t auth_len;
	int64_t created_ms;
};
void th_push_config_free(struct th_push_config *c);
void th_push_configs_free(struct th_push_config *c, size_t n);

/* Creates the config, or replaces url/token/auth of the participant's own config with the
 * same id. TH_EINVAL when the id is taken by another participant; TH_ENOTFOUND when the
 * task does not exist. Blobs are stored as given. */
th_err th_store_push_config_put(struct th_store *st, const struct th_push_config *c,
                                struct th_error *e);
/* participant_id NULL: any owner. TH_ENOTFOUND when missing or owned by someone else. */
th_err th_store_push_config_get(struct th_store *st, const char *task_id, const char *config_id,
                                const char *participant_id, struct th_push_config *out,
                                struct th_error *e);
/* Configs of the task (participant_id NULL: all of them) in creation order. */
th_err th_store_push_configs(struct th_store *st, const char *task_id, const char *participant_id,
                             struct th_push_config **out, size_t *n, struct th_error *e);
/* Deletes the config (and its pending deliveries). TH_ENOTFOUND as for get. */
th_err th_store_push_config_delete(struct th_store *st, const char *task_id, const char *config_id,
                                   const char *participant_id, struct th_error *e);

/* Queues event (the StreamResponse of event seq, borrowed; its whole text) for every
 * config of the task; with channel_id naming a side channel, only for configs whose owner
 * is a member (CH-3). The text is made only when the task may have a config: on SQLite
 * one is looked for; on PostgreSQL only a task the running write made itself and put no
 * config of is known to have none (decision-081). An event already queued for a config
 * is not queued twice. *n (may be NULL) = rows queued. Call it in the transaction that
 * appends the event. */
th_err th_store_push_enqueue(struct th_store *st, const char *task_id, int64_t seq,
                             json_object *event, const char *channel_id, int *n,
                             struct th_error *e);

enum th_push_state { TH_PUSH_PENDING, TH_PUSH_SENDING, TH_PUSH_DELIVERED, TH_PUSH_DEAD };

struct th_push_delivery {
	int64_t id;
	char *task_id;   /* free (th_push_deliveries_free) */
	char *config_id; /* free */
	int64_t seq;
	char *body;   /* free */
	int attempts; /* including the one just claimed */
};
void th_push_deliveries_free(struct th_push_delivery *d, size_t n);
/* Claims up to limit deliveries due at now_ms (pending, or sending with an expired
 * claim) for lease_ms: state sending, attempts + 1. Ordered by id (enqueue order). POST
 * them outside the transaction, then report each with delivered / retry / dead. */
th_err th_store_push_claim_due(struct th_store *st, int64_t now_ms, int lease_ms, int limit,
                               struct th_push_delivery **out, size_t *n, struct th_error *e);
th_err th_store_push_delivered(struct th_store *st, int64_t id, struct th_error *e);
/* How many deliveries this connection queued since the last call (then 0 again). */
int th_store_push_take_queued(struct th_store *st);
/* 1 when some delivery is due at now_ms (pending, or sending with an expired claim), else 0
 * (also on error). A read, no transaction: workers call it after every request. */
int th_store_push_any_due(struct th_store *st, int64_t now_ms);
/* OBS-2: deliveries not yet delivered (pending, or being sent) into *backlog, and the
 * ones that gave up (dead, until push_keep_hours prunes them) into *dead. Two counts
 * over the (state, next_attempt_ms) index; a read, no transaction. */
th_err th_store_push_backlog(struct th_store *st, int64_t *backlog, int64_t *dead,
                             struct th_error *e);

struct th_push_backoff {
	int base_ms;      /* delay after the first failed attempt; doubles each time */
	int max_ms;       /* delay cap */
	int max_attempts; /* after this many attempts the delivery is dead */
};
/* A failed attempt: back to pending at now_ms + min(max, base * 2^(attempts-1)), or dead
 * once attempts reached max_attempts; *dead (may be NULL) says which. */
th_err th_store_push_retry(struct th_store *st, int64_t id, int64_t now_ms, const char *error,
                           const struct th_push_backoff *b, int *dead, struct th_error *e);
/* A permanent failure (e.g. HTTP 4xx): dead at once. */
th_err th_store_push_dead(struct th_store *st, int64_t id, const char *error, struct th_error *e);
/* Deletes delivered deliveries last changed before delivered_before_ms and dead ones
 * (dead letters, RET-4) that died before dead_before_ms; *n (may be NULL). */
th_err th_store_push_prune(struct th_store *st, int64_t delivered_before_ms, int64_t dead_before_ms,
                           int64_t *n, struct th_error *e);

/* A dead letter (RET-4): a delivery that gave up, as the view push_dead_letters (migration
 * 017) gives it, without its body and without the config's secrets. */
struct th_push_dead_letter {
	int64_t id;      /* the push_outbox row */
	char *task_id;   /* free (th_push_dead_letters_free) */
	char *config_id; /* free */
	char *url;       /* the webhook URL as stored, whole (the caller redacts it, SEC-6); free */
	int64_t seq;     /* the event that was not delivered */
	int attempts;    /* POSTs tried */
	char *last_error; /* why the last one failed, redacted when written (SEC-6), or NULL;
	                     free */
	int64_t created_ms;
	int64_t died_ms;
};
void th_push_dead_letters_free(struct th_push_dead_letter *d, size_t n);
/* The dead letters of the push configs participant owns on tasks of tenant ("" the
 * default one), newest death first (died_ms, then id, both descending), only those
 * before the cursor (died_ms < before_ms, or equal and id < before_id; INT64_MAX for
 * both: from the newest), at most limit rows (1..1000). A read, no transaction; it walks
 * the dead rows of the (state, next_attempt_ms) index, all owners' (kept at most
 * retain_dead_letters), and looks each one's config and task up by primary key. */
th_err th_store_push_dead_letters(struct th_store *st, const char *participant, const char *tenant,
                                  int64_t before_ms, int64_t before_id, int limit,
                                  struct th_push_dead_letter **out, size_t *n, struct th_error *e);

/* ---- operator queries (STORE-2) --------------------------------------------------------- */

struct th_task_brief {
	char *id;        /* free (th_task_briefs_free) */
	int state;       /* enum th_state */
	char *sub_state; /* or NULL; free */
	char *name;      /* free */
	char *parent_id; /* or NULL; free */
	int64_t updated_ms;
};
void th_task_briefs_free(struct th_task_brief *b, size_t n);
/* Every task (no participant filter; for `tiny-harness tasks list`), newest updated_ms
 * first; state 0 = any; at most limit rows (<= 0: all). */
th_err th_store_tasks_overview(struct th_store *st, int state, int limit,
                               struct th_task_brief **out, size_t *n, struct th_error *e);
/* Deletes up to limit (<= 0: all) tasks in a terminal state (COMPLETED, FAILED, CANCELED,
 * REJECTED) whose updated_ms < before_ms, with every row that references them; *n gets
 * how many tasks. Call repeatedly with a limit to keep transactions short. */
th_err th_store_purge(struct th_store *st, int64_t before_ms, int limit, int64_t *n,
                      struct th_error *e);
/* RET-2 (decision-071): a task is stuck when it is not in a terminal state, has no turn
 * queued or running, no sub-task that is not in a terminal state, and neither its status
 * (updated_ms), nor its newest event, nor its newest message is as recent as before_ms.
 * Deletes the stuck tasks among those whose number is in (after_num, upto_num], with
 * every row that references them; *n gets how many. th_store_task_window gives the
 * windows, so a sweep reads the tasks table once in short write transactions. */
th_err th_store_purge_stuck(struct th_store *st, int64_t before_ms, int64_t after_num,
                            int64_t upto_num, int64_t *n, struct th_error *e);
/* The number of the size-th task after after_num (*upto), or of the last one when fewer
 * remain; 0 when none does. */
th_err th_store_task_window(struct th_store *st, int64_t after_num, int size, int64_t *upto,
                            struct th_error *e);

/* ---- approvals (UI-4) -------------------------------------------------------------------- */

struct th_confirm {
	char *id;         /* free (th_confirm_free) */
	char *surface_id; /* the A2UI Card, or NULL for a question asked in text; free */
	char *question;   /* free */
	char *asked_by;   /* free */
};
void th_confirm_free(struct th_confirm *c);

/* Records a pending approval question (surface_id NULL: asked in text). */
th_err th_store_confirm_create(struct th_store *st, const char *task_id, const char *id,
                               const char *surface_id, const char *question, const char *asked_by,
                               struct th_error *e);
/* The pending approval of the task on surface_id, or (surface_id NULL) its latest
 * pending one asked in text; TH_ENOTFOUND when there is none. */
th_err th_store_confirm_pending(struct th_store *st, const char *task_id, const char *surface_id,
                                struct th_confirm *out, struct th_error *e);
/* pending -> approved / rejected by decided_by; TH_EINVAL when it was decided already. */
th_err th_store_confirm_decide(struct th_store *st, const char *task_id, const char *id,
                               int approved, const char *decided_by, struct th_error *e);

/* ---- API keys (keys.c, sql/008; SEC-1) ---------------------------------------------- */

struct th_api_key {
	char *id;          /* free (th_api_keys_free) */
	char *participant; /* free */
	char *name;        /* NULL when none; free */
	int64_t created_ms;
	int64_t revoked_ms; /* 0 while the key works */
};
void th_api_keys_free(struct th_api_key *keys, size_t n);

/* Records a key by its hash (hex SHA-256); the key itself is never stored. */
th_err th_store_key_add(struct th_store *st, const char *id, const char *participant,
                        const char *name, const char *hash, struct th_error *e);
/* The participant of the unrevoked key with hash into *participant (free), or
 * TH_ENOTFOUND. */
th_err th_store_key_find(struct th_store *st, const char *hash, char **participant,
                         struct th_error *e);
/* Every key, oldest first, revoked ones included (*keys NULL when none). */
th_err th_store_key_list(struct th_store *st, struct th_api_key **keys, size_t *n,
                         struct th_error *e);
/* Revokes the unrevoked keys whose id or name is which; *n says how many. */
th_err th_store_key_revoke(struct th_store *st, const char *which, int64_t *n, struct th_error *e);

#endif
