/* SPDX-License-Identifier: Apache-2.0 */
/* bind.c — the router and the agent card: one request goes to the card (CARD-1, with
 * its cache headers), to the web app (web.c: a browser's GET of the base URL and
 * everything under <base>ui/, WEB-1), to the metrics (metrics.c) or the caller's push dead
 * letters (deadletters.c), to the JSON-RPC endpoint (jsonrpc.c) or to the HTTP+JSON routes
 * (rest.c). The top of src/bind: nothing in the other files calls back into it. */
#include "bind/bind.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "a2a/a2a.h"
#include "bind/bind_int.h"
#include "config/settings.h"
#include "util/log.h"

#define CARD_PATH "/.well-known/agent-card.json"

/* Last-Modified of the card (RFC 9110 §8.8.2): the card is made from the program and
 * its configuration file, so it changed last when the newer of the two did. Every worker
 * of one installation gives the same date. Neither changes while a process runs, so the
 * date is read once (two stat calls), not on every card request. 0 when neither can be
 * read. */
static int card_modified(const struct th_app *app, char *out, size_t n)
{
	/* A worker's request threads share the date: the first to serve a card reads it. */
	static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
	static char date[40];
	static int read_once;
	pthread_mutex_lock(&mu);
	if (!read_once) {
		read_once = 1;
		struct stat sb;
		time_t t = 0;
		if (stat("/proc/self/exe", &sb) == 0)
			t = sb.st_mtime;
		const char *conf = app != NULL && app->cfg != NULL ? app->cfg->source : NULL;
		if (conf != NULL && stat(conf, &sb) == 0 && sb.st_mtime > t)
			t = sb.st_mtime;
		if (t == 0 || !th_bind_http_date(t, date, sizeof date))
			date[0] = '\0';
	}
	snprintf(out, n, "%s", date);
	int have = date[0] != '\0';
	pthread_mutex_unlock(&mu);
	return have;
}

/* CARD-1, CARD-SIG-3: the card with its validators; If-None-Match naming its ETag gets
 * 304 and no body. */
static void serve_card(struct th_bind_ctx *ctx)
{
	struct th_error e;
	th_error_clear(&e);
	if (!th_bind_get_or_head(ctx, "the agent card"))
		return;
	const char *etag = NULL;
	const char *text = th_service_card(ctx->app, &etag, &e);
	if (text == NULL) {
		th_bind_rest_error(ctx, 500, &e);
		return;
	}
	th_buf_printf(&ctx->extra, "Cache-Control: public, max-age=300\r\nETag: %s\r\n", etag);
	char lm[40];
	if (card_modified(ctx->app, lm, sizeof lm))
		th_buf_printf(&ctx->extra, "Last-Modified: %s\r\n", lm);
	if (th_bind_etag_matches(ctx->req->if_none_match, etag))
		th_bind_send(ctx, 304, NULL, NULL, 0);
	else
		th_bind_send(ctx, 200, "application/json", text, strlen(text));
}

/* The web app's path: "/ui" or "/ui/…". */
static int ui_path(const char *path)
{
	return strcmp(path, "/ui") == 0 || strncmp(path, "/ui/", 4) == 0;
}

/* TEN-6: a tenant's card is the agent's card with every interface naming the tenant (so
 * a client puts it in every request: params.tenant, or the REST path's /{tenant}/), the
 * tenant's card name and description from the tenants key when it gives them, and no
 * signatures (they sign the agent's own card, not this one). Its ETag is the card's,
 * with the tenant. A tenant that is not served is 404. */
static void serve_tenant_card(struct th_bind_ctx *ctx, const char *tenant)
{
	struct th_error e;
	th_error_clear(&e);
	if (!th_bind_get_or_head(ctx, "the agent card"))
		return;
	const char *name = NULL, *desc = NULL;
	size_t nl = 0, dl = 0;
	if (!th_config_tenant(ctx->app->cfg, tenant, &name, &nl, &desc, &dl)) {
		th_error_set(&e, TH_ENOTFOUND, "tenant '%s' is not served here", tenant);
		th_bind_rest_error(ctx, 404, &e);
		return;
	}
	const char *etag = NULL;
	const char *text = th_service_card(ctx->app, &etag, &e);
	json_object *card = text != NULL ? json_tokener_parse(text) : NULL;
	json_object *ifs = NULL;
	int bad = card == NULL;
	if (!bad && json_object_object_get_ex(card, "supportedInterfaces", &ifs))
		for (size_t i = 0; i < json_object_array_length(ifs); i++)
			bad |= json_object_object_add(json_object_array_get_idx(ifs, i), "tenant",
			                              json_object_new_string(tenant)) != 0;
	if (!bad && nl > 0)
		bad |= json_object_object_add(card, "name",
		                              json_object_new_string_len(name, (int)nl)) != 0;
	if (!bad && dl > 0)
		bad |= json_object_object_add(card, "description",
		                              json_object_new_string_len(desc, (int)dl)) != 0;
	if (!bad)
		json_object_object_del(card, "signatures");
	if (bad) {
		json_object_put(card);
		if (text != NULL)
			th_error_set(&e, TH_ENOMEM, "out of memory building tenant %s's card",
			             tenant);
		th_bind_rest_error(ctx, 500, &e);
		return;
	}
	/* The card's tag, quotes and W/ kept, with "-<tenant>" inside the quotes. */
	size_t el = strlen(etag);
	char tag[256];
	snprintf(tag, sizeof tag, "%.*s-%s\"", el > 0 ? (int)el - 1 : 0, etag, tenant);
	th_buf_printf(&ctx->extra, "Cache-Control: public, max-age=300\r\nETag: %s\r\n", tag);
	if (th_bind_etag_matches(ctx->req->if_none_match, tag)) {
		json_object_put(card);
		th_bind_send(ctx, 304, NULL, NULL, 0);
		return;
	}
	th_bind_send_json(ctx, 200, "application/json", card);
}

void th_bind_serve(struct th_app *app, struct th_http_io *io)
{
	struct th_http_req req;
	struct th_error e;
	th_error_clear(&e);
	struct th_bind_ctx ctx;
	char tenant[TH_TENANT_MAX + 1];
	memset(&ctx, 0, sizeof ctx);
	int64_t start_us = th_bind_now_us();
	ctx.mx_method = TH_BIND_MX_UNKNOWN;
	ctx.binding = "http";
	ctx.app = app;
	ctx.io = io;
	ctx.req = &req;
	th_buf_init(&ctx.extra);
	const char *base = app != NULL && app->cfg != NULL && app->cfg->base_path != NULL
	                       ? app->cfg->base_path
	                       : "/";
	if (th_http_req_init(&req, io, base, &e) != TH_OK) {
		th_bind_send_oom(&ctx);
		th_bind_request_done(&ctx, start_us); /* OBS-1: a refused request has its line */
		th_log_request(NULL, NULL);
		return;
	}
	/* TEN-1: a path under a tenant, split once for every route that has one. */
	const char *rest = NULL;
	int tenanted = th_bind_tenant_split(req.path, tenant, &rest);
	int card = strcmp(req.path, CARD_PATH) == 0;
	int tenant_card = tenanted && strcmp(rest, CARD_PATH) == 0;
	if (app == NULL || app->cfg == NULL) {
		th_error_set(&e, TH_EINTERNAL, "the server is not configured");
		th_bind_rest_error(&ctx, 500, &e);
	} else if (th_bind_check_origin(&ctx, &e) != TH_OK) {
		/* Before any route: a rebinding page must not even read the card or the app. */
		ctx.api = 1;
		th_bind_rest_error(&ctx, 0, &e);
	} else if (!card && !tenant_card && th_bind_check_peer(&ctx, &e) != TH_OK) {
		/* Only the card is public; what else a peer outside the header mode's
		 * perimeter could read or do would be as someone it merely names. */
		ctx.api = 1;
		th_bind_rest_error(&ctx, 0, &e);
	} else if (card) {
		/* Served both under the base path and, when the base is deeper, at the origin
		 * root where RFC 8615 puts it. */
		ctx.mx_method = TH_BIND_MX_CARD;
		serve_card(&ctx);
	} else if (req.in_base && strcmp(req.path, "/metrics") == 0) {
		ctx.mx_method = TH_BIND_MX_METRICS;
		th_bind_metrics(&ctx);
	} else if (tenant_card) {
		ctx.mx_method = TH_BIND_MX_CARD;
		serve_tenant_card(&ctx, tenant);
	} else if (req.in_base && (th_bind_dead_letters_path(req.path) ||
	                           (tenanted && th_bind_dead_letters_path(rest)))) {
		ctx.mx_method = TH_BIND_MX_DEAD_LETTERS; /* RET-4 */
		th_bind_dead_letters(&ctx, tenanted ? tenant : NULL);
	} else if (req.in_base && strcmp(req.path, "/") == 0) {
		/* A browser asking for the page (WEB-1); POST and every JSON client go on to
		 * JSON-RPC unchanged. */
		if ((strcmp(req.method, "GET") == 0 || strcmp(req.method, "HEAD") == 0) &&
		    th_bind_web_prefers_html(th_http_param(io, "HTTP_ACCEPT"))) {
			ctx.mx_method = TH_BIND_MX_WEB;
			th_bind_web_redirect(&ctx);
		} else
			th_bind_jsonrpc(&ctx);
	} else if (req.in_base && (ui_path(req.path) || (tenanted && ui_path(rest)))) {
		ctx.mx_method = TH_BIND_MX_WEB;
		ctx.web_tenant = tenanted ? tenant : NULL; /* TEN-8 */
		th_bind_web(&ctx);
	} else {
		th_bind_rest(&ctx);
	}
	th_bind_request_done(&ctx, start_us); /* OBS-1, OBS-2 */
	th_http_req_free(&req);
	th_buf_free(&ctx.extra);
	th_log_request(NULL, NULL);
}
