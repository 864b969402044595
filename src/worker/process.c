/* SPDX-License-Identifier: Apache-2.0 */
/* process.c — a worker process's context (struct th_app): built once after the process
 * starts, the after-response queue kept and run, everything freed at exit. It sits above
 * the domain: it opens the store, loads the command registry (the card and the intrinsic
 * tools are built on first use by service.c and intrinsics.c), and runs the turns
 * requests left behind (TURN-5, TURN-7), which they queued through app->defer. */
#include "worker/process.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/settings.h"
#include "turn/commands.h"
#include "turn/turn.h"
#include "store/store.h"
#include "util/jsonx.h"
#include "util/log.h"
#include "util/memo.h"
#include "util/metrics.h"
#include "util/text.h"

void th_worker_store_opts(const struct th_config *cfg, int serving, struct th_store_opts *o)
{
	*o = (struct th_store_opts){
	    .path = cfg->db_path,
	    .sync_full = cfg->sync_full,
	    .busy_timeout_ms = cfg->busy_timeout_ms,
	    .group = cfg->db_group,
	    .heal_later = serving,
	    .pooled = cfg->db_pooler == 1,
	    .listen = cfg->db_listen,
	    .keep_wal_files = serving == TH_APP_ONE_REQUEST,
	};
}

th_err th_app_defer(struct th_app *app, const char *task_id, int64_t turn_id)
{
	for (size_t i = 0; turn_id == 0 && i < app->npending; i++)
		if (app->pending[i].turn_id == 0 && strcmp(app->pending[i].task_id, task_id) == 0)
			return TH_OK;
	if (app->npending == app->cap_pending) {
		size_t cap = app->cap_pending ? app->cap_pending * 2 : 8;
		struct th_pending_turn *grown = realloc(app->pending, cap * sizeof *grown);
		if (grown == NULL)
			return TH_ENOMEM;
		app->pending = grown;
		app->cap_pending = cap;
	}
	char *id = strdup(task_id);
	if (id == NULL)
		return TH_ENOMEM;
	app->pending[app->npending].task_id = id;
	app->pending[app->npending++].turn_id = turn_id;
	return TH_OK;
}

/* struct th_defer's queue over app's pending work (impl is the app; th_app_turns). */
static th_err queue_pending(void *impl, const char *task_id, int64_t turn_id)
{
	return th_app_defer(impl, task_id, turn_id);
}

/* OBS-2, decision-070: a serving process counts into the site's shared file (metrics_file,
 * else <db>-metrics beside an SQLite db). Operator commands do not: run as another user
 * (root) they would make a file the workers cannot open. A file that cannot be used turns
 * counting off in this process only, said once in the log; the endpoint then says why. */
static void open_metrics(const struct th_config *cfg)
{
	if (!cfg->metrics || th_mx_on())
		return;
	char path[4096];
	const char *db = cfg->db_path;
	int pg = db == NULL || th_is_pg_uri(db);
	if (cfg->metrics_file != NULL)
		snprintf(path, sizeof path, "%s", cfg->metrics_file);
	else if (pg || snprintf(path, sizeof path, "%s-metrics", db) >= (int)sizeof path)
		return;
	struct th_error e;
	th_error_clear(&e);
	if (th_mx_open(path, &e) != TH_OK)
		th_log(TH_LOG_WARN, "metrics are not counted by this process: %s", e.msg);
}

th_err th_app_open(struct th_app *app, struct th_config *cfg, int serving, struct th_error *e)
{
	memset(app, 0, sizeof *app);
	app->cfg = cfg;
	app->defer = queue_pending;
	struct th_store_opts o;
	th_worker_store_opts(cfg, serving, &o);
	th_err rc = th_store_open(&o, &app->store, e);
	if (rc == TH_OK)
		rc = th_registry_load(cfg->commands_dir, &app->commands, e);
	/* The card and the intrinsic tools are built on first use (th_service_card,
	 * th_intrinsics_tools_of): a plain-CGI request needs at most one of them (PKG-4). */
	if (rc == TH_OK && serving != TH_APP_ONE_REQUEST)
		app->answers = th_memo_new(); /* NULL: answers are not kept */
	if (rc == TH_OK && serving)
		open_metrics(cfg); /* after the store: the database's directory exists now */
	if (rc != TH_OK)
		th_app_close(app);
	return rc;
}

void th_app_close(struct th_app *app)
{
	for (size_t i = 0; i < app->npending; i++)
		free(app->pending[i].task_id);
	free(app->pending);
	json_object_put(app->card);
	free(app->card_text);
	json_object_put(app->tools);
	th_memo_free(app->answers);
	th_registry_free(app->commands);
	if (app->store != NULL)
		th_store_close(app->store);
	if (app->cfg != NULL) {
		th_config_free(app->cfg);
		free(app->cfg);
	}
	memset(app, 0, sizeof *app);
}

void th_app_run_pending(struct th_app *app)
{
	/* A turn run here may queue more (a sub-task's first turn): index, not pointer. */
	for (size_t i = 0; i < app->npending; i++) {
		struct th_error e;
		th_error_clear(&e);
		int64_t turn_id = app->pending[i].turn_id;
		struct th_turn_ctx tc = th_app_turns(app);
		th_err rc = turn_id > 0 ? th_turn_run(&tc, app->pending[i].task_id, turn_id, &e)
		                        : th_turn_recover(&tc, app->pending[i].task_id, NULL, &e);
		if (rc != TH_OK)
			th_log(TH_LOG_ERROR, "%s %lld on task %s: %s",
			       turn_id > 0 ? "turn" : "recovering turns, e.g.", (long long)turn_id,
			       app->pending[i].task_id, e.msg);
	}
	for (size_t i = 0; i < app->npending; i++)
		free(app->pending[i].task_id);
	app->npending = 0;
}
