/* SPDX-License-Identifier: Apache-2.0 */
/* rate.h — a token bucket per key (a participant), shared by every thread of one process
 * (SEC-3). Workers are separate processes: with N of them a participant may send up to N
 * times the rate (docs/decisions/decision-039). */
#ifndef TH_UTIL_RATE_H
#define TH_UTIL_RATE_H

#include <stdint.h>

/* Takes one token from key's bucket, which holds at most burst tokens and gains rps per
 * second. 0 when a token was taken; otherwise the milliseconds until one will be there
 * (at least 1). rps <= 0 means no limit (always 0). now_ms is a monotonic clock. */
int64_t th_rate_take(const char *key, int rps, int burst, int64_t now_ms);

/* Forgets every bucket (tests). */
void th_rate_reset(void);

#endif
