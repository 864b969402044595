/* SPDX-License-Identifier: Apache-2.0 */
/* text.c — see text.h. */
#include "util/text.h"

#include <ctype.h>
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
	int64_t unit;
	switch (*p) {
	case 'd':
		unit = 86400000LL;
		break;
	case 'h':
		unit = 3600000LL;
		break;
	case 'm':
		unit = 60000LL;
		break;
	case 's':
		unit = 1000LL;
		break;
	default:
		return -1;
	}
	if (p[1] != '\0' || v * unit > 3153600000000LL)
		return -1;
	*ms = v * unit;
	return 0;
}
