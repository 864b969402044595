/* SPDX-License-Identifier: Apache-2.0 */
/* pool.c — SQLite's memory in a plain-CGI process (PKG-4, decision-062).
 *
 * Debian's SQLite is built with SQLITE_OMIT_LOOKASIDE, so every expression node, token
 * and schema object SQLite makes goes through malloc and free: about 2,700 allocations
 * and 2,800 frees in one CGI GetTask, most of them while it parses the schema and
 * prepares statements, and again while it frees the schema at close. A CGI process
 * lives for one request, on one thread, so its SQLite gets a simpler allocator: blocks
 * of up to POOL_MAX bytes come from 64 KiB chunks, rounded up to a multiple of 16 bytes,
 * and a freed block goes on the free list of its size, to be handed out again for the
 * next block of that size. Larger blocks (page-cache buffers) go to malloc. Chunks are
 * never given back: the process exits after its request; a long one (a stream, a turn)
 * reuses its freed blocks, so it holds at most its high-water mark of each size.
 *
 * Not thread-safe, by design: th_store_pool_install is called only by the CGI entry
 * point, before SQLite initialises, in a process whose SQLite runs on that one thread
 * (FastCGI workers, with request threads, keep the system allocator). */
#include "store/store.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define POOL_GRAIN 16
#define POOL_MAX 4096 /* the largest block served from the chunks */
#define POOL_CLASSES (POOL_MAX / POOL_GRAIN)
#define POOL_CHUNK (64 * 1024)
#define POOL_HEAD 16 /* keeps blocks 16-byte aligned, as malloc's are */

/* Before each block: its usable size and its size class (0: from malloc). */
struct head {
	int64_t size;
	int64_t cls;
};

struct free_block {
	struct free_block *next;
};

static struct free_block *free_lists[POOL_CLASSES + 1];
static char *chunk_next, *chunk_end; /* chunks are never freed (see above) */

static int64_t usable(int n)
{
	int64_t want = n > 0 ? n : 1;
	return (want + POOL_GRAIN - 1) / POOL_GRAIN * POOL_GRAIN;
}

static void *pool_malloc(int n)
{
	int64_t size = usable(n);
	struct head *h;
	if (size > POOL_MAX) {
		h = malloc((size_t)size + POOL_HEAD);
		if (h == NULL)
			return NULL;
		h->size = size;
		h->cls = 0;
		return h + 1;
	}
	int64_t cls = size / POOL_GRAIN;
	struct free_block *b = free_lists[cls];
	if (b != NULL) {
		free_lists[cls] = b->next;
		return b;
	}
	if (chunk_next == NULL || chunk_end - chunk_next < size + POOL_HEAD) {
		/* What was left of the last chunk (< POOL_MAX + POOL_HEAD bytes) stays unused. */
		chunk_next = malloc(POOL_CHUNK);
		if (chunk_next == NULL)
			return NULL;
		chunk_end = chunk_next + POOL_CHUNK;
	}
	h = (struct head *)(void *)chunk_next;
	chunk_next += size + POOL_HEAD;
	h->size = size;
	h->cls = cls;
	return h + 1;
}

static struct head *head_of(void *p)
{
	return (struct head *)p - 1;
}

static void pool_free(void *p)
{
	if (p == NULL)
		return;
	struct head *h = head_of(p);
	if (h->cls == 0) {
		free(h);
		return;
	}
	struct free_block *b = p;
	b->next = free_lists[h->cls];
	free_lists[h->cls] = b;
}

static int pool_size(void *p)
{
	return p != NULL ? (int)head_of(p)->size : 0;
}

static void *pool_realloc(void *p, int n)
{
	struct head *h = head_of(p);
	if (usable(n) <= h->size)
		return p;
	if (h->cls == 0 && usable(n) > POOL_MAX) {
		struct head *grown = realloc(h, (size_t)usable(n) + POOL_HEAD);
		if (grown == NULL)
			return NULL;
		grown->size = usable(n);
		return grown + 1;
	}
	void *q = pool_malloc(n);
	if (q == NULL)
		return NULL;
	memcpy(q, p, (size_t)h->size);
	pool_free(p);
	return q;
}

static int pool_roundup(int n)
{
	return (int)usable(n);
}

static int pool_init(void *arg)
{
	(void)arg;
	return SQLITE_OK;
}

static void pool_shutdown(void *arg)
{
	(void)arg;
}

int th_store_pool_install(void)
{
	static const sqlite3_mem_methods methods = {
	    pool_malloc, pool_free,    pool_realloc,  pool_size,
	    pool_roundup, pool_init, pool_shutdown, NULL,
	};
	/* SQLITE_MISUSE once SQLite has initialised: it keeps the system allocator. */
	return sqlite3_config(SQLITE_CONFIG_MALLOC, &methods) == SQLITE_OK;
}
