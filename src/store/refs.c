/* SPDX-License-Identifier: Apache-2.0 */
/* refs.c — a message's content is kept once (STORE-10, decision-047).
 *
 * A history message is stored without its taskId and contextId: they are the task's,
 * which the task row holds, and reading puts them back at the end of the object.
 * An event, or a task's status, that carries a message already in the task's history
 * keeps a reference to it instead of a copy: {"$message": pos} for one message,
 * {"$messages": [first, last]} for a history slice. An event also drops the taskId and
 * contextId (a snapshot's id and contextId) that equal its task's.
 *
 * A reference is only made when the message packs to exactly the stored text, so
 * reading it back gives the same message; anything else stays inline, as before. Rows
 * written before 009 hold whole copies and read as they are.
 *
 * A history message whose text begins with its messageId and role (the columns
 * message_id and role hold both) is stored without them (decision-061): the stored
 * object then has no top-level messageId, and reading puts
 * {"messageId": message_id, "role": role, first again. A stored object that has a
 * messageId is whole and read as it is: every row written before, and a message whose
 * members come in another order. Every message the store keeps has a messageId
 * (th_ref_msg_pack refuses one without), so the rule has no third case.
 *
 * A compact message whose last member is metadata holding only a participant_id (what
 * intake stamps on every message a participant sends, ID-1) keeps that id as its last
 * member "$pid" instead (decision-075): {"parts":[…],"$pid":"bob"} reads as
 * {"messageId":…,"role":…,"parts":[…],"metadata":{"participant_id":"bob"}}. A message's
 * top-level members are the ones the A2A decoder knows, none of which starts with "$";
 * a message that has "$pid" anyway is stored whole.
 *
 * An event's status timestamp (a task snapshot's or a status update's) that the row's
 * created_ms gives back is stored as a number, the milliseconds it is older than the row
 * (decision-068): {"timestamp": 0} for the usual case of the same millisecond. A2A's
 * timestamp is a string, so a number there is always this form; only a string that
 * th_ts_format writes back exactly (UTC, milliseconds) is stored so, others stay text. */
#include <stdlib.h>
#include <string.h>

#include "store/store.h"
#include "store/store_int.h"
#include "util/buf.h"
#include "util/ids.h"
#include "util/jsonx.h"

/* A compact message's metadata.participant_id, its last member (decision-075). */
#define PID_KEY "$pid"
#define PID_MEMBER ",\"" PID_KEY "\":"
#define META_PID ",\"metadata\":{\"participant_id\":"
#define REF_ONE "$message"
#define REF_RANGE "$messages"
/* A snapshot's history longer than this keeps its copies (one lookup per message). */
#define REF_HISTORY_MAX 64

/* text parsed as a JSON object into *out (json_object_put), or code with "<what> is not a
 * JSON object". */
static th_err parse_object(const char *text, th_err code, const char *what, json_object **out,
                           struct th_error *e)
{
	*out = json_tokener_parse(text);
	if (*out != NULL && json_object_is_type(*out, json_type_object))
		return TH_OK;
	json_object_put(*out);
	*out = NULL;
	return th_error_set(e, code, "%s is not a JSON object", what);
}

/* obj serialised as new text into *out (free). */
static th_err text_of(json_object *obj, const char *what, char **out, struct th_error *e)
{
	const char *t = th_json_text(obj);
	*out = t != NULL ? strdup(t) : NULL;
	return *out != NULL ? TH_OK : th_error_set(e, TH_ENOMEM, "out of memory (%s)", what);
}

/* A new object with obj's members in their order, each shared (json_object_get), or NULL
 * when out of memory: what the packing below changes is the copy, never obj. */
static json_object *shallow_copy(json_object *obj)
{
	json_object *c = json_object_new_object();
	if (c == NULL)
		return NULL;
	json_object_object_foreach(obj, key, val)
	{
		if (json_object_object_add_ex(c, key, json_object_get(val),
		                              JSON_C_OBJECT_ADD_KEY_IS_NEW) != 0) {
			json_object_put(val);
			json_object_put(c);
			return NULL;
		}
	}
	return c;
}

/* ---- messages ------------------------------------------------------------------------- */

/* The stored form of a parsed message: obj without taskId and contextId, as new text
 * (free) or NULL when out of memory. obj is changed. */
static char *pack_obj(json_object *obj)
{
	json_object_object_del(obj, "taskId");
	json_object_object_del(obj, "contextId");
	const char *t = th_json_text(obj);
	return t != NULL ? strdup(t) : NULL;
}

/* Appends s to b as a JSON string, as th_json_text writes it. 0, or -1 when out of
 * memory. */
static int put_string(struct th_buf *b, const char *s)
{
	/* Nothing to escape (no quote, backslash or control character; json-c writes every
	 * other byte as it is): quoted as it is, without a json-c object. */
	const unsigned char *c = (const unsigned char *)s;
	while (*c >= 0x20 && *c != '"' && *c != '\\')
		c++;
	if (*c == '\0')
		return th_buf_puts(b, "\"") | th_buf_puts(b, s) | th_buf_puts(b, "\"");
	json_object *v = json_object_new_string(s);
	if (v == NULL)
		return -1;
	int rc = th_buf_puts(b, th_json_text(v));
	json_object_put(v);
	return rc;
}

/* Appends {"messageId":<message_id>,"role":<role> (no closing brace) to b: how a whole
 * message's text begins when its first members are the two columns. 0, or -1. */
static int put_head(struct th_buf *b, const char *message_id, const char *role)
{
	int bad = th_buf_puts(b, "{\"messageId\":");
	bad |= put_string(b, message_id);
	bad |= th_buf_puts(b, ",\"role\":");
	bad |= put_string(b, role);
	return bad;
}

/* 1 when the JSON object text s has a member "messageId" at its top level: s is a whole
 * message (decision-061). A walk over s that skips strings and nested values. */
static int has_message_id(const char *s)
{
	static const char key[] = "\"messageId\"";
	const size_t kn = sizeof key - 1;
	if (strncmp(s, "{\"messageId\":", kn + 2) == 0)
		return 1; /* the usual order: no walk */
	int depth = 0, at_key = 0;
	for (const char *p = s; *p != '\0'; p++) {
		if (*p == '"') {
			const char *q = p + 1;
			while (*q != '\0' && *q != '"')
				q += q[0] == '\\' && q[1] != '\0' ? 2 : 1;
			if (at_key && (size_t)(q + 1 - p) == kn && memcmp(p, key, kn) == 0)
				return 1;
			at_key = 0;
			if (*q == '\0')
				return 0;
			p = q;
		} else if (*p == '{' || *p == '[') {
			depth++;
			at_key = depth == 1;
		} else if (*p == '}' || *p == ']') {
			depth--;
		} else if (*p == ',' && depth == 1) {
			at_key = 1;
		}
	}
	return 0;
}

/* obj's metadata.participant_id (borrowed) when metadata is obj's last member and holds
 * nothing else, or NULL. */
static const char *last_meta_pid(json_object *obj)
{
	const char *last = NULL;
	json_object *meta = NULL;
	json_object_object_foreach(obj, k, v)
	{
		last = k;
		meta = v;
	}
	json_object *pid = NULL;
	if (last == NULL || strcmp(last, "metadata") != 0 ||
	    !json_object_is_type(meta, json_type_object) || json_object_object_length(meta) != 1 ||
	    !json_object_object_get_ex(meta, "participant_id", &pid) ||
	    !json_object_is_type(pid, json_type_string))
		return NULL;
	return json_object_get_string(pid);
}

/* decision-075: a compact text that ends with the metadata holding only pid ends with
 * PID_MEMBER pid instead (in place: the text gets shorter). 0, or -1 when out of memory. */
static int lean_pid(char *text, const char *pid)
{
	struct th_buf tail, by;
	th_buf_init(&tail);
	th_buf_init(&by);
	int bad = th_buf_puts(&tail, META_PID) | put_string(&tail, pid) | th_buf_puts(&tail, "}}");
	bad |= th_buf_puts(&by, PID_MEMBER) | put_string(&by, pid) | th_buf_puts(&by, "}");
	size_t n = strlen(text);
	if (!bad && n > tail.len && strcmp(text + n - tail.len, tail.data) == 0)
		memcpy(text + n - tail.len, by.data, by.len + 1);
	th_buf_free(&tail);
	th_buf_free(&by);
	return bad ? -1 : 0;
}

th_err th_ref_msg_pack(json_object *msg, const char *message_id, const char *role, char **out,
                       struct th_error *e)
{
	*out = NULL;
	if (!json_object_is_type(msg, json_type_object))
		return th_error_set(e, TH_EINVAL, "message to store is not a JSON object");
	if (!json_object_object_get_ex(msg, "messageId", NULL))
		return th_error_set(e, TH_EINVAL, "message %s to store has no messageId",
		                    message_id);
	json_object *obj = shallow_copy(msg); /* json_object_put; msg stays as it is */
	if (obj == NULL)
		return th_error_set(e, TH_ENOMEM, "out of memory (message)");
	json_object_object_del(obj, "taskId"); /* pack_obj's, before the last member is read */
	json_object_object_del(obj, "contextId");
	/* A message with a member of PID_KEY's name is kept whole: nothing to mistake. */
	int plain = !json_object_object_get_ex(obj, PID_KEY, NULL);
	const char *p = plain ? last_meta_pid(obj) : NULL;
	char *pid = p != NULL ? strdup(p) : NULL; /* free */
	char *text = pack_obj(obj);               /* free, or the caller's */
	json_object_put(obj);
	if (text == NULL || (p != NULL && pid == NULL)) {
		free(text);
		free(pid);
		return th_error_set(e, TH_ENOMEM, "out of memory (message)");
	}
	/* decision-061: "{" + what follows the two columns' members, when the text begins
	 * with exactly them and has more. */
	struct th_buf head;
	th_buf_init(&head);
	int bad = put_head(&head, message_id, role) | th_buf_puts(&head, ",");
	if (!bad && plain && strncmp(text, head.data, head.len) == 0 && text[head.len] != '\0') {
		memmove(text + 1, text + head.len, strlen(text + head.len) + 1);
		if (pid != NULL)
			bad |= lean_pid(text, pid);
	}
	th_buf_free(&head);
	free(pid);
	if (bad) {
		free(text);
		return th_error_set(e, TH_ENOMEM, "out of memory (message)");
	}
	*out = text;
	return TH_OK;
}

/* Where a compact text's last member PID_MEMBER "…" starts in s[0, body) (body: the
 * index of its closing brace), or 0 when it has none: the last PID_MEMBER followed by
 * exactly one JSON string that ends at body. A '"' after ',' is never inside a string,
 * so the member found is one; a nested one is followed by more than its string. */
static size_t pid_at(const char *s, size_t body)
{
	static const char member[] = PID_MEMBER "\"";
	const size_t mn = sizeof member - 1;
	size_t at = 0;
	for (const char *f = strstr(s, member); f != NULL && (size_t)(f - s) + mn <= body;
	     f = strstr(f + 1, member))
		at = (size_t)(f - s);
	if (at == 0)
		return 0;
	size_t i = at + mn;
	while (i < body && s[i] != '"')
		i += s[i] == '\\' && i + 1 < body ? 2 : 1;
	return i + 1 == body ? at : 0;
}

char *th_ref_msg_unpack(const char *stored, const char *message_id, const char *role,
                        const char *task_id, const char *context_id)
{
	size_t n = strlen(stored);
	while (n > 0 && stored[n - 1] != '}')
		n--;
	if (n == 0 || stored[0] != '{')
		return strdup(stored); /* not an object: nothing this file wrote */
	size_t body = n - 1;           /* up to the closing brace */
	int empty = 1;                 /* "{" then only white space */
	for (size_t i = 1; i < body; i++)
		if (stored[i] != ' ' && stored[i] != '\n' && stored[i] != '\t' && stored[i] != '\r')
			empty = 0;
	int compact = message_id != NULL && role != NULL && !has_message_id(stored);
	size_t pid = compact ? pid_at(stored, body) : 0;
	struct th_buf b;
	th_buf_init(&b);
	int bad = 0;
	if (compact) {
		bad |= put_head(&b, message_id, role);
		if (!empty)
			bad |= th_buf_puts(&b, ",");
		bad |= th_buf_append(&b, stored + 1, (pid > 0 ? pid : body) - 1);
		if (pid > 0) { /* decision-075: the metadata again */
			bad |= th_buf_puts(&b, META_PID);
			bad |= th_buf_append(&b, stored + pid + strlen(PID_MEMBER),
			                     body - pid - strlen(PID_MEMBER));
			bad |= th_buf_puts(&b, "}");
		}
		empty = 0;
	} else {
		bad |= th_buf_append(&b, stored, body);
	}
	if (task_id != NULL && context_id != NULL) {
		bad |= th_buf_puts(&b, empty ? "\"taskId\":" : ",\"taskId\":");
		bad |= put_string(&b, task_id);
		bad |= th_buf_puts(&b, ",\"contextId\":");
		bad |= put_string(&b, context_id);
	}
	bad |= th_buf_puts(&b, "}");
	if (bad) {
		th_buf_free(&b);
		return NULL;
	}
	return th_buf_take(&b);
}

/* ---- lookups ---------------------------------------------------------------------------- */

struct stored_msg {
	int64_t pos;
	char *json;       /* free (th_row_free) */
	char *message_id; /* free (th_row_free) */
	char *role;       /* free (th_row_free) */
};
static const struct th_col stored_cols[] = {
    TH_COL_I64(struct stored_msg, pos),
    TH_COL_TEXT(struct stored_msg, json),
    TH_COL_TEXT(struct stored_msg, message_id),
    TH_COL_TEXT(struct stored_msg, role),
};
static const struct th_row_def stored_row = TH_ROW_DEF(struct stored_msg, stored_cols);

/* 1 when the stored history row m, read back (th_ref_msg_unpack), is exactly full. */
static int reads_as(const struct stored_msg *m, const char *task_id, const char *context_id,
                    const char *full)
{
	if (m->json == NULL || full == NULL || context_id == NULL)
		return 0;
	char *back = th_ref_msg_unpack(m->json, m->message_id, m->role, task_id, context_id);
	/* free */
	int same = back != NULL && strcmp(back, full) == 0;
	free(back);
	return same;
}

/* The history position of the task's message message_id when it reads back exactly as
 * full: > 0, 0 when there is none (or it differs), -1 when it could not be read (e set).
 * Comparing the text read back needs no parse and no copy of the message. */
static int64_t pos_of(struct th_store *st, const char *task_id, const char *context_id,
                      const char *message_id, const char *full, struct th_error *e)
{
	if (message_id == NULL)
		return 0;
	struct stored_msg m = {0};
	th_err rc = th_store_one(st, TH_STMT_REF_BY_ID,
	                         "SELECT pos, json, message_id, role FROM messages "
	                         "WHERE task_id = ?1 AND message_id = ?2",
	                         TH_ARGS(TH_T(task_id), TH_T(message_id)), &stored_row, &m,
	                         "message reference", e);
	if (rc == TH_ENOTFOUND)
		return 0;
	if (rc != TH_OK)
		return -1;
	int64_t pos = reads_as(&m, task_id, context_id, full) ? m.pos : 0;
	th_row_free(&stored_row, &m);
	return pos;
}

/* The position a message (not changed) can be referred to by, as pos_of. A message may
 * also be its text already (th_json_raw: a string node where an object belongs), as a
 * view puts stored history messages in a snapshot: that text is what it reads as. */
static int64_t pos_of_obj(struct th_store *st, const char *task_id, const char *context_id,
                          json_object *msg, struct th_error *e)
{
	if (json_object_is_type(msg, json_type_string)) {
		const char *text = json_object_get_string(msg);
		/* As th_ref_msg_unpack writes one: {"messageId":"…" first. An id read wrong
		 * only finds no row that reads as text, so the message stays inline. */
		static const char head[] = "{\"messageId\":\"";
		const char *id = text + sizeof head - 1, *end = NULL;
		if (strncmp(text, head, sizeof head - 1) == 0 && (end = strchr(id, '"')) != NULL &&
		    memchr(id, '\\', (size_t)(end - id)) == NULL) {
			char *mid = strndup(id, (size_t)(end - id)); /* free */
			if (mid == NULL) {
				th_error_set(e, TH_ENOMEM, "out of memory (event)");
				return -1;
			}
			int64_t pos = pos_of(st, task_id, context_id, mid, text, e);
			free(mid);
			return pos;
		}
		json_object *parsed = json_tokener_parse(text);
		int64_t pos =
		    json_object_is_type(parsed, json_type_object)
		        ? pos_of(st, task_id, context_id, th_json_str(parsed, "messageId"), text, e)
		        : 0;
		json_object_put(parsed);
		return pos;
	}
	if (!json_object_is_type(msg, json_type_object))
		return 0;
	return pos_of(st, task_id, context_id, th_json_str(msg, "messageId"), th_json_text(msg), e);
}

th_err th_ref_status_pos(struct th_store *st, const char *task_id, const char *context_id,
                         const char *message_json, int64_t *pos, struct th_error *e)
{
	*pos = 0;
	if (message_json == NULL)
		return TH_OK;
	/* A status that carries a history message carries the one just appended: the
	 * newest, one seek to the end of the task's positions. */
	struct stored_msg m = {0};
	th_err rc = th_store_one(st, TH_STMT_REF_LAST,
	                         "SELECT pos, json, message_id, role FROM messages "
	                         "WHERE task_id = ?1 ORDER BY pos DESC LIMIT 1",
	                         TH_ARGS(TH_T(task_id)), &stored_row, &m, "status message", e);
	if (rc == TH_ENOTFOUND) {
		th_error_clear(e);
		return TH_OK;
	}
	if (rc != TH_OK)
		return rc;
	if (reads_as(&m, task_id, context_id, message_json))
		*pos = m.pos;
	th_row_free(&stored_row, &m);
	return TH_OK;
}

/* The stored message at pos, unpacked (free), or NULL with e set. */
static char *message_at(struct th_store *st, const char *task_id, const char *context_id,
                        int64_t pos, struct th_error *e)
{
	struct stored_msg m = {0};
	th_err rc =
	    th_store_one(st, TH_STMT_REF_BY_POS,
	                 "SELECT pos, json, message_id, role FROM messages "
	                 "WHERE task_id = ?1 AND pos = ?2",
	                 TH_ARGS(TH_T(task_id), TH_I(pos)), &stored_row, &m, "referred message", e);
	if (rc == TH_ENOTFOUND)
		th_error_set(e, TH_ENOTFOUND, "task %s: message %lld of its history is gone",
		             task_id, (long long)pos);
	if (rc != TH_OK || m.json == NULL) {
		th_row_free(&stored_row, &m);
		if (rc == TH_OK)
			th_error_set(e, TH_EINTERNAL, "task %s: message %lld has no text", task_id,
			             (long long)pos);
		return NULL;
	}
	char *text = th_ref_msg_unpack(m.json, m.message_id, m.role, task_id, context_id);
	th_row_free(&stored_row, &m);
	if (text == NULL)
		th_error_set(e, TH_ENOMEM, "out of memory (referred message)");
	return text;
}

/* ---- events ----------------------------------------------------------------------------- */

/* Removes key from obj when it holds exactly value. */
static void drop_if(json_object *obj, const char *key, const char *value)
{
	const char *v = th_json_str(obj, key);
	if (v != NULL && value != NULL && strcmp(v, value) == 0)
		json_object_object_del(obj, key);
}

/* A new reference object {"$message": pos}, or NULL. */
static json_object *ref_one(int64_t pos)
{
	json_object *r = json_object_new_object();
	if (th_json_put(r, REF_ONE, json_object_new_int64(pos)) != 0) {
		json_object_put(r);
		return NULL;
	}
	return r;
}

/* Replaces obj[key] (a message) by a reference when it is in the history. */
static th_err ref_member(struct th_store *st, const char *task_id, const char *context_id,
                         json_object *obj, const char *key, struct th_error *e)
{
	json_object *msg = NULL;
	if (!json_object_object_get_ex(obj, key, &msg))
		return TH_OK;
	int64_t pos = pos_of_obj(st, task_id, context_id, msg, e);
	if (pos < 0)
		return e->code;
	json_object *r = pos > 0 ? ref_one(pos) : NULL;
	if (r != NULL)
		json_object_object_add(obj, key, r);
	return TH_OK;
}

/* Replaces a snapshot's history array by {"$messages": [first, last]} when it is exactly
 * the stored messages first..last. */
static th_err ref_history(struct th_store *st, const char *task_id, const char *context_id,
                          json_object *task, struct th_error *e)
{
	json_object *arr = NULL;
	if (!json_object_object_get_ex(task, "history", &arr) ||
	    !json_object_is_type(arr, json_type_array))
		return TH_OK;
	size_t n = json_object_array_length(arr);
	if (n == 0 || n > REF_HISTORY_MAX)
		return TH_OK;
	int64_t first = 0;
	for (size_t i = 0; i < n; i++) {
		int64_t pos =
		    pos_of_obj(st, task_id, context_id, json_object_array_get_idx(arr, i), e);
		if (pos < 0)
			return e->code;
		if (pos == 0 || (i > 0 && pos != first + (int64_t)i))
			return TH_OK;
		if (i == 0)
			first = pos;
	}
	json_object *range = json_object_new_array();
	json_object *r = json_object_new_object();
	int bad = th_json_push(range, json_object_new_int64(first));
	bad |= th_json_push(range, json_object_new_int64(first + (int64_t)n - 1));
	bad |= th_json_put(r, REF_RANGE, range);
	if (bad) {
		json_object_put(r);
		return TH_OK; /* kept inline */
	}
	json_object_object_add(task, "history", r);
	return TH_OK;
}

/* status's timestamp, when created_ms gives it back, as the milliseconds before it. */
static void lean_timestamp(json_object *status, int64_t created_ms)
{
	json_object *ts = NULL;
	int64_t ms = 0;
	char back[TH_TS_LEN + 1];
	if (!json_object_object_get_ex(status, "timestamp", &ts) ||
	    !json_object_is_type(ts, json_type_string) ||
	    th_ts_parse(json_object_get_string(ts), &ms) != 0 || ms > created_ms ||
	    created_ms - ms > INT32_MAX)
		return;
	th_ts_format(ms, back);
	if (strcmp(back, json_object_get_string(ts)) != 0)
		return;
	json_object *n = json_object_new_int64(created_ms - ms);
	if (n != NULL) /* else kept as text */
		json_object_object_add(status, "timestamp", n);
}

/* A stored status timestamp (a number, lean_timestamp) as text again. */
static th_err full_timestamp(json_object *status, int64_t created_ms, struct th_error *e)
{
	json_object *ts = NULL;
	if (!json_object_object_get_ex(status, "timestamp", &ts) ||
	    !json_object_is_type(ts, json_type_int))
		return TH_OK;
	char text[TH_TS_LEN + 1];
	th_ts_format(created_ms - json_object_get_int64(ts), text);
	json_object *s = json_object_new_string(text);
	if (s == NULL)
		return th_error_set(e, TH_ENOMEM, "out of memory (event)");
	json_object_object_add(status, "timestamp", s);
	return TH_OK;
}

/* obj[key] when it is an object, replaced in obj by a shallow copy of itself; NULL when
 * there is no such object. *oom is set when the copy could not be made. */
static json_object *own_member(json_object *obj, const char *key, int *oom)
{
	json_object *v = NULL;
	if (!json_object_object_get_ex(obj, key, &v) || !json_object_is_type(v, json_type_object))
		return NULL;
	json_object *c = shallow_copy(v);
	if (c == NULL || json_object_object_add(obj, key, c) != 0) {
		json_object_put(c);
		*oom = 1;
		return NULL;
	}
	return c;
}

/* An update or snapshot body v (a copy): its task's ids dropped, its status's message a
 * reference and its timestamp lean. */
static th_err pack_body(struct th_store *st, const char *task_id, const char *context_id,
                        json_object *v, const char *id_key, int64_t created_ms, int *oom,
                        struct th_error *e)
{
	drop_if(v, id_key, task_id);
	drop_if(v, "contextId", context_id);
	json_object *status = own_member(v, "status", oom);
	if (status == NULL)
		return TH_OK;
	th_err rc = ref_member(st, task_id, context_id, status, "message", e);
	lean_timestamp(status, created_ms);
	return rc;
}

th_err th_ref_event_pack(struct th_store *st, const char *task_id, const char *context_id,
                         json_object *event, int64_t created_ms, char **out, struct th_error *e)
{
	*out = NULL;
	if (!json_object_is_type(event, json_type_object))
		return th_error_set(e, TH_EINVAL, "event to store is not a JSON object");
	json_object *root = shallow_copy(event); /* json_object_put */
	if (root == NULL)
		return th_error_set(e, TH_ENOMEM, "out of memory (event)");
	int oom = 0;
	th_err rc = TH_OK;
	json_object *v = NULL;
	if ((v = own_member(root, "task", &oom)) != NULL) {
		rc = pack_body(st, task_id, context_id, v, "id", created_ms, &oom, e);
		if (rc == TH_OK)
			rc = ref_history(st, task_id, context_id, v, e);
	} else if ((v = own_member(root, "statusUpdate", &oom)) != NULL ||
	           (v = own_member(root, "artifactUpdate", &oom)) != NULL) {
		rc = pack_body(st, task_id, context_id, v, "taskId", created_ms, &oom, e);
	} else if (json_object_object_get_ex(root, "message", &v)) {
		rc = ref_member(st, task_id, context_id, root, "message", e);
	}
	if (rc == TH_OK && oom)
		rc = th_error_set(e, TH_ENOMEM, "out of memory (event)");
	if (rc == TH_OK)
		rc = text_of(root, "event", out, e);
	json_object_put(root);
	return rc;
}

/* The position a reference object names (REF_ONE), or 0 when v is no reference. */
static int64_t ref_pos(json_object *v)
{
	json_object *p = NULL;
	if (!json_object_is_type(v, json_type_object) || json_object_object_length(v) != 1 ||
	    !json_object_object_get_ex(v, REF_ONE, &p) || !json_object_is_type(p, json_type_int))
		return 0;
	return json_object_get_int64(p);
}

/* Puts the message a reference at obj[key] names in its place. */
static th_err deref_member(struct th_store *st, const char *task_id, const char *context_id,
                           json_object *obj, const char *key, struct th_error *e)
{
	json_object *v = NULL;
	int64_t pos = json_object_object_get_ex(obj, key, &v) ? ref_pos(v) : 0;
	if (pos <= 0)
		return TH_OK;
	char *text = message_at(st, task_id, context_id, pos, e); /* free */
	if (text == NULL)
		return e->code;
	json_object *raw = th_json_raw(text);
	free(text);
	if (raw == NULL)
		return th_error_set(e, TH_ENOMEM, "out of memory (event)");
	json_object_object_add(obj, key, raw);
	return TH_OK;
}

/* Puts the messages a {"$messages": [first, last]} history names in its place. */
static th_err deref_history(struct th_store *st, const char *task_id, const char *context_id,
                            json_object *task, struct th_error *e)
{
	json_object *v = NULL, *range = NULL;
	if (!json_object_object_get_ex(task, "history", &v) ||
	    !json_object_is_type(v, json_type_object) ||
	    !json_object_object_get_ex(v, REF_RANGE, &range) ||
	    !json_object_is_type(range, json_type_array) || json_object_array_length(range) != 2)
		return TH_OK;
	int64_t first = json_object_get_int64(json_object_array_get_idx(range, 0));
	int64_t last = json_object_get_int64(json_object_array_get_idx(range, 1));
	json_object *arr = json_object_new_array();
	if (arr == NULL)
		return th_error_set(e, TH_ENOMEM, "out of memory (event)");
	for (int64_t pos = first; pos <= last && pos - first < REF_HISTORY_MAX; pos++) {
		char *text = message_at(st, task_id, context_id, pos, e); /* free */
		if (text == NULL) {
			json_object_put(arr);
			return e->code;
		}
		int bad = th_json_push(arr, th_json_raw(text));
		free(text);
		if (bad) {
			json_object_put(arr);
			return th_error_set(e, TH_ENOMEM, "out of memory (event)");
		}
	}
	json_object_object_add(task, "history", arr);
	return TH_OK;
}

/* A copy of obj with id_key = task_id and contextId = context_id first (when obj lacks
 * them), then obj's own members in their order; NULL when out of memory. */
static json_object *with_ids(json_object *obj, const char *id_key, const char *task_id,
                             const char *context_id)
{
	json_object *n = json_object_new_object();
	int bad = n == NULL;
	if (!bad && !json_object_object_get_ex(obj, id_key, NULL))
		bad |= th_json_put(n, id_key, json_object_new_string(task_id));
	if (!bad && !json_object_object_get_ex(obj, "contextId", NULL))
		bad |= th_json_put(n, "contextId", json_object_new_string(context_id));
	json_object_object_foreach(obj, k, val)
	{
		if (!bad)
			bad |= th_json_put(n, k, json_object_get(val));
	}
	if (bad) {
		json_object_put(n);
		return NULL;
	}
	return n;
}

th_err th_ref_event_unpack(struct th_store *st, const char *task_id, const char *context_id,
                           const char *stored, int64_t created_ms, th_event_whole_fn *whole,
                           char **out, struct th_error *e)
{
	*out = NULL;
	json_object *root = NULL;
	th_err rc = parse_object(stored, TH_EINTERNAL, "a stored event", &root, e);
	if (rc != TH_OK)
		return rc;
	const char *top = NULL;
	const char *id_key = NULL;
	json_object *v = NULL;
	if (json_object_object_get_ex(root, "task", &v)) {
		top = "task";
		id_key = "id";
	} else if (json_object_object_get_ex(root, "statusUpdate", &v)) {
		top = "statusUpdate";
		id_key = "taskId";
	} else if (json_object_object_get_ex(root, "artifactUpdate", &v)) {
		top = "artifactUpdate";
		id_key = "taskId";
	} else {
		rc = deref_member(st, task_id, context_id, root, "message", e);
	}
	if (rc == TH_OK && top != NULL && json_object_is_type(v, json_type_object)) {
		json_object *status = NULL;
		if (json_object_object_get_ex(v, "status", &status) &&
		    json_object_is_type(status, json_type_object)) {
			rc = deref_member(st, task_id, context_id, status, "message", e);
			if (rc == TH_OK)
				rc = full_timestamp(status, created_ms, e);
		}
		if (rc == TH_OK && strcmp(top, "task") == 0)
			rc = deref_history(st, task_id, context_id, v, e);
		json_object *full = rc == TH_OK ? with_ids(v, id_key, task_id, context_id) : NULL;
		if (rc == TH_OK && full == NULL)
			rc = th_error_set(e, TH_ENOMEM, "out of memory (event)");
		if (full != NULL)
			json_object_object_add(root, top, full);
	}
	/* The reader's own part, on the same parsed tree (one parse, one text per event). */
	json_object *sent = rc == TH_OK && whole != NULL ? whole(root) : json_object_get(root);
	if (rc == TH_OK && sent == NULL)
		rc = th_error_set(e, TH_ENOMEM, "out of memory (event)");
	if (rc == TH_OK)
		rc = text_of(sent, "event", out, e);
	json_object_put(sent);
	json_object_put(root);
	return rc;
}
