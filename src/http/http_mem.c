/* SPDX-License-Identifier: Apache-2.0 */
/* http_mem.c — the in-memory carrier that unit tests drive th_bind_serve with. */
#include "http/http.h"

#include <stdlib.h>
#include <string.h>

#include "util/buf.h"

struct th_http_mem {
	char **params; /* "NAME=value" copies, NULL-terminated; free (th_http_mem_free) */
	char *body;    /* copy of the body; free (th_http_mem_free) */
	size_t body_len;
	size_t pos;        /* next body byte to read */
	struct th_buf out; /* everything written; th_buf_free (th_http_mem_free) */
	int gone;          /* writes fail after th_http_mem_disconnect */
	int fail_reads;
	size_t reads;
	size_t flushes;
};

struct th_http_mem *th_http_mem_new(const char *const *params, const char *body, size_t body_len)
{
	struct th_http_mem *m = calloc(1, sizeof *m);
	if (m == NULL)
		return NULL;
	th_buf_init(&m->out);
	size_t n = 0;
	while (params != NULL && params[n] != NULL)
		n++;
	m->params = calloc(n + 1, sizeof *m->params);
	m->body = malloc(body_len + 1);
	if (m->params == NULL || m->body == NULL) {
		th_http_mem_free(m);
		return NULL;
	}
	for (size_t i = 0; i < n; i++) {
		m->params[i] = strdup(params[i]);
		if (m->params[i] == NULL) {
			th_http_mem_free(m);
			return NULL;
		}
	}
	if (body_len > 0)
		memcpy(m->body, body, body_len);
	m->body[body_len] = '\0';
	m->body_len = body_len;
	return m;
}

static char *const *mem_params(void *impl)
{
	struct th_http_mem *m = impl;
	return m->params;
}

static long mem_read(void *impl, char *buf, size_t n)
{
	struct th_http_mem *m = impl;
	m->reads++;
	if (m->fail_reads)
		return -1;
	size_t left = m->body_len - m->pos;
	if (n > left)
		n = left;
	memcpy(buf, m->body + m->pos, n);
	m->pos += n;
	return (long)n;
}

static int mem_write(void *impl, const char *buf, size_t n)
{
	struct th_http_mem *m = impl;
	if (m->gone)
		return -1;
	return th_buf_append(&m->out, buf, n);
}

static int mem_flush(void *impl)
{
	struct th_http_mem *m = impl;
	m->flushes++;
	return m->gone ? -1 : 0;
}

void th_http_mem_io(struct th_http_mem *m, struct th_http_io *io)
{
	io->input_done = 0;
	io->impl = m;
	io->params = mem_params;
	io->read = mem_read;
	io->write = mem_write;
	io->flush = mem_flush;
	io->detach = NULL;
	io->hand_over = NULL;
}

const char *th_http_mem_output(struct th_http_mem *m, size_t *len)
{
	if (len != NULL)
		*len = m->out.len;
	return m->out.data != NULL ? m->out.data : "";
}

void th_http_mem_disconnect(struct th_http_mem *m)
{
	m->gone = 1;
}

void th_http_mem_fail_reads(struct th_http_mem *m)
{
	m->fail_reads = 1;
}

size_t th_http_mem_reads(const struct th_http_mem *m)
{
	return m->reads;
}

size_t th_http_mem_flushes(const struct th_http_mem *m)
{
	return m->flushes;
}

void th_http_mem_free(struct th_http_mem *m)
{
	if (m == NULL)
		return;
	if (m->params != NULL)
		for (char **p = m->params; *p != NULL; p++)
			free(*p);
	free(m->params);
	free(m->body);
	th_buf_free(&m->out);
	free(m);
}
