/* SPDX-License-Identifier: Apache-2.0 */
/* group.c — the transaction calls (th_store_begin, th_store_commit, th_store_rollback)
 * and group commit: the request threads of one worker process share one writer
 * connection, and the write transactions they run at the same time commit together. A
 * store that joined no group runs its transactions on its own connection (db.c).
 *
 * Why: a write transaction's fixed costs (taking SQLite's write lock, reloading pages
 * another process changed, writing the WAL frames of every b-tree it touched, COMMIT)
 * were most of a SendMessage's time, and they serialised every worker (bench/README.md,
 * "Where a SendMessage's time goes"). In a batch they are paid once.
 *
 * How: a member (a thread's store, th_store_join) that begins a write waits until no
 * other member is running statements on the writer, opens the writer's transaction if
 * none is open (BEGIN IMMEDIATE) and runs its part inside SAVEPOINT th_member. Its
 * commit releases the savepoint and then either waits, when other members are queued
 * to run their parts (the last of them commits for all), or commits the batch itself.
 * A member's commit returns only once COMMIT has returned, with COMMIT's result: no
 * request is answered before what it wrote is in the database (TURN-4). A member that
 * rolls back undoes only its own part (ROLLBACK TO th_member). A failed COMMIT, or a
 * transaction SQLite rolled back by itself (disk full, I/O error), fails every member
 * of the batch, and nothing any of them wrote is stored. A batch holds at most one part
 * per thread, since a member waiting for the commit runs nothing else.
 *
 * th_store_write hands a part over as a function instead (a job): the thread that finds
 * the writer free runs every queued job back to back and commits them, so no thread is
 * woken between two parts (combine). docs/decisions/decision-023.md and decision-030.md
 * record the design. */
#include <assert.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "store/store.h"
#include "store/store_int.h"
#include "util/log.h"

/* A member waiting for its batch to close: close_batch writes the result and sets done. */
struct waiter {
	struct th_store *st;     /* borrowed: the member; its wal_frames is set at the commit */
	struct th_error *result; /* borrowed: the waiting member's */
	pthread_cond_t *wake;    /* borrowed: signalled at the close (a job's owner), or NULL:
	                            the member waits on the group's `closed` */
	int done;
	struct waiter *next;
};

/* How many batches in a row one combining thread runs (combine). */
#ifndef TH_GROUP_HOLD_BATCHES
#define TH_GROUP_HOLD_BATCHES 2
#endif

/* A write transaction handed to the group as a function (th_store_write): whichever
 * member holds the writer runs it (combining), so that parts follow each other on the
 * writer without a thread switch between them. Lives on its owner's stack; the owner
 * waits on wake until the part ran and, when kept, its batch closed. */
struct job {
	th_store_write_fn fn;
	void *arg;
	struct th_store *st;          /* borrowed: the owner's store; the part runs on it */
	struct th_error *e;           /* borrowed: the owner's; fn's error, or the batch's */
	const struct th_log_ctx *log; /* borrowed: the owner's request, named in fn's lines */
	th_err part;                  /* fn's result once it ran (TH_OK: kept in the batch) */
	int ran;
	struct th_error result; /* the batch's result for a kept part */
	struct waiter w;        /* in the batch's kept list while its COMMIT is awaited */
	pthread_cond_t wake;    /* pthread_cond_destroy (th_store_write) */
	struct job *next;
};

struct th_store_group {
	pthread_mutex_t mu;    /* guards every field below but w's connection state */
	pthread_cond_t turn;   /* signalled when the writer is free for the next member */
	pthread_cond_t closed; /* broadcast when a batch closed (its kept members' results) */
	struct th_store *w;    /* the writer connection; th_store_close (th_store_group_close).
	                          Used by one thread at a time: the busy member, or the closer */
	int busy;              /* a member is running its part on w */
	int closing;           /* a member is committing or rolling back the whole batch */
	int open;              /* w has a transaction open (the batch) */
	int waiting;           /* members waiting to run their part (th_store_begin) */
	struct job *jobs;      /* parts waiting to be run (th_store_write), oldest first;
	                          borrowed from their owners' stacks */
	struct job **jobs_end; /* where the next job is linked in */
	int lost;              /* SQLite ended the open batch's transaction by itself */
	struct waiter *kept;   /* the parts of the open batch that were released (kept): their
	                          members wait for its result; borrowed from their stacks */
	struct th_store_group_stats stats;
};

/* The error every member of a batch whose transaction SQLite rolled back receives. */
static th_err lost_error(struct th_error *e)
{
	return th_error_set(e, TH_EINTERNAL,
	                    "database error (commit): the write transaction was rolled back; "
	                    "nothing was stored");
}

th_err th_store_group_open(const struct th_store_opts *o, struct th_store_group **out,
                           struct th_error *e)
{
	*out = NULL;
	struct th_store_group *g = calloc(1, sizeof *g);
	if (g == NULL)
		return th_error_set(e, TH_ENOMEM, "out of memory opening the group writer");
	th_err rc = th_store_open(o, &g->w, e);
	if (rc != TH_OK) {
		free(g);
		return rc;
	}
	pthread_mutex_init(&g->mu, NULL);
	pthread_cond_init(&g->turn, NULL);
	pthread_cond_init(&g->closed, NULL);
	g->jobs_end = &g->jobs;
	*out = g;
	return TH_OK;
}

void th_store_group_close(struct th_store_group *g)
{
	if (g == NULL)
		return;
	/* Every member has left: a thread still inside a batch would be using w. */
	assert(!g->busy && !g->closing && g->kept == NULL && g->jobs == NULL);
	th_store_close(g->w);
	pthread_cond_destroy(&g->turn);
	pthread_cond_destroy(&g->closed);
	pthread_mutex_destroy(&g->mu);
	free(g);
}

void th_store_join(struct th_store *st, struct th_store_group *g)
{
	assert(!st->in_group);
	st->group = g;
}

void th_store_group_stats(struct th_store_group *g, struct th_store_group_stats *out)
{
	pthread_mutex_lock(&g->mu);
	*out = g->stats;
	out->waiting = g->waiting;
	for (const struct job *j = g->jobs; j != NULL; j = j->next)
		out->waiting++;
	pthread_mutex_unlock(&g->mu);
}

static void group_rollback(struct th_store *st);

/* Runs one of the member statements (SAVEPOINT, RELEASE, ROLLBACK TO) on w. */
static th_err member_stmt(struct th_store_group *g, enum th_stmt_id id, const char *sql,
                          struct th_error *e)
{
	return th_store_exec(g->w, id, sql, NULL, 0, NULL, NULL, sql, e);
}

/* The writer is free (mu held): the next holder is a member waiting to run its part, or
 * else the owner of the oldest job, who runs every queued job (th_store_write). */
static void pass_on(struct th_store_group *g)
{
	if (g->waiting > 0)
		pthread_cond_signal(&g->turn);
	else if (g->jobs != NULL)
		pthread_cond_signal(&g->jobs->wake);
}

/* 1 when someone is waiting for the writer (mu held). */
static int wanted(const struct th_store_group *g)
{
	return g->waiting > 0 || g->jobs != NULL;
}

/* Ends the open batch; the caller set closing and holds no lock. COMMIT when parts were
 * kept and the transaction is still there, else ROLLBACK. Every kept part's member
 * receives the result and is woken. Then the writer goes to the next holder, or, with
 * may_keep, when only th_store_write parts are queued, stays with the caller (returns 1:
 * busy is set, the caller runs them). */
static int close_batch(struct th_store_group *g, int may_keep)
{
	struct th_error r;
	th_error_clear(&r);
	pthread_mutex_lock(&g->mu);
	struct waiter *kept = g->kept;
	int lost = g->lost;
	pthread_mutex_unlock(&g->mu);

	if (kept == NULL || lost) {
		th_store_rollback_own(g->w);
		if (lost)
			lost_error(&r);
	} else if (th_store_commit_own(g->w, &r) == TH_OK) {
		r.code = TH_OK;
	}

	/* Each member tends the WAL after its response (th_store_wal_tend) with the
	 * count this commit left. */
	int frames = r.code == TH_OK ? th_store_wal_frames(g->w) : 0;
	pthread_mutex_lock(&g->mu);
	int64_t parts = 0, members = 0;
	for (struct waiter *k = g->kept; k != NULL; k = k->next) {
		*k->result = r;
		if (r.code == TH_OK)
			k->st->wal_frames = frames;
		k->done = 1;
		parts++;
		if (k->wake != NULL)
			pthread_cond_signal(k->wake);
		else
			members++;
	}
	g->kept = NULL;
	g->open = 0;
	g->lost = 0;
	g->closing = 0;
	if (parts > 0) {
		g->stats.batches++;
		g->stats.parts += parts;
	}
	if (members > 0)
		pthread_cond_broadcast(&g->closed);
	int keep = may_keep && g->jobs != NULL && g->waiting == 0;
	if (keep)
		g->busy = 1;
	else
		pass_on(g);
	pthread_mutex_unlock(&g->mu);
	return keep;
}

/* The member gives up w. With kept its part stays in the batch, and it returns the
 * batch's result once the batch closed (TH_OK: committed); without, TH_OK at once. */
static th_err leave(struct th_store *st, int kept, struct th_error *e)
{
	struct th_store_group *g = st->group;
	st->in_group = 0;
	st->db = st->own_db;
	st->stmt = st->own_stmt;

	struct th_error r;
	th_error_clear(&r);
	struct waiter me = {.st = st, .result = &r, .wake = NULL, .done = 0, .next = NULL};
	pthread_mutex_lock(&g->mu);
	if (kept) {
		me.next = g->kept;
		g->kept = &me;
	}
	g->busy = 0;
	if (wanted(g) && !g->lost) {
		/* Another member runs its part next; the last one to leave closes the batch. */
		pass_on(g);
		while (kept && !me.done)
			pthread_cond_wait(&g->closed, &g->mu);
		pthread_mutex_unlock(&g->mu);
	} else {
		g->closing = 1;
		pthread_mutex_unlock(&g->mu);
		(void)close_batch(g, 0);
	}
	if (!kept || r.code == TH_OK)
		return TH_OK;
	if (e != NULL)
		*e = r;
	return r.code;
}

/* Notes that SQLite ended the batch's transaction by itself (after SQLITE_FULL, an I/O
 * error or no memory): every part of it is gone, so the batch fails as a whole. */
static void note_lost(struct th_store_group *g)
{
	pthread_mutex_lock(&g->mu);
	g->lost = 1;
	pthread_mutex_unlock(&g->mu);
}

static th_err group_enter(struct th_store *st, struct th_error *e)
{
	struct th_store_group *g = st->group;
	assert(!st->in_group);
	pthread_mutex_lock(&g->mu);
	g->waiting++;
	while (g->busy || g->closing)
		pthread_cond_wait(&g->turn, &g->mu);
	g->waiting--;
	g->busy = 1;
	int open = g->open;
	pthread_mutex_unlock(&g->mu);

	th_err rc = TH_OK;
	if (!open) {
		rc = th_store_begin_own(g->w, e);
		if (rc == TH_OK) {
			pthread_mutex_lock(&g->mu);
			g->open = 1;
			pthread_mutex_unlock(&g->mu);
		}
	}
	if (rc == TH_OK)
		rc = member_stmt(g, TH_STMT_SAVEPOINT, "SAVEPOINT th_member", e);
	st->in_group = 1;
	st->db = g->w->db;
	st->stmt = g->w->stmt;
	if (rc != TH_OK)
		group_rollback(st);
	return rc;
}

static th_err group_commit(struct th_store *st, struct th_error *e)
{
	struct th_store_group *g = st->group;
	assert(st->in_group);
	if (sqlite3_get_autocommit(g->w->db)) {
		group_rollback(st);
		return lost_error(e);
	}
	th_err rc = member_stmt(g, TH_STMT_RELEASE, "RELEASE th_member", e);
	if (rc != TH_OK) {
		group_rollback(st);
		return rc;
	}
	rc = leave(st, 1, e);
	if (rc == TH_OK)
		st->group_writes++;
	return rc;
}

static void group_rollback(struct th_store *st)
{
	struct th_store_group *g = st->group;
	assert(st->in_group);
	int open = !sqlite3_get_autocommit(g->w->db);
	pthread_mutex_lock(&g->mu);
	int had = g->open;
	pthread_mutex_unlock(&g->mu);
	if (open) {
		struct th_error ignored;
		if (member_stmt(g, TH_STMT_ROLLBACK_TO, "ROLLBACK TO th_member", &ignored) == TH_OK)
			(void)member_stmt(g, TH_STMT_RELEASE, "RELEASE th_member", &ignored);
	}
	if (had && sqlite3_get_autocommit(g->w->db))
		note_lost(g);
	(void)leave(st, 0, NULL);
}

/* Runs job x's part on the writer for the combiner (mu not held): the batch's BEGIN
 * when none is open, then fn inside SAVEPOINT th_member on x's store, switched to the
 * writer. A part that fails is undone alone. */
static th_err run_part(struct th_store_group *g, struct job *x, int open)
{
	struct th_store *st = x->st;
	th_err rc = TH_OK;
	if (!open) {
		if ((rc = th_store_begin_own(g->w, x->e)) != TH_OK)
			return rc;
		pthread_mutex_lock(&g->mu);
		g->open = 1;
		pthread_mutex_unlock(&g->mu);
	}
	if ((rc = member_stmt(g, TH_STMT_SAVEPOINT, "SAVEPOINT th_member", x->e)) == TH_OK) {
		st->in_group = 1;
		st->db = g->w->db;
		st->stmt = g->w->stmt;
		struct th_log_ctx mine = *th_log_ctx_self();
		th_log_ctx_set(x->log);
		rc = x->fn(st, x->arg, x->e);
		th_log_ctx_set(&mine);
		if (rc == TH_OK && sqlite3_get_autocommit(g->w->db))
			rc = lost_error(x->e);
		if (rc == TH_OK)
			rc = member_stmt(g, TH_STMT_RELEASE, "RELEASE th_member", x->e);
		if (rc != TH_OK && !sqlite3_get_autocommit(g->w->db)) {
			struct th_error ignored;
			if (member_stmt(g, TH_STMT_ROLLBACK_TO, "ROLLBACK TO th_member",
			                &ignored) == TH_OK)
				(void)member_stmt(g, TH_STMT_RELEASE, "RELEASE th_member",
				                  &ignored);
		}
		st->in_group = 0;
		st->db = st->own_db;
		st->stmt = st->own_stmt;
	}
	if (sqlite3_get_autocommit(g->w->db))
		note_lost(g); /* SQLite rolled the open batch back by itself */
	return rc;
}

/* The caller (mu held, the writer free) runs every queued job back to back, then hands
 * the writer on as a member leaving does, or closes the batch. While only jobs queued up
 * during its COMMIT, it runs them as the next batch, up to TH_GROUP_HOLD_BATCHES batches:
 * a thread switch per batch saved, at the price of its own answer waiting that long.
 * Returns with mu held. */
static void combine(struct th_store_group *g)
{
	g->busy = 1;
	for (int batch = 1;; batch++) {
		while (g->jobs != NULL && !g->lost) {
			struct job *x = g->jobs;
			g->jobs = x->next;
			if (g->jobs == NULL)
				g->jobs_end = &g->jobs;
			int open = g->open;
			pthread_mutex_unlock(&g->mu);
			th_err rc = run_part(g, x, open);
			pthread_mutex_lock(&g->mu);
			x->ran = 1;
			x->part = rc;
			if (rc == TH_OK) {
				x->w.next = g->kept;
				g->kept = &x->w;
			} else {
				pthread_cond_signal(&x->wake);
			}
		}
		g->busy = 0;
		if ((wanted(g) && !g->lost) || (!g->open && g->kept == NULL)) {
			pass_on(g);
			return;
		}
		g->closing = 1;
		pthread_mutex_unlock(&g->mu);
		int keep = close_batch(g, batch < TH_GROUP_HOLD_BATCHES);
		pthread_mutex_lock(&g->mu);
		if (!keep)
			return;
	}
}

static th_err group_write(struct th_store *st, th_store_write_fn fn, void *arg, struct th_error *e)
{
	struct th_store_group *g = st->group;
	struct job j = {.fn = fn, .arg = arg, .st = st, .e = e, .log = th_log_ctx_self()};
	th_error_clear(&j.result);
	j.w = (struct waiter){.st = st, .result = &j.result, .wake = &j.wake, .done = 0};
	pthread_cond_init(&j.wake, NULL);
	pthread_mutex_lock(&g->mu);
	*g->jobs_end = &j;
	g->jobs_end = &j.next;
	for (;;) {
		if (j.ran && (j.part != TH_OK || j.w.done))
			break;
		if (!j.ran && !g->busy && !g->closing)
			combine(g);
		else
			pthread_cond_wait(&j.wake, &g->mu);
	}
	pthread_mutex_unlock(&g->mu);
	pthread_cond_destroy(&j.wake);
	if (j.part != TH_OK)
		return j.part;
	if (j.result.code != TH_OK) {
		*e = j.result;
		return j.result.code;
	}
	st->group_writes++;
	return TH_OK;
}

/* ---- the transaction calls: a store's own connection, or its group's writer ---- */

th_err th_store_begin(struct th_store *st, struct th_error *e)
{
	return st->group != NULL ? group_enter(st, e) : th_store_begin_own(st, e);
}

th_err th_store_commit(struct th_store *st, struct th_error *e)
{
	return st->in_group ? group_commit(st, e) : th_store_commit_own(st, e);
}

void th_store_rollback(struct th_store *st)
{
	if (st != NULL && st->in_group)
		group_rollback(st);
	else
		th_store_rollback_own(st);
}

th_err th_store_write(struct th_store *st, th_store_write_fn fn, void *arg, struct th_error *e)
{
	if (st->group != NULL)
		return group_write(st, fn, arg, e);
	th_err rc = th_store_begin_own(st, e);
	if (rc != TH_OK)
		return rc;
	rc = fn(st, arg, e);
	if (rc == TH_OK)
		rc = th_store_commit_own(st, e);
	if (rc != TH_OK)
		th_store_rollback_own(st);
	return rc;
}
