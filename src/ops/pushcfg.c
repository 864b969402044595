/* SPDX-License-Identifier: Apache-2.0 */
/* pushcfg.c — the push notification config operations (PUSH-1), the config sent
 * inline with SendMessage, and the dead letters of the caller's configs (RET-4).
 *
 * Requests arrive decoded by a2a/push.c. The caller's access is checked first (a
 * stranger learns nothing, not even about URLs), then the URL with its DNS look-up
 * (push/url.c, never inside a transaction), then the secrets are sealed (push/secret.c,
 * PUSH-4) and the config stored in a short transaction that checks the access again.
 * Tokens and credentials are never returned (docs/decisions/decision-008.md). */
#include "ops/pushcfg.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/settings.h"
#include "domain/access.h"
#include "push/push.h"
#include "store/store.h"
#include "util/ids.h"
#include "util/jsonx.h"
#include "util/log.h"
#include "util/text.h"

/* ---- answers ------------------------------------------------------------------------------- */

/* TaskPushNotificationConfig without token and credentials (write-only, decision-008). */
static json_object *config_json(const struct th_push_config *c)
{
	json_object *o = json_object_new_object();
	if (o == NULL)
		return NULL;
	int bad = th_json_put(o, "taskId", json_object_new_string(c->task_id));
	bad |= th_json_put(o, "id", json_object_new_string(c->config_id));
	bad |= th_json_put(o, "url", json_object_new_string(c->url));
	if (c->auth_scheme != NULL) {
		json_object *a = json_object_new_object();
		bad |= th_json_put(a, "scheme", json_object_new_string(c->auth_scheme));
		bad |= th_json_put(o, "authentication", a);
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

/* ---- storing a config ---------------------------------------------------------------------- */

static const char *const WHAT = "manage push notification configs of";

/* TEN-2: a task of another tenant is not found, as a task the participant is not on. */
static th_err access(struct th_store *st, const char *tenant, const char *participant,
                     const char *task_id, struct th_error *e)
{
	return th_access_check(st, tenant, task_id, participant, TH_ACCESS_READ, WHAT, NULL, e);
}

/* Seals the token and the credentials of r into c (PUSH-4). */
static th_err seal_secrets(const struct th_push_create_req *r, struct th_push_config *c,
                           struct th_error *e)
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
		th_log(TH_LOG_ERROR, "%s", sub.msg);
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

/* The row for r on task task_id, owned by participant, its secrets sealed; a config
 * without an id is given a UUID. c is zeroed first; free it with th_push_config_free,
 * also on failure. */
static th_err new_config(const struct th_push_create_req *r, const char *task_id,
                         const char *participant, struct th_push_config *c, struct th_error *e)
{
	char uuid[TH_UUID_LEN + 1];
	const char *id = r->id;
	if (id == NULL) {
		th_uuid(uuid);
		id = uuid;
	}
	memset(c, 0, sizeof *c);
	c->task_id = strdup(task_id);
	c->config_id = strdup(id);
	c->participant_id = strdup(participant);
	c->url = strdup(r->url);
	c->auth_scheme = r->scheme != NULL ? strdup(r->scheme) : NULL;
	if (c->task_id == NULL || c->config_id == NULL || c->participant_id == NULL ||
	    c->url == NULL || (r->scheme != NULL && c->auth_scheme == NULL))
		return th_error_set(e, TH_ENOMEM, "out of memory");
	return seal_secrets(r, c, e);
}

/* The participant may hold push_max_configs configs on a task; replacing one of them
 * is always allowed. Inside the transaction. */
static th_err check_limit(struct th_store *st, const struct th_config *cfg,
                          const struct th_push_config *c, struct th_error *e)
{
	struct th_push_config *mine = NULL;
	size_t n = 0;
	th_err rc = th_store_push_configs(st, c->task_id, c->participant_id, &mine, &n, e);
	if (rc != TH_OK)
		return rc;
	int replacing = 0;
	for (size_t i = 0; i < n; i++)
		replacing |= strcmp(mine[i].config_id, c->config_id) == 0;
	th_push_configs_free(mine, n);
	if (!replacing && n >= (size_t)cfg->push_max_configs)
		return th_error_set(
		    e, TH_EINVAL,
		    "participant %.100s already has %zu push notification configs on "
		    "task %.100s, the limit (push_max_configs); delete one first",
		    c->participant_id, n, c->task_id);
	return TH_OK;
}

/* Create's transaction: the access again (the participant may have left meanwhile), the
 * limit, the row. */
struct created_arg {
	const struct th_config *cfg;
	const char *participant;
	const char *tenant;
	const struct th_push_config *c;
};

static th_err created_part(struct th_store *st, void *arg, struct th_error *e)
{
	struct created_arg *a = arg;
	const struct th_push_config *c = a->c;
	th_err rc = access(st, a->tenant, a->participant, c->task_id, e);
	if (rc == TH_OK)
		rc = check_limit(st, a->cfg, c, e);
	if (rc == TH_OK) {
		rc = th_store_push_config_put(st, c, e);
		if (rc == TH_ENOTFOUND)
			rc = th_access_not_found(c->task_id, e);
		else if (rc == TH_EINVAL)
			rc = th_error_set(
			    e, TH_EINVAL,
			    "id %.100s is already used by another push notification "
			    "config of task %.100s; choose another id or leave it empty",
			    c->config_id, c->task_id);
	}
	return rc;
}

static th_err store_created(struct th_store *st, const struct th_config *cfg,
                            const char *participant, const char *tenant,
                            const struct th_push_config *c, struct th_error *e)
{
	struct created_arg a = {cfg, participant, tenant, c};
	return th_store_write(st, created_part, &a, e);
}

/* ---- the operations ------------------------------------------------------------------------ */

th_err th_pushcfg_create(struct th_store *st, const struct th_config *cfg, const char *participant,
                         const struct th_push_create_req *req, json_object **result,
                         struct th_error *e)
{
	*result = NULL;
	th_err rc = access(st, req->tenant, participant, req->task_id, e);
	/* DNS happens here, before any transaction (PUSH-3). */
	if (rc == TH_OK)
		rc = th_push_url_check(req->url, cfg->push_allow_private, NULL, e);
	if (rc != TH_OK)
		return rc;
	struct th_push_config c;
	rc = new_config(req, req->task_id, participant, &c, e);
	if (rc == TH_OK)
		rc = store_created(st, cfg, participant, req->tenant, &c, e);
	if (rc == TH_OK)
		rc = answer(&c, result, e);
	th_push_config_free(&c);
	return rc;
}

static th_err config_not_found(const char *task_id, const char *id, struct th_error *e)
{
	th_error_set(e, TH_ENOTFOUND, "push notification config %.100s not found on task %.100s",
	             id, task_id);
	th_error_task(e, task_id);
	return TH_ENOTFOUND;
}

th_err th_pushcfg_get(struct th_store *st, const char *participant,
                      const struct th_push_get_req *req, json_object **result, struct th_error *e)
{
	*result = NULL;
	th_err rc = access(st, req->tenant, participant, req->task_id, e);
	if (rc != TH_OK)
		return rc;
	struct th_push_config c;
	struct th_error sub;
	th_error_clear(&sub);
	rc = th_store_push_config_get(st, req->task_id, req->id, participant, &c, &sub);
	if (rc == TH_ENOTFOUND)
		return config_not_found(req->task_id, req->id, e);
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

/* {configs: v[offset .. offset+page_size), nextPageToken}. */
static th_err list_page(const struct th_push_config *v, size_t n, size_t offset, int page_size,
                        json_object **result, struct th_error *e)
{
	json_object *out = json_object_new_object(), *arr = json_object_new_array();
	int bad = out == NULL || arr == NULL;
	size_t end = offset + (size_t)page_size;
	for (size_t i = offset; !bad && i < n && i < end; i++)
		bad |= th_json_push(arr, config_json(&v[i]));
	char next[24] = "";
	if (end < n)
		snprintf(next, sizeof next, "p%zx", end);
	bad |= th_json_put(out, "configs", arr);
	bad |= th_json_put(out, "nextPageToken", json_object_new_string(next));
	if (bad) {
		json_object_put(out);
		return th_error_set(e, TH_ENOMEM, "out of memory building a push config list");
	}
	*result = out;
	return TH_OK;
}

th_err th_pushcfg_list(struct th_store *st, const char *participant,
                       const struct th_push_list_req *req, json_object **result, struct th_error *e)
{
	*result = NULL;
	th_err rc = access(st, req->tenant, participant, req->task_id, e);
	if (rc != TH_OK)
		return rc;
	size_t offset = 0;
	if (req->page_token != NULL && page_token_decode(req->page_token, &offset) != 0)
		return th_error_set(e, TH_EINVAL,
		                    "pageToken is not a token this server issued (use the "
		                    "nextPageToken of a previous ListTaskPushNotificationConfigs "
		                    "response)");
	struct th_push_config *v = NULL;
	size_t n = 0;
	rc = th_store_push_configs(st, req->task_id, participant, &v, &n, e);
	if (rc != TH_OK)
		return rc;
	rc = list_page(v, n, offset, req->page_size, result, e);
	th_push_configs_free(v, n);
	return rc;
}

/* Deleting is idempotent (A2A §3.7): a config that is not there — never created, already
 * deleted, or another participant's (which stays) — answers like a deleted one. */
struct deleted_arg {
	const char *participant;
	const struct th_push_get_req *req;
};

static th_err deleted_part(struct th_store *st, void *arg, struct th_error *e)
{
	struct deleted_arg *a = arg;
	struct th_error sub;
	th_error_clear(&sub);
	th_err rc =
	    th_store_push_config_delete(st, a->req->task_id, a->req->id, a->participant, &sub);
	if (rc == TH_ENOTFOUND)
		return TH_OK;
	if (rc != TH_OK)
		th_error_set(e, rc, "%s", sub.msg);
	return rc;
}

th_err th_pushcfg_delete(struct th_store *st, const char *participant,
                         const struct th_push_get_req *req, struct th_error *e)
{
	th_err rc = access(st, req->tenant, participant, req->task_id, e);
	if (rc != TH_OK)
		return rc;
	struct deleted_arg a = {participant, req};
	return th_store_write(st, deleted_part, &a, e);
}

/* ---- dead letters (RET-4, decision-076) ---------------------------------------------------- */

/* A dead-letter page token: "d", the last letter's died_ms and id in hex, '.' between. */
static void dead_token(char *out, size_t n, const struct th_push_dead_letter *d)
{
	snprintf(out, n, "d%llx.%llx", (unsigned long long)d->died_ms, (unsigned long long)d->id);
}

/* One hex number of at most 16 digits from *p up to stop; -1 when it is not one. */
static int hex_field(const char **p, char stop, int64_t *out)
{
	uint64_t v = 0;
	int digits = 0;
	for (; **p != stop; (*p)++, digits++) {
		int d = th_hexval_lower((unsigned char)**p);
		if (d < 0 || digits == 16)
			return -1;
		v = v * 16 + (uint64_t)d;
	}
	if (digits == 0 || v > (uint64_t)INT64_MAX)
		return -1;
	*out = (int64_t)v;
	return 0;
}

static int dead_token_decode(const char *tok, int64_t *died_ms, int64_t *id)
{
	const char *p = tok + 1;
	if (tok[0] != 'd' || hex_field(&p, '.', died_ms) != 0)
		return -1;
	p++;
	return hex_field(&p, '\0', id);
}

/* A dead letter as the caller sees it: the webhook URL redacted as a log line shows it
 * (SEC-6: a query value may be the hook's secret); never a token or credentials. */
static json_object *dead_json(const struct th_push_dead_letter *d)
{
	char url[TH_PUSH_URL_MAX + 8], queued[TH_TS_LEN + 1], died[TH_TS_LEN + 1];
	th_push_url_redact(d->url, url, sizeof url);
	th_ts_format(d->created_ms, queued);
	th_ts_format(d->died_ms, died);
	json_object *o = json_object_new_object();
	if (o == NULL)
		return NULL;
	int bad = th_json_put(o, "id", json_object_new_int64(d->id));
	bad |= th_json_put(o, "taskId", json_object_new_string(d->task_id));
	bad |= th_json_put(o, "configId", json_object_new_string(d->config_id));
	bad |= th_json_put(o, "url", json_object_new_string(url));
	bad |= th_json_put(o, "eventSeq", json_object_new_int64(d->seq));
	bad |= th_json_put(o, "attempts", json_object_new_int(d->attempts));
	bad |= th_json_put(o, "lastError",
	                   json_object_new_string(d->last_error != NULL ? d->last_error : ""));
	bad |= th_json_put(o, "queuedAt", json_object_new_string(queued));
	bad |= th_json_put(o, "diedAt", json_object_new_string(died));
	if (bad) {
		json_object_put(o);
		return NULL;
	}
	return o;
}

/* {deadLetters: v[0 .. min(n, page_size)), nextPageToken}: v holds one row more than the
 * page when there is a next one. */
static th_err dead_page(const struct th_push_dead_letter *v, size_t n, int page_size,
                        json_object **result, struct th_error *e)
{
	json_object *out = json_object_new_object(), *arr = json_object_new_array();
	int bad = out == NULL || arr == NULL;
	size_t shown = n > (size_t)page_size ? (size_t)page_size : n;
	for (size_t i = 0; !bad && i < shown; i++)
		bad |= th_json_push(arr, dead_json(&v[i]));
	char next[48] = "";
	if (n > shown)
		dead_token(next, sizeof next, &v[shown - 1]);
	bad |= th_json_put(out, "deadLetters", arr);
	bad |= th_json_put(out, "nextPageToken", json_object_new_string(next));
	if (bad) {
		json_object_put(out);
		return th_error_set(e, TH_ENOMEM, "out of memory building a dead-letter list");
	}
	*result = out;
	return TH_OK;
}

th_err th_pushcfg_dead_letters(struct th_store *st, const char *participant,
                               const struct th_dead_letters_req *req, json_object **result,
                               struct th_error *e)
{
	*result = NULL;
	int64_t before_ms = INT64_MAX, before_id = INT64_MAX;
	if (req->page_token != NULL && dead_token_decode(req->page_token, &before_ms, &before_id))
		return th_error_set(
		    e, TH_EINVAL,
		    "pageToken is not a token this server issued (use the "
		    "nextPageToken of a previous pushNotificationDeadLetters answer)");
	struct th_push_dead_letter *v = NULL;
	size_t n = 0;
	th_err rc = th_store_push_dead_letters(st, participant, req->tenant, before_ms, before_id,
	                                       req->page_size + 1, &v, &n, e);
	if (rc == TH_OK)
		rc = dead_page(v, n, req->page_size, result, e);
	th_push_dead_letters_free(v, n);
	return rc;
}

/* ---- inline configs (SendMessageConfiguration.taskPushNotificationConfig) ------------------ */

th_err th_pushcfg_inline_check(const struct th_config *cfg, json_object *config,
                               struct th_push_create_req *out, struct th_error *e)
{
	th_err rc = th_a2a_push_inline_decode(config, &cfg->lim, out, e);
	/* DNS now, before the request's transaction (PUSH-3). */
	if (rc == TH_OK)
		rc = th_push_url_check(out->url, cfg->push_allow_private, NULL, e);
	if (rc == TH_OK && (out->token != NULL || out->credentials != NULL)) {
		unsigned char key[TH_PUSH_KEY_LEN];
		struct th_error sub;
		th_error_clear(&sub);
		rc = th_push_key(key, &sub);
		th_push_wipe(key, sizeof key);
		if (rc != TH_OK)
			rc = th_error_set(e, rc, "configuration.taskPushNotificationConfig: %s",
			                  sub.msg);
	}
	return rc;
}

th_err th_pushcfg_inline_attach(struct th_store *st, const struct th_config *cfg,
                                const char *participant, const char *task_id,
                                const struct th_push_create_req *push, struct th_error *e)
{
	if (push->task_id != NULL && strcmp(push->task_id, task_id) != 0)
		return th_error_set(
		    e, TH_EINVAL,
		    "configuration.taskPushNotificationConfig.taskId names another task "
		    "than the message (leave it empty)");
	struct th_push_config c;
	th_err rc = new_config(push, task_id, participant, &c, e);
	if (rc == TH_OK)
		rc = check_limit(st, cfg, &c, e);
	if (rc == TH_OK && (rc = th_store_push_config_put(st, &c, e)) == TH_EINVAL)
		rc = th_error_set(
		    e, TH_EINVAL,
		    "configuration.taskPushNotificationConfig.id %.100s is already used "
		    "on task %.100s; choose another id or leave it empty",
		    c.config_id, c.task_id);
	th_push_config_free(&c);
	return rc;
}
