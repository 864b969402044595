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
