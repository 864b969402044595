/* SPDX-License-Identifier: Apache-2.0 */
/* tests/cgi/prep.c — built by cgi.sh into a preloaded library (PKG-4, decision-062): it
 * appends to the file $TH_PREP_LOG the SQL of each call the program makes to
 * sqlite3_prepare_v2, sqlite3_prepare_v3 and sqlite3_exec (the first 200 bytes, one a
 * line), so that a test can count what a CGI request prepares. Calls SQLite makes inside
 * them (reading the schema) are not logged, whichever way the library was linked. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
static __thread int depth;
static void note(const char *sql, int n)
{
	const char *path = getenv("TH_PREP_LOG");
	FILE *f = path != NULL && depth == 1 ? fopen(path, "a") : NULL;
	if (f == NULL)
		return;
	int len = n < 0 ? 200 : n < 200 ? n : 200;
	for (int i = 0; i < len && sql[i] != '\0'; i++)
		fputc(sql[i] == '\n' ? ' ' : sql[i], f);
	fputc('\n', f);
	fclose(f);
}
typedef int (*p2_t)(void *, const char *, int, void **, const char **);
typedef int (*p3_t)(void *, const char *, int, unsigned, void **, const char **);
typedef int (*ex_t)(void *, const char *, void *, void *, char **);
int sqlite3_prepare_v2(void *db, const char *sql, int n, void **st, const char **tail)
{
	p2_t f = (p2_t)dlsym(RTLD_NEXT, "sqlite3_prepare_v2");
	depth++;
	note(sql, n);
	int rc = f(db, sql, n, st, tail);
	depth--;
	return rc;
}
int sqlite3_prepare_v3(void *db, const char *sql, int n, unsigned fl, void **st, const char **tail)
{
	p3_t f = (p3_t)dlsym(RTLD_NEXT, "sqlite3_prepare_v3");
	depth++;
	note(sql, n);
	int rc = f(db, sql, n, fl, st, tail);
	depth--;
	return rc;
}
int sqlite3_exec(void *db, const char *sql, void *cb, void *arg, char **err)
{
	ex_t f = (ex_t)dlsym(RTLD_NEXT, "sqlite3_exec");
	depth++;
	note(sql, -1);
	int rc = f(db, sql, cb, arg, err);
	depth--;
	return rc;
}
