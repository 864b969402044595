/* SPDX-License-Identifier: Apache-2.0 */
/* jcs.h — the JSON Canonicalization Scheme (RFC 8785) of a json-c value: the bytes a
 * signature over JSON is computed on (the signed agent card, CARD-SIG-1, decision-066).
 *
 * RFC 8785 serialises like ECMAScript's JSON.stringify with three rules added: no white
 * space, object members sorted by their names as arrays of UTF-16 code units, and every
 * number written as ECMAScript's Number.prototype.toString writes the IEEE 754 double
 * (json-c's integers included: JCS knows only doubles). Strings must be valid Unicode
 * (our UTF-8 must be well-formed); NaN and the infinities have no form and are refused. */
#ifndef TH_UTIL_JCS_H
#define TH_UTIL_JCS_H

#include <json-c/json.h>
#include <stddef.h>

#include "util/buf.h"
#include "util/err.h"

/* Appends the canonical form of v to out. TH_OK; TH_EINVAL naming what cannot be
 * canonicalised (a number that is not finite, a string or member name that is not
 * well-formed UTF-8); TH_ENOMEM. On failure out holds a partial text. */
th_err th_jcs_append(struct th_buf *out, json_object *v, struct th_error *e);

/* The canonical form of v as a new string (the caller frees it with free), or NULL with
 * e set as th_jcs_append says. */
char *th_jcs_text(json_object *v, struct th_error *e);

/* Writes d as ECMAScript's Number::toString(d) (RFC 8785 §3.2.2.3) into out (cap bytes;
 * 32 always suffice). The length written, or -1 when d is NaN or infinite or out is too
 * small. */
int th_jcs_number(double d, char *out, size_t cap);

/* Orders two member names (NUL-terminated, well-formed UTF-8) as RFC 8785 §3.2.3 says:
 * by their UTF-16 code units. <0, 0 or >0 like strcmp. */
int th_jcs_name_cmp(const char *a, const char *b);

#endif
