/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz_app.h — the application the fuzz targets serve requests with: the real service
 * over a real SQLite store in a new temporary directory (named after prefix), streams
 * short, no command files. Aborts when it cannot be opened. */
#ifndef TH_FUZZ_APP_H
#define TH_FUZZ_APP_H

#include <stdio.h>
#include <stdlib.h>

#include "app.h"
#include "config/settings.h"
#include "worker/process.h"

static void fuzz_app_open(struct th_app *app, const char *prefix)
{
	char dir[64];
	snprintf(dir, sizeof dir, "/tmp/%s-XXXXXX", prefix);
	if (mkdtemp(dir) == NULL)
		abort();
	struct th_config *cfg = malloc(sizeof *cfg);
	struct th_error e;
	char db[96];
	snprintf(db, sizeof db, "%s/db", dir);
	if (cfg == NULL || th_config_defaults(cfg) != TH_OK ||
	    th_config_set(cfg, "db", db, &e) != TH_OK ||
	    th_config_set(cfg, "stream_max_ms", "100", &e) != TH_OK ||
	    th_config_set(cfg, "heartbeat_ms", "100", &e) != TH_OK ||
	    th_config_set(cfg, "commands_dir", "/nonexistent", &e) != TH_OK ||
	    th_app_open(app, cfg, 0, &e) != TH_OK)
		abort();
}

#endif
