/* SPDX-License-Identifier: Apache-2.0 */
/* http.h — one request in, one response out, whatever carries it.
 *
 * Three carriers implement struct th_http_io: a FastCGI request (FCGX_Request from
 * FCGX_Accept_r), plain CGI (environment, stdin, stdout), and an in-memory double for
 * unit tests. Above this header nobody knows which one is in use.
 * Parameter names are CGI meta-variables: REQUEST_METHOD, REQUEST_URI, QUERY_STRING,
 * CONTENT_TYPE, CONTENT_LENGTH, REMOTE_USER, HTTP_A2A_VERSION, HTTP_A2A_EXTENSIONS,
 * HTTP_X_PARTICIPANT_ID, HTTP_LAST_EVENT_ID, HTTP_IF_NONE_MATCH, HTTP_HOST, HTTP_ORIGIN,
 * … */
#ifndef TH_HTTP_HTTP_H
#define TH_HTTP_HTTP_H

#include <stddef.h>

#include "util/buf.h"
#include "util/err.h"

struct th_http_conn;

struct th_http_io {
	void *impl;
	/* The request's parameters as "NAME=value" strings, NULL-terminated (FastCGI's
	 * envp, CGI's environ, the double's copies), or NULL for none. They live until the
	 * request ends. Read them with th_http_param. */
	char *const *(*params)(void *impl);
	/* Reads up to n body bytes; returns the count, 0 at end of input, -1 on error. */
	long (*read)(void *impl, char *buf, size_t n);
	/* Writes n bytes; 0 on success, -1 when the client is gone. */
	int (*write)(void *impl, const char *buf, size_t n);
	/* Pushes buffered output to the web server now; 0 or -1 (client gone). */
	int (*flush)(void *impl);
	/* Hands the connection over after flushing what was written (STREAM-6): the
	 * carrier forgets it and will neither end the response nor close the socket.
	 * 0 and *out filled, or -1 (nothing changed). NULL when the carrier cannot (CGI,
	 * the in-memory double): the request then finishes its stream itself. */
	int (*detach)(void *impl, struct th_http_conn *out);
	/* HOST-2: offers the whole request to another process. Once the body was read to
	 * its end, send() is lent the connection (for the call only: it may pass it on,
	 * never close it); when send() returns 0 the other process answers the request and
	 * the carrier forgets it, as after detach; otherwise nothing changed. Returns send()'s
	 * answer, or -1 when the request cannot be offered (its input not read to the end,
	 * something written already). NULL when the carrier cannot (CGI, the in-memory
	 * double, a request handed over already). */
	int (*hand_over)(void *impl, int (*send)(void *arg, const struct th_http_conn *conn),
	                 void *arg);
	/* 1 once th_http_read_body has read every byte Content-Length announced: what the
	 * web server sends next is the end of the input (th_http_fcgi_finish). */
	int input_done;
};

/* The decoded view of one request. Strings marked borrowed live in the carrier. */
struct th_http_req {
	const char *method;          /* REQUEST_METHOD; borrowed */
	char *path;                  /* request path relative to the base path, starting with '/',
	                                not percent-decoded; free (th_http_req_free) */
	char *query;                 /* raw query string or ""; free */
	const char *content_type;    /* borrowed, may be NULL */
	const char *version;         /* A2A-Version header, else (GET and HEAD only) the
	                                A2A-Version query parameter; NULL when neither; points
	                                into query or carrier */
	int version_in_query;        /* 1 when a request that may change state (not GET or HEAD)
	                                named A2A-Version only in its query, which does not count
	                                there (SEC-4) */
	const char *host;            /* Host (HTTP_HOST); borrowed, may be NULL */
	const char *origin;          /* Origin; borrowed, may be NULL */
	const char *extensions;      /* A2A-Extensions; borrowed, may be NULL */
	const char *participant;     /* X-Participant-Id; borrowed, may be NULL */
	const char *remote_user;     /* REMOTE_USER; borrowed, may be NULL */
	const char *authorization;   /* Authorization (SEC-1); borrowed, may be NULL */
	const char *remote_addr;     /* REMOTE_ADDR, the peer the web server saw; borrowed, may
	                                be NULL */
	const char *last_event_id;   /* Last-Event-ID; borrowed, may be NULL */
	const char *if_none_match;   /* If-None-Match; borrowed, may be NULL */
	const char *idempotency_key; /* Idempotency-Key (A2A-11-IDEM-1); borrowed, may be NULL */
	char *body;                  /* NUL-terminated body, NULL until read; free */
	size_t body_len;
	char *version_buf;      /* owned copy when version came from the query; free */
	int in_base;            /* 1 when the request path lies under the base path */
	const char *raw_length; /* CONTENT_LENGTH as sent; borrowed, may be NULL */
};

/* The value of request parameter name (a CGI meta-variable), or NULL: the first
 * "name=" of io's parameters, as getenv and FCGX_GetParam find it. */
const char *th_http_param(struct th_http_io *io, const char *name);

/* Reads the request line and headers (not the body). base_path is the path part of
 * the configured base URL ("/" or "/a2a/"): a REQUEST_URI under it is made relative
 * ("/a2a/tasks/x" → "/tasks/x"); one outside it is kept whole. */
th_err th_http_req_init(struct th_http_req *r, struct th_http_io *io, const char *base_path,
                        struct th_error *e);

/* Reads the body under a strict CONTENT_LENGTH (digits only; missing means empty):
 * a length above max → TH_ETOOLARGE naming the limit, before anything is read; a short
 * body → TH_EINVALREQ. */
th_err th_http_read_body(struct th_http_req *r, struct th_http_io *io, size_t max,
                         struct th_error *e);

void th_http_req_free(struct th_http_req *r);

/* The value of name in the query string, percent-decoded, into a new string the
 * caller frees; NULL when absent. */
char *th_http_query_get(const char *query, const char *name);

/* Like th_http_query_get but tells the cases apart: 1 found (*value is a new string
 * the caller frees), 0 absent, -1 a bad percent escape or an embedded NUL in the
 * name's value, -2 out of memory. The first occurrence of name wins. */
int th_http_query_lookup(const char *query, const char *name, char **value);

/* Percent-decodes s into a new string (caller frees); NULL on a bad escape. */
char *th_http_pct_decode(const char *s, size_t n);

/* Writes a whole response: "Status: <status> <reason>", Content-Type, Content-Length,
 * the extra header lines (each ending in "\r\n", may be NULL), a blank line and body.
 * It is not flushed: the carrier sends it when the request ends. Returns 0 or -1
 * (client gone). */
int th_http_respond(struct th_http_io *io, int status, const char *content_type,
                    const char *extra_headers, const char *body, size_t len);
/* The same response to a HEAD request: every header, Content-Length included, as GET
 * would send them, and no body (RFC 9110 §9.3.2). */
int th_http_respond_head(struct th_http_io *io, int status, const char *content_type,
                         const char *extra_headers, size_t len);

/* The bytes th_http_respond (head 0) or th_http_respond_head (head 1) writes, appended
 * to b: for a response written later on a detached connection (A2A-11-GEN-4). */
void th_http_format_response(struct th_buf *b, int status, const char *content_type,
                             const char *extra_headers, const char *body, size_t len, int head);

/* Starts a text/event-stream response (Cache-Control: no-store, X-Accel-Buffering: no,
 * plus extra_headers) and flushes it. */
int th_http_sse_start(struct th_http_io *io, const char *extra_headers);
/* One SSE event: optional "id:" and "event:" lines, one "data:" line, blank line;
 * flushed at once. data must not contain newlines (compact JSON never does). */
int th_http_sse_event(struct th_http_io *io, const char *id, const char *event, const char *data);
/* A comment line (": ping") used as a heartbeat; flushed. */
int th_http_sse_comment(struct th_http_io *io, const char *text);
/* The bytes of th_http_sse_event and th_http_sse_comment, appended to b. */
void th_http_sse_format(struct th_buf *b, const char *id, const char *event, const char *data);
void th_http_sse_format_comment(struct th_buf *b, const char *text);

/* ---- a detached FastCGI connection (STREAM-6) ---- */

/* What th_http_io.detach hands over: the socket to the web server and the FastCGI
 * request id the rest of the response carries. Whoever took it writes the response
 * with th_fcgi_stdout, ends it with th_fcgi_end and closes fd. */
struct th_http_conn {
	int fd;
	int request_id;
};

/* Appends n bytes of response as FCGI_STDOUT records (split at the 65535-byte record
 * limit); n == 0 appends nothing. */
void th_fcgi_stdout(struct th_buf *b, int request_id, const char *data, size_t n);
/* Appends the end of the response: the empty FCGI_STDOUT record and FCGI_END_REQUEST
 * (application status 0, FCGI_REQUEST_COMPLETE). */
void th_fcgi_end(struct th_buf *b, int request_id);

/* What the web server sends on a detached connection is read only to notice an
 * FCGI_ABORT_REQUEST (the client went away); the record headers are followed across
 * reads. Zero-initialise. */
struct th_fcgi_input {
	unsigned char head[8];
	size_t have; /* bytes of head filled */
	size_t skip; /* content and padding of the current record still to pass over */
};
/* Feeds n bytes read from the connection; 1 when they complete an FCGI_ABORT_REQUEST
 * record, else 0. */
int th_fcgi_input_feed(struct th_fcgi_input *in, const unsigned char *p, size_t n);

/* ---- carriers ---- */

/* CGI: getenv, stdin, stdout. */
void th_http_cgi_io(struct th_http_io *io);

/* FastCGI: wraps an accepted request. req is an FCGX_Request *, kept opaque here so
 * that only http_fcgi.c includes fcgiapp.h. */
void th_http_fcgi_io(struct th_http_io *io, void *fcgx_request);
/* Ends the request io carries (FCGX_Finish_r): the response is complete and the
 * connection closed. */
void th_http_fcgi_finish(struct th_http_io *io);

/* A request another worker process handed over (HOST-2; worker/handoff.c fills it):
 * its parameters and body, and the web server's connection the answer goes to as
 * FastCGI records. Zero it with conn.fd = -1 before filling; th_http_handed_free. */
struct th_http_handed {
	struct th_http_conn conn; /* owned: closed by th_http_handed_finish, unless detach
	                             handed it on */
	char **params;            /* "NAME=value" pointers into data, NULL-terminated; free */
	char *data;               /* the parameters' text, then the body; free */
	const char *body;         /* points into data */
	size_t body_len;
	size_t body_pos;   /* next body byte to read */
	struct th_buf out; /* response bytes not sent yet; th_buf_free */
	int gone;          /* the web server's connection failed */
};
void th_http_handed_io(struct th_http_io *io, struct th_http_handed *h);
/* Ends the response (FCGI_END_REQUEST) and closes the connection, unless detached. */
void th_http_handed_finish(struct th_http_io *io);
void th_http_handed_free(struct th_http_handed *h);

/* In-memory double for tests: parameters from a NULL-terminated array of "NAME=value"
 * strings, body bytes, captured output. th_http_mem_free releases everything. */
struct th_http_mem;
struct th_http_mem *th_http_mem_new(const char *const *params, const char *body, size_t body_len);
void th_http_mem_io(struct th_http_mem *m, struct th_http_io *io);
/* Everything written so far (headers and body), NUL-terminated; borrowed. */
const char *th_http_mem_output(struct th_http_mem *m, size_t *len);
/* Makes writes fail from now on, as when the client has gone away. */
void th_http_mem_disconnect(struct th_http_mem *m);
/* Makes every read fail, so a test can prove that the body was never read. */
void th_http_mem_fail_reads(struct th_http_mem *m);
/* How many times read and flush were called. */
size_t th_http_mem_reads(const struct th_http_mem *m);
size_t th_http_mem_flushes(const struct th_http_mem *m);
void th_http_mem_free(struct th_http_mem *m);

#endif
