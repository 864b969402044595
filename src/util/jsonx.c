/* SPDX-License-Identifier: Apache-2.0 */
#include "util/jsonx.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/printbuf.h>

/* json-c's strict mode still takes single-quoted names, NaN and Infinity, none of which
 * is JSON (RFC 8259). Outside strings, JSON has only punctuation, numbers, white space
 * and the words true, false and null: returns the offset of the first other byte, or
 * len when there is none. */
static size_t not_json_at(const char *s, size_t len)
{
	int in_string = 0;
	for (size_t i = 0; i < len; i++) {
		char c = s[i];
		if (in_string) {
			if (c == '\\')
				i++;
			else if (c == '"')
				in_string = 0;
			continue;
		}
		if (c == '"') {
			in_string = 1;
		} else if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) {
			size_t j = i;
			while (j < len &&
			       ((s[j] >= 'a' && s[j] <= 'z') || (s[j] >= 'A' && s[j] <= 'Z')))
				j++;
			size_t n = j - i;
			int word = (n == 4 && (memcmp(s + i, "true", 4) == 0 ||
			                       memcmp(s + i, "null", 4) == 0)) ||
			           (n == 5 && memcmp(s + i, "false", 5) == 0) ||
			           (n == 1 && (c == 'e' || c == 'E'));
			if (!word)
				return i;
			i = j - 1;
		} else if (c == '\'') {
			return i;
		}
	}
	return len;
}

/* LIM-4: the offset of the first byte that does not start well-formed UTF-8 (RFC 3629:
 * no overlong forms, no encoded surrogates, nothing above U+10FFFF), or len. json-c's
 * own check lets overlong forms and encoded surrogates through. */
size_t th_utf8_bad_at(const unsigned char *s, size_t len)
{
	for (size_t i = 0; i < len;) {
		unsigned c = s[i];
		size_t n;
		unsigned lo = 0x80, hi = 0xBF; /* the allowed range of the second byte */
		if (c < 0x80) {
			i++;
			continue;
		} else if (c >= 0xC2 && c <= 0xDF) {
			n = 2;
		} else if (c >= 0xE0 && c <= 0xEF) {
			n = 3;
			if (c == 0xE0)
				lo = 0xA0; /* overlong below U+0800 */
			if (c == 0xED)
				hi = 0x9F; /* U+D800..U+DFFF, the surrogates */
		} else if (c >= 0xF0 && c <= 0xF4) {
			n = 4;
			if (c == 0xF0)
				lo = 0x90; /* overlong below U+10000 */
			if (c == 0xF4)
				hi = 0x8F; /* above U+10FFFF */
		} else {
			return i; /* C0, C1 (overlong), F5..FF, or a stray continuation byte */
		}
		if (i + n > len || s[i + 1] < lo || s[i + 1] > hi)
			return i;
		for (size_t k = 2; k < n; k++)
			if (s[i + k] < 0x80 || s[i + k] > 0xBF)
				return i;
		i += n;
	}
	return len;
}

static int hex4(const char *p, unsigned *v)
{
	*v = 0;
	for (int k = 0; k < 4; k++) {
		char c = p[k];
		unsigned d = c >= '0' && c <= '9'   ? (unsigned)(c - '0')
		             : c >= 'a' && c <= 'f' ? (unsigned)(c - 'a' + 10)
		             : c >= 'A' && c <= 'F' ? (unsigned)(c - 'A' + 10)
		                                    : 16u;
		if (d > 15)
			return 0;
		*v = *v << 4 | d;
	}
	return 1;
}

/* The offset of a \u escape of a UTF-16 surrogate that is not part of a pair (a high
 * one not followed by a low one, or a low one alone), or len. Escapes occur only
 * inside strings, and an escaped backslash is skipped with its partner. */
static size_t lone_surrogate_at(const char *s, size_t len)
{
	for (size_t i = 0; i + 1 < len; i++) {
		if (s[i] != '\\')
			continue;
		unsigned v, w;
		if (s[i + 1] != 'u' || i + 6 > len || !hex4(s + i + 2, &v)) {
			i++; /* \\, \", \n, ...: skip the escaped character */
			continue;
		}
		if (v >= 0xDC00 && v <= 0xDFFF)
			return i;
		if (v >= 0xD800 && v <= 0xDBFF) {
			if (i + 12 > len || s[i + 6] != '\\' || s[i + 7] != 'u' ||
			    !hex4(s + i + 8, &w) || w < 0xDC00 || w > 0xDFFF)
				return i;
			i += 6; /* the pair's low half is fine */
		}
		i += 5;
	}
	return len;
}

/* LIM-4: duplicate names. json-c keeps the last value of a repeated name, so a proxy
 * or an audit log that keeps the first would see another request than the one run.
 * The text is valid JSON by now: every ':' outside strings separates one member of
 * the innermost object. member_counts lists, for each object in the order its '{'
 * appears, how many members the text gives it (*n entries, a new array the caller
 * frees; NULL on allocation failure). */
static int *member_counts(const char *s, size_t len, size_t *n)
{
	size_t cap = 16, depth_cap = 16, depth = 0;
	int *counts = malloc(cap * sizeof *counts);
	long *open = malloc(depth_cap * sizeof *open); /* object index, or -1 for an array */
	*n = 0;
	if (counts == NULL || open == NULL)
		goto fail;
	for (size_t i = 0; i < len; i++) {
		char c = s[i];
		if (c == '"') {
			for (i++; i < len && s[i] != '"'; i++)
				if (s[i] == '\\')
					i++;
		} else if (c == '{' || c == '[') {
			if (depth == depth_cap) {
				long *o = realloc(open, 2 * depth_cap * sizeof *open);
				if (o == NULL)
					goto fail;
				open = o;
				depth_cap *= 2;
			}
			if (c == '[') {
				open[depth++] = -1;
				continue;
			}
			if (*n == cap) {
				int *k = realloc(counts, 2 * cap * sizeof *counts);
				if (k == NULL)
					goto fail;
				counts = k;
				cap *= 2;
			}
			counts[*n] = 0;
			open[depth++] = (long)(*n)++;
		} else if (c == '}' || c == ']') {
			if (depth > 0)
				depth--;
		} else if (c == ':' && depth > 0 && open[depth - 1] >= 0) {
			counts[open[depth - 1]]++;
		}
	}
	free(open);
	return counts;
fail:
	free(open);
	free(counts);
	return NULL;
}

/* Walks v in the order its text was written (json-c keeps members in the order of
 * their first appearance) and returns the first object whose text gave it more
 * members than it has: a name appeared twice there. */
static json_object *first_short_object(json_object *v, const int *counts, size_t n, size_t *next)
{
	if (json_object_is_type(v, json_type_array)) {
		size_t len = json_object_array_length(v);
		for (size_t i = 0; i < len; i++) {
			json_object *hit =
			    first_short_object(json_object_array_get_idx(v, i), counts, n, next);
			if (hit != NULL)
				return hit;
		}
		return NULL;
	}
	if (!json_object_is_type(v, json_type_object))
		return NULL;
	if (*next >= n || counts[*next] != json_object_object_length(v))
		return v;
	(*next)++;
	json_object_object_foreach(v, key, child)
	{
		(void)key;
		json_object *hit = first_short_object(child, counts, n, next);
		if (hit != NULL)
			return hit;
	}
	return NULL;
}

/* The JSON string token s[0..n) decoded (a new string object), or NULL. */
static json_object *decode_name(const char *s, size_t n)
{
	json_tokener *tok = json_tokener_new();
	json_object *v =
	    tok != NULL && n <= INT32_MAX ? json_tokener_parse_ex(tok, s, (int)n) : NULL;
	json_tokener_free(tok);
	return v;
}

/* The text of the object that first_short_object found is the (*next)th '{': finds
 * it again and returns the first member name that repeats an earlier one (decoded, so
 * "a" and "\u0061" are one name), written into out. 0 when none was found. */
static int repeated_name(const char *s, size_t len, size_t index, char *out, size_t outsz)
{
	size_t seen = 0, i = 0;
	for (; i < len; i++) {
		if (s[i] == '"') {
			for (i++; i < len && s[i] != '"'; i++)
				if (s[i] == '\\')
					i++;
		} else if (s[i] == '{' && seen++ == index) {
			break;
		}
	}
	json_object *names = json_object_new_object();
	int depth = 0, found = 0;
	for (i++; names != NULL && i < len && depth >= 0 && !found; i++) {
		char c = s[i];
		if (c == '"') {
			size_t start = i;
			for (i++; i < len && s[i] != '"'; i++)
				if (s[i] == '\\')
					i++;
			size_t j = i + 1;
			while (j < len &&
			       (s[j] == ' ' || s[j] == '\t' || s[j] == '\r' || s[j] == '\n'))
				j++;
			if (depth != 0 || j >= len || s[j] != ':')
				continue;
			json_object *name = decode_name(s + start, i + 1 - start);
			const char *t = name != NULL ? json_object_get_string(name) : NULL;
			if (t != NULL && json_object_object_get_ex(names, t, NULL)) {
				snprintf(out, outsz, "%s", t);
				found = 1;
			} else if (t != NULL) {
				json_object_object_add(names, t, NULL);
			}
			json_object_put(name);
		} else if (c == '{' || c == '[') {
			depth++;
		} else if (c == '}' || c == ']') {
			depth--;
		}
	}
	json_object_put(names);
	return found;
}

static th_err no_repeated_names(const char *s, size_t len, json_object *v, struct th_error *e)
{
	size_t n = 0, next = 0;
	int *counts = member_counts(s, len, &n);
	if (counts == NULL)
		return th_error_set(e, TH_ENOMEM, "out of memory");
	json_object *hit = first_short_object(v, counts, n, &next);
	free(counts);
	if (hit == NULL)
		return TH_OK;
	char name[128];
	if (!repeated_name(s, len, next, name, sizeof name))
		snprintf(name, sizeof name, "?");
	return th_error_set(e, TH_EPARSE,
	                    "Invalid JSON payload: the name \"%.100s\" appears twice in one "
	                    "object",
	                    name);
}

th_err th_json_parse(const char *s, size_t len, int depth, json_object **out, struct th_error *e)
{
	*out = NULL;
	size_t bad = not_json_at(s, len);
	if (bad < len)
		return th_error_set(
		    e, TH_EPARSE, "Invalid JSON payload: unexpected character at offset %zu", bad);
	if ((bad = th_utf8_bad_at((const unsigned char *)s, len)) < len)
		return th_error_set(e, TH_EPARSE,
		                    "Invalid JSON payload: invalid UTF-8 at offset %zu", bad);
	if ((bad = lone_surrogate_at(s, len)) < len)
		return th_error_set(e, TH_EPARSE,
		                    "Invalid JSON payload: an unpaired UTF-16 surrogate escape at "
		                    "offset %zu",
		                    bad);
	json_tokener *tok = json_tokener_new_ex(depth);
	if (tok == NULL)
		return th_error_set(e, TH_ENOMEM, "out of memory");
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
	if (len > (size_t)INT32_MAX - 1) {
		json_tokener_free(tok);
		return th_error_set(e, TH_EPARSE, "Invalid JSON payload: body too large to parse");
	}
	json_object *v = json_tokener_parse_ex(tok, s, (int)len);
	enum json_tokener_error jerr = json_tokener_get_error(tok);
	size_t end = json_tokener_get_parse_end(tok);
	if (v == NULL && jerr == json_tokener_continue && end == len) {
		/* A bare number, true, false or null at the very end is only complete
		 * once the tokener sees the end of input: a NUL says so. */
		v = json_tokener_parse_ex(tok, "", 1);
		jerr = json_tokener_get_error(tok);
		end = len;
		if (jerr != json_tokener_success)
			jerr = json_tokener_continue; /* still incomplete: the input ended early */
	}
	th_err rc = TH_OK;
	if (jerr != json_tokener_success) {
		if (jerr == json_tokener_error_depth)
			rc = th_error_set(e, TH_EINVAL,
			                  "JSON nesting is deeper than the limit of %d levels",
			                  depth);
		else if (jerr == json_tokener_continue)
			rc = th_error_set(e, TH_EPARSE,
			                  "Invalid JSON payload: unexpected end of input");
		else
			rc = th_error_set(e, TH_EPARSE, "Invalid JSON payload: %s at offset %zu",
			                  json_tokener_error_desc(jerr), end);
	} else {
		for (size_t i = end; i < len; i++) {
			char c = s[i];
			if (c != ' ' && c != '\t' && c != '\r' && c != '\n') {
				rc = th_error_set(e, TH_EPARSE,
				                  "Invalid JSON payload: unexpected data after the "
				                  "value at offset %zu",
				                  i);
				break;
			}
		}
	}
	json_tokener_free(tok);
	if (rc == TH_OK)
		rc = no_repeated_names(s, len, v, e);
	if (rc != TH_OK) {
		json_object_put(v);
		return rc;
	}
	*out = v;
	return TH_OK;
}

const char *th_json_type_name(json_object *v)
{
	switch (json_object_get_type(v)) {
	case json_type_null:
		return "null";
	case json_type_boolean:
		return "a boolean";
	case json_type_double:
	case json_type_int:
		return "a number";
	case json_type_string:
		return "a string";
	case json_type_array:
		return "an array";
	case json_type_object:
		return "an object";
	}
	return "a value";
}

const char *th_json_str(json_object *obj, const char *key)
{
	json_object *v;
	if (obj == NULL || !json_object_object_get_ex(obj, key, &v) ||
	    !json_object_is_type(v, json_type_string))
		return NULL;
	return json_object_get_string(v);
}

json_object *th_json_get(json_object *obj, const char *key)
{
	return th_json_get2(obj, key, NULL);
}

json_object *th_json_get2(json_object *obj, const char *camel, const char *snake)
{
	json_object *v = NULL;
	if (obj == NULL || !json_object_is_type(obj, json_type_object))
		return NULL;
	if (json_object_object_get_ex(obj, camel, &v) && v != NULL)
		return v;
	if (snake != NULL && json_object_object_get_ex(obj, snake, &v) && v != NULL)
		return v;
	return NULL;
}

const char *th_json_text(json_object *v)
{
	return json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN |
	                                             JSON_C_TO_STRING_NOSLASHESCAPE);
}

int th_json_put(json_object *obj, const char *key, json_object *v)
{
	if (obj == NULL || v == NULL || json_object_object_add(obj, key, v) != 0) {
		json_object_put(v);
		return -1;
	}
	return 0;
}

int th_json_put_null(json_object *obj, const char *key, json_object *v)
{
	if (obj == NULL || json_object_object_add(obj, key, v) != 0) {
		json_object_put(v);
		return -1;
	}
	return 0;
}

int th_json_push(json_object *arr, json_object *v)
{
	if (arr == NULL || v == NULL || json_object_array_add(arr, v) != 0) {
		json_object_put(v);
		return -1;
	}
	return 0;
}

size_t th_json_size(json_object *v)
{
	size_t n = 0;
	json_object_to_json_string_length(
	    v, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE, &n);
	return n;
}

const char *th_json_unknown_key(json_object *obj, const char *const *allowed)
{
	if (obj == NULL || !json_object_is_type(obj, json_type_object))
		return NULL;
	json_object_object_foreach(obj, key, val)
	{
		(void)val;
		size_t i = 0;
		while (allowed[i] != NULL && strcmp(allowed[i], key) != 0)
			i++;
		if (allowed[i] == NULL)
			return key;
	}
	return NULL;
}

static int raw_text(json_object *v, struct printbuf *pb, int level, int flags)
{
	(void)level;
	(void)flags;
	return printbuf_memappend(pb, json_object_get_string(v), json_object_get_string_len(v)) < 0
	           ? -1
	           : 0;
}

json_object *th_json_raw(const char *text)
{
	json_object *v = json_object_new_string(text);
	if (v != NULL)
		json_object_set_serializer(v, raw_text, NULL, NULL);
	return v;
}
