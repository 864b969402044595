/* SPDX-License-Identifier: Apache-2.0 */
/* client.c — what clients send back (UI-2, UI-3): recognising A2UI data parts in the encodings
 * real clients use, the client-to-server envelope (action, error), the semantic checks of an
 * action against the task's surface registry, and the client's capabilities (EXT-4). */
#include "a2ui/a2ui_int.h"
#include "util/jsonx.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static int is_a2ui_type(json_object *v)
{
	const char *s = v != NULL && json_object_is_type(v, json_type_string)
	                    ? json_object_get_string(v)
	                    : NULL;
	return s != NULL &&
	       (strcmp(s, TH_A2UI_MEDIA_TYPE) == 0 || strcmp(s, TH_A2UI_MEDIA_TYPE_LEGACY) == 0);
}

int th_a2ui_is_part(json_object *part)
{
	if (part == NULL || !json_object_is_type(part, json_type_object))
		return 0;
	return is_a2ui_type(th_json_get(part, "mediaType")) ||
	       is_a2ui_type(th_json_get(part, "mimeType")) ||
	       is_a2ui_type(th_json_get(th_json_get(part, "metadata"), "mimeType"));
}

static int has_inline_catalog(json_object *o)
{
	json_object *v = th_json_get(o, "inlineCatalogs");
	if (v == NULL)
		v = th_json_get(o, "inlineCatalog");
	if (v == NULL)
		v = th_json_get(o, "catalog");
	if (v == NULL)
		return 0;
	/* An empty list declares no catalog. */
	return !(json_object_is_type(v, json_type_array) && json_object_array_length(v) == 0);
}

th_err th_a2ui_check_capabilities(json_object *message_metadata, struct th_error *e)
{
	json_object *caps = th_json_get(message_metadata, "a2uiClientCapabilities");
	if (caps == NULL)
		return TH_OK;
	if (!json_object_is_type(caps, json_type_object))
		return th_error_set(e, TH_EINVAL, "a2uiClientCapabilities must be an object");
	if (has_inline_catalog(caps) || has_inline_catalog(th_json_get(caps, TH_A2UI_VERSION)) ||
	    has_inline_catalog(th_json_get(caps, TH_A2UI_VERSION_091)))
		return th_error_set(
		    e, TH_EINVAL,
		    "inline catalog: a2uiClientCapabilities.inlineCatalogs is refused; "
		    "only the basic catalog %s is supported",
		    TH_A2UI_BASIC_CATALOG);
	return TH_OK;
}

/* 1 when list names the basic catalog, 0 when it does not, -1 when it is not a list. */
static int names_basic(json_object *list)
{
	if (list == NULL || !json_object_is_type(list, json_type_array))
		return -1;
	for (size_t i = 0; i < json_object_array_length(list); i++) {
		json_object *s = json_object_array_get_idx(list, i);
		if (json_object_is_type(s, json_type_string) &&
		    strcmp(json_object_get_string(s), TH_A2UI_BASIC_CATALOG) == 0)
			return 1;
	}
	return 0;
}

int th_a2ui_client_supports(json_object *message_metadata, int activated)
{
	json_object *caps = th_json_get(message_metadata, "a2uiClientCapabilities");
	int found = -1;
	json_object *forms[] = {caps, th_json_get(caps, TH_A2UI_VERSION),
	                        th_json_get(caps, TH_A2UI_VERSION_091)};
	for (size_t i = 0; i < sizeof forms / sizeof forms[0]; i++) {
		int r = names_basic(th_json_get(forms[i], "supportedCatalogIds"));
		if (r > found)
			found = r;
	}
	if (found >= 0)
		return found;
	return activated != 0;
}

static th_err bad(struct th_error *e, size_t idx, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static th_err bad(struct th_error *e, size_t idx, const char *fmt, ...)
{
	char rule[TH_ERRMSG_MAX];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(rule, sizeof rule, fmt, ap);
	va_end(ap);
	return th_error_set(e, TH_EINVAL, "A2UI message %zu: %s", idx, rule);
}

static th_err check_action_fields(json_object *act, size_t idx, struct th_error *e)
{
	static const char *const fields[] = {"name",      "surfaceId", "sourceComponentId",
	                                     "timestamp", "context",   NULL};
	if (!json_object_is_type(act, json_type_object))
		return bad(e, idx, "action must be an object");
	const char *extra = NULL;
	if (th_a2ui_extra_key(act, fields, &extra))
		return bad(e, idx, "unknown field action.%s", extra);
	for (size_t i = 0; fields[i] != NULL; i++)
		if (th_json_get(act, fields[i]) == NULL)
			return bad(e, idx, "missing field action.%s", fields[i]);
	json_object *name = th_json_get(act, "name");
	if (!json_object_is_type(name, json_type_string) || json_object_get_string_len(name) < 1 ||
	    json_object_get_string_len(name) > TH_A2UI_MAX_NAME_BYTES)
		return bad(e, idx, "action.name must be a string of 1..128 bytes");
	if (!th_a2ui_id_ok(th_json_get(act, "surfaceId")))
		return bad(e, idx, "action.surfaceId must be a string of 1..256 bytes");
	if (!th_a2ui_id_ok(th_json_get(act, "sourceComponentId")))
		return bad(e, idx, "action.sourceComponentId must be a string of 1..256 bytes");
	json_object *ts = th_json_get(act, "timestamp");
	if (!json_object_is_type(ts, json_type_string) ||
	    !th_a2ui_datetime_ok(json_object_get_string(ts)))
		return bad(e, idx, "action.timestamp must be an RFC 3339 date-time");
	json_object *ctx = th_json_get(act, "context");
	if (!json_object_is_type(ctx, json_type_object))
		return bad(e, idx, "action.context must be an object");
	if (json_object_object_length(ctx) > TH_A2UI_MAX_CONTEXT_KEYS ||
	    th_json_size(ctx) > TH_A2UI_MAX_CONTEXT_BYTES)
		return th_error_set(
		    e, TH_EINVAL,
		    "A2UI message %zu: context too large (at most %d keys and %d bytes)", idx,
		    TH_A2UI_MAX_CONTEXT_KEYS, TH_A2UI_MAX_CONTEXT_BYTES);
	return TH_OK;
}

static th_err check_error_fields(json_object *err, size_t idx, struct th_error *e)
{
	if (!json_object_is_type(err, json_type_object))
		return bad(e, idx, "error must be an object");
	static const char *const req[] = {"code", "surfaceId", "message", NULL};
	for (size_t i = 0; req[i] != NULL; i++) {
		json_object *v = th_json_get(err, req[i]);
		if (v == NULL)
			return bad(e, idx, "missing field error.%s", req[i]);
		if (!json_object_is_type(v, json_type_string) ||
		    json_object_get_string_len(v) > TH_A2UI_MAX_CLIENT_TEXT)
			return bad(e, idx, "error.%s must be a string of at most 4096 bytes",
			           req[i]);
	}
	if (strcmp(th_json_str(err, "code"), "VALIDATION_FAILED") == 0) {
		static const char *const keys[] = {"code", "surfaceId", "message", "path", NULL};
		const char *extra = NULL;
		if (th_a2ui_extra_key(err, keys, &extra))
			return bad(e, idx, "unknown field error.%s", extra);
		json_object *path = th_json_get(err, "path");
		if (path == NULL)
			return bad(e, idx, "missing field error.path (VALIDATION_FAILED)");
		if (!json_object_is_type(path, json_type_string) ||
		    json_object_get_string_len(path) > TH_A2UI_MAX_CLIENT_TEXT)
			return bad(e, idx, "error.path must be a string");
	}
	if (th_json_size(err) > TH_A2UI_MAX_CONTEXT_BYTES)
		return bad(e, idx, "error is too large");
	return TH_OK;
}

/* One client-to-server message: {version, action} or {version, error}. */
static th_err check_client_message(json_object *msg, size_t idx, struct th_error *e)
{
	if (msg == NULL || !json_object_is_type(msg, json_type_object))
		return bad(e, idx, "must be an object");
	if (has_inline_catalog(msg) || th_json_get(msg, "createSurface") != NULL)
		return bad(e, idx, "inline catalog refused: only the basic catalog %s is supported",
		           TH_A2UI_BASIC_CATALOG);
	if (th_json_get(msg, "userAction") != NULL)
		return bad(e, idx,
		           "bad version: userAction is A2UI v0.8; send {\"version\": \"v0.9\", "
		           "\"action\": {...}}");
	json_object *ver = th_json_get(msg, "version");
	if (ver == NULL)
		return bad(e, idx, "missing field version");
	const char *v =
	    json_object_is_type(ver, json_type_string) ? json_object_get_string(ver) : "";
	if (strcmp(v, TH_A2UI_VERSION) != 0 && strcmp(v, TH_A2UI_VERSION_091) != 0)
		return bad(e, idx, "bad version \"%s\" (accepted: v0.9, v0.9.1)", v);
	static const char *const keys[] = {"version", "action", "error", NULL};
	const char *extra = NULL;
	if (th_a2ui_extra_key(msg, keys, &extra))
		return bad(e, idx, "unknown key \"%s\" (a message is version plus action or error)",
		           extra);
	json_object *act = th_json_get(msg, "action"), *err = th_json_get(msg, "error");
	if (act != NULL && err != NULL)
		return bad(e, idx, "both action and error in one message");
	if (act != NULL)
		return check_action_fields(act, idx, e);
	if (err != NULL)
		return check_error_fields(err, idx, e);
	return bad(e, idx, "missing field action (or error)");
}

th_err th_a2ui_parse_client(json_object *part, json_object **messages, struct th_error *e)
{
	*messages = NULL;
	if (!th_a2ui_is_part(part))
		return th_error_set(e, TH_EINVAL,
		                    "not an A2UI part: mediaType or metadata.mimeType must be %s",
		                    TH_A2UI_MEDIA_TYPE);
	th_err rc = th_a2ui_check_capabilities(th_json_get(part, "metadata"), e);
	if (rc != TH_OK)
		return rc;
	json_object *data = th_json_get(part, "data");
	if (data == NULL)
		return th_error_set(e, TH_EINVAL, "A2UI part has no data");
	json_object *list = data;
	json_object *wrapped = th_json_get(data, "messages");
	if (json_object_is_type(data, json_type_object) && wrapped != NULL &&
	    th_json_get(data, "version") == NULL) {
		if (json_object_object_length(data) != 1 ||
		    !json_object_is_type(wrapped, json_type_array))
			return th_error_set(
			    e, TH_EINVAL,
			    "A2UI part data {\"messages\": [...]} takes only an array");
		list = wrapped;
	}
	size_t n = 1;
	if (json_object_is_type(list, json_type_array)) {
		n = json_object_array_length(list);
		if (n == 0)
			return th_error_set(e, TH_EINVAL, "A2UI part holds no message");
		if (n > TH_A2UI_MAX_CLIENT_MESSAGES)
			return th_error_set(e, TH_EINVAL, "more than %d A2UI messages in one part",
			                    TH_A2UI_MAX_CLIENT_MESSAGES);
	} else if (!json_object_is_type(list, json_type_object)) {
		return th_error_set(e, TH_EINVAL,
		                    "A2UI part data must be an array, a message or {messages}");
	}
	json_object *out = json_object_new_array_ext((int)n);
	if (out == NULL)
		return th_error_set(e, TH_ENOMEM, "out of memory");
	for (size_t i = 0; i < n; i++) {
		json_object *m = json_object_is_type(list, json_type_array)
		                     ? json_object_array_get_idx(list, i)
		                     : list;
		rc = check_client_message(m, i, e);
		if (rc == TH_OK && json_object_array_add(out, json_object_get(m)) != 0) {
			json_object_put(m);
			rc = th_error_set(e, TH_ENOMEM, "out of memory");
		}
		if (rc != TH_OK) {
			json_object_put(out);
			return rc;
		}
	}
	*messages = out;
	return TH_OK;
}

th_err th_a2ui_check_action(json_object *registry, json_object *action_msg, struct th_error *e)
{
	json_object *surfaces = NULL;
	th_err rc = th_a2ui_registry_check(registry, &surfaces, e);
	if (rc != TH_OK)
		return rc;
	if ((rc = check_client_message(action_msg, 0, e)) != TH_OK)
		return rc;
	json_object *act = th_json_get(action_msg, "action");
	if (act == NULL)
		return th_error_set(e, TH_EINVAL, "A2UI message is not an action");
	const char *sid = th_json_str(act, "surfaceId");
	const char *cid = th_json_str(act, "sourceComponentId");
	const char *name = th_json_str(act, "name");
	json_object *surface = th_json_get(surfaces, sid);
	if (surface == NULL)
		return th_error_set(e, TH_EINVAL,
		                    "A2UI action refused: unknown surface \"%s\" (not created by "
		                    "this task)",
		                    sid);
	json_object *del = th_json_get(surface, "deleted");
	if (del != NULL && json_object_get_boolean(del))
		return th_error_set(e, TH_EINVAL, "A2UI action refused: deleted surface \"%s\"",
		                    sid);
	const char *cat = th_json_str(surface, "catalogId");
	if (cat == NULL || strcmp(cat, TH_A2UI_BASIC_CATALOG) != 0)
		return th_error_set(e, TH_EINVAL,
		                    "A2UI action refused: inline catalog (surface \"%s\" is not on "
		                    "the basic catalog)",
		                    sid);
	json_object *comp = th_json_get(th_json_get(surface, "components"), cid);
	if (comp == NULL)
		return th_error_set(
		    e, TH_EINVAL, "A2UI action refused: unknown component \"%s\" on surface \"%s\"",
		    cid, sid);
	json_object *ev = th_json_get(comp, "event");
	const char *declared = th_json_str(ev, "name");
	if (declared == NULL)
		return th_error_set(
		    e, TH_EINVAL, "A2UI action refused: no action event on component \"%s\"", cid);
	if (strcmp(declared, name) != 0)
		return th_error_set(
		    e, TH_EINVAL,
		    "A2UI action refused: action name mismatch (\"%s\" sent, component "
		    "\"%s\" declares \"%s\")",
		    name, cid, declared);
	json_object *ctx = th_json_get(act, "context");
	json_object *decl = th_json_get(ev, "context");
	json_object_object_foreach(ctx, key, val)
	{
		json_object *d = NULL;
		if (decl == NULL || !json_object_object_get_ex(decl, key, &d))
			return th_error_set(e, TH_EINVAL,
			                    "A2UI action refused: undeclared context key \"%s\"",
			                    key);
		/* A literal the server declared comes back as it was sent; bindings ({path},
		 * {call}) carry user input, which the harness treats as untrusted data. */
		if (!json_object_is_type(d, json_type_object) && !json_object_equal(d, val))
			return th_error_set(
			    e, TH_EINVAL,
			    "A2UI action refused: context value mismatch for \"%s\" "
			    "(a declared literal changed)",
			    key);
	}
	return TH_OK;
}
