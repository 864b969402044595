/* SPDX-License-Identifier: Apache-2.0 */
/* request.c — the steps of one request that both bindings share: the header checks
 * every A2A request goes through (A2A-3 version, EXT-1/EXT-2 extensions, ID-1
 * participant), the SEC-1 peer rule of the header mode, the Content-Type test, quoting client input
 * into error messages, the operation runner (th_bind_service), the If-None-Match test (the card's
 * and the web app's ETags), and the writers of the whole response. It calls no other file in
 * src/bind. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <strings.h>

#include "bind/bind_int.h"
#include "config/settings.h"
#include "domain/ext.h"
#include "ops/auth.h"
#include "ops/ops.h"
#include "domain/access.h"
#include "util/jsonx.h"
#include "util/log.h"
#include "util/idrule.h"
#include "util/ids.h"
#include "util/netaddr.h"
#include "util/rate.h"

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

int th_bind_tenant_split(const char *path, char t[TH_TENANT_MAX + 1], const char **rest)
{
	if (path[0] != '/')
		return 0;
	size_t k = strcspn(path + 1, "/");
	if (path[1 + k] != '/' || !th_tenant_ok(path + 1, k))
		return 0;
	memcpy(t, path + 1, k); /* k <= TH_TENANT_MAX: th_tenant_ok */
	t[k] = '\0';
	*rest = path + 1 + k;
	return 1;
}

static char *camel_to_snake(const char *s)
{
	size_t n = strlen(s);
	char *out = malloc(2 * n + 1);
	if (out == NULL)
		return NULL;
	size_t j = 0;
	for (size_t i = 0; i < n; i++) {
		if (s[i] >= 'A' && s[i] <= 'Z') {
			out[j++] = '_';
			out[j++] = (char)(s[i] - 'A' + 'a');
		} else {
			out[j++] = s[i];
		}
	}
	out[j] = '\0';
	return out;
}

/* The a2a decoders take query values as strings ("10", "true"). */
th_err th_bind_query_values(json_object *params, const char *query, const char *const *names,
                            struct th_error *e)
{
	for (; names != NULL && *names != NULL; names++) {
		char *v = NULL;
		int found = th_http_query_lookup(query, *names, &v);
		if (found == 0) {
			char *snake = camel_to_snake(*names);
			if (snake == NULL)
				return th_error_set(e, TH_ENOMEM, "out of memory");
			found = th_http_query_lookup(query, snake, &v);
			free(snake);
		}
		if (found == -2)
			return th_error_set(e, TH_ENOMEM, "out of memory");
		if (found == -1)
			return th_error_set(
			    e, TH_EINVAL,
			    "query parameter %s has a bad percent escape or a NUL byte", *names);
		if (found == 1) {
			json_object *s = json_object_new_string(v);
			free(v);
			if (s == NULL || json_object_object_add(params, *names, s) != 0) {
				json_object_put(s);
				return th_error_set(e, TH_ENOMEM, "out of memory");
			}
		}
	}
	return TH_OK;
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

/* "M.m" or "M.m.<digits>" for a supported M.m: a patch number must not affect
 * negotiation (A2A §7.1), so 1.0.x is 1.0. */
static int version_is(const char *v, const char *mm)
{
	if (v == NULL || strncmp(v, mm, 3) != 0)
		return 0;
	if (v[3] == '\0')
		return 1;
	return v[3] == '.' && v[4] != '\0' && strspn(v + 4, "0123456789") == strlen(v + 4);
}

th_err th_bind_check_version(const char *v, int *minor, struct th_error *e)
{
	*minor = 0;
	if (version_is(v, "1.0"))
		return TH_OK;
	/* A2A-11-GEN-1: the 1.1 draft's generation is served to a client that asks for
	 * 1.1; everything else about 1.1 is answered as 1.0 (decision-073). */
	if (version_is(v, "1.1")) {
		*minor = 1;
		return TH_OK;
	}
	char q[80];
	th_bind_quote(q, sizeof q, v);
	if (v == NULL)
		return th_error_set(e, TH_EVERSION,
		                    "A2A version (none) is not supported: a request without "
		                    "A2A-Version means 0.3; send the header A2A-Version: 1.0 "
		                    "(supported: 1.0, 1.1)");
	return th_error_set(e, TH_EVERSION,
	                    "A2A version '%s' is not supported; supported: 1.0, 1.1", q);
}

/* SEC-1: with identity = bearer the participant is whoever the Authorization header's
 * credential names, and nothing else: X-Participant-Id and anonymous_participant do not
 * count. Missing or bad credentials are a 401 whose WWW-Authenticate (RFC 6750 §3) says
 * invalid_token only when a token was sent. */
static th_err bearer_identity(struct th_bind_ctx *ctx, struct th_error *e)
{
	const char *h = ctx->req->authorization;
	th_err rc;
	if (h == NULL || strncasecmp(h, "Bearer ", 7) != 0) {
		rc = th_error_set(e, TH_EUNAUTHENTICATED,
		                  "authentication required: send Authorization: Bearer <token> "
		                  "(a JWT or an API key)");
		th_buf_puts(&ctx->extra, "WWW-Authenticate: Bearer realm=\"tiny-harness\"\r\n");
		return rc;
	}
	const char *token = h + 7;
	while (*token == ' ')
		token++;
	rc = *token == '\0'
	         ? th_error_set(e, TH_EUNAUTHENTICATED, "bearer token refused: the token is empty")
	         : th_auth_bearer(ctx->app->store, ctx->app->cfg, token, ctx->who, sizeof ctx->who,
	                          e);
	if (rc == TH_EUNAUTHENTICATED)
		th_buf_puts(&ctx->extra, "WWW-Authenticate: Bearer realm=\"tiny-harness\", "
		                         "error=\"invalid_token\"\r\n");
	if (rc != TH_OK)
		return rc;
	ctx->call.participant = ctx->who;
	if (strcmp(ctx->who, TH_AGENT_ID) == 0)
		return th_error_set(
		    e, TH_EUNAUTHENTICATED,
		    "the credential names '%s', the agent's own id; a client cannot "
		    "speak as it",
		    TH_AGENT_ID);
	return TH_OK;
}

/* SEC-1: X-Participant-Id is whatever the client wrote, so it is believed only from a
 * peer the operator vouches for: this machine, or a proxy named in trusted_proxies that
 * authenticates. Behind a web server REMOTE_ADDR is the client as that server saw it;
 * a request without one (which CGI/1.1 never sends) is not trusted either. */
th_err th_bind_check_peer(const struct th_bind_ctx *ctx, struct th_error *e)
{
	if (ctx->app->cfg->identity != TH_IDENTITY_HEADER)
		return TH_OK;
	const char *addr = ctx->req->remote_addr;
	if (th_addr_is_loopback(addr) || th_addr_in_list(addr, ctx->app->cfg->trusted_proxies))
		return TH_OK;
	char q[64];
	th_bind_quote(q, sizeof q, addr);
	return th_error_set(e, TH_EFORBIDDEN,
	                    "identity = header serves only loopback and the addresses in "
	                    "trusted_proxies, and the client address %s is neither (SEC-1); the "
	                    "operator sets identity = remote_user or adds a proxy that "
	                    "authenticates to trusted_proxies",
	                    q);
}

/* SEC-3: one token of the sender's bucket per API request; a request without a sender is
 * counted by its client address, so that leaving the header out does not escape it. */
static th_err check_rate(struct th_bind_ctx *ctx, struct th_error *e)
{
	const struct th_config *cfg = ctx->app->cfg;
	if (cfg->rate_limit_rps <= 0)
		return TH_OK;
	char key[TH_ID_BUF];
	const char *addr = ctx->req->remote_addr;
	if (ctx->call.participant != NULL)
		snprintf(key, sizeof key, "p:%s", ctx->call.participant);
	else
		snprintf(key, sizeof key, "a:%s", addr != NULL ? addr : "");
	int64_t wait = th_rate_take(key, cfg->rate_limit_rps, cfg->rate_limit_burst, th_mono_ms());
	if (wait == 0)
		return TH_OK;
	ctx->retry_after = (int)((wait + 999) / 1000);
	char q[80];
	th_bind_quote(q, sizeof q, ctx->call.participant != NULL ? ctx->call.participant : addr);
	return th_error_set(e, TH_ETOOMANY,
	                    "%s is over its request rate of %d per second (rate_limit_rps, "
	                    "burst rate_limit_burst = %d); retry after %d s",
	                    q, cfg->rate_limit_rps, cfg->rate_limit_burst, ctx->retry_after);
}

/* A2A-11-IDEM-1: an Idempotency-Key is 1 to TH_IDEM_KEY_MAX visible ASCII characters
 * (the header's value is an opaque string the client chose). */
#define TH_IDEM_KEY_MAX 255
static th_err check_idempotency_key(struct th_bind_ctx *ctx, struct th_error *e)
{
	const char *k = ctx->req->idempotency_key;
	ctx->call.idempotency_key = NULL;
	ctx->call.replayed = &ctx->replayed;
	if (k == NULL)
		return TH_OK;
	size_t n = strlen(k);
	int visible = n > 0 && n <= TH_IDEM_KEY_MAX;
	for (size_t i = 0; visible && i < n; i++)
		visible = k[i] > 0x20 && k[i] < 0x7f;
	if (!visible) {
		char q[80];
		th_bind_quote(q, sizeof q, k);
		return th_error_set(e, TH_EINVAL,
		                    "Idempotency-Key '%s' (%zu bytes) refused: a key is 1 to %d "
		                    "visible ASCII characters, no spaces",
		                    q, n, TH_IDEM_KEY_MAX);
	}
	ctx->call.idempotency_key = k;
	return TH_OK;
}

th_err th_bind_check_headers(struct th_bind_ctx *ctx, struct th_error *e)
{
	if (ctx->req->version == NULL && ctx->req->version_in_query) {
		char m[40];
		th_bind_quote(m, sizeof m, ctx->req->method);
		return th_error_set(
		    e, TH_EVERSION,
		    "A2A-Version in the query string does not count for %s (SEC-4: a "
		    "request that can change state names it in a header); send "
		    "the header A2A-Version: 1.0",
		    m);
	}
	th_err rc = th_bind_check_version(ctx->req->version, &ctx->call.a2a_minor, e);
	if (rc == TH_OK)
		rc = check_idempotency_key(ctx, e);
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
	return th_bind_identify(ctx, e);
}

/* The participant copied into ctx->who: the request's parameters it points into go
 * with the FastCGI request once its answer is finished, and the request's log line
 * (OBS-1) reads it after that. An id too long for the copy was refused; it is dropped. */
static void keep_participant(struct th_bind_ctx *ctx)
{
	const char *p = ctx->call.participant;
	if (p == NULL || p == ctx->who)
		return;
	if (strlen(p) >= sizeof ctx->who) {
		ctx->call.participant = NULL;
		return;
	}
	snprintf(ctx->who, sizeof ctx->who, "%s", p);
	ctx->call.participant = ctx->who;
}

th_err th_bind_identify(struct th_bind_ctx *ctx, struct th_error *e)
{
	th_err rc;
	const struct th_config *cfg = ctx->app->cfg;
	if (cfg->identity == TH_IDENTITY_BEARER) {
		rc = bearer_identity(ctx, e);
		return rc != TH_OK ? rc : check_rate(ctx, e);
	}
	/* ID-1: behind an authenticating web server only REMOTE_USER counts; a client-
	 * chosen header must not be able to impersonate anyone there. */
	const char *who = cfg->identity == TH_IDENTITY_REMOTE_USER ? ctx->req->remote_user
	                                                           : ctx->req->participant;
	const char *source =
	    cfg->identity == TH_IDENTITY_REMOTE_USER ? "REMOTE_USER" : "X-Participant-Id";
	/* An opt-in for clients that know no X-Participant-Id (docs/bindings.md): a request
	 * without one acts as the configured participant. */
	if ((who == NULL || who[0] == '\0') && cfg->identity == TH_IDENTITY_HEADER &&
	    cfg->anonymous_participant != NULL && cfg->anonymous_participant[0] != '\0') {
		who = cfg->anonymous_participant;
		source = "anonymous_participant";
	}
	ctx->call.participant = who != NULL && who[0] != '\0' ? who : NULL;
	/* ID-6: participant ids obey max_id and the id rule, and nobody speaks as the
	 * agent itself. */
	rc = TH_OK;
	if (ctx->call.participant != NULL)
		rc = th_id_check(ctx->call.participant, strlen(ctx->call.participant),
		                 (size_t)cfg->lim.max_id, source, e);
	if (rc == TH_OK && ctx->call.participant != NULL &&
	    strcmp(ctx->call.participant, TH_AGENT_ID) == 0)
		rc = th_error_set(e, TH_EINVAL,
		                  "%s '%s' is the agent's own id; a client cannot speak as it",
		                  source, TH_AGENT_ID);
	keep_participant(ctx);
	return rc != TH_OK ? rc : check_rate(ctx, e);
}

void th_bind_retry_after(struct th_bind_ctx *ctx, const struct th_error *e)
{
	if (e->code == TH_EBUSY || e->code == TH_EUNAVAILABLE || e->code == TH_ETOOMANY)
		th_buf_printf(&ctx->extra, "Retry-After: %d\r\n",
		              ctx->retry_after > 0 ? ctx->retry_after : 1);
}

/* If-None-Match is "*" or a comma-separated list of entity tags, possibly weak
 * (W/"…"); weak comparison applies to GET (RFC 9110 §13.1.2). */
int th_bind_etag_matches(const char *inm, const char *etag)
{
	if (inm == NULL)
		return 0;
	if (etag[0] == 'W' && etag[1] == '/') /* a weak tag of ours: compared weakly too */
		etag += 2;
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

void th_bind_send_oom(struct th_bind_ctx *ctx)
{
	ctx->status = 500;
	ctx->outcome = TH_ENOMEM;
	static const char body[] =
	    "{\"error\":{\"code\":500,\"status\":\"INTERNAL\",\"message\":\"out of memory\"}}";
	th_http_respond(ctx->io, 500, "application/json", "Cache-Control: no-store\r\n", body,
	                sizeof body - 1);
}

void th_bind_mark_replay(struct th_bind_ctx *ctx)
{
	if (ctx->replayed) {
		th_buf_puts(&ctx->extra, "Idempotent-Replayed: true\r\n");
		ctx->replayed = 0; /* once */
	}
}

void th_bind_send(struct th_bind_ctx *ctx, int status, const char *ctype, const char *body,
                  size_t len)
{
	/* API answers are per participant and change with every event: no cache, shared or
	 * private, may keep one (SEC-4). */
	if (ctx->api &&
	    (ctx->extra.data == NULL || strstr(ctx->extra.data, "Cache-Control:") == NULL))
		th_buf_puts(&ctx->extra, "Cache-Control: no-store\r\n");
	th_bind_mark_replay(ctx);
	if (ctx->extra.oom) {
		th_bind_send_oom(ctx);
		return;
	}
	ctx->status = status;
	const char *extra = ctx->extra.len > 0 ? ctx->extra.data : NULL;
	if (ctx->head)
		th_http_respond_head(ctx->io, status, ctype, extra, len);
	else
		th_http_respond(ctx->io, status, ctype, extra, body, len);
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

void th_bind_log_request(int op, json_object *params)
{
	json_object *msg = json_object_object_get(params, "message");
	const char *task = th_json_str(params, "id");
	if (task == NULL)
		task = th_json_str(msg, "taskId");
	th_log_request(op >= 0 ? th_op_method((enum th_op)op) : NULL, task);
}

void th_bind_note_result(int op, json_object *result)
{
	if (op != TH_OP_SEND_MESSAGE || th_log_ctx_self()->task[0] != '\0')
		return;
	const char *id = th_json_str(json_object_object_get(result, "task"), "id");
	if (id != NULL)
		th_log_request(th_op_method((enum th_op)op), id);
}

int th_bind_http_date(time_t t, char *out, size_t n)
{
	/* RFC 9110's IMF-fixdate, in English whatever the locale (strftime's %a and %b are the
	 * locale's) and without reading the time zone file. */
	static const char days[7][4] = {"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"};
	static const char months[12][4] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
	                                   "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
	struct th_utc u;
	th_utc_split((int64_t)t, &u);
	if (u.year < 0 || u.year > 9999)
		return 0;
	int len = snprintf(out, n, "%s, %02d %s %04d %02d:%02d:%02d GMT", days[u.wday], u.mday,
	                   months[u.mon - 1], (int)u.year, u.hour, u.min, u.sec);
	return len > 0 && (size_t)len < n;
}
