/* push.h — push notifications (PUSH-1..PUSH-4): the four config operations and the
 * delivery of queued events to webhooks.
 *
 * Events are queued by harness/events.c in the transaction that records them (one
 * push_outbox row per config); th_push_deliver_due POSTs them later, outside any
 * transaction, with retries and back-off, so a slow webhook never blocks a request and
 * a worker crash loses no delivery. */
#ifndef TH_PUSH_PUSH_H
#define TH_PUSH_PUSH_H

#include <json-c/json.h>

#include "app.h"
#include "service/service.h"
#include "util/err.h"

/* Runs CreateTaskPushNotificationConfig, GetTaskPushNotificationConfig,
 * ListTaskPushNotificationConfigs or DeleteTaskPushNotificationConfig (op) for the
 * caller: configs belong to the task and to the participant who created them (PUSH-1);
 * any participant of the task, watchers included (ID-4), manages their own. params is
 * the operation's ProtoJSON request; *result the ProtoJSON result (NULL for Delete). */
th_err th_push_op(struct th_app *app, const struct th_call *call, enum th_op op,
                  json_object *params, json_object **result, struct th_error *e);

/* SendMessage may carry a config inline (configuration.taskPushNotificationConfig, its
 * taskId empty): th_push_inline_check validates it before the request's transaction
 * (fields, the URL with its DNS look-up, the key when it carries secrets), and
 * th_push_inline_attach stores it for the message's task inside that transaction. */
th_err th_push_inline_check(struct th_app *app, json_object *config, struct th_error *e);
th_err th_push_inline_attach(struct th_app *app, const char *participant, const char *task_id,
                             json_object *config, struct th_error *e);

/* Delivers due outbox rows for at most budget_ms (each POST with its own timeout);
 * returns how many were delivered. For the CLI (`tiny-harness push`) and tests. */
int th_push_deliver_due(struct th_app *app, int budget_ms);
/* After a request: th_push_deliver_due when this worker queued deliveries or 250 ms
 * have passed since it last looked; otherwise nothing (no query). */
int th_push_after_request(struct th_app *app, int budget_ms);

#endif
