/* SPDX-License-Identifier: Apache-2.0 */
#include "util/log.h"

#include <stdarg.h>
#include <stdio.h>
#include <unistd.h>

/* Per thread: the stream thread logs apart from the request the worker is serving. */
static __thread struct th_log_ctx cur;

void th_log_request(const char *op, const char *task_id)
{
	snprintf(cur.op, sizeof cur.op, "%s", op != NULL ? op : "");
	snprintf(cur.task, sizeof cur.task, "%s", task_id != NULL ? task_id : "");
}

const struct th_log_ctx *th_log_ctx_self(void)
{
	return &cur;
}

void th_log_ctx_set(const struct th_log_ctx *c)
{
	cur = *c;
}

void th_log(enum th_log_level level, const char *fmt, ...)
{
	static const char *const names[] = {"error", "warning", "info"};
	char msg[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	const char *lv = (unsigned)level < sizeof names / sizeof names[0] ? names[level] : "?";
	/* One fprintf per line, so lines from two threads never interleave mid-line. */
	if (cur.op[0] != '\0' || cur.task[0] != '\0')
		fprintf(stderr, "tiny-harness[%ld]: %s: %s%s%s: %s\n", (long)getpid(), lv, cur.op,
		        cur.op[0] != '\0' && cur.task[0] != '\0' ? " " : "", cur.task, msg);
	else
		fprintf(stderr, "tiny-harness[%ld]: %s: %s\n", (long)getpid(), lv, msg);
}
