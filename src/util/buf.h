/* SPDX-License-Identifier: Apache-2.0 */
/* buf.h — a growable byte buffer for building responses and SQL text.
 * The buffer owns data; th_buf_free releases it. */
#ifndef TH_UTIL_BUF_H
#define TH_UTIL_BUF_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

struct th_buf {
	char *data; /* NUL-terminated when len > 0; owned, freed by th_buf_free */
	size_t len;
	size_t cap;
	int oom; /* set once an append failed; later appends are ignored */
};

void th_buf_init(struct th_buf *b);
void th_buf_free(struct th_buf *b);
int th_buf_append(struct th_buf *b, const char *s, size_t n);
int th_buf_puts(struct th_buf *b, const char *s);
/* v in decimal ("-" and digits), as "%" PRId64 writes it, without printf, NUL-terminated
 * in out; returns its length. */
#define TH_I64_TEXT 21 /* INT64_MIN: a sign, 19 digits and the NUL */
size_t th_i64_text(char out[TH_I64_TEXT], int64_t v);
/* Appends v as th_i64_text writes it. */
int th_buf_put_i64(struct th_buf *b, int64_t v);
int th_buf_printf(struct th_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int th_buf_vprintf(struct th_buf *b, const char *fmt, va_list ap)
    __attribute__((format(printf, 2, 0)));
/* Hands data to the caller (who frees it with free) and resets b. */
char *th_buf_take(struct th_buf *b);

#endif
