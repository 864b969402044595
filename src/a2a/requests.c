/* SPDX-License-Identifier: Apache-2.0 */
/* requests.c — decoders for SendMessage, GetTask, ListTasks and CancelTask params
 * (A2A 1.0 §2.8, §2.9, §9.5). */
#include "a2a/a2a.h"
#include "a2a/a2a_int.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "util/ids.h"
#include "util/jsonx.h"

#define PAGE_SIZE_DEFAULT 50
#define PAGE_SIZE_MAX 100

static th_err need_object(json_object *params, struct th_error *e)
{
	if (params == NULL || !json_object_is_type(params, json_type_object))
		return th_error_set(e, TH_EINVAL, "params must be an object");
	return th_a2a_one_spelling(params, "", e);
}

/* The task id of GetTask/CancelTask: required, non-empty, capped so that no caller
 * ever copies an unbounded id into SQL or an error record. */
static th_err decode_id(json_object *params, char **out, struct th_error *e)
{
	*out = NULL;
	json_object *v = th_json_get2(params, "id", NULL);
	if (v == NULL)
		return th_error_set(e, TH_EINVAL, "id is required");
	if (!json_object_is_type(v, json_type_string))
		return th_error_set(e, TH_EINVAL, "id must be a string");
	size_t len = (size_t)json_object_get_string_len(v);
	if (len == 0)
		return th_error_set(e, TH_EINVAL, "id must not be empty");
	if (len > TH_ID_MAX)
		return th_error_set(e, TH_EINVAL, "id is %zu bytes; the limit is %d", len,
		                    TH_ID_MAX);
	if (memchr(json_object_get_string(v), '\0', len) != NULL)
		return th_error_set(e, TH_EINVAL, "id contains a NUL character (\\u0000)");
	*out = strdup(json_object_get_string(v));
	if (*out == NULL)
		return th_error_set(e, TH_ENOMEM, "out of memory copying id");
	return TH_OK;
}

static th_err decode_config(json_object *params, struct th_send_req *out, struct th_error *e)
{
	json_object *cfg = th_json_get2(params, "configuration", NULL);
	if (cfg == NULL)
		return TH_OK;
	if (!json_object_is_type(cfg, json_type_object))
		return th_error_set(e, TH_EINVAL, "configuration must be an object");
	const char *pre = "configuration.";
	th_err rc = th_a2a_one_spelling(cfg, pre, e);
	if (rc == TH_OK)
		rc = th_a2a_get_history_length(cfg, pre, &out->history_length, e);
	if (rc != TH_OK)
		return rc;
	json_object *b = th_json_get2(cfg, "returnImmediately", "return_immediately");
	if (b != NULL) {
		if (!json_object_is_type(b, json_type_boolean))
			return th_error_set(e, TH_EINVAL,
			                    "configuration.returnImmediately must be a boolean");
		out->return_immediately = json_object_get_boolean(b) ? 1 : 0;
	}
	json_object *modes = th_json_get2(cfg, "acceptedOutputModes", "accepted_output_modes");
	if (modes != NULL) {
		if (!json_object_is_type(modes, json_type_array))
			return th_error_set(
			    e, TH_EINVAL,
			    "configuration.acceptedOutputModes must be an array of strings");
		size_t n = json_object_array_length(modes);
		if (n > TH_A2A_MODES_MAX)
			return th_error_set(
			    e, TH_EINVAL,
			    "configuration.acceptedOutputModes has %zu entries; the "
			    "limit is %d",
			    n, TH_A2A_MODES_MAX);
		for (size_t i = 0; i < n; i++) {
			json_object *m = json_object_array_get_idx(modes, i);
			if (!json_object_is_type(m, json_type_string))
				return th_error_set(
				    e, TH_EINVAL,
				    "configuration.acceptedOutputModes[%zu] must be a string", i);
			if (json_object_get_string_len(m) > TH_A2A_MEDIA_TYPE_MAX)
				return th_error_set(e, TH_EINVAL,
				                    "configuration.acceptedOutputModes[%zu] is %d "
				                    "bytes; the limit is %d",
				                    i, json_object_get_string_len(m),
				                    TH_A2A_MEDIA_TYPE_MAX);
		}
		if (n > 0)
			out->accepted_output_modes = json_object_get(modes);
	}
	/* An inline push config is kept as sent: th_a2a_push_inline_decode (push.c) decodes it
	 * where SendMessage considers it, after the sender's checks (ops/intake.c). */
	json_object *push = NULL;
	rc = th_a2a_get_obj(cfg, "taskPushNotificationConfig", "task_push_notification_config", pre,
	                    0, &push, e);
	if (rc == TH_OK && push != NULL)
		out->push_config = json_object_get(push);
	return rc;
}

th_err th_a2a_tenant_decode(json_object *params, const char **out, struct th_error *e)
{
	*out = "";
	const char *t = NULL;
	th_err rc = th_a2a_get_str(params, "tenant", NULL, "", TH_TENANT_MAX, 1, &t, e);
	if (rc != TH_OK || t == NULL || *t == '\0')
		return rc;
	if (!th_tenant_ok(t, strlen(t)))
		return th_error_set(e, TH_EINVAL,
		                    "tenant '%.64s' is not a tenant name: " TH_TENANT_RULE, t);
	*out = t;
	return TH_OK;
}

th_err th_a2a_send_decode(json_object *params, const struct th_limits *lim, struct th_send_req *out,
                          struct th_error *e)
{
	memset(out, 0, sizeof *out);
	out->history_length = -1;
	th_err rc = need_object(params, e);
	if (rc != TH_OK)
		return rc;
	json_object *md;
	const char *tenant; /* TEN-1: checked here too, so a decoder alone refuses a bad one */
	size_t max_md = lim != NULL ? lim->max_metadata : 0;
	if ((rc = th_a2a_tenant_decode(params, &tenant, e)) != TH_OK ||
	    (rc = th_a2a_message_decode(th_json_get2(params, "message", NULL), lim, &out->message,
	                                e)) != TH_OK ||
	    (rc = decode_config(params, out, e)) != TH_OK ||
	    (rc = th_a2a_get_obj(params, "metadata", NULL, "", max_md, &md, e)) != TH_OK) {
		th_send_req_free(out);
		return rc;
	}
	if (md != NULL)
		out->metadata = json_object_get(md);
	return TH_OK;
}

void th_send_req_free(struct th_send_req *r)
{
	if (r == NULL)
		return;
	json_object_put(r->message);
	json_object_put(r->metadata);
	json_object_put(r->accepted_output_modes);
	json_object_put(r->push_config);
	r->message = NULL;
	r->metadata = NULL;
	r->accepted_output_modes = NULL;
	r->push_config = NULL;
}

th_err th_a2a_get_decode(json_object *params, struct th_get_req *out, struct th_error *e)
{
	memset(out, 0, sizeof *out);
	out->history_length = -1;
	th_err rc = need_object(params, e);
	if (rc == TH_OK)
		rc = decode_id(params, &out->id, e);
	if (rc == TH_OK)
		rc = th_a2a_get_history_length(params, "", &out->history_length, e);
	if (rc != TH_OK)
		th_get_req_free(out);
	return rc;
}

void th_get_req_free(struct th_get_req *r)
{
	if (r == NULL)
		return;
	free(r->id);
	r->id = NULL;
}

static th_err list_status(json_object *params, struct th_list_req *out, struct th_error *e)
{
	json_object *v = th_json_get2(params, "status", NULL);
	if (v == NULL)
		return TH_OK;
	int s = th_state_from_json(v);
	if (s < 0) {
		if (json_object_is_type(v, json_type_string) ||
		    json_object_is_type(v, json_type_int))
			/* %.64s: the value is client text and the message buffer is finite. */
			return th_error_set(e, TH_EINVAL, "status: unknown task state '%.64s'",
			                    json_object_get_string(v));
		return th_error_set(e, TH_EINVAL, "status must be a task state name or number");
	}
	out->status = s;
	return TH_OK;
}

static th_err list_timestamp(json_object *params, struct th_list_req *out, struct th_error *e)
{
	const char *s;
	th_err rc = th_a2a_get_str(params, "statusTimestampAfter", "status_timestamp_after", "",
	                           TH_A2A_TS_MAX, 1, &s, e);
	if (rc != TH_OK || s == NULL)
		return rc;
	if (th_ts_parse(s, &out->status_after_ms) != 0)
		return th_error_set(
		    e, TH_EINVAL,
		    "statusTimestampAfter must be an RFC 3339 timestamp such as "
		    "2026-01-01T00:00:00.000Z or 2026-01-01T01:00:00+01:00 (a real date)");
	return TH_OK;
}

static th_err decode_list(json_object *params, struct th_list_req *out, struct th_error *e)
{
	const char *s;
	th_err rc = th_a2a_get_str(params, "contextId", "context_id", "", TH_ID_MAX, 1, &s, e);
	if (rc != TH_OK)
		return rc;
	if (s != NULL && (out->context_id = strdup(s)) == NULL)
		return th_error_set(e, TH_ENOMEM, "out of memory copying contextId");
	if ((rc = list_status(params, out, e)) != TH_OK)
		return rc;
	int present;
	int64_t n;
	if ((rc = th_a2a_get_int(params, "pageSize", "page_size", "", &present, &n, e)) != TH_OK)
		return rc;
	if (present) {
		if (n < 1 || n > PAGE_SIZE_MAX)
			return th_error_set(e, TH_EINVAL, "pageSize must be between 1 and %d",
			                    PAGE_SIZE_MAX);
		out->page_size = (int)n;
	}
	/* Tokens are ours and short; a long one is garbage, refuse it before it reaches SQL. */
	if ((rc = th_a2a_get_str(params, "pageToken", "page_token", "", TH_PAGE_TOKEN_MAX, 1, &s,
	                         e)) != TH_OK)
		return rc;
	if (s != NULL && (out->page_token = strdup(s)) == NULL)
		return th_error_set(e, TH_ENOMEM, "out of memory copying pageToken");
	if ((rc = th_a2a_get_history_length(params, "", &out->history_length, e)) != TH_OK)
		return rc;
	if ((rc = list_timestamp(params, out, e)) != TH_OK)
		return rc;
	return th_a2a_get_bool(params, "includeArtifacts", "include_artifacts", "", &present,
	                       &out->include_artifacts, e);
}

th_err th_a2a_list_decode(json_object *params, struct th_list_req *out, struct th_error *e)
{
	memset(out, 0, sizeof *out);
	out->status_after_ms = -1;
	out->page_size = PAGE_SIZE_DEFAULT;
	out->history_length = -1;
	th_err rc = need_object(params, e);
	if (rc == TH_OK)
		rc = decode_list(params, out, e);
	if (rc != TH_OK) {
		th_list_req_free(out);
		out->status_after_ms = -1;
		out->page_size = PAGE_SIZE_DEFAULT;
		out->history_length = -1;
	}
	return rc;
}

void th_list_req_free(struct th_list_req *r)
{
	if (r == NULL)
		return;
	free(r->context_id);
	free(r->page_token);
	r->context_id = NULL;
	r->page_token = NULL;
}

th_err th_a2a_cancel_decode(json_object *params, struct th_cancel_req *out, struct th_error *e)
{
	memset(out, 0, sizeof *out);
	th_err rc = need_object(params, e);
	if (rc == TH_OK)
		rc = decode_id(params, &out->id, e);
	json_object *md = NULL;
	if (rc == TH_OK)
		rc = th_a2a_get_obj(params, "metadata", NULL, "", 0, &md, e);
	if (rc != TH_OK) {
		th_cancel_req_free(out);
		return rc;
	}
	if (md != NULL)
		out->metadata = json_object_get(md);
	return TH_OK;
}

void th_cancel_req_free(struct th_cancel_req *r)
{
	if (r == NULL)
		return;
	free(r->id);
	json_object_put(r->metadata);
	r->id = NULL;
	r->metadata = NULL;
}
