/* SPDX-License-Identifier: Apache-2.0 */
/* jcs.c — RFC 8785 canonical JSON (see jcs.h). */
#include "util/jcs.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/jsonx.h"

/* ------------------------------------------------------------------ numbers */

/* The shortest decimal that reads back as d: the fewest significant digits (1..17) whose
 * correctly rounded %e form converts to d again. digits gets them without point or sign
 * (no trailing zeros), *exp10 the exponent of the first digit. Returns the count. */
static int shortest_digits(double d, char digits[20], int *exp10)
{
	char tmp[40];
	for (int p = 1; p <= 17; p++) {
		snprintf(tmp, sizeof tmp, "%.*e", p - 1, d);
		if (strtod(tmp, NULL) == d || p == 17)
			break;
	}
	int k = 0;
	const char *s = tmp;
	if (*s == '-')
		s++;
	for (; *s != '\0' && *s != 'e' && *s != 'E'; s++)
		if (*s >= '0' && *s <= '9' && k < 19)
			digits[k++] = *s;
	*exp10 = *s != '\0' ? atoi(s + 1) : 0;
	while (k > 1 && digits[k - 1] == '0')
		k--;
	digits[k] = '\0';
	return k;
}

int th_jcs_number(double d, char *out, size_t cap)
{
	if (!isfinite(d))
		return -1;
	char digits[20], s[40];
	size_t len = 0;
	if (d == 0) { /* -0 too: ECMAScript writes both as "0" */
		s[len++] = '0';
	} else {
		int e10;
		int k = shortest_digits(d, digits, &e10);
		int n = e10 + 1; /* the value is 0.digits × 10^n */
		if (d < 0)
			s[len++] = '-';
		if (k <= n && n <= 21) { /* an integer: the digits, then zeros */
			for (int i = 0; i < n; i++)
				s[len++] = i < k ? digits[i] : '0';
		} else if (0 < n && n <= 21) { /* the point inside the digits */
			for (int i = 0; i < k; i++) {
				if (i == n)
					s[len++] = '.';
				s[len++] = digits[i];
			}
		} else if (-6 < n && n <= 0) { /* 0.000ddd */
			s[len++] = '0';
			s[len++] = '.';
			for (int i = 0; i < -n; i++)
				s[len++] = '0';
			for (int i = 0; i < k; i++)
				s[len++] = digits[i];
		} else { /* d[.ddd]e±x */
			s[len++] = digits[0];
			if (k > 1)
				s[len++] = '.';
			for (int i = 1; i < k; i++)
				s[len++] = digits[i];
			len += (size_t)snprintf(s + len, sizeof s - len, "e%c%d",
			                        n - 1 < 0 ? '-' : '+', abs(n - 1));
		}
	}
	if (len >= cap)
		return -1;
	memcpy(out, s, len);
	out[len] = '\0';
	return (int)len;
}

/* ------------------------------------------------------------------ strings */

/* The next UTF-16 code unit of a well-formed UTF-8 string at *p (NUL-terminated), with
 * *low holding the second half of a pair between calls; 0 at the end. */
static unsigned next_unit(const unsigned char **p, unsigned *low)
{
	if (*low != 0) {
		unsigned u = *low;
		*low = 0;
		return u;
	}
	const unsigned char *s = *p;
	unsigned cp;
	if (s[0] == 0)
		return 0;
	if (s[0] < 0x80) {
		cp = s[0];
		*p += 1;
	} else if (s[0] < 0xe0) {
		cp = (s[0] & 0x1fu) << 6 | (s[1] & 0x3fu);
		*p += 2;
	} else if (s[0] < 0xf0) {
		cp = (s[0] & 0x0fu) << 12 | (s[1] & 0x3fu) << 6 | (s[2] & 0x3fu);
		*p += 3;
	} else {
		cp = (s[0] & 0x07u) << 18 | (s[1] & 0x3fu) << 12 | (s[2] & 0x3fu) << 6 |
		     (s[3] & 0x3fu);
		*p += 4;
	}
	if (cp < 0x10000)
		return cp;
	cp -= 0x10000;
	*low = 0xdc00 + (cp & 0x3ffu);
	return 0xd800 + (cp >> 10);
}

int th_jcs_name_cmp(const char *a, const char *b)
{
	const unsigned char *pa = (const unsigned char *)a, *pb = (const unsigned char *)b;
	unsigned la = 0, lb = 0;
	for (;;) {
		unsigned ua = next_unit(&pa, &la), ub = next_unit(&pb, &lb);
		if (ua != ub)
			return ua < ub ? -1 : 1;
		if (ua == 0)
			return 0;
	}
}

/* JSON.stringify's QuoteJSONString: the short escapes, \u00xx (lower-case hex) for the
 * other control characters, everything else as it is. */
static th_err append_string(struct th_buf *out, const char *s, size_t n, const char *what,
                            struct th_error *e)
{
	if (th_utf8_bad_at((const unsigned char *)s, n) != n)
		return th_error_set(
		    e, TH_EINVAL, "canonical JSON: %s is not well-formed UTF-8 (RFC 8785 §3.2.2.2)",
		    what);
	th_buf_append(out, "\"", 1);
	size_t run = 0;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		const char *esc = NULL;
		char hex[8];
		switch (c) {
		case '\b':
			esc = "\\b";
			break;
		case '\t':
			esc = "\\t";
			break;
		case '\n':
			esc = "\\n";
			break;
		case '\f':
			esc = "\\f";
			break;
		case '\r':
			esc = "\\r";
			break;
		case '"':
			esc = "\\\"";
			break;
		case '\\':
			esc = "\\\\";
			break;
		default:
			if (c < 0x20) {
				snprintf(hex, sizeof hex, "\\u%04x", c);
				esc = hex;
			}
		}
		if (esc == NULL)
			continue;
		th_buf_append(out, s + run, i - run);
		th_buf_puts(out, esc);
		run = i + 1;
	}
	th_buf_append(out, s + run, n - run);
	th_buf_append(out, "\"", 1);
	return out->oom ? th_error_set(e, TH_ENOMEM, "out of memory") : TH_OK;
}

/* ------------------------------------------------------------------ values */

static int cmp_names(const void *a, const void *b)
{
	return th_jcs_name_cmp(*(const char *const *)a, *(const char *const *)b);
}

static th_err append_object(struct th_buf *out, json_object *v, struct th_error *e)
{
	size_t n = (size_t)json_object_object_length(v), i = 0;
	/* free (below) */
	const char **names = n > 0 ? malloc(n * sizeof *names) : NULL;
	if (n > 0 && names == NULL)
		return th_error_set(e, TH_ENOMEM, "out of memory");
	json_object_object_foreach(v, key, val)
	{
		(void)val;
		names[i++] = key;
	}
	for (i = 0; i < n; i++) {
		size_t len = strlen(names[i]);
		if (th_utf8_bad_at((const unsigned char *)names[i], len) != len) {
			free(names);
			return th_error_set(
			    e, TH_EINVAL,
			    "canonical JSON: a member name is not well-formed UTF-8 "
			    "(RFC 8785 §3.2.2.2)");
		}
	}
	if (n > 1) /* an empty object has no array to sort (qsort wants one) */
		qsort(names, n, sizeof *names, cmp_names);
	th_err rc = TH_OK;
	th_buf_append(out, "{", 1);
	for (i = 0; i < n && rc == TH_OK; i++) {
		if (i > 0)
			th_buf_append(out, ",", 1);
		rc = append_string(out, names[i], strlen(names[i]), "a member name", e);
		th_buf_append(out, ":", 1);
		if (rc == TH_OK)
			rc = th_jcs_append(out, json_object_object_get(v, names[i]), e);
	}
	th_buf_append(out, "}", 1);
	free(names);
	return rc;
}

th_err th_jcs_append(struct th_buf *out, json_object *v, struct th_error *e)
{
	th_err rc = TH_OK;
	char num[32];
	switch (json_object_get_type(v)) {
	case json_type_null:
		th_buf_puts(out, "null");
		break;
	case json_type_boolean:
		th_buf_puts(out, json_object_get_boolean(v) ? "true" : "false");
		break;
	case json_type_int:
	case json_type_double:
		if (th_jcs_number(json_object_get_double(v), num, sizeof num) < 0)
			return th_error_set(e, TH_EINVAL,
			                    "canonical JSON: a number is not finite (RFC 8785 "
			                    "§3.2.2.3)");
		th_buf_puts(out, num);
		break;
	case json_type_string:
		rc = append_string(out, json_object_get_string(v),
		                   (size_t)json_object_get_string_len(v), "a string", e);
		break;
	case json_type_array:
		th_buf_append(out, "[", 1);
		for (size_t i = 0; i < json_object_array_length(v) && rc == TH_OK; i++) {
			if (i > 0)
				th_buf_append(out, ",", 1);
			rc = th_jcs_append(out, json_object_array_get_idx(v, i), e);
		}
		th_buf_append(out, "]", 1);
		break;
	case json_type_object:
		rc = append_object(out, v, e);
		break;
	}
	if (rc == TH_OK && out->oom)
		rc = th_error_set(e, TH_ENOMEM, "out of memory");
	return rc;
}

char *th_jcs_text(json_object *v, struct th_error *e)
{
	struct th_buf b;
	th_buf_init(&b);
	if (th_jcs_append(&b, v, e) != TH_OK) {
		th_buf_free(&b);
		return NULL;
	}
	return th_buf_take(&b);
}
