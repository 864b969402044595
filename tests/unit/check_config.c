/* SPDX-License-Identifier: Apache-2.0 */
/* check_config.c — configuration (STORE-3): defaults with no configuration at all,
 * the file, environment overrides, and refusals that name the key and the value;
 * the key table against the shipped conf/tiny-harness.conf. */
#include <check.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config/settings.h"

static char dir[64];
static char shipped[PATH_MAX]; /* conf/tiny-harness.conf of the source tree */

static void setup(void)
{
	snprintf(dir, sizeof dir, "/tmp/th-cfg-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	ck_assert_int_eq(chdir(dir), 0);
	unsetenv("TINY_HARNESS_CONF");
	unsetenv("TINY_HARNESS_DB");
	unsetenv("TINY_HARNESS_BASE_URL");
	unsetenv("TINY_HARNESS_MODEL");
	unsetenv("TINY_HARNESS_MAX_BODY");
	unsetenv("TINY_HARNESS_COMMANDS_DIR");
	unsetenv("TINY_HARNESS_SYNCHRONOUS");
}

static void teardown(void)
{
	char cmd[128];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	ck_assert_int_eq(system(cmd), 0);
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
}

START_TEST(test_store3_no_configuration_runs_on_defaults)
{
	struct th_config c;
	struct th_error e;
	ck_assert_int_eq(th_config_load(&c, &e), TH_OK);
	ck_assert_ptr_null(c.source);
	ck_assert_str_eq(c.db_path, "./var/tiny-harness.db");
	ck_assert_str_eq(c.model, "echo");
	ck_assert_str_eq(c.base_url, "http://127.0.0.1:8080/");
	ck_assert_str_eq(c.base_path, "/");
	ck_assert_uint_eq(c.lim.max_body, 1048576);
	ck_assert_int_eq(c.identity, TH_IDENTITY_HEADER);
	th_config_free(&c);
}
END_TEST

START_TEST(test_store3_file_then_environment_overrides)
{
	mkdir("conf", 0700);
	write_file("conf/tiny-harness.conf",
	           "# comment\n\ndb = /tmp/x.db\nmodel = echo\n"
	           "base_url = https://agents.example/a2a\nmax_body=2048\n");
	setenv("TINY_HARNESS_DB", "/tmp/from-env.db", 1);
	struct th_config c;
	struct th_error e;
	ck_assert_int_eq(th_config_load(&c, &e), TH_OK);
	ck_assert_str_eq(c.source, "conf/tiny-harness.conf");
	ck_assert_str_eq(c.db_path, "/tmp/from-env.db");
	ck_assert_str_eq(c.base_url, "https://agents.example/a2a/");
	ck_assert_str_eq(c.base_path, "/a2a/");
	ck_assert_uint_eq(c.lim.max_body, 2048);
	th_config_free(&c);
}
END_TEST

/* PKG-4: the environment is read in one pass; only TINY_HARNESS_<KEY> in capitals, the
 * whole name, counts (a longer name, a shorter one or lower case is someone else's). */
START_TEST(test_store3_environment_names_match_whole_and_in_capitals)
{
	setenv("tiny_harness_model", "exec", 1);
	setenv("TINY_HARNESS_MODELS", "exec", 1);
	setenv("TINY_HARNESS_", "x", 1);
	setenv("TINY_HARNESS_MAX_BOD", "x", 1);
	setenv("TINY_HARNESS_MAX_BODY", "4096", 1);
	struct th_config c;
	struct th_error e;
	th_err rc = th_config_load(&c, &e);
	unsetenv("tiny_harness_model");
	unsetenv("TINY_HARNESS_MODELS");
	unsetenv("TINY_HARNESS_");
	unsetenv("TINY_HARNESS_MAX_BOD");
	ck_assert_int_eq(rc, TH_OK);
	ck_assert_str_eq(c.model, "echo");
	ck_assert_uint_eq(c.lim.max_body, 4096);
	th_config_free(&c);
}
END_TEST

START_TEST(test_store3_unknown_key_stops_start_up_naming_it)
{
	write_file("my.conf", "db = x.db\ncolour = blue\n");
	setenv("TINY_HARNESS_CONF", "my.conf", 1);
	struct th_config c;
	struct th_error e;
	ck_assert_int_eq(th_config_load(&c, &e), TH_EINVAL);
	ck_assert_ptr_nonnull(strstr(e.msg, "colour"));
	ck_assert_ptr_nonnull(strstr(e.msg, "my.conf:2"));
}
END_TEST

START_TEST(test_store3_bad_values_are_named)
{
	struct th_config c;
	struct th_error e;
	setenv("TINY_HARNESS_MAX_BODY", "lots", 1);
	ck_assert_int_eq(th_config_load(&c, &e), TH_EINVAL);
	ck_assert_ptr_nonnull(strstr(e.msg, "TINY_HARNESS_MAX_BODY"));
	ck_assert_ptr_nonnull(strstr(e.msg, "lots"));
	unsetenv("TINY_HARNESS_MAX_BODY");
	setenv("TINY_HARNESS_MODEL", "gpt-9", 1);
	ck_assert_int_eq(th_config_load(&c, &e), TH_EINVAL);
	ck_assert_ptr_nonnull(strstr(e.msg, "gpt-9"));
	unsetenv("TINY_HARNESS_MODEL");
	setenv("TINY_HARNESS_BASE_URL", "ftp://x/", 1);
	ck_assert_int_eq(th_config_load(&c, &e), TH_EINVAL);
	ck_assert_ptr_nonnull(strstr(e.msg, "base_url"));
	setenv("TINY_HARNESS_CONF", "missing.conf", 1);
	ck_assert_int_eq(th_config_load(&c, &e), TH_EINVAL);
	ck_assert_ptr_nonnull(strstr(e.msg, "missing.conf"));
}
END_TEST

/* SEC-6: db_group is unset by default (0600), takes a group name and refuses what no
 * group name can be; whether the group exists is the store's question (check_store). */
START_TEST(test_sec6_db_group_key)
{
	struct th_config c;
	struct th_error e;
	ck_assert_int_eq(th_config_defaults(&c), TH_OK);
	ck_assert_ptr_null(c.db_group);
	ck_assert_int_eq(th_config_set(&c, "db_group", "tiny-harness", &e), TH_OK);
	ck_assert_str_eq(c.db_group, "tiny-harness");
	ck_assert_int_eq(th_config_set(&c, "db_group", "a:b", &e), TH_EINVAL);
	ck_assert_ptr_nonnull(strstr(e.msg, "db_group"));
	ck_assert_int_eq(th_config_set(&c, "db_group", "", &e), TH_EINVAL);
	ck_assert_str_eq(c.db_group, "tiny-harness");
	th_config_free(&c);
}
END_TEST

START_TEST(test_id1_identity_mode_remote_user)
{
	struct th_config c;
	struct th_error e;
	ck_assert_int_eq(th_config_defaults(&c), TH_OK);
	ck_assert_int_eq(th_config_set(&c, "identity", "remote_user", &e), TH_OK);
	ck_assert_int_eq(c.identity, TH_IDENTITY_REMOTE_USER);
	ck_assert_int_eq(th_config_set(&c, "identity", "cookie", &e), TH_EINVAL);
	th_config_free(&c);
}
END_TEST

/* SEC-1: a serving process refuses identity = header (and anonymous_participant) on a
 * base_url that is not loopback, naming the keys that fix it, unless
 * identity_header_public = 1; trusted_proxies is parsed at load. */
START_TEST(test_sec1_header_mode_refused_on_a_public_base_url)
{
	struct th_config c;
	struct th_error e;
	ck_assert_int_eq(th_config_defaults(&c), TH_OK);
	ck_assert_int_eq(th_config_check_serving(&c, &e), TH_OK);
	static const char *const loopback[] = {"http://localhost:8080/",  "http://LOCALHOST./a/",
	                                       "http://a.localhost/",     "http://127.0.0.1/",
	                                       "http://127.1.2.3:9/",     "http://[::1]:8080/",
	                                       "http://u@127.0.0.1:80/x/"};
	for (size_t i = 0; i < sizeof loopback / sizeof loopback[0]; i++) {
		ck_assert_int_eq(th_config_set(&c, "base_url", loopback[i], &e), TH_OK);
		ck_assert_msg(th_config_check_serving(&c, &e) == TH_OK, "%s: %s", loopback[i],
		              e.msg);
	}
	static const char *const public[] = {
	    "https://agents.example.com/",   "http://192.0.2.1:8080/",
	    "http://[2001:db8::1]/",         "http://localhost.example.com/",
	    "http://127.0.0.1.example.com/", "http://127.0.0.1@evil.example/",
	    "http://0.0.0.0:8080/"};
	for (size_t i = 0; i < sizeof public / sizeof public[0]; i++) {
		ck_assert_int_eq(th_config_set(&c, "base_url", public[i], &e), TH_OK);
		ck_assert_msg(th_config_check_serving(&c, &e) == TH_EINVAL, "%s served", public[i]);
		ck_assert_ptr_nonnull(strstr(e.msg, "identity_header_public = 1"));
		ck_assert_ptr_nonnull(strstr(e.msg, "identity = remote_user"));
	}
	ck_assert_int_eq(th_config_set(&c, "anonymous_participant", "guest", &e), TH_OK);
	ck_assert_int_eq(th_config_check_serving(&c, &e), TH_EINVAL);
	ck_assert_ptr_nonnull(strstr(e.msg, "anonymous_participant"));
	ck_assert_int_eq(th_config_set(&c, "identity_header_public", "1", &e), TH_OK);
	ck_assert_int_eq(th_config_check_serving(&c, &e), TH_OK);
	ck_assert_int_eq(th_config_set(&c, "identity_header_public", "0", &e), TH_OK);
	ck_assert_int_eq(th_config_set(&c, "identity", "remote_user", &e), TH_OK);
	ck_assert_int_eq(th_config_check_serving(&c, &e), TH_OK);
	ck_assert_int_eq(th_config_set(&c, "trusted_proxies", "10.0.0.5, 10.1.0.0/16 fd00::/8", &e),
	                 TH_OK);
	static const char *const bad[] = {"10.0.0",    "10.0.0.0/33",   "fd00::/129",
	                                  "10.0.0.1/", "proxy.example", "10.0.0.1/8x"};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		ck_assert_msg(th_config_set(&c, "trusted_proxies", bad[i], &e) == TH_EINVAL,
		              "%s accepted", bad[i]);
		ck_assert_ptr_nonnull(strstr(e.msg, "trusted_proxies"));
	}
	th_config_free(&c);
}
END_TEST

START_TEST(test_store3_defaults_are_unchanged)
{
	struct th_config c;
	ck_assert_int_eq(th_config_defaults(&c), TH_OK);
	ck_assert_str_eq(c.db_path, "./var/tiny-harness.db");
	ck_assert_str_eq(c.base_url, "http://127.0.0.1:8080/");
	ck_assert_str_eq(c.base_path, "/");
	ck_assert_str_eq(c.model, "echo");
	ck_assert_ptr_null(c.model_command);
	ck_assert_ptr_null(c.openai_base_url);
	ck_assert_ptr_null(c.openai_model);
	ck_assert_str_eq(c.openai_api_key_env, "OPENAI_API_KEY");
	ck_assert_str_eq(c.commands_dir, "conf/commands");
	ck_assert_int_eq(c.identity, TH_IDENTITY_HEADER);
	ck_assert_int_eq(c.sync_full, 0);
	ck_assert_int_eq(c.a2ui_v091, 0);
	int ints[] = {
	    c.model_timeout_ms,   c.busy_timeout_ms,   c.echo_delay_ms,      c.lease_ms,
	    c.max_attempts,       c.history_default,   c.heartbeat_ms,       c.stream_max_ms,
	    c.stream_poll_ms,     c.stream_max,        c.push_allow_private, c.push_timeout_ms,
	    c.push_retry_base_ms, c.push_retry_max_ms, c.push_max_attempts,  c.push_max_configs,
	    c.push_keep_hours,    c.lim.json_depth,    c.worker_threads};
	int want[] = {60000, 5000,  0,    30000,  3,  -1, 15000, 300000, 50, 1000,
	              0,     10000, 1000, 300000, 10, 10, 168,   32,     16};
	for (size_t i = 0; i < sizeof ints / sizeof ints[0]; i++)
		ck_assert_msg(ints[i] == want[i], "default %zu: %d, want %d", i, ints[i], want[i]);
	size_t sizes[] = {
	    c.lim.max_body,         c.lim.max_parts,      c.lim.max_text,     c.lim.max_metadata,
	    c.lim.max_participants, c.lim.max_plan_steps, c.lim.max_subtasks, c.lim.max_id};
	size_t want_sizes[] = {1048576, 64, 65536, 16384, 50, 100, 100, 256};
	for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
		ck_assert_msg(sizes[i] == want_sizes[i], "limit %zu: %zu, want %zu", i, sizes[i],
		              want_sizes[i]);
	th_config_free(&c);
}
END_TEST

/* Every whole-number key takes its bounds and refuses one past each, naming the key
 * and both bounds; every default parses. */
START_TEST(test_store3_every_key_takes_its_default_and_keeps_its_bounds)
{
	struct th_config c;
	struct th_error e;
	ck_assert_int_eq(th_config_defaults(&c), TH_OK);
	const struct th_config_doc *k;
	for (size_t i = 0; (k = th_config_key(i)) != NULL; i++) {
		ck_assert_ptr_nonnull(k->doc);
		if (k->def != NULL)
			ck_assert_msg(th_config_set(&c, k->name, k->def, &e) == TH_OK, "%s", e.msg);
		long long lo, hi;
		if (k->range == NULL)
			continue;
		ck_assert_int_eq(sscanf(k->range, "%lld..%lld", &lo, &hi), 2);
		char text[32], bounds[64];
		snprintf(bounds, sizeof bounds, "between %lld and %lld", lo, hi);
		long long cases[] = {lo, hi, lo - 1, hi + 1};
		for (size_t j = 0; j < 4; j++) {
			snprintf(text, sizeof text, "%lld", cases[j]);
			th_error_clear(&e);
			th_err want = j < 2 ? TH_OK : TH_EINVAL;
			ck_assert_msg(th_config_set(&c, k->name, text, &e) == want, "%s = %s",
			              k->name, text);
			if (want != TH_OK)
				ck_assert_msg(strstr(e.msg, k->name) && strstr(e.msg, bounds), "%s",
				              e.msg);
		}
	}
	ck_assert_int_eq(th_config_set(&c, "history_length_default", "-1", &e), TH_OK);
	ck_assert_int_eq(c.history_default, -1);
	ck_assert_int_eq(th_config_set(&c, "max_body", "-5", &e), TH_EINVAL);
	ck_assert_int_eq(th_config_set(&c, "max_body", "", &e), TH_EINVAL);
	ck_assert_int_eq(th_config_set(&c, "max_body", "2048", &e), TH_OK);
	ck_assert_uint_eq(c.lim.max_body, 2048);
	th_config_free(&c);
}
END_TEST

START_TEST(test_store3_word_keys_name_what_they_accept)
{
	struct th_config c;
	struct th_error e;
	ck_assert_int_eq(th_config_defaults(&c), TH_OK);
	ck_assert_int_eq(th_config_set(&c, "synchronous", "full", &e), TH_OK);
	ck_assert_int_eq(c.sync_full, 1);
	ck_assert_int_eq(th_config_set(&c, "synchronous", "off", &e), TH_EINVAL);
	ck_assert_ptr_nonnull(strstr(e.msg, "synchronous: 'off' is not normal or full"));
	ck_assert_int_eq(th_config_set(&c, "a2ui_version", "v0.9.1", &e), TH_OK);
	ck_assert_int_eq(c.a2ui_v091, 1);
	ck_assert_int_eq(th_config_set(&c, "a2ui_version", "v1", &e), TH_EINVAL);
	ck_assert_ptr_nonnull(strstr(e.msg, "a2ui_version: 'v1' is not v0.9 or v0.9.1"));
	ck_assert_int_eq(th_config_set(&c, "identity", "cookie", &e), TH_EINVAL);
	ck_assert_ptr_nonnull(
	    strstr(e.msg, "identity: 'cookie' is not header, remote_user or bearer"));
	ck_assert_int_eq(th_config_set(&c, "db", "", &e), TH_EINVAL);
	ck_assert_ptr_nonnull(strstr(e.msg, "db"));
	th_config_free(&c);
	setenv("TINY_HARNESS_SYNCHRONOUS", "full", 1);
	ck_assert_int_eq(th_config_load(&c, &e), TH_OK);
	ck_assert_int_eq(c.sync_full, 1);
	th_config_free(&c);
}
END_TEST

/* RET-5: the retain_* keys take an age or off; a bad value stops start-up naming the key
 * and the value, from the file as from the environment. */
START_TEST(test_ret5_retention_keys_take_ages_and_name_bad_values)
{
	struct th_config c;
	struct th_error e;
	ck_assert_int_eq(th_config_defaults(&c), TH_OK);
	ck_assert_int_eq(c.retain_ended_ms, 30LL * 86400000);
	ck_assert_int_eq(c.retain_stuck_ms, 0);
	ck_assert_int_eq(c.retain_dead_letters_ms, 7LL * 86400000);
	ck_assert_int_eq(th_config_set(&c, "retain_stuck", "12h", &e), TH_OK);
	ck_assert_int_eq(c.retain_stuck_ms, 12LL * 3600000);
	ck_assert_int_eq(th_config_set(&c, "retain_ended", "90m", &e), TH_OK);
	ck_assert_int_eq(c.retain_ended_ms, 90LL * 60000);
	ck_assert_int_eq(th_config_set(&c, "retain_dead_letters", "45s", &e), TH_OK);
	ck_assert_int_eq(c.retain_dead_letters_ms, 45000);
	ck_assert_int_eq(th_config_set(&c, "retain_ended", "off", &e), TH_OK);
	ck_assert_int_eq(c.retain_ended_ms, 0);
	ck_assert_int_eq(th_config_set(&c, "retain_dead_letters", "0", &e), TH_OK);
	ck_assert_int_eq(c.retain_dead_letters_ms, 0);
	static const char *const bad[] = {"30",   "30x", "d",    "-1d",          "0d",
	                                  "1.5d", "",    "30d ", "99999999999d", "never"};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		th_error_clear(&e);
		ck_assert_msg(th_config_set(&c, "retain_ended", bad[i], &e) == TH_EINVAL, "'%s'",
		              bad[i]);
		char want[64];
		snprintf(want, sizeof want, "retain_ended: '%s' is not an age", bad[i]);
		ck_assert_msg(strstr(e.msg, want) != NULL, "%s", e.msg);
	}
	th_config_free(&c);
	setenv("TINY_HARNESS_RETAIN_STUCK", "3 days", 1);
	ck_assert_int_eq(th_config_load(&c, &e), TH_EINVAL);
	unsetenv("TINY_HARNESS_RETAIN_STUCK");
	ck_assert_msg(strstr(e.msg, "TINY_HARNESS_RETAIN_STUCK") != NULL &&
	                  strstr(e.msg, "'3 days'") != NULL,
	              "%s", e.msg);
}
END_TEST

/* Issue 11: `db = a.db   # the database` used to name a file after the comment. */
START_TEST(test_store3_comment_after_a_value_is_not_part_of_it)
{
	write_file("my.conf", "db = a.db   # the database\n"
	                      "model = echo\t# a tab before the '#' too\n"
	                      "base_url = https://agents.example/a2a #the public URL\n"
	                      "commands_dir = cmds#1\n"
	                      "   # an indented comment line\n"
	                      "max_body = 4096#no space: part of the value\n");
	setenv("TINY_HARNESS_CONF", "my.conf", 1);
	struct th_config c;
	struct th_error e;
	ck_assert_int_eq(th_config_load(&c, &e), TH_EINVAL);
	ck_assert_ptr_nonnull(strstr(e.msg, "my.conf:6"));
	ck_assert_ptr_nonnull(strstr(e.msg, "max_body"));
	write_file("my.conf", "db = a.db   # the database\n"
	                      "model = echo\t# a tab before the '#' too\n"
	                      "base_url = https://agents.example/a2a #the public URL\n"
	                      "commands_dir = cmds#1\n"
	                      "   # an indented comment line\n");
	ck_assert_msg(th_config_load(&c, &e) == TH_OK, "%s", e.msg);
	ck_assert_str_eq(c.db_path, "a.db");
	ck_assert_str_eq(c.model, "echo");
	ck_assert_str_eq(c.base_url, "https://agents.example/a2a/");
	ck_assert_str_eq(c.commands_dir, "cmds#1");
	th_config_free(&c);
	/* The environment has no comments: its value is taken whole. */
	setenv("TINY_HARNESS_COMMANDS_DIR", "x # y", 1);
	ck_assert_int_eq(th_config_load(&c, &e), TH_OK);
	ck_assert_str_eq(c.commands_dir, "x # y");
	th_config_free(&c);
}
END_TEST

/* A key line of the example file: `# key = value` or `key = value`; NULL otherwise. */
static char *key_line(char *line, char **value)
{
	char *s = line;
	if (strncmp(s, "# ", 2) == 0)
		s += 2;
	size_t n = strspn(s, "abcdefghijklmnopqrstuvwxyz0123456789_");
	if (n == 0 || strncmp(s + n, " = ", 3) != 0)
		return NULL;
	s[n] = '\0';
	*value = s + n + 3;
	(*value)[strcspn(*value, "\n")] = '\0';
	return s;
}

/* The shipped example names every key of the table once, with its default, and no
 * key the table lacks; loaded as it is, it changes nothing. */
START_TEST(test_store3_shipped_conf_names_every_key)
{
	FILE *f = fopen(shipped, "r");
	ck_assert_msg(f != NULL, "%s: cannot open", shipped);
	size_t seen[128] = {0}, nkeys = 0;
	while (th_config_key(nkeys) != NULL)
		nkeys++;
	ck_assert_uint_le(nkeys, sizeof seen / sizeof seen[0]);
	char line[1024], *value;
	while (fgets(line, sizeof line, f) != NULL) {
		char *key = key_line(line, &value);
		if (key == NULL)
			continue;
		size_t i = 0;
		while (i < nkeys && strcmp(th_config_key(i)->name, key) != 0)
			i++;
		ck_assert_msg(i < nkeys, "%s names '%s', which is not a configuration key", shipped,
		              key);
		const struct th_config_doc *k = th_config_key(i);
		ck_assert_msg(k->def == NULL || strcmp(k->def, value) == 0,
		              "%s: %s = %s, but its default is %s", shipped, key, value, k->def);
		seen[i]++;
	}
	fclose(f);
	for (size_t i = 0; i < nkeys; i++)
		ck_assert_msg(seen[i] == 1, "%s names %s %zu times", shipped,
		              th_config_key(i)->name, seen[i]);
	setenv("TINY_HARNESS_CONF", shipped, 1);
	struct th_config c;
	struct th_error e;
	ck_assert_msg(th_config_load(&c, &e) == TH_OK, "%s", e.msg);
	ck_assert_str_eq(c.db_path, "./var/tiny-harness.db");
	th_config_free(&c);
}
END_TEST

/* $TH_SRCDIR (make check sets it), else the tree this file was compiled from; made
 * absolute before the tests chdir. */
static void find_shipped(void)
{
	const char *root = getenv("TH_SRCDIR");
	char path[PATH_MAX];
	if (root != NULL && *root != '\0') {
		snprintf(path, sizeof path, "%s/conf/tiny-harness.conf", root);
	} else {
		const char *file = __FILE__, *tail = strstr(file, "tests/unit/check_config.c");
		int n = tail != NULL ? (int)(tail - file) : 0;
		snprintf(path, sizeof path, "%.*sconf/tiny-harness.conf", n, file);
	}
	if (realpath(path, shipped) == NULL)
		memcpy(shipped, path, sizeof shipped);
}

int main(void)
{
	find_shipped();
	Suite *s = suite_create("config");
	TCase *tc = tcase_create("load");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_store3_no_configuration_runs_on_defaults);
	tcase_add_test(tc, test_store3_file_then_environment_overrides);
	tcase_add_test(tc, test_store3_environment_names_match_whole_and_in_capitals);
	tcase_add_test(tc, test_store3_unknown_key_stops_start_up_naming_it);
	tcase_add_test(tc, test_store3_bad_values_are_named);
	tcase_add_test(tc, test_sec6_db_group_key);
	tcase_add_test(tc, test_id1_identity_mode_remote_user);
	tcase_add_test(tc, test_sec1_header_mode_refused_on_a_public_base_url);
	tcase_add_test(tc, test_store3_defaults_are_unchanged);
	tcase_add_test(tc, test_store3_every_key_takes_its_default_and_keeps_its_bounds);
	tcase_add_test(tc, test_store3_word_keys_name_what_they_accept);
	tcase_add_test(tc, test_store3_comment_after_a_value_is_not_part_of_it);
	tcase_add_test(tc, test_ret5_retention_keys_take_ages_and_name_bad_values);
	tcase_add_test(tc, test_store3_shipped_conf_names_every_key);
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
