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
#include <time.h>
#include <unistd.h>

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
	pthread_t ran_on;   /* the thread fn ran on */
	pthread_t owner;    /* the thread that called th_store_write */
	th_err result;      /* of th_store_write */
	struct th_store *st;
	char msg[TH_ERRMSG_MAX];
};

static th_err job_part(struct th_store *st, void *arg, struct th_error *e)
{
	struct job_arg *a = arg;
	a->ran_on = pthread_self();
	th_err rc = insert_task(st, a->id, e);
	if (rc == TH_OK && a->defer_fk)
		rc = sqlite3_exec(th_store_db(st), "PRAGMA defer_foreign_keys = ON", NULL, NULL,
		                  NULL) == SQLITE_OK
		         ? TH_OK
		         : th_error_set(e, TH_EINTERNAL, "defer_foreign_keys");
	if (rc == TH_OK && a->orphan) {
		const struct th_participant_in p = {
		    .id = "bob", .kind = "human", .role = "watcher"};
		rc = th_store_participant_put(st, "no-such-task", &p, e);
	}
	if (rc == TH_OK && a->unseen != NULL)
		a->seen = task_stored(a->unseen);
	a->in = 1;
	while (a->hold != NULL && *a->hold)
		usleep(1000);
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

static Suite *group_suite(void)
{
	Suite *s = suite_create("group");
	TCase *tc = tcase_create("group");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_turn4_group_commit_every_part_is_stored_when_commit_returns);
	tcase_add_test(tc, test_turn4_group_refused_parts_store_nothing_among_many);
	tcase_add_test(tc, test_turn4_group_write_parts_run_back_to_back_in_one_batch);
	tcase_add_test(tc, test_turn4_group_reads_see_no_uncommitted_part);
	/* Its COMMIT is made to fail by SQLite's deferred foreign keys. */
	if (th_test_pg_base() == NULL)
		tcase_add_test(tc, test_turn4_group_write_failed_commit_fails_every_part);
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
