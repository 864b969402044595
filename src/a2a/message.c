/* SPDX-License-Identifier: Apache-2.0 */
/* message.c — validation and canonical form of a client Message and its Parts
 * (A2A 1.0 §2.3, §2.4; PRODUCT A2A-2, LIM-1). */
#include "a2a/a2a.h"
#include "a2a/a2a_int.h"
#include "util/jsonx.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Used when a caller passes no limits, so a NULL never turns into "unlimited". */
static const struct th_limits fallback_limits = {
    .max_parts = 100,
    .max_text = 65536,
    .max_metadata = 16384,
    .max_id = TH_ID_MAX,
};

/* json_object_object_add fails only on allocation; it does not take the reference then. */
static th_err put(json_object *dst, const char *key, json_object *v, struct th_error *e)
{
	return th_json_put(dst, key, v) == 0
	           ? TH_OK
	           : th_error_set(e, TH_ENOMEM, "out of memory building %s", key);
}

static th_err put_str(json_object *dst, const char *key, const char *s, struct th_error *e)
{
	if (s == NULL)
		return TH_OK;
	return put(dst, key, json_object_new_string(s), e);
}

/* Shares the input's sub-tree: the canonical message lives no longer than the
 * request that holds both, and nothing mutates either. */
static th_err put_ref(json_object *dst, const char *key, json_object *v, struct th_error *e)
{
	if (v == NULL)
		return TH_OK;
	if (json_object_object_add(dst, key, json_object_get(v)) != 0) {
		json_object_put(v);
		return th_error_set(e, TH_ENOMEM, "out of memory building %s", key);
	}
	return TH_OK;
}

/* LIM-4: every array a request carries has a limit. Extension URIs and referenced
 * task ids are few in any real message. */
#define STR_ARRAY_MAX 64
#define STR_ARRAY_ITEM_MAX 2048

/* An optional array of strings (extensions, referenceTaskIds); empty arrays are dropped
 * as ProtoJSON omits empty repeated fields. */
static th_err copy_str_array(json_object *msg, json_object *dst, const char *camel,
                             const char *snake, const char *prefix, struct th_error *e)
{
	json_object *v = th_json_get2(msg, camel, snake);
	if (v == NULL)
		return TH_OK;
	if (!json_object_is_type(v, json_type_array))
		return th_error_set(e, TH_EINVAL, "%s%s must be an array of strings", prefix,
		                    camel);
	size_t n = json_object_array_length(v);
	if (n > STR_ARRAY_MAX)
		return th_error_set(e, TH_EINVAL, "%s%s has %zu entries; the limit is %d", prefix,
		                    camel, n, STR_ARRAY_MAX);
	for (size_t i = 0; i < n; i++) {
		json_object *s = json_object_array_get_idx(v, i);
		if (!json_object_is_type(s, json_type_string))
			return th_error_set(e, TH_EINVAL, "%s%s[%zu] must be a string", prefix,
			                    camel, i);
		size_t len = (size_t)json_object_get_string_len(s);
		if (len > STR_ARRAY_ITEM_MAX)
			return th_error_set(e, TH_EINVAL, "%s%s[%zu] is %zu bytes; the limit is %d",
			                    prefix, camel, i, len, STR_ARRAY_ITEM_MAX);
		if (memchr(json_object_get_string(s), '\0', len) != NULL)
			return th_error_set(e, TH_EINVAL,
			                    "%s%s[%zu] contains a NUL character (\\u0000)", prefix,
			                    camel, i);
	}
	if (n == 0)
		return TH_OK;
	return put_ref(dst, camel, v, e);
}

/* A part's raw member: base64 in either alphabet, added to out in its canonical form. */
static th_err decode_raw(json_object *raw, const char *path, json_object *out, struct th_error *e)
{
	if (!json_object_is_type(raw, json_type_string))
		return th_error_set(e, TH_EINVAL, "%s.raw must be a base64 string", path);
	const char *s = json_object_get_string(raw);
	size_t len = (size_t)json_object_get_string_len(raw);
	if (!th_a2a_base64_valid(s, len))
		return th_error_set(e, TH_EINVAL,
		                    "%s.raw must be base64 (standard or URL-safe alphabet)", path);
	char *canon = th_a2a_base64_canon(s, len); /* freed below */
	if (canon == NULL)
		return th_error_set(e, TH_ENOMEM, "out of memory copying %s.raw", path);
	th_err rc = put(out, "raw", json_object_new_string(canon), e);
	free(canon);
	return rc;
}

static th_err decode_part(json_object *p, const char *path, const struct th_limits *lim,
                          json_object *out, struct th_error *e)
{
	if (!json_object_is_type(p, json_type_object))
		return th_error_set(e, TH_EINVAL, "%s must be an object", path);
	char prefix[TH_A2A_PATH_MAX + 2];
	snprintf(prefix, sizeof prefix, "%s.", path);
	th_err one = th_a2a_one_spelling(p, prefix, e);
	if (one != TH_OK)
		return one;

	json_object *text = th_json_get2(p, "text", NULL);
	json_object *raw = th_json_get2(p, "raw", NULL);
	json_object *url = th_json_get2(p, "url", NULL);
	/* google.protobuf.Value: JSON null is a value, so a present key is the member. */
	json_object *data = NULL;
	int has_data = json_object_object_get_ex(p, "data", &data);
	int members = (text != NULL) + (raw != NULL) + (url != NULL) + (has_data != 0);
	if (members != 1)
		return th_error_set(e, TH_EINVAL,
		                    "%s: a part needs exactly one of text, raw, url, data", path);
	th_err rc;
	if (text != NULL) {
		if (!json_object_is_type(text, json_type_string))
			return th_error_set(e, TH_EINVAL, "%s.text must be a string", path);
		size_t len = (size_t)json_object_get_string_len(text);
		if (len > lim->max_text)
			return th_error_set(e, TH_EINVAL, "%s.text is %zu bytes; the limit is %zu",
			                    path, len, lim->max_text);
		if ((rc = put_ref(out, "text", text, e)) != TH_OK)
			return rc;
	} else if (raw != NULL) {
		if ((rc = decode_raw(raw, path, out, e)) != TH_OK)
			return rc;
	} else if (url != NULL) {
		if (!json_object_is_type(url, json_type_string) ||
		    json_object_get_string_len(url) == 0)
			return th_error_set(e, TH_EINVAL, "%s.url must be a non-empty string",
			                    path);
		size_t len = (size_t)json_object_get_string_len(url);
		if (len > TH_A2A_URL_MAX)
			return th_error_set(e, TH_EINVAL, "%s.url is %zu bytes; the limit is %d",
			                    path, len, TH_A2A_URL_MAX);
		if ((rc = put_ref(out, "url", url, e)) != TH_OK)
			return rc;
	} else {
		/* json-c represents JSON null as a NULL value, so it is added as is. */
		if (data == NULL) {
			if (json_object_object_add(out, "data", NULL) != 0)
				return th_error_set(e, TH_ENOMEM, "out of memory building %s",
				                    path);
		} else if ((rc = put_ref(out, "data", data, e)) != TH_OK) {
			return rc;
		}
	}

	const char *s;
	if ((rc = th_a2a_get_str(p, "mediaType", "media_type", prefix, TH_A2A_MEDIA_TYPE_MAX, 1, &s,
	                         e)) != TH_OK ||
	    (rc = put_str(out, "mediaType", s, e)) != TH_OK)
		return rc;
	if ((rc = th_a2a_get_str(p, "filename", NULL, prefix, TH_A2A_FILENAME_MAX, 1, &s, e)) !=
	        TH_OK ||
	    (rc = put_str(out, "filename", s, e)) != TH_OK)
		return rc;
	json_object *md;
	if ((rc = th_a2a_get_obj(p, "metadata", NULL, prefix, lim->max_metadata, &md, e)) !=
	        TH_OK ||
	    (rc = put_ref(out, "metadata", md, e)) != TH_OK)
		return rc;
	return TH_OK;
}

static th_err decode_parts(json_object *msg, const struct th_limits *lim, json_object *out,
                           struct th_error *e)
{
	json_object *parts = th_json_get2(msg, "parts", NULL);
	if (parts == NULL)
		return th_error_set(e, TH_EINVAL, "message.parts is required");
	if (!json_object_is_type(parts, json_type_array))
		return th_error_set(e, TH_EINVAL, "message.parts must be an array");
	size_t n = json_object_array_length(parts);
	if (n == 0)
		return th_error_set(e, TH_EINVAL, "message.parts must hold at least one part");
	if (n > lim->max_parts)
		return th_error_set(e, TH_EINVAL, "message.parts has %zu parts; the limit is %zu",
		                    n, lim->max_parts);
	json_object *arr = json_object_new_array_ext((int)n);
	if (arr == NULL)
		return th_error_set(e, TH_ENOMEM, "out of memory building message.parts");
	th_err rc = put(out, "parts", arr, e);
	if (rc != TH_OK)
		return rc;
	for (size_t i = 0; i < n; i++) {
		char path[TH_A2A_PATH_MAX];
		snprintf(path, sizeof path, "message.parts[%zu]", i);
		json_object *cp = json_object_new_object();
		if (cp == NULL)
			return th_error_set(e, TH_ENOMEM, "out of memory building %s", path);
		if (json_object_array_add(arr, cp) != 0) {
			json_object_put(cp);
			return th_error_set(e, TH_ENOMEM, "out of memory building %s", path);
		}
		if ((rc = decode_part(json_object_array_get_idx(parts, i), path, lim, cp, e)) !=
		    TH_OK)
			return rc;
	}
	return TH_OK;
}

static th_err decode_role(json_object *msg, json_object *out, struct th_error *e)
{
	json_object *role = th_json_get2(msg, "role", NULL);
	if (role == NULL)
		return th_error_set(e, TH_EINVAL, "message.role is required");
	int user = 0;
	if (json_object_is_type(role, json_type_string))
		user = strcmp(json_object_get_string(role), "ROLE_USER") == 0 ||
		       strcmp(json_object_get_string(role), "1") == 0;
	else if (json_object_is_type(role, json_type_int))
		user = json_object_get_int64(role) == 1;
	/* A client speaking as the agent would forge history; refuse it outright. */
	if (!user)
		return th_error_set(e, TH_EINVAL, "message.role must be ROLE_USER");
	return put(out, "role", json_object_new_string("ROLE_USER"), e);
}

static th_err decode_message(json_object *in, const struct th_limits *lim, json_object *out,
                             struct th_error *e)
{
	const char *pre = "message.";
	const char *s;
	th_err rc = th_a2a_one_spelling(in, pre, e);
	if (rc != TH_OK)
		return rc;

	json_object *idv = th_json_get2(in, "messageId", "message_id");
	if (idv == NULL)
		return th_error_set(e, TH_EINVAL, "message.messageId is required");
	if ((rc = th_a2a_get_str(in, "messageId", "message_id", pre, lim->max_id, 0, &s, e)) !=
	    TH_OK)
		return rc;
	if (*s == '\0')
		return th_error_set(e, TH_EINVAL, "message.messageId must not be empty");
	if ((rc = put_str(out, "messageId", s, e)) != TH_OK)
		return rc;
	if ((rc = th_a2a_get_str(in, "contextId", "context_id", pre, lim->max_id, 1, &s, e)) !=
	        TH_OK ||
	    (rc = put_str(out, "contextId", s, e)) != TH_OK)
		return rc;
	if ((rc = th_a2a_get_str(in, "taskId", "task_id", pre, lim->max_id, 1, &s, e)) != TH_OK ||
	    (rc = put_str(out, "taskId", s, e)) != TH_OK)
		return rc;
	if ((rc = decode_role(in, out, e)) != TH_OK)
		return rc;
	if ((rc = decode_parts(in, lim, out, e)) != TH_OK)
		return rc;
	json_object *md;
	if ((rc = th_a2a_get_obj(in, "metadata", NULL, pre, lim->max_metadata, &md, e)) != TH_OK ||
	    (rc = put_ref(out, "metadata", md, e)) != TH_OK)
		return rc;
	if ((rc = copy_str_array(in, out, "extensions", NULL, pre, e)) != TH_OK)
		return rc;
	return copy_str_array(in, out, "referenceTaskIds", "reference_task_ids", pre, e);
}

th_err th_a2a_message_decode(json_object *in, const struct th_limits *lim, json_object **out,
                             struct th_error *e)
{
	*out = NULL;
	if (lim == NULL)
		lim = &fallback_limits;
	if (in == NULL)
		return th_error_set(e, TH_EINVAL, "message is required");
	if (!json_object_is_type(in, json_type_object))
		return th_error_set(e, TH_EINVAL, "message must be an object");
	json_object *msg = json_object_new_object();
	if (msg == NULL)
		return th_error_set(e, TH_ENOMEM, "out of memory building message");
	th_err rc = decode_message(in, lim, msg, e);
	if (rc != TH_OK) {
		json_object_put(msg);
		return rc;
	}
	*out = msg;
	return TH_OK;
}
