/* SPDX-License-Identifier: Apache-2.0 */
/* check_faults.c — the store under simulated power cuts (STORE-8) and injected I/O
 * errors (STORE-7), through the test VFS of testvfs.c and the real request path
 * (th_service_call: SendMessage, the completion envelope, CancelTask) plus
 * th_store_purge. SQLite's own crash and ioerr tests prove SQLite; these prove that
 * the way the store uses it (WAL, its synchronous setting, its transactions and its
 * rollbacks after a failed step) keeps the promises docs/store.md makes.
 *
 * TH_FAULTS_SEEDS sets the number of power cuts per synchronous setting (default 100,
 * 10 under TH_UNDER_VALGRIND) and TH_FAULTS_ONLY=i repeats the ith cut alone;
 * TH_UNDER_VALGRIND (scripts/test.sh sets it) runs fewer cuts and every 8th N of the
 * sweep, so the suite stays within a minute or two there. */
#include <check.h>
#include <fcntl.h>
#include <sqlite3.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config/settings.h"
#include "harness_fixture.h"
#include "service/service.h"
#include "store/store.h"
#include "testvfs.h"
#include "util/jsonx.h"

static char dir[256];
static char dbpath[320];
static struct th_app app;
static struct th_error err;
static int saved_stderr = -1;

static int under_valgrind(void)
{
	const char *v = getenv("TH_UNDER_VALGRIND");
	return v != NULL && v[0] != '\0' && strcmp(v, "0") != 0;
}

/* The store logs every failed statement to stderr, which is right for a worker and
 * thousands of lines here: they go to a file in the test's directory instead. */
static void quiet_stderr(void)
{
	char log[400];
	snprintf(log, sizeof log, "%s/stderr.log", dir);
	int fd = open(log, O_WRONLY | O_CREAT | O_APPEND, 0644);
	ck_assert_int_ge(fd, 0);
	fflush(stderr);
	saved_stderr = dup(2);
	dup2(fd, 2);
	close(fd);
}

static void loud_stderr(void)
{
	if (saved_stderr < 0)
		return;
	fflush(stderr);
	dup2(saved_stderr, 2);
	close(saved_stderr);
	saved_stderr = -1;
}

static void make_dir(void)
{
	snprintf(dir, sizeof dir, "/tmp/th-faults-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(dbpath, sizeof dbpath, "%s/th.db", dir);
}

static void remove_dir(void)
{
	char cmd[300];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	ck_assert_int_eq(system(cmd), 0);
}

static void app_open(int sync_full)
{
	struct th_config *cfg = malloc(sizeof *cfg); /* freed by th_app_close */
	ck_assert_ptr_nonnull(cfg);
	ck_assert_int_eq(th_config_defaults(cfg), TH_OK);
	struct th_error e;
	th_error_clear(&e);
	ck_assert_int_eq(th_config_set(cfg, "db", dbpath, &e), TH_OK);
	ck_assert_int_eq(th_config_set(cfg, "commands_dir", "/nonexistent", &e), TH_OK);
	ck_assert_int_eq(th_config_set(cfg, "synchronous", sync_full ? "full" : "normal", &e),
	                 TH_OK);
	th_err rc = th_app_open(&app, cfg, 0, &e);
	ck_assert_msg(rc == TH_OK, "th_app_open: %s", e.msg);
}

/* ---- what the database holds ---------------------------------------------------- */

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
	const unsigned char *b = p;
	for (size_t i = 0; i < n; i++) {
		h ^= b[i];
		h *= 0x100000001b3ULL;
	}
	return h;
}

/* Every row of every table, as a sum of row hashes (so no order is needed): two
 * databases with the same digest hold the same rows. */
static uint64_t digest(sqlite3 *db)
{
	sqlite3_stmt *t = NULL;
	ck_assert_int_eq(sqlite3_prepare_v2(db,
	                                    "SELECT name FROM sqlite_schema WHERE type = 'table' "
	                                    "ORDER BY name",
	                                    -1, &t, NULL),
	                 SQLITE_OK);
	uint64_t sum = 0;
	while (sqlite3_step(t) == SQLITE_ROW) {
		const char *name = (const char *)sqlite3_column_text(t, 0);
		char sql[200];
		snprintf(sql, sizeof sql, "SELECT * FROM \"%s\"", name);
		sqlite3_stmt *s = NULL;
		ck_assert_int_eq(sqlite3_prepare_v2(db, sql, -1, &s, NULL), SQLITE_OK);
		int rc;
		while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
			uint64_t h = fnv(0xcbf29ce484222325ULL, name, strlen(name));
			for (int c = 0; c < sqlite3_column_count(s); c++) {
				unsigned char type = (unsigned char)sqlite3_column_type(s, c);
				h = fnv(h, &type, 1);
				const void *v = sqlite3_column_blob(s, c);
				h = fnv(h, v != NULL ? v : "", (size_t)sqlite3_column_bytes(s, c));
			}
			sum += h;
		}
		ck_assert_int_eq(rc, SQLITE_DONE);
		sqlite3_finalize(s);
	}
	sqlite3_finalize(t);
	return sum;
}

static void assert_integrity(sqlite3 *db, const char *when)
{
	sqlite3_stmt *s = NULL;
	ck_assert_int_eq(sqlite3_prepare_v2(db, "PRAGMA integrity_check", -1, &s, NULL), SQLITE_OK);
	ck_assert_int_eq(sqlite3_step(s), SQLITE_ROW);
	const char *r = (const char *)sqlite3_column_text(s, 0);
	ck_assert_msg(r != NULL && strcmp(r, "ok") == 0, "integrity_check %s: %s", when,
	              r != NULL ? r : "(null)");
	sqlite3_finalize(s);
}

/* The task's state name, "" when the task is absent. */
static void task_state(const char *id, char *out, size_t cap)
{
	sqlite3_stmt *s = NULL;
	ck_assert_int_eq(sqlite3_prepare_v2(th_store_db(app.store),
	                                    "SELECT state FROM tasks WHERE id = ?1", -1, &s, NULL),
	                 SQLITE_OK);
	sqlite3_bind_text(s, 1, id, -1, SQLITE_STATIC);
	snprintf(out, cap, "%s",
	         sqlite3_step(s) == SQLITE_ROW ? (const char *)sqlite3_column_text(s, 0) : "");
	sqlite3_finalize(s);
}

/* ---- requests ------------------------------------------------------------------- */

static char text_buf[40000];

/* Mostly short text; one in eight is large enough for overflow pages. */
static const char *some_text(uint64_t r)
{
	size_t n = r % 8 == 0 ? 6000 + (size_t)(r >> 8) % 30000 : 1 + (size_t)(r >> 8) % 200;
	for (size_t i = 0; i < n; i++)
		text_buf[i] = (char)('a' + (r >> (i % 40)) % 26);
	text_buf[n] = '\0';
	return text_buf;
}

/* Request outcomes: 1 acknowledged, 0 refused with err filled. */
static int req_new(char *id_out, size_t cap, const char *text)
{
	static long n;
	char mid[48];
	snprintf(mid, sizeof mid, "new-%ld", ++n);
	json_object *t = fx_send_text(&app, "alice", NULL, mid, text, &err);
	if (t == NULL)
		return 0;
	snprintf(id_out, cap, "%s", fx_task_id(t));
	json_object_put(t);
	return 1;
}

static int req_follow(const char *id, const char *text)
{
	static long n;
	char mid[48];
	snprintf(mid, sizeof mid, "more-%ld", ++n);
	json_object *t = fx_send_text(&app, "alice", id, mid, text, &err);
	json_object_put(t);
	return t != NULL;
}

static int req_complete(const char *id)
{
	json_object *t = fx_complete(&app, "alice", id, &err);
	json_object_put(t);
	return t != NULL;
}

static int req_cancel(const char *id)
{
	json_object *t = fx_call(&app, "alice", TH_OP_CANCEL_TASK, &err, "{\"id\":\"%s\"}", id);
	json_object_put(t);
	return t != NULL;
}

static int req_purge(void)
{
	int64_t n = 0;
	th_error_clear(&err);
	return th_store_purge(app.store, INT64_MAX, 1, &n, &err) == TH_OK;
}

/* ---- power cuts (STORE-8) ------------------------------------------------------- */

#define CUT_STEPS 24

struct cut_run {
	uint64_t rng;
	char task[CUT_STEPS][64];
	int open[CUT_STEPS];
	int ntask;
	uint64_t snap[CUT_STEPS + 1]; /* digest after the ith acknowledged write; 0: opened */
	long ack_wal[CUT_STEPS + 1];  /* tv_wal_writes() when it was acknowledged */
	int nack;                     /* writes that returned (some after the cut) */
	int inflight;                 /* 1: the cut fell inside the last of them */
};

struct cut_stats {
	long cuts, mid_request, lossless, rolled_back, sectors[3], steps;
};

static uint64_t cut_rnd(struct cut_run *r)
{
	r->rng ^= r->rng << 13;
	r->rng ^= r->rng >> 7;
	r->rng ^= r->rng << 17;
	return r->rng;
}

/* The index of a random task still open, or -1. */
static int open_task(struct cut_run *r, uint64_t x)
{
	for (int i = 0; i < r->ntask; i++) {
		int j = (int)((x + (uint64_t)i) % (uint64_t)r->ntask);
		if (r->open[j])
			return j;
	}
	return -1;
}

/* One step: a request (an acknowledged write: returns 1) or a checkpoint of the kinds
 * th_store_wal_tend runs after responses (returns 0). */
static int cut_step(struct cut_run *r)
{
	uint64_t x = cut_rnd(r);
	int pick = (int)(x % 100), t = open_task(r, x >> 20);
	if (pick < 15) {
		static const int modes[] = {SQLITE_CHECKPOINT_PASSIVE, SQLITE_CHECKPOINT_RESTART,
		                            SQLITE_CHECKPOINT_TRUNCATE};
		(void)sqlite3_wal_checkpoint_v2(th_store_db(app.store), NULL, modes[(x >> 8) % 3],
		                                NULL, NULL);
		return 0;
	}
	int ok;
	if (pick < 45 || t < 0) {
		ok = req_new(r->task[r->ntask], sizeof r->task[0], some_text(x >> 4));
		r->open[r->ntask++] = 1;
	} else if (pick < 75) {
		ok = req_follow(r->task[t], some_text(x >> 4));
	} else if (pick < 85) {
		ok = req_complete(r->task[t]);
		r->open[t] = 0;
	} else if (pick < 95) {
		ok = req_cancel(r->task[t]);
		r->open[t] = 0;
	} else {
		ok = req_purge();
	}
	ck_assert_msg(ok, "request failed with no fault: %s", err.msg);
	return 1;
}

/* Runs the steps until the cut has been taken (at a random write, or after the last
 * step), recording each acknowledged write's digest and WAL position. */
static void cut_drive(struct cut_run *r, long cut_at, struct cut_stats *cs)
{
	r->snap[0] = digest(th_store_db(app.store));
	r->ack_wal[0] = tv_wal_writes();
	tv_cut_arm(cut_at);
	for (int i = 0; i < CUT_STEPS && !tv_cut_taken(); i++) {
		if (!cut_step(r))
			continue;
		cs->steps++;
		r->nack++;
		r->snap[r->nack] = digest(th_store_db(app.store));
		r->ack_wal[r->nack] = tv_wal_writes();
		r->inflight = tv_cut_taken();
	}
	if (!tv_cut_taken())
		tv_cut_now();
	cs->mid_request += r->inflight;
}

/* After the cut: the database opens with the plain store on SQLite's own VFS, is
 * intact, and holds exactly what it held after some acknowledged write k, with k no
 * earlier than the setting promises. Then it takes a new request. */
static void cut_check(struct cut_run *r, int sync_full, long idx, struct cut_stats *cs)
{
	int acked = r->nack - r->inflight;
	int durable = 0;
	while (durable < acked && r->ack_wal[durable + 1] <= tv_cut_wal_synced())
		durable++;
	if (sync_full) /* every commit syncs the WAL before it returns */
		ck_assert_msg(durable == acked,
		              "cut %ld (TH_FAULTS_ONLY=%ld): full: %d of %d writes synced", idx,
		              idx, durable, acked);
	th_app_close(&app);
	long sectors[3];
	tv_cut_apply(sectors);
	tv_uninstall();
	struct th_store *st = NULL;
	struct th_store_opts o = {.path = dbpath};
	th_err rc = th_store_open(&o, &st, &err);
	ck_assert_msg(rc == TH_OK, "cut %ld (TH_FAULTS_ONLY=%ld): reopen after the cut: %s", idx,
	              idx, err.msg);
	assert_integrity(th_store_db(st), "after the cut");
	uint64_t d = digest(th_store_db(st));
	th_store_close(st);
	int k = r->nack;
	while (k >= 0 && r->snap[k] != d)
		k--;
	ck_assert_msg(k >= durable,
	              "cut %ld (TH_FAULTS_ONLY=%ld): after the cut the database is not the state "
	              "after any of "
	              "writes %d..%d (acknowledged %d, synced %d; found %d)",
	              idx, idx, durable, r->nack, acked, durable, k);
	int lossless = sectors[1] == 0 && sectors[2] == 0;
	if (sync_full || lossless) /* nothing lost below SQLite: a process crash */
		ck_assert_msg(k >= acked,
		              "cut %ld (TH_FAULTS_ONLY=%ld): %d of %d acknowledged writes survived",
		              idx, idx, k, acked);
	cs->cuts++;
	cs->lossless += lossless;
	cs->rolled_back += k < acked;
	for (int i = 0; i < 3; i++)
		cs->sectors[i] += sectors[i];
	app_open(sync_full);
	char id[64];
	ck_assert_msg(req_new(id, sizeof id, "after the cut"), "cut %ld (TH_FAULTS_ONLY=%ld): %s",
	              idx, idx, err.msg);
	th_app_close(&app);
}

static void power_cuts(int sync_full)
{
	const char *env = getenv("TH_FAULTS_SEEDS");
	long seeds = env != NULL ? atol(env) : under_valgrind() ? 10 : 100;
	/* TH_FAULTS_ONLY=i repeats the ith cut alone (a failure names its seed). */
	const char *only = getenv("TH_FAULTS_ONLY");
	long first = only != NULL ? atol(only) : 1;
	if (only != NULL)
		seeds = first;
	struct cut_stats cs = {0};
	for (long i = first; i <= seeds; i++) {
		uint64_t seed = (uint64_t)i * 0x9e3779b97f4a7c15ULL + (uint64_t)sync_full;
		tv_install(seed);
		make_dir();
		quiet_stderr();
		app_open(sync_full);
		struct cut_run r = {.rng = seed ^ 0x5bd1e995ULL};
		/* A request writes ~30 times (a WAL frame is two writes): the cut falls
		 * anywhere in the run, or after it. */
		cut_drive(&r, 1 + (long)(cut_rnd(&r) % (CUT_STEPS * 30)), &cs);
		cut_check(&r, sync_full, i, &cs);
		loud_stderr();
		if (only == NULL)
			remove_dir();
	}
	printf("STORE-8 synchronous=%s: %ld cuts (%ld inside a request, %ld lossless), %ld "
	       "requests; %ld lost acknowledged writes that were not yet synced; sectors kept "
	       "%ld, dropped %ld, garbage %ld\n",
	       sync_full ? "full" : "normal", cs.cuts, cs.mid_request, cs.lossless, cs.steps,
	       cs.rolled_back, cs.sectors[0], cs.sectors[1], cs.sectors[2]);
}

START_TEST(test_store8_power_cut_sync_full_keeps_every_acknowledged_write)
{
	power_cuts(1);
}
END_TEST

START_TEST(test_store8_power_cut_sync_normal_keeps_writes_before_last_sync)
{
	power_cuts(0);
}
END_TEST

/* ---- injected I/O errors (STORE-7) ---------------------------------------------- */

enum sweep_op { SW_CREATE, SW_FOLLOW, SW_COMPLETE, SW_CANCEL, SW_PURGE, SW_CHECKPOINT };
static const char *const sweep_names[] = {"SendMessage (new task)",
                                          "SendMessage (follow-up)",
                                          "complete",
                                          "CancelTask",
                                          "purge",
                                          "checkpoint"};
static const char *const kind_names[] = {"write", "sync", "truncate", "lock", "read"};

#define MAX_TABLES 48

struct counts {
	int n;
	long c[MAX_TABLES];
};

static void count_rows(struct counts *c)
{
	sqlite3 *db = th_store_db(app.store);
	sqlite3_stmt *t = NULL;
	ck_assert_int_eq(sqlite3_prepare_v2(db,
	                                    "SELECT name FROM sqlite_schema WHERE type = 'table' "
	                                    "ORDER BY name",
	                                    -1, &t, NULL),
	                 SQLITE_OK);
	c->n = 0;
	while (sqlite3_step(t) == SQLITE_ROW) {
		ck_assert_int_lt(c->n, MAX_TABLES);
		char sql[200];
		snprintf(sql, sizeof sql, "SELECT count(*) FROM \"%s\"", sqlite3_column_text(t, 0));
		sqlite3_stmt *s = NULL;
		ck_assert_int_eq(sqlite3_prepare_v2(db, sql, -1, &s, NULL), SQLITE_OK);
		ck_assert_int_eq(sqlite3_step(s), SQLITE_ROW);
		c->c[c->n++] = (long)sqlite3_column_int64(s, 0);
		sqlite3_finalize(s);
	}
	sqlite3_finalize(t);
}

/* What op needs, made with no fault: a task for a follow-up, complete or cancel, a
 * completed task for purge (the oldest terminal one goes: all have the same rows), a
 * write in the WAL for a checkpoint. */
static void sweep_prepare(enum sweep_op op, char *id, size_t cap)
{
	id[0] = '\0';
	if (op == SW_CREATE)
		return;
	ck_assert_msg(req_new(id, cap, "target"), "preparing: %s", err.msg);
	if (op == SW_PURGE)
		ck_assert_msg(req_complete(id), "preparing: %s", err.msg);
}

static int sweep_run(enum sweep_op op, const char *id)
{
	char made[64];
	switch (op) {
	case SW_CREATE:
		return req_new(made, sizeof made, "made under faults");
	case SW_FOLLOW:
		return req_follow(id, "more under faults");
	case SW_COMPLETE:
		return req_complete(id);
	case SW_CANCEL:
		return req_cancel(id);
	case SW_PURGE:
		return req_purge();
	case SW_CHECKPOINT:
		th_error_clear(&err);
		snprintf(err.msg, sizeof err.msg, "checkpoint failed");
		return sqlite3_wal_checkpoint_v2(th_store_db(app.store), NULL,
		                                 SQLITE_CHECKPOINT_TRUNCATE, NULL,
		                                 NULL) == SQLITE_OK;
	}
	return 0;
}

/* The whole of op's write is there: every table grew by what the fault-free run made
 * it grow, and the target has the state op gives it. */
static int sweep_all_there(enum sweep_op op, const char *id, const struct counts *before,
                           const struct counts *delta)
{
	struct counts now;
	count_rows(&now);
	if (now.n != before->n)
		return 0;
	for (int i = 0; i < now.n; i++)
		if (now.c[i] != before->c[i] + delta->c[i])
			return 0;
	char state[64];
	task_state(id, state, sizeof state);
	if (op == SW_COMPLETE)
		return strcmp(state, "TASK_STATE_COMPLETED") == 0;
	if (op == SW_CANCEL)
		return strcmp(state, "TASK_STATE_CANCELED") == 0;
	return 1;
}

/* A second connection whose commit makes the store's connection read the database
 * afresh (its page cache is dropped when another connection committed), as a worker
 * does after other workers wrote; NULL: the cache stays warm. Opened and closed
 * (sqlite3_close) by sweep. */
static sqlite3 *other_db;

static void invalidate_cache(void)
{
	if (other_db == NULL)
		return;
	/* The same value again still writes page 1: a commit, with no row changed. */
	char sql[64];
	snprintf(sql, sizeof sql, "PRAGMA user_version = %d", th_store_schema_version());
	ck_assert_int_eq(sqlite3_exec(other_db, sql, NULL, NULL, NULL), SQLITE_OK);
}

/* "table +n" for each table whose row count changed since before, for messages. */
static void describe_change(const struct counts *before, char *out, size_t cap)
{
	struct counts now;
	count_rows(&now);
	sqlite3_stmt *t = NULL;
	ck_assert_int_eq(sqlite3_prepare_v2(th_store_db(app.store),
	                                    "SELECT name FROM sqlite_schema WHERE type = 'table' "
	                                    "ORDER BY name",
	                                    -1, &t, NULL),
	                 SQLITE_OK);
	size_t len = 0;
	out[0] = '\0';
	for (int i = 0; sqlite3_step(t) == SQLITE_ROW && i < now.n && i < before->n; i++)
		if (now.c[i] != before->c[i] && len < cap)
			len += (size_t)snprintf(out + len, cap - len, " %s %+ld",
			                        sqlite3_column_text(t, 0), now.c[i] - before->c[i]);
	sqlite3_finalize(t);
	if (len == 0)
		snprintf(out, cap, " no table's row count changed");
}

struct sweep_stats {
	long runs, refused, acked, refused_after_commit, not_hit;
};

/* One request with the nth call of kind failing with rc: it is refused with a message
 * and stores nothing, or stores all of its write; the database stays intact; with the
 * fault gone the next request succeeds. */
static void sweep_one(enum sweep_op op, enum tv_kind kind, long nth, int rc, int persistent,
                      const struct counts *delta, struct sweep_stats *ss)
{
	char id[64], what[160];
	snprintf(what, sizeof what, "%s, %s call %ld failing with %d (%s)", sweep_names[op],
	         kind_names[kind], nth, rc, persistent ? "persistent" : "transient");
	sweep_prepare(op, id, sizeof id);
	struct counts before;
	count_rows(&before);
	uint64_t d0 = digest(th_store_db(app.store));
	invalidate_cache();
	tv_fault(kind, nth, rc, persistent);
	int ok = sweep_run(op, id);
	ss->not_hit += tv_fault_hits() == 0;
	tv_fault_clear();
	ss->runs++;
	assert_integrity(th_store_db(app.store), what);
	if (ok) {
		ss->acked++;
		char change[300] = "";
		int all = sweep_all_there(op, id, &before, delta);
		if (!all)
			describe_change(&before, change, sizeof change);
		ck_assert_msg(all, "%s: acknowledged, not all stored:%s", what, change);
	} else {
		ss->refused++;
		ck_assert_msg(err.msg[0] != '\0', "%s: refused with no message", what);
		int none = digest(th_store_db(app.store)) == d0;
		int all = !none && sweep_all_there(op, id, &before, delta);
		char change[300] = "";
		if (!none && !all)
			describe_change(&before, change, sizeof change);
		ck_assert_msg(none || all, "%s: refused (%s) and half stored:%s", what, err.msg,
		              change);
		ss->refused_after_commit += all;
	}
	char next[64];
	ck_assert_msg(req_new(next, sizeof next, "after the fault"), "%s: the next request: %s",
	              what, err.msg);
}

static int io_code(enum tv_kind k)
{
	static const int codes[] = {SQLITE_IOERR_WRITE, SQLITE_IOERR_FSYNC, SQLITE_IOERR_TRUNCATE,
	                            SQLITE_IOERR_LOCK, SQLITE_IOERR_READ};
	return codes[k];
}

/* For every kind in mask and every N up to the calls a fault-free op makes: the Nth
 * call fails with SQLITE_FULL (ENOSPC; writes, syncs and truncates) and with the
 * kind's SQLITE_IOERR_* (EIO), once or from then on (alternating with N). */
static void sweep(enum sweep_op op, int sync_full, int cold, unsigned mask)
{
	tv_install(1);
	make_dir();
	quiet_stderr();
	app_open(sync_full);
	if (cold)
		ck_assert_int_eq(sqlite3_open_v2(dbpath, &other_db, SQLITE_OPEN_READWRITE, NULL),
		                 SQLITE_OK);
	char id[64];
	sweep_prepare(op, id, sizeof id);
	struct counts c0, delta;
	count_rows(&c0);
	invalidate_cache();
	tv_count_reset();
	ck_assert_msg(sweep_run(op, id), "%s with no fault: %s", sweep_names[op], err.msg);
	long calls[TV_KINDS];
	for (int k = 0; k < TV_KINDS; k++)
		calls[k] = tv_calls((enum tv_kind)k);
	count_rows(&delta);
	for (int i = 0; i < delta.n; i++)
		delta.c[i] -= c0.c[i];
	long stride = under_valgrind() ? 8 : 1;
	struct sweep_stats ss = {0};
	for (int k = 0; k < TV_KINDS; k++) {
		if (!(mask & (1u << k)))
			continue;
		for (long n = 1; n <= calls[k]; n += stride)
			for (int e = 0; e < 2; e++) {
				if (e == 0 && (k == TV_LOCK || k == TV_READ))
					continue; /* no ENOSPC from a lock or a read */
				sweep_one(op, (enum tv_kind)k, n, e == 0 ? SQLITE_FULL : io_code(k),
				          (int)((n + e) % 2), &delta, &ss);
			}
	}
	sqlite3_close(other_db);
	other_db = NULL;
	th_app_close(&app);
	loud_stderr();
	remove_dir();
	tv_uninstall();
	printf("STORE-7 %s (synchronous=%s%s): calls write %ld sync %ld truncate %ld lock %ld "
	       "read %ld; %ld faults: %ld refused (%ld of them after the commit), %ld "
	       "acknowledged, %ld not reached\n",
	       sweep_names[op], sync_full ? "full" : "normal", cold ? ", cold cache" : "",
	       calls[TV_WRITE], calls[TV_SYNC], calls[TV_TRUNCATE], calls[TV_LOCK], calls[TV_READ],
	       ss.runs, ss.refused, ss.refused_after_commit, ss.acked, ss.not_hit);
}

#define ALL_KINDS ((1u << TV_KINDS) - 1)

START_TEST(test_store7_io_errors_in_send_message_creating_a_task)
{
	sweep(SW_CREATE, 0, 0, ALL_KINDS);
}
END_TEST

START_TEST(test_store7_io_errors_in_follow_up_send_message)
{
	sweep(SW_FOLLOW, 0, 0, ALL_KINDS);
}
END_TEST

START_TEST(test_store7_io_errors_in_complete)
{
	sweep(SW_COMPLETE, 0, 0, ALL_KINDS);
}
END_TEST

START_TEST(test_store7_io_errors_in_cancel_task)
{
	sweep(SW_CANCEL, 0, 0, ALL_KINDS);
}
END_TEST

START_TEST(test_store7_io_errors_in_purge)
{
	sweep(SW_PURGE, 0, 0, ALL_KINDS);
}
END_TEST

/* After another connection committed, the request reads its pages from the files:
 * read faults land inside the request, before and inside its write transaction. */
START_TEST(test_store7_io_errors_in_follow_up_after_another_writer)
{
	sweep(SW_FOLLOW, 0, 1, ALL_KINDS);
}
END_TEST

START_TEST(test_store7_io_errors_in_cancel_after_another_writer)
{
	sweep(SW_CANCEL, 0, 1, ALL_KINDS);
}
END_TEST

/* synchronous = full syncs the WAL in every commit: its sync calls are swept too. */
START_TEST(test_store7_io_errors_in_commit_sync_full)
{
	sweep(SW_CREATE, 1, 0, ALL_KINDS);
}
END_TEST

/* The checkpoint th_store_wal_tend runs after a response: syncs, writes to the database
 * file and the WAL's truncation. */
START_TEST(test_store7_io_errors_in_wal_checkpoint)
{
	sweep(SW_CHECKPOINT, 0, 0, ALL_KINDS);
}
END_TEST

static Suite *faults_suite(void)
{
	Suite *s = suite_create("faults");
	TCase *tc = tcase_create("power_cut");
	tcase_set_timeout(tc, 600);
	tcase_add_test(tc, test_store8_power_cut_sync_full_keeps_every_acknowledged_write);
	tcase_add_test(tc, test_store8_power_cut_sync_normal_keeps_writes_before_last_sync);
	suite_add_tcase(s, tc);
	tc = tcase_create("io_errors");
	tcase_set_timeout(tc, 600);
	tcase_add_test(tc, test_store7_io_errors_in_send_message_creating_a_task);
	tcase_add_test(tc, test_store7_io_errors_in_follow_up_send_message);
	tcase_add_test(tc, test_store7_io_errors_in_complete);
	tcase_add_test(tc, test_store7_io_errors_in_cancel_task);
	tcase_add_test(tc, test_store7_io_errors_in_purge);
	tcase_add_test(tc, test_store7_io_errors_in_follow_up_after_another_writer);
	tcase_add_test(tc, test_store7_io_errors_in_cancel_after_another_writer);
	tcase_add_test(tc, test_store7_io_errors_in_commit_sync_full);
	tcase_add_test(tc, test_store7_io_errors_in_wal_checkpoint);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(faults_suite());
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
