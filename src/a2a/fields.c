/* SPDX-License-Identifier: Apache-2.0 */
/* fields.c — typed field access for the decoders, with errors naming the field. */
#include "a2a/a2a_int.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util/jsonx.h"

/* LIM-4: ProtoJSON takes a field by its camelCase or its snake_case name. An object
 * that gives both spellings of one field gives two values for it, and which one is
 * read would be an accident of the decoder: refused, naming both. */
th_err th_a2a_one_spelling(json_object *obj, const char *path, struct th_error *e)
{
	if (obj == NULL || !json_object_is_type(obj, json_type_object))
		return TH_OK;
	json_object_object_foreach(obj, key, val)
	{
		(void)val;
		if (strchr(key, '_') == NULL)
			continue;
		char camel[128];
		size_t n = 0;
		int up = 0;
		for (const char *k = key; *k != '\0' && n + 1 < sizeof camel; k++) {
			if (*k == '_') {
				up = 1;
				continue;
			}
			camel[n++] = up && *k >= 'a' && *k <= 'z' ? (char)(*k - 'a' + 'A') : *k;
			up = 0;
		}
		camel[n] = '\0';
		if (strcmp(camel, key) != 0 && json_object_object_get_ex(obj, camel, NULL))
			return th_error_set(e, TH_EINVAL,
			                    "%s%.100s and %s%.100s are one field; send it once",
			                    path, camel, path, key);
	}
	return TH_OK;
}

th_err th_a2a_get_str(json_object *obj, const char *camel, const char *snake, const char *prefix,
                      size_t max, int drop_empty, const char **out, struct th_error *e)
{
	*out = NULL;
	json_object *v = th_json_get2(obj, camel, snake);
	if (v == NULL)
		return TH_OK;
	if (!json_object_is_type(v, json_type_string))
		return th_error_set(e, TH_EINVAL, "%s%s must be a string", prefix, camel);
	size_t len = (size_t)json_object_get_string_len(v);
	if (max > 0 && len > max)
		return th_error_set(e, TH_EINVAL, "%s%s is %zu bytes; the limit is %zu", prefix,
		                    camel, len, max);
	/* LIM-4: every caller reads these as C strings; a NUL would cut them short and let
	 * "real-id\u0000junk" address "real-id". */
	if (memchr(json_object_get_string(v), '\0', len) != NULL)
		return th_error_set(e, TH_EINVAL, "%s%s contains a NUL character (\\u0000)", prefix,
		                    camel);
	if (drop_empty && len == 0)
		return TH_OK;
	*out = json_object_get_string(v);
	return TH_OK;
}

/* Decimal text to int64, clamping overflow; returns -1 unless the whole text is an
 * optionally signed run of digits. */
static int parse_decimal(const char *s, int64_t *out)
{
	const char *p = s;
	if (*p == '-' || *p == '+')
		p++;
	if (*p == '\0')
		return -1;
	for (const char *q = p; *q != '\0'; q++)
		if (*q < '0' || *q > '9')
			return -1;
	errno = 0;
	long long v = strtoll(s, NULL, 10);
	/* strtoll already clamps to LLONG_MIN/MAX on ERANGE, which is what we want. */
	*out = (int64_t)v;
	return 0;
}

th_err th_a2a_get_int(json_object *obj, const char *camel, const char *snake, const char *prefix,
                      int *present, int64_t *out, struct th_error *e)
{
	*present = 0;
	*out = 0;
	json_object *v = th_json_get2(obj, camel, snake);
	if (v == NULL)
		return TH_OK;
	switch (json_object_get_type(v)) {
	case json_type_int:
		*out = json_object_get_int64(v);
		break;
	case json_type_double: {
		double d = json_object_get_double(v);
		if (!isfinite(d) || floor(d) != d)
			return th_error_set(e, TH_EINVAL, "%s%s must be an integer", prefix, camel);
		if (d >= 9.2e18)
			*out = INT64_MAX;
		else if (d <= -9.2e18)
			*out = INT64_MIN;
		else
			*out = (int64_t)d;
		break;
	}
	case json_type_string:
		if (parse_decimal(json_object_get_string(v), out) != 0)
			return th_error_set(e, TH_EINVAL, "%s%s must be an integer", prefix, camel);
		break;
	default:
		return th_error_set(e, TH_EINVAL, "%s%s must be an integer", prefix, camel);
	}
	*present = 1;
	return TH_OK;
}

th_err th_a2a_get_bool(json_object *obj, const char *camel, const char *snake, const char *prefix,
                       int *present, int *out, struct th_error *e)
{
	*present = 0;
	*out = 0;
	json_object *v = th_json_get2(obj, camel, snake);
	if (v == NULL)
		return TH_OK;
	if (json_object_is_type(v, json_type_boolean)) {
		*out = json_object_get_boolean(v) ? 1 : 0;
	} else if (json_object_is_type(v, json_type_string) &&
	           strcmp(json_object_get_string(v), "true") == 0) {
		*out = 1;
	} else if (json_object_is_type(v, json_type_string) &&
	           strcmp(json_object_get_string(v), "false") == 0) {
		*out = 0;
	} else {
		return th_error_set(e, TH_EINVAL, "%s%s must be a boolean", prefix, camel);
	}
	*present = 1;
	return TH_OK;
}

th_err th_a2a_get_obj(json_object *obj, const char *camel, const char *snake, const char *prefix,
                      size_t max, json_object **out, struct th_error *e)
{
	*out = NULL;
	json_object *v = th_json_get2(obj, camel, snake);
	if (v == NULL)
		return TH_OK;
	if (!json_object_is_type(v, json_type_object))
		return th_error_set(e, TH_EINVAL, "%s%s must be an object", prefix, camel);
	if (max > 0) {
		size_t n = 0;
		if (json_object_to_json_string_length(
		        v, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE, &n) == NULL)
			return th_error_set(e, TH_ENOMEM, "out of memory serialising %s%s", prefix,
			                    camel);
		if (n > max)
			return th_error_set(e, TH_EINVAL,
			                    "%s%s is %zu bytes serialised; the limit is %zu",
			                    prefix, camel, n, max);
	}
	*out = v;
	return TH_OK;
}

th_err th_a2a_get_history_length(json_object *obj, const char *prefix, int *out, struct th_error *e)
{
	int present;
	int64_t v;
	*out = -1;
	th_err rc = th_a2a_get_int(obj, "historyLength", "history_length", prefix, &present, &v, e);
	if (rc != TH_OK || !present)
		return rc;
	if (v < 0)
		return th_error_set(e, TH_EINVAL, "%shistoryLength must not be negative (got %lld)",
		                    prefix, (long long)v);
	if (v > INT32_MAX)
		return th_error_set(e, TH_EINVAL, "%shistoryLength must be at most %d", prefix,
		                    INT32_MAX);
	*out = (int)v;
	return TH_OK;
}

static int b64_class(char c)
{
	if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'))
		return 0;
	if (c == '+' || c == '/')
		return 1;
	if (c == '-' || c == '_')
		return 2;
	return -1;
}

int th_a2a_base64_valid(const char *s, size_t len)
{
	if (s == NULL)
		return 0;
	size_t pad = 0;
	while (pad < 2 && len > pad && s[len - 1 - pad] == '=')
		pad++;
	size_t body = len - pad;
	/* Padding only ever completes a 4-character group. */
	if (pad > 0 && len % 4 != 0)
		return 0;
	if (body % 4 == 1)
		return 0;
	int alphabet = 0; /* 0 unknown yet, 1 standard, 2 URL-safe: never both in one value */
	for (size_t i = 0; i < body; i++) {
		int c = b64_class(s[i]);
		if (c < 0)
			return 0;
		if (c > 0) {
			if (alphabet != 0 && alphabet != c)
				return 0;
			alphabet = c;
		}
	}
	return 1;
}

char *th_a2a_base64_canon(const char *s, size_t len)
{
	while (len > 0 && s[len - 1] == '=')
		len--;
	size_t padded = (len + 3) / 4 * 4;
	char *out = malloc(padded + 1);
	if (out == NULL)
		return NULL;
	for (size_t i = 0; i < len; i++)
		out[i] = s[i] == '-' ? '+' : s[i] == '_' ? '/' : s[i];
	for (size_t i = len; i < padded; i++)
		out[i] = '=';
	out[padded] = '\0';
	return out;
}
