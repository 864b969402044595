/* SPDX-License-Identifier: Apache-2.0 */
/* stderr_fixture.h — what th_log wrote while a test ran: stderr sent to a file and read
 * back, and a count of a phrase in it. Only tests include it; each function fails the
 * test (Check's assertions) when the capture cannot be made. */
#ifndef TH_TESTS_STDERR_FIXTURE_H
#define TH_TESTS_STDERR_FIXTURE_H

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Sends this process's stderr to a new file named by tmpl (a mkstemp template, rewritten);
 * returns the old stderr for th_test_stderr_back. */
static inline int th_test_stderr_to(char *tmpl)
{
	int fd = mkstemp(tmpl);
	ck_assert_int_ge(fd, 0);
	fflush(stderr);
	int saved = dup(2);
	ck_assert_int_ge(saved, 0);
	ck_assert_int_eq(dup2(fd, 2), 2);
	close(fd);
	return saved;
}

/* Puts stderr back and returns what was written to it meanwhile (up to 64 KiB; free),
 * also echoed to the test's own stderr; removes the file. */
static inline char *th_test_stderr_back(int saved, const char *path)
{
	fflush(stderr);
	ck_assert_int_eq(dup2(saved, 2), 2);
	close(saved);
	FILE *f = fopen(path, "r");
	ck_assert_ptr_nonnull(f);
	char *text = calloc(1, 65536);
	ck_assert_ptr_nonnull(text);
	size_t n = fread(text, 1, 65535, f);
	text[n] = '\0';
	fclose(f);
	unlink(path);
	fputs(text, stderr);
	return text;
}

/* How many times needle occurs in text. */
static inline int th_test_count(const char *text, const char *needle)
{
	int n = 0;
	for (const char *p = strstr(text, needle); p != NULL; p = strstr(p + 1, needle))
		n++;
	return n;
}

#endif
