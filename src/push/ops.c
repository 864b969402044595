/* ops.c — the four push config operations (PUSH-1) for the service layer.
 *
 * A config belongs to the task and to the participant who created it: any participant
 * of the task, watchers included (ID-4), manages their own and never sees another's. A
 * stranger or an unknown task gets the one TaskNotFound of harness/access.c (ID-3).
 * Tokens and credentials are sealed before they reach the store (PUSH-4) and are never
 * returned (docs/decisions/decision-008.md). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/config.h"
#include "harness/access.h"
#include "push/push.h"
#include "push/push_int.h"
#include "store/store.h"
#include "util/buf.h"
#include "util/ids.h"
#include "util/jsonx.h"

/* Longest token or credentials accepted (they travel as HTTP header values). */
#define SECRET_MAX 4096
#define SCHEME_MAX 64
#define PAGE_DEFAULT 50
#define PAGE_MAX 100

struct cfg_req {
	const char *task_id;     /* borrowed from params */
	const char *id;          /* NULL when absent or "" */
	const char *url;         /* NULL when absent */
	const char *token;       /* NULL when absent or "" */
	const char *scheme;      /* NULL without authentication */
	const char *credentials; /* NULL when absent or "" */
	int page_size;
	const char *page_token; /* NULL when absent or "" */
	int inline_config;      /* SendMessage's configuration.taskPushNotificationConfig */
};

/* ---- decoding ---------------------------------------------------------------------------- */

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
 * the field in messages; max caps its length in bytes. */
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

static th_err need_ids(struct th_app *app, json_object *params, struct cfg_req *r, int need_id,
                       int task_optional, struct th_error *e)
{
	if (params == NULL || !json_object_is_type(params, json_type_object))
		return th_error_set(e, TH_EINVAL, "params must be an object");
	size_t max = app->cfg->lim.max_id;
	th_err rc = get_str(params, "taskId", "task_id", "taskId", max, &r->task_id, e);
	if (rc == TH_OK)
		rc = get_str(params, "id", NULL, "id", max, &r->id, e);
	if (rc != TH_OK)
		return rc;
	if (r->task_id == NULL && !task_optional)
		return th_error_set(e, TH_EINVAL,
		                    "taskId is required: the task the push "
		                    "notification config belongs to");
	if (need_id && r->id == NULL)
		return th_error_set(e, TH_EINVAL,
		                    "id is required: the push notification config's id");
	if (r->id != NULL && !printable(r->id))
		return th_error_set(e, TH_EINVAL, "id may contain printable ASCII characters only");
	return TH_OK;
}

static th_err decode_create(struct th_app *app, json_object *params, struct cfg_req *r,
                            struct th_error *e)
{
	th_err rc = need_ids(app, params, r, 0, r->inline_config, e);
	if (rc == TH_OK)
		rc = get_str(params, "url", NULL, "url", 0, &r->url, e);
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
	json_object *auth = th_json_get2(params, "authentication", NULL);
	if (auth == NULL)
		return TH_OK;
	if (!json_object_is_type(auth, json_type_object))
		return th_error_set(e, TH_EINVAL,
		                    "authentication must be an object {scheme, "
		                    "credentials}, not %s",
		                    type_name(auth));
	rc = get_str(auth, "scheme", NULL, "authentication.scheme", SCHEME_MAX, &r->scheme, e);
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

static th_err decode_list(struct th_app *app, json_object *params, struct cfg_req *r,
                          struct th_error *e)
{
	th_err rc = need_ids(app, params, r, 0, 0, e);
	if (rc == TH_OK)
		rc = get_str(params, "pageToken", "page_token", "pageToken", 64, &r->page_token, e);
	if (rc != TH_OK)
		return rc;
	r->page_size = PAGE_DEFAULT;
	json_object *v = th_json_get2(params, "pageSize", "page_size");
	if (v == NULL)
		return TH_OK;
	long long n = -1;
	if (json_object_is_type(v, json_type_int)) {
		n = json_object_get_int64(v);
	} else if (json_object_is_type(v, json_type_string)) {
		/* REST query values are text. */
		const char *s = json_object_get_string(v);
		char *end;
		n = strtoll(s, &end, 10);
		if (*s == '\0' || *end != '\0')
			n = -1;
	} else if (json_object_is_type(v, json_type_double)) {
		double d = json_object_get_double(v);
		n = d >= 0 && d <= PAGE_MAX && d == (double)(long long)d ? (long long)d : -1;
	}
	if (n < 0 || n > PAGE_MAX)
		return th_error_set(e, TH_EINVAL, "pageSize must be a whole number from 1 to %d",
		                    PAGE_MAX);
	if (n > 0)
		r->page_size = (int)n;
	return TH_OK;
}

/* ---- encoding ----------------------------------------------------------------------------- */

/* TaskPushNotificationConfig without token and credentials (write-only, decision-008). */
static json_object *config_json(const struct th_push_config *c)
{
	json_object *o = json_object_new_object();
	if (o == NULL)
		return NULL;
	int bad = json_object_object_add(o, "taskId", json_object_new_string(c->task_id)) |
	          json_object_object_add(o, "id", json_object_new_string(c->config_id)) |
	          json_object_object_add(o, "url", json_object_new_string(c->url));
	if (c->auth_scheme != NULL) {
		json_object *a = json_object_new_object();
		bad |= a == NULL ||
		       json_object_object_add(a, "scheme", json_object_new_string(c->auth_scheme));
		bad |= json_object_object_add(o, "authentication", a);
	}
	if (bad) {
		json_object_put(o);
		return NULL;
	}
	return o;
}

static th_err answer(const struct th_push_config *c, json_object **result, struct th_error *e)
{
	*result = config_json(c);
	return *result != NULL ? TH_OK : th_error_set(e, TH_ENOMEM, "out of memory");
}

/* ---- the operations ------------------------------------------------------------------------ */

static const char *const WHAT = "manage push notification configs of";

static th_err access(struct th_app *app, const char *participant, const char *task_id,
                     struct th_error *e)
{
	return th_access_check(app->store, task_id, participant, TH_ACCESS_READ, WHAT, NULL, e);
}

/* Seals the token and the credentials of r into c (PUSH-4). */
static th_err seal_secrets(const struct cfg_req *r, struct th_push_config *c, struct th_error *e)
{
	if (r->token == NULL && r->credentials == NULL)
		return TH_OK;
	unsigned char key[TH_PUSH_KEY_LEN];
	struct th_error sub;
	th_error_clear(&sub);
	th_err rc = th_push_key(key, &sub);
	if (rc == TH_EUNSUPPORTED)
		return th_error_set(
		    e, TH_EUNSUPPORTED, "%s %s",
		    r->token != NULL ? "token:" : "authentication.credentials:", sub.msg);
	if (rc != TH_OK) {
		fprintf(stderr, "tiny-harness: %s\n", sub.msg);
		return th_error_set(e, rc, "%s", sub.msg);
	}
	if (r->token != NULL)
		rc = th_push_seal(key, "token", c->task_id, c->config_id, r->token, &c->token_enc,
		                  &c->token_len, e);
	if (rc == TH_OK && r->credentials != NULL)
		rc = th_push_seal(key, "credentials", c->task_id, c->config_id, r->credentials,
		                  &c->auth_enc, &c->auth_len, e);
	th_push_wipe(key, sizeof key);
	return rc;
}

/* The participant may hold push_max_configs configs on a task; replacing one of them
 * is always allowed. Inside the transaction. */
static th_err check_limit(struct th_app *app, const struct th_push_config *c, struct th_error *e)
{
	struct th_push_config *mine = NULL;
	size_t n = 0;
	th_err rc = th_store_push_configs(app->store, c->task_id, c->participant_id, &mine, &n, e);
	if (rc != TH_OK)
		return rc;
	int replacing = 0;
	for (size_t i = 0; i < n; i++)
		replacing |= strcmp(mine[i].config_id, c->config_id) == 0;
	th_push_configs_free(mine, n);
	if (!replacing && n >= (size_t)app->cfg->push_max_configs)
		return th_error_set(
		    e, TH_EINVAL,
		    "participant %.100s already has %zu push notification configs on "
		    "task %.100s, the limit (push_max_configs); delete one first",
		    c->participant_id, n, c->task_id);
	return TH_OK;
}

static th_err op_create(struct th_app *app, const char *participant, json_object *params,
                        json_object **result, struct th_error *e)
{
	struct cfg_req r = {0};
	th_err rc = decode_create(app, params, &r, e);
	if (rc == TH_OK)
		rc = access(app, participant, r.task_id, e);
	/* DNS happens here, before any transaction (PUSH-3). */
	if (rc == TH_OK)
		rc = th_push_url_check(r.url, app->cfg->push_allow_private, NULL, e);
	if (rc != TH_OK)
		return rc;
	char uuid[TH_UUID_LEN + 1];
	if (r.id == NULL) {
		th_uuid(uuid);
		r.id = uuid;
	}
	struct th_push_config c = {0};
	c.task_id = strdup(r.task_id);
	c.config_id = strdup(r.id);
	c.participant_id = strdup(participant);
	c.url = strdup(r.url);
	c.auth_scheme = r.scheme != NULL ? strdup(r.scheme) : NULL;
	if (c.task_id == NULL || c.config_id == NULL || c.participant_id == NULL || c.url == NULL ||
	    (r.scheme != NULL && c.auth_scheme == NULL))
		rc = th_error_set(e, TH_ENOMEM, "out of memory");
	if (rc == TH_OK)
		rc = seal_secrets(&r, &c, e);
	if (rc == TH_OK)
		rc = th_store_begin(app->store, e);
	if (rc == TH_OK) {
		/* Again inside the transaction: the participant may have left meanwhile. */
		rc = access(app, participant, r.task_id, e);
		if (rc == TH_OK)
			rc = check_limit(app, &c, e);
		if (rc == TH_OK) {
			rc = th_store_push_config_put(app->store, &c, e);
			if (rc == TH_ENOTFOUND)
				rc = th_access_not_found(r.task_id, e);
			else if (rc == TH_EINVAL)
				rc = th_error_set(
				    e, TH_EINVAL,
				    "id %.100s is already used by another push notification "
				    "config of task %.100s; choose another id or leave it empty",
				    c.config_id, c.task_id);
		}
		if (rc == TH_OK)
			rc = th_store_commit(app->store, e);
		if (rc != TH_OK)
			th_store_rollback(app->store);
	}
	if (rc == TH_OK)
		rc = answer(&c, result, e);
	th_push_config_free(&c);
	return rc;
}

static th_err config_not_found(const char *task_id, const char *id, struct th_error *e)
{
	th_error_set(e, TH_ENOTFOUND, "push notification config %.100s not found on task %.100s",
	             id, task_id);
	snprintf(e->task_id, sizeof e->task_id, "%s", task_id);
	return TH_ENOTFOUND;
}

static th_err op_get(struct th_app *app, const char *participant, json_object *params,
                     json_object **result, struct th_error *e)
{
	struct cfg_req r = {0};
	th_err rc = need_ids(app, params, &r, 1, 0, e);
	if (rc == TH_OK)
		rc = access(app, participant, r.task_id, e);
	if (rc != TH_OK)
		return rc;
	struct th_push_config c;
	struct th_error sub;
	th_error_clear(&sub);
	rc = th_store_push_config_get(app->store, r.task_id, r.id, participant, &c, &sub);
	if (rc == TH_ENOTFOUND)
		return config_not_found(r.task_id, r.id, e);
	if (rc != TH_OK)
		return th_error_set(e, rc, "%s", sub.msg);
	rc = answer(&c, result, e);
	th_push_config_free(&c);
	return rc;
}

/* Page tokens: "p" and the offset of the next config, in hex so they read as opaque. */
static int page_token_decode(const char *tok, size_t *offset)
{
	if (tok[0] != 'p' || tok[1] == '\0' || strlen(tok) > 9)
		return -1;
	unsigned long v = 0;
	for (const char *p = tok + 1; *p; p++) {
		int d = (*p >= '0' && *p <= '9')   ? *p - '0'
		        : (*p >= 'a' && *p <= 'f') ? *p - 'a' + 10
		                                   : -1;
		if (d < 0)
			return -1;
		v = v * 16 + (unsigned long)d;
	}
	*offset = v;
	return 0;
}

static th_err op_list(struct th_app *app, const char *participant, json_object *params,
                      json_object **result, struct th_error *e)
{
	struct cfg_req r = {0};
	th_err rc = decode_list(app, params, &r, e);
	if (rc == TH_OK)
		rc = access(app, participant, r.task_id, e);
	if (rc != TH_OK)
		return rc;
	size_t offset = 0;
	if (r.page_token != NULL && page_token_decode(r.page_token, &offset) != 0)
		return th_error_set(e, TH_EINVAL,
		                    "pageToken is not a token this server issued (use the "
		                    "nextPageToken of a previous ListTaskPushNotificationConfigs "
		                    "response)");
	struct th_push_config *v = NULL;
	size_t n = 0;
	rc = th_store_push_configs(app->store, r.task_id, participant, &v, &n, e);
	if (rc != TH_OK)
		return rc;
	json_object *out = json_object_new_object(), *arr = json_object_new_array();
	int bad = out == NULL || arr == NULL;
	size_t end = offset + (size_t)r.page_size;
	for (size_t i = offset; !bad && i < n && i < end; i++) {
		json_object *c = config_json(&v[i]);
		bad |= c == NULL || json_object_array_add(arr, c) != 0;
	}
	char next[24] = "";
	if (end < n)
		snprintf(next, sizeof next, "p%zx", end);
	th_push_configs_free(v, n);
	if (!bad) {
		bad |= json_object_object_add(out, "configs", arr);
		arr = NULL;
		bad |= json_object_object_add(out, "nextPageToken", json_object_new_string(next));
	}
	json_object_put(arr);
	if (bad) {
		json_object_put(out);
		return th_error_set(e, TH_ENOMEM, "out of memory");
	}
	*result = out;
	return TH_OK;
}

/* Deleting is idempotent (A2A §3.7): a config that is not there — never created, already
 * deleted, or another participant's (which stays) — answers like a deleted one. */
static th_err op_delete(struct th_app *app, const char *participant, json_object *params,
                        json_object **result, struct th_error *e)
{
	*result = NULL;
	struct cfg_req r = {0};
	th_err rc = need_ids(app, params, &r, 1, 0, e);
	if (rc == TH_OK)
		rc = access(app, participant, r.task_id, e);
	if (rc == TH_OK)
		rc = th_store_begin(app->store, e);
	if (rc != TH_OK)
		return rc;
	struct th_error sub;
	th_error_clear(&sub);
	rc = th_store_push_config_delete(app->store, r.task_id, r.id, participant, &sub);
	if (rc == TH_ENOTFOUND)
		rc = TH_OK;
	else if (rc != TH_OK)
		th_error_set(e, rc, "%s", sub.msg);
	if (rc == TH_OK)
		rc = th_store_commit(app->store, e);
	if (rc != TH_OK)
		th_store_rollback(app->store);
	return rc;
}

th_err th_push_op(struct th_app *app, const struct th_call *call, enum th_op op,
                  json_object *params, json_object **result, struct th_error *e)
{
	*result = NULL;
	const char *who = call != NULL ? call->participant : NULL;
	if (who == NULL || *who == '\0')
		return th_access_no_participant(e);
	switch (op) {
	case TH_OP_CREATE_PUSH_CONFIG:
		return op_create(app, who, params, result, e);
	case TH_OP_GET_PUSH_CONFIG:
		return op_get(app, who, params, result, e);
	case TH_OP_LIST_PUSH_CONFIGS:
		return op_list(app, who, params, result, e);
	case TH_OP_DELETE_PUSH_CONFIG:
		return op_delete(app, who, params, result, e);
	default:
		return th_error_set(e, TH_EINTERNAL, "%s is not a push notification operation",
		                    th_op_method(op));
	}
}

/* ---- inline configs (SendMessageConfiguration.taskPushNotificationConfig) ------------------ */

th_err th_push_inline_check(struct th_app *app, json_object *config, struct th_error *e)
{
	struct cfg_req r = {.inline_config = 1};
	th_err rc = decode_create(app, config, &r, e);
	/* DNS now, before the request's transaction (PUSH-3). */
	if (rc == TH_OK)
		rc = th_push_url_check(r.url, app->cfg->push_allow_private, NULL, e);
	if (rc == TH_OK && (r.token != NULL || r.credentials != NULL)) {
		unsigned char key[TH_PUSH_KEY_LEN];
		struct th_error sub;
		th_error_clear(&sub);
		rc = th_push_key(key, &sub);
		th_push_wipe(key, sizeof key);
		if (rc != TH_OK)
			rc = th_error_set(e, rc, "configuration.taskPushNotificationConfig: %s", sub.msg);
	}
	return rc;
}

th_err th_push_inline_attach(struct th_app *app, const char *participant, const char *task_id,
                             json_object *config, struct th_error *e)
{
	struct cfg_req r = {.inline_config = 1};
	th_err rc = decode_create(app, config, &r, e);
	if (rc != TH_OK)
		return rc;
	if (r.task_id != NULL && strcmp(r.task_id, task_id) != 0)
		return th_error_set(e, TH_EINVAL,
		                    "configuration.taskPushNotificationConfig.taskId names another task "
		                    "than the message (leave it empty)");
	char uuid[TH_UUID_LEN + 1];
	if (r.id == NULL) {
		th_uuid(uuid);
		r.id = uuid;
	}
	struct th_push_config c = {0};
	c.task_id = strdup(task_id);
	c.config_id = strdup(r.id);
	c.participant_id = strdup(participant);
	c.url = strdup(r.url);
	c.auth_scheme = r.scheme != NULL ? strdup(r.scheme) : NULL;
	if (c.task_id == NULL || c.config_id == NULL || c.participant_id == NULL || c.url == NULL ||
	    (r.scheme != NULL && c.auth_scheme == NULL))
		rc = th_error_set(e, TH_ENOMEM, "out of memory");
	if (rc == TH_OK)
		rc = seal_secrets(&r, &c, e);
	if (rc == TH_OK)
		rc = check_limit(app, &c, e);
	if (rc == TH_OK && (rc = th_store_push_config_put(app->store, &c, e)) == TH_EINVAL)
		rc = th_error_set(e, TH_EINVAL,
		                  "configuration.taskPushNotificationConfig.id %.100s is already used "
		                  "on task %.100s; choose another id or leave it empty",
		                  c.config_id, c.task_id);
	th_push_config_free(&c);
	return rc;
}
