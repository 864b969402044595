/* SPDX-License-Identifier: Apache-2.0 */
/* builtins.h — the built-in slash commands (CMD-3). Each works without a model. A
 * built-in runs inside the turn's final transaction, after the cut check, so its
 * changes and its reply are written together or not at all. */
#ifndef TH_TURN_BUILTINS_H
#define TH_TURN_BUILTINS_H

#include <json-c/json.h>
#include <stdint.h>

#include "turn/context.h"
#include "domain/reply.h"
#include "turn/commands.h"
#include "store/store.h"
#include "util/buf.h"
#include "util/err.h"

/* Runs built-in c for the task in row (loaded in the current transaction) on behalf of
 * sender with args. Bad arguments are not an error: the reply explains the usage and
 * nothing changes (CMD-5). */
th_err th_builtin_run(const struct th_turn_ctx *tc, const struct th_command *c,
                      struct th_task_row *row, const char *sender, const char *args,
                      struct th_cmd_result *res, struct th_error *e);

/* ID-5: /invite and /role change participants; only admin and reporter may. Returns
 * TH_EUNSUPPORTED naming the role when text is such a command and role may not. */
th_err th_builtin_permitted(const struct th_registry *r, const char *text, const char *sender,
                            const char *role, struct th_error *e);

#endif
