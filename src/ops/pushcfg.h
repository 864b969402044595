/* SPDX-License-Identifier: Apache-2.0 */
/* pushcfg.h — push notification configs (PUSH-1): the four operations service/ runs
 * for Create/Get/List/DeleteTaskPushNotificationConfig, and the config SendMessage may
 * carry inline, for intake.
 *
 * A config belongs to the task and to the participant who created it: any participant
 * of the task, watchers included (ID-4), manages their own and never sees another's. A
 * stranger or an unknown task gets the one TaskNotFound of domain/access.c (ID-3).
 * Requests arrive decoded (a2a/push.c); URLs are checked and secrets sealed by push/
 * before anything is stored. */
#ifndef TH_OPS_PUSHCFG_H
#define TH_OPS_PUSHCFG_H

#include <json-c/json.h>

#include "a2a/a2a.h"
#include "util/err.h"

struct th_config;
struct th_store;

/* Each operation takes the caller (participant, non-empty) and its decoded request;
 * *result is the ProtoJSON result, a new reference on TH_OK. Returned configs never
 * carry token or credentials (docs/decisions/decision-008.md). */

/* Stores the config after the access check and the URL check (with DNS, before the
 * short transaction); the same id replaces the caller's own config; at most
 * push_max_configs per participant and task. *result: the config. */
th_err th_pushcfg_create(struct th_store *st, const struct th_config *cfg, const char *participant,
                         const struct th_push_create_req *req, json_object **result,
                         struct th_error *e);
/* *result: the config, or TaskNotFound naming it when the caller has none by that id. */
th_err th_pushcfg_get(struct th_store *st, const char *participant,
                      const struct th_push_get_req *req, json_object **result, struct th_error *e);
/* *result: {configs: [...], nextPageToken}, the caller's configs oldest first. */
th_err th_pushcfg_list(struct th_store *st, const char *participant,
                       const struct th_push_list_req *req, json_object **result,
                       struct th_error *e);
/* Idempotent (A2A §3.7): a config that is not there answers like a deleted one. */
th_err th_pushcfg_delete(struct th_store *st, const char *participant,
                         const struct th_push_get_req *req, struct th_error *e);

/* RET-4 (decision-076): *result is {deadLetters: [...], nextPageToken}, the dead letters of
 * the configs participant owns on tasks of req->tenant, newest death first, req->page_size
 * of them; each names its task, config, webhook URL (redacted, SEC-6), event seq, attempts,
 * last error and when it was queued and died. A pageToken this server did not issue is
 * TH_EINVAL naming it. A read: nothing is written. */
th_err th_pushcfg_dead_letters(struct th_store *st, const char *participant,
                               const struct th_dead_letters_req *req, json_object **result,
                               struct th_error *e);

/* SendMessage's configuration.taskPushNotificationConfig: th_pushcfg_inline_check
 * decodes it into *out (release with th_push_create_req_free, also on failure) and
 * checks it before the request's transaction — the URL with its DNS look-up, the key
 * when it carries secrets; th_pushcfg_inline_attach stores the checked config for the
 * message's task and sender inside that transaction, as Create would. */
th_err th_pushcfg_inline_check(const struct th_config *cfg, json_object *config,
                               struct th_push_create_req *out, struct th_error *e);
th_err th_pushcfg_inline_attach(struct th_store *st, const struct th_config *cfg,
                                const char *participant, const char *task_id,
                                const struct th_push_create_req *push, struct th_error *e);

#endif
