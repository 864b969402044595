/* SPDX-License-Identifier: Apache-2.0 */
/* origin.c — browser safety before any route runs (SEC-4): the Host a request names
 * must be the base URL's (DNS rebinding points a name the attacker owns at this
 * server; the browser then sends that name), and an Origin, when a browser sends one,
 * must be this server's own or a configured one (a page on another site). Both lists
 * come from the configuration: allowed_hosts, allowed_origins. decision-036 gives the
 * rules for a loopback base URL and for requests without the headers. Called by the
 * router only; calls request.c. */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "bind/bind_int.h"
#include "config/settings.h"

/* An authority split into host and port, the host lowercased ("[::1]" keeps its
 * brackets). port is -1 when the text names none. */
struct authority {
	char host[256];
	long port;
};

/* Parses "host", "host:port", "[v6]" or "[v6]:port" (n bytes). 0 when malformed. */
static int parse_authority(const char *s, size_t n, struct authority *a)
{
	size_t hn;
	const char *rest;
	if (n > 0 && s[0] == '[') {
		const char *close = memchr(s, ']', n);
		if (close == NULL)
			return 0;
		hn = (size_t)(close - s) + 1;
	} else {
		const char *colon = memchr(s, ':', n);
		hn = colon != NULL ? (size_t)(colon - s) : n;
	}
	/* A fully qualified name's trailing dot names the same host. */
	size_t keep = hn > 1 && s[hn - 1] == '.' ? hn - 1 : hn;
	if (keep == 0 || keep >= sizeof a->host)
		return 0;
	for (size_t i = 0; i < keep; i++) {
		char c = s[i];
		if ((unsigned char)c <= 0x20 || (unsigned char)c >= 0x7f || c == '/' || c == '@')
			return 0;
		a->host[i] = (char)(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
	}
	a->host[keep] = '\0';
	rest = s + hn;
	size_t rn = n - hn;
	a->port = -1;
	if (rn == 0)
		return 1;
	if (rest[0] != ':' || rn < 2 || rn > 6 || strspn(rest + 1, "0123456789") < rn - 1)
		return 0;
	a->port = 0;
	for (size_t i = 1; i < rn; i++)
		a->port = a->port * 10 + (rest[i] - '0');
	return a->port <= 65535;
}

/* "http://h:p/..." into scheme default port *def and authority; 0 when malformed. */
static int parse_origin(const char *url, struct authority *a, long *def)
{
	const char *p;
	if (strncasecmp(url, "http://", 7) == 0) {
		p = url + 7;
		*def = 80;
	} else if (strncasecmp(url, "https://", 8) == 0) {
		p = url + 8;
		*def = 443;
	} else {
		return 0;
	}
	size_t n = strcspn(p, "/?#");
	if (!parse_authority(p, n, a))
		return 0;
	if (a->port < 0)
		a->port = *def;
	return 1;
}

static int is_loopback(const char *host)
{
	return strcmp(host, "localhost") == 0 || strcmp(host, "[::1]") == 0 ||
	       (strncmp(host, "127.", 4) == 0 && strspn(host, "0123456789.") == strlen(host));
}

/* 1 when the list (entries separated by spaces or commas) has an entry that match()
 * accepts; "*" accepts everything. */
static int listed(const char *list, int (*match)(const char *, size_t, const void *),
                  const void *arg)
{
	for (const char *p = list != NULL ? list : ""; *p != '\0';) {
		size_t n = strcspn(p, " ,\t");
		if (n == 1 && p[0] == '*')
			return 1;
		if (n > 0 && match(p, n, arg))
			return 1;
		p += n;
		p += strspn(p, " ,\t");
	}
	return 0;
}

/* An allowed_hosts entry without a port allows every port. */
static int host_entry(const char *s, size_t n, const void *arg)
{
	const struct authority *want = arg;
	struct authority a;
	return parse_authority(s, n, &a) && strcmp(a.host, want->host) == 0 &&
	       (a.port < 0 || a.port == want->port);
}

static int origin_entry(const char *s, size_t n, const void *arg)
{
	const char *origin = arg;
	while (n > 0 && s[n - 1] == '/')
		n--;
	return strlen(origin) == n && strncasecmp(s, origin, n) == 0;
}

static th_err refuse(struct th_error *e, const char *header, const char *value, const char *wanted)
{
	char q[120];
	th_bind_quote(q, sizeof q, value);
	return th_error_set(e, TH_EFORBIDDEN,
	                    "%s '%s' is not this server's (%s); add it to %s in the "
	                    "configuration if it is",
	                    header, q, wanted,
	                    strcmp(header, "Host") == 0 ? "allowed_hosts" : "allowed_origins");
}

th_err th_bind_check_origin(struct th_bind_ctx *ctx, struct th_error *e)
{
	const struct th_config *cfg = ctx->app->cfg;
	struct authority base, host;
	long def = 80;
	char wanted[300];
	if (cfg->base_url == NULL || !parse_origin(cfg->base_url, &base, &def))
		return th_error_set(e, TH_EINTERNAL, "base_url is not an http(s) URL");
	snprintf(wanted, sizeof wanted, "%s:%ld", base.host, base.port);
	const char *h = ctx->req->host;
	/* No Host at all is not a browser (HTTP/1.0 tools, a CGI run by hand). */
	int have_host = h != NULL && h[0] != '\0';
	if (have_host) {
		if (!parse_authority(h, strlen(h), &host))
			return refuse(e, "Host", h, wanted);
		if (host.port < 0)
			host.port = def;
		int ok = strcmp(host.host, base.host) == 0 && host.port == base.port;
		/* A loopback base URL (the default, `tiny-harness serve`) is reached as
		 * 127.0.0.1, localhost or [::1] on whatever port the web server listens on;
		 * no rebinding name is a loopback literal. */
		ok = ok || (is_loopback(base.host) && is_loopback(host.host));
		if (!ok && !listed(cfg->allowed_hosts, host_entry, &host))
			return refuse(e, "Host", h, wanted);
	}
	const char *o = ctx->req->origin;
	if (o == NULL || o[0] == '\0')
		return TH_OK;
	struct authority oa;
	long odef;
	/* An Origin is scheme://host[:port] and nothing more; "null" (a sandboxed frame,
	 * a file: page) is never this server. */
	const char *after = strstr(o, "://");
	int ok = after != NULL && after[3 + strcspn(after + 3, "/?#")] == '\0' &&
	         parse_origin(o, &oa, &odef);
	/* Same origin: the base URL's, or the Host this request was sent to (which passed
	 * the check above), as the browser that sent the page would name it. */
	if (ok)
		ok = (oa.port == base.port && strcmp(oa.host, base.host) == 0) ||
		     (have_host && oa.port == host.port && strcmp(oa.host, host.host) == 0);
	const char *auth = strstr(cfg->base_url, "://") + 3;
	snprintf(wanted, sizeof wanted, "%.*s", (int)(auth - cfg->base_url + strcspn(auth, "/")),
	         cfg->base_url);
	if (!ok && !listed(cfg->allowed_origins, origin_entry, o))
		return refuse(e, "Origin", o, wanted);
	return TH_OK;
}
