/* SPDX-License-Identifier: Apache-2.0 */
/* commands.h — the slash-command registry (CMD-1, CMD-2): built-ins plus one
 * command per conf/commands/NAME.md file, loaded once at start-up. */
#ifndef TH_TURN_COMMANDS_H
#define TH_TURN_COMMANDS_H

#include <json-c/json.h>

#include "util/err.h"

enum th_command_kind { TH_CMD_BUILTIN, TH_CMD_FILE };

struct th_command {
	char *name;          /* without the slash; free (th_registry_free) */
	char *description;   /* free */
	char *argument_hint; /* possibly ""; free */
	char *template_text; /* file commands: body with $ARGUMENTS; NULL for built-ins; free */
	enum th_command_kind kind;
};

struct th_registry {
	struct th_command *cmds; /* free (th_registry_free) */
	size_t n;
};

/* Built-ins, then every dir/NAME.md (a missing dir is no error; a malformed file or
 * a name clash stops start-up with a message naming the file). */
th_err th_registry_load(const char *dir, struct th_registry **out, struct th_error *e);
void th_registry_free(struct th_registry *r);

/* [{"name","description","argument_hint"}…] for the card (CARD-2). New reference. */
json_object *th_registry_card_params(const struct th_registry *r);

/* The command text names (CMD-2: "/NAME" followed by white space or the end), or
 * NULL. *args receives the argument text with leading white space skipped. */
const struct th_command *th_registry_match(const struct th_registry *r, const char *text,
                                           const char **args);

/* A file command's prompt: its template with $ARGUMENTS replaced (CMD-4). Caller
 * frees; NULL on allocation failure. */
char *th_command_expand(const struct th_command *c, const char *args);

#endif
