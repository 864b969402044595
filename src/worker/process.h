/* SPDX-License-Identifier: Apache-2.0 */
/* process.h — building, running and closing a worker's context (struct th_app). */
#ifndef TH_WORKER_PROCESS_H
#define TH_WORKER_PROCESS_H

#include <stdint.h>

#include "app.h"
#include "util/err.h"

struct th_config;
struct th_store_opts;

/* serving for a process that answers one request and exits (plain CGI): a worker (as 1)
 * that keeps no GetTask answers (nobody would ask again) and leaves -wal and -shm for the
 * next process (th_store_opts.keep_wal_files; PKG-4, decision-062). */
#define TH_APP_ONE_REQUEST 2

/* How a worker opens a database connection: every connection of a process (the request
 * loop's and the stream thread's) is opened the same way. serving: a web server's worker,
 * which starts even when the database cannot be opened yet and heals (STORE-9); an
 * operator command fails instead. */
void th_worker_store_opts(const struct th_config *cfg, int serving, struct th_store_opts *o);

/* Takes ownership of cfg (heap-allocated, loaded) and opens the store (serving as in
 * th_worker_store_opts, TH_APP_ONE_REQUEST included) and loads the command registry. On
 * failure everything taken is freed. */
th_err th_app_open(struct th_app *app, struct th_config *cfg, int serving, struct th_error *e);
void th_app_close(struct th_app *app);

/* Queues after-response work on app (app->defer's queue): run turn_id of task_id (held
 * by this worker), or, with turn_id 0, recover the task's expired turns. A task queued
 * for recovery twice is queued once. On TH_ENOMEM nothing is queued (the turn stays in
 * `turns` for recovery). */
th_err th_app_defer(struct th_app *app, const char *task_id, int64_t turn_id);

/* Runs the work queued by requests that already answered (TURN-5, TURN-7); call it
 * after the response is finished. */
void th_app_run_pending(struct th_app *app);

#endif
