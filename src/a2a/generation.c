/* SPDX-License-Identifier: Apache-2.0 */
/* generation.c — A2A 1.1's task generation on the wire (A2A-11-GEN-1..6, decision-073):
 * the request fields that name one (GetTaskRequest.currentGeneration,
 * SendMessageConfiguration.ifGenerationMatch) and the field itself, added to a Task or to
 * a status or artifact update that is already JSON text. The text is stored or kept as it
 * was serialised, so the field is spliced in rather than parsed and written again: a 1.0
 * answer never passes through here and stays byte for byte what it was. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "a2a/a2a.h"
#include "a2a/a2a_int.h"
#include "util/jsonx.h"

th_err th_a2a_generation_param(json_object *obj, const char *camel, const char *snake,
                               const char *prefix, int *present, int64_t *out, struct th_error *e)
{
	th_err rc = th_a2a_get_int(obj, camel, snake, prefix, present, out, e);
	if (rc == TH_OK && *present && *out < 0)
		return th_error_set(e, TH_EINVAL, "%s%s must not be negative (got %" PRId64 ")",
		                    prefix, camel, *out);
	return rc;
}

/* JSON's white space between tokens. */
static int blank(char c)
{
	return c == ' ' || c == '\n' || c == '\t' || c == '\r';
}

/* text with `,"generation":"<gen>"` (or without the comma when the object is empty)
 * inserted at offset at, which is just before an object's closing brace. */
static char *insert_at(const char *text, size_t len, size_t at, int64_t gen)
{
	size_t j = at;
	while (j > 0 && blank(text[j - 1]))
		j--;
	int empty = j > 0 && text[j - 1] == '{';
	char field[48];
	/* ProtoJSON writes an int64 as a decimal string. */
	int n = snprintf(field, sizeof field, "%s\"generation\":\"%" PRId64 "\"", empty ? "" : ",",
	                 gen);
	if (n < 0 || (size_t)n >= sizeof field)
		return NULL;
	char *out = malloc(len + (size_t)n + 1);
	if (out == NULL)
		return NULL;
	memcpy(out, text, at);
	memcpy(out + at, field, (size_t)n);
	memcpy(out + at + n, text + at, len - at + 1);
	return out;
}

/* The offset of the last '}' of text before offset end (exclusive), after which only
 * whitespace follows up to end; -1 when there is none. */
static long last_brace(const char *text, size_t end)
{
	while (end > 0 && blank(text[end - 1]))
		end--;
	return end > 0 && text[end - 1] == '}' ? (long)end - 1 : -1;
}

char *th_a2a_with_generation(const char *object_json, int64_t gen)
{
	if (object_json == NULL || object_json[0] != '{')
		return NULL;
	size_t len = strlen(object_json);
	long b = last_brace(object_json, len);
	return b < 0 ? NULL : insert_at(object_json, len, (size_t)b, gen);
}

char *th_a2a_event_with_generation(const char *event_json, int64_t gen)
{
	if (event_json == NULL)
		return NULL;
	const char *kinds[] = {"{\"task\":{", "{\"statusUpdate\":{", "{\"artifactUpdate\":{"};
	int known = 0;
	for (size_t i = 0; i < sizeof kinds / sizeof kinds[0] && !known; i++)
		known = strncmp(event_json, kinds[i], strlen(kinds[i])) == 0;
	if (!known)
		return NULL;
	size_t len = strlen(event_json);
	long outer = last_brace(event_json, len);
	long inner = outer > 0 ? last_brace(event_json, (size_t)outer) : -1;
	return inner < 0 ? NULL : insert_at(event_json, len, (size_t)inner, gen);
}

th_err th_a2a_task_add_generation(json_object **task, int64_t gen, struct th_error *e)
{
	char *text = th_a2a_with_generation(th_json_text(*task), gen); /* free */
	json_object *raw = text != NULL ? th_json_raw(text) : NULL;
	free(text);
	if (raw == NULL)
		return th_error_set(e, TH_ENOMEM, "out of memory");
	json_object_put(*task);
	*task = raw;
	return TH_OK;
}
