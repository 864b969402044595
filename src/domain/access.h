/* SPDX-License-Identifier: Apache-2.0 */
/* access.h — who may do what on a task (ID-1..ID-4). One place decides, so every
 * operation refuses with the same words. */
#ifndef TH_DOMAIN_ACCESS_H
#define TH_DOMAIN_ACCESS_H

#include "store/store.h"
#include "util/err.h"
#include "util/idrule.h"

/* The agent's own participant id: assignee of every task it is given. */
#define TH_AGENT_ID TH_ID_AGENT

enum th_access {
	TH_ACCESS_READ, /* GetTask, SubscribeToTask: any participant, watchers included */
	TH_ACCESS_WRITE /* messages, completion, cancel, changes: not watchers (ID-4) */
};

/* Checks participant against task_id in tenant (TEN-2: NULL or "" is the default tenant;
 * a task of another tenant is not found, with the same text): none asserted → TH_EINVAL "no
 * participant asserted"; no such task or not a participant → TH_ENOTFOUND with one text for both
 * (ID-3); a watcher asking to write → TH_EUNSUPPORTED naming the role (ID-4).
 * what names the refused action for that message ("send messages to"). On success
 * *role (if role is not NULL) receives the participant's role; caller frees. */
th_err th_access_check(struct th_store *st, const char *tenant, const char *task_id,
                       const char *participant, enum th_access need, const char *what, char **role,
                       struct th_error *e);

/* The one TaskNotFound error (ID-3: the same for unknown and foreign tasks). */
th_err th_access_not_found(const char *task_id, struct th_error *e);

/* The InvalidParams error for a request with no sender (ID-3). */
th_err th_access_no_participant(struct th_error *e);

#endif
