/* SPDX-License-Identifier: Apache-2.0 */
/* a2a_int.h — helpers shared by the a2a decoders; not part of the module's contract.
 *
 * Every getter looks a field up by its camelCase name, then its snake_case name, treats
 * JSON null as absent (ProtoJSON: null means "not set"), and on a wrong type fills e with
 * a message naming "<prefix><field>" so a client developer sees which field was wrong. */
#ifndef TH_A2A_A2A_INT_H
#define TH_A2A_A2A_INT_H

#include <json-c/json.h>
#include <stdint.h>

#include "util/err.h"

/* Fixed cap for ids that arrive without a th_limits (GetTask/CancelTask id). */

/* Longest field path written into an error message. */
#define TH_A2A_PATH_MAX 160

/* TH_EINVAL when obj names one field both in camelCase and in snake_case (path prefixes
 * the names in the message, e.g. "message."). */
th_err th_a2a_one_spelling(json_object *obj, const char *path, struct th_error *e);

/* A string field. *out is borrowed from obj, NULL when absent, null or (when drop_empty)
 * "". max > 0 caps its length in bytes. */
th_err th_a2a_get_str(json_object *obj, const char *camel, const char *snake, const char *prefix,
                      size_t max, int drop_empty, const char **out, struct th_error *e);

/* An integer field given as a JSON integer, an integral JSON number or a decimal string
 * (ProtoJSON allows quoted integers; REST query values are always text). *present says
 * whether it was there; the value is clamped to int64 so callers' range checks see huge
 * inputs as out of range rather than wrapped. */
th_err th_a2a_get_int(json_object *obj, const char *camel, const char *snake, const char *prefix,
                      int *present, int64_t *out, struct th_error *e);

/* A boolean field: true/false, or (REST query text) "true"/"false". */
th_err th_a2a_get_bool(json_object *obj, const char *camel, const char *snake, const char *prefix,
                       int *present, int *out, struct th_error *e);

/* An object field; *out borrowed, NULL when absent. max > 0 caps its serialised size. */
th_err th_a2a_get_obj(json_object *obj, const char *camel, const char *snake, const char *prefix,
                      size_t max, json_object **out, struct th_error *e);

/* The historyLength convention shared by send, get and list: absent → -1, negative or
 * beyond int32 → TH_EINVAL naming "<prefix>historyLength". */
th_err th_a2a_get_history_length(json_object *obj, const char *prefix, int *out,
                                 struct th_error *e);

/* Base64 in the standard or URL-safe alphabet, padded or not (ProtoJSON bytes input).
 * Returns 1 when valid. */
int th_a2a_base64_valid(const char *s, size_t len);

/* The same text re-written in the standard alphabet with padding (ProtoJSON bytes output);
 * malloc'd, caller frees; NULL when out of memory. s must be valid. */
char *th_a2a_base64_canon(const char *s, size_t len);

#endif
