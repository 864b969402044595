/* SPDX-License-Identifier: Apache-2.0 */
#include "config/settings.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config/layout.h"
#include "util/idrule.h"
#include "util/netaddr.h"
#include "util/text.h"

/* ------------------------------------------------------------------ value checks */

static th_err check_nonempty(const char *key, const char *value, struct th_error *e)
{
	if (*value == '\0')
		return th_error_set(e, TH_EINVAL, "configuration key %s: the value is empty", key);
	return TH_OK;
}

static th_err check_backend(const char *key, const char *value, struct th_error *e)
{
	if (strcmp(value, "echo") != 0 && strcmp(value, "exec") != 0 &&
	    strcmp(value, "openai") != 0)
		return th_error_set(
		    e, TH_EINVAL,
		    "configuration key %s: '%s' is not a model backend this build has "
		    "(available: echo, exec, openai)",
		    key, value);
	return TH_OK;
}

/* No shell runs the command, so the program must be found without PATH. */
static th_err check_absolute(const char *key, const char *value, struct th_error *e)
{
	if (value[0] != '/')
		return th_error_set(
		    e, TH_EINVAL,
		    "configuration key %s: '%s' does not start with an absolute path "
		    "to the program",
		    key, value);
	return TH_OK;
}

/* anonymous_participant: empty (off) or a participant id under the id rule (ID-6) that
 * is not the agent's own. */
static th_err check_participant(const char *key, const char *value, struct th_error *e)
{
	if (*value == '\0')
		return TH_OK;
	char what[96];
	snprintf(what, sizeof what, "configuration key %s", key);
	th_err rc = th_id_check(value, strlen(value), TH_ID_MAX, what, e);
	if (rc == TH_OK && strcmp(value, "tiny-harness") == 0)
		rc =
		    th_error_set(e, TH_EINVAL,
		                 "configuration key %s: 'tiny-harness' is the agent's own id", key);
	return rc;
}

/* trusted_proxies: addresses and CIDR blocks, each parsed now so a typo stops start-up
 * instead of silently trusting nobody (or everybody). */
static th_err check_addr_list(const char *key, const char *value, struct th_error *e)
{
	return th_addr_list_check(key, value, e);
}

/* db_listen: a PostgreSQL URI (its password, if any, is never shown). */
static th_err check_pg_uri(const char *key, const char *value, struct th_error *e)
{
	if (!th_is_pg_uri(value))
		return th_error_set(e, TH_EINVAL,
		                    "configuration key %s: not a postgresql:// or postgres:// URI",
		                    key);
	return TH_OK;
}

static th_err check_env_name(const char *key, const char *value, struct th_error *e)
{
	int ok = isalpha((unsigned char)value[0]) || value[0] == '_';
	for (const char *p = value; ok && *p; p++)
		ok = isalnum((unsigned char)*p) || *p == '_';
	if (!ok)
		return th_error_set(e, TH_EINVAL,
		                    "configuration key %s: '%s' is not the name of an environment "
		                    "variable (letters, digits, '_')",
		                    key, value);
	return TH_OK;
}

/* A list of tokens separated by spaces or commas: printable ASCII, which is all a
 * Host or Origin header value can be. */
static th_err check_list(const char *key, const char *value, struct th_error *e)
{
	for (const char *p = value; *p != '\0'; p++)
		if ((unsigned char)*p < 0x20 || (unsigned char)*p >= 0x7f)
			return th_error_set(
			    e, TH_EINVAL,
			    "configuration key %s: byte %d of '%s' is not printable "
			    "ASCII",
			    key, (int)(p - value) + 1, value);
	return TH_OK;
}

static th_err check_env_list(const char *key, const char *value, struct th_error *e)
{
	char name[128];
	for (const char *p = value; *p != '\0';) {
		size_t n = strcspn(p, " ,\t");
		if (n >= sizeof name)
			return th_error_set(e, TH_EINVAL,
			                    "configuration key %s: a name is over %zu bytes", key,
			                    sizeof name - 1);
		memcpy(name, p, n);
		name[n] = '\0';
		th_err rc = n > 0 ? check_env_name(key, name, e) : TH_OK;
		if (rc != TH_OK)
			return rc;
		p += n;
		p += strspn(p, " ,\t");
	}
	return TH_OK;
}

/* db_group: a group name as /etc/group spells one (no ':', no white space, no control
 * characters); whether the group exists is asked when the database is opened, so the
 * message can name the file too (SEC-6). */
static th_err check_group_name(const char *key, const char *value, struct th_error *e)
{
	if (*value == '\0')
		return th_error_set(e, TH_EINVAL, "configuration key %s: the value is empty", key);
	for (const char *p = value; *p != '\0'; p++)
		if ((unsigned char)*p <= 0x20 || (unsigned char)*p == 0x7f || *p == ':')
			return th_error_set(e, TH_EINVAL,
			                    "configuration key %s: '%s' is not a group name", key,
			                    value);
	return TH_OK;
}

/* tenants: entries "name[|card name[|card description]]" separated by ';', white space
 * around each field ignored; each name under TEN-1's rule (th_tenant_ok), once. */
/* One entry of tenants at p (up to ';' or the end): its trimmed fields. Returns the
 * entry's end. */
static const char *tenant_entry(const char *p, const char *f[3], size_t fl[3])
{
	size_t end = strcspn(p, ";");
	const char *stop = p + end;
	for (int k = 0; k < 3; k++) {
		f[k] = NULL;
		fl[k] = 0;
	}
	const char *q = p;
	for (int k = 0; k < 3 && q <= stop; k++) {
		const char *bar = k < 2 ? memchr(q, '|', (size_t)(stop - q)) : NULL;
		const char *fe = bar != NULL ? bar : stop;
		const char *a = q, *z = fe;
		while (a < z && isspace((unsigned char)*a))
			a++;
		while (z > a && isspace((unsigned char)z[-1]))
			z--;
		f[k] = a;
		fl[k] = (size_t)(z - a);
		if (bar == NULL)
			break;
		q = bar + 1;
	}
	return *stop == ';' ? stop + 1 : stop;
}

static th_err check_tenants(const char *key, const char *value, struct th_error *e)
{
	th_err rc = check_list(key, value, e);
	for (const char *p = value; rc == TH_OK && *p != '\0';) {
		const char *f[3];
		size_t fl[3];
		const char *next = tenant_entry(p, f, fl);
		if (fl[0] == 0 && fl[1] == 0 && fl[2] == 0) {
			p = next;
			continue;
		}
		if (!th_tenant_ok(f[0], fl[0]))
			return th_error_set(
			    e, TH_EINVAL,
			    "configuration key %s: '%.*s' is not a tenant name (" TH_TENANT_RULE
			    ")",
			    key, (int)(fl[0] < 80 ? fl[0] : 80), f[0]);
		for (const char *o = value; o < p;) {
			const char *g[3];
			size_t gl[3];
			const char *on = tenant_entry(o, g, gl);
			if (gl[0] == fl[0] && fl[0] > 0 && memcmp(g[0], f[0], fl[0]) == 0)
				return th_error_set(
				    e, TH_EINVAL,
				    "configuration key %s: tenant '%.*s' is named twice", key,
				    (int)fl[0], f[0]);
			o = on;
		}
		p = next;
	}
	return rc;
}

int th_config_tenant(const struct th_config *cfg, const char *tenant, const char **name,
                     size_t *name_len, const char **desc, size_t *desc_len)
{
	if (name != NULL)
		*name = NULL, *name_len = 0;
	if (desc != NULL)
		*desc = NULL, *desc_len = 0;
	if (cfg->tenants == NULL || cfg->tenants[0] == '\0')
		return 1;
	size_t tl = strlen(tenant);
	for (const char *p = cfg->tenants; *p != '\0';) {
		const char *f[3];
		size_t fl[3];
		p = tenant_entry(p, f, fl);
		if (fl[0] != tl || memcmp(f[0], tenant, tl) != 0)
			continue;
		if (name != NULL && f[1] != NULL)
			*name = f[1], *name_len = fl[1];
		if (desc != NULL && f[2] != NULL)
			*desc = f[2], *desc_len = fl[2];
		return 1;
	}
	return 0;
}

/* ------------------------------------------------------------------ custom setters */

/* The base URL must be absolute http(s) and end in '/', so interface URLs and the
 * base path agree; a missing slash is added rather than refused. */
static th_err set_base_url(struct th_config *cfg, const char *value, struct th_error *e)
{
	const char *rest;
	if (strncmp(value, "http://", 7) == 0)
		rest = value + 7;
	else if (strncmp(value, "https://", 8) == 0)
		rest = value + 8;
	else
		return th_error_set(
		    e, TH_EINVAL,
		    "configuration key base_url: '%s' is not an http:// or https:// URL", value);
	if (*rest == '\0' || *rest == '/' || strpbrk(value, "?# \t") != NULL)
		return th_error_set(
		    e, TH_EINVAL,
		    "configuration key base_url: '%s' needs a host and no query or fragment",
		    value);
	size_t n = strlen(value);
	int slash = value[n - 1] == '/';
	char *url = malloc(n + 2);
	if (url == NULL)
		return th_error_set(e, TH_ENOMEM, "out of memory");
	memcpy(url, value, n);
	if (!slash)
		url[n++] = '/';
	url[n] = '\0';
	const char *path = strchr(url + (rest - value), '/');
	char *bp = strdup(path);
	if (bp == NULL) {
		free(url);
		return th_error_set(e, TH_ENOMEM, "out of memory");
	}
	free(cfg->base_url);
	free(cfg->base_path);
	cfg->base_url = url;
	cfg->base_path = bp;
	return TH_OK;
}

/* Stored without trailing '/', so <base>/chat/completions has exactly one. */
static th_err set_openai_base_url(struct th_config *cfg, const char *value, struct th_error *e)
{
	if ((strncmp(value, "http://", 7) != 0 || value[7] == '\0' || value[7] == '/') &&
	    (strncmp(value, "https://", 8) != 0 || value[8] == '\0' || value[8] == '/'))
		return th_error_set(e, TH_EINVAL,
		                    "configuration key openai_base_url: '%s' is not an http:// or "
		                    "https:// URL with a host",
		                    value);
	if (strpbrk(value, "?# \t") != NULL)
		return th_error_set(
		    e, TH_EINVAL,
		    "configuration key openai_base_url: '%s' has a query, a fragment "
		    "or a space",
		    value);
	char *url = strdup(value);
	if (url == NULL)
		return th_error_set(e, TH_ENOMEM, "out of memory");
	size_t n = strlen(url);
	while (n > 0 && url[n - 1] == '/')
		url[--n] = '\0';
	free(cfg->openai_base_url);
	cfg->openai_base_url = url;
	return TH_OK;
}

/* card_signing_kid: the JWS `kid` a verifier looks the key up by; printable ASCII. */
static th_err check_kid(const char *key, const char *value, struct th_error *e)
{
	if (*value == '\0' || strlen(value) > 256)
		return th_error_set(e, TH_EINVAL, "configuration key %s: 1 to 256 characters", key);
	return check_list(key, value, e);
}

/* card_signing_jku: where the verifier finds the public key set (RFC 7515 §4.1.2). */
static th_err check_jku(const char *key, const char *value, struct th_error *e)
{
	if (strncmp(value, "https://", 8) != 0 && strncmp(value, "http://", 7) != 0)
		return th_error_set(e, TH_EINVAL,
		                    "configuration key %s: '%s' is not an http:// or https:// URL",
		                    key, value);
	for (const char *p = value; *p != '\0'; p++)
		if ((unsigned char)*p <= 0x20 || (unsigned char)*p >= 0x7f)
			return th_error_set(
			    e, TH_EINVAL,
			    "configuration key %s: byte %d of the URL is a space or "
			    "not ASCII",
			    key, (int)(p - value) + 1);
	return TH_OK;
}

/* ------------------------------------------------------------------ the table */

enum key_type {
	KEY_STRING, /* char * field, owned; check (optional) vets the value first */
	KEY_INT,    /* int or size_t field: a whole number in lo..hi */
	KEY_ENUM,   /* int-sized field: the index of the value in words */
	KEY_CUSTOM, /* set parses and stores (several fields, or a rewritten value) */
	KEY_AGE,    /* int64_t field: an age in ms (th_parse_age), or 0 for "off" */
};

struct key {
	struct th_config_doc info;
	enum key_type type;
	size_t offset, size; /* the field in struct th_config (not for KEY_CUSTOM) */
	long long lo, hi;
	const char *const *words; /* NULL-terminated */
	th_err (*check)(const char *key, const char *value, struct th_error *e);
	th_err (*set)(struct th_config *cfg, const char *value, struct th_error *e);
};

static const char *const sync_words[] = {"normal", "full", NULL};
static const char *const pooler_words[] = {"none", "transaction", NULL};
static const char *const a2ui_words[] = {"v0.9", "v0.9.1", NULL};
static const char *const identity_words[] = {"header", "remote_user", "bearer", NULL};

#define FIELD(f) .offset = offsetof(struct th_config, f), .size = sizeof(((struct th_config *)0)->f)
#define K_STR(n, f, chk, d, text)                                                                  \
	{                                                                                          \
		{n, d, NULL, text}, KEY_STRING, FIELD(f), .check = chk                             \
	}
/* max_id's upper bound below is written out for --help; it is the id buffers' size. */
_Static_assert(TH_ID_MAX == 1024, "max_id's bound in keys[] must be TH_ID_MAX");

#define K_INT(n, f, l, h, d, text)                                                                 \
	{                                                                                          \
		{n, d, #l ".." #h, text}, KEY_INT, FIELD(f), .lo = l, .hi = h                      \
	}
#define K_ENUM(n, f, w, d, text)                                                                   \
	{                                                                                          \
		{n, d, NULL, text}, KEY_ENUM, FIELD(f), .words = w                                 \
	}
#define K_AGE(n, f, d, text)                                                                       \
	{                                                                                          \
		{n, d, NULL, text}, KEY_AGE, FIELD(f)                                              \
	}
#define K_SET(n, fn, d, text)                                                                      \
	{                                                                                          \
		{n, d, NULL, text}, KEY_CUSTOM, .set = fn                                          \
	}

/* Every key the file and TINY_HARNESS_<KEY> accept, in the order of
 * conf/tiny-harness.conf. The default goes through the same parser as a value read
 * from the file; lighttpd.conf's bin-copy-environment must name each key too. */
static const struct key keys[] = {
    K_STR("db", db_path, check_nonempty, "./var/tiny-harness.db",
          "SQLite database file (its directory is created if missing), or a "
          "postgresql:// URI: PostgreSQL"),
    K_ENUM("synchronous", sync_full, sync_words, "normal",
           "PRAGMA synchronous: normal (WAL, fast) or full (survives power loss)"),
    K_INT("busy_timeout_ms", busy_timeout_ms, 0, 600000, "5000",
          "how long a worker waits on a locked database, in ms"),
    K_ENUM("db_pooler", db_pooler, pooler_words, "none",
           "PostgreSQL: none, or transaction when db leads to a transaction pooler "
           "(PgBouncer's pool_mode = transaction): no named prepared statements, settings "
           "per transaction, no LISTEN through it (decision-055)"),
    K_STR("db_listen", db_listen, check_pg_uri, NULL,
          "PostgreSQL: the postgresql:// URI streams LISTEN on, straight to the server; "
          "unset behind db_pooler = transaction, streams poll every stream_poll_ms"),
    K_STR("db_group", db_group, check_group_name, NULL,
          "group a new SQLite database and the directories made for it get: the file "
          "0640 (its -wal and -shm follow), directories 02750; unset = 0600 and 0750 (SEC-6)"),
    K_SET("base_url", set_base_url, "http://127.0.0.1:8080/",
          "public base URL the card names: http(s), ending in '/' (added if missing)"),
    K_STR("allowed_hosts", allowed_hosts, check_list, NULL,
          "Host values served besides base_url's host:port, separated by spaces or commas; "
          "an entry without a port allows every port (SEC-4)"),
    K_STR("allowed_origins", allowed_origins, check_list, NULL,
          "Origin values (scheme://host[:port]) allowed besides base_url's own, separated "
          "by spaces or commas (SEC-4)"),
    K_STR("tenants", tenants, check_tenants, NULL,
          "tenants served besides the default one: entries 'name[|card name[|card "
          "description]]' separated by ';'; unset = any tenant name (TEN-1, TEN-6)"),
    K_STR("model", model, check_backend, "echo",
          "model backend for turns: echo, exec (model_command) or openai (TURN-2)"),
    K_STR("model_command", model_command, check_absolute, NULL,
          "exec: absolute path of the program, then arguments split at spaces (no shell)"),
    K_INT("model_timeout_ms", model_timeout_ms, 100, 3600000, "60000",
          "longest one model call (exec program or openai request) may take, in ms"),
    K_INT("model_history_max", model_history_max, 0, 1000, "100",
          "messages of recent history a turn gives the model (exec, openai), newest first "
          "back to this many that the turn's audience may read (SEC-3, decision-034)"),
    K_INT("model_history_bytes", model_history_bytes, 1024, 8388608, "262144",
          "bytes of stored message text that window holds at most; the newest message is "
          "always given (SEC-3)"),
    K_STR("model_env", model_env, check_env_list, NULL,
          "exec: names of environment variables the program gets besides PATH, HOME, LANG, "
          "LANGUAGE, LC_*, TZ, TMPDIR, USER and LOGNAME (SEC-6)"),
    K_SET("openai_base_url", set_openai_base_url, NULL,
          "openai: the API base URL; <base>/chat/completions is POSTed"),
    K_STR("openai_model", openai_model, check_nonempty, NULL,
          "openai: the model name sent in each request"),
    K_STR("openai_api_key_env", openai_api_key_env, check_env_name, "OPENAI_API_KEY",
          "openai: the NAME of the environment variable that holds the API key"),
    K_INT("echo_delay_ms", echo_delay_ms, 0, 600000, "0",
          "the echo model sleeps this long per turn (lets tests hold a turn open), in ms"),
    K_INT("turn_lease_ms", lease_ms, 100, 86400000, "30000",
          "a running turn's lease; a worker that dies mid-turn leaves one that expires, in ms"),
    K_INT("turn_max_attempts", max_attempts, 1, 100, "3",
          "attempts before a turn whose worker keeps dying marks the task FAILED"),
    K_STR("commands_dir", commands_dir, NULL, "conf/commands",
          "directory of file commands (NAME.md, CMD-1)"),
    K_STR("web_dir", web_dir, check_nonempty, "web/dist",
          "directory of the web app served at <base>ui/ (WEB-1)"),
    K_INT("heartbeat_ms", heartbeat_ms, 100, 3600000, "15000",
          "interval of the SSE comment heartbeat on a quiet stream, and the longest an A2A "
          "1.1 GetTask with currentGeneration waits, in ms"),
    K_INT("stream_max_ms", stream_max_ms, 100, 86400000, "300000",
          "longest a stream stays open; the client then resubscribes, in ms"),
    K_INT("stream_poll_ms", stream_poll_ms, 5, 10000, "50",
          "how often a worker looks for events other processes committed, in ms"),
    K_INT("stream_max", stream_max, 1, 100000, "1000",
          "open streams one FastCGI worker holds; one more is refused with 503 (STREAM-6)"),
    K_INT("stream_max_per_participant", stream_max_per_participant, 1, 100000, "8",
          "open streams one participant may hold in one FastCGI worker, counted exactly; "
          "one more is refused with 429 (SEC-3)"),
    K_INT("stream_backlog_max", stream_backlog_max, 262144, 67108864, "2097152",
          "bytes of events a stream's client has not read yet before the worker drops it "
          "(it resumes with Last-Event-ID); the most one stream holds (SEC-3)"),
    K_INT("rate_limit_rps", rate_limit_rps, 0, 1000000, "0",
          "API requests per second one participant may send to one worker process (each "
          "worker counts alone); over it: 429 with Retry-After; 0 = no limit (SEC-3)"),
    K_INT("rate_limit_burst", rate_limit_burst, 1, 1000000, "20",
          "requests a participant may send at once before rate_limit_rps paces it"),
    K_INT("worker_threads", worker_threads, 1, 64, "16",
          "requests one FastCGI worker serves at once; their writes commit together; "
          "threads are started as requests take the waiting one (decision-045)"),
    K_INT("write_handoff_ms", write_handoff_ms, 0, 60000, "250",
          "0: each worker process on a SQLite file writes its own; any other value: one "
          "process writes for all and the others hand it their write requests, each at "
          "once or served where it arrived (HOST-2, decisions 084 and 093)"),
    K_ENUM("a2ui_version", a2ui_v091, a2ui_words, "v0.9",
           "the version outbound A2UI messages carry: v0.9 or v0.9.1 (UI-1)"),
    K_INT("push_allow_private", push_allow_private, 0, 1, "0",
          "1 allows private, loopback and link-local webhook addresses (PUSH-3)"),
    K_INT("push_timeout_ms", push_timeout_ms, 100, 120000, "10000",
          "timeout of one webhook POST, connect included, in ms (PUSH-2)"),
    K_INT("push_retry_base_ms", push_retry_base_ms, 10, 3600000, "1000",
          "delay after a failed webhook POST, doubled each attempt, in ms"),
    K_INT("push_retry_max_ms", push_retry_max_ms, 10, 86400000, "300000",
          "cap of that delay, in ms"),
    K_INT("push_max_attempts", push_max_attempts, 1, 1000, "10",
          "attempts after which a push delivery is dead"),
    K_INT("push_max_configs", push_max_configs, 1, 1000, "10",
          "push configs one participant may hold on one task (PUSH-1)"),
    K_INT("push_keep_hours", push_keep_hours, 1, 87600, "168",
          "delivered push deliveries are deleted after this many hours"),
    K_AGE("retain_dead_letters", retain_dead_letters_ms, "7d",
          "push deliveries that gave up stay in the push_dead_letters view this long, then "
          "are deleted (an age: 30d, 12h, 90m, 45s; off = until their task goes) (RET-4)"),
    K_AGE("retain_ended", retain_ended_ms, "30d",
          "`tiny-harness purge` deletes tasks in a terminal state (completed, failed, "
          "canceled, rejected) unchanged this long, with every row of theirs; off = never "
          "(RET-1)"),
    K_AGE("retain_stuck", retain_stuck_ms, "off",
          "`tiny-harness purge` deletes tasks stuck this long: not terminal, no turn queued "
          "or running, no open sub-task, no status change, event or message; off = never "
          "(RET-2)"),
    K_ENUM("identity", identity, identity_words, "header",
           "who is speaking: header (X-Participant-Id), remote_user (REMOTE_USER) or bearer "
           "(Authorization: Bearer, a JWT or an API key) (ID-1, SEC-1)"),
    K_STR("jwt_secret_file", jwt_secret_file, check_nonempty, NULL,
          "bearer: file whose contents (at least 32 bytes) are the HS256/384/512 secret"),
    K_STR("jwt_secret_env", jwt_secret_env, check_env_name, NULL,
          "bearer: the NAME of the environment variable holding the HS* secret, when "
          "jwt_secret_file is unset"),
    K_STR("jwt_jwks_file", jwt_jwks_file, check_nonempty, NULL,
          "bearer: JWKS file of the RS*, PS* and ES* keys, chosen by kid; re-read when it "
          "changes"),
    K_STR("jwt_issuer", jwt_issuer, check_nonempty, NULL,
          "bearer: a JWT's iss must be this; unset = not checked"),
    K_STR("jwt_audience", jwt_audience, check_nonempty, NULL,
          "bearer: a JWT's aud must name this; unset = not checked"),
    K_STR("jwt_claim", jwt_claim, check_nonempty, "sub",
          "bearer: the JWT claim that names the participant (ID-6 applies)"),
    K_INT("jwt_leeway_s", jwt_leeway_s, 0, 3600, "60",
          "bearer: clock skew allowed on a JWT's exp and nbf, in seconds"),
    K_STR("anonymous_participant", anonymous_participant, check_participant, NULL,
          "with identity = header, the participant a request without X-Participant-Id acts "
          "as; empty = such requests are refused (single-user and demo servers only)"),
    K_STR("trusted_proxies", trusted_proxies, check_addr_list, NULL,
          "with identity = header, the peers besides loopback whose requests are served: "
          "addresses or CIDR blocks (10.0.0.5, 10.0.0.0/8, fd00::/8), separated by spaces "
          "or commas; every other peer gets 403 (SEC-1)"),
    K_INT("identity_header_public", identity_header_public, 0, 1, "0",
          "1 lets identity = header (and anonymous_participant) serve a base_url whose host "
          "is not loopback; only behind a proxy that authenticates and sets "
          "X-Participant-Id (SEC-1)"),
    K_STR("card_signing_key", card_signing_key, check_nonempty, NULL,
          "PEM private key (EC P-256: ES256, RSA >= 2048 bits: RS256, Ed25519: EdDSA) that "
          "signs the agent card (A2A AgentCardSignature, JWS over its RFC 8785 form); unset = "
          "unsigned card; a key that cannot be used makes the card answer 500 and the log "
          "say why (CARD-SIG-1, decision-066)"),
    K_STR("card_signing_kid", card_signing_kid, check_kid, NULL,
          "the signature's kid; unset = the key's RFC 7638 thumbprint (CARD-SIG-2)"),
    K_STR("card_signing_jku", card_signing_jku, check_jku, NULL,
          "the signature's jku: the URL of a JWKS holding the public key "
          "(`tiny-harness card --jwks` prints one); unset = none (CARD-SIG-2)"),
    K_INT("request_log", request_log, 0, 1, "1",
          "1 writes one key=value line per request to the error log: method, task, "
          "participant, HTTP status, outcome, duration (OBS-1, decision-070)"),
    K_INT("metrics", metrics, 0, 1, "1",
          "1 counts requests, latencies, turns and streams and serves them at <base>metrics "
          "in the Prometheus text format (OBS-2); 0 counts nothing and the route is 404"),
    K_STR("metrics_file", metrics_file, check_nonempty, NULL,
          "the small file every worker process counts into (mapped shared); unset = "
          "<db>-metrics beside an SQLite db; with PostgreSQL unset means no counting"),
    K_STR("metrics_readers", metrics_readers, check_list, NULL,
          "participants who may read <base>metrics, separated by spaces or commas; unset = "
          "any authenticated participant (identity = remote_user or bearer; never header) "
          "(OBS-3)"),
    K_INT("history_length_default", history_default, -1, 1000, "-1",
          "messages of history when a request gives no historyLength; -1 = as many as the "
          "cap allows: 1000 messages, 8 MiB (SEC-3)"),
    K_INT("max_body", lim.max_body, 1024, 1073741824, "1048576",
          "request body in bytes (413 above) (LIM-1)"),
    K_INT("json_depth", lim.json_depth, 4, 1000, "32", "JSON nesting depth"),
    K_INT("max_parts", lim.max_parts, 1, 10000, "64", "parts per message"),
    K_INT("max_text", lim.max_text, 1, 1073741824, "65536", "bytes of one text part"),
    K_INT("max_metadata", lim.max_metadata, 2, 1073741824, "16384",
          "bytes of a serialised metadata object"),
    K_INT("max_participants", lim.max_participants, 2, 10000, "50", "participants per task"),
    K_INT("max_plan_steps", lim.max_plan_steps, 1, 10000, "100", "steps per plan"),
    K_INT("max_subtasks", lim.max_subtasks, 0, 100000, "100", "sub-tasks per task"),
    K_INT("max_id", lim.max_id, 8, 1024, "256",
          "bytes of an id (messageId, taskId, participant id)"),
};

#undef K_SET
#undef K_AGE
#undef K_ENUM
#undef K_INT
#undef K_STR
#undef FIELD

#define NKEYS (sizeof keys / sizeof keys[0])

const struct th_config_doc *th_config_key(size_t i)
{
	return i < NKEYS ? &keys[i].info : NULL;
}

const char *th_config_default(const struct th_config_doc *k)
{
	/* The paths follow the layout: the autoconf directories when installed, the source
	 * tree's otherwise (decision-021). */
	if (strcmp(k->name, "db") == 0)
		return th_layout_db();
	if (strcmp(k->name, "commands_dir") == 0)
		return th_layout_commands_dir();
	if (strcmp(k->name, "web_dir") == 0)
		return th_layout_web_dir();
	return k->def;
}

static const struct key *find_key(const char *name)
{
	for (size_t i = 0; i < NKEYS; i++)
		if (strcmp(keys[i].info.name, name) == 0)
			return &keys[i];
	return NULL;
}

/* ------------------------------------------------------------------ parsing by type */

static th_err parse_num(const char *key, const char *value, long long lo, long long hi,
                        long long *out, struct th_error *e)
{
	const char *p = value;
	if (*p == '-' && lo < 0)
		p++;
	if (*p == '\0')
		goto bad;
	for (; *p; p++)
		if (!isdigit((unsigned char)*p))
			goto bad;
	errno = 0;
	long long v = strtoll(value, NULL, 10);
	if (errno == ERANGE || v < lo || v > hi)
		goto bad;
	*out = v;
	return TH_OK;
bad:
	return th_error_set(
	    e, TH_EINVAL, "configuration key %s: '%s' is not a whole number between %lld and %lld",
	    key, value, lo, hi);
}

/* Through memcpy, so one path serves int, enum and size_t fields; v is within the
 * row's bounds, which fit the field. A row naming a field of another size is a bug
 * in the table, refused rather than written past (every default runs through here). */
static th_err store_int(const struct key *k, void *field, long long v, struct th_error *e)
{
	if (k->size == sizeof(int)) {
		int x = (int)v;
		memcpy(field, &x, sizeof x);
	} else if (k->size == sizeof(size_t)) {
		size_t x = (size_t)v;
		memcpy(field, &x, sizeof x);
	} else {
		return th_error_set(e, TH_EINTERNAL, "configuration key %s: field of %zu bytes",
		                    k->info.name, k->size);
	}
	return TH_OK;
}

/* "'x' is not a or b", "'x' is not a, b or c": the message lists what is accepted. */
static th_err bad_word(const struct key *k, const char *value, struct th_error *e)
{
	char list[256] = "";
	size_t used = 0;
	for (size_t i = 0; k->words[i] != NULL && used < sizeof list; i++) {
		const char *sep = i == 0 ? "" : k->words[i + 1] == NULL ? " or " : ", ";
		int n = snprintf(list + used, sizeof list - used, "%s%s", sep, k->words[i]);
		used += n > 0 ? (size_t)n : 0;
	}
	return th_error_set(e, TH_EINVAL, "configuration key %s: '%s' is not %s", k->info.name,
	                    value, list);
}

static th_err set_key(struct th_config *cfg, const struct key *k, const char *value,
                      struct th_error *e)
{
	void *field = (char *)cfg + k->offset;
	long long v = 0;
	th_err rc;
	switch (k->type) {
	case KEY_STRING: {
		if (k->check != NULL && (rc = k->check(k->info.name, value, e)) != TH_OK)
			return rc;
		char *p = strdup(value);
		if (p == NULL)
			return th_error_set(e, TH_ENOMEM, "out of memory");
		char **slot = field;
		free(*slot);
		*slot = p;
		return TH_OK;
	}
	case KEY_INT:
		if ((rc = parse_num(k->info.name, value, k->lo, k->hi, &v, e)) != TH_OK)
			return rc;
		return store_int(k, field, v, e);
	case KEY_ENUM:
		while (k->words[v] != NULL && strcmp(k->words[v], value) != 0)
			v++;
		if (k->words[v] == NULL)
			return bad_word(k, value, e);
		return store_int(k, field, v, e);
	case KEY_CUSTOM:
		return k->set(cfg, value, e);
	case KEY_AGE: {
		int64_t ms = 0;
		if (strcmp(value, "off") != 0 && strcmp(value, "0") != 0 &&
		    (th_parse_age(value, &ms) != 0 || ms == 0))
			return th_error_set(
			    e, TH_EINVAL,
			    "configuration key %s: '%s' is not an age (a whole number "
			    "and d, h, m or s: 30d, 12h, 90m, 45s, at most 100 years) "
			    "or off",
			    k->info.name, value);
		if (k->size != sizeof ms)
			return th_error_set(e, TH_EINTERNAL,
			                    "configuration key %s: field of %zu bytes",
			                    k->info.name, k->size);
		memcpy(field, &ms, sizeof ms);
		return TH_OK;
	}
	}
	return th_error_set(e, TH_EINTERNAL, "configuration key %s: no parser", k->info.name);
}

th_err th_config_set(struct th_config *cfg, const char *key, const char *value, struct th_error *e)
{
	const struct key *k = find_key(key);
	if (k == NULL)
		return th_error_set(e, TH_EINVAL, "unknown configuration key '%s'", key);
	return set_key(cfg, k, value, e);
}

th_err th_config_defaults(struct th_config *cfg)
{
	memset(cfg, 0, sizeof *cfg);
	struct th_error e;
	th_error_clear(&e);
	for (size_t i = 0; i < NKEYS; i++) {
		if (keys[i].info.def == NULL)
			continue;
		const char *def = th_config_default(&keys[i].info);
		if (set_key(cfg, &keys[i], def, &e) != TH_OK) {
			th_config_free(cfg);
			return e.code;
		}
	}
	return TH_OK;
}

/* ------------------------------------------------------------------ loading */

/* A '#' that begins the line or follows a space or tab starts a comment, so
 * `db = a.db  # the database` names a.db; a '#' inside a word (a#b) is kept. No
 * value needs " #": URLs refuse '#', and there is no quoting. */
static void cut_comment(char *s)
{
	for (char *p = s; *p != '\0'; p++) {
		if (*p == '#' && (p == s || p[-1] == ' ' || p[-1] == '\t')) {
			*p = '\0';
			return;
		}
	}
}

static th_err load_file(struct th_config *cfg, const char *path, struct th_error *e)
{
	FILE *f = fopen(path, "r");
	if (f == NULL)
		return th_error_set(e, TH_EINVAL, "configuration file %s: %s", path,
		                    strerror(errno));
	char line[4096];
	int lineno = 0;
	th_err rc = TH_OK;
	while (rc == TH_OK && fgets(line, sizeof line, f) != NULL) {
		lineno++;
		if (strchr(line, '\n') == NULL && !feof(f)) {
			rc = th_error_set(e, TH_EINVAL, "%s:%d: line longer than %zu bytes", path,
			                  lineno, sizeof line - 1);
			break;
		}
		cut_comment(line);
		char *s = th_trim(line);
		if (*s == '\0')
			continue;
		char *key = NULL, *value = NULL;
		if (th_split_pair(s, '=', &key, &value) != 0) {
			rc = th_error_set(e, TH_EINVAL, "%s:%d: expected 'key = value', got '%s'",
			                  path, lineno, s);
			break;
		}
		struct th_error sub;
		th_error_clear(&sub);
		if (th_config_set(cfg, key, value, &sub) != TH_OK)
			rc = th_error_set(e, sub.code, "%s:%d: %s", path, lineno, sub.msg);
	}
	fclose(f);
	return rc;
}

/* Environment values are taken whole: no comments there. */
/* The key whose variable name TINY_HARNESS_<KEY> is the `len` bytes at `name` (upper
 * case, as written), or NKEYS. */
static size_t env_key(const char *name, size_t len)
{
	for (size_t i = 0; i < NKEYS; i++) {
		const char *k = keys[i].info.name;
		size_t j = 0;
		while (j < len && k[j] != '\0' && toupper((unsigned char)k[j]) == name[j])
			j++;
		if (j == len && k[j] == '\0')
			return i;
	}
	return NKEYS;
}

/* One pass over the environment (PKG-4: a plain-CGI process reads its settings at every
 * request; a getenv per key scanned it once for each of the ~100 keys). The first
 * assignment of a name counts, as with getenv. */
static th_err load_env(struct th_config *cfg, struct th_error *e)
{
	static const char prefix[] = "TINY_HARNESS_";
	const size_t plen = sizeof prefix - 1;
	unsigned char seen[NKEYS] = {0};
	for (char **env = environ; env != NULL && *env != NULL; env++) {
		const char *eq = strchr(*env, '=');
		if (eq == NULL || strncmp(*env, prefix, plen) != 0)
			continue;
		size_t i = env_key(*env + plen, (size_t)(eq - *env) - plen);
		if (i == NKEYS || seen[i])
			continue;
		seen[i] = 1;
		struct th_error sub;
		th_error_clear(&sub);
		if (set_key(cfg, &keys[i], eq + 1, &sub) != TH_OK)
			return th_error_set(e, sub.code, "environment variable %.*s: %s",
			                    (int)(eq - *env), *env, sub.msg);
	}
	return TH_OK;
}

/* A backend's required keys may come from the file or the environment in any order,
 * so they are checked once everything is read. */
static th_err check_model(const struct th_config *cfg, struct th_error *e)
{
	if (strcmp(cfg->model, "exec") == 0 && cfg->model_command == NULL)
		return th_error_set(
		    e, TH_EINVAL, "configuration key model_command is required when model = exec");
	if (strcmp(cfg->model, "openai") == 0 && cfg->openai_base_url == NULL)
		return th_error_set(
		    e, TH_EINVAL,
		    "configuration key openai_base_url is required when model = openai");
	if (strcmp(cfg->model, "openai") == 0 && cfg->openai_model == NULL)
		return th_error_set(
		    e, TH_EINVAL, "configuration key openai_model is required when model = openai");
	return TH_OK;
}

th_err th_config_check_serving(const struct th_config *cfg, struct th_error *e)
{
	if (cfg->identity != TH_IDENTITY_HEADER || cfg->identity_header_public ||
	    th_url_host_is_loopback(cfg->base_url))
		return TH_OK;
	int anon = cfg->anonymous_participant != NULL && cfg->anonymous_participant[0] != '\0';
	return th_error_set(
	    e, TH_EINVAL,
	    "identity = header%s on the public base_url %s: anyone could act as any participant "
	    "(SEC-1). Set identity = remote_user behind a web server that authenticates, or "
	    "base_url to a loopback URL; only if a proxy in front authenticates every request "
	    "and sets X-Participant-Id, set identity_header_public = 1 and trusted_proxies = "
	    "its address",
	    anon ? " with anonymous_participant" : "", cfg->base_url);
}

th_err th_config_load(struct th_config *cfg, struct th_error *e)
{
	if (th_config_defaults(cfg) != TH_OK)
		return th_error_set(e, TH_ENOMEM, "out of memory");
	const char *path = getenv("TINY_HARNESS_CONF");
	th_err rc = TH_OK;
	if (path != NULL && *path != '\0') {
		rc = load_file(cfg, path, e);
	} else if (access(th_layout_conf_file(), R_OK) == 0) {
		path = th_layout_conf_file();
		rc = load_file(cfg, path, e);
	} else {
		path = NULL;
	}
	if (rc == TH_OK && path != NULL && (cfg->source = strdup(path)) == NULL)
		rc = th_error_set(e, TH_ENOMEM, "out of memory");
	if (rc == TH_OK)
		rc = load_env(cfg, e);
	if (rc == TH_OK)
		rc = check_model(cfg, e);
	if (rc != TH_OK)
		th_config_free(cfg);
	return rc;
}

void th_config_free(struct th_config *cfg)
{
	for (size_t i = 0; i < NKEYS; i++) {
		if (keys[i].type == KEY_STRING) {
			char **slot = (void *)((char *)cfg + keys[i].offset);
			free(*slot);
		}
	}
	/* What the custom setters and the loader own. */
	free(cfg->source);
	free(cfg->base_url);
	free(cfg->base_path);
	free(cfg->openai_base_url);
	memset(cfg, 0, sizeof *cfg);
}
