/* SPDX-License-Identifier: Apache-2.0 */
/* text.c — see text.h. */
#include "util/text.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

int th_hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

int th_hexval_lower(int c)
{
	return c >= 'A' && c <= 'F' ? -1 : th_hexval(c);
}

char *th_trim(char *s)
{
	while (isspace((unsigned char)*s))
		s++;
	char *end = s + strlen(s);
	while (end > s && isspace((unsigned char)end[-1]))
		*--end = '\0';
	return s;
}

int th_split_pair(char *line, char sep, char **key, char **value)
{
	char *at = strchr(line, sep);
	if (at == NULL)
		return -1;
	*at = '\0';
	*key = th_trim(line);
	*value = th_trim(at + 1);
	return 0;
}

/* The units of an age, largest first (th_parse_age, th_age_text). */
static const struct {
	char unit;
	int64_t ms;
} age_units[] = {{'d', 86400000LL}, {'h', 3600000LL}, {'m', 60000LL}, {'s', 1000LL}};
#define N_AGE_UNITS (sizeof age_units / sizeof age_units[0])

int th_parse_age(const char *s, int64_t *ms)
{
	*ms = 0;
	int64_t v = 0;
	const char *p = s;
	if (!isdigit((unsigned char)*p))
		return -1;
	/* 100 years in seconds has 10 digits; the bound keeps the product in range. */
	for (; isdigit((unsigned char)*p); p++) {
		v = v * 10 + (*p - '0');
		if (v > 3153600000LL)
			return -1;
	}
	size_t u = 0;
	while (u < N_AGE_UNITS && age_units[u].unit != *p)
		u++;
	if (u == N_AGE_UNITS || p[1] != '\0' || v * age_units[u].ms > 3153600000000LL)
		return -1;
	*ms = v * age_units[u].ms;
	return 0;
}

void th_age_text(int64_t ms, char *out, size_t size)
{
	for (size_t u = 0; u < N_AGE_UNITS; u++)
		if (ms > 0 && ms % age_units[u].ms == 0) {
			snprintf(out, size, "%lld%c", (long long)(ms / age_units[u].ms),
			         age_units[u].unit);
			return;
		}
	if (ms == 0)
		snprintf(out, size, "0s");
	else
		snprintf(out, size, "%lldms", (long long)ms);
}

int th_is_pg_uri(const char *s)
{
	return s != NULL &&
	       (strncmp(s, "postgresql://", 13) == 0 || strncmp(s, "postgres://", 11) == 0);
}
