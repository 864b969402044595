/* SPDX-License-Identifier: Apache-2.0 */
/* enums.c — TaskState names and numbers (A2A 1.0 §2.2). */
#include "a2a/a2a.h"

#include <stdlib.h>
#include <string.h>

static const char *const state_names[] = {
    [TH_STATE_UNSPECIFIED] = "TASK_STATE_UNSPECIFIED",
    [TH_STATE_SUBMITTED] = "TASK_STATE_SUBMITTED",
    [TH_STATE_WORKING] = "TASK_STATE_WORKING",
    [TH_STATE_COMPLETED] = "TASK_STATE_COMPLETED",
    [TH_STATE_FAILED] = "TASK_STATE_FAILED",
    [TH_STATE_CANCELED] = "TASK_STATE_CANCELED",
    [TH_STATE_INPUT_REQUIRED] = "TASK_STATE_INPUT_REQUIRED",
    [TH_STATE_REJECTED] = "TASK_STATE_REJECTED",
    [TH_STATE_AUTH_REQUIRED] = "TASK_STATE_AUTH_REQUIRED",
};
#define N_STATES ((int)(sizeof state_names / sizeof state_names[0]))

const char *th_state_name(enum th_state s)
{
	int i = (int)s;
	if (i < 0 || i >= N_STATES)
		return state_names[TH_STATE_UNSPECIFIED];
	return state_names[i];
}

int th_state_from_text(const char *s)
{
	if (s == NULL || *s == '\0')
		return -1;
	for (int i = 0; i < N_STATES; i++)
		if (strcmp(s, state_names[i]) == 0)
			return i;
	/* A number, as REST query values and ProtoJSON both allow. */
	const char *p = s;
	while (*p >= '0' && *p <= '9')
		p++;
	if (*p != '\0' || p - s > 3)
		return -1;
	int v = atoi(s);
	return v < N_STATES ? v : -1;
}

int th_state_from_json(json_object *v)
{
	if (v == NULL)
		return -1;
	if (json_object_is_type(v, json_type_string))
		return th_state_from_text(json_object_get_string(v));
	if (json_object_is_type(v, json_type_int)) {
		int64_t n = json_object_get_int64(v);
		return n >= 0 && n < N_STATES ? (int)n : -1;
	}
	return -1;
}

int th_state_terminal(enum th_state s)
{
	return s == TH_STATE_COMPLETED || s == TH_STATE_FAILED || s == TH_STATE_CANCELED ||
	       s == TH_STATE_REJECTED;
}

int th_state_interrupted(enum th_state s)
{
	return s == TH_STATE_INPUT_REQUIRED || s == TH_STATE_AUTH_REQUIRED;
}
