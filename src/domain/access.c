/* SPDX-License-Identifier: Apache-2.0 */
#include "domain/access.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

th_err th_access_not_found(const char *task_id, struct th_error *e)
{
	th_error_set(e, TH_ENOTFOUND, "task %.200s not found", task_id);
	th_error_task(e, task_id);
	return TH_ENOTFOUND;
}

th_err th_access_no_participant(struct th_error *e)
{
	return th_error_set(
	    e, TH_EINVAL,
	    "no participant asserted: send the X-Participant-Id header naming who you are");
}

th_err th_access_check(struct th_store *st, const char *tenant, const char *task_id,
                       const char *participant, enum th_access need, const char *what, char **role,
                       struct th_error *e)
{
	if (role != NULL)
		*role = NULL;
	if (participant == NULL || *participant == '\0')
		return th_access_no_participant(e);
	char *r = NULL;
	struct th_error sub;
	th_error_clear(&sub);
	th_err rc = th_store_participant_role_in(st, tenant != NULL ? tenant : "", task_id,
	                                         participant, &r, &sub);
	if (rc == TH_ENOTFOUND)
		return th_access_not_found(task_id, e);
	if (rc != TH_OK)
		return th_error_set(e, rc, "%s", sub.msg);
	if (need == TH_ACCESS_WRITE && strcmp(r, "watcher") == 0) {
		free(r);
		th_error_set(
		    e, TH_EUNSUPPORTED,
		    "participant %.100s is a watcher on task %.100s; watchers may read the "
		    "task and answer questions addressed to them, but not %s it",
		    participant, task_id, what);
		th_error_task(e, task_id);
		return TH_EUNSUPPORTED;
	}
	if (role != NULL)
		*role = r;
	else
		free(r);
	return TH_OK;
}
