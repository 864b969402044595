/* SPDX-License-Identifier: Apache-2.0 */
/* settings.h — configuration: one file (conf/tiny-harness.conf or $TINY_HARNESS_CONF)
 * of `key = value` lines, then environment overrides TINY_HARNESS_<KEY>, on top of
 * built-in defaults, so a worker runs with no configuration at all (STORE-3).
 * Unknown keys and bad values stop start-up with a message naming them.
 *
 * One table in config.c, a row per key, is the only list of keys: parsing, the
 * defaults, the environment overrides and `tiny-harness --help` all read it, and
 * check_config tests that conf/tiny-harness.conf names exactly its keys. */
#ifndef TH_CONFIG_SETTINGS_H
#define TH_CONFIG_SETTINGS_H

#include <stddef.h>
#include <stdint.h>

#include "util/err.h"

enum th_identity { TH_IDENTITY_HEADER = 0, TH_IDENTITY_REMOTE_USER = 1, TH_IDENTITY_BEARER = 2 };

/* Each field is set by the key its comment names; the key table in config.c holds
 * the defaults, bounds and docs (`tiny-harness --help` prints them). */
struct th_limits {
	size_t max_body;         /* max_body: request body bytes (413 above) */
	int json_depth;          /* json_depth: JSON nesting levels */
	size_t max_parts;        /* max_parts: parts per message */
	size_t max_text;         /* max_text: bytes of one text part */
	size_t max_metadata;     /* max_metadata: bytes of a serialised metadata object */
	size_t max_participants; /* max_participants: participants per task */
	size_t max_plan_steps;   /* max_plan_steps: steps per plan */
	size_t max_subtasks;     /* max_subtasks: sub-tasks per task */
	size_t max_id;           /* max_id: bytes of an id (messageId, taskId, participant id) */
};

struct th_config {
	char *source;                   /* the file read, or NULL; free */
	char *db_path;                  /* db; free */
	char *base_url;                 /* base_url, always ending in '/'; free */
	char *base_path;                /* path part of base_url, e.g. "/" or "/a2a/"; free */
	char *allowed_hosts;            /* allowed_hosts: more Host values than base_url's (SEC-4),
	                                   separated by spaces or commas, or NULL; free */
	char *tenants;                  /* tenants (TEN-1, TEN-6): the tenants served besides the
	                                   default one, entries "name[|card name[|card
	                                   description]]" separated by ';'; NULL = every name
	                                   th_tenant_ok allows, with the card's own name;
	                                   free */
	char *allowed_origins;          /* allowed_origins: more Origin values than base_url's
	                                   (SEC-4), separated by spaces or commas, or NULL; free */
	char *model;                    /* model: echo | exec | openai; free */
	char *model_command;            /* model_command: the exec backend's program, an absolute
	                                   path and arguments split at spaces, or NULL; free */
	int model_timeout_ms;           /* model_timeout_ms: one model call (exec, openai) */
	char *model_env;                /* model_env: names of further variables the exec program
	                                   gets besides the fixed allow-list (SEC-6), or NULL; free */
	char *openai_base_url;          /* openai_base_url without trailing '/', or NULL; free */
	char *openai_model;             /* openai_model, or NULL; free */
	char *openai_api_key_env;       /* openai_api_key_env: the NAME of the variable holding
	                                   the API key; free */
	char *commands_dir;             /* commands_dir; free */
	char *web_dir;                  /* web_dir: the web app's files (WEB-1); free */
	enum th_identity identity;      /* identity: header | remote_user | bearer (SEC-1) */
	char *jwt_secret_file;          /* jwt_secret_file: file holding the HS* secret, or NULL;
	                                   free */
	char *jwt_secret_env;           /* jwt_secret_env: NAME of the variable holding it, or
	                                   NULL; free */
	char *jwt_jwks_file;            /* jwt_jwks_file: RS*, PS*, ES* keys, or NULL; free */
	char *jwt_issuer;               /* jwt_issuer: required iss, or NULL; free */
	char *jwt_audience;             /* jwt_audience: required aud, or NULL; free */
	char *jwt_claim;                /* jwt_claim: the claim naming the participant; free */
	int jwt_leeway_s;               /* jwt_leeway_s: clock skew allowed on exp and nbf */
	char *anonymous_participant;    /* anonymous_participant: NULL or "" = off; free */
	char *trusted_proxies;          /* trusted_proxies: peers besides loopback that header mode
	                                   serves (addresses, CIDR blocks), or NULL; free (SEC-1) */
	int identity_header_public;     /* identity_header_public: 1 lets header mode start on a
	                                   base_url that is not loopback (SEC-1) */
	char *card_signing_key;         /* card_signing_key: PEM private key signing the card,
	                                   or NULL (CARD-SIG-1); free */
	char *card_signing_kid;         /* card_signing_kid: the signature's kid, or NULL (the
	                                   key's thumbprint); free */
	char *card_signing_jku;         /* card_signing_jku: the signature's jku, or NULL; free */
	int request_log;                /* request_log: 1 writes one line per request (OBS-1) */
	int metrics;                    /* metrics: 1 counts requests and serves <base>metrics
	                                   (OBS-2) */
	char *metrics_file;             /* metrics_file: the counters every process shares, or
	                                   NULL: <db>-metrics beside an SQLite db (decision-070);
	                                   free */
	char *metrics_readers;          /* metrics_readers: participants who may read the
	                                   metrics, separated by spaces or commas, or NULL: any
	                                   authenticated participant (OBS-3); free */
	int sync_full;                  /* synchronous: 0 normal, 1 full */
	int busy_timeout_ms;            /* busy_timeout_ms */
	int db_pooler;                  /* db_pooler: 0 none, 1 transaction (a transaction
	                                   pooler such as PgBouncer in front, decision-055) */
	char *db_listen;                /* db_listen: the postgresql:// URI LISTEN connects
	                                   to, past the pooler, or NULL; free */
	char *db_group;                 /* db_group: group of a new database file (0640) and of
	                                   the directories made for it (02750), or NULL: 0600
	                                   and 0750 (SEC-6); free */
	int echo_delay_ms;              /* echo_delay_ms (lets tests hold a turn open) */
	int lease_ms;                   /* turn_lease_ms */
	int max_attempts;               /* turn_max_attempts */
	int history_default;            /* history_length_default (-1: the cap) */
	int model_history_max;          /* model_history_max: messages of a turn's model context
	                                   (SEC-3) */
	int model_history_bytes;        /* model_history_bytes: their stored text at most */
	int heartbeat_ms;               /* heartbeat_ms: SSE comment heartbeat interval */
	int stream_max_ms;              /* stream_max_ms: longest a stream stays open */
	int stream_poll_ms;             /* stream_poll_ms: how often a stream looks for events */
	int stream_max;                 /* stream_max: open streams one FastCGI worker holds at once
	                                   (STREAM-6); one more is refused with 503 */
	int stream_max_per_participant; /* stream_max_per_participant: open streams one
	                                   participant holds in one worker (SEC-3) */
	int stream_backlog_max;         /* stream_backlog_max: unread bytes of one parked stream
	                                   before it is dropped (SEC-3) */
	int rate_limit_rps;     /* rate_limit_rps: API requests per second per participant per
	                           worker process; 0: no limit (SEC-3) */
	int rate_limit_burst;   /* rate_limit_burst: requests at once before the rate applies */
	int worker_threads;     /* worker_threads: requests one FastCGI worker serves at
	                           once; their writes commit together (decision-023) */
	int write_handoff_ms;   /* write_handoff_ms: 0 no hand-over of writes to the
	                           database's writer; any other value: on (HOST-2,
	                           decisions 084 and 093) */
	int a2ui_v091;          /* a2ui_version: 0 v0.9, 1 v0.9.1, the version outbound A2UI
	                           messages carry (UI-1) */
	int push_allow_private; /* push_allow_private: 0 refuses private, loopback and
	                           link-local webhook addresses (PUSH-3) */
	int push_timeout_ms;    /* push_timeout_ms: one webhook POST (PUSH-2) */
	int push_retry_base_ms; /* push_retry_base_ms: delay after a failed POST, doubled
	                           each attempt */
	int push_retry_max_ms;  /* push_retry_max_ms: cap of that delay */
	int push_max_attempts;  /* push_max_attempts: then the delivery is dead */
	int push_max_configs;   /* push_max_configs: per participant and task (PUSH-1) */
	int push_keep_hours;    /* push_keep_hours: delivered deliveries kept this long */
	int64_t retain_dead_letters_ms; /* retain_dead_letters: dead deliveries kept this
	                                   long; 0: until their task goes (RET-4) */
	int64_t retain_ended_ms;        /* retain_ended: purge deletes terminal tasks unchanged
	                                   this long; 0: never (RET-1) */
	int64_t retain_stuck_ms;        /* retain_stuck: purge deletes stuck tasks (store.h,
	                                   th_store_purge_stuck) this long idle; 0: never (RET-2) */
	struct th_limits lim;
};

/* What --help and conf/tiny-harness.conf say of one key. */
struct th_config_doc {
	const char *name;  /* in the file; TINY_HARNESS_<NAME> in the environment */
	const char *def;   /* the default as the file would spell it; NULL: none */
	const char *range; /* whole numbers: the accepted range ("100..3600000"); else NULL */
	const char *doc;   /* one line */
};

/* Key i of the table, in the order conf/tiny-harness.conf lists them; NULL past the
 * last. */
const struct th_config_doc *th_config_key(size_t i);
/* k's default here: a path key's follows the layout (installed or source tree). */
const char *th_config_default(const struct th_config_doc *k);

/* Fills cfg with defaults, reads the file named by $TINY_HARNESS_CONF (which must
 * exist) or else conf/tiny-harness.conf if present, then applies TINY_HARNESS_* variables.
 * On error cfg is left freed and e names the key, the value and the source. */
th_err th_config_load(struct th_config *cfg, struct th_error *e);

/* Defaults only (every key's default from the table); no file, no environment. For
 * tests. */
th_err th_config_defaults(struct th_config *cfg);

/* Sets one key from text as the file would; for tests and the loader. */
th_err th_config_set(struct th_config *cfg, const char *key, const char *value, struct th_error *e);

/* SEC-1: what a serving process (FastCGI worker, CGI request, `serve`) refuses to start
 * with: identity = header (with or without anonymous_participant) on a base_url whose
 * host is not loopback, unless identity_header_public = 1. The message names the keys
 * to set. Operator commands (migrate, recover, tasks) do not call it. */
th_err th_config_check_serving(const struct th_config *cfg, struct th_error *e);

/* TEN-1, TEN-6: 1 when tenant (non-empty, already under the name rule) is served: named
 * in the tenants key, or any when the key is unset. When served and named, *name and *desc
 * (NULL when not wanted) point into cfg->tenants with *name_len and *desc_len bytes (0:
 * the card's own). */
int th_config_tenant(const struct th_config *cfg, const char *tenant, const char **name,
                     size_t *name_len, const char **desc, size_t *desc_len);

void th_config_free(struct th_config *cfg);

#endif
