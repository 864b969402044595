/* SPDX-License-Identifier: Apache-2.0 */
/* text_fixture.h — the store suites write events and messages as JSON text literals:
 * these parse one and hand it to th_store_event_append, th_store_message_append or
 * th_store_push_enqueue (which take the object). Text that is not JSON hands over NULL, which the
 * store refuses (TH_EINVAL). */
#ifndef TH_TESTS_TEXT_FIXTURE_H
#define TH_TESTS_TEXT_FIXTURE_H

#include <json-c/json.h>

#include "store/store.h"

static inline th_err th_test_event_append(struct th_store *st, const char *task_id,
                                          const char *kind, enum th_event_ends ends,
                                          const char *json, int64_t *seq, struct th_error *e)
{
	json_object *event = json != NULL ? json_tokener_parse(json) : NULL; /* json_object_put */
	th_err rc = th_store_event_append(st, task_id, kind, ends, event, seq, e);
	json_object_put(event);
	return rc;
}

static inline th_err th_test_message_append(struct th_store *st, const char *task_id,
                                            const char *message_id, const char *role,
                                            const char *sender, const char *json,
                                            struct th_error *e)
{
	json_object *msg = json != NULL ? json_tokener_parse(json) : NULL; /* json_object_put */
	th_err rc = th_store_message_append(st, task_id, message_id, role, sender, msg, e);
	json_object_put(msg);
	return rc;
}

static inline th_err th_test_push_enqueue(struct th_store *st, const char *task_id, int64_t seq,
                                          const char *json, const char *channel_id, int *n,
                                          struct th_error *e)
{
	json_object *event = json != NULL ? json_tokener_parse(json) : NULL; /* json_object_put */
	th_err rc = th_store_push_enqueue(st, task_id, seq, event, channel_id, n, e);
	json_object_put(event);
	return rc;
}

#endif
