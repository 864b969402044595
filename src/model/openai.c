/* openai.c — the "openai" model backend (TURN-2). */
#include "model/model_int.h"

th_err th_model_openai(const struct th_config *cfg, const struct th_model_input *in,
                       th_model_cut_fn cut, void *cut_arg, struct th_model_output *out,
                       struct th_error *e)
{
	(void)cfg;
	(void)in;
	(void)cut;
	(void)cut_arg;
	(void)out;
	return th_error_set(e, TH_EINTERNAL, "model backend 'openai' is not built yet");
}
