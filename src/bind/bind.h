/* SPDX-License-Identifier: Apache-2.0 */
/* bind.h — the only place that knows an A2A binding.
 *
 * th_bind_serve routes one request: GET /.well-known/agent-card.json (card), POST to
 * the base path (JSON-RPC 2.0), or an HTTP+JSON route (POST /message:send, GET
 * /tasks/{id}, GET /tasks, POST /tasks/{id}:cancel, …). It checks A2A-Version (A2A-3)
 * and A2A-Extensions (EXT-1), reads the body under the size limit, builds the
 * operation's params object, asks service/ to run it, and writes the result or the
 * error in the binding's shape (bind/errors.c holds the one th_err → code table). */
#ifndef TH_BIND_BIND_H
#define TH_BIND_BIND_H

#include "app.h"
#include "ops/stream.h"
#include "http/http.h"
#include "util/buf.h"
#include "util/err.h"

void th_bind_serve(struct th_app *app, struct th_http_io *io);

/* An open stream the binding handed to app->parker (STREAM-6) once its first events
 * were out: the connection, the binding's framing and what the stream follows. The
 * parker writes the rest of the response with the th_bind_parked_* framers. */
struct th_bind_parked {
	struct th_http_conn conn; /* conn.fd owned: th_bind_parked_free closes it */
	char *rpc_id;             /* the JSON-RPC request id as JSON text; NULL for REST;
	                             th_bind_parked_free */
	struct th_watch watch;    /* owned; th_bind_parked_free */
	int counted;              /* 1: counted in the open streams (OBS-2) until
	                             th_bind_parked_free */
	char *headers;            /* a waiting GetTask (watch.long_poll, A2A-11-GEN-4): the answer's
	                             extra header lines; th_bind_parked_free */
};
void th_bind_parked_free(struct th_bind_parked *p);
/* Appends one event as this stream's binding frames it (an SSE event with id: seq,
 * carrying a JSON-RPC response or the bare StreamResponse), in FastCGI records. */
void th_bind_parked_event(const struct th_bind_parked *p, int64_t seq, const char *json,
                          struct th_buf *out);
/* Appends the ": ping" heartbeat comment. */
void th_bind_parked_heartbeat(const struct th_bind_parked *p, struct th_buf *out);
/* Appends the smallest SSE line, an empty comment (":\n", ignored by every client): the
 * web server writes it to the client and so finds out whether the client is still
 * there, which it notices no other way (SEC-3). */
void th_bind_parked_probe(const struct th_bind_parked *p, struct th_buf *out);
/* A2A-11-GEN-4: appends the whole answer of a waiting GetTask and the end of the
 * response: the Task (JSON text carrying its generation) as the binding answers it, or,
 * when e is not NULL (the task can no longer be read), e as the binding's error. */
void th_bind_parked_answer(const struct th_bind_parked *p, const char *task_json,
                           const struct th_error *e, struct th_buf *out);
/* Appends the end of the response (the stream closes normally). */
void th_bind_parked_end(const struct th_bind_parked *p, struct th_buf *out);

/* The error table (A2A-4): JSON-RPC code, HTTP status, google.rpc status name and
 * ErrorInfo reason ("" when the error has none) of a th_err. */
int th_bind_rpc_code(th_err code);
int th_bind_http_status(th_err code);
/* The HTTP status of a JSON-RPC error answer: 200, but the status of the error table
 * for a server or participant at its limit and for missing credentials. */
int th_bind_rpc_http_status(th_err code);
const char *th_bind_grpc_status(th_err code);
const char *th_bind_reason(th_err code);

#endif
