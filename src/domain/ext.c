/* SPDX-License-Identifier: Apache-2.0 */
#include "domain/ext.h"

#include <string.h>

#include "util/jsonx.h"

static const char *const uris[TH_EXT_COUNT] = {
    TH_EXT_URI_TASK, TH_EXT_URI_CHANNEL, TH_EXT_URI_STATUS, TH_EXT_URI_COMMANDS, TH_EXT_URI_A2UI,
};

const char *th_ext_uri(int i)
{
	return i >= 0 && i < TH_EXT_COUNT ? uris[i] : NULL;
}

static int lookup(const char *s, size_t n)
{
	for (int i = 0; i < TH_EXT_COUNT; i++)
		if (strlen(uris[i]) == n && memcmp(uris[i], s, n) == 0)
			return i;
	return -1;
}

th_err th_ext_parse(const char *hdr, unsigned *bits, struct th_error *e)
{
	*bits = 0;
	if (hdr == NULL)
		return TH_OK;
	struct th_buf unknown;
	th_buf_init(&unknown);
	const char *p = hdr;
	while (*p != '\0') {
		const char *end = strchr(p, ',');
		if (end == NULL)
			end = p + strlen(p);
		const char *a = p, *b = end;
		while (a < b && (*a == ' ' || *a == '\t'))
			a++;
		while (b > a && (b[-1] == ' ' || b[-1] == '\t'))
			b--;
		if (b > a) {
			int i = lookup(a, (size_t)(b - a));
			if (i >= 0) {
				*bits |= 1u << i;
			} else {
				/* Name each unknown URI once, in the order the client sent them. */
				size_t n = (size_t)(b - a);
				int seen = 0;
				for (const char *q = unknown.data; q != NULL && *q != '\0';) {
					const char *qe = strstr(q, ", ");
					size_t qn = qe ? (size_t)(qe - q) : strlen(q);
					if (qn == n && memcmp(q, a, n) == 0)
						seen = 1;
					q = qe ? qe + 2 : q + qn;
				}
				if (!seen) {
					if (unknown.len > 0)
						th_buf_puts(&unknown, ", ");
					th_buf_append(&unknown, a, n);
				}
			}
		}
		p = *end == ',' ? end + 1 : end;
	}
	th_err rc = TH_OK;
	if (unknown.oom)
		rc = th_error_set(e, TH_ENOMEM, "out of memory");
	else if (unknown.len > 0)
		rc = th_error_set(e, TH_EUNSUPPORTED,
		                  "unsupported A2A extension(s): %s; this agent supports only the "
		                  "extensions its card lists",
		                  unknown.data);
	th_buf_free(&unknown);
	if (rc != TH_OK)
		*bits = 0;
	return rc;
}

void th_ext_format(unsigned bits, struct th_buf *out)
{
	for (int i = 0; i < TH_EXT_COUNT; i++) {
		if (!(bits & (1u << i)))
			continue;
		if (out->len > 0)
			th_buf_puts(out, ",");
		th_buf_puts(out, uris[i]);
	}
}

/* ---- the task extension without its defaults (STORE-10, decision-061) ---------------- */

/* A member of an object in wire order, and the JSON text of its default (NULL: none, the
 * member is always kept). */
struct member {
	const char *key;
	const char *dflt;
};

static const struct member task_members[] = {
    {"name", NULL},
    {"goal", NULL},
    {"type", "null"},
    {"description", "\"\""},
    {"acceptance_criteria", "[]"},
    {"participants", NULL},
    {"parent_tasks", "[]"},
    {"sub_tasks", "[]"},
    {"plan", "null"},
};
static const struct member participant_members[] = {
    {"id", NULL},
    {"kind", NULL},
    {"role", NULL},
    {"display_name", "\"\""},
};
#define N_OF(a) (sizeof(a) / sizeof((a)[0]))

/* The member key among m[0..n), or NULL. */
static const struct member *member_of(const struct member *m, size_t n, const char *key)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(m[i].key, key) == 0)
			return &m[i];
	return NULL;
}

/* A new value of a default's text (null is NULL; *bad set when out of memory). */
static json_object *default_of(const char *dflt, int *bad)
{
	if (strcmp(dflt, "null") == 0)
		return NULL;
	json_object *v =
	    strcmp(dflt, "[]") == 0 ? json_object_new_array() : json_object_new_string("");
	*bad |= v == NULL;
	return v;
}

/* 1 when v is the value a default's text names: null, "" or []. */
static int is_default(json_object *v, const char *dflt)
{
	if (strcmp(dflt, "null") == 0)
		return v == NULL;
	if (strcmp(dflt, "[]") == 0)
		return json_object_is_type(v, json_type_array) && json_object_array_length(v) == 0;
	return json_object_is_type(v, json_type_string) && json_object_get_string_len(v) == 0;
}

/* 1 when obj (an object) has every member of m, in m's order, before any other: then
 * full_of(lean_of(obj)) is obj again, member for member. */
static int in_wire_order(json_object *obj, const struct member *m, size_t n)
{
	size_t next = 0;
	json_object_object_foreach(obj, k, v)
	{
		(void)v;
		if (next == n)
			continue; /* members of its own, after all of m's */
		if (strcmp(k, m[next].key) != 0)
			return 0;
		next++;
	}
	return next == n;
}

/* obj (an object) without the members of m that hold their default; participants' items
 * by participant_members. New object or NULL (out of memory). */
static json_object *lean_of(json_object *obj, const struct member *m, size_t n);

/* obj's members of m in m's order (defaults put in), then its others. New or NULL. */
static json_object *full_of(json_object *obj, const struct member *m, size_t n);

/* v's participants array (each item leaned or filled), or a new reference to v when it is
 * no array of objects to change. NULL when out of memory. */
static json_object *each_participant(json_object *v, int lean)
{
	if (!json_object_is_type(v, json_type_array))
		return json_object_get(v);
	json_object *arr = json_object_new_array();
	int bad = arr == NULL;
	for (size_t i = 0; !bad && i < json_object_array_length(v); i++) {
		json_object *p = json_object_array_get_idx(v, i);
		json_object *q = !json_object_is_type(p, json_type_object) ? json_object_get(p)
		                 : lean
		                     ? lean_of(p, participant_members, N_OF(participant_members))
		                     : full_of(p, participant_members, N_OF(participant_members));
		if (q == NULL && p != NULL)
			bad = 1; /* out of memory */
		else if (json_object_array_add(arr, q) != 0) {
			json_object_put(q);
			bad = 1;
		}
	}
	if (bad) {
		json_object_put(arr);
		return NULL;
	}
	return arr;
}

static json_object *lean_of(json_object *obj, const struct member *m, size_t n)
{
	json_object *out = json_object_new_object();
	int bad = out == NULL;
	json_object_object_foreach(obj, k, v)
	{
		const struct member *d = member_of(m, n, k);
		if (bad || (d != NULL && d->dflt != NULL && is_default(v, d->dflt)))
			continue;
		json_object *nv = m == task_members && strcmp(k, "participants") == 0
		                      ? each_participant(v, 1)
		                      : json_object_get(v);
		bad |= nv == NULL && v != NULL ? -1 : th_json_put_null(out, k, nv);
	}
	if (bad) {
		json_object_put(out);
		return NULL;
	}
	return out;
}

static json_object *full_of(json_object *obj, const struct member *m, size_t n)
{
	json_object *out = json_object_new_object();
	int bad = out == NULL;
	for (size_t i = 0; !bad && i < n; i++) {
		json_object *v = NULL;
		if (json_object_object_get_ex(obj, m[i].key, &v)) {
			json_object *nv = m == task_members && strcmp(m[i].key, "participants") == 0
			                      ? each_participant(v, 0)
			                      : json_object_get(v);
			bad |= nv == NULL && v != NULL ? -1 : th_json_put_null(out, m[i].key, nv);
		} else if (m[i].dflt != NULL) {
			json_object *dv = default_of(m[i].dflt, &bad);
			bad |= th_json_put_null(out, m[i].key, dv);
		}
	}
	json_object_object_foreach(obj, k, v)
	{
		if (!bad && member_of(m, n, k) == NULL)
			bad |= th_json_put_null(out, k, json_object_get(v));
	}
	if (bad) {
		json_object_put(out);
		return NULL;
	}
	return out;
}

json_object *th_ext_task_lean(json_object *ext)
{
	/* Only an extension that full_of gives back member for member: every member in wire
	 * order, and each participant the same (checked, not rebuilt and compared). */
	if (!json_object_is_type(ext, json_type_object) ||
	    !in_wire_order(ext, task_members, N_OF(task_members)))
		return NULL;
	json_object *ps = json_object_object_get(ext, "participants");
	if (!json_object_is_type(ps, json_type_array))
		return NULL;
	for (size_t i = 0; i < json_object_array_length(ps); i++) {
		json_object *p = json_object_array_get_idx(ps, i);
		if (!json_object_is_type(p, json_type_object) ||
		    !in_wire_order(p, participant_members, N_OF(participant_members)))
			return NULL;
	}
	return lean_of(ext, task_members, N_OF(task_members));
}

json_object *th_ext_task_full(json_object *lean)
{
	if (!json_object_is_type(lean, json_type_object))
		return json_object_get(lean);
	return full_of(lean, task_members, N_OF(task_members));
}

json_object *th_status_ext(const char *sub_state, const char *participant_id,
                           const char *request_id)
{
	json_object *o = json_object_new_object();
	int bad = th_json_put(o, "sub_state", json_object_new_string(sub_state));
	if (participant_id != NULL)
		bad |= th_json_put(o, "participant_id", json_object_new_string(participant_id));
	if (request_id != NULL)
		bad |= th_json_put(o, "request_id", json_object_new_string(request_id));
	if (bad) {
		json_object_put(o);
		return NULL; /* decision-026: the caller reports TH_ENOMEM */
	}
	return o;
}
