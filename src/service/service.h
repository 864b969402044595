/* SPDX-License-Identifier: Apache-2.0 */
/* service.h — the A2A operations, each written once and used by both bindings.
 *
 * A binding decodes the transport (JSON-RPC envelope, or REST path/query/body) into
 * a params object shaped like the operation's ProtoJSON request message, fills a
 * struct th_call from the headers, and calls one function below. The result is the
 * ProtoJSON result object (for SendMessage the wrapped {"task":…}/{"message":…}).
 * On failure the function returns a th_err and e's message is ready for the client. */
#ifndef TH_SERVICE_SERVICE_H
#define TH_SERVICE_SERVICE_H

#include <json-c/json.h>

#include "app.h"
#include "util/err.h"

struct th_call {
	const char *participant;     /* the asserted sender (ID-1), NULL when none; borrowed */
	unsigned extensions;         /* TH_EXT_* bits the client activated (domain/ext.h) */
	const char *idempotency_key; /* the Idempotency-Key header, checked by the binding;
	                                borrowed, NULL when none (A2A-11-IDEM-1) */
	int *replayed;      /* set to 1 when a send answered an earlier send with the same key;
	                       borrowed, NULL when nobody asks */
	int a2a_minor;      /* the A2A-Version's minor number: 0 for 1.0, 1 for 1.1, whose task
	                       generation (A2A-11-GEN-1..6) only a 1.1 client sees */
	const char *tenant; /* TEN-1: not the binding's to set: th_service_call and
	                       th_service_stream read params.tenant (where the REST binding
	                       put the path's /{tenant}) into their own copy; borrowed */
};

enum th_op {
	TH_OP_SEND_MESSAGE,
	TH_OP_SEND_STREAMING_MESSAGE,
	TH_OP_GET_TASK,
	TH_OP_LIST_TASKS,
	TH_OP_CANCEL_TASK,
	TH_OP_SUBSCRIBE_TO_TASK,
	TH_OP_CREATE_PUSH_CONFIG,
	TH_OP_GET_PUSH_CONFIG,
	TH_OP_LIST_PUSH_CONFIGS,
	TH_OP_DELETE_PUSH_CONFIG,
	TH_OP_GET_EXTENDED_CARD,
	TH_OP_COUNT
};

/* The JSON-RPC method name of op ("SendMessage"), and the reverse (-1 if unknown). */
const char *th_op_method(enum th_op op);
int th_op_from_method(const char *method);

/* Runs a non-streaming operation. params is borrowed (may be NULL for operations
 * without parameters); *result is a new reference on TH_OK. Operations whose issue
 * has not landed yet answer with the A2A error a client expects for them. */
th_err th_service_call(struct th_app *app, const struct th_call *call, enum th_op op,
                       json_object *params, json_object **result, struct th_error *e);

/* RET-4 (decision-076): the dead letters of the push configs the caller owns in the
 * tenant params name ({tenant?, pageSize?, pageToken?}; borrowed, not NULL), as
 * th_pushcfg_dead_letters answers them. Not an A2A operation: no th_op, no JSON-RPC method;
 * the binding serves it on its own path. The caller and the tenant are checked as for the
 * push config operations. */
th_err th_service_dead_letters(struct th_app *app, const struct th_call *call, json_object *params,
                               json_object **result, struct th_error *e);

struct th_sink;
struct th_watch;

/* GetTask (th_service_call's, which passes wait NULL). A2A-11-GEN-4: for a 1.1 client
 * whose currentGeneration the task has not passed, and a binding that can hold the
 * request (wait not NULL), *wait is filled (what to watch: th_watch_free) and *result
 * stays NULL; otherwise *result is the Task (with its generation for a 1.1 client). */
th_err th_service_get_task(struct th_app *app, const struct th_call *call, json_object *params,
                           json_object **result, struct th_watch *wait, struct th_error *e);

/* Runs a streaming operation (SendStreamingMessage, SubscribeToTask), writing its
 * events to sink (ops/stream.h). last_event_id is the client's Last-Event-ID (or
 * NULL) for resuming a subscription (STREAM-4). An error returned before sink->open
 * was called is an ordinary error response; after it, the binding reports it inside
 * the stream. */
th_err th_service_stream(struct th_app *app, const struct th_call *call, enum th_op op,
                         json_object *params, const char *last_event_id, struct th_sink *sink,
                         struct th_error *e);

/* The public agent card (CARD-1) as served: JSON text, signed when card_signing_key is
 * set (CARD-SIG-1), built and serialised on the first call and kept in app (app->card,
 * app->card_text, app->card_etag). *etag (when etag is not NULL) gets its entity tag,
 * quotes included. Borrowed from app; NULL with e (may be NULL) set when it cannot be made (out of
 * memory; a signing key that cannot be used: TH_EINTERNAL, the log names the cause). */
const char *th_service_card(struct th_app *app, const char **etag, struct th_error *e);

/* OBS-2: what the metrics endpoint reads from the site rather than counts: the SQLite
 * database file and its WAL in bytes (-1 when db is PostgreSQL: not files here; a WAL
 * that does not exist, after a clean close, is 0), and the push outbox's backlog and dead
 * letters (th_store_push_backlog). */
struct th_site_gauges {
	int64_t db_bytes, wal_bytes;
	int64_t push_backlog, push_dead;
};
th_err th_service_site_gauges(struct th_app *app, struct th_site_gauges *g, struct th_error *e);

#endif
