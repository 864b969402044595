/* SPDX-License-Identifier: Apache-2.0 */
#include "util/log.h"

#include <stdarg.h>
#include <stdio.h>
#include <unistd.h>

/* Per thread: the stream thread logs apart from the request the worker is serving. */
static __thread char cur_op[64];
static __thread char cur_task[160];

void th_log_request(const char *op, const char *task_id)
{
	snprintf(cur_op, sizeof cur_op, "%s", op != NULL ? op : "");
	snprintf(cur_task, sizeof cur_task, "%s", task_id != NULL ? task_id : "");
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
	if (cur_op[0] != '\0' || cur_task[0] != '\0')
		fprintf(stderr, "tiny-harness[%ld]: %s: %s%s%s: %s\n", (long)getpid(), lv, cur_op,
		        cur_op[0] != '\0' && cur_task[0] != '\0' ? " " : "", cur_task, msg);
	else
		fprintf(stderr, "tiny-harness[%ld]: %s: %s\n", (long)getpid(), lv, msg);
}
