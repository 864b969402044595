/* SPDX-License-Identifier: Apache-2.0 */
/* stream.c — SSE framing of the streaming operations for both bindings (A2A-5,
 * STREAM-1, STREAM-2, STREAM-4), and the hand-over of an open stream to the worker's
 * stream thread (STREAM-6). The harness decides what to send; this file only decides
 * how it looks on the wire. An error after the stream began is framed here, its body
 * built by errors.c. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bind/bind.h"
#include "bind/bind_int.h"
#include "config/settings.h"
#include "ops/stream.h"
#include "util/ids.h"
#include "util/jsonx.h"
#include "util/log.h"
#include "util/metrics.h"

struct sse {
	struct th_bind_ctx *ctx;
	json_object *rpc_id; /* borrowed; NULL for REST */
	int is_rpc;
	int opened;
	int gone;
	int reserved; /* a slot of the parker's is held for this stream (room, take) */
	int parked;   /* the connection went to a struct th_bind_parked, which now counts the
	                 stream as open (th_bind_parked_free counts it closed) */
};

th_bind_stream_fn th_bind_stream_service = th_service_stream;

int th_bind_is_stream_op(int op)
{
	return op == TH_OP_SEND_STREAMING_MESSAGE || op == TH_OP_SUBSCRIBE_TO_TASK;
}

/* The data line of one event: the StreamResponse itself (REST) or a JSON-RPC response
 * carrying it. The stored text is spliced in as it is, never parsed again. */
static void event_data(struct th_buf *b, const char *rpc_id, const char *json)
{
	if (rpc_id == NULL) {
		th_buf_puts(b, json);
		return;
	}
	th_buf_puts(b, "{\"jsonrpc\":\"2.0\",\"id\":");
	th_buf_puts(b, rpc_id);
	th_buf_puts(b, ",\"result\":");
	th_buf_puts(b, json);
	th_buf_puts(b, "}");
}

static void event_frame(struct th_buf *out, const char *rpc_id, int64_t seq, const char *json)
{
	char id[32];
	snprintf(id, sizeof id, "%" PRId64, seq);
	struct th_buf data;
	th_buf_init(&data);
	event_data(&data, rpc_id, json);
	if (data.oom)
		out->oom = 1;
	else
		th_http_sse_format(out, seq > 0 ? id : NULL, NULL, data.data);
	th_buf_free(&data);
}

static int sse_open(void *impl)
{
	struct sse *s = impl;
	s->opened = 1;
	s->ctx->status = 200;
	th_mx_streams(1); /* OBS-2: open until th_bind_stream ends or the parker frees it */
	th_bind_mark_replay(s->ctx);
	if (th_http_sse_start(s->ctx->io, s->ctx->extra.data) != 0)
		s->gone = 1;
	return s->gone ? -1 : 0;
}

static int sse_put(struct sse *s, struct th_buf *b)
{
	struct th_http_io *io = s->ctx->io;
	if (b->oom || io->write(io->impl, b->data, b->len) != 0 || io->flush(io->impl) != 0)
		s->gone = 1;
	th_buf_free(b);
	return s->gone ? -1 : 0;
}

/* The JSON text of the request id, for splicing into every event; "null" for REST. */
static const char *rpc_id_text(const struct sse *s)
{
	return s->is_rpc ? th_json_text(s->rpc_id) : NULL;
}

static int sse_event(void *impl, int64_t seq, const char *json)
{
	struct sse *s = impl;
	if (s->gone)
		return -1;
	struct th_buf b;
	th_buf_init(&b);
	event_frame(&b, rpc_id_text(s), seq, json);
	return sse_put(s, &b);
}

static int sse_heartbeat(void *impl)
{
	struct sse *s = impl;
	if (!s->gone && th_http_sse_comment(s->ctx->io, "ping") != 0)
		s->gone = 1;
	return s->gone ? -1 : 0;
}

/* STREAM-6: the connection goes to the worker's stream thread with what it follows;
 * this request is then over for the worker. */
static int sse_park(void *impl, struct th_watch *w)
{
	struct sse *s = impl;
	struct th_parker *parker = s->ctx->app->parker;
	struct th_http_io *io = s->ctx->io;
	if (s->gone || parker == NULL || io->detach == NULL)
		return -1;
	struct th_bind_parked p = {.conn = {.fd = -1}};
	if (s->is_rpc && (p.rpc_id = strdup(rpc_id_text(s))) == NULL)
		return -1;
	if (io->detach(io->impl, &p.conn) != 0) {
		free(p.rpc_id);
		return -1;
	}
	p.watch = *w;
	memset(w, 0, sizeof *w);
	p.counted = 1;
	s->parked = 1;
	if (parker->take(parker->impl, &p) == 0) {
		s->reserved = 0; /* the parked stream holds the slot now */
	} else {
		/* Out of memory in the parker: end the response cleanly rather than leave
		 * the client waiting; it resumes with Last-Event-ID. */
		struct th_buf end;
		th_buf_init(&end);
		th_bind_parked_end(&p, &end);
		if (!end.oom && write(p.conn.fd, end.data, end.len) < 0)
			th_log(TH_LOG_WARN, "ending an unparked stream: write failed");
		th_buf_free(&end);
		th_bind_parked_free(&p);
	}
	return 0;
}

void th_bind_parked_free(struct th_bind_parked *p)
{
	if (p == NULL)
		return;
	if (p->counted)
		th_mx_streams(-1);
	p->counted = 0;
	if (p->conn.fd >= 0)
		close(p->conn.fd);
	p->conn.fd = -1;
	free(p->rpc_id);
	p->rpc_id = NULL;
	free(p->headers);
	p->headers = NULL;
	th_watch_free(&p->watch);
}

/* Appends the SSE bytes in FastCGI records; on out of memory out->oom is set. */
static void fcgi_wrap(const struct th_bind_parked *p, struct th_buf *sse, struct th_buf *out)
{
	if (sse->oom)
		out->oom = 1;
	else
		th_fcgi_stdout(out, p->conn.request_id, sse->data, sse->len);
	th_buf_free(sse);
}

void th_bind_parked_event(const struct th_bind_parked *p, int64_t seq, const char *json,
                          struct th_buf *out)
{
	struct th_buf sse;
	th_buf_init(&sse);
	event_frame(&sse, p->rpc_id, seq, json);
	fcgi_wrap(p, &sse, out);
}

void th_bind_parked_heartbeat(const struct th_bind_parked *p, struct th_buf *out)
{
	struct th_buf sse;
	th_buf_init(&sse);
	th_http_sse_format_comment(&sse, "ping");
	fcgi_wrap(p, &sse, out);
}

void th_bind_parked_probe(const struct th_bind_parked *p, struct th_buf *out)
{
	th_fcgi_stdout(out, p->conn.request_id, ":\n", 2);
}

void th_bind_parked_end(const struct th_bind_parked *p, struct th_buf *out)
{
	th_fcgi_end(out, p->conn.request_id);
}

/* The error body of e as the parked request's binding writes it, and its HTTP status. */
static json_object *parked_error(const struct th_bind_parked *p, const struct th_error *e,
                                 int *status)
{
	if (p->rpc_id == NULL) {
		*status = th_bind_http_status(e->code);
		return th_bind_rest_error_body(*status, e);
	}
	*status = th_bind_rpc_http_status(e->code);
	json_object *id = json_tokener_parse(p->rpc_id); /* json_object_put; NULL: JSON null */
	json_object *body = th_bind_rpc_error(id, e);
	json_object_put(id);
	return body;
}

void th_bind_parked_answer(const struct th_bind_parked *p, const char *task_json,
                           const struct th_error *e, struct th_buf *out)
{
	struct th_buf body, resp;
	th_buf_init(&body);
	th_buf_init(&resp);
	int status = 200;
	json_object *err = e != NULL ? parked_error(p, e, &status) : NULL; /* json_object_put */
	if (err != NULL)
		th_buf_puts(&body, th_json_text(err));
	else if (e != NULL)
		body.oom = 1;
	else
		event_data(&body, p->rpc_id, task_json); /* the same splice as an event's */
	const char *ctype = p->rpc_id != NULL ? "application/json" : "application/a2a+json";
	if (!body.oom)
		th_http_format_response(&resp, status, ctype, p->headers, body.data, body.len, 0);
	if (body.oom || resp.oom)
		out->oom = 1;
	else
		th_fcgi_stdout(out, p->conn.request_id, resp.data, resp.len);
	th_fcgi_end(out, p->conn.request_id);
	json_object_put(err);
	th_buf_free(&body);
	th_buf_free(&resp);
}

/* The header lines th_bind_send would add to this answer, kept for the stream thread. */
static char *answer_headers(struct th_bind_ctx *ctx)
{
	if (ctx->api &&
	    (ctx->extra.data == NULL || strstr(ctx->extra.data, "Cache-Control:") == NULL))
		th_buf_puts(&ctx->extra, "Cache-Control: no-store\r\n");
	return ctx->extra.oom ? NULL : strdup(ctx->extra.len > 0 ? ctx->extra.data : "");
}

/* Hands a waiting GetTask to the parker on the slot room() reserved: 0; 1 when the
 * parker could not take it and it was answered here (slot given back); -1 when it
 * could not be handed over (the connection is still the request's). */
static int park_wait(struct th_bind_ctx *ctx, json_object *rpc_id, struct th_watch *w)
{
	struct th_parker *parker = ctx->app->parker;
	struct th_http_io *io = ctx->io;
	struct th_bind_parked p = {.conn = {.fd = -1}};
	if (rpc_id != NULL && (p.rpc_id = strdup(th_json_text(rpc_id))) == NULL)
		return -1;
	if ((p.headers = answer_headers(ctx)) == NULL || io->detach(io->impl, &p.conn) != 0) {
		th_bind_parked_free(&p);
		return -1;
	}
	const struct th_config *cfg = ctx->app->cfg;
	/* Bounded by the quiet time every proxy recipe lets a connection have (heartbeat_ms,
	 * docs/deployment.md) and by stream_max_ms. */
	int64_t wait_ms =
	    cfg->heartbeat_ms < cfg->stream_max_ms ? cfg->heartbeat_ms : cfg->stream_max_ms;
	w->deadline_ms = th_mono_ms() + wait_ms;
	p.watch = *w;
	memset(w, 0, sizeof *w);
	if (parker->take(parker->impl, &p) != 0) {
		/* Out of memory in the parker: the connection is no longer the request's, so
		 * the 503 is written here and the slot room() reserved is given back. */
		struct th_error e;
		th_error_set(&e, TH_EUNAVAILABLE,
		             "this worker could not hold the waiting GetTask (out of memory); "
		             "retry later");
		th_bind_retry_after(ctx, &e);
		free(p.headers);
		p.headers = answer_headers(ctx); /* NULL: answered without them */
		struct th_buf out;
		th_buf_init(&out);
		th_bind_parked_answer(&p, NULL, &e, &out);
		if (!out.oom && write(p.conn.fd, out.data, out.len) < 0)
			th_log(TH_LOG_WARN, "answering an unparked GetTask: write failed");
		th_buf_free(&out);
		th_bind_parked_free(&p);
		parker->unreserve(parker->impl, ctx->call.participant);
		ctx->status = 503;
		ctx->outcome = TH_EUNAVAILABLE;
		return 1;
	}
	return 0;
}

th_err th_bind_get_task(struct th_bind_ctx *ctx, json_object *params, json_object *rpc_id,
                        json_object **result, int *parked, struct th_error *e)
{
	*parked = 0;
	*result = NULL;
	struct th_parker *parker = ctx->app->parker;
	if (ctx->call.a2a_minor < 1 || parker == NULL || ctx->io->detach == NULL || ctx->head)
		return th_bind_service(ctx->app, &ctx->call, TH_OP_GET_TASK, params, result, e);
	struct th_watch w;
	th_err rc = th_service_get_task(ctx->app, &ctx->call, params, result, &w, e);
	if (rc != TH_OK || *result != NULL)
		return rc;
	int room = parker->room(parker->impl, ctx->call.participant);
	int handed = room == TH_PARKER_ROOM ? park_wait(ctx, rpc_id, &w) : -1;
	if (handed >= 0) {
		*parked = 1;
		if (handed == 0)
			ctx->status =
			    200; /* what the log line says (OBS-1): the stream thread answers */
		return TH_OK;
	}
	th_watch_free(&w);
	if (room == TH_PARKER_ROOM)
		parker->unreserve(parker->impl, ctx->call.participant);
	if (room == TH_PARKER_FULL)
		return th_error_set(e, TH_EUNAVAILABLE,
		                    "this worker already holds its limit of %d open streams and "
		                    "waiting GetTasks (stream_max); retry later",
		                    ctx->app->cfg->stream_max);
	if (room == TH_PARKER_MINE)
		return th_error_set(
		    e, TH_ETOOMANY,
		    "this participant already holds %d open streams and waiting "
		    "GetTasks in this worker (stream_max_per_participant); close one "
		    "or retry later",
		    ctx->app->cfg->stream_max_per_participant);
	/* It could not be handed over: answered now, as the 1.1 draft allows. */
	return th_service_get_task(ctx->app, &ctx->call, params, result, NULL, e);
}

th_err th_bind_stream(struct th_bind_ctx *ctx, enum th_op op, json_object *params,
                      json_object *rpc_id, struct th_error *e)
{
	struct th_parker *parker = ctx->app->parker;
	/* STREAM-6: refused before anything is read or stored, so that streams can never
	 * take what ordinary requests need. */
	int room =
	    parker != NULL ? parker->room(parker->impl, ctx->call.participant) : TH_PARKER_ROOM;
	if (room == TH_PARKER_FULL)
		return th_error_set(e, TH_EUNAVAILABLE,
		                    "this worker already holds its limit of %d open streams "
		                    "(stream_max); retry later",
		                    ctx->app->cfg->stream_max);
	/* SEC-3: one participant cannot take the slots everyone shares. */
	if (room == TH_PARKER_MINE)
		return th_error_set(e, TH_ETOOMANY,
		                    "this participant already holds %d open streams in this worker "
		                    "(stream_max_per_participant); close one or retry later",
		                    ctx->app->cfg->stream_max_per_participant);
	struct sse s = {
	    .ctx = ctx, .rpc_id = rpc_id, .is_rpc = rpc_id != NULL, .reserved = parker != NULL};
	struct th_sink sink = {&s, sse_open, sse_event, sse_heartbeat, sse_park};
	const char *last = ctx->req->last_event_id;
	char *from_query = NULL;
	if (last == NULL || *last == '\0')
		last = from_query = th_http_query_get(ctx->req->query, "lastEventId");
	th_err rc = th_bind_stream_service(ctx->app, &ctx->call, op, params, last, &sink, e);
	free(from_query);
	if (s.reserved)
		parker->unreserve(parker->impl, ctx->call.participant);
	/* A stream that ends before its first event still answers with an (empty) one. */
	if (!s.opened && rc == TH_OK)
		sse_open(&s);
	if (!s.opened)
		return rc;
	if (!s.parked)
		th_mx_streams(-1);
	if (rc != TH_OK)
		ctx->outcome = rc;
	if (rc != TH_OK && !s.gone) {
		json_object *body = s.is_rpc
		                        ? th_bind_rpc_error(rpc_id, e)
		                        : th_bind_rest_error_body(th_bind_http_status(e->code), e);
		if (body != NULL) {
			struct th_buf b;
			th_buf_init(&b);
			th_http_sse_format(&b, NULL, "error", th_json_text(body));
			sse_put(&s, &b);
		}
		json_object_put(body);
	}
	return TH_OK;
}
