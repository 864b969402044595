/* SPDX-License-Identifier: Apache-2.0 */
#include "domain/events.h"

#include <stdio.h>

#include "a2a/a2a.h"
#include "util/jsonx.h"

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
	th_err rc = th_store_event_append(st, task_id, label, ends, json, &seq, e);
	if (rc == TH_OK)
		rc = th_store_push_enqueue(st, task_id, seq, json, channel_id, NULL, e);
	return rc;
}
