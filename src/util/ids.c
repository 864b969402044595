/* SPDX-License-Identifier: Apache-2.0 */
#include "util/ids.h"

#include <assert.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

/* Random bytes for ids, drawn from getrandom a pool at a time per thread: one system
 * call per 32 ids instead of one per id (issue 9: system calls are what a request costs
 * most on a virtual machine). A child of fork starts with an empty pool, so a parent and
 * its child never hand out the same bytes. */
static __thread unsigned char pool[256];
static __thread size_t pool_left;
static pthread_once_t pool_once = PTHREAD_ONCE_INIT;

static void pool_forked(void)
{
	pool_left = 0;
}

static void pool_init(void)
{
	(void)pthread_atfork(NULL, NULL, pool_forked);
}

/* 0, or -1 when the kernel gave no randomness (b is then left as it was). */
static int random_bytes(unsigned char *b, size_t n)
{
	assert(n <= sizeof pool);
	(void)pthread_once(&pool_once, pool_init);
	if (pool_left < n) {
		if (getrandom(pool, sizeof pool, 0) != (ssize_t)sizeof pool)
			return -1;
		pool_left = sizeof pool;
	}
	unsigned char *from = pool + sizeof pool - pool_left;
	memcpy(b, from, n);
	memset(from, 0, n); /* handed out once */
	pool_left -= n;
	return 0;
}

void th_uuid(char out[TH_UUID_LEN + 1])
{
	unsigned char b[16];
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	if (random_bytes(b + 8, 8) != 0) {
		/* getrandom cannot fail once the pool is ready; fall back to mixing the
		 * clock and pid rather than aborting a worker. */
		uint64_t x = (uint64_t)ts.tv_nsec ^ ((uint64_t)getpid() << 32) ^ (uint64_t)clock();
		for (size_t i = 8; i < sizeof b; i++) {
			x = x * 6364136223846793005ULL + 1442695040888963407ULL;
			b[i] = (unsigned char)(x >> 56);
		}
	}
	/* Version 7 (RFC 9562 §5.7): 48 bits of Unix milliseconds, then 12 bits of the
	 * sub-millisecond fraction (§6.2, method 3), then 62 random bits (of b[8..15]). Ids made
	 * one after another sort one after another, so every b-tree keyed by a task id grows at its
	 * right edge and the tasks a batch creates share pages (decision-028). */
	uint64_t ms = (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
	unsigned frac = (unsigned)(((uint64_t)(ts.tv_nsec % 1000000) << 12) / 1000000u);
	for (int i = 0; i < 6; i++)
		b[i] = (unsigned char)(ms >> (40 - 8 * i));
	b[6] = (unsigned char)(0x70 | (frac >> 8));
	b[7] = (unsigned char)(frac & 0xff);
	b[8] = (unsigned char)((b[8] & 0x3f) | 0x80);
	/* 8-4-4-4-12 hex digits, by hand: snprintf with sixteen conversions cost ~6k
	 * instructions per id, three ids per SendMessage (issue 9). */
	static const char hex[] = "0123456789abcdef";
	char *o = out;
	for (int i = 0; i < 16; i++) {
		if (i == 4 || i == 6 || i == 8 || i == 10)
			*o++ = '-';
		*o++ = hex[b[i] >> 4];
		*o++ = hex[b[i] & 0xf];
	}
	*o = '\0';
}

int64_t th_now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int64_t th_mono_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void th_utc_split(int64_t secs, struct th_utc *out)
{
	/* Whole days and the second of the day, both floored, so 1969 comes out right too. */
	int64_t days = secs / 86400, sod = secs % 86400;
	if (sod < 0) {
		sod += 86400;
		days--;
	}
	out->wday = (int)(((days % 7) + 11) % 7); /* 1970-01-01 was a Thursday (4) */
	/* The proleptic Gregorian calendar in 400-year eras of 146,097 days, with the year
	 * taken to start on 1 March so that the leap day ends it. */
	int64_t z = days + 719468; /* days from 0000-03-01 */
	int64_t era = (z >= 0 ? z : z - 146096) / 146097;
	unsigned doe = (unsigned)(z - era * 146097);                          /* 0..146096 */
	unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365; /* 0..399 */
	unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);               /* 0..365 */
	unsigned mp = (5 * doy + 2) / 153; /* 0..11, March first */
	out->mday = (int)(doy - (153 * mp + 2) / 5 + 1);
	out->mon = (int)(mp < 10 ? mp + 3 : mp - 9);
	out->year = (int64_t)yoe + era * 400 + (out->mon <= 2);
	out->hour = (int)(sod / 3600);
	out->min = (int)(sod / 60 % 60);
	out->sec = (int)(sod % 60);
}

void th_ts_format(int64_t ms, char out[TH_TS_LEN + 1])
{
	/* Arithmetic, not gmtime_r: glibc's takes a process-wide lock at every call and
	 * reads /etc/localtime at the first (seven system calls in a plain-CGI request). */
	int64_t milli = ms % 1000;
	if (milli < 0)
		milli += 1000;
	struct th_utc u;
	th_utc_split((ms - milli) / 1000, &u);
	/* Years past 9999 cannot be written in A2A's format; clamp rather than truncate. */
	unsigned year = (unsigned)(((u.year % 10000) + 10000) % 10000);
	/* YYYY-MM-DDTHH:MM:SS.mmmZ by hand: every status and message carries one, and
	 * snprintf's seven conversions were most of a timestamp's cost (issue 9). */
	const unsigned parts[7] = {year,
	                           (unsigned)u.mon,
	                           (unsigned)u.mday,
	                           (unsigned)u.hour,
	                           (unsigned)u.min,
	                           (unsigned)u.sec,
	                           (unsigned)milli};
	static const int width[7] = {4, 2, 2, 2, 2, 2, 3};
	static const char after[7] = {'-', '-', 'T', ':', ':', '.', 'Z'};
	char *o = out;
	for (int i = 0; i < 7; i++) {
		unsigned v = parts[i];
		for (int d = width[i] - 1; d >= 0; d--) {
			o[d] = (char)('0' + v % 10u);
			v /= 10u;
		}
		o += width[i];
		*o++ = after[i];
	}
	*o = '\0';
}

/* n decimal digits at s, exactly (no sign, no space): the value, or -1. */
static int digits(const char *s, int n)
{
	int v = 0;
	for (int i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		v = v * 10 + (s[i] - '0');
	}
	return v;
}

static int days_in_month(int y, int m)
{
	static const int days[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
	assert(m >= 1 && (size_t)(m - 1) < sizeof days / sizeof days[0]);
	int leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
	return m == 2 && leap ? 29 : days[m - 1];
}

/* Days from 1970-01-01 to y-m-d in the proleptic Gregorian calendar. */
static int64_t days_from_civil(int y, int m, int d)
{
	y -= m <= 2;
	int64_t era = (y >= 0 ? y : y - 399) / 400;
	int64_t yoe = y - era * 400;
	int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + doe - 719468;
}

int th_ts_parse(const char *s, int64_t *ms)
{
	/* RFC 3339 date-time: YYYY-MM-DDTHH:MM:SS[.fraction](Z|+HH:MM|-HH:MM), with the
	 * date checked against the calendar and T/Z in either case. */
	if (s == NULL || strlen(s) < 20 || s[4] != '-' || s[7] != '-' ||
	    (s[10] != 'T' && s[10] != 't') || s[13] != ':' || s[16] != ':')
		return -1;
	int y = digits(s, 4), mo = digits(s + 5, 2), d = digits(s + 8, 2);
	int h = digits(s + 11, 2), mi = digits(s + 14, 2), sec = digits(s + 17, 2);
	if (y < 0 || mo < 1 || mo > 12 || d < 1 || h < 0 || h > 23 || mi < 0 || mi > 59 ||
	    sec < 0 || sec > 60 || d > days_in_month(y, mo))
		return -1;
	const char *p = s + 19;
	int frac_ms = 0, n = 0;
	if (*p == '.') {
		for (p++; *p >= '0' && *p <= '9'; p++, n++)
			if (n < 3)
				frac_ms = frac_ms * 10 + (*p - '0');
		if (n == 0 || n > 9)
			return -1;
		for (int i = n; i < 3; i++)
			frac_ms *= 10;
	}
	int offset_min = 0;
	if ((p[0] == 'Z' || p[0] == 'z') && p[1] == '\0') {
		offset_min = 0;
	} else if ((p[0] == '+' || p[0] == '-') && strlen(p) == 6 && p[3] == ':') {
		int oh = digits(p + 1, 2), om = digits(p + 4, 2);
		if (oh < 0 || oh > 23 || om < 0 || om > 59)
			return -1;
		offset_min = (p[0] == '+' ? 1 : -1) * (oh * 60 + om);
	} else {
		return -1;
	}
	int64_t secs = days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + sec;
	*ms = (secs - (int64_t)offset_min * 60) * 1000 + frac_ms;
	return 0;
}
