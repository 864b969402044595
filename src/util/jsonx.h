/* SPDX-License-Identifier: Apache-2.0 */
/* jsonx.h — small helpers over json-c used by every layer: strict parsing with a
 * depth limit, typed field access, and serialisation without escaped slashes. */
#ifndef TH_UTIL_JSONX_H
#define TH_UTIL_JSONX_H

#include <json-c/json.h>
#include <stddef.h>

#include "util/err.h"

/* Parses exactly len bytes of s as one JSON value (strict mode, UTF-8 checked,
 * nesting at most depth, nothing but white space after it). On success *out is a new
 * reference (caller puts it). On failure returns TH_EPARSE with a message that says
 * where parsing stopped, or TH_EINVAL naming the depth limit. */
th_err th_json_parse(const char *s, size_t len, int depth, json_object **out, struct th_error *e);

/* The offset of the first byte of s that does not start well-formed UTF-8 (RFC 3629:
 * no overlong forms, no encoded surrogates, nothing above U+10FFFF), or len. */
size_t th_utf8_bad_at(const unsigned char *s, size_t len);

/* What kind of JSON value v is, for error messages: "null", "a boolean", "a number",
 * "a string", "an array" or "an object". */
const char *th_json_type_name(json_object *v);

/* The string value of key in obj, or NULL when absent or not a string. Borrowed. */
const char *th_json_str(json_object *obj, const char *key);

/* The member key of obj. Borrowed; NULL when obj is not an object, or key is absent
 * or JSON null. */
json_object *th_json_get(json_object *obj, const char *key);

/* Looks key up by its camelCase name or, failing that, its snake_case name
 * (ProtoJSON accepts both on input). Borrowed; NULL when absent or JSON null. */
json_object *th_json_get2(json_object *obj, const char *camel, const char *snake);

/* The first key of obj that is not in allowed (a NULL-terminated list), or NULL when
 * every key is allowed (schemas with additionalProperties false). Borrowed. */
const char *th_json_unknown_key(json_object *obj, const char *const *allowed);

/* Serialises v compactly without escaping '/'. The string belongs to v. */
const char *th_json_text(json_object *v);

/* Adds v under key to obj and takes v whatever happens (decision-026): 0, or -1 when v is
 * NULL (an allocation that failed), obj is NULL or the add failed, v then freed. A builder
 * ORs the results and reports TH_ENOMEM once. */
int th_json_put(json_object *obj, const char *key, json_object *v);

/* th_json_put for a value that may be JSON null on purpose (v NULL): takes v whatever
 * happens; 0, or -1 when obj is NULL or the add failed. */
int th_json_put_null(json_object *obj, const char *key, json_object *v);

/* The same for an array: appends v to arr and takes v whatever happens; 0, or -1 when v
 * is NULL, arr is NULL or the append failed (v then freed). */
int th_json_push(json_object *arr, json_object *v);

/* A value that serialises as text verbatim: text must be one JSON value this program
 * wrote (th_json_text of it, as stored in the database). Its type is string, so it is
 * for views that are only serialised, never read: parsing a stored message to write it
 * out again unchanged was a third of a GetTask's view. New reference, or NULL when out
 * of memory. */
json_object *th_json_raw(const char *text);

/* Serialised size in bytes of v. */
size_t th_json_size(json_object *v);

#endif
