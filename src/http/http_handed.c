/* SPDX-License-Identifier: Apache-2.0 */
/* http_handed.c — the carrier of a request another worker process handed over whole
 * (HOST-2, decision-084): its parameters and body arrived with the web server's
 * connection, and the response goes on that connection as the FastCGI records the other
 * worker would have written. */
#include "http/http.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/buf.h"

static char *const *handed_params(void *impl)
{
	struct th_http_handed *h = impl;
	return h->params;
}

static long handed_read(void *impl, char *buf, size_t n)
{
	struct th_http_handed *h = impl;
	size_t left = h->body_len - h->body_pos;
	if (n > left)
		n = left;
	memcpy(buf, h->body + h->body_pos, n);
	h->body_pos += n;
	return (long)n;
}

/* Writes all of b; 0, or -1 once the web server is gone. */
static int write_all(int fd, const char *p, size_t n)
{
	while (n > 0) {
		ssize_t k = write(fd, p, n);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return -1;
		p += k;
		n -= (size_t)k;
	}
	return 0;
}

/* Sends what was written since the last send as FCGI_STDOUT records, and the end of the
 * response when end is set; 0, or -1 once the web server is gone. */
static int send_out(struct th_http_handed *h, int end)
{
	if (h->out.oom || h->conn.fd < 0)
		return -1;
	struct th_buf rec;
	th_buf_init(&rec);
	th_fcgi_stdout(&rec, h->conn.request_id, h->out.data, h->out.len);
	if (end)
		th_fcgi_end(&rec, h->conn.request_id);
	int rc = rec.oom ? -1 : write_all(h->conn.fd, rec.data, rec.len);
	th_buf_free(&rec);
	h->out.len = 0;
	return rc;
}

/* Output is kept until a flush, the end or this much is waiting, as libfcgi does. */
#define HANDED_OUT_MAX 8192

static int handed_write(void *impl, const char *buf, size_t n)
{
	struct th_http_handed *h = impl;
	if (h->gone)
		return -1;
	th_buf_append(&h->out, buf, n);
	if (h->out.oom || (h->out.len >= HANDED_OUT_MAX && send_out(h, 0) != 0)) {
		h->gone = 1;
		return -1;
	}
	return 0;
}

static int handed_flush(void *impl)
{
	struct th_http_handed *h = impl;
	if (h->gone || send_out(h, 0) != 0) {
		h->gone = 1;
		return -1;
	}
	return 0;
}

static int handed_detach(void *impl, struct th_http_conn *out)
{
	struct th_http_handed *h = impl;
	if (h->gone || h->conn.fd < 0 || send_out(h, 0) != 0)
		return -1;
	*out = h->conn;
	h->conn.fd = -1;
	return 0;
}

void th_http_handed_io(struct th_http_io *io, struct th_http_handed *h)
{
	io->input_done = 0;
	io->impl = h;
	io->params = handed_params;
	io->read = handed_read;
	io->write = handed_write;
	io->flush = handed_flush;
	io->detach = handed_detach;
	io->hand_over = NULL; /* handed once is enough */
}

void th_http_handed_finish(struct th_http_io *io)
{
	struct th_http_handed *h = io->impl;
	if (h->conn.fd < 0)
		return; /* detached: its new owner ends it */
	if (!h->gone)
		(void)send_out(h, 1);
	close(h->conn.fd);
	h->conn.fd = -1;
}

void th_http_handed_free(struct th_http_handed *h)
{
	if (h->conn.fd >= 0)
		close(h->conn.fd);
	free(h->params);
	free(h->data);
	th_buf_free(&h->out);
	memset(h, 0, sizeof *h);
	h->conn.fd = -1;
}
