/* SPDX-License-Identifier: Apache-2.0 */
/* encode.c — the ProtoJSON objects the server sends (A2A 1.0 §2). Every builder returns
 * NULL when memory runs out, having released whatever it was given ownership of, so a
 * caller can pass its arguments and check one result. */
#include "a2a/a2a.h"

#include <string.h>

#include "util/ids.h"
#include "util/jsonx.h"

/* Adds a string unless s is NULL or "" (ProtoJSON omits default strings). */
static int add_str(json_object *o, const char *key, const char *s)
{
	if (s == NULL || *s == '\0')
		return 0;
	return th_json_put(o, key, json_object_new_string(s));
}

json_object *th_a2a_text_part(const char *text)
{
	json_object *p = json_object_new_object();
	if (p == NULL)
		return NULL;
	if (th_json_put(p, "text", json_object_new_string(text != NULL ? text : "")) != 0) {
		json_object_put(p);
		return NULL;
	}
	return p;
}

json_object *th_a2a_data_part(json_object *value, const char *media_type)
{
	json_object *p = json_object_new_object();
	if (p == NULL) {
		json_object_put(value);
		return NULL;
	}
	/* json-c stores a NULL value as JSON null, which is a valid google.protobuf.Value. */
	if (json_object_object_add(p, "data", value) != 0) {
		json_object_put(value);
		json_object_put(p);
		return NULL;
	}
	if (add_str(p, "mediaType", media_type) != 0) {
		json_object_put(p);
		return NULL;
	}
	return p;
}

json_object *th_a2a_agent_message(const char *context_id, const char *task_id, json_object *parts,
                                  json_object *metadata)
{
	json_object *m = json_object_new_object();
	char id[TH_UUID_LEN + 1];
	th_uuid(id);
	if (m == NULL || th_json_put(m, "messageId", json_object_new_string(id)) != 0 ||
	    th_json_put(m, "role", json_object_new_string("ROLE_AGENT")) != 0)
		goto fail;
	json_object *p = parts != NULL ? parts : json_object_new_array();
	parts = NULL;
	if (th_json_put(m, "parts", p) != 0)
		goto fail;
	if (metadata != NULL) {
		json_object *md = metadata;
		metadata = NULL;
		if (th_json_put(m, "metadata", md) != 0)
			goto fail;
	}
	/* The ids last, where the store puts them back when it reads a history message
	 * (STORE-10), so a message reads back byte for byte as it was built. */
	if (add_str(m, "taskId", task_id) != 0 || add_str(m, "contextId", context_id) != 0)
		goto fail;
	return m;
fail:
	json_object_put(parts);
	json_object_put(metadata);
	json_object_put(m);
	return NULL;
}

json_object *th_a2a_status(enum th_state state, json_object *message, int64_t ts_ms)
{
	json_object *s = json_object_new_object();
	if (s == NULL || th_json_put(s, "state", json_object_new_string(th_state_name(state))) != 0)
		goto fail;
	if (message != NULL) {
		json_object *m = message;
		message = NULL;
		if (th_json_put(s, "message", m) != 0)
			goto fail;
	}
	if (ts_ms >= 0) {
		char ts[TH_TS_LEN + 1];
		th_ts_format(ts_ms, ts);
		if (th_json_put(s, "timestamp", json_object_new_string(ts)) != 0)
			goto fail;
	}
	return s;
fail:
	json_object_put(message);
	json_object_put(s);
	return NULL;
}

/* An owned optional member: adds it unless NULL (or, for repeated fields, empty, as
 * ProtoJSON omits empty lists), and always consumes it. */
static int add_owned(json_object *o, const char *key, json_object *v)
{
	if (v == NULL)
		return 0;
	if (json_object_is_type(v, json_type_array) && json_object_array_length(v) == 0) {
		json_object_put(v);
		return 0;
	}
	return th_json_put(o, key, v);
}

json_object *th_a2a_task(const char *id, const char *context_id, json_object *status,
                         json_object *history, json_object *artifacts, json_object *metadata)
{
	json_object *t = json_object_new_object();
	if (t == NULL)
		goto fail;
	if (th_json_put(t, "id", json_object_new_string(id != NULL ? id : "")) != 0 ||
	    add_str(t, "contextId", context_id) != 0)
		goto fail;
	/* Keys are added in wire order; each add consumes its value whatever happens. */
	json_object *v;
	v = status, status = NULL;
	if (th_json_put(t, "status", v) != 0)
		goto fail;
	v = artifacts, artifacts = NULL;
	if (add_owned(t, "artifacts", v) != 0)
		goto fail;
	v = history, history = NULL;
	if (add_owned(t, "history", v) != 0)
		goto fail;
	v = metadata, metadata = NULL;
	if (add_owned(t, "metadata", v) != 0)
		goto fail;
	return t;
fail:
	json_object_put(status);
	json_object_put(history);
	json_object_put(artifacts);
	json_object_put(metadata);
	json_object_put(t);
	return NULL;
}

json_object *th_a2a_status_update(const char *task_id, const char *context_id, json_object *status,
                                  json_object *metadata)
{
	json_object *u = json_object_new_object();
	if (u == NULL ||
	    th_json_put(u, "taskId", json_object_new_string(task_id != NULL ? task_id : "")) != 0 ||
	    th_json_put(u, "contextId",
	                json_object_new_string(context_id != NULL ? context_id : "")) != 0)
		goto fail;
	json_object *v;
	v = status, status = NULL;
	if (th_json_put(u, "status", v) != 0)
		goto fail;
	v = metadata, metadata = NULL;
	if (add_owned(u, "metadata", v) != 0)
		goto fail;
	return u;
fail:
	json_object_put(status);
	json_object_put(metadata);
	json_object_put(u);
	return NULL;
}

json_object *th_a2a_artifact_update(const char *task_id, const char *context_id,
                                    json_object *artifact, int append, int last_chunk)
{
	json_object *u = json_object_new_object();
	if (u == NULL ||
	    th_json_put(u, "taskId", json_object_new_string(task_id != NULL ? task_id : "")) != 0 ||
	    th_json_put(u, "contextId",
	                json_object_new_string(context_id != NULL ? context_id : "")) != 0)
		goto fail;
	json_object *v = artifact;
	artifact = NULL;
	if (th_json_put(u, "artifact", v) != 0)
		goto fail;
	/* Implicit-presence booleans: false is the default and is omitted. */
	if (append && th_json_put(u, "append", json_object_new_boolean(1)) != 0)
		goto fail;
	if (last_chunk && th_json_put(u, "lastChunk", json_object_new_boolean(1)) != 0)
		goto fail;
	return u;
fail:
	json_object_put(artifact);
	json_object_put(u);
	return NULL;
}

json_object *th_a2a_stream_response(const char *member, json_object *value)
{
	json_object *r = json_object_new_object();
	if (r == NULL || member == NULL || th_json_put(r, member, value) != 0) {
		if (r == NULL || member == NULL)
			json_object_put(value);
		json_object_put(r);
		return NULL;
	}
	return r;
}

json_object *th_a2a_list_response(json_object *tasks, const char *next_page_token, int page_size,
                                  int total_size)
{
	json_object *r = json_object_new_object();
	if (r == NULL ||
	    th_json_put(r, "nextPageToken",
	                json_object_new_string(next_page_token != NULL ? next_page_token : "")) !=
	        0 ||
	    th_json_put(r, "pageSize", json_object_new_int(page_size)) != 0 ||
	    th_json_put(r, "totalSize", json_object_new_int(total_size)) != 0)
		goto fail;
	json_object *v = tasks != NULL ? tasks : json_object_new_array();
	tasks = NULL;
	if (th_json_put(r, "tasks", v) != 0)
		goto fail;
	return r;
fail:
	json_object_put(tasks);
	json_object_put(r);
	return NULL;
}

void th_a2a_trim_history(json_object *history, int n)
{
	if (history == NULL || n < 0 || !json_object_is_type(history, json_type_array))
		return;
	size_t len = json_object_array_length(history);
	if ((size_t)n >= len)
		return;
	json_object_array_del_idx(history, 0, len - (size_t)n);
}
