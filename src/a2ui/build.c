/* SPDX-License-Identifier: Apache-2.0 */
/* build.c — messages and artifacts the server builds itself: the /confirm approval surface
 * (UI-4) and the artifact that carries a batch of messages (UI-1). */
#include "a2ui/a2ui_int.h"

#include <stdarg.h>
#include <stdio.h>

/* Adds v under k; on any failure (including v == NULL) frees v and clears *ok. */
static void add(int *ok, json_object *o, const char *k, json_object *v)
{
	if (!*ok || o == NULL || v == NULL || json_object_object_add(o, k, v) != 0) {
		json_object_put(v);
		*ok = 0;
	}
}

static void push(int *ok, json_object *a, json_object *v)
{
	if (!*ok || a == NULL || v == NULL || json_object_array_add(a, v) != 0) {
		json_object_put(v);
		*ok = 0;
	}
}

static json_object *str(const char *s)
{
	return json_object_new_string(s);
}

static json_object *strings(int *ok, int n, ...)
{
	json_object *a = json_object_new_array();
	va_list ap;
	va_start(ap, n);
	for (int i = 0; i < n; i++)
		push(ok, a, str(va_arg(ap, const char *)));
	va_end(ap);
	return a;
}

static json_object *component(int *ok, const char *id, const char *type)
{
	json_object *c = json_object_new_object();
	add(ok, c, "id", str(id));
	add(ok, c, "component", str(type));
	return c;
}

static json_object *text(int *ok, const char *id, const char *t, const char *variant)
{
	json_object *c = component(ok, id, "Text");
	add(ok, c, "text", str(t));
	if (variant != NULL)
		add(ok, c, "variant", str(variant));
	return c;
}

static json_object *button(int *ok, const char *id, const char *label_id, const char *action,
                           const char *variant)
{
	json_object *c = component(ok, id, "Button");
	add(ok, c, "child", str(label_id));
	add(ok, c, "variant", str(variant));
	json_object *act = json_object_new_object(), *ev = json_object_new_object();
	add(ok, c, "action", act);
	add(ok, act, "event", ev);
	add(ok, ev, "name", str(action));
	add(ok, ev, "context", json_object_new_object());
	return c;
}

static json_object *envelope(int *ok, const char *version, const char *key, json_object *inner)
{
	json_object *m = json_object_new_object();
	add(ok, m, "version", str(version));
	add(ok, m, key, inner);
	return m;
}

json_object *th_a2ui_confirm_surface(const char *surface_id, const char *question,
                                     const char *version)
{
	if (surface_id == NULL || surface_id[0] == '\0' || question == NULL || question[0] == '\0')
		return NULL;
	if (version == NULL)
		version = TH_A2UI_VERSION;
	int ok = 1;
	json_object *msgs = json_object_new_array();

	json_object *create = json_object_new_object();
	add(&ok, create, "surfaceId", str(surface_id));
	add(&ok, create, "catalogId", str(TH_A2UI_BASIC_CATALOG));
	push(&ok, msgs, envelope(&ok, version, "createSurface", create));

	json_object *update = json_object_new_object();
	json_object *comps = json_object_new_array();
	add(&ok, update, "surfaceId", str(surface_id));
	add(&ok, update, "components", comps);

	json_object *root = component(&ok, "root", "Card");
	add(&ok, root, "child", str("body"));
	push(&ok, comps, root);
	json_object *body = component(&ok, "body", "Column");
	add(&ok, body, "children", strings(&ok, 2, "question", "buttons"));
	push(&ok, comps, body);
	push(&ok, comps, text(&ok, "question", question, "body"));
	json_object *row = component(&ok, "buttons", "Row");
	add(&ok, row, "children", strings(&ok, 2, "approve", "reject"));
	add(&ok, row, "justify", str("end"));
	push(&ok, comps, row);
	push(&ok, comps,
	     button(&ok, "approve", "approve_label", TH_A2UI_CONFIRM_APPROVE, "primary"));
	push(&ok, comps, text(&ok, "approve_label", "Approve", NULL));
	push(&ok, comps, button(&ok, "reject", "reject_label", TH_A2UI_CONFIRM_REJECT, "default"));
	push(&ok, comps, text(&ok, "reject_label", "Reject", NULL));
	push(&ok, msgs, envelope(&ok, version, "updateComponents", update));

	if (!ok) {
		json_object_put(msgs);
		return NULL;
	}
	return msgs;
}

json_object *th_a2ui_artifact(long long n, json_object *messages)
{
	if (messages == NULL)
		return NULL;
	char id[48];
	snprintf(id, sizeof id, "a2ui:%lld", n);
	int ok = 1;
	json_object *art = json_object_new_object();
	add(&ok, art, "artifactId", str(id));
	add(&ok, art, "name", str("a2ui"));
	json_object *parts = json_object_new_array();
	add(&ok, art, "parts", parts);
	json_object *part = json_object_new_object();
	push(&ok, parts, part);
	add(&ok, part, "data", json_object_get(messages));
	add(&ok, part, "mediaType", str(TH_A2UI_MEDIA_TYPE));
	json_object *meta = json_object_new_object();
	add(&ok, part, "metadata", meta);
	add(&ok, meta, "mimeType", str(TH_A2UI_MEDIA_TYPE));
	if (!ok || art == NULL) {
		json_object_put(art);
		return NULL;
	}
	return art;
}
