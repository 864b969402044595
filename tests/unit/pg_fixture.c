/* SPDX-License-Identifier: Apache-2.0 */
/* pg_fixture.c — see pg_fixture.h. */
#include "pg_fixture.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

const char *th_test_pg_base(void)
{
	const char *b = getenv("TH_TEST_PG");
	return b != NULL && b[0] != '\0' ? b : NULL;
}

int th_test_psql(const char *dir, const char *db, const char *sql, char *out, size_t outsz)
{
	char file[300], cmd[900];
	snprintf(file, sizeof file, "%s/q.sql", dir);
	FILE *f = fopen(file, "w");
	ck_assert_ptr_nonnull(f);
	/* out is the results, or the error: the server's notices and warnings (a session
	 * that ended before pg_terminate_backend reached it, CI at 684a554) would stand in
	 * front of a count that a caller reads as a number. */
	fputs("SET client_min_messages = error;\n", f);
	fputs(sql, f);
	fclose(f);
	snprintf(cmd, sizeof cmd, "psql -X -q -At -v ON_ERROR_STOP=1 -d '%s%s' -f '%s' 2>&1",
	         th_test_pg_base(), db, file);
	FILE *p = popen(cmd, "r");
	ck_assert_ptr_nonnull(p);
	size_t n = 0;
	char buf[512];
	size_t got;
	while ((got = fread(buf, 1, sizeof buf, p)) > 0)
		for (size_t i = 0; i < got; i++)
			if (out != NULL && n + 1 < outsz)
				out[n++] = buf[i];
	if (out != NULL) {
		while (n > 0 && out[n - 1] == '\n')
			n--;
		out[n] = '\0';
	}
	return pclose(p);
}

void th_test_pg_create(const char *dir, char *name, size_t namesz, char *uri, size_t urisz)
{
	static int n;
	snprintf(name, namesz, "th_unit_%d_%d", (int)getpid(), n++);
	char sql[160], out[512];
	snprintf(sql, sizeof sql, "DROP DATABASE IF EXISTS %s; CREATE DATABASE %s", name, name);
	ck_assert_msg(th_test_psql(dir, "postgres", sql, out, sizeof out) == 0, "createdb: %s",
	              out);
	snprintf(uri, urisz, "%s%s", th_test_pg_base(), name);
}

void th_test_pg_drop(const char *dir, const char *name)
{
	char sql[128];
	snprintf(sql, sizeof sql, "DROP DATABASE IF EXISTS %s WITH (FORCE)", name);
	(void)th_test_psql(dir, "postgres", sql, NULL, 0);
}
