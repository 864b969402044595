/* SPDX-License-Identifier: Apache-2.0 */
/* rest.c — the HTTP+JSON binding: the route table, path and query values turned
 * into the operation's params object, and the answer (A2A-1, A2A-4, LIM-2). The
 * google.rpc.Status error bodies come from errors.c, streams go to stream.c. */
#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "a2a/a2a.h"
#include "bind/bind.h"
#include "bind/bind_int.h"
#include "config/settings.h"
#include "util/jsonx.h"

enum { M_GET, M_HEAD, M_POST, M_DELETE, M_COUNT };
static const char *const method_names[M_COUNT] = {"GET", "HEAD", "POST", "DELETE"};

enum route_kind {
	R_SEND,
	R_STREAM,
	R_TASKS,
	R_TASK,
	R_CANCEL,
	R_SUBSCRIBE,
	R_PUSH_LIST,
	R_PUSH_ITEM,
	R_EXT_CARD,
	R_COUNT
};

#define NONE (-1)
/* The operation each method runs on each route; NONE = 405. SubscribeToTask takes
 * both verbs because the spec text says POST and the proto says GET. HEAD runs GET's
 * operation and sends its headers only, wherever GET answers with one document (not on
 * a stream). */
static const int route_ops[R_COUNT][M_COUNT] = {
    [R_SEND] = {NONE, NONE, TH_OP_SEND_MESSAGE, NONE},
    [R_STREAM] = {NONE, NONE, TH_OP_SEND_STREAMING_MESSAGE, NONE},
    [R_TASKS] = {TH_OP_LIST_TASKS, TH_OP_LIST_TASKS, NONE, NONE},
    [R_TASK] = {TH_OP_GET_TASK, TH_OP_GET_TASK, NONE, NONE},
    [R_CANCEL] = {NONE, NONE, TH_OP_CANCEL_TASK, NONE},
    [R_SUBSCRIBE] = {TH_OP_SUBSCRIBE_TO_TASK, NONE, TH_OP_SUBSCRIBE_TO_TASK, NONE},
    [R_PUSH_LIST] = {TH_OP_LIST_PUSH_CONFIGS, TH_OP_LIST_PUSH_CONFIGS, TH_OP_CREATE_PUSH_CONFIG,
                     NONE},
    [R_PUSH_ITEM] = {TH_OP_GET_PUSH_CONFIG, TH_OP_GET_PUSH_CONFIG, NONE, TH_OP_DELETE_PUSH_CONFIG},
    [R_EXT_CARD] = {TH_OP_GET_EXTENDED_CARD, TH_OP_GET_EXTENDED_CARD, NONE, NONE},
};

/* Query parameters each operation reads, camelCase (snake_case accepted too). */
static const char *const get_task_q[] = {"historyLength", NULL};
/* A2A-11-GEN-4: read only for a 1.1 client; a 1.0 request's query is what it was. */
static const char *const get_task_q11[] = {"currentGeneration", NULL};
static const char *const list_tasks_q[] = {
    "contextId",        "status", "pageSize", "pageToken", "historyLength", "statusTimestampAfter",
    "includeArtifacts", NULL};
static const char *const list_push_q[] = {"pageSize", "pageToken", NULL};

struct match {
	enum route_kind kind;
	const char *seg[4]; /* raw (still percent-encoded) path values */
	size_t seg_len[4];
	const char *tenant; /* TEN-1: the /{tenant} prefix, or NULL; not escaped (a tenant
	                       name needs no escape, th_tenant_ok) */
	size_t tenant_len;
};

static int seg_is(const char *s, size_t n, const char *lit)
{
	return strlen(lit) == n && memcmp(s, lit, n) == 0;
}

/* Matches the raw path. The ":cancel"/":subscribe" verbs live inside the last segment,
 * so they are split off before the segment can be taken for a task id (a2a-go #380).
 * A literal ':' in an id must be sent encoded (%3A). */
static int route_match(const char *path, struct match *m)
{
	const char *s[5];
	size_t n[5];
	int count = 0;
	if (path[0] != '/')
		return 0;
	const char *p = path + 1;
	for (;;) {
		if (count == 5)
			return 0;
		size_t k = strcspn(p, "/");
		s[count] = p;
		n[count] = k;
		count++;
		if (p[k] == '\0')
			break;
		p += k + 1;
	}
	for (int i = 0; i < count; i++)
		if (n[i] == 0)
			return 0;
	memset(m, 0, sizeof *m);
	if (count == 1) {
		if (seg_is(s[0], n[0], "message:send"))
			m->kind = R_SEND;
		else if (seg_is(s[0], n[0], "message:stream"))
			m->kind = R_STREAM;
		else if (seg_is(s[0], n[0], "tasks"))
			m->kind = R_TASKS;
		else if (seg_is(s[0], n[0], "extendedAgentCard"))
			m->kind = R_EXT_CARD;
		else
			return 0;
		return 1;
	}
	if (!seg_is(s[0], n[0], "tasks"))
		return 0;
	m->seg[0] = s[1];
	m->seg_len[0] = n[1];
	if (count == 2) {
		const char *colon = memchr(s[1], ':', n[1]);
		if (colon == NULL) {
			m->kind = R_TASK;
			return 1;
		}
		size_t idn = (size_t)(colon - s[1]);
		const char *verb = colon + 1;
		size_t vn = n[1] - idn - 1;
		if (idn == 0)
			return 0;
		if (seg_is(verb, vn, "cancel"))
			m->kind = R_CANCEL;
		else if (seg_is(verb, vn, "subscribe"))
			m->kind = R_SUBSCRIBE;
		else
			return 0;
		m->seg_len[0] = idn;
		return 1;
	}
	if (!seg_is(s[2], n[2], "pushNotificationConfigs"))
		return 0;
	if (count == 3) {
		m->kind = R_PUSH_LIST;
		return 1;
	}
	if (count == 4) {
		m->kind = R_PUSH_ITEM;
		m->seg[1] = s[3];
		m->seg_len[1] = n[3];
		return 1;
	}
	return 0;
}

/* TEN-1: a route, or "/{tenant}" and a route (A2A §5: every route also exists under a
 * tenant). The plain route wins: "tasks", "ui" and "extendedAgentCard" are no tenant's
 * name, and a tenant name has no ':'. */
static int route_match_tenant(const char *path, struct match *m)
{
	if (route_match(path, m))
		return 1;
	char t[TH_TENANT_MAX + 1];
	const char *rest = NULL;
	if (!th_bind_tenant_split(path, t, &rest) || !route_match(rest, m))
		return 0;
	m->tenant = path + 1;
	m->tenant_len = (size_t)(rest - m->tenant);
	return 1;
}

static th_err add_string(json_object *params, const char *key, const char *v, size_t n,
                         struct th_error *e)
{
	json_object *s = json_object_new_string_len(v, (int)n);
	if (s == NULL || json_object_object_add(params, key, s) != 0) {
		json_object_put(s);
		return th_error_set(e, TH_ENOMEM, "out of memory");
	}
	return TH_OK;
}

/* Path values are decoded and override whatever the body said (A2A §5). */
static th_err add_path_value(json_object *params, const char *key, const char *raw, size_t n,
                             struct th_error *e)
{
	char *v = th_http_pct_decode(raw, n);
	if (v == NULL) {
		char q[80];
		char *tmp = strndup(raw, n);
		th_bind_quote(q, sizeof q, tmp);
		free(tmp);
		return th_error_set(e, TH_EINVAL,
		                    "path value '%s' for %s has a bad percent escape or a NUL byte",
		                    q, key);
	}
	th_err rc = add_string(params, key, v, strlen(v), e);
	free(v);
	return rc;
}

static int is_ws(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

/* Empty, white space, or a literal null (what the Go client has sent for CancelTask).
 * null is matched here because th_json_parse cannot end a bare top-level literal. */
static int body_blank(const struct th_http_req *r)
{
	size_t a = 0, b = r->body_len;
	while (a < b && is_ws(r->body[a]))
		a++;
	while (b > a && is_ws(r->body[b - 1]))
		b--;
	return a == b || (b - a == 4 && memcmp(r->body + a, "null", 4) == 0);
}

/* The request message as the body gave it: an object, or a fresh one for an empty
 * body or a literal null (clients send both for CancelTask). */
static th_err body_params(struct th_bind_ctx *ctx, json_object **out, struct th_error *e)
{
	const struct th_config *cfg = ctx->app->cfg;
	*out = NULL;
	json_object *v = NULL;
	if (ctx->req->body != NULL && !body_blank(ctx->req)) {
		th_err rc =
		    th_json_parse(ctx->req->body, ctx->req->body_len, cfg->lim.json_depth, &v, e);
		if (rc != TH_OK)
			return rc;
	}
	if (v == NULL) {
		v = json_object_new_object();
		if (v == NULL)
			return th_error_set(e, TH_ENOMEM, "out of memory");
	}
	if (!json_object_is_type(v, json_type_object)) {
		json_object_put(v);
		return th_error_set(e, TH_EINVAL, "the request body must be a JSON object");
	}
	*out = v;
	return TH_OK;
}

static th_err build_params(struct th_bind_ctx *ctx, const struct match *m, int op,
                           json_object **out, struct th_error *e)
{
	th_err rc = body_params(ctx, out, e);
	if (rc != TH_OK)
		return rc;
	json_object *p = *out;
	const char *q = ctx->req->query;
	switch (m->kind) {
	case R_TASK:
	case R_CANCEL:
	case R_SUBSCRIBE:
		rc = add_path_value(p, "id", m->seg[0], m->seg_len[0], e);
		break;
	case R_PUSH_LIST:
		rc = add_path_value(p, "taskId", m->seg[0], m->seg_len[0], e);
		break;
	case R_PUSH_ITEM:
		rc = add_path_value(p, "taskId", m->seg[0], m->seg_len[0], e);
		if (rc == TH_OK)
			rc = add_path_value(p, "id", m->seg[1], m->seg_len[1], e);
		break;
	default:
		break;
	}
	/* TEN-1: the path's tenant wins over the body's (A2A §5). */
	if (rc == TH_OK && m->tenant != NULL)
		rc = add_string(p, "tenant", m->tenant, m->tenant_len, e);
	if (rc == TH_OK && op == TH_OP_GET_TASK)
		rc = th_bind_query_values(p, q, get_task_q, e);
	if (rc == TH_OK && op == TH_OP_GET_TASK && ctx->call.a2a_minor >= 1)
		rc = th_bind_query_values(p, q, get_task_q11, e);
	else if (rc == TH_OK && op == TH_OP_LIST_TASKS)
		rc = th_bind_query_values(p, q, list_tasks_q, e);
	else if (rc == TH_OK && op == TH_OP_LIST_PUSH_CONFIGS)
		rc = th_bind_query_values(p, q, list_push_q, e);
	if (rc != TH_OK) {
		json_object_put(p);
		*out = NULL;
	}
	return rc;
}

static int method_index(const char *method)
{
	for (int i = 0; i < M_COUNT; i++)
		if (strcmp(method, method_names[i]) == 0)
			return i;
	return -1;
}

static void not_found(struct th_bind_ctx *ctx)
{
	struct th_error e;
	char q[160], m[40];
	th_bind_quote(q, sizeof q, ctx->req->path);
	th_bind_quote(m, sizeof m, ctx->req->method);
	th_error_set(&e, TH_ENOMETHOD, "no A2A route for %s %s", m, q);
	e.task_id[0] = '\0';
	th_bind_rest_error(ctx, 404, &e);
}

/* SEC-4: every POST names a JSON type, an empty one (a cancel) included. A page on
 * another site can POST text/plain, a form or nothing without a CORS preflight; it
 * cannot send application/json. */
static int ctype_ok(const struct th_http_req *r)
{
	return th_bind_json_ctype(r->content_type);
}

/* CARD-SIG-3: the extended card is the served card, so it carries the card's ETag and a
 * client holding it gets 304 without a body. It stays no-store (SEC-4): the copy a
 * client revalidates is its own, never a shared cache's. 1 when the 304 was sent. */
static int ext_card_unchanged(struct th_bind_ctx *ctx)
{
	struct th_error e;
	th_error_clear(&e);
	const char *etag = NULL;
	if (th_service_card(ctx->app, &etag, &e) == NULL)
		return 0;
	th_buf_printf(&ctx->extra, "ETag: %s\r\n", etag);
	if (!th_bind_etag_matches(ctx->req->if_none_match, etag))
		return 0;
	th_bind_send(ctx, 304, NULL, NULL, 0);
	return 1;
}

/* The answer of a successful operation: result (owned; put here) as the body. */
static void send_result(struct th_bind_ctx *ctx, int op, json_object *result)
{
	if (op == TH_OP_GET_EXTENDED_CARD && ext_card_unchanged(ctx)) {
		json_object_put(result);
		return;
	}
	if (result == NULL) {
		/* DeleteTaskPushNotificationConfig answers Empty. */
		th_bind_send(ctx, 200, "application/a2a+json", "{}", 2);
		return;
	}
	th_bind_send_json(ctx, 200, "application/a2a+json", result);
}

/* 405 with the Allow line of the route m matched: no operation takes this method. */
static void not_allowed(struct th_bind_ctx *ctx, const struct match *m)
{
	struct th_http_req *r = ctx->req;
	struct th_error e;
	th_error_clear(&e);
	th_buf_puts(&ctx->extra, "Allow: ");
	int first = 1;
	for (int i = 0; i < M_COUNT; i++) {
		if (route_ops[m->kind][i] == NONE)
			continue;
		th_buf_printf(&ctx->extra, "%s%s", first ? "" : ", ", method_names[i]);
		first = 0;
	}
	th_buf_puts(&ctx->extra, "\r\n");
	char q[160], mn[40];
	th_bind_quote(q, sizeof q, r->path);
	th_bind_quote(mn, sizeof mn, r->method);
	th_error_set(&e, TH_EMETHOD, "%s is not allowed on %s", mn, q);
	th_bind_rest_error(ctx, 405, &e);
}

void th_bind_rest(struct th_bind_ctx *ctx)
{
	struct th_http_req *r = ctx->req;
	struct th_error e;
	th_error_clear(&e);
	struct match m;
	ctx->api = 1;
	ctx->binding = "rest";
	if (!r->in_base || !route_match_tenant(r->path, &m)) {
		not_found(ctx);
		return;
	}
	int mi = method_index(r->method);
	assert(m.kind >= 0 && (size_t)m.kind < sizeof route_ops / sizeof route_ops[0]);
	int op = mi >= 0 ? route_ops[m.kind][mi] : NONE;
	if (op == NONE) {
		not_allowed(ctx, &m);
		return;
	}
	ctx->head = mi == M_HEAD;
	ctx->mx_method = op;
	if (mi == M_POST) {
		if (!ctype_ok(r)) {
			char q[80];
			th_bind_quote(q, sizeof q, r->content_type);
			th_error_set(&e, TH_ECONTENTTYPE,
			             "Content-Type %s is not supported; send application/json or "
			             "application/a2a+json",
			             q);
			/* 415 is plain HTTP for a body we cannot read at all; the A2A table's 400
			 * is for part media types the agent refuses. */
			th_bind_rest_error(ctx, 415, &e);
			return;
		}
		th_err rc = th_http_read_body(r, ctx->io, ctx->app->cfg->lim.max_body, &e);
		if (rc != TH_OK) {
			th_bind_rest_error(ctx, 0, &e);
			return;
		}
	}
	if (th_bind_handoff(ctx, op)) /* HOST-2 */
		return;
	th_err rc = th_bind_check_headers(ctx, &e);
	json_object *params = NULL, *result = NULL;
	if (rc == TH_OK)
		rc = build_params(ctx, &m, op, &params, &e);
	if (rc == TH_OK)
		th_bind_log_request(op, params);
	if (rc == TH_OK && th_bind_is_stream_op(op)) {
		/* SSE from here on; errors before the first event still come back here. */
		rc = th_bind_stream(ctx, (enum th_op)op, params, NULL, &e);
		if (rc == TH_OK) {
			json_object_put(params);
			return;
		}
	}
	int parked = 0;
	if (rc == TH_OK && op == TH_OP_GET_TASK)
		rc = th_bind_get_task(ctx, params, NULL, &result, &parked, &e);
	else if (rc == TH_OK)
		rc = th_bind_service(ctx->app, &ctx->call, (enum th_op)op, params, &result, &e);
	json_object_put(params);
	if (rc == TH_OK && parked)
		return; /* the stream thread answers it (A2A-11-GEN-4) */
	if (rc != TH_OK) {
		json_object_put(result);
		th_bind_rest_error(ctx, 0, &e);
		return;
	}
	th_bind_note_result(op, result);
	send_result(ctx, op, result);
}
