/* SPDX-License-Identifier: Apache-2.0 */
/* pg.c — the store on PostgreSQL (issue 15, STORE-6, decision-031): the connection, its
 * schema migrations, the statement helpers of stmt.c and the transaction calls of db.c,
 * on libpq. The store's other files do not know which backend they run on.
 *
 * Statements: each id is prepared once per connection (PQprepare, named "th<id>") from
 * the call site's text in PostgreSQL's dialect (dialect()); parameter types come from the argument
 * kinds (text, bigint, bytea), results come as text and are converted by the column
 * table. Writes: SQLite lets one writer in at a time, and the store's transactions rely
 * on that for each task (an event's seq is max(seq) + 1 of its task, a turn's lease is
 * checked and renewed in one transaction, a message resent is found before a second task
 * is made of it). On PostgreSQL a write transaction takes the advisory lock of each task
 * it touches before its first statement about that task (lock_for), so writes to one
 * task run one at a time on every host while writes to different tasks run side by side
 * (SCALE-1, decision-051); reads run on one REPEATABLE READ snapshot and never wait.
 *
 * Through a transaction pooler (db_pooler = transaction: PgBouncer's pool_mode =
 * transaction, decision-055) a connection's server session changes between
 * transactions, so nothing here may rely on one: each statement is sent unnamed with its
 * text (PQexecParams), a write transaction's lock_timeout and synchronous_commit are SET
 * LOCAL by its BEGIN, the migration lock is a transaction's, and LISTEN runs on a
 * connection of its own to db_listen (straight to the server), or nowhere: streams poll. */
#include <ctype.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "store/migrations.h"
#include "store/store.h"
#include "store/store_int.h"
#include "util/buf.h"
#include "util/ids.h"
#include "util/log.h"

/* The advisory locks. A write transaction's are two-key ones (pg_advisory_xact_lock(int,
 * int)): the first key names the kind, the second is hashtext() of what is locked. "tHar"
 * (as SQLite's application_id) for a task, "tHaF" for a task's first message (sender and
 * messageId: TASK-7's resend), "tHaK" for a caller's Idempotency-Key (A2A-11-IDEM-1),
 * "tHaP" for claiming push deliveries. Migrations take a
 * one-key transaction lock ("tHam"). Advisory locks are per database, so two tiny-harness
 * databases in one cluster never wait for each other. */
#define TH_PG_TASK_LOCK 0x74486172
#define TH_PG_FIRST_LOCK 0x74486146
#define TH_PG_OUTBOX_LOCK 0x74486150
#define TH_PG_KEY_LOCK 0x7448614b
#define TH_PG_MIGRATE_LOCK 0x7448616d
#define TH_PG_APP_ID 0x74486172
#define TH_PG_MAX_ARGS 32

/* Text of the statements pg.c runs itself (not through a call site of stmt.c). */
static const char *const schema_table_sql =
    "CREATE TABLE IF NOT EXISTS tiny_harness_schema ("
    " version integer NOT NULL, application_id bigint NOT NULL)";

/* 1 while st's connection has a transaction open (th_store_in_txn on PostgreSQL). */
static int in_txn(const struct th_store *st)
{
	PGTransactionStatusType t = PQtransactionStatus(st->pg);
	return t == PQTRANS_INTRANS || t == PQTRANS_INERROR || t == PQTRANS_ACTIVE;
}

int th_pg_in_txn(const struct th_store *st)
{
	/* A sealed read transaction is over on the server but not for its caller, who still
	 * reads its answers and ends it with th_store_read_end (decision-069). */
	return in_txn(st) || (st->conn != NULL && st->conn->pg_sealed);
}

/* The version PostgreSQL's migrations bring a database to: the same as SQLite's
 * (check_store tests it). */
static int pg_schema_version(void)
{
	return th_store_pg_migrations_n > 0
	           ? th_store_pg_migrations[th_store_pg_migrations_n - 1].version
	           : 0;
}

/* The URI without its password, for messages: "postgresql://user@host/db". A new string
 * (free), or NULL when out of memory. */
static char *redact(const char *uri)
{
	const char *rest = strstr(uri, "://");
	rest = rest != NULL ? rest + 3 : uri;
	size_t auth_end = strcspn(rest, "/?#");
	const char *at = memchr(rest, '@', auth_end);
	const char *colon = at != NULL ? memchr(rest, ':', (size_t)(at - rest)) : NULL;
	if (colon == NULL)
		return strdup(uri);
	size_t head = (size_t)(colon - uri);
	size_t len = head + strlen(at) + 1;
	char *out = malloc(len);
	if (out != NULL)
		snprintf(out, len, "%.*s%s", (int)head, uri, at);
	return out;
}

/* Records a failed result's SQLSTATE on st, logs PostgreSQL's own message (it may name
 * tables and values: the log, not the client, gets it) and words the error for the
 * client as th_store_fail does for SQLite. */
static th_err fail(struct th_store *st, const PGresult *r, const char *what, struct th_error *e)
{
	const char *state = r != NULL ? PQresultErrorField(r, PG_DIAG_SQLSTATE) : NULL;
	const char *msg = r != NULL ? PQresultErrorField(r, PG_DIAG_MESSAGE_PRIMARY) : NULL;
	if (msg == NULL)
		msg = PQerrorMessage(st->pg);
	snprintf(st->pg_state, sizeof st->pg_state, "%s", state != NULL ? state : "");
	int constraint = strncmp(st->pg_state, "23", 2) == 0;
	int busy = strcmp(st->pg_state, "40001") == 0 || strcmp(st->pg_state, "40P01") == 0 ||
	           strcmp(st->pg_state, "55P03") == 0 || strcmp(st->pg_state, "57014") == 0;
	char code[24];
	snprintf(code, sizeof code, "SQLSTATE %s", st->pg_state[0] != '\0' ? st->pg_state : "none");
	if (busy) {
		th_store_log_busy(st, what, msg, code);
		return th_error_set(e, TH_EBUSY, "database busy (%s)", what);
	}
	th_log(constraint ? TH_LOG_WARN : TH_LOG_ERROR, "database (%s): %s (%s)", what, msg, code);
	if (strcmp(st->pg_state, "23503") == 0)
		return th_error_set(e, TH_ENOTFOUND, "%s: no such task", what);
	if (constraint)
		return th_error_set(e, TH_EINVAL, "%s: the database refused the values", what);
	if (strcmp(st->pg_state, "53100") == 0)
		return th_error_set(e, TH_EINTERNAL,
		                    "database error (%s): the disk or quota is full", what);
	if (strcmp(st->pg_state, "25006") == 0)
		return th_error_set(e, TH_EINTERNAL,
		                    "database error (%s): the database is read-only", what);
	/* The connection is gone (class 08, or libpq's own error), or the server ended the
	 * session or is starting (57P01-57P03: a restart, pg_terminate_backend): the same
	 * request may succeed in a moment, 503 with Retry-After (a SendMessage resent
	 * with its messageId is kept once, TASK-7). */
	if (st->pg_state[0] == '\0' || strncmp(st->pg_state, "08", 2) == 0 ||
	    strncmp(st->pg_state, "57P0", 4) == 0)
		return th_error_set(e, TH_EUNAVAILABLE,
		                    "database error (%s): the connection to the database was lost; "
		                    "retry the request",
		                    what);
	return th_error_set(e, TH_EINTERNAL,
	                    "database error (%s); the server's error log has the details", what);
}

/* Runs sql (no parameters) for pg.c's own statements; TH_OK when it succeeded. */
static th_err run_plain(struct th_store *st, const char *sql, const char *what, struct th_error *e)
{
	PGresult *r = PQexec(st->pg, sql);
	ExecStatusType s = PQresultStatus(r);
	th_err err = s == PGRES_COMMAND_OK || s == PGRES_TUPLES_OK ? TH_OK : fail(st, r, what, e);
	PQclear(r);
	return err;
}

/* SQLite's text in PostgreSQL's dialect: each ?N becomes $N outside quoted text, and
 * "LIMIT ?N" becomes "LIMIT CASE WHEN $N >= 0 THEN $N END" (SQLite reads a negative
 * LIMIT as no limit, which callers use; PostgreSQL refuses one but reads NULL so). A
 * new string (free), or NULL when out of memory. */
static char *dialect(const char *sql)
{
	size_t len = strlen(sql);
	/* Each rewritten LIMIT grows by fewer than 48 bytes; one per 8 bytes of text at most. */
	char *out = malloc(len + (len / 8 + 1) * 48 + 1);
	if (out == NULL)
		return NULL;
	char *o = out;
	char quote = 0;
	for (const char *p = sql; *p != '\0';) {
		if (quote != 0) {
			if (*p == quote)
				quote = 0;
			*o++ = *p++;
		} else if (*p == '\'' || *p == '"') {
			quote = *p;
			*o++ = *p++;
		} else if (strncmp(p, "LIMIT ?", 7) == 0 && isdigit((unsigned char)p[7])) {
			int digits = (int)strspn(p + 7, "0123456789");
			o += sprintf(o, "LIMIT CASE WHEN $%.*s >= 0 THEN $%.*s END", digits, p + 7,
			             digits, p + 7);
			p += 7 + digits;
		} else if (*p == '?' && isdigit((unsigned char)p[1])) {
			*o++ = '$';
			p++;
		} else {
			*o++ = *p++;
		}
	}
	*o = '\0';
	return out;
}

/* The parameter types of args (n at most TH_PG_MAX_ARGS) into types: bigint, bytea or
 * text, as the argument kinds say. */
static void arg_types(const struct th_arg *args, size_t n, Oid *types)
{
	for (size_t k = 0; k < n; k++)
		types[k] = args[k].t == 'i'   ? 20 /* int8 */
		           : args[k].t == 'b' ? 17 /* bytea */
		                              : 25;
}

/* A prepared statement's name: "th" and its id. */
#define STMT_NAME (2 + TH_I64_TEXT)
static void stmt_name(char name[STMT_NAME], enum th_stmt_id id)
{
	name[0] = 't';
	name[1] = 'h';
	th_i64_text(name + 2, (int64_t)id);
}

/* Prepares statement id on the connection st runs on now (once per connection). */
static th_err prepare(struct th_store *st, enum th_stmt_id id, const char *sql,
                      const struct th_arg *args, size_t n, struct th_error *e)
{
	if (st->pg_prepared[id])
		return TH_OK;
	char *text = dialect(sql);
	if (text == NULL)
		return th_error_set(e, TH_ENOMEM, "out of memory (prepare)");
	Oid types[TH_PG_MAX_ARGS];
	arg_types(args, n, types);
	char name[STMT_NAME];
	stmt_name(name, id);
	st->conn->pg_trips++;
	PGresult *r = PQprepare(st->pg, name, text, (int)n, types);
	free(text);
	th_err err = PQresultStatus(r) == PGRES_COMMAND_OK ? TH_OK : fail(st, r, "prepare", e);
	PQclear(r);
	if (err == TH_OK)
		st->pg_prepared[id] = 1;
	return err;
}

/* Opens st's connection again (PQreset), which ends whatever the old one held on the
 * server (an aborted transaction, an aborted pipeline). What was prepared went with it;
 * a connection that listened listens again, and looks, since what was announced
 * meanwhile is lost. 1 when the new connection is up. */
static int reset_conn(struct th_store *st, const char *why)
{
	PQreset(st->pg);
	memset(st->pg_prepared, 0, TH_STMT_COUNT_);
	if (PQstatus(st->pg) != CONNECTION_OK)
		return 0;
	th_log(TH_LOG_WARN, "database connection %s; connected again", why);
	if (st->pg_listening && st->listen_pg == st->own_pg && st->pg == st->own_pg) {
		PQclear(PQexec(st->pg, "LISTEN tiny_harness"));
		st->pg_announced = 1;
	}
	return 1;
}

/* Leaves pipeline mode. A pipeline a lost or failing connection aborted cannot be left
 * while its results are unread, and left so, every later BEGIN would find a transaction
 * "already open" (the torture run under TH_TEST_PG, pg_terminate_backend): its
 * transaction is over for its caller, so the connection is opened again. A connection
 * already gone is reconnected()'s. */
static void leave_pipeline(struct th_store *st, const char *why)
{
	if (PQstatus(st->pg) == CONNECTION_OK && PQpipelineStatus(st->pg) != PQ_PIPELINE_OFF &&
	    !PQexitPipelineMode(st->pg))
		(void)reset_conn(st, why);
}

/* After a failure outside a transaction: a connection the server closed (a restart, an
 * idle timeout) is opened again, and the statement may run once more. Inside a
 * transaction nothing is retried: the transaction is gone with the connection. */
static int reconnected(struct th_store *st)
{
	if (PQstatus(st->pg) != CONNECTION_BAD || in_txn(st))
		return 0;
	return reset_conn(st, "lost");
}

/* Reads what arrived on listen_pg and frees the announcements; pg_announced notes any. */
static int note_announcements(struct th_store *st)
{
	if (PQconsumeInput(st->listen_pg) == 0)
		st->pg_announced = 1; /* a broken connection: look (and reconnect) */
	PGnotify *n;
	while ((n = PQnotifies(st->listen_pg)) != NULL) {
		PQfreemem(n);
		st->pg_announced = 1;
	}
	return st->pg_announced;
}

/* 1 when sql changes rows (INSERT, UPDATE, DELETE, or a WITH in front of one). */
static int writes(const char *sql)
{
	while (isspace((unsigned char)*sql))
		sql++;
	static const char *const verbs[] = {"INSERT", "UPDATE", "DELETE", "WITH"};
	for (size_t i = 0; i < sizeof verbs / sizeof verbs[0]; i++)
		if (strncasecmp(sql, verbs[i], strlen(verbs[i])) == 0)
			return 1;
	return 0;
}

static th_err run_once(struct th_store *st, enum th_stmt_id id, const char *sql,
                       const struct th_arg *args, size_t n, PGresult **out, const char *what,
                       struct th_error *e);

/* The pipeline (below): what a queued entry is, the failure that answers every statement
 * after a queued one failed, and queueing one. */
enum { PEND_PREPARE, PEND_LATER, PEND_MINE, PEND_LEARN, PEND_SYNC };
static th_err sticky(struct th_store *st, struct th_error *e);
static int queue(struct th_store *st, enum th_stmt_id id, const char *sql,
                 const struct th_arg *args, size_t n, unsigned char kind, const char *what,
                 struct th_error *e);

/* ---- per-task locks (SCALE-1, decision-051) ----------------------------------------- */

/* What a statement is about, for its lock: nothing (a read or write no task's order
 * depends on), the task whose id is argument arg (and, for LK_TASK2, arg + 1 too), the
 * turn whose id is argument arg (its task is locked), a task's first message (sender
 * ?2, messageId ?1: TASK-7), a caller's Idempotency-Key (participant ?1, key ?2), the
 * push outbox's claim, or a task this statement creates
 * (LK_NEW: no other transaction sees it before this one commits, so it needs no lock;
 * once the insert succeeded the transaction counts it as held, lock_after). */
enum lock_kind { LK_NONE, LK_TASK, LK_TASK2, LK_TURN, LK_FIRST, LK_KEY, LK_OUTBOX, LK_NEW };
struct lock_rule {
	unsigned char kind;
	unsigned char arg; /* 1-based, as ?N */
};

/* Every statement a write transaction may run about one task, by its id. A statement
 * missing here takes no lock: keep this table beside the statements (a new statement
 * about a task needs its row). */
/* clang-format off */
static const struct lock_rule lock_rules[TH_STMT_COUNT_] = {
    [TH_STMT_TASK_INSERT] = {LK_NEW, 1},
    [TH_STMT_TASK_GET] = {LK_TASK, 1},
    [TH_STMT_TASK_SET_STATUS] = {LK_TASK, 1},
    [TH_STMT_TASK_SET_EXT] = {LK_TASK, 1},
    [TH_STMT_TASK_EXISTS] = {LK_TASK, 1},
    [TH_STMT_TASK_CONTEXT] = {LK_TASK, 1},
    [TH_STMT_PART_PUT] = {LK_TASK, 1},
    [TH_STMT_PART_ADD_NEW] = {LK_TASK, 1},
    [TH_STMT_PART_ROLE] = {LK_TASK, 1},
    [TH_STMT_PART_LIST] = {LK_TASK, 1},
    [TH_STMT_MSG_APPEND] = {LK_TASK, 1},
    [TH_STMT_MSG_EXISTS] = {LK_TASK, 1},
    [TH_STMT_MSG_FIRST] = {LK_FIRST, 1},
    [TH_STMT_IDEM_FIND] = {LK_KEY, 1},
    [TH_STMT_MSG_GET] = {LK_TASK, 1},
    [TH_STMT_MSG_HISTORY] = {LK_TASK, 1},
    [TH_STMT_MSG_COUNT] = {LK_TASK, 1},
    [TH_STMT_MSG_RANGE] = {LK_TASK, 1},
    [TH_STMT_MSG_LAST_POS] = {LK_TASK, 1},
    [TH_STMT_MSG_BACK] = {LK_TASK, 1},
    [TH_STMT_REF_BY_ID] = {LK_TASK, 1},
    [TH_STMT_REF_BY_POS] = {LK_TASK, 1},
    [TH_STMT_REF_LAST] = {LK_TASK, 1},
    [TH_STMT_ART_PUT] = {LK_TASK, 1},
    [TH_STMT_ART_LIST] = {LK_TASK, 1},
    [TH_STMT_EV_LAST] = {LK_TASK, 1},
    [TH_STMT_EV_INSERT] = {LK_TASK, 1},
    [TH_STMT_EV_SINCE] = {LK_TASK, 1},
    [TH_STMT_EV_GEN] = {LK_TASK, 1},
    [TH_STMT_SUB_LINK] = {LK_TASK2, 1}, /* the parent, then the child */
    [TH_STMT_SUB_LIST] = {LK_TASK, 1},
    [TH_STMT_SUB_RESOLVE] = {LK_TASK, 1},
    [TH_STMT_SUB_NEXT] = {LK_TASK, 1},
    [TH_STMT_SUB_PARENT] = {LK_TASK, 1},
    [TH_STMT_TURN_CREATE] = {LK_TASK, 1},
    [TH_STMT_TURN_START] = {LK_TASK, 1},
    [TH_STMT_TURN_RECORD] = {LK_TASK, 1},
    [TH_STMT_TURNS_CUT] = {LK_TASK, 1},
    [TH_STMT_TURN_NEXT_EXPIRY] = {LK_TASK, 1},
    [TH_STMT_TURNS_EXPIRED_TASK] = {LK_TASK, 4},
    [TH_STMT_TURN_STATE] = {LK_TURN, 1},
    [TH_STMT_TURN_GET] = {LK_TURN, 1},
    [TH_STMT_TURN_FINISH] = {LK_TURN, 1},
    [TH_STMT_TURN_IS_CUT] = {LK_TURN, 1},
    [TH_STMT_TURN_RELEASE] = {LK_TURN, 1},
    [TH_STMT_TURN_TAKEOVER] = {LK_TURN, 1},
    [TH_STMT_TURN_HOLD] = {LK_TURN, 1},
    [TH_STMT_TURN_GIVE_UP] = {LK_TURN, 1},
    [TH_STMT_CHAN_CREATE] = {LK_TASK, 1},
    [TH_STMT_CHAN_ADD_MEMBER] = {LK_TASK, 1},
    [TH_STMT_CHAN_IS_MEMBER] = {LK_TASK, 1},
    [TH_STMT_CHAN_MEMBERS] = {LK_TASK, 1},
    [TH_STMT_CHAN_APPEND] = {LK_TASK, 1},
    [TH_STMT_CHAN_LIST] = {LK_TASK, 1},
    [TH_STMT_CHAN_ANY] = {LK_TASK, 1},
    [TH_STMT_HELP_CREATE] = {LK_TASK, 2},
    [TH_STMT_HELP_GET] = {LK_TASK, 2},
    [TH_STMT_HELP_PENDING] = {LK_TASK, 1},
    [TH_STMT_HELP_PENDING_FOR] = {LK_TASK, 1},
    [TH_STMT_HELP_ANSWER] = {LK_TASK, 2},
    [TH_STMT_HELP_STATE] = {LK_TASK, 2},
    [TH_STMT_HELP_CANCEL] = {LK_TASK, 1},
    [TH_STMT_PLAN_DELETE] = {LK_TASK, 1},
    [TH_STMT_PLAN_INSERT] = {LK_TASK, 1},
    [TH_STMT_PLAN_UPDATE] = {LK_TASK, 1},
    [TH_STMT_PLAN_LIST] = {LK_TASK, 1},
    [TH_STMT_A2UI_GET] = {LK_TASK, 1},
    [TH_STMT_A2UI_PUT] = {LK_TASK, 1},
    [TH_STMT_A2UI_NEXT] = {LK_TASK, 1},
    [TH_STMT_PUSH_PUT] = {LK_TASK, 1},
    [TH_STMT_PUSH_GET] = {LK_TASK, 1},
    [TH_STMT_PUSH_LIST] = {LK_TASK, 1},
    [TH_STMT_PUSH_DELETE] = {LK_TASK, 1},
    [TH_STMT_PUSH_ENQUEUE] = {LK_TASK, 1},
    [TH_STMT_PUSH_CLAIM] = {LK_OUTBOX, 0},
    [TH_STMT_CONFIRM_CREATE] = {LK_TASK, 2},
    [TH_STMT_CONFIRM_FIND] = {LK_TASK, 1},
    [TH_STMT_CONFIRM_DECIDE] = {LK_TASK, 1},
};
/* clang-format on */

/* Forgets the locks c remembers from index from on (they ended with a savepoint rolled
 * back to, or with the transaction). */
static void forget_locks(struct th_store *c, int from)
{
	while (c->pg_nlocks > from) {
		c->pg_nlocks--;
		free(c->pg_locks[c->pg_nlocks]);
		c->pg_locks[c->pg_nlocks] = NULL;
	}
}

/* The state of a write transaction that just began or ended on c. */
static void txn_reset(struct th_store *c, int writing)
{
	forget_locks(c, 0);
	c->pg_writing = writing;
	c->pg_parts = 0;
	c->pg_part_mark = 0;
	c->pg_part_wrote = 0;
	c->pg_broken = 0;
	c->pg_failed = 0;
	c->pg_notify.len = 0;
	c->pg_reading = 0;
	c->pg_sealed = 0;
	c->pg_torn = 0;
	th_pg_memo_reset(c); /* what it knew ends with it (decision-060) */
}

static int holds(const struct th_store *c, const char *name)
{
	for (int i = 0; i < c->pg_nlocks; i++)
		if (strcmp(c->pg_locks[i], name) == 0)
			return 1;
	return 0;
}

/* A lock's name in a transaction's list: kind, then a, then " " and b when b is not NULL;
 * cut to fit n bytes with its NUL, as snprintf would. */
static void lock_name(char *out, size_t n, char kind, const char *a, const char *b)
{
	size_t k = 0;
	out[k++] = kind;
	for (const char *p = a; *p != '\0' && k + 1 < n; p++)
		out[k++] = *p;
	if (b != NULL && k + 1 < n)
		out[k++] = ' ';
	for (const char *p = b; p != NULL && *p != '\0' && k + 1 < n; p++)
		out[k++] = *p;
	out[k] = '\0';
}

/* Notes that c's transaction holds name ("t" + task id, "u" + turn id, ...). Past
 * TH_PG_LOCKS_MAX, or out of memory, it is not noted: the next statement asks again. */
static void remember(struct th_store *c, const char *name)
{
	if (c->pg_nlocks >= TH_PG_LOCKS_MAX || holds(c, name))
		return;
	char *copy = strdup(name);
	if (copy != NULL)
		c->pg_locks[c->pg_nlocks++] = copy;
}

/* Runs one of the lock statements: *got 1 when the lock is held (a try that failed: 0);
 * for a turn, its task's id into task (size n; "" when there is no such turn). */
static th_err lock_stmt(struct th_store *st, int try, int turn, const struct th_arg *args, int *got,
                        char *task, size_t n, struct th_error *e)
{
	/* One call site a statement, each with its text (tests/unit/statements.py). */
	PGresult *r = NULL;
	th_err err;
	if (!turn && !try && st->conn->pg_pipe) {
		/* Its result is "held" or a failure (a timeout, a deadlock), which fails the
		 * transaction: it goes out with the next statement whose result is needed. */
		if (st->conn->pg_failed)
			return sticky(st, e);
		*got = 1;
		if (task != NULL)
			task[0] = '\0';
		return queue(st, TH_STMT_PG_LOCK,
		             "SELECT pg_advisory_xact_lock(?1::integer, hashtext(?2)) IS NULL",
		             args, 2, PEND_LATER, "task lock", e) < 0
		           ? e->code
		           : TH_OK;
	}
	if (!turn && !try)
		err = run_once(st, TH_STMT_PG_LOCK,
		               "SELECT pg_advisory_xact_lock(?1::integer, hashtext(?2)) IS NULL",
		               args, 2, &r, "task lock", e);
	else if (!turn)
		err = run_once(st, TH_STMT_PG_TRY_LOCK,
		               "SELECT pg_try_advisory_xact_lock(?1::integer, hashtext(?2))", args,
		               2, &r, "task lock", e);
	else if (!try)
		err = run_once(
		    st, TH_STMT_PG_TURN_LOCK,
		    "SELECT pg_advisory_xact_lock(?1::integer, hashtext(task_id)) IS NULL, "
		    "task_id FROM turns WHERE id = ?2",
		    args, 2, &r, "task lock", e);
	else
		err = run_once(
		    st, TH_STMT_PG_TURN_TRY_LOCK,
		    "SELECT pg_try_advisory_xact_lock(?1::integer, hashtext(task_id)), task_id "
		    "FROM turns WHERE id = ?2",
		    args, 2, &r, "task lock", e);
	if (err != TH_OK)
		return err;
	/* A blocking lock answers NULL IS NULL, true; a try answers whether it got it. */
	*got = PQntuples(r) == 0 || strcmp(PQgetvalue(r, 0, 0), "t") == 0;
	/* Only the turn's statements have a second column (the turn's task). */
	if (task != NULL)
		snprintf(task, n, "%s", turn && PQntuples(r) > 0 ? PQgetvalue(r, 0, 1) : "");
	PQclear(r);
	return TH_OK;
}

/* Takes lock (kind, the text or turn in args[1]) for the statement st is about to run,
 * named name in c's list. The first lock of a transaction, or of the first part of a
 * batch, waits for its holder. Any later one is tried first: waiting while holding locks
 * is how two transactions deadlock. A later part of a batch whose first lock is taken
 * commits the batch so far and waits in a transaction of its own (group.c's split), so a
 * batch never turns per-task locks back into one lock for all (decision-051); a part
 * that already holds a lock of its own, or wrote, waits where it is, and PostgreSQL's
 * deadlock detector (40P01, TH_EBUSY) ends the rare cycle of two such parts. */
static th_err take(struct th_store *st, int turn, const struct th_arg *args, const char *name,
                   struct th_error *e)
{
	struct th_store *c = st->conn;
	char task[TH_ID_BUF + 2] = "t";
	int got = 0;
	th_err err;
	if (c->pg_nlocks > 0 || c->pg_parts > 1) {
		if ((err = lock_stmt(st, 1, turn, args, &got, task + 1, sizeof task - 1, e)) !=
		    TH_OK)
			return err;
		if (!got && st->in_group && st->group != NULL && c->pg_nlocks == c->pg_part_mark &&
		    !c->pg_part_wrote && c->pg_parts > 1 &&
		    (err = th_store_group_split(st, e)) != TH_OK) {
			/* Without a transaction the part's next statements would each commit
			 * by themselves: refuse them until the next BEGIN. */
			if (!in_txn(st))
				c->pg_broken = 1;
			return err;
		}
	}
	if (!got &&
	    (err = lock_stmt(st, 0, turn, args, &got, task + 1, sizeof task - 1, e)) != TH_OK)
		return err;
	remember(c, name);
	if (turn && task[1] != '\0')
		remember(c, task);
	return TH_OK;
}

/* The two arguments of a lock statement: its kind and what it locks. */
#define LOCK_ARGS(kind, what) ((const struct th_arg[]){kind, what})

/* The text of argument k (1-based) of a statement, or NULL when it has none. */
static const char *arg_text(const struct th_arg *args, size_t n, unsigned k)
{
	return k >= 1 && k <= n && args[k - 1].t == 't' ? args[k - 1].s : NULL;
}

/* Locks what statement id with args is about, inside a write transaction (lock_rules). */
static th_err lock_for(struct th_store *st, enum th_stmt_id id, const struct th_arg *args, size_t n,
                       struct th_error *e)
{
	const struct lock_rule *rule = &lock_rules[id];
	char name[TH_ID_BUF * 3];
	th_err err = TH_OK;
	switch (rule->kind) {
	case LK_TASK:
	case LK_TASK2:
		for (unsigned k = 0; err == TH_OK && k < (rule->kind == LK_TASK2 ? 2u : 1u); k++) {
			const char *id_text = arg_text(args, n, rule->arg + k);
			if (id_text == NULL)
				continue;
			lock_name(name, sizeof name, 't', id_text, NULL);
			if (!holds(st->conn, name))
				err = take(st, 0, LOCK_ARGS(TH_I(TH_PG_TASK_LOCK), TH_T(id_text)),
				           name, e);
		}
		return err;
	case LK_TURN:
		if (rule->arg > n || args[rule->arg - 1].t != 'i')
			return TH_OK;
		char turn[TH_I64_TEXT];
		th_i64_text(turn, args[rule->arg - 1].i);
		lock_name(name, sizeof name, 'u', turn, NULL);
		if (holds(st->conn, name))
			return TH_OK;
		return take(st, 1, LOCK_ARGS(TH_I(TH_PG_TASK_LOCK), args[rule->arg - 1]), name, e);
	case LK_FIRST: {
		const char *mid = arg_text(args, n, 1), *sender = arg_text(args, n, 2);
		if (mid == NULL || sender == NULL)
			return TH_OK;
		/* A key too long for name is cut: two such keys may share a lock, which only
		 * makes one wait for the other. */
		lock_name(name, sizeof name, 'f', sender, mid);
		if (holds(st->conn, name))
			return TH_OK;
		return take(st, 0, LOCK_ARGS(TH_I(TH_PG_FIRST_LOCK), TH_T(name + 1)), name, e);
	}
	case LK_KEY: {
		/* Two copies of one keyed send wait here, so the second finds the first's key
		 * (a new task has no task lock yet to order them by). */
		const char *who = arg_text(args, n, 1), *key = arg_text(args, n, 2);
		if (who == NULL || key == NULL)
			return TH_OK;
		lock_name(name, sizeof name, 'k', who, key);
		if (holds(st->conn, name))
			return TH_OK;
		return take(st, 0, LOCK_ARGS(TH_I(TH_PG_KEY_LOCK), TH_T(name + 1)), name, e);
	}
	case LK_OUTBOX:
		if (holds(st->conn, "p"))
			return TH_OK;
		return take(st, 0, LOCK_ARGS(TH_I(TH_PG_OUTBOX_LOCK), TH_T("outbox")), "p", e);
	default:
		return TH_OK;
	}
}

/* After statement id succeeded inside a write transaction: a task it created is the
 * transaction's (LK_NEW). */
static void lock_after(struct th_store *st, enum th_stmt_id id, const struct th_arg *args, size_t n)
{
	const struct lock_rule *rule = &lock_rules[id];
	const char *id_text = arg_text(args, n, rule->arg);
	if (rule->kind != LK_NEW || !st->conn->pg_writing || id_text == NULL)
		return;
	char name[TH_ID_BUF * 3];
	lock_name(name, sizeof name, 't', id_text, NULL);
	remember(st->conn, name);
}

void th_pg_array_add(struct th_buf *b, const char *item)
{
	char out[TH_ID_BUF * 2 + 4];
	size_t k = 0;
	out[k++] = b->len > 0 ? ',' : '{';
	out[k++] = '"';
	for (const char *p = item; *p != '\0' && k + 3 < sizeof out; p++) {
		if (*p == '"' || *p == '\\')
			out[k++] = '\\';
		out[k++] = *p;
	}
	out[k++] = '"';
	th_buf_append(b, out, k);
}

/* Before statement id runs inside a write transaction on st's connection: group.c's part
 * boundaries are noted, a part's refusal forgets the locks it took (ROLLBACK TO ends
 * them), and the statement's task is locked. */
static th_err before(struct th_store *st, enum th_stmt_id id, const char *sql,
                     const struct th_arg *args, size_t n, struct th_error *e)
{
	struct th_store *c = st->conn;
	if (c->pg_broken)
		return th_error_set(e, TH_EINTERNAL,
		                    "database error (write): the write transaction was lost; "
		                    "nothing of it was stored");
	if (!c->pg_writing || !in_txn(st))
		return TH_OK;
	switch (id) {
	case TH_STMT_SAVEPOINT:
		c->pg_parts++;
		c->pg_part_mark = c->pg_nlocks;
		c->pg_part_wrote = 0;
		return TH_OK;
	case TH_STMT_ROLLBACK_TO:
		forget_locks(c, c->pg_part_mark);
		th_pg_memo_reset(c); /* the part's writes are undone: forget all it knew */
		return TH_OK;
	default:
		break;
	}
	th_err err = lock_for(st, id, args, n, e);
	if (err == TH_OK && writes(sql))
		c->pg_part_wrote = 1;
	/* Listeners (streams) look for new events: only a transaction that appends one
	 * may announce its commit (decision-054), and only for a followed task (083). A
	 * task this write made (fresh_task) is followed by no one: nobody can subscribe to
	 * a task before it is committed. */
	const char *task = arg_text(args, n, 1);
	if (err == TH_OK && id == TH_STMT_EV_INSERT && task != NULL &&
	    strcmp(task, st->fresh_task) != 0)
		th_pg_array_add(&c->pg_notify, task); /* a task twice: ANY reads it once */
	return err;
}

/* ---- the pipeline (SCALE-1, decision-054) ------------------------------------------- */

/* A queued entry (enum PEND_*, above) is the PQsendPrepare of a statement, a statement
 * whose result nobody waits for (pg.c's own BEGIN, SAVEPOINT, lock, NOTIFY, or a
 * caller's th_store_exec_later), or the caller's statement whose result is read now. */

/* The parameters of args as libpq takes them; ints holds the integers' text. */
static void params(const struct th_arg *args, size_t n, const char **values, int *lengths,
                   int *formats, char (*ints)[TH_I64_TEXT])
{
	for (size_t k = 0; k < n; k++) {
		lengths[k] = 0;
		formats[k] = 0;
		if (args[k].t == 'i') {
			th_i64_text(ints[k], args[k].i);
			values[k] = ints[k];
		} else {
			values[k] = args[k].s;
			if (args[k].t == 'b') {
				lengths[k] = (int)args[k].len;
				formats[k] = 1;
			}
		}
	}
}

/* Answers the failure a queued statement of this transaction met (pg_fail) again. */
static th_err sticky(struct th_store *st, struct th_error *e)
{
	struct th_store *c = st->conn;
	memcpy(st->pg_state, c->pg_fail_state, sizeof st->pg_state);
	if (e != NULL)
		*e = c->pg_fail;
	return c->pg_fail.code;
}

th_err th_pg_write_failure(struct th_store *st, struct th_error *e)
{
	return st->conn != NULL && st->conn->pg_failed ? sticky(st, e) : TH_OK;
}

static th_err drain(struct th_store *st, struct th_error *e);

/* Frees what queued entry p kept for itself (a read ahead's arguments). */
static void unqueue(struct th_pg_pend *p)
{
	for (int k = 0; k < p->nlearn; k++)
		free(p->learn[k].s);
	p->nlearn = 0;
}

/* 1 when statement id with args is about a task whose lock c's transaction holds (the
 * memo keeps only what such a lock guards). */
static int task_held(const struct th_store *c, enum th_stmt_id id, const struct th_arg *args,
                     size_t n)
{
	const char *task =
	    lock_rules[id].kind == LK_TASK && lock_rules[id].arg == 1 ? arg_text(args, n, 1) : NULL;
	char name[TH_ID_BUF * 3];
	if (task == NULL)
		return 0;
	lock_name(name, sizeof name, 't', task, NULL);
	return holds(c, name);
}

/* A read sent ahead (PEND_LEARN, th_pg_prefetch) came back as r: the memo keeps it,
 * unless a write was queued after it (its answer may be out of date) or the transaction
 * failed. */
static void learned(struct th_store *st, const struct th_pg_pend *p, const PGresult *r)
{
	struct th_store *c = st->conn;
	struct th_arg args[3];
	if (p->stale || c->pg_failed || p->nlearn > 3)
		return;
	for (int k = 0; k < p->nlearn; k++)
		args[k] = p->learn[k].t == 'i' ? TH_I(p->learn[k].i) : TH_T(p->learn[k].s);
	enum th_stmt_id id = (enum th_stmt_id)p->id;
	size_t n = (size_t)p->nlearn;
	if (c->pg_reading)
		th_pg_memo_keep(c, id, args, n, r);
	else if (c->pg_writing && task_held(c, id, args, n))
		th_pg_memo_learn(c, id, args, n, r);
}

/* 1 when c's queue holds a read sent ahead whose answer, not in yet, may answer
 * statement id (the same statement, or a task's row for its context or last event). Any
 * other read goes out behind it in the same round trip. */
static int learning(const struct th_store *c, enum th_stmt_id id)
{
	for (int i = 0; i < c->pg_nq; i++) {
		const struct th_pg_pend *p = &c->pg_q[i];
		if (p->kind != PEND_LEARN || p->stale)
			continue;
		if (p->id == (int)id || (p->id == TH_STMT_TASK_GET &&
		                         (id == TH_STMT_TASK_CONTEXT || id == TH_STMT_EV_LAST)))
			return 1;
	}
	return 0;
}

/* Sends statement id with args into c's pipeline as an entry of kind (PEND_LATER or
 * PEND_MINE), preparing it first when the connection has not; its index in pg_q, or -1
 * with e set. A full queue is read first. */
static int queue(struct th_store *st, enum th_stmt_id id, const char *sql,
                 const struct th_arg *args, size_t n, unsigned char kind, const char *what,
                 struct th_error *e)
{
	struct th_store *c = st->conn;
	if (n > TH_PG_MAX_ARGS) {
		th_error_set(e, TH_EINTERNAL, "%s: too many parameters", what);
		return -1;
	}
	if (c->pg_nq + 2 > TH_PG_QUEUE_MAX && drain(st, e) != TH_OK)
		return -1;
	char name[STMT_NAME];
	stmt_name(name, id);
	if (!st->pg_prepared[id]) {
		char *text = dialect(sql);
		if (text == NULL) {
			th_error_set(e, TH_ENOMEM, "out of memory (prepare)");
			return -1;
		}
		Oid types[TH_PG_MAX_ARGS];
		arg_types(args, n, types);
		int sent = PQsendPrepare(st->pg, name, text, (int)n, types);
		free(text);
		if (!sent) {
			fail(st, NULL, "prepare", e);
			return -1;
		}
		st->pg_prepared[id] = 1; /* undone when its result says otherwise (drain) */
		c->pg_q[c->pg_nq++] = (struct th_pg_pend){
		    .id = (int)id, .kind = PEND_PREPARE, .part = c->pg_parts, .what = "prepare"};
	}
	const char *values[TH_PG_MAX_ARGS];
	int lengths[TH_PG_MAX_ARGS], formats[TH_PG_MAX_ARGS];
	char ints[TH_PG_MAX_ARGS][TH_I64_TEXT];
	params(args, n, values, lengths, formats, ints);
	if (!PQsendQueryPrepared(st->pg, name, (int)n, values, lengths, formats, 0)) {
		fail(st, NULL, what, e);
		return -1;
	}
	int i = c->pg_nq++;
	c->pg_q[i] = (struct th_pg_pend){
	    .id = (int)id, .kind = kind, .part = c->pg_parts, .what = what, .owner = st};
	return i;
}

/* Notes the first failure of a queued statement the caller was told had succeeded: the
 * transaction is aborted, so every later statement answers it until ROLLBACK TO its
 * part's savepoint, or the transaction ends (sticky). A failure of an earlier group
 * part, whose savepoint is gone, ends the whole transaction (lose). */
static void failed_later(struct th_store *st, const struct th_pg_pend *p, const PGresult *r,
                         int *lose)
{
	struct th_store *c = st->conn;
	if (c->pg_failed)
		return;
	c->pg_failed = 1;
	th_pg_memo_reset(c); /* nothing is answered from it until the part is undone */
	if (p->must_change && r != NULL && PQresultStatus(r) == PGRES_COMMAND_OK) {
		th_error_set(&c->pg_fail, TH_ENOTFOUND, "%s", p->missing);
		c->pg_fail_state[0] = '\0';
	} else {
		fail(st, r, p->what, &c->pg_fail);
		memcpy(c->pg_fail_state, st->pg_state, sizeof c->pg_fail_state);
	}
	if (p->part < c->pg_parts)
		*lose = 1;
}

/* What the result r of queued entry p (not the caller's own) says: a prepared statement,
 * a read sent ahead (the memo learns it), a write's rows; a failure fails the
 * transaction (failed_later, *lose). */
static void settle(struct th_store *st, struct th_pg_pend *p, PGresult *r, int *lose)
{
	ExecStatusType s = PQresultStatus(r);
	int ok = s == PGRES_COMMAND_OK || s == PGRES_TUPLES_OK;
	if (p->kind == PEND_LEARN) {
		if (ok)
			learned(st, p, r);
		else if (s != PGRES_PIPELINE_ABORTED && !p->soft)
			failed_later(st, p, r, lose);
		unqueue(p);
	} else if (p->kind == PEND_PREPARE) {
		if (!ok)
			st->pg_prepared[p->id] = 0;
		if (!ok && s != PGRES_PIPELINE_ABORTED)
			failed_later(st, p, r, lose);
	} else if (ok) {
		int64_t changed = strtoll(PQcmdTuples(r), NULL, 10);
		if (p->owner != NULL)
			p->owner->pg_changes += changed;
		if (p->tally != NULL)
			*p->tally += (int)changed;
		if (p->must_change && changed == 0)
			failed_later(st, p, r, lose);
	} else if (s != PGRES_PIPELINE_ABORTED) {
		failed_later(st, p, r, lose);
	}
}

/* Reads the results of everything queued on st's connection (one round trip: the
 * sync). The caller's entry keeps its result (pg_q[i].result); a statement queued
 * earlier that failed makes the transaction fail (sticky), and that failure is
 * returned. */
static th_err drain(struct th_store *st, struct th_error *e)
{
	struct th_store *c = st->conn;
	int nq = c->pg_nq, lose = 0, broken = 0;
	c->pg_nq = 0;
	c->pg_trips++;
	if (!PQpipelineSync(st->pg))
		broken = 1;
	for (int i = 0; i < nq; i++) {
		struct th_pg_pend *p = &c->pg_q[i];
		p->result = NULL;
		if (p->kind == PEND_SYNC) {
			/* A sync sent earlier in this batch: its result ends what came before it
			 * (a sync's result has no NULL after it). */
			PGresult *r = broken ? NULL : PQgetResult(st->pg);
			broken = broken || r == NULL || PQresultStatus(r) != PGRES_PIPELINE_SYNC;
			PQclear(r);
			continue;
		}
		PGresult *r = broken ? NULL : PQgetResult(st->pg);
		if (r == NULL) {
			broken = 1;
			if (p->kind == PEND_PREPARE)
				st->pg_prepared[p->id] = 0;
			else
				failed_later(st, p, NULL, &lose);
			unqueue(p);
			continue;
		}
		PGresult *more;
		while ((more = PQgetResult(st->pg)) != NULL)
			PQclear(more);
		if (p->kind == PEND_MINE) {
			p->result = r;
			continue;
		}
		settle(st, p, r, &lose);
		PQclear(r);
	}
	if (!broken) {
		PGresult *r = PQgetResult(st->pg); /* the sync's own result */
		if (r == NULL || PQresultStatus(r) != PGRES_PIPELINE_SYNC)
			broken = 1;
		PQclear(r);
	}
	if (st->pg_listening && st->pg == st->own_pg)
		(void)note_announcements(st);
	if (broken && !c->pg_failed) {
		c->pg_failed = 1;
		fail(st, NULL, "pipeline", &c->pg_fail);
		memcpy(c->pg_fail_state, st->pg_state, sizeof c->pg_fail_state);
	}
	if (broken || lose) {
		/* Nothing of this transaction can be committed any more: end it, so that
		 * th_store_in_txn says so (group.c then fails every part of the batch), and
		 * refuse the statements that would now each commit by themselves. */
		c->pg_pipe = 0;
		c->pg_broken = 1;
		th_pg_memo_reset(c);
		/* A broken pipeline on a connection libpq still calls good (the server's
		 * FATAL error read, its close not yet) stays aborted: every later BEGIN would
		 * find a transaction "already open" (the torture run under TH_TEST_PG,
		 * pg_terminate_backend). It is opened again, as a lost one is. */
		if (!broken && PQexitPipelineMode(st->pg))
			PQclear(PQexec(st->pg, "ROLLBACK"));
		else if (!broken || PQstatus(st->pg) != CONNECTION_BAD)
			(void)reset_conn(st, broken ? "broken" : "left busy by a failed statement");
		else /* gone: reconnected() opens it again before the next statement */
			memset(st->pg_prepared, 0, TH_STMT_COUNT_);
		c->pg_trips++;
	}
	return c->pg_failed ? sticky(st, e) : TH_OK;
}

/* The caller's entry i of the queue after a drain that returned err: its result into *out
 * (PQclear) when the drain and the statement both succeeded, else the failure (a drain's
 * failure first) with the result freed. */
static th_err result_of(struct th_store *st, int i, th_err err, PGresult **out, const char *what,
                        struct th_error *e)
{
	struct th_pg_pend *p = &st->conn->pg_q[i];
	PGresult *r = p->result;
	p->result = NULL;
	ExecStatusType s = PQresultStatus(r);
	if (err == TH_OK && (s == PGRES_COMMAND_OK || s == PGRES_TUPLES_OK)) {
		*out = r;
		return TH_OK;
	}
	if (err == TH_OK)
		err = fail(st, r, what, e);
	PQclear(r);
	return err;
}

/* Queues statement id as PEND_MINE, reads everything queued, and hands its result over
 * (*out, PQclear) as run_once does. */
static th_err run_piped(struct th_store *st, enum th_stmt_id id, const char *sql,
                        const struct th_arg *args, size_t n, PGresult **out, const char *what,
                        struct th_error *e)
{
	struct th_store *c = st->conn;
	*out = NULL;
	st->pg_state[0] = '\0';
	int i = queue(st, id, sql, args, n, PEND_MINE, what, e);
	if (i < 0)
		return c->pg_failed ? sticky(st, e) : e->code;
	return result_of(st, i, drain(st, e), out, what, e);
}

/* Queues pg.c's own statement (no parameters) whose result nobody waits for. */
static th_err run_later(struct th_store *st, enum th_stmt_id id, const char *sql, const char *what,
                        struct th_error *e)
{
	if (st->conn->pg_failed)
		return sticky(st, e);
	return queue(st, id, sql, NULL, 0, PEND_LATER, what, e) < 0 ? e->code : TH_OK;
}

int64_t th_pg_round_trips(const struct th_store *st)
{
	return st != NULL ? st->pg_trips : 0;
}

int th_pg_plan_counts(struct th_store *st, int64_t *custom, int64_t *generic)
{
	*custom = *generic = 0;
	if (st->pg_pooled || PQpipelineStatus(st->pg) != PQ_PIPELINE_OFF)
		return -1;
	PGresult *r = PQexec(st->pg, "SELECT coalesce(sum(custom_plans), 0), "
	                             "coalesce(sum(generic_plans), 0) FROM pg_prepared_statements");
	int ok = PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) == 1;
	if (ok) {
		*custom = strtoll(PQgetvalue(r, 0, 0), NULL, 10);
		*generic = strtoll(PQgetvalue(r, 0, 1), NULL, 10);
	}
	PQclear(r);
	return ok ? 0 : -1;
}

/* A write whose refusal the caller answers, in pipeline mode: in a savepoint of its own,
 * sent with it in one round trip; a refusal costs one more (ROLLBACK TO). As run. */
static th_err run_guarded(struct th_store *st, enum th_stmt_id id, const char *sql,
                          const struct th_arg *args, size_t n, PGresult **out, const char *what,
                          struct th_error *e)
{
	struct th_store *c = st->conn;
	th_err err;
	if ((err = run_later(st, TH_STMT_PG_STMT_SAVEPOINT, "SAVEPOINT th_stmt", "SAVEPOINT", e)) !=
	    TH_OK)
		return err;
	int i = queue(st, id, sql, args, n, PEND_MINE, what, e);
	if (i < 0)
		return c->pg_failed ? sticky(st, e) : e->code;
	if ((err = run_later(st, TH_STMT_PG_STMT_RELEASE, "RELEASE SAVEPOINT th_stmt", "RELEASE",
	                     e)) != TH_OK)
		return err;
	th_err drained = drain(st, e);
	err = result_of(st, i, drained, out, what, e);
	if (err == TH_OK) {
		lock_after(st, id, args, n);
		return TH_OK;
	}
	if (drained != TH_OK)
		return err; /* the transaction failed: nothing to undo here */
	char state[sizeof st->pg_state];
	memcpy(state, st->pg_state, sizeof state); /* the statement's, for failed_with */
	struct th_error ignored;
	if (run_later(st, TH_STMT_PG_STMT_ROLLBACK_TO, "ROLLBACK TO SAVEPOINT th_stmt",
	              "ROLLBACK TO", &ignored) == TH_OK &&
	    run_later(st, TH_STMT_PG_STMT_RELEASE, "RELEASE SAVEPOINT th_stmt", "RELEASE",
	              &ignored) == TH_OK)
		(void)drain(st, &ignored);
	memcpy(st->pg_state, state, sizeof state);
	return err;
}

/* Runs statement id with args: a result whose status is COMMAND_OK or TUPLES_OK into
 * *out (PQclear), or the failure.
 *
 * On SQLite a statement that fails inside a transaction is undone alone and the
 * transaction goes on; on PostgreSQL it would abort the whole transaction. The store
 * relies on SQLite's way (a refused insert is reported and the part goes on, or is
 * rolled back to its savepoint by the caller), so a writing statement inside a
 * transaction runs inside a savepoint of its own here: a failure rolls back to it and
 * leaves the transaction usable, as on SQLite. */
static th_err run_sent(struct th_store *st, enum th_stmt_id id, const char *sql,
                       const struct th_arg *args, size_t n, PGresult **out, const char *what,
                       struct th_error *e)
{
	*out = NULL;
	struct th_error local;
	if (e == NULL)
		e = &local;
	struct th_store *c = st->conn;
	if (c->pg_pipe && c->pg_failed && id != TH_STMT_ROLLBACK_TO)
		return sticky(st, e);
	th_err err = before(st, id, sql, args, n, e);
	if (err != TH_OK)
		return err;
	if (c->pg_pipe) {
		/* A group part's savepoint and its release go out with the next statement
		 * whose result is needed; undoing a part reads everything it queued, so no
		 * result of it arrives after its owner was told. */
		if (id == TH_STMT_SAVEPOINT || id == TH_STMT_RELEASE)
			return run_later(st, id, sql, what, e);
		if (id == TH_STMT_ROLLBACK_TO) {
			/* Undoing the part ends a failure of its own queued statements. */
			int failed = c->pg_failed;
			c->pg_failed = 0;
			err = run_piped(st, id, sql, args, n, out, what, e);
			if (err != TH_OK && failed)
				c->pg_failed = 1;
			return err;
		}
	}
	if (!in_txn(st) || !writes(sql))
		return run_once(st, id, sql, args, n, out, what, e);
	if (c->pg_pipe)
		return run_guarded(st, id, sql, args, n, out, what, e);
	PGresult *r;
	err = run_once(st, TH_STMT_PG_STMT_SAVEPOINT, "SAVEPOINT th_stmt", NULL, 0, &r, "SAVEPOINT",
	               e);
	PQclear(r);
	if (err != TH_OK)
		return err;
	err = run_once(st, id, sql, args, n, out, what, e);
	struct th_error ignored;
	char state[sizeof st->pg_state];
	memcpy(state, st->pg_state, sizeof state); /* the statement's, for failed_with */
	if (err != TH_OK &&
	    run_once(st, TH_STMT_PG_STMT_ROLLBACK_TO, "ROLLBACK TO SAVEPOINT th_stmt", NULL, 0, &r,
	             "ROLLBACK TO", &ignored) == TH_OK)
		PQclear(r);
	th_err rel = run_once(st, TH_STMT_PG_STMT_RELEASE, "RELEASE SAVEPOINT th_stmt", NULL, 0, &r,
	                      "RELEASE", err == TH_OK ? e : &ignored);
	PQclear(r);
	memcpy(st->pg_state, state, sizeof state);
	if (err == TH_OK && rel != TH_OK) {
		PQclear(*out);
		*out = NULL;
		return rel;
	}
	if (err == TH_OK)
		lock_after(st, id, args, n);
	return err;
}

/* A read the memo answers (decision-060): 1 with *out set. A read sent ahead whose
 * answer is not in yet is read first (one round trip for all of them). */
static int memo_answers(struct th_store *st, enum th_stmt_id id, const struct th_arg *args,
                        size_t n, PGresult **out)
{
	struct th_store *c = st->conn;
	if (th_pg_memo_answer(c, id, args, n, out))
		return 1;
	struct th_error ignored;
	if (!learning(c, id) || drain(st, &ignored) != TH_OK)
		return 0; /* a failure: the statement answers it (sticky) */
	return th_pg_memo_answer(c, id, args, n, out);
}

/* Runs statement id as run_sent does; inside a write transaction a read the memo can
 * answer is not sent, a read about a locked task teaches the memo, and a write updates
 * it (pg_memo.c, decision-060). */
static th_err run(struct th_store *st, enum th_stmt_id id, const char *sql,
                  const struct th_arg *args, size_t n, PGresult **out, const char *what,
                  struct th_error *e)
{
	struct th_store *c = st->conn;
	*out = NULL;
	int memo = (c->pg_writing || c->pg_reading) && !c->pg_broken && !c->pg_failed &&
	           (in_txn(st) || c->pg_sealed);
	int reads = memo && !writes(sql);
	if (reads && memo_answers(st, id, args, n, out)) {
		st->pg_state[0] = '\0';
		return TH_OK;
	}
	/* A sealed read transaction's snapshot answers only what was sent ahead: this read is
	 * refused without a round trip, and the caller reads again unsealed (decision-069). */
	if (reads && c->pg_sealed) {
		c->pg_torn = 1;
		return th_error_set(e, TH_EINTERNAL,
		                    "database error (%s): not read ahead in its snapshot", what);
	}
	th_err err = run_sent(st, id, sql, args, n, out, what, e);
	if (err != TH_OK || !memo || !in_txn(st) || *out == NULL)
		return err;
	if (!c->pg_writing)
		return err; /* a read transaction keeps only what was sent ahead */
	if (reads && task_held(c, id, args, n))
		th_pg_memo_learn(c, id, args, n, *out);
	else if (!reads)
		th_pg_memo_wrote(c, id, sql, args, n);
	return err;
}

static th_err run_once(struct th_store *st, enum th_stmt_id id, const char *sql,
                       const struct th_arg *args, size_t n, PGresult **out, const char *what,
                       struct th_error *e)
{
	*out = NULL;
	if (st->conn->pg_pipe)
		return run_piped(st, id, sql, args, n, out, what, e);
	if (n > TH_PG_MAX_ARGS)
		return th_error_set(e, TH_EINTERNAL, "%s: too many parameters", what);
	st->pg_state[0] = '\0';
	int pooled = st->conn->pg_pooled;
	for (int attempt = 0;; attempt++) {
		th_err err = pooled ? TH_OK : prepare(st, id, sql, args, n, e);
		if (err != TH_OK) {
			if (attempt == 0 && reconnected(st))
				continue;
			return err;
		}
		const char *values[TH_PG_MAX_ARGS];
		int lengths[TH_PG_MAX_ARGS], formats[TH_PG_MAX_ARGS];
		char ints[TH_PG_MAX_ARGS][TH_I64_TEXT];
		params(args, n, values, lengths, formats, ints);
		PGresult *r;
		st->conn->pg_trips++;
		if (pooled) {
			/* Through a transaction pooler the next statement may meet another server
			 * session, which never saw a PQprepare of ours: each goes unnamed, with its
			 * text, in one message (decision-055). */
			char *text = dialect(sql);
			if (text == NULL)
				return th_error_set(e, TH_ENOMEM, "out of memory (%s)", what);
			Oid types[TH_PG_MAX_ARGS];
			arg_types(args, n, types);
			r = PQexecParams(st->pg, text, (int)n, types, values, lengths, formats, 0);
			free(text);
		} else {
			char name[STMT_NAME];
			stmt_name(name, id);
			r = PQexecPrepared(st->pg, name, (int)n, values, lengths, formats, 0);
		}
		ExecStatusType s = PQresultStatus(r);
		/* Announcements that came in with the result are noted, not queued up. */
		if (st->pg_listening && st->pg == st->listen_pg)
			(void)note_announcements(st);
		if (s == PGRES_COMMAND_OK || s == PGRES_TUPLES_OK) {
			*out = r;
			return TH_OK;
		}
		if (attempt == 0 && reconnected(st)) {
			PQclear(r);
			continue;
		}
		err = fail(st, r, what, e);
		PQclear(r);
		return err;
	}
}

th_err th_pg_exec(struct th_store *st, enum th_stmt_id id, const char *sql,
                  const struct th_arg *args, size_t n, int64_t *value, int64_t *rows,
                  const char *what, struct th_error *e)
{
	PGresult *r;
	th_err err = run(st, id, sql, args, n, &r, what, e);
	if (err != TH_OK || r == NULL) /* NULL: queued, nothing to tell (a savepoint) */
		return err;
	int64_t changed = strtoll(PQcmdTuples(r), NULL, 10);
	if (PQresultStatus(r) == PGRES_TUPLES_OK) {
		int count = PQntuples(r);
		if (value != NULL && count > 0 && !PQgetisnull(r, count - 1, 0))
			*value = strtoll(PQgetvalue(r, count - 1, 0), NULL, 10);
		if (rows != NULL)
			*rows = count;
		/* RETURNING rows are changed rows too; a SELECT's PQcmdTuples is its count. */
		if (strncmp(PQcmdStatus(r), "SELECT", 6) == 0)
			changed = 0;
	} else if (rows != NULL) {
		*rows = changed;
	}
	st->pg_changes += changed;
	PQclear(r);
	return TH_OK;
}

int th_pg_queues(const struct th_store *st)
{
	/* Queued only inside a th_store_write function, whose every failure undoes it: a
	 * caller of th_store_begin is told of each refusal at once. */
	const struct th_store *c = st->conn;
	return c->pg_pipe && c->pg_writing && c->pg_defer && in_txn(st);
}

th_err th_pg_exec_later(struct th_store *st, enum th_stmt_id id, const char *sql,
                        const struct th_arg *args, size_t n, int *tally, const char *missing,
                        const char *what, struct th_error *e)
{
	struct th_store *c = st->conn;
	if (c->pg_failed)
		return sticky(st, e);
	th_err err = before(st, id, sql, args, n, e);
	if (err != TH_OK)
		return err;
	st->pg_state[0] = '\0';
	int i = queue(st, id, sql, args, n, PEND_LATER, what, e);
	if (i < 0)
		return c->pg_failed ? sticky(st, e) : e->code;
	c->pg_q[i].tally = tally;
	if (missing != NULL) {
		c->pg_q[i].must_change = 1;
		snprintf(c->pg_q[i].missing, sizeof c->pg_q[i].missing, "%s", missing);
	}
	/* A task it creates is this transaction's from now on; should the insert fail, the
	 * whole transaction (part) does. */
	lock_after(st, id, args, n);
	/* What the transaction knows changes with it now; a read sent ahead of it may be out
	 * of date when it comes back (decision-060). */
	for (int k = 0; k < c->pg_nq; k++)
		if (c->pg_q[k].kind == PEND_LEARN)
			c->pg_q[k].stale = 1;
	th_pg_memo_wrote(c, id, sql, args, n);
	return TH_OK;
}

void th_pg_prefetch(struct th_store *st, enum th_stmt_id id, const char *sql,
                    const struct th_arg *args, size_t n)
{
	struct th_store *c = st->conn;
	/* Only a read about one task, inside a pipelined write transaction (whose memo learns
	 * its answer) or read transaction (which keeps it); its arguments are copied until it
	 * comes back. */
	if (!c->pg_pipe || !(c->pg_writing || c->pg_reading) || c->pg_failed || c->pg_broken ||
	    !in_txn(st) || n > 3 || writes(sql) || lock_rules[id].kind != LK_TASK)
		return;
	for (size_t k = 0; k < n; k++)
		if ((args[k].t != 't' || args[k].s == NULL) && args[k].t != 'i')
			return;
	PGresult *known = NULL;
	if (th_pg_memo_answer(c, id, args, n, &known)) {
		PQclear(known);
		return;
	}
	/* A failure here (a lock, a full queue) is met again by the read itself. */
	struct th_error ignored;
	if (before(st, id, sql, args, n, &ignored) != TH_OK)
		return;
	int i = queue(st, id, sql, args, n, PEND_LEARN, "read ahead", &ignored);
	if (i < 0)
		return;
	struct th_pg_pend *p = &c->pg_q[i];
	for (size_t k = 0; k < n; k++) {
		struct th_arg_copy *a = &p->learn[p->nlearn++];
		*a = (struct th_arg_copy){.t = args[k].t, .i = args[k].i};
		if (a->t == 't' && (a->s = strdup(args[k].s)) == NULL)
			p->stale = 1; /* out of memory: its answer is not kept */
	}
}

#define FIELD(row, col, type) ((type *)(void *)((char *)(row) + (col)->off))

/* An integer column as text: digits, or a boolean's t/f. */
static int64_t int_of(const char *v)
{
	if (v[0] == 't' && v[1] == '\0')
		return 1;
	return strtoll(v, NULL, 10);
}

/* Row i of r into row (zeroed first) as def says; -1 when a copy could not be allocated
 * (row is then freed). */
static int read_row(const PGresult *r, int i, const struct th_row_def *def, void *row)
{
	memset(row, 0, def->size);
	int bad = 0;
	for (size_t k = 0; k < def->ncols; k++) {
		const struct th_col *c = &def->cols[k];
		int null = PQgetisnull(r, i, (int)k);
		const char *v = null ? NULL : PQgetvalue(r, i, (int)k);
		switch (c->t) {
		case 't':
			if (v != NULL && (*FIELD(row, c, char *) = strdup(v)) == NULL)
				bad = 1;
			break;
		case 'i':
			*FIELD(row, c, int64_t) = v != NULL ? int_of(v) : 0;
			break;
		case 'n':
			*FIELD(row, c, int) = v != NULL ? (int)int_of(v) : 0;
			break;
		case 'e':
			*FIELD(row, c, int) = c->name(v);
			break;
		default: {
			/* bytea arrives as text ("\x" and hex digits). One byte more, so an empty
			 * value is a non-NULL pointer, told apart from SQL NULL. */
			size_t *len = (size_t *)(void *)((char *)row + c->len_off);
			if (v == NULL)
				break;
			size_t got = 0;
			unsigned char *raw = PQunescapeBytea((const unsigned char *)v, &got);
			unsigned char *copy = raw != NULL ? malloc(got + 1) : NULL;
			if (copy != NULL && got > 0)
				memcpy(copy, raw, got);
			if (raw != NULL)
				PQfreemem(raw);
			if (copy == NULL) {
				bad = 1;
				break;
			}
			*FIELD(row, c, unsigned char *) = copy;
			*len = got;
			break;
		}
		}
	}
	if (bad) {
		th_row_free(def, row);
		return -1;
	}
	return 0;
}

th_err th_pg_rows(struct th_store *st, enum th_stmt_id id, const char *sql,
                  const struct th_arg *args, size_t n, const struct th_row_def *def, void **rows,
                  size_t *count, size_t max, const char *what, struct th_error *e)
{
	*rows = NULL;
	*count = 0;
	PGresult *r;
	th_err err = run(st, id, sql, args, n, &r, what, e);
	if (err != TH_OK)
		return err;
	size_t total = (size_t)PQntuples(r);
	if (total > max)
		total = max;
	if ((size_t)PQnfields(r) < def->ncols) {
		PQclear(r);
		return th_error_set(e, TH_EINTERNAL, "%s: fewer columns than expected", what);
	}
	void *arr = total > 0 ? calloc(total, def->size) : NULL;
	if (total > 0 && arr == NULL) {
		PQclear(r);
		return th_error_set(e, TH_ENOMEM, "out of memory reading %s", what);
	}
	size_t got = 0;
	for (; got < total; got++)
		if (read_row(r, (int)got, def, (char *)arr + got * def->size) != 0)
			break;
	PQclear(r);
	if (got < total) {
		th_rows_free(def, arr, got);
		return th_error_set(e, TH_ENOMEM, "out of memory reading %s", what);
	}
	*rows = arr;
	*count = got;
	return TH_OK;
}

th_err th_pg_texts(struct th_store *st, enum th_stmt_id id, const char *sql,
                   const struct th_arg *args, size_t n,
                   th_err (*fn)(void *arg, const char *const *col, struct th_error *e), void *arg,
                   const char *what, struct th_error *e)
{
	PGresult *r;
	th_err err = run(st, id, sql, args, n, &r, what, e);
	int ncol = err == TH_OK ? PQnfields(r) : 0;
	for (int i = 0; err == TH_OK && i < PQntuples(r); i++) {
		const char *col[TH_TEXTS_COLS] = {NULL};
		for (int k = 0; k < TH_TEXTS_COLS && k < ncol; k++)
			col[k] = PQgetisnull(r, i, k) ? NULL : PQgetvalue(r, i, k);
		err = fn(arg, col, e);
	}
	PQclear(r);
	return err;
}

/* ---- transactions ----------------------------------------------------------------- */

/* BEGIN through a transaction pooler (decision-055): a SET of the session would stay
 * with whichever server session ran it, so the transaction's own settings come with its
 * BEGIN as SET LOCAL, in one round trip (the simple protocol takes several statements in
 * one message). A connection lost before it is opened again once, as run_once does. */
static th_err begin_pooled(struct th_store *st, struct th_error *e)
{
	const struct th_store *c = st->conn;
	char sql[160];
	snprintf(sql, sizeof sql,
	         "BEGIN; SET LOCAL lock_timeout = %d; SET LOCAL synchronous_commit = %s",
	         c->busy_timeout_ms, c->sync_full ? "on" : "off");
	st->pg_state[0] = '\0';
	for (int attempt = 0;; attempt++) {
		st->conn->pg_trips++;
		PGresult *r = PQexec(st->pg, sql);
		if (PQresultStatus(r) == PGRES_COMMAND_OK) {
			PQclear(r);
			return TH_OK;
		}
		if (attempt == 0 && reconnected(st)) {
			PQclear(r);
			continue;
		}
		th_err err = fail(st, r, "BEGIN", e);
		PQclear(r);
		if (in_txn(st))
			PQclear(PQexec(st->pg, "ROLLBACK"));
		return err;
	}
}

/* Before a transaction: a connection the server closed while it was idle (a restart, an
 * idle timeout) has said so on its socket; it is opened again now, since the BEGIN that
 * would have found out is queued with what follows it (decision-054). A connection left
 * in pipeline mode by a failure is reset. Costs a poll(2), no round trip. */
static void ready(struct th_store *st)
{
	struct pollfd p = {.fd = PQsocket(st->pg), .events = POLLIN};
	if (p.fd >= 0 && poll(&p, 1, 0) == 1) {
		if (st->pg_listening && st->pg == st->own_pg)
			(void)note_announcements(st);
		else
			(void)PQconsumeInput(st->pg);
		/* A server that ends a session (pg_terminate_backend, a restart) sends its
		 * FATAL error and closes: one read takes the error, the next finds the close,
		 * which is when libpq calls the connection bad. */
		if (PQstatus(st->pg) == CONNECTION_OK && poll(&p, 1, 0) == 1)
			(void)PQconsumeInput(st->pg);
	}
	leave_pipeline(st, "left busy");
	(void)reconnected(st);
	st->conn->pg_pipe = 0;
	for (int i = 0; i < st->conn->pg_nq; i++)
		unqueue(&st->conn->pg_q[i]);
	st->conn->pg_nq = 0;
}

/* The data version's text (th_pg_data_version, th_pg_read_begin_versioned). */
#define DATA_VERSION_SQL "SELECT (pg_current_wal_insert_lsn() - '0/0')::bigint"

/* Queues the data version as a read ahead whose failure fails nothing, then a sync of its
 * own: it runs, and is over, before anything queued after it (decision-069). */
static void version_ahead(struct th_store *st)
{
	struct th_store *c = st->conn;
	struct th_error ignored;
	int i = queue(st, TH_STMT_PG_DATA_VERSION, DATA_VERSION_SQL, NULL, 0, PEND_LEARN,
	              "data version", &ignored);
	if (i < 0)
		return;
	c->pg_q[i].soft = 1;
	if (!PQpipelineSync(st->pg)) {
		c->pg_q[i].stale = 1; /* read with the rest, kept by nobody */
		return;
	}
	c->pg_q[c->pg_nq++] =
	    (struct th_pg_pend){.kind = PEND_SYNC, .part = c->pg_parts, .what = "sync"};
}

/* Opens a transaction with BEGIN text: queued in pipeline mode, so it reaches the server
 * with the transaction's first statement whose result is needed. versioned: the data
 * version is read first, outside it (th_pg_read_begin_versioned). */
static th_err begin_piped(struct th_store *st, enum th_stmt_id id, const char *text, int versioned,
                          struct th_error *e)
{
	ready(st);
	/* Behind a transaction pooler nothing is pipelined: a pipeline sends prepared
	 * statements, which another server session would not know (decision-055). */
	if (st->conn->pg_pooled || PQstatus(st->pg) != CONNECTION_OK ||
	    !PQenterPipelineMode(st->pg)) {
		if (versioned)
			st->conn->read_version = th_pg_data_version(st);
		PGresult *r; /* no pipeline: as before, one round trip */
		th_err err = run_once(st, id, text, NULL, 0, &r, "BEGIN", e);
		PQclear(r);
		return err;
	}
	st->conn->pg_pipe = 1;
	if (versioned)
		version_ahead(st);
	th_err err = run_later(st, id, text, "BEGIN", e);
	if (err != TH_OK)
		th_pg_rollback(st);
	return err;
}

th_err th_pg_begin(struct th_store *st, struct th_error *e)
{
	/* PostgreSQL only warns about a BEGIN inside a transaction; SQLite refuses it. */
	if (in_txn(st))
		return th_error_set(e, TH_EINTERNAL, "a transaction is already open");
	txn_reset(st->conn, 0);
	th_err err;
	if (st->conn->pg_pooled) {
		/* Not pipelined: the pooled BEGIN carries its SET LOCALs in one simple-protocol
		 * message, which a pipeline cannot send; the transaction's statements then run
		 * one round trip each, as before decision-054. */
		ready(st);
		err = begin_pooled(st, e);
	} else {
		err = begin_piped(st, TH_STMT_PG_BEGIN, "BEGIN", 0, e);
	}
	if (err != TH_OK)
		return err;
	/* No lock yet: each statement takes its task's (lock_for). lock_timeout bounds a
	 * wait as busy_timeout does on SQLite, and a timeout is TH_EBUSY. */
	txn_reset(st->conn, 1);
	return TH_OK;
}

/* Leaves pipeline mode once everything queued was read. */
static void pipe_end(struct th_store *st)
{
	struct th_store *c = st->conn;
	if (!c->pg_pipe)
		return;
	c->pg_pipe = 0;
	leave_pipeline(st, "left in an aborted pipeline");
}

/* decision-083: NOTIFY tiny_harness when a stream follows one of the tasks the
 * transaction appended events to (stream_follows, th_store_follow), queued before its
 * COMMIT in a pipeline. A commit no one listens for takes no part of PostgreSQL's notify
 * machinery: its lock for the whole cluster, its queue, the signals to every listener. */
#define ANNOUNCE_SQL                                                                               \
	"SELECT pg_notify('tiny_harness', '') FROM stream_follows "                                \
	"WHERE task_id = ANY ($1::text[]) AND until_ms > " TH_PG_NOW_MS " LIMIT 1"
static th_err announce_with(struct th_store *st, enum th_stmt_id id, const char *sql,
                            const struct th_arg *args, size_t n, struct th_error *e)
{
	struct th_store *c = st->conn;
	if (c->pg_pipe) {
		if (c->pg_failed)
			return sticky(st, e);
		return queue(st, id, sql, args, n, PEND_LATER, "NOTIFY", e) < 0 ? e->code : TH_OK;
	}
	PGresult *r = NULL;
	th_err err = run(st, id, sql, args, n, &r, "NOTIFY", e);
	PQclear(r);
	return err;
}

static th_err announce(struct th_store *st, struct th_error *e)
{
	struct th_store *c = st->conn;
	if (c->pg_notify.len == 0)
		return TH_OK;
	th_buf_append(&c->pg_notify, "}", 1);
	if (c->pg_notify.oom) /* which tasks is not known: announce it anyway */
		return announce_with(st, TH_STMT_PG_NOTIFY, "SELECT pg_notify('tiny_harness', '')",
		                     NULL, 0, e);
	return announce_with(st, TH_STMT_PG_ANNOUNCE, ANNOUNCE_SQL,
	                     TH_ARGS(TH_T(c->pg_notify.data)), e);
}

th_err th_pg_commit(struct th_store *st, struct th_error *e)
{
	struct th_store *c = st->conn;
	PGresult *r = NULL;
	th_err err;
	if (c->pg_pipe) {
		if (c->pg_failed) {
			err = sticky(st, e);
			th_pg_rollback(st);
			return err;
		}
		/* Listeners on every host learn of a new event when it is committed
		 * (STORE-6); the announcement and the COMMIT go out in one round trip. */
		err = announce(st, e);
		if (err == TH_OK)
			err = run_piped(st, TH_STMT_PG_COMMIT, "COMMIT", NULL, 0, &r, "COMMIT", e);
	} else {
		err = announce(st, e);
		if (err == TH_OK)
			err = run(st, TH_STMT_PG_COMMIT, "COMMIT", NULL, 0, &r, "COMMIT", e);
	}
	if (err != TH_OK) {
		th_pg_rollback(st);
		return err;
	}
	pipe_end(st);
	txn_reset(st->conn, 0); /* its locks ended with it */
	/* COMMIT of a transaction a failed statement aborted answers ROLLBACK. */
	int rolled_back = strcmp(PQcmdStatus(r), "ROLLBACK") == 0;
	PQclear(r);
	if (rolled_back)
		return th_error_set(e, TH_EINTERNAL,
		                    "database error (commit): the write transaction was rolled "
		                    "back; nothing was stored");
	return TH_OK;
}

void th_pg_rollback(struct th_store *st)
{
	int sealed = st->conn != NULL && st->conn->pg_sealed;
	if (st->conn != NULL)
		txn_reset(st->conn, 0);
	if (st->pg == NULL)
		return;
	struct th_store *c = st->conn;
	if (c != NULL && c->pg_pipe) {
		/* What is still queued is read with the ROLLBACK, one round trip. A sealed read
		 * transaction's ROLLBACK is queued already: what is left is read; a failure
		 * among its reads left the transaction open (aborted), ended below. */
		struct th_error ignored;
		if (sealed && c->pg_nq > 0)
			(void)drain(st, &ignored);
		if (in_txn(st) && queue(st, TH_STMT_ROLLBACK, "ROLLBACK", NULL, 0, PEND_LATER,
		                        "ROLLBACK", &ignored) >= 0)
			(void)drain(st, &ignored);
		c->pg_failed = 0;
		pipe_end(st);
		if (!in_txn(st))
			return;
	}
	if (!in_txn(st))
		return;
	if (c != NULL)
		c->pg_trips++;
	PGresult *r = PQexec(st->pg, "ROLLBACK");
	PQclear(r);
}

/* A read transaction (one snapshot); versioned: the data version is read before it. */
static th_err read_begin(struct th_store *st, int versioned, struct th_error *e)
{
	th_pg_memo_reset(st->conn);
	st->conn->read_version = -1;
	th_err err = begin_piped(st, TH_STMT_PG_BEGIN_READ,
	                         "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY", versioned, e);
	/* One snapshot: a read sent ahead answers for the whole transaction (decision-060). */
	st->conn->pg_reading = err == TH_OK && st->conn->pg_pipe;
	st->conn->pg_sealed = 0;
	st->conn->pg_torn = 0;
	return err;
}

th_err th_pg_read_begin(struct th_store *st, struct th_error *e)
{
	return read_begin(st, 0, e);
}

th_err th_pg_read_begin_versioned(struct th_store *st, struct th_error *e)
{
	return read_begin(st, 1, e);
}

int64_t th_pg_read_version(struct th_store *st)
{
	struct th_store *c = st->conn;
	if (c->read_version >= 0 || !c->pg_reading || c->pg_failed || c->pg_broken)
		return c->read_version;
	/* Only the answer read ahead, before the snapshot: never one read inside it, which
	 * could be newer than what the snapshot shows. */
	PGresult *r = NULL;
	if (!memo_answers(st, TH_STMT_PG_DATA_VERSION, NULL, 0, &r))
		return -1;
	int64_t v =
	    PQntuples(r) > 0 && !PQgetisnull(r, 0, 0) ? strtoll(PQgetvalue(r, 0, 0), NULL, 10) : -1;
	PQclear(r);
	return v;
}

void th_pg_read_seal(struct th_store *st)
{
	struct th_store *c = st->conn;
	/* Only a pipelined read transaction with reads sent ahead and nothing failed: its
	 * ROLLBACK follows them, and the round trip that reads them ends it (decision-069). */
	if (!c->pg_reading || !c->pg_pipe || c->pg_failed || c->pg_broken || c->pg_sealed ||
	    c->pg_nq == 0 || !in_txn(st))
		return;
	struct th_error ignored;
	if (queue(st, TH_STMT_ROLLBACK, "ROLLBACK", NULL, 0, PEND_LATER, "ROLLBACK", &ignored) >= 0)
		c->pg_sealed = 1;
}

int th_pg_read_torn(const struct th_store *st)
{
	return st->conn != NULL && st->conn->pg_torn;
}

int64_t th_pg_data_version(struct th_store *st)
{
	/* The end of the server's WAL moves with every commit of any connection: a later
	 * value means something may have changed (and sometimes nothing did, which only
	 * costs a look). */
	PGresult *r;
	struct th_error ignored;
	if (run(st, TH_STMT_PG_DATA_VERSION, DATA_VERSION_SQL, NULL, 0, &r, "data version",
	        &ignored) != TH_OK)
		return -1;
	int64_t v = PQntuples(r) > 0 ? strtoll(PQgetvalue(r, 0, 0), NULL, 10) : -1;
	PQclear(r);
	return v;
}

/* ---- announcements (LISTEN / NOTIFY) ------------------------------------------------ */

/* The connection LISTEN runs on, into st->listen_pg: the store's own, unless a
 * transaction pooler is in front (a LISTEN there would stay with a server session the
 * pooler hands to others, and hear nothing once this client is given another); then one
 * of its own to listen_uri, straight to the server (decision-055). 0 when there is none:
 * no listen_uri behind a pooler (streams poll), or it could not be reached (tried again
 * after TH_PG_LISTEN_RETRY_MS). */
#define TH_PG_LISTEN_RETRY_MS 5000
static void notice(void *arg, const char *message);
static int listener(struct th_store *st)
{
	if (st->listen_pg != NULL) {
		if (PQstatus(st->listen_pg) != CONNECTION_BAD || st->listen_pg == st->own_pg)
			return 1; /* the own one is opened again by reconnected() */
		if (th_mono_ms() < st->listen_try)
			return 0;
		PQreset(st->listen_pg);
		if (PQstatus(st->listen_pg) == CONNECTION_OK) {
			th_log(TH_LOG_WARN, "the LISTEN connection was lost; connected again");
			return 1;
		}
		st->listen_try = th_mono_ms() + TH_PG_LISTEN_RETRY_MS;
		return 0;
	}
	if (st->listen_uri == NULL) {
		st->listen_pg = st->pg_pooled ? NULL : st->own_pg;
		return st->listen_pg != NULL;
	}
	if (th_mono_ms() < st->listen_try)
		return 0;
	PGconn *c = PQconnectdb(st->listen_uri);
	if (c != NULL && PQstatus(c) == CONNECTION_OK) {
		PQsetNoticeProcessor(c, notice, NULL);
		st->listen_pg = c;
		return 1;
	}
	/* The URI may carry a password: the message names neither. */
	const char *msg = c != NULL ? PQerrorMessage(c) : "out of memory";
	th_log(TH_LOG_WARN, "cannot connect to db_listen: %.*s; streams poll meanwhile",
	       (int)strcspn(msg, "\n"), msg);
	PQfinish(c);
	st->listen_try = th_mono_ms() + TH_PG_LISTEN_RETRY_MS;
	return 0;
}

int th_pg_change_fd(struct th_store *st)
{
	if (st->pg_listening && st->listen_pg != st->own_pg &&
	    PQstatus(st->listen_pg) == CONNECTION_BAD) {
		/* The own listener was lost: what was announced meanwhile is lost with it. */
		st->pg_listening = 0;
		st->pg_announced = 1;
	}
	if (!st->pg_listening) {
		if (!listener(st))
			return -1;
		PGresult *r = PQexec(st->listen_pg, "LISTEN tiny_harness");
		st->pg_listening = PQresultStatus(r) == PGRES_COMMAND_OK;
		if (!st->pg_listening)
			th_log(TH_LOG_WARN, "LISTEN failed: %s; streams poll instead",
			       PQerrorMessage(st->listen_pg));
		PQclear(r);
		if (!st->pg_listening)
			return -1;
	}
	return PQsocket(st->listen_pg);
}

int th_pg_change_seen(struct th_store *st)
{
	if (!st->pg_listening)
		return 0;
	int seen = note_announcements(st);
	st->pg_announced = 0;
	return seen;
}

int th_pg_change_wait(struct th_store *st, int ms)
{
	int fd = th_pg_change_fd(st);
	if (fd < 0)
		return -1;
	if (!st->pg_announced) {
		struct pollfd p = {.fd = fd, .events = POLLIN};
		(void)poll(&p, 1, ms);
	}
	return 0;
}

/* ---- opening and migrations -------------------------------------------------------- */

/* The server's notices (NOTICE, WARNING) go to the log instead of stderr. */
static void notice(void *arg, const char *message)
{
	(void)arg;
	th_log(TH_LOG_INFO, "database notice: %.*s", (int)strcspn(message, "\n"), message);
}

/* The schema's version from tiny_harness_schema into *version (0 for a new, empty
 * database). A database with tables but none of ours, or of another application, is
 * refused. */
static th_err schema_version(struct th_store *st, int *version, struct th_error *e)
{
	*version = 0;
	PGresult *r = PQexec(st->pg, "SELECT to_regclass('tiny_harness_schema') IS NOT NULL, "
	                             "(SELECT count(*) FROM pg_tables "
	                             "WHERE schemaname = current_schema())");
	if (PQresultStatus(r) != PGRES_TUPLES_OK || PQntuples(r) != 1) {
		th_err err = fail(st, r, "schema version", e);
		PQclear(r);
		return err;
	}
	int ours = strcmp(PQgetvalue(r, 0, 0), "t") == 0;
	int tables = strcmp(PQgetvalue(r, 0, 1), "0") != 0;
	PQclear(r);
	if (!ours)
		return tables ? th_error_set(e, TH_EINTERNAL,
		                             "%s holds tables but is not a tiny-harness database",
		                             st->path)
		              : TH_OK;
	r = PQexec(st->pg, "SELECT version, application_id FROM tiny_harness_schema");
	th_err err = TH_OK;
	if (PQresultStatus(r) != PGRES_TUPLES_OK)
		err = fail(st, r, "schema version", e);
	else if (PQntuples(r) != 1)
		err = th_error_set(e, TH_EINTERNAL, "%s: tiny_harness_schema holds %d rows, not 1",
		                   st->path, PQntuples(r));
	else if (strtoll(PQgetvalue(r, 0, 1), NULL, 10) != TH_PG_APP_ID)
		err = th_error_set(e, TH_EINTERNAL,
		                   "%s belongs to another application (application_id %s)",
		                   st->path, PQgetvalue(r, 0, 1));
	else
		*version = atoi(PQgetvalue(r, 0, 0));
	PQclear(r);
	if (err == TH_OK && *version > pg_schema_version())
		err = th_error_set(e, TH_EINTERNAL,
		                   "%s has schema version %d, newer than this program's %d: "
		                   "upgrade tiny-harness",
		                   st->path, *version, pg_schema_version());
	return err;
}

/* Applies what the database lacks of the PostgreSQL migrations in one transaction, under
 * a transaction-level advisory lock so that workers starting together wait for the first.
 * The lock ends with the transaction, so it holds through a transaction pooler too (a
 * session lock would stay with the server session, decision-055). */
static th_err migrate(struct th_store *st, struct th_error *e)
{
	int version = 0;
	th_err err = schema_version(st, &version, e);
	if (err != TH_OK || version == pg_schema_version())
		return err;
	char sql[160];
	snprintf(sql, sizeof sql, "BEGIN; SELECT pg_advisory_xact_lock(%d)", TH_PG_MIGRATE_LOCK);
	err = run_plain(st, sql, "migration lock", e);
	if (err == TH_OK)
		err = schema_version(st, &version, e); /* another worker may have migrated */
	if (err == TH_OK && version == 0)
		err = run_plain(st, schema_table_sql, "schema table", e);
	for (int i = 0; err == TH_OK && i < th_store_pg_migrations_n; i++) {
		const struct th_migration *m = &th_store_pg_migrations[i];
		/* The first file brings a new database to its version in one step. */
		if (m->version > version && (i > 0 || version == 0))
			err = run_plain(st, m->sql, m->name, e);
		else if (m->version > version)
			err = th_error_set(e, TH_EINTERNAL,
			                   "%s: schema version %d cannot be upgraded", st->path,
			                   version);
	}
	if (err == TH_OK && version < pg_schema_version()) {
		snprintf(sql, sizeof sql,
		         "DELETE FROM tiny_harness_schema; INSERT INTO tiny_harness_schema "
		         "VALUES (%d, %d)",
		         pg_schema_version(), TH_PG_APP_ID);
		err = run_plain(st, sql, "setting schema version", e);
	}
	err = err == TH_OK ? run_plain(st, "COMMIT", "COMMIT", e) : err;
	if (err != TH_OK && in_txn(st))
		PQclear(PQexec(st->pg, "ROLLBACK"));
	return err;
}

th_err th_pg_open(struct th_store *st, const struct th_store_opts *o, struct th_error *e)
{
	st->pg_pooled = o->pooled;
	th_uuid(st->pg_follower);
	if (o->listen != NULL && o->listen[0] != '\0' &&
	    (st->listen_uri = strdup(o->listen)) == NULL)
		return th_error_set(e, TH_ENOMEM, "out of memory opening the database");
	/* The URI may carry a password: from here on messages name it without one. */
	char *shown = redact(st->path);
	if (shown == NULL)
		return th_error_set(e, TH_ENOMEM, "out of memory opening the database");
	char *uri = st->path;
	st->path = shown;
	st->own_pg = PQconnectdb(uri);
	free(uri);
	st->pg = st->own_pg;
	st->pg_prepared = st->own_pg_prepared;
	if (st->own_pg == NULL)
		return th_error_set(e, TH_ENOMEM, "out of memory connecting to %s", st->path);
	if (PQstatus(st->own_pg) != CONNECTION_OK) {
		const char *msg = PQerrorMessage(st->own_pg);
		th_log(TH_LOG_ERROR, "cannot connect to %s: %.*s", st->path,
		       (int)strcspn(msg, "\n"), msg);
		return th_error_set(e, TH_EINTERNAL, "cannot connect to the database %s", st->path);
	}
	PQsetNoticeProcessor(st->own_pg, notice, NULL);
	/* synchronous = normal keeps SQLite's promise in WAL mode: a commit is in the
	 * database when it returns and is never torn, but the last ones may be lost if the
	 * machine (not the program) goes down; PostgreSQL's synchronous_commit = off is that
	 * promise. synchronous = full waits for the flush, as SQLite's FULL does. Behind a
	 * transaction pooler a SET would stay with the server session, for whoever gets it
	 * next: each write transaction's BEGIN sets its own instead (begin_pooled). Time
	 * zones: the one statement that formats a time says UTC itself.
	 * Plans: each prepared statement is planned once for the connection, without its
	 * arguments, as SQLite plans it (decision-085). Left to choose, PostgreSQL plans
	 * some statements again for every execution, for the connection's whole life,
	 * when their first five executions ran on nearly empty tables: a worker that
	 * started with a new database spent ~250 µs a SendMessage planning its two
	 * participant upserts. Every statement here names its partial indexes'
	 * predicates as literals (SQLite needs that too), so a plan without the
	 * arguments loses no index. */
	char sql[240];
	snprintf(sql, sizeof sql,
	         "SET lock_timeout = %d; SET client_min_messages = warning; "
	         "SET TIME ZONE 'UTC'; SET plan_cache_mode = force_generic_plan; "
	         "SET synchronous_commit = %s",
	         st->busy_timeout_ms, o->sync_full ? "on" : "off");
	th_err err = st->pg_pooled ? TH_OK : run_plain(st, sql, "session settings", e);
	if (err == TH_OK)
		err = migrate(st, e);
	return err;
}

void th_pg_close(struct th_store *st)
{
	forget_locks(st, 0);
	th_buf_free(&st->pg_notify);
	th_pg_memo_reset(st);
	if (st->listen_pg != NULL && st->listen_pg != st->own_pg)
		PQfinish(st->listen_pg);
	st->listen_pg = NULL;
	free(st->listen_uri);
	st->listen_uri = NULL;
	if (st->own_pg == NULL)
		return;
	PQfinish(st->own_pg);
	st->own_pg = NULL;
	st->pg = NULL;
}
