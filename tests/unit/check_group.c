/* SPDX-License-Identifier: Apache-2.0 */
/* check_group.c — group commit (store/group.c, decision-023, decision-030) against a
 * temp-file database, and with TH_TEST_PG a PostgreSQL one (pg_fixture.h, STORE-6): the
 * th_store_write functions of threads that share one writer run back to back on one thread and
 * commit together, and each keeps the promises of a transaction of its own (TURN-4: a write that
 * returns OK is in the database; a refused part or a failed batch stores nothing). */
#include <check.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "text_fixture.h"
#include "pg_fixture.h"
#include "store/store.h"

static char tmpdir[256];
static char dbpath[320];
static char pgdb[64]; /* the test's PostgreSQL database, "" on SQLite */

static void setup(void)
{
	snprintf(tmpdir, sizeof tmpdir, "%s/th-group-XXXXXX",
	         getenv("TMPDIR") != NULL ? getenv("TMPDIR") : "/tmp");
	ck_assert_ptr_nonnull(mkdtemp(tmpdir));
	pgdb[0] = '\0';
	if (th_test_pg_base() != NULL)
		th_test_pg_create(tmpdir, pgdb, sizeof pgdb, dbpath, sizeof dbpath);
	else
		snprintf(dbpath, sizeof dbpath, "%s/th.db", tmpdir);
}

static void teardown(void)
{
	if (pgdb[0] != '\0')
		th_test_pg_drop(tmpdir, pgdb);
	char cmd[400];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", tmpdir);
}

static const struct th_store_opts opts = {.path = dbpath, .busy_timeout_ms = 5000};

static struct th_store *open_store(void)
{
	struct th_store *st = NULL;
	struct th_error e;
	th_error_clear(&e);
	th_err err = th_store_open(&opts, &st, &e);
	ck_assert_msg(err == TH_OK, "open: %s", e.msg);
	return st;
}

static struct th_store_group *open_group(void)
{
	struct th_store_group *g = NULL;
	struct th_error e;
	th_error_clear(&e);
	th_err err = th_store_group_open(&opts, &g, &e);
	ck_assert_msg(err == TH_OK, "group: %s", e.msg);
	return g;
}

static th_err insert_task(struct th_store *st, const char *id, struct th_error *e)
{
	const struct th_task_in r = {.id = id,
	                             .context_id = "ctx-1",
	                             .state = 2,
	                             .status_ms = 1000,
	                             .name = "n",
	                             .goal = "g",
	                             .ext_json = "{}",
	                             .created_by = "alice"};
	return th_store_task_insert(st, &r, e);
}

/* Whether a fresh connection (not the group's) finds task id. */
static int task_stored(const char *id)
{
	struct th_store *st = open_store();
	int exists = 0;
	struct th_task_row r;
	struct th_error e;
	if (th_store_task_get(st, id, &r, &e) == TH_OK) {
		exists = 1;
		th_task_row_free(&r);
	}
	th_store_close(st);
	return exists;
}

static void wait_for_waiting(struct th_store_group *g, int n)
{
	for (int i = 0; i < 5000; i++) {
		struct th_store_group_stats s;
		th_store_group_stats(g, &s);
		if (s.waiting == n)
			return;
		usleep(1000);
	}
	ck_abort_msg("never %d members waiting", n);
}

/* g committed exactly one batch, of parts parts. */
static void assert_one_batch(struct th_store_group *g, int64_t parts)
{
	struct th_store_group_stats s;
	th_store_group_stats(g, &s);
	ck_assert_int_eq(s.batches, 1);
	ck_assert_int_eq(s.parts, parts);
}

/* ---- a part: insert a task, maybe refuse -------------------------------------------- */

struct job_arg {
	const char *id;     /* task to insert */
	int fail;           /* insert, then report failure: the part is undone */
	int orphan;         /* insert a participant of a task that does not exist */
	int defer_fk;       /* foreign keys checked at COMMIT, for the whole batch */
	volatile int *hold; /* set: wait inside the part until it is 0 */
	volatile int in;    /* the part is running (for hold) */
	const char *unseen; /* a task another connection must not see while the part runs */
	int seen;           /* it did see it */
	int append;         /* after the insert, a message m1 on the task, looked up again */
	const char *probe;  /* a task whose message m1 this part looks up (into probed) */
	int probed;         /* th_store_message_exists(probe, "m1") */
	pthread_t ran_on;   /* the thread fn ran on */
	int64_t now_in;     /* th_store_now as the part began */
	int64_t now_out;    /* th_store_now as it ended (after any hold) */
	pthread_t owner;    /* the thread that called th_store_write */
	th_err result;      /* of th_store_write */
	struct th_store *st;
	char msg[TH_ERRMSG_MAX];
};

static th_err job_part(struct th_store *st, void *arg, struct th_error *e)
{
	struct job_arg *a = arg;
	a->ran_on = pthread_self();
	a->now_in = th_store_now(st);
	th_err rc = insert_task(st, a->id, e);
	if (rc == TH_OK && a->defer_fk)
		rc = sqlite3_exec(th_store_db(st), "PRAGMA defer_foreign_keys = ON", NULL, NULL,
		                  NULL) == SQLITE_OK
		         ? TH_OK
		         : th_error_set(e, TH_EINTERNAL, "defer_foreign_keys");
	/* A row the store itself would not write (th_store_participant_put finds no task
	 * and stores nothing): with foreign keys deferred, only the COMMIT refuses it. */
	if (rc == TH_OK && a->orphan)
		rc = sqlite3_exec(th_store_db(st),
		                  "INSERT INTO participants (task_id, participant_id, kind, role, "
		                  "added_ms, status_ms, rowid) "
		                  "VALUES ('no-such-task', 'bob', 'human', 'watcher', 0, 0, 1)",
		                  NULL, NULL, NULL) == SQLITE_OK
		         ? TH_OK
		         : th_error_set(e, TH_EINTERNAL, "orphan participant");
	if (rc == TH_OK && a->unseen != NULL)
		a->seen = task_stored(a->unseen);
	if (rc == TH_OK && a->append) {
		rc = th_test_message_append(st, a->id, "m1", "ROLE_USER", "bob",
		                            "{\"messageId\":\"m1\",\"role\":\"ROLE_USER\","
		                            "\"parts\":[{\"text\":\"hi\"}]}",
		                            e);
		if (rc == TH_OK && !th_store_message_exists(st, a->id, "m1"))
			rc = th_error_set(e, TH_EINTERNAL, "m1 not found after its append");
	}
	if (rc == TH_OK && a->probe != NULL)
		a->probed = th_store_message_exists(st, a->probe, "m1");
	a->in = 1;
	while (a->hold != NULL && *a->hold)
		usleep(1000);
	a->now_out = th_store_now(st);
	if (rc == TH_OK && a->fail)
		rc = th_error_set(e, TH_EINVAL, "refused on purpose");
	return rc;
}

static void *run_job(void *arg)
{
	struct job_arg *a = arg;
	struct th_error e;
	th_error_clear(&e);
	a->owner = pthread_self();
	a->result = th_store_write(a->st, job_part, a, &e);
	snprintf(a->msg, sizeof a->msg, "%s", e.msg);
	return NULL;
}

/* ---- many threads, many transactions --------------------------------------- */

#define THREADS 6
#define PER_THREAD 40

struct writer {
	struct th_store_group *g;
	int n;
	int refuse;      /* refuse every fifth part */
	int failures;    /* writes that did not commit although they should have */
	int not_visible; /* a broken promise: a write that returned OK but a fresh read did
	                    not find, or a refused one that is stored */
};

static void *write_many(void *arg)
{
	struct writer *w = arg;
	struct th_store *st = open_store();
	th_store_join(st, w->g);
	for (int i = 0; i < PER_THREAD; i++) {
		char id[64];
		snprintf(id, sizeof id, "t-%d-%d", w->n, i);
		struct th_error e;
		th_error_clear(&e);
		int refused = w->refuse && i % 5 == 4;
		struct job_arg a = {.id = id, .fail = refused};
		th_err rc = th_store_write(st, job_part, &a, &e);
		if (refused) {
			if (rc == TH_OK || task_stored(id))
				w->not_visible++;
		} else if (rc != TH_OK) {
			w->failures++;
		} else if (!task_stored(id)) {
			w->not_visible++; /* TURN-4: answered only once stored */
		}
	}
	th_store_close(st);
	return NULL;
}

/* THREADS threads write PER_THREAD tasks each on g; none may see a write fail or a
 * promise broken. */
static void run_writers(struct th_store_group *g, int refuse)
{
	pthread_t t[THREADS];
	struct writer w[THREADS];
	for (int i = 0; i < THREADS; i++) {
		w[i] = (struct writer){.g = g, .n = i, .refuse = refuse};
		ck_assert_int_eq(pthread_create(&t[i], NULL, write_many, &w[i]), 0);
	}
	for (int i = 0; i < THREADS; i++) {
		pthread_join(t[i], NULL);
		ck_assert_int_eq(w[i].failures, 0);
		ck_assert_int_eq(w[i].not_visible, 0);
	}
}

START_TEST(test_turn4_group_commit_every_part_is_stored_when_commit_returns)
{
	th_store_close(open_store()); /* creates and migrates the database */
	struct th_store_group *g = open_group();
	run_writers(g, 0);
	struct th_store_group_stats s;
	th_store_group_stats(g, &s);
	ck_assert_int_eq(s.parts, THREADS * PER_THREAD);
	ck_assert_int_le(s.batches, s.parts);
	for (int i = 0; i < THREADS; i++)
		for (int k = 0; k < PER_THREAD; k += 13) {
			char id[64];
			snprintf(id, sizeof id, "t-%d-%d", i, k);
			ck_assert_msg(task_stored(id), "%s missing", id);
		}
	th_store_group_close(g);
}
END_TEST

START_TEST(test_turn4_group_refused_parts_store_nothing_among_many)
{
	th_store_close(open_store());
	struct th_store_group *g = open_group();
	run_writers(g, 1);
	struct th_store_group_stats s;
	th_store_group_stats(g, &s);
	ck_assert_int_eq(s.parts, THREADS * (PER_THREAD - PER_THREAD / 5));
	ck_assert_int_eq(s.waiting, 0);
	th_store_group_close(g);
}
END_TEST

/* ---- one batch, step by step ------------------------------------------------- */

/* Part a (on its own thread) holds the writer until three more parts are queued; when
 * it lets go, its thread runs those three back to back in a's batch. */
static void run_jobs(struct th_store_group *g, struct job_arg *a, struct job_arg j[3])
{
	volatile int hold = 1;
	a->hold = &hold;
	a->st = open_store();
	th_store_join(a->st, g);
	pthread_t ta, t[3];
	ck_assert_int_eq(pthread_create(&ta, NULL, run_job, a), 0);
	for (int i = 0; i < 5000 && !a->in; i++)
		usleep(1000);
	ck_assert_msg(a->in, "part a never ran");
	for (int i = 0; i < 3; i++) {
		j[i].st = open_store();
		th_store_join(j[i].st, g);
		ck_assert_int_eq(pthread_create(&t[i], NULL, run_job, &j[i]), 0);
		wait_for_waiting(g, i + 1);
	}
	hold = 0;
	pthread_join(ta, NULL);
	for (int i = 0; i < 3; i++) {
		pthread_join(t[i], NULL);
		th_store_close(j[i].st);
	}
	th_store_close(a->st);
}

START_TEST(test_turn4_group_write_parts_run_back_to_back_in_one_batch)
{
	th_store_close(open_store());
	struct th_store_group *g = open_group();
	struct job_arg a = {.id = "a"};
	struct job_arg j[3] = {{.id = "b"}, {.id = "c", .fail = 1}, {.id = "d"}};
	run_jobs(g, &a, j);
	ck_assert_msg(a.result == TH_OK, "a: %s", a.msg);
	ck_assert_msg(j[0].result == TH_OK, "b: %s", j[0].msg);
	ck_assert_int_eq(j[1].result, TH_EINVAL);
	ck_assert_str_eq(j[1].msg, "refused on purpose");
	ck_assert_msg(j[2].result == TH_OK, "d: %s", j[2].msg);
	ck_assert(task_stored("a") && task_stored("b") && task_stored("d"));
	ck_assert(!task_stored("c"));
	/* a's thread ran every queued part, none on its owner's thread. */
	for (int i = 0; i < 3; i++) {
		ck_assert(pthread_equal(j[i].ran_on, a.owner));
		ck_assert(!pthread_equal(j[i].ran_on, j[i].owner));
	}
	/* STREAM-5 (decision-080): each part has one time, held while it waited, and a part
	 * run after another in the batch has a time no earlier than the one before. */
	ck_assert_int_eq(a.now_out, a.now_in);
	ck_assert_int_ge(j[0].now_in, a.now_in);
	for (int i = 0; i < 3; i++) {
		ck_assert_int_eq(j[i].now_out, j[i].now_in);
		ck_assert_int_ge(j[i].now_in, i > 0 ? j[i - 1].now_in : a.now_in);
	}
	assert_one_batch(g, 3);
	th_store_group_close(g);
}
END_TEST

/* SCALE-1 (decision-060): on PostgreSQL a write transaction answers reads from what it
 * wrote; a part refused and rolled back to its savepoint must leave nothing of that
 * behind for the next part of the same batch (here: a task and its message that no
 * longer exist). On SQLite the same holds trivially. */
START_TEST(test_scale1_group_refused_part_leaves_nothing_known)
{
	th_store_close(open_store());
	struct th_store_group *g = open_group();
	struct job_arg a = {.id = "a"};
	struct job_arg j[3] = {
	    {.id = "ghost", .append = 1, .fail = 1}, {.id = "b", .probe = "ghost"}, {.id = "c"}};
	run_jobs(g, &a, j);
	ck_assert_int_eq(j[0].result, TH_EINVAL);
	ck_assert_msg(j[1].result == TH_OK, "b: %s", j[1].msg);
	ck_assert_msg(!j[1].probed, "the refused part's message was still known");
	ck_assert(task_stored("b") && !task_stored("ghost"));
	assert_one_batch(g, 3);
	th_store_group_close(g);
}
END_TEST

/* The batch's COMMIT fails (a deferred foreign key): every part in it is told, and
 * nothing of it is stored; the writer is usable again. */
START_TEST(test_turn4_group_write_failed_commit_fails_every_part)
{
	th_store_close(open_store());
	struct th_store_group *g = open_group();
	struct job_arg a = {.id = "a", .defer_fk = 1};
	struct job_arg j[3] = {{.id = "b"}, {.id = "c"}, {.id = "d", .orphan = 1}};
	run_jobs(g, &a, j);
	ck_assert_msg(a.result != TH_OK, "a was told it committed");
	for (int i = 0; i < 3; i++)
		ck_assert_msg(j[i].result != TH_OK, "part %d was told it committed", i);
	ck_assert(!task_stored("a") && !task_stored("b") && !task_stored("c") && !task_stored("d"));
	struct job_arg again = {.id = "e"};
	again.st = open_store();
	th_store_join(again.st, g);
	run_job(&again);
	ck_assert_msg(again.result == TH_OK, "%s", again.msg);
	ck_assert(task_stored("e"));
	th_store_close(again.st);
	th_store_group_close(g);
}
END_TEST

/* A read outside the part stays on its store's own connection: another connection does
 * not see a part before its batch committed. */
START_TEST(test_turn4_group_reads_see_no_uncommitted_part)
{
	th_store_close(open_store());
	struct th_store_group *g = open_group();
	struct job_arg a = {.id = "a", .unseen = "a"};
	a.st = open_store();
	th_store_join(a.st, g);
	run_job(&a);
	ck_assert_msg(a.result == TH_OK, "%s", a.msg);
	ck_assert_msg(!a.seen, "another connection saw the part before its commit");
	ck_assert(task_stored("a"));
	th_store_close(a.st);
	th_store_group_close(g);
}
END_TEST

/* ---- PostgreSQL: per-task locks (SCALE-1, STREAM-3, TURN-4, decision-051) ----------- */

/* psql's answer to sql on the test's database, as an integer. */
static int64_t pg_int(const char *sql)
{
	char out[256];
	ck_assert_msg(th_test_psql(tmpdir, pgdb, sql, out, sizeof out) == 0, "%s: %s", sql, out);
	return strcmp(out, "t") == 0 ? 1 : strcmp(out, "f") == 0 ? 0 : strtoll(out, NULL, 10);
}

/* Waits (up to 10 s) until sql answers want; fails the test otherwise. */
static void pg_wait_for(const char *sql, int64_t want, const char *what)
{
	int64_t got = -1;
	for (int i = 0; i < 200; i++) {
		if ((got = pg_int(sql)) == want)
			return;
		usleep(50000);
	}
	ck_abort_msg("%s: never %lld (last %lld)", what, (long long)want, (long long)got);
}

/* The task locks (kind "tHar", src/store/pg.c) granted on the test's database, by
 * distinct session, and those asked for but not granted. */
#define TASK_LOCKS                                                                                 \
	"SELECT count(DISTINCT l.pid) FROM pg_locks l JOIN pg_database d ON d.oid = l.database "   \
	"WHERE d.datname = current_database() AND l.locktype = 'advisory' "                        \
	"AND l.classid = 1950900594 AND l.objsubid = 2 AND l.granted"
#define TASK_LOCK_WAITS                                                                            \
	"SELECT count(*) FROM pg_locks l JOIN pg_database d ON d.oid = l.database "                \
	"WHERE d.datname = current_database() AND l.locktype = 'advisory' "                        \
	"AND l.classid = 1950900594 AND NOT l.granted"

/* How many sessions hold task id's lock. */
static int64_t task_lock_holders(const char *id)
{
	char sql[600];
	snprintf(sql, sizeof sql,
	         "SELECT count(*) FROM pg_locks l JOIN pg_database d ON d.oid = l.database "
	         "WHERE d.datname = current_database() AND l.locktype = 'advisory' "
	         "AND l.classid = 1950900594 AND l.granted "
	         "AND l.objid::bigint = (hashtext('%s')::bigint + 4294967296) %% 4294967296",
	         id);
	return pg_int(sql);
}

static void begin_ok(struct th_store *st)
{
	struct th_error e;
	th_error_clear(&e);
	th_err rc = th_store_begin(st, &e);
	ck_assert_msg(rc == TH_OK, "begin: %s %s", th_err_name(rc), e.msg);
}

static void commit_ok(struct th_store *st)
{
	struct th_error e;
	th_error_clear(&e);
	th_err rc = th_store_commit(st, &e);
	ck_assert_msg(rc == TH_OK, "commit: %s %s", th_err_name(rc), e.msg);
}

static int64_t append_ok(struct th_store *st, const char *task, const char *json)
{
	struct th_error e;
	th_error_clear(&e);
	int64_t seq = 0;
	th_err rc = th_test_event_append(st, task, "status", TH_ENDS_NONE, json, &seq, &e);
	ck_assert_msg(rc == TH_OK, "append to %s: %s %s", task, th_err_name(rc), e.msg);
	return seq;
}

static void make_tasks(const char *const *ids, size_t n)
{
	struct th_store *st = open_store();
	struct th_error e;
	begin_ok(st);
	for (size_t i = 0; i < n; i++)
		ck_assert_msg(insert_task(st, ids[i], &e) == TH_OK, "insert %s: %s", ids[i], e.msg);
	commit_ok(st);
	th_store_close(st);
}

/* Under one lock for every write (the design before decision-051) the second BEGIN
 * waits for the first transaction and gives up after busy_timeout_ms: the overlap is
 * proved by what PostgreSQL shows, both sessions holding their task's lock at once. */
START_TEST(test_scale1_pg_writes_to_different_tasks_hold_their_locks_at_once)
{
	static const char *const ids[] = {"ta", "tb"};
	make_tasks(ids, 2);
	struct th_store *a = open_store(), *b = open_store();
	begin_ok(a);
	ck_assert_int_eq(append_ok(a, "ta", "{\"w\":\"a\"}"), 1);
	begin_ok(b);
	ck_assert_int_eq(append_ok(b, "tb", "{\"w\":\"b\"}"), 1);
	/* Both transactions are open and hold their task's lock, in two sessions. */
	ck_assert_int_eq(pg_int(TASK_LOCKS), 2);
	ck_assert_int_eq(task_lock_holders("ta"), 1);
	ck_assert_int_eq(task_lock_holders("tb"), 1);
	ck_assert_int_eq(pg_int(TASK_LOCK_WAITS), 0);
	commit_ok(b);
	commit_ok(a);
	ck_assert_int_eq(pg_int(TASK_LOCKS), 0); /* they end with their transactions */
	ck_assert_int_eq(pg_int("SELECT count(*) FROM events"), 2);
	th_store_close(a);
	th_store_close(b);
}
END_TEST

struct append_arg {
	struct th_store *st;
	const char *tasks[2]; /* appended to in this order (tasks[1] may be NULL) */
	volatile int *hold;   /* set: the part waits after its first append until 0 */
	volatile int in;      /* the part made its first append */
	int64_t seq[2];
	th_err result;
	char msg[TH_ERRMSG_MAX];
};

static th_err append_part(struct th_store *st, void *arg, struct th_error *e)
{
	struct append_arg *a = arg;
	for (int k = 0; k < 2 && a->tasks[k] != NULL; k++) {
		th_err rc = th_test_event_append(st, a->tasks[k], "status", TH_ENDS_NONE,
		                                 "{\"part\":1}", &a->seq[k], e);
		if (rc != TH_OK)
			return rc;
		a->in = 1;
		while (k == 0 && a->hold != NULL && *a->hold)
			usleep(1000);
	}
	return TH_OK;
}

static void *append_thread(void *arg)
{
	struct append_arg *a = arg;
	struct th_error e;
	th_error_clear(&e);
	a->result = th_store_write(a->st, append_part, a, &e);
	snprintf(a->msg, sizeof a->msg, "%s", e.msg);
	return NULL;
}

/* STREAM-3 on several hosts: a second writer of the same task waits for the first
 * one's lock (seen waiting in pg_locks, not timed) and numbers its event after the
 * first one's, never beside it. */
START_TEST(test_stream3_scale1_pg_same_task_waits_for_its_lock_then_numbers_next)
{
	static const char *const ids[] = {"shared"};
	make_tasks(ids, 1);
	struct th_store *a = open_store();
	struct append_arg b = {.st = open_store(), .tasks = {"shared", NULL}};
	begin_ok(a);
	ck_assert_int_eq(append_ok(a, "shared", "{\"w\":\"a\"}"), 1);
	pthread_t t;
	ck_assert_int_eq(pthread_create(&t, NULL, append_thread, &b), 0);
	pg_wait_for(TASK_LOCK_WAITS, 1, "the second writer waiting for the task's lock");
	ck_assert_int_eq(pg_int("SELECT count(*) FROM events"), 0); /* nothing interleaved */
	ck_assert_int_eq(append_ok(a, "shared", "{\"w\":\"a\"}"), 2);
	commit_ok(a);
	pthread_join(t, NULL);
	ck_assert_msg(b.result == TH_OK, "%s", b.msg);
	ck_assert_int_eq(b.seq[0], 3);
	ck_assert_int_eq(pg_int("SELECT count(DISTINCT seq) FROM events WHERE task_id = 'shared' "
	                        "AND seq BETWEEN 1 AND 3"),
	                 3);
	th_store_close(b.st);
	th_store_close(a);
}
END_TEST

/* Group commit across hosts (issue 29 item 3): a batch whose next part needs a task
 * another host holds commits its earlier parts and waits holding nothing else. Here
 * host A's batch holds s1 (part 1) and its part 2 needs s2, which host B holds; B then
 * asks for s1. Had the batch waited for s2 still holding s1, the two would deadlock
 * (PostgreSQL ends one of them with SQLSTATE 40P01): every write here must succeed. */
START_TEST(test_scale1_pg_batch_waits_holding_no_other_parts_locks)
{
	static const char *const ids[] = {"s1", "s2"};
	make_tasks(ids, 2);
	struct th_store_group *g = open_group();
	struct th_store *other = open_store();
	volatile int hold = 1;
	struct append_arg p1 = {.st = open_store(), .tasks = {"s1", NULL}, .hold = &hold};
	struct append_arg p2 = {.st = open_store(), .tasks = {"s2", NULL}};
	th_store_join(p1.st, g);
	th_store_join(p2.st, g);
	begin_ok(other);
	ck_assert_int_eq(append_ok(other, "s2", "{\"host\":\"b\"}"), 1);
	pthread_t t1, t2;
	ck_assert_int_eq(pthread_create(&t1, NULL, append_thread, &p1), 0);
	for (int i = 0; i < 5000 && !p1.in; i++)
		usleep(1000);
	ck_assert_msg(p1.in, "part 1 never ran");
	ck_assert_int_eq(pthread_create(&t2, NULL, append_thread, &p2), 0);
	wait_for_waiting(g, 1);
	hold = 0;
	/* Part 2 waits for s2 in a transaction of its own: part 1 is committed (another
	 * session sees it) and s1 is free. Part 1's own caller still waits: it is the
	 * thread running the batch, now part 2. */
	pg_wait_for(TASK_LOCK_WAITS, 1, "part 2 waiting for s2");
	ck_assert_int_eq(pg_int("SELECT count(*) FROM events WHERE task_id = 's1'"), 1);
	ck_assert_int_eq(task_lock_holders("s1"), 0);
	/* Host B takes s1 now: free, not held by a waiting batch. */
	ck_assert_int_eq(append_ok(other, "s1", "{\"host\":\"b\"}"), 2);
	commit_ok(other);
	pthread_join(t1, NULL);
	ck_assert_msg(p1.result == TH_OK, "part 1: %s", p1.msg);
	pthread_join(t2, NULL);
	ck_assert_msg(p2.result == TH_OK, "part 2: %s", p2.msg);
	ck_assert_int_eq(p2.seq[0], 2);
	struct th_store_group_stats s;
	th_store_group_stats(g, &s);
	ck_assert_int_eq(s.splits, 1);
	ck_assert_int_eq(s.parts, 2);
	ck_assert_int_eq(pg_int("SELECT count(*) FROM events"), 4);
	th_store_close(p1.st);
	th_store_close(p2.st);
	th_store_close(other);
	th_store_group_close(g);
}
END_TEST

/* The per-participant task count (ListTasks' total) is no row every new task of a
 * participant waits for (migration 012): two hosts each add alice to a task of their
 * own in transactions open at once, and the count is right after both commit. */
START_TEST(test_scale1_pg_one_participants_new_tasks_do_not_wait_for_each_other)
{
	static const char *const ids[] = {"ca", "cb", "cc"};
	make_tasks(ids, 3);
	const struct th_participant_in alice = {"alice", "human", "reporter", ""};
	struct th_store *a = open_store(), *b = open_store();
	struct th_error e;
	begin_ok(a);
	ck_assert_msg(th_store_participant_put(a, "ca", &alice, &e) == TH_OK, "%s", e.msg);
	begin_ok(b);
	/* With one counter row per participant this waited for a's commit. */
	ck_assert_msg(th_store_participant_put(b, "cb", &alice, &e) == TH_OK, "%s", e.msg);
	ck_assert_int_eq(pg_int(TASK_LOCKS), 2);
	ck_assert_int_eq(pg_int(TASK_LOCK_WAITS), 0);
	commit_ok(a);
	commit_ok(b);
	ck_assert_int_eq(pg_int("SELECT tasks FROM participant_task_counts "
	                        "WHERE participant_id = 'alice'"),
	                 2);
	begin_ok(a);
	ck_assert_msg(th_store_participant_put(a, "cc", &alice, &e) == TH_OK, "%s", e.msg);
	commit_ok(a);
	/* Deleting a task counts one less. */
	ck_assert_int_eq(th_test_psql(tmpdir, pgdb, "DELETE FROM tasks WHERE id = 'ca'", NULL, 0),
	                 0);
	ck_assert_int_eq(pg_int("SELECT tasks FROM participant_task_counts "
	                        "WHERE participant_id = 'alice'"),
	                 2);
	th_store_close(a);
	th_store_close(b);
}
END_TEST

/* SCALE-1, migration 021: a participation whose task id hashes to 0 modulo 16 folds its
 * participant's count rows into one; the others only add theirs. After 48 new tasks of
 * bob's, one at a time, bob has the folded row plus one per task since the last fold,
 * and the total is exact. */
START_TEST(test_scale1_pg_count_rows_fold_once_in_sixteen_participations)
{
	enum { N = 48 };
	char names[N][16];
	const char *ids[N];
	for (int i = 0; i < N; i++) {
		snprintf(names[i], sizeof names[i], "c-%d", i + 1);
		ids[i] = names[i];
	}
	make_tasks(ids, N);
	const struct th_participant_in bob = {"bob", "human", "reporter", ""};
	struct th_store *st = open_store();
	struct th_error e;
	for (int i = 0; i < N; i++) {
		begin_ok(st);
		ck_assert_msg(th_store_participant_put(st, ids[i], &bob, &e) == TH_OK, "%s", e.msg);
		commit_ok(st);
	}
	th_store_close(st);
	/* The position of the last task that folds (the rule, asked of PostgreSQL itself). */
	int64_t last = pg_int("SELECT coalesce(max(n), 0) FROM generate_series(1, 48) n "
	                      "WHERE hashtext('c-' || n) & 15 = 0");
	ck_assert_msg(last > 0, "no task of the 48 folds: choose other names");
	ck_assert_int_eq(pg_int("SELECT count(*) FROM participant_task_count_rows "
	                        "WHERE participant_id = 'bob'"),
	                 1 + (N - last));
	ck_assert_int_eq(pg_int("SELECT tasks FROM participant_task_counts "
	                        "WHERE participant_id = 'bob'"),
	                 N);
	/* Removals count down the same way: every task gone, bob's total is 0. */
	ck_assert_int_eq(
	    th_test_psql(tmpdir, pgdb, "DELETE FROM tasks WHERE id LIKE 'c-%'", NULL, 0), 0);
	ck_assert_int_eq(pg_int("SELECT tasks FROM participant_task_counts "
	                        "WHERE participant_id = 'bob'"),
	                 0);
}
END_TEST

/* ---- two hosts, many threads, batches: each task's events gap-free ---- */

enum { HOSTS = 2, HOST_THREADS = 3, HOST_PARTS = 40 };

struct host_thread {
	struct th_store *st;
	int host, thread;
	int failed;
	char msg[TH_ERRMSG_MAX];
	int i; /* the part being written */
};

/* One part: two events on one of the shared tasks (which one alternates, so batches of
 * two hosts meet the shared tasks in opposite orders) and one on the thread's own task;
 * the pair carries its writer's name, so the test can see it was numbered without
 * anything between. */
static th_err host_part(struct th_store *st, void *arg, struct th_error *e)
{
	struct host_thread *h = arg;
	char own[32], json[96];
	const char *shared = (h->host + h->thread + h->i) % 2 == 0 ? "s1" : "s2";
	snprintf(own, sizeof own, "own-%d-%d", h->host, h->thread);
	int64_t seq;
	th_err rc = TH_OK;
	for (int k = 0; rc == TH_OK && k < 3; k++) {
		snprintf(json, sizeof json, "{\"w\":\"%d-%d-%d\",\"k\":%d}", h->host, h->thread,
		         h->i, k);
		rc = th_test_event_append(st, k < 2 ? shared : own, "status", TH_ENDS_NONE, json,
		                          &seq, e);
	}
	return rc;
}

static void *host_thread_run(void *arg)
{
	struct host_thread *h = arg;
	for (h->i = 0; h->i < HOST_PARTS && !h->failed; h->i++) {
		struct th_error e;
		th_error_clear(&e);
		if (th_store_write(h->st, host_part, h, &e) != TH_OK) {
			h->failed = 1;
			snprintf(h->msg, sizeof h->msg, "%s", e.msg);
		}
	}
	return NULL;
}

/* A "host": a process with a group writer and HOST_THREADS request threads. */
static int run_host(int host)
{
	struct th_store_group *g = NULL;
	struct th_error e;
	if (th_store_group_open(&opts, &g, &e) != TH_OK)
		return 2;
	struct host_thread h[HOST_THREADS];
	pthread_t t[HOST_THREADS];
	for (int i = 0; i < HOST_THREADS; i++) {
		h[i] = (struct host_thread){.host = host, .thread = i};
		if (th_store_open(&opts, &h[i].st, &e) != TH_OK)
			return 2;
		th_store_join(h[i].st, g);
		pthread_create(&t[i], NULL, host_thread_run, &h[i]);
	}
	int failed = 0;
	for (int i = 0; i < HOST_THREADS; i++) {
		pthread_join(t[i], NULL);
		if (h[i].failed) {
			fprintf(stderr, "host %d thread %d: %s\n", host, i, h[i].msg);
			failed = 1;
		}
		th_store_close(h[i].st);
	}
	th_store_group_close(g);
	return failed;
}

START_TEST(test_stream3_scale1_pg_two_hosts_batches_keep_each_task_gap_free)
{
	static const char *const ids[] = {"s1",      "s2",      "own-0-0", "own-0-1",
	                                  "own-0-2", "own-1-0", "own-1-1", "own-1-2"};
	make_tasks(ids, sizeof ids / sizeof ids[0]);
	pid_t kids[HOSTS];
	for (int k = 0; k < HOSTS; k++) {
		kids[k] = fork();
		ck_assert_int_ge(kids[k], 0);
		if (kids[k] == 0)
			_exit(run_host(k));
	}
	for (int k = 0; k < HOSTS; k++) {
		int status = 0;
		ck_assert_int_eq(waitpid(kids[k], &status, 0), kids[k]);
		ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		              "host %d: a write failed (status %d)", k, status);
	}
	/* Every task's events are 1..n without a gap or a duplicate. */
	ck_assert_int_eq(pg_int("SELECT count(*) FROM (SELECT task_id FROM events GROUP BY task_id "
	                        "HAVING count(*) <> max(seq) OR min(seq) <> 1 "
	                        "OR count(DISTINCT seq) <> count(*)) bad"),
	                 0);
	ck_assert_int_eq(pg_int("SELECT count(*) FROM events WHERE task_id IN ('s1', 's2')"),
	                 2 * HOSTS * HOST_THREADS * HOST_PARTS);
	ck_assert_int_eq(pg_int("SELECT count(*) FROM events WHERE task_id LIKE 'own-%'"),
	                 HOSTS * HOST_THREADS * HOST_PARTS);
	/* Each part's pair on a shared task got consecutive numbers: nothing between. */
	ck_assert_int_eq(pg_int("SELECT count(*) FROM events a JOIN events b "
	                        "ON b.task_id = a.task_id AND b.seq = a.seq + 1 "
	                        "WHERE a.task_id IN ('s1', 's2') "
	                        "AND a.json::jsonb->>'k' = '0' AND b.json::jsonb->>'k' = '1' "
	                        "AND a.json::jsonb->>'w' = b.json::jsonb->>'w'"),
	                 HOSTS * HOST_THREADS * HOST_PARTS);
	/* Both hosts wrote both shared tasks. */
	ck_assert_int_eq(pg_int("SELECT count(DISTINCT task_id || left(json::jsonb->>'w', 1)) "
	                        "FROM events WHERE task_id IN ('s1', 's2')"),
	                 4);
}
END_TEST

static Suite *group_suite(void)
{
	Suite *s = suite_create("group");
	TCase *tc = tcase_create("group");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_turn4_group_commit_every_part_is_stored_when_commit_returns);
	tcase_add_test(tc, test_turn4_group_refused_parts_store_nothing_among_many);
	tcase_add_test(tc, test_turn4_group_write_parts_run_back_to_back_in_one_batch);
	tcase_add_test(tc, test_scale1_group_refused_part_leaves_nothing_known);
	tcase_add_test(tc, test_turn4_group_reads_see_no_uncommitted_part);
	/* Its COMMIT is made to fail by SQLite's deferred foreign keys. */
	if (th_test_pg_base() == NULL)
		tcase_add_test(tc, test_turn4_group_write_failed_commit_fails_every_part);
	if (th_test_pg_base() != NULL) {
		tcase_add_test(tc,
		               test_scale1_pg_writes_to_different_tasks_hold_their_locks_at_once);
		tcase_add_test(
		    tc, test_stream3_scale1_pg_same_task_waits_for_its_lock_then_numbers_next);
		tcase_add_test(tc, test_scale1_pg_batch_waits_holding_no_other_parts_locks);
		tcase_add_test(tc,
		               test_stream3_scale1_pg_two_hosts_batches_keep_each_task_gap_free);
		tcase_add_test(
		    tc, test_scale1_pg_one_participants_new_tasks_do_not_wait_for_each_other);
		tcase_add_test(tc, test_scale1_pg_count_rows_fold_once_in_sixteen_participations);
	}
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(group_suite());
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
