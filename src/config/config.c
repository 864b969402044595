#include "config/config.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Every key the file and TINY_HARNESS_<KEY> accept. Adding a key means a line here
 * and a case in th_config_set; docs/configuration.md lists them for users. */
static const char *const keys[] = {
	"db", "base_url", "model", "model_command", "model_timeout_ms", "openai_base_url",
	"openai_model", "openai_api_key_env", "commands_dir", "identity", "synchronous",
	"busy_timeout_ms",
	"echo_delay_ms", "turn_lease_ms", "turn_max_attempts", "history_length_default",
	"heartbeat_ms", "stream_max_ms", "stream_poll_ms", "stream_max", "a2ui_version",
	"push_allow_private", "push_timeout_ms", "push_retry_base_ms", "push_retry_max_ms",
	"push_max_attempts", "push_max_configs", "push_keep_hours",
	"max_body", "json_depth", "max_parts", "max_text", "max_metadata", "max_participants",
	"max_plan_steps", "max_subtasks", "max_id",
};

static char *dup_or_null(const char *s)
{
	return s ? strdup(s) : NULL;
}

static th_err set_str(char **slot, const char *value, struct th_error *e)
{
	char *p = strdup(value);
	if (p == NULL)
		return th_error_set(e, TH_ENOMEM, "out of memory");
	free(*slot);
	*slot = p;
	return TH_OK;
}

static th_err parse_num(const char *key, const char *value, long long lo, long long hi,
                        long long *out, struct th_error *e)
{
	const char *p = value;
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
	return th_error_set(e, TH_EINVAL, "configuration key %s: '%s' is not a whole number between %lld and %lld",
	                    key, value, lo, hi);
}

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
		return th_error_set(e, TH_EINVAL,
		                    "configuration key base_url: '%s' is not an http:// or https:// URL",
		                    value);
	if (*rest == '\0' || *rest == '/' || strpbrk(value, "?# \t") != NULL)
		return th_error_set(e, TH_EINVAL,
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

th_err th_config_set(struct th_config *cfg, const char *key, const char *value, struct th_error *e)
{
	long long v = 0;
	th_err rc;
#define NUM(name, lo, hi, field)                                                                   \
	if (strcmp(key, name) == 0) {                                                              \
		if ((rc = parse_num(key, value, lo, hi, &v, e)) != TH_OK)                          \
			return rc;                                                                 \
		field = v;                                                                         \
		return TH_OK;                                                                      \
	}
	if (strcmp(key, "db") == 0) {
		if (*value == '\0')
			return th_error_set(e, TH_EINVAL, "configuration key db: the path is empty");
		return set_str(&cfg->db_path, value, e);
	}
	if (strcmp(key, "base_url") == 0)
		return set_base_url(cfg, value, e);
	if (strcmp(key, "model") == 0) {
		if (strcmp(value, "echo") != 0 && strcmp(value, "exec") != 0 &&
		    strcmp(value, "openai") != 0)
			return th_error_set(e, TH_EINVAL,
			                    "configuration key model: '%s' is not a model backend this "
			                    "build has (available: echo, exec, openai)",
			                    value);
		return set_str(&cfg->model, value, e);
	}
	if (strcmp(key, "model_command") == 0) {
		if (value[0] != '/')
			return th_error_set(e, TH_EINVAL,
			                    "configuration key model_command: '%s' does not start with an "
			                    "absolute path to the program",
			                    value);
		return set_str(&cfg->model_command, value, e);
	}
	if (strcmp(key, "openai_base_url") == 0) {
		if ((strncmp(value, "http://", 7) != 0 || value[7] == '\0' || value[7] == '/') &&
		    (strncmp(value, "https://", 8) != 0 || value[8] == '\0' || value[8] == '/'))
			return th_error_set(e, TH_EINVAL,
			                    "configuration key openai_base_url: '%s' is not an http:// or "
			                    "https:// URL with a host",
			                    value);
		if (strpbrk(value, "?# \t") != NULL)
			return th_error_set(e, TH_EINVAL,
			                    "configuration key openai_base_url: '%s' has a query, a "
			                    "fragment or a space",
			                    value);
		if ((rc = set_str(&cfg->openai_base_url, value, e)) != TH_OK)
			return rc;
		size_t n = strlen(cfg->openai_base_url);
		while (n > 0 && cfg->openai_base_url[n - 1] == '/')
			cfg->openai_base_url[--n] = '\0';
		return TH_OK;
	}
	if (strcmp(key, "openai_model") == 0) {
		if (*value == '\0')
			return th_error_set(e, TH_EINVAL, "configuration key openai_model: the name is empty");
		return set_str(&cfg->openai_model, value, e);
	}
	if (strcmp(key, "openai_api_key_env") == 0) {
		int ok = isalpha((unsigned char)value[0]) || value[0] == '_';
		for (const char *p = value; ok && *p; p++)
			ok = isalnum((unsigned char)*p) || *p == '_';
		if (!ok)
			return th_error_set(e, TH_EINVAL,
			                    "configuration key openai_api_key_env: '%s' is not the name of "
			                    "an environment variable (letters, digits, '_')",
			                    value);
		return set_str(&cfg->openai_api_key_env, value, e);
	}
	if (strcmp(key, "commands_dir") == 0)
		return set_str(&cfg->commands_dir, value, e);
	if (strcmp(key, "identity") == 0) {
		if (strcmp(value, "header") == 0)
			cfg->identity = TH_IDENTITY_HEADER;
		else if (strcmp(value, "remote_user") == 0)
			cfg->identity = TH_IDENTITY_REMOTE_USER;
		else
			return th_error_set(e, TH_EINVAL,
			                    "configuration key identity: '%s' is not header or remote_user",
			                    value);
		return TH_OK;
	}
	if (strcmp(key, "synchronous") == 0) {
		if (strcmp(value, "normal") == 0)
			cfg->sync_full = 0;
		else if (strcmp(value, "full") == 0)
			cfg->sync_full = 1;
		else
			return th_error_set(e, TH_EINVAL,
			                    "configuration key synchronous: '%s' is not normal or full", value);
		return TH_OK;
	}
	if (strcmp(key, "a2ui_version") == 0) {
		if (strcmp(value, "v0.9") == 0)
			cfg->a2ui_v091 = 0;
		else if (strcmp(value, "v0.9.1") == 0)
			cfg->a2ui_v091 = 1;
		else
			return th_error_set(e, TH_EINVAL,
			                    "configuration key a2ui_version: '%s' is not v0.9 or v0.9.1",
			                    value);
		return TH_OK;
	}
	NUM("busy_timeout_ms", 0, 600000, cfg->busy_timeout_ms)
	NUM("echo_delay_ms", 0, 600000, cfg->echo_delay_ms)
	NUM("model_timeout_ms", 100, 3600000, cfg->model_timeout_ms)
	NUM("turn_lease_ms", 100, 86400000, cfg->lease_ms)
	NUM("turn_max_attempts", 1, 100, cfg->max_attempts)
	NUM("heartbeat_ms", 100, 3600000, cfg->heartbeat_ms)
	NUM("stream_max_ms", 100, 86400000, cfg->stream_max_ms)
	NUM("stream_poll_ms", 5, 10000, cfg->stream_poll_ms)
	NUM("stream_max", 1, 100000, cfg->stream_max)
	NUM("push_allow_private", 0, 1, cfg->push_allow_private)
	NUM("push_timeout_ms", 100, 120000, cfg->push_timeout_ms)
	NUM("push_retry_base_ms", 10, 3600000, cfg->push_retry_base_ms)
	NUM("push_retry_max_ms", 10, 86400000, cfg->push_retry_max_ms)
	NUM("push_max_attempts", 1, 1000, cfg->push_max_attempts)
	NUM("push_max_configs", 1, 1000, cfg->push_max_configs)
	NUM("push_keep_hours", 1, 87600, cfg->push_keep_hours)
	if (strcmp(key, "history_length_default") == 0) {
		if (strcmp(value, "-1") == 0) {
			cfg->history_default = -1;
			return TH_OK;
		}
		if ((rc = parse_num(key, value, 0, 100000, &v, e)) != TH_OK)
			return rc;
		cfg->history_default = (int)v;
		return TH_OK;
	}
	NUM("max_body", 1024, 1073741824, cfg->lim.max_body)
	NUM("json_depth", 4, 1000, cfg->lim.json_depth)
	NUM("max_parts", 1, 10000, cfg->lim.max_parts)
	NUM("max_text", 1, 1073741824, cfg->lim.max_text)
	NUM("max_metadata", 2, 1073741824, cfg->lim.max_metadata)
	NUM("max_participants", 2, 10000, cfg->lim.max_participants)
	NUM("max_plan_steps", 1, 10000, cfg->lim.max_plan_steps)
	NUM("max_subtasks", 0, 100000, cfg->lim.max_subtasks)
	NUM("max_id", 8, 4096, cfg->lim.max_id)
#undef NUM
	return th_error_set(e, TH_EINVAL, "unknown configuration key '%s'", key);
}

th_err th_config_defaults(struct th_config *cfg)
{
	memset(cfg, 0, sizeof *cfg);
	cfg->db_path = strdup("./var/tiny-harness.db");
	cfg->model = strdup("echo");
	cfg->commands_dir = strdup("conf/commands");
	cfg->model_timeout_ms = 60000;
	cfg->openai_api_key_env = strdup("OPENAI_API_KEY");
	cfg->identity = TH_IDENTITY_HEADER;
	cfg->busy_timeout_ms = 5000;
	cfg->lease_ms = 30000;
	cfg->max_attempts = 3;
	cfg->history_default = -1;
	cfg->heartbeat_ms = 15000;
	cfg->stream_max_ms = 300000;
	cfg->stream_poll_ms = 50;
	cfg->stream_max = 1000;
	cfg->push_timeout_ms = 10000;
	cfg->push_retry_base_ms = 1000;
	cfg->push_retry_max_ms = 300000;
	cfg->push_max_attempts = 10;
	cfg->push_max_configs = 10;
	cfg->push_keep_hours = 168;
	cfg->lim.max_body = 1048576;
	cfg->lim.json_depth = 32;
	cfg->lim.max_parts = 64;
	cfg->lim.max_text = 65536;
	cfg->lim.max_metadata = 16384;
	cfg->lim.max_participants = 50;
	cfg->lim.max_plan_steps = 100;
	cfg->lim.max_subtasks = 100;
	cfg->lim.max_id = 256;
	if (cfg->db_path == NULL || cfg->model == NULL || cfg->commands_dir == NULL ||
	    cfg->openai_api_key_env == NULL ||
	    set_base_url(cfg, "http://127.0.0.1:8080/", NULL) != TH_OK) {
		th_config_free(cfg);
		return TH_ENOMEM;
	}
	return TH_OK;
}

static char *trim(char *s)
{
	while (isspace((unsigned char)*s))
		s++;
	char *end = s + strlen(s);
	while (end > s && isspace((unsigned char)end[-1]))
		*--end = '\0';
	return s;
}

static th_err load_file(struct th_config *cfg, const char *path, struct th_error *e)
{
	FILE *f = fopen(path, "r");
	if (f == NULL)
		return th_error_set(e, TH_EINVAL, "configuration file %s: %s", path, strerror(errno));
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
		char *s = trim(line);
		if (*s == '\0' || *s == '#')
			continue;
		char *eq = strchr(s, '=');
		if (eq == NULL) {
			rc = th_error_set(e, TH_EINVAL, "%s:%d: expected 'key = value', got '%s'", path,
			                  lineno, s);
			break;
		}
		*eq = '\0';
		char *key = trim(s), *value = trim(eq + 1);
		struct th_error sub;
		th_error_clear(&sub);
		if (th_config_set(cfg, key, value, &sub) != TH_OK)
			rc = th_error_set(e, sub.code, "%s:%d: %s", path, lineno, sub.msg);
	}
	fclose(f);
	return rc;
}

static th_err load_env(struct th_config *cfg, struct th_error *e)
{
	char name[64];
	for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
		snprintf(name, sizeof name, "TINY_HARNESS_%s", keys[i]);
		for (char *p = name; *p; p++)
			*p = (char)toupper((unsigned char)*p);
		const char *v = getenv(name);
		if (v == NULL)
			continue;
		struct th_error sub;
		th_error_clear(&sub);
		if (th_config_set(cfg, keys[i], v, &sub) != TH_OK)
			return th_error_set(e, sub.code, "environment variable %s: %s", name, sub.msg);
	}
	return TH_OK;
}

/* A backend's required keys may come from the file or the environment in any order,
 * so they are checked once everything is read. */
static th_err check_model(const struct th_config *cfg, struct th_error *e)
{
	if (strcmp(cfg->model, "exec") == 0 && cfg->model_command == NULL)
		return th_error_set(e, TH_EINVAL,
		                    "configuration key model_command is required when model = exec");
	if (strcmp(cfg->model, "openai") == 0 && cfg->openai_base_url == NULL)
		return th_error_set(e, TH_EINVAL,
		                    "configuration key openai_base_url is required when model = openai");
	if (strcmp(cfg->model, "openai") == 0 && cfg->openai_model == NULL)
		return th_error_set(e, TH_EINVAL,
		                    "configuration key openai_model is required when model = openai");
	return TH_OK;
}

th_err th_config_load(struct th_config *cfg, struct th_error *e)
{
	if (th_config_defaults(cfg) != TH_OK)
		return th_error_set(e, TH_ENOMEM, "out of memory");
	const char *path = getenv("TINY_HARNESS_CONF");
	th_err rc = TH_OK;
	if (path != NULL && *path != '\0') {
		rc = load_file(cfg, path, e);
	} else if (access("conf/tiny-harness.conf", R_OK) == 0) {
		path = "conf/tiny-harness.conf";
		rc = load_file(cfg, path, e);
	} else {
		path = NULL;
	}
	if (rc == TH_OK && path != NULL && (cfg->source = dup_or_null(path)) == NULL)
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
	free(cfg->source);
	free(cfg->db_path);
	free(cfg->base_url);
	free(cfg->base_path);
	free(cfg->model);
	free(cfg->model_command);
	free(cfg->openai_base_url);
	free(cfg->openai_model);
	free(cfg->openai_api_key_env);
	free(cfg->commands_dir);
	memset(cfg, 0, sizeof *cfg);
}
