/* SPDX-License-Identifier: Apache-2.0 */
/* model.h — turn backends (TURN-2). A backend gets the turn's context and returns
 * the agent's reply; it never touches the store. It must return promptly once
 * cut(cut_arg) says the turn was cut (CTL-3). */
#ifndef TH_MODEL_MODEL_H
#define TH_MODEL_MODEL_H

#include <json-c/json.h>

#include "config/settings.h"
#include "util/err.h"

/* What a backend sees of a turn (TURN-1). All members are borrowed. */
struct th_model_input {
	const char *task_id;
	const char *goal;
	json_object *task;    /* the task-extension object (name, goal, participants, plan,
	                         sub-tasks…), or NULL */
	json_object *history; /* the task's messages (A2A Message objects), oldest first */
	const char *prompt;   /* the new input as text */
	json_object *tools;   /* the intrinsic tools offered (TURN-3): an array of
	                         {"name", "description", "input_schema"}, or NULL for none */
	json_object *rounds;  /* earlier rounds of this turn, oldest first, or NULL: an array of
	                         {"tool_calls": [{"id","name","arguments"}],
	                          "results": [{"id","name","ok": bool,"content": string}]} */
};

struct th_model_output {
	char *text;              /* the reply; free (th_model_output_free); may be NULL when
	                            tool_calls is set */
	json_object *tool_calls; /* the intrinsics the model calls this round, or NULL: an array
	                            of {"id": string, "name": string, "arguments": object};
	                            json_object_put (th_model_output_free) */
	int cut;                 /* the turn was cut while the model ran; nothing else is set */
};

typedef int (*th_model_cut_fn)(void *arg);

/* 1 when the configured backend reads the task's context (history, task attributes)
 * and is offered the intrinsic tools: echo reads only the new input, so a turn for it
 * loads nothing else and parses no tool schemas. */
int th_model_wants_context(const struct th_config *cfg);

/* Runs the configured backend (cfg->model). */
th_err th_model_run(const struct th_config *cfg, const struct th_model_input *in,
                    th_model_cut_fn cut, void *cut_arg, struct th_model_output *out,
                    struct th_error *e);
void th_model_output_free(struct th_model_output *out);

/* The built-in echo backend: deterministic, no network; replies with an
 * acknowledgement quoting the input, after cfg->echo_delay_ms (checked for cuts
 * every 20 ms). */
th_err th_model_echo(const struct th_config *cfg, const struct th_model_input *in,
                     th_model_cut_fn cut, void *cut_arg, struct th_model_output *out,
                     struct th_error *e);

#endif
