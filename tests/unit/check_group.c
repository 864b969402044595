/* SPDX-License-Identifier: Apache-2.0 */
/* check_group.c — group commit (store/group.c, decision-023) against a temp-file
 * database: the write transactions of threads that share one writer commit together,
 * and each keeps the promises of a transaction of its own (TURN-4: a commit that
 * returns OK is in the database; a rollback or a failed batch stores nothing). */
#include <check.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "store/store.h"

static char tmpdir[256];
static char dbpath[320];

static void setup(void)
{
	snprintf(tmpdir, sizeof tmpdir, "%s/th-group-XXXXXX",
	         getenv("TMPDIR") != NULL ? getenv("TMPDIR") : "/tmp");
	ck_assert_ptr_nonnull(mkdtemp(tmpdir));
	snprintf(dbpath, sizeof dbpath, "%s/th.db", tmpdir);
}

static void teardown(void)
{
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

/* ---- many threads, many transactions --------------------------------------- */

#define THREADS 6
#define PER_THREAD 40

struct writer {
	struct th_store_group *g;
	int n;
	int failures;    /* transactions that did not commit */
	int not_visible; /* commits that returned OK but a fresh read did not find */
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
		th_err rc = th_store_begin(st, &e);
		if (rc == TH_OK)
			rc = insert_task(st, id, &e);
		if (rc == TH_OK)
			rc = th_store_commit(st, &e);
		else
			th_store_rollback(st);
		if (rc != TH_OK) {
			w->failures++;
			continue;
		}
		/* TURN-4: answered only once stored. */
		if (!task_stored(id))
			w->not_visible++;
	}
	th_store_close(st);
	return NULL;
}

/* THREADS threads each run body (write_many, write_mixed) on g; none may see a write
 * fail or a committed write missing. */
static void run_writers(struct th_store_group *g, void *(*body)(void *))
{
	pthread_t t[THREADS];
	struct writer w[THREADS];
	for (int i = 0; i < THREADS; i++) {
		w[i] = (struct writer){.g = g, .n = i};
		ck_assert_int_eq(pthread_create(&t[i], NULL, body, &w[i]), 0);
	}
	for (int i = 0; i < THREADS; i++) {
		pthread_join(t[i], NULL);
		ck_assert_int_eq(w[i].failures, 0);
		ck_assert_int_eq(w[i].not_visible, 0);
	}
}

START_TEST(test_turn4_group_commit_every_part_is_stored_when_commit_returns)
{
	struct th_store *first = open_store(); /* creates and migrates the database */
	th_store_close(first);
	struct th_store_group *g = open_group();
	run_writers(g, write_many);
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

/* ---- one batch, step by step ------------------------------------------------- */

struct member {
	struct th_store_group *g;
	struct th_store *st;
	const char *id; /* task to insert */
	int roll_back;  /* roll back instead of committing */
	int orphan;     /* insert a participant of a task that does not exist */
	th_err result;  /* of commit (TH_OK after a rollback) */
	char msg[TH_ERRMSG_MAX];
};

static void *run_member(void *arg)
{
	struct member *m = arg;
	struct th_error e;
	th_error_clear(&e);
	th_err rc = th_store_begin(m->st, &e);
	if (rc == TH_OK && m->id != NULL)
		rc = insert_task(m->st, m->id, &e);
	if (rc == TH_OK && m->orphan) {
		const struct th_participant_in p = {
		    .id = "bob", .kind = "human", .role = "watcher"};
		rc = th_store_participant_put(m->st, "no-such-task", &p, &e);
	}
	if (rc == TH_OK && m->roll_back) {
		th_store_rollback(m->st);
	} else if (rc == TH_OK) {
		rc = th_store_commit(m->st, &e);
	} else {
		th_store_rollback(m->st);
	}
	m->result = rc;
	snprintf(m->msg, sizeof m->msg, "%s", e.msg);
	return NULL;
}

/* Member a runs its part and holds the writer until b and c wait for it; then all
 * three finish in order a, b, c. */
static void run_three(struct th_store_group *g, struct member m[3])
{
	struct th_error e;
	th_error_clear(&e);
	for (int i = 0; i < 3; i++) {
		m[i].g = g;
		m[i].st = open_store();
		th_store_join(m[i].st, g);
	}
	/* a's part, on this thread, up to its commit */
	ck_assert_int_eq(th_store_begin(m[0].st, &e), TH_OK);
	ck_assert_int_eq(insert_task(m[0].st, m[0].id, &e), TH_OK);
	if (m[0].orphan) {
		/* Constraints are checked at COMMIT from here on, for the whole batch. */
		ck_assert_int_eq(sqlite3_exec(th_store_db(m[0].st),
		                              "PRAGMA defer_foreign_keys = ON", NULL, NULL, NULL),
		                 SQLITE_OK);
	}
	pthread_t t[2];
	ck_assert_int_eq(pthread_create(&t[0], NULL, run_member, &m[1]), 0);
	wait_for_waiting(g, 1);
	ck_assert_int_eq(pthread_create(&t[1], NULL, run_member, &m[2]), 0);
	wait_for_waiting(g, 2);
	m[0].result = th_store_commit(m[0].st, &e);
	snprintf(m[0].msg, sizeof m[0].msg, "%s", e.msg);
	pthread_join(t[0], NULL);
	pthread_join(t[1], NULL);
	for (int i = 0; i < 3; i++)
		th_store_close(m[i].st);
}

START_TEST(test_turn4_group_overlapping_transactions_commit_as_one_batch)
{
	th_store_close(open_store());
	struct th_store_group *g = open_group();
	struct member m[3] = {{.id = "a"}, {.id = "b"}, {.id = "c"}};
	run_three(g, m);
	for (int i = 0; i < 3; i++)
		ck_assert_msg(m[i].result == TH_OK, "%d: %s", i, m[i].msg);
	assert_one_batch(g, 3);
	ck_assert(task_stored("a") && task_stored("b") && task_stored("c"));
	th_store_group_close(g);
}
END_TEST

START_TEST(test_turn4_group_rollback_undoes_only_its_own_part)
{
	th_store_close(open_store());
	struct th_store_group *g = open_group();
	struct member m[3] = {{.id = "a"}, {.id = "b", .roll_back = 1}, {.id = "c"}};
	run_three(g, m);
	for (int i = 0; i < 3; i++)
		ck_assert_msg(m[i].result == TH_OK, "%d: %s", i, m[i].msg);
	ck_assert(task_stored("a"));
	ck_assert(!task_stored("b"));
	ck_assert(task_stored("c"));
	assert_one_batch(g, 2);
	th_store_group_close(g);
}
END_TEST

/* A batch whose COMMIT fails stores nothing, and every member is told. */
START_TEST(test_turn4_group_failed_commit_fails_every_member_and_stores_nothing)
{
	th_store_close(open_store());
	struct th_store_group *g = open_group();
	struct member m[3] = {{.id = "a", .orphan = 1}, {.id = "b", .orphan = 1}, {.id = "c"}};
	run_three(g, m);
	for (int i = 0; i < 3; i++)
		ck_assert_msg(m[i].result != TH_OK, "member %d was told its write committed", i);
	ck_assert(!task_stored("a"));
	ck_assert(!task_stored("b"));
	ck_assert(!task_stored("c"));
	/* The writer is usable again: the next transaction commits. */
	struct th_store *st = open_store();
	th_store_join(st, g);
	struct th_error e;
	th_error_clear(&e);
	ck_assert_int_eq(th_store_begin(st, &e), TH_OK);
	ck_assert_int_eq(insert_task(st, "d", &e), TH_OK);
	ck_assert_msg(th_store_commit(st, &e) == TH_OK, "%s", e.msg);
	ck_assert(task_stored("d"));
	th_store_close(st);
	th_store_group_close(g);
}
END_TEST

/* A read outside the transaction stays on the member's own connection: it does not see
 * another member's part before that part committed. */
START_TEST(test_turn4_group_reads_see_no_uncommitted_part)
{
	th_store_close(open_store());
	struct th_store_group *g = open_group();
	struct th_store *a = open_store(), *b = open_store();
	th_store_join(a, g);
	th_store_join(b, g);
	struct th_error e;
	th_error_clear(&e);
	ck_assert_int_eq(th_store_begin(a, &e), TH_OK);
	ck_assert_int_eq(insert_task(a, "a", &e), TH_OK);
	struct th_task_row r;
	ck_assert_int_eq(th_store_task_get(b, "a", &r, &e), TH_ENOTFOUND);
	ck_assert_int_eq(th_store_commit(a, &e), TH_OK);
	ck_assert_int_eq(th_store_task_get(b, "a", &r, &e), TH_OK);
	th_task_row_free(&r);
	th_store_close(a);
	th_store_close(b);
	th_store_group_close(g);
}
END_TEST

/* ---- th_store_write: parts handed over as functions (decision-030) ---------------- */

struct job_arg {
	const char *id;   /* task to insert */
	int fail;         /* insert, then report failure: the part is undone */
	int orphan;       /* insert a participant of a task that does not exist */
	pthread_t ran_on; /* the thread fn ran on */
	pthread_t owner;  /* the thread that called th_store_write */
	th_err result;    /* of th_store_write */
	struct th_store *st;
	char msg[TH_ERRMSG_MAX];
};

static th_err job_part(struct th_store *st, void *arg, struct th_error *e)
{
	struct job_arg *a = arg;
	a->ran_on = pthread_self();
	th_err rc = insert_task(st, a->id, e);
	if (rc == TH_OK && a->orphan) {
		const struct th_participant_in p = {
		    .id = "bob", .kind = "human", .role = "watcher"};
		rc = th_store_participant_put(st, "no-such-task", &p, e);
	}
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

/* Member a holds the writer (th_store_begin) until three th_store_write parts are
 * queued; when it commits, one thread runs all three, back to back, in a's batch. */
static void run_jobs(struct th_store_group *g, int a_orphan, struct job_arg j[3])
{
	struct th_error e;
	th_error_clear(&e);
	struct th_store *a = open_store();
	th_store_join(a, g);
	ck_assert_int_eq(th_store_begin(a, &e), TH_OK);
	ck_assert_int_eq(insert_task(a, "a", &e), TH_OK);
	if (a_orphan)
		ck_assert_int_eq(sqlite3_exec(th_store_db(a), "PRAGMA defer_foreign_keys = ON",
		                              NULL, NULL, NULL),
		                 SQLITE_OK);
	pthread_t t[3];
	for (int i = 0; i < 3; i++) {
		j[i].st = open_store();
		th_store_join(j[i].st, g);
		ck_assert_int_eq(pthread_create(&t[i], NULL, run_job, &j[i]), 0);
		wait_for_waiting(g, i + 1);
	}
	th_err rc = th_store_commit(a, &e);
	for (int i = 0; i < 3; i++) {
		pthread_join(t[i], NULL);
		th_store_close(j[i].st);
	}
	ck_assert_msg((rc == TH_OK) == !a_orphan, "a's commit: %s", e.msg);
	th_store_close(a);
}

START_TEST(test_turn4_group_write_parts_run_back_to_back_in_one_batch)
{
	th_store_close(open_store());
	struct th_store_group *g = open_group();
	struct job_arg j[3] = {{.id = "b"}, {.id = "c", .fail = 1}, {.id = "d"}};
	run_jobs(g, 0, j);
	ck_assert_msg(j[0].result == TH_OK, "b: %s", j[0].msg);
	ck_assert_int_eq(j[1].result, TH_EINVAL);
	ck_assert_str_eq(j[1].msg, "refused on purpose");
	ck_assert_msg(j[2].result == TH_OK, "d: %s", j[2].msg);
	ck_assert(task_stored("a") && task_stored("b") && task_stored("d"));
	ck_assert(!task_stored("c"));
	/* One thread ran every queued part: at least two ran away from their owner. */
	ck_assert(pthread_equal(j[0].ran_on, j[1].ran_on) &&
	          pthread_equal(j[1].ran_on, j[2].ran_on));
	int away = 0;
	for (int i = 0; i < 3; i++)
		away += !pthread_equal(j[i].ran_on, j[i].owner);
	ck_assert_int_ge(away, 2);
	assert_one_batch(g, 3);
	th_store_group_close(g);
}
END_TEST

/* The batch's COMMIT fails (a's deferred foreign key): every part in it is told, and
 * nothing of it is stored. */
START_TEST(test_turn4_group_write_failed_commit_fails_every_part)
{
	th_store_close(open_store());
	struct th_store_group *g = open_group();
	struct job_arg j[3] = {{.id = "b"}, {.id = "c"}, {.id = "d", .orphan = 1}};
	run_jobs(g, 1, j);
	for (int i = 0; i < 3; i++)
		ck_assert_msg(j[i].result != TH_OK, "part %d was told it committed", i);
	ck_assert(!task_stored("a") && !task_stored("b") && !task_stored("c") && !task_stored("d"));
	/* The writer is usable again. */
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

/* Threads mixing th_store_write and th_store_begin/commit, some parts refused: every
 * part that returned OK is stored when it returns, no refused one is. */
static void *write_mixed(void *arg)
{
	struct writer *w = arg;
	struct th_store *st = open_store();
	th_store_join(st, w->g);
	for (int i = 0; i < PER_THREAD; i++) {
		char id[64];
		snprintf(id, sizeof id, "m-%d-%d", w->n, i);
		struct th_error e;
		th_error_clear(&e);
		th_err rc;
		int refused = i % 5 == 4;
		if (i % 2 == 0 || refused) {
			struct job_arg a = {.id = id, .fail = refused};
			rc = th_store_write(st, job_part, &a, &e);
		} else if ((rc = th_store_begin(st, &e)) == TH_OK) {
			if ((rc = insert_task(st, id, &e)) == TH_OK)
				rc = th_store_commit(st, &e);
			else
				th_store_rollback(st);
		}
		if (refused) {
			if (rc == TH_OK || task_stored(id))
				w->not_visible++; /* counted as a broken promise */
			continue;
		}
		if (rc != TH_OK)
			w->failures++;
		else if (!task_stored(id))
			w->not_visible++;
	}
	th_store_close(st);
	return NULL;
}

START_TEST(test_turn4_group_write_and_begin_mixed_keep_every_promise)
{
	th_store_close(open_store());
	struct th_store_group *g = open_group();
	run_writers(g, write_mixed);
	struct th_store_group_stats s;
	th_store_group_stats(g, &s);
	ck_assert_int_eq(s.parts, THREADS * (PER_THREAD - PER_THREAD / 5));
	ck_assert_int_eq(s.waiting, 0);
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
	tcase_add_test(tc, test_turn4_group_overlapping_transactions_commit_as_one_batch);
	tcase_add_test(tc, test_turn4_group_rollback_undoes_only_its_own_part);
	tcase_add_test(tc, test_turn4_group_failed_commit_fails_every_member_and_stores_nothing);
	tcase_add_test(tc, test_turn4_group_reads_see_no_uncommitted_part);
	tcase_add_test(tc, test_turn4_group_write_parts_run_back_to_back_in_one_batch);
	tcase_add_test(tc, test_turn4_group_write_failed_commit_fails_every_part);
	tcase_add_test(tc, test_turn4_group_write_and_begin_mixed_keep_every_promise);
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
