/* SPDX-License-Identifier: Apache-2.0 */
/* model_int.h — what the backends of src/model share; not for other layers. */
#ifndef TH_MODEL_MODEL_INT_H
#define TH_MODEL_MODEL_INT_H

#include <json-c/json.h>

#include "model/model.h"
#include "util/err.h"

/* Largest reply a backend reads from a program or an endpoint, in bytes. */
#define TH_MODEL_MAX_REPLY (1024 * 1024)
/* JSON nesting a reply may have (tool arguments carry A2UI trees). */
#define TH_MODEL_JSON_DEPTH 64
/* How often a waiting backend asks whether the turn was cut, in ms. */
#define TH_MODEL_CUT_POLL_MS 20

/* Checks one tool call {"id"?: string, "name": string, "arguments": object} as a
 * backend received it (who names the source in messages, e.g. "model program /x")
 * and appends a normalised copy to calls (a missing or empty id becomes
 * "call_<uuid>"). Returns TH_EINTERNAL naming the problem. */
th_err th_model_add_call(json_object *calls, json_object *call, size_t index, const char *who,
                         struct th_error *e);

/* The "exec" backend: runs cfg->model_command (exec.c). */
th_err th_model_exec(const struct th_config *cfg, const struct th_model_input *in,
                     th_model_cut_fn cut, void *cut_arg, struct th_model_output *out,
                     struct th_error *e);

/* The "openai" backend: one Chat Completions request (openai.c). */
th_err th_model_openai(const struct th_config *cfg, const struct th_model_input *in,
                       th_model_cut_fn cut, void *cut_arg, struct th_model_output *out,
                       struct th_error *e);

#endif
