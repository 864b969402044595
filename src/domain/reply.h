/* SPDX-License-Identifier: Apache-2.0 */
/* reply.h — what a domain action that answers in the conversation hands back to the
 * turn that ran it: a built-in command (turn/builtins.c), a /confirm decision or a
 * question (domain/ui.c). The turn writes it as the agent's reply. */
#ifndef TH_DOMAIN_REPLY_H
#define TH_DOMAIN_REPLY_H

#include <json-c/json.h>
#include <stdint.h>

#include "util/buf.h"

struct th_cmd_result {
	struct th_buf text;   /* the reply; th_cmd_result_free */
	json_object *parts;   /* further parts of the reply message (array) or NULL; owned */
	json_object *sub_ext; /* status sub-state to park in; NULL = awaiting-next-message */
	char *child_task;     /* a sub-task whose first turn runs after commit; free */
	int64_t child_turn;
};
void th_cmd_result_free(struct th_cmd_result *r);

#endif
