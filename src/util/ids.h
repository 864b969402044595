/* SPDX-License-Identifier: Apache-2.0 */
/* ids.h — identifiers and clocks: UUIDs for tasks and messages, wall-clock times
 * as A2A timestamps (YYYY-MM-DDTHH:MM:SS.sssZ) and milliseconds. */
#ifndef TH_UTIL_IDS_H
#define TH_UTIL_IDS_H

#include <stdint.h>

#define TH_UUID_LEN 36

/* LIM-4: the longest id, in bytes, that anything here accepts or makes (task, context,
 * message, participant, sub-task ids). max_id is configured up to it; every buffer that
 * holds an id is TH_ID_BUF bytes, so an id is never cut short. */
#define TH_ID_MAX 1024
#define TH_ID_BUF (TH_ID_MAX + 1)
/* The longest ListTasks pageToken: lowercase hex of "<status ms>.<task id>". */
#define TH_PAGE_TOKEN_MAX (2 * (18 + 1 + TH_ID_MAX))
#define TH_TS_LEN 24

/* Writes a time-ordered (version 7) UUID and its NUL into out[37]: 62 random bits after
 * the time, so ids made later sort later (decision-028). */
void th_uuid(char out[TH_UUID_LEN + 1]);

/* Milliseconds since the Unix epoch, wall clock. */
int64_t th_now_ms(void);

/* Milliseconds on a monotonic clock, for timeouts. */
int64_t th_mono_ms(void);

/* A moment in UTC, split: year (proleptic Gregorian), month 1-12, day 1-31, hour, minute,
 * second, weekday 0-6 from Sunday. */
struct th_utc {
	int64_t year;
	int mon, mday, hour, min, sec, wday;
};

/* Splits secs (Unix epoch, any sign) into *out, by arithmetic alone: no lock, no time
 * zone file (gmtime_r takes both). */
void th_utc_split(int64_t secs, struct th_utc *out);

/* Formats ms (Unix epoch) as an A2A timestamp into out[25]. */
void th_ts_format(int64_t ms, char out[TH_TS_LEN + 1]);

/* Parses an RFC 3339 date-time ("…Z" or a numeric offset "+HH:MM", 0–9 fractional
 * digits, the date checked against the calendar) into ms since the epoch, UTC.
 * Returns 0 on success, -1 if s is not such a timestamp. */
int th_ts_parse(const char *s, int64_t *ms);

#endif
