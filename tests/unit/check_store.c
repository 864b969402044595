/* SPDX-License-Identifier: Apache-2.0 */
/* check_store.c — the store against temp-file databases (STORE-1, STREAM-3, STREAM-5, SEC-6,
 * STATUS-4, CTL-3, CTL-4, LIM-3). With TH_TEST_PG set to a PostgreSQL base URI
 * (postgresql://user@host:port/, tests/lib/pg.sh) every test that is not about SQLite
 * itself runs again on a fresh PostgreSQL database each, with the PostgreSQL tests
 * (STORE-6) added; scripts/test.sh runs both. */
#include <check.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "domain/events.h"
#include "domain/ext.h"
#include "text_fixture.h"
#include "pg_fixture.h"
#include "store/migrations.h"
#include "store/store.h"
#include "util/buf.h"
#include "util/ids.h"
#include "util/jsonx.h"

static char tmpdir[256];
static char dbpath[320];
static char pgdb[64]; /* the test's PostgreSQL database, "" on SQLite */

static const char *pg_base(void)
{
	return th_test_pg_base();
}

static int psql(const char *db, const char *sql, char *out, size_t outsz)
{
	return th_test_psql(tmpdir, db, sql, out, outsz);
}

static void setup(void)
{
	snprintf(tmpdir, sizeof tmpdir, "%s/th-store-XXXXXX",
	         getenv("TMPDIR") != NULL ? getenv("TMPDIR") : "/tmp");
	ck_assert_ptr_nonnull(mkdtemp(tmpdir));
	pgdb[0] = '\0';
	if (pg_base() != NULL) {
		th_test_pg_create(tmpdir, pgdb, sizeof pgdb, dbpath, sizeof dbpath);
		return;
	}
	/* A sub-directory that does not exist yet: open must create it. */
	snprintf(dbpath, sizeof dbpath, "%s/db/th.db", tmpdir);
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

static struct th_store *open_store(void)
{
	struct th_store_opts o = {.path = dbpath, .sync_full = 0, .busy_timeout_ms = 5000};
	struct th_store *st = NULL;
	struct th_error e;
	th_error_clear(&e);
	th_err err = th_store_open(&o, &st, &e);
	ck_assert_msg(err == TH_OK, "open: %s %s", th_err_name(err), e.msg);
	ck_assert_ptr_nonnull(st);
	return st;
}

static th_err try_open(struct th_error *e)
{
	struct th_store_opts o = {.path = dbpath, .busy_timeout_ms = 1000};
	struct th_store *st = NULL;
	th_error_clear(e);
	th_err err = th_store_open(&o, &st, e);
	th_store_close(st);
	return err;
}

static int64_t q_int(struct th_store *st, const char *sql)
{
	if (pgdb[0] != '\0') {
		char out[256];
		ck_assert_msg(psql(pgdb, sql, out, sizeof out) == 0, "%s: %s", sql, out);
		/* A boolean answers t or f. */
		return strcmp(out, "t") == 0   ? 1
		       : strcmp(out, "f") == 0 ? 0
		                               : strtoll(out, NULL, 10);
	}
	sqlite3_stmt *s = NULL;
	ck_assert_int_eq(sqlite3_prepare_v2(th_store_db(st), sql, -1, &s, NULL), SQLITE_OK);
	ck_assert_int_eq(sqlite3_step(s), SQLITE_ROW);
	int64_t v = sqlite3_column_int64(s, 0);
	sqlite3_finalize(s);
	return v;
}

/* First column of the first row as a new string ("" for no row, "(null)" for NULL). */
static char *q_text(struct th_store *st, const char *sql)
{
	if (pgdb[0] != '\0') {
		char out[4096];
		char wrapped[2048];
		/* NULL shows as "(null)", as below; no row as "". */
		snprintf(wrapped, sizeof wrapped, "\\pset null '(null)'\n%s", sql);
		ck_assert_msg(psql(pgdb, wrapped, out, sizeof out) == 0, "%s: %s", sql, out);
		return strdup(out);
	}
	sqlite3_stmt *s = NULL;
	ck_assert_int_eq(sqlite3_prepare_v2(th_store_db(st), sql, -1, &s, NULL), SQLITE_OK);
	char *r;
	if (sqlite3_step(s) == SQLITE_ROW) {
		const unsigned char *t = sqlite3_column_text(s, 0);
		r = strdup(t != NULL ? (const char *)t : "(null)");
	} else {
		r = strdup("");
	}
	sqlite3_finalize(s);
	return r;
}

static void begin(struct th_store *st)
{
	struct th_error e;
	th_err err = th_store_begin(st, &e);
	ck_assert_msg(err == TH_OK, "begin: %s", e.msg);
}

static void commit(struct th_store *st)
{
	struct th_error e;
	th_err err = th_store_commit(st, &e);
	ck_assert_msg(err == TH_OK, "commit: %s", e.msg);
}

static void add_task_at(struct th_store *st, const char *id, const char *ctx, int state,
                        int64_t status_ms, const char *participant)
{
	struct th_task_in r = {0};
	r.id = id;
	r.context_id = ctx;
	r.state = state;
	r.status_ms = status_ms;
	r.name = "name of task";
	r.goal = "goal";
	r.ext_json = "{}";
	r.created_by = participant;
	struct th_error e;
	th_err err = th_store_task_insert(st, &r, &e);
	ck_assert_msg(err == TH_OK, "insert %s: %s", id, e.msg);
	struct th_participant_in p = {
	    .id = participant, .kind = "human", .role = "assignee", .display_name = NULL};
	err = th_store_participant_put(st, id, &p, &e);
	ck_assert_msg(err == TH_OK, "participant %s: %s", id, e.msg);
}

static void add_task(struct th_store *st, const char *id)
{
	add_task_at(st, id, "ctx-1", 2, 1000, "alice");
}

/* ---- open and migrate ------------------------------------------------------------ */

START_TEST(test_store1_open_creates_and_migrates)
{
	struct th_store *st = open_store();
	ck_assert_int_ge(th_store_schema_version(), 1);
	ck_assert_int_eq(q_int(st, "PRAGMA user_version"), th_store_schema_version());
	ck_assert_int_eq(q_int(st, "PRAGMA application_id"), 0x74486172);
	ck_assert_int_eq(q_int(st, "PRAGMA foreign_keys"), 1);
	ck_assert_int_eq(q_int(st, "PRAGMA synchronous"), 1); /* NORMAL */
	char *mode = q_text(st, "PRAGMA journal_mode");
	ck_assert_str_eq(mode, "wal");
	free(mode);
	const char *tables[] = {
	    "tasks",           "participants",     "message_rows",  "event_rows",
	    "artifacts",       "subtask_links",    "turn_rows",     "channels",
	    "channel_members", "channel_messages", "help_requests", "plan_steps",
	    "a2ui_registry",   "push_configs",     "push_outbox",   "api_keys"};
	for (size_t i = 0; i < sizeof tables / sizeof tables[0]; i++) {
		char sql[160];
		snprintf(sql, sizeof sql, "SELECT strict FROM pragma_table_list WHERE name = '%s'",
		         tables[i]);
		ck_assert_msg(q_int(st, sql) == 1, "table %s missing or not STRICT", tables[i]);
	}
	ck_assert_int_eq(q_int(st, "SELECT count(*) FROM sqlite_schema WHERE type = 'view' "
	                           "AND name = 'waiting_tasks'"),
	                 1);
	/* 014: events and messages are views over the rows keyed by the task's number. */
	ck_assert_int_eq(q_int(st, "SELECT count(*) FROM sqlite_schema WHERE type = 'view' "
	                           "AND (name = 'events' OR name = 'messages')"),
	                 2);
	/* 019: turns is a view over turn_rows, keyed by the task's number (STORE-10). */
	ck_assert_int_eq(q_int(st, "SELECT count(*) FROM sqlite_schema WHERE type = 'view' "
	                           "AND name = 'turns'"),
	                 1);
	ck_assert_int_eq(q_int(st, "SELECT count(*) FROM pragma_table_info('turn_rows') "
	                           "WHERE name = 'task_id'"),
	                 0);
	ck_assert_int_eq(th_store_schema_version(), 24);
	/* 016: participants is its primary key's b-tree; its rowid is an ordinary column. */
	ck_assert_int_eq(q_int(st, "SELECT wr FROM pragma_table_list WHERE name = 'participants'"),
	                 1);
	ck_assert_int_eq(q_int(st, "SELECT count(*) FROM sqlite_schema "
	                           "WHERE name = 'sqlite_autoindex_participants_1'"),
	                 0);
	/* 007: an event's seq comes from the log; the task row keeps no counter. */
	ck_assert_int_eq(q_int(st, "SELECT count(*) FROM pragma_table_info('tasks') "
	                           "WHERE name = 'last_seq'"),
	                 0);
	ck_assert_int_eq(q_int(st, "SELECT strict FROM pragma_table_list "
	                           "WHERE name = 'participant_task_counts'"),
	                 1);
	/* Every table of 002 cascades from tasks (directly or through another table). */
	ck_assert_int_eq(q_int(st, "SELECT count(*) FROM pragma_table_list t, "
	                           "pragma_foreign_key_list(t.name) f WHERE t.name IN "
	                           "('channels', 'channel_messages', 'help_requests', "
	                           "'plan_steps', 'a2ui_registry', 'push_configs', 'push_outbox') "
	                           "AND f.\"table\" = 'tasks' AND f.on_delete = 'CASCADE'"),
	                 7);
	th_store_close(st);
}
END_TEST

START_TEST(test_store1_sync_full_option)
{
	struct th_store_opts o = {.path = dbpath, .sync_full = 1, .busy_timeout_ms = 100};
	struct th_store *st = NULL;
	struct th_error e;
	ck_assert_int_eq(th_store_open(&o, &st, &e), TH_OK);
	ck_assert_int_eq(q_int(st, "PRAGMA synchronous"), 2); /* FULL */
	th_store_close(st);
}
END_TEST

START_TEST(test_store1_reopen_is_idempotent)
{
	struct th_store *st = open_store();
	begin(st);
	add_task(st, "t1");
	commit(st);
	th_store_close(st);

	st = open_store();
	ck_assert_int_eq(q_int(st, "PRAGMA user_version"), th_store_schema_version());
	struct th_task_row r;
	struct th_error e;
	ck_assert_int_eq(th_store_task_get(st, "t1", &r, &e), TH_OK);
	ck_assert_str_eq(r.id, "t1");
	th_task_row_free(&r);
	th_store_close(st);
}
END_TEST

START_TEST(test_store1_newer_schema_is_refused)
{
	struct th_store *st = open_store();
	char sql[64];
	snprintf(sql, sizeof sql, "PRAGMA user_version = %d", th_store_schema_version() + 1);
	ck_assert_int_eq(sqlite3_exec(th_store_db(st), sql, NULL, NULL, NULL), SQLITE_OK);
	th_store_close(st);

	struct th_error e;
	ck_assert_int_ne(try_open(&e), TH_OK);
	ck_assert_ptr_nonnull(strstr(e.msg, dbpath));
	char v[16];
	snprintf(v, sizeof v, "%d", th_store_schema_version() + 1);
	ck_assert_msg(strstr(e.msg, v) != NULL, "message lacks db version: %s", e.msg);
	snprintf(v, sizeof v, "(%d)", th_store_schema_version());
	ck_assert_msg(strstr(e.msg, v) != NULL, "message lacks binary version: %s", e.msg);
}
END_TEST

static void make_foreign_db(const char *sql)
{
	char dir[300];
	snprintf(dir, sizeof dir, "%s/db", tmpdir);
	ck_assert_int_eq(mkdir(dir, 0700), 0);
	sqlite3 *db = NULL;
	ck_assert_int_eq(sqlite3_open(dbpath, &db), SQLITE_OK);
	ck_assert_int_eq(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(db);
}

START_TEST(test_store1_foreign_application_id_is_refused)
{
	make_foreign_db("PRAGMA application_id = 42; CREATE TABLE x(a)");
	struct th_error e;
	ck_assert_int_ne(try_open(&e), TH_OK);
	ck_assert_msg(strstr(e.msg, dbpath) != NULL, "message lacks path: %s", e.msg);
	ck_assert_ptr_nonnull(strstr(e.msg, "42"));
	/* Nothing of ours was written into it. */
	sqlite3 *db = NULL;
	ck_assert_int_eq(sqlite3_open(dbpath, &db), SQLITE_OK);
	sqlite3_stmt *s = NULL;
	ck_assert_int_eq(sqlite3_prepare_v2(db, "SELECT count(*) FROM sqlite_schema", -1, &s, NULL),
	                 SQLITE_OK);
	ck_assert_int_eq(sqlite3_step(s), SQLITE_ROW);
	ck_assert_int_eq(sqlite3_column_int(s, 0), 1);
	sqlite3_finalize(s);
	sqlite3_close(db);
}
END_TEST

START_TEST(test_store1_unmarked_foreign_db_is_refused)
{
	/* application_id 0 but a schema already there: some other program's file. */
	make_foreign_db("CREATE TABLE tasks(a)");
	struct th_error e;
	ck_assert_int_ne(try_open(&e), TH_OK);
	ck_assert_ptr_nonnull(strstr(e.msg, dbpath));
}
END_TEST

START_TEST(test_lim3_non_sqlite_file_is_refused_without_crash)
{
	char dir[300];
	snprintf(dir, sizeof dir, "%s/db", tmpdir);
	ck_assert_int_eq(mkdir(dir, 0700), 0);
	FILE *f = fopen(dbpath, "w");
	ck_assert_ptr_nonnull(f);
	for (int i = 0; i < 200; i++)
		fputs("this is not a database at all\n", f);
	fclose(f);
	struct th_error e;
	ck_assert_int_ne(try_open(&e), TH_OK);
	ck_assert_ptr_nonnull(strstr(e.msg, dbpath));
}
END_TEST

START_TEST(test_store1_open_without_path_is_einval)
{
	struct th_store_opts o = {.path = NULL};
	struct th_store *st = (struct th_store *)1;
	struct th_error e;
	ck_assert_int_eq(th_store_open(&o, &st, &e), TH_EINVAL);
	ck_assert_ptr_null(st);
}
END_TEST

/* ---- transactions ------------------------------------------------------------------- */

START_TEST(test_store1_rollback_leaves_nothing_commit_keeps)
{
	struct th_store *st = open_store();
	struct th_error e;
	th_store_rollback(st); /* no transaction: harmless */
	begin(st);
	add_task(st, "gone");
	int64_t seq = 0;
	ck_assert_int_eq(th_test_event_append(st, "gone", "task", TH_ENDS_NONE, "{}", &seq, &e),
	                 TH_OK);
	th_store_rollback(st);
	struct th_task_row r;
	ck_assert_int_eq(th_store_task_get(st, "gone", &r, &e), TH_ENOTFOUND);
	ck_assert_int_eq(q_int(st, "SELECT count(*) FROM events"), 0);
	ck_assert_int_eq(q_int(st, "SELECT count(*) FROM participants"), 0);

	begin(st);
	add_task(st, "kept");
	commit(st);
	ck_assert_int_eq(th_store_task_get(st, "kept", &r, &e), TH_OK);
	th_task_row_free(&r);
	/* After commit no transaction stays open. */
	ck_assert_int_ne(sqlite3_get_autocommit(th_store_db(st)), 0);
	th_store_close(st);
}
END_TEST

START_TEST(test_store1_nested_begin_is_an_error_not_a_crash)
{
	struct th_store *st = open_store();
	struct th_error e;
	begin(st);
	ck_assert_int_eq(th_store_begin(st, &e), TH_EINTERNAL);
	th_store_rollback(st);
	ck_assert_int_ne(sqlite3_get_autocommit(th_store_db(st)), 0);
	th_store_close(st);
}
END_TEST

/* ---- events ----------------------------------------------------------------------------- */

START_TEST(test_stream3_event_seq_gap_free_per_task)
{
	struct th_store *st = open_store();
	struct th_error e;
	begin(st);
	add_task(st, "a");
	add_task(st, "b");
	int64_t seq;
	const char *order[] = {"a", "b", "a", "a", "b"};
	const int64_t want[] = {1, 1, 2, 3, 2};
	for (int i = 0; i < 5; i++) {
		char json[32];
		snprintf(json, sizeof json, "{\"n\":%d}", i);
		ck_assert_int_eq(
		    th_test_event_append(st, order[i], "status", TH_ENDS_NONE, json, &seq, &e),
		    TH_OK);
		ck_assert_int_eq(seq, want[i]);
	}
	ck_assert_int_eq(th_test_event_append(st, "nope", "status", TH_ENDS_NONE, "{}", &seq, &e),
	                 TH_ENOTFOUND);
	commit(st);
	ck_assert_int_eq(q_int(st, "SELECT count(*) FROM events"), 5); /* the refused one: none */

	struct th_task_row r;
	ck_assert_int_eq(th_store_task_get(st, "a", &r, &e), TH_OK);
	ck_assert_int_eq(r.last_seq, 3);
	th_task_row_free(&r);

	struct th_event *ev;
	size_t n;
	ck_assert_int_eq(th_store_events_since(st, "a", 1, 0, NULL, &ev, &n, &e), TH_OK);
	ck_assert_uint_eq(n, 2);
	ck_assert_int_eq(ev[0].seq, 2);
	ck_assert_str_eq(ev[0].json, "{\"n\":2}");
	ck_assert_str_eq(ev[0].kind, "status");
	ck_assert_int_eq(ev[1].seq, 3);
	ck_assert_str_eq(ev[1].json, "{\"n\":3}");
	th_events_free(ev, n);

	ck_assert_int_eq(th_store_events_since(st, "a", 0, 1, NULL, &ev, &n, &e), TH_OK);
	ck_assert_uint_eq(n, 1);
	ck_assert_int_eq(ev[0].seq, 1);
	th_events_free(ev, n);

	ck_assert_int_eq(th_store_events_since(st, "a", 3, 0, NULL, &ev, &n, &e), TH_OK);
	ck_assert_uint_eq(n, 0);
	th_events_free(ev, n);

	ck_assert_int_eq(th_store_events_since(st, "b", 0, 0, NULL, &ev, &n, &e), TH_OK);
	ck_assert_uint_eq(n, 2);
	ck_assert_int_eq(ev[0].seq, 1);
	ck_assert_int_eq(ev[1].seq, 2);
	ck_assert_str_eq(ev[1].json, "{\"n\":4}");
	th_events_free(ev, n);
	th_store_close(st);
}
END_TEST

START_TEST(test_stream3_event_append_outside_transaction_is_refused)
{
	struct th_store *st = open_store();
	struct th_error e;
	begin(st);
	add_task(st, "a");
	commit(st);
	ck_assert_int_ne(th_test_event_append(st, "a", "status", TH_ENDS_NONE, "{}", NULL, &e),
	                 TH_OK);
	ck_assert_int_eq(q_int(st, "SELECT count(*) FROM events"), 0);
	th_store_close(st);
}
END_TEST

#define PER_PROC 200

/* One worker: its own connection, opened after the fork (never carried across it). */
static int worker_append(void)
{
	struct th_store_opts o = {.path = dbpath, .busy_timeout_ms = 5000};
	struct th_store *st = NULL;
	struct th_error e;
	if (th_store_open(&o, &st, &e) != TH_OK) {
		fprintf(stderr, "worker open: %s\n", e.msg);
		return 2;
	}
	/* Whichever worker comes first creates the task. */
	if (th_store_begin(st, &e) != TH_OK)
		return 3;
	struct th_task_row r;
	if (th_store_task_get(st, "shared", &r, &e) == TH_OK) {
		th_task_row_free(&r);
	} else {
		struct th_task_in t = {0};
		t.id = "shared";
		t.context_id = "c";
		t.state = 2;
		t.created_by = "w";
		if (th_store_task_insert(st, &t, &e) != TH_OK)
			return 4;
	}
	if (th_store_commit(st, &e) != TH_OK)
		return 5;
	for (int i = 0; i < PER_PROC; i++) {
		char json[64];
		snprintf(json, sizeof json, "{\"pid\":%d,\"i\":%d}", (int)getpid(), i);
		if (th_store_begin(st, &e) != TH_OK) {
			fprintf(stderr, "worker begin: %s %s\n", th_err_name(e.code), e.msg);
			return 6;
		}
		if (th_test_event_append(st, "shared", "status", TH_ENDS_NONE, json, NULL, &e) !=
		    TH_OK) {
			fprintf(stderr, "worker append: %s\n", e.msg);
			return 7;
		}
		if (th_store_commit(st, &e) != TH_OK) {
			fprintf(stderr, "worker commit: %s %s\n", th_err_name(e.code), e.msg);
			return 8;
		}
	}
	th_store_close(st);
	return 0;
}

START_TEST(test_store1_lim3_two_processes_gap_free_seq_no_busy)
{
	pid_t kids[2];
	for (int k = 0; k < 2; k++) {
		kids[k] = fork();
		ck_assert_int_ge(kids[k], 0);
		if (kids[k] == 0)
			_exit(worker_append());
	}
	for (int k = 0; k < 2; k++) {
		int status = 0;
		ck_assert_int_eq(waitpid(kids[k], &status, 0), kids[k]);
		ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		              "worker %d failed (status %d)", k, status);
	}
	struct th_store *st = open_store();
	ck_assert_int_eq(q_int(st, "SELECT count(*) FROM events WHERE task_id = 'shared'"),
	                 2 * PER_PROC);
	ck_assert_int_eq(q_int(st, "SELECT count(DISTINCT seq) FROM events"), 2 * PER_PROC);
	ck_assert_int_eq(q_int(st, "SELECT min(seq) FROM events"), 1);
	ck_assert_int_eq(q_int(st, "SELECT max(seq) FROM events"), 2 * PER_PROC);
	ck_assert_int_eq(q_int(st, "SELECT max(seq) FROM events WHERE task_id = 'shared'"),
	                 2 * PER_PROC);
	/* Both workers really interleaved on one task. */
	ck_assert_int_eq(q_int(st, pgdb[0] != '\0'
	                               ? "SELECT count(DISTINCT json::jsonb->>'pid') FROM events"
	                               : "SELECT count(DISTINCT json_extract(json, '$.pid')) "
	                                 "FROM events"),
	                 2);
	th_store_close(st);
}
END_TEST

/* Workers started together on a fresh file: one migrates, the others wait and skip. */
START_TEST(test_store1_concurrent_first_open_migrates_once)
{
	enum { N = 6 };
	pid_t kids[N];
	for (int k = 0; k < N; k++) {
		kids[k] = fork();
		ck_assert_int_ge(kids[k], 0);
		if (kids[k] == 0) {
			struct th_store_opts o = {.path = dbpath, .busy_timeout_ms = 5000};
			struct th_store *st = NULL;
			struct th_error e;
			if (th_store_open(&o, &st, &e) != TH_OK) {
				fprintf(stderr, "open: %s\n", e.msg);
				_exit(1);
			}
			th_store_close(st);
			_exit(0);
		}
	}
	for (int k = 0; k < N; k++) {
		int status = 0;
		ck_assert_int_eq(waitpid(kids[k], &status, 0), kids[k]);
		ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "worker %d failed", k);
	}
	struct th_store *st = open_store();
	ck_assert_int_eq(q_int(st, "PRAGMA user_version"), th_store_schema_version());
	ck_assert_int_eq(q_int(st, "SELECT count(*) FROM sqlite_schema WHERE name = 'tasks'"), 1);
	th_store_close(st);
}
END_TEST

START_TEST(test_stream2_data_version_moves_on_other_commit)
{
	struct th_store *a = open_store();
	struct th_store *b = open_store();
	int64_t v0 = th_store_data_version(a);
	ck_assert_int_ge(v0, 0);
	/* On PostgreSQL the version is the cluster's WAL position, which any other
	 * database's commit moves too (tests run side by side): only "not older" holds. */
	if (pgdb[0] == '\0')
		ck_assert_int_eq(th_store_data_version(a), v0);
	else
		ck_assert_int_ge(th_store_data_version(a), v0);
	begin(b);
	add_task(b, "x");
	commit(b);
	ck_assert_int_ne(th_store_data_version(a), v0);
	th_store_close(b);
	th_store_close(a);
}
END_TEST

/* ---- tasks ---------------------------------------------------------------------------- */

START_TEST(test_status4_task_roundtrip_with_sub_state_column)
{
	struct th_store *st = open_store();
	struct th_error e;
	begin(st);
	add_task(st, "p");
	struct th_task_in r = {0};
	r.id = "t1";
	r.context_id = "ctx";
	r.state = 1;
	r.status_ms = 1700000000123;
	r.status_message_json = "{\"role\":\"ROLE_AGENT\"}";
	r.name = "Write report";
	r.goal = "a report";
	r.ext_json = "{\"k\":1}";
	r.created_by = "alice";
	r.parent_id = "p";
	r.created_ms = 1700000000000;
	r.updated_ms = 1700000000001;
	ck_assert_int_eq(th_store_task_insert(st, &r, &e), TH_OK);
	ck_assert_int_eq(th_store_task_insert(st, &r, &e), TH_EINVAL);
	ck_assert_ptr_nonnull(strstr(e.msg, "duplicate"));

	struct th_task_row g;
	ck_assert_int_eq(th_store_task_get(st, "t1", &g, &e), TH_OK);
	ck_assert_str_eq(g.context_id, "ctx");
	ck_assert_int_eq(g.state, 1);
	ck_assert_ptr_null(g.sub_state);
	ck_assert_ptr_null(g.status_meta_json);
	ck_assert_str_eq(g.status_message_json, "{\"role\":\"ROLE_AGENT\"}");
	ck_assert_int_eq(g.status_ms, 1700000000123);
	ck_assert_str_eq(g.name, "Write report");
	ck_assert_str_eq(g.goal, "a report");
	ck_assert_str_eq(g.ext_json, "{\"k\":1}");
	ck_assert_str_eq(g.created_by, "alice");
	ck_assert_str_eq(g.parent_id, "p");
	ck_assert_int_eq(g.created_ms, 1700000000000);
	ck_assert_int_eq(g.updated_ms, 1700000000001);
	ck_assert_int_eq(g.last_seq, 0);
	th_task_row_free(&g);

	struct th_task_row s = {0};
	s.id = (char *)(uintptr_t) "t1";
	s.state = 6;
	s.sub_state = (char *)(uintptr_t) "awaiting-answer";
	s.status_meta_json =
	    (char *)(uintptr_t) "{\"sub_state\":\"awaiting-answer\","
	                        "\"participant_id\":\"bob\",\"request_id\":\"r1\"}";
	s.status_ms = 1700000001000;
	ck_assert_int_eq(th_store_task_set_status(st, &s, &e), TH_OK);
	struct th_task_in xi = {.id = "t2", .context_id = "ctx", .state = 2, .created_by = "alice"};
	struct th_task_row x = {0};
	x.id = (char *)(uintptr_t) "t2";
	x.context_id = (char *)(uintptr_t) "ctx";
	x.state = 2;
	x.created_by = (char *)(uintptr_t) "alice";
	ck_assert_int_eq(th_store_task_insert(st, &xi, &e), TH_OK);
	x.state = 6;
	x.sub_state = (char *)(uintptr_t) "awaiting-next-message";
	x.status_meta_json = (char *)(uintptr_t) "{\"sub_state\":\"awaiting-next-message\"}";
	ck_assert_int_eq(th_store_task_set_status(st, &x, &e), TH_OK);
	commit(st);

	ck_assert_int_eq(th_store_task_get(st, "t1", &g, &e), TH_OK);
	ck_assert_int_eq(g.state, 6);
	ck_assert_str_eq(g.sub_state, "awaiting-answer");
	ck_assert_ptr_nonnull(strstr(g.status_meta_json, "\"bob\""));
	ck_assert_int_eq(g.status_ms, 1700000001000);
	ck_assert_str_eq(g.name, "Write report"); /* untouched by set_status */
	th_task_row_free(&g);

	/* What an operator sees with sqlite3. */
	char *t = q_text(st, "SELECT state || '|' || sub_state FROM tasks WHERE id = 't1'");
	ck_assert_str_eq(t, "TASK_STATE_INPUT_REQUIRED|awaiting-answer");
	free(t);
	t = q_text(st, "SELECT waiting_for || '|' || since FROM waiting_tasks WHERE id = 't1'");
	ck_assert_str_eq(t, "bob|2023-11-14T22:13:21.000Z");
	free(t);
	t = q_text(st, "SELECT waiting_for || '|' || sub_state FROM waiting_tasks WHERE id = 't2'");
	ck_assert_str_eq(t, "next message from any participant|awaiting-next-message");
	free(t);
	ck_assert_int_eq(q_int(st, "SELECT count(*) FROM waiting_tasks"), 2);

	/* Leaving INPUT_REQUIRED clears the sub-state; a sub-state outside it is refused. */
	begin(st);
	x.state = 2;
	x.sub_state = NULL;
	x.status_meta_json = NULL;
	ck_assert_int_eq(th_store_task_set_status(st, &x, &e), TH_OK);
	x.sub_state = (char *)(uintptr_t) "awaiting-answer";
	ck_assert_int_eq(th_store_task_set_status(st, &x, &e), TH_EINVAL);
	x.state = 6;
	x.sub_state = (char *)(uintptr_t) "thinking";
	ck_assert_int_eq(th_store_task_set_status(st, &x, &e), TH_EINVAL);
	x.state = 99;
	ck_assert_int_eq(th_store_task_set_status(st, &x, &e), TH_EINVAL);
	x.id = (char *)(uintptr_t) "missing";
	x.state = 2;
	x.sub_state = NULL;
	ck_assert_int_eq(th_store_task_set_status(st, &x, &e), TH_ENOTFOUND);

	struct th_task_row ext = {0};
	ext.id = (char *)(uintptr_t) "t1";
	ext.name = (char *)(uintptr_t) "Renamed";
	ext.goal = (char *)(uintptr_t) "new goal";
	ext.ext_json = (char *)(uintptr_t) "{\"k\":2}";
	ck_assert_int_eq(th_store_task_set_ext(st, &ext, &e), TH_OK);
	commit(st);
	ck_assert_int_eq(q_int(st, "SELECT count(*) FROM waiting_tasks"), 1);
	ck_assert_int_eq(th_store_task_get(st, "t1", &g, &e), TH_OK);
	ck_assert_str_eq(g.name, "Renamed");
	ck_assert_str_eq(g.goal, "new goal");
	ck_assert_str_eq(g.ext_json, "{\"k\":2}");
	ck_assert_str_eq(g.sub_state, "awaiting-answer"); /* untouched by set_ext */
	th_task_row_free(&g);
	ck_assert_int_eq(th_store_task_get(st, "nope", &g, &e), TH_ENOTFOUND);
	th_store_close(st);
}
END_TEST

static void list(struct th_store *st, const struct th_list_query *q, struct th_task_row **rows,
                 size_t *n, int64_t *total)
{
	struct th_error e;
	th_err err = th_store_task_list(st, q, rows, n, total, &e);
	ck_assert_msg(err == TH_OK, "list: %s", e.msg);
}

START_TEST(test_stream5_list_filters_order_cursor_total)
{
	struct th_store *st = open_store();
	begin(st);
	/* status_ms ties (300) so the id breaks them. */
	add_task_at(st, "t1", "c1", 2, 100, "alice");
	add_task_at(st, "t2", "c1", 6, 300, "alice");
	add_task_at(st, "t3", "c2", 2, 300, "alice");
	add_task_at(st, "t4", "c1", 3, 200, "alice");
	add_task_at(st, "t5", "c2", 2, 500, "alice");
	add_task_at(st, "t6", "c1", 2, 400, "alice");
	add_task_at(st, "t7", "c1", 2, 300, "alice");
	add_task_at(st, "b1", "c1", 2, 999, "bob");
	commit(st);
	const char *order[] = {"t5", "t6", "t7", "t3", "t2", "t4", "t1"};

	struct th_list_query q = {.participant = "alice", .status_after_ms = -1, .limit = 3};
	struct th_task_row *rows;
	size_t n, seen = 0;
	int64_t total;
	for (int page = 0; page < 5; page++) {
		list(st, &q, &rows, &n, &total);
		ck_assert_int_eq(total, 7);
		for (size_t i = 0; i < n; i++) {
			ck_assert_uint_lt(seen, 7);
			ck_assert_str_eq(rows[i].id, order[seen]);
			seen++;
		}
		if (n == 0) {
			th_task_rows_free(rows, n);
			break;
		}
		static char cursor[16];
		snprintf(cursor, sizeof cursor, "%s", rows[n - 1].id);
		q.cursor_id = cursor;
		q.cursor_ms = rows[n - 1].status_ms;
		th_task_rows_free(rows, n);
	}
	ck_assert_uint_eq(seen, 7);

	struct th_list_query c2 = {
	    .participant = "alice", .context_id = "c2", .status_after_ms = -1, .limit = 50};
	list(st, &c2, &rows, &n, &total);
	ck_assert_int_eq(total, 2);
	ck_assert_uint_eq(n, 2);
	ck_assert_str_eq(rows[0].id, "t5");
	ck_assert_str_eq(rows[1].id, "t3");
	th_task_rows_free(rows, n);

	struct th_list_query working = {
	    .participant = "alice", .state = 2, .status_after_ms = -1, .limit = 2};
	list(st, &working, &rows, &n, &total);
	ck_assert_int_eq(total, 5); /* t1 t3 t5 t6 t7, though only 2 returned */
	ck_assert_uint_eq(n, 2);
	th_task_rows_free(rows, n);

	struct th_list_query after = {.participant = "alice", .status_after_ms = 300, .limit = 50};
	list(st, &after, &rows, &n, &total);
	ck_assert_int_eq(total, 5); /* >= 300: t5 t6 t7 t3 t2 */
	ck_assert_uint_eq(n, 5);
	th_task_rows_free(rows, n);

	struct th_list_query bob = {.participant = "bob", .status_after_ms = -1, .limit = 50};
	list(st, &bob, &rows, &n, &total);
	ck_assert_int_eq(total, 1);
	ck_assert_uint_eq(n, 1);
	ck_assert_str_eq(rows[0].id, "b1");
	th_task_rows_free(rows, n);

	struct th_list_query nobody = {
	    .participant = "mallory", .status_after_ms = -1, .limit = 50};
	list(st, &nobody, &rows, &n, &total);
	ck_assert_int_eq(total, 0);
	ck_assert_uint_eq(n, 0);
	th_task_rows_free(rows, n);

	struct th_error e;
	struct th_list_query none = {.participant = NULL, .limit = 5};
	ck_assert_int_eq(th_store_task_list(st, &none, &rows, &n, &total, &e), TH_EINVAL);

	/* STREAM-5: a page is one range of an index in list order: no scan of a table and
	 * no sort, and a later page starts its range at the cursor, so no page costs more
	 * as the participant's tasks grow or the page lies deeper. */
	static const char *const pages[] = {"", "AND (p.status_ms, p.task_id) < (5, 'x') "};
	for (size_t k = 0; k < 2; k++) {
		char sql[400];
		snprintf(sql, sizeof sql,
		         "EXPLAIN QUERY PLAN SELECT t.id FROM participants p JOIN tasks t ON "
		         "t.id = p.task_id WHERE p.participant_id = 'alice' AND p.participant_id "
		         "<> 'tiny-harness' AND p.tenant = '' %sORDER BY p.status_ms DESC, "
		         "p.task_id DESC LIMIT 51",
		         pages[k]);
		sqlite3_stmt *s = NULL;
		ck_assert_int_eq(sqlite3_prepare_v2(th_store_db(st), sql, -1, &s, NULL), SQLITE_OK);
		int bounded = k == 0;
		while (sqlite3_step(s) == SQLITE_ROW) {
			const char *detail = (const char *)sqlite3_column_text(s, 3);
			ck_assert_msg(strncmp(detail, "SCAN", 4) != 0, "unindexed: %s", detail);
			ck_assert_msg(strstr(detail, "TEMP B-TREE") == NULL, "sorted: %s", detail);
			bounded |= strstr(detail, "(status_ms,task_id)<(?,?)") != NULL;
		}
		sqlite3_finalize(s);
		ck_assert_msg(bounded, "a later page does not start its range at the cursor");
	}
	th_store_close(st);
}
END_TEST

/* STREAM-5: the list follows each task's status time (kept on the participations by a
 * trigger), and the unfiltered totalSize is the participant's kept count: added once per
 * task whatever role changes follow, never for the harness itself, and dropped with a
 * purged task. */
START_TEST(test_stream5_list_follows_status_and_kept_count)
{
	struct th_store *st = open_store();
	struct th_error e;
	begin(st);
	add_task_at(st, "a", "c", 2, 100, "alice");
	add_task_at(st, "b", "c", 2, 200, "alice");
	add_task_at(st, "h", "c", 2, 300, "tiny-harness");
	struct th_participant_in again = {.id = "alice", .kind = "human", .role = "admin"};
	ck_assert_int_eq(th_store_participant_put(st, "a", &again, &e), TH_OK);
	ck_assert_int_eq(th_store_participant_put(st, "h", &again, &e), TH_OK);
	commit(st);
	ck_assert_int_eq(q_int(st, "SELECT tasks FROM participant_task_counts "
	                           "WHERE participant_id = 'alice'"),
	                 3);
	ck_assert_int_eq(q_int(st, "SELECT count(*) FROM participant_task_counts "
	                           "WHERE participant_id = 'tiny-harness'"),
	                 0);
	struct th_list_query q = {.participant = "alice", .status_after_ms = -1, .limit = 10};
	struct th_task_row *rows;
	size_t n;
	int64_t total;
	list(st, &q, &rows, &n, &total);
	ck_assert_int_eq(total, 3);
	ck_assert_uint_eq(n, 3);
	ck_assert_str_eq(rows[0].id, "h");
	ck_assert_str_eq(rows[2].id, "a");
	th_task_rows_free(rows, n);

	/* A new status moves task a to the front. */
	struct th_task_row x = {0};
	x.id = (char *)(uintptr_t) "a";
	x.state = 3; /* COMPLETED */
	x.status_ms = 400;
	x.updated_ms = 1;
	begin(st);
	ck_assert_int_eq(th_store_task_set_status(st, &x, &e), TH_OK);
	commit(st);
	list(st, &q, &rows, &n, &total);
	ck_assert_uint_eq(n, 3);
	ck_assert_str_eq(rows[0].id, "a");
	ck_assert_int_eq(rows[0].status_ms, 400);
	th_task_rows_free(rows, n);
	struct th_list_query after = {.participant = "alice", .status_after_ms = 350, .limit = 10};
	list(st, &after, &rows, &n, &total);
	ck_assert_int_eq(total, 1);
	ck_assert_uint_eq(n, 1);
	th_task_rows_free(rows, n);

	/* Purging the ended task drops it from the count. */
	int64_t purged = 0;
	begin(st);
	ck_assert_int_eq(th_store_purge(st, 10, 0, &purged, &e), TH_OK);
	commit(st);
	ck_assert_int_eq(purged, 1);
	list(st, &q, &rows, &n, &total);
	ck_assert_int_eq(total, 2);
	ck_assert_uint_eq(n, 2);
	th_task_rows_free(rows, n);
	/* The harness's own participant lists nothing (ID-6). */
	struct th_list_query me = {
	    .participant = "tiny-harness", .status_after_ms = -1, .limit = 10};
	list(st, &me, &rows, &n, &total);
	ck_assert_int_eq(total, 0);
	ck_assert_uint_eq(n, 0);
	th_task_rows_free(rows, n);
	th_store_close(st);
}
END_TEST

/* ---- participants -------------------------------------------------------------------- */

START_TEST(test_id_participants_put_role_order_and_strangers)
{
	struct th_store *st = open_store();
	struct th_error e;
	begin(st);
	add_task(st, "t"); /* alice, assignee */
	struct th_participant_in bob = {
	    .id = "bob", .kind = "agent", .role = "watcher", .display_name = "Bob"};
	struct th_participant_in carol = {.id = "carol", .kind = "human", .role = "reporter"};
	ck_assert_int_eq(th_store_participant_put(st, "t", &bob, &e), TH_OK);
	ck_assert_int_eq(th_store_participant_put(st, "t", &carol, &e), TH_OK);
	bob.role = "admin";
	ck_assert_int_eq(th_store_participant_put(st, "t", &bob, &e), TH_OK);
	carol.role = "boss";
	ck_assert_int_eq(th_store_participant_put(st, "t", &carol, &e), TH_EINVAL);
	ck_assert_int_eq(th_store_participant_put(st, "no-task", &bob, &e), TH_ENOTFOUND);
	commit(st);

	char *role = NULL;
	ck_assert_int_eq(th_store_participant_role(st, "t", "bob", &role, &e), TH_OK);
	ck_assert_str_eq(role, "admin");
	free(role);
	ck_assert_int_eq(th_store_participant_role(st, "t", "carol", &role, &e), TH_OK);
	ck_assert_str_eq(role, "reporter");
	free(role);
	ck_assert_int_eq(th_store_participant_role(st, "t", "mallory", &role, &e), TH_ENOTFOUND);
	ck_assert_ptr_null(role);

	struct th_participant *ps;
	size_t n;
	ck_assert_int_eq(th_store_participants(st, "t", &ps, &n, &e), TH_OK);
	ck_assert_uint_eq(n, 3);
	ck_assert_str_eq(ps[0].id, "alice");
	ck_assert_str_eq(ps[0].display_name, "");
	ck_assert_str_eq(ps[1].id, "bob");
	ck_assert_str_eq(ps[1].kind, "agent");
	ck_assert_str_eq(ps[1].role, "admin");
	ck_assert_str_eq(ps[1].display_name, "Bob");
	ck_assert_str_eq(ps[2].id, "carol");
	th_participants_free(ps, n);
	th_store_close(st);
}
END_TEST

/* SCALE-1, TASK-4: a new task's participants go in two to a statement, numbered in the
 * order given, with the task's status time and tenant, as the upsert would put them; a
 * participant listed twice is refused by name before anything is sent. */
START_TEST(test_scale1_new_task_participants_two_rows_a_statement)
{
	struct th_store *st = open_store();
	struct th_error e;
	begin(st);
	struct th_task_in r = {.id = "n",
	                       .context_id = "ctx-n",
	                       .state = 2,
	                       .status_ms = 4242,
	                       .name = "n",
	                       .goal = "g",
	                       .ext_json = "{}",
	                       .created_by = "alice",
	                       .tenant = "acme"};
	ck_assert_msg(th_store_task_insert(st, &r, &e) == TH_OK, "%s", e.msg);
	const struct th_participant_in three[] = {
	    {.id = "alice", .kind = "human", .role = "reporter", .display_name = "Alice"},
	    {.id = "tiny-harness", .kind = "agent", .role = "assignee"},
	    {.id = "bob", .kind = "agent", .role = "watcher", .display_name = "Bob"},
	};
	const struct th_participant_in twice[] = {three[0], three[2], three[0]};
	ck_assert_int_eq(th_store_participants_add_new(st, "n", twice, 3, &e), TH_EINVAL);
	ck_assert_msg(strstr(e.msg, "alice is listed twice") != NULL, "%s", e.msg);
	struct th_participant_in bad = {.id = "carol", .kind = "robot", .role = "watcher"};
	ck_assert_int_eq(th_store_participants_add_new(st, "n", &bad, 1, &e), TH_EINVAL);
	ck_assert_msg(th_store_participants_add_new(st, "n", three, 3, &e) == TH_OK, "%s", e.msg);
	commit(st);

	struct th_participant *ps;
	size_t n;
	ck_assert_int_eq(th_store_participants(st, "n", &ps, &n, &e), TH_OK);
	ck_assert_uint_eq(n, 3);
	for (size_t i = 0; i < n; i++) {
		ck_assert_str_eq(ps[i].id, three[i].id);
		ck_assert_str_eq(ps[i].kind, three[i].kind);
		ck_assert_str_eq(ps[i].role, three[i].role);
		ck_assert_str_eq(ps[i].display_name,
		                 three[i].display_name != NULL ? three[i].display_name : "");
	}
	th_participants_free(ps, n);
	ck_assert_int_eq(q_int(st, "SELECT count(*) FROM participants WHERE task_id = 'n' AND "
	                           "status_ms = 4242 AND tenant = 'acme'"),
	                 3);
	ck_assert_int_eq(q_int(st, "SELECT rowid FROM participants WHERE task_id = 'n' AND "
	                           "participant_id = 'bob'"),
	                 3);
	/* The upsert numbers a later participant after them. */
	struct th_participant_in dave = {.id = "dave", .kind = "human", .role = "watcher"};
	begin(st);
	ck_assert_int_eq(th_store_participant_put(st, "n", &dave, &e), TH_OK);
	ck_assert_int_eq(th_store_participants_add_new(st, "none", &dave, 1, &e), TH_ENOTFOUND);
	commit(st);
	ck_assert_int_eq(q_int(st, "SELECT rowid FROM participants WHERE task_id = 'n' AND "
	                           "participant_id = 'dave'"),
	                 4);
	th_store_close(st);
}
END_TEST

/* ---- messages and artifacts ---------------------------------------------------------- */

START_TEST(test_stream5_message_append_duplicate_and_history_limit)
{
	struct th_store *st = open_store();
	struct th_error e;
	begin(st);
	add_task(st, "t");
	for (int i = 1; i <= 5; i++) {
		char id[16], json[64];
		snprintf(id, sizeof id, "m%d", i);
		snprintf(json, sizeof json, "{\"messageId\":\"m%d\"}", i);
		ck_assert_int_eq(
		    th_test_message_append(st, "t", id, "ROLE_USER", "alice", json, &e), TH_OK);
	}
	ck_assert_int_eq(th_test_message_append(st, "t", "m3", "ROLE_USER", "alice",
	                                        "{\"messageId\":\"m3\",\"dup\":1}", &e),
	                 TH_EINVAL);
	ck_assert_ptr_nonnull(strstr(e.msg, "duplicate"));
	ck_assert_int_eq(th_test_message_append(st, "missing", "m1", "ROLE_USER", "alice",
	                                        "{\"messageId\":\"m1\"}", &e),
	                 TH_ENOTFOUND);
	commit(st);
	ck_assert_int_eq(th_store_message_count(st, "t"), 5);
	ck_assert_int_eq(q_int(st, "SELECT count(*) FROM messages WHERE json LIKE '%\"dup\"%'"), 0);
	ck_assert_int_eq(q_int(st, "SELECT max(pos) FROM messages WHERE task_id = 't'"), 5);
	ck_assert_int_eq(th_store_message_exists(st, "t", "m4"), 1);
	ck_assert_int_eq(th_store_message_exists(st, "t", "m9"), 0);

	json_object *h = NULL;
	ck_assert_int_eq(th_store_history(st, "t", -1, &h, &e), TH_OK);
	ck_assert_uint_eq(json_object_array_length(h), 5);
	ck_assert_str_eq(json_object_get_string(
	                     json_object_object_get(json_object_array_get_idx(h, 0), "messageId")),
	                 "m1");
	json_object_put(h);
	ck_assert_int_eq(th_store_history(st, "t", 2, &h, &e), TH_OK);
	ck_assert_uint_eq(json_object_array_length(h), 2);
	ck_assert_str_eq(json_object_get_string(
	                     json_object_object_get(json_object_array_get_idx(h, 0), "messageId")),
	                 "m4");
	ck_assert_str_eq(json_object_get_string(
	                     json_object_object_get(json_object_array_get_idx(h, 1), "messageId")),
	                 "m5");
	json_object_put(h);
	ck_assert_int_eq(th_store_history(st, "t", 0, &h, &e), TH_OK);
	ck_assert_uint_eq(json_object_array_length(h), 0);
	json_object_put(h);

	char *tid = NULL;
	ck_assert_int_eq(th_store_task_by_first_message(st, "", "alice", "m1", &tid, &e), TH_OK);
	ck_assert_str_eq(tid, "t");
	free(tid);
	ck_assert_int_eq(th_store_task_by_first_message(st, "", "alice", "m2", &tid, &e),
	                 TH_ENOTFOUND);
	ck_assert_int_eq(th_store_task_by_first_message(st, "", "bob", "m1", &tid, &e),
	                 TH_ENOTFOUND);
	th_store_close(st);
}
END_TEST

START_TEST(test_artifact_put_replaces_and_keeps_order)
{
	struct th_store *st = open_store();
	struct th_error e;
	begin(st);
	add_task(st, "t");
	ck_assert_int_eq(th_store_artifact_put(st, "t", "a1", "{\"v\":1}", &e), TH_OK);
	ck_assert_int_eq(th_store_artifact_put(st, "t", "a2", "{\"v\":2}", &e), TH_OK);
	ck_assert_int_eq(th_store_artifact_put(st, "t", "a1", "{\"v\":3}", &e), TH_OK);
	ck_assert_int_eq(th_store_artifact_put(st, "none", "a1", "{}", &e), TH_ENOTFOUND);
	commit(st);
	json_object *a = NULL;
	ck_assert_int_eq(th_store_artifacts(st, "t", &a, &e), TH_OK);
	ck_assert_uint_eq(json_object_array_length(a), 2);
	ck_assert_int_eq(
	    json_object_get_int(json_object_object_get(json_object_array_get_idx(a, 0), "v")), 3);
	ck_assert_int_eq(
	    json_object_get_int(json_object_object_get(json_object_array_get_idx(a, 1), "v")), 2);
	json_object_put(a);
	ck_assert_int_eq(th_store_artifacts(st, "none", &a, &e), TH_OK);
	ck_assert_uint_eq(json_object_array_length(a), 0);
	json_object_put(a);
	th_store_close(st);
}
END_TEST

/* ---- sub-tasks and turns ---------------------------------------------------------------- */

START_TEST(test_ctl4_unresolved_subtasks_follow_child_state)
{
	struct th_store *st = open_store();
	struct th_error e;
	begin(st);
	add_task(st, "parent");
	add_task(st, "c1");
	add_task(st, "c2");
	ck_assert_int_eq(th_store_subtask_link(st, "parent", "c1", &e), TH_OK);
	ck_assert_int_eq(th_store_subtask_link(st, "parent", "c2", &e), TH_OK);
	ck_assert_int_eq(th_store_subtask_link(st, "parent", "c2", &e), TH_EINVAL);
	ck_assert_int_eq(th_store_subtask_link(st, "parent", "ghost", &e), TH_ENOTFOUND);
	commit(st);

	struct th_subtask_ref *r;
	size_t n;
	ck_assert_int_eq(th_store_subtasks(st, "parent", 1, &r, &n, &e), TH_OK);
	ck_assert_uint_eq(n, 2);
	ck_assert_str_eq(r[0].id, "c1");
	ck_assert_str_eq(r[0].name, "name of task");
	ck_assert_int_eq(r[0].state, 2);
	ck_assert_str_eq(r[1].id, "c2");
	th_subtask_refs_free(r, n);

	begin(st);
	struct th_task_row done = {.id = (char *)(uintptr_t) "c1", .state = 3};
	ck_assert_int_eq(th_store_task_set_status(st, &done, &e), TH_OK);
	commit(st);
	ck_assert_int_eq(th_store_subtasks(st, "parent", 1, &r, &n, &e), TH_OK);
	ck_assert_uint_eq(n, 1);
	ck_assert_str_eq(r[0].id, "c2");
	th_subtask_refs_free(r, n);
	ck_assert_int_eq(th_store_subtasks(st, "parent", 0, &r, &n, &e), TH_OK);
	ck_assert_uint_eq(n, 2);
	ck_assert_int_eq(r[0].state, 3);
	th_subtask_refs_free(r, n);

	begin(st);
	ck_assert_int_eq(th_store_subtask_resolve(st, "c2", &e), TH_OK);
	ck_assert_int_eq(th_store_subtask_resolve(st, "parent", &e), TH_ENOTFOUND);
	commit(st);
	ck_assert_int_eq(th_store_subtasks(st, "parent", 1, &r, &n, &e), TH_OK);
	ck_assert_uint_eq(n, 0);
	th_subtask_refs_free(r, n);
	th_store_close(st);
}
END_TEST

START_TEST(test_ctl3_turn_start_cut_is_cut_finish)
{
	struct th_store *st = open_store();
	struct th_error e;
	begin(st);
	add_task(st, "t");
	add_task(st, "other");
	struct th_lease l1, l2, l3;
	int64_t before = th_now_ms();
	ck_assert_int_eq(th_store_turn_start(st, "t", "m1", 4242, 30000, &l1, &e), TH_OK);
	ck_assert_int_eq(th_store_turn_start(st, "t", "m2", 4242, 30000, &l2, &e), TH_OK);
	ck_assert_int_eq(th_store_turn_start(st, "other", "m3", 1, 1000, &l3, &e), TH_OK);
	ck_assert_int_ne(l1.turn_id, l2.turn_id);
	ck_assert_int_eq(l1.epoch, TH_LEASE_FIRST);
	struct th_lease ghost = {-1, -1};
	ck_assert_int_eq(th_store_turn_start(st, "ghost", "m", 1, 1000, &ghost, &e), TH_ENOTFOUND);
	ck_assert_int_eq(ghost.turn_id, 0);
	ck_assert_int_eq(th_store_turn_finish(st, &l2, TH_TURN_DONE, NULL, &e), TH_OK);
	commit(st);

	struct th_turn_row r;
	ck_assert_int_eq(th_store_turn_get(st, l1.turn_id, &r, &e), TH_OK);
	ck_assert_int_eq(r.state, TH_TURN_RUNNING);
	ck_assert_int_eq(r.worker_pid, 4242);
	ck_assert_int_eq(r.attempts, 1);
	ck_assert_int_ge(r.lease_until_ms, before + 30000);
	ck_assert_str_eq(r.task_id, "t");
	ck_assert_str_eq(r.message_id, "m1");
	ck_assert_int_eq(r.cut, 0);
	ck_assert_ptr_null(r.error);
	th_turn_row_free(&r);
	ck_assert_int_eq(th_store_turn_is_cut(st, l1.turn_id), 0);

	/* Another connection (another worker) cuts; the first sees it. */
	struct th_store *other = open_store();
	begin(other);
	int n = -1;
	ck_assert_int_eq(th_store_turns_cut(other, "t", &n, &e), TH_OK);
	commit(other);
	ck_assert_int_eq(n, 1); /* m2's turn was done already */
	th_store_close(other);
	ck_assert_int_eq(th_store_turn_is_cut(st, l1.turn_id), 1);
	ck_assert_int_eq(th_store_turn_is_cut(st, l2.turn_id), 0);
	ck_assert_int_eq(th_store_turn_is_cut(st, l3.turn_id), 0);
	ck_assert_int_eq(th_store_turn_get(st, l1.turn_id, &r, &e), TH_OK);
	ck_assert_int_eq(r.state, TH_TURN_CUT);
	ck_assert_int_eq(r.cut, 1);
	th_turn_row_free(&r);

	begin(st);
	ck_assert_int_eq(th_store_turn_finish(st, &l3, TH_TURN_FAILED, "model timed out", &e),
	                 TH_OK);
	ck_assert_int_eq(th_store_turn_finish(st, &l3, 17, NULL, &e), TH_EINVAL);
	struct th_lease nobody = {999999, 1};
	ck_assert_int_eq(th_store_turn_finish(st, &nobody, TH_TURN_DONE, NULL, &e), TH_ENOTFOUND);
	commit(st);
	ck_assert_int_eq(th_store_turn_get(st, l3.turn_id, &r, &e), TH_OK);
	ck_assert_int_eq(r.state, TH_TURN_FAILED);
	ck_assert_int_eq(r.attempts, 1);
	ck_assert_str_eq(r.error, "model timed out");
	th_turn_row_free(&r);
	ck_assert_int_eq(th_store_turn_get(st, 999999, &r, &e), TH_ENOTFOUND);
	ck_assert_int_eq(th_store_turn_is_cut(st, 999999), 0);
	th_store_close(st);
}
END_TEST

/* TURN-6: a holder whose lease was taken over (it stalled past its expiry) changes
 * nothing about the turn: neither renewal nor finish, from its own connection; the new
 * holder is never disturbed; a give-up of a turn taken over meanwhile does nothing. */
START_TEST(test_turn6_stale_lease_holder_writes_nothing)
{
	struct th_store *st = open_store();    /* the stalled worker */
	struct th_store *other = open_store(); /* the one that takes over */
	struct th_error e;
	begin(st);
	add_task(st, "t");
	struct th_lease old;
	ck_assert_int_eq(th_store_turn_start(st, "t", "m1", 100, 1000, &old, &e), TH_OK);
	commit(st);
	int64_t later = th_now_ms() + 60000; /* seen from after the lease ran out */

	struct th_turn_row seen = {0};
	struct th_turn_row *v;
	size_t n;
	ck_assert_int_eq(th_store_turns_expired(other, "t", later, 0, 0, &v, &n, &e), TH_OK);
	ck_assert_uint_eq(n, 1);
	seen = v[0];
	free(v);
	struct th_lease fresh;
	begin(other);
	ck_assert_int_eq(th_store_turn_takeover(other, old.turn_id, 200, 60000, later, &fresh, &e),
	                 TH_OK);
	commit(other);
	ck_assert_int_eq(fresh.turn_id, old.turn_id);
	ck_assert_int_eq(fresh.epoch, old.epoch + 1);

	/* The old holder wakes up: nothing it tries is applied. */
	int held = -1;
	begin(st);
	ck_assert_int_eq(th_store_turn_hold(st, &old, 1000, &held, &e), TH_OK);
	ck_assert_int_eq(held, 0);
	ck_assert_int_eq(th_store_turn_finish(st, &old, TH_TURN_CUT, NULL, &e), TH_EINVAL);
	ck_assert_int_eq(th_store_turn_finish(st, &old, TH_TURN_DONE, NULL, &e), TH_EINVAL);
	commit(st);
	/* A recoverer that saw the turn expired before the takeover cannot fail it now. */
	int done = -1;
	begin(st);
	ck_assert_int_eq(th_store_turn_give_up(st, &seen, later - 30000, "stopped", &done, &e),
	                 TH_OK);
	ck_assert_int_eq(done, 0);
	commit(st);

	struct th_turn_row r;
	ck_assert_int_eq(th_store_turn_get(st, old.turn_id, &r, &e), TH_OK);
	ck_assert_int_eq(r.state, TH_TURN_RUNNING);
	ck_assert_int_eq(r.attempts, fresh.epoch);
	ck_assert_int_eq(r.worker_pid, 200);
	ck_assert_int_ge(r.lease_until_ms, th_now_ms() + 50000);
	ck_assert_int_eq(r.cut, 0);
	th_turn_row_free(&r);

	/* The new holder renews and finishes. */
	begin(other);
	ck_assert_int_eq(th_store_turn_hold(other, &fresh, 1000, &held, &e), TH_OK);
	ck_assert_int_eq(held, 1);
	ck_assert_int_eq(th_store_turn_finish(other, &fresh, TH_TURN_DONE, NULL, &e), TH_OK);
	commit(other);
	/* Finished: nobody holds it any more, and the old epoch stays refused. */
	begin(st);
	ck_assert_int_eq(th_store_turn_hold(st, &fresh, 1000, &held, &e), TH_OK);
	ck_assert_int_eq(held, 0);
	ck_assert_int_eq(th_store_turn_finish(st, &old, TH_TURN_FAILED, "late", &e), TH_EINVAL);
	commit(st);
	ck_assert_int_eq(th_store_turn_get(st, old.turn_id, &r, &e), TH_OK);
	ck_assert_int_eq(r.state, TH_TURN_DONE);
	ck_assert_ptr_null(r.error);
	th_turn_row_free(&r);
	th_turn_row_free(&seen);
	th_store_close(other);
	th_store_close(st);
}
END_TEST

/* TURN-4: giving up the last attempt of a turn still expired fails it exactly once. */
START_TEST(test_turn4_give_up_only_while_expired)
{
	struct th_store *st = open_store();
	struct th_error e;
	begin(st);
	add_task(st, "t");
	struct th_lease l;
	ck_assert_int_eq(th_store_turn_start(st, "t", "m1", 100, 1000, &l, &e), TH_OK);
	commit(st);
	struct th_turn_row *v;
	size_t n;
	int64_t now = th_now_ms();
	/* Not expired yet: not listed, and a give-up is refused. */
	ck_assert_int_eq(th_store_turns_expired(st, "t", now, 0, 0, &v, &n, &e), TH_OK);
	ck_assert_uint_eq(n, 0);
	free(v);
	int64_t later = now + 60000;
	ck_assert_int_eq(th_store_turns_expired(st, "t", later, 0, 0, &v, &n, &e), TH_OK);
	ck_assert_uint_eq(n, 1);
	int done = -1;
	begin(st);
	ck_assert_int_eq(th_store_turn_give_up(st, &v[0], now, "early", &done, &e), TH_OK);
	ck_assert_int_eq(done, 0);
	ck_assert_int_eq(th_store_turn_give_up(st, &v[0], later, "worker died", &done, &e), TH_OK);
	ck_assert_int_eq(done, 1);
	ck_assert_int_eq(th_store_turn_give_up(st, &v[0], later, "again", &done, &e), TH_OK);
	ck_assert_int_eq(done, 0);
	commit(st);
	th_turn_rows_free(v, n);
	struct th_turn_row r;
	ck_assert_int_eq(th_store_turn_get(st, l.turn_id, &r, &e), TH_OK);
	ck_assert_int_eq(r.state, TH_TURN_FAILED);
	ck_assert_str_eq(r.error, "worker died");
	th_turn_row_free(&r);
	/* Other tasks' turns are not listed for a task. */
	ck_assert_int_eq(th_store_turns_expired(st, "nope", later, later, 0, &v, &n, &e), TH_OK);
	ck_assert_uint_eq(n, 0);
	free(v);
	th_store_close(st);
}
END_TEST

/* STORE-5, decision-032: the store's connections write their WAL through the
 * tiny-harness VFS, which keeps a transaction's frames in a buffer until its commit
 * frame. Every commit must still be in the file when it returns: another connection
 * reads each one at once (a commit frame left in the buffer makes its read fail), a
 * transaction larger than the buffer (4 MiB) comes out whole, and the files alone, opened
 * again, hold everything. */
/* STORE-7: a large transaction that spilled pages into the WAL and was rolled back
 * leaves nothing behind that another connection's later commits could meet: a second
 * connection commits 300 tasks at the offsets the refused transaction had used, then the
 * first connection writes, reads, checkpoints and closes; every committed task is there
 * and integrity_check says ok. Written after a VFS that buffered WAL frames wrote the
 * rolled-back frames over the other connection's commit (issue 26). */
START_TEST(test_store7_large_rollback_then_other_writer_loses_nothing)
{
	struct th_store *a = open_store(), *b = open_store();
	char id[64];
	begin(a);
	add_task(a, "before-1");
	commit(a);
	/* A WAL that was just reset, as after any checkpoint: the refused transaction's
	 * pages are read back from the database file, not from the WAL. */
	int log = -1, done = -1;
	ck_assert_int_eq(sqlite3_wal_checkpoint_v2(th_store_db(a), NULL, SQLITE_CHECKPOINT_TRUNCATE,
	                                           &log, &done),
	                 SQLITE_OK);
	ck_assert_int_eq(log, 0);
	/* ~6 MiB in one transaction: more than the page cache, so SQLite spills pages into
	 * the WAL before the transaction ends; then it is refused. */
	static char big[3001];
	memset(big, 'r', sizeof big - 1);
	char ext[3100];
	snprintf(ext, sizeof ext, "{\"description\":\"%s\"}", big);
	begin(a);
	for (int i = 0; i < 2000; i++) {
		struct th_task_in r = {.state = 1, .status_ms = 1, .name = "n", .goal = "g"};
		snprintf(id, sizeof id, "refused-%d", i);
		r.id = id;
		r.context_id = id;
		r.ext_json = ext;
		r.created_by = "alice";
		struct th_error e;
		ck_assert_msg(th_store_task_insert(a, &r, &e) == TH_OK, "%s", e.msg);
	}
	th_store_rollback(a);
	/* Another connection commits where the refused frames were. */
	for (int i = 0; i < 300; i++) {
		snprintf(id, sizeof id, "other-%d", i);
		begin(b);
		add_task(b, id);
		commit(b);
	}
	/* The first connection goes on: a write, a read, a checkpoint, close. */
	begin(a);
	add_task(a, "after-1");
	commit(a);
	ck_assert_int_eq(q_int(a, "SELECT count(*) FROM tasks"), 302);
	(void)th_store_wal_tend(a);
	th_store_close(a);
	ck_assert_int_eq(q_int(b, "SELECT count(*) FROM tasks WHERE id LIKE 'other-%'"), 300);
	ck_assert_int_eq(q_int(b, "SELECT count(*) FROM tasks WHERE id LIKE 'refused-%'"), 0);
	char *ok = q_text(b, "PRAGMA integrity_check");
	ck_assert_str_eq(ok, "ok");
	free(ok);
	th_store_close(b);
	/* And from the files alone. */
	struct th_store *c = open_store();
	ck_assert_int_eq(q_int(c, "SELECT count(*) FROM tasks"), 302);
	ok = q_text(c, "PRAGMA integrity_check");
	ck_assert_str_eq(ok, "ok");
	free(ok);
	th_store_close(c);
}
END_TEST

/* STORE-5: a WAL grown past TH_WAL_CHECKPOINT_FRAMES is checkpointed and truncated by
 * th_store_wal_tend, unless a reader keeps using it; then it is tried again later. */
START_TEST(test_store5_wal_tend_truncates_unless_pinned)
{
	struct th_store *st = open_store();
	struct th_store *reader = open_store();
	char wal[sizeof dbpath + 8];
	snprintf(wal, sizeof wal, "%s-wal", dbpath);
	sqlite3 *db = th_store_db(st);
	ck_assert_int_eq(th_store_wal_tend(st), 0); /* nothing to do yet */
	/* A reader holds a snapshot while 20 MB (some 4,900 frames) are committed. */
	sqlite3 *rdb = th_store_db(reader);
	ck_assert_int_eq(sqlite3_exec(rdb, "BEGIN; SELECT count(*) FROM tasks", NULL, NULL, NULL),
	                 SQLITE_OK);
	ck_assert_int_eq(sqlite3_exec(db,
	                              "CREATE TABLE junk (x BLOB); "
	                              "INSERT INTO junk VALUES (randomblob(20000000))",
	                              NULL, NULL, NULL),
	                 SQLITE_OK);
	ck_assert_int_ge(th_store_wal_frames(st), TH_WAL_CHECKPOINT_FRAMES);
	struct stat sb;
	ck_assert_int_eq(stat(wal, &sb), 0);
	ck_assert_int_gt(sb.st_size, 20000000);
	/* Pinned: the try fails within its wait, and the WAL is still there. */
	int64_t t0 = th_mono_ms();
	ck_assert_int_eq(th_store_wal_tend(st), 0);
	ck_assert_int_lt(th_mono_ms() - t0, 5 * TH_WAL_TEND_WAIT_MS);
	ck_assert_int_eq(stat(wal, &sb), 0);
	ck_assert_int_gt(sb.st_size, 20000000);
	ck_assert_int_eq(sqlite3_exec(rdb, "COMMIT", NULL, NULL, NULL), SQLITE_OK);
	/* Not tried again at once after a failure. */
	ck_assert_int_eq(th_store_wal_tend(st), 0);
	usleep((TH_WAL_RETRY_MS + 50) * 1000);
	ck_assert_int_eq(th_store_wal_tend(st), 1);
	ck_assert_int_eq(stat(wal, &sb), 0);
	ck_assert_int_eq(sb.st_size, 0);
	ck_assert_int_eq(th_store_wal_frames(st), 0);
	/* Everything is in the database file now. */
	int64_t n = -1;
	sqlite3_stmt *q;
	ck_assert_int_eq(sqlite3_prepare_v2(rdb, "SELECT length(x) FROM junk", -1, &q, NULL),
	                 SQLITE_OK);
	ck_assert_int_eq(sqlite3_step(q), SQLITE_ROW);
	n = sqlite3_column_int64(q, 0);
	sqlite3_finalize(q);
	ck_assert_int_eq(n, 20000000);
	th_store_close(reader);
	th_store_close(st);
}
END_TEST

/* ---- 009: a message kept once (STORE-10) ---------------------------------------------- */

/* The whole of a text file as a new string (free), or NULL. */
static char *slurp(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (f == NULL)
		return NULL;
	char *buf = NULL;
	size_t len = 0, cap = 0, n;
	char chunk[8192];
	while ((n = fread(chunk, 1, sizeof chunk, f)) > 0) {
		if (len + n + 1 > cap) {
			cap = (len + n + 1) * 2;
			char *nb = realloc(buf, cap);
			ck_assert_ptr_nonnull(nb);
			buf = nb;
		}
		memcpy(buf + len, chunk, n);
		len += n;
	}
	fclose(f);
	if (buf != NULL)
		buf[len] = '\0';
	return buf;
}

/* 1 when text parses to a value equal (member order aside) to want. */
static int same_json(const char *text, json_object *want)
{
	json_object *got = text != NULL ? json_tokener_parse(text) : NULL;
	int eq = got != NULL && json_object_equal(got, want);
	json_object_put(got);
	return eq;
}

/* A database an older build wrote (tests/fixtures/store-vN, made by make-store.sh: three
 * tasks, a follow-up, a canceled task) is migrated on open; every history, status message
 * and event then reads as that build served it, and the migrated tasks take new messages
 * whose events are references. store-v8 is from before 009 (messages without their ids),
 * store-v13 from before 014 (rows keyed by the task's number). */
static const struct {
	const char *name;
	int packed; /* its expect.json holds events as stored (references), not as served */
} old_stores[] = {{"store-v8", 0}, {"store-v13", 1}};
/* What a StreamResponse does to streams, read from its JSON (the old readers' rule). */
static int expected_ends(json_object *sr)
{
	json_object *h = NULL;
	if (!json_object_object_get_ex(sr, "statusUpdate", &h) &&
	    !json_object_object_get_ex(sr, "task", &h))
		return TH_ENDS_NONE;
	json_object *status = json_object_object_get(h, "status");
	const char *s = json_object_get_string(json_object_object_get(status, "state"));
	if (s == NULL)
		return TH_ENDS_NONE;
	if (strcmp(s, "TASK_STATE_INPUT_REQUIRED") == 0 ||
	    strcmp(s, "TASK_STATE_AUTH_REQUIRED") == 0)
		return TH_ENDS_INTERRUPTED;
	if (strcmp(s, "TASK_STATE_COMPLETED") == 0 || strcmp(s, "TASK_STATE_FAILED") == 0 ||
	    strcmp(s, "TASK_STATE_CANCELED") == 0 || strcmp(s, "TASK_STATE_REJECTED") == 0)
		return TH_ENDS_TERMINAL;
	return TH_ENDS_NONE;
}

/* decision-061: messages kept for the lean-row test below: what the caller passes, and
 * whether the stored row leaves its leading messageId and role out. */
static const struct lean_msg {
	const char *id, *role, *json;
	int lean;
} lean_msgs[] = {
    /* The usual order: stored without them. A messageId deeper down stays. */
    {"m1", "ROLE_USER",
     "{\"messageId\":\"m1\",\"role\":\"ROLE_USER\",\"parts\":[{\"text\":\"a/b \\\"q\\\"\"}],"
     "\"metadata\":{\"messageId\":\"inner\",\"x\":[{\"messageId\":1}]}}",
     1},
    /* Other orders, a role other than the column's, nothing after the two: whole. */
    {"m2", "ROLE_AGENT", "{\"role\":\"ROLE_AGENT\",\"messageId\":\"m2\",\"parts\":[]}", 0},
    {"m3", "ROLE_USER", "{\"messageId\":\"m3\",\"role\":\"ROLE_AGENT\",\"parts\":[]}", 0},
    {"m4", "ROLE_USER", "{\"messageId\":\"m4\",\"role\":\"ROLE_USER\"}", 0},
    /* An id that JSON escapes. */
    {"m\"5/\xc3\xa9", "ROLE_AGENT",
     "{\"messageId\":\"m\\\"5/\xc3\xa9\",\"role\":\"ROLE_AGENT\",\"parts\":[{\"text\":\"r\"}]}", 1},
};
#define N_LEAN (sizeof lean_msgs / sizeof lean_msgs[0])

/* lean_msgs[i] as a reader gets it: with the task's ids at the end, or (ids 0) as
 * packed. New text (free). */
static char *lean_full(size_t i, int ids)
{
	const char *j = lean_msgs[i].json;
	char *out = malloc(strlen(j) + 64);
	ck_assert_ptr_nonnull(out);
	sprintf(out, "%.*s%s}", (int)strlen(j) - 1, j,
	        ids ? ",\"taskId\":\"t\",\"contextId\":\"ctx-1\"" : "");
	return out;
}

/* Walker of th_store_history_back: appends each text and a newline. */
static int lean_walk(void *arg, const char *text, struct th_error *e)
{
	(void)e;
	char *acc = arg;
	strcat(acc, text);
	strcat(acc, "\n");
	return 0;
}

/* STORE-10: the store packs a message from the caller's object without changing it (the
 * caller goes on to answer with it): taskId and contextId are dropped from the stored
 * text only. */
START_TEST(test_store10_message_append_leaves_the_callers_message_as_it_was)
{
	struct th_store *st = open_store();
	struct th_error e;
	begin(st);
	add_task(st, "t");
	const char *text = "{\"messageId\":\"m1\",\"role\":\"ROLE_USER\",\"parts\":[],"
	                   "\"taskId\":\"t\",\"contextId\":\"ctx-1\"}";
	json_object *msg = json_tokener_parse(text);
	ck_assert_int_eq(th_store_message_append(st, "t", "m1", "ROLE_USER", "alice", msg, &e),
	                 TH_OK);
	commit(st);
	ck_assert_str_eq(th_json_text(msg), text);
	json_object_put(msg);
	char *stored = q_text(st, "SELECT json FROM message_rows WHERE message_id = 'm1'");
	ck_assert_str_eq(stored, "{\"parts\":[]}");
	free(stored);
	th_store_close(st);
}
END_TEST

START_TEST(test_store10_message_rows_lean_read_byte_for_byte)
{
	struct th_store *st = open_store();
	struct th_error e;
	begin(st);
	add_task(st, "t");
	for (size_t i = 0; i < N_LEAN; i++)
		ck_assert_int_eq(th_test_message_append(st, "t", lean_msgs[i].id, lean_msgs[i].role,
		                                        "alice", lean_msgs[i].json, &e),
		                 TH_OK);
	/* Every message the store keeps has a messageId: the rule has no third case. */
	ck_assert_int_eq(
	    th_test_message_append(st, "t", "m9", "ROLE_USER", "alice", "{\"parts\":[]}", &e),
	    TH_EINVAL);
	ck_assert_msg(strstr(e.msg, "messageId") != NULL, "%s", e.msg);
	commit(st);
	/* A row as every build before decision-061 wrote it. */
	ck_assert_int_eq(q_int(st,
	                       "INSERT INTO message_rows (task_num, pos, message_id, role, sender, "
	                       "json, created_ms) VALUES ((SELECT num FROM tasks WHERE id = 't'), "
	                       "6, 'm6', 'ROLE_USER', 'alice', "
	                       "'{\"messageId\":\"m6\",\"role\":\"ROLE_USER\",\"parts\":[]}', 1) "
	                       "RETURNING pos"),
	                 6);
	ck_assert_int_eq(q_int(st, "SELECT count(*) FROM messages WHERE task_id = 't' "
	                           "AND json NOT LIKE '{\"messageId\":%'"),
	                 3);
	char *m1 = q_text(st, "SELECT json FROM messages WHERE message_id = 'm1'");
	ck_assert_str_eq(m1,
	                 "{\"parts\":[{\"text\":\"a/b \\\"q\\\"\"}],\"metadata\":{\"messageId\":"
	                 "\"inner\",\"x\":[{\"messageId\":1}]}}");
	free(m1);

	/* Every reader gives each message as written, byte for byte. */
	struct th_buf want;
	th_buf_init(&want);
	th_buf_puts(&want, "[");
	for (size_t i = 0; i <= N_LEAN; i++) {
		char *f = i < N_LEAN
		              ? lean_full(i, 1)
		              : strdup("{\"messageId\":\"m6\",\"role\":\"ROLE_USER\",\"parts\":[],"
		                       "\"taskId\":\"t\",\"contextId\":\"ctx-1\"}");
		th_buf_printf(&want, "%s%s", i > 0 ? "," : "", f);
		free(f);
	}
	th_buf_puts(&want, "]");
	json_object *h = NULL;
	ck_assert_int_eq(th_store_history_raw(st, "t", -1, &h, &e), TH_OK);
	ck_assert_str_eq(th_json_text(h), want.data);
	json_object_put(h);
	ck_assert_int_eq(th_store_history(st, "t", -1, &h, &e), TH_OK);
	ck_assert_str_eq(th_json_text(h), want.data);
	json_object_put(h);
	ck_assert_int_eq(th_store_history_range(st, "t", 0, 6, 1, &h, &e), TH_OK);
	ck_assert_str_eq(th_json_text(h), want.data);
	json_object_put(h);
	for (size_t i = 0; i < N_LEAN; i++) {
		char *f = lean_full(i, 1);
		ck_assert_int_eq(th_store_message_get(st, "t", lean_msgs[i].id, &h, &e), TH_OK);
		ck_assert_str_eq(th_json_text(h), f);
		json_object_put(h);
		free(f);
	}
	char walked[4096] = "";
	ck_assert_int_eq(th_store_history_back(st, "t", 2, lean_walk, walked, &e), TH_OK);
	ck_assert_str_eq(walked,
	                 "{\"messageId\":\"m6\",\"role\":\"ROLE_USER\",\"parts\":[]}\n"
	                 "{\"messageId\":\"m\\\"5/\xc3\xa9\",\"role\":\"ROLE_AGENT\",\"parts\":[{"
	                 "\"text\":\"r\"}]}\n{\"messageId\":\"m4\",\"role\":\"ROLE_USER\"}\n"
	                 "{\"messageId\":\"m3\",\"role\":\"ROLE_AGENT\",\"parts\":[]}\n"
	                 "{\"role\":\"ROLE_AGENT\",\"messageId\":\"m2\",\"parts\":[]}\n"
	                 "{\"messageId\":\"m1\",\"role\":\"ROLE_USER\",\"parts\":[{\"text\":\"a/b "
	                 "\\\"q\\\"\"}],\"metadata\":{\"messageId\":\"inner\",\"x\":[{"
	                 "\"messageId\":1}]}}\n");

	/* A status and an event that carry a lean message keep references and read back
	 * whole. */
	char *full5 = lean_full(4, 1);
	char *pos5 = q_text(st, "SELECT pos FROM messages WHERE role = 'ROLE_AGENT' AND "
	                        "json LIKE '{\"parts\":[{\"text\":\"r\"}]}'");
	ck_assert_str_eq(pos5, "5");
	free(pos5);
	/* Move m6 away so that m5 is the newest, as a status's message is. */
	ck_assert_int_eq(
	    q_int(st, "DELETE FROM message_rows WHERE message_id = 'm6' RETURNING pos"), 6);
	struct th_task_row r;
	ck_assert_int_eq(th_store_task_get(st, "t", &r, &e), TH_OK);
	free(r.status_message_json);
	r.status_message_json = strdup(full5);
	begin(st);
	ck_assert_int_eq(th_store_task_set_status(st, &r, &e), TH_OK);
	char event[512];
	snprintf(event, sizeof event, "{\"message\":%s}", full5);
	int64_t seq = 0;
	ck_assert_int_eq(th_test_event_append(st, "t", "message", TH_ENDS_NONE, event, &seq, &e),
	                 TH_OK);
	commit(st);
	th_task_row_free(&r);
	ck_assert_int_eq(q_int(st, "SELECT status_pos FROM tasks WHERE id = 't'"), 5);
	char *ev_stored = q_text(st, "SELECT json FROM events WHERE task_id = 't'");
	ck_assert_str_eq(ev_stored, "{\"message\":{\"$message\":5}}");
	free(ev_stored);
	ck_assert_int_eq(th_store_task_get(st, "t", &r, &e), TH_OK);
	ck_assert_str_eq(r.status_message_json, full5);
	th_task_row_free(&r);
	struct th_list_query q = {.participant = "alice", .status_after_ms = -1};
	struct th_task_row *rows = NULL;
	size_t n = 0;
	int64_t total = 0;
	ck_assert_int_eq(th_store_task_list(st, &q, &rows, &n, &total, &e), TH_OK);
	ck_assert_int_eq(n, 1);
	ck_assert_str_eq(rows[0].status_message_json, full5);
	th_task_rows_free(rows, n);
	struct th_event *ev = NULL;
	ck_assert_int_eq(th_store_events_since(st, "t", 0, 0, NULL, &ev, &n, &e), TH_OK);
	ck_assert_int_eq(n, 1);
	ck_assert_str_eq(ev[0].json, event);
	th_events_free(ev, n);

	/* A snapshot whose history and status message are the stored messages as text
	 * already (th_json_raw, as a view puts them) keeps references too, and the event
	 * object itself is not changed by storing it. */
	json_object *hist = json_object_new_array();
	for (size_t i = 0; i < N_LEAN; i++) {
		char *f = lean_full(i, 1);
		th_json_push(hist, th_json_raw(f));
		free(f);
	}
	json_object *status = json_object_new_object();
	th_json_put(status, "state", json_object_new_string("TASK_STATE_WORKING"));
	th_json_put(status, "message", th_json_raw(full5));
	json_object *task = json_object_new_object();
	th_json_put(task, "id", json_object_new_string("t"));
	th_json_put(task, "contextId", json_object_new_string("ctx-1"));
	th_json_put(task, "status", status);
	th_json_put(task, "history", hist);
	json_object *snap = json_object_new_object();
	th_json_put(snap, "task", task);
	char *before = strdup(th_json_text(snap));
	begin(st);
	ck_assert_int_eq(th_store_event_append(st, "t", "task", TH_ENDS_NONE, snap, &seq, &e),
	                 TH_OK);
	commit(st);
	ck_assert_str_eq(th_json_text(snap), before);
	json_object_put(snap);
	char sql[128];
	snprintf(sql, sizeof sql, "SELECT json FROM events WHERE task_id = 't' AND seq = %lld",
	         (long long)seq);
	ev_stored = q_text(st, sql);
	ck_assert_str_eq(ev_stored, "{\"task\":{\"status\":{\"state\":\"TASK_STATE_WORKING\","
	                            "\"message\":{\"$message\":5}},"
	                            "\"history\":{\"$messages\":[1,5]}}}");
	free(ev_stored);
	ck_assert_int_eq(th_store_events_since(st, "t", seq - 1, 0, NULL, &ev, &n, &e), TH_OK);
	ck_assert_int_eq(n, 1);
	ck_assert_str_eq(ev[0].json, before);
	th_events_free(ev, n);
	free(before);
	free(full5);
	th_buf_free(&want);
	th_store_close(st);
}
END_TEST

/* decision-068: a status timestamp the row's created_ms gives back is stored as a number,
 * the milliseconds before it; any other timestamp stays text; every one reads back as
 * written. */
START_TEST(test_store10_event_timestamps_lean_read_byte_for_byte)
{
	struct th_store *st = open_store();
	struct th_error e;
	char now[TH_TS_LEN + 1], past[TH_TS_LEN + 1], later[TH_TS_LEN + 1];
	int64_t t0 = th_now_ms();
	th_ts_format(t0 - 1500, past);
	th_ts_format(t0 + 3600000, later); /* after the row: not stored as a number */
	begin(st);
	add_task(st, "t");
	th_ts_format(th_now_ms(), now);
	char ev[6][256];
	snprintf(ev[0], sizeof ev[0],
	         "{\"statusUpdate\":{\"taskId\":\"t\",\"contextId\":\"ctx-1\",\"status\":{"
	         "\"state\":\"TASK_STATE_WORKING\","
	         "\"timestamp\":\"%s\"}}}",
	         now);
	snprintf(ev[1], sizeof ev[1],
	         "{\"task\":{\"id\":\"t\",\"contextId\":\"ctx-1\",\"status\":{\"state\":\"TASK_"
	         "STATE_SUBMITTED\","
	         "\"timestamp\":\"%s\"},\"kind\":\"x\"}}",
	         past);
	snprintf(ev[2], sizeof ev[2],
	         "{\"statusUpdate\":{\"taskId\":\"t\",\"contextId\":\"ctx-1\",\"status\":{"
	         "\"state\":\"TASK_STATE_WORKING\","
	         "\"timestamp\":\"%s\"}}}",
	         later);
	snprintf(ev[3], sizeof ev[3],
	         "{\"statusUpdate\":{\"taskId\":\"t\",\"contextId\":\"ctx-1\",\"status\":{"
	         "\"timestamp\":\"2026-12-05T20:59:19Z\","
	         "\"state\":\"TASK_STATE_WORKING\"}}}");
	snprintf(ev[4], sizeof ev[4],
	         "{\"statusUpdate\":{\"taskId\":\"t\",\"contextId\":\"ctx-1\",\"status\":{"
	         "\"state\":\"TASK_STATE_WORKING\","
	         "\"timestamp\":\"2026-12-05T21:59:19.447+01:00\"}}}");
	snprintf(ev[5], sizeof ev[5],
	         "{\"artifactUpdate\":{\"taskId\":\"t\",\"contextId\":\"ctx-1\",\"artifact\":{"
	         "\"timestamp\":\"%s\"}}}",
	         now);
	for (size_t i = 0; i < 6; i++)
		ck_assert_int_eq(
		    th_test_event_append(st, "t", "status", TH_ENDS_NONE, ev[i], NULL, &e), TH_OK);
	commit(st);
	/* The first two as numbers (reading them back below checks the value); the one
	 * after its row, the ones in another form and an artifact's member of the same name
	 * as text. */
	ck_assert_int_eq(q_int(st, "SELECT count(*) FROM event_rows WHERE seq <= 2 AND json "
	                           "LIKE '%\"status\":{%\"timestamp\":%' AND json NOT LIKE "
	                           "'%\"timestamp\":\"%'"),
	                 2);
	ck_assert_int_eq(q_int(st, "SELECT count(*) FROM event_rows WHERE json LIKE "
	                           "'%\"timestamp\":\"%'"),
	                 4);
	struct th_event *out = NULL;
	size_t n = 0;
	ck_assert_int_eq(th_store_events_since(st, "t", 0, 0, NULL, &out, &n, &e), TH_OK);
	ck_assert_int_eq(n, 6);
	for (size_t i = 0; i < n; i++)
		ck_assert_str_eq(out[i].json, ev[i]);
	th_events_free(out, n);
	th_store_close(st);
}
END_TEST

/* decision-075: messages for the stamped-participant test below: what the caller passes,
 * and what the row keeps (NULL: the same text, whole). */
static const struct pid_msg {
	const char *id, *json, *stored;
} pid_msgs[] = {
    /* What intake stamps, last: kept as "$pid". */
    {"p1",
     "{\"messageId\":\"p1\",\"role\":\"ROLE_USER\",\"parts\":[{\"text\":\"hi\"}],\"metadata\":{"
     "\"participant_id\":\"bob\"}}",
     "{\"parts\":[{\"text\":\"hi\"}],\"$pid\":\"bob\"}"},
    /* An id that JSON escapes. */
    {"p2",
     "{\"messageId\":\"p2\",\"role\":\"ROLE_USER\",\"parts\":[],\"metadata\":{\"participant_"
     "id\":\"b\\\"o/\\\\\xc3\xa9\"}}",
     "{\"parts\":[],\"$pid\":\"b\\\"o/\\\\\xc3\xa9\"}"},
    /* More in the metadata, the metadata not last, an id that is no string: as
     * decision-061 keeps them. */
    {"p3",
     "{\"messageId\":\"p3\",\"role\":\"ROLE_USER\",\"parts\":[],\"metadata\":{\"participant_"
     "id\":\"bob\",\"x\":1}}",
     "{\"parts\":[],\"metadata\":{\"participant_id\":\"bob\",\"x\":1}}"},
    {"p4",
     "{\"messageId\":\"p4\",\"role\":\"ROLE_USER\",\"parts\":[],\"metadata\":{\"participant_"
     "id\":\"bob\"},\"extensions\":[\"u\"]}",
     "{\"parts\":[],\"metadata\":{\"participant_id\":\"bob\"},\"extensions\":[\"u\"]}"},
    {"p5",
     "{\"messageId\":\"p5\",\"role\":\"ROLE_USER\",\"parts\":[],\"metadata\":{\"participant_"
     "id\":7}}",
     "{\"parts\":[],\"metadata\":{\"participant_id\":7}}"},
    /* A member of that name: whole, nothing to mistake. */
    {"p6",
     "{\"messageId\":\"p6\",\"role\":\"ROLE_USER\",\"parts\":[],\"$pid\":\"x\",\"metadata\":{"
     "\"participant_id\":\"bob\"}}",
     NULL},
    /* "$pid" deeper down, last: not the member. */
    {"p7",
     "{\"messageId\":\"p7\",\"role\":\"ROLE_USER\",\"parts\":[],\"metadata\":{\"a\":1,"
     "\"$pid\":\"z\"}}",
     "{\"parts\":[],\"metadata\":{\"a\":1,\"$pid\":\"z\"}}"},
    /* Not in the columns' order: whole (decision-061). */
    {"p8",
     "{\"role\":\"ROLE_USER\",\"messageId\":\"p8\",\"parts\":[],\"metadata\":{\"participant_"
     "id\":\"bob\"}}",
     NULL},
};
#define N_PID (sizeof pid_msgs / sizeof pid_msgs[0])

/* text (a JSON object's) with the task's ids before its closing brace: as a reader of
 * task "t" gets a history message. New text (free). */
static char *with_task_ids(const char *text)
{
	char *out = malloc(strlen(text) + 64);
	ck_assert_ptr_nonnull(out);
	sprintf(out, "%.*s,\"taskId\":\"t\",\"contextId\":\"ctx-1\"}", (int)strlen(text) - 1, text);
	return out;
}

START_TEST(test_store10_stamped_participant_lean_read_byte_for_byte)
{
	struct th_store *st = open_store();
	struct th_error e;
	begin(st);
	add_task(st, "t");
	for (size_t i = 0; i < N_PID; i++)
		ck_assert_int_eq(th_test_message_append(st, "t", pid_msgs[i].id, "ROLE_USER", "bob",
		                                        pid_msgs[i].json, &e),
		                 TH_OK);
	commit(st);
	for (size_t i = 0; i < N_PID; i++) {
		char sql[128];
		snprintf(sql, sizeof sql, "SELECT json FROM messages WHERE message_id = '%s'",
		         pid_msgs[i].id);
		char *stored = q_text(st, sql);
		ck_assert_msg(strcmp(stored, pid_msgs[i].stored != NULL ? pid_msgs[i].stored
		                                                        : pid_msgs[i].json) == 0,
		              "STORE-10 %s is stored as %s", pid_msgs[i].id, stored);
		free(stored);
	}
	/* A row as decision-061 wrote the first one. */
	ck_assert_int_eq(q_int(st, "INSERT INTO message_rows (task_num, pos, message_id, role, "
	                           "sender, json, created_ms) VALUES ((SELECT num FROM tasks "
	                           "WHERE id = 't'), 9, 'p9', 'ROLE_USER', 'bob', '{\"parts\":[{"
	                           "\"text\":\"hi\"}],\"metadata\":{\"participant_id\":\"bob\"}}', "
	                           "1) RETURNING pos"),
	                 9);
	const char *p9 =
	    "{\"messageId\":\"p9\",\"role\":\"ROLE_USER\",\"parts\":[{\"text\":\"hi\"}],"
	    "\"metadata\":{\"participant_id\":\"bob\"}}";

	/* Every reader gives each message as written, byte for byte. */
	struct th_buf want;
	th_buf_init(&want);
	th_buf_puts(&want, "[");
	for (size_t i = 0; i <= N_PID; i++) {
		char *f = with_task_ids(i < N_PID ? pid_msgs[i].json : p9);
		th_buf_printf(&want, "%s%s", i > 0 ? "," : "", f);
		free(f);
	}
	th_buf_puts(&want, "]");
	json_object *h = NULL;
	ck_assert_int_eq(th_store_history_raw(st, "t", -1, &h, &e), TH_OK);
	ck_assert_str_eq(th_json_text(h), want.data);
	json_object_put(h);
	ck_assert_int_eq(th_store_history(st, "t", -1, &h, &e), TH_OK);
	ck_assert_str_eq(th_json_text(h), want.data);
	json_object_put(h);
	for (size_t i = 0; i < N_PID; i++) {
		char *f = with_task_ids(pid_msgs[i].json);
		ck_assert_int_eq(th_store_message_get(st, "t", pid_msgs[i].id, &h, &e), TH_OK);
		ck_assert_str_eq(th_json_text(h), f);
		json_object_put(h);
		free(f);
	}
	char walked[4096] = "";
	ck_assert_int_eq(th_store_history_back(st, "t", 3, lean_walk, walked, &e), TH_OK);
	struct th_buf back;
	th_buf_init(&back);
	th_buf_printf(&back, "%s\n", p9);
	for (size_t i = N_PID; i-- > 0;)
		th_buf_printf(&back, "%s\n", pid_msgs[i].json);
	ck_assert_str_eq(walked, back.data);
	th_buf_free(&back);

	/* An event that carries the first keeps a reference and reads back whole. */
	char *full1 = with_task_ids(pid_msgs[0].json);
	char event[512];
	snprintf(event, sizeof event, "{\"message\":%s}", full1);
	begin(st);
	ck_assert_int_eq(th_test_event_append(st, "t", "message", TH_ENDS_NONE, event, NULL, &e),
	                 TH_OK);
	commit(st);
	char *ev_stored = q_text(st, "SELECT json FROM events WHERE task_id = 't'");
	ck_assert_str_eq(ev_stored, "{\"message\":{\"$message\":1}}");
	free(ev_stored);
	struct th_event *ev = NULL;
	size_t n = 0;
	ck_assert_int_eq(th_store_events_since(st, "t", 0, 0, NULL, &ev, &n, &e), TH_OK);
	ck_assert_int_eq(n, 1);
	ck_assert_str_eq(ev[0].json, event);
	th_events_free(ev, n);
	free(full1);
	th_buf_free(&want);
	th_store_close(st);
}
END_TEST

/* decision-075: a task snapshot's task extension leaves out what its first history
 * message gives back ("$first"), and only that; th_events_since gives every snapshot
 * back byte for byte. Each case: its first message, its extension as a client gets it,
 * and the lean extension stored (NULL: no history, kept as decision-061 stores it). */
#define PS_PLAIN                                                                                   \
	"[{\"id\":\"bob\",\"kind\":\"human\",\"role\":\"reporter\",\"display_name\":\"\"},{"       \
	"\"id\":"                                                                                  \
	"\"tiny-harness\",\"kind\":\"agent\",\"role\":\"assignee\",\"display_name\":\"\"}]"
#define EXT_REST "\"parent_tasks\":[],\"sub_tasks\":[],\"plan\":null"
static const struct snap_case {
	const char *msg, *ext, *lean;
} snap_cases[] = {
    /* An echo task: all three from the message. */
    {"{\"messageId\":\"m\",\"role\":\"ROLE_USER\",\"parts\":[{\"text\":\"fix the build\"}],"
     "\"metadata\":{\"participant_id\":\"bob\"}}",
     "{\"name\":\"fix the build\",\"goal\":\"fix the build\",\"type\":null,\"description\":"
     "\"\",\"acceptance_criteria\":[],\"participants\":" PS_PLAIN "," EXT_REST "}",
     "{\"$first\":\"gnp\"}"},
    /* Texts joined by new lines around another part; the name is the first line. */
    {"{\"messageId\":\"m\",\"role\":\"ROLE_USER\",\"parts\":[{\"text\":\"line one\"},{"
     "\"data\":{\"k\":1}},{\"text\":\"line \\\"two\\\" \xc3\xa9/\"}],\"metadata\":{"
     "\"participant_id\":\"bob\"}}",
     "{\"name\":\"line one\",\"goal\":\"line one\\nline \\\"two\\\" \xc3\xa9/\",\"type\":null,"
     "\"description\":\"\",\"acceptance_criteria\":[],\"participants\":" PS_PLAIN "," EXT_REST "}",
     "{\"name\":\"line one\",\"$first\":\"gp\"}"},
    /* A goal of its own, a type, a display name: only the name (the goal). */
    {"{\"messageId\":\"m\",\"role\":\"ROLE_USER\",\"parts\":[{\"text\":\"x\"}],\"metadata\":{"
     "\"participant_id\":\"bob\"}}",
     "{\"name\":\"own goal\",\"goal\":\"own goal\",\"type\":\"bug\",\"description\":\"\","
     "\"acceptance_criteria\":[],\"participants\":[{\"id\":\"bob\",\"kind\":\"human\","
     "\"role\":\"reporter\",\"display_name\":\"Bob\"},{\"id\":\"tiny-harness\",\"kind\":"
     "\"agent\",\"role\":\"assignee\",\"display_name\":\"\"}]," EXT_REST "}",
     "{\"goal\":\"own goal\",\"type\":\"bug\",\"participants\":[{\"id\":\"bob\",\"kind\":"
     "\"human\",\"role\":\"reporter\",\"display_name\":\"Bob\"},{\"id\":\"tiny-harness\","
     "\"kind\":\"agent\",\"role\":\"assignee\"}],\"$first\":\"n\"}"},
    /* Another participant, a sender not in the metadata: not the participants. */
    {"{\"messageId\":\"m\",\"role\":\"ROLE_USER\",\"parts\":[{\"text\":\"w\"}],\"metadata\":{"
     "\"participant_id\":\"bob\"}}",
     "{\"name\":\"w\",\"goal\":\"w\",\"type\":null,\"description\":\"\",\"acceptance_"
     "criteria\":[],\"participants\":[{\"id\":\"bob\",\"kind\":\"human\",\"role\":\"reporter\","
     "\"display_name\":\"\"},{\"id\":\"tiny-harness\",\"kind\":\"agent\",\"role\":\"assignee\","
     "\"display_name\":\"\"},{\"id\":\"eve\",\"kind\":\"human\",\"role\":\"watcher\","
     "\"display_name\":\"\"}]," EXT_REST "}",
     "{\"participants\":[{\"id\":\"bob\",\"kind\":\"human\",\"role\":\"reporter\"},{\"id\":"
     "\"tiny-harness\",\"kind\":\"agent\",\"role\":\"assignee\"},{\"id\":\"eve\",\"kind\":"
     "\"human\",\"role\":\"watcher\"}],\"$first\":\"gn\"}"},
    {"{\"messageId\":\"m\",\"role\":\"ROLE_USER\",\"parts\":[{\"text\":\"v\"}]}",
     "{\"name\":\"v\",\"goal\":\"v\",\"type\":null,\"description\":\"\",\"acceptance_"
     "criteria\":[],\"participants\":" PS_PLAIN "," EXT_REST "}",
     "{\"participants\":[{\"id\":\"bob\",\"kind\":\"human\",\"role\":\"reporter\"},{\"id\":"
     "\"tiny-harness\",\"kind\":\"agent\",\"role\":\"assignee\"}],\"$first\":\"gn\"}"},
    /* No history in the snapshot: nothing to take them from. */
    {NULL,
     "{\"name\":\"n\",\"goal\":\"n\",\"type\":null,\"description\":\"\",\"acceptance_"
     "criteria\":[],\"participants\":" PS_PLAIN "," EXT_REST "}",
     "{\"name\":\"n\",\"goal\":\"n\",\"participants\":[{\"id\":\"bob\",\"kind\":\"human\","
     "\"role\":\"reporter\"},{\"id\":\"tiny-harness\",\"kind\":\"agent\",\"role\":"
     "\"assignee\"}]}"},
};
#define N_SNAP (sizeof snap_cases / sizeof snap_cases[0])

START_TEST(test_store10_snapshot_takes_name_goal_participants_from_its_message)
{
	struct th_store *st = open_store();
	struct th_error e;
	char *whole[N_SNAP + 1];
	begin(st);
	for (size_t i = 0; i < N_SNAP; i++) {
		char id[16];
		snprintf(id, sizeof id, "s%zu", i);
		add_task_at(st, id, "ctx-1", 2, 1000, "bob");
		const struct snap_case *c = &snap_cases[i];
		char *hist = NULL;
		if (c->msg != NULL) {
			ck_assert_int_eq(
			    th_test_message_append(st, id, "m", "ROLE_USER", "bob", c->msg, &e),
			    TH_OK);
			hist = malloc(strlen(c->msg) + 64);
			ck_assert_ptr_nonnull(hist);
			sprintf(hist, "%.*s,\"taskId\":\"%s\",\"contextId\":\"ctx-1\"}",
			        (int)strlen(c->msg) - 1, c->msg, id);
		}
		char text[4096];
		snprintf(text, sizeof text,
		         "{\"task\":{\"id\":\"%s\",\"contextId\":\"ctx-1\",\"status\":{\"state\":"
		         "\"TASK_STATE_WORKING\"},\"history\":[%s],\"metadata\":{\"" TH_META_TASK
		         "\":%s}}}",
		         id, hist != NULL ? hist : "", c->ext);
		free(hist);
		json_object *sr = json_tokener_parse(text);
		ck_assert_ptr_nonnull(sr);
		whole[i] = strdup(th_json_text(sr));
		ck_assert_str_eq(whole[i], text); /* the literal is json-c's own text */
		ck_assert_int_eq(th_event_record(st, id, "task", NULL, sr, &e), TH_OK);
		json_object_put(sr);
	}
	/* A snapshot as decision-061 stored the first case's: read the same. */
	add_task_at(st, "s9", "ctx-1", 2, 1000, "bob");
	ck_assert_int_eq(
	    th_test_message_append(st, "s9", "m", "ROLE_USER", "bob", snap_cases[0].msg, &e),
	    TH_OK);
	ck_assert_int_eq(
	    th_test_event_append(st, "s9", "task", TH_ENDS_NONE,
	                         "{\"task\":{\"status\":{\"state\":\"TASK_STATE_WORKING\"},"
	                         "\"history\":{\"$messages\":["
	                         "1,1]},\"metadata\":{\"$task\":{\"name\":\"fix the "
	                         "build\",\"goal\":\"fix the build\","
	                         "\"participants\":[{\"id\":\"bob\",\"kind\":\"human\",\"role\":"
	                         "\"reporter\"},{\"id\":"
	                         "\"tiny-harness\",\"kind\":\"agent\",\"role\":\"assignee\"}]}}}}",
	                         NULL, &e),
	    TH_OK);
	commit(st);
	whole[N_SNAP] = strdup(whole[0]);
	char *s9 = strstr(whole[N_SNAP], "\"s0\"");
	ck_assert_ptr_nonnull(s9);
	s9[2] = '9';
	s9 = strstr(s9 + 1, "\"s0\"");
	ck_assert_ptr_nonnull(s9);
	s9[2] = '9';
	for (size_t i = 0; i <= N_SNAP; i++) {
		char id[16], sql[128];
		snprintf(id, sizeof id, "s%zu", i < N_SNAP ? i : (size_t)9);
		snprintf(sql, sizeof sql, "SELECT json FROM events WHERE task_id = '%s'", id);
		char *stored = q_text(st, sql);
		if (i < N_SNAP) {
			char *at = strstr(stored, "\"$task\":");
			ck_assert_msg(at != NULL &&
			                  strncmp(at + 8, snap_cases[i].lean,
			                          strlen(snap_cases[i].lean)) == 0 &&
			                  strcmp(at + 8 + strlen(snap_cases[i].lean), "}}}") == 0,
			              "STORE-10 snapshot %zu is stored as %s", i, stored);
		}
		free(stored);
		struct th_event *ev = NULL;
		size_t n = 0;
		ck_assert_int_eq(th_events_since(st, id, 0, 0, &ev, &n, &e), TH_OK);
		ck_assert_int_eq(n, 1);
		ck_assert_msg(strcmp(ev[0].json, whole[i]) == 0,
		              "STORE-10 snapshot %zu reads as %s, not %s", i, ev[0].json, whole[i]);
		th_events_free(ev, n);
		free(whole[i]);
	}
	th_store_close(st);
}
END_TEST

/* decision-075: a status update's extension that says no more than its sub-state is
 * stored as that string under "$status"; any other as decision-068 stores it; each reads
 * back byte for byte, and so does a row decision-068 wrote. */
static const struct status_case {
	const char *ext, *stored;
} status_cases[] = {
    {"{\"sub_state\":\"awaiting-next-message\"}", "\"awaiting-next-message\""},
    {"{\"sub_state\":\"awaiting-answer\",\"participant_id\":\"bob\",\"request_id\":\"r1\"}", NULL},
    {"{\"sub_state\":7}", NULL},
    {"{}", NULL},
};
#define N_STATUS (sizeof status_cases / sizeof status_cases[0])

START_TEST(test_store10_status_sub_state_lean_read_byte_for_byte)
{
	struct th_store *st = open_store();
	struct th_error e;
	char whole[N_STATUS + 1][512];
	begin(st);
	add_task(st, "t");
	for (size_t i = 0; i < N_STATUS; i++) {
		snprintf(whole[i], sizeof whole[i],
		         "{\"statusUpdate\":{\"taskId\":\"t\",\"contextId\":\"ctx-1\",\"status\":{"
		         "\"state\":\"TASK_STATE_INPUT_REQUIRED\"},\"metadata\":{\"" TH_META_STATUS
		         "\":%s}}}",
		         status_cases[i].ext);
		json_object *sr = json_tokener_parse(whole[i]);
		ck_assert_ptr_nonnull(sr);
		ck_assert_str_eq(th_json_text(sr), whole[i]);
		ck_assert_int_eq(th_event_record(st, "t", "status", NULL, sr, &e), TH_OK);
		json_object_put(sr);
	}
	/* As decision-068 stored the first. */
	ck_assert_int_eq(th_test_event_append(st, "t", "status", TH_ENDS_INTERRUPTED,
	                                      "{\"statusUpdate\":{\"status\":{\"state\":\"TASK_"
	                                      "STATE_INPUT_REQUIRED\"},\"metadata\":{\"$status\":{"
	                                      "\"sub_state\":\"awaiting-next-message\"}}}}",
	                                      NULL, &e),
	                 TH_OK);
	snprintf(whole[N_STATUS], sizeof whole[N_STATUS], "%s", whole[0]);
	commit(st);
	for (size_t i = 0; i < N_STATUS; i++) {
		char sql[128], want[256];
		snprintf(sql, sizeof sql,
		         "SELECT json FROM events WHERE task_id = 't' AND seq = %zu", i + 1);
		snprintf(want, sizeof want,
		         "{\"statusUpdate\":{\"status\":{\"state\":\"TASK_STATE_INPUT_REQUIRED\"},"
		         "\"metadata\":{\"$status\":%s}}}",
		         status_cases[i].stored != NULL ? status_cases[i].stored
		                                        : status_cases[i].ext);
		char *stored = q_text(st, sql);
		ck_assert_msg(strcmp(stored, want) == 0, "STORE-10 status %zu is stored as %s", i,
		              stored);
		free(stored);
	}
	struct th_event *ev = NULL;
	size_t n = 0;
	ck_assert_int_eq(th_events_since(st, "t", 0, 0, &ev, &n, &e), TH_OK);
	ck_assert_int_eq(n, N_STATUS + 1);
	for (size_t i = 0; i < n; i++)
		ck_assert_msg(strcmp(ev[i].json, whole[i]) == 0, "STORE-10 status %zu reads as %s",
		              i, ev[i].json);
	th_events_free(ev, n);
	th_store_close(st);
}
END_TEST

START_TEST(test_store10_old_databases_read_the_same_after_migrating)
{
	const char *src = getenv("TH_SRCDIR");
	ck_assert_msg(src != NULL, "TH_SRCDIR names the source tree");
	const char *fixture = old_stores[_i].name;
	char path[512];
	snprintf(path, sizeof path, "%s/tests/fixtures/%s/store.sql", src, fixture);
	char *dump = slurp(path);
	ck_assert_msg(dump != NULL, "cannot read %s", path);
	snprintf(path, sizeof path, "%s/tests/fixtures/%s/expect.json", src, fixture);
	char *expect_text = slurp(path);
	ck_assert_msg(expect_text != NULL, "cannot read %s", path);
	json_object *expect = json_tokener_parse(expect_text);
	free(expect_text);
	ck_assert_ptr_nonnull(expect);

	char dir[300];
	snprintf(dir, sizeof dir, "%s/db", tmpdir);
	ck_assert_int_eq(mkdir(dir, 0700), 0);
	sqlite3 *db = NULL;
	ck_assert_int_eq(sqlite3_open(dbpath, &db), SQLITE_OK);
	ck_assert_int_eq(sqlite3_exec(db, dump, NULL, NULL, NULL), SQLITE_OK);
	free(dump);
	sqlite3_close(db);

	struct th_store *st = open_store();
	ck_assert_int_eq(q_int(st, "PRAGMA user_version"), th_store_schema_version());
	char *ok = q_text(st, "PRAGMA integrity_check");
	ck_assert_str_eq(ok, "ok");
	free(ok);
	/* The migration took the ids out of every stored message. */
	ck_assert_int_eq(q_int(st, "SELECT count(*) FROM messages WHERE json LIKE '%\"taskId\"%'"),
	                 0);
	struct th_error e;
	size_t ntasks = json_object_array_length(expect);
	ck_assert_int_eq(ntasks, 3);
	int ends_seen = 0;
	for (size_t i = 0; i < ntasks; i++) {
		json_object *t = json_object_array_get_idx(expect, i);
		const char *id = json_object_get_string(json_object_object_get(t, "id"));
		json_object *task = json_object_object_get(t, "task");
		json_object *want_events = json_object_object_get(t, "events");
		/* History and status message, as GetTask served them. */
		json_object *hist = NULL;
		ck_assert_int_eq(th_store_history(st, id, -1, &hist, &e), TH_OK);
		ck_assert_msg(json_object_equal(hist, json_object_object_get(task, "history")),
		              "STORE-10 history of %s differs after migrating %s: %s", id, fixture,
		              json_object_to_json_string(hist));
		json_object_put(hist);
		struct th_task_row r;
		ck_assert_int_eq(th_store_task_get(st, id, &r, &e), TH_OK);
		json_object *status = json_object_object_get(task, "status");
		ck_assert_msg(
		    same_json(r.status_message_json, json_object_object_get(status, "message")),
		    "STORE-10 status message of %s differs: %s", id, r.status_message_json);
		th_task_row_free(&r);
		/* Events, as streams and push deliveries read them. */
		struct th_event *ev = NULL;
		size_t n = 0;
		ck_assert_int_eq(th_store_events_since(st, id, 0, 0, NULL, &ev, &n, &e), TH_OK);
		ck_assert_int_eq(n, json_object_array_length(want_events));
		for (size_t k = 0; k < n; k++) {
			json_object *want = json_object_array_get_idx(want_events, k);
			char *stored = NULL;
			if (old_stores[_i].packed) {
				char q[200];
				snprintf(
				    q, sizeof q,
				    "SELECT json FROM events WHERE task_id = '%s' AND seq = %lld",
				    id, (long long)ev[k].seq);
				stored = q_text(st, q);
			}
			const char *got = stored != NULL ? stored : ev[k].json;
			ck_assert_msg(same_json(got, want), "STORE-10 event %zu of %s (%s): %s", k,
			              id, fixture, got);
			free(stored);
			/* 011 classified the old rows by the state they leave the task in. */
			ck_assert_msg(ev[k].ends == expected_ends(want),
			              "STREAM-1 event %zu of %s: ends %d after 011: %s", k, id,
			              ev[k].ends, ev[k].json);
			ends_seen |= 1 << ev[k].ends;
		}
		th_events_free(ev, n);
	}
	/* The fixture has a task waiting for its next message and a canceled one. */
	ck_assert_int_eq(ends_seen,
	                 1 << TH_ENDS_NONE | 1 << TH_ENDS_INTERRUPTED | 1 << TH_ENDS_TERMINAL);

	/* A migrated task takes a new message; the event that carries it is a reference,
	 * and reads back whole. */
	const char *id = json_object_get_string(
	    json_object_object_get(json_object_array_get_idx(expect, 0), "id"));
	char *ctx = NULL;
	char sql[200];
	snprintf(sql, sizeof sql, "SELECT context_id FROM tasks WHERE id = '%s'", id);
	ctx = q_text(st, sql);
	char msg[600];
	snprintf(msg, sizeof msg,
	         "{\"messageId\":\"after-009\",\"role\":\"ROLE_USER\",\"parts\":[{\"text\":"
	         "\"new\"}],\"taskId\":\"%s\",\"contextId\":\"%s\"}",
	         id, ctx);
	char event[800];
	snprintf(event, sizeof event, "{\"message\":%s}", msg);
	int64_t seq = 0;
	begin(st);
	ck_assert_int_eq(th_test_message_append(st, id, "after-009", "ROLE_USER", "alice", msg, &e),
	                 TH_OK);
	ck_assert_int_eq(th_test_event_append(st, id, "message", TH_ENDS_NONE, event, &seq, &e),
	                 TH_OK);
	commit(st);
	snprintf(sql, sizeof sql, "SELECT json FROM events WHERE task_id = '%s' AND seq = %lld", id,
	         (long long)seq);
	char *stored = q_text(st, sql);
	ck_assert_msg(strstr(stored, "\"$message\"") != NULL && strstr(stored, "new") == NULL,
	              "STORE-10 the event keeps a reference, not a copy: %s", stored);
	free(stored);
	struct th_event *ev = NULL;
	size_t n = 0;
	ck_assert_int_eq(th_store_events_since(st, id, seq - 1, 0, NULL, &ev, &n, &e), TH_OK);
	ck_assert_int_eq(n, 1);
	json_object *want = json_tokener_parse(event);
	ck_assert_msg(same_json(ev[0].json, want), "STORE-10 read back: %s", ev[0].json);
	json_object_put(want);
	th_events_free(ev, n);
	free(ctx);
	json_object_put(expect);
	th_store_close(st);
}
END_TEST

/* ---- 002: migration from version 1 ------------------------------------------------------ */

START_TEST(test_store1_migrating_v1_to_v2_keeps_data)
{
	/* A database exactly as a version-1 binary left it, with a task, a child and a
	 * waiting task. */
	char dir[300];
	snprintf(dir, sizeof dir, "%s/db", tmpdir);
	ck_assert_int_eq(mkdir(dir, 0700), 0);
	sqlite3 *db = NULL;
	ck_assert_int_eq(sqlite3_open(dbpath, &db), SQLITE_OK);
	ck_assert_int_eq(th_store_migrations[0].version, 1);
	ck_assert_int_eq(sqlite3_exec(db, "PRAGMA journal_mode=WAL", NULL, NULL, NULL), SQLITE_OK);
	ck_assert_int_eq(sqlite3_exec(db, th_store_migrations[0].sql, NULL, NULL, NULL), SQLITE_OK);
	ck_assert_int_eq(
	    sqlite3_exec(
	        db,
	        "PRAGMA application_id = 1950900594; PRAGMA user_version = 1;"
	        "INSERT INTO tasks (id, context_id, state, sub_state, status_meta_json, "
	        "status_ms, name, goal, ext_json, created_by, created_ms, updated_ms) "
	        "VALUES ('p', 'c', 'TASK_STATE_INPUT_REQUIRED', 'awaiting-answer', "
	        "'{\"sub_state\":\"awaiting-answer\",\"participant_id\":\"bob\"}', "
	        "5000, 'parent', 'g', '{}', 'alice', 1, 2),"
	        "('p.1', 'c', 'TASK_STATE_WORKING', NULL, NULL, 1, 'child', 'g', '{}', "
	        "'alice', 1, 1);"
	        "INSERT INTO participants VALUES ('p', 'alice', 'human', 'reporter', '', 1);"
	        "INSERT INTO messages VALUES ('p', 1, 'm1', 'ROLE_USER', 'alice', '{}', 1);"
	        "INSERT INTO events VALUES ('p', 1, 'task', '{}', 1);"
	        "INSERT INTO subtask_links VALUES ('p', 'p.1', 1, NULL);"
	        "INSERT INTO turns (task_id, message_id, created_ms, updated_ms) "
	        "VALUES ('p', 'm1', 1, 1);",
	        NULL, NULL, NULL),
	    SQLITE_OK);
	sqlite3_close(db);

	struct th_store *st = open_store();
	ck_assert_int_eq(q_int(st, "PRAGMA user_version"), th_store_schema_version());
	ck_assert_int_eq(q_int(st, "SELECT count(*) FROM tasks"), 2);
	ck_assert_int_eq(q_int(st, "SELECT count(*) FROM participants"), 1);
	ck_assert_int_eq(q_int(st, "SELECT count(*) FROM messages"), 1);
	ck_assert_int_eq(q_int(st, "SELECT count(*) FROM events"), 1);
	ck_assert_int_eq(q_int(st, "SELECT count(*) FROM turns"), 1);
	ck_assert_int_eq(q_int(st, "SELECT count(*) FROM pragma_foreign_key_check"), 0);
	struct th_task_row r;
	struct th_error e;
	ck_assert_int_eq(th_store_task_get(st, "p", &r, &e), TH_OK);
	ck_assert_str_eq(r.sub_state, "awaiting-answer");
	ck_assert_str_eq(r.name, "parent");
	th_task_row_free(&r);
	/* The existing child keeps its number: the next one is 2 (TASK-4). */
	int64_t n = 0;
	begin(st);
	ck_assert_int_eq(th_store_subtask_next_number(st, "p", &n, &e), TH_OK);
	commit(st);
	ck_assert_int_eq(n, 2);
	/* The rebuilt view still reads the participant from the status metadata. */
	char *w = q_text(st, "SELECT waiting_for FROM waiting_tasks WHERE id = 'p'");
	ck_assert_str_eq(w, "bob");
	free(w);
	th_store_close(st);
}
END_TEST

/* ---- 002: channels ---------------------------------------------------------------------- */

static void add_participant(struct th_store *st, const char *task, const char *id, const char *role)
{
	struct th_participant_in p = {.id = id, .kind = "human", .role = role};
	struct th_error e;
	th_err err = th_store_participant_put(st, task, &p, &e);
	ck_assert_msg(err == TH_OK, "participant %s: %s", id, e.msg);
}

static int member(struct th_store *st, const char *task, const char *chan, const char *who,
                  int *exists)
{
	int m = -1;
	struct th_error e;
	th_err err = th_store_channel_is_member(st, task, chan, who, exists, &m, &e);
	ck_assert_msg(err == TH_OK, "is_member: %s", e.msg);
	return m;
}

START_TEST(test_ch2_membership_task_channel_and_side_channel)
{
	struct th_store *st = open_store();
	struct th_error e;
	begin(st);
	add_task(st, "t"); /* alice */
	add_participant(st, "t", "bob", "watcher");
	add_participant(st, "t", "carol", "assignee");
	add_task(st, "u");
	const char *bob[] = {"bob"};
	ck_assert_int_eq(th_store_channel_create(st, "t", "side", "alice", bob, 1, &e), TH_OK);
	/* A second channel with the same id, the task id as channel id, a stranger. */
	ck_assert_int_eq(th_store_channel_create(st, "t", "side", "alice", bob, 1, &e), TH_EINVAL);
	ck_assert_int_eq(th_store_channel_create(st, "t", "t", "alice", bob, 1, &e), TH_EINVAL);
	ck_assert_int_eq(th_store_channel_create(st, "ghost", "x", "alice", NULL, 0, &e),
	                 TH_ENOTFOUND);
	commit(st);
	begin(st);
	const char *stranger[] = {"mallory"};
	ck_assert_int_eq(th_store_channel_create(st, "t", "side2", "alice", stranger, 1, &e),
	                 TH_EINVAL);
	ck_assert_ptr_nonnull(strstr(e.msg, "not a participant"));
	th_store_rollback(st);

	int ex = -1;
	/* Task channel: every participant of the task (CH-1), nobody else. */
	ck_assert_int_eq(member(st, "t", "t", "alice", &ex), 1);
	ck_assert_int_eq(ex, 1);
	ck_assert_int_eq(member(st, "t", "t", "bob", NULL), 1);
	ck_assert_int_eq(member(st, "t", "t", "mallory", &ex), 0);
	ck_assert_int_eq(ex, 1);
	/* Side channel: its members only (creator included). */
	ck_assert_int_eq(member(st, "t", "side", "alice", &ex), 1);
	ck_assert_int_eq(ex, 1);
	ck_assert_int_eq(member(st, "t", "side", "bob", NULL), 1);
	ck_assert_int_eq(member(st, "t", "side", "carol", &ex), 0);
	ck_assert_int_eq(ex, 1);
	/* Unknown channel, or the channel of another task: not a member, does not exist. */
	ck_assert_int_eq(member(st, "t", "nope", "alice", &ex), 0);
	ck_assert_int_eq(ex, 0);
	ck_assert_int_eq(member(st, "u", "side", "alice", &ex), 0);
	ck_assert_int_eq(ex, 0);
	ck_assert_int_eq(member(st, "ghost", "ghost", "alice", &ex), 0);
	ck_assert_int_eq(ex, 0);
	ck_assert_int_eq(q_int(st, "SELECT count(*) FROM channels WHERE channel_id = 't'"), 0);

	char **ids;
	size_t n;
	ck_assert_int_eq(th_store_channel_members(st, "t", "side", &ids, &n, &e), TH_OK);
	ck_assert_uint_eq(n, 2);
	ck_assert_str_eq(ids[0], "alice");
	ck_assert_str_eq(ids[1], "bob");
	th_strings_free(ids, n);
	ck_assert_int_eq(th_store_channel_members(st, "t", "t", &ids, &n, &e), TH_OK);
	ck_assert_uint_eq(n, 3);
	ck_assert_str_eq(ids[2], "carol");
	th_strings_free(ids, n);
	th_store_close(st);
}
END_TEST

START_TEST(test_ch3_channel_messages_append_in_order_per_channel)
{
	struct th_store *st = open_store();
	struct th_error e;
	begin(st);
	add_task(st, "t");
	add_participant(st, "t", "bob", "assignee");
	const char *bob[] = {"bob"};
	ck_assert_int_eq(th_store_channel_create(st, "t", "side", "alice", bob, 1, &e), TH_OK);
	struct th_channel_msg_in m = {.channel_id = "t",
	                              .message_id = "m1",
	                              .sender = "alice",
	                              .kind = TH_CHAN_MESSAGE,
	                              .text = "hello",
	                              .json = "{\"channel_id\":\"t\"}"};
	int64_t seq = 0;
	ck_assert_int_eq(th_store_channel_append(st, "t", &m, &seq, &e), TH_OK);
	ck_assert_int_eq(seq, 1);
	m.message_id = "m2";
	m.text = NULL;
	ck_assert_int_eq(th_store_channel_append(st, "t", &m, &seq, &e), TH_OK);
	ck_assert_int_eq(seq, 2);
	m.channel_id = "side";
	m.kind = TH_CHAN_HELP_REQUEST;
	m.text = "which?";
	ck_assert_int_eq(th_store_channel_append(st, "t", &m, &seq, &e), TH_OK);
	ck_assert_int_eq(seq, 1);
	m.kind = TH_CHAN_HELP_REPLY; /* without in_reply_to */
	ck_assert_int_eq(th_store_channel_append(st, "t", &m, &seq, &e), TH_EINVAL);
	m.in_reply_to = "req-1";
	m.sender = "bob";
	ck_assert_int_eq(th_store_channel_append(st, "t", &m, &seq, &e), TH_OK);
	ck_assert_int_eq(seq, 2);
	m.kind = 9;
	ck_assert_int_eq(th_store_channel_append(st, "t", &m, &seq, &e), TH_EINVAL);
	m.kind = TH_CHAN_MESSAGE;
	ck_assert_int_eq(th_store_channel_append(st, "ghost", &m, &seq, &e), TH_ENOTFOUND);
	commit(st);

	struct th_channel_msg *v;
	size_t n;
	ck_assert_int_eq(th_store_channel_messages(st, "t", "t", 0, 0, &v, &n, &e), TH_OK);
	ck_assert_uint_eq(n, 2);
	ck_assert_str_eq(v[0].text, "hello");
	ck_assert_str_eq(v[0].message_id, "m1");
	ck_assert_str_eq(v[1].text, "");
	ck_assert_int_eq(v[1].seq, 2);
	ck_assert_str_eq(v[0].json, "{\"channel_id\":\"t\"}");
	th_channel_msgs_free(v, n);
	ck_assert_int_eq(th_store_channel_messages(st, "t", "side", 1, 0, &v, &n, &e), TH_OK);
	ck_assert_uint_eq(n, 1);
	ck_assert_int_eq(v[0].kind, TH_CHAN_HELP_REPLY);
	ck_assert_str_eq(v[0].sender, "bob");
	ck_assert_str_eq(v[0].in_reply_to, "req-1");
	ck_assert_str_eq(v[0].channel_id, "side");
	th_channel_msgs_free(v, n);
	ck_assert_int_eq(th_store_channel_messages(st, "t", "side", 0, 1, &v, &n, &e), TH_OK);
	ck_assert_uint_eq(n, 1);
	ck_assert_int_eq(v[0].kind, TH_CHAN_HELP_REQUEST);
	ck_assert_ptr_null(v[0].in_reply_to);
	th_channel_msgs_free(v, n);
	th_store_close(st);
}
END_TEST

/* ---- 002: help requests and the waiting_tasks view ---------------------------------------- */

static void ask(struct th_store *st, const char *task, const char *id, const char *asked,
                const char *question)
{
	struct th_help_request_in r = {.id = id,
	                               .task_id = task,
	                               .channel_id = task,
	                               .asked_by = "tiny-harness",
	                               .asked = asked,
	                               .question = question};
	struct th_error e;
	th_err err = th_store_help_create(st, &r, &e);
	ck_assert_msg(err == TH_OK, "help create %s: %s", id, e.msg);
}

START_TEST(test_ch4_help_request_create_get_pending_cancel)
{
	struct th_store *st = open_store();
	struct th_error e;
	begin(st);
	add_task(st, "t");
	add_task(st, "u");
	ask(st, "t", "r1", "bob", "first?");
	ask(st, "t", "r2", "carol", "second?");
	struct th_help_request_in dup = {.id = "r1",
	                                 .task_id = "t",
	                                 .channel_id = "t",
	                                 .asked_by = "x",
	                                 .asked = "y",
	                                 .question = "z"};
	ck_assert_int_eq(th_store_help_create(st, &dup, &e), TH_EINVAL);
	dup.id = "r9";
	dup.task_id = "ghost";
	ck_assert_int_eq(th_store_help_create(st, &dup, &e), TH_ENOTFOUND);
	commit(st);

	struct th_help_request h;
	ck_assert_int_eq(th_store_help_get(st, "t", "r1", &h, &e), TH_OK);
	ck_assert_str_eq(h.asked, "bob");
	ck_assert_str_eq(h.asked_by, "tiny-harness");
	ck_assert_str_eq(h.question, "first?");
	ck_assert_str_eq(h.channel_id, "t");
	ck_assert_int_eq(h.state, TH_HELP_PENDING);
	ck_assert_int_eq(h.answered_ms, 0);
	ck_assert_ptr_null(h.answer_message_id);
	th_help_request_free(&h);
	/* A request is found only through its own task. */
	ck_assert_int_eq(th_store_help_get(st, "u", "r1", &h, &e), TH_ENOTFOUND);
	ck_assert_int_eq(th_store_help_pending(st, "t", &h, &e), TH_OK);
	ck_assert_str_eq(h.id, "r2"); /* the latest */
	th_help_request_free(&h);
	ck_assert_int_eq(th_store_help_pending(st, "u", &h, &e), TH_ENOTFOUND);

	begin(st);
	int n = -1;
	ck_assert_int_eq(th_store_help_cancel_pending(st, "t", &n, &e), TH_OK);
	ck_assert_int_eq(n, 2);
	commit(st);
	ck_assert_int_eq(th_store_help_pending(st, "t", &h, &e), TH_ENOTFOUND);
	ck_assert_int_eq(th_store_help_get(st, "t", "r1", &h, &e), TH_OK);
	ck_assert_int_eq(h.state, TH_HELP_CANCELED);
	th_help_request_free(&h);
	th_store_close(st);
}
END_TEST

START_TEST(test_ch5_second_answer_refused)
{
	struct th_store *st = open_store();
	struct th_error e;
	begin(st);
	add_task(st, "t");
	add_task(st, "u");
	ask(st, "t", "r1", "bob", "which one?");
	ask(st, "t", "r2", "bob", "and this?");
	commit(st);

	begin(st);
	int prev = -1;
	int64_t before = th_now_ms();
	ck_assert_int_eq(th_store_help_answer(st, "t", "r1", "ans-1", &prev, &e), TH_OK);
	ck_assert_int_eq(prev, TH_HELP_PENDING);
	commit(st);
	struct th_help_request h;
	ck_assert_int_eq(th_store_help_get(st, "t", "r1", &h, &e), TH_OK);
	ck_assert_int_eq(h.state, TH_HELP_ANSWERED);
	ck_assert_int_ge(h.answered_ms, before);
	ck_assert_str_eq(h.answer_message_id, "ans-1");
	th_help_request_free(&h);

	begin(st);
	/* A second answer: refused, distinctly, and the first answer stays. */
	ck_assert_int_eq(th_store_help_answer(st, "t", "r1", "ans-2", &prev, &e), TH_EINVAL);
	ck_assert_int_eq(prev, TH_HELP_ANSWERED);
	ck_assert_ptr_nonnull(strstr(e.msg, "already answered"));
	/* Unknown, or another task's request: not found. */
	ck_assert_int_eq(th_store_help_answer(st, "t", "nope", "a", &prev, &e), TH_ENOTFOUND);
	ck_assert_int_eq(th_store_help_answer(st, "u", "r2", "a", &prev, &e), TH_ENOTFOUND);
	int n;
	ck_assert_int_eq(th_store_help_cancel_pending(st, "t", &n, &e), TH_OK);
	ck_assert_int_eq(n, 1);
	ck_assert_int_eq(th_store_help_answer(st, "t", "r2", "a", &prev, &e), TH_EINVAL);
	ck_assert_int_eq(prev, TH_HELP_CANCELED);
	ck_assert_ptr_nonnull(strstr(e.msg, "canceled"));
	commit(st);
	ck_assert_int_eq(th_store_help_get(st, "t", "r1", &h, &e), TH_OK);
	ck_assert_str_eq(h.answer_message_id, "ans-1");
	th_help_request_free(&h);
	th_store_close(st);
}
END_TEST

static void park(struct th_store *st, const char *id, const char *sub_state, const char *meta,
                 int64_t status_ms)
{
	struct th_task_row r = {.id = (char *)(uintptr_t)id,
	                        .state = 6,
	                        .sub_state = (char *)(uintptr_t)sub_state,
	                        .status_meta_json = (char *)(uintptr_t)meta,
	                        .status_ms = status_ms};
	struct th_error e;
	th_err err = th_store_task_set_status(st, &r, &e);
	ck_assert_msg(err == TH_OK, "park %s: %s", id, e.msg);
}

START_TEST(test_store1_waiting_tasks_shows_awaiting_answer)
{
	struct th_store *st = open_store();
	begin(st);
	add_task(st, "asked");
	add_task(st, "open");
	add_task(st, "meta-only");
	add_task(st, "working");
	ask(st, "asked", "req-old", "carol", "old question");
	ask(st, "asked", "req-7", "bob", "Which database?");
	park(st, "asked", "awaiting-answer",
	     "{\"sub_state\":\"awaiting-answer\",\"participant_id\":\"bob\","
	     "\"request_id\":\"req-7\"}",
	     1700000000000);
	park(st, "open", "awaiting-next-message", "{\"sub_state\":\"awaiting-next-message\"}",
	     1700000001000);
	park(st, "meta-only", "awaiting-answer",
	     "{\"io.github.madarauchiha-314.tiny-harness/status\":{\"sub_state\":"
	     "\"awaiting-answer\",\"participant_id\":\"dave\"}}",
	     1700000002000);
	commit(st);

	ck_assert_int_eq(q_int(st, "SELECT count(*) FROM waiting_tasks"), 3);
	const char *q = "SELECT waiting_for || '|' || question || '|' || request_id || '|' || "
	                "asked_by || '|' || since FROM waiting_tasks WHERE id = 'asked'";
	char *row = q_text(st, q);
	ck_assert_str_eq(row, "bob|Which database?|req-7|tiny-harness|2023-11-14T22:13:20.000Z");
	free(row);
	row = q_text(st, "SELECT waiting_for || '|' || coalesce(question, '-') || '|' || "
	                 "coalesce(request_id, '-') FROM waiting_tasks WHERE id = 'open'");
	ck_assert_str_eq(row, "next message from any participant|-|-");
	free(row);
	row = q_text(st, "SELECT waiting_for FROM waiting_tasks WHERE id = 'meta-only'");
	ck_assert_str_eq(row, "dave");
	free(row);
	ck_assert_int_eq(q_int(st, "SELECT since_ms FROM waiting_tasks WHERE id = 'open'"),
	                 1700000001000);

	/* Without a request id in the metadata, the latest pending request is the one. */
	begin(st);
	park(st, "asked", "awaiting-answer", "{\"sub_state\":\"awaiting-answer\"}", 1700000000000);
	commit(st);
	row = q_text(st, "SELECT waiting_for || '|' || request_id FROM waiting_tasks "
	                 "WHERE id = 'asked'");
	ck_assert_str_eq(row, "bob|req-7");
	free(row);
	th_store_close(st);
}
END_TEST

/* ---- 002: plans and sub-task numbering ------------------------------------------------------ */

START_TEST(test_task1_plan_replace_update_list)
{
	struct th_store *st = open_store();
	struct th_error e;
	begin(st);
	add_task(st, "t");
	struct th_plan_step_in steps[] = {
	    {.step_id = "s1", .name = "design"},
	    {.step_id = "s2",
	     .name = "build",
	     .description = "write it",
	     .depends_on_json = "[\"s1\"]",
	     .state = TH_STEP_ACTIVE},
	    {.step_id = "s3", .name = "ship"},
	};
	ck_assert_int_eq(th_store_plan_replace(st, "t", steps, 3, &e), TH_OK);
	commit(st);

	struct th_plan_step *p;
	size_t n;
	ck_assert_int_eq(th_store_plan(st, "t", &p, &n, &e), TH_OK);
	ck_assert_uint_eq(n, 3);
	ck_assert_str_eq(p[0].step_id, "s1");
	ck_assert_str_eq(p[0].description, "");
	ck_assert_str_eq(p[0].depends_on_json, "[]");
	ck_assert_str_eq(p[0].linked_tasks_json, "[]");
	ck_assert_int_eq(p[0].state, TH_STEP_PENDING);
	ck_assert_ptr_null(p[0].output);
	ck_assert_str_eq(p[1].name, "build");
	ck_assert_str_eq(p[1].depends_on_json, "[\"s1\"]");
	ck_assert_int_eq(p[1].state, TH_STEP_ACTIVE);
	ck_assert_str_eq(p[2].step_id, "s3");
	th_plan_steps_free(p, n);

	begin(st);
	ck_assert_int_eq(th_store_plan_step_update(st, "t", "s2", TH_STEP_DONE, "built", NULL, &e),
	                 TH_OK);
	ck_assert_int_eq(
	    th_store_plan_step_update(st, "t", "s2", TH_STEP_DONE, NULL, "[\"t.1\"]", &e), TH_OK);
	ck_assert_int_eq(th_store_plan_step_update(st, "t", "zz", TH_STEP_DONE, NULL, NULL, &e),
	                 TH_ENOTFOUND);
	ck_assert_int_eq(th_store_plan_step_update(st, "t", "s1", 7, NULL, NULL, &e), TH_EINVAL);
	ck_assert_int_eq(th_store_plan_step_update(st, "t", "s1", TH_STEP_DONE, NULL, "{}", &e),
	                 TH_EINVAL);
	commit(st);
	ck_assert_int_eq(th_store_plan(st, "t", &p, &n, &e), TH_OK);
	ck_assert_str_eq(p[1].output, "built"); /* kept when NULL is passed */
	ck_assert_str_eq(p[1].linked_tasks_json, "[\"t.1\"]");
	ck_assert_int_eq(p[1].state, TH_STEP_DONE);
	ck_assert_int_eq(p[0].state, TH_STEP_PENDING);
	th_plan_steps_free(p, n);

	/* Replacing drops the old steps; new order wins. */
	begin(st);
	struct th_plan_step_in two[] = {
	    {.step_id = "b", .name = "B"},
	    {.step_id = "a", .name = "A"},
	};
	ck_assert_int_eq(th_store_plan_replace(st, "t", two, 2, &e), TH_OK);
	commit(st);
	ck_assert_int_eq(th_store_plan(st, "t", &p, &n, &e), TH_OK);
	ck_assert_uint_eq(n, 2);
	ck_assert_str_eq(p[0].step_id, "b");
	ck_assert_str_eq(p[1].step_id, "a");
	th_plan_steps_free(p, n);

	begin(st);
	struct th_plan_step_in dup[] = {
	    {.step_id = "x", .name = "X"},
	    {.step_id = "x", .name = "Y"},
	};
	ck_assert_int_eq(th_store_plan_replace(st, "t", dup, 2, &e), TH_EINVAL);
	ck_assert_ptr_nonnull(strstr(e.msg, "duplicate"));
	th_store_rollback(st);
	begin(st);
	struct th_plan_step_in bad[] = {
	    {.step_id = "x", .name = "X", .depends_on_json = "not json"}};
	ck_assert_int_eq(th_store_plan_replace(st, "t", bad, 1, &e), TH_EINVAL);
	th_store_rollback(st);
	begin(st);
	ck_assert_int_eq(th_store_plan_replace(st, "ghost", two, 2, &e), TH_ENOTFOUND);
	ck_assert_int_eq(th_store_plan_replace(st, "t", NULL, 0, &e), TH_OK);
	commit(st);
	ck_assert_int_eq(th_store_plan(st, "t", &p, &n, &e), TH_OK);
	ck_assert_uint_eq(n, 0);
	th_plan_steps_free(p, n);
	th_store_close(st);
}
END_TEST

START_TEST(test_task4_subtask_numbers_never_reused_and_parent)
{
	struct th_store *st = open_store();
	struct th_error e;
	int64_t n = -1;
	begin(st);
	add_task(st, "p");
	add_task(st, "q");
	ck_assert_int_eq(th_store_subtask_next_number(st, "p", &n, &e), TH_OK);
	ck_assert_int_eq(n, 1);
	add_task(st, "p.1");
	ck_assert_int_eq(th_store_subtask_link(st, "p", "p.1", &e), TH_OK);
	ck_assert_int_eq(th_store_subtask_next_number(st, "p", &n, &e), TH_OK);
	ck_assert_int_eq(n, 2);
	add_task(st, "p.2");
	ck_assert_int_eq(th_store_subtask_link(st, "p", "p.2", &e), TH_OK);
	ck_assert_int_eq(th_store_subtask_next_number(st, "q", &n, &e), TH_OK);
	ck_assert_int_eq(n, 1); /* per parent */
	ck_assert_int_eq(th_store_subtask_next_number(st, "ghost", &n, &e), TH_ENOTFOUND);
	commit(st);

	char *parent = NULL;
	ck_assert_int_eq(th_store_subtask_parent(st, "p.2", &parent, &e), TH_OK);
	ck_assert_str_eq(parent, "p");
	free(parent);
	ck_assert_int_eq(th_store_subtask_parent(st, "p", &parent, &e), TH_ENOTFOUND);
	ck_assert_ptr_null(parent);

	/* Removing the last child and its link does not give its number back. */
	ck_assert_int_eq(
	    sqlite3_exec(th_store_db(st), "DELETE FROM tasks WHERE id = 'p.2'", NULL, NULL, NULL),
	    SQLITE_OK);
	ck_assert_int_eq(q_int(st, "SELECT count(*) FROM subtask_links WHERE parent_id = 'p'"), 1);
	begin(st);
	ck_assert_int_eq(th_store_subtask_next_number(st, "p", &n, &e), TH_OK);
	commit(st);
	ck_assert_int_eq(n, 3);
	/* A rolled-back allocation gives nothing away either (the child was not made). */
	begin(st);
	ck_assert_int_eq(th_store_subtask_next_number(st, "p", &n, &e), TH_OK);
	ck_assert_int_eq(n, 4);
	th_store_rollback(st);
	begin(st);
	ck_assert_int_eq(th_store_subtask_next_number(st, "p", &n, &e), TH_OK);
	commit(st);
	ck_assert_int_eq(n, 4);
	th_store_close(st);
}
END_TEST

/* ---- 002: A2UI registry ------------------------------------------------------------------ */

START_TEST(test_ui1_a2ui_registry_and_artifact_numbers)
{
	struct th_store *st = open_store();
	struct th_error e;
	char *json = (char *)(uintptr_t) "x";
	ck_assert_int_eq(th_store_a2ui_get(st, "t", &json, &e), TH_OK);
	ck_assert_ptr_null(json);
	begin(st);
	add_task(st, "t");
	add_task(st, "u");
	int64_t n = 0;
	ck_assert_int_eq(th_store_a2ui_next_artifact(st, "t", &n, &e), TH_OK);
	ck_assert_int_eq(n, 1);
	ck_assert_int_eq(th_store_a2ui_get(st, "t", &json, &e), TH_OK);
	ck_assert_str_eq(json, "{}");
	free(json);
	ck_assert_int_eq(th_store_a2ui_put(st, "t", "{\"surfaces\":{\"s1\":{}}}", &e), TH_OK);
	ck_assert_int_eq(th_store_a2ui_next_artifact(st, "t", &n, &e), TH_OK);
	ck_assert_int_eq(n, 2);
	ck_assert_int_eq(th_store_a2ui_put(st, "u", "{\"surfaces\":{}}", &e), TH_OK);
	ck_assert_int_eq(th_store_a2ui_next_artifact(st, "u", &n, &e), TH_OK);
	ck_assert_int_eq(n, 1); /* per task, starting at 1 after a put */
	ck_assert_int_eq(th_store_a2ui_put(st, "t", "{not json", &e), TH_EINVAL);
	ck_assert_int_eq(th_store_a2ui_put(st, "ghost", "{}", &e), TH_ENOTFOUND);
	ck_assert_int_eq(th_store_a2ui_next_artifact(st, "ghost", &n, &e), TH_ENOTFOUND);
	commit(st);
	ck_assert_int_eq(th_store_a2ui_get(st, "t", &json, &e), TH_OK);
	ck_assert_str_eq(json, "{\"surfaces\":{\"s1\":{}}}"); /* numbering kept the registry */
	free(json);
	begin(st);
	ck_assert_int_eq(th_store_a2ui_put(st, "t", "{}", &e), TH_OK);
	ck_assert_int_eq(th_store_a2ui_next_artifact(st, "t", &n, &e), TH_OK);
	ck_assert_int_eq(n, 3); /* a put keeps the numbering */
	commit(st);
	th_store_close(st);
}
END_TEST

/* ---- 002: turn recovery --------------------------------------------------------------------- */

START_TEST(test_turn4_expired_leases_listed)
{
	struct th_store *st = open_store();
	struct th_error e;
	begin(st);
	add_task(st, "t");
	struct th_lease live, deadl, donel;
	int64_t queued;
	ck_assert_int_eq(th_store_turn_start(st, "t", "m1", 100, 60000, &live, &e), TH_OK);
	ck_assert_int_eq(th_store_turn_start(st, "t", "m2", 200, 60000, &deadl, &e), TH_OK);
	ck_assert_int_eq(th_store_turn_create(st, "t", "m3", &queued, &e), TH_OK);
	ck_assert_int_eq(th_store_turn_start(st, "t", "m4", 300, 1, &donel, &e), TH_OK);
	ck_assert_int_eq(th_store_turn_finish(st, &donel, TH_TURN_DONE, NULL, &e), TH_OK);
	commit(st);
	int64_t dead = deadl.turn_id;
	/* The worker of `dead` died: its lease ran out a minute ago. */
	char sql[160];
	snprintf(sql, sizeof sql, "UPDATE turn_rows SET lease_until_ms = %lld WHERE id = %lld",
	         (long long)(th_now_ms() - 60000), (long long)dead);
	ck_assert_int_eq(sqlite3_exec(th_store_db(st), sql, NULL, NULL, NULL), SQLITE_OK);

	int64_t now = th_now_ms();
	struct th_turn_row *v;
	size_t n;
	/* Queued turns left out (queued_before 0): only the expired running one. */
	ck_assert_int_eq(th_store_turns_expired(st, NULL, now, 0, 0, &v, &n, &e), TH_OK);
	ck_assert_uint_eq(n, 1);
	ck_assert_int_eq(v[0].id, dead);
	ck_assert_int_eq(v[0].state, TH_TURN_RUNNING);
	ck_assert_int_eq(v[0].worker_pid, 200);
	ck_assert_int_eq(v[0].attempts, 1);
	ck_assert_str_eq(v[0].task_id, "t");
	ck_assert_str_eq(v[0].message_id, "m2");
	th_turn_rows_free(v, n);
	/* Queued turns older than the threshold are listed too, in id order. */
	ck_assert_int_eq(th_store_turns_expired(st, NULL, now, now + 1, 0, &v, &n, &e), TH_OK);
	ck_assert_uint_eq(n, 2);
	ck_assert_int_eq(v[0].id, dead);
	ck_assert_int_eq(v[1].id, queued);
	ck_assert_int_eq(v[1].state, TH_TURN_QUEUED);
	th_turn_rows_free(v, n);
	ck_assert_int_eq(th_store_turns_expired(st, NULL, now, now + 1, 1, &v, &n, &e), TH_OK);
	ck_assert_uint_eq(n, 1);
	th_turn_rows_free(v, n);
	th_store_close(st);
}
END_TEST

START_TEST(test_turn4_release_takeover_hold)
{
	struct th_store *st = open_store();
	struct th_error e;
	begin(st);
	add_task(st, "t");
	struct th_lease a, l;
	int64_t b;
	ck_assert_int_eq(th_store_turn_start(st, "t", "m1", 100, 60000, &a, &e), TH_OK);
	ck_assert_int_eq(th_store_turn_create(st, "t", "m2", &b, &e), TH_OK);
	commit(st);
	int64_t now = th_now_ms();

	begin(st);
	/* A held lease is neither released nor taken over. */
	ck_assert_int_eq(th_store_turn_release(st, a.turn_id, now, &e), TH_EINVAL);
	ck_assert_int_eq(th_store_turn_takeover(st, a.turn_id, 200, 1000, now, &l, &e), TH_EINVAL);
	ck_assert_int_eq(l.epoch, 0);
	/* Renewal by the holder works; with another epoch it is refused. */
	int held = -1;
	ck_assert_int_eq(th_store_turn_hold(st, &a, 120000, &held, &e), TH_OK);
	ck_assert_int_eq(held, 1);
	struct th_lease wrong = {a.turn_id, a.epoch + 1}, none = {424242, 1};
	ck_assert_int_eq(th_store_turn_hold(st, &wrong, 120000, &held, &e), TH_OK);
	ck_assert_int_eq(held, 0);
	ck_assert_int_eq(th_store_turn_hold(st, &none, 1000, &held, &e), TH_OK);
	ck_assert_int_eq(held, 0);
	commit(st);
	struct th_turn_row r;
	ck_assert_int_eq(th_store_turn_get(st, a.turn_id, &r, &e), TH_OK);
	ck_assert_int_ge(r.lease_until_ms, now + 120000);
	th_turn_row_free(&r);

	/* Once the lease is expired (seen from the future), release requeues it and keeps
	 * the attempts; a second release finds nothing to do. */
	int64_t later = now + 10 * 60 * 1000;
	begin(st);
	ck_assert_int_eq(th_store_turn_release(st, a.turn_id, later, &e), TH_OK);
	ck_assert_int_eq(th_store_turn_release(st, a.turn_id, later, &e), TH_EINVAL);
	ck_assert_int_eq(th_store_turn_release(st, 424242, later, &e), TH_ENOTFOUND);
	commit(st);
	ck_assert_int_eq(th_store_turn_get(st, a.turn_id, &r, &e), TH_OK);
	ck_assert_int_eq(r.state, TH_TURN_QUEUED);
	ck_assert_int_eq(r.attempts, 1);
	ck_assert_int_eq(r.worker_pid, 0);
	ck_assert_int_eq(r.lease_until_ms, 0);
	th_turn_row_free(&r);
	/* The holder that lost it can no longer renew. */
	begin(st);
	ck_assert_int_eq(th_store_turn_hold(st, &a, 1000, &held, &e), TH_OK);
	ck_assert_int_eq(held, 0);
	commit(st);

	/* Takeover: a queued turn, then an expired running one; only one taker wins, and
	 * each gets the next epoch. */
	begin(st);
	ck_assert_int_eq(th_store_turn_takeover(st, a.turn_id, 200, 60000, now, &l, &e), TH_OK);
	ck_assert_int_eq(l.epoch, 2);
	ck_assert_int_eq(th_store_turn_takeover(st, a.turn_id, 300, 60000, now, &l, &e), TH_EINVAL);
	ck_assert_int_eq(th_store_turn_takeover(st, a.turn_id, 300, 60000, later, &l, &e), TH_OK);
	ck_assert_int_eq(l.epoch, 3);
	commit(st);
	ck_assert_int_eq(th_store_turn_get(st, a.turn_id, &r, &e), TH_OK);
	ck_assert_int_eq(r.state, TH_TURN_RUNNING);
	ck_assert_int_eq(r.worker_pid, 300);
	ck_assert_int_eq(r.attempts, 3);
	th_turn_row_free(&r);

	/* A cut turn is never taken over nor renewed (CTL-3). */
	begin(st);
	ck_assert_int_eq(th_store_turns_cut(st, "t", NULL, &e), TH_OK);
	ck_assert_int_eq(th_store_turn_takeover(st, b, 400, 1000, later, &l, &e), TH_EINVAL);
	ck_assert_int_eq(th_store_turn_hold(st, &l, 1000, &held, &e), TH_OK);
	ck_assert_int_eq(held, 0);
	ck_assert_int_eq(th_store_turn_takeover(st, 424242, 1, 1000, later, &l, &e), TH_ENOTFOUND);
	commit(st);
	th_store_close(st);
}
END_TEST

/* ---- 002: push notifications -------------------------------------------------------------- */

static void put_config(struct th_store *st, const char *task, const char *id, const char *who,
                       const char *url)
{
	struct th_push_config c = {.task_id = (char *)(uintptr_t)task,
	                           .config_id = (char *)(uintptr_t)id,
	                           .participant_id = (char *)(uintptr_t)who,
	                           .url = (char *)(uintptr_t)url};
	struct th_error e;
	th_err err = th_store_push_config_put(st, &c, &e);
	ck_assert_msg(err == TH_OK, "push config %s: %s", id, e.msg);
}

START_TEST(test_push1_configs_per_task_and_participant)
{
	struct th_store *st = open_store();
	struct th_error e;
	begin(st);
	add_task(st, "t");
	add_participant(st, "t", "bob", "watcher");
	unsigned char tok[] = {0x00, 0x01, 0xfe, 0xff}; /* blobs kept byte for byte */
	struct th_push_config c = {.task_id = (char *)(uintptr_t) "t",
	                           .config_id = (char *)(uintptr_t) "c1",
	                           .participant_id = (char *)(uintptr_t) "alice",
	                           .url = (char *)(uintptr_t) "https://a.example/hook",
	                           .token_enc = tok,
	                           .token_len = sizeof tok,
	                           .auth_scheme = (char *)(uintptr_t) "Bearer",
	                           .auth_enc = (unsigned char *)(uintptr_t) "",
	                           .auth_len = 0};
	ck_assert_int_eq(th_store_push_config_put(st, &c, &e), TH_OK);
	put_config(st, "t", "c2", "bob", "https://b.example/hook");
	/* bob cannot take over alice's id. */
	c.participant_id = (char *)(uintptr_t) "bob";
	ck_assert_int_eq(th_store_push_config_put(st, &c, &e), TH_EINVAL);
	c.participant_id = (char *)(uintptr_t) "alice";
	c.task_id = (char *)(uintptr_t) "ghost";
	ck_assert_int_eq(th_store_push_config_put(st, &c, &e), TH_ENOTFOUND);
	/* alice replaces her own. */
	c.task_id = (char *)(uintptr_t) "t";
	c.url = (char *)(uintptr_t) "https://a.example/v2";
	ck_assert_int_eq(th_store_push_config_put(st, &c, &e), TH_OK);
	commit(st);

	struct th_push_config g;
	ck_assert_int_eq(th_store_push_config_get(st, "t", "c1", "alice", &g, &e), TH_OK);
	ck_assert_str_eq(g.url, "https://a.example/v2");
	ck_assert_str_eq(g.participant_id, "alice");
	ck_assert_uint_eq(g.token_len, sizeof tok);
	ck_assert_int_eq(memcmp(g.token_enc, tok, sizeof tok), 0);
	ck_assert_str_eq(g.auth_scheme, "Bearer");
	ck_assert_ptr_nonnull(g.auth_enc); /* empty, not NULL */
	ck_assert_uint_eq(g.auth_len, 0);
	th_push_config_free(&g);
	ck_assert_int_eq(th_store_push_config_get(st, "t", "c1", "bob", &g, &e), TH_ENOTFOUND);
	ck_assert_int_eq(th_store_push_config_get(st, "t", "c2", NULL, &g, &e), TH_OK);
	ck_assert_ptr_null(g.token_enc);
	ck_assert_ptr_null(g.auth_scheme);
	th_push_config_free(&g);

	struct th_push_config *v;
	size_t n;
	ck_assert_int_eq(th_store_push_configs(st, "t", "bob", &v, &n, &e), TH_OK);
	ck_assert_uint_eq(n, 1);
	ck_assert_str_eq(v[0].config_id, "c2");
	th_push_configs_free(v, n);
	ck_assert_int_eq(th_store_push_configs(st, "t", NULL, &v, &n, &e), TH_OK);
	ck_assert_uint_eq(n, 2);
	th_push_configs_free(v, n);

	begin(st);
	ck_assert_int_eq(th_store_push_config_delete(st, "t", "c1", "bob", &e), TH_ENOTFOUND);
	ck_assert_int_eq(th_store_push_config_delete(st, "t", "c1", "alice", &e), TH_OK);
	ck_assert_int_eq(th_store_push_config_delete(st, "t", "c1", "alice", &e), TH_ENOTFOUND);
	commit(st);
	ck_assert_int_eq(th_store_push_configs(st, "t", "alice", &v, &n, &e), TH_OK);
	ck_assert_uint_eq(n, 0);
	th_push_configs_free(v, n);
	th_store_close(st);
}
END_TEST

/* What a write that makes task "fresh" queues: before its config is put, and after. */
struct fresh_arg {
	int before, after;
};

static th_err fresh_part(struct th_store *st, void *arg, struct th_error *e)
{
	struct fresh_arg *a = arg;
	add_task(st, "fresh");
	th_err rc = th_test_push_enqueue(st, "fresh", 1, "{\"task\":{}}", NULL, &a->before, e);
	if (rc == TH_OK)
		put_config(st, "fresh", "cf", "alice", "https://f.example/");
	if (rc == TH_OK)
		rc = th_test_push_enqueue(st, "fresh", 2, "{\"status\":{}}", NULL, &a->after, e);
	return rc;
}

static th_err later_part(struct th_store *st, void *arg, struct th_error *e)
{
	return th_test_push_enqueue(st, "fresh", 3, "{\"status\":{}}", NULL, arg, e);
}

/* PUSH-2 (decision-080): a task the running write made has nothing to push to until the
 * write puts a config of it; from then on, in that write and every later one, its events
 * are queued for the config. */
START_TEST(test_push2_a_config_put_in_the_write_that_made_its_task_gets_the_events_after_it)
{
	struct th_store *st = open_store();
	struct th_error e;
	struct fresh_arg a = {-1, -1};
	ck_assert_msg(th_store_write(st, fresh_part, &a, &e) == TH_OK, "%s", e.msg);
	ck_assert_int_eq(a.before, 0);
	ck_assert_int_eq(a.after, 1);
	int later = -1;
	ck_assert_msg(th_store_write(st, later_part, &later, &e) == TH_OK, "%s", e.msg);
	ck_assert_int_eq(later, 1);
	ck_assert_int_eq(q_int(st, "SELECT count(*) FROM push_outbox WHERE task_id = 'fresh' AND "
	                           "config_id = 'cf' AND seq IN (2, 3)"),
	                 2);
	ck_assert_int_eq(q_int(st, "SELECT count(*) FROM push_outbox WHERE task_id = 'fresh'"), 2);
	th_store_close(st);
}
END_TEST

START_TEST(test_push2_outbox_enqueue_claim_deliver_retry_dead)
{
	struct th_store *st = open_store();
	struct th_error e;
	begin(st);
	add_task(st, "t");
	add_participant(st, "t", "bob", "assignee");
	add_participant(st, "t", "carol", "assignee");
	put_config(st, "t", "ca", "alice", "https://a.example/");
	put_config(st, "t", "cb", "bob", "https://b.example/");
	put_config(st, "t", "cc", "carol", "https://c.example/");
	const char *bob[] = {"bob"};
	ck_assert_int_eq(th_store_channel_create(st, "t", "side", "alice", bob, 1, &e), TH_OK);
	int q = -1;
	ck_assert_int_eq(th_test_push_enqueue(st, "t", 1, "{\"task\":{}}", NULL, &q, &e), TH_OK);
	ck_assert_int_eq(q, 3);
	ck_assert_int_eq(th_test_push_enqueue(st, "t", 1, "{\"task\":{}}", NULL, &q, &e), TH_OK);
	ck_assert_int_eq(q, 0); /* not twice */
	/* A side-channel event goes to its members' configs only (CH-3). */
	ck_assert_int_eq(th_test_push_enqueue(st, "t", 2, "{\"message\":{}}", "side", &q, &e),
	                 TH_OK);
	ck_assert_int_eq(q, 2);
	ck_assert_int_eq(th_test_push_enqueue(st, "t", 3, "{\"status\":{}}", "t", &q, &e), TH_OK);
	ck_assert_int_eq(q, 3);
	commit(st);
	ck_assert_int_eq(q_int(st, "SELECT count(*) FROM push_outbox WHERE seq = 2 AND "
	                           "config_id = 'cc'"),
	                 0);

	int64_t now = th_now_ms();
	struct th_push_delivery *d;
	size_t n;
	begin(st);
	ck_assert_int_eq(th_store_push_claim_due(st, now, 30000, 2, &d, &n, &e), TH_OK);
	commit(st);
	ck_assert_uint_eq(n, 2);
	ck_assert_int_lt(d[0].id, d[1].id);
	ck_assert_int_eq(d[0].seq, 1);
	ck_assert_str_eq(d[0].task_id, "t");
	ck_assert_str_eq(d[0].config_id, "ca");
	ck_assert_str_eq(d[0].body, "{\"task\":{}}");
	ck_assert_int_eq(d[0].attempts, 1);
	int64_t first = d[0].id, second = d[1].id;
	th_push_deliveries_free(d, n);

	/* Claimed rows are not claimed again until their claim expires. */
	begin(st);
	ck_assert_int_eq(th_store_push_claim_due(st, now, 30000, 0, &d, &n, &e), TH_OK);
	commit(st);
	ck_assert_uint_eq(n, 6);
	for (size_t i = 0; i < n; i++)
		ck_assert_int_ne(d[i].id, first);
	th_push_deliveries_free(d, n);
	begin(st);
	ck_assert_int_eq(th_store_push_claim_due(st, now, 30000, 0, &d, &n, &e), TH_OK);
	ck_assert_uint_eq(n, 0);
	th_push_deliveries_free(d, n);
	commit(st);

	begin(st);
	ck_assert_int_eq(th_store_push_delivered(st, first, &e), TH_OK);
	struct th_push_backoff b = {.base_ms = 1000, .max_ms = 60000, .max_attempts = 3};
	int dead = -1;
	ck_assert_int_eq(th_store_push_retry(st, second, now, "HTTP 503", &b, &dead, &e), TH_OK);
	ck_assert_int_eq(dead, 0);
	commit(st);
	char sql[200];
	snprintf(sql, sizeof sql,
	         "SELECT next_attempt_ms - %lld FROM push_outbox WHERE id = %lld AND "
	         "state = 'pending' AND last_error = 'HTTP 503'",
	         (long long)now, (long long)second);
	ck_assert_int_eq(q_int(st, sql), 1000); /* first retry: base */
	/* Second failed attempt: doubled; third: dead. */
	begin(st);
	ck_assert_int_eq(th_store_push_claim_due(st, now + 1000, 30000, 0, &d, &n, &e), TH_OK);
	ck_assert_uint_eq(n, 1);
	ck_assert_int_eq(d[0].attempts, 2);
	th_push_deliveries_free(d, n);
	ck_assert_int_eq(th_store_push_retry(st, second, now, "timeout", &b, &dead, &e), TH_OK);
	ck_assert_int_eq(dead, 0);
	commit(st);
	snprintf(sql, sizeof sql, "SELECT next_attempt_ms - %lld FROM push_outbox WHERE id = %lld",
	         (long long)now, (long long)second);
	ck_assert_int_eq(q_int(st, sql), 2000);
	begin(st);
	ck_assert_int_eq(th_store_push_claim_due(st, now + 2000, 30000, 1, &d, &n, &e), TH_OK);
	ck_assert_uint_eq(n, 1);
	ck_assert_int_eq(d[0].id, second);
	ck_assert_int_eq(d[0].attempts, 3);
	th_push_deliveries_free(d, n);
	ck_assert_int_eq(th_store_push_retry(st, second, now, "timeout", &b, &dead, &e), TH_OK);
	ck_assert_int_eq(dead, 1);
	/* Finished rows are not retried, nor claimed. */
	ck_assert_int_eq(th_store_push_retry(st, first, now, "x", &b, &dead, &e), TH_ENOTFOUND);
	ck_assert_int_eq(th_store_push_dead(st, 999999, "x", &e), TH_ENOTFOUND);
	commit(st);
	snprintf(sql, sizeof sql, "SELECT state = 'dead' FROM push_outbox WHERE id = %lld",
	         (long long)second);
	ck_assert_int_eq(q_int(st, sql), 1);

	/* A sender that died: its claim expires and the rows come back. */
	begin(st);
	ck_assert_int_eq(th_store_push_claim_due(st, now + 31000, 30000, 0, &d, &n, &e), TH_OK);
	ck_assert_uint_eq(n, 6);
	ck_assert_int_eq(d[0].attempts, 2);
	ck_assert_int_eq(th_store_push_dead(st, d[0].id, "HTTP 404", &e), TH_OK);
	th_push_deliveries_free(d, n);
	commit(st);

	/* Deleting a config drops its deliveries; pruning drops finished rows. */
	begin(st);
	ck_assert_int_eq(th_store_push_config_delete(st, "t", "cc", NULL, &e), TH_OK);
	int64_t pruned = -1;
	ck_assert_int_eq(th_store_push_prune(st, th_now_ms() + 1, th_now_ms() + 1, &pruned, &e),
	                 TH_OK);
	ck_assert_int_eq(pruned, 2); /* delivered and dead; cc's dead row went with cc */
	commit(st);
	ck_assert_int_eq(q_int(st, "SELECT count(*) FROM push_outbox WHERE config_id = 'cc'"), 0);
	ck_assert_int_eq(q_int(st, "SELECT count(*) FROM push_outbox"), 4);
	th_store_close(st);
}
END_TEST

/* ---- 002: operator queries ------------------------------------------------------------------ */

START_TEST(test_store2_tasks_overview_without_participant_filter)
{
	struct th_store *st = open_store();
	struct th_error e;
	begin(st);
	add_task_at(st, "a", "c", 2, 1000, "alice");
	add_task_at(st, "b", "c", 3, 2000, "bob");
	add_task_at(st, "c", "c", 2, 3000, "carol");
	commit(st);
	ck_assert_int_eq(sqlite3_exec(th_store_db(st),
	                              "UPDATE tasks SET updated_ms = 10 WHERE id = 'a';"
	                              "UPDATE tasks SET updated_ms = 30 WHERE id = 'b';"
	                              "UPDATE tasks SET updated_ms = 20 WHERE id = 'c';",
	                              NULL, NULL, NULL),
	                 SQLITE_OK);
	struct th_task_brief *v;
	size_t n;
	ck_assert_int_eq(th_store_tasks_overview(st, 0, 0, &v, &n, &e), TH_OK);
	ck_assert_uint_eq(n, 3);
	ck_assert_str_eq(v[0].id, "b");
	ck_assert_int_eq(v[0].state, 3);
	ck_assert_int_eq(v[0].updated_ms, 30);
	ck_assert_str_eq(v[0].name, "name of task");
	ck_assert_ptr_null(v[0].sub_state);
	ck_assert_str_eq(v[1].id, "c");
	ck_assert_str_eq(v[2].id, "a");
	th_task_briefs_free(v, n);
	ck_assert_int_eq(th_store_tasks_overview(st, 2, 1, &v, &n, &e), TH_OK);
	ck_assert_uint_eq(n, 1);
	ck_assert_str_eq(v[0].id, "c");
	th_task_briefs_free(v, n);
	ck_assert_int_eq(th_store_tasks_overview(st, 99, 0, &v, &n, &e), TH_EINVAL);
	th_store_close(st);
}
END_TEST

START_TEST(test_store2_purge_cascades_terminal_old_tasks)
{
	struct th_store *st = open_store();
	struct th_error e;
	begin(st);
	add_task_at(st, "old-done", "c", 3, 1000, "alice");
	add_task_at(st, "old-working", "c", 2, 1000, "alice");
	add_task_at(st, "new-done", "c", 3, 1000, "alice");
	add_task_at(st, "old-canceled", "c", 5, 1000, "alice");
	add_task_at(st, "old-done.1", "c", 2, 1000, "alice");
	ck_assert_int_eq(th_store_subtask_link(st, "old-done", "old-done.1", &e), TH_OK);
	/* Something in every table that references the task. */
	ck_assert_int_eq(th_test_message_append(st, "old-done", "m1", "ROLE_USER", "alice",
	                                        "{\"messageId\":\"m1\"}", &e),
	                 TH_OK);
	ck_assert_int_eq(th_test_event_append(st, "old-done", "task", TH_ENDS_NONE, "{}", NULL, &e),
	                 TH_OK);
	ck_assert_int_eq(th_store_artifact_put(st, "old-done", "a1", "{}", &e), TH_OK);
	int64_t turn;
	ck_assert_int_eq(th_store_turn_create(st, "old-done", "m1", &turn, &e), TH_OK);
	add_participant(st, "old-done", "bob", "assignee");
	const char *bob[] = {"bob"};
	ck_assert_int_eq(th_store_channel_create(st, "old-done", "side", "alice", bob, 1, &e),
	                 TH_OK);
	struct th_channel_msg_in m = {
	    .channel_id = "side", .message_id = "m1", .sender = "alice", .json = "{}"};
	ck_assert_int_eq(th_store_channel_append(st, "old-done", &m, NULL, &e), TH_OK);
	ask(st, "old-done", "r1", "bob", "?");
	struct th_plan_step_in step = {.step_id = "s", .name = "S"};
	ck_assert_int_eq(th_store_plan_replace(st, "old-done", &step, 1, &e), TH_OK);
	ck_assert_int_eq(th_store_a2ui_put(st, "old-done", "{}", &e), TH_OK);
	put_config(st, "old-done", "c1", "alice", "https://a.example/");
	ck_assert_int_eq(th_test_push_enqueue(st, "old-done", 1, "{}", NULL, NULL, &e), TH_OK);
	commit(st);
	ck_assert_int_eq(sqlite3_exec(th_store_db(st),
	                              "UPDATE tasks SET updated_ms = 100 WHERE id LIKE 'old-%';"
	                              "UPDATE tasks SET updated_ms = 900 WHERE id = 'new-done';",
	                              NULL, NULL, NULL),
	                 SQLITE_OK);

	int64_t n = -1;
	begin(st);
	ck_assert_int_eq(th_store_purge(st, 500, 1, &n, &e), TH_OK);
	ck_assert_int_eq(n, 1); /* the limit holds */
	ck_assert_int_eq(th_store_purge(st, 500, 0, &n, &e), TH_OK);
	ck_assert_int_eq(n, 1);
	ck_assert_int_eq(th_store_purge(st, 500, 0, &n, &e), TH_OK);
	ck_assert_int_eq(n, 0);
	commit(st);
	ck_assert_int_eq(q_int(st, "SELECT count(*) FROM tasks WHERE id IN ('old-done', "
	                           "'old-canceled')"),
	                 0);
	/* Not terminal, or not old: kept. The child survives its purged parent, unlinked. */
	ck_assert_int_eq(q_int(st, "SELECT count(*) FROM tasks"), 3);
	ck_assert_int_eq(q_int(st, "SELECT parent_id IS NULL FROM tasks WHERE id = 'old-done.1'"),
	                 1);
	const char *tables[] = {
	    "participants", "messages",      "events",          "artifacts",        "subtask_links",
	    "turns",        "channels",      "channel_members", "channel_messages", "help_requests",
	    "plan_steps",   "a2ui_registry", "push_configs",    "push_outbox"};
	for (size_t i = 0; i < sizeof tables / sizeof tables[0]; i++) {
		char sql[200];
		const char *col = strcmp(tables[i], "subtask_links") == 0 ? "parent_id" : "task_id";
		snprintf(sql, sizeof sql, "SELECT count(*) FROM %s WHERE %s = 'old-done'",
		         tables[i], col);
		ck_assert_msg(q_int(st, sql) == 0, "%s keeps rows of a purged task", tables[i]);
	}
	ck_assert_int_eq(q_int(st, "SELECT count(*) FROM pragma_foreign_key_check"), 0);
	th_store_close(st);
}
END_TEST

/* ---- retention (RET-1..RET-4, decision-071) ------------------------------------------ */

/* A statement whose answer is not needed, on either backend. */
static void run_sql(struct th_store *st, const char *sql)
{
	if (pgdb[0] != '\0') {
		char out[512];
		ck_assert_msg(psql(pgdb, sql, out, sizeof out) == 0, "%s: %s", sql, out);
		return;
	}
	char *msg = NULL;
	int rc = sqlite3_exec(th_store_db(st), sql, NULL, NULL, &msg);
	ck_assert_msg(rc == SQLITE_OK, "%s: %s", sql, msg != NULL ? msg : "");
	sqlite3_free(msg);
}

/* Rows of task id in every table that refers to a task (the tables of
 * test_store2_purge_cascades_terminal_old_tasks and 015's idempotency keys). */
static int64_t rows_of(struct th_store *st, const char *id)
{
	static const char *const tables[] = {
	    "participants", "messages",      "events",          "artifacts",        "subtask_links",
	    "turns",        "channels",      "channel_members", "channel_messages", "help_requests",
	    "plan_steps",   "a2ui_registry", "push_configs",    "push_outbox"};
	/* One query (one psql on PostgreSQL): a sum of counts. */
	char sql[4096] = "SELECT 0";
	size_t used = strlen(sql);
	for (size_t i = 0; i < sizeof tables / sizeof tables[0]; i++) {
		const char *col = strcmp(tables[i], "subtask_links") == 0 ? "parent_id" : "task_id";
		int w =
		    snprintf(sql + used, sizeof sql - used,
		             " + (SELECT count(*) FROM %s WHERE %s = '%s')", tables[i], col, id);
		ck_assert(w > 0 && (size_t)w < sizeof sql - used);
		used += (size_t)w;
	}
	return q_int(st, sql);
}

/* A row in every table that refers to task id (a message, its event, an artifact, a
 * turn, a second participant, a side channel with a message, a help request, a plan
 * step, the A2UI registry, a push config with a delivery); 1 child link. */
static void fill_task(struct th_store *st, const char *id)
{
	struct th_error e;
	char child[64];
	snprintf(child, sizeof child, "%s.1", id);
	add_task_at(st, child, "c", 3, 1000, "alice");
	ck_assert_int_eq(th_store_subtask_link(st, id, child, &e), TH_OK);
	ck_assert_int_eq(th_test_message_append(st, id, "m1", "ROLE_USER", "alice",
	                                        "{\"messageId\":\"m1\"}", &e),
	                 TH_OK);
	ck_assert_int_eq(th_test_event_append(st, id, "task", TH_ENDS_NONE, "{}", NULL, &e), TH_OK);
	ck_assert_int_eq(th_store_artifact_put(st, id, "a1", "{}", &e), TH_OK);
	int64_t turn;
	ck_assert_int_eq(th_store_turn_create(st, id, "m1", &turn, &e), TH_OK);
	add_participant(st, id, "bob", "assignee");
	const char *bob[] = {"bob"};
	ck_assert_int_eq(th_store_channel_create(st, id, "side", "alice", bob, 1, &e), TH_OK);
	struct th_channel_msg_in m = {
	    .channel_id = "side", .message_id = "m1", .sender = "alice", .json = "{}"};
	ck_assert_int_eq(th_store_channel_append(st, id, &m, NULL, &e), TH_OK);
	char req[80];
	snprintf(req, sizeof req, "r-%s", id); /* help request ids are global */
	ask(st, id, req, "bob", "?");
	struct th_plan_step_in step = {.step_id = "s", .name = "S"};
	ck_assert_int_eq(th_store_plan_replace(st, id, &step, 1, &e), TH_OK);
	ck_assert_int_eq(th_store_a2ui_put(st, id, "{}", &e), TH_OK);
	put_config(st, id, "c1", "alice", "https://a.example/");
	ck_assert_int_eq(th_test_push_enqueue(st, id, 1, "{}", NULL, NULL, &e), TH_OK);
}

/* RET-1: an ended task unchanged for retain_ended goes with every row of its own, on
 * both backends; a recent ended task and an old open one stay whole. */
START_TEST(test_ret1_purge_ended_takes_every_child_row_and_nothing_else)
{
	struct th_store *st = open_store();
	struct th_error e;
	begin(st);
	add_task_at(st, "old-done", "c", 3, 1000, "alice");
	add_task_at(st, "new-done", "c", 3, 1000, "alice");
	add_task_at(st, "old-open", "c", 2, 1000, "alice");
	fill_task(st, "old-done");
	fill_task(st, "new-done");
	fill_task(st, "old-open");
	commit(st);
	/* The turns of the ended ones are over (a live turn never outlives its task's end). */
	run_sql(st, "UPDATE turn_rows SET state = 'done' WHERE task_num <> "
	            "(SELECT num FROM tasks WHERE id = 'old-open')");
	run_sql(st, "UPDATE tasks SET updated_ms = 100 WHERE id LIKE 'old-%'");
	/* The children (ended) are recent: old-done.1 survives its parent, unlinked. */
	run_sql(st, "UPDATE tasks SET updated_ms = 900 WHERE id LIKE 'new-%' OR id LIKE '%.1'");
	int64_t before_new = rows_of(st, "new-done"), before_open = rows_of(st, "old-open");
	ck_assert_int_gt(rows_of(st, "old-done"), 13);
	int64_t n = -1;
	begin(st);
	ck_assert_int_eq(th_store_purge(st, 500, 0, &n, &e), TH_OK);
	commit(st);
	ck_assert_int_eq(n, 1);
	ck_assert_int_eq(rows_of(st, "old-done"), 0);
	ck_assert_int_eq(q_int(st, "SELECT count(*) FROM tasks WHERE id = 'old-done'"), 0);
	ck_assert_int_eq(q_int(st, "SELECT count(*) FROM tasks WHERE id = 'old-done.1' AND "
	                           "parent_id IS NULL"),
	                 1);
	ck_assert_int_eq(rows_of(st, "new-done"), before_new);
	ck_assert_int_eq(rows_of(st, "old-open"), before_open);
	ck_assert_int_eq(q_int(st, "SELECT count(*) FROM tasks"), 5);
	th_store_close(st);
}
END_TEST

/* Sweeps the stuck tasks idle since before with windows of size task numbers, as
 * `tiny-harness purge` does; returns how many went. */
static int64_t sweep_stuck(struct th_store *st, int64_t before, int size)
{
	struct th_error e;
	int64_t cursor = 0, upto = 0, total = 0, n = 0;
	do {
		begin(st);
		ck_assert_int_eq(th_store_task_window(st, cursor, size, &upto, &e), TH_OK);
		if (upto > 0) {
			ck_assert_int_gt(upto, cursor);
			ck_assert_int_eq(th_store_purge_stuck(st, before, cursor, upto, &n, &e),
			                 TH_OK);
			total += n;
		}
		commit(st);
		cursor = upto;
	} while (upto > 0);
	return total;
}

/* RET-2: stuck means not terminal, no live turn, no open sub-task and nothing (status,
 * event, message) since the cut-off; only such tasks go, on both backends. */
START_TEST(test_ret2_purge_stuck_takes_only_idle_tasks_without_turn_or_open_child)
{
	struct th_store *st = open_store();
	struct th_error e;
	int64_t turn;
	begin(st);
	add_task_at(st, "stuck-working", "c", 2, 1000, "alice");
	add_task_at(st, "stuck-waiting", "c", 6, 1000, "alice"); /* INPUT_REQUIRED */
	add_task_at(st, "has-turn", "c", 2, 1000, "alice");
	ck_assert_int_eq(th_test_message_append(st, "has-turn", "m1", "ROLE_USER", "alice",
	                                        "{\"messageId\":\"m1\"}", &e),
	                 TH_OK);
	ck_assert_int_eq(th_store_turn_create(st, "has-turn", "m1", &turn, &e), TH_OK);
	add_task_at(st, "parent", "c", 2, 1000, "alice");
	add_task_at(st, "parent.1", "c", 2, 1000, "alice");
	ck_assert_int_eq(th_store_subtask_link(st, "parent", "parent.1", &e), TH_OK);
	add_task_at(st, "late-event", "c", 2, 1000, "alice");
	ck_assert_int_eq(
	    th_test_event_append(st, "late-event", "task", TH_ENDS_NONE, "{}", NULL, &e), TH_OK);
	add_task_at(st, "late-message", "c", 2, 1000, "alice");
	ck_assert_int_eq(th_test_message_append(st, "late-message", "m1", "ROLE_USER", "alice",
	                                        "{\"messageId\":\"m1\"}", &e),
	                 TH_OK);
	add_task_at(st, "old-done", "c", 3, 1000, "alice");
	add_task_at(st, "fresh", "c", 2, 1000, "alice");
	fill_task(st, "stuck-working");
	commit(st);
	/* fill_task's turn is over; everything idle since 100 but the late ones' rows. */
	run_sql(st, "UPDATE turn_rows SET state = 'done' WHERE task_num = "
	            "(SELECT num FROM tasks WHERE id = 'stuck-working')");
	run_sql(st, "UPDATE tasks SET updated_ms = 100 WHERE id <> 'fresh'");
	run_sql(st, "UPDATE event_rows SET created_ms = 100 WHERE task_num IN (SELECT num FROM "
	            "tasks WHERE id NOT IN ('late-event'))");
	run_sql(st, "UPDATE message_rows SET created_ms = 100 WHERE task_num IN (SELECT num FROM "
	            "tasks WHERE id NOT IN ('late-message'))");
	int64_t tasks = q_int(st, "SELECT count(*) FROM tasks");
	/* Windows of 3 numbers: the sweep crosses several. parent.1 is stuck itself (idle,
	 * open, no turn), and once it is gone its parent has no open child: a second sweep
	 * takes the parent. */
	int64_t first = sweep_stuck(st, 500, 3);
	ck_assert_int_eq(q_int(st, "SELECT count(*) FROM tasks WHERE id IN ('stuck-working', "
	                           "'stuck-waiting', 'parent.1')"),
	                 0);
	ck_assert_int_eq(rows_of(st, "stuck-working"), 0);
	ck_assert_int_eq(q_int(st, "SELECT count(*) FROM tasks WHERE id IN ('has-turn', "
	                           "'late-event', 'late-message', 'old-done', 'fresh', "
	                           "'stuck-working.1')"),
	                 6);
	int64_t parent = q_int(st, "SELECT count(*) FROM tasks WHERE id = 'parent'");
	int64_t second = sweep_stuck(st, 500, 3);
	ck_assert_int_eq(first + second, 4);
	ck_assert_int_eq(parent + second, 2); /* the parent went in one of the two sweeps */
	ck_assert_int_eq(q_int(st, "SELECT count(*) FROM tasks"), tasks - 4);
	/* Nothing idle since before 50: nothing goes. */
	ck_assert_int_eq(sweep_stuck(st, 50, 1000), 0);
	int64_t upto = -1;
	ck_assert_int_eq(th_store_task_window(st, INT64_MAX - 1, 10, &upto, &e), TH_OK);
	ck_assert_int_eq(upto, 0);
	th_store_close(st);
}
END_TEST

/* RET-4: a delivery that gave up is listed by push_dead_letters (with its webhook and
 * error) until retain_dead_letters, pruned apart from delivered rows, on both backends. */
START_TEST(test_ret4_dead_letter_view_lists_until_its_own_cutoff)
{
	struct th_store *st = open_store();
	struct th_error e;
	begin(st);
	add_task(st, "t");
	put_config(st, "t", "c1", "alice", "https://hook.example/a2a");
	ck_assert_int_eq(th_test_push_enqueue(st, "t", 1, "{\"a\":1}", NULL, NULL, &e), TH_OK);
	ck_assert_int_eq(th_test_push_enqueue(st, "t", 2, "{\"a\":2}", NULL, NULL, &e), TH_OK);
	struct th_push_delivery *d = NULL;
	size_t n = 0;
	ck_assert_int_eq(th_store_push_claim_due(st, th_now_ms(), 30000, 0, &d, &n, &e), TH_OK);
	ck_assert_uint_eq(n, 2);
	ck_assert_int_eq(th_store_push_dead(st, d[0].id, "HTTP 410", &e), TH_OK);
	ck_assert_int_eq(th_store_push_delivered(st, d[1].id, &e), TH_OK);
	th_push_deliveries_free(d, n);
	commit(st);
	ck_assert_int_eq(q_int(st, "SELECT count(*) FROM push_dead_letters"), 1);
	char *row = q_text(st, "SELECT task_id || ' ' || config_id || ' ' || participant_id || "
	                       "' ' || url || ' ' || seq || ' ' || attempts || ' ' || last_error "
	                       "FROM push_dead_letters");
	ck_assert_str_eq(row, "t c1 alice https://hook.example/a2a 1 1 HTTP 410");
	free(row);
	row = q_text(st, "SELECT died_at FROM push_dead_letters");
	ck_assert_int_eq(strlen(row), 20); /* 2026-12-05T21:00:00Z */
	ck_assert_int_eq(row[10], 'T');
	ck_assert_int_eq(row[19], 'Z');
	free(row);
	int64_t pruned = -1, now = th_now_ms();
	/* Delivered rows are due, dead letters not yet: only the delivered row goes. */
	begin(st);
	ck_assert_int_eq(th_store_push_prune(st, now + 1000, now - 60000, &pruned, &e), TH_OK);
	commit(st);
	ck_assert_int_eq(pruned, 1);
	ck_assert_int_eq(q_int(st, "SELECT count(*) FROM push_dead_letters"), 1);
	/* retain_dead_letters = off is a cut-off of 0: kept. */
	begin(st);
	ck_assert_int_eq(th_store_push_prune(st, now + 1000, 0, &pruned, &e), TH_OK);
	commit(st);
	ck_assert_int_eq(pruned, 0);
	begin(st);
	ck_assert_int_eq(th_store_push_prune(st, 0, now + 1000, &pruned, &e), TH_OK);
	commit(st);
	ck_assert_int_eq(pruned, 1);
	ck_assert_int_eq(q_int(st, "SELECT count(*) FROM push_dead_letters"), 0);
	th_store_close(st);
}
END_TEST

/* RET-4 (decision-076): th_store_push_dead_letters answers one owner's dead letters in one
 * tenant, newest death first, from a (died_ms, id) cursor, at most limit; on both
 * backends. */
START_TEST(test_ret4_dead_letters_read_owner_tenant_newest_first)
{
	struct th_store *st = open_store();
	struct th_error e;
	begin(st);
	add_task(st, "t1");
	add_task(st, "t2");
	put_config(st, "t1", "c1", "alice", "https://hook.example/1?k=v");
	put_config(st, "t1", "c2", "alice", "https://hook.example/2");
	put_config(st, "t1", "cb", "bob", "https://hook.example/b");
	put_config(st, "t2", "ca", "alice", "https://hook.example/acme");
	ck_assert_int_eq(th_test_push_enqueue(st, "t1", 1, "{}", NULL, NULL, &e), TH_OK);
	ck_assert_int_eq(th_test_push_enqueue(st, "t2", 4, "{}", NULL, NULL, &e), TH_OK);
	struct th_push_delivery *d = NULL;
	size_t n = 0;
	ck_assert_int_eq(th_store_push_claim_due(st, th_now_ms(), 30000, 0, &d, &n, &e), TH_OK);
	ck_assert_uint_eq(n, 4);
	for (size_t i = 0; i < n; i++)
		ck_assert_int_eq(th_store_push_dead(st, d[i].id, "HTTP 410", &e), TH_OK);
	th_push_deliveries_free(d, n);
	commit(st);
	run_sql(st, "UPDATE tasks SET tenant = 'acme' WHERE id = 't2'");
	run_sql(st, "UPDATE push_outbox SET updated_ms = CASE config_id WHEN 'c1' THEN 3000 "
	            "WHEN 'c2' THEN 3500 WHEN 'cb' THEN 5000 ELSE 4000 END");
	struct th_push_dead_letter *v = NULL;
	ck_assert_int_eq(
	    th_store_push_dead_letters(st, "alice", "", INT64_MAX, INT64_MAX, 10, &v, &n, &e),
	    TH_OK);
	ck_assert_uint_eq(n, 2);
	ck_assert_str_eq(v[0].config_id, "c2");
	ck_assert_str_eq(v[1].config_id, "c1");
	ck_assert_str_eq(v[1].task_id, "t1");
	ck_assert_str_eq(v[1].url, "https://hook.example/1?k=v"); /* redacting is the caller's */
	ck_assert_int_eq(v[1].seq, 1);
	ck_assert_int_eq(v[1].attempts, 1);
	ck_assert_str_eq(v[1].last_error, "HTTP 410");
	ck_assert_int_eq(v[1].died_ms, 3000);
	ck_assert_int_gt(v[1].created_ms, 0);
	int64_t after_ms = v[0].died_ms, after_id = v[0].id;
	th_push_dead_letters_free(v, n);
	/* A page of one, then the rest from its cursor. */
	ck_assert_int_eq(
	    th_store_push_dead_letters(st, "alice", NULL, INT64_MAX, INT64_MAX, 1, &v, &n, &e),
	    TH_OK);
	ck_assert_uint_eq(n, 1);
	ck_assert_str_eq(v[0].config_id, "c2");
	th_push_dead_letters_free(v, n);
	ck_assert_int_eq(
	    th_store_push_dead_letters(st, "alice", "", after_ms, after_id, 1, &v, &n, &e), TH_OK);
	ck_assert_uint_eq(n, 1);
	ck_assert_str_eq(v[0].config_id, "c1");
	th_push_dead_letters_free(v, n);
	/* The owner's only, the tenant's only (TEN-2). */
	ck_assert_int_eq(
	    th_store_push_dead_letters(st, "bob", "", INT64_MAX, INT64_MAX, 10, &v, &n, &e), TH_OK);
	ck_assert_uint_eq(n, 1);
	ck_assert_str_eq(v[0].config_id, "cb");
	th_push_dead_letters_free(v, n);
	ck_assert_int_eq(
	    th_store_push_dead_letters(st, "alice", "acme", INT64_MAX, INT64_MAX, 10, &v, &n, &e),
	    TH_OK);
	ck_assert_uint_eq(n, 1);
	ck_assert_str_eq(v[0].config_id, "ca");
	ck_assert_int_eq(v[0].seq, 4);
	th_push_dead_letters_free(v, n);
	ck_assert_int_eq(
	    th_store_push_dead_letters(st, "bob", "acme", INT64_MAX, INT64_MAX, 10, &v, &n, &e),
	    TH_OK);
	ck_assert_uint_eq(n, 0);
	ck_assert_ptr_null(v);
	ck_assert_int_eq(
	    th_store_push_dead_letters(st, "carol", "", INT64_MAX, INT64_MAX, 10, &v, &n, &e),
	    TH_OK);
	ck_assert_uint_eq(n, 0);
	ck_assert_int_eq(
	    th_store_push_dead_letters(st, "alice", "", INT64_MAX, INT64_MAX, 0, &v, &n, &e),
	    TH_EINVAL);
	ck_assert_int_eq(
	    th_store_push_dead_letters(st, NULL, "", INT64_MAX, INT64_MAX, 5, &v, &n, &e),
	    TH_EINVAL);
	th_store_close(st);
}
END_TEST

/* RET-3: a new database is INCREMENTAL; after a purge th_store_compact gives the freed
 * pages back and cuts the WAL to 0 bytes; an older (NONE) database keeps its size until
 * th_store_vacuum, which switches it. SQLite only. */
START_TEST(test_ret3_compact_shrinks_file_and_wal_vacuum_switches_old_files)
{
	struct th_store *st = open_store();
	struct th_error e;
	ck_assert_int_eq(q_int(st, "PRAGMA auto_vacuum"), 2);
	char big[8192];
	memset(big, 'x', sizeof big - 1);
	big[sizeof big - 1] = '\0';
	char json[8300];
	snprintf(json, sizeof json, "{\"messageId\":\"m1\",\"t\":\"%s\"}", big);
	for (int round = 0; round < 2; round++) {
		begin(st);
		for (int i = 0; i < 300; i++) {
			char id[32];
			snprintf(id, sizeof id, "t%d", i);
			add_task_at(st, id, "c", 3, 1000, "alice");
			ck_assert_int_eq(
			    th_test_message_append(st, id, "m1", "ROLE_USER", "alice", json, &e),
			    TH_OK);
		}
		commit(st);
		int64_t n = 0;
		begin(st);
		ck_assert_int_eq(th_store_purge(st, INT64_MAX, 0, &n, &e), TH_OK);
		commit(st);
		ck_assert_int_eq(n, 300);
		struct th_compact c;
		if (round == 0) {
			ck_assert_int_eq(th_store_compact(st, &c, &e), TH_OK);
			ck_assert_int_eq(c.known, 1);
			ck_assert_int_eq(c.incremental, 1);
			ck_assert_int_gt(c.freed_pages, 400);
			ck_assert_int_eq(c.wal_truncated, 1);
			ck_assert_int_eq(c.wal_after, 0);
			/* The rows may still be in the WAL: the two files together shrink. */
			ck_assert_msg((c.db_after + c.wal_after) * 4 < c.db_before + c.wal_before,
			              "%lld + %lld -> %lld + %lld", (long long)c.db_before,
			              (long long)c.wal_before, (long long)c.db_after,
			              (long long)c.wal_after);
			ck_assert_int_eq(q_int(st, "PRAGMA freelist_count"), 0);
			/* An older file: no pointer map (as made before 017). */
			ck_assert_int_eq(sqlite3_exec(th_store_db(st),
			                              "PRAGMA auto_vacuum = NONE; VACUUM", NULL,
			                              NULL, NULL),
			                 SQLITE_OK);
			ck_assert_int_eq(q_int(st, "PRAGMA auto_vacuum"), 0);
		} else {
			ck_assert_int_eq(th_store_compact(st, &c, &e), TH_OK);
			ck_assert_int_eq(c.incremental, 0);
			ck_assert_int_eq(c.freed_pages, 0);
			ck_assert_int_gt(q_int(st, "PRAGMA freelist_count"), 400);
			ck_assert_int_eq(th_store_vacuum(st, &c, &e), TH_OK);
			ck_assert_int_eq(c.incremental, 1);
			/* The rows may still be in the WAL: the two files together shrink. */
			ck_assert_msg((c.db_after + c.wal_after) * 4 < c.db_before + c.wal_before,
			              "%lld + %lld -> %lld + %lld", (long long)c.db_before,
			              (long long)c.wal_before, (long long)c.db_after,
			              (long long)c.wal_after);
			ck_assert_int_eq(c.wal_after, 0);
			ck_assert_int_eq(q_int(st, "PRAGMA auto_vacuum"), 2);
			ck_assert_int_eq(q_int(st, "PRAGMA freelist_count"), 0);
		}
	}
	/* Not inside a transaction. */
	struct th_compact c;
	begin(st);
	ck_assert_int_eq(th_store_compact(st, &c, &e), TH_EINVAL);
	commit(st);
	th_store_close(st);
}
END_TEST

/* Hot-path statements of 002 use an index (no full SCAN of a table). */
START_TEST(test_store1_002_queries_use_indexes)
{
	struct th_store *st = open_store();
	const char *queries[] = {
	    "SELECT * FROM help_requests WHERE task_id = 'x' AND state = 'pending' "
	    "ORDER BY created_ms DESC LIMIT 1",
	    "SELECT * FROM push_outbox WHERE state IN ('pending', 'sending') AND "
	    "next_attempt_ms <= 5 ORDER BY id LIMIT 10",
	    /* Recovery across tasks reads the live turns only (010, decision-048). */
	    "SELECT * FROM turns WHERE state IN ('queued', 'running') AND ((state = 'running' "
	    "AND lease_until_ms < 5) OR (state = 'queued' AND updated_ms < 5)) ORDER BY +id",
	    "SELECT * FROM channel_messages WHERE task_id = 'x' AND channel_id = 'y' AND seq > 0 "
	    "ORDER BY seq",
	    "SELECT * FROM plan_steps WHERE task_id = 'x' ORDER BY pos",
	    "SELECT * FROM push_configs WHERE task_id = 'x' AND participant_id = 'p'",
	    "SELECT id FROM tasks WHERE (state = 'TASK_STATE_COMPLETED' OR state = "
	    "'TASK_STATE_FAILED' OR state = 'TASK_STATE_CANCELED' OR state = "
	    "'TASK_STATE_REJECTED') AND updated_ms < 5",
	    "SELECT task_id FROM messages WHERE message_id = 'm' AND sender = 'a' AND pos = 1",
	    "SELECT id FROM turns WHERE task_id = 'x' AND state IN ('queued', 'running')",
	    "SELECT * FROM waiting_tasks",
	    "SELECT 1 FROM channel_members WHERE task_id = 'x' AND channel_id = 'y' "
	    "AND participant_id = 'p'",
	};
	for (size_t i = 0; i < sizeof queries / sizeof queries[0]; i++) {
		char sql[600];
		/* EXPLAIN QUERY PLAN cannot be a subquery: run it and read its detail text. */
		snprintf(sql, sizeof sql, "EXPLAIN QUERY PLAN %s", queries[i]);
		sqlite3_stmt *s = NULL;
		ck_assert_int_eq(sqlite3_prepare_v2(th_store_db(st), sql, -1, &s, NULL), SQLITE_OK);
		while (sqlite3_step(s) == SQLITE_ROW) {
			const char *d = (const char *)sqlite3_column_text(s, 3);
			/* A scan of a (partial) index holds only the rows wanted. */
			ck_assert_msg(d == NULL || strncmp(d, "SCAN ", 5) != 0 ||
			                  strstr(d, " USING ") != NULL,
			              "query %zu scans: %s", i, d);
		}
		sqlite3_finalize(s);
	}
	th_store_close(st);
}
END_TEST

/* LIM-5: a database failure tells the client what failed, never SQLite's own message
 * (which can name the file); that goes to the server's log. */
START_TEST(test_lim5_database_errors_name_no_file_and_no_sqlite_text)
{
	struct th_store *st = open_store();
	ck_assert_int_eq(sqlite3_exec(th_store_db(st), "PRAGMA query_only = ON", NULL, NULL, NULL),
	                 SQLITE_OK);
	struct th_error e;
	th_error_clear(&e);
	int64_t n = 0;
	th_err rc = th_store_purge(st, INT64_MAX, 10, &n, &e);
	ck_assert_int_eq(rc, TH_EINTERNAL);
	ck_assert_msg(strstr(e.msg, "read-only") != NULL, "message: %s", e.msg);
	ck_assert_msg(strstr(e.msg, tmpdir) == NULL, "message names the file: %s", e.msg);
	ck_assert_msg(strstr(e.msg, "attempt to write") == NULL, "SQLite's text: %s", e.msg);
	th_store_close(st);
}
END_TEST

/* ---- PostgreSQL (STORE-6) ---------------------------------------------------------- */

START_TEST(test_store6_migration_lists_end_at_the_same_version)
{
	ck_assert_int_gt(th_store_pg_migrations_n, 0);
	ck_assert_int_eq(th_store_pg_migrations[th_store_pg_migrations_n - 1].version,
	                 th_store_schema_version());
	/* The first brings a new database to its version; the rest follow one by one. */
	for (int i = 1; i < th_store_pg_migrations_n; i++)
		ck_assert_int_eq(th_store_pg_migrations[i].version,
		                 th_store_pg_migrations[i - 1].version + 1);
}
END_TEST

START_TEST(test_store6_pg_migrates_once_and_records_its_version)
{
	struct th_store *st = open_store();
	ck_assert_int_eq(q_int(st, "SELECT version FROM tiny_harness_schema"),
	                 th_store_schema_version());
	ck_assert_int_eq(q_int(st, "SELECT application_id FROM tiny_harness_schema"), 0x74486172);
	ck_assert_int_eq(
	    q_int(st, "SELECT count(*) FROM pg_views WHERE viewname = 'waiting_tasks'"), 1);
	/* 020 (SCALE-1): the count function a trigger calls per participation keeps its
	 * plan (PL/pgSQL); a LANGUAGE sql body is parsed and planned at every call. */
	ck_assert_int_eq(q_int(st, "SELECT count(*) FROM pg_proc p JOIN pg_language l "
	                           "ON l.oid = p.prolang WHERE p.proname = "
	                           "'th_participant_count_add' AND l.lanname = 'plpgsql'"),
	                 1);
	ck_assert_ptr_null(th_store_db(st)); /* no SQLite handle behind it */
	th_store_close(st);
	st = open_store();
	ck_assert_int_eq(q_int(st, "SELECT count(*) FROM tiny_harness_schema"), 1);
	th_store_close(st);
}
END_TEST

START_TEST(test_store6_pg_foreign_or_newer_database_is_refused)
{
	char out[256];
	ck_assert_int_eq(psql(pgdb, "CREATE TABLE someone_elses (a int)", out, sizeof out), 0);
	struct th_error e;
	ck_assert_int_ne(try_open(&e), TH_OK);
	ck_assert_msg(strstr(e.msg, "not a tiny-harness database") != NULL, "%s", e.msg);
	ck_assert_int_eq(q_int(NULL, "SELECT count(*) FROM pg_tables WHERE schemaname = 'public'"),
	                 1); /* nothing of ours was created */
	ck_assert_int_eq(psql(pgdb, "DROP TABLE someone_elses", out, sizeof out), 0);

	struct th_store *st = open_store();
	th_store_close(st);
	char sql[96];
	snprintf(sql, sizeof sql, "UPDATE tiny_harness_schema SET version = %d",
	         th_store_schema_version() + 1);
	ck_assert_int_eq(psql(pgdb, sql, out, sizeof out), 0);
	ck_assert_int_ne(try_open(&e), TH_OK);
	char v[16];
	snprintf(v, sizeof v, "%d", th_store_schema_version() + 1);
	ck_assert_msg(strstr(e.msg, v) != NULL, "message lacks the database's version: %s", e.msg);
}
END_TEST

START_TEST(test_store6_pg_password_is_never_in_a_message)
{
	/* Port 1 on loopback: nothing listens, so the connection fails. */
	struct th_store_opts o = {.path = "postgresql://th:s3cret-pw@127.0.0.1:1/nodb",
	                          .busy_timeout_ms = 100};
	struct th_store *st = NULL;
	struct th_error e;
	th_error_clear(&e);
	ck_assert_int_ne(th_store_open(&o, &st, &e), TH_OK);
	ck_assert_ptr_null(st);
	ck_assert_msg(strstr(e.msg, "s3cret-pw") == NULL, "password in: %s", e.msg);
	ck_assert_msg(strstr(e.msg, "th@127.0.0.1:1/nodb") != NULL, "no database named: %s", e.msg);
}
END_TEST

START_TEST(test_store6_pg_constraint_failures_are_worded_as_on_sqlite)
{
	struct th_store *st = open_store();
	struct th_error e;
	begin(st);
	add_task(st, "t");
	ck_assert_int_eq(th_test_message_append(st, "t", "m1", "ROLE_USER", "alice",
	                                        "{\"messageId\":\"m1\"}", &e),
	                 TH_OK);
	commit(st);
	begin(st);
	ck_assert_int_eq(th_test_message_append(st, "t", "m1", "ROLE_USER", "alice",
	                                        "{\"messageId\":\"m1\"}", &e),
	                 TH_EINVAL);
	ck_assert_msg(strstr(e.msg, "duplicate messageId m1") != NULL, "%s", e.msg);
	th_store_rollback(st);
	begin(st);
	ck_assert_int_eq(th_test_message_append(st, "nope", "m2", "ROLE_USER", "alice",
	                                        "{\"messageId\":\"m2\"}", &e),
	                 TH_ENOTFOUND);
	th_store_rollback(st);
	/* A second BEGIN inside a transaction is refused, not a warning. */
	begin(st);
	ck_assert_int_eq(th_store_begin(st, &e), TH_EINTERNAL);
	th_store_rollback(st);
	th_store_close(st);
}
END_TEST

/* Migration 022 (decision-082): the enumerated columns are checked through domains. An
 * outside writer is refused exactly what the lists refused, and the table's constraints
 * are short: PostgreSQL parses each one's text again for every INSERT and UPDATE. */
START_TEST(test_scale1_pg_enumerated_checks_go_through_domains_and_refuse_the_same)
{
	struct th_store *st = open_store();
	begin(st);
	add_task(st, "t");
	commit(st);
	static const char *const refused[][2] = {
	    {"UPDATE tasks SET state = 'TASK_STATE_BOGUS' WHERE id = 't'", "th_task_state_check"},
	    {"UPDATE tasks SET sub_state = 'awaiting-answer' WHERE id = 't'", "tasks_check"},
	    {"UPDATE tasks SET state = 'TASK_STATE_INPUT_REQUIRED', sub_state = 'awaiting-lunch' "
	     "WHERE id = 't'",
	     "th_sub_state_check"},
	    {"UPDATE participants SET role = 'owner' WHERE task_id = 't'",
	     "th_participant_role_check"},
	    {"UPDATE participants SET kind = 'robot' WHERE task_id = 't'",
	     "th_participant_kind_check"},
	    {"INSERT INTO turn_rows (task_num, message_id, state, created_ms, updated_ms) "
	     "SELECT num, 'm', 'paused', 0, 0 FROM tasks WHERE id = 't'",
	     "th_turn_state_check"},
	    /* decision-086: the bounds are domains too. */
	    {"UPDATE tasks SET child_count = -1 WHERE id = 't'", "th_count_check"},
	    {"UPDATE tasks SET status_pos = 0 WHERE id = 't'", "th_position_check"},
	    {"INSERT INTO turn_rows (task_num, message_id, state, cut, created_ms, updated_ms) "
	     "SELECT num, 'm', 'cut', 2, 0, 0 FROM tasks WHERE id = 't'",
	     "th_flag_check"},
	    {"INSERT INTO event_rows (task_num, seq, kind, json, created_ms, ends) "
	     "SELECT num, 99, 'status', '{}', 0, 3 FROM tasks WHERE id = 't'",
	     "th_event_ends_check"},
	};
	char out[512];
	for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
		ck_assert_msg(psql(pgdb, refused[i][0], out, sizeof out) != 0, "accepted: %s",
		              refused[i][0]);
		ck_assert_msg(strstr(out, refused[i][1]) != NULL, "%s: %s", refused[i][0], out);
	}
	/* What the lists allowed is still allowed. */
	ck_assert_int_eq(psql(pgdb,
	                      "UPDATE tasks SET state = 'TASK_STATE_INPUT_REQUIRED', "
	                      "sub_state = 'awaiting-next-message' WHERE id = 't';"
	                      "UPDATE participants SET role = 'watcher', kind = 'agent' "
	                      "WHERE task_id = 't';"
	                      "INSERT INTO turn_rows (task_num, message_id, state, created_ms, "
	                      "updated_ms) SELECT num, 'm', 'cut', 0, 0 FROM tasks WHERE id = 't';"
	                      "SELECT state || ' ' || sub_state FROM tasks WHERE id = 't'",
	                      out, sizeof out),
	                 0);
	ck_assert_str_eq(out, "TASK_STATE_INPUT_REQUIRED awaiting-next-message");
	/* PostgreSQL reads a table's CHECK texts again at every INSERT and UPDATE: of the
	 * tables every write touches, only the rule between two columns is one (086). */
	ck_assert_int_eq(psql(pgdb,
	                      "SELECT string_agg(conname, ',') FROM pg_constraint "
	                      "WHERE contype = 'c' AND conrelid IN ('tasks'::regclass, "
	                      "'participants'::regclass, 'turn_rows'::regclass, "
	                      "'event_rows'::regclass)",
	                      out, sizeof out),
	                 0);
	ck_assert_str_eq(out, "tasks_check");
	th_store_close(st);
}
END_TEST

/* SCALE-1 (decision-086): migration 024 carries a database at version 23 over: its
 * checked columns take their domains as types, the rows are kept, and the views it makes
 * again answer as before. The database is built by 023's migrations, as the landed
 * build left it, with a waiting task, a cut turn and an event that ends its streams. */
START_TEST(test_scale1_pg_024_carries_a_version_23_database_over)
{
	struct th_buf sql;
	th_buf_init(&sql);
	for (int i = 0; i < th_store_pg_migrations_n && th_store_pg_migrations[i].version <= 23;
	     i++) {
		th_buf_puts(&sql, th_store_pg_migrations[i].sql);
		th_buf_puts(&sql, ";\n");
	}
	th_buf_puts(
	    &sql,
	    "CREATE TABLE tiny_harness_schema (version integer NOT NULL, application_id bigint "
	    "NOT NULL); INSERT INTO tiny_harness_schema VALUES (23, 1950900594);\n"
	    "INSERT INTO tasks (id, context_id, state, sub_state, status_ms, name, goal, "
	    "ext_json, created_by, created_ms, updated_ms, child_count, status_pos) VALUES "
	    "('old-wait', 'c', 'TASK_STATE_INPUT_REQUIRED', 'awaiting-next-message', 5, 'w', "
	    "'g', '{}', 'bob', 1, 2, 3, NULL), ('old-done', 'c', 'TASK_STATE_COMPLETED', NULL, "
	    "6, 'd', 'g', '{}', 'bob', 1, 2, 0, NULL);\n"
	    "INSERT INTO participants (task_id, participant_id, kind, role, added_ms, rowid) "
	    "VALUES ('old-wait', 'bob', 'human', 'reporter', 1, 1);\n"
	    "INSERT INTO event_rows (task_num, seq, kind, json, created_ms, ends) "
	    "SELECT num, 1, 'status', '{}', 1, 2 FROM tasks WHERE id = 'old-done';\n"
	    "INSERT INTO turn_rows (task_num, message_id, state, cut, created_ms, updated_ms) "
	    "SELECT num, 'm', 'cut', 1, 1, 1 FROM tasks WHERE id = 'old-wait';\n");
	ck_assert(!sql.oom);
	char out[2048];
	ck_assert_msg(psql(pgdb, sql.data, out, sizeof out) == 0, "version 23: %s", out);
	th_buf_free(&sql);
	static const char *const views =
	    "SELECT (SELECT string_agg(w::text, ';' ORDER BY w.id) FROM waiting_tasks w) || '|' "
	    "|| (SELECT string_agg(e::text, ';' ORDER BY e.task_id, e.seq) FROM events e) || '|' "
	    "|| (SELECT string_agg(u::text, ';' ORDER BY u.id) FROM turns u) || '|' || "
	    "(SELECT string_agg(t.id || ' ' || t.state || ' ' || coalesce(t.sub_state, '-') || ' '"
	    " || t.child_count, ';' ORDER BY t.id) FROM tasks t)";
	char before[1024], after[1024];
	ck_assert_int_eq(psql(pgdb, views, before, sizeof before), 0);
	ck_assert_ptr_nonnull(strstr(before, "old-wait"));
	struct th_store *st = open_store(); /* migrates to the binary's version */
	th_store_close(st);
	ck_assert_int_eq(psql(pgdb, views, after, sizeof after), 0);
	ck_assert_str_eq(after, before);
	ck_assert_int_eq(
	    psql(pgdb,
	         "SELECT string_agg(attname || ' ' || format_type(atttypid, -1), ', ' "
	         "ORDER BY attrelid::regclass::text, attname) FROM pg_attribute WHERE "
	         "attrelid IN ('tasks'::regclass, 'turn_rows'::regclass, "
	         "'event_rows'::regclass, 'participants'::regclass) AND atttypid IN "
	         "(SELECT oid FROM pg_type WHERE typtype = 'd' AND typname LIKE 'th_%')",
	         out, sizeof out),
	    0);
	ck_assert_str_eq(out, "ends th_event_ends, kind th_participant_kind, role "
	                      "th_participant_role, child_count th_count, state th_task_state, "
	                      "status_pos th_position, sub_state th_sub_state, cut th_flag, state "
	                      "th_turn_state");
	/* The rows were checked when the domains got their constraints back. */
	ck_assert_int_ne(psql(pgdb, "UPDATE tasks SET child_count = -1", out, sizeof out), 0);
	ck_assert_ptr_nonnull(strstr(out, "th_count_check"));
}
END_TEST

/* decision-085: a connection plans each prepared statement once, without its arguments,
 * as SQLite does. Left to choose, PostgreSQL plans a statement for its arguments at
 * least its first five times, and some for good when those ran on nearly empty tables,
 * as on a new site's first requests. */
START_TEST(test_scale1_pg_statements_are_planned_once_without_their_arguments)
{
	struct th_store *st = open_store();
	for (int i = 0; i < 12; i++) {
		char id[32], who[32];
		snprintf(id, sizeof id, "plan-%d", i);
		snprintf(who, sizeof who, "someone-%d", i);
		begin(st);
		add_task_at(st, id, "ctx-plans", 2, 1000 + i, "alice");
		struct th_participant_in p = {.id = who, .kind = "human", .role = "watcher"};
		struct th_error e;
		ck_assert_int_eq(th_store_participant_put(st, id, &p, &e), TH_OK);
		commit(st);
	}
	int64_t custom = -1, generic = -1;
	ck_assert_int_eq(th_store_plan_counts(st, &custom, &generic), 0);
	ck_assert_msg(custom == 0, "%lld executions planned for their arguments",
	              (long long)custom);
	/* The task insert and the participant upsert ran 12 and 24 times, planned once. */
	ck_assert_msg(generic >= 36, "only %lld executions with a plan made once",
	              (long long)generic);
	th_store_close(st);
}
END_TEST

/* Appends one event to task on st in a write of its own. */
static void append_event(struct th_store *st, const char *task)
{
	struct th_error e;
	begin(st);
	ck_assert_int_eq(th_test_event_append(st, task, "status", TH_ENDS_NONE, "{}", NULL, &e),
	                 TH_OK);
	commit(st);
}

/* 1 when a commit was announced to reader within ms (and reads it), else 0. */
static int announced_within(struct th_store *reader, int ms)
{
	struct pollfd p = {.fd = th_store_change_fd(reader), .events = POLLIN};
	return poll(&p, 1, ms) == 1 && th_store_change_seen(reader);
}

/* A write that makes task "made-here" and appends its first event (the task event). */
static th_err make_and_record(struct th_store *st, void *arg, struct th_error *e)
{
	(void)arg;
	add_task(st, "made-here");
	return th_test_event_append(st, "made-here", "task", TH_ENDS_NONE, "{}", NULL, e);
}

/* decision-083: a commit announces itself only while a stream follows one of the tasks it
 * appended events to; a follow ends when its follower ends it or when it lapses. */
START_TEST(test_scale1_pg_only_a_commit_to_a_followed_task_is_announced)
{
	struct th_store *writer = open_store();
	struct th_store *reader = open_store();
	struct th_store *other = open_store();
	ck_assert_int_ge(th_store_change_fd(reader), 0);
	struct th_error e;
	begin(writer);
	add_task(writer, "followed");
	add_task(writer, "quiet");
	commit(writer);
	(void)announced_within(reader, 0);
	/* Nobody follows: nothing is announced, and no NOTIFY was sent at all. */
	append_event(writer, "followed");
	ck_assert_int_eq(announced_within(reader, 300), 0);
	/* Another follower's follow serves every listener. */
	ck_assert_int_eq(th_store_follow(other, "followed", 1, &e), TH_OK);
	append_event(writer, "quiet");
	ck_assert_int_eq(announced_within(reader, 300), 0);
	append_event(writer, "followed");
	ck_assert_int_eq(announced_within(reader, 5000), 1);
	/* One commit for both tasks is announced (once) because one of them is followed. */
	begin(writer);
	ck_assert_int_eq(
	    th_test_event_append(writer, "quiet", "status", TH_ENDS_NONE, "{}", NULL, &e), TH_OK);
	ck_assert_int_eq(
	    th_test_event_append(writer, "followed", "status", TH_ENDS_NONE, "{}", NULL, &e),
	    TH_OK);
	commit(writer);
	ck_assert_int_eq(announced_within(reader, 5000), 1);
	/* Put twice is one follow; ended, nothing more is announced. */
	ck_assert_int_eq(th_store_follow(other, "followed", 1, &e), TH_OK);
	char out[64];
	ck_assert_int_eq(psql(pgdb, "SELECT count(*) FROM stream_follows", out, sizeof out), 0);
	ck_assert_str_eq(out, "1");
	ck_assert_int_eq(th_store_follow(other, "followed", 0, &e), TH_OK);
	append_event(writer, "followed");
	ck_assert_int_eq(announced_within(reader, 300), 0);
	/* A follow that lapsed (its follower died) announces nothing, and a prune takes it. */
	ck_assert_int_eq(th_store_follow(other, "followed", 1, &e), TH_OK);
	ck_assert_int_eq(
	    psql(pgdb, "UPDATE stream_follows SET until_ms = until_ms - 31000", NULL, 0), 0);
	append_event(writer, "followed");
	ck_assert_int_eq(announced_within(reader, 300), 0);
	ck_assert_int_eq(th_store_follows_prune(reader, &e), TH_OK);
	ck_assert_int_eq(psql(pgdb, "SELECT count(*) FROM stream_follows", out, sizeof out), 0);
	ck_assert_str_eq(out, "0");
	/* A renewal puts several follows at once (a task named twice is one), ids quoted as
	 * text[] elements; a commit to such a task finds its follow. */
	const char *odd = "we\"ird\\id,{x}";
	begin(writer);
	add_task(writer, odd);
	commit(writer);
	const char *ids[] = {"followed", odd, "followed"};
	ck_assert_int_eq(th_store_follows_renew(other, ids, 3, &e), TH_OK);
	ck_assert_int_eq(psql(pgdb, "SELECT count(*) FROM stream_follows", out, sizeof out), 0);
	ck_assert_str_eq(out, "2");
	append_event(writer, "quiet");
	ck_assert_int_eq(announced_within(reader, 300), 0);
	append_event(writer, odd);
	ck_assert_int_eq(announced_within(reader, 5000), 1);
	/* A write's own new task is announced to no one: nobody can follow a task before it
	 * is committed. (A follow row put ahead by hand shows the write did not ask.) */
	ck_assert_int_eq(psql(pgdb,
	                      "INSERT INTO stream_follows VALUES ('made-here', 'by-hand', "
	                      "(extract(epoch FROM now()) * 1000)::bigint + 60000)",
	                      NULL, 0),
	                 0);
	ck_assert_msg(th_store_write(writer, make_and_record, NULL, &e) == TH_OK, "%s", e.msg);
	ck_assert_int_eq(announced_within(reader, 300), 0);
	append_event(writer, "made-here"); /* a later write to it is */
	ck_assert_int_eq(announced_within(reader, 5000), 1);
	th_store_close(other);
	th_store_close(reader);
	th_store_close(writer);
}
END_TEST

START_TEST(test_store6_pg_a_commit_is_announced_to_a_listener)
{
	struct th_store *writer = open_store();
	struct th_store *reader = open_store();
	int fd = th_store_change_fd(reader);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(th_store_change_seen(reader), 0);
	struct pollfd p = {.fd = fd, .events = POLLIN};
	struct th_error e;
	/* Announced commits are those of followed tasks (decision-083). */
	ck_assert_int_eq(th_store_follow(reader, "announced", 1, &e), TH_OK);
	/* A commit that appended no event is not announced: listeners look for events
	 * (decision-054). */
	begin(writer);
	add_task(writer, "announced");
	commit(writer);
	ck_assert_int_eq(poll(&p, 1, 300), 0);
	begin(writer);
	ck_assert_int_eq(
	    th_test_event_append(writer, "announced", "status", TH_ENDS_NONE, "{}", NULL, &e),
	    TH_OK);
	/* Nothing is announced before the commit. */
	ck_assert_int_eq(poll(&p, 1, 200), 0);
	commit(writer);
	ck_assert_int_eq(poll(&p, 1, 5000), 1);
	ck_assert_int_eq(th_store_change_seen(reader), 1);
	ck_assert_int_eq(th_store_change_seen(reader), 0); /* read once */
	/* A read transaction announces nothing. */
	struct th_task_row r;
	ck_assert_int_eq(th_store_task_get(writer, "announced", &r, &e), TH_OK);
	th_task_row_free(&r);
	ck_assert_int_eq(poll(&p, 1, 200), 0);
	th_store_close(reader);
	th_store_close(writer);
}
END_TEST

/* Ends every other session on the test's database (as a server restart or an idle
 * timeout would end a worker's connection). */
static void end_other_sessions(void)
{
	char out[256];
	/* With a timeout pg_terminate_backend waits until the session's process has ended,
	 * so its error and its close are on the client's socket when this returns; without
	 * one it only signals, and a loaded machine ended the session after the caller's
	 * next statement (CI at 8bd595f). */
	ck_assert_int_eq(
	    psql(pgdb,
	         "SELECT count(*) FILTER (WHERE pg_terminate_backend(pid, 10000)) FROM "
	         "pg_stat_activity WHERE datname = current_database() AND "
	         "pid <> pg_backend_pid()",
	         out, sizeof out),
	    0);
	ck_assert_msg(atoi(out) >= 1, "no session was ended: %s", out);
}

START_TEST(test_store6_pg_a_lost_connection_is_opened_again_where_that_is_safe)
{
	struct th_store *st = open_store();
	struct th_error e;
	begin(st);
	add_task(st, "kept");
	commit(st);
	/* Outside a transaction the statement runs again on a new connection. */
	end_other_sessions();
	struct th_task_row r;
	ck_assert_int_eq(th_store_task_get(st, "kept", &r, &e), TH_OK);
	th_task_row_free(&r);
	/* Inside one it is not retried: the transaction went with the connection, and
	 * nothing of it is stored; the next transaction works. */
	begin(st);
	add_task(st, "gone");
	end_other_sessions();
	int64_t seq = 0;
	ck_assert_int_ne(th_test_event_append(st, "gone", "task", TH_ENDS_NONE, "{}", &seq, &e),
	                 TH_OK);
	/* A retry may succeed: 503 with Retry-After, not 500. */
	ck_assert_int_eq(e.code, TH_EUNAVAILABLE);
	ck_assert_ptr_nonnull(strstr(e.msg, "retry"));
	th_store_rollback(st);
	/* The connection gone under a write (the server crashed): a read fails with it, and
	 * a write that goes on after that (the read's failure ignored) is told the same,
	 * not that it runs outside a transaction (the torture run, seed 1323). */
	struct th_store *crash = open_store();
	int fd = th_store_change_fd(crash); /* its own connection's socket (no db_listen) */
	ck_assert_int_ge(fd, 0);
	begin(crash);
	add_task(crash, "crashed");
	ck_assert_int_eq(shutdown(fd, SHUT_RDWR), 0);
	/* A read the transaction must ask the server for: the row of the task it made is
	 * answered from its insert (decision-087). */
	ck_assert_int_ne(th_store_task_get(crash, "kept", &r, &e), TH_OK);
	th_error_clear(&e);
	ck_assert_int_ne(
	    th_test_event_append(crash, "crashed", "task", TH_ENDS_NONE, "{}", &seq, &e), TH_OK);
	ck_assert_int_eq(e.code, TH_EUNAVAILABLE);
	ck_assert_msg(strstr(e.msg, "retry") != NULL, "%s", e.msg);
	th_store_rollback(crash);
	th_store_close(crash);
	begin(st);
	add_task(st, "after");
	commit(st);
	ck_assert_int_eq(q_int(st, "SELECT count(*) FROM tasks WHERE id IN ('kept', 'after')"), 2);
	ck_assert_int_eq(q_int(st, "SELECT count(*) FROM tasks WHERE id = 'gone'"), 0);
	th_store_close(st);
}
END_TEST

/* STORE-6: a session the server ended while the connection was idle (a restart,
 * pg_terminate_backend) is found before the next transaction's BEGIN, which would fail
 * with it (the BEGIN is sent with the first statement, decision-054): the transaction
 * runs on a new connection. Before, the BEGIN failed with "terminating connection due
 * to administrator command" (the torture run under TH_TEST_PG: ~200 such refusals in
 * 16 s). Several times, since the server's close may come after its error. */
START_TEST(test_store6_pg_a_session_ended_while_idle_is_found_before_begin)
{
	struct th_store *st = open_store();
	begin(st);
	add_task(st, "first");
	commit(st);
	char id[32];
	for (int i = 0; i < 5; i++) {
		end_other_sessions();
		snprintf(id, sizeof id, "after-%d", i);
		begin(st);
		add_task(st, id);
		commit(st);
	}
	ck_assert_int_eq(q_int(st, "SELECT count(*) FROM tasks"), 6);
	th_store_close(st);
}
END_TEST

START_TEST(test_store6_sqlite_has_no_announcements_streams_poll)
{
	struct th_store *st = open_store();
	ck_assert_int_eq(th_store_change_fd(st), -1);
	ck_assert_int_eq(th_store_change_seen(st), 0);
	th_store_close(st);
}
END_TEST

/* ---- SEC-6: db_group ---------------------------------------------------------------- */

static th_err open_grouped(const char *path, const char *group, int heal_later,
                           struct th_store **out, struct th_error *e)
{
	struct th_store_opts o = {
	    .path = path, .busy_timeout_ms = 1000, .group = group, .heal_later = heal_later};
	*out = NULL;
	th_error_clear(e);
	return th_store_open(&o, out, e);
}

/* Mode bits (setgid included) and group of path, or -1 when it does not exist. */
static int mode_of(const char *path, gid_t *gid)
{
	struct stat sb;
	if (stat(path, &sb) != 0)
		return -1;
	if (gid != NULL)
		*gid = sb.st_gid;
	return (int)(sb.st_mode & 07777);
}

/* Opens DIR/th.db with group, writes a task (so -wal and -shm exist) and checks, while
 * the store is open, that the database, -wal and -shm are 0640 of gid and DIR 02750
 * of gid. */
static void check_grouped_files(const char *dir, const char *group, gid_t gid)
{
	char path[400], side[420];
	snprintf(path, sizeof path, "%s/th.db", dir);
	struct th_store *st = NULL;
	struct th_error e;
	th_err err = open_grouped(path, group, 0, &st, &e);
	ck_assert_msg(err == TH_OK, "open with db_group %s: %s", group, e.msg);
	begin(st);
	add_task(st, "grouped");
	commit(st);
	gid_t g = 0;
	int m = mode_of(dir, &g);
	ck_assert_msg(m == 02750 && g == gid, "%s: mode %04o gid %ld, want 2750 gid %ld (%s)", dir,
	              m, (long)g, (long)gid, group);
	static const char *const suffixes[] = {"", "-wal", "-shm"};
	for (size_t i = 0; i < sizeof suffixes / sizeof suffixes[0]; i++) {
		snprintf(side, sizeof side, "%s%s", path, suffixes[i]);
		m = mode_of(side, &g);
		ck_assert_msg(m == 0640 && g == gid,
		              "%s: mode %04o gid %ld, want 0640 gid %ld (%s)", side, m, (long)g,
		              (long)gid, group);
	}
	th_store_close(st);
}

/* A group other than our effective one that this process may give files (any group as
 * root, else a supplementary one), or NULL. */
static const char *other_group(gid_t *gid)
{
	gid_t list[64];
	int n = geteuid() == 0 ? 0 : getgroups(64, list);
	if (geteuid() == 0) {
		static const gid_t tries[] = {65534, 1, 2, 3, 100};
		for (size_t i = 0; i < sizeof tries / sizeof tries[0]; i++)
			list[n++] = tries[i];
	}
	for (int i = 0; i < n; i++) {
		struct group *gr = list[i] != getegid() ? getgrgid(list[i]) : NULL;
		if (gr != NULL) {
			*gid = gr->gr_gid;
			return gr->gr_name;
		}
	}
	return NULL;
}

/* SEC-6: with db_group, a new database, its -wal and -shm are 0640 of the group and the
 * directories made for it 02750 of the group (setgid), whatever the umask (000 here);
 * without it, 0600 and 0750. With the process's own primary group, so that it runs
 * unprivileged and as root; again with another group where one can be given. */
START_TEST(test_sec6_db_group_makes_files_0640_and_dir_setgid)
{
	mode_t old = umask(0);
	struct group *gr = getgrgid(getegid());
	ck_assert_msg(gr != NULL, "no name for gid %ld", (long)getegid());
	char *own = strdup(gr->gr_name);
	char dir[400];
	snprintf(dir, sizeof dir, "%s/own", tmpdir);
	check_grouped_files(dir, own, getegid());
	/* Two levels made at once: each gets the group and setgid. */
	snprintf(dir, sizeof dir, "%s/a/b", tmpdir);
	check_grouped_files(dir, own, getegid());
	gid_t g = 0;
	snprintf(dir, sizeof dir, "%s/a", tmpdir);
	ck_assert_int_eq(mode_of(dir, &g), 02750);
	gid_t ogid = 0;
	const char *other = other_group(&ogid);
	if (other != NULL) {
		snprintf(dir, sizeof dir, "%s/other", tmpdir);
		check_grouped_files(dir, other, ogid);
	} else {
		fprintf(stderr, "SEC-6 db_group: no second group to give files; checked %s only\n",
		        own);
	}
	/* Unset: as before. */
	struct th_store *st = open_store();
	begin(st);
	add_task(st, "private");
	commit(st);
	snprintf(dir, sizeof dir, "%s/db", tmpdir);
	ck_assert_int_eq(mode_of(dir, NULL), 0750);
	ck_assert_int_eq(mode_of(dbpath, NULL), 0600);
	th_store_close(st);
	umask(old);
	free(own);
}
END_TEST

/* SEC-6: an unknown db_group stops the open (a worker's too, which otherwise starts
 * without a database it could open later) with a message naming the group and the
 * file, before anything is created. */
START_TEST(test_sec6_unknown_db_group_is_refused_naming_it)
{
	static const char group[] = "th-no-such-group-7f3a";
	ck_assert_ptr_null(getgrnam(group));
	for (int heal_later = 0; heal_later <= 1; heal_later++) {
		struct th_store *st = NULL;
		struct th_error e;
		th_err err = open_grouped(dbpath, group, heal_later, &st, &e);
		ck_assert_msg(err == TH_EINVAL && st == NULL, "open with db_group %s: %s %s", group,
		              th_err_name(err), e.msg);
		ck_assert_msg(strstr(e.msg, group) != NULL && strstr(e.msg, dbpath) != NULL &&
		                  strstr(e.msg, "no such group") != NULL,
		              "message: %s", e.msg);
		th_store_close(st);
	}
	char dir[400];
	snprintf(dir, sizeof dir, "%s/db", tmpdir);
	ck_assert_int_eq(mode_of(dir, NULL), -1);
}
END_TEST

/* The refusal of a group this process is not in, run where it is not root; 0: refused
 * as it should be. */
static int refused_not_member(const char *group)
{
	struct th_store *st = NULL;
	struct th_error e;
	th_err err = open_grouped(dbpath, group, 1, &st, &e);
	int ok = err == TH_EINVAL && st == NULL && strstr(e.msg, group) != NULL &&
	         strstr(e.msg, dbpath) != NULL && strstr(e.msg, "not a member") != NULL;
	if (!ok)
		fprintf(stderr, "open with db_group %s as uid %ld: %s %s\n", group, (long)geteuid(),
		        th_err_name(err), e.msg);
	th_store_close(st);
	return ok ? 0 : 1;
}

/* SEC-6: a group the process cannot give a file (not one of its groups, not root) stops
 * the open, naming the group and the file, even where the directory may be written.
 * As root: in a child that drops to uid/gid 65534 with the directory handed to it. */
START_TEST(test_sec6_db_group_the_process_is_not_in_is_refused)
{
	gid_t mine[64];
	int n = getgroups(64, mine);
	struct group *gr = getgrgid(0);
	int member = getegid() == 0;
	for (int i = 0; i < n; i++)
		member |= mine[i] == 0;
	if (gr == NULL || (geteuid() != 0 && member)) {
		fprintf(stderr, "SEC-6 db_group: no group this process is outside; skipped\n");
		return;
	}
	char *group = strdup(gr->gr_name);
	if (geteuid() != 0) {
		ck_assert_int_eq(refused_not_member(group), 0);
		free(group);
		return;
	}
	ck_assert_int_eq(chown(tmpdir, 65534, 65534), 0);
	pid_t pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		if (setgroups(0, NULL) != 0 || setgid(65534) != 0 || setuid(65534) != 0)
			_exit(2);
		_exit(refused_not_member(group));
	}
	int status = 0;
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0,
	              "as uid 65534, db_group %s was not refused (status %d)", group, status);
	free(group);
}
END_TEST

static Suite *store_suite(void)
{
	Suite *s = suite_create("store");
	TCase *tc = tcase_create("store");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	/* On both backends. */
	tcase_add_test(tc, test_store1_open_without_path_is_einval);
	tcase_add_test(tc, test_stream3_event_seq_gap_free_per_task);
	tcase_add_test(tc, test_stream3_event_append_outside_transaction_is_refused);
	tcase_add_test(tc, test_store1_lim3_two_processes_gap_free_seq_no_busy);
	tcase_add_test(tc, test_stream2_data_version_moves_on_other_commit);
	tcase_add_test(tc, test_status4_task_roundtrip_with_sub_state_column);
	tcase_add_test(tc, test_stream5_list_follows_status_and_kept_count);
	tcase_add_test(tc, test_id_participants_put_role_order_and_strangers);
	tcase_add_test(tc, test_scale1_new_task_participants_two_rows_a_statement);
	tcase_add_test(tc, test_stream5_message_append_duplicate_and_history_limit);
	tcase_add_test(tc, test_artifact_put_replaces_and_keeps_order);
	tcase_add_test(tc, test_ctl4_unresolved_subtasks_follow_child_state);
	tcase_add_test(tc, test_ctl3_turn_start_cut_is_cut_finish);
	tcase_add_test(tc, test_turn6_stale_lease_holder_writes_nothing);
	tcase_add_test(tc, test_turn4_give_up_only_while_expired);
	tcase_add_test(tc, test_ch2_membership_task_channel_and_side_channel);
	tcase_add_test(tc, test_ch3_channel_messages_append_in_order_per_channel);
	tcase_add_test(tc, test_ch4_help_request_create_get_pending_cancel);
	tcase_add_test(tc, test_ch5_second_answer_refused);
	tcase_add_test(tc, test_store1_waiting_tasks_shows_awaiting_answer);
	tcase_add_test(tc, test_task1_plan_replace_update_list);
	tcase_add_test(tc, test_ui1_a2ui_registry_and_artifact_numbers);
	tcase_add_test(tc, test_turn4_release_takeover_hold);
	tcase_add_test(tc, test_push1_configs_per_task_and_participant);
	tcase_add_test(tc, test_push2_outbox_enqueue_claim_deliver_retry_dead);
	tcase_add_test(
	    tc, test_push2_a_config_put_in_the_write_that_made_its_task_gets_the_events_after_it);
	tcase_add_test(tc, test_store6_migration_lists_end_at_the_same_version);
	tcase_add_test(tc, test_store10_message_append_leaves_the_callers_message_as_it_was);
	tcase_add_test(tc, test_store10_message_rows_lean_read_byte_for_byte);
	tcase_add_test(tc, test_store10_event_timestamps_lean_read_byte_for_byte);
	tcase_add_test(tc, test_store10_stamped_participant_lean_read_byte_for_byte);
	tcase_add_test(tc, test_store10_snapshot_takes_name_goal_participants_from_its_message);
	tcase_add_test(tc, test_store10_status_sub_state_lean_read_byte_for_byte);
	tcase_add_test(tc, test_ret1_purge_ended_takes_every_child_row_and_nothing_else);
	tcase_add_test(tc, test_ret2_purge_stuck_takes_only_idle_tasks_without_turn_or_open_child);
	tcase_add_test(tc, test_ret4_dead_letter_view_lists_until_its_own_cutoff);
	tcase_add_test(tc, test_ret4_dead_letters_read_owner_tenant_newest_first);
	if (pg_base() != NULL) {
		tcase_add_test(tc, test_store6_pg_migrates_once_and_records_its_version);
		tcase_add_test(tc, test_store6_pg_foreign_or_newer_database_is_refused);
		tcase_add_test(tc, test_store6_pg_password_is_never_in_a_message);
		tcase_add_test(tc, test_store6_pg_constraint_failures_are_worded_as_on_sqlite);
		tcase_add_test(
		    tc, test_scale1_pg_enumerated_checks_go_through_domains_and_refuse_the_same);
		tcase_add_test(tc,
		               test_scale1_pg_statements_are_planned_once_without_their_arguments);
		tcase_add_test(tc, test_scale1_pg_024_carries_a_version_23_database_over);
		tcase_add_test(tc, test_store6_pg_a_commit_is_announced_to_a_listener);
		tcase_add_test(tc, test_scale1_pg_only_a_commit_to_a_followed_task_is_announced);
		tcase_add_test(tc,
		               test_store6_pg_a_lost_connection_is_opened_again_where_that_is_safe);
		tcase_add_test(tc, test_store6_pg_a_session_ended_while_idle_is_found_before_begin);
	} else {
		/* About SQLite itself: its file, pragmas, WAL, query plans and messages. */
		tcase_add_test(tc, test_store6_sqlite_has_no_announcements_streams_poll);
		tcase_add_test(tc, test_store1_open_creates_and_migrates);
		tcase_add_test(tc, test_store1_sync_full_option);
		tcase_add_test(tc, test_store1_reopen_is_idempotent);
		tcase_add_test(tc, test_store5_wal_tend_truncates_unless_pinned);
		tcase_add_test(tc, test_store7_large_rollback_then_other_writer_loses_nothing);
		tcase_add_test(tc, test_store1_newer_schema_is_refused);
		tcase_add_test(tc, test_store1_foreign_application_id_is_refused);
		tcase_add_test(tc, test_store1_unmarked_foreign_db_is_refused);
		tcase_add_test(tc, test_lim3_non_sqlite_file_is_refused_without_crash);
		tcase_add_test(tc, test_store1_rollback_leaves_nothing_commit_keeps);
		tcase_add_test(tc, test_store1_nested_begin_is_an_error_not_a_crash);
		tcase_add_test(tc, test_store1_concurrent_first_open_migrates_once);
		tcase_add_test(tc, test_stream5_list_filters_order_cursor_total);
		tcase_add_test(tc, test_store1_migrating_v1_to_v2_keeps_data);
		tcase_add_loop_test(tc, test_store10_old_databases_read_the_same_after_migrating, 0,
		                    (int)(sizeof old_stores / sizeof old_stores[0]));
		tcase_add_test(tc, test_task4_subtask_numbers_never_reused_and_parent);
		tcase_add_test(tc, test_turn4_expired_leases_listed);
		tcase_add_test(tc, test_store2_tasks_overview_without_participant_filter);
		tcase_add_test(tc, test_store2_purge_cascades_terminal_old_tasks);
		tcase_add_test(tc,
		               test_ret3_compact_shrinks_file_and_wal_vacuum_switches_old_files);
		tcase_add_test(tc, test_store1_002_queries_use_indexes);
		tcase_add_test(tc, test_lim5_database_errors_name_no_file_and_no_sqlite_text);
		tcase_add_test(tc, test_sec6_db_group_makes_files_0640_and_dir_setgid);
		tcase_add_test(tc, test_sec6_unknown_db_group_is_refused_naming_it);
		tcase_add_test(tc, test_sec6_db_group_the_process_is_not_in_is_refused);
	}
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(store_suite());
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
