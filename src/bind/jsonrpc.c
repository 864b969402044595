/* SPDX-License-Identifier: Apache-2.0 */
/* jsonrpc.c — the JSON-RPC 2.0 binding: POST to the base path, one request object
 * per body, every answer a JSON-RPC envelope with HTTP 200 except the HTTP-level
 * refusals (405 wrong method, 413 body over the limit) (A2A-1, A2A-4, LIM-2). The
 * envelope checks and the answer live here; missing or bad credentials are a 401 too
 * (SEC-1); the error body comes from errors.c,
 * streams go to stream.c. */
#include <string.h>

#include "bind/bind.h"
#include "bind/bind_int.h"
#include "config/settings.h"
#include "util/jsonx.h"

/* id is borrowed (NULL answers with id null). */
static void reply_error(struct th_bind_ctx *ctx, int status, json_object *id,
                        const struct th_error *e)
{
	ctx->outcome = e->code;
	json_object *o = th_bind_rpc_error(id, e);
	if (o == NULL) {
		th_bind_send_oom(ctx);
		return;
	}
	th_bind_retry_after(ctx, e);
	if (status == 200)
		status = th_bind_rpc_http_status(e->code);
	th_bind_send_json(ctx, status, "application/json", o);
}

/* Longest JSON text of a numeric id: any int64 or double fits; json-c keeps a double's
 * text as sent, so a 900 KB run of digits would otherwise ride along with every event of a
 * stream (SEC-3). */
#define RPC_NUMBER_ID_MAX 64

/* SEC-3: the id is echoed in every answer and kept, as text, by every parked stream; a
 * string id obeys max_id like every other id, a number its JSON text limit. */
static th_err check_id_size(json_object *v, int max_id, struct th_error *e)
{
	if (json_object_is_type(v, json_type_string)) {
		size_t n = (size_t)json_object_get_string_len(v);
		if (n > (size_t)max_id)
			return th_error_set(e, TH_EINVALREQ,
			                    "\"id\" is %zu bytes; the limit is %d (max_id)", n,
			                    max_id);
		return TH_OK;
	}
	size_t n = strlen(json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN));
	if (n > RPC_NUMBER_ID_MAX)
		return th_error_set(e, TH_EINVALREQ,
		                    "\"id\" is a number of %zu characters; the limit is %d", n,
		                    RPC_NUMBER_ID_MAX);
	return TH_OK;
}

/* Checks the envelope; on success *op and *params (borrowed, NULL when absent) are
 * set. *id is set (borrowed) as soon as it is known to be valid, so that later errors
 * can echo it. */
static th_err check_envelope(json_object *req, int max_id, json_object **id, int *op,
                             json_object **params, struct th_error *e)
{
	*id = NULL;
	*params = NULL;
	if (json_object_is_type(req, json_type_array))
		return th_error_set(e, TH_EINVALREQ,
		                    "batch requests (a JSON array) are not supported; send one "
		                    "request object per HTTP request");
	if (!json_object_is_type(req, json_type_object))
		return th_error_set(e, TH_EINVALREQ,
		                    "a JSON-RPC request must be a JSON object, not %s",
		                    th_json_type_name(req));
	json_object *v = NULL;
	if (!json_object_object_get_ex(req, "id", &v))
		return th_error_set(e, TH_EINVALREQ,
		                    "\"id\" is missing: notifications are not supported, every "
		                    "request needs an id");
	if (v != NULL && !json_object_is_type(v, json_type_string) &&
	    !json_object_is_type(v, json_type_int) && !json_object_is_type(v, json_type_double))
		return th_error_set(e, TH_EINVALREQ,
		                    "\"id\" must be a string, a number or null, not %s",
		                    th_json_type_name(v));
	if (v != NULL && check_id_size(v, max_id, e) != TH_OK)
		return e->code;
	*id = v;
	const char *ver = th_json_str(req, "jsonrpc");
	if (ver == NULL || strcmp(ver, "2.0") != 0) {
		if (ver == NULL)
			return th_error_set(e, TH_EINVALREQ,
			                    "\"jsonrpc\" must be the string \"2.0\"");
		char q[40];
		th_bind_quote(q, sizeof q, ver);
		return th_error_set(e, TH_EINVALREQ, "\"jsonrpc\" must be \"2.0\", not \"%s\"", q);
	}
	const char *method = th_json_str(req, "method");
	if (method == NULL)
		return th_error_set(e, TH_EINVALREQ,
		                    "\"method\" must be a string naming the operation");
	*op = th_op_from_method(method);
	if (*op < 0) {
		char q[80];
		th_bind_quote(q, sizeof q, method);
		return th_error_set(e, TH_ENOMETHOD, "method '%s' not found", q);
	}
	if (json_object_object_get_ex(req, "params", &v) && v != NULL) {
		if (!json_object_is_type(v, json_type_object))
			return th_error_set(e, TH_EINVAL, "\"params\" must be an object, not %s",
			                    th_json_type_name(v));
		*params = v;
	}
	return TH_OK;
}

/* The success envelope carrying id (borrowed) and result (consumed; NULL: null). */
static void reply_result(struct th_bind_ctx *ctx, json_object *id, json_object *result)
{
	json_object *o = json_object_new_object();
	if (o == NULL) {
		json_object_put(result);
		th_bind_send_oom(ctx);
		return;
	}
	int bad = th_json_put(o, "jsonrpc", json_object_new_string("2.0"));
	/* The same id, the same JSON type: json-c keeps the parsed value as it was. */
	bad |= th_json_put_null(o, "id", json_object_get(id));
	bad |= th_json_put_null(o, "result", result); /* NULL: a JSON null result */
	if (bad) {
		json_object_put(o);
		th_bind_send_oom(ctx); /* decision-026 */
		return;
	}
	th_bind_send_json(ctx, 200, "application/json", o);
}

void th_bind_jsonrpc(struct th_bind_ctx *ctx)
{
	struct th_http_req *r = ctx->req;
	const struct th_config *cfg = ctx->app->cfg;
	struct th_error e;
	th_error_clear(&e);
	ctx->api = 1;
	ctx->binding = "jsonrpc";

	if (strcmp(r->method, "POST") != 0) {
		char m[40];
		th_bind_quote(m, sizeof m, r->method);
		th_buf_puts(&ctx->extra, "Allow: POST\r\n");
		th_error_set(&e, TH_EMETHOD, "JSON-RPC requests are sent with POST, not %s", m);
		reply_error(ctx, 405, NULL, &e);
		return;
	}
	if (!th_bind_json_ctype(r->content_type)) {
		char q[80];
		th_bind_quote(q, sizeof q, r->content_type);
		th_error_set(&e, TH_ECONTENTTYPE,
		             "Content-Type %s is not supported; send application/json", q);
		reply_error(ctx, 200, NULL, &e);
		return;
	}
	th_err rc = th_http_read_body(r, ctx->io, cfg->lim.max_body, &e);
	if (rc != TH_OK) {
		reply_error(ctx,
		            rc == TH_ETOOLARGE || rc == TH_ELENGTH ? th_bind_http_status(rc) : 200,
		            NULL, &e);
		return;
	}
	json_object *req = NULL;
	rc = th_json_parse(r->body, r->body_len, cfg->lim.json_depth, &req, &e);
	if (rc != TH_OK) {
		reply_error(ctx, 200, NULL, &e);
		return;
	}
	json_object *id = NULL, *params = NULL;
	int op = -1;
	rc = check_envelope(req, cfg->lim.max_id, &id, &op, &params, &e);
	if (rc == TH_OK) {
		ctx->mx_method = op;
		if (th_bind_handoff(ctx, op)) { /* HOST-2 */
			json_object_put(req);
			return;
		}
		th_bind_log_request(op, params);
	}
	if (rc == TH_OK)
		rc = th_bind_check_headers(ctx, &e);
	if (rc == TH_OK && th_bind_is_stream_op(op)) {
		/* SSE from here on; errors before the first event still come back here. */
		rc = th_bind_stream(ctx, (enum th_op)op, params, id, &e);
		if (rc == TH_OK) {
			json_object_put(req);
			return;
		}
	}
	json_object *result = NULL;
	int parked = 0;
	if (rc == TH_OK && op == TH_OP_GET_TASK)
		rc = th_bind_get_task(ctx, params, id, &result, &parked, &e);
	else if (rc == TH_OK)
		rc = th_bind_service(ctx->app, &ctx->call, (enum th_op)op, params, &result, &e);
	if (rc != TH_OK) {
		json_object_put(result);
		reply_error(ctx, 200, id, &e);
	} else if (!parked) { /* parked: the stream thread answers it (A2A-11-GEN-4) */
		th_bind_note_result(op, result);
		reply_result(ctx, id, result);
	}
	json_object_put(req);
}
