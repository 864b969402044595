/* SPDX-License-Identifier: Apache-2.0 */
/* model.c — picks the backend a configuration names (TURN-2). */
#include "model/model.h"

#include <string.h>

#include "model/model_int.h"

th_err th_model_run(const struct th_config *cfg, const struct th_model_input *in,
                    th_model_cut_fn cut, void *cut_arg, struct th_model_output *out,
                    struct th_error *e)
{
	memset(out, 0, sizeof *out);
	if (strcmp(cfg->model, "echo") == 0)
		return th_model_echo(cfg, in, cut, cut_arg, out, e);
	if (strcmp(cfg->model, "exec") == 0)
		return th_model_exec(cfg, in, cut, cut_arg, out, e);
	if (strcmp(cfg->model, "openai") == 0)
		return th_model_openai(cfg, in, cut, cut_arg, out, e);
	return th_error_set(e, TH_EINTERNAL, "model backend '%s' is not available", cfg->model);
}

int th_model_wants_context(const struct th_config *cfg)
{
	return strcmp(cfg->model, "echo") != 0;
}
