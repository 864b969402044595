/* SPDX-License-Identifier: Apache-2.0 */
/* http_fcgi.c — the FastCGI carrier over an accepted FCGX_Request. The only file
 * that includes fcgiapp.h. */
#include "http/http.h"

#include <fcgiapp.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static char *const *fcgi_params(void *impl)
{
	FCGX_Request *r = impl;
	return r->envp;
}

static long fcgi_read(void *impl, char *buf, size_t n)
{
	FCGX_Request *r = impl;
	int want = n > INT_MAX ? INT_MAX : (int)n;
	int k = FCGX_GetStr(buf, want, r->in);
	if (k < 0 || (k == 0 && FCGX_GetError(r->in) != 0))
		return -1;
	return k;
}

static int fcgi_write(void *impl, const char *buf, size_t n)
{
	FCGX_Request *r = impl;
	while (n > 0) {
		int chunk = n > INT_MAX ? INT_MAX : (int)n;
		/* A short or failed write means the web server dropped the connection. */
		if (FCGX_PutStr(buf, chunk, r->out) != chunk)
			return -1;
		buf += chunk;
		n -= (size_t)chunk;
	}
	return 0;
}

static int fcgi_flush(void *impl)
{
	FCGX_Request *r = impl;
	return FCGX_FFlush(r->out) == 0 && FCGX_GetError(r->out) == 0 ? 0 : -1;
}

/* libfcgi has no hand-over of its own: the socket is duplicated, then the request is
 * marked detached (so closing it is a plain close(), no shutdown() that would end the
 * shared connection) and freed without FCGX_Finish_r (which would write
 * FCGI_END_REQUEST). The duplicate keeps the connection open for its new owner. */
static int fcgi_detach(void *impl, struct th_http_conn *out)
{
	FCGX_Request *r = impl;
	if (r->ipcFd < 0 || FCGX_FFlush(r->out) != 0 || FCGX_GetError(r->out) != 0)
		return -1;
	int fd = dup(r->ipcFd);
	if (fd < 0)
		return -1;
	out->fd = fd;
	out->request_id = r->requestId;
	FCGX_Detach(r);
	FCGX_Free(r, 1);
	return 0;
}

/* libfcgi closes a connection with a lingering close: shutdown(), then poll() and read()
 * until the web server hangs up, so that input left unread cannot turn the close into a
 * reset that loses the answer. A request whose input was read up to its end record has
 * nothing left to read, and marking it detached makes the close a plain close(): two
 * system calls and a wait on the web server fewer per request (issue 26). The end record
 * follows the body at once (the web server always sends it), so reading it never waits
 * on a client; input not read whole (a refused body, say) keeps the lingering close. */
/* 1 when the request announced no body: its input is the end record alone. */
static int no_body(FCGX_Request *r)
{
	const char *cl = FCGX_GetParam("CONTENT_LENGTH", r->envp);
	return (cl == NULL || cl[0] == '\0' || strcmp(cl, "0") == 0) &&
	       FCGX_GetParam("HTTP_TRANSFER_ENCODING", r->envp) == NULL;
}

/* HOST-2: the whole request goes to another process with the connection.
 * Its input is read to the end first (the web server's end record follows the body at
 * once), so that the other process's close finds nothing unread; the caller has written
 * nothing. Once taken, the request is forgotten as after detach: the copy the other
 * process received keeps the connection open. */
static int fcgi_hand_over(void *impl, int (*send)(void *arg, const struct th_http_conn *conn),
                          void *arg)
{
	FCGX_Request *r = impl;
	if (r->ipcFd < 0 || r->keepConnection || FCGX_GetChar(r->in) != EOF ||
	    FCGX_HasSeenEOF(r->in) != EOF || FCGX_GetError(r->in) != 0)
		return -1;
	/* Lent, not duplicated: what send() passes on is the kernel's own copy. */
	struct th_http_conn c = {.fd = r->ipcFd, .request_id = r->requestId};
	int rc = send(arg, &c);
	if (rc == 0) {
		FCGX_Detach(r);
		FCGX_Free(r, 1);
	}
	return rc;
}

void th_http_fcgi_finish(struct th_http_io *io)
{
	FCGX_Request *r = io->impl;
	/* in is NULL once the connection was handed over (fcgi_detach freed the request,
	 * its parameters with it). */
	if (r->in != NULL && !r->keepConnection && (io->input_done || no_body(r)) &&
	    FCGX_GetChar(r->in) == EOF && FCGX_HasSeenEOF(r->in) == EOF &&
	    FCGX_GetError(r->in) == 0)
		r->detached = 1;
	FCGX_Finish_r(r);
}

void th_http_fcgi_io(struct th_http_io *io, void *fcgx_request)
{
	io->input_done = 0;
	io->impl = fcgx_request;
	io->params = fcgi_params;
	io->read = fcgi_read;
	io->write = fcgi_write;
	io->flush = fcgi_flush;
	io->detach = fcgi_detach;
	io->hand_over = fcgi_hand_over;
}
