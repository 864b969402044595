/* bind.c — top-level routing of one request (card, JSON-RPC, HTTP+JSON), the agent
 * card with its cache headers (CARD-1), and the header checks both bindings share
 * (A2A-3 version, EXT-1/EXT-2 extensions, ID-1 participant). */
#include "bind/bind.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "bind/bind_int.h"
#include "config/config.h"
#include "harness/ext.h"
#include "util/jsonx.h"

#define CARD_PATH "/.well-known/agent-card.json"

th_bind_service_fn th_bind_service = th_service_call;

void th_bind_quote(char *dst, size_t n, const char *src)
{
	if (n == 0)
		return;
	if (src == NULL) {
		snprintf(dst, n, "(none)");
		return;
	}
	size_t len = strlen(src), j = 0;
	int cut = len >= n;
	size_t keep = cut ? (n > 4 ? n - 4 : 0) : len;
	for (size_t i = 0; i < keep; i++) {
		unsigned char c = (unsigned char)src[i];
		dst[j++] = c >= 0x20 && c < 0x7f ? (char)c : '?';
	}
	if (cut && n > 4) {
		memcpy(dst + j, "...", 3);
		j += 3;
	}
	dst[j] = '\0';
}

int th_bind_json_ctype(const char *ct)
{
	if (ct == NULL)
		return 0;
	while (*ct == ' ' || *ct == '\t')
		ct++;
	size_t n = strcspn(ct, ";");
	while (n > 0 && (ct[n - 1] == ' ' || ct[n - 1] == '\t'))
		n--;
	/* Media types are case-insensitive (RFC 9110 §8.3.1). */
	return (n == 16 && strncasecmp(ct, "application/json", 16) == 0) ||
	       (n == 20 && strncasecmp(ct, "application/a2a+json", 20) == 0);
}

th_err th_bind_check_version(const char *v, struct th_error *e)
{
	if (v != NULL && strncmp(v, "1.0", 3) == 0) {
		/* A patch number must not affect negotiation (A2A §7.1): 1.0.x is 1.0. */
		if (v[3] == '\0')
			return TH_OK;
		if (v[3] == '.' && v[4] != '\0' && strspn(v + 4, "0123456789") == strlen(v + 4))
			return TH_OK;
	}
	char q[80];
	th_bind_quote(q, sizeof q, v);
	if (v == NULL)
		return th_error_set(e, TH_EVERSION,
		                    "A2A version (none) is not supported: a request without "
		                    "A2A-Version means 0.3; send the header A2A-Version: 1.0 "
		                    "(supported: 1.0)");
	return th_error_set(e, TH_EVERSION, "A2A version '%s' is not supported; supported: 1.0", q);
}

th_err th_bind_check_headers(struct th_bind_ctx *ctx, struct th_error *e)
{
	th_err rc = th_bind_check_version(ctx->req->version, e);
	if (rc != TH_OK)
		return rc;
	unsigned bits = 0;
	rc = th_ext_parse(ctx->req->extensions, &bits, e);
	if (rc != TH_OK)
		return rc;
	ctx->call.extensions = bits;
	/* EXT-2: we echo every activated extension, whether or not this response used it. */
	if (bits != 0) {
		struct th_buf list;
		th_buf_init(&list);
		th_ext_format(bits, &list);
		if (list.len > 0)
			th_buf_printf(&ctx->extra, "A2A-Extensions: %s\r\n", list.data);
		int oom = list.oom;
		th_buf_free(&list);
		if (oom)
			return th_error_set(e, TH_ENOMEM, "out of memory");
	}
	const struct th_config *cfg = ctx->app->cfg;
	/* ID-1: behind an authenticating web server only REMOTE_USER counts; a client-
	 * chosen header must not be able to impersonate anyone there. */
	const char *who = cfg->identity == TH_IDENTITY_REMOTE_USER ? ctx->req->remote_user
	                                                           : ctx->req->participant;
	ctx->call.participant = who != NULL && who[0] != '\0' ? who : NULL;
	return TH_OK;
}

const char *th_bind_message(const struct th_error *e, char *buf, size_t n)
{
	const char *m = e->msg[0] != '\0' ? e->msg : "internal error";
	if (e->code == TH_EBUSY && strstr(m, "retry") == NULL) {
		snprintf(buf, n, "%s; the database is busy, retry the request", m);
		return buf;
	}
	return m;
}

void th_bind_send_oom(struct th_bind_ctx *ctx)
{
	static const char body[] =
		"{\"error\":{\"code\":500,\"status\":\"INTERNAL\",\"message\":\"out of memory\"}}";
	th_http_respond(ctx->io, 500, "application/json", NULL, body, sizeof body - 1);
}

void th_bind_send(struct th_bind_ctx *ctx, int status, const char *ctype, const char *body,
                  size_t len)
{
	if (ctx->extra.oom) {
		th_bind_send_oom(ctx);
		return;
	}
	th_http_respond(ctx->io, status, ctype, ctx->extra.len > 0 ? ctx->extra.data : NULL, body,
	                len);
}

void th_bind_send_json(struct th_bind_ctx *ctx, int status, const char *ctype, json_object *v)
{
	const char *text = v != NULL ? th_json_text(v) : NULL;
	if (text == NULL)
		th_bind_send_oom(ctx);
	else
		th_bind_send(ctx, status, ctype, text, strlen(text));
	json_object_put(v);
}

/* FNV-1a 64: cheap, stable across processes and builds, enough to tell two card
 * texts apart for caching. */
static unsigned long long fnv1a(const char *s)
{
	unsigned long long h = 0xcbf29ce484222325ULL;
	for (; *s != '\0'; s++) {
		h ^= (unsigned char)*s;
		h *= 0x100000001b3ULL;
	}
	return h;
}

/* If-None-Match is "*" or a comma-separated list of entity tags, possibly weak
 * (W/"…"); weak comparison applies to GET (RFC 9110 §13.1.2). */
static int etag_matches(const char *inm, const char *etag)
{
	if (inm == NULL)
		return 0;
	size_t en = strlen(etag);
	const char *p = inm;
	while (*p != '\0') {
		while (*p == ' ' || *p == '\t' || *p == ',')
			p++;
		size_t n = strcspn(p, ",");
		size_t m = n;
		while (m > 0 && (p[m - 1] == ' ' || p[m - 1] == '\t'))
			m--;
		const char *t = p;
		if (m >= 2 && t[0] == 'W' && t[1] == '/') {
			t += 2;
			m -= 2;
		}
		if ((m == 1 && t[0] == '*') || (m == en && memcmp(t, etag, en) == 0))
			return 1;
		p += n;
	}
	return 0;
}

static void serve_card(struct th_bind_ctx *ctx)
{
	struct th_error e;
	th_error_clear(&e);
	if (strcmp(ctx->req->method, "GET") != 0) {
		char m[40];
		th_bind_quote(m, sizeof m, ctx->req->method);
		th_buf_puts(&ctx->extra, "Allow: GET\r\n");
		th_error_set(&e, TH_EMETHOD, "the agent card is read with GET, not %s", m);
		th_bind_rest_error(ctx, 405, &e);
		return;
	}
	const char *text = th_service_card(ctx->app);
	if (text == NULL) {
		th_error_set(&e, TH_EINTERNAL, "the agent card is not available");
		th_bind_rest_error(ctx, 500, &e);
		return;
	}
	char etag[24];
	snprintf(etag, sizeof etag, "\"%016llx\"", fnv1a(text));
	th_buf_printf(&ctx->extra, "Cache-Control: public, max-age=300\r\nETag: %s\r\n", etag);
	if (etag_matches(ctx->req->if_none_match, etag))
		th_bind_send(ctx, 304, NULL, NULL, 0);
	else
		th_bind_send(ctx, 200, "application/json", text, strlen(text));
}

void th_bind_serve(struct th_app *app, struct th_http_io *io)
{
	struct th_http_req req;
	struct th_error e;
	th_error_clear(&e);
	struct th_bind_ctx ctx;
	memset(&ctx, 0, sizeof ctx);
	ctx.app = app;
	ctx.io = io;
	ctx.req = &req;
	th_buf_init(&ctx.extra);
	const char *base = app != NULL && app->cfg != NULL && app->cfg->base_path != NULL
	                           ? app->cfg->base_path
	                           : "/";
	if (th_http_req_init(&req, io, base, &e) != TH_OK) {
		th_bind_send_oom(&ctx);
		return;
	}
	if (app == NULL || app->cfg == NULL) {
		th_error_set(&e, TH_EINTERNAL, "the server is not configured");
		th_bind_rest_error(&ctx, 500, &e);
	} else if (strcmp(req.path, CARD_PATH) == 0) {
		/* Served both under the base path and, when the base is deeper, at the origin
		 * root where RFC 8615 puts it. */
		serve_card(&ctx);
	} else if (req.in_base && strcmp(req.path, "/") == 0) {
		th_bind_jsonrpc(&ctx);
	} else {
		th_bind_rest(&ctx);
	}
	th_http_req_free(&req);
	th_buf_free(&ctx.extra);
}
