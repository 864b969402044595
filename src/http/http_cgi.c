/* SPDX-License-Identifier: Apache-2.0 */
/* http_cgi.c — the plain CGI carrier: one request from the environment and stdin,
 * the response to stdout. */
#include "http/http.h"

#include <stdio.h>
#include <stdlib.h>

extern char **environ;

static char *const *cgi_params(void *impl)
{
	(void)impl;
	return environ;
}

static long cgi_read(void *impl, char *buf, size_t n)
{
	(void)impl;
	size_t k = fread(buf, 1, n, stdin);
	if (k == 0 && ferror(stdin))
		return -1;
	return (long)k;
}

static int cgi_write(void *impl, const char *buf, size_t n)
{
	(void)impl;
	return fwrite(buf, 1, n, stdout) == n ? 0 : -1;
}

static int cgi_flush(void *impl)
{
	(void)impl;
	return fflush(stdout) == 0 ? 0 : -1;
}

void th_http_cgi_io(struct th_http_io *io)
{
	io->input_done = 0;
	io->impl = NULL;
	io->params = cgi_params;
	io->read = cgi_read;
	io->write = cgi_write;
	io->flush = cgi_flush;
	io->detach = NULL; /* one process per request: it follows its own stream */
	io->hand_over = NULL;
}
