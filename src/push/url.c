/* SPDX-License-Identifier: Apache-2.0 */
/* url.c — callback URL checks (PUSH-3): the scheme, the parts a webhook URL may have,
 * and where its host points. The same checks run when a config is created and again
 * before every delivery (deliver.c), so a name that later resolves somewhere private
 * (DNS rebinding) is caught; deliver.c also pins the checked addresses and re-checks
 * the address of every socket libcurl opens. */
#include <arpa/inet.h>
#include <ctype.h>
#include <curl/curl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "push/push.h"
#include "push/push_int.h"
#include "util/buf.h"

/* ---- address classes ---------------------------------------------------------------------- */

/* a is an IPv4 address in host byte order. */
static const char *v4_refusal(uint32_t a, int allow_private)
{
	unsigned b1 = a >> 24, b2 = (a >> 16) & 0xff, b3 = (a >> 8) & 0xff;
	/* Never a webhook, whatever the configuration. */
	if (a == 0xffffffffu)
		return "the broadcast address";
	if (b1 == 0)
		return "an unspecified address (0.0.0.0/8)";
	if (b1 >= 224 && b1 <= 239)
		return "a multicast address";
	/* SEC-6: cloud metadata and platform services answer anyone on the host's network
	 * with credentials; allowing private targets (a webhook on the LAN) must not open
	 * them. */
	if (a == 0xa9fea9feu || a == 0xa9feaa02u || a == 0xa9feaa17u || a == 0xa83f8110u ||
	    a == 0x646464c8u || a == 0xc00000c0u)
		return "a cloud metadata address";
	/* The rest of the IANA special-purpose registry is never anybody's webhook. */
	if (b1 == 192 && b2 == 0 && b3 == 0)
		return "a special-purpose address (192.0.0.0/24)";
	if ((b1 == 192 && b2 == 0 && b3 == 2) || (b1 == 198 && b2 == 51 && b3 == 100) ||
	    (b1 == 203 && b2 == 0 && b3 == 113))
		return "a documentation address";
	if (b1 == 198 && (b2 & 0xfe) == 18)
		return "a benchmarking address (198.18.0.0/15)";
	if (b1 == 192 && b2 == 88 && b3 == 99)
		return "a deprecated relay address (192.88.99.0/24)";
	if (b1 >= 240)
		return "a reserved address (240.0.0.0/4)";
	if (allow_private)
		return NULL;
	if (b1 == 127)
		return "a loopback address";
	if (b1 == 10 || (b1 == 172 && (b2 & 0xf0) == 16) || (b1 == 192 && b2 == 168))
		return "a private address";
	if (b1 == 169 && b2 == 254)
		return "a link-local address";
	if (b1 == 100 && (b2 & 0xc0) == 64)
		return "a shared (carrier-grade NAT) address";
	return NULL;
}

static uint32_t v4_at(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static int all_zero(const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i] != 0)
			return 0;
	return 1;
}

static const char *v6_refusal(const uint8_t *a, int allow_private)
{
	if (all_zero(a, 16))
		return "an unspecified address (::)";
	if (a[0] == 0xff)
		return "a multicast address";
	/* IPv6 forms that carry an IPv4 address are judged by it. */
	if (all_zero(a, 10) && a[10] == 0xff && a[11] == 0xff) /* ::ffff:a.b.c.d */
		return v4_refusal(v4_at(a + 12), allow_private);
	if (all_zero(a, 15) && a[15] == 1)
		return allow_private ? NULL : "a loopback address";
	if (all_zero(a, 12)) /* ::a.b.c.d (deprecated IPv4-compatible) */
		return v4_refusal(v4_at(a + 12), allow_private);
	if (a[0] == 0x00 && a[1] == 0x64 && a[2] == 0xff && a[3] == 0x9b && all_zero(a + 4, 8))
		return v4_refusal(v4_at(a + 12), allow_private); /* 64:ff9b::/96 NAT64 */
	if (a[0] == 0x20 && a[1] == 0x02)                        /* 2002::/16 6to4 */
		return v4_refusal(v4_at(a + 2), allow_private);
	if (a[0] == 0x20 && a[1] == 0x01 && a[2] == 0x00 && a[3] == 0x00) { /* Teredo */
		uint32_t client = ~v4_at(a + 12);
		return v4_refusal(client, allow_private);
	}
	/* fd00:ec2::254, the IPv6 instance metadata service (SEC-6, see v4_refusal). */
	static const uint8_t imds6[16] = {0xfd, 0, 0x0e, 0xc2, 0, 0, 0,    0,
	                                  0,    0, 0,    0,    0, 0, 0x02, 0x54};
	if (memcmp(a, imds6, 16) == 0)
		return "a cloud metadata address";
	if (a[0] == 0x20 && a[1] == 0x01 && a[2] == 0x0d && a[3] == 0xb8)
		return "a documentation address";
	if (a[0] == 0x3f && a[1] == 0xff && (a[2] & 0xf0) == 0x00)
		return "a documentation address";
	if (a[0] == 0x01 && all_zero(a + 1, 7))
		return "a discard-only address (100::/64)";
	if (a[0] == 0x00)
		return "a reserved address";
	/* 2001::/23 minus Teredo (judged above): IETF protocol assignments. */
	if (a[0] == 0x20 && a[1] == 0x01 && a[2] < 0x02)
		return "a special-purpose address (2001::/23)";
	if (allow_private)
		return NULL;
	if ((a[0] & 0xfe) == 0xfc)
		return "a private (unique local) address";
	if (a[0] == 0xfe && (a[1] & 0xc0) == 0x80)
		return "a link-local address";
	if (a[0] == 0xfe && (a[1] & 0xc0) == 0xc0)
		return "a private (site-local) address";
	if (a[0] == 0x00 && a[1] == 0x64 && a[2] == 0xff && a[3] == 0x9b && a[4] == 0x00 &&
	    a[5] == 0x01)
		return "a private (local-use NAT64) address";
	return NULL;
}

const char *th_push_addr_refusal(const struct sockaddr *sa, int allow_private)
{
	if (sa == NULL)
		return "no address";
	if (sa->sa_family == AF_INET) {
		struct sockaddr_in in;
		memcpy(&in, sa, sizeof in);
		return v4_refusal(ntohl(in.sin_addr.s_addr), allow_private);
	}
	if (sa->sa_family == AF_INET6) {
		struct sockaddr_in6 in6;
		memcpy(&in6, sa, sizeof in6);
		return v6_refusal(in6.sin6_addr.s6_addr, allow_private);
	}
	return "not an IP address";
}

/* ---- URL checks ---------------------------------------------------------------------------- */

void th_push_target_free(struct th_push_target *t)
{
	if (t == NULL)
		return;
	free(t->host);
	free(t->resolve);
	memset(t, 0, sizeof *t);
}

void th_push_url_redact(const char *url, char *out, size_t cap)
{
	struct th_buf b;
	th_buf_init(&b);
	const char *p = url != NULL ? url : "";
	const char *sep = strstr(p, "://");
	if (sep != NULL) {
		const char *auth = sep + 3;
		size_t an = strcspn(auth, "/?#");
		const char *at = NULL;
		for (const char *c = auth; c < auth + an; c++)
			if (*c == '@')
				at = c;
		th_buf_append(&b, p, (size_t)(auth - p));
		if (at != NULL) {
			th_buf_puts(&b, "***");
			auth = at;
			an -= (size_t)(at - (sep + 3));
		}
		th_buf_append(&b, auth, an);
		p = auth + an;
	}
	size_t pn = strcspn(p, "?#");
	th_buf_append(&b, p, pn);
	p += pn;
	if (*p == '?') {
		/* Webhook URLs often carry their secret as a query value (?token=...). */
		p++;
		th_buf_puts(&b, "?");
		while (*p != '\0' && *p != '#') {
			size_t kn = strcspn(p, "=&#");
			th_buf_append(&b, p, kn);
			p += kn;
			if (*p == '=') {
				th_buf_puts(&b, "=***");
				p += 1 + strcspn(p + 1, "&#");
			}
			if (*p == '&') {
				th_buf_puts(&b, "&");
				p++;
			}
		}
	}
	const char *text = b.oom || b.data == NULL ? "" : b.data;
	size_t n = strlen(text);
	if (cap > 0)
		snprintf(out, cap, "%.*s%s", n >= cap && cap > 4 ? (int)(cap - 4) : (int)n, text,
		         n >= cap && cap > 4 ? "..." : "");
	th_buf_free(&b);
}

/* The URL for an error message: at most 120 bytes, the rest elided, its credentials
 * and query values redacted. Only called on URLs already known to be printable ASCII. */
static void quote(char *out, size_t cap, const char *url)
{
	char r[124];
	th_push_url_redact(url, r, sizeof r);
	snprintf(out, cap, "'%s'", r);
}

static void addr_text(const struct sockaddr *sa, char *out, size_t cap)
{
	const void *src =
	    sa->sa_family == AF_INET
	        ? (const void *)&((const struct sockaddr_in *)(const void *)sa)->sin_addr
	        : (const void *)&((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr;
	if (inet_ntop(sa->sa_family, src, out, (socklen_t)cap) == NULL)
		snprintf(out, cap, "?");
}

static th_err refuse_addr(const char *q, const char *host, const struct sockaddr *sa,
                          const char *why, struct th_error *e)
{
	char a[INET6_ADDRSTRLEN];
	addr_text(sa, a, sizeof a);
	/* Would the configuration switch allow it? Then say which switch. */
	int switchable = th_push_addr_refusal(sa, 1) == NULL;
	int literal = strcmp(host, a) == 0;
	char at[INET6_ADDRSTRLEN + 32] = "";
	if (!literal)
		snprintf(at, sizeof at, " (%s)", a);
	return th_error_set(e, TH_EINVAL,
	                    "url %s: host %.100s%s is %s; this server does not send push "
	                    "notifications there%s",
	                    q, host, at, why,
	                    switchable ? " (private, loopback and link-local targets are refused "
	                                 "unless its configuration sets push_allow_private = 1)"
	                               : "");
}

/* Resolves host (without brackets) and checks every address; fills t->resolve for a
 * name. */
static th_err resolve_check(const char *q, const char *host, const char *curl_host, long port,
                            int allow_private, struct th_push_target *t, struct th_error *e)
{
	struct addrinfo hints, *res = NULL;
	memset(&hints, 0, sizeof hints);
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	unsigned char probe[sizeof(struct in6_addr)];
	int literal = inet_pton(AF_INET, host, probe) == 1 || inet_pton(AF_INET6, host, probe) == 1;
	if (literal)
		hints.ai_flags = AI_NUMERICHOST;
	int g = getaddrinfo(host, NULL, &hints, &res);
	if (g != 0 || res == NULL) {
		if (res != NULL)
			freeaddrinfo(res);
		t->transient = 1;
		return th_error_set(e, TH_EINVAL, "url %s: host %.100s does not resolve (%s)", q,
		                    host, g != 0 ? gai_strerror(g) : "no address");
	}
	th_err rc = TH_OK;
	struct th_buf pin;
	th_buf_init(&pin);
	th_buf_printf(&pin, "%s:%ld:", curl_host, port);
	int count = 0;
	for (struct addrinfo *ai = res; ai != NULL && rc == TH_OK; ai = ai->ai_next) {
		if (ai->ai_family != AF_INET && ai->ai_family != AF_INET6)
			continue;
		const char *why = th_push_addr_refusal(ai->ai_addr, allow_private);
		if (why != NULL) {
			rc = refuse_addr(q, host, ai->ai_addr, why, e);
			break;
		}
		char a[INET6_ADDRSTRLEN];
		addr_text(ai->ai_addr, a, sizeof a);
		if (ai->ai_family == AF_INET6)
			th_buf_printf(&pin, "%s[%s]", count ? "," : "", a);
		else
			th_buf_printf(&pin, "%s%s", count ? "," : "", a);
		count++;
	}
	freeaddrinfo(res);
	if (rc == TH_OK && count == 0)
		rc = th_error_set(e, TH_EINVAL, "url %s: host %.100s has no IP address", q, host);
	if (rc == TH_OK && pin.oom)
		rc = th_error_set(e, TH_ENOMEM, "out of memory");
	if (rc == TH_OK && !literal)
		t->resolve = th_buf_take(&pin);
	th_buf_free(&pin);
	return rc;
}

/* The URL as text: present, not too long, printable ASCII only (PUSH-3). */
static th_err check_text(const char *url, struct th_error *e)
{
	if (url == NULL || *url == '\0')
		return th_error_set(e, TH_EINVAL,
		                    "url is required: the http:// or https:// address to POST the "
		                    "task's events to");
	size_t n = strlen(url);
	if (n > TH_PUSH_URL_MAX)
		return th_error_set(e, TH_EINVAL, "url is %zu bytes long; at most %d are accepted",
		                    n, TH_PUSH_URL_MAX);
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)url[i] <= 0x20 || (unsigned char)url[i] >= 0x7f)
			return th_error_set(
			    e, TH_EINVAL,
			    "url has a space, a control character or a non-ASCII byte "
			    "at offset %zu; percent-encode it (an international host "
			    "name in its xn-- form)",
			    i);
	return TH_OK;
}

/* The parts libcurl parsed out of a URL; each curl_free'd by parts_free. */
struct parts {
	char *scheme, *user, *password, *host, *port, *zone;
};

static void parts_free(struct parts *p)
{
	curl_free(p->scheme);
	curl_free(p->user);
	curl_free(p->password);
	curl_free(p->host);
	curl_free(p->port);
	curl_free(p->zone);
}

/* The parsed URL h (quoted as q in messages): http or https, no credentials, a host with
 * no zone or escapes, a port in range (*port). */
static th_err check_parts(CURLU *h, const char *q, struct parts *p, long *port, struct th_error *e)
{
	if (curl_url_get(h, CURLUPART_SCHEME, &p->scheme, 0) != CURLUE_OK || p->scheme == NULL)
		return th_error_set(e, TH_EINVAL, "url %s has no scheme; use http:// or https://",
		                    q);
	for (char *c = p->scheme; *c; c++)
		*c = (char)tolower((unsigned char)*c);
	if (strcmp(p->scheme, "http") != 0 && strcmp(p->scheme, "https") != 0)
		return th_error_set(e, TH_EINVAL,
		                    "url %s: scheme %.20s is not allowed; push notifications go to "
		                    "http:// or https:// URLs only",
		                    q, p->scheme);
	if (curl_url_get(h, CURLUPART_USER, &p->user, 0) == CURLUE_OK ||
	    curl_url_get(h, CURLUPART_PASSWORD, &p->password, 0) == CURLUE_OK)
		return th_error_set(
		    e, TH_EINVAL,
		    "url %s carries a user name or password (user:password@host), "
		    "which is not allowed; send credentials in authentication instead",
		    q);
	if (curl_url_get(h, CURLUPART_HOST, &p->host, 0) != CURLUE_OK || p->host == NULL ||
	    *p->host == '\0')
		return th_error_set(e, TH_EINVAL, "url %s has no host", q);
	if (curl_url_get(h, CURLUPART_ZONEID, &p->zone, 0) == CURLUE_OK ||
	    strchr(p->host, '%') != NULL)
		return th_error_set(e, TH_EINVAL,
		                    "url %s: host %.100s has an IPv6 zone or a percent-encoded "
		                    "character, which is not allowed",
		                    q, p->host);
	if (curl_url_get(h, CURLUPART_PORT, &p->port, CURLU_DEFAULT_PORT) != CURLUE_OK ||
	    p->port == NULL)
		return th_error_set(e, TH_EINVAL, "url %s has no usable port", q);
	*port = strtol(p->port, NULL, 10);
	if (*port <= 0 || *port > 65535)
		return th_error_set(e, TH_EINVAL, "url %s: port %.10s is out of range", q, p->port);
	return TH_OK;
}

/* host as getaddrinfo wants it (an IPv6 literal without its brackets) into bare. */
static th_err bare_host(const char *host, const char *q, char bare[256], struct th_error *e)
{
	size_t hn = strlen(host);
	if (host[0] == '[' && hn >= 2 && host[hn - 1] == ']' && hn - 2 < 256) {
		memcpy(bare, host + 1, hn - 2);
		bare[hn - 2] = '\0';
	} else if (hn < 256) {
		memcpy(bare, host, hn + 1);
	} else {
		return th_error_set(e, TH_EINVAL, "url %s: host name longer than 253 bytes", q);
	}
	return TH_OK;
}

th_err th_push_url_check(const char *url, int allow_private, struct th_push_target *out,
                         struct th_error *e)
{
	if (out != NULL)
		memset(out, 0, sizeof *out);
	th_err rc = check_text(url, e);
	if (rc != TH_OK)
		return rc;
	char q[160];
	quote(q, sizeof q, url);
	CURLU *h = curl_url();
	if (h == NULL)
		return th_error_set(e, TH_ENOMEM, "out of memory");
	struct parts p = {0};
	struct th_push_target t = {0};
	char bare[256];
	CURLUcode uc = curl_url_set(h, CURLUPART_URL, url, CURLU_NON_SUPPORT_SCHEME);
	if (uc != CURLUE_OK)
		rc = th_error_set(e, TH_EINVAL,
		                  "url %s is not an absolute http:// or https:// URL (%s)", q,
		                  curl_url_strerror(uc));
	if (rc == TH_OK && (rc = check_parts(h, q, &p, &t.port, e)) == TH_OK &&
	    (rc = bare_host(p.host, q, bare, e)) == TH_OK)
		rc = resolve_check(q, bare, p.host, t.port, allow_private, &t, e);
	if (rc == TH_OK && out != NULL) {
		if ((t.host = strdup(p.host)) == NULL) {
			rc = th_error_set(e, TH_ENOMEM, "out of memory");
		} else {
			*out = t;
			memset(&t, 0, sizeof t);
		}
	}
	if (rc != TH_OK && out != NULL)
		out->transient = t.transient;
	th_push_target_free(&t);
	parts_free(&p);
	curl_url_cleanup(h);
	return rc;
}
