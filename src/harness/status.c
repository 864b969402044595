#include "harness/status.h"

#include <stdlib.h>
#include <string.h>

#include "harness/ext.h"
#include "harness/harness.h"
#include "harness/view.h"
#include "util/ids.h"
#include "util/jsonx.h"

json_object *th_status_ext(const char *sub_state, const char *participant_id,
                           const char *request_id)
{
	json_object *o = json_object_new_object();
	if (o == NULL)
		return NULL;
	json_object_object_add(o, "sub_state", json_object_new_string(sub_state));
	if (participant_id != NULL)
		json_object_object_add(o, "participant_id", json_object_new_string(participant_id));
	if (request_id != NULL)
		json_object_object_add(o, "request_id", json_object_new_string(request_id));
	return o;
}

json_object *th_status_agent_text(const struct th_task_row *row, const char *text)
{
	json_object *parts = json_object_new_array();
	if (parts == NULL)
		return NULL;
	json_object_array_add(parts, th_a2a_text_part(text));
	return th_a2a_agent_message(row->context_id, row->id, parts, NULL);
}

static th_err replace(char **slot, const char *value, struct th_error *e)
{
	char *p = NULL;
	if (value != NULL && (p = strdup(value)) == NULL)
		return th_error_set(e, TH_ENOMEM, "out of memory");
	free(*slot);
	*slot = p;
	return TH_OK;
}

th_err th_status_transition(struct th_store *st, struct th_task_row *row, enum th_state state,
                            json_object *sub_state_ext, json_object *message, int append_history,
                            struct th_error *e)
{
	const char *sub = NULL;
	if (sub_state_ext != NULL)
		sub = th_json_str(sub_state_ext, "sub_state");
	/* STATUS-1/2: the sub-state exists exactly while the task is INPUT_REQUIRED. */
	if ((state == TH_STATE_INPUT_REQUIRED) != (sub != NULL))
		return th_error_set(e, TH_EINTERNAL, "status transition to %s with%s sub-state",
		                    th_state_name(state), sub ? "" : "out");
	th_err rc;
	if ((rc = replace(&row->sub_state, sub, e)) != TH_OK ||
	    (rc = replace(&row->status_meta_json, sub_state_ext ? th_json_text(sub_state_ext) : NULL,
	                  e)) != TH_OK ||
	    (rc = replace(&row->status_message_json, message ? th_json_text(message) : NULL, e)) !=
	            TH_OK)
		return rc;
	row->state = (int)state;
	row->status_ms = th_now_ms();
	row->updated_ms = row->status_ms;
	if ((rc = th_store_task_set_status(st, row, e)) != TH_OK)
		return rc;
	if (append_history && message != NULL) {
		const char *mid = th_json_str(message, "messageId");
		if ((rc = th_store_message_append(st, row->id, mid, "ROLE_AGENT", TH_AGENT_ID,
		                                  th_json_text(message), e)) != TH_OK)
			return rc;
	}
	json_object *ev = json_object_new_object();
	json_object *upd = th_a2a_status_update(row->id, row->context_id, th_view_status(row),
	                                        th_view_status_metadata(row));
	if (ev == NULL || upd == NULL) {
		json_object_put(ev);
		json_object_put(upd);
		return th_error_set(e, TH_ENOMEM, "out of memory");
	}
	json_object_object_add(ev, "statusUpdate", upd);
	rc = th_store_event_append(st, row->id, "status", th_json_text(ev), NULL, e);
	json_object_put(ev);
	return rc;
}
