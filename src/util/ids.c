#include "util/ids.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

void th_uuid(char out[TH_UUID_LEN + 1])
{
	unsigned char b[16];
	ssize_t got = getrandom(b, sizeof b, 0);
	if (got != (ssize_t)sizeof b) {
		/* getrandom cannot fail for 16 bytes once the pool is ready; fall back
		 * to mixing the clock and pid rather than aborting a worker. */
		uint64_t x = (uint64_t)th_now_ms() ^ ((uint64_t)getpid() << 32) ^ (uint64_t)clock();
		for (size_t i = 0; i < sizeof b; i++) {
			x = x * 6364136223846793005ULL + 1442695040888963407ULL;
			b[i] = (unsigned char)(x >> 56);
		}
	}
	b[6] = (unsigned char)((b[6] & 0x0f) | 0x40);
	b[8] = (unsigned char)((b[8] & 0x3f) | 0x80);
	snprintf(out, TH_UUID_LEN + 1,
	         "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0], b[1],
	         b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14],
	         b[15]);
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

void th_ts_format(int64_t ms, char out[TH_TS_LEN + 1])
{
	time_t secs = (time_t)(ms / 1000);
	struct tm tm;
	gmtime_r(&secs, &tm);
	/* Years past 9999 cannot be written in A2A's format; clamp rather than truncate. */
	unsigned year = (unsigned)(tm.tm_year + 1900) % 10000u;
	snprintf(out, TH_TS_LEN + 1, "%04u-%02u-%02uT%02u:%02u:%02u.%03uZ", year,
	         (unsigned)(tm.tm_mon + 1) % 100u, (unsigned)tm.tm_mday % 100u,
	         (unsigned)tm.tm_hour % 100u, (unsigned)tm.tm_min % 100u,
	         (unsigned)tm.tm_sec % 100u, (unsigned)(ms % 1000));
}

int th_ts_parse(const char *s, int64_t *ms)
{
	int y, mo, d, h, mi, sec, n = 0;
	if (s == NULL ||
	    sscanf(s, "%4d-%2d-%2dT%2d:%2d:%2d%n", &y, &mo, &d, &h, &mi, &sec, &n) != 6 || n != 19)
		return -1;
	if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || sec > 60)
		return -1;
	const char *p = s + 19;
	int frac_ms = 0, digits = 0;
	if (*p == '.') {
		p++;
		while (*p >= '0' && *p <= '9') {
			if (digits < 3)
				frac_ms = frac_ms * 10 + (*p - '0');
			digits++;
			p++;
		}
		if (digits == 0 || digits > 9)
			return -1;
		for (int i = digits; i < 3; i++)
			frac_ms *= 10;
	}
	if (strcmp(p, "Z") != 0)
		return -1;
	struct tm tm = {0};
	tm.tm_year = y - 1900;
	tm.tm_mon = mo - 1;
	tm.tm_mday = d;
	tm.tm_hour = h;
	tm.tm_min = mi;
	tm.tm_sec = sec;
	time_t t = timegm(&tm);
	*ms = (int64_t)t * 1000 + frac_ms;
	return 0;
}
