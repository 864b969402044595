/* SPDX-License-Identifier: Apache-2.0 */
#include "domain/events.h"

#include <stdio.h>

#include "util/jsonx.h"

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
	th_err rc = th_store_event_append(st, task_id, label, json, &seq, e);
	if (rc == TH_OK)
		rc = th_store_push_enqueue(st, task_id, seq, json, channel_id, NULL, e);
	return rc;
}
