/* SPDX-License-Identifier: Apache-2.0 */
/* envelope.h — the task extension's event envelope as clients send it (TASK-3):
 * a data part of media type application/vnd.tiny-harness.event+json whose value is
 * {"kind":"task","payload":{…}} (create or update a task, TASK-4, TASK-5) or
 * {"kind":"control","action":"complete"} (CTL-1, ops/control.c), read from a message
 * by th_inbound_read (domain/inbound.c), and the envelopes the harness emits itself
 * (TASK-8). */
#ifndef TH_DOMAIN_ENVELOPE_H
#define TH_DOMAIN_ENVELOPE_H

#include <json-c/json.h>
#include <stddef.h>

#include "config/settings.h"
#include "store/store.h"
#include "util/err.h"

/* A validated task payload. Strings are borrowed from the payload object. */
struct th_task_payload {
	const char *name;          /* NULL when absent */
	const char *goal;          /* NULL when absent */
	json_object *type;         /* string or null; NULL when absent (borrowed) */
	const char *description;   /* NULL when absent */
	json_object *criteria;     /* normalised [{text, met}] (new reference) or NULL */
	struct th_participant *ps; /* participants (owned: th_task_payload_free) or NULL */
	size_t nps;
	int has_participants; /* the key was present */
	const char *parent;   /* parent_tasks[0].task_id or NULL */
	json_object *plan;    /* plan object (borrowed) or NULL */
};
void th_task_payload_free(struct th_task_payload *p);

/* Validates payload against the task schema (docs/a2a/ext/task.json), unknown keys
 * refused. creating: name and goal are required, sub_tasks refused, at most one
 * parent; updating (TASK-5): only name, description, acceptance_criteria and
 * participants may appear — goal, plan, sub_tasks, parent_tasks are refused by name.
 * Errors are TH_EINVAL naming the key path ("payload.participants[1].role …"). */
th_err th_task_payload_parse(json_object *payload, int creating, const struct th_limits *lim,
                             struct th_task_payload *out, struct th_error *e);

/* {"kind": kind, "payload": payload} as an agent message's data part; takes payload. */
json_object *th_envelope_part(const char *kind, json_object *payload);

#endif
