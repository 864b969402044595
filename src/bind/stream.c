/* stream.c — SSE framing of the streaming operations for both bindings (A2A-5,
 * STREAM-1, STREAM-2, STREAM-4). The harness decides what to send; this file only
 * decides how it looks on the wire. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bind/bind.h"
#include "bind/bind_int.h"
#include "harness/stream.h"
#include "util/jsonx.h"

struct sse {
	struct th_bind_ctx *ctx;
	json_object *rpc_id; /* borrowed; NULL for REST */
	int is_rpc;
	int opened;
	int gone;
};

th_bind_stream_fn th_bind_stream_service = th_service_stream;

int th_bind_is_stream_op(int op)
{
	return op == TH_OP_SEND_STREAMING_MESSAGE || op == TH_OP_SUBSCRIBE_TO_TASK;
}

static int sse_open(void *impl)
{
	struct sse *s = impl;
	s->opened = 1;
	if (th_http_sse_start(s->ctx->io, s->ctx->extra.data) != 0)
		s->gone = 1;
	return s->gone ? -1 : 0;
}

static int sse_write(struct sse *s, int64_t seq, const char *event, json_object *data)
{
	char id[32];
	if (seq > 0)
		snprintf(id, sizeof id, "%" PRId64, seq);
	if (th_http_sse_event(s->ctx->io, seq > 0 ? id : NULL, event, th_json_text(data)) != 0)
		s->gone = 1;
	return s->gone ? -1 : 0;
}

static int sse_event(void *impl, int64_t seq, json_object *resp)
{
	struct sse *s = impl;
	if (s->gone)
		return -1;
	if (!s->is_rpc)
		return sse_write(s, seq, NULL, resp);
	json_object *o = json_object_new_object();
	if (o == NULL)
		return -1;
	json_object_object_add(o, "jsonrpc", json_object_new_string("2.0"));
	json_object_object_add(o, "id", json_object_get(s->rpc_id));
	json_object_object_add(o, "result", json_object_get(resp));
	int rc = sse_write(s, seq, NULL, o);
	json_object_put(o);
	return rc;
}

static int sse_heartbeat(void *impl)
{
	struct sse *s = impl;
	if (!s->gone && th_http_sse_comment(s->ctx->io, "ping") != 0)
		s->gone = 1;
	return s->gone ? -1 : 0;
}

th_err th_bind_stream(struct th_bind_ctx *ctx, enum th_op op, json_object *params,
                      json_object *rpc_id, struct th_error *e)
{
	struct sse s = {.ctx = ctx, .rpc_id = rpc_id, .is_rpc = rpc_id != NULL};
	struct th_sink sink = {&s, sse_open, sse_event, sse_heartbeat};
	const char *last = ctx->req->last_event_id;
	char *from_query = NULL;
	if (last == NULL || *last == '\0')
		last = from_query = th_http_query_get(ctx->req->query, "lastEventId");
	th_err rc = th_bind_stream_service(ctx->app, &ctx->call, op, params, last, &sink, e);
	free(from_query);
	/* A stream that ends before its first event still answers with an (empty) one. */
	if (!s.opened && rc == TH_OK)
		sse_open(&s);
	if (!s.opened)
		return rc;
	if (rc != TH_OK && !s.gone) {
		json_object *body = s.is_rpc ? th_bind_rpc_error(rpc_id, e)
		                             : th_bind_rest_error_body(th_bind_http_status(e->code), e);
		if (body != NULL)
			sse_write(&s, 0, "error", body);
		json_object_put(body);
	}
	return TH_OK;
}
