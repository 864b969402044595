/* SPDX-License-Identifier: Apache-2.0 */
#include "domain/events.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "a2a/a2a.h"
#include "domain/access.h"
#include "domain/ext.h"
#include "util/buf.h"
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
/* STORE-10 (decision-075): inside a lean task extension, the members the snapshot's own
 * first history message gives back, left out and named by this member's letters:
 *   'g'  the goal is the texts of that message's parts that have one, joined by "\n";
 *   'n'  the name is the goal;
 *   'p'  the participants are the message's sender (its metadata.participant_id) as
 *        {"id":…,"kind":"human","role":"reporter"}, then the harness as
 *        {"id":"tiny-harness","kind":"agent","role":"assignee"} (lean: no display_name).
 * A snapshot's history never changes (its messages are references to rows that are
 * never rewritten), so the members read back as they were written whatever happens to
 * the task afterwards (a renamed task, a participant's new role). The writer leaves a
 * member out only when these rules give it back exactly; a lean extension without this
 * key keeps all three (every row before decision-075). These rules are a storage
 * format: intake's own naming rules may change, the rules here may not. */
#define FIRST_KEY "$first"

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

/* The snapshot task's first history message as a parsed object (json_object_put), or
 * NULL when it has none. A history read from the log holds the stored texts (th_json_raw,
 * typed string); one built in memory holds objects. */
static json_object *first_message(json_object *task)
{
	json_object *hist = NULL;
	if (!json_object_object_get_ex(task, "history", &hist) ||
	    !json_object_is_type(hist, json_type_array) || json_object_array_length(hist) == 0)
		return NULL;
	json_object *m = json_object_array_get_idx(hist, 0);
	if (json_object_is_type(m, json_type_object))
		return json_object_get(m);
	json_object *parsed = json_object_is_type(m, json_type_string)
	                          ? json_tokener_parse(json_object_get_string(m))
	                          : NULL;
	if (parsed != NULL && !json_object_is_type(parsed, json_type_object)) {
		json_object_put(parsed);
		parsed = NULL;
	}
	return parsed;
}

/* FIRST_KEY's 'g': the texts of msg's parts that have one, joined by "\n", as a new JSON
 * string (json_object_put), or NULL when out of memory. */
static json_object *goal_of(json_object *msg)
{
	struct th_buf b;
	th_buf_init(&b);
	int bad = th_buf_puts(&b, ""), any = 0;
	json_object *parts = json_object_object_get(msg, "parts");
	size_t n =
	    json_object_is_type(parts, json_type_array) ? json_object_array_length(parts) : 0;
	for (size_t i = 0; i < n; i++) {
		json_object *t = NULL;
		if (!json_object_object_get_ex(json_object_array_get_idx(parts, i), "text", &t) ||
		    !json_object_is_type(t, json_type_string))
			continue;
		if (any++)
			bad |= th_buf_append(&b, "\n", 1);
		bad |= th_buf_append(&b, json_object_get_string(t),
		                     (size_t)json_object_get_string_len(t));
	}
	json_object *v = bad ? NULL : json_object_new_string_len(b.data, (int)b.len);
	th_buf_free(&b);
	return v;
}

/* FIRST_KEY's 'p': msg's sender as the human reporter, then the harness as the agent
 * assignee, in the lean form (json_object_put); NULL when msg names no sender (or out of
 * memory). */
static json_object *participants_of(json_object *msg)
{
	const char *sender = th_json_str(json_object_object_get(msg, "metadata"), "participant_id");
	if (sender == NULL)
		return NULL;
	const char *const rows[2][3] = {{sender, "human", "reporter"},
	                                {TH_AGENT_ID, "agent", "assignee"}};
	json_object *arr = json_object_new_array();
	int bad = arr == NULL;
	for (size_t i = 0; !bad && i < 2; i++) {
		json_object *p = json_object_new_object();
		bad |= th_json_put(p, "id", json_object_new_string(rows[i][0]));
		bad |= th_json_put(p, "kind", json_object_new_string(rows[i][1]));
		bad |= th_json_put(p, "role", json_object_new_string(rows[i][2]));
		bad |= th_json_push(arr, p);
	}
	if (bad) {
		json_object_put(arr);
		return NULL;
	}
	return arr;
}

/* 1 when a and b are both present and serialise to the same text. */
static int same_text(json_object *a, json_object *b)
{
	const char *ta = a != NULL ? th_json_text(a) : NULL;
	const char *tb = b != NULL ? th_json_text(b) : NULL;
	return ta != NULL && tb != NULL && strcmp(ta, tb) == 0;
}

/* 1 when a and b are JSON strings with the same bytes (NULs included). */
static int same_string(json_object *a, json_object *b)
{
	if (!json_object_is_type(a, json_type_string) || !json_object_is_type(b, json_type_string))
		return 0;
	int n = json_object_get_string_len(a);
	return n == json_object_get_string_len(b) &&
	       memcmp(json_object_get_string(a), json_object_get_string(b), (size_t)n) == 0;
}

/* The lean task extension of a snapshot (th_ext_task_lean), without the members its
 * first history message gives back (FIRST_KEY); new object or NULL. */
static json_object *task_ext_lean(json_object *ext, json_object *task)
{
	json_object *lean = th_ext_task_lean(ext);
	json_object *first = lean != NULL ? first_message(task) : NULL;
	if (first == NULL)
		return lean;
	json_object *goal = json_object_object_get(lean, "goal");
	json_object *derived_goal = goal_of(first);
	json_object *derived_ps = participants_of(first);
	char flags[4];
	size_t nf = 0;
	if (same_string(goal, derived_goal))
		flags[nf++] = 'g';
	if (same_string(json_object_object_get(lean, "name"), goal))
		flags[nf++] = 'n';
	if (same_text(json_object_object_get(lean, "participants"), derived_ps))
		flags[nf++] = 'p';
	flags[nf] = '\0';
	json_object_put(derived_goal);
	json_object_put(derived_ps);
	json_object_put(first);
	/* Out of memory for the marker: the extension stays as decision-061 stores it. */
	if (nf == 0 || th_json_put(lean, FIRST_KEY, json_object_new_string(flags)) != 0)
		return lean;
	if (strchr(flags, 'g') != NULL)
		json_object_object_del(lean, "goal");
	if (strchr(flags, 'n') != NULL)
		json_object_object_del(lean, "name");
	if (strchr(flags, 'p') != NULL)
		json_object_object_del(lean, "participants");
	return lean;
}

/* lean's members (but FIRST_KEY) and those FIRST_KEY's letters name, made from the
 * snapshot's first history message: a new object, or NULL when out of memory. */
static json_object *with_first(json_object *lean, const char *flags, json_object *task)
{
	json_object *out = json_object_new_object();
	int bad = out == NULL;
	json_object_object_foreach(lean, k, v)
	{
		if (!bad && strcmp(k, FIRST_KEY) != 0)
			bad |= th_json_put_null(out, k, json_object_get(v));
	}
	json_object *first = bad ? NULL : first_message(task);
	if (first != NULL && strchr(flags, 'g') != NULL) {
		json_object *g = goal_of(first);
		bad |= g == NULL ? -1 : th_json_put(out, "goal", g);
	}
	json_object *goal = json_object_object_get(out, "goal");
	if (first != NULL && !bad && strchr(flags, 'n') != NULL && goal != NULL)
		bad |= th_json_put(out, "name", json_object_get(goal));
	if (first != NULL && !bad && strchr(flags, 'p') != NULL) {
		json_object *ps = participants_of(first);
		bad |= ps == NULL ? -1 : th_json_put(out, "participants", ps);
	}
	json_object_put(first);
	if (bad) {
		json_object_put(out);
		return NULL;
	}
	return out;
}

/* A stored lean task extension whole again: FIRST_KEY's members put back, then the
 * defaults (th_ext_task_full). New object or NULL. */
static json_object *task_ext_full(json_object *lean, json_object *task)
{
	json_object *flags = NULL;
	if (!json_object_object_get_ex(lean, FIRST_KEY, &flags) ||
	    !json_object_is_type(flags, json_type_string))
		return th_ext_task_full(lean);
	json_object *given = with_first(lean, json_object_get_string(flags), task);
	json_object *out = given != NULL ? th_ext_task_full(given) : NULL;
	json_object_put(given);
	return out;
}

/* sr with obj (its member outer, whose metadata is meta) rebuilt around changed, which
 * takes meta's member key under the name as (changed consumed): a new StreamResponse
 * sharing the rest of sr, or NULL when changed is NULL (or out of memory). */
static json_object *with_ext(json_object *sr, const char *outer, json_object *obj,
                             json_object *meta, const char *key, const char *as,
                             json_object *changed)
{
	json_object *meta2 = changed != NULL ? with_member(meta, key, as, changed) : NULL;
	json_object *obj2 = meta2 != NULL ? with_member(obj, "metadata", NULL, meta2) : NULL;
	return obj2 != NULL ? with_member(sr, outer, NULL, obj2) : NULL;
}

/* sr's task snapshot's metadata member key, replaced by fn(its value, the snapshot) under
 * the name as:
 * a new StreamResponse sharing the rest of sr, or NULL when sr has none (or fn gives
 * NULL, or out of memory). */
static json_object *swap_task_ext(json_object *sr, const char *key, const char *as,
                                  json_object *(*fn)(json_object *, json_object *))
{
	json_object *task = NULL, *meta = NULL;
	json_object *ext = task_ext_at(sr, key, &task, &meta);
	return with_ext(sr, "task", task, meta, key, as, ext != NULL ? fn(ext, task) : NULL);
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

/* decision-075: a status extension that says no more than its sub-state (an object with
 * only "sub_state", a string) is stored as that string under LEAN_STATUS_KEY; any other
 * object as it is. A new reference, or NULL when ext is no object (then stored whole). */
static json_object *status_ext_lean(json_object *ext)
{
	if (!json_object_is_type(ext, json_type_object))
		return NULL;
	json_object *sub = NULL;
	if (json_object_object_length(ext) == 1 &&
	    json_object_object_get_ex(ext, "sub_state", &sub) &&
	    json_object_is_type(sub, json_type_string))
		return json_object_get(sub);
	return json_object_get(ext);
}

/* A stored status extension whole again: a string is {"sub_state": it} (decision-075),
 * an object is as stored (decision-068). New reference, or NULL when out of memory. */
static json_object *status_ext_full(json_object *lean)
{
	if (!json_object_is_type(lean, json_type_string))
		return json_object_get(lean);
	json_object *ext = json_object_new_object();
	if (th_json_put(ext, "sub_state", json_object_get(lean)) != 0) {
		json_object_put(ext);
		return NULL;
	}
	return ext;
}

/* sr's status update with its metadata member key renamed as and its value fn(value): a
 * new StreamResponse sharing the rest of sr, or NULL when sr has no such member (or fn
 * gives NULL, or out of memory). */
static json_object *rename_status_ext(json_object *sr, const char *key, const char *as,
                                      json_object *(*fn)(json_object *))
{
	json_object *up = NULL, *meta = NULL;
	json_object *ext = status_ext_at(sr, key, &up, &meta);
	return with_ext(sr, "statusUpdate", up, meta, key, as, ext != NULL ? fn(ext) : NULL);
}

/* sr with its task snapshot's lean task extension, or its status update's status
 * extension, whole again (th_event_whole_fn): a new StreamResponse sharing the rest of
 * sr, or sr itself when it has neither; NULL when out of memory. */
static json_object *whole_event(json_object *sr)
{
	json_object *at = NULL, *meta = NULL;
	if (task_ext_at(sr, LEAN_TASK_KEY, &at, &meta) != NULL)
		return swap_task_ext(sr, LEAN_TASK_KEY, TH_META_TASK, task_ext_full);
	if (status_ext_at(sr, LEAN_STATUS_KEY, &at, &meta) != NULL)
		return rename_status_ext(sr, LEAN_STATUS_KEY, TH_META_STATUS, status_ext_full);
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
	int64_t seq = 0;
	enum th_event_ends ends = channel_id != NULL ? TH_ENDS_NONE : ends_of(stream_response);
	/* STORE-10: a task snapshot is stored with its task extension lean (decision-061),
	 * a status update with its extension's key short (decision-068); th_events_since
	 * gives them back whole. */
	json_object *lean = swap_task_ext(stream_response, TH_META_TASK, LEAN_TASK_KEY,
	                                  task_ext_lean); /* json_object_put */
	if (lean == NULL) /* a status update's extension under LEAN_STATUS_KEY (decision-068) */
		lean = rename_status_ext(stream_response, TH_META_STATUS, LEAN_STATUS_KEY,
		                         status_ext_lean);
	th_err rc = th_store_event_append(st, task_id, label, ends,
	                                  lean != NULL ? lean : stream_response, &seq, e);
	json_object_put(lean);
	if (rc == TH_OK)
		rc = th_store_push_enqueue(st, task_id, seq, stream_response, channel_id, NULL, e);
	return rc;
}
