/* SPDX-License-Identifier: Apache-2.0 */
/* walvfs.c — the SQLite VFS every connection of the store opens its file with: the
 * system's default VFS, except that a transaction's WAL frames reach the -wal file in
 * one write instead of two per frame.
 *
 * Why: SQLite appends a frame as two writes, its 24-byte header and then the page. A
 * batch of SendMessages commits ~30 frames, so ~60 pwrite calls; under load they were
 * a sixth of the writer's time (perf: __x64_sys_pwrite64 under the group's COMMIT), and
 * the writer is what every worker waits for (decision-032).
 *
 * How: writes to a WAL file that continue the previous one are kept in a buffer; the
 * buffer is written (one write, at its offset) as soon as the frame that commits a
 * transaction is complete, and before anything else touches the file: a write that
 * does not continue it, a read, a sync, a truncate, its size, a file control, close.
 * SQLite publishes a commit in the WAL index only after its frames were written, so no
 * other connection or process can look for a frame that is still in a buffer. A
 * transaction whose process dies before its commit frame is written loses only frames
 * that were never committed: exactly what a crash in the middle of SQLite's own writes
 * leaves. Every other file (the database, -shm, journals) is the default VFS's own,
 * untouched. */
#include "store/store_int.h"

#include <stdlib.h>
#include <string.h>

/* A buffer larger than this is written out before it grows (a very large transaction). */
#define WAL_BUF_MAX (4 * 1024 * 1024)
/* The most one write of the unix VFS takes (its pwrite is capped at 0x1ffff bytes). */
#define WAL_WRITE_MAX (124 * 1024)

/* What a WAL file carries after the default VFS's own file structure. */
struct wal_extra {
	const sqlite3_io_methods *real; /* the default VFS's methods for this file */
	unsigned char *buf;             /* pending bytes; free() (flush_close) */
	size_t len, cap;
	sqlite3_int64 off; /* where buf[0] goes */
	int commit_next;   /* the last write was a commit frame's header: its page completes it */
};

static sqlite3_vfs wal_vfs;
static sqlite3_vfs *root;
static size_t extra_at; /* offset of struct wal_extra in a file: root's size, aligned */

static struct wal_extra *extra_of(sqlite3_file *f)
{
	return (struct wal_extra *)(void *)((char *)f + extra_at);
}

/* Writes what is pending, if anything, with the default VFS's write, in pieces it
 * takes whole: the unix VFS writes at most 128 KiB - 1 bytes a call. */
static int flush(sqlite3_file *f)
{
	struct wal_extra *x = extra_of(f);
	int rc = SQLITE_OK;
	for (size_t done = 0; rc == SQLITE_OK && done < x->len;) {
		size_t n = x->len - done < WAL_WRITE_MAX ? x->len - done : WAL_WRITE_MAX;
		rc = x->real->xWrite(f, x->buf + done, (int)n, x->off + (sqlite3_int64)done);
		done += n;
	}
	x->len = 0;
	return rc;
}

static unsigned get4(const unsigned char *p)
{
	return (unsigned)p[0] << 24 | (unsigned)p[1] << 16 | (unsigned)p[2] << 8 | p[3];
}

/* Room in x's buffer for amt more bytes (growing it); 0 when amt is too large for a
 * buffer or there is no memory. */
static int room(struct wal_extra *x, size_t amt)
{
	if (amt > WAL_BUF_MAX)
		return 0;
	if (x->len + amt <= x->cap)
		return 1;
	size_t cap = x->cap ? x->cap : 64 * 1024;
	while (cap < x->len + amt)
		cap *= 2;
	unsigned char *p = realloc(x->buf, cap);
	if (p == NULL)
		return 0;
	x->buf = p;
	x->cap = cap;
	return 1;
}

static int wal_write(sqlite3_file *f, const void *data, int amt, sqlite3_int64 ofst)
{
	struct wal_extra *x = extra_of(f);
	/* A frame header is 24 bytes; its second word, the database size after a commit, is
	 * not 0 only in a transaction's last frame. The write after it is that frame's page:
	 * once it is in the buffer, the buffer goes to the file. Noted before anything else,
	 * so that a write made directly (below) keeps the count right. */
	int ends_commit = x->commit_next;
	x->commit_next = amt == 24 && get4((const unsigned char *)data + 4) != 0;
	int rc;
	if (x->len > 0 &&
	    (x->off + (sqlite3_int64)x->len != ofst || x->len + (size_t)amt > WAL_BUF_MAX) &&
	    (rc = flush(f)) != SQLITE_OK)
		return rc;
	if (!room(x, (size_t)amt)) { /* no buffer: the write goes as SQLite made it */
		if ((rc = flush(f)) != SQLITE_OK)
			return rc;
		return x->real->xWrite(f, data, amt, ofst);
	}
	if (x->len == 0)
		x->off = ofst;
	memcpy(x->buf + x->len, data, (size_t)amt);
	x->len += (size_t)amt;
	return ends_commit ? flush(f) : SQLITE_OK;
}

static int flush_close(sqlite3_file *f)
{
	struct wal_extra *x = extra_of(f);
	int rc = flush(f);
	free(x->buf);
	x->buf = NULL;
	x->cap = 0;
	int crc = x->real->xClose(f);
	return rc != SQLITE_OK ? rc : crc;
}

static int wal_read(sqlite3_file *f, void *data, int amt, sqlite3_int64 ofst)
{
	int rc = flush(f);
	return rc != SQLITE_OK ? rc : extra_of(f)->real->xRead(f, data, amt, ofst);
}

static int wal_truncate(sqlite3_file *f, sqlite3_int64 size)
{
	int rc = flush(f);
	return rc != SQLITE_OK ? rc : extra_of(f)->real->xTruncate(f, size);
}

static int wal_sync(sqlite3_file *f, int flags)
{
	int rc = flush(f);
	return rc != SQLITE_OK ? rc : extra_of(f)->real->xSync(f, flags);
}

static int wal_size(sqlite3_file *f, sqlite3_int64 *size)
{
	int rc = flush(f);
	return rc != SQLITE_OK ? rc : extra_of(f)->real->xFileSize(f, size);
}

static int wal_lock(sqlite3_file *f, int level)
{
	return extra_of(f)->real->xLock(f, level);
}

static int wal_unlock(sqlite3_file *f, int level)
{
	return extra_of(f)->real->xUnlock(f, level);
}

static int wal_reserved(sqlite3_file *f, int *out)
{
	return extra_of(f)->real->xCheckReservedLock(f, out);
}

static int wal_fcntl(sqlite3_file *f, int op, void *arg)
{
	int rc = flush(f);
	return rc != SQLITE_OK ? rc : extra_of(f)->real->xFileControl(f, op, arg);
}

static int wal_sector(sqlite3_file *f)
{
	return extra_of(f)->real->xSectorSize(f);
}

static int wal_caps(sqlite3_file *f)
{
	return extra_of(f)->real->xDeviceCharacteristics(f);
}

/* Version 1: SQLite maps no memory and keeps no shared memory through a WAL file. */
static const sqlite3_io_methods wal_io = {
    .iVersion = 1,
    .xClose = flush_close,
    .xRead = wal_read,
    .xWrite = wal_write,
    .xTruncate = wal_truncate,
    .xSync = wal_sync,
    .xFileSize = wal_size,
    .xLock = wal_lock,
    .xUnlock = wal_unlock,
    .xCheckReservedLock = wal_reserved,
    .xFileControl = wal_fcntl,
    .xSectorSize = wal_sector,
    .xDeviceCharacteristics = wal_caps,
};

/* Opens every file with the default VFS in place; a WAL file then gets wal_io, which
 * calls the default VFS's methods on the same structure. */
static int wal_open(sqlite3_vfs *vfs, const char *name, sqlite3_file *f, int flags, int *out_flags)
{
	(void)vfs;
	struct wal_extra *x = extra_of(f);
	memset(x, 0, sizeof *x);
	int rc = root->xOpen(root, name, f, flags, out_flags);
	if (rc != SQLITE_OK || f->pMethods == NULL || !(flags & SQLITE_OPEN_WAL))
		return rc;
	x->real = f->pMethods;
	f->pMethods = &wal_io;
	return SQLITE_OK;
}

static int wal_delete(sqlite3_vfs *v, const char *n, int sync)
{
	(void)v;
	return root->xDelete(root, n, sync);
}

static int wal_access(sqlite3_vfs *v, const char *n, int flags, int *out)
{
	(void)v;
	return root->xAccess(root, n, flags, out);
}

static int wal_fullname(sqlite3_vfs *v, const char *n, int len, char *out)
{
	(void)v;
	return root->xFullPathname(root, n, len, out);
}

static void *wal_dlopen(sqlite3_vfs *v, const char *n)
{
	(void)v;
	return root->xDlOpen(root, n);
}

static void wal_dlerror(sqlite3_vfs *v, int len, char *out)
{
	(void)v;
	root->xDlError(root, len, out);
}

static void (*wal_dlsym(sqlite3_vfs *v, void *h, const char *sym))(void)
{
	(void)v;
	return root->xDlSym(root, h, sym);
}

static void wal_dlclose(sqlite3_vfs *v, void *h)
{
	(void)v;
	root->xDlClose(root, h);
}

static int wal_random(sqlite3_vfs *v, int len, char *out)
{
	(void)v;
	return root->xRandomness(root, len, out);
}

static int wal_sleep(sqlite3_vfs *v, int us)
{
	(void)v;
	return root->xSleep(root, us);
}

static int wal_time(sqlite3_vfs *v, double *out)
{
	(void)v;
	return root->xCurrentTime(root, out);
}

static int wal_lasterror(sqlite3_vfs *v, int len, char *out)
{
	(void)v;
	return root->xGetLastError ? root->xGetLastError(root, len, out) : 0;
}

static int wal_time64(sqlite3_vfs *v, sqlite3_int64 *out)
{
	(void)v;
	return root->xCurrentTimeInt64(root, out);
}

const char *th_walvfs_register(void)
{
	if (root != NULL)
		return TH_WALVFS_NAME;
	sqlite3_vfs *def = sqlite3_vfs_find(NULL);
	/* The default VFS must be version 2 or later (xCurrentTimeInt64): the unix one is. */
	if (def == NULL || def->iVersion < 2)
		return NULL;
	size_t align = sizeof(void *) > 8 ? sizeof(void *) : 8;
	extra_at = ((size_t)def->szOsFile + align - 1) / align * align;
	wal_vfs = (sqlite3_vfs){
	    .iVersion = 2,
	    .szOsFile = (int)(extra_at + sizeof(struct wal_extra)),
	    .mxPathname = def->mxPathname,
	    .zName = TH_WALVFS_NAME,
	    .xOpen = wal_open,
	    .xDelete = wal_delete,
	    .xAccess = wal_access,
	    .xFullPathname = wal_fullname,
	    .xDlOpen = wal_dlopen,
	    .xDlError = wal_dlerror,
	    .xDlSym = wal_dlsym,
	    .xDlClose = wal_dlclose,
	    .xRandomness = wal_random,
	    .xSleep = wal_sleep,
	    .xCurrentTime = wal_time,
	    .xGetLastError = wal_lasterror,
	    .xCurrentTimeInt64 = wal_time64,
	};
	root = def;
	if (sqlite3_vfs_register(&wal_vfs, 0) != SQLITE_OK) {
		root = NULL;
		return NULL;
	}
	return TH_WALVFS_NAME;
}
