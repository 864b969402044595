/* SPDX-License-Identifier: Apache-2.0 */
/* context.c — what an operator's sub-command opens before it works: the configuration
 * (environment and file, as a worker reads them) and the process context over it. */
#include "cli/cli.h"

#include <stdio.h>
#include <stdlib.h>

#include "app.h"
#include "config/settings.h"
#include "worker/process.h"

struct th_config *th_cli_load_config(void)
{
	struct th_config *cfg = malloc(sizeof *cfg);
	struct th_error e;
	th_error_clear(&e);
	if (cfg == NULL || th_config_load(cfg, &e) != TH_OK) {
		fprintf(stderr, "tiny-harness: %s\n", cfg ? e.msg : "out of memory");
		free(cfg);
		return NULL;
	}
	return cfg;
}

int th_cli_open_app(struct th_app *app)
{
	struct th_config *cfg = th_cli_load_config();
	if (cfg == NULL)
		return -1;
	struct th_error e;
	th_error_clear(&e);
	if (th_app_open(app, cfg, 0, &e) != TH_OK) {
		fprintf(stderr, "tiny-harness: %s\n", e.msg);
		return -1;
	}
	return 0;
}
