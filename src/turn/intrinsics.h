/* SPDX-License-Identifier: Apache-2.0 */
/* intrinsics.h — the tools a model may call during a turn (TURN-3): create_plan,
 * complete_step, spawn_subtask, ask_participant, set_participant_role, emit_ui. Their
 * input schemas are docs/a2a/ext/intrinsics/NAME.json, embedded at build time. Each call
 * is applied inside the turn's transaction for that round; bad arguments give the model
 * an error result and never fail the turn. */
#ifndef TH_TURN_INTRINSICS_H
#define TH_TURN_INTRINSICS_H

#include <json-c/json.h>
#include <stdint.h>

#include "turn/context.h"
#include "store/store.h"
#include "util/err.h"

struct th_intrinsic_schema {
	const char *name;
	const char *schema; /* JSON text */
};
extern const struct th_intrinsic_schema th_intrinsic_schemas[];
extern const int th_intrinsic_schemas_n;

/* The tools as a backend is given them: [{"name","description","input_schema"}…].
 * A new reference; NULL on allocation failure. */
json_object *th_intrinsics_tools(void);

/* The tools of the process, parsed on the first call (a turn that offers them) and kept
 * in *kept (struct th_turn_ctx's tools, owned by whoever owns *kept); borrowed from it.
 * NULL on allocation failure (tried again next time). A plain-CGI request that runs no
 * model turn never parses them (PKG-4). */
json_object *th_intrinsics_tools_of(json_object **kept);

/* What a round of calls did that outlives its transaction. */
struct th_intrinsic_effects {
	json_object *ask;       /* ask_participant: the status sub-state to park in; owned */
	json_object *ask_parts; /* its help_request channel part(s) for the reply; owned */
	char *ask_text;         /* the question, the reply's text; free */
	char *child_task;       /* spawn_subtask: a child whose first turn runs after commit */
	int64_t child_turn;
};
void th_intrinsic_effects_free(struct th_intrinsic_effects *fx);

/* Applies one call for the task in row (loaded in the caller's transaction) on behalf of
 * actor (the participant whose message started the turn). *result is the tool result
 * {"id","name","ok","content"} (a new reference). Only a store failure is an error. */
th_err th_intrinsic_apply(const struct th_turn_ctx *tc, struct th_task_row *row, const char *actor,
                          json_object *call, struct th_intrinsic_effects *fx, json_object **result,
                          struct th_error *e);

#endif
