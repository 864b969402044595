/* model.h — turn backends (TURN-2). A backend gets the turn's context and returns
 * the agent's reply; it never touches the store. It must return promptly once
 * cut(cut_arg) says the turn was cut (CTL-3). */
#ifndef TH_MODEL_MODEL_H
#define TH_MODEL_MODEL_H

#include <json-c/json.h>

#include "config/config.h"
#include "util/err.h"

struct th_model_input {
	const char *task_id;
	const char *goal;
	json_object *history; /* borrowed: the task's messages, oldest first */
	const char *prompt;   /* borrowed: the new input as text */
};

struct th_model_output {
	char *text; /* the reply; free (th_model_output_free) */
	int cut;    /* the turn was cut while the model ran; text is NULL */
};

typedef int (*th_model_cut_fn)(void *arg);

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
