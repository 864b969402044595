/* SPDX-License-Identifier: Apache-2.0 */
/* pg_fixture.h — the store suites on PostgreSQL too (STORE-6): with TH_TEST_PG set to a
 * base URI of a throwaway cluster (postgresql://user@host:port/, tests/lib/pg.sh,
 * scripts/test.sh's second pass) each test gets a fresh database of its own. */
#ifndef TH_TESTS_PG_FIXTURE_H
#define TH_TESTS_PG_FIXTURE_H

#include <stddef.h>

/* TH_TEST_PG, or NULL: the suite runs on SQLite files. */
const char *th_test_pg_base(void);
/* Runs sql with psql on database db of that cluster (the SQL through a file in dir); its
 * rows ("a|b", one a line, trailing newlines cut) into out when out is not NULL.
 * psql's exit status. */
int th_test_psql(const char *dir, const char *db, const char *sql, char *out, size_t outsz);
/* A fresh database for the running test: its name (th_unit_<pid>_<n>) into name, its URI
 * into uri. Fails the test when it cannot be made. */
void th_test_pg_create(const char *dir, char *name, size_t namesz, char *uri, size_t urisz);
/* Drops it again (ending any session left on it). */
void th_test_pg_drop(const char *dir, const char *name);

#endif
