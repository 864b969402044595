/* SPDX-License-Identifier: Apache-2.0 */
/* web.c — the web app (WEB-1, WEB-3): a browser's GET of the base URL (an Accept that
 * prefers text/html to JSON) is redirected (303) to <base>ui/, and GET or HEAD of
 * <base>ui/ and <base>ui/<file> serves the app's static files from the directory the
 * key web_dir names, with their Content-Type, an ETag and Last-Modified, and a
 * Content-Security-Policy that forbids inline script. Names are checked before any
 * file is touched: no "..", no hidden files, no absolute paths, only plain characters.
 * One name is not a file: <base>ui/session.json tells the app how the server knows who
 * is speaking (identity = header: the Participant field; remote_user: the web server's
 * login, which it names; bearer: the participant of the key the app sends, SEC-1), so
 * that the app shows the field only when it counts (ID-1) and asks for a key when one is
 * needed.
 * Called by the router; calls request.c and errors.c only. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "bind/bind_int.h"
#include "config/settings.h"
#include "ops/auth.h"
#include "util/jsonx.h"

/* The largest file served: the app is a page, a bundle and a style sheet. */
#define WEB_MAX_FILE (16u * 1024u * 1024u)

/* style-src 'unsafe-inline' is absent: the Lit renderer adopts constructed style sheets
 * (adoptedStyleSheets), which CSP does not restrict (docs/web.md). */
#define WEB_CSP                                                                                    \
	"default-src 'self'; script-src 'self'; connect-src 'self'; img-src 'self' data:; "        \
	"style-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; "               \
	"frame-ancestors 'none'"

/* ------------------------------------------------------------------ Accept */

/* The q of one media range's parameters ("; q=0.5; level=1"): 1000 for q=1, 0 for
 * q=0, and 1000 when no q is given. Malformed q values count as 0. */
static int q_value(const char *p, size_t n)
{
	const char *end = p + n;
	while (p < end) {
		const char *semi = memchr(p, ';', (size_t)(end - p));
		if (semi == NULL)
			break;
		p = semi + 1;
		while (p < end && (*p == ' ' || *p == '\t'))
			p++;
		if (end - p >= 2 && (p[0] == 'q' || p[0] == 'Q') && p[1] == '=') {
			p += 2;
			int q = 0;
			if (p < end && *p == '1') {
				q = 1000;
			} else if (p < end && *p == '0') {
				p++;
				if (p < end && *p == '.') {
					p++;
					int scale = 100;
					for (; p < end && *p >= '0' && *p <= '9' && scale > 0;
					     p++) {
						q += (*p - '0') * scale;
						scale /= 10;
					}
				}
			}
			return q;
		}
	}
	return 1000;
}

/* Matches "type/subtype" (ASCII case-insensitive) at the start of a media range of
 * length n, followed by its end, a ';' or white space. */
static int range_is(const char *p, size_t n, const char *type)
{
	size_t t = strlen(type);
	if (n < t || strncasecmp(p, type, t) != 0)
		return 0;
	return n == t || p[t] == ';' || p[t] == ' ' || p[t] == '\t';
}

int th_bind_web_prefers_html(const char *accept)
{
	if (accept == NULL)
		return 0;
	/* The q given to HTML (text/html or application/xhtml+xml, named explicitly), and to
	 * JSON by the most specific range that covers application/json. */
	int html = -1, json = -1, json_rank = 0;
	const char *p = accept;
	while (*p != '\0') {
		while (*p == ' ' || *p == '\t' || *p == ',')
			p++;
		size_t n = strcspn(p, ",");
		if (n == 0)
			break;
		int q = q_value(p, n);
		int rank = 0;
		if (range_is(p, n, "text/html") || range_is(p, n, "application/xhtml+xml")) {
			if (q > html)
				html = q;
		} else if (range_is(p, n, "application/json") ||
		           range_is(p, n, "application/a2a+json")) {
			rank = 3;
		} else if (range_is(p, n, "application/*")) {
			rank = 2;
		} else if (range_is(p, n, "*/*")) {
			rank = 1;
		}
		if (rank > json_rank || (rank > 0 && rank == json_rank && q > json)) {
			json = q;
			json_rank = rank;
		}
		p += n;
	}
	return html > 0 && html > json;
}

/* ------------------------------------------------------------------ names */

int th_bind_web_name_ok(const char *name)
{
	if (name == NULL || *name == '\0' || strlen(name) > 200)
		return 0;
	const char *seg = name;
	for (const char *p = name;; p++) {
		if (*p == '/' || *p == '\0') {
			/* Empty segments ("a//b", a leading '/') and hidden or dot segments
			 * (".", "..", ".env") are refused. */
			if (p == seg || *seg == '.')
				return 0;
			if (*p == '\0')
				return 1;
			seg = p + 1;
			continue;
		}
		char c = *p;
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '.' || c == '-' || c == '_'))
			return 0;
	}
}

const char *th_bind_web_ctype(const char *name)
{
	static const struct {
		const char *ext, *type;
	} types[] = {
	    {".html", "text/html; charset=utf-8"},
	    {".js", "text/javascript; charset=utf-8"},
	    {".mjs", "text/javascript; charset=utf-8"},
	    {".css", "text/css; charset=utf-8"},
	    {".json", "application/json"},
	    {".map", "application/json"},
	    {".png", "image/png"},
	    {".svg", "image/svg+xml"},
	    {".ico", "image/x-icon"},
	    {".txt", "text/plain; charset=utf-8"},
	    {".woff2", "font/woff2"},
	};
	const char *dot = strrchr(name, '.');
	const char *slash = strrchr(name, '/');
	if (dot != NULL && (slash == NULL || dot > slash))
		for (size_t i = 0; i < sizeof types / sizeof types[0]; i++)
			if (strcasecmp(dot, types[i].ext) == 0)
				return types[i].type;
	return "application/octet-stream";
}

/* ------------------------------------------------------------------ responses */

static void not_found(struct th_bind_ctx *ctx)
{
	struct th_error e;
	char q[160];
	th_bind_quote(q, sizeof q, ctx->req->path);
	th_error_set(&e, TH_ENOMETHOD, "no file of the web app at %s", q);
	e.task_id[0] = '\0';
	th_bind_rest_error(ctx, 404, &e);
}

/* A redirect to <base>ui/ (an absolute path, so it holds behind any host name). */
static void redirect(struct th_bind_ctx *ctx, int status)
{
	const char *base = ctx->app->cfg->base_path != NULL ? ctx->app->cfg->base_path : "/";
	static const char body[] = "The web app is at ui/\n";
	th_buf_printf(
	    &ctx->extra, "Location: %s%s%sui/\r\nCache-Control: no-cache\r\nVary: Accept\r\n", base,
	    ctx->web_tenant != NULL ? ctx->web_tenant : "", ctx->web_tenant != NULL ? "/" : "");
	th_bind_send(ctx, status, "text/plain; charset=utf-8", body, sizeof body - 1);
}

void th_bind_web_redirect(struct th_bind_ctx *ctx)
{
	if (th_bind_get_or_head(ctx, "the web app"))
		redirect(ctx, 303);
}

/* The participant the request's "Authorization: Bearer" credential names into who (n
 * bytes), or "" when there is none or it is refused (SEC-1). */
static void bearer_who(struct th_bind_ctx *ctx, char *who, size_t n)
{
	const char *h = ctx->req->authorization;
	who[0] = '\0';
	if (h == NULL || strncasecmp(h, "Bearer ", 7) != 0)
		return;
	const char *token = h + 7;
	while (*token == ' ')
		token++;
	struct th_error e;
	th_error_clear(&e);
	if (*token == '\0' ||
	    th_auth_bearer(ctx->app->store, ctx->app->cfg, token, who, n, &e) != TH_OK)
		who[0] = '\0';
}

/* {"identity":"header"}, or {"identity":"remote_user"|"bearer","participant":ID or null}:
 * the web server's login, or the participant the request's bearer credential names
 * (null when it sent none or a refused one, so the app asks for a key). Never cached,
 * since it depends on the login. */
static void session(struct th_bind_ctx *ctx)
{
	static const char *const modes[] = {
	    [TH_IDENTITY_HEADER] = "header",
	    [TH_IDENTITY_REMOTE_USER] = "remote_user",
	    [TH_IDENTITY_BEARER] = "bearer",
	};
	const struct th_config *cfg = ctx->app->cfg;
	json_object *o = json_object_new_object();
	char token_who[TH_ID_BUF];
	const char *who = NULL;
	if (cfg->identity == TH_IDENTITY_REMOTE_USER) {
		who = ctx->req->remote_user;
	} else if (cfg->identity == TH_IDENTITY_BEARER) {
		bearer_who(ctx, token_who, sizeof token_who);
		who = token_who;
	}
	int rc = o == NULL;
	if (!rc)
		rc = th_json_put(o, "identity", json_object_new_string(modes[cfg->identity]));
	if (!rc && ctx->web_tenant != NULL) /* TEN-8: the app sends it on every call */
		rc = th_json_put(o, "tenant", json_object_new_string(ctx->web_tenant));
	if (!rc && cfg->identity != TH_IDENTITY_HEADER) {
		if (who != NULL && who[0] != '\0')
			rc = th_json_put(o, "participant", json_object_new_string(who));
		else /* not logged in: null */
			rc = th_json_put_null(o, "participant", NULL);
	}
	if (rc) {
		json_object_put(o);
		o = NULL;
	}
	th_buf_puts(&ctx->extra, "Cache-Control: no-store\r\nX-Content-Type-Options: nosniff\r\n");
	th_bind_send_json(ctx, 200, "application/json", o);
}

/* Reads the whole regular file fd into a new buffer; NULL on error (errno set). */
static char *slurp(int fd, size_t size)
{
	char *data = malloc(size > 0 ? size : 1);
	if (data == NULL)
		return NULL;
	size_t got = 0;
	while (got < size) {
		ssize_t r = read(fd, data + got, size - got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			free(data);
			errno = r == 0 ? EIO : errno;
			return NULL;
		}
		got += (size_t)r;
	}
	return data;
}

void th_bind_web(struct th_bind_ctx *ctx)
{
	const char *path = ctx->req->path; /* "/ui" or "/ui/…", or "/<tenant>/ui…" */
	if (!th_bind_get_or_head(ctx, "the web app"))
		return;
	if (ctx->web_tenant != NULL) {
		path += 1 + strlen(ctx->web_tenant);
		if (!th_config_tenant(ctx->app->cfg, ctx->web_tenant, NULL, NULL, NULL, NULL)) {
			not_found(ctx);
			return;
		}
	}
	if (strcmp(path, "/ui") == 0) {
		redirect(ctx, 301);
		return;
	}
	const char *name = path + 4;
	if (*name == '\0')
		name = "index.html";
	if (strcmp(name, "session.json") == 0) {
		session(ctx);
		return;
	}
	if (!th_bind_web_name_ok(name)) {
		not_found(ctx);
		return;
	}
	char file[4096];
	if ((size_t)snprintf(file, sizeof file, "%s/%s", ctx->app->cfg->web_dir, name) >=
	    sizeof file) {
		not_found(ctx);
		return;
	}
	int fd = open(file, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	struct stat sb;
	if (fd < 0 || fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode) ||
	    (unsigned long long)sb.st_size > WEB_MAX_FILE) {
		if (fd >= 0)
			close(fd);
		not_found(ctx);
		return;
	}
	char etag[64];
	snprintf(etag, sizeof etag, "\"%llx-%llx\"", (unsigned long long)sb.st_mtime,
	         (unsigned long long)sb.st_size);
	th_buf_printf(&ctx->extra,
	              "Cache-Control: no-cache\r\nETag: %s\r\nContent-Security-Policy: " WEB_CSP
	              "\r\nX-Frame-Options: DENY\r\nX-Content-Type-Options: nosniff\r\n"
	              "Referrer-Policy: no-referrer\r\n",
	              etag);
	char lm[40];
	if (th_bind_http_date(sb.st_mtime, lm, sizeof lm))
		th_buf_printf(&ctx->extra, "Last-Modified: %s\r\n", lm);
	if (th_bind_etag_matches(ctx->req->if_none_match, etag)) {
		close(fd);
		th_bind_send(ctx, 304, NULL, NULL, 0);
		return;
	}
	const char *ctype = th_bind_web_ctype(name);
	if (ctx->head) {
		close(fd);
		th_bind_send(ctx, 200, ctype, NULL, (size_t)sb.st_size);
		return;
	}
	char *data = slurp(fd, (size_t)sb.st_size);
	close(fd);
	if (data == NULL) {
		struct th_error e;
		th_error_set(&e, TH_EINTERNAL, "the web app's file could not be read");
		th_bind_rest_error(ctx, 500, &e);
		return;
	}
	th_bind_send(ctx, 200, ctype, data, (size_t)sb.st_size);
	free(data);
}
