/* errors.c — the one table from th_err to what each binding says (A2A-4): the
 * JSON-RPC code, the HTTP status and google.rpc status name of the HTTP+JSON binding
 * (the v1.0.1 column of the A2A error table), and the ErrorInfo reason. */
#include "bind/bind.h"
#include "bind/bind_int.h"

#include <string.h>

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
	[TH_EPUSHUNSUPPORTED] = {-32003, 400, "FAILED_PRECONDITION",
	                         "PUSH_NOTIFICATION_NOT_SUPPORTED"},
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
};

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

const char *th_bind_grpc_status(th_err code)
{
	return row_of(code)->grpc;
}

const char *th_bind_reason(th_err code)
{
	return row_of(code)->reason;
}

json_object *th_bind_error_info(const struct th_error *e)
{
	const char *reason = th_bind_reason(e->code);
	if (reason[0] == '\0')
		return NULL;
	json_object *o = json_object_new_object();
	if (o == NULL)
		return NULL;
	json_object_object_add(o, "@type",
	                       json_object_new_string("type.googleapis.com/google.rpc.ErrorInfo"));
	json_object_object_add(o, "reason", json_object_new_string(reason));
	json_object_object_add(o, "domain", json_object_new_string("a2a-protocol.org"));
	if (e->task_id[0] != '\0') {
		json_object *md = json_object_new_object();
		if (md != NULL)
			json_object_object_add(md, "taskId", json_object_new_string(e->task_id));
		json_object_object_add(o, "metadata", md);
	}
	return o;
}
