/* SPDX-License-Identifier: Apache-2.0 */
/* check_oom.c — decision-026 at the allocations of one domain write: the n-th
 * allocation made by json-c and the project's code fails (malloc, calloc and realloc
 * are replaced in this program; SQLite keeps its own allocator), for every n, and the
 * write either succeeds whole or reports TH_ENOMEM and stores nothing. */
#include <check.h>
#include <dlfcn.h>
#include <json-c/json.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "domain/status.h"
#include "harness_fixture.h"
#include "store/store.h"

/* AddressSanitizer owns malloc and valgrind replaces it: neither can run a program that
 * defines its own, so there the program only says it was skipped (main); under
 * AddressSanitizer nothing but main is built. */
#ifndef __SANITIZE_ADDRESS__
extern void *__libc_malloc(size_t n);
extern void *__libc_calloc(size_t n, size_t size);
extern void *__libc_realloc(void *p, size_t n);
extern void __libc_free(void *p);

static long fail_at = -1; /* the allocation that fails, counted from arming; -1 none */
static long made;         /* allocations since arming */

static int fails(void)
{
	return fail_at >= 0 && ++made == fail_at;
}

void *malloc(size_t n)
{
	return fails() ? NULL : __libc_malloc(n);
}

void *calloc(size_t n, size_t size)
{
	return fails() ? NULL : __libc_calloc(n, size);
}

void *realloc(void *p, size_t n)
{
	return fails() ? NULL : __libc_realloc(p, n);
}

/* json-c's parser does not survive a failed allocation (it takes strlen of a failed
 * strdup), so no failure is injected while it runs: the store parses what it is given. */
json_object *json_tokener_parse(const char *str)
{
	static json_object *(*real)(const char *);
	if (real == NULL)
		*(void **)&real = dlsym(RTLD_NEXT, "json_tokener_parse");
	long saved = fail_at;
	fail_at = -1;
	json_object *v = real(str);
	fail_at = saved;
	return v;
}

/* json-c's serializer ignores a failed append and returns a text with a piece missing
 * (seen here: a lost quote), so it runs without injected failures too; issue 30 notes
 * it as a finding of its own. */
const char *json_object_to_json_string_ext(json_object *obj, int flags)
{
	static const char *(*real)(json_object *, int);
	if (real == NULL)
		*(void **)&real = dlsym(RTLD_NEXT, "json_object_to_json_string_ext");
	long saved = fail_at;
	fail_at = -1;
	const char *t = real(obj, flags);
	fail_at = saved;
	return t;
}

const char *json_object_to_json_string_length(json_object *obj, int flags, size_t *len)
{
	static const char *(*real)(json_object *, int, size_t *);
	if (real == NULL)
		*(void **)&real = dlsym(RTLD_NEXT, "json_object_to_json_string_length");
	long saved = fail_at;
	fail_at = -1;
	const char *t = real(obj, flags, len);
	fail_at = saved;
	return t;
}

/* SQLite allocates on its own, through glibc directly, so that a failure injected here
 * is json-c's or the project's, never the store's. */
static void *sq_malloc(int n)
{
	size_t *p = __libc_malloc(sizeof(size_t) + (size_t)n);
	if (p == NULL)
		return NULL;
	*p = (size_t)n;
	return p + 1;
}
static void sq_free(void *p)
{
	if (p != NULL)
		__libc_free((size_t *)p - 1);
}
static void *sq_realloc(void *p, int n)
{
	size_t *q = __libc_realloc(p != NULL ? (size_t *)p - 1 : NULL, sizeof(size_t) + (size_t)n);
	if (q == NULL)
		return NULL;
	*q = (size_t)n;
	return q + 1;
}
static int sq_size(void *p)
{
	return p != NULL ? (int)((size_t *)p)[-1] : 0;
}
static int sq_roundup(int n)
{
	return (n + 7) & ~7;
}
static int sq_init(void *a)
{
	(void)a;
	return SQLITE_OK;
}
static void sq_shutdown(void *a)
{
	(void)a;
}

struct announce_arg {
	const struct th_task_row *row;
};

static th_err announce(struct th_store *st, void *arg, struct th_error *e)
{
	struct announce_arg *a = arg;
	json_object *payload = json_object_new_object();
	if (payload == NULL)
		return th_error_set(e, TH_ENOMEM, "out of memory");
	/* decision-026: the announcement owns payload from here, also when it fails. */
	return th_status_announce(st, a->row, "note", payload, e);
}

/* OOM-1: for every n, failing the n-th allocation of an announcement either fails the
 * write with no event stored (TH_ENOMEM, or the store's refusal of what it was given),
 * or stores one status event that carries the announcement's message. */
START_TEST(test_oom1_announcement_is_whole_or_not_stored)
{
	struct th_app app;
	struct th_error e;
	th_error_clear(&e);
	fx_open(&app, NULL);
	json_object *t = fx_send_text(&app, "alice", NULL, "m1", "hello", &e);
	ck_assert_msg(t != NULL, "%s", e.msg);
	char id[128];
	snprintf(id, sizeof id, "%s", fx_task_id(t));
	json_object_put(t);
	struct th_task_row row;
	ck_assert_int_eq(th_store_task_get(app.store, id, &row, &e), TH_OK);
	int failed = 0;
	for (long n = 1; n < 10000; n++) {
		long before = fx_count(&app, "events");
		struct announce_arg a = {.row = &row};
		th_error_clear(&e);
		made = 0;
		fail_at = n;
		th_err rc = th_store_write(app.store, announce, &a, &e);
		int hit = made >= n;
		fail_at = -1;
		long after = fx_count(&app, "events");
		if (rc != TH_OK) {
			ck_assert_msg(after == before, "n=%ld: stored after %s", n, e.msg);
			failed++;
			continue;
		}
		ck_assert_int_eq(after, before + 1);
		sqlite3_stmt *s = NULL;
		ck_assert_int_eq(
		    sqlite3_prepare_v2(th_store_db(app.store),
		                       "SELECT json FROM event_rows ORDER BY rowid DESC LIMIT 1",
		                       -1, &s, NULL),
		    SQLITE_OK);
		ck_assert_int_eq(sqlite3_step(s), SQLITE_ROW);
		const char *json = (const char *)sqlite3_column_text(s, 0);
		ck_assert_msg(strstr(json, "\"message\"") != NULL &&
		                  strstr(json, "\"note\"") != NULL,
		              "n=%ld: an announcement without its message: %s", n, json);
		sqlite3_finalize(s);
		if (!hit)
			break; /* every allocation of the write has now failed once */
	}
	ck_assert_int_gt(failed, 3);
	th_task_row_free(&row);
	fx_close(&app);
}
END_TEST

#endif /* __SANITIZE_ADDRESS__ */

int main(void)
{
#ifdef __SANITIZE_ADDRESS__
	puts("check_oom: skipped under AddressSanitizer, which owns malloc");
	return 77;
#else
	if (getenv("TH_UNDER_VALGRIND") != NULL) {
		/* valgrind's own malloc and this program's would free each other's blocks. */
		puts("check_oom: skipped under valgrind, which replaces malloc");
		return EXIT_SUCCESS;
	}
	static const sqlite3_mem_methods mem = {sq_malloc,  sq_free, sq_realloc,  sq_size,
	                                        sq_roundup, sq_init, sq_shutdown, NULL};
	if (sqlite3_config(SQLITE_CONFIG_MALLOC, &mem) != SQLITE_OK)
		return EXIT_FAILURE;
	Suite *s = suite_create("oom");
	TCase *tc = tcase_create("oom");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_oom1_announcement_is_whole_or_not_stored);
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
#endif
}
