/* SPDX-License-Identifier: Apache-2.0 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "model/model.h"
#include "util/buf.h"

th_err th_model_echo(const struct th_config *cfg, const struct th_model_input *in,
                     th_model_cut_fn cut, void *cut_arg, struct th_model_output *out,
                     struct th_error *e)
{
	/* The delay lets tests hold a turn open; it is sliced so a cut ends it quickly. */
	for (int waited = 0; waited < cfg->echo_delay_ms; waited += 20) {
		if (cut != NULL && cut(cut_arg)) {
			out->cut = 1;
			return TH_OK;
		}
		int slice = cfg->echo_delay_ms - waited < 20 ? cfg->echo_delay_ms - waited : 20;
		struct timespec ts = {0, (long)slice * 1000000L};
		nanosleep(&ts, NULL);
	}
	if (cut != NULL && cut(cut_arg)) {
		out->cut = 1;
		return TH_OK;
	}
	struct th_buf b;
	th_buf_init(&b);
	th_buf_printf(&b, "echo: %s", in->prompt != NULL ? in->prompt : "");
	if (b.oom) {
		th_buf_free(&b);
		return th_error_set(e, TH_ENOMEM, "out of memory");
	}
	out->text = th_buf_take(&b);
	return TH_OK;
}
