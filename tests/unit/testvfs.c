/* SPDX-License-Identifier: Apache-2.0 */
/* testvfs.c — see testvfs.h. The power cut is kept as an undo record: for every file
 * that must survive a reboot (database, WAL, rollback journal), the bytes each sector
 * held at that file's last xSync, saved the first time a write or truncate changes the
 * sector afterwards. At the cut each changed sector is, by a seeded choice, left as
 * written, put back as it was synced, or filled with garbage (a sector the disk was
 * writing when the power went), and the file's size is the synced or the current one.
 * The image is taken at the cut and put in place only after the process closed its
 * connections, so the run itself reads and writes normally until then. */
#include "testvfs.h"

#include <fcntl.h>
#include <pthread.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The unit a disk writes whole or not at all; SQLite's unix VFS assumes no larger
 * atomic unit (its sector size is 4096, but a page may still tear at 512). */
#define TV_SECTOR 512

/* A sector changed since its file's last xSync: what it held then (zeros past the
 * synced end), and which of its bytes were written since. A power cut may garble only
 * those: SQLite's unix VFS declares powersafe overwrite, a promise that a write never
 * damages bytes around it, so the unwritten part of a sector keeps its synced bytes. */
struct tv_sec {
	unsigned char old[TV_SECTOR];
	unsigned char written[TV_SECTOR / 8];
};

/* One path that must survive a reboot; shared by every handle open on it. */
struct tv_node {
	char *path; /* free: tv_uninstall / tv_install (nodes_free) */
	int is_wal;
	int is_db;
	int64_t synced_size; /* the size at the last xSync (0 before any) */
	struct tv_sec **sec; /* per sector, NULL while unchanged since that sync; each
	                        and the array: node_clear */
	size_t nsec;         /* length of sec */
	int img_exists;      /* the file existed at the cut */
	unsigned char *img;  /* its bytes at the cut; free: nodes_free */
	int64_t img_size;
	struct tv_node *next;
};

struct tv_file {
	sqlite3_file base;
	sqlite3_file *real;   /* the unix VFS's file, in the same allocation, after this */
	struct tv_node *node; /* NULL for files no reboot keeps (temp files) */
};

static struct {
	sqlite3_vfs vfs;
	int registered;
	struct tv_node *nodes;
	uint64_t rng;
	long calls[TV_KINDS];
	int f_on, f_kind, f_rc, f_persistent;
	long f_nth, f_hits;
	int f_elsewhere;   /* only calls on threads other than f_owner count (tv_fault_elsewhere) */
	pthread_t f_owner; /* the thread that armed the fault */
	long f_other;      /* calls of f_kind elsewhere since it was armed */
	long writes, cut_at, wal_writes, wal_synced, cut_wal_synced;
	int cut_armed, cut_taken;
	long cut_stats[3];
} tv;

static void *xmalloc(size_t n)
{
	void *p = malloc(n != 0 ? n : 1);
	if (p == NULL)
		abort(); /* test code: no way to go on without memory */
	return p;
}

static uint64_t rnd(void)
{
	tv.rng ^= tv.rng << 13;
	tv.rng ^= tv.rng >> 7;
	tv.rng ^= tv.rng << 17;
	return tv.rng;
}

static sqlite3_vfs *real_vfs(void)
{
	return tv.vfs.pAppData;
}

/* ---- the undo record ---- */

static void node_clear(struct tv_node *n)
{
	for (size_t i = 0; i < n->nsec; i++)
		free(n->sec[i]);
	free(n->sec);
	n->sec = NULL;
	n->nsec = 0;
}

static void nodes_free(void)
{
	while (tv.nodes != NULL) {
		struct tv_node *n = tv.nodes;
		tv.nodes = n->next;
		node_clear(n);
		free(n->img);
		free(n->path);
		free(n);
	}
}

static struct tv_node *node_get(const char *path, int flags)
{
	for (struct tv_node *n = tv.nodes; n != NULL; n = n->next)
		if (strcmp(n->path, path) == 0)
			return n;
	struct tv_node *n = xmalloc(sizeof *n);
	memset(n, 0, sizeof *n);
	n->path = strdup(path);
	if (n->path == NULL)
		abort();
	n->is_wal = (flags & SQLITE_OPEN_WAL) != 0;
	n->is_db = (flags & SQLITE_OPEN_MAIN_DB) != 0;
	/* A file that exists before it was first seen counts as synced as it is. */
	struct stat sb;
	n->synced_size = stat(path, &sb) == 0 ? (int64_t)sb.st_size : 0;
	n->next = tv.nodes;
	tv.nodes = n;
	return n;
}

static void node_grow(struct tv_node *n, size_t nsec)
{
	if (nsec <= n->nsec)
		return;
	size_t cap = n->nsec * 2 > nsec ? n->nsec * 2 : nsec;
	struct tv_sec **sec = xmalloc(cap * sizeof *sec);
	if (n->nsec > 0)
		memcpy(sec, n->sec, n->nsec * sizeof *sec);
	memset(sec + n->nsec, 0, (cap - n->nsec) * sizeof *sec);
	free(n->sec);
	n->sec = sec;
	n->nsec = cap;
}

/* Saves the synced bytes of every sector of [off, end) not changed since the sync, and
 * marks [off, end) written when written (a truncate writes nothing). */
static void node_touch(struct tv_node *n, sqlite3_file *real, int64_t off, int64_t end, int written)
{
	if (end <= off)
		return;
	size_t first = (size_t)(off / TV_SECTOR), last = (size_t)((end - 1) / TV_SECTOR);
	node_grow(n, last + 1);
	for (size_t s = first; s <= last; s++) {
		if (n->sec[s] == NULL) {
			n->sec[s] = xmalloc(sizeof *n->sec[s]);
			memset(n->sec[s], 0, sizeof *n->sec[s]);
			/* A short read zero-fills, which is what lies past the synced end. */
			int64_t at = (int64_t)s * TV_SECTOR;
			if (at < n->synced_size)
				(void)real->pMethods->xRead(real, n->sec[s]->old, TV_SECTOR, at);
		}
		for (int64_t b = off > (int64_t)s * TV_SECTOR ? off : (int64_t)s * TV_SECTOR;
		     written && b < end && b < (int64_t)(s + 1) * TV_SECTOR; b++) {
			int i = (int)(b % TV_SECTOR);
			n->sec[s]->written[i / 8] |= (unsigned char)(1u << (i % 8));
		}
	}
}

static void node_synced(struct tv_node *n, sqlite3_file *real)
{
	sqlite3_int64 size = 0;
	if (real->pMethods->xFileSize(real, &size) == SQLITE_OK)
		n->synced_size = size;
	node_clear(n);
	if (n->is_wal)
		tv.wal_synced = tv.wal_writes;
}

/* ---- the cut ---- */

static int64_t file_read_all(const char *path, unsigned char **buf, size_t room)
{
	int fd = open(path, O_RDONLY);
	if (fd < 0)
		return -1;
	struct stat sb;
	int64_t size = fstat(fd, &sb) == 0 ? (int64_t)sb.st_size : 0;
	size_t cap = (size_t)size > room ? (size_t)size : room;
	*buf = xmalloc(cap);
	memset(*buf, 0, cap);
	int64_t got = 0;
	while (got < size) {
		ssize_t r = pread(fd, *buf + got, (size_t)(size - got), (off_t)got);
		if (r <= 0)
			break;
		got += r;
	}
	close(fd);
	return size;
}

/* The chance that a sector written since the sync made it to the disk, one per cut:
 * from none to all (all: what a process crash or SIGKILL leaves, since the OS keeps
 * every write it accepted). Of the sectors that did not, one in four holds garbage. */
static void node_image(struct tv_node *n, int keep_pct)
{
	size_t room = n->nsec * TV_SECTOR;
	if ((int64_t)room < n->synced_size)
		room = (size_t)n->synced_size;
	free(n->img);
	n->img = NULL;
	int64_t cur = file_read_all(n->path, &n->img, room);
	n->img_exists = cur >= 0;
	if (cur < 0)
		return;
	for (size_t s = 0; s < n->nsec; s++) {
		struct tv_sec *sec = n->sec[s];
		if (sec == NULL)
			continue;
		if ((int)(rnd() % 100) < keep_pct) {
			tv.cut_stats[0]++;
			continue;
		}
		unsigned char *p = n->img + s * TV_SECTOR;
		memcpy(p, sec->old, TV_SECTOR);
		if (rnd() % 4 == 0) {
			for (int i = 0; i < TV_SECTOR; i++)
				if (sec->written[i / 8] & (1u << (i % 8)))
					p[i] = (unsigned char)rnd();
			tv.cut_stats[2]++;
		} else {
			tv.cut_stats[1]++;
		}
	}
	/* The size is metadata the file system may not have written either. */
	n->img_size = cur;
	if (cur != n->synced_size && keep_pct < 100 && rnd() % 4 == 0) {
		n->img_size = n->synced_size;
		tv.cut_stats[1]++;
	}
}

static void take_image(void)
{
	static const int keep[] = {0, 50, 90, 99, 100};
	int keep_pct = keep[rnd() % (sizeof keep / sizeof keep[0])];
	memset(tv.cut_stats, 0, sizeof tv.cut_stats);
	for (struct tv_node *n = tv.nodes; n != NULL; n = n->next)
		node_image(n, keep_pct);
	tv.cut_taken = 1;
	tv.cut_armed = 0;
	tv.cut_wal_synced = tv.wal_synced;
}

static void write_file(const char *path, const unsigned char *buf, int64_t size)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0)
		abort();
	int64_t done = 0;
	while (done < size) {
		ssize_t w = write(fd, buf + done, (size_t)(size - done));
		if (w <= 0)
			abort();
		done += w;
	}
	close(fd);
}

void tv_cut_apply(long out[3])
{
	for (struct tv_node *n = tv.nodes; n != NULL; n = n->next) {
		if (n->img_exists)
			write_file(n->path, n->img, n->img_size);
		else
			unlink(n->path);
		if (n->is_db) {
			char shm[4096];
			snprintf(shm, sizeof shm, "%s-shm", n->path);
			unlink(shm);
		}
	}
	memcpy(out, tv.cut_stats, sizeof tv.cut_stats);
}

void tv_cut_arm(long nth)
{
	tv.cut_at = tv.writes + nth;
	tv.cut_armed = 1;
	tv.cut_taken = 0;
}

void tv_cut_now(void)
{
	if (!tv.cut_taken)
		take_image();
}

int tv_cut_taken(void)
{
	return tv.cut_taken;
}

long tv_cut_wal_synced(void)
{
	return tv.cut_wal_synced;
}

long tv_wal_writes(void)
{
	return tv.wal_writes;
}

/* ---- faults ---- */

/* Guards the counters and the fault: a store's stream thread reads through the VFS while
 * the test's thread writes (tv_fault_elsewhere). */
static pthread_mutex_t fault_mu = PTHREAD_MUTEX_INITIALIZER;

long tv_calls(enum tv_kind k)
{
	pthread_mutex_lock(&fault_mu);
	long n = tv.calls[k];
	pthread_mutex_unlock(&fault_mu);
	return n;
}

void tv_count_reset(void)
{
	pthread_mutex_lock(&fault_mu);
	memset(tv.calls, 0, sizeof tv.calls);
	pthread_mutex_unlock(&fault_mu);
}

static void arm(enum tv_kind k, long nth, int rc, int persistent, int elsewhere)
{
	pthread_mutex_lock(&fault_mu);
	tv.f_on = 1;
	tv.f_kind = (int)k;
	tv.f_nth = elsewhere ? nth : tv.calls[k] + nth;
	tv.f_rc = rc;
	tv.f_persistent = persistent;
	tv.f_hits = 0;
	tv.f_elsewhere = elsewhere;
	tv.f_owner = pthread_self();
	tv.f_other = 0;
	pthread_mutex_unlock(&fault_mu);
}

void tv_fault(enum tv_kind k, long nth, int rc, int persistent)
{
	arm(k, nth, rc, persistent, 0);
}

void tv_fault_elsewhere(enum tv_kind k, long nth, int rc, int persistent)
{
	arm(k, nth, rc, persistent, 1);
}

void tv_fault_clear(void)
{
	pthread_mutex_lock(&fault_mu);
	tv.f_on = 0;
	pthread_mutex_unlock(&fault_mu);
}

long tv_fault_hits(void)
{
	pthread_mutex_lock(&fault_mu);
	long n = tv.f_hits;
	pthread_mutex_unlock(&fault_mu);
	return n;
}

/* Counts a call of kind k; non-zero: the SQLite code it must fail with. */
static int fault(enum tv_kind k)
{
	pthread_mutex_lock(&fault_mu);
	long n = ++tv.calls[k];
	int rc = 0;
	if (tv.f_on && tv.f_kind == (int)k && tv.f_elsewhere)
		n = pthread_equal(pthread_self(), tv.f_owner) ? 0 : ++tv.f_other;
	if (tv.f_on && tv.f_kind == (int)k && n > 0 &&
	    (n == tv.f_nth || (tv.f_persistent && n > tv.f_nth))) {
		tv.f_hits++;
		rc = tv.f_rc;
	}
	pthread_mutex_unlock(&fault_mu);
	return rc;
}

/* ---- io methods ---- */

static sqlite3_file *R(sqlite3_file *f)
{
	return ((struct tv_file *)f)->real;
}

static struct tv_node *N(sqlite3_file *f)
{
	return ((struct tv_file *)f)->node;
}

static int x_close(sqlite3_file *f)
{
	sqlite3_file *r = R(f);
	return r->pMethods != NULL ? r->pMethods->xClose(r) : SQLITE_OK;
}

static int x_read(sqlite3_file *f, void *buf, int amt, sqlite3_int64 off)
{
	int rc = fault(TV_READ);
	if (rc != 0)
		return rc;
	return R(f)->pMethods->xRead(R(f), buf, amt, off);
}

static int x_write(sqlite3_file *f, const void *buf, int amt, sqlite3_int64 off)
{
	struct tv_node *n = N(f);
	if (n != NULL && ++tv.writes >= tv.cut_at && tv.cut_armed)
		take_image();
	int rc = fault(TV_WRITE);
	if (rc != 0)
		return rc;
	if (n != NULL) {
		node_touch(n, R(f), off, off + amt, 1);
		if (n->is_wal)
			tv.wal_writes++;
	}
	return R(f)->pMethods->xWrite(R(f), buf, amt, off);
}

static int x_truncate(sqlite3_file *f, sqlite3_int64 size)
{
	int rc = fault(TV_TRUNCATE);
	if (rc != 0)
		return rc;
	struct tv_node *n = N(f);
	if (n != NULL && size < n->synced_size)
		node_touch(n, R(f), size, n->synced_size, 0);
	return R(f)->pMethods->xTruncate(R(f), size);
}

static int x_sync(sqlite3_file *f, int flags)
{
	(void)flags;
	int rc = fault(TV_SYNC);
	if (rc != 0)
		return rc;
	/* No fsync: the undo record is what a reboot would find, not the disk, and a real
	 * fsync per commit made the cuts ten times slower. */
	if (N(f) != NULL)
		node_synced(N(f), R(f));
	return SQLITE_OK;
}

static int x_file_size(sqlite3_file *f, sqlite3_int64 *size)
{
	return R(f)->pMethods->xFileSize(R(f), size);
}

static int x_lock(sqlite3_file *f, int lock)
{
	int rc = fault(TV_LOCK);
	if (rc != 0)
		return rc;
	return R(f)->pMethods->xLock(R(f), lock);
}

static int x_unlock(sqlite3_file *f, int lock)
{
	return R(f)->pMethods->xUnlock(R(f), lock);
}

static int x_check_reserved(sqlite3_file *f, int *out)
{
	return R(f)->pMethods->xCheckReservedLock(R(f), out);
}

static int x_file_control(sqlite3_file *f, int op, void *arg)
{
	return R(f)->pMethods->xFileControl(R(f), op, arg);
}

static int x_sector_size(sqlite3_file *f)
{
	return R(f)->pMethods->xSectorSize(R(f));
}

static int x_device_chars(sqlite3_file *f)
{
	return R(f)->pMethods->xDeviceCharacteristics(R(f));
}

static int x_shm_map(sqlite3_file *f, int pg, int pgsz, int extend, void volatile **pp)
{
	return R(f)->pMethods->xShmMap(R(f), pg, pgsz, extend, pp);
}

static int x_shm_lock(sqlite3_file *f, int offset, int n, int flags)
{
	if (flags & SQLITE_SHM_LOCK) {
		int rc = fault(TV_LOCK);
		if (rc != 0)
			return rc;
	}
	return R(f)->pMethods->xShmLock(R(f), offset, n, flags);
}

static void x_shm_barrier(sqlite3_file *f)
{
	R(f)->pMethods->xShmBarrier(R(f));
}

static int x_shm_unmap(sqlite3_file *f, int del)
{
	return R(f)->pMethods->xShmUnmap(R(f), del);
}

/* Version 2: no xFetch, so every read of the database goes through x_read. */
static const sqlite3_io_methods tv_io = {
    2,
    x_close,
    x_read,
    x_write,
    x_truncate,
    x_sync,
    x_file_size,
    x_lock,
    x_unlock,
    x_check_reserved,
    x_file_control,
    x_sector_size,
    x_device_chars,
    x_shm_map,
    x_shm_lock,
    x_shm_barrier,
    x_shm_unmap,
    NULL,
    NULL,
};

/* ---- vfs methods ---- */

static int v_open(sqlite3_vfs *v, const char *name, sqlite3_file *f, int flags, int *out)
{
	(void)v;
	struct tv_file *p = (struct tv_file *)f;
	p->real = (sqlite3_file *)(p + 1);
	p->real->pMethods = NULL;
	p->node = NULL;
	p->base.pMethods = NULL;
	int rc = real_vfs()->xOpen(real_vfs(), name, p->real, flags, out);
	if (rc != SQLITE_OK) {
		if (p->real->pMethods != NULL)
			p->real->pMethods->xClose(p->real);
		return rc;
	}
	const int durable = SQLITE_OPEN_MAIN_DB | SQLITE_OPEN_WAL | SQLITE_OPEN_MAIN_JOURNAL;
	if (name != NULL && (flags & durable) != 0)
		p->node = node_get(name, flags);
	p->base.pMethods = &tv_io;
	return SQLITE_OK;
}

static int v_delete(sqlite3_vfs *v, const char *name, int sync_dir)
{
	(void)v;
	/* An unlink is taken as durable at once: the file comes back empty if ever. */
	for (struct tv_node *n = tv.nodes; n != NULL; n = n->next)
		if (strcmp(n->path, name) == 0) {
			node_clear(n);
			n->synced_size = 0;
		}
	(void)sync_dir; /* as x_sync: no fsync of the directory either */
	return real_vfs()->xDelete(real_vfs(), name, 0);
}

static int v_access(sqlite3_vfs *v, const char *name, int flags, int *out)
{
	(void)v;
	return real_vfs()->xAccess(real_vfs(), name, flags, out);
}

static int v_full(sqlite3_vfs *v, const char *name, int n, char *out)
{
	(void)v;
	return real_vfs()->xFullPathname(real_vfs(), name, n, out);
}

static void *v_dlopen(sqlite3_vfs *v, const char *name)
{
	(void)v;
	return real_vfs()->xDlOpen(real_vfs(), name);
}

static void v_dlerror(sqlite3_vfs *v, int n, char *msg)
{
	(void)v;
	real_vfs()->xDlError(real_vfs(), n, msg);
}

static void (*v_dlsym(sqlite3_vfs *v, void *h, const char *sym))(void)
{
	(void)v;
	return real_vfs()->xDlSym(real_vfs(), h, sym);
}

static void v_dlclose(sqlite3_vfs *v, void *h)
{
	(void)v;
	real_vfs()->xDlClose(real_vfs(), h);
}

static int v_random(sqlite3_vfs *v, int n, char *out)
{
	(void)v;
	return real_vfs()->xRandomness(real_vfs(), n, out);
}

static int v_sleep(sqlite3_vfs *v, int us)
{
	(void)v;
	return real_vfs()->xSleep(real_vfs(), us);
}

static int v_time(sqlite3_vfs *v, double *out)
{
	(void)v;
	return real_vfs()->xCurrentTime(real_vfs(), out);
}

static int v_last_error(sqlite3_vfs *v, int n, char *out)
{
	(void)v;
	return real_vfs()->xGetLastError(real_vfs(), n, out);
}

static int v_time64(sqlite3_vfs *v, sqlite3_int64 *out)
{
	(void)v;
	return real_vfs()->xCurrentTimeInt64(real_vfs(), out);
}

void tv_install(uint64_t seed)
{
	if (!tv.registered) {
		sqlite3_vfs *r = sqlite3_vfs_find("unix");
		if (r == NULL)
			abort();
		tv.vfs.iVersion = 2;
		tv.vfs.szOsFile = (int)sizeof(struct tv_file) + r->szOsFile;
		tv.vfs.mxPathname = r->mxPathname;
		tv.vfs.zName = "th-testvfs";
		tv.vfs.pAppData = r;
		tv.vfs.xOpen = v_open;
		tv.vfs.xDelete = v_delete;
		tv.vfs.xAccess = v_access;
		tv.vfs.xFullPathname = v_full;
		tv.vfs.xDlOpen = v_dlopen;
		tv.vfs.xDlError = v_dlerror;
		tv.vfs.xDlSym = v_dlsym;
		tv.vfs.xDlClose = v_dlclose;
		tv.vfs.xRandomness = v_random;
		tv.vfs.xSleep = v_sleep;
		tv.vfs.xCurrentTime = v_time;
		tv.vfs.xGetLastError = v_last_error;
		tv.vfs.xCurrentTimeInt64 = v_time64;
		tv.registered = 1;
	}
	nodes_free();
	sqlite3_vfs saved = tv.vfs;
	memset(&tv, 0, sizeof tv);
	tv.vfs = saved;
	tv.registered = 1;
	tv.rng = seed != 0 ? seed : 0x9e3779b97f4a7c15ULL;
	if (sqlite3_vfs_register(&tv.vfs, 1) != SQLITE_OK)
		abort();
}

void tv_uninstall(void)
{
	if (tv.registered) {
		sqlite3_vfs_unregister(&tv.vfs);
		sqlite3_vfs_register(real_vfs(), 1);
	}
	nodes_free();
}
