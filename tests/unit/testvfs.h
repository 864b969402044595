/* SPDX-License-Identifier: Apache-2.0 */
/* testvfs.h — a test-only SQLite VFS over the default one (unix) that can (1) take the
 * image a power cut would leave on disk: each write to the database, its WAL or its
 * rollback journal since that file's last xSync is kept, dropped or torn sector by
 * sector, and (2) fail the Nth call of one kind (write, sync, truncate, lock, read)
 * once or from then on, as SQLite's crash*.test and ioerr*.test do for SQLite itself.
 * Registered as the default VFS, so the store (which opens with the default) uses it
 * unchanged. Only tests include it. The counters and the fault may be used from several
 * threads at once; a power cut is taken from one thread at a time. */
#ifndef TH_TESTS_TESTVFS_H
#define TH_TESTS_TESTVFS_H

#include <stdint.h>

enum tv_kind {
	TV_WRITE,    /* xWrite of any file */
	TV_SYNC,     /* xSync */
	TV_TRUNCATE, /* xTruncate */
	TV_LOCK,     /* xLock and xShmLock taking a lock (releases are never failed) */
	TV_READ,     /* xRead */
	TV_KINDS
};

/* Makes the test VFS the default (registering it the first time) and forgets every
 * file, counter, fault and cut of an earlier run; seed drives the cut's choices. */
void tv_install(uint64_t seed);
/* Makes SQLite's own default ("unix") the default again and frees what tv_install
 * and the files it saw kept. Files opened after this bypass the test VFS. */
void tv_uninstall(void);

/* ---- fault injection ---- */
/* Calls of kind k since tv_install or the last tv_count_reset. */
long tv_calls(enum tv_kind k);
void tv_count_reset(void);
/* The nth call of kind k from now (1 = the next) returns rc without doing anything;
 * with persistent, every later call of that kind too, until tv_fault_clear. */
void tv_fault(enum tv_kind k, long nth, int rc, int persistent);
/* As tv_fault, counting and failing only calls made on threads other than this one (a
 * store's stream thread, say), nth counted from now among those. */
void tv_fault_elsewhere(enum tv_kind k, long nth, int rc, int persistent);
void tv_fault_clear(void);
/* How many calls the current or last fault failed. */
long tv_fault_hits(void);

/* ---- power cut ---- */
/* Writes to WAL files so far. */
long tv_wal_writes(void);
/* The cut happens just before the nth write from now (1 = the next): the image of
 * every database, WAL and journal file is taken then; the process goes on writing. */
void tv_cut_arm(long nth);
/* Takes the image now, unless it was taken already. */
void tv_cut_now(void);
int tv_cut_taken(void);
/* At the cut: how many WAL writes the last xSync of the WAL covered (tv_wal_writes
 * counting); every write up to there had reached the disk. */
long tv_cut_wal_synced(void);
/* After every connection is closed: puts the images in place of the files (a file
 * absent at the cut is removed) and removes each database's -shm, which the cut would
 * have emptied. Returns how many sectors were dropped, torn or kept (out[0..2]). */
void tv_cut_apply(long out[3]);

#endif
