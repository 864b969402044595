/* SPDX-License-Identifier: Apache-2.0 */
#include "service/service.h"

#include <stdint.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "a2a/a2a.h"
#include "config/settings.h"
#include "domain/access.h"
#include "ops/ops.h"
#include "ops/pushcfg.h"
#include "ops/stream.h"
#include "service/card.h"
#include "service/cardsig.h"
#include "store/store.h"
#include "turn/commands.h"
#include "turn/turn.h"
#include "util/ids.h"
#include "util/jsonx.h"
#include "util/text.h"

static const char *const methods[TH_OP_COUNT] = {
    [TH_OP_SEND_MESSAGE] = "SendMessage",
    [TH_OP_SEND_STREAMING_MESSAGE] = "SendStreamingMessage",
    [TH_OP_GET_TASK] = "GetTask",
    [TH_OP_LIST_TASKS] = "ListTasks",
    [TH_OP_CANCEL_TASK] = "CancelTask",
    [TH_OP_SUBSCRIBE_TO_TASK] = "SubscribeToTask",
    [TH_OP_CREATE_PUSH_CONFIG] = "CreateTaskPushNotificationConfig",
    [TH_OP_GET_PUSH_CONFIG] = "GetTaskPushNotificationConfig",
    [TH_OP_LIST_PUSH_CONFIGS] = "ListTaskPushNotificationConfigs",
    [TH_OP_DELETE_PUSH_CONFIG] = "DeleteTaskPushNotificationConfig",
    [TH_OP_GET_EXTENDED_CARD] = "GetExtendedAgentCard",
};

const char *th_op_method(enum th_op op)
{
	return (unsigned)op < TH_OP_COUNT ? methods[op] : NULL;
}

int th_op_from_method(const char *method)
{
	if (method == NULL)
		return -1;
	for (int i = 0; i < TH_OP_COUNT; i++)
		if (strcmp(methods[i], method) == 0)
			return i;
	return -1;
}

const char *th_service_card(struct th_app *app, const char **etag, struct th_error *e)
{
	struct th_error ignored;
	if (e == NULL)
		e = &ignored;
	/* Built on the first request that needs it, not at start-up: a plain-CGI process
	 * that answers a GetTask never builds it (PKG-4). */
	if (app->card_text == NULL) {
		if (app->card == NULL) {
			json_object *cmds = th_registry_card_params(app->commands);
			app->card = cmds != NULL ? th_card_build(app->cfg, cmds) : NULL;
			json_object_put(cmds);
		}
		if (app->card == NULL) {
			th_error_set(e, TH_ENOMEM, "out of memory");
			return NULL;
		}
		/* Not kept on failure: a key file fixed later is used without a restart. */
		if (th_card_serve(app->card, app->cfg, &app->card_text, app->card_etag, NULL, 0,
		                  e) != TH_OK)
			return NULL;
	}
	if (etag != NULL)
		*etag = app->card_etag;
	return app->card_text;
}

/* A2A §3.8: without authentication the card does not declare
 * capabilities.extendedAgentCard. With it (SEC-1) an authenticated caller gets the card
 * the deployment serves; it holds nothing the public one hides, so the two stay one. */
static th_err extended_card(struct th_app *app, const struct th_call *call, json_object **result,
                            struct th_error *e)
{
	if (app->cfg->identity == TH_IDENTITY_HEADER)
		return th_error_set(e, TH_EUNSUPPORTED,
		                    "GetExtendedAgentCard: this agent has no extended agent card "
		                    "(identity = header: no authentication)");
	if (call->participant == NULL)
		return th_error_set(e, TH_EUNAUTHENTICATED,
		                    "GetExtendedAgentCard needs an authenticated caller");
	const char *card = th_service_card(app, NULL, e);
	if (card == NULL)
		return e->code;
	*result = json_tokener_parse(card);
	return *result != NULL ? TH_OK : th_error_set(e, TH_ENOMEM, "out of memory");
}

/* What a 1.1 client's send adds (decision-073): configuration.ifGenerationMatch, and
 * where the answer's generation goes. A 1.0 client's request is not read for it. */
static th_err send_generation(const struct th_call *call, json_object *params,
                              struct th_send_req *req, int64_t *generation, struct th_error *e)
{
	if (call->a2a_minor < 1)
		return TH_OK;
	req->generation = generation;
	return th_a2a_generation_param(json_object_object_get(params, "configuration"),
	                               "ifGenerationMatch", "if_generation_match", "configuration.",
	                               &req->has_if_generation, &req->if_generation, e);
}

static th_err send_message(struct th_app *app, const struct th_call *call, json_object *params,
                           json_object **result, struct th_error *e)
{
	struct th_send_req req = {0};
	json_object *task = NULL;
	struct th_turn_ctx tc = th_app_turns(app);
	int64_t generation = 0;
	th_err rc = th_a2a_send_decode(params, &app->cfg->lim, &req, e);
	req.idempotency_key = call->idempotency_key;
	req.replayed = call->replayed;
	req.tenant = call->tenant;
	if (rc == TH_OK)
		rc = send_generation(call, params, &req, &generation, e);
	if (rc == TH_OK)
		rc = th_harness_send(&tc, call->participant, call->extensions, &req, &task, e);
	if (rc == TH_OK && req.generation != NULL)
		rc = th_a2a_task_add_generation(&task, generation, e);
	th_send_req_free(&req);
	if (rc != TH_OK) {
		json_object_put(task);
		return rc;
	}
	*result = json_object_new_object();
	if (th_json_put(*result, "task", task) != 0) {
		json_object_put(*result);
		*result = NULL;
		return th_error_set(e, TH_ENOMEM, "out of memory");
	}
	return TH_OK;
}

/* A2A-11-GEN-4: a 1.1 GetTask. With currentGeneration and wait (the binding can hold the
 * request), a task not yet past it fills *wait and leaves *result NULL; otherwise the
 * Task with its generation is the answer. A read never runs a turn; an expired one is left
 * to after-response work (TURN-7), as for 1.0. */
static th_err get_task_v11(struct th_app *app, const struct th_call *call,
                           const struct th_get_req *req, json_object **result,
                           struct th_watch *wait, struct th_error *e)
{
	const struct th_config *cfg = app->cfg;
	int history = req->history_length >= 0 ? req->history_length : cfg->history_default;
	char *text = NULL; /* free */
	int64_t gen = 0, last = 0, expiry = -1;
	th_err rc = th_harness_task_text(app->store, call->participant, req->tenant, req->id,
	                                 history, cfg->lease_ms, &expiry, &text, &gen, &last, e);
	if (rc != TH_OK)
		return rc;
	if (expiry >= 0 && expiry < th_now_ms()) {
		struct th_turn_ctx tc = th_app_turns(app);
		(void)th_defer_turn(&tc.defer, req->id, 0);
	}
	if (wait != NULL && req->has_current_generation && gen <= req->current_generation) {
		free(text);
		*wait = (struct th_watch){.task_id = strdup(req->id),
		                          .viewer = strdup(call->participant),
		                          .tenant = strdup(req->tenant != NULL ? req->tenant : ""),
		                          .cursor = last,
		                          .generations = 1,
		                          .generation = gen,
		                          .long_poll = 1,
		                          .wait_above = req->current_generation,
		                          .history = history};
		if (wait->task_id == NULL || wait->viewer == NULL || wait->tenant == NULL) {
			th_watch_free(wait);
			return th_error_set(e, TH_ENOMEM, "out of memory");
		}
		return TH_OK;
	}
	*result = th_json_raw(text);
	free(text);
	return *result != NULL ? TH_OK : th_error_set(e, TH_ENOMEM, "out of memory");
}

/* GetTask for call, whose tenant tenant_call has read; th_service_get_task's wait. */
static th_err get_task(struct th_app *app, const struct th_call *call, json_object *params,
                       json_object **result, struct th_watch *wait, struct th_error *e)
{
	*result = NULL;
	if (wait != NULL)
		memset(wait, 0, sizeof *wait);
	struct th_get_req req = {0};
	struct th_turn_ctx tc = th_app_turns(app);
	th_err rc = th_a2a_get_decode(params, &req, e);
	req.tenant = call->tenant;
	if (rc == TH_OK && call->a2a_minor >= 1)
		rc = th_a2a_generation_param(params, "currentGeneration", "current_generation", "",
		                             &req.has_current_generation, &req.current_generation,
		                             e);
	if (rc == TH_OK && call->a2a_minor >= 1)
		rc = get_task_v11(app, call, &req, result, wait, e);
	else if (rc == TH_OK)
		rc = th_harness_get(&tc, app->answers, call->participant, &req, result, e);
	th_get_req_free(&req);
	return rc;
}

static th_err list_tasks(struct th_app *app, const struct th_call *call, json_object *params,
                         json_object **result, struct th_error *e)
{
	struct th_list_req req = {0};
	th_err rc = th_a2a_list_decode(params, &req, e);
	req.generations = call->a2a_minor >= 1;
	req.tenant = call->tenant;
	if (rc == TH_OK)
		rc = th_harness_list(app->store, call->participant, &req, result, e);
	th_list_req_free(&req);
	return rc;
}

static th_err cancel_task(struct th_app *app, const struct th_call *call, json_object *params,
                          json_object **result, struct th_error *e)
{
	struct th_cancel_req req = {0};
	th_err rc = th_a2a_cancel_decode(params, &req, e);
	req.tenant = call->tenant;
	if (rc == TH_OK)
		rc = th_harness_cancel(app->store, app->cfg, call->participant, &req, result, e);
	/* A2A-11-GEN-1: a canceled task is terminal; nothing moves its generation on. */
	int64_t gen = 0;
	if (rc == TH_OK && call->a2a_minor >= 1 &&
	    (rc = th_store_task_generation(app->store, req.id, INT64_MAX, &gen, NULL, e)) == TH_OK)
		rc = th_a2a_task_add_generation(result, gen, e);
	if (rc != TH_OK) {
		json_object_put(*result);
		*result = NULL;
	}
	th_cancel_req_free(&req);
	return rc;
}

/* The push config operations name a missing caller before they look at their params. */
static th_err push_caller(const struct th_call *call, const char **who, struct th_error *e)
{
	*who = call != NULL ? call->participant : NULL;
	if (*who == NULL || **who == '\0')
		return th_access_no_participant(e);
	return TH_OK;
}

static th_err push_create(struct th_app *app, const struct th_call *call, json_object *params,
                          json_object **result, struct th_error *e)
{
	const char *who;
	struct th_push_create_req req = {0};
	th_err rc = push_caller(call, &who, e);
	if (rc == TH_OK)
		rc = th_a2a_push_create_decode(params, &app->cfg->lim, &req, e);
	req.tenant = call->tenant;
	if (rc == TH_OK)
		rc = th_pushcfg_create(app->store, app->cfg, who, &req, result, e);
	th_push_create_req_free(&req);
	return rc;
}

static th_err push_get(struct th_app *app, const struct th_call *call, json_object *params,
                       json_object **result, struct th_error *e)
{
	const char *who;
	struct th_push_get_req req = {0};
	th_err rc = push_caller(call, &who, e);
	if (rc == TH_OK)
		rc = th_a2a_push_get_decode(params, &app->cfg->lim, &req, e);
	req.tenant = call->tenant;
	if (rc == TH_OK)
		rc = th_pushcfg_get(app->store, who, &req, result, e);
	th_push_get_req_free(&req);
	return rc;
}

static th_err push_list(struct th_app *app, const struct th_call *call, json_object *params,
                        json_object **result, struct th_error *e)
{
	const char *who;
	struct th_push_list_req req = {0};
	th_err rc = push_caller(call, &who, e);
	if (rc == TH_OK)
		rc = th_a2a_push_list_decode(params, &app->cfg->lim, &req, e);
	req.tenant = call->tenant;
	if (rc == TH_OK)
		rc = th_pushcfg_list(app->store, who, &req, result, e);
	th_push_list_req_free(&req);
	return rc;
}

/* Delete answers no result (JSON-RPC null, REST {}). */
static th_err push_delete(struct th_app *app, const struct th_call *call, json_object *params,
                          struct th_error *e)
{
	const char *who;
	struct th_push_get_req req = {0};
	th_err rc = push_caller(call, &who, e);
	if (rc == TH_OK)
		rc = th_a2a_push_get_decode(params, &app->cfg->lim, &req, e);
	req.tenant = call->tenant;
	if (rc == TH_OK)
		rc = th_pushcfg_delete(app->store, who, &req, e);
	th_push_get_req_free(&req);
	return rc;
}

/* TEN-1: the call as the operations see it: call's, with the tenant params name (the REST
 * binding put the path's there). A tenant that is not served (th_config_tenant) is
 * refused naming it, before any operation looks at its task. */
static th_err tenant_call(struct th_app *app, const struct th_call *call, json_object *params,
                          struct th_call *out, struct th_error *e)
{
	static const struct th_call none = {0};
	*out = call != NULL ? *call : none;
	th_err rc = th_a2a_tenant_decode(params, &out->tenant, e);
	if (rc == TH_OK && out->tenant[0] != '\0' &&
	    !th_config_tenant(app->cfg, out->tenant, NULL, NULL, NULL, NULL))
		rc = th_error_set(e, TH_EINVAL,
		                  "tenant '%s' is not served here (the configuration key tenants "
		                  "names the tenants this agent serves)",
		                  out->tenant);
	return rc;
}

th_err th_service_dead_letters(struct th_app *app, const struct th_call *call0, json_object *params,
                               json_object **result, struct th_error *e)
{
	*result = NULL;
	/* TEN-1, then the caller, then the query: as the push config operations read them. */
	struct th_call cc;
	const char *who;
	struct th_dead_letters_req req = {0};
	th_err rc = tenant_call(app, call0, params, &cc, e);
	if (rc == TH_OK)
		rc = push_caller(&cc, &who, e);
	if (rc == TH_OK)
		rc = th_a2a_dead_letters_decode(params, &req, e);
	req.tenant = cc.tenant;
	if (rc == TH_OK)
		rc = th_pushcfg_dead_letters(app->store, who, &req, result, e);
	th_dead_letters_req_free(&req);
	return rc;
}

th_err th_service_get_task(struct th_app *app, const struct th_call *call0, json_object *params,
                           json_object **result, struct th_watch *wait, struct th_error *e)
{
	*result = NULL;
	if (wait != NULL)
		memset(wait, 0, sizeof *wait);
	/* TEN-1: the tenant as every other operation reads it, a waiting GetTask's too. */
	struct th_call cc;
	th_err rc = tenant_call(app, call0, params, &cc, e);
	return rc != TH_OK ? rc : get_task(app, &cc, params, result, wait, e);
}

th_err th_service_call(struct th_app *app, const struct th_call *call0, enum th_op op,
                       json_object *params, json_object **result, struct th_error *e)
{
	*result = NULL;
	json_object *empty = NULL;
	if (params == NULL)
		params = empty = json_object_new_object();
	struct th_call cc;
	const struct th_call *call = &cc;
	th_err rc = tenant_call(app, call0, params, &cc, e);
	if (rc != TH_OK) {
		json_object_put(empty);
		return rc;
	}
	switch (op) {
	case TH_OP_SEND_MESSAGE:
		rc = send_message(app, call, params, result, e);
		break;
	case TH_OP_GET_TASK:
		rc = get_task(app, call, params, result, NULL, e);
		break;
	case TH_OP_LIST_TASKS:
		rc = list_tasks(app, call, params, result, e);
		break;
	case TH_OP_CANCEL_TASK:
		rc = cancel_task(app, call, params, result, e);
		break;
	case TH_OP_GET_EXTENDED_CARD:
		rc = extended_card(app, call, result, e);
		break;
	case TH_OP_SEND_STREAMING_MESSAGE:
	case TH_OP_SUBSCRIBE_TO_TASK:
		rc = th_error_set(e, TH_EINVALREQ, "%s answers with a stream (text/event-stream)",
		                  th_op_method(op));
		break;
	case TH_OP_CREATE_PUSH_CONFIG:
		rc = push_create(app, call, params, result, e);
		break;
	case TH_OP_GET_PUSH_CONFIG:
		rc = push_get(app, call, params, result, e);
		break;
	case TH_OP_LIST_PUSH_CONFIGS:
		rc = push_list(app, call, params, result, e);
		break;
	case TH_OP_DELETE_PUSH_CONFIG:
		rc = push_delete(app, call, params, e);
		break;
	default:
		rc = th_error_set(e, TH_ENOMETHOD, "unknown operation");
		break;
	}
	json_object_put(empty);
	return rc;
}

/* Last-Event-ID is a decimal event sequence number (STREAM-4). */
static th_err parse_last_event_id(const char *s, int64_t *out, struct th_error *e)
{
	*out = -1;
	if (s == NULL || *s == '\0')
		return TH_OK;
	int64_t v = 0;
	for (const char *p = s; *p; p++) {
		if (*p < '0' || *p > '9' || v > (INT64_MAX - 9) / 10)
			return th_error_set(
			    e, TH_EINVAL,
			    "Last-Event-ID '%.40s' is not an event number this server sent", s);
		v = v * 10 + (*p - '0');
	}
	*out = v;
	return TH_OK;
}

th_err th_service_stream(struct th_app *app, const struct th_call *call0, enum th_op op,
                         json_object *params, const char *last_event_id, struct th_sink *sink,
                         struct th_error *e)
{
	json_object *empty = NULL;
	if (params == NULL)
		params = empty = json_object_new_object();
	struct th_turn_ctx tc = th_app_turns(app);
	struct th_call cc;
	const struct th_call *call = &cc;
	th_err rc = tenant_call(app, call0, params, &cc, e);
	if (rc != TH_OK) {
		json_object_put(empty);
		return rc;
	} else if (op == TH_OP_SEND_STREAMING_MESSAGE) {
		struct th_send_req req = {0};
		int64_t unused = 0; /* a stream's Task event carries the generation itself */
		rc = th_a2a_send_decode(params, &app->cfg->lim, &req, e);
		req.idempotency_key = call->idempotency_key;
		req.replayed = call->replayed;
		req.tenant = call->tenant;
		if (rc == TH_OK)
			rc = send_generation(call, params, &req, &unused, e);
		req.generation = NULL;
		if (rc == TH_OK)
			rc = th_harness_stream_send(&tc, call->participant, call->extensions, &req,
			                            call->a2a_minor >= 1, sink, e);
		th_send_req_free(&req);
	} else if (op == TH_OP_SUBSCRIBE_TO_TASK) {
		struct th_get_req req = {0};
		int64_t after = -1;
		rc = th_a2a_get_decode(params, &req, e);
		if (rc == TH_OK)
			rc = parse_last_event_id(last_event_id, &after, e);
		if (rc == TH_OK)
			rc = th_harness_subscribe(&tc, call->participant, call->tenant, req.id,
			                          after, call->a2a_minor >= 1, sink, e);
		th_get_req_free(&req);
	} else {
		rc = th_error_set(e, TH_EINTERNAL, "%s is not a streaming operation",
		                  th_op_method(op));
	}
	json_object_put(empty);
	return rc;
}

/* The size of a file, 0 when it does not exist (a WAL after the last connection closed). */
static int64_t file_bytes(const char *path)
{
	struct stat sb;
	return stat(path, &sb) == 0 ? (int64_t)sb.st_size : 0;
}

th_err th_service_site_gauges(struct th_app *app, struct th_site_gauges *g, struct th_error *e)
{
	const char *db = app->cfg->db_path;
	g->db_bytes = g->wal_bytes = -1;
	if (db != NULL && !th_is_pg_uri(db)) {
		char wal[4096];
		g->db_bytes = file_bytes(db);
		if (snprintf(wal, sizeof wal, "%s-wal", db) < (int)sizeof wal)
			g->wal_bytes = file_bytes(wal);
	}
	return th_store_push_backlog(app->store, &g->push_backlog, &g->push_dead, e);
}
