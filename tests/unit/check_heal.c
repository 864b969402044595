/* SPDX-License-Identifier: Apache-2.0 */
/* check_heal.c — STORE-9: a store heals by itself. A connection that opened the file
 * read-only, that met an I/O error, or that could not be opened at all (its directory
 * missing and not creatable) writes again on the same handle once the cause is gone.
 *
 * Permissions only bind an unprivileged user: run as root, each case forks a child that
 * drops to uid/gid 65534 (nobody) with the files handed to it. The child cannot use
 * Check's assertions (they would end the child, not fail the test), so it reports the
 * first failed expectation on stderr and exits 1; the parent asserts it exited 0. */
#include <check.h>
#include <errno.h>
#include <grp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "store/store.h"

#define NOBODY 65534

static char tmpdir[256];
static char dbpath[320];

static void setup(void)
{
	snprintf(tmpdir, sizeof tmpdir, "%s/th-heal-XXXXXX",
	         getenv("TMPDIR") != NULL ? getenv("TMPDIR") : "/tmp");
	ck_assert_ptr_nonnull(mkdtemp(tmpdir));
	snprintf(dbpath, sizeof dbpath, "%s/db/th.db", tmpdir);
}

static void teardown(void)
{
	char cmd[640];
	/* Children may have left files at 0444 in directories at 0555. */
	snprintf(cmd, sizeof cmd, "chmod -R u+w '%s' 2>/dev/null; rm -rf '%s'", tmpdir, tmpdir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", tmpdir);
}

/* The first failed expectation of a case: the child prints it and exits 1. */
static char failure[512];

static int fail_at(int line, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail_at(int line, const char *fmt, ...)
{
	int n = snprintf(failure, sizeof failure, "line %d: ", line);
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(failure + n, sizeof failure - (size_t)n, fmt, ap);
	va_end(ap);
	return 1;
}
#define EXPECT(cond, ...)                                                                          \
	do {                                                                                       \
		if (!(cond))                                                                       \
			return fail_at(__LINE__, __VA_ARGS__);                                     \
	} while (0)

/* Runs body as an unprivileged user and asserts it succeeded. As root: in a child that
 * becomes nobody, after tmpdir was given to nobody. Otherwise in a child too, so that a
 * case's process limits (RLIMIT_FSIZE) and signal settings end with it. */
static void run_unprivileged(int (*body)(void))
{
	int root = geteuid() == 0;
	if (root)
		ck_assert_int_eq(chown(tmpdir, NOBODY, NOBODY), 0);
	fflush(NULL);
	pid_t pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		if (root &&
		    (setgroups(0, NULL) != 0 || setgid(NOBODY) != 0 || setuid(NOBODY) != 0)) {
			fprintf(stderr, "cannot become uid %d: %s\n", NOBODY, strerror(errno));
			_exit(2);
		}
		int bad = body();
		if (bad)
			fprintf(stderr, "STORE-9 case failed: %s\n", failure);
		_exit(bad ? 1 : 0);
	}
	int status = 0;
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0,
	              "the unprivileged child failed (status %d; its stderr says where)", status);
}

static struct th_store *open_at(const char *path, int heal_later, struct th_error *e)
{
	struct th_store_opts o = {.path = path, .busy_timeout_ms = 2000, .heal_later = heal_later};
	struct th_store *st = NULL;
	th_error_clear(e);
	if (th_store_open(&o, &st, e) != TH_OK)
		return NULL;
	return st;
}

struct insert {
	const char *id;
	const char *ext; /* NULL: "{}" */
};

static th_err insert_fn(struct th_store *st, void *arg, struct th_error *e)
{
	const struct insert *in = arg;
	struct th_task_in r = {.id = in->id,
	                       .context_id = "ctx",
	                       .state = 2,
	                       .status_ms = 1000,
	                       .name = "n",
	                       .goal = "g",
	                       .ext_json = in->ext != NULL ? in->ext : "{}",
	                       .created_by = "alice"};
	return th_store_task_insert(st, &r, e);
}

static th_err insert(struct th_store *st, const char *id, const char *ext, struct th_error *e)
{
	struct insert in = {id, ext};
	th_error_clear(e);
	return th_store_write(st, insert_fn, &in, e);
}

/* How many of the ids the tests write exist, read through the store (th_store_task_get);
 * -1 when a read fails. */
static int64_t count_tasks(struct th_store *st)
{
	static const char *const ids[] = {"before",  "while-ro", "while-ro-2", "after",
	                                  "after-2", "too-big",  "early",      "later"};
	int64_t n = 0;
	for (size_t i = 0; i < sizeof ids / sizeof ids[0]; i++) {
		struct th_task_row r;
		struct th_error e;
		th_err rc = th_store_task_get(st, ids[i], &r, &e);
		if (rc == TH_OK) {
			n++;
			th_task_row_free(&r);
		} else if (rc != TH_ENOTFOUND) {
			return -1;
		}
	}
	return n;
}

static int integrity_ok(const char *path)
{
	sqlite3 *db = NULL;
	int ok = 0;
	if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK) {
		sqlite3_stmt *s = NULL;
		if (sqlite3_prepare_v2(db, "PRAGMA integrity_check", -1, &s, NULL) == SQLITE_OK &&
		    sqlite3_step(s) == SQLITE_ROW)
			ok = strcmp((const char *)sqlite3_column_text(s, 0), "ok") == 0;
		sqlite3_finalize(s);
	}
	sqlite3_close(db);
	return ok;
}

/* A database with one task, "before", made by the current user and then closed. */
static int make_db(void)
{
	struct th_error e;
	struct th_store *st = open_at(dbpath, 0, &e);
	EXPECT(st != NULL, "open: %s", e.msg);
	EXPECT(insert(st, "before", NULL, &e) == TH_OK, "first write: %s", e.msg);
	th_store_close(st);
	return 0;
}

/* ---- a read-only file -------------------------------------------------------------- */

/* make_db, then chmod 0444 and one read by another connection, closed again: SQLite
 * created -wal and -shm with the file's mode (0444) and a read-only connection leaves
 * them behind, as any process that ran on the read-only file (another worker, the CLI)
 * does. */
static int make_read_only_db(void)
{
	if (make_db())
		return 1;
	EXPECT(chmod(dbpath, 0444) == 0, "chmod 0444: %s", strerror(errno));
	struct th_error e;
	struct th_store *other = open_at(dbpath, 0, &e);
	EXPECT(other != NULL, "a read-only file must still open for reading: %s", e.msg);
	int64_t n = count_tasks(other);
	th_store_close(other);
	EXPECT(n == 1, "the other connection read %lld tasks", (long long)n);
	char shm[sizeof dbpath + 8];
	snprintf(shm, sizeof shm, "%s-shm", dbpath);
	struct stat sb;
	EXPECT(stat(shm, &sb) == 0 && (sb.st_mode & 0222) == 0,
	       "expected a 0444 -shm left behind (SQLite's behaviour changed?)");
	return 0;
}

/* Shared by the own-connection and the group cases: w writes (st itself, or a member of
 * a group), st reads. */
static int read_only_then_writable(struct th_store *w, struct th_store *st)
{
	struct th_error e;
	EXPECT(insert(w, "while-ro", NULL, &e) != TH_OK, "a write to a 0444 file succeeded");
	EXPECT(strstr(e.msg, "read-only") != NULL, "unclear error: %s", e.msg);
	EXPECT(count_tasks(st) == 1, "reads fail or something was stored: %lld",
	       (long long)count_tasks(st));
	/* Still read-only: a second try fails the same way (and reopens nothing). */
	EXPECT(insert(w, "while-ro-2", NULL, &e) != TH_OK, "a second write succeeded");
	EXPECT(strstr(e.msg, "read-only") != NULL, "unclear second error: %s", e.msg);
	EXPECT(chmod(dbpath, 0644) == 0, "chmod 0644: %s", strerror(errno));
	EXPECT(insert(w, "after", NULL, &e) == TH_OK, "no heal after chmod 0644: %s", e.msg);
	EXPECT(insert(w, "after-2", NULL, &e) == TH_OK, "second write after heal: %s", e.msg);
	EXPECT(count_tasks(st) == 3, "expected before, after, after-2; have %lld",
	       (long long)count_tasks(st));
	return 0;
}

static int case_read_only_own(void)
{
	if (make_read_only_db())
		return 1;
	struct th_error e;
	struct th_store *st = open_at(dbpath, 0, &e);
	EXPECT(st != NULL, "a read-only file must still open for reading: %s", e.msg);
	const char *why = th_store_trouble(st);
	EXPECT(why != NULL && strstr(why, dbpath) != NULL && strstr(why, "read-only") != NULL,
	       "the trouble should name the file and say read-only: %s", why ? why : "(none)");
	int64_t version = th_store_data_version(st);
	int bad = read_only_then_writable(st, st);
	if (!bad) {
		/* Nobody else committed, but the connection is a new one, whose versions
		 * start afresh: the version must move, so that a reader comparing it (the
		 * stream thread, a kept answer) looks again rather than trust a repeat. */
		int64_t now = th_store_data_version(st);
		EXPECT(now >= 0 && now != version,
		       "data_version %lld before and %lld after the connection was reopened",
		       (long long)version, (long long)now);
		EXPECT(th_store_trouble(st) == NULL, "still troubled: %s", th_store_trouble(st));
		/* Healthy now: more writes use the same connection. */
		sqlite3 *db = th_store_db(st);
		EXPECT(insert(st, "steady", NULL, &e) == TH_OK, "steady write: %s", e.msg);
		EXPECT(th_store_db(st) == db, "a healthy connection was reopened");
	}
	th_store_close(st);
	if (bad)
		return 1;
	EXPECT(integrity_ok(dbpath), "integrity_check is not ok");
	return 0;
}

START_TEST(test_store9_read_only_file_heals_on_the_same_handle)
{
	run_unprivileged(case_read_only_own);
}
END_TEST

/* The request threads of a worker write through one group writer (group.c): it must
 * heal too, and the members' own (read) connections with it. */
static int case_read_only_group(void)
{
	if (make_read_only_db())
		return 1;
	struct th_error e;
	struct th_store_opts o = {.path = dbpath, .busy_timeout_ms = 2000};
	struct th_store_group *g = NULL;
	th_error_clear(&e);
	EXPECT(th_store_group_open(&o, &g, &e) == TH_OK, "group open: %s", e.msg);
	struct th_store *st = open_at(dbpath, 0, &e);
	EXPECT(st != NULL, "member open: %s", e.msg);
	th_store_join(st, g);
	int bad = read_only_then_writable(st, st);
	/* The member's own connection heals at its next read transaction or WAL tending. */
	int began = 0;
	if (!bad && th_store_read_begin(st, &began, &e) == TH_OK)
		th_store_read_end(st, began);
	if (!bad && th_store_trouble(st) != NULL)
		bad = fail_at(__LINE__, "member still troubled: %s", th_store_trouble(st));
	th_store_close(st);
	th_store_group_close(g);
	if (bad)
		return 1;
	EXPECT(integrity_ok(dbpath), "integrity_check is not ok");
	return 0;
}

START_TEST(test_store9_group_writer_heals_after_read_only)
{
	run_unprivileged(case_read_only_group);
}
END_TEST

/* ---- a write error below SQLite ---------------------------------------------------- */

/* RLIMIT_FSIZE makes the WAL's growth fail as a full disk does (EFBIG where a full disk
 * gives ENOSPC), with no mount needed: the write fails cleanly, nothing is stored, and
 * once the limit is lifted the next write succeeds. */
static int case_write_error(void)
{
	if (make_db())
		return 1;
	signal(SIGXFSZ, SIG_IGN);
	struct th_error e;
	struct th_store *st = open_at(dbpath, 0, &e);
	EXPECT(st != NULL, "open: %s", e.msg);
	int log = -1, done = -1;
	EXPECT(sqlite3_wal_checkpoint_v2(th_store_db(st), NULL, SQLITE_CHECKPOINT_TRUNCATE, &log,
	                                 &done) == SQLITE_OK,
	       "checkpoint");
	static char big[600000];
	memset(big, 'x', sizeof big);
	memcpy(big, "{\"d\":\"", 6);
	memcpy(big + sizeof big - 3, "\"}", 3);
	struct rlimit lim;
	EXPECT(getrlimit(RLIMIT_FSIZE, &lim) == 0, "getrlimit");
	struct rlimit small = {64 * 1024, lim.rlim_max};
	EXPECT(setrlimit(RLIMIT_FSIZE, &small) == 0, "setrlimit: %s", strerror(errno));
	th_err rc = insert(st, "too-big", big, &e);
	EXPECT(setrlimit(RLIMIT_FSIZE, &lim) == 0, "setrlimit back: %s", strerror(errno));
	EXPECT(rc != TH_OK, "a write past the file size limit succeeded");
	EXPECT(strstr(e.msg, "database error") != NULL, "unclear error: %s", e.msg);
	EXPECT(count_tasks(st) == 1, "half-stored: %lld tasks", (long long)count_tasks(st));
	EXPECT(insert(st, "after", big, &e) == TH_OK, "no heal once room was made: %s", e.msg);
	EXPECT(count_tasks(st) == 2, "have %lld tasks", (long long)count_tasks(st));
	th_store_close(st);
	EXPECT(integrity_ok(dbpath), "integrity_check is not ok");
	return 0;
}

START_TEST(test_store9_write_error_heals_once_room_is_made)
{
	run_unprivileged(case_write_error);
}
END_TEST

/* ---- a directory that cannot be made yet ------------------------------------------- */

static int case_missing_directory(void)
{
	char parent[300];
	snprintf(parent, sizeof parent, "%s/db", tmpdir);
	EXPECT(mkdir(parent, 0555) == 0, "mkdir: %s", strerror(errno));
	/* db/data/th.db: "data" cannot be made inside a 0555 directory. */
	char path[340];
	snprintf(path, sizeof path, "%s/data/th.db", parent);
	struct th_error e;
	struct th_store *st = open_at(path, 0, &e);
	EXPECT(st == NULL, "opened in a directory that cannot be made");
	th_store_close(st);
	/* A worker opens with heal_later: it starts, and says why it cannot write. */
	st = open_at(path, 1, &e);
	EXPECT(st != NULL, "heal_later open failed: %s", e.msg);
	const char *why = th_store_trouble(st);
	int bad = 0;
	if (why == NULL || strstr(why, path) == NULL)
		bad = fail_at(__LINE__, "the trouble should name %s: %s", path, why ? why : "none");
	if (!bad && insert(st, "early", NULL, &e) == TH_OK)
		bad = fail_at(__LINE__, "a write without a database succeeded");
	if (!bad && strstr(e.msg, "database error") == NULL)
		bad = fail_at(__LINE__, "unclear error: %s", e.msg);
	if (!bad && count_tasks(st) != -1)
		bad = fail_at(__LINE__, "a read without a database succeeded");
	if (!bad && chmod(parent, 0755) != 0)
		bad = fail_at(__LINE__, "chmod: %s", strerror(errno));
	if (!bad && insert(st, "later", NULL, &e) != TH_OK)
		bad = fail_at(__LINE__, "no heal once the directory can be made: %s", e.msg);
	if (!bad && count_tasks(st) != 1)
		bad = fail_at(__LINE__, "have %lld tasks", (long long)count_tasks(st));
	if (!bad && th_store_trouble(st) != NULL)
		bad = fail_at(__LINE__, "still troubled: %s", th_store_trouble(st));
	th_store_close(st);
	if (bad)
		return 1;
	EXPECT(integrity_ok(path), "integrity_check is not ok");
	return 0;
}

START_TEST(test_store9_missing_directory_heals_once_it_can_be_made)
{
	run_unprivileged(case_missing_directory);
}
END_TEST

static Suite *heal_suite(void)
{
	Suite *s = suite_create("heal");
	TCase *tc = tcase_create("heal");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_store9_read_only_file_heals_on_the_same_handle);
	tcase_add_test(tc, test_store9_group_writer_heals_after_read_only);
	tcase_add_test(tc, test_store9_write_error_heals_once_room_is_made);
	tcase_add_test(tc, test_store9_missing_directory_heals_once_it_can_be_made);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(heal_suite());
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
