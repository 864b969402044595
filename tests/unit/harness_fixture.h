/* SPDX-License-Identifier: Apache-2.0 */
/* harness_fixture.h — a real app (config defaults, a temp-file SQLite store, the
 * built-in command registry) for unit tests that drive the service layer, plus small
 * helpers to send messages and count rows. Only tests include it. */
#ifndef TH_TESTS_HARNESS_FIXTURE_H
#define TH_TESTS_HARNESS_FIXTURE_H

#include <json-c/json.h>

#include "app.h"
#include "worker/process.h"
#include "service/service.h"

/* Opens *app on a fresh database in a new temp directory (removed by fx_close).
 * cfg_tweak (may be NULL) adjusts the configuration before the app opens. */
void fx_open(struct th_app *app, void (*cfg_tweak)(struct th_config *));
void fx_close(struct th_app *app);

/* Extension bits fx_call sends as activated (A2A-Extensions); 0 by default. */
extern unsigned fx_extensions;

/* Calls op with params parsed from json_text (printf-style) as participant
 * (NULL = none). Returns the result (caller puts) or NULL with *err filled. */
json_object *fx_call(struct th_app *app, const char *participant, enum th_op op,
                     struct th_error *err, const char *json_fmt, ...)
    __attribute__((format(printf, 5, 6)));

/* SendMessage of one text part; task_id may be NULL (new task). Returns the Task. */
json_object *fx_send_text(struct th_app *app, const char *participant, const char *task_id,
                          const char *message_id, const char *text, struct th_error *err);

/* The same with returnImmediately (TURN-5): the Task as answered before its turn, which
 * waits in app->pending until th_app_run_pending. */
json_object *fx_send_later(struct th_app *app, const char *participant, const char *task_id,
                           const char *message_id, const char *text, struct th_error *err);

/* SendMessage of the completion control envelope. Returns the Task or NULL. */
json_object *fx_complete(struct th_app *app, const char *participant, const char *task_id,
                         struct th_error *err);

/* SELECT COUNT(*) FROM table (a whole-table count, to prove nothing was stored). */
long fx_count(struct th_app *app, const char *table);

/* The first column of the first row of the SQL that fmt and its arguments make, as text
 * ("NULL" for SQL NULL); the test fails when the statement does not prepare or gives no
 * row. The caller frees it. For a look at rows the harness's API does not return. */
char *fx_text(struct th_app *app, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Adds a participant with role to a task directly through the store. */
void fx_add_participant(struct th_app *app, const char *task_id, const char *id, const char *role);

/* Shortcuts into a Task object. Borrowed strings. */
const char *fx_task_id(json_object *task);
const char *fx_state(json_object *task);
const char *fx_status_text(json_object *task);
const char *fx_sub_state(json_object *task); /* NULL when the status key is absent */

#endif
