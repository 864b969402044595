/* SPDX-License-Identifier: Apache-2.0 */
/* rate.c — see rate.h. The buckets live in one fixed table hashed by key: memory stays
 * the same however many participants come. Two keys that land on one slot share it, the
 * newer taking it over with a full bucket; a slot is only taken over when its bucket is
 * full again or after LINGER_MS, so a busy participant cannot reset its own bucket by
 * spreading requests over names. */
#include "util/rate.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "util/ids.h"

#define SLOTS 4096
#define LINGER_MS 60000

struct bucket {
	char key[TH_ID_BUF];
	double tokens;
	int64_t at_ms; /* when tokens was last brought up to date */
};

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static struct bucket table[SLOTS];

/* FNV-1a: stable and cheap; the table is not exposed to an attacker who could aim at
 * one slot any better than by trying names, which LINGER_MS already answers. */
static size_t slot_of(const char *key)
{
	uint32_t h = 2166136261u;
	for (const unsigned char *p = (const unsigned char *)key; *p != '\0'; p++) {
		h ^= *p;
		h *= 16777619u;
	}
	return h % SLOTS;
}

static void refill(struct bucket *b, int rps, int burst, int64_t now_ms)
{
	if (now_ms > b->at_ms) {
		b->tokens += (double)(now_ms - b->at_ms) * rps / 1000.0;
		b->at_ms = now_ms;
	}
	if (b->tokens > burst)
		b->tokens = burst;
}

int64_t th_rate_take(const char *key, int rps, int burst, int64_t now_ms)
{
	if (rps <= 0)
		return 0;
	if (burst < 1)
		burst = 1;
	if (key == NULL)
		key = "";
	pthread_mutex_lock(&mu);
	struct bucket *b = &table[slot_of(key)];
	if (strncmp(b->key, key, sizeof b->key) != 0) {
		refill(b, rps, burst, now_ms);
		if (b->key[0] == '\0' || b->tokens >= burst || now_ms - b->at_ms >= LINGER_MS) {
			snprintf(b->key, sizeof b->key, "%s", key);
			b->tokens = burst;
			b->at_ms = now_ms;
		}
	}
	refill(b, rps, burst, now_ms);
	int64_t wait = 0;
	if (b->tokens >= 1.0) {
		b->tokens -= 1.0;
	} else {
		/* Rounded up, at least 1 ms: a token is whole again after exactly this long
		 * (an empty bucket at 1 per second waits 1000 ms, Retry-After: 1). */
		double ms = (1.0 - b->tokens) * 1000.0 / rps;
		wait = (int64_t)ms;
		if ((double)wait < ms || wait < 1)
			wait++;
	}
	pthread_mutex_unlock(&mu);
	return wait;
}

void th_rate_reset(void)
{
	pthread_mutex_lock(&mu);
	memset(table, 0, sizeof table);
	pthread_mutex_unlock(&mu);
}
