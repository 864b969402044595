/* config.h — configuration: one file (conf/tiny-harness.conf or $TINY_HARNESS_CONF)
 * of `key = value` lines, then environment overrides TINY_HARNESS_<KEY>, on top of
 * built-in defaults, so a worker runs with no configuration at all (STORE-3).
 * Unknown keys and bad values stop start-up with a message naming them. */
#ifndef TH_CONFIG_CONFIG_H
#define TH_CONFIG_CONFIG_H

#include <stddef.h>

#include "util/err.h"

enum th_identity { TH_IDENTITY_HEADER = 0, TH_IDENTITY_REMOTE_USER = 1 };

struct th_limits {
	size_t max_body;         /* request body bytes (413 above) */
	int json_depth;          /* JSON nesting levels */
	size_t max_parts;        /* parts per message */
	size_t max_text;         /* bytes of one text part */
	size_t max_metadata;     /* bytes of a serialised metadata object */
	size_t max_participants; /* participants per task */
	size_t max_plan_steps;   /* steps per plan */
	size_t max_subtasks;     /* sub-tasks per task */
	size_t max_id;           /* bytes of an id (messageId, taskId, participant id) */
};

struct th_config {
	char *source;           /* the file read, or NULL; free */
	char *db_path;          /* db = ./var/tiny-harness.db; free */
	char *base_url;         /* base_url = http://127.0.0.1:8080/ (always ends in '/'); free */
	char *base_path;        /* path part of base_url, e.g. "/" or "/a2a/"; free */
	char *model;            /* model = echo | exec | openai; free */
	char *model_command;    /* model_command = (none): the exec backend's program, an
	                           absolute path and arguments split at spaces; free */
	int model_timeout_ms;   /* model_timeout_ms = 60000: one model call (exec, openai) */
	char *openai_base_url;  /* openai_base_url = (none; required for openai), no trailing
	                           '/'; free */
	char *openai_model;     /* openai_model = (none; required for openai); free */
	char *openai_api_key_env; /* openai_api_key_env = OPENAI_API_KEY: the NAME of the
	                             variable holding the API key; free */
	char *commands_dir;     /* commands_dir = conf/commands; free */
	enum th_identity identity; /* identity = header | remote_user */
	int sync_full;          /* synchronous = normal | full */
	int busy_timeout_ms;    /* busy_timeout_ms = 5000 */
	int echo_delay_ms;      /* echo_delay_ms = 0 (lets tests hold a turn open) */
	int lease_ms;           /* turn_lease_ms = 30000 */
	int max_attempts;       /* turn_max_attempts = 3 */
	int history_default;    /* history_length_default = -1 (all) */
	int heartbeat_ms;       /* heartbeat_ms = 15000: SSE comment heartbeat interval */
	int stream_max_ms;      /* stream_max_ms = 300000: longest a stream stays open */
	int stream_poll_ms;     /* stream_poll_ms = 50: how often a stream looks for events */
	int stream_max;         /* stream_max = 1000: open streams one FastCGI worker holds at
	                           once (STREAM-6); one more is refused with 503 */
	int a2ui_v091;          /* a2ui_version = v0.9 | v0.9.1: the version outbound A2UI
	                           messages carry (UI-1) */
	int push_allow_private; /* push_allow_private = 0: refuse private, loopback and
	                           link-local webhook addresses (PUSH-3) */
	int push_timeout_ms;    /* push_timeout_ms = 10000: one webhook POST (PUSH-2) */
	int push_retry_base_ms; /* push_retry_base_ms = 1000: delay after a failed POST,
	                           doubled each attempt */
	int push_retry_max_ms;  /* push_retry_max_ms = 300000: cap of that delay */
	int push_max_attempts;  /* push_max_attempts = 10: then the delivery is dead */
	int push_max_configs;   /* push_max_configs = 10: per participant and task (PUSH-1) */
	int push_keep_hours;    /* push_keep_hours = 168: finished deliveries kept this long */
	struct th_limits lim;
};

/* Fills cfg with defaults, reads the file named by $TINY_HARNESS_CONF (which must
 * exist) or else conf/tiny-harness.conf if present, then applies TINY_HARNESS_* variables.
 * On error cfg is left freed and e names the key, the value and the source. */
th_err th_config_load(struct th_config *cfg, struct th_error *e);

/* Defaults only; no file, no environment. For tests. */
th_err th_config_defaults(struct th_config *cfg);

/* Sets one key from text as the file would; for tests and the loader. */
th_err th_config_set(struct th_config *cfg, const char *key, const char *value, struct th_error *e);

void th_config_free(struct th_config *cfg);

#endif
