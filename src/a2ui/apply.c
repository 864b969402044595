/* SPDX-License-Identifier: Apache-2.0 */
/* apply.c — outbound A2UI messages (UI-1): the envelope, the surface state machine, the basic
 * catalog (catalog.c) and the integrity of each surface's component graph, applied to the
 * task's surface registry as one batch. The batch works on a copy of the registry's surfaces,
 * which replaces the original only when every message passed. */
#include "a2ui/a2ui_int.h"
#include "util/jsonx.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const message_keys[] = {"createSurface", "updateComponents", "updateDataModel",
                                           "deleteSurface", NULL};

struct batch {
	struct th_error *e;
	json_object *surfaces; /* staging copy of registry.surfaces; json_object_put */
	json_object *touched; /* surfaceId -> index of its last updateComponents; json_object_put */
	const char *version;
	int fill;
};

static int is_deleted(json_object *surface)
{
	json_object *d = th_json_get(surface, "deleted");
	return d != NULL && json_object_get_boolean(d);
}

static th_err nomem(struct th_error *e)
{
	return th_error_set(e, TH_ENOMEM, "out of memory");
}

static th_err put(struct th_error *e, json_object *o, const char *k, json_object *v)
{
	return th_json_put(o, k, v) == 0 ? TH_OK : nomem(e);
}

/* The registry's records have the shapes this module writes; anything else is corruption. */
static th_err check_registry(json_object *surfaces, struct th_error *e)
{
	if (surfaces == NULL)
		return TH_OK;
	if (!json_object_is_type(surfaces, json_type_object))
		return th_error_set(e, TH_EINTERNAL, "A2UI surface registry is malformed");
	json_object_object_foreach(surfaces, sid, s)
	{
		json_object *comps = th_json_get(s, "components");
		if (comps == NULL || !json_object_is_type(comps, json_type_object))
			return th_error_set(e, TH_EINTERNAL,
			                    "A2UI surface registry is malformed at surface \"%s\"",
			                    sid);
		json_object_object_foreach(comps, cid, c)
		{
			json_object *refs = th_json_get(c, "refs");
			if (refs == NULL || !json_object_is_type(refs, json_type_array))
				return th_error_set(
				    e, TH_EINTERNAL,
				    "A2UI surface registry is malformed at component \"%s\"", cid);
		}
	}
	return TH_OK;
}

th_err th_a2ui_registry_check(json_object *registry, json_object **surfaces, struct th_error *e)
{
	*surfaces = NULL;
	if (registry == NULL || !json_object_is_type(registry, json_type_object))
		return th_error_set(e, TH_EINTERNAL, "A2UI surface registry is not a JSON object");
	json_object *s = th_json_get(registry, "surfaces");
	th_err rc = check_registry(s, e);
	if (rc == TH_OK)
		*surfaces = s;
	return rc;
}

static size_t count_live(json_object *surfaces)
{
	size_t n = 0;
	json_object_object_foreach(surfaces, sid, s)
	{
		(void)sid;
		if (!is_deleted(s))
			n++;
	}
	return n;
}

static th_err only_keys(const struct th_a2ui_where *w, json_object *inner,
                        const char *const *allowed)
{
	const char *bad = NULL;
	if (th_a2ui_extra_key(inner, allowed, &bad))
		return th_a2ui_fail(w, NULL, "unknown property \"%s\"", bad);
	return TH_OK;
}

/* The surfaceId of a message with no property but the allowed ones, or an error in w's
 * terms. */
static th_err surface_id(const struct th_a2ui_where *w, json_object *inner,
                         const char *const *allowed, const char **id)
{
	th_err rc = only_keys(w, inner, allowed);
	if (rc != TH_OK)
		return rc;
	json_object *sid = th_json_get(inner, "surfaceId");
	if (sid == NULL)
		return th_a2ui_fail(w, NULL, "missing required property \"surfaceId\"");
	if (!th_a2ui_id_ok(sid))
		return th_a2ui_fail(w, NULL, "surfaceId must be a string of 1..%d bytes",
		                    TH_A2UI_MAX_ID_BYTES);
	*id = json_object_get_string(sid);
	return TH_OK;
}

/* The live surface a message about an existing surface names (surface_id), or an error
 * in w's terms. */
static th_err live_surface(struct batch *b, const struct th_a2ui_where *w, json_object *inner,
                           const char *const *allowed, const char **sid_out, json_object **surface)
{
	const char *id = NULL;
	th_err rc = surface_id(w, inner, allowed, &id);
	if (rc != TH_OK)
		return rc;
	json_object *s = th_json_get(b->surfaces, id);
	if (s == NULL)
		return th_a2ui_fail(w, NULL,
		                    "unknown surface \"%s\": createSurface must come first", id);
	if (is_deleted(s))
		return th_a2ui_fail(w, NULL, "surface \"%s\" was deleted; nothing may follow", id);
	*sid_out = id;
	*surface = s;
	return TH_OK;
}

static th_err create_surface(struct batch *b, const struct th_a2ui_where *w, json_object *inner)
{
	static const char *const keys[] = {"surfaceId", "catalogId", "theme", "sendDataModel",
	                                   NULL};
	if (th_json_get(inner, "catalog") != NULL || th_json_get(inner, "inlineCatalog") != NULL ||
	    th_json_get(inner, "inlineCatalogs") != NULL)
		return th_a2ui_fail(w, NULL, "inline catalog refused: only the basic catalog %s",
		                    TH_A2UI_BASIC_CATALOG);
	const char *id = NULL;
	th_err rc = surface_id(w, inner, keys, &id);
	if (rc != TH_OK)
		return rc;
	json_object *cat = th_json_get(inner, "catalogId");
	if (cat == NULL)
		return th_a2ui_fail(w, NULL, "missing required property \"catalogId\"");
	if (json_object_is_type(cat, json_type_object))
		return th_a2ui_fail(w, "catalogId",
		                    "inline catalog refused: only the basic catalog %s",
		                    TH_A2UI_BASIC_CATALOG);
	if (!json_object_is_type(cat, json_type_string) ||
	    strcmp(json_object_get_string(cat), TH_A2UI_BASIC_CATALOG) != 0)
		return th_a2ui_fail(w, "catalogId", "must be the basic catalog %s",
		                    TH_A2UI_BASIC_CATALOG);
	json_object *theme = th_json_get(inner, "theme");
	if (theme != NULL && (rc = th_a2ui_check_theme(w, theme)) != TH_OK)
		return rc;
	json_object *sdm = th_json_get(inner, "sendDataModel");
	if (sdm != NULL && !json_object_is_type(sdm, json_type_boolean))
		return th_a2ui_fail(w, "sendDataModel", "must be a boolean");
	json_object *old = th_json_get(b->surfaces, id);
	if (old != NULL && is_deleted(old))
		return th_a2ui_fail(w, NULL,
		                    "surface \"%s\" was deleted; a surface id is not reused", id);
	if (old != NULL)
		return th_a2ui_fail(w, NULL,
		                    "surface \"%s\" already exists (no second createSurface)", id);
	if ((size_t)json_object_object_length(b->surfaces) >= TH_A2UI_MAX_SURFACE_RECORDS)
		return th_a2ui_fail(w, NULL, "more than %d surfaces in this task",
		                    TH_A2UI_MAX_SURFACE_RECORDS);
	if (count_live(b->surfaces) >= TH_A2UI_MAX_SURFACES)
		return th_a2ui_fail(w, NULL, "more than %d live surfaces in this task",
		                    TH_A2UI_MAX_SURFACES);
	json_object *s = json_object_new_object();
	if (s == NULL)
		return nomem(b->e);
	if ((rc = put(b->e, s, "catalogId", json_object_new_string(TH_A2UI_BASIC_CATALOG))) ||
	    (rc = put(b->e, s, "sendDataModel",
	              json_object_new_boolean(sdm != NULL && json_object_get_boolean(sdm)))) ||
	    (rc = put(b->e, s, "deleted", json_object_new_boolean(0))) ||
	    (rc = put(b->e, s, "components", json_object_new_object()))) {
		json_object_put(s);
		return rc;
	}
	return put(b->e, b->surfaces, id, s);
}

/* The registry record of a validated component: {component, refs, event?}. */
static th_err component_record(struct th_error *e, json_object *comp, const char *type,
                               json_object *refs, json_object **out)
{
	json_object *r = json_object_new_object();
	if (r == NULL)
		return nomem(e);
	th_err rc = put(e, r, "component", json_object_new_string(type));
	if (rc == TH_OK)
		rc = put(e, r, "refs", json_object_get(refs));
	json_object *ev = th_json_get(th_json_get(comp, "action"), "event");
	if (rc == TH_OK && ev != NULL) {
		json_object *rec = json_object_new_object();
		rc = put(e, r, "event", rec);
		if (rc == TH_OK)
			rc = put(e, rec, "name", json_object_new_string(th_json_str(ev, "name")));
		json_object *ctx = th_json_get(ev, "context"), *copy = NULL;
		if (rc == TH_OK && ctx != NULL) {
			if (json_object_deep_copy(ctx, &copy, NULL) != 0)
				rc = nomem(e);
			else
				rc = put(e, rec, "context", copy);
		}
	}
	if (rc != TH_OK) {
		json_object_put(r);
		return rc;
	}
	*out = r;
	return TH_OK;
}

static th_err update_components(struct batch *b, const struct th_a2ui_where *w, size_t idx,
                                json_object *inner)
{
	static const char *const keys[] = {"surfaceId", "components", NULL};
	const char *sid = NULL;
	json_object *surface = NULL;
	th_err rc = live_surface(b, w, inner, keys, &sid, &surface);
	if (rc != TH_OK)
		return rc;
	json_object *list = th_json_get(inner, "components");
	if (list == NULL)
		return th_a2ui_fail(w, NULL, "missing required property \"components\"");
	if (!json_object_is_type(list, json_type_array) || json_object_array_length(list) < 1)
		return th_a2ui_fail(w, "components", "must be a non-empty array");
	json_object *comps = th_json_get(surface, "components");
	size_t n = json_object_array_length(list);
	if (n > TH_A2UI_MAX_COMPONENTS)
		return th_a2ui_fail(w, "components", "more than %d components",
		                    TH_A2UI_MAX_COMPONENTS);
	json_object *seen = json_object_new_object();
	if (seen == NULL)
		return nomem(b->e);
	for (size_t i = 0; i < n && rc == TH_OK; i++) {
		json_object *comp = json_object_array_get_idx(list, i);
		json_object *id = th_json_get(comp, "id");
		char prefix[TH_ERRMSG_MAX];
		if (th_a2ui_id_ok(id))
			snprintf(prefix, sizeof prefix,
			         "message %zu (updateComponents), component \"%s\"", idx,
			         json_object_get_string(id));
		else
			snprintf(prefix, sizeof prefix,
			         "message %zu (updateComponents), components[%zu]", idx, i);
		struct th_a2ui_where cw = {b->e, prefix};
		if (!json_object_is_type(comp, json_type_object)) {
			rc = th_a2ui_fail(&cw, NULL, "a component must be an object");
			break;
		}
		if (id == NULL) {
			rc = th_a2ui_fail(&cw, NULL, "missing required property \"id\"");
			break;
		}
		if (!th_a2ui_id_ok(id)) {
			rc = th_a2ui_fail(&cw, NULL, "id must be a string of 1..%d bytes",
			                  TH_A2UI_MAX_ID_BYTES);
			break;
		}
		const char *cid = json_object_get_string(id);
		if (th_json_get(seen, cid) != NULL) {
			rc = th_a2ui_fail(&cw, NULL, "duplicate component id in one message");
			break;
		}
		if ((rc = put(b->e, seen, cid, json_object_new_boolean(1))) != TH_OK)
			break;
		json_object *refs = json_object_new_array();
		if (refs == NULL) {
			rc = nomem(b->e);
			break;
		}
		const char *type = NULL;
		json_object *rec = NULL;
		rc = th_a2ui_check_component(&cw, comp, refs, &type);
		if (rc == TH_OK)
			rc = component_record(b->e, comp, type, refs, &rec);
		json_object_put(refs);
		if (rc == TH_OK)
			rc = put(b->e, comps, cid, rec);
	}
	json_object_put(seen);
	if (rc != TH_OK)
		return rc;
	if (json_object_object_length(comps) > TH_A2UI_MAX_COMPONENTS)
		return th_a2ui_fail(w, NULL, "surface \"%s\" would hold more than %d components",
		                    sid, TH_A2UI_MAX_COMPONENTS);
	return put(b->e, b->touched, sid, json_object_new_int64((int64_t)idx));
}

static th_err update_data_model(struct batch *b, const struct th_a2ui_where *w, json_object *inner)
{
	static const char *const keys[] = {"surfaceId", "path", "value", NULL};
	const char *sid = NULL;
	json_object *surface = NULL;
	th_err rc = live_surface(b, w, inner, keys, &sid, &surface);
	if (rc != TH_OK)
		return rc;
	json_object *path = th_json_get(inner, "path");
	if (path != NULL && (!json_object_is_type(path, json_type_string) ||
	                     !th_a2ui_pointer_ok(json_object_get_string(path))))
		return th_a2ui_fail(w, "path", "must be a JSON Pointer string");
	return TH_OK;
}

static th_err delete_surface(struct batch *b, const struct th_a2ui_where *w, json_object *inner)
{
	static const char *const keys[] = {"surfaceId", NULL};
	const char *sid = NULL;
	json_object *surface = NULL;
	th_err rc = live_surface(b, w, inner, keys, &sid, &surface);
	if (rc != TH_OK)
		return rc;
	if ((rc = put(b->e, surface, "deleted", json_object_new_boolean(1))) != TH_OK ||
	    (rc = put(b->e, surface, "components", json_object_new_object())) != TH_OK)
		return rc;
	json_object_object_del(b->touched, sid);
	return TH_OK;
}

static th_err check_message(struct batch *b, size_t idx, json_object *msg)
{
	char prefix[64];
	snprintf(prefix, sizeof prefix, "message %zu", idx);
	struct th_a2ui_where w = {b->e, prefix};
	if (!json_object_is_type(msg, json_type_object))
		return th_a2ui_fail(&w, NULL, "must be an object");
	const char *key = NULL;
	int nkeys = 0;
	json_object *inner = NULL;
	json_object_object_foreach(msg, k, v)
	{
		if (strcmp(k, "version") == 0)
			continue;
		int known = 0;
		for (size_t i = 0; message_keys[i] != NULL; i++)
			known |= strcmp(k, message_keys[i]) == 0;
		if (!known)
			return th_a2ui_fail(&w, NULL,
			                    "unknown key \"%s\" (a message is version plus one of "
			                    "createSurface, updateComponents, updateDataModel, "
			                    "deleteSurface)",
			                    k);
		key = k;
		inner = v;
		nkeys++;
	}
	if (nkeys == 0)
		return th_a2ui_fail(&w, NULL,
		                    "no message key (createSurface, updateComponents, "
		                    "updateDataModel or deleteSurface)");
	if (nkeys > 1)
		return th_a2ui_fail(&w, NULL, "more than one message key in one message");
	snprintf(prefix, sizeof prefix, "message %zu (%s)", idx, key);
	json_object *ver = th_json_get(msg, "version");
	if (ver == NULL && !b->fill)
		return th_a2ui_fail(&w, NULL, "missing version (\"%s\")", b->version);
	if (ver != NULL && (!json_object_is_type(ver, json_type_string) ||
	                    strcmp(json_object_get_string(ver), b->version) != 0))
		return th_a2ui_fail(&w, "version", "must be \"%s\"", b->version);
	size_t size = th_json_size(msg);
	if (size > TH_A2UI_MAX_MESSAGE_BYTES)
		return th_a2ui_fail(&w, NULL, "message is %zu bytes, over the limit of %d", size,
		                    TH_A2UI_MAX_MESSAGE_BYTES);
	if (!json_object_is_type(inner, json_type_object))
		return th_a2ui_fail(&w, NULL, "%s must be an object", key);
	if (strcmp(key, "createSurface") == 0)
		return create_surface(b, &w, inner);
	if (strcmp(key, "updateComponents") == 0)
		return update_components(b, &w, idx, inner);
	if (strcmp(key, "updateDataModel") == 0)
		return update_data_model(b, &w, inner);
	return delete_surface(b, &w, inner);
}

/* ---- integrity of one surface: root, references, cycles, depth ---- */

struct node {
	const char *id;    /* borrowed from the registry */
	json_object *refs; /* borrowed */
	int state;         /* 0 unvisited, 1 on the current path, 2 done */
	int height;        /* components on the longest chain starting here */
};

struct graph {
	struct node *nodes; /* free */
	json_object *index; /* id -> position in nodes; json_object_put */
	const struct th_a2ui_where *w;
};

static th_err visit(struct graph *g, size_t i, int depth)
{
	struct node *n = &g->nodes[i];
	if (n->state == 2)
		return TH_OK;
	if (n->state == 1)
		return th_a2ui_fail(g->w, NULL,
		                    "component \"%s\": reference cycle (it references itself "
		                    "through its children)",
		                    n->id);
	if (depth > TH_A2UI_MAX_DEPTH)
		return th_a2ui_fail(g->w, NULL,
		                    "component \"%s\": reference chain deeper than %d components",
		                    n->id, TH_A2UI_MAX_DEPTH);
	n->state = 1;
	int h = 0;
	for (size_t k = 0; k < json_object_array_length(n->refs); k++) {
		const char *r = json_object_get_string(json_object_array_get_idx(n->refs, k));
		json_object *j = th_json_get(g->index, r != NULL ? r : "");
		if (j == NULL)
			continue; /* reported before the walk */
		size_t ji = (size_t)json_object_get_int64(j);
		th_err rc = visit(g, ji, depth + 1);
		if (rc != TH_OK)
			return rc;
		if (g->nodes[ji].height > h)
			h = g->nodes[ji].height;
	}
	n->state = 2;
	n->height = h + 1;
	if (n->height > TH_A2UI_MAX_DEPTH)
		return th_a2ui_fail(g->w, NULL,
		                    "component \"%s\": reference chain deeper than %d components",
		                    n->id, TH_A2UI_MAX_DEPTH);
	return TH_OK;
}

static th_err check_surface(struct batch *b, const char *sid, size_t idx)
{
	json_object *comps = th_json_get(th_json_get(b->surfaces, sid), "components");
	char prefix[TH_ERRMSG_MAX];
	snprintf(prefix, sizeof prefix, "message %zu (updateComponents), surface \"%s\"", idx, sid);
	struct th_a2ui_where w = {b->e, prefix};
	size_t n = (size_t)json_object_object_length(comps);
	if (n == 0)
		return TH_OK;
	if (th_json_get(comps, "root") == NULL)
		return th_a2ui_fail(&w, NULL, "no component has id \"root\"");
	struct graph g = {calloc(n, sizeof(struct node)), json_object_new_object(), &w};
	th_err rc = TH_OK;
	if (g.nodes == NULL || g.index == NULL)
		rc = nomem(b->e);
	size_t i = 0;
	json_object_object_foreach(comps, cid, rec)
	{
		if (rc != TH_OK)
			break;
		g.nodes[i].id = cid;
		g.nodes[i].refs = th_json_get(rec, "refs");
		rc = put(b->e, g.index, cid, json_object_new_int64((int64_t)i));
		i++;
	}
	for (i = 0; rc == TH_OK && i < n; i++) {
		json_object *refs = g.nodes[i].refs;
		for (size_t k = 0; k < json_object_array_length(refs); k++) {
			json_object *r = json_object_array_get_idx(refs, k);
			const char *rs = json_object_get_string(r);
			if (!json_object_is_type(r, json_type_string) ||
			    th_json_get(g.index, rs) == NULL) {
				rc = th_a2ui_fail(
				    &w, NULL,
				    "component \"%s\" references unknown component \"%s\"",
				    g.nodes[i].id, rs != NULL ? rs : "");
				break;
			}
		}
	}
	for (i = 0; rc == TH_OK && i < n; i++)
		rc = visit(&g, i, 1);
	free(g.nodes);
	json_object_put(g.index);
	return rc;
}

/* For each message without a version, a copy {version, <its keys>} into (*filled)[i]
 * (an array of n, calloc'd; NULL where the message had one). On failure the copies made
 * so far stay in *filled for the caller to put. */
static th_err fill_versions(json_object *messages, size_t n, const char *version,
                            json_object ***filled, struct th_error *e)
{
	if ((*filled = calloc(n, sizeof **filled)) == NULL)
		return nomem(e);
	th_err rc = TH_OK;
	for (size_t i = 0; rc == TH_OK && i < n; i++) {
		json_object *m = json_object_array_get_idx(messages, i);
		if (th_json_get(m, "version") != NULL)
			continue;
		json_object *f = json_object_new_object();
		if (f == NULL)
			return nomem(e);
		(*filled)[i] = f;
		rc = put(e, f, "version", json_object_new_string(version));
		json_object_object_foreach(m, k, v)
		{
			if (rc == TH_OK)
				rc = put(e, f, k, json_object_get(v));
		}
	}
	return rc;
}

th_err th_a2ui_apply(json_object *registry, json_object *messages, const struct th_a2ui_opts *opts,
                     struct th_error *e)
{
	json_object *surfaces = NULL;
	th_err rc = th_a2ui_registry_check(registry, &surfaces, e);
	if (rc != TH_OK)
		return rc;
	const char *version =
	    opts != NULL && opts->version != NULL ? opts->version : TH_A2UI_VERSION;
	if (strcmp(version, TH_A2UI_VERSION) != 0 && strcmp(version, TH_A2UI_VERSION_091) != 0)
		return th_error_set(e, TH_EINTERNAL, "A2UI version option \"%s\" is not supported",
		                    version);
	if (messages == NULL || !json_object_is_type(messages, json_type_array))
		return th_error_set(e, TH_EINVAL, "A2UI messages must be a JSON array");
	size_t n = json_object_array_length(messages);
	if (n == 0)
		return th_error_set(e, TH_EINVAL, "A2UI messages must not be empty");
	if (n > TH_A2UI_MAX_MESSAGES)
		return th_error_set(e, TH_EINVAL, "more than %d A2UI messages in one batch",
		                    TH_A2UI_MAX_MESSAGES);
	struct batch b = {e, NULL, json_object_new_object(), version,
	                  opts != NULL && opts->fill_version};
	if (surfaces == NULL)
		b.surfaces = json_object_new_object();
	else if (json_object_deep_copy(surfaces, &b.surfaces, NULL) != 0)
		b.surfaces = NULL;
	if (b.surfaces == NULL || b.touched == NULL)
		rc = nomem(e);
	for (size_t i = 0; rc == TH_OK && i < n; i++)
		rc = check_message(&b, i, json_object_array_get_idx(messages, i));
	if (rc == TH_OK) {
		json_object_object_foreach(b.touched, sid, idx)
		{
			rc = check_surface(&b, sid, (size_t)json_object_get_int64(idx));
			if (rc != TH_OK)
				break;
		}
	}
	/* Messages lacking version are rebuilt as {version, <key>} before anything is committed,
	 * so that a failed allocation leaves both registry and messages as they were. */
	json_object **filled = NULL;
	if (rc == TH_OK && b.fill)
		rc = fill_versions(messages, n, version, &filled, e);
	if (rc == TH_OK) {
		rc = put(e, registry, "surfaces", b.surfaces);
		b.surfaces = NULL; /* put took it, or freed it on failure */
	}
	if (rc == TH_OK && filled != NULL) {
		for (size_t i = 0; i < n; i++)
			if (filled[i] != NULL) {
				json_object_array_put_idx(messages, i, filled[i]);
				filled[i] = NULL;
			}
	}
	if (filled != NULL) {
		for (size_t i = 0; i < n; i++)
			json_object_put(filled[i]);
		free(filled);
	}
	json_object_put(b.surfaces);
	json_object_put(b.touched);
	return rc;
}
