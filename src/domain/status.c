/* SPDX-License-Identifier: Apache-2.0 */
#include "domain/status.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "domain/envelope.h"
#include "domain/events.h"
#include "domain/ext.h"
#include "domain/access.h"
#include "domain/view.h"
#include "util/jsonx.h"

json_object *th_status_agent_text(const struct th_task_row *row, const char *text)
{
	json_object *parts = json_object_new_array();
	if (parts == NULL)
		return NULL;
	if (th_json_push(parts, th_a2a_text_part(text)) != 0) {
		json_object_put(parts);
		return NULL;
	}
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

/* A task that ended leaves nothing waiting: its pending questions are canceled, and
 * if it is a sub-task its link to the parent is resolved, noted in the parent's
 * history and announced to the parent's subscribers (TASK-8, CTL-4). A parent that
 * ended first (FAILED with its children running) only has its link resolved: its
 * history and event log end with its final status (decision-096). */
static th_err settle_ended(struct th_store *st, const struct th_task_row *row, struct th_error *e)
{
	th_err rc = th_store_help_cancel_pending(st, row->id, NULL, e);
	if (rc != TH_OK || row->parent_id == NULL)
		return rc;
	if ((rc = th_store_subtask_resolve(st, row->id, e)) != TH_OK)
		return rc;
	struct th_task_row parent = {0};
	json_object *note = NULL;
	rc = th_store_task_get(st, row->parent_id, &parent, e);
	if (rc == TH_OK && th_state_terminal((enum th_state)parent.state)) {
		th_task_row_free(&parent);
		return TH_OK;
	}
	if (rc == TH_OK) {
		char text[512];
		snprintf(text, sizeof text, "sub-task %s (%s) is %s", row->id, row->name,
		         th_state_name((enum th_state)row->state));
		note = th_status_agent_text(&parent, text);
		const char *mid = note ? th_json_str(note, "messageId") : NULL;
		rc = mid ? th_store_message_append(st, parent.id, mid, "ROLE_AGENT", TH_AGENT_ID,
		                                   note, e)
		         : th_error_set(e, TH_ENOMEM, "out of memory");
	}
	if (rc == TH_OK) {
		json_object *payload = json_object_new_object();
		int bad = th_json_put(payload, "event", json_object_new_string("resolved"));
		bad |= th_json_put(payload, "task_id", json_object_new_string(row->id));
		bad |= th_json_put(payload, "name", json_object_new_string(row->name));
		bad |=
		    th_json_put(payload, "state",
		                json_object_new_string(th_state_name((enum th_state)row->state)));
		if (bad) {
			json_object_put(payload);
			rc = th_error_set(e, TH_ENOMEM, "out of memory building a subtask event");
		} else {
			rc = th_status_announce(st, &parent, "subtask", payload, e);
		}
	}
	json_object_put(note);
	th_task_row_free(&parent);
	return rc;
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
	/* The message's text, written twice (status and history): serialised once. */
	const char *text = message ? th_json_text(message) : NULL;
	if ((rc = replace(&row->sub_state, sub, e)) != TH_OK ||
	    (rc = replace(&row->status_meta_json,
	                  sub_state_ext ? th_json_text(sub_state_ext) : NULL, e)) != TH_OK ||
	    (rc = replace(&row->status_message_json, text, e)) != TH_OK)
		return rc;
	row->state = (int)state;
	row->status_ms = th_store_now(st);
	row->updated_ms = row->status_ms;
	/* History first: the status then refers to the stored message (STORE-10). */
	if (append_history && message != NULL) {
		const char *mid = th_json_str(message, "messageId");
		if ((rc = th_store_message_append(st, row->id, mid, "ROLE_AGENT", TH_AGENT_ID,
		                                  message, e)) != TH_OK)
			return rc;
	}
	if ((rc = th_store_task_set_status(st, row, e)) != TH_OK)
		return rc;
	json_object *ev = json_object_new_object();
	json_object *upd =
	    th_a2a_status_update(row->id, row->context_id, th_view_status_of(row, message),
	                         th_view_status_metadata(row));
	if (th_json_put(ev, "statusUpdate", upd) != 0) {
		json_object_put(ev);
		return th_error_set(e, TH_ENOMEM, "out of memory");
	}
	rc = th_event_record(st, row->id, "status", NULL, ev, e);
	json_object_put(ev);
	if (rc == TH_OK && th_state_terminal(state))
		rc = settle_ended(st, row, e);
	return rc;
}

th_err th_status_announce(struct th_store *st, const struct th_task_row *row, const char *kind,
                          json_object *payload, struct th_error *e)
{
	/* decision-026: every piece is looked at; a missing one records nothing. Each builder
	 * consumes its arguments, also when it fails. */
	json_object *parts = json_object_new_array();
	if (th_json_push(parts, th_envelope_part(kind, payload)) != 0) {
		json_object_put(parts);
		return th_error_set(e, TH_ENOMEM, "out of memory building a %.40s announcement",
		                    kind);
	}
	json_object *msg = th_a2a_agent_message(row->context_id, row->id, parts, NULL);
	json_object *status =
	    msg != NULL ? th_a2a_status((enum th_state)row->state, msg, th_store_now(st)) : NULL;
	json_object *upd = status != NULL ? th_a2a_status_update(row->id, row->context_id, status,
	                                                         th_view_status_metadata(row))
	                                  : NULL;
	json_object *ev = json_object_new_object();
	if (th_json_put(ev, "statusUpdate", upd) != 0) {
		json_object_put(ev);
		return th_error_set(e, TH_ENOMEM, "out of memory building a %.40s announcement",
		                    kind);
	}
	th_err rc = th_event_record(st, row->id, "status", NULL, ev, e);
	json_object_put(ev);
	return rc;
}

th_err th_status_announce_participants(struct th_store *st, const struct th_task_row *row,
                                       const char *who, const char *role, struct th_error *e)
{
	json_object *ext = NULL;
	th_err rc = th_view_task_ext(st, row, &ext, e);
	if (rc != TH_OK)
		return rc;
	json_object *payload = json_object_new_object();
	if (payload == NULL) {
		json_object_put(ext);
		return th_error_set(e, TH_ENOMEM, "out of memory");
	}
	int bad = 0;
	if (who != NULL)
		bad |= th_json_put(payload, "participant_id", json_object_new_string(who));
	if (role != NULL)
		bad |= th_json_put(payload, "role", json_object_new_string(role));
	bad |= th_json_put(payload, "participants",
	                   json_object_get(json_object_object_get(ext, "participants")));
	json_object_put(ext);
	if (bad) {
		json_object_put(payload);
		return th_error_set(e, TH_ENOMEM, "out of memory building a participants event");
	}
	return th_status_announce(st, row, "participants_updated", payload, e);
}
