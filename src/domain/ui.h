/* SPDX-License-Identifier: Apache-2.0 */
/* ui.h — A2UI in the harness (UI-1..UI-4, EXT-4). src/a2ui validates; this file keeps
 * each task's surface registry in the store, emits surfaces as artifact updates, admits
 * user actions, and runs the /confirm approval both as a Card and in text. */
#ifndef TH_DOMAIN_UI_H
#define TH_DOMAIN_UI_H

#include <json-c/json.h>

#include "config/settings.h"
#include "domain/inbound.h"
#include "domain/reply.h"
#include "store/store.h"
#include "util/err.h"

/* EXT-4: when the client activated the A2UI extension or sent a2uiClientCapabilities
 * naming the basic catalog, the task gets a surface registry; surfaces are emitted only
 * to tasks that have one. Also refuses capabilities with inline catalogs (UI-2). */
th_err th_ui_note_client(struct th_store *st, const char *task_id, unsigned extensions,
                         json_object *msg, struct th_error *e);

/* UI-2: validates every A2UI part of an inbound message against the task's registry
 * (encodings real clients send; versions v0.9 and v0.9.1; the action's surface,
 * component, name and context). TH_EINVAL names the reason; nothing is stored. On TH_OK
 * *actions counts the accepted actions and *reports the client error reports (kept,
 * not acted on). task_id NULL: a task not created yet, which has no surfaces. */
th_err th_ui_check_inbound(struct th_store *st, const char *task_id, json_object *msg, int *actions,
                           int *reports, struct th_error *e);

/* UI-1: validates messages (an array; borrowed) against the task's registry, records
 * them, stores them as artifact "a2ui:<n>" and appends its artifactUpdate event. */
th_err th_ui_emit(struct th_store *st, const struct th_config *cfg, const struct th_task_row *row,
                  json_object *messages, char **artifact_id, struct th_error *e);

/* *renders = 1 when the task's client said it renders A2UI (EXT-4: it has a registry). */
th_err th_ui_renders(struct th_store *st, const char *task_id, int *renders, struct th_error *e);

/* UI-4 /confirm QUESTION: a Card with Approve / Reject when the client renders A2UI,
 * else the question in text (answered "approve" / "reject"). */
th_err th_ui_confirm(struct th_store *st, const struct th_config *cfg, struct th_task_row *row,
                     const char *sender, const char *question, struct th_cmd_result *res,
                     struct th_error *e);

/* Whether msg (the turn's input, read into in by th_inbound_read) answers a pending
 * /confirm: a click on its Card or, for a question asked in text, the words approve /
 * reject as its only part. Read-only. */
int th_ui_is_decision(struct th_store *st, const char *task_id, json_object *msg,
                      const struct th_inbound *in);

/* UI-4: records the decision in msg (read into in) from sender as a channel message
 * ("<participant> approved: QUESTION"), closes the Card, and fills the reply. */
th_err th_ui_decide(struct th_store *st, const struct th_config *cfg, struct th_task_row *row,
                    const char *sender, json_object *msg, const struct th_inbound *in,
                    struct th_cmd_result *res, struct th_error *e);

#endif
