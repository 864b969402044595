/* SPDX-License-Identifier: Apache-2.0 */
#include "domain/events.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "a2a/a2a.h"
#include "domain/ext.h"
#include "util/jsonx.h"

/* STORE-10 (decision-061): where a stored task snapshot keeps its task extension without
 * the defaults, in place of TH_META_TASK in the snapshot's metadata. No metadata key of
 * a Task this program builds starts with "$", so a snapshot that has this key was stored
 * lean, and one that has not was stored whole (every one before decision-061). */
#define LEAN_TASK_KEY "$task"
/* STORE-10 (decision-068): where a stored status update keeps the status extension's
 * object, in place of TH_META_STATUS in its metadata (47 bytes of key, once per status
 * update). The same rule as LEAN_TASK_KEY tells a lean row from a whole one. */
#define LEAN_STATUS_KEY "$status"

/* What the event does to streams: the state a task snapshot or a status update leaves
 * the task in (STREAM-1, STREAM-2); every other event leaves the task going. */
static enum th_event_ends ends_of(json_object *stream_response)
{
	json_object *holder = NULL, *status = NULL;
	if (!json_object_object_get_ex(stream_response, "statusUpdate", &holder) &&
	    !json_object_object_get_ex(stream_response, "task", &holder))
		return TH_ENDS_NONE;
	if (!json_object_object_get_ex(holder, "status", &status))
		return TH_ENDS_NONE;
	int s = th_state_from_json(json_object_object_get(status, "state"));
	return s < 0 ? TH_ENDS_NONE : th_event_ends_at((enum th_state)s);
}

enum th_event_ends th_event_ends_at(enum th_state s)
{
	if (th_state_terminal(s))
		return TH_ENDS_TERMINAL;
	return th_state_interrupted(s) ? TH_ENDS_INTERRUPTED : TH_ENDS_NONE;
}

/* A copy of obj whose member key holds v in place of its own (the other members shared,
 * the order kept; v taken), or NULL when out of memory. With as != NULL the member is
 * renamed as. */
static json_object *with_member(json_object *obj, const char *key, const char *as, json_object *v)
{
	json_object *out = json_object_new_object();
	int bad = out == NULL;
	json_object_object_foreach(obj, k, val)
	{
		if (bad)
			break;
		if (strcmp(k, key) == 0) {
			bad |= th_json_put(out, as != NULL ? as : k, v);
			v = NULL;
		} else {
			bad |= th_json_put_null(out, k, json_object_get(val));
		}
	}
	json_object_put(v);
	if (bad) {
		json_object_put(out);
		return NULL;
	}
	return out;
}

/* sr's task snapshot's metadata member key when it is an object (borrowed), else NULL;
 * *task and *meta (borrowed) are where it is. */
static json_object *task_ext_at(json_object *sr, const char *key, json_object **task,
                                json_object **meta)
{
	json_object *ext = NULL;
	if (!json_object_object_get_ex(sr, "task", task) ||
	    !json_object_object_get_ex(*task, "metadata", meta) ||
	    !json_object_object_get_ex(*meta, key, &ext) ||
	    !json_object_is_type(ext, json_type_object))
		return NULL;
	return ext;
}

/* sr's task snapshot's metadata member key, replaced by fn(its value) under the name as:
 * a new StreamResponse sharing the rest of sr, or NULL when sr has none (or fn gives
 * NULL, or out of memory). */
static json_object *swap_task_ext(json_object *sr, const char *key, const char *as,
                                  json_object *(*fn)(json_object *))
{
	json_object *task = NULL, *meta = NULL;
	json_object *ext = task_ext_at(sr, key, &task, &meta);
	json_object *changed = ext != NULL ? fn(ext) : NULL;
	json_object *meta2 = changed != NULL ? with_member(meta, key, as, changed) : NULL;
	json_object *task2 = meta2 != NULL ? with_member(task, "metadata", NULL, meta2) : NULL;
	return task2 != NULL ? with_member(sr, "task", NULL, task2) : NULL;
}

/* sr's status update's metadata member key (borrowed), or NULL; *up and *meta
 * (borrowed) are where it is. */
static json_object *status_ext_at(json_object *sr, const char *key, json_object **up,
                                  json_object **meta)
{
	json_object *ext = NULL;
	if (!json_object_object_get_ex(sr, "statusUpdate", up) ||
	    !json_object_is_type(*up, json_type_object) ||
	    !json_object_object_get_ex(*up, "metadata", meta) ||
	    !json_object_is_type(*meta, json_type_object) ||
	    !json_object_object_get_ex(*meta, key, &ext))
		return NULL;
	return ext;
}

/* sr's status update with its metadata member key renamed as: a new StreamResponse
 * sharing the rest of sr, or NULL when sr has no such member (or out of memory). */
static json_object *rename_status_ext(json_object *sr, const char *key, const char *as)
{
	json_object *up = NULL, *meta = NULL;
	json_object *ext = status_ext_at(sr, key, &up, &meta);
	json_object *meta2 = ext != NULL ? with_member(meta, key, as, json_object_get(ext)) : NULL;
	json_object *up2 = meta2 != NULL ? with_member(up, "metadata", NULL, meta2) : NULL;
	return up2 != NULL ? with_member(sr, "statusUpdate", NULL, up2) : NULL;
}

/* sr with its task snapshot's lean task extension, or its status update's status
 * extension, whole again (th_event_whole_fn): a new StreamResponse sharing the rest of
 * sr, or sr itself when it has neither; NULL when out of memory. */
static json_object *whole_event(json_object *sr)
{
	json_object *at = NULL, *meta = NULL;
	if (task_ext_at(sr, LEAN_TASK_KEY, &at, &meta) != NULL)
		return swap_task_ext(sr, LEAN_TASK_KEY, TH_META_TASK, th_ext_task_full);
	if (status_ext_at(sr, LEAN_STATUS_KEY, &at, &meta) != NULL)
		return rename_status_ext(sr, LEAN_STATUS_KEY, TH_META_STATUS);
	return json_object_get(sr); /* stored whole */
}

th_err th_events_since(struct th_store *st, const char *task_id, int64_t after, int limit,
                       struct th_event **out, size_t *n, struct th_error *e)
{
	return th_store_events_since(st, task_id, after, limit, whole_event, out, n, e);
}

th_err th_event_record(struct th_store *st, const char *task_id, const char *kind,
                       const char *channel_id, json_object *stream_response, struct th_error *e)
{
	char label[320];
	if (channel_id != NULL)
		snprintf(label, sizeof label, "channel:%s", channel_id);
	else
		snprintf(label, sizeof label, "%s", kind);
	const char *json = th_json_text(stream_response);
	if (json == NULL) /* decision-026: json-c could not allocate the text */
		return th_error_set(e, TH_ENOMEM, "out of memory writing a %.40s event", label);
	int64_t seq = 0;
	enum th_event_ends ends = channel_id != NULL ? TH_ENDS_NONE : ends_of(stream_response);
	/* STORE-10: a task snapshot is stored with its task extension lean (decision-061),
	 * a status update with its extension's key short (decision-068); th_events_since
	 * gives them back whole. Push deliveries carry the whole text. */
	json_object *lean = swap_task_ext(stream_response, TH_META_TASK, LEAN_TASK_KEY,
	                                  th_ext_task_lean); /* json_object_put */
	if (lean == NULL) /* a status update's extension under LEAN_STATUS_KEY (decision-068) */
		lean = rename_status_ext(stream_response, TH_META_STATUS, LEAN_STATUS_KEY);
	const char *stored = lean != NULL ? th_json_text(lean) : json;
	th_err rc = th_store_event_append(st, task_id, label, ends, stored != NULL ? stored : json,
	                                  &seq, e);
	json_object_put(lean);
	if (rc == TH_OK)
		rc = th_store_push_enqueue(st, task_id, seq, json, channel_id, NULL, e);
	return rc;
}
