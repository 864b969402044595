/* check_config.c — configuration (STORE-3): defaults with no configuration at all,
 * the file, environment overrides, and refusals that name the key and the value. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config/config.h"

static char dir[64];

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
	write_file("conf/tiny-harness.conf", "# comment\n\ndb = /tmp/x.db\nmodel = echo\n"
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

int main(void)
{
	Suite *s = suite_create("config");
	TCase *tc = tcase_create("load");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_store3_no_configuration_runs_on_defaults);
	tcase_add_test(tc, test_store3_file_then_environment_overrides);
	tcase_add_test(tc, test_store3_unknown_key_stops_start_up_naming_it);
	tcase_add_test(tc, test_store3_bad_values_are_named);
	tcase_add_test(tc, test_id1_identity_mode_remote_user);
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
