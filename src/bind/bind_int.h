/* SPDX-License-Identifier: Apache-2.0 */
/* bind_int.h — what the files of src/bind share, private to src/bind. Calls run one
 * way, top to bottom, and each section below is one file:
 *
 *   bind.c     the router and the agent card
 *     → metrics.c           the metrics endpoint and the request's log line (OBS-1..3)
 *     → deadletters.c       the caller's push dead letters (RET-4)
 *     → origin.c            Host and Origin checks (SEC-4)
 *     → web.c               the web app's redirect and static files (WEB-1)
 *       → method.c          the GET/HEAD guard of the card and the web app (405)
 *     → jsonrpc.c, rest.c   the two bindings
 *       → stream.c          SSE framing of the streaming operations
 *         → errors.c        the error table and every error body
 *           → request.c     header checks, quoting, the service hook, the senders
 *
 * A file calls only files below it; none calls back up. */
#ifndef TH_BIND_BIND_INT_H
#define TH_BIND_BIND_INT_H

#include <json-c/json.h>
#include <stdint.h>
#include <time.h>

#include "app.h"
#include "http/http.h"
#include "service/service.h"
#include "util/buf.h"
#include "util/err.h"
#include "util/idrule.h"

struct th_bind_ctx {
	struct th_app *app;
	struct th_http_io *io;
	struct th_http_req *req;
	struct th_call call; /* its participant points into who, or is NULL (th_bind_identify) */
	char who[TH_ID_BUF]; /* the participant, copied (th_bind_identify): the credential's, the
	                        header's or REMOTE_USER, readable after the answer */
	struct th_buf extra; /* response header lines (A2A-Extensions, Allow, …);
	                        th_buf_free (th_bind_serve) */
	int head;            /* a HEAD request: th_bind_send sends the headers only */
	int retry_after;     /* seconds for Retry-After when refused (0: 1) */
	int replayed;        /* the send answered an earlier one with the same Idempotency-Key:
	                        the response says Idempotent-Replayed: true (A2A-11-IDEM-1) */
	int api;             /* an API answer: th_bind_send adds Cache-Control: no-store
	                        unless extra names a Cache-Control (SEC-4) */
	/* What the request's log line and counters say (OBS-1, OBS-2): */
	int mx_method;          /* an enum th_op, or TH_BIND_MX_CARD.. TH_BIND_MX_UNKNOWN */
	const char *binding;    /* "jsonrpc", "rest" or "http" (card, web app, metrics); static */
	int status;             /* the HTTP status sent (th_bind_send, the SSE start) */
	th_err outcome;         /* the error answered, TH_OK when none */
	const char *web_tenant; /* TEN-8: the web app's /{tenant}/ui/ prefix (borrowed), or
	                           NULL for <base>ui/ */
	int handed; /* handed to the writer (HOST-2), which answers, counts and logs it */
};

/* Now on the monotonic clock, in microseconds: a request's start and end (OBS-1). */
static inline int64_t th_bind_now_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/* The counters' and the log line's "methods" besides the A2A operations (OBS-2). */
enum {
	TH_BIND_MX_CARD = TH_OP_COUNT, /* the public agent card */
	TH_BIND_MX_WEB,                /* the web app's redirect and files */
	TH_BIND_MX_METRICS,            /* <base>metrics */
	TH_BIND_MX_UNKNOWN,            /* no operation was named (bad JSON, unknown route) */
	TH_BIND_MX_DEAD_LETTERS,       /* <base>pushNotificationDeadLetters (after UNKNOWN: the
	                                  counters file keeps its older indexes) */
	TH_BIND_MX_COUNT
};

/* ---- metrics.c: observability, called by the router (OBS-1..OBS-3) ----------- */

/* GET or HEAD of <base>metrics: the counters in the Prometheus text format (0.0.4) for
 * an authenticated reader (th_bind_metrics_reader); 404 when metrics = 0. */
void th_bind_metrics(struct th_bind_ctx *ctx);
/* TH_OK when the request's caller may read the metrics: identity is remote_user or bearer,
 * the caller authenticated (ctx->call.participant set), and named in metrics_readers when
 * that is set. Otherwise TH_EUNAUTHENTICATED (no credentials: 401) or TH_EFORBIDDEN (403)
 * with a message naming the key to change. */
th_err th_bind_metrics_reader(struct th_bind_ctx *ctx, struct th_error *e);
/* The end of every request: counts it (method, outcome, duration since start_us on the
 * monotonic clock) and, with request_log = 1, writes its line. */
void th_bind_request_done(struct th_bind_ctx *ctx, int64_t start_us);
/* The exposition text of a snapshot and the site's gauges (the endpoint's body). */
struct th_mx_snapshot;
void th_bind_metrics_render(struct th_buf *b, const struct th_mx_snapshot *s,
                            const struct th_site_gauges *g);
/* The label of a method index (an A2A method name, "AgentCard", "WebApp", "Metrics",
 * "unknown") and of an outcome (a th_err: "ok", "task_not_found", …); never NULL. */
const char *th_bind_mx_method_name(int m);
const char *th_bind_mx_outcome_name(int outcome);
/* One request log line's text after "request" (no newline) into out: method, binding,
 * task, participant, status, outcome, ms, as key=value. */
void th_bind_log_line(char *out, size_t n, const char *method, const char *binding,
                      const char *task, const char *participant, int status, const char *outcome,
                      int64_t duration_us);

/* ---- deadletters.c: the caller's push dead letters, called by the router (RET-4) -- */

/* 1 when path (below the base, or below /{tenant}) is the dead letters' route. */
int th_bind_dead_letters_path(const char *path);
/* GET or HEAD of it: {deadLetters: [...], nextPageToken} (th_service_dead_letters) for the
 * caller th_bind_identify names, in tenant (NULL: the default one; the path's /{tenant}/),
 * the page from the query's pageSize and pageToken. Other methods: 405. */
void th_bind_dead_letters(struct th_bind_ctx *ctx, const char *tenant);

/* ---- origin.c: browser safety, called by the router (SEC-4) ------------------ */

/* SEC-1: with identity = header, TH_EFORBIDDEN naming trusted_proxies unless REMOTE_ADDR
 * is loopback or in trusted_proxies; TH_OK in every other identity mode. */
th_err th_bind_check_peer(const struct th_bind_ctx *ctx, struct th_error *e);

/* TH_EFORBIDDEN naming the header when the request's Host is not base_url's host:port
 * (any loopback host when base_url's is loopback) nor in allowed_hosts, or when an
 * Origin is sent that is neither base_url's origin, nor the request's own Host, nor in
 * allowed_origins. A request without Host or Origin passes that part. */
th_err th_bind_check_origin(struct th_bind_ctx *ctx, struct th_error *e);

/* ---- jsonrpc.c, rest.c: the bindings, called by the router ------------------ */

/* The JSON-RPC endpoint (POST to the base path). */
void th_bind_jsonrpc(struct th_bind_ctx *ctx);
/* The HTTP+JSON routes; any other path under the base is a 404 here. */
void th_bind_rest(struct th_bind_ctx *ctx);

/* ---- web.c: the web app, called by the router (WEB-1, WEB-3) ---------------- */

/* 1 when an Accept header value prefers HTML to JSON: text/html (or
 * application/xhtml+xml) named with a q above 0 and above the q that the most
 * specific range covering application/json gives it (the any-type range alone does not count as
 * HTML). NULL (no Accept) is 0. */
int th_bind_web_prefers_html(const char *accept);
/* 1 when name (the path below <base>ui/) may be served: segments of [A-Za-z0-9._-]
 * separated by single '/', none empty and none starting with '.' (so no "..", no
 * hidden file, no absolute path), at most 200 bytes. */
int th_bind_web_name_ok(const char *name);
/* The Content-Type of a file by its extension; application/octet-stream otherwise. */
const char *th_bind_web_ctype(const char *name);
/* GET or HEAD of the base URL by a browser: 303 to <base>ui/. */
void th_bind_web_redirect(struct th_bind_ctx *ctx);
/* TEN-8: with ctx->web_tenant set, the same below <base><tenant>/ui/ (the path names the
 * tenant; session.json then says {"tenant": …} too; a tenant not served is 404).
 * GET or HEAD of <base>ui, <base>ui/ or <base>ui/<name>: the file from web_dir
 * (index.html for the folder) with its Content-Type, ETag, Last-Modified and the
 * Content-Security-Policy; 404 for a refused name or a missing file. <base>ui/session.json
 * is not a file: how the server knows the sender, {"identity":"header"} or
 * {"identity":"remote_user","participant":REMOTE_USER or null}. */
void th_bind_web(struct th_bind_ctx *ctx);

/* ---- method.c: the method guard, called by the router and the web app ------ */

/* 1 for GET or HEAD (ctx->head set); otherwise sends 405 with Allow: GET, HEAD, saying
 * "WHAT is read with GET, not METHOD", and returns 0. */
int th_bind_get_or_head(struct th_bind_ctx *ctx, const char *what);

/* ---- handoff.c: requests answered by the database's writer (HOST-2) -------- */

/* Hands the request (op; its body read, nothing answered yet) to the worker that writes
 * for the database when op writes and this worker is not that one: 1 handed over (that
 * worker answers it; ctx->handed set), 0 serve it here. */
int th_bind_handoff(struct th_bind_ctx *ctx, int op);

/* ---- stream.c: the streaming operations, called by both bindings ------------ */

/* The streaming runner, th_service_stream unless a unit test put a recorder here. */
struct th_sink;
typedef th_err (*th_bind_stream_fn)(struct th_app *app, const struct th_call *call, enum th_op op,
                                    json_object *params, const char *last_event_id,
                                    struct th_sink *sink, struct th_error *e);
extern th_bind_stream_fn th_bind_stream_service;

/* Names the request in the server's log lines from now on (LIM-5): the operation and
 * the task its params address (params.id, else params.message.taskId), when any. */
void th_bind_log_request(int op, json_object *params);

/* 1 for the operations that answer with a stream (A2A-5). */
int th_bind_is_stream_op(int op);

/* Runs a streaming operation as text/event-stream (A2A-5): JSON-RPC events are whole
 * responses carrying rpc_id (borrowed; NULL selects the REST framing, bare
 * StreamResponse objects); every event has "id: <seq>"; an error after the stream
 * began is one "event: error". An error before the stream began is returned for the
 * caller to answer normally; TH_OK means the response was written. */
th_err th_bind_stream(struct th_bind_ctx *ctx, enum th_op op, json_object *params,
                      json_object *rpc_id, struct th_error *e);

/* GetTask (A2A-11-GEN-4). A 1.1 client's currentGeneration that the task has not passed
 * holds the request on a stream slot of app->parker until the task's generation passes it
 * or min(heartbeat_ms, stream_max_ms) passed: *parked = 1 and the response is the stream
 * thread's to write (or, when the parker is out of memory, a 503 already written). Otherwise (1.0,
 * no parker, a HEAD, a task already past it) *result is the Task as th_bind_service answers it. No
 * slot free: TH_EUNAVAILABLE or TH_ETOOMANY as for streams. */
th_err th_bind_get_task(struct th_bind_ctx *ctx, json_object *params, json_object *rpc_id,
                        json_object **result, int *parked, struct th_error *e);

/* ---- errors.c: the error bodies (the table itself is in bind.h) ------------- */

/* The client-facing message of e; for TH_EBUSY it always says to retry. */
const char *th_bind_message(const struct th_error *e, char *buf, size_t n);

/* The ErrorInfo detail of e (new reference), or NULL when its code has no reason or
 * when out of memory. */
json_object *th_bind_error_info(const struct th_error *e);

/* The error bodies of each binding as JSON (new references; NULL when out of memory):
 * a JSON-RPC error response carrying id (borrowed), and a google.rpc.Status body. */
json_object *th_bind_rpc_error(json_object *id, const struct th_error *e);
json_object *th_bind_rest_error_body(int status, const struct th_error *e);

/* Writes a google.rpc.Status error response for e with the given HTTP status
 * (0 = the table's status for e->code). */
void th_bind_rest_error(struct th_bind_ctx *ctx, int status, const struct th_error *e);

/* ---- request.c: the steps every request shares ------------------------------ */

/* Copies a client-supplied string into dst for an error message: printable ASCII
 * only (anything else becomes '?'), cut to fit with "..."; "(none)" for NULL. */
void th_bind_quote(char *dst, size_t n, const char *src);

/* TEN-1: 1 when path is "/{tenant}/…" with a tenant under th_tenant_ok: the tenant into
 * t, *rest at the "/…" after it (borrowed from path); else 0. Every tenant route (the
 * REST routes, the card, the web app) splits its path here. */
int th_bind_tenant_split(const char *path, char t[TH_TENANT_MAX + 1], const char **rest);

/* LIM-2: each query parameter of names (camelCase; its snake_case spelling counts too, the
 * first occurrence wins) that query holds, percent-decoded, into params as a string (the
 * a2a decoders read "10" and "true"). A bad escape or an encoded NUL is TH_EINVAL naming
 * the parameter; names not listed are ignored. */
th_err th_bind_query_values(json_object *params, const char *query, const char *const *names,
                            struct th_error *e);

/* 1 when ct is application/json or application/a2a+json, parameters allowed. */
int th_bind_json_ctype(const char *ct);

/* A2A-3: "1.0" or "1.0.<digits>" passes with *minor 0, and (A2A-11-GEN-1) "1.1" or
 * "1.1.<digits>" with *minor 1; anything else (NULL, "", "0.3", "1.2") is TH_EVERSION
 * naming the value received, "(none)" when there was none. */
th_err th_bind_check_version(const char *version, int *minor, struct th_error *e);

/* Version, then extensions (EXT-1), then the participant (ID-1), then its request rate
 * (SEC-3: TH_ETOOMANY, ctx->retry_after set): fills ctx->call and, when extensions were
 * activated, the A2A-Extensions response header (EXT-2). */
th_err th_bind_check_headers(struct th_bind_ctx *ctx, struct th_error *e);
/* The participant step of th_bind_check_headers alone, then the request rate: for a
 * request that is not an A2A call (the metrics endpoint: no A2A-Version). */
th_err th_bind_identify(struct th_bind_ctx *ctx, struct th_error *e);

/* Names the task a SendMessage made in the request's log line (OBS-1) when the request
 * named none: result's task.id. result is borrowed. */
void th_bind_note_result(int op, json_object *result);

/* Adds Retry-After (ctx->retry_after seconds, at least 1) for the errors that are worth
 * retrying: busy, at capacity, over a participant's share. */
void th_bind_retry_after(struct th_bind_ctx *ctx, const struct th_error *e);

/* The operation runner both bindings call: th_service_call, unless a unit test has
 * put a recorder here to see exactly what a binding passed on. */
typedef th_err (*th_bind_service_fn)(struct th_app *app, const struct th_call *call, enum th_op op,
                                     json_object *params, json_object **result, struct th_error *e);
extern th_bind_service_fn th_bind_service;

/* 1 when an If-None-Match value (NULL: absent) names etag: "*" or a comma-separated
 * list of entity tags, weak ones (W/"…") included — weak comparison applies to GET
 * (RFC 9110 §13.1.2). */
int th_bind_etag_matches(const char *inm, const char *etag);
/* t as an HTTP date (RFC 9110 §5.6.7, "Sun, 06 Nov 1994 08:49:37 GMT") into out: 1, or 0
 * when it cannot be written. */
int th_bind_http_date(time_t t, char *out, size_t n);

/* A2A-11-IDEM-1: adds Idempotent-Replayed: true to the response headers when the send
 * answered an earlier one with the same Idempotency-Key (th_bind_send, the SSE start). */
void th_bind_mark_replay(struct th_bind_ctx *ctx);

/* Writes body as the whole response; a failed write means the client is gone, and
 * there is nobody left to tell. */
void th_bind_send(struct th_bind_ctx *ctx, int status, const char *ctype, const char *body,
                  size_t len);
/* Writes v (a new reference, consumed; NULL means it could not be built) as JSON. */
void th_bind_send_json(struct th_bind_ctx *ctx, int status, const char *ctype, json_object *v);

/* The last-resort answer when even the error body could not be built. */
void th_bind_send_oom(struct th_bind_ctx *ctx);

#endif
