#include "model/model.h"

#include <stdlib.h>
#include <string.h>

th_err th_model_run(const struct th_config *cfg, const struct th_model_input *in,
                    th_model_cut_fn cut, void *cut_arg, struct th_model_output *out,
                    struct th_error *e)
{
	memset(out, 0, sizeof *out);
	if (strcmp(cfg->model, "echo") == 0)
		return th_model_echo(cfg, in, cut, cut_arg, out, e);
	return th_error_set(e, TH_EINTERNAL, "model backend '%s' is not available", cfg->model);
}

void th_model_output_free(struct th_model_output *out)
{
	free(out->text);
	out->text = NULL;
	json_object_put(out->tool_calls);
	out->tool_calls = NULL;
}
