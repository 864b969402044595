/* SPDX-License-Identifier: Apache-2.0 */
/* group.c — the transaction calls and group commit: the request threads of one worker
 * process share one writer connection, and the write transactions they run at the same
 * time commit together. A store that joined no group runs its transactions on its own
 * connection (db.c).
 *
 * Why: a write transaction's fixed costs (taking SQLite's write lock, reloading pages
 * another process changed, writing the WAL frames of every b-tree it touched, COMMIT)
 * were most of a SendMessage's time, and they serialised every worker (bench/README.md,
 * "Where a SendMessage's time goes"). In a batch they are paid once.
 *
 * How: a write is a function (th_store_write). Its caller queues it as a job and waits.
 * The thread that finds the writer free runs every queued job back to back (combine),
 * each in SAVEPOINT th_member on its owner's store switched to the writer, opening the
 * writer's transaction (BEGIN IMMEDIATE) first when none is open, and then commits the
 * batch. No thread is woken between two parts. A job's caller returns only once COMMIT
 * has returned, with COMMIT's result: no request is answered before what it wrote is in
 * the database (TURN-4). A part whose function fails is undone alone (ROLLBACK TO
 * th_member). A failed COMMIT, or a transaction SQLite rolled back by itself (disk full,
 * I/O error), fails every part of the batch, and nothing any of them wrote is stored. A
 * batch holds at most one part per thread, since a thread waits for its part's batch.
 * docs/decisions/decision-023.md and decision-030.md record the design. */
#include <assert.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "store/store.h"
#include "store/store_int.h"
#include "util/ids.h"
#include "util/log.h"

/* How many batches in a row one combining thread runs (combine). */
#ifndef TH_GROUP_HOLD_BATCHES
#define TH_GROUP_HOLD_BATCHES 2
#endif

/* A write handed to the group (th_store_write). Lives on its owner's stack; the owner
 * waits on wake until the part ran and, when kept, its batch closed. */
struct job {
	th_store_write_fn fn;
	void *arg;
	struct th_store *st;          /* borrowed: the owner's store; the part runs on it */
	struct th_error *e;           /* borrowed: the owner's; fn's error */
	const struct th_log_ctx *log; /* borrowed: the owner's request, named in fn's lines */
	th_err part;                  /* fn's result once it ran (TH_OK: kept in the batch) */
	int ran;
	int done;               /* its batch closed; result holds the outcome */
	struct th_error result; /* the batch's result for a kept part */
	pthread_cond_t wake;    /* pthread_cond_destroy (th_store_write) */
	struct job *next;       /* in the queue, then in the batch's kept list */
};

struct th_store_group {
	pthread_mutex_t mu;    /* guards every field below but w's connection state */
	struct th_store *w;    /* the writer connection; th_store_close (th_store_group_close).
	                          Used by one thread at a time: the combining one */
	int busy;              /* a thread is running parts or closing the batch */
	int open;              /* w has a transaction open (the batch) */
	int lost;              /* SQLite ended the open batch's transaction by itself */
	struct job *jobs;      /* parts waiting to be run, oldest first */
	struct job **jobs_end; /* where the next job is linked in */
	struct job *kept;      /* the open batch's parts that ran and were kept */
	struct th_store_group_stats stats;
};

/* The error every part of a batch whose transaction SQLite rolled back receives. */
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
	g->jobs_end = &g->jobs;
	*out = g;
	return TH_OK;
}

void th_store_group_close(struct th_store_group *g)
{
	if (g == NULL)
		return;
	/* Every member has left: a thread still inside a batch would be using w. */
	assert(!g->busy && g->kept == NULL && g->jobs == NULL);
	th_store_close(g->w);
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
	out->round_trips = th_pg_round_trips(g->w);
	out->waiting = 0;
	for (const struct job *j = g->jobs; j != NULL; j = j->next)
		out->waiting++;
	pthread_mutex_unlock(&g->mu);
}

/* Runs one of the member statements (SAVEPOINT, RELEASE, ROLLBACK TO) on w. */
static th_err member_stmt(struct th_store_group *g, enum th_stmt_id id, const char *sql,
                          struct th_error *e)
{
	return th_store_exec(g->w, id, sql, NULL, 0, NULL, NULL, sql, e);
}

/* Ends the open batch (the caller is busy and holds mu): COMMIT when parts were kept and
 * the transaction is still there, else ROLLBACK. Every kept part's owner receives the
 * result and is woken. Returns with mu held. */
static void close_batch(struct th_store_group *g)
{
	struct job *kept = g->kept;
	int lost = g->lost;
	pthread_mutex_unlock(&g->mu);
	struct th_error r;
	th_error_clear(&r);
	if (kept == NULL || lost) {
		th_store_rollback_own(g->w);
		if (lost)
			lost_error(&r);
	} else if (th_store_commit_own(g->w, &r) == TH_OK) {
		r.code = TH_OK;
	}
	/* Each owner tends the WAL after its response (th_store_wal_tend) with the count
	 * this commit left. */
	int frames = r.code == TH_OK ? th_store_wal_frames(g->w) : 0;
	pthread_mutex_lock(&g->mu);
	int64_t parts = 0;
	for (struct job *k = g->kept; k != NULL; k = k->next) {
		k->result = r;
		if (r.code == TH_OK)
			k->st->wal_frames = frames;
		k->done = 1;
		pthread_cond_signal(&k->wake);
		parts++;
	}
	g->kept = NULL;
	g->open = 0;
	g->lost = 0;
	if (parts > 0) {
		g->stats.batches++;
		g->stats.parts += parts;
	}
}

/* Notes that the database ended the batch's transaction by itself (SQLite after
 * SQLITE_FULL, an I/O error or no memory; PostgreSQL when the connection was lost):
 * every part of it is gone, so the batch fails as a whole. With no batch open (a split
 * whose BEGIN failed, th_store_group_split) there is nothing to lose. */
static void note_lost(struct th_store_group *g)
{
	pthread_mutex_lock(&g->mu);
	if (g->open)
		g->lost = 1;
	pthread_mutex_unlock(&g->mu);
}

/* fn for st, as one write of either kind (a group part, a transaction of its own): the
 * write's time (th_store_now) and its own new task (fresh_task, push.c) hold exactly
 * while fn runs. */
static th_err call_write_fn(struct th_store *st, th_store_write_fn fn, void *arg,
                            struct th_error *e)
{
	st->write_ms = th_now_ms();
	st->fresh_task[0] = '\0';
	th_err rc = fn(st, arg, e);
	st->write_ms = 0;
	st->fresh_task[0] = '\0';
	return rc;
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
		th_store_use_conn(st, g->w);
		struct th_log_ctx mine = *th_log_ctx_self();
		th_log_ctx_set(x->log);
		g->w->pg_defer = 1; /* every failure of fn undoes the part (decision-054) */
		rc = call_write_fn(st, x->fn, x->arg, x->e);
		g->w->pg_defer = 0;
		th_log_ctx_set(&mine);
		if (rc == TH_OK && !th_store_in_txn(g->w))
			rc = lost_error(x->e);
		if (rc == TH_OK)
			rc = member_stmt(g, TH_STMT_RELEASE, "RELEASE th_member", x->e);
		if (rc != TH_OK && th_store_in_txn(g->w)) {
			struct th_error ignored;
			if (member_stmt(g, TH_STMT_ROLLBACK_TO, "ROLLBACK TO th_member",
			                &ignored) == TH_OK)
				(void)member_stmt(g, TH_STMT_RELEASE, "RELEASE th_member",
				                  &ignored);
		}
		st->in_group = 0;
		th_store_use_conn(st, st);
	}
	if (!th_store_in_txn(g->w))
		note_lost(g); /* the database rolled the open batch back by itself */
	return rc;
}

th_err th_store_group_split(struct th_store *st, struct th_error *e)
{
	struct th_store_group *g = st->group;
	assert(st->in_group && g != NULL);
	/* The part keeps nothing from before: it wrote nothing (pg.c checks). */
	th_err rc = member_stmt(g, TH_STMT_RELEASE, "RELEASE th_member", e);
	if (rc != TH_OK)
		return rc;
	pthread_mutex_lock(&g->mu);
	close_batch(g);
	pthread_mutex_unlock(&g->mu);
	if ((rc = th_store_begin_own(g->w, e)) != TH_OK)
		return rc; /* no batch is open: run_part notes no loss */
	pthread_mutex_lock(&g->mu);
	g->open = 1;
	g->stats.splits++;
	pthread_mutex_unlock(&g->mu);
	return member_stmt(g, TH_STMT_SAVEPOINT, "SAVEPOINT th_member", e);
}

/* The caller (mu held, the writer free) runs every queued job back to back and closes
 * the batch. While jobs queued up during its COMMIT, it runs them as the next batch, up
 * to TH_GROUP_HOLD_BATCHES batches: a thread switch per batch saved, at the price of its
 * own answer waiting that long. Then it wakes the oldest job's owner to go on. Returns
 * with mu held. */
static void combine(struct th_store_group *g)
{
	g->busy = 1;
	for (int batch = 1; batch <= TH_GROUP_HOLD_BATCHES && g->jobs != NULL; batch++) {
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
				x->next = g->kept;
				g->kept = x;
			} else {
				pthread_cond_signal(&x->wake);
			}
		}
		if (g->open || g->kept != NULL)
			close_batch(g);
	}
	g->busy = 0;
	if (g->jobs != NULL)
		pthread_cond_signal(&g->jobs->wake);
}

static th_err group_write(struct th_store *st, th_store_write_fn fn, void *arg, struct th_error *e)
{
	struct th_store_group *g = st->group;
	struct job j = {.fn = fn, .arg = arg, .st = st, .e = e, .log = th_log_ctx_self()};
	th_error_clear(&j.result);
	pthread_cond_init(&j.wake, NULL);
	pthread_mutex_lock(&g->mu);
	*g->jobs_end = &j;
	g->jobs_end = &j.next;
	for (;;) {
		if (j.ran && (j.part != TH_OK || j.done))
			break;
		if (!j.ran && !g->busy)
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

th_err th_store_write(struct th_store *st, th_store_write_fn fn, void *arg, struct th_error *e)
{
	if (st->group != NULL)
		return group_write(st, fn, arg, e);
	th_err rc = th_store_begin_own(st, e);
	if (rc != TH_OK)
		return rc;
	st->pg_defer = 1; /* every failure of fn undoes the transaction (decision-054) */
	rc = call_write_fn(st, fn, arg, e);
	st->pg_defer = 0;
	if (rc == TH_OK)
		rc = th_store_commit_own(st, e);
	if (rc != TH_OK)
		th_store_rollback_own(st);
	return rc;
}

int64_t th_store_now(const struct th_store *st)
{
	return st->write_ms > 0 ? st->write_ms : th_now_ms();
}

th_err th_store_begin(struct th_store *st, struct th_error *e)
{
	assert(st->group == NULL); /* a group's writes are th_store_write functions */
	return th_store_begin_own(st, e);
}

th_err th_store_commit(struct th_store *st, struct th_error *e)
{
	return th_store_commit_own(st, e);
}

void th_store_rollback(struct th_store *st)
{
	th_store_rollback_own(st);
}
