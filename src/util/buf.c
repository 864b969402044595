/* SPDX-License-Identifier: Apache-2.0 */
#include "util/buf.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void th_buf_init(struct th_buf *b)
{
	memset(b, 0, sizeof *b);
}

void th_buf_free(struct th_buf *b)
{
	free(b->data);
	th_buf_init(b);
}

static int reserve(struct th_buf *b, size_t extra)
{
	if (b->oom)
		return -1;
	if (b->len + extra + 1 <= b->cap)
		return 0;
	size_t cap = b->cap ? b->cap : 256;
	while (cap < b->len + extra + 1)
		cap *= 2;
	char *p = realloc(b->data, cap);
	if (p == NULL) {
		b->oom = 1;
		return -1;
	}
	b->data = p;
	b->cap = cap;
	return 0;
}

int th_buf_append(struct th_buf *b, const char *s, size_t n)
{
	if (reserve(b, n) != 0)
		return -1;
	memcpy(b->data + b->len, s, n);
	b->len += n;
	b->data[b->len] = '\0';
	return 0;
}

int th_buf_puts(struct th_buf *b, const char *s)
{
	return th_buf_append(b, s, strlen(s));
}

size_t th_i64_text(char out[TH_I64_TEXT], int64_t v)
{
	char d[TH_I64_TEXT - 1];
	size_t n = sizeof d;
	uint64_t u = v < 0 ? 0u - (uint64_t)v : (uint64_t)v;
	do {
		d[--n] = (char)('0' + u % 10);
		u /= 10;
	} while (u > 0);
	if (v < 0)
		d[--n] = '-';
	size_t len = sizeof d - n;
	memcpy(out, d + n, len);
	out[len] = '\0';
	return len;
}

int th_buf_put_i64(struct th_buf *b, int64_t v)
{
	char d[TH_I64_TEXT];
	return th_buf_append(b, d, th_i64_text(d, v));
}

int th_buf_vprintf(struct th_buf *b, const char *fmt, va_list ap)
{
	va_list again;
	va_copy(again, ap);
	int n = vsnprintf(NULL, 0, fmt, ap);
	if (n < 0 || reserve(b, (size_t)n) != 0) {
		va_end(again);
		return -1;
	}
	vsnprintf(b->data + b->len, (size_t)n + 1, fmt, again);
	va_end(again);
	b->len += (size_t)n;
	return 0;
}

int th_buf_printf(struct th_buf *b, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int rc = th_buf_vprintf(b, fmt, ap);
	va_end(ap);
	return rc;
}

char *th_buf_take(struct th_buf *b)
{
	char *p = b->data;
	th_buf_init(b);
	return p;
}
