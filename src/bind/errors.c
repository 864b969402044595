/* SPDX-License-Identifier: Apache-2.0 */
/* errors.c — the one table from th_err to what each binding says (A2A-4): the
 * JSON-RPC code, the HTTP status and google.rpc status name of the HTTP+JSON binding
 * (the v1.0.1 column of the A2A error table), and the ErrorInfo reason; then every
 * error body built from it: the client-facing message, the ErrorInfo detail, a
 * JSON-RPC error response, a google.rpc.Status body and the HTTP+JSON error response.
 * Both bindings and stream.c take their error bodies from here. */
#include "bind/bind.h"
#include "bind/bind_int.h"

#include <stdio.h>
#include <string.h>

#include "util/jsonx.h"

struct row {
	int rpc;
	int http;
	const char *grpc;
	const char *reason; /* "" when the error has no ErrorInfo */
};

static const struct row table[] = {
    [TH_OK] = {0, 200, "OK", ""},
    [TH_ENOMEM] = {-32603, 500, "INTERNAL", ""},
    [TH_EPARSE] = {-32700, 400, "INVALID_ARGUMENT", ""},
    [TH_EINVALREQ] = {-32600, 400, "INVALID_ARGUMENT", ""},
    [TH_ENOMETHOD] = {-32601, 404, "NOT_FOUND", ""},
    /* There is no gRPC code for a wrong HTTP verb; UNIMPLEMENTED is the nearest
     * ("this resource does not implement that method"). */
    [TH_EMETHOD] = {-32600, 405, "UNIMPLEMENTED", ""},
    [TH_EINVAL] = {-32602, 400, "INVALID_ARGUMENT", "INVALID_PARAMS"},
    [TH_ENOTFOUND] = {-32001, 404, "NOT_FOUND", "TASK_NOT_FOUND"},
    [TH_ENOTCANCELABLE] = {-32002, 400, "FAILED_PRECONDITION", "TASK_NOT_CANCELABLE"},
    [TH_EPUSHUNSUPPORTED] = {-32003, 400, "FAILED_PRECONDITION", "PUSH_NOTIFICATION_NOT_SUPPORTED"},
    [TH_EUNSUPPORTED] = {-32004, 400, "FAILED_PRECONDITION", "UNSUPPORTED_OPERATION"},
    [TH_ECONTENTTYPE] = {-32005, 400, "INVALID_ARGUMENT", "CONTENT_TYPE_NOT_SUPPORTED"},
    [TH_EEXTCARD] = {-32007, 400, "FAILED_PRECONDITION", "EXTENDED_AGENT_CARD_NOT_CONFIGURED"},
    [TH_EEXTREQUIRED] = {-32008, 400, "FAILED_PRECONDITION", "EXTENSION_SUPPORT_REQUIRED"},
    [TH_EVERSION] = {-32009, 400, "FAILED_PRECONDITION", "VERSION_NOT_SUPPORTED"},
    /* A body over the limit is refused before it is read, so it cannot be a request
     * at all: Invalid Request on JSON-RPC, 413 on HTTP. */
    [TH_ETOOLARGE] = {-32600, 413, "INVALID_ARGUMENT", ""},
    [TH_EBUSY] = {-32603, 503, "UNAVAILABLE", ""},
    [TH_EINTERNAL] = {-32603, 500, "INTERNAL", ""},
    /* A chunked body arrives without CONTENT_LENGTH; we read only announced lengths. */
    [TH_ELENGTH] = {-32600, 411, "INVALID_ARGUMENT", ""},
    /* A limit of this server, not a fault of the request: the same request succeeds
     * later (STREAM-6). The HTTP status is 503 on both bindings, with Retry-After. */
    [TH_EUNAVAILABLE] = {-32603, 503, "UNAVAILABLE", ""},
    /* Refused before any binding reads the request (SEC-4): there is no A2A code for it,
     * and the body is a google.rpc.Status whatever the route. */
    [TH_EFORBIDDEN] = {-32600, 403, "PERMISSION_DENIED", ""},
    /* SEC-1: A2A has no code for it and allows HTTP 401 before dispatch on JSON-RPC
     * too (A2A 1.0 §5 error rules): 401 on both bindings, with WWW-Authenticate. */
    [TH_EUNAUTHENTICATED] = {-32600, 401, "UNAUTHENTICATED", ""},
    /* One participant's share, not the server's capacity (SEC-3): 429 on both bindings,
     * with Retry-After; A2A has no code of its own for it. */
    [TH_ETOOMANY] = {-32603, 429, "RESOURCE_EXHAUSTED", ""},
    /* A2A-11-GEN-5: the 1.1 draft's TaskGenerationMismatchError (ABORTED, 409 Conflict). */
    [TH_EGENERATION] = {-32010, 409, "ABORTED", "TASK_GENERATION_MISMATCH"},
};

_Static_assert(sizeof table / sizeof table[0] == TH_ERR_COUNT, "every th_err has a row");

static const struct row *row_of(th_err code)
{
	if ((size_t)code >= sizeof table / sizeof table[0] || table[code].grpc == NULL)
		return &table[TH_EINTERNAL];
	return &table[code];
}

int th_bind_rpc_code(th_err code)
{
	return row_of(code)->rpc;
}

int th_bind_http_status(th_err code)
{
	return row_of(code)->http;
}

int th_bind_rpc_http_status(th_err code)
{
	/* A server at its stream limit, a participant over its share, or a request without
	 * valid credentials says so in HTTP too, so that clients and proxies that look only
	 * at the status act on it (STREAM-6, SEC-3, SEC-1). */
	if (code == TH_EUNAVAILABLE || code == TH_ETOOMANY || code == TH_EUNAUTHENTICATED)
		return th_bind_http_status(code);
	return 200;
}

const char *th_bind_grpc_status(th_err code)
{
	return row_of(code)->grpc;
}

const char *th_bind_reason(th_err code)
{
	return row_of(code)->reason;
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

json_object *th_bind_error_info(const struct th_error *e)
{
	const char *reason = th_bind_reason(e->code);
	if (reason[0] == '\0')
		return NULL;
	json_object *o = json_object_new_object();
	if (o == NULL)
		return NULL;
	int bad = th_json_put(o, "@type",
	                      json_object_new_string("type.googleapis.com/google.rpc.ErrorInfo"));
	bad |= th_json_put(o, "reason", json_object_new_string(reason));
	bad |= th_json_put(o, "domain", json_object_new_string("a2a-protocol.org"));
	if (e->task_id[0] != '\0') {
		json_object *md = json_object_new_object();
		bad |= th_json_put(md, "taskId", json_object_new_string(e->task_id));
		/* A2A-11-GEN-5: ErrorInfo metadata values are strings. The numbers are only
		 * set with has_generations. */
		if (e->has_generations) {
			char g[2][24];
			snprintf(g[0], sizeof g[0], "%lld", e->expected_generation);
			snprintf(g[1], sizeof g[1], "%lld", e->current_generation);
			bad |= th_json_put(md, "expectedGeneration", json_object_new_string(g[0]));
			bad |= th_json_put(md, "currentGeneration", json_object_new_string(g[1]));
		}
		bad |= th_json_put(o, "metadata", md);
	}
	if (bad) {
		json_object_put(o);
		return NULL; /* decision-026: out of memory */
	}
	return o;
}

/* The ErrorInfo of e, if its code has one, as a one-element array under key (JSON-RPC
 * "data", google.rpc.Status "details"): 0, or -1 when it cannot be built (out of
 * memory; the caller then fails the whole body). */
static int add_error_info(json_object *err, const char *key, const struct th_error *e)
{
	if (th_bind_reason(e->code)[0] == '\0')
		return 0;
	json_object *list = json_object_new_array();
	if (th_json_push(list, th_bind_error_info(e)) != 0) {
		json_object_put(list);
		return -1;
	}
	return th_json_put(err, key, list);
}

json_object *th_bind_rpc_error(json_object *id, const struct th_error *e)
{
	char buf[TH_ERRMSG_MAX + 64];
	/* th_json_put takes NULL containers too: one check at the end (decision-026). */
	json_object *o = json_object_new_object();
	json_object *err = json_object_new_object();
	int bad = th_json_put(o, "jsonrpc", json_object_new_string("2.0"));
	bad |= th_json_put_null(o, "id", json_object_get(id)); /* NULL: the JSON null id */
	bad |= th_json_put(err, "code", json_object_new_int(th_bind_rpc_code(e->code)));
	bad |= th_json_put(err, "message",
	                   json_object_new_string(th_bind_message(e, buf, sizeof buf)));
	bad |= add_error_info(err, "data", e);
	bad |= th_json_put(o, "error", err);
	if (bad) {
		json_object_put(o);
		return NULL; /* decision-026: the caller sends th_bind_send_oom */
	}
	return o;
}

json_object *th_bind_rest_error_body(int status, const struct th_error *e)
{
	char buf[TH_ERRMSG_MAX + 64];
	/* th_json_put takes NULL containers too: one check at the end (decision-026). */
	json_object *o = json_object_new_object();
	json_object *err = json_object_new_object();
	int bad = th_json_put(err, "code", json_object_new_int(status));
	bad |= th_json_put(err, "status", json_object_new_string(th_bind_grpc_status(e->code)));
	bad |= th_json_put(err, "message",
	                   json_object_new_string(th_bind_message(e, buf, sizeof buf)));
	bad |= add_error_info(err, "details", e);
	bad |= th_json_put(o, "error", err);
	if (bad) {
		json_object_put(o);
		return NULL; /* decision-026: the caller sends th_bind_send_oom */
	}
	return o;
}

void th_bind_rest_error(struct th_bind_ctx *ctx, int status, const struct th_error *e)
{
	if (status == 0)
		status = th_bind_http_status(e->code);
	ctx->outcome = e->code;
	json_object *o = th_bind_rest_error_body(status, e);
	if (o == NULL) {
		th_bind_send_oom(ctx);
		return;
	}
	th_bind_retry_after(ctx, e);
	th_bind_send_json(ctx, status, "application/a2a+json", o);
}
