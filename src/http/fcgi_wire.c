/* SPDX-License-Identifier: Apache-2.0 */
/* fcgi_wire.c — FastCGI records written and read by hand on a connection that
 * libfcgi handed over (th_http_io.detach, STREAM-6). Only the record layout of the
 * FastCGI 1.0 specification is needed: an 8-byte header (version, type, request id,
 * content length, padding length, reserved) before each record's content. */
#include <string.h>

#include "http/http.h"
#include "util/buf.h"

enum {
	FCGI_VERSION_1 = 1,
	FCGI_END_REQUEST = 3,
	FCGI_ABORT_REQUEST = 2,
	FCGI_STDOUT = 6,
	FCGI_REQUEST_COMPLETE = 0,
	FCGI_MAX_CONTENT = 65535,
};

static void header(struct th_buf *b, int type, int request_id, size_t len)
{
	unsigned char h[8] = {FCGI_VERSION_1,
	                      (unsigned char)type,
	                      (unsigned char)((request_id >> 8) & 0xff),
	                      (unsigned char)(request_id & 0xff),
	                      (unsigned char)((len >> 8) & 0xff),
	                      (unsigned char)(len & 0xff),
	                      0,
	                      0};
	th_buf_append(b, (const char *)h, sizeof h);
}

void th_fcgi_stdout(struct th_buf *b, int request_id, const char *data, size_t n)
{
	while (n > 0) {
		size_t k = n > FCGI_MAX_CONTENT ? FCGI_MAX_CONTENT : n;
		header(b, FCGI_STDOUT, request_id, k);
		th_buf_append(b, data, k);
		data += k;
		n -= k;
	}
}

void th_fcgi_end(struct th_buf *b, int request_id)
{
	header(b, FCGI_STDOUT, request_id, 0);
	header(b, FCGI_END_REQUEST, request_id, 8);
	/* appStatus (4 bytes, 0), protocolStatus, 3 reserved bytes */
	static const char body[8] = {0, 0, 0, 0, FCGI_REQUEST_COMPLETE, 0, 0, 0};
	th_buf_append(b, body, sizeof body);
}

int th_fcgi_input_feed(struct th_fcgi_input *in, const unsigned char *p, size_t n)
{
	int aborted = 0;
	while (n > 0) {
		if (in->skip > 0) {
			size_t k = n < in->skip ? n : in->skip;
			in->skip -= k;
			p += k;
			n -= k;
			continue;
		}
		size_t k = sizeof in->head - in->have;
		if (k > n)
			k = n;
		memcpy(in->head + in->have, p, k);
		in->have += k;
		p += k;
		n -= k;
		if (in->have < sizeof in->head)
			break;
		if (in->head[1] == FCGI_ABORT_REQUEST)
			aborted = 1;
		in->skip = ((size_t)in->head[4] << 8 | in->head[5]) + in->head[6];
		in->have = 0;
	}
	return aborted;
}
