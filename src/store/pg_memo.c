/* SPDX-License-Identifier: Apache-2.0 */
/* pg_memo.c — what a PostgreSQL write transaction already knows about the tasks it holds
 * the lock of, so that the reads it would send again are answered from memory (SCALE-1,
 * decision-060). pg.c calls it; SQLite never does (it has no round trips to save).
 *
 * A task's entry is made when the transaction creates the task (then it knows the task
 * whole: "fresh") or reads something about it under the task's lock. Another
 * transaction cannot change a locked task's rows (every writer of them takes the same
 * lock first, decision-051), so what the entry holds changes only with this
 * transaction's own writes, which pg.c reports here as they are sent:
 *
 *   - understood writes update the entry: a task created, a participant put, a message
 *     appended (its position is the last one plus one), an event appended (its seq), a
 *     task's status or extension changed (its row is forgotten);
 *   - a write to a table no answer comes from (turns, push_outbox, help_requests ...)
 *     changes nothing;
 *   - any other write to such a table (tasks, participants, message_rows, event_rows
 *     — messages and events are views since migration 014 and take no writes —
 *     subtask_links, plan_steps, channels, artifacts) forgets every entry.
 *
 * TEN-2: PART_ROLE asks in a tenant (its third argument). An empty answer to that is not
 * learned (the task may only be another tenant's); a role is, and answers that tenant's
 * requests after it: a write transaction is one request's, in one tenant, and the tasks it
 * reads or creates are that tenant's (a sub-task is its parent's).
 *
 * The memo lives in its transaction only: pg.c resets it at BEGIN, COMMIT and ROLLBACK,
 * when a group part is rolled back to its savepoint, and when a queued statement failed
 * (a failure then answers every statement, pg.c's sticky, before the memo is asked).
 * Answers are PGresults built here with the columns the statement would return, read by
 * pg.c's one decoding path; a statement the memo cannot answer goes to the server.
 *
 * In a read transaction (one REPEATABLE READ snapshot, th_pg_read_begin) it keeps only the
 * answers of reads sent ahead (th_store_expect_view), by statement and arguments: nothing
 * in the snapshot changes, so each answers the same read for the whole transaction. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/store.h"
#include "store/store_int.h"

/* How many tasks one transaction keeps an entry for, and how many messages,
 * participants and message look-ups each; past that the entry is dropped (the next read
 * goes to the server). */
#define MEMO_TASKS 4
#define MEMO_ITEMS 64
/* How many reads sent ahead a read transaction keeps: a task view makes 8, a ListTasks
 * page up to 7 for each task in it (its page size is at most 100). Past that a read is
 * sent again when it is asked. */
#define MEMO_AHEAD 1024
/* The columns of an empty answer: at least as many as any statement answered returns. */
#define MEMO_EMPTY_COLS 20
/* TASK_GET's PostgreSQL columns (tasks.c, TASK_COLS and the history's end; since
 * decision-061 the status message's message_id and role are columns 7 and 8). */
#define ROW_CONTEXT 1
#define ROW_LAST_SEQ 17
#define ROW_LAST_POS 18

struct memo_msg {
	int64_t pos;
	char *mid;  /* free (drop) */
	char *role; /* free (drop) */
	char *json; /* as stored (lean or whole, decision-061); free (drop) */
};

struct memo_part {
	char *id;      /* free (drop) */
	char *kind;    /* free (drop); NULL with role */
	char *role;    /* free (drop); NULL: not a participant */
	char *display; /* free (drop) */
	int64_t added_ms;
	size_t order; /* put order, for ORDER BY added_ms, rowid */
};

struct memo_seen {
	char *mid; /* free (drop) */
	int present;
};

struct memo_task {
	char *id;      /* free (drop) */
	char *ctx;     /* context id (never changes), or NULL: unknown; free (drop) */
	int64_t seq;   /* the last event's seq, -1 unknown */
	int64_t pos;   /* the last history position, -1 unknown */
	int fresh;     /* created by this transaction: no rows but those below */
	PGresult *row; /* TASK_GET's answer, or NULL; PQclear (drop) */
	struct memo_msg msgs[MEMO_ITEMS]; /* appended by this transaction, pos known */
	size_t nmsgs;
	struct memo_part parts[MEMO_ITEMS]; /* put by it, or read by it */
	size_t nparts;
	struct memo_seen seen[MEMO_ITEMS]; /* message ids looked up */
	size_t nseen;
};

/* A read transaction's read sent ahead: its statement and arguments, and its answer. */
struct memo_ahead {
	char *key;   /* ahead_key(); free (th_pg_memo_reset) */
	PGresult *r; /* PQclear (th_pg_memo_reset) */
};

struct th_pg_memo {
	struct memo_task t[MEMO_TASKS];
	int n;
	struct memo_ahead *ahead; /* grown as reads are sent ahead; free (th_pg_memo_reset) */
	int nahead, capahead;
};

/* ---- entries ---------------------------------------------------------------------- */

static void drop(struct memo_task *t)
{
	free(t->id);
	free(t->ctx);
	PQclear(t->row);
	for (size_t i = 0; i < t->nmsgs; i++) {
		free(t->msgs[i].mid);
		free(t->msgs[i].role);
		free(t->msgs[i].json);
	}
	for (size_t i = 0; i < t->nparts; i++) {
		free(t->parts[i].id);
		free(t->parts[i].kind);
		free(t->parts[i].role);
		free(t->parts[i].display);
	}
	for (size_t i = 0; i < t->nseen; i++)
		free(t->seen[i].mid);
	memset(t, 0, sizeof *t);
}

/* Forgets entry i of m. */
static void forget(struct th_pg_memo *m, int i)
{
	drop(&m->t[i]);
	m->n--;
	if (i != m->n) {
		m->t[i] = m->t[m->n];
		memset(&m->t[m->n], 0, sizeof m->t[m->n]);
	}
}

/* 1 for the reads a write transaction keeps by their arguments, as read transactions keep
 * every read sent ahead (decision-088). */
static int kept_as_sent(enum th_stmt_id id)
{
	return id == TH_STMT_HELP_PENDING_FOR || id == TH_STMT_SUB_LIST;
}

/* Forgets every answer kept by its arguments (in a write transaction: the pending
 * questions and sub-tasks). */
static void forget_ahead(struct th_pg_memo *m)
{
	if (m == NULL)
		return;
	for (int i = 0; i < m->nahead; i++) {
		free(m->ahead[i].key);
		PQclear(m->ahead[i].r);
	}
	m->nahead = 0;
}

void th_pg_memo_reset(struct th_store *c)
{
	struct th_pg_memo *m = c->pg_memo;
	if (m == NULL)
		return;
	while (m->n > 0)
		forget(m, m->n - 1);
	forget_ahead(m);
	free(m->ahead);
	free(m);
	c->pg_memo = NULL;
}

/* The text of argument k (0-based), or NULL. */
static const char *text(const struct th_arg *args, size_t n, size_t k)
{
	return k < n && args[k].t == 't' ? args[k].s : NULL;
}

static int find(const struct th_pg_memo *m, const char *task_id)
{
	for (int i = 0; m != NULL && task_id != NULL && i < m->n; i++)
		if (strcmp(m->t[i].id, task_id) == 0)
			return i;
	return -1;
}

static struct memo_task *entry(struct th_store *c, const char *task_id)
{
	int i = find(c->pg_memo, task_id);
	return i >= 0 ? &c->pg_memo->t[i] : NULL;
}

/* task_id's entry, made when there is none (NULL when out of room or memory). */
static struct memo_task *entry_made(struct th_store *c, const char *task_id)
{
	struct memo_task *t = entry(c, task_id);
	if (t != NULL || task_id == NULL)
		return t;
	if (c->pg_memo == NULL && (c->pg_memo = calloc(1, sizeof *c->pg_memo)) == NULL)
		return NULL;
	struct th_pg_memo *m = c->pg_memo;
	if (m->n >= MEMO_TASKS)
		return NULL;
	t = &m->t[m->n];
	memset(t, 0, sizeof *t);
	if ((t->id = strdup(task_id)) == NULL)
		return NULL;
	t->seq = t->pos = -1;
	m->n++;
	return t;
}

/* Forgets task t's entry (something about it could not be kept). */
static void give_up(struct th_store *c, struct memo_task *t)
{
	forget(c->pg_memo, (int)(t - c->pg_memo->t));
}

/* A copy of s (NULL stays NULL); *bad set when out of memory. */
static char *dup(const char *s, int *bad)
{
	char *d = s != NULL ? strdup(s) : NULL;
	if (s != NULL && d == NULL)
		*bad = 1;
	return d;
}

static struct memo_part *part_of(struct memo_task *t, const char *id)
{
	for (size_t i = 0; id != NULL && i < t->nparts; i++)
		if (strcmp(t->parts[i].id, id) == 0)
			return &t->parts[i];
	return NULL;
}

static struct memo_msg *msg_of(struct memo_task *t, const char *mid)
{
	for (size_t i = 0; mid != NULL && i < t->nmsgs; i++)
		if (strcmp(t->msgs[i].mid, mid) == 0)
			return &t->msgs[i];
	return NULL;
}

static struct memo_seen *seen_of(struct memo_task *t, const char *mid)
{
	for (size_t i = 0; mid != NULL && i < t->nseen; i++)
		if (strcmp(t->seen[i].mid, mid) == 0)
			return &t->seen[i];
	return NULL;
}

/* Sets participant id's kind, role and display name (role NULL: not one); a new one
 * gets added_ms and the next put order. -1 when it could not be kept. */
static int part_set(struct memo_task *t, const char *id, const char *kind, const char *role,
                    const char *display, int64_t added_ms)
{
	struct memo_part *p = part_of(t, id);
	if (p == NULL) {
		if (t->nparts >= MEMO_ITEMS)
			return -1;
		p = &t->parts[t->nparts];
		memset(p, 0, sizeof *p);
		if ((p->id = strdup(id)) == NULL)
			return -1;
		p->order = t->nparts++;
		p->added_ms = added_ms;
	} else if (p->role == NULL) {
		p->added_ms = added_ms; /* known not to be one: this put adds it */
	}
	int bad = 0;
	char *k = dup(kind, &bad), *r = dup(role, &bad), *d = dup(display, &bad);
	free(p->kind);
	free(p->role);
	free(p->display);
	p->kind = k;
	p->role = r;
	p->display = d;
	if (bad) {
		free(p->role);
		p->role = NULL;
		return -1;
	}
	return 0;
}

/* What a write of one participant says: its id, kind, role and display name are
 * arguments first..first + 3, its time argument at. No id (NULL): no participant, 0. 0,
 * or -1 when the arguments are not what tasks.c sends or memory ran out. */
static int part_put(struct memo_task *t, const struct th_arg *args, size_t n, size_t first,
                    size_t at)
{
	if (text(args, n, first) == NULL)
		return 0;
	if (at >= n || first + 3 >= n || args[at].t != 'i')
		return -1;
	return part_set(t, text(args, n, first), text(args, n, first + 1), text(args, n, first + 2),
	                text(args, n, first + 3), args[at].i);
}

/* ---- what a write does ------------------------------------------------------------- */

/* The table sql writes (INSERT INTO, UPDATE, DELETE FROM), into out (size n); "" when
 * it cannot be told. */
static void table_of(const char *sql, char *out, size_t n)
{
	static const char *const verbs[] = {"INSERT INTO ", "UPDATE ", "DELETE FROM "};
	out[0] = '\0';
	while (*sql == ' ' || *sql == '\n' || *sql == '\t')
		sql++;
	for (size_t i = 0; i < sizeof verbs / sizeof verbs[0]; i++) {
		size_t l = strlen(verbs[i]);
		if (strncmp(sql, verbs[i], l) == 0) {
			size_t w = strcspn(sql + l, " (\n\t");
			snprintf(out, n, "%.*s", (int)w, sql + l);
			return;
		}
	}
}

/* 1 when a write to table can change what an answer of this file says. */
static int memo_table(const char *table)
{
	static const char *const tables[] = {"tasks",      "participants",  "message_rows",
	                                     "event_rows", "subtask_links", "plan_steps",
	                                     "channels",   "artifacts"};
	if (table[0] == '\0')
		return 1;
	for (size_t i = 0; i < sizeof tables / sizeof tables[0]; i++)
		if (strcmp(table, tables[i]) == 0)
			return 1;
	return 0;
}

static PGresult *inserted_row(const struct th_arg *args, size_t n);

static void created(struct th_store *c, const struct th_arg *args, size_t n)
{
	const char *id = text(args, n, 0), *ctx = text(args, n, 1);
	struct memo_task *t = entry(c, id);
	if (t != NULL)
		give_up(c, t);
	if (id == NULL || ctx == NULL || (t = entry_made(c, id)) == NULL)
		return;
	if ((t->ctx = strdup(ctx)) == NULL) {
		give_up(c, t);
		return;
	}
	t->seq = 0;
	t->pos = 0;
	t->fresh = 1;
	t->row = inserted_row(args, n); /* NULL: asked of the server, as before */
}

static void appended(struct th_store *c, struct memo_task *t, const struct th_arg *args, size_t n)
{
	const char *mid = text(args, n, 1), *role = text(args, n, 2), *json = text(args, n, 4);
	struct memo_seen *s = seen_of(t, mid);
	if (s != NULL)
		s->present = 1;
	if (t->pos < 0)
		return; /* where it went is not known: nothing more to keep */
	if (t->nmsgs >= MEMO_ITEMS || mid == NULL || role == NULL || json == NULL) {
		give_up(c, t);
		return;
	}
	struct memo_msg *m = &t->msgs[t->nmsgs];
	int bad = 0;
	m->mid = dup(mid, &bad);
	m->role = dup(role, &bad);
	m->json = dup(json, &bad);
	m->pos = t->pos + 1;
	t->nmsgs++;
	if (bad) {
		give_up(c, t);
		return;
	}
	t->pos++;
}

/* An event appended with seq: the entry's last seq, and its row's. */
static void event_added(struct th_store *c, struct memo_task *t, const struct th_arg *args,
                        size_t n)
{
	if (n < 2 || args[1].t != 'i') {
		give_up(c, t);
		return;
	}
	t->seq = args[1].i;
	if (t->row == NULL)
		return;
	char v[24];
	snprintf(v, sizeof v, "%" PRId64, t->seq);
	if (PQnfields(t->row) <= ROW_LAST_SEQ ||
	    !PQsetvalue(t->row, 0, ROW_LAST_SEQ, v, (int)strlen(v))) {
		PQclear(t->row);
		t->row = NULL;
	}
}

void th_pg_memo_wrote(struct th_store *c, enum th_stmt_id id, const char *sql,
                      const struct th_arg *args, size_t n)
{
	if (id == TH_STMT_TASK_INSERT) {
		created(c, args, n);
		return;
	}
	if (c->pg_memo == NULL)
		return;
	struct memo_task *t = entry(c, text(args, n, 0));
	switch (id) {
	case TH_STMT_PART_PUT: /* ?2..?5, at ?6 */
		if (t != NULL && part_put(t, args, n, 1, 5) != 0)
			give_up(c, t);
		return;
	case TH_STMT_PART_ADD_NEW: /* ?4..?7 and ?9..?12 (none: ?9 NULL), at ?2 */
		if (t != NULL &&
		    (part_put(t, args, n, 3, 1) != 0 || part_put(t, args, n, 8, 1) != 0))
			give_up(c, t);
		return;
	case TH_STMT_MSG_APPEND:
		if (t != NULL)
			appended(c, t, args, n);
		return;
	case TH_STMT_EV_INSERT:
		if (t != NULL)
			event_added(c, t, args, n);
		return;
	case TH_STMT_TASK_SET_STATUS:
	case TH_STMT_TASK_SET_EXT:
		if (t != NULL) {
			PQclear(t->row);
			t->row = NULL;
		}
		return;
	default:
		break;
	}
	char table[64];
	table_of(sql, table, sizeof table);
	if (memo_table(table))
		th_pg_memo_reset(c);
	else if (strcmp(table, "help_requests") == 0)
		forget_ahead(c->pg_memo); /* the pending questions it kept (decision-088) */
}

/* ---- what a read says ------------------------------------------------------------- */

/* The one value of r (row 0, column 0), or NULL. */
static const char *value(const PGresult *r)
{
	return PQntuples(r) > 0 && PQnfields(r) > 0 && !PQgetisnull(r, 0, 0) ? PQgetvalue(r, 0, 0)
	                                                                     : NULL;
}

static void learn_row(struct th_store *c, struct memo_task *t, const PGresult *r)
{
	if (PQntuples(r) != 1 || PQnfields(r) <= ROW_LAST_POS) {
		give_up(c, t);
		return;
	}
	PQclear(t->row);
	t->row = PQcopyResult(r, PG_COPYRES_ATTRS | PG_COPYRES_TUPLES);
	t->seq = strtoll(PQgetvalue(r, 0, ROW_LAST_SEQ), NULL, 10);
	t->pos = strtoll(PQgetvalue(r, 0, ROW_LAST_POS), NULL, 10);
	if (t->ctx == NULL && (t->ctx = strdup(PQgetvalue(r, 0, ROW_CONTEXT))) == NULL)
		give_up(c, t);
}

static void learn_seen(struct th_store *c, struct memo_task *t, const char *mid, int present)
{
	struct memo_seen *s = seen_of(t, mid);
	if (s == NULL) {
		if (mid == NULL || t->nseen >= MEMO_ITEMS) {
			give_up(c, t);
			return;
		}
		s = &t->seen[t->nseen];
		if ((s->mid = strdup(mid)) == NULL) {
			give_up(c, t);
			return;
		}
		t->nseen++;
	}
	s->present = present;
}

void th_pg_memo_learn(struct th_store *c, enum th_stmt_id id, const struct th_arg *args, size_t n,
                      const PGresult *r)
{
	const char *task_id = text(args, n, 0);
	/* Kept as they came, by their arguments (decision-088): a pending question until
	 * the transaction writes a help request, a task's sub-tasks until it writes a task
	 * or a sub-task link (which forgets everything). */
	if (kept_as_sent(id)) {
		th_pg_memo_keep(c, id, args, n, r);
		return;
	}
	switch (id) {
	case TH_STMT_TASK_GET:
	case TH_STMT_TASK_CONTEXT:
	case TH_STMT_EV_LAST:
	case TH_STMT_PART_ROLE:
	case TH_STMT_MSG_EXISTS:
	case TH_STMT_REF_LAST:
		break;
	default:
		return;
	}
	if (PQntuples(r) == 0 && id != TH_STMT_PART_ROLE && id != TH_STMT_MSG_EXISTS &&
	    id != TH_STMT_REF_LAST)
		return; /* no such task */
	if (id == TH_STMT_PART_ROLE && PQntuples(r) == 0 && text(args, n, 2) != NULL)
		return; /* TEN-2: maybe only not in the tenant asked; nothing is learned */
	struct memo_task *t = entry_made(c, task_id);
	if (t == NULL)
		return;
	const char *v = value(r);
	if (id == TH_STMT_TASK_GET) {
		learn_row(c, t, r);
	} else if (id == TH_STMT_TASK_CONTEXT) {
		if (t->ctx == NULL && v != NULL && (t->ctx = strdup(v)) == NULL)
			give_up(c, t);
	} else if (id == TH_STMT_EV_LAST) {
		t->seq = v != NULL ? strtoll(v, NULL, 10) : 0;
	} else if (id == TH_STMT_REF_LAST) {
		t->pos = v != NULL ? strtoll(v, NULL, 10) : 0;
	} else if (id == TH_STMT_MSG_EXISTS) {
		learn_seen(c, t, text(args, n, 1), PQntuples(r) > 0);
	} else if (!t->fresh && part_of(t, text(args, n, 1)) == NULL &&
	           (text(args, n, 1) == NULL ||
	            part_set(t, text(args, n, 1), NULL, v, NULL, 0) != 0)) {
		give_up(c, t); /* PART_ROLE: only the role is asked; kind stays unknown */
	}
}

/* ---- answers ---------------------------------------------------------------------- */

/* A new result of ncols text columns and no rows, or NULL. */
static PGresult *result(int ncols)
{
	static char name[] = "memo";
	PGresAttDesc cols[MEMO_EMPTY_COLS];
	memset(cols, 0, sizeof cols);
	for (int k = 0; k < ncols; k++) {
		cols[k].name = name;
		cols[k].typid = 25; /* text */
		cols[k].typlen = -1;
		cols[k].atttypmod = -1;
	}
	PGresult *r = PQmakeEmptyPGresult(NULL, PGRES_TUPLES_OK);
	if (r != NULL && !PQsetResultAttrs(r, ncols, cols)) {
		PQclear(r);
		r = NULL;
	}
	return r;
}

/* Sets row i, column k of r to v (NULL: SQL NULL); 0, or -1 when out of memory. */
static int put(PGresult *r, int i, int k, const char *v)
{
	union {
		const char *in;
		char *out;
	} u = {v};
	return PQsetvalue(r, i, k, u.out, v != NULL ? (int)strlen(v) : -1) ? 0 : -1;
}

static int put_int(PGresult *r, int i, int k, int64_t v)
{
	char s[24];
	snprintf(s, sizeof s, "%" PRId64, v);
	return put(r, i, k, s);
}

/* Done building r: it, or NULL (freed) when bad. */
static PGresult *built(PGresult *r, int bad)
{
	if (bad) {
		PQclear(r);
		return NULL;
	}
	return r;
}

static PGresult *one(const char *v)
{
	PGresult *r = result(1);
	return r != NULL ? built(r, put(r, 0, 0, v)) : NULL;
}

static PGresult *one_int(int64_t v)
{
	PGresult *r = result(1);
	return r != NULL ? built(r, put_int(r, 0, 0, v)) : NULL;
}

/* The row TASK_GET reads (TASK_COLS, then TASK_GET_PG_FROM's last history position) of a
 * task this transaction has just inserted, from TASK_INSERT's arguments (?1..?14, in
 * tasks.c): no status message row yet (status_pos is NULL), no event, no message, and
 * status_meta_json's stand-in for a sub-state alone as the SQL makes it. NULL when the
 * arguments are not what tasks.c sends, or out of memory (decision-087). */
static PGresult *inserted_row(const struct th_arg *args, size_t n)
{
	if (n < 14 || args[6].t != 'i' || args[12].t != 'i' || args[13].t != 'i')
		return NULL;
	const char *sub = text(args, n, 3), *meta = text(args, n, 4);
	char stand_in[96];
	if (meta == NULL && sub != NULL) {
		int w = snprintf(stand_in, sizeof stand_in, "{\"sub_state\":\"%s\"}", sub);
		if (w < 0 || (size_t)w >= sizeof stand_in)
			return NULL;
		meta = stand_in;
	}
	PGresult *r = result(ROW_LAST_POS + 1);
	if (r == NULL)
		return NULL;
	int bad = put(r, 0, 0, text(args, n, 0)) | put(r, 0, ROW_CONTEXT, text(args, n, 1)) |
	          put(r, 0, 2, text(args, n, 2)) | put(r, 0, 3, sub) | put(r, 0, 4, meta) |
	          put(r, 0, 5, text(args, n, 5)) | put_int(r, 0, 6, 0) | put(r, 0, 7, NULL) |
	          put(r, 0, 8, NULL) | put_int(r, 0, 9, args[6].i) |
	          put(r, 0, 10, text(args, n, 7)) | put(r, 0, 11, text(args, n, 8)) |
	          put(r, 0, 12, text(args, n, 9)) | put(r, 0, 13, text(args, n, 10)) |
	          put(r, 0, 14, text(args, n, 11)) | put_int(r, 0, 15, args[12].i) |
	          put_int(r, 0, 16, args[13].i) | put_int(r, 0, ROW_LAST_SEQ, 0) |
	          put_int(r, 0, ROW_LAST_POS, 0);
	return built(r, bad);
}

/* refs.c's message reads: pos, json, message_id, role. */
static PGresult *message(const struct memo_msg *m)
{
	PGresult *r = result(4);
	return r != NULL ? built(r, put_int(r, 0, 0, m->pos) | put(r, 0, 1, m->json) |
	                                put(r, 0, 2, m->mid) | put(r, 0, 3, m->role))
	                 : NULL;
}

/* A fresh task's history: the newest limit messages, oldest first. */
static PGresult *history(const struct memo_task *t, const struct th_arg *args, size_t n)
{
	if (n < 2 || args[1].t != 'i')
		return NULL;
	PGresult *r = result(3); /* json, message_id, role (MSG_HISTORY_SQL) */
	int bad = r == NULL;
	for (size_t i = 0, row = 0; !bad && i < t->nmsgs; i++)
		if (t->msgs[i].pos > t->pos - args[1].i) {
			bad |= put(r, (int)row, 0, t->msgs[i].json) |
			       put(r, (int)row, 1, t->msgs[i].mid) |
			       put(r, (int)row, 2, t->msgs[i].role);
			row++;
		}
	return bad ? built(r, 1) : r;
}

/* A fresh task's participants, ORDER BY added_ms, rowid. */
static PGresult *participants(const struct memo_task *t)
{
	const struct memo_part *sorted[MEMO_ITEMS];
	size_t k = 0;
	for (size_t i = 0; i < t->nparts; i++) {
		if (t->parts[i].role == NULL)
			continue;
		size_t j = k++;
		while (j > 0 && (sorted[j - 1]->added_ms > t->parts[i].added_ms ||
		                 (sorted[j - 1]->added_ms == t->parts[i].added_ms &&
		                  sorted[j - 1]->order > t->parts[i].order))) {
			sorted[j] = sorted[j - 1];
			j--;
		}
		sorted[j] = &t->parts[i];
	}
	PGresult *r = result(4);
	int bad = r == NULL;
	for (size_t i = 0; !bad && i < k; i++)
		bad |= put(r, (int)i, 0, sorted[i]->id) | put(r, (int)i, 1, sorted[i]->kind) |
		       put(r, (int)i, 2, sorted[i]->role) | put(r, (int)i, 3, sorted[i]->display);
	return bad ? built(r, 1) : r;
}

/* Answers about messages: whether one is there, one by id, the newest. */
static PGresult *about_messages(struct memo_task *t, enum th_stmt_id id, const char *mid,
                                int *known)
{
	*known = 1;
	const struct memo_msg *m = msg_of(t, mid);
	const struct memo_seen *s = seen_of(t, mid);
	switch (id) {
	case TH_STMT_MSG_EXISTS:
		if (m != NULL || (s != NULL && s->present))
			return one_int(1);
		if (s != NULL || t->fresh)
			return result(MEMO_EMPTY_COLS);
		break;
	case TH_STMT_REF_BY_ID:
		if (m != NULL)
			return message(m);
		if (t->fresh || (s != NULL && !s->present))
			return result(MEMO_EMPTY_COLS);
		break;
	case TH_STMT_REF_LAST:
		if (t->nmsgs > 0 && t->msgs[t->nmsgs - 1].pos == t->pos)
			return message(&t->msgs[t->nmsgs - 1]);
		if (t->pos == 0)
			return result(MEMO_EMPTY_COLS);
		break;
	default:
		break;
	}
	*known = 0;
	return NULL;
}

/* ---- a read transaction's reads sent ahead ------------------------------------------- */

/* Statement id with args as one new string (free), or NULL: the id, then each argument's
 * kind and value, separated by a unit separator (an id or text never holds one). */
static char *ahead_key(enum th_stmt_id id, const struct th_arg *args, size_t n)
{
	size_t len = 16;
	for (size_t k = 0; k < n; k++) {
		if (args[k].t == 't' && args[k].s != NULL && strchr(args[k].s, '\x1f') != NULL)
			return NULL;
		len += 24 + (args[k].t == 't' && args[k].s != NULL ? strlen(args[k].s) : 0);
	}
	char *key = malloc(len);
	if (key == NULL)
		return NULL;
	size_t at = (size_t)snprintf(key, len, "%d", (int)id);
	for (size_t k = 0; k < n; k++) {
		if (args[k].t == 'i')
			at += (size_t)snprintf(key + at, len - at, "\x1fi%" PRId64, args[k].i);
		else if (args[k].t == 't' && args[k].s != NULL)
			at += (size_t)snprintf(key + at, len - at, "\x1ft%s",
			                       (const char *)args[k].s);
		else
			at += (size_t)snprintf(key + at, len - at, "\x1fn");
	}
	return key;
}

void th_pg_memo_keep(struct th_store *c, enum th_stmt_id id, const struct th_arg *args, size_t n,
                     const PGresult *r)
{
	if (c->pg_memo == NULL && (c->pg_memo = calloc(1, sizeof *c->pg_memo)) == NULL)
		return;
	struct th_pg_memo *m = c->pg_memo;
	if (m->nahead == m->capahead) {
		int cap = m->capahead > 0 ? m->capahead * 2 : 16;
		struct memo_ahead *v =
		    cap <= MEMO_AHEAD ? realloc(m->ahead, (size_t)cap * sizeof *v) : NULL;
		if (v == NULL)
			return; /* the read is sent again when it is asked */
		m->ahead = v;
		m->capahead = cap;
	}
	char *key = ahead_key(id, args, n);
	PGresult *copy = key != NULL ? PQcopyResult(r, PG_COPYRES_ATTRS | PG_COPYRES_TUPLES) : NULL;
	if (copy == NULL) {
		free(key);
		return;
	}
	m->ahead[m->nahead++] = (struct memo_ahead){key, copy};
}

/* The answer kept for id with args in a read transaction, as a new PGresult, or NULL. */
static PGresult *ahead_answer(const struct th_pg_memo *m, enum th_stmt_id id,
                              const struct th_arg *args, size_t n)
{
	if (m == NULL || m->nahead == 0)
		return NULL;
	char *key = ahead_key(id, args, n);
	PGresult *r = NULL;
	for (int i = 0; key != NULL && r == NULL && i < m->nahead; i++)
		if (strcmp(m->ahead[i].key, key) == 0)
			r = PQcopyResult(m->ahead[i].r, PG_COPYRES_ATTRS | PG_COPYRES_TUPLES);
	free(key);
	return r;
}

int th_pg_memo_answer(struct th_store *c, enum th_stmt_id id, const struct th_arg *args, size_t n,
                      PGresult **out)
{
	*out = NULL;
	if (c->pg_reading)
		return (*out = ahead_answer(c->pg_memo, id, args, n)) != NULL;
	if (kept_as_sent(id) && (*out = ahead_answer(c->pg_memo, id, args, n)) != NULL)
		return 1;
	struct memo_task *t = entry(c, text(args, n, 0));
	if (t == NULL)
		return 0;
	int known = 1;
	const struct memo_part *p;
	switch (id) {
	case TH_STMT_TASK_CONTEXT:
		known = t->ctx != NULL;
		*out = known ? one(t->ctx) : NULL;
		break;
	case TH_STMT_TASK_GET:
		known = t->row != NULL;
		*out = known ? PQcopyResult(t->row, PG_COPYRES_ATTRS | PG_COPYRES_TUPLES) : NULL;
		break;
	case TH_STMT_EV_LAST:
		known = t->seq >= 0;
		*out = known ? one_int(t->seq) : NULL;
		break;
	case TH_STMT_PART_ROLE:
		p = part_of(t, text(args, n, 1));
		known = p != NULL || t->fresh;
		*out = p != NULL && p->role != NULL ? one(p->role)
		       : known                      ? result(MEMO_EMPTY_COLS)
		                                    : NULL;
		break;
	case TH_STMT_PART_LIST:
		known = t->fresh;
		*out = known ? participants(t) : NULL;
		break;
	case TH_STMT_MSG_HISTORY:
		known = t->fresh;
		*out = known ? history(t, args, n) : NULL;
		break;
	case TH_STMT_MSG_EXISTS:
	case TH_STMT_REF_BY_ID:
	case TH_STMT_REF_LAST:
		*out = about_messages(t, id, text(args, n, 1), &known);
		break;
	case TH_STMT_SUB_LIST:
	case TH_STMT_PLAN_LIST:
	case TH_STMT_CHAN_ANY:
	case TH_STMT_ART_LIST:
		/* Nothing of these is written without forgetting every entry (above). */
		known = t->fresh;
		*out = known ? result(MEMO_EMPTY_COLS) : NULL;
		break;
	default:
		known = 0;
		break;
	}
	/* Out of memory building it: the server answers instead. */
	return known && *out != NULL;
}
