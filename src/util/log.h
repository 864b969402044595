/* SPDX-License-Identifier: Apache-2.0 */
/* log.h — the one logger (slowcgi's rule): every line a worker writes goes through
 * th_log to stderr, which the web server files in its error log. While a request is
 * served, each line names its operation and task (th_log_request), so a database or
 * model failure the client only hears about in general terms can be found here. */
#ifndef TH_UTIL_LOG_H
#define TH_UTIL_LOG_H

#include <stddef.h>

enum th_log_level { TH_LOG_ERROR, TH_LOG_WARN, TH_LOG_INFO };

/* One line: "tiny-harness[pid]: <level>: [<op> <task>: ]<message>". */
void th_log(enum th_log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* One line as it is, with th_log's "tiny-harness[pid]: <level>: " prefix but without the
 * request's op and task, in one write(2) to stderr: for a line the caller built and
 * escaped itself (the request line, OBS-1), without th_log's formatting passes. A line
 * longer than 1,000 bytes is cut. */
void th_log_write(enum th_log_level level, const char *line, size_t len);

/* The bytes of the control character p starts with, which a log line never carries raw
 * (a terminal or log viewer would act on it): 1 for a C0 control or DEL, 2 for a C1
 * control written in UTF-8 (U+0080..U+009F, CSI among them), 0 for anything else. Its
 * code (the byte after \x) is p[k - 1]. */
size_t th_log_control_len(const char *p);

/* Copies src into dst (n bytes, NUL included) with control characters written as
 * \xHH: C0 controls, DEL, and the UTF-8 C1 controls U+0080..U+009F. Cut at a whole
 * character when dst is full. Returns the length written. */
size_t th_log_escape(char *dst, size_t n, const char *src);

/* The request this thread is serving, named in its lines until the next call; NULL
 * (or "") clears either part. The strings are copied (cut to fit). */
void th_log_request(const char *op, const char *task_id);

/* A thread's request context, lent to a thread that runs work on its behalf
 * (th_store_write's combining): th_log_ctx_set copies c into the calling thread's. */
struct th_log_ctx {
	char op[64];
	char task[160];
};
const struct th_log_ctx *th_log_ctx_self(void); /* the calling thread's; borrowed */
void th_log_ctx_set(const struct th_log_ctx *c);

/* A spell of failures of work that is tried again and again (a stream's read of the
 * event log at every poll): its first failure, and each change of cause, is logged; the
 * rest are only counted, and th_log_spell_over says how many once the work succeeds
 * again. Zeroed: no spell. One thread uses one. */
struct th_log_spell {
	long failures;   /* since the last success */
	char cause[256]; /* the cause last logged (cut), "" none */
};
/* Counts a failure of who's work; logs "<who>: <cause> (tried again at every poll)" as
 * an error when the spell begins or its cause changed. */
void th_log_spell_failed(struct th_log_spell *sp, const char *who, const char *cause);
/* The work succeeded: ends a spell, logging "<who>: <what> again after <n> failed tries"
 * (a warning); nothing when there was none. */
void th_log_spell_over(struct th_log_spell *sp, const char *who, const char *what);

#endif
