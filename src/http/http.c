/* SPDX-License-Identifier: Apache-2.0 */
/* http.c — the carrier-independent half of src/http: request line, body, query,
 * response framing and SSE framing over any struct th_http_io. */
#include "http/http.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "util/buf.h"
#include "util/text.h"

/* One parameter the request reader wants, and where its value goes. */
struct wanted {
	const char *name;
	const char **value;
};

/* The most names one read_params call takes (th_http_req_init's list is checked against
 * it at compile time). */
#define WANTED_MAX 32

/* Fills every want[i].value in one pass over io's parameters: the first "NAME=" of each
 * name (a longer name with the same prefix is another name, an empty value is a value),
 * NULL when absent, as getenv and FCGX_GetParam find them. A FastCGI request carries ~35
 * parameters; a look-up for each of ~20 names walked them all every time (12% of a
 * GetTask's instructions in callgrind). A name is compared only with parameters of its
 * length. */
static void read_params(struct th_http_io *io, const struct wanted *want, size_t n)
{
	size_t len[WANTED_MAX];
	if (n > WANTED_MAX)
		n = WANTED_MAX;
	for (size_t i = 0; i < n; i++) {
		len[i] = strlen(want[i].name);
		*want[i].value = NULL;
	}
	char *const *p = io->params != NULL ? io->params(io->impl) : NULL;
	for (; p != NULL && *p != NULL; p++) {
		const char *eq = strchr(*p, '=');
		if (eq == NULL)
			continue;
		size_t k = (size_t)(eq - *p);
		for (size_t i = 0; i < n; i++)
			if (len[i] == k && *want[i].value == NULL &&
			    memcmp(*p, want[i].name, k) == 0)
				*want[i].value = eq + 1;
	}
}

const char *th_http_param(struct th_http_io *io, const char *name)
{
	const char *value;
	const struct wanted one = {name, &value};
	read_params(io, &one, 1);
	return value;
}

static char *dup_n(const char *s, size_t n)
{
	char *p = malloc(n + 1);
	if (p == NULL)
		return NULL;
	memcpy(p, s, n);
	p[n] = '\0';
	return p;
}

/* Splits the full request path into the part after base_path. The base path is
 * given with its trailing '/', but a request for the base without it ("/a2a") still
 * means the base itself, because clients often strip the slash. */
static char *relative_path(const char *full, size_t n, const char *base, int *in_base)
{
	size_t bn = base != NULL ? strlen(base) : 0;
	while (bn > 0 && base[bn - 1] == '/')
		bn--;
	*in_base = 0;
	if (n == 0)
		return dup_n("/", 1);
	if (bn == 0) {
		*in_base = full[0] == '/';
		return full[0] == '/' ? dup_n(full, n) : NULL;
	}
	if (n >= bn && memcmp(full, base, bn) == 0) {
		if (n == bn) {
			*in_base = 1;
			return dup_n("/", 1);
		}
		if (full[bn] == '/') {
			*in_base = 1;
			return dup_n(full + bn, n - bn);
		}
	}
	return dup_n(full, n);
}

/* An absolute-form URI ("http://host/path") as some proxies pass it: moves *full and
 * *plen past the scheme and host to the path. */
static void skip_scheme_and_host(const char **full, size_t *plen)
{
	if (*plen == 0 || (*full)[0] == '/')
		return;
	const char *p = strstr(*full, "://");
	if (p != NULL && (size_t)(p - *full) < *plen) {
		const char *slash = memchr(p + 3, '/', *plen - (size_t)(p + 3 - *full));
		size_t skip = slash != NULL ? (size_t)(slash - *full) : *plen;
		*full += skip;
		*plen -= skip;
	}
}

/* r->path and r->query from the request line's variables: REQUEST_URI, else SCRIPT_NAME
 * and PATH_INFO joined, with QUERY_STRING; -1 when out of memory. */
static int path_and_query(struct th_http_req *r, const char *uri, const char *sn, const char *pi,
                          const char *query_string, const char *base_path)
{
	const char *qs = NULL;
	size_t plen;
	struct th_buf joined;
	th_buf_init(&joined);
	const char *full;
	if (uri != NULL && uri[0] != '\0') {
		const char *q = strchr(uri, '?');
		plen = q != NULL ? (size_t)(q - uri) : strlen(uri);
		/* A fragment never reaches a server, but a broken client could send one. */
		const char *h = memchr(uri, '#', plen);
		if (h != NULL)
			plen = (size_t)(h - uri);
		full = uri;
		if (q != NULL)
			qs = q + 1;
	} else {
		th_buf_puts(&joined, sn != NULL ? sn : "");
		th_buf_puts(&joined, pi != NULL ? pi : "");
		if (joined.oom) {
			th_buf_free(&joined);
			return -1;
		}
		full = joined.data != NULL ? joined.data : "";
		plen = joined.len;
	}
	if (qs == NULL)
		qs = query_string != NULL ? query_string : "";
	skip_scheme_and_host(&full, &plen);
	r->path = relative_path(full, plen, base_path, &r->in_base);
	th_buf_free(&joined);
	r->query = strdup(qs);
	return r->path != NULL && r->query != NULL ? 0 : -1;
}

/* SEC-4: a page on another site can put anything in a URL but cannot set this header
 * without a CORS preflight, so a request that may change state names the version in the
 * header. A GET may use the query (an EventSource cannot set headers). -1 when out of
 * memory. */
static int version_from_query(struct th_http_req *r)
{
	if (r->version != NULL && r->version[0] != '\0')
		return 0;
	int reads = strcmp(r->method, "GET") == 0 || strcmp(r->method, "HEAD") == 0;
	char *v = NULL;
	int found = th_http_query_lookup(r->query, "A2A-Version", &v);
	if (found == -2)
		return -1;
	if (found == 1 && reads) {
		r->version_buf = v;
		r->version = v;
	} else if (found == 1) {
		r->version_in_query = 1;
		free(v);
	}
	return 0;
}

th_err th_http_req_init(struct th_http_req *r, struct th_http_io *io, const char *base_path,
                        struct th_error *e)
{
	memset(r, 0, sizeof *r);
	/* The request line's variables, and the headers and CGI variables the handlers
	 * read (borrowed from io). */
	const char *uri, *sn, *pi, *query_string;
	const struct wanted want[] = {
	    {"REQUEST_METHOD", &r->method},
	    {"REQUEST_URI", &uri},
	    {"SCRIPT_NAME", &sn},
	    {"PATH_INFO", &pi},
	    {"QUERY_STRING", &query_string},
	    {"CONTENT_TYPE", &r->content_type},
	    {"CONTENT_LENGTH", &r->raw_length},
	    {"HTTP_A2A_EXTENSIONS", &r->extensions},
	    {"HTTP_X_PARTICIPANT_ID", &r->participant},
	    {"REMOTE_USER", &r->remote_user},
	    {"HTTP_AUTHORIZATION", &r->authorization},
	    {"REMOTE_ADDR", &r->remote_addr},
	    {"HTTP_LAST_EVENT_ID", &r->last_event_id},
	    {"HTTP_IF_NONE_MATCH", &r->if_none_match},
	    {"HTTP_IDEMPOTENCY_KEY", &r->idempotency_key},
	    {"HTTP_HOST", &r->host},
	    {"HTTP_ORIGIN", &r->origin},
	    {"HTTP_A2A_VERSION", &r->version},
	};
	_Static_assert(sizeof want / sizeof want[0] <= WANTED_MAX, "read_params reads 32 names");
	read_params(io, want, sizeof want / sizeof want[0]);
	if (r->method == NULL || r->method[0] == '\0')
		r->method = "GET";
	if (path_and_query(r, uri, sn, pi, query_string, base_path) != 0) {
		th_http_req_free(r);
		return th_error_set(e, TH_ENOMEM, "out of memory reading the request path");
	}
	if (version_from_query(r) != 0) {
		th_http_req_free(r);
		return th_error_set(e, TH_ENOMEM, "out of memory reading the query");
	}
	return TH_OK;
}

th_err th_http_read_body(struct th_http_req *r, struct th_http_io *io, size_t max,
                         struct th_error *e)
{
	free(r->body);
	r->body = NULL;
	r->body_len = 0;
	const char *cl =
	    r->raw_length != NULL ? r->raw_length : th_http_param(io, "CONTENT_LENGTH");
	unsigned long long n = 0;
	if (cl != NULL && cl[0] != '\0') {
		for (const char *p = cl; *p != '\0'; p++)
			if (*p < '0' || *p > '9')
				return th_error_set(
				    e, TH_EINVALREQ,
				    "Content-Length '%.40s' is not a decimal number", cl);
		errno = 0;
		n = strtoull(cl, NULL, 10);
		if (errno == ERANGE)
			return th_error_set(e, TH_ETOOLARGE,
			                    "request body is %.40s bytes; the limit is %zu bytes",
			                    cl, max);
	}
	const char *te =
	    cl == NULL || cl[0] == '\0' ? th_http_param(io, "HTTP_TRANSFER_ENCODING") : NULL;
	if (te != NULL)
		return th_error_set(e, TH_ELENGTH,
		                    "the request body has no Content-Length (Transfer-Encoding: "
		                    "%.40s); send it with a Content-Length",
		                    te);
	if (n > max)
		return th_error_set(e, TH_ETOOLARGE,
		                    "request body is %llu bytes; the limit is %zu bytes", n, max);
	size_t len = (size_t)n;
	char *buf = malloc(len + 1);
	if (buf == NULL)
		return th_error_set(e, TH_ENOMEM, "out of memory for a %zu-byte request body", len);
	size_t got = 0;
	while (got < len) {
		long k = io->read != NULL ? io->read(io->impl, buf + got, len - got) : -1;
		if (k <= 0 || (size_t)k > len - got) {
			free(buf);
			return th_error_set(e, TH_EINVALREQ,
			                    "request body ended after %zu of the %zu bytes that "
			                    "Content-Length announced",
			                    got, len);
		}
		got += (size_t)k;
	}
	buf[len] = '\0';
	r->body = buf;
	r->body_len = len;
	io->input_done = 1;
	return TH_OK;
}

void th_http_req_free(struct th_http_req *r)
{
	if (r == NULL)
		return;
	free(r->path);
	free(r->query);
	free(r->body);
	free(r->version_buf);
	memset(r, 0, sizeof *r);
}

/* plus_space: in a query string '+' is a space (form encoding); in a path it is '+'.
 * Sets *bad on a bad escape or a decoded NUL, which would silently cut C strings. */
static char *decode(const char *s, size_t n, int plus_space, int *bad)
{
	*bad = 0;
	char *out = malloc(n + 1);
	if (out == NULL)
		return NULL;
	size_t j = 0;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		if (c == '%') {
			if (n - i < 3) {
				*bad = 1;
				break;
			}
			int h = th_hexval((unsigned char)s[i + 1]),
			    l = th_hexval((unsigned char)s[i + 2]);
			if (h < 0 || l < 0) {
				*bad = 1;
				break;
			}
			c = (char)(h * 16 + l);
			if (c == '\0') {
				*bad = 1;
				break;
			}
			i += 2;
		} else if (c == '\0') {
			*bad = 1;
			break;
		} else if (c == '+' && plus_space) {
			c = ' ';
		}
		out[j++] = c;
	}
	if (*bad) {
		free(out);
		return NULL;
	}
	out[j] = '\0';
	return out;
}

char *th_http_pct_decode(const char *s, size_t n)
{
	int bad;
	return decode(s, n, 0, &bad);
}

int th_http_query_lookup(const char *query, const char *name, char **value)
{
	*value = NULL;
	if (query == NULL || name == NULL)
		return 0;
	const char *p = query;
	while (*p != '\0') {
		const char *amp = strchr(p, '&');
		size_t n = amp != NULL ? (size_t)(amp - p) : strlen(p);
		const char *eq = memchr(p, '=', n);
		size_t kn = eq != NULL ? (size_t)(eq - p) : n;
		int bad;
		char *key = decode(p, kn, 1, &bad);
		if (key == NULL && !bad)
			return -2;
		int match = key != NULL && strcmp(key, name) == 0;
		free(key);
		if (match) {
			const char *v = eq != NULL ? eq + 1 : p + n;
			size_t vn = (size_t)(p + n - v);
			*value = decode(v, vn, 1, &bad);
			if (*value == NULL)
				return bad ? -1 : -2;
			return 1;
		}
		p = amp != NULL ? amp + 1 : p + n;
	}
	return 0;
}

char *th_http_query_get(const char *query, const char *name)
{
	char *v = NULL;
	return th_http_query_lookup(query, name, &v) == 1 ? v : NULL;
}

static const char *reason_phrase(int status)
{
	switch (status) {
	case 200:
		return "OK";
	case 201:
		return "Created";
	case 204:
		return "No Content";
	case 301:
		return "Moved Permanently";
	case 303:
		return "See Other";
	case 304:
		return "Not Modified";
	case 400:
		return "Bad Request";
	case 401:
		return "Unauthorized";
	case 403:
		return "Forbidden";
	case 404:
		return "Not Found";
	case 405:
		return "Method Not Allowed";
	case 409:
		return "Conflict";
	case 411:
		return "Length Required";
	case 413:
		return "Content Too Large";
	case 415:
		return "Unsupported Media Type";
	case 429:
		return "Too Many Requests";
	case 500:
		return "Internal Server Error";
	case 501:
		return "Not Implemented";
	case 502:
		return "Bad Gateway";
	case 503:
		return "Service Unavailable";
	default:
		return "Unknown";
	}
}

static int put(struct th_http_io *io, const char *s, size_t n)
{
	if (n == 0)
		return 0;
	return io->write != NULL ? io->write(io->impl, s, n) : -1;
}

static int flush(struct th_http_io *io)
{
	return io->flush != NULL ? io->flush(io->impl) : 0;
}

/* The header block of a response whose body has len bytes (bodyless: none). */
static void format_head(struct th_buf *h, int status, const char *content_type,
                        const char *extra_headers, size_t len, int bodyless)
{
	/* Put together without printf: every response has one (~5,500 instructions). */
	th_buf_puts(h, "Status: ");
	th_buf_put_i64(h, status);
	th_buf_puts(h, " ");
	th_buf_puts(h, reason_phrase(status));
	th_buf_puts(h, "\r\n");
	if (content_type != NULL && !bodyless) {
		th_buf_puts(h, "Content-Type: ");
		th_buf_puts(h, content_type);
		th_buf_puts(h, "\r\n");
	}
	if (!bodyless) {
		th_buf_puts(h, "Content-Length: ");
		th_buf_put_i64(h, (int64_t)len);
		th_buf_puts(h, "\r\n");
	}
	if (extra_headers != NULL)
		th_buf_puts(h, extra_headers);
	th_buf_puts(h, "\r\n");
}

void th_http_format_response(struct th_buf *h, int status, const char *content_type,
                             const char *extra_headers, const char *body, size_t len, int head)
{
	/* 204 and 304 must not carry a body (RFC 9110 §15.3.5, §15.4.5). */
	int bodyless = status == 204 || status == 304;
	format_head(h, status, content_type, extra_headers, body != NULL || head ? len : 0,
	            bodyless);
	if (!bodyless && !head && body != NULL && len > 0)
		th_buf_append(h, body, len);
}

static int respond(struct th_http_io *io, int status, const char *content_type,
                   const char *extra_headers, const char *body, size_t len, int head)
{
	/* 204 and 304 must not carry a body (RFC 9110 §15.3.5, §15.4.5). */
	int bodyless = status == 204 || status == 304;
	struct th_buf h;
	th_buf_init(&h);
	format_head(&h, status, content_type, extra_headers, body != NULL || head ? len : 0,
	            bodyless);
	int rc;
	if (h.oom) {
		/* Still answer something the web server can pass on. */
		static const char fallback[] = "Status: 500 Internal Server Error\r\n"
		                               "Content-Length: 0\r\n\r\n";
		rc = put(io, fallback, sizeof fallback - 1);
	} else {
		rc = put(io, h.data, h.len);
		if (rc == 0 && !bodyless && !head && body != NULL)
			rc = put(io, body, len);
	}
	th_buf_free(&h);
	/* No flush: the carrier's end of the request (FCGX_Finish_r, CGI's exit) sends the
	 * response and the end of the request together. A flush here made it two writes,
	 * and lighttpd, having read Content-Length bytes, closed the socket before the
	 * second: EPIPE and a SIGPIPE per request. */
	return rc;
}

int th_http_respond(struct th_http_io *io, int status, const char *content_type,
                    const char *extra_headers, const char *body, size_t len)
{
	return respond(io, status, content_type, extra_headers, body, len, 0);
}

int th_http_respond_head(struct th_http_io *io, int status, const char *content_type,
                         const char *extra_headers, size_t len)
{
	return respond(io, status, content_type, extra_headers, NULL, len, 1);
}

int th_http_sse_start(struct th_http_io *io, const char *extra_headers)
{
	struct th_buf h;
	th_buf_init(&h);
	th_buf_puts(&h, "Status: 200 OK\r\n"
	                "Content-Type: text/event-stream\r\n"
	                "Cache-Control: no-store\r\n"
	                "X-Accel-Buffering: no\r\n");
	if (extra_headers != NULL)
		th_buf_puts(&h, extra_headers);
	th_buf_puts(&h, "\r\n");
	int rc = h.oom ? -1 : put(io, h.data, h.len);
	th_buf_free(&h);
	if (rc == 0)
		rc = flush(io);
	return rc;
}

/* A field value may not contain a line break: it would end the field early and let
 * the rest be read as another field. */
static void field(struct th_buf *b, const char *name, const char *v)
{
	th_buf_puts(b, name);
	for (const char *p = v; *p != '\0'; p++)
		if (*p != '\n' && *p != '\r')
			th_buf_append(b, p, 1);
	th_buf_puts(b, "\n");
}

void th_http_sse_format(struct th_buf *b, const char *id, const char *event, const char *data)
{
	if (id != NULL)
		field(b, "id: ", id);
	if (event != NULL)
		field(b, "event: ", event);
	/* Compact JSON has no newlines; should data ever hold one, each line becomes its
	 * own data: field, which SSE joins back with '\n'. */
	const char *p = data != NULL ? data : "";
	for (;;) {
		size_t n = strcspn(p, "\r\n");
		th_buf_puts(b, "data: ");
		th_buf_append(b, p, n);
		th_buf_puts(b, "\n");
		p += n;
		if (*p == '\0')
			break;
		if (p[0] == '\r' && p[1] == '\n')
			p++;
		p++;
	}
	th_buf_puts(b, "\n");
}

void th_http_sse_format_comment(struct th_buf *b, const char *text)
{
	field(b, ": ", text != NULL ? text : "");
	th_buf_puts(b, "\n");
}

static int put_flushed(struct th_http_io *io, struct th_buf *b)
{
	int rc = b->oom ? -1 : put(io, b->data, b->len);
	th_buf_free(b);
	if (rc == 0)
		rc = flush(io);
	return rc;
}

int th_http_sse_event(struct th_http_io *io, const char *id, const char *event, const char *data)
{
	struct th_buf b;
	th_buf_init(&b);
	th_http_sse_format(&b, id, event, data);
	return put_flushed(io, &b);
}

int th_http_sse_comment(struct th_http_io *io, const char *text)
{
	struct th_buf b;
	th_buf_init(&b);
	th_http_sse_format_comment(&b, text);
	return put_flushed(io, &b);
}
