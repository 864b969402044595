/* SPDX-License-Identifier: Apache-2.0 */
/* app.c — the one thing the domain may do with the process context: leave work for
 * after the response (th_app_defer). Building, running and closing the context is the
 * worker's (worker/process.c). */
#include "app.h"

#include <stdlib.h>
#include <string.h>

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
