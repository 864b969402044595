/* SPDX-License-Identifier: Apache-2.0 */
/* db.c — opening the database, migrations, transactions and the WAL's upkeep; the
 * statements themselves run through stmt.c (STORE-1, LIM-3). */
#include "store/store.h"

#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "store/migrations.h"
#include "store/store_int.h"
#include "util/log.h"
#include "util/ids.h"
#include "util/text.h"

/* PRAGMA application_id of a tiny-harness database: "tHar" in ASCII. A file with any
 * other non-zero value belongs to another program and is never migrated. */
#define TH_APP_ID 0x74486172

/* BEGIN IMMEDIATE attempts after the busy timeout ran out, and the jittered pause
 * between them; random so that workers that collided do not collide again. */
#define TH_BEGIN_ATTEMPTS 10
#define TH_BACKOFF_MIN_MS 5
#define TH_BACKOFF_MAX_MS 50

#define TH_DEFAULT_BUSY_MS 5000

static const char *const state_names[] = {
    "TASK_STATE_UNSPECIFIED",    "TASK_STATE_SUBMITTED", "TASK_STATE_WORKING",
    "TASK_STATE_COMPLETED",      "TASK_STATE_FAILED",    "TASK_STATE_CANCELED",
    "TASK_STATE_INPUT_REQUIRED", "TASK_STATE_REJECTED",  "TASK_STATE_AUTH_REQUIRED",
};
#define N_STATES ((int)(sizeof state_names / sizeof state_names[0]))

const char *th_store_state_name(int state)
{
	if (state < 0 || state >= N_STATES)
		return "";
	return state_names[state];
}

int th_store_state_from_name(const char *name)
{
	return TH_NAME_INDEX(state_names, name, 0);
}

int th_store_schema_version(void)
{
	return th_store_migrations_n > 0 ? th_store_migrations[th_store_migrations_n - 1].version
	                                 : 0;
}

sqlite3 *th_store_db(struct th_store *st)
{
	return st != NULL ? st->db : NULL;
}

th_err th_store_task_exists(struct th_store *st, const char *task_id, int *exists,
                            struct th_error *e)
{
	int64_t rows = 0;
	th_err err = th_store_exec(st, TH_STMT_TASK_EXISTS, "SELECT 1 FROM tasks WHERE id = ?1",
	                           TH_ARGS(TH_T(task_id)), NULL, &rows, "task exists", e);
	*exists = err == TH_OK && rows > 0;
	return err;
}

/* ---- opening ------------------------------------------------------------------ */

/* SEC-6, db_group: the group's id, and whether this process may give a file that group
 * (a member, or root); checked at every open, so a group that cannot be used stops the
 * start even when the database exists already. Nothing is created before this. */
static th_err resolve_group(struct th_store *st, const char *group, struct th_error *e)
{
	long max = sysconf(_SC_GETGR_R_SIZE_MAX);
	size_t size = max > 0 ? (size_t)max : 16384;
	struct group gr, *found = NULL;
	char *buf = NULL;
	int rc;
	do {
		char *more = realloc(buf, size);
		if (more == NULL) {
			free(buf);
			return th_error_set(e, TH_ENOMEM, "out of memory opening %s", st->path);
		}
		buf = more;
		rc = getgrnam_r(group, &gr, buf, size, &found);
		size *= 2;
	} while (rc == ERANGE && size <= (size_t)1 << 24);
	if (found != NULL)
		st->gid = gr.gr_gid;
	free(buf);
	if (found == NULL)
		return th_error_set(e, TH_EINVAL, "db_group '%s' for database %s: %s", group,
		                    st->path, rc != 0 ? strerror(rc) : "no such group");
	int member = geteuid() == 0 || getegid() == st->gid;
	int n = member ? 0 : getgroups(0, NULL);
	gid_t *list = n > 0 ? calloc((size_t)n, sizeof *list) : NULL;
	if (list != NULL) {
		n = getgroups(n, list);
		for (int i = 0; i < n && !member; i++)
			member = list[i] == st->gid;
		free(list);
	}
	if (!member)
		return th_error_set(e, TH_EINVAL,
		                    "db_group '%s' for database %s: this process (uid %ld) is not "
		                    "a member of the group and cannot give the file to it",
		                    group, st->path, (long)geteuid());
	return TH_OK;
}

/* mkdir -p of the directory part of st->path: WAL needs the directory writable for its
 * -wal and -shm files, so the database gets a directory of its own. SEC-6: 0750
 * whatever the umask (nobody else lists the database's files); with db_group 02750 and
 * that group: setgid, so the -wal and -shm SQLite creates in it later get the group
 * too. A directory that exists is left as it is. A failure for the group returns
 * TH_EINVAL (it does not pass by itself); anything else TH_EINTERNAL. */
static th_err make_parent_dir(const struct th_store *st, struct th_error *e)
{
	const char *path = st->path;
	const char *slash = strrchr(path, '/');
	if (slash == NULL || slash == path)
		return TH_OK;
	size_t len = (size_t)(slash - path);
	char *dir = malloc(len + 1);
	if (dir == NULL)
		return th_error_set(e, TH_ENOMEM, "out of memory creating the database directory");
	memcpy(dir, path, len);
	dir[len] = '\0';
	mode_t mode = st->db_group != NULL ? 02750 : 0750;
	for (size_t i = 1; i <= len; i++) {
		if (dir[i] != '/' && dir[i] != '\0')
			continue;
		char saved = dir[i];
		dir[i] = '\0';
		th_err code = TH_EINTERNAL;
		const char *why = NULL;
		if (mkdir(dir, 0700) == 0) {
			/* The group before the mode: chmod keeps setgid only on a file whose
			 * group the caller is in. Removed again on failure, so that the next
			 * try meets the same error rather than a directory without the group. */
			if (st->db_group != NULL && chown(dir, (uid_t)-1, st->gid) != 0) {
				why = strerror(errno);
				code = TH_EINVAL;
				(void)rmdir(dir);
			} else {
				(void)chmod(dir, mode);
			}
		} else if (errno != EEXIST) {
			why = strerror(errno);
		}
		if (why != NULL) {
			if (code == TH_EINVAL)
				th_error_set(
				    e, code,
				    "cannot give directory %s of database %s the group '%s' "
				    "(db_group): %s",
				    dir, path, st->db_group, why);
			else
				th_error_set(e, code,
				             "cannot create directory %s for database %s: %s", dir,
				             path, why);
			free(dir);
			return code;
		}
		dir[i] = saved;
	}
	free(dir);
	return TH_OK;
}

/* SEC-6: a new database file is 0600 whatever the umask (it holds every message), or
 * with db_group 0640 and that group; SQLite gives its -wal and -shm files the
 * database file's mode. An existing file keeps the mode and group its owner chose. A
 * file that cannot be given the group is removed again (else the next start would
 * find it and keep it 0600) and TH_EINVAL returned. */
static th_err create_private(const struct th_store *st, struct th_error *e)
{
	const char *path = st->path;
	mode_t mode = st->db_group != NULL ? 0640 : 0600;
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0)
		return errno == EEXIST
		           ? TH_OK
		           : th_error_set(e, TH_EINTERNAL, "cannot create database %s: %s", path,
		                          strerror(errno));
	if (st->db_group != NULL && fchown(fd, (uid_t)-1, st->gid) != 0) {
		int bad = errno;
		close(fd);
		(void)unlink(path);
		return th_error_set(e, TH_EINVAL,
		                    "cannot give database %s the group '%s' (db_group): %s", path,
		                    st->db_group, strerror(bad));
	}
	int bad = fchmod(fd, mode) != 0 ? errno : 0;
	close(fd);
	if (bad != 0)
		return th_error_set(e, TH_EINTERNAL, "cannot make database %s private (%04o): %s",
		                    path, (unsigned)mode, strerror(bad));
	return TH_OK;
}

/* One integer-valued query run once (pragmas at open time; not worth caching). */
static int query_int(sqlite3 *db, const char *sql, int64_t *out)
{
	sqlite3_stmt *s = NULL;
	int rc = sqlite3_prepare_v2(db, sql, -1, &s, NULL);
	if (rc != SQLITE_OK)
		return rc;
	rc = sqlite3_step(s);
	if (rc == SQLITE_ROW) {
		*out = sqlite3_column_int64(s, 0);
		rc = SQLITE_OK;
	} else if (rc == SQLITE_DONE) {
		*out = 0;
		rc = SQLITE_OK;
	}
	sqlite3_finalize(s);
	return rc;
}

/* application_id, user_version and the number of schema objects, read in one read
 * transaction so that all three come from the same snapshot: read one by one, a
 * migration committed by another worker in between would make our own fresh file look
 * foreign (schema present, application_id still 0). The first two are header fields
 * that SQLite reads without parsing the schema (PKG-4, decision-062: the table-valued
 * pragma_application_id and pragma_user_version cost 0.1 M instructions to prepare);
 * the schema is counted only for a file whose application_id is not ours, to tell an
 * empty file from another program's. Inside a transaction (migrate's) it reads in that
 * one. */
static int read_identity(sqlite3 *db, int64_t *app, int64_t *uv, int64_t *objects)
{
	*objects = 0;
	int own = sqlite3_get_autocommit(db);
	int rc = own ? sqlite3_exec(db, "BEGIN", NULL, NULL, NULL) : SQLITE_OK;
	if (rc != SQLITE_OK)
		return rc;
	rc = query_int(db, "PRAGMA application_id", app);
	if (rc == SQLITE_OK)
		rc = query_int(db, "PRAGMA user_version", uv);
	if (rc == SQLITE_OK && *app != TH_APP_ID)
		rc = query_int(db, "SELECT count(*) FROM sqlite_schema", objects);
	if (own && !sqlite3_get_autocommit(db))
		(void)sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL); /* it only read */
	return rc;
}

/* Runs a pragma that answers with text and compares the answer (case-insensitively). */
static int query_text_is(sqlite3 *db, const char *sql, const char *want, int *is)
{
	sqlite3_stmt *s = NULL;
	int rc = sqlite3_prepare_v2(db, sql, -1, &s, NULL);
	if (rc != SQLITE_OK)
		return rc;
	rc = sqlite3_step(s);
	*is = 0;
	if (rc == SQLITE_ROW) {
		const char *t = (const char *)sqlite3_column_text(s, 0);
		*is = t != NULL && strcasecmp(t, want) == 0;
		rc = SQLITE_OK;
	} else if (rc == SQLITE_DONE) {
		rc = SQLITE_OK;
	}
	sqlite3_finalize(s);
	return rc;
}

static void heal(struct th_store *st);

static void backoff(struct th_store *st)
{
	/* xorshift64: enough to spread retries; no need for cryptographic quality. */
	st->rng ^= st->rng << 13;
	st->rng ^= st->rng >> 7;
	st->rng ^= st->rng << 17;
	int ms = TH_BACKOFF_MIN_MS + (int)(st->rng % (TH_BACKOFF_MAX_MS - TH_BACKOFF_MIN_MS + 1));
	struct timespec ts = {.tv_sec = 0, .tv_nsec = (long)ms * 1000000L};
	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

/* Refuses files that are not ours, and files written by a newer binary; *uv_out (when
 * not NULL) is the file's user_version. */
static th_err check_identity(struct th_store *st, int64_t *uv_out, struct th_error *e)
{
	int64_t app = 0, uv = 0, objects = 0;
	int rc = read_identity(st->db, &app, &uv, &objects);
	if ((rc & 0xff) == SQLITE_NOTADB)
		return th_error_set(e, TH_EINTERNAL, "%s is not an SQLite database", st->path);
	if (rc != SQLITE_OK)
		return th_store_fail(st, rc, st->path, e);
	if (app != TH_APP_ID && (app != 0 || uv != 0 || objects != 0))
		return th_error_set(
		    e, TH_EINTERNAL,
		    "%s is not a tiny-harness database (application_id %lld, expected "
		    "%d); refusing to use it",
		    st->path, (long long)app, TH_APP_ID);
	if (uv > th_store_schema_version())
		return th_error_set(
		    e, TH_EINTERNAL,
		    "%s has schema version %lld, newer than this binary knows (%d); "
		    "upgrade tiny-harness",
		    st->path, (long long)uv, th_store_schema_version());
	if (uv_out != NULL)
		*uv_out = uv;
	return TH_OK;
}

/* WAL persists in the file, so this only writes the first time; later opens just read
 * the mode. Switching needs every other connection gone, hence the retry. */
static th_err ensure_wal(struct th_store *st, struct th_error *e)
{
	for (int attempt = 0;; attempt++) {
		int is_wal = 0;
		int rc = query_text_is(st->db, "PRAGMA journal_mode", "wal", &is_wal);
		if (rc == SQLITE_OK && is_wal)
			return TH_OK;
		if (rc == SQLITE_OK)
			rc = query_text_is(st->db, "PRAGMA journal_mode=WAL", "wal", &is_wal);
		if (rc == SQLITE_OK && is_wal)
			return TH_OK;
		if (rc == SQLITE_OK)
			return th_error_set(e, TH_EINTERNAL,
			                    "%s: cannot switch to WAL journal mode", st->path);
		if (((rc & 0xff) != SQLITE_BUSY && (rc & 0xff) != SQLITE_LOCKED) ||
		    attempt + 1 >= TH_BEGIN_ATTEMPTS)
			return th_store_fail(st, rc, "journal_mode=WAL", e);
		backoff(st);
	}
}

static th_err exec(struct th_store *st, const char *sql, const char *what, struct th_error *e)
{
	char *msg = NULL;
	int rc = sqlite3_exec(st->db, sql, NULL, NULL, &msg);
	if (rc == SQLITE_OK)
		return TH_OK;
	th_store_note(st, rc);
	th_err code = (rc & 0xff) == SQLITE_BUSY || (rc & 0xff) == SQLITE_LOCKED ? TH_EBUSY
	              : (rc & 0xff) == SQLITE_NOMEM                              ? TH_ENOMEM
	                                                                         : TH_EINTERNAL;
	th_error_set(e, code, "%s: %s: %s", st->path, what,
	             msg != NULL ? msg : sqlite3_errmsg(st->db));
	sqlite3_free(msg);
	return code;
}

/* PRAGMA foreign_key_check finds no row: a migration that rebuilt a table (014) left
 * every reference resolvable. It runs inside the migration's transaction. */
static th_err check_foreign_keys(struct th_store *st, struct th_error *e)
{
	sqlite3_stmt *s = NULL;
	int rc = sqlite3_prepare_v2(st->db, "PRAGMA foreign_key_check", -1, &s, NULL);
	if (rc != SQLITE_OK)
		return th_store_fail(st, rc, "foreign_key_check", e);
	rc = sqlite3_step(s);
	th_err err = TH_OK;
	if (rc == SQLITE_ROW)
		err = th_error_set(e, TH_EINTERNAL,
		                   "%s: migration left a row of %s without its %s row; nothing "
		                   "was changed",
		                   st->path, (const char *)sqlite3_column_text(s, 0),
		                   (const char *)sqlite3_column_text(s, 2));
	else if (rc != SQLITE_DONE)
		err = th_store_fail(st, rc, "foreign_key_check", e);
	sqlite3_finalize(s);
	return err;
}

static th_err migrate_locked(struct th_store *st, struct th_error *e);

/* Applies every migration newer than user_version (uv, as check_identity read it at
 * open) inside one BEGIN IMMEDIATE, so two workers starting together serialise and the
 * second finds nothing left to do. Foreign keys are off meanwhile, as SQLite prescribes
 * for rebuilding a table (dropping the old one must not cascade), and PRAGMA
 * foreign_key_check must be clean before COMMIT. */
static th_err migrate(struct th_store *st, int64_t uv, struct th_error *e)
{
	if (uv == th_store_schema_version())
		return TH_OK;
	th_err err = exec(st, "PRAGMA foreign_keys = OFF", "foreign_keys", e);
	if (err == TH_OK)
		err = migrate_locked(st, e);
	struct th_error on = {0};
	th_err back = exec(st, "PRAGMA foreign_keys = ON", "foreign_keys", &on);
	if (err == TH_OK && back != TH_OK)
		err = th_error_set(e, back, "%s", on.msg);
	return err;
}

static th_err migrate_locked(struct th_store *st, struct th_error *e)
{
	int64_t uv = 0;
	int rc;
	th_err err = th_store_begin_own(st, e);
	if (err != TH_OK)
		return err;
	/* Re-read under the write lock: another worker may have migrated meanwhile. */
	err = check_identity(st, &uv, e);
	for (int i = 0; err == TH_OK && i < th_store_migrations_n; i++) {
		const struct th_migration *m = &th_store_migrations[i];
		if (m->version <= uv)
			continue;
		err = exec(st, m->sql, m->name, e);
	}
	/* A migration may rewrite a table's text in place (005); a new schema_version makes
	 * every connection, this one included, read the schema again. */
	int64_t cookie = 0;
	if (err == TH_OK && (rc = query_int(st->db, "PRAGMA schema_version", &cookie)) != SQLITE_OK)
		err = th_store_fail(st, rc, "schema_version", e);
	if (err == TH_OK) {
		char sql[64];
		snprintf(sql, sizeof sql, "PRAGMA schema_version = %lld", (long long)cookie + 1);
		err = exec(st, sql, "schema_version", e);
	}
	if (err == TH_OK)
		err = check_foreign_keys(st, e);
	if (err == TH_OK && uv < th_store_schema_version()) {
		char sql[96];
		snprintf(sql, sizeof sql, "PRAGMA application_id = %d; PRAGMA user_version = %d",
		         TH_APP_ID, th_store_schema_version());
		err = exec(st, sql, "setting schema version", e);
	}
	if (err != TH_OK) {
		th_store_rollback_own(st);
		return err;
	}
	return th_store_commit_own(st, e);
}

/* The busy handler: SQLite's own sleeps 1, 2, 5, 10, 15, 20, 25 … ms between tries, but
 * a write transaction here lasts well under a millisecond, so a worker that found the
 * lock taken slept for several transactions' time while the lock sat free (p99 of a
 * SendMessage under two workers: tens of ms). This one tries again after 250 µs (the
 * first four tries), then 500 µs (up to the twelfth), then every 1 ms, until
 * busy_limit_ms has passed since the wait began (docs/store.md). */
static int busy_wait(void *arg, int count)
{
	struct th_store *st = arg;
	int64_t now = th_mono_ms();
	if (count == 0)
		st->busy_since_ms = now;
	if (now - st->busy_since_ms >= st->busy_limit_ms)
		return 0;
	long us = count < 4 ? 250 : count < 12 ? 500 : 1000;
	struct timespec ts = {0, us * 1000L};
	nanosleep(&ts, NULL);
	return 1;
}

/* After every commit of this connection, with the WAL's frame count: a note for
 * th_store_wal_tend, which checkpoints after the response instead of in the commit. */
static int wal_hook(void *arg, sqlite3 *db, const char *name, int frames)
{
	(void)db;
	(void)name;
	struct th_store *st = arg;
	st->wal_frames = frames;
	return SQLITE_OK;
}

int th_store_wal_frames(struct th_store *st)
{
	return st->wal_frames;
}

int th_store_wal_tend(struct th_store *st)
{
	if (st != NULL && st->heal)
		heal(st); /* a member's own connection, which otherwise only reads */
	/* PostgreSQL keeps its own WAL bounded (checkpoints, max_wal_size). */
	if (st == NULL || st->own_db == NULL || st->in_group || !sqlite3_get_autocommit(st->own_db))
		return 0;
	/* A member of a group has the count its group's last commit of its part left. */
	if (st->wal_frames < TH_WAL_CHECKPOINT_FRAMES)
		return 0;
	/* A reader that stays (an operator's open sqlite3 session) must not cost every
	 * request the wait: after a failure, try again a second later. */
	int64_t now = th_mono_ms();
	if (now < st->wal_retry_ms)
		return 0;
	/* A passive pass copies what it can while writers go on, and tells how many frames
	 * the WAL holds now: fewer than the threshold when another worker (or thread)
	 * reset it since this one's last commit. */
	int log = -1, done = -1;
	int rc =
	    sqlite3_wal_checkpoint_v2(st->own_db, NULL, SQLITE_CHECKPOINT_PASSIVE, &log, &done);
	if (rc == SQLITE_OK && log < TH_WAL_CHECKPOINT_FRAMES) {
		st->wal_frames = 0;
		return 0;
	}
	/* RESTART waits (through the busy handler) for the writer lock and then for every
	 * reader to leave the WAL, which is what a passive checkpoint never does; the next
	 * commit then writes from the start of the file, over blocks the file system has
	 * already allocated (TRUNCATE made every commit extend the file again: ~10% of a
	 * worker's CPU was ext4 allocating blocks). A WAL that grew past
	 * journal_size_limit while a reader pinned it is truncated instead. A short wait:
	 * the worker has answered already, but other workers' writes queue behind it. */
	struct stat sb;
	int big = stat(st->wal_path, &sb) == 0 && sb.st_size > (off_t)TH_WAL_SIZE_LIMIT;
	st->busy_limit_ms = TH_WAL_TEND_WAIT_MS;
	rc = sqlite3_wal_checkpoint_v2(st->own_db, NULL,
	                               big ? SQLITE_CHECKPOINT_TRUNCATE : SQLITE_CHECKPOINT_RESTART,
	                               &log, &done);
	st->busy_limit_ms = st->busy_timeout_ms;
	if (rc != SQLITE_OK) {
		st->wal_retry_ms = now + TH_WAL_RETRY_MS;
		return 0;
	}
	st->wal_frames = 0;
	return 1;
}

/* RET-3: free pages incremental_vacuum releases per write transaction (16 MiB of 4 KiB
 * pages): a live worker waits for one step at most, some tens of milliseconds. */
#define COMPACT_STEP_PAGES 4096

static int64_t file_size(const char *path)
{
	struct stat sb;
	return path != NULL && stat(path, &sb) == 0 ? (int64_t)sb.st_size : 0;
}

/* The checkpoint that ends a compaction or a VACUUM: the WAL copied in and cut to 0
 * bytes, unless a reader stays in it (then the next worker's checkpoint does it). */
static th_err compact_end(struct th_store *st, struct th_compact *out, struct th_error *e)
{
	int log = -1, done = -1;
	int rc =
	    sqlite3_wal_checkpoint_v2(st->own_db, NULL, SQLITE_CHECKPOINT_TRUNCATE, &log, &done);
	if (rc != SQLITE_OK && (rc & 0xff) != SQLITE_BUSY)
		return th_store_fail(st, rc, "wal_checkpoint(TRUNCATE)", e);
	out->wal_truncated = rc == SQLITE_OK;
	out->db_after = file_size(st->path);
	out->wal_after = file_size(st->wal_path);
	return TH_OK;
}

/* Compaction runs outside every transaction, on the store's own connection. */
static th_err compact_begin(struct th_store *st, struct th_compact *out, struct th_error *e)
{
	memset(out, 0, sizeof *out);
	if (st->own_db == NULL)
		return TH_OK; /* PostgreSQL: known stays 0 */
	if (st->in_group || !sqlite3_get_autocommit(st->own_db))
		return th_error_set(e, TH_EINVAL,
		                    "compacting the database needs no open transaction");
	out->known = 1;
	out->db_before = file_size(st->path);
	out->wal_before = file_size(st->wal_path);
	return TH_OK;
}

th_err th_store_compact(struct th_store *st, struct th_compact *out, struct th_error *e)
{
	th_err err = compact_begin(st, out, e);
	if (err != TH_OK || !out->known)
		return err;
	int64_t mode = 0, free_pages = 0;
	int rc = query_int(st->own_db, "PRAGMA auto_vacuum", &mode);
	if (rc == SQLITE_OK)
		rc = query_int(st->own_db, "PRAGMA freelist_count", &free_pages);
	if (rc != SQLITE_OK)
		return th_store_fail(st, rc, "auto_vacuum", e);
	out->incremental = mode == 2;
	/* Other writers go on meanwhile and may free or reuse pages: the steps are counted
	 * from the free list as it was, so the loop ends. */
	int64_t steps = out->incremental ? free_pages / COMPACT_STEP_PAGES + 1 : 0;
	for (int64_t i = 0; i < steps; i++) {
		int64_t left = 0;
		rc = query_int(st->own_db, "PRAGMA freelist_count", &left);
		if (rc != SQLITE_OK)
			return th_store_fail(st, rc, "freelist_count", e);
		if (left == 0)
			break;
		char sql[64];
		snprintf(sql, sizeof sql, "PRAGMA incremental_vacuum(%d)", COMPACT_STEP_PAGES);
		if ((err = exec(st, sql, "incremental_vacuum", e)) != TH_OK)
			return err;
		out->freed_pages += left < COMPACT_STEP_PAGES ? left : COMPACT_STEP_PAGES;
	}
	return compact_end(st, out, e);
}

th_err th_store_vacuum(struct th_store *st, struct th_compact *out, struct th_error *e)
{
	th_err err = compact_begin(st, out, e);
	if (err != TH_OK)
		return err;
	if (!out->known)
		return th_error_set(e, TH_EUNSUPPORTED,
		                    "PostgreSQL gives space back with its autovacuum; "
		                    "--vacuum is for SQLite databases");
	/* The mode is recorded now and takes effect as VACUUM rebuilds the file. */
	err = exec(st, "PRAGMA auto_vacuum = INCREMENTAL", "auto_vacuum", e);
	if (err == TH_OK)
		err = exec(st, "VACUUM", "VACUUM", e);
	if (err != TH_OK)
		return err;
	out->incremental = 1;
	return compact_end(st, out, e);
}

/* Once per process, before SQLite initialises: no memory statistics (nothing reads
 * them, and keeping them takes a global mutex on every allocation). Callgrind, 750
 * echo SendMessages: pthread_mutex_lock/unlock were 5% of the worker's instructions. */
static pthread_once_t sqlite_setup_once = PTHREAD_ONCE_INIT;
static void sqlite_setup(void)
{
	(void)sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
}

int th_store_writes_side_by_side(const struct th_store_opts *o)
{
	return o != NULL && th_is_pg_uri(o->path);
}

/* Finalizes every cached statement of the store's own connection (each is prepared
 * again on first use), so that the connection can be closed without a leak. */
static void finalize_stmts(struct th_store *st)
{
	for (int i = 0; i < TH_STMT_COUNT_; i++) {
		sqlite3_finalize(st->own_stmt[i]);
		st->own_stmt[i] = NULL;
	}
}

/* The settings every connection runs with, then the schema (migrate). */
static th_err setup(struct th_store *st, const struct th_store_opts *o, struct th_error *e)
{
	int64_t uv = 0;
	th_err err = check_identity(st, &uv, e);
	if (err == TH_OK)
		err = exec(st, "PRAGMA foreign_keys = ON", "foreign_keys", e);
	/* Statement and savepoint journals (each group member's part is a SAVEPOINT) in
	 * memory: Debian's SQLite otherwise opens and unlinks a file in /var/tmp for each. */
	if (err == TH_OK)
		err = exec(st, "PRAGMA temp_store = MEMORY", "temp_store", e);
	if (err == TH_OK)
		err = exec(
		    st, o->sync_full ? "PRAGMA synchronous = FULL" : "PRAGMA synchronous = NORMAL",
		    "synchronous", e);
	/* RET-3 (decision-071): a new file keeps a pointer map so that a purge can give
	 * its pages back (th_store_compact); only possible before the first table. */
	if (err == TH_OK && uv == 0)
		err = exec(st, "PRAGMA auto_vacuum = INCREMENTAL", "auto_vacuum", e);
	if (err == TH_OK)
		err = ensure_wal(st, e);
	if (err == TH_OK) {
		char sql[64];
		snprintf(sql, sizeof sql, "PRAGMA journal_size_limit = %d", TH_WAL_SIZE_LIMIT);
		err = exec(st, sql, "journal_size_limit", e);
	}
	if (err == TH_OK)
		err = migrate(st, uv, e);
	return err;
}

/* SQLite creates -wal and -shm with the database file's mode, so a read-only connection
 * to a 0444 file leaves them 0444 behind it. A -shm that is not writable when a process
 * first maps it makes that mapping read-only for every connection of the process, for
 * as long as any of them stays open: the worker could never write again, even once the
 * file is writable. So before each open, -wal and -shm that are ours get write
 * permission for their owner. That gives nothing away: what may be written is decided
 * by the database file, which SQLite then opens read-only. Never removed: other
 * processes may have the -shm mapped. */
static void sides_writable(const struct th_store *st)
{
	struct stat db;
	if (stat(st->path, &db) != 0)
		return;
	static const char *const suffixes[] = {"-wal", "-shm"};
	char side[PATH_MAX];
	for (size_t i = 0; i < sizeof suffixes / sizeof suffixes[0]; i++) {
		struct stat sb;
		if (snprintf(side, sizeof side, "%s%s", st->path, suffixes[i]) >=
		        (int)sizeof side ||
		    stat(side, &sb) != 0 || sb.st_uid != geteuid() ||
		    faccessat(AT_FDCWD, side, W_OK, AT_EACCESS) == 0)
			continue;
		if (chmod(side, (db.st_mode & 0666) | S_IWUSR) != 0)
			th_log(TH_LOG_WARN, "cannot make %s writable: %s", side, strerror(errno));
	}
}

/* Opens st->own_db (st->db follows) and sets it up; on failure closes what it opened, and
 * st->heal says whether the cause can pass (th_store_note). A connection that SQLite
 * could only open read-only (its fallback for a file it may not write) is kept, marked
 * for healing, with st->trouble saying so. */
static th_err connect(struct th_store *st, struct th_error *e)
{
	th_err err = make_parent_dir(st, e);
	if (err == TH_OK && strcmp(st->path, ":memory:") != 0 && strncmp(st->path, "file:", 5) != 0)
		err = create_private(st, e);
	if (err != TH_OK) {
		/* A directory that cannot be made yet may be made later; a group that cannot
		 * be given stays so until the configuration changes (and a restart). */
		st->heal = err != TH_EINVAL;
		return err;
	}
	sides_writable(st);
	/* NOMUTEX: a connection is used by one thread at a time (its own, or for the group's
	 * writer the member the group lets in, under the group's mutex), so SQLite's
	 * per-call connection mutex only costs time. */
	int rc =
	    sqlite3_open_v2(st->path, &st->own_db,
	                    SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, NULL);
	st->db = st->own_db;
	if (rc != SQLITE_OK) {
		if (st->own_db == NULL)
			return th_error_set(e, TH_ENOMEM, "out of memory opening %s", st->path);
		th_store_note(st, rc);
		err = th_error_set(e, TH_EINTERNAL, "cannot open database %s: %s", st->path,
		                   sqlite3_errmsg(st->own_db));
		sqlite3_close_v2(st->own_db);
		st->own_db = st->db = NULL;
		return err;
	}
	sqlite3_extended_result_codes(st->db, 1);
	sqlite3_busy_handler(st->db, busy_wait, st);
	/* PKG-4, decision-062: creating -wal and -shm when a process opens the database
	 * alone and unlinking them when it closes cost a plain-CGI request more CPU time
	 * than all its statements (ext4 allocates and frees two inodes per request). The
	 * close still checkpoints and truncates the WAL to 0 bytes, so the database file
	 * alone holds every commit once the last process is gone, as before. */
	if (st->keep_wal_files) {
		int keep = 1;
		(void)sqlite3_file_control(st->db, "main", SQLITE_FCNTL_PERSIST_WAL, &keep);
	}
	/* Replaces SQLite's own autocheckpoint (STORE-5, th_store_wal_tend). */
	sqlite3_wal_hook(st->db, wal_hook, st);
	struct th_store_opts o = {.sync_full = st->sync_full};
	err = setup(st, &o, e);
	if (err != TH_OK) {
		finalize_stmts(st);
		sqlite3_close_v2(st->own_db);
		st->own_db = st->db = NULL;
		return err;
	}
	if (sqlite3_db_readonly(st->own_db, "main") == 1) {
		st->heal = 1;
		snprintf(st->trouble, sizeof st->trouble,
		         "database %s is read-only (the file or its directory cannot be written)",
		         st->path);
	} else {
		st->trouble[0] = '\0';
	}
	return TH_OK;
}

/* Keeps the failure of a worker's open as st's trouble, naming the file. */
static void keep_trouble(struct th_store *st, const struct th_error *e)
{
	int n = strstr(e->msg, st->path) != NULL
	            ? snprintf(st->trouble, sizeof st->trouble, "%s", e->msg)
	            : snprintf(st->trouble, sizeof st->trouble, "database %s cannot be used: %s",
	                       st->path, e->msg);
	if (n >= (int)sizeof st->trouble) /* cut: the file's name comes first */
		st->trouble[sizeof st->trouble - 1] = '\0';
}

th_err th_store_open(const struct th_store_opts *o, struct th_store **out, struct th_error *e)
{
	*out = NULL;
	if (o == NULL || o->path == NULL || o->path[0] == '\0')
		return th_error_set(e, TH_EINVAL, "no database path configured");
	struct th_store *st = calloc(1, sizeof *st);
	if (st == NULL)
		return th_error_set(e, TH_ENOMEM, "out of memory opening %s", o->path);
	st->path = strdup(o->path);
	size_t wal_len = strlen(o->path) + sizeof "-wal";
	st->wal_path = malloc(wal_len);
	if (st->wal_path != NULL)
		snprintf(st->wal_path, wal_len, "%s-wal", o->path);
	if (st->path == NULL || st->wal_path == NULL) {
		free(st->path);
		free(st->wal_path);
		free(st);
		return th_error_set(e, TH_ENOMEM, "out of memory opening %s", o->path);
	}
	st->rng = ((uint64_t)getpid() << 32) ^ (uint64_t)th_mono_ms() ^ (uint64_t)(uintptr_t)st;
	if (st->rng == 0)
		st->rng = 0x9e3779b97f4a7c15ULL;

	st->conn = st;
	st->sync_full = o->sync_full;
	st->keep_wal_files = o->keep_wal_files;
	st->busy_timeout_ms = o->busy_timeout_ms > 0 ? o->busy_timeout_ms : TH_DEFAULT_BUSY_MS;
	st->busy_limit_ms = st->busy_timeout_ms;
	th_err err;
	if (th_is_pg_uri(o->path)) {
		err = th_pg_open(st, o, e);
		if (err != TH_OK)
			goto fail;
		*out = st;
		return TH_OK;
	}
	pthread_once(&sqlite_setup_once, sqlite_setup);
	st->stmt = st->own_stmt;
	if (o->group != NULL) {
		err = (st->db_group = strdup(o->group)) == NULL
		          ? th_error_set(e, TH_ENOMEM, "out of memory opening %s", o->path)
		          : resolve_group(st, o->group, e);
		if (err != TH_OK)
			goto fail;
	}
	err = connect(st, e);
	if (err != TH_OK) {
		/* A worker starts anyway when the cause can pass, and tries again on each
		 * request (STORE-9); a file that is not ours, or too new, still fails. */
		if (!o->heal_later || !st->heal)
			goto fail;
		keep_trouble(st, e);
		th_error_clear(e);
	}
	*out = st;
	return TH_OK;
fail:
	th_store_close(st);
	return err;
}

const char *th_store_trouble(const struct th_store *st)
{
	return st != NULL && st->trouble[0] != '\0' ? st->trouble : NULL;
}

void th_store_note(struct th_store *st, int rc)
{
	if (st == NULL)
		return;
	switch (rc & 0xff) {
	case SQLITE_READONLY: /* opened read-only, or its -wal/-shm could not be */
	case SQLITE_CANTOPEN:
	case SQLITE_PERM:
	case SQLITE_IOERR:
	case SQLITE_FULL:
		st->conn->heal = 1;
		break;
	default:
		break;
	}
}

/* 1 while a statement of db is stepping: its connection cannot be closed under it. */
static int any_stmt_busy(sqlite3 *db)
{
	for (sqlite3_stmt *s = sqlite3_next_stmt(db, NULL); s != NULL; s = sqlite3_next_stmt(db, s))
		if (sqlite3_stmt_busy(s))
			return 1;
	return 0;
}

/* STORE-9: SQLite keeps a connection as it was opened, so one that fell back to read-only
 * stays read-only after the file becomes writable, and a worker that could not open its
 * database never would. Between transactions, a store marked for healing opens a new
 * connection and keeps it when it is better than the old one (writable, or any
 * connection where there was none); a healthy store pays one flag test. While the file
 * stays unwritable a read-only connection is kept without trying (one access(2)). */
static void heal(struct th_store *st)
{
	if (!st->heal || st->pg != NULL || st->in_group || st->db != st->own_db)
		return;
	sqlite3 *old = st->own_db;
	if (old != NULL) {
		if (!sqlite3_get_autocommit(old) || any_stmt_busy(old))
			return;
		if (sqlite3_db_readonly(old, "main") == 1 &&
		    faccessat(AT_FDCWD, st->path, W_OK, AT_EACCESS) != 0)
			return;
	}
	char trouble[sizeof st->trouble];
	memcpy(trouble, st->trouble, sizeof trouble);
	finalize_stmts(st);
	st->own_db = st->db = NULL;
	st->heal = 0;
	struct th_error e;
	th_error_clear(&e);
	th_err err = connect(st, &e);
	if (err == TH_OK && (old == NULL || !st->heal)) {
		if (old != NULL)
			sqlite3_close_v2(old);
		st->opens++;
		th_log(TH_LOG_WARN, "database %s: opened again%s", st->path,
		       st->heal ? ", still read-only" : " for writing");
		return;
	}
	if (st->own_db != NULL) {
		finalize_stmts(st);
		sqlite3_close_v2(st->own_db);
	}
	st->own_db = st->db = old;
	st->heal = 1;
	if (err != TH_OK) {
		keep_trouble(st, &e);
		if (strcmp(trouble, st->trouble) != 0) /* once per new cause, not per request */
			th_log(TH_LOG_WARN, "%s", st->trouble);
	} else
		memcpy(st->trouble, trouble, sizeof trouble);
}

th_err th_store_unopened(struct th_store *st, struct th_error *e)
{
	heal(st);
	if (st->db != NULL)
		return TH_OK;
	/* Not logged per statement: the worker's start-up warning and heal's lines tell. */
	return th_error_set(e, TH_EINTERNAL,
	                    "database error (open): the database cannot be opened; the server's "
	                    "error log has the details");
}

void th_store_close(struct th_store *st)
{
	if (st == NULL)
		return;
	/* A group transaction left open is the group's to end; it is never this one's. */
	assert(!st->in_group);
	finalize_stmts(st);
	if (st->own_db != NULL) {
		if (!sqlite3_get_autocommit(st->own_db))
			sqlite3_exec(st->own_db, "ROLLBACK", NULL, NULL, NULL);
		sqlite3_close_v2(st->own_db);
	}
	th_pg_close(st);
	free(st->path);
	free(st->wal_path);
	free(st->db_group);
	free(st);
}

/* ---- transactions ---------------------------------------------------------------- */

int th_store_in_txn(const struct th_store *st)
{
	if (st->pg != NULL)
		return th_pg_in_txn(st);
	return st->db != NULL && !sqlite3_get_autocommit(st->db);
}

th_err th_store_need_txn(struct th_store *st, const char *what, struct th_error *e)
{
	if (th_store_in_txn(st))
		return TH_OK;
	/* A write whose connection went (PostgreSQL: the server crashed) is told what its
	 * failed statement was told: a retry may succeed. */
	if (st->pg != NULL && th_pg_write_failure(st, e) != TH_OK)
		return e->code;
	return th_error_set(e, TH_EINTERNAL, "%s outside a transaction", what);
}

void th_store_use_conn(struct th_store *st, struct th_store *w)
{
	st->conn = w;
	st->db = w->own_db;
	st->stmt = w->own_stmt;
	st->pg = w->own_pg;
	st->pg_prepared = w->own_pg_prepared;
}

th_err th_store_begin_own(struct th_store *st, struct th_error *e)
{
	if (st->pg != NULL)
		return th_pg_begin(st, e);
	heal(st);
	sqlite3_stmt *s;
	th_err err = th_store_stmt(st, TH_STMT_BEGIN, "BEGIN IMMEDIATE", &s, e);
	if (err != TH_OK)
		return err;
	for (int attempt = 1;; attempt++) {
		int rc = sqlite3_step(s);
		th_store_stmt_done(s);
		if (rc == SQLITE_DONE) {
			st->conn->txn_begun = 1;
			return TH_OK;
		}
		int prim = rc & 0xff;
		if (prim != SQLITE_BUSY && prim != SQLITE_LOCKED)
			return th_store_fail(st, rc, "BEGIN IMMEDIATE", e);
		if (attempt >= TH_BEGIN_ATTEMPTS) {
			th_log(TH_LOG_WARN,
			       "database %s stayed busy after %d attempts to start a "
			       "transaction",
			       st->path, attempt);
			return th_error_set(e, TH_EBUSY,
			                    "the database stayed busy after %d attempts to start a "
			                    "transaction",
			                    attempt);
		}
		backoff(st);
	}
}

th_err th_store_commit_own(struct th_store *st, struct th_error *e)
{
	if (st->pg != NULL)
		return th_pg_commit(st, e);
	sqlite3_stmt *s;
	th_err err = th_store_stmt(st, TH_STMT_COMMIT, "COMMIT", &s, e);
	if (err != TH_OK) {
		th_store_rollback_own(st);
		return err;
	}
	int rc = sqlite3_step(s);
	th_store_stmt_done(s);
	if (rc == SQLITE_DONE) {
		st->conn->txn_begun = 0;
		return TH_OK;
	}
	err = th_store_fail(st, rc, "COMMIT", e);
	/* A failed COMMIT leaves the transaction open; end it so the worker stays usable. */
	th_store_rollback_own(st);
	return err;
}

th_err th_store_read_begin(struct th_store *st, int *began, struct th_error *e)
{
	*began = 0;
	if (th_store_in_txn(st))
		return TH_OK;
	if (st->pg != NULL) {
		th_err err = th_pg_read_begin(st, e);
		*began = err == TH_OK;
		return err;
	}
	heal(st);
	sqlite3_stmt *s;
	th_err err = th_store_stmt(st, TH_STMT_BEGIN_READ, "BEGIN", &s, e);
	if (err != TH_OK)
		return err;
	int rc = sqlite3_step(s);
	th_store_stmt_done(s);
	if (rc != SQLITE_DONE)
		return th_store_fail(st, rc, "BEGIN", e);
	st->conn->txn_begun = 1;
	*began = 1;
	return TH_OK;
}

th_err th_store_read_begin_versioned(struct th_store *st, int *began, struct th_error *e)
{
	*began = 0;
	st->conn->read_version = -1;
	if (th_store_in_txn(st))
		return TH_OK;
	if (st->pg != NULL) {
		th_err err = th_pg_read_begin_versioned(st, e);
		*began = err == TH_OK;
		return err;
	}
	/* Before BEGIN: SQLite's snapshot starts with the transaction's first read. */
	st->conn->read_version = th_store_data_version(st);
	return th_store_read_begin(st, began, e);
}

int64_t th_store_read_version(struct th_store *st)
{
	return st->pg != NULL ? th_pg_read_version(st) : st->conn->read_version;
}

void th_store_read_seal(struct th_store *st)
{
	if (st->pg != NULL)
		th_pg_read_seal(st);
}

int th_store_read_torn(const struct th_store *st)
{
	return st->pg != NULL && th_pg_read_torn(st);
}

void th_store_read_end(struct th_store *st, int began)
{
	/* Ending a read transaction has nothing to undo: a rollback cannot fail it. */
	if (began)
		th_store_rollback_own(st);
}

void th_store_rollback_own(struct th_store *st)
{
	if (st == NULL)
		return;
	st->conn->txn_begun = 0;
	if (!th_store_in_txn(st))
		return;
	if (st->pg != NULL) {
		th_pg_rollback(st);
		return;
	}
	sqlite3_stmt *s;
	if (th_store_stmt(st, TH_STMT_ROLLBACK, "ROLLBACK", &s, NULL) == TH_OK) {
		(void)sqlite3_step(s);
		th_store_stmt_done(s);
	}
	/* Last resort when the cached statement could not run (e.g. no memory). */
	if (!sqlite3_get_autocommit(st->db))
		sqlite3_exec(st->db, "ROLLBACK", NULL, NULL, NULL);
}

int64_t th_store_data_version(struct th_store *st)
{
	if (st->pg != NULL)
		return th_pg_data_version(st);
	sqlite3_stmt *s;
	if (th_store_stmt(st, TH_STMT_DATA_VERSION, "PRAGMA data_version", &s, NULL) != TH_OK)
		return -1;
	int64_t v = -1;
	/* A new connection numbers its versions afresh and could repeat the last one seen
	 * on the old (a commit then read late, or a kept answer served stale): the count of
	 * connections opened makes every version of a new one differ. */
	if (sqlite3_step(s) == SQLITE_ROW)
		v = sqlite3_column_int64(s, 0) + (st->conn->opens << 32);
	th_store_stmt_done(s);
	return v;
}

int64_t th_store_changes(struct th_store *st)
{
	if (st->own_pg != NULL)
		return st->pg_changes + st->group_writes;
	return (st->own_db != NULL ? sqlite3_total_changes64(st->own_db) : 0) + st->group_writes;
}

int th_store_change_fd(struct th_store *st)
{
	return st->own_pg != NULL ? th_pg_change_fd(st) : -1;
}

int th_store_change_seen(struct th_store *st)
{
	return st->own_pg != NULL ? th_pg_change_seen(st) : 0;
}

void th_store_change_wait(struct th_store *st, int ms)
{
	if (st->own_pg != NULL && th_pg_change_wait(st, ms) == 0)
		return;
	struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
	nanosleep(&ts, NULL);
}
