/* SPDX-License-Identifier: Apache-2.0 */
#include "util/log.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "util/buf.h"

/* Per thread: the stream thread logs apart from the request the worker is serving. */
static __thread struct th_log_ctx cur;

/* src (NULL: "") into dst of n bytes, cut to fit with its NUL, as snprintf's "%s" would. */
static void copy_cut(char *dst, size_t n, const char *src)
{
	size_t k = src != NULL ? strnlen(src, n - 1) : 0;
	if (k > 0)
		memcpy(dst, src, k);
	dst[k] = '\0';
}

void th_log_request(const char *op, const char *task_id)
{
	copy_cut(cur.op, sizeof cur.op, op);
	copy_cut(cur.task, sizeof cur.task, task_id);
}

const struct th_log_ctx *th_log_ctx_self(void)
{
	return &cur;
}

void th_log_ctx_set(const struct th_log_ctx *c)
{
	cur = *c;
}

size_t th_log_control_len(const char *p)
{
	const unsigned char *u = (const unsigned char *)p;
	if (u[0] == 0xc2 && u[1] >= 0x80 && u[1] <= 0x9f)
		return 2;
	return u[0] < 0x20 || u[0] == 0x7f ? 1 : 0;
}

size_t th_log_escape(char *dst, size_t n, const char *src)
{
	static const char hex[] = "0123456789abcdef";
	size_t j = 0;
	if (n == 0)
		return 0;
	for (const unsigned char *p = (const unsigned char *)src; *p != '\0'; p++) {
		size_t k = th_log_control_len((const char *)p); /* other UTF-8 passes */
		if (k == 0) {
			if (j + 1 >= n)
				break;
			dst[j++] = (char)p[0];
			continue;
		}
		unsigned c = p[k - 1];
		if (j + 4 >= n)
			break;
		dst[j++] = '\\';
		dst[j++] = 'x';
		dst[j++] = hex[c >> 4];
		dst[j++] = hex[c & 15];
		p += k - 1;
	}
	dst[j] = '\0';
	return j;
}

/* The word a line names its level with. */
static const char *level_name(enum th_log_level level)
{
	static const char *const names[] = {"error", "warning", "info"};
	return (unsigned)level < sizeof names / sizeof names[0] ? names[level] : "?";
}

void th_log(enum th_log_level level, const char *fmt, ...)
{
	char msg[1024], safe[1024], task[sizeof cur.task * 4];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	/* SEC-6: messages quote client input (ids, model output); raw escape codes would
	 * forge lines or drive the terminal of whoever reads the log. */
	th_log_escape(safe, sizeof safe, msg);
	th_log_escape(task, sizeof task, cur.task);
	const char *lv = level_name(level);
	/* One fprintf per line, so lines from two threads never interleave mid-line. */
	if (cur.op[0] != '\0' || task[0] != '\0')
		fprintf(stderr, "tiny-harness[%ld]: %s: %s%s%s: %s\n", (long)getpid(), lv, cur.op,
		        cur.op[0] != '\0' && task[0] != '\0' ? " " : "", task, safe);
	else
		fprintf(stderr, "tiny-harness[%ld]: %s: %s\n", (long)getpid(), lv, safe);
}

void th_log_write(enum th_log_level level, const char *line, size_t len)
{
	const char *lv = level_name(level);
	char buf[1100];
	char pid[TH_I64_TEXT];
	size_t np = th_i64_text(pid, (int64_t)getpid());
	size_t n = 0;
	memcpy(buf, "tiny-harness[", 13);
	n = 13;
	memcpy(buf + n, pid, np);
	n += np;
	memcpy(buf + n, "]: ", 3);
	n += 3;
	size_t k = strlen(lv);
	memcpy(buf + n, lv, k);
	n += k;
	buf[n++] = ':';
	buf[n++] = ' ';
	if (len > sizeof buf - n - 1)
		len = sizeof buf - n - 1;
	memcpy(buf + n, line, len);
	n += len;
	buf[n++] = '\n';
	/* One write, so that lines of two threads or processes never interleave. */
	ssize_t w = write(2, buf, n);
	(void)w;
}

void th_log_spell_failed(struct th_log_spell *sp, const char *who, const char *cause)
{
	sp->failures++;
	if (strncmp(sp->cause, cause, sizeof sp->cause - 1) == 0)
		return;
	snprintf(sp->cause, sizeof sp->cause, "%s", cause);
	th_log(TH_LOG_ERROR, "%s: %s (tried again at every poll)", who, cause);
}

void th_log_spell_over(struct th_log_spell *sp, const char *who, const char *what)
{
	if (sp->failures == 0)
		return;
	th_log(TH_LOG_WARN, "%s: %s again after %ld failed tries", who, what, sp->failures);
	sp->failures = 0;
	sp->cause[0] = '\0';
}
