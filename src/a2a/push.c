/* SPDX-License-Identifier: Apache-2.0 */
/* push.c — decoders for the push notification config requests (PUSH-1): Create, Get,
 * List and DeleteTaskPushNotificationConfig, the config SendMessage may carry in
 * configuration.taskPushNotificationConfig, and the page of the caller's dead letters
 * (RET-4, read as the config list's page).
 *
 * Their messages name the field and say what was sent instead ("token must be a string,
 * not an array"); values that travel in HTTP headers (token, credentials, the scheme) are
 * checked here for the characters a header may hold. Whether the URL may receive pushes
 * (PUSH-3) and whether the server holds a key for secrets (PUSH-4) are not the wire's
 * business: ops/pushcfg.c asks push/ before it stores anything. */
#include "a2a/a2a.h"
#include "a2a/a2a_int.h"

#include <stdlib.h>
#include <string.h>

#include "util/jsonx.h"

/* Longest token or credentials accepted (they travel as HTTP header values). */
#define SECRET_MAX 4096
#define SCHEME_MAX 64
#define PAGE_DEFAULT 50
#define PAGE_MAX 100
#define PAGE_TOKEN_MAX 64

static const char *type_name(json_object *v)
{
	switch (json_object_get_type(v)) {
	case json_type_boolean:
		return "a boolean";
	case json_type_double:
	case json_type_int:
		return "a number";
	case json_type_object:
		return "an object";
	case json_type_array:
		return "an array";
	case json_type_string:
		return "a string";
	default:
		return "null";
	}
}

/* Bytes 0x20..0x7e only: the value goes into an HTTP header or a URL path. */
static int printable(const char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || (unsigned char)*s > 0x7e)
			return 0;
	return 1;
}

/* An HTTP auth-scheme is an RFC 9110 token. */
static int is_token(const char *s)
{
	if (*s == '\0')
		return 0;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		      (*s >= '0' && *s <= '9') || strchr("!#$%&'*+-.^_`|~", *s) != NULL))
			return 0;
	return 1;
}

/* A string field by its camelCase or snake_case name; "" counts as absent. path names
 * the field in messages; max > 0 caps its length in bytes. */
static th_err get_str(json_object *o, const char *camel, const char *snake, const char *path,
                      size_t max, const char **out, struct th_error *e)
{
	*out = NULL;
	json_object *v = th_json_get2(o, camel, snake);
	if (v == NULL)
		return TH_OK;
	if (!json_object_is_type(v, json_type_string))
		return th_error_set(e, TH_EINVAL, "%s must be a string, not %s", path,
		                    type_name(v));
	const char *s = json_object_get_string(v);
	size_t n = (size_t)json_object_get_string_len(v);
	if (n == 0)
		return TH_OK;
	if (strlen(s) != n)
		return th_error_set(e, TH_EINVAL, "%s contains a NUL character", path);
	if (max > 0 && n > max)
		return th_error_set(e, TH_EINVAL, "%s is %zu bytes long; at most %zu are accepted",
		                    path, n, max);
	*out = s;
	return TH_OK;
}

/* taskId (required unless task_optional) and id (required when need_id), which every
 * push config request carries. */
static th_err need_ids(json_object *params, const struct th_limits *lim, int need_id,
                       int task_optional, const char **task_id, const char **id, struct th_error *e)
{
	if (params == NULL || !json_object_is_type(params, json_type_object))
		return th_error_set(e, TH_EINVAL, "params must be an object");
	size_t max = lim != NULL ? lim->max_id : 0;
	th_err rc = th_a2a_one_spelling(params, "", e);
	if (rc == TH_OK)
		rc = get_str(params, "taskId", "task_id", "taskId", max, task_id, e);
	if (rc == TH_OK)
		rc = get_str(params, "id", NULL, "id", max, id, e);
	if (rc != TH_OK)
		return rc;
	if (*task_id == NULL && !task_optional)
		return th_error_set(e, TH_EINVAL,
		                    "taskId is required: the task the push "
		                    "notification config belongs to");
	if (need_id && *id == NULL)
		return th_error_set(e, TH_EINVAL,
		                    "id is required: the push notification config's id");
	if (*id != NULL && !printable(*id))
		return th_error_set(e, TH_EINVAL, "id may contain printable ASCII characters only");
	return TH_OK;
}

/* authentication: {scheme, credentials?}, optional. */
static th_err decode_auth(json_object *params, struct th_push_create_req *r, struct th_error *e)
{
	json_object *auth = th_json_get2(params, "authentication", NULL);
	if (auth == NULL)
		return TH_OK;
	if (!json_object_is_type(auth, json_type_object))
		return th_error_set(e, TH_EINVAL,
		                    "authentication must be an object {scheme, "
		                    "credentials}, not %s",
		                    type_name(auth));
	th_err rc =
	    get_str(auth, "scheme", NULL, "authentication.scheme", SCHEME_MAX, &r->scheme, e);
	if (rc == TH_OK)
		rc = get_str(auth, "credentials", NULL, "authentication.credentials", SECRET_MAX,
		             &r->credentials, e);
	if (rc != TH_OK)
		return rc;
	if (r->scheme == NULL)
		return th_error_set(e, TH_EINVAL,
		                    "authentication.scheme is required (an HTTP authentication "
		                    "scheme such as Bearer or Basic)");
	if (!is_token(r->scheme))
		return th_error_set(
		    e, TH_EINVAL,
		    "authentication.scheme must be an HTTP authentication scheme "
		    "name such as Bearer or Basic (letters, digits and !#$%%&'*+-.^_`|~)");
	if (r->credentials != NULL && !printable(r->credentials))
		return th_error_set(e, TH_EINVAL,
		                    "authentication.credentials may contain printable ASCII "
		                    "characters only (they are sent in the Authorization header)");
	return TH_OK;
}

static th_err decode_create(json_object *params, const struct th_limits *lim, int inline_config,
                            struct th_push_create_req *r, struct th_error *e)
{
	th_err rc = need_ids(params, lim, 0, inline_config, &r->task_id, &r->id, e);
	if (rc == TH_OK)
		rc = get_str(params, "url", NULL, "url", TH_A2A_URL_MAX, &r->url, e);
	if (rc == TH_OK)
		rc = get_str(params, "token", NULL, "token", SECRET_MAX, &r->token, e);
	if (rc != TH_OK)
		return rc;
	if (r->url == NULL) {
		if (th_json_get2(params, "pushNotificationConfig", "push_notification_config") !=
		    NULL)
			return th_error_set(
			    e, TH_EINVAL,
			    "url is required; A2A 1.0 sends the config flat ({taskId, "
			    "url, token, authentication}), not inside "
			    "pushNotificationConfig");
		return th_error_set(e, TH_EINVAL,
		                    "url is required: the http:// or https:// address to POST the "
		                    "task's events to");
	}
	if (r->token != NULL && !printable(r->token))
		return th_error_set(e, TH_EINVAL,
		                    "token may contain printable ASCII characters only (it is sent "
		                    "in the X-A2A-Notification-Token header)");
	return decode_auth(params, r, e);
}

static th_err create_decode(json_object *params, const struct th_limits *lim, int inline_config,
                            struct th_push_create_req *out, struct th_error *e)
{
	memset(out, 0, sizeof *out);
	out->params = json_object_get(params);
	th_err rc = decode_create(params, lim, inline_config, out, e);
	if (rc != TH_OK)
		th_push_create_req_free(out);
	return rc;
}

th_err th_a2a_push_create_decode(json_object *params, const struct th_limits *lim,
                                 struct th_push_create_req *out, struct th_error *e)
{
	return create_decode(params, lim, 0, out, e);
}

th_err th_a2a_push_inline_decode(json_object *config, const struct th_limits *lim,
                                 struct th_push_create_req *out, struct th_error *e)
{
	return create_decode(config, lim, 1, out, e);
}

void th_push_create_req_free(struct th_push_create_req *r)
{
	if (r == NULL)
		return;
	json_object_put(r->params);
	memset(r, 0, sizeof *r);
}

th_err th_a2a_push_get_decode(json_object *params, const struct th_limits *lim,
                              struct th_push_get_req *out, struct th_error *e)
{
	memset(out, 0, sizeof *out);
	out->params = json_object_get(params);
	th_err rc = need_ids(params, lim, 1, 0, &out->task_id, &out->id, e);
	if (rc != TH_OK)
		th_push_get_req_free(out);
	return rc;
}

void th_push_get_req_free(struct th_push_get_req *r)
{
	if (r == NULL)
		return;
	json_object_put(r->params);
	memset(r, 0, sizeof *r);
}

/* pageSize as a JSON number or (REST query values are text) a decimal string; -1 when
 * it is neither a whole number nor in 0..PAGE_MAX. */
static long long page_size_of(json_object *v)
{
	long long n = -1;
	if (json_object_is_type(v, json_type_int)) {
		n = json_object_get_int64(v);
	} else if (json_object_is_type(v, json_type_string)) {
		const char *s = json_object_get_string(v);
		char *end;
		n = strtoll(s, &end, 10);
		if (*s == '\0' || *end != '\0')
			n = -1;
	} else if (json_object_is_type(v, json_type_double)) {
		double d = json_object_get_double(v);
		n = d >= 0 && d <= PAGE_MAX && d == (double)(long long)d ? (long long)d : -1;
	}
	return n < 0 || n > PAGE_MAX ? -1 : n;
}

/* pageToken and pageSize, as every list of this file reads them. */
static th_err decode_page(json_object *params, int *page_size, const char **page_token,
                          struct th_error *e)
{
	th_err rc =
	    get_str(params, "pageToken", "page_token", "pageToken", PAGE_TOKEN_MAX, page_token, e);
	if (rc != TH_OK)
		return rc;
	*page_size = PAGE_DEFAULT;
	json_object *v = th_json_get2(params, "pageSize", "page_size");
	if (v == NULL)
		return TH_OK;
	long long n = page_size_of(v);
	if (n < 0)
		return th_error_set(e, TH_EINVAL, "pageSize must be a whole number from 1 to %d",
		                    PAGE_MAX);
	if (n > 0)
		*page_size = (int)n;
	return TH_OK;
}

static th_err decode_list(json_object *params, const struct th_limits *lim,
                          struct th_push_list_req *r, struct th_error *e)
{
	const char *id; /* not part of the request, but checked like everywhere else */
	th_err rc = need_ids(params, lim, 0, 0, &r->task_id, &id, e);
	return rc != TH_OK ? rc : decode_page(params, &r->page_size, &r->page_token, e);
}

th_err th_a2a_push_list_decode(json_object *params, const struct th_limits *lim,
                               struct th_push_list_req *out, struct th_error *e)
{
	memset(out, 0, sizeof *out);
	out->params = json_object_get(params);
	th_err rc = decode_list(params, lim, out, e);
	if (rc != TH_OK)
		th_push_list_req_free(out);
	return rc;
}

void th_push_list_req_free(struct th_push_list_req *r)
{
	if (r == NULL)
		return;
	json_object_put(r->params);
	memset(r, 0, sizeof *r);
}

th_err th_a2a_dead_letters_decode(json_object *params, struct th_dead_letters_req *out,
                                  struct th_error *e)
{
	memset(out, 0, sizeof *out);
	out->params = json_object_get(params);
	th_err rc = decode_page(params, &out->page_size, &out->page_token, e);
	if (rc != TH_OK)
		th_dead_letters_req_free(out);
	return rc;
}

void th_dead_letters_req_free(struct th_dead_letters_req *r)
{
	if (r == NULL)
		return;
	json_object_put(r->params);
	memset(r, 0, sizeof *r);
}
