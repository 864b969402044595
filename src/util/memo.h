/* SPDX-License-Identifier: Apache-2.0 */
/* memo.h — answers kept while the database stays the same: a few texts under keys, all
 * valid for one stamp (the database's version as one connection sees it). Looking up
 * under another stamp finds nothing and forgets every text, so a kept answer is never
 * older than the database. One memo per request thread; not shared between threads. */
#ifndef TH_UTIL_MEMO_H
#define TH_UTIL_MEMO_H

#include <stddef.h>
#include <stdint.h>

/* The database's version: equal stamps mean nothing was committed in between. */
struct th_memo_stamp {
	int64_t seen;  /* commits of other connections (PRAGMA data_version) */
	int64_t wrote; /* commits of this thread (th_store_changes) */
};

/* The longest text a memo keeps, in bytes; a longer answer is not kept. */
#define TH_MEMO_TEXT_MAX (64 * 1024)

struct th_memo;

/* A new, empty memo, or NULL when out of memory. th_memo_free. */
struct th_memo *th_memo_new(void);
void th_memo_free(struct th_memo *m);

/* The text kept under key for stamp s, or NULL. Borrowed: valid until the next
 * th_memo_get or th_memo_put on m. */
const char *th_memo_get(struct th_memo *m, struct th_memo_stamp s, const char *key);

/* 1 when a text is kept under key, for whatever stamp (nothing is forgotten). */
int th_memo_has(const struct th_memo *m, const char *key);

/* Keeps a copy of text under key for stamp s (forgetting the oldest entry when the
 * memo is full). Nothing is kept when out of memory or text is too long. */
void th_memo_put(struct th_memo *m, struct th_memo_stamp s, const char *key, const char *text);

#endif
