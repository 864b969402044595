/* SPDX-License-Identifier: Apache-2.0 */
/* ext.h — the five extensions the card advertises and request activation (EXT-1..3). */
#ifndef TH_DOMAIN_EXT_H
#define TH_DOMAIN_EXT_H

#include <json-c/json.h>

#include "util/buf.h"
#include "util/err.h"

#define TH_EXT_ROOT "https://madarauchiha-314.github.io/tiny-harness"
#define TH_EXT_URI_TASK TH_EXT_ROOT "/a2a/ext/task/v1"
#define TH_EXT_URI_CHANNEL TH_EXT_ROOT "/a2a/ext/channel/v1"
#define TH_EXT_URI_STATUS TH_EXT_ROOT "/a2a/ext/status/v1"
#define TH_EXT_URI_COMMANDS TH_EXT_ROOT "/a2a/ext/commands/v1"
#define TH_EXT_URI_A2UI "https://a2ui.org/a2a-extension/a2ui/v0.9.1"

/* Metadata keys of the task and status extensions (TASK-1, STATUS-1). */
#define TH_META_TASK "io.github.madarauchiha-314.tiny-harness/task"
#define TH_META_STATUS "io.github.madarauchiha-314.tiny-harness/status"

/* Media types (CARD-3). */
#define TH_MT_TASK "application/vnd.tiny-harness.task+json"
#define TH_MT_CHANNEL "application/vnd.tiny-harness.channel+json"
#define TH_MT_EVENT "application/vnd.tiny-harness.event+json"
#define TH_MT_A2UI "application/a2ui+json"

enum {
	TH_EXT_TASK = 1u << 0,
	TH_EXT_CHANNEL = 1u << 1,
	TH_EXT_STATUS = 1u << 2,
	TH_EXT_COMMANDS = 1u << 3,
	TH_EXT_A2UI = 1u << 4
};
#define TH_EXT_COUNT 5

/* The URI of extension number i (0..TH_EXT_COUNT-1), in card order. */
const char *th_ext_uri(int i);

/* Parses an A2A-Extensions header value (comma-separated URIs; spaces trimmed;
 * empties and duplicates ignored) into *bits. Any URI the card does not list →
 * TH_EUNSUPPORTED whose message names every unknown URI (EXT-1). hdr may be NULL. */
th_err th_ext_parse(const char *hdr, unsigned *bits, struct th_error *e);

/* Writes the comma-separated URIs of bits (card order) into out; empty if none. */
void th_ext_format(unsigned bits, struct th_buf *out);

/* STORE-10 (decision-061): a task-extension object (TASK-1) without its defaults, and
 * back. The defaults are this file's: no type (null), an empty description, no
 * acceptance_criteria, parent_tasks or sub_tasks ([]), no plan (null), and a
 * participant's empty display_name. */

/* ext without the members that hold their default, as a new object (json_object_put),
 * sharing ext's other values. NULL when th_ext_task_full would not give ext back byte
 * for byte (members in another order, or not an object), or when out of memory: keep
 * ext whole then. */
json_object *th_ext_task_lean(json_object *ext);

/* A lean task extension with its defaults back in their wire order: name, goal, type,
 * description, acceptance_criteria, participants (id, kind, role, display_name each),
 * parent_tasks, sub_tasks, plan; a member it does not know stays, after those. A new
 * object (json_object_put) sharing lean's values, or NULL when out of memory. A whole
 * extension in that order comes back as it is; one that lacks a member gets it. */
json_object *th_ext_task_full(json_object *lean);

/* The status extension (STATUS-1..STATUS-4): why a task is INPUT_REQUIRED. */
#define TH_SUB_NEXT_MESSAGE "awaiting-next-message"
#define TH_SUB_ANSWER "awaiting-answer"

/* The status-extension object for a sub-state: {"sub_state": …} plus, for
 * awaiting-answer, participant_id and request_id. A new reference. */
json_object *th_status_ext(const char *sub_state, const char *participant_id,
                           const char *request_id);

#endif
