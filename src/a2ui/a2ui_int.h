/* SPDX-License-Identifier: Apache-2.0 */
/* a2ui_int.h — internals shared by the A2UI module's files and its tests: the basic catalog's
 * component and function tables (catalog.c) and the small checks used in both directions. */
#ifndef TH_A2UI_A2UI_INT_H
#define TH_A2UI_A2UI_INT_H

#include <stdarg.h>
#include <stddef.h>

#include "a2ui/a2ui.h"
#include "util/jsonx.h"

/* Where a value sits, for error messages: "message 2 (updateComponents), component \"btn\"". */
struct th_a2ui_where {
	struct th_error *e;
	const char *prefix; /* borrowed; never NULL */
};

/* Records TH_EINVAL "<prefix>: <path>: <rule>" (path may be NULL or ""). */
th_err th_a2ui_fail(const struct th_a2ui_where *w, const char *path, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Validates one component of an updateComponents message against the basic catalog. On success
 * *type is the component's type name (static storage) and each component id it references has
 * been appended to refs (an array owned by the caller). */
th_err th_a2ui_check_component(const struct th_a2ui_where *w, json_object *comp, json_object *refs,
                               const char **type);

/* Validates a createSurface theme object. */
th_err th_a2ui_check_theme(const struct th_a2ui_where *w, json_object *theme);

/* Non-zero when s is a usable id: a non-empty string of at most TH_A2UI_MAX_ID_BYTES bytes. */
int th_a2ui_id_ok(json_object *s);

/* Non-zero when s escapes '~' only as "~0" / "~1" (JSON Pointer, absolute or A2UI-relative). */
int th_a2ui_pointer_ok(const char *s);

/* Non-zero when s is an RFC 3339 date-time with a time zone ("2026-01-15T12:00:00Z"). */
int th_a2ui_datetime_ok(const char *s);

/* Non-zero when the object has a key other than those listed (NULL-terminated); *bad names it. */
int th_a2ui_extra_key(json_object *obj, const char *const *allowed, const char **bad);

/* Checks that registry is an object whose "surfaces" (if any) has the shapes this module
 * writes; *surfaces is that member (borrowed) or NULL. TH_EINTERNAL when malformed. */
th_err th_a2ui_registry_check(json_object *registry, json_object **surfaces, struct th_error *e);

/* The module's catalog tables as JSON, for the contract test that compares them with the
 * official catalog: {"components": {Name: {"properties": {p: {"kind", "required", "enum"?}}}},
 * "functions": {name: {"returns", "args": {a: {"kind", "required"}}}}}. New object (caller
 * frees with json_object_put) or NULL on allocation failure. */
json_object *th_a2ui_catalog_json(void);

#endif
