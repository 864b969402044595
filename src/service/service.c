#include "service/service.h"

#include <string.h>

static const char *const methods[TH_OP_COUNT] = {
	[TH_OP_SEND_MESSAGE] = "SendMessage",
	[TH_OP_SEND_STREAMING_MESSAGE] = "SendStreamingMessage",
	[TH_OP_GET_TASK] = "GetTask",
	[TH_OP_LIST_TASKS] = "ListTasks",
	[TH_OP_CANCEL_TASK] = "CancelTask",
	[TH_OP_SUBSCRIBE_TO_TASK] = "SubscribeToTask",
	[TH_OP_CREATE_PUSH_CONFIG] = "CreateTaskPushNotificationConfig",
	[TH_OP_GET_PUSH_CONFIG] = "GetTaskPushNotificationConfig",
	[TH_OP_LIST_PUSH_CONFIGS] = "ListTaskPushNotificationConfigs",
	[TH_OP_DELETE_PUSH_CONFIG] = "DeleteTaskPushNotificationConfig",
	[TH_OP_GET_EXTENDED_CARD] = "GetExtendedAgentCard",
};

const char *th_op_method(enum th_op op)
{
	return (unsigned)op < TH_OP_COUNT ? methods[op] : NULL;
}

int th_op_from_method(const char *method)
{
	if (method == NULL)
		return -1;
	for (int i = 0; i < TH_OP_COUNT; i++)
		if (strcmp(methods[i], method) == 0)
			return i;
	return -1;
}

json_object *th_service_card(struct th_app *app)
{
	return app->card;
}

th_err th_service_call(struct th_app *app, const struct th_call *call, enum th_op op,
                       json_object *params, json_object **result, struct th_error *e)
{
	(void)app;
	(void)call;
	(void)params;
	*result = NULL;
	return th_error_set(e, TH_EUNSUPPORTED, "%s is not implemented yet", th_op_method(op));
}
