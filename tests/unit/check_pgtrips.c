/* SPDX-License-Identifier: Apache-2.0 */
/* check_pgtrips.c — SCALE-1 (decision-054): how many round trips a SendMessage costs on
 * the writer connection of a worker on PostgreSQL (TH_TEST_PG, pg_fixture.h), counted by
 * the store on the client side (th_store_group_stats' round_trips: one per statement run
 * alone, one per pipeline sync). Without TH_TEST_PG the suite has nothing to count and
 * passes without a check. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/settings.h"
#include "harness_fixture.h"
#include "pg_fixture.h"
#include "store/store.h"

/* The most round trips each SendMessage may cost on the writer connection. Issue 29's
 * goal is 4; this is what the pipeline reaches today (docs/store.md has the table), so
 * that a change that adds one fails here. */
#define NEW_TASK_TRIPS 16
#define FOLLOW_UP_TRIPS 12

static char tmpdir[256];
static char pgdb[64];
static char uri[320];

static void setup(void)
{
	snprintf(tmpdir, sizeof tmpdir, "/tmp/th-pgtrips-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(tmpdir));
	th_test_pg_create(tmpdir, pgdb, sizeof pgdb, uri, sizeof uri);
}

static void teardown(void)
{
	th_test_pg_drop(tmpdir, pgdb);
	char cmd[300];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", tmpdir);
}

/* Round trips on g's writer while sending text (a new task when task_id is NULL) as bob;
 * the task's id into id (when not NULL) and its state must be INPUT_REQUIRED (echo). */
static int64_t send_trips(struct th_app *app, struct th_store_group *g, const char *task_id,
                          const char *message_id, char *id, size_t idsz)
{
	struct th_store_group_stats before, after;
	struct th_error e;
	th_store_group_stats(g, &before);
	json_object *task = fx_send_text(app, "bob", task_id, message_id, "hello", &e);
	th_store_group_stats(g, &after);
	ck_assert_msg(task != NULL, "SendMessage: %s", e.msg);
	ck_assert_str_eq(fx_state(task), "TASK_STATE_INPUT_REQUIRED");
	if (id != NULL)
		snprintf(id, idsz, "%s", fx_task_id(task));
	json_object_put(task);
	return after.round_trips - before.round_trips;
}

START_TEST(test_scale1_pg_send_message_round_trips_on_the_writer)
{
	struct th_config *cfg = malloc(sizeof *cfg);
	ck_assert_ptr_nonnull(cfg);
	ck_assert_int_eq(th_config_defaults(cfg), TH_OK);
	struct th_error e;
	th_error_clear(&e);
	ck_assert_int_eq(th_config_set(cfg, "db", uri, &e), TH_OK);
	ck_assert_int_eq(th_config_set(cfg, "commands_dir", "/nonexistent", &e), TH_OK);
	struct th_app app;
	ck_assert_msg(th_app_open(&app, cfg, 0, &e) == TH_OK, "open: %s", e.msg);
	struct th_store_opts o;
	th_worker_store_opts(app.cfg, 0, &o);
	struct th_store_group *g = NULL;
	ck_assert_msg(th_store_group_open(&o, &g, &e) == TH_OK, "group: %s", e.msg);
	th_store_join(app.store, g);
	char id[128];
	/* The first of each kind prepares its statements: counted from the second on. */
	(void)send_trips(&app, g, NULL, "warm-1", id, sizeof id);
	(void)send_trips(&app, g, id, "warm-2", NULL, 0);
	int64_t created = send_trips(&app, g, NULL, "new-1", id, sizeof id);
	int64_t followed = send_trips(&app, g, id, "follow-1", NULL, 0);
	ck_assert_msg(created >= 2 && created <= NEW_TASK_TRIPS,
	              "a new task took %lld round trips (at most %d)", (long long)created,
	              NEW_TASK_TRIPS);
	ck_assert_msg(followed >= 2 && followed <= FOLLOW_UP_TRIPS,
	              "a follow-up took %lld round trips (at most %d)", (long long)followed,
	              FOLLOW_UP_TRIPS);
	fprintf(stderr, "SCALE-1 round trips on the writer: new task %lld, follow-up %lld\n",
	        (long long)created, (long long)followed);
	th_app_close(&app);
	th_store_group_close(g);
}
END_TEST

int main(void)
{
	/* Round trips exist only on PostgreSQL: without a server the suite is skipped (77),
	 * not reported as passing with no test run. */
	if (th_test_pg_base() == NULL) {
		puts("check_pgtrips: SCALE-1 round trips need PostgreSQL (TH_TEST_PG): skipped");
		return 77;
	}
	Suite *s = suite_create("pgtrips");
	TCase *tc = tcase_create("pgtrips");
	tcase_set_timeout(tc, 60);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_scale1_pg_send_message_round_trips_on_the_writer);
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
