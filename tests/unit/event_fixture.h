/* SPDX-License-Identifier: Apache-2.0 */
/* event_fixture.h — the store suites write events as JSON text literals: this parses one
 * and appends it with th_store_event_append (which takes the object). Text that is not
 * JSON appends NULL, which the store refuses (TH_EINVAL). */
#ifndef TH_TESTS_EVENT_FIXTURE_H
#define TH_TESTS_EVENT_FIXTURE_H

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

#endif
