/* store.h — every SQL statement of the project lives behind this header.
 *
 * One SQLite database file in WAL mode, opened once per worker process after it
 * starts. Schema: sql/NNN_*.sql, embedded in the binary and applied in order under
 * PRAGMA user_version inside one BEGIN IMMEDIATE (STORE-1). The harness groups calls
 * into transactions with th_store_begin/commit/rollback; every function below that
 * writes must be called inside one. Each change to a task is paired by the caller
 * with th_store_event_append in the same transaction (STREAM-3).
 *
 * Rows are returned in structs whose string fields are owned (free them with the
 * matching *_free). JSON columns travel as text. */
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
};

/* Opens (creating if needed) and migrates the database. *out is freed by
 * th_store_close. A database whose user_version is newer than this binary knows,
 * or whose application_id is not ours, is refused with a message naming it. */
th_err th_store_open(const struct th_store_opts *o, struct th_store **out, struct th_error *e);
void th_store_close(struct th_store *st);
/* The schema version the binary brings (the highest migration number). */
int th_store_schema_version(void);
/* The raw handle, for tests and the `tasks` CLI only. */
sqlite3 *th_store_db(struct th_store *st);

/* BEGIN IMMEDIATE, retried with randomised back-off when SQLITE_BUSY outlives the
 * busy timeout; TH_EBUSY only after every retry failed. */
th_err th_store_begin(struct th_store *st, struct th_error *e);
th_err th_store_commit(struct th_store *st, struct th_error *e);
void th_store_rollback(struct th_store *st); /* safe to call when no transaction is open */

/* ---- tasks ------------------------------------------------------------- */

struct th_task_row {
	char *id;                  /* free (th_task_row_free) */
	char *context_id;          /* free */
	int state;                 /* enum th_state; column `state` holds its name */
	char *sub_state;           /* "awaiting-next-message" | "awaiting-answer" | NULL; free */
	char *status_meta_json;    /* status-extension object {"sub_state":…} or NULL; free */
	char *status_message_json; /* the status Message, or NULL; free */
	int64_t status_ms;         /* status timestamp */
	char *name;                /* free */
	char *goal;                /* free */
	char *ext_json;            /* task-extension object without participants; free */
	char *created_by;          /* participant whose message started the task; free */
	char *parent_id;           /* parent task id or NULL; free */
	int64_t created_ms;
	int64_t updated_ms;
	int64_t last_seq;          /* highest event seq of the task */
};
void th_task_row_free(struct th_task_row *r);

th_err th_store_task_insert(struct th_store *st, const struct th_task_row *r, struct th_error *e);
/* TH_ENOTFOUND when there is no such task (the message is the caller's to write). */
th_err th_store_task_get(struct th_store *st, const char *id, struct th_task_row *out,
                         struct th_error *e);
/* Sets state, sub_state, status_meta_json, status_message_json, status_ms and
 * updated_ms from r (other fields ignored). */
th_err th_store_task_set_status(struct th_store *st, const struct th_task_row *r,
                                struct th_error *e);
/* Sets name, goal and ext_json from r. */
th_err th_store_task_set_ext(struct th_store *st, const struct th_task_row *r, struct th_error *e);

struct th_list_query {
	const char *participant;    /* only tasks this participant is on (required) */
	const char *context_id;     /* or NULL */
	int state;                  /* enum th_state, 0 = any */
	int64_t status_after_ms;    /* status_ms >= this; -1 = any */
	int limit;                  /* rows to return */
	int64_t cursor_ms;          /* with cursor_id: rows strictly after this key in */
	const char *cursor_id;      /* (status_ms DESC, id DESC) order; NULL = first page */
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

/* Inserts or, when already on the task, updates kind/role/display_name. */
th_err th_store_participant_put(struct th_store *st, const char *task_id,
                                const struct th_participant *p, struct th_error *e);
/* The participant's role into *role (caller frees), or TH_ENOTFOUND. */
th_err th_store_participant_role(struct th_store *st, const char *task_id, const char *participant_id,
                                 char **role, struct th_error *e);
/* Participants in the order they were added. */
th_err th_store_participants(struct th_store *st, const char *task_id, struct th_participant **out,
                             size_t *n, struct th_error *e);

/* ---- messages (history) ------------------------------------------------ */

/* Appends a message to the task's history. TH_EINVAL with "duplicate" in the message
 * when (task_id, message_id) is already stored. */
th_err th_store_message_append(struct th_store *st, const char *task_id, const char *message_id,
                               const char *role, const char *sender, const char *json,
                               struct th_error *e);
/* 1 when (task_id, message_id) is stored, 0 when not. */
int th_store_message_exists(struct th_store *st, const char *task_id, const char *message_id);
/* The task whose first message is message_id from sender (new-task de-duplication):
 * *task_id (caller frees) or TH_ENOTFOUND. */
th_err th_store_task_by_first_message(struct th_store *st, const char *sender,
                                      const char *message_id, char **task_id, struct th_error *e);
/* The last `limit` messages (limit < 0: all) oldest first, as a new JSON array. */
th_err th_store_history(struct th_store *st, const char *task_id, int limit, json_object **out,
                        struct th_error *e);
/* Number of messages stored for the task. */
int64_t th_store_message_count(struct th_store *st, const char *task_id);

/* ---- artifacts ----------------------------------------------------------- */

th_err th_store_artifact_put(struct th_store *st, const char *task_id, const char *artifact_id,
                             const char *json, struct th_error *e);
/* All artifacts oldest first, as a new JSON array (possibly empty). */
th_err th_store_artifacts(struct th_store *st, const char *task_id, json_object **out,
                          struct th_error *e);

/* ---- events (the per-task log every stream reads) ------------------------ */

/* Appends json (a StreamResponse) as the next seq of the task (tasks.last_seq + 1,
 * updated in the same statement group); *seq receives it (may be NULL). kind is a
 * short label for operators: "task", "status", "artifact", "message". */
th_err th_store_event_append(struct th_store *st, const char *task_id, const char *kind,
                             const char *json, int64_t *seq, struct th_error *e);

struct th_event {
	int64_t seq;
	char *kind; /* free (th_events_free) */
	char *json; /* free */
};
void th_events_free(struct th_event *ev, size_t n);
/* Events with seq > after, in order, at most limit (limit <= 0: all). */
th_err th_store_events_since(struct th_store *st, const char *task_id, int64_t after, int limit,
                             struct th_event **out, size_t *n, struct th_error *e);
/* PRAGMA data_version, to skip polls when nothing was committed elsewhere. */
int64_t th_store_data_version(struct th_store *st);

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
	int cut;          /* set by complete/cancel from any process */
	char *error;      /* free; NULL unless failed */
};
void th_turn_row_free(struct th_turn_row *t);

th_err th_store_turn_create(struct th_store *st, const char *task_id, const char *message_id,
                            int64_t *turn_id, struct th_error *e);
/* running, worker_pid = pid, lease_until = now + lease_ms, attempts + 1. */
th_err th_store_turn_claim(struct th_store *st, int64_t turn_id, int pid, int lease_ms,
                           struct th_error *e);
th_err th_store_turn_get(struct th_store *st, int64_t turn_id, struct th_turn_row *out,
                         struct th_error *e);
/* Sets state (and error text, may be NULL). */
th_err th_store_turn_finish(struct th_store *st, int64_t turn_id, int state, const char *error,
                            struct th_error *e);
/* Sets cut = 1 and state = cut on every queued or running turn of the task; *n gets
 * how many (may be NULL). */
th_err th_store_turns_cut(struct th_store *st, const char *task_id, int *n, struct th_error *e);
/* 1 when the turn's cut flag is set (read outside or inside a transaction). */
int th_store_turn_is_cut(struct th_store *st, int64_t turn_id);

#endif
