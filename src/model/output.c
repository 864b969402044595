/* SPDX-License-Identifier: Apache-2.0 */
/* output.c — what every backend returns: the turn's output and its tool calls, checked
 * and normalised the same way whichever backend read them. */
#include <stdlib.h>
#include <string.h>

#include "model/model.h"
#include "model/model_int.h"
#include "util/ids.h"
#include "util/jsonx.h"

void th_model_output_free(struct th_model_output *out)
{
	free(out->text);
	out->text = NULL;
	json_object_put(out->tool_calls);
	out->tool_calls = NULL;
}

th_err th_model_add_call(json_object *calls, json_object *call, size_t index, const char *who,
                         struct th_error *e)
{
	if (!json_object_is_type(call, json_type_object))
		return th_error_set(e, TH_EINTERNAL, "%s: tool_calls[%zu] is not an object", who,
		                    index);
	json_object *id = json_object_object_get(call, "id");
	json_object *name = json_object_object_get(call, "name");
	json_object *args = NULL;
	int has_args = json_object_object_get_ex(call, "arguments", &args);
	if (id != NULL && !json_object_is_type(id, json_type_string))
		return th_error_set(e, TH_EINTERNAL, "%s: tool_calls[%zu].id is not a string", who,
		                    index);
	if (!json_object_is_type(name, json_type_string) || json_object_get_string_len(name) == 0)
		return th_error_set(e, TH_EINTERNAL,
		                    "%s: tool_calls[%zu].name is missing or not a non-empty string",
		                    who, index);
	if (has_args && !json_object_is_type(args, json_type_object))
		return th_error_set(e, TH_EINTERNAL,
		                    "%s: tool_calls[%zu].arguments is not an object", who, index);
	char gen[TH_UUID_LEN + 6];
	const char *id_text = id != NULL ? json_object_get_string(id) : "";
	if (*id_text == '\0') {
		char uuid[TH_UUID_LEN + 1];
		th_uuid(uuid);
		memcpy(gen, "call_", 5);
		memcpy(gen + 5, uuid, sizeof uuid);
		id_text = gen;
	}
	json_object *c = json_object_new_object();
	int bad = th_json_put(c, "id", json_object_new_string(id_text));
	bad |= th_json_put(c, "name", json_object_get(name));
	bad |= th_json_put(c, "arguments",
	                   has_args ? json_object_get(args) : json_object_new_object());
	if (bad) {
		json_object_put(c);
		return th_error_set(e, TH_ENOMEM, "out of memory building a tool call");
	}
	if (th_json_push(calls, c) != 0)
		return th_error_set(e, TH_ENOMEM, "out of memory building a tool call");
	return TH_OK;
}
