/* builtins.h — the built-in slash commands (CMD-3). Each works without a model and
 * answers with text, like a turn. */
#ifndef TH_HARNESS_BUILTINS_H
#define TH_HARNESS_BUILTINS_H

#include "app.h"
#include "harness/commands.h"
#include "store/store.h"
#include "util/err.h"

/* Runs built-in c for the task in row with args; *reply gets the text (caller frees). */
th_err th_builtin_run(struct th_app *app, const struct th_command *c, const struct th_task_row *row,
                      const char *args, char **reply, struct th_error *e);

#endif
