/* push.c — placeholder until the push module lands: every operation answers
 * PushNotificationNotSupported and nothing is delivered. */
#include "push/push.h"

th_err th_push_op(struct th_app *app, const struct th_call *call, enum th_op op,
                  json_object *params, json_object **result, struct th_error *e)
{
	(void)app;
	(void)call;
	(void)params;
	*result = NULL;
	return th_error_set(e, TH_EPUSHUNSUPPORTED,
	                    "%s: push notifications are not available on this server yet",
	                    th_op_method(op));
}

int th_push_deliver_due(struct th_app *app, int budget_ms)
{
	(void)app;
	(void)budget_ms;
	return 0;
}
