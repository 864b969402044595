/* SPDX-License-Identifier: Apache-2.0 */
#include "domain/inbound.h"

#include <string.h>

#include "a2ui/a2ui.h"
#include "domain/ext.h"
#include "util/jsonx.h"

/* A control envelope is {kind: "control", action: "complete"} exactly (CTL-1). 0, or -1
 * with e naming part i's field. */
static int read_control(json_object *v, size_t i, struct th_error *e)
{
	static const char *const keys[] = {"kind", "action", NULL};
	const char *bad = th_json_unknown_key(v, keys);
	if (bad != NULL) {
		th_error_set(
		    e, TH_EINVAL,
		    "message.parts[%zu].data: a control envelope has only kind and action; "
		    "'%.100s' is not allowed",
		    i, bad);
		return -1;
	}
	const char *action = th_json_str(v, "action");
	if (action == NULL) {
		th_error_set(e, TH_EINVAL,
		             "message.parts[%zu].data.action is required (\"complete\")", i);
		return -1;
	}
	if (strcmp(action, "complete") != 0) {
		th_error_set(
		    e, TH_EINVAL,
		    "message.parts[%zu].data.action '%.100s' is unknown; the only action is "
		    "\"complete\"",
		    i, action);
		return -1;
	}
	return 0;
}

/* A task envelope is {kind: "task", payload: {…}} exactly, once a message (TASK-3). 0,
 * or -1 with e naming part i's field. */
static int read_task(json_object *v, size_t i, struct th_inbound *out, struct th_error *e)
{
	static const char *const keys[] = {"kind", "payload", NULL};
	const char *bad = th_json_unknown_key(v, keys);
	if (bad != NULL) {
		th_error_set(e, TH_EINVAL,
		             "message.parts[%zu].data: a task envelope has only kind and payload; "
		             "'%.100s' is not allowed",
		             i, bad);
		return -1;
	}
	json_object *pl = json_object_object_get(v, "payload");
	if (pl == NULL || !json_object_is_type(pl, json_type_object)) {
		th_error_set(
		    e, TH_EINVAL,
		    "message.parts[%zu].data.payload is required and must be an object (the "
		    "task attributes)",
		    i);
		return -1;
	}
	if (out->payload != NULL) {
		th_error_set(e, TH_EINVAL, "a message carries at most one task envelope");
		return -1;
	}
	out->payload = pl;
	return 0;
}

/* An event envelope (a data part of TH_MT_EVENT): the kinds a client may send are task
 * and control. 0, or -1 with e set. */
static int read_envelope(json_object *v, size_t i, struct th_inbound *out, struct th_error *e)
{
	if (!json_object_is_type(v, json_type_object)) {
		th_error_set(e, TH_EINVAL,
		             "message.parts[%zu].data: an event envelope must be an object", i);
		return -1;
	}
	const char *kind = th_json_str(v, "kind");
	if (kind == NULL) {
		th_error_set(e, TH_EINVAL,
		             "message.parts[%zu].data.kind is required (a string: task or control)",
		             i);
		return -1;
	}
	if (strcmp(kind, "control") == 0) {
		out->control++;
		return read_control(v, i, e);
	}
	if (strcmp(kind, "task") == 0)
		return read_task(v, i, out, e);
	th_error_set(e, TH_EINVAL,
	             "message.parts[%zu].data.kind '%.100s' is not an envelope kind a client may "
	             "send (task or control)",
	             i, kind);
	return -1;
}

/* Part p's line of th_inbound_read's words. */
static void put_words(struct th_buf *b, json_object *p)
{
	const char *t = th_json_str(p, "text");
	const char *mt = th_json_str(p, "mediaType");
	if (t == NULL && mt != NULL && strcmp(mt, TH_MT_CHANNEL) == 0)
		t = th_json_str(json_object_object_get(p, "data"), "text");
	if (b->len > 0)
		th_buf_puts(b, "\n");
	if (t != NULL)
		th_buf_puts(b, t);
	else
		th_buf_printf(b, "[%s part]", mt ? mt : "non-text");
}

int th_inbound_read(json_object *msg, const char *sender, const struct th_limits *lim,
                    struct th_inbound *out, struct th_buf *words, struct th_error *e)
{
	memset(out, 0, sizeof *out);
	json_object *parts = json_object_object_get(msg, "parts");
	size_t n = json_object_array_length(parts);
	out->nparts = n;
	for (size_t i = 0; i < n; i++) {
		json_object *p = json_object_array_get_idx(parts, i), *data = NULL;
		if (words != NULL)
			put_words(words, p);
		const char *text = th_json_str(p, "text");
		if (text != NULL) {
			if (out->text == NULL)
				out->text = text;
			continue;
		}
		if (th_a2ui_is_part(p)) {
			out->a2ui++;
			continue;
		}
		const char *mt = th_json_str(p, "mediaType");
		if (mt == NULL || !json_object_object_get_ex(p, "data", &data))
			continue;
		int rc = 0;
		if (strcmp(mt, TH_MT_EVENT) == 0) {
			rc = read_envelope(data, i, out, e);
		} else if (strcmp(mt, TH_MT_CHANNEL) == 0) {
			if (out->has_channel++) {
				th_error_set(e, TH_EINVAL,
				             "a message carries at most one channel part");
				return -1;
			}
			rc = th_channel_part_read(data, i, sender, lim, &out->channel, e);
		}
		if (rc != 0)
			return -1;
	}
	if (out->control > 0 && n != 1) {
		th_error_set(
		    e, TH_EINVAL,
		    "a control envelope must be the only part of its message; this message "
		    "has %zu parts",
		    n);
		return -1;
	}
	out->control = out->control > 0;
	return 0;
}
