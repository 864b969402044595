/* app.h — the process context: what one worker process holds across requests.
 * th_app_open builds it once after the worker starts (never across fork) and
 * th_app_close frees it at exit; every request borrows it. */
#ifndef TH_APP_H
#define TH_APP_H

#include <json-c/json.h>
#include <stdint.h>

#include "util/err.h"

struct th_config;
struct th_store;
struct th_registry;

/* A turn accepted by a request that answered at once (returnImmediately): the
 * worker runs it after the response is finished (TURN-5). It is also a queued row in
 * `turns`, so a worker that dies first leaves it to lease recovery. */
struct th_pending_turn {
	char *task_id;  /* free (th_app_run_pending) */
	int64_t turn_id;
};

#define TH_APP_MAX_PENDING 8

struct th_app {
	struct th_config *cfg;        /* owned; th_app_close (th_config_free + free) */
	struct th_store *store;       /* owned; th_app_close (th_store_close) */
	struct th_registry *commands; /* owned; th_app_close (th_registry_free) */
	json_object *card;            /* owned; the agent card, built once; json_object_put */
	json_object *tools;           /* owned; the intrinsic tools offered to models (TURN-3),
	                                 parsed once from the embedded schemas; json_object_put */
	struct th_pending_turn pending[TH_APP_MAX_PENDING];
	int npending;
};

/* Takes ownership of cfg (heap-allocated, loaded) and opens the store, loads the
 * command registry and builds the card. On failure everything taken is freed. */
th_err th_app_open(struct th_app *app, struct th_config *cfg, struct th_error *e);
void th_app_close(struct th_app *app);

/* Runs the turns queued by requests that already answered (TURN-5); call it after
 * the response is finished. */
void th_app_run_pending(struct th_app *app);

#endif
