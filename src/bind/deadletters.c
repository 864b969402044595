/* SPDX-License-Identifier: Apache-2.0 */
/* deadletters.c — GET <base>pushNotificationDeadLetters and <base>{tenant}/
 * pushNotificationDeadLetters (RET-4, decision-076): the push deliveries that gave up, of
 * the push configs the caller owns, one page at a time. Not an A2A method, so no
 * A2A-Version is asked for and JSON-RPC does not know it; everything else is the REST
 * binding's: the caller is whoever th_bind_identify names (the identity mode, SEC-1's peer
 * rule before it in the router, ID-6, the request rate), the query is read as
 * ListTaskPushNotificationConfigs' (pageSize, pageToken), the path's tenant is the
 * request's (TEN-1), and errors are google.rpc.Status bodies.
 * Called by the router; calls request.c, errors.c and method.c. */
#include <string.h>

#include "bind/bind_int.h"
#include "util/jsonx.h"

/* The path below the base or below /{tenant}: beside A2A's pushNotificationConfigs, whose
 * deliveries these are. */
#define DEAD_LETTERS_PATH "/pushNotificationDeadLetters"

/* The query parameters read (camelCase; snake_case too). */
static const char *const dead_letters_q[] = {"pageSize", "pageToken", NULL};

int th_bind_dead_letters_path(const char *path)
{
	return strcmp(path, DEAD_LETTERS_PATH) == 0;
}

/* The service's params: the query's page and the path's tenant. */
static th_err dead_letters_params(struct th_bind_ctx *ctx, const char *tenant, json_object **out,
                                  struct th_error *e)
{
	json_object *p = json_object_new_object();
	*out = NULL;
	if (p == NULL)
		return th_error_set(e, TH_ENOMEM, "out of memory");
	th_err rc = th_bind_query_values(p, ctx->req->query, dead_letters_q, e);
	if (rc == TH_OK && tenant != NULL &&
	    th_json_put(p, "tenant", json_object_new_string(tenant)) != 0)
		rc = th_error_set(e, TH_ENOMEM, "out of memory");
	if (rc != TH_OK) {
		json_object_put(p);
		return rc;
	}
	*out = p;
	return TH_OK;
}

void th_bind_dead_letters(struct th_bind_ctx *ctx, const char *tenant)
{
	struct th_error e;
	th_error_clear(&e);
	ctx->api = 1; /* the caller's own rows: Cache-Control: no-store (SEC-4) */
	ctx->binding = "rest";
	if (!th_bind_get_or_head(ctx, "pushNotificationDeadLetters"))
		return;
	json_object *params = NULL, *result = NULL;
	th_err rc = th_bind_identify(ctx, &e);
	if (rc == TH_OK)
		rc = dead_letters_params(ctx, tenant, &params, &e);
	if (rc == TH_OK)
		rc = th_service_dead_letters(ctx->app, &ctx->call, params, &result, &e);
	json_object_put(params);
	if (rc != TH_OK) {
		th_bind_rest_error(ctx, 0, &e);
		return;
	}
	th_bind_send_json(ctx, 200, "application/json", result);
}
