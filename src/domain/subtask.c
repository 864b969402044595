/* SPDX-License-Identifier: Apache-2.0 */
#include "domain/access.h"
#include "domain/subtask.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "a2a/a2a.h"
#include "domain/status.h"
#include "domain/task.h"
#include "util/jsonx.h"

/* Walks up the links: at most the limit's number of reads. */
/* SEC-5: TH_EINVAL naming the limit when a child of parent_id would be deeper than
 * TH_SUBTASK_DEPTH_MAX; no write. */
static th_err check_depth(struct th_store *st, const char *parent_id, struct th_error *e)
{
	char *at = strdup(parent_id);
	int depth = 0; /* parent_id's */
	th_err rc = at != NULL ? TH_OK : th_error_set(e, TH_ENOMEM, "out of memory");
	while (rc == TH_OK && depth < TH_SUBTASK_DEPTH_MAX) {
		char *up = NULL;
		rc = th_store_subtask_parent(st, at, &up, e);
		free(at);
		at = up;
		if (rc == TH_ENOTFOUND) {
			th_error_clear(e);
			free(at);
			return TH_OK; /* reached the top within the limit */
		}
		depth++;
	}
	free(at);
	if (rc != TH_OK)
		return rc;
	return th_error_set(e, TH_EINVAL,
	                    "sub-tasks nest at most %d levels deep; %.100s is at level %d and "
	                    "cannot have sub-tasks",
	                    TH_SUBTASK_DEPTH_MAX, parent_id, TH_SUBTASK_DEPTH_MAX);
}

/* TASK-4: TH_EINVAL naming the limit when parent_id has max children already. */
static th_err check_count(struct th_store *st, size_t max, const char *parent_id,
                          struct th_error *e)
{
	struct th_subtask_ref *subs = NULL;
	size_t n = 0;
	th_err rc = th_store_subtasks(st, parent_id, 0, &subs, &n, e);
	th_subtask_refs_free(subs, n);
	if (rc == TH_OK && n >= max)
		rc = th_error_set(e, TH_EINVAL,
		                  "task %.100s already has %zu sub-tasks; the limit is %zu "
		                  "(max_subtasks)",
		                  parent_id, n, max);
	return rc;
}

th_err th_subtask_next_id(struct th_store *st, size_t max_subtasks, const char *parent_id,
                          char out[TH_ID_BUF], struct th_error *e)
{
	int64_t n = 0;
	th_err rc = check_count(st, max_subtasks, parent_id, e);
	if (rc == TH_OK)
		rc = check_depth(st, parent_id, e);
	if (rc == TH_OK)
		rc = th_store_subtask_next_number(st, parent_id, &n, e);
	if (rc != TH_OK)
		return rc;
	if ((size_t)snprintf(out, TH_ID_BUF, "%s.%lld", parent_id, (long long)n) >= TH_ID_BUF)
		return th_error_set(
		    e, TH_EINVAL,
		    "sub-tasks nest too deep under %.100s: a sub-task's id would be "
		    "longer than %d bytes",
		    parent_id, TH_ID_MAX);
	return TH_OK;
}

th_err th_subtask_parent_open(const struct th_task_row *parent, struct th_error *e)
{
	if (!th_state_terminal((enum th_state)parent->state))
		return TH_OK;
	th_error_set(e, TH_EUNSUPPORTED, "task %.200s is %s; a task that ended takes no sub-tasks",
	             parent->id, th_state_name((enum th_state)parent->state));
	th_error_task(e, parent->id);
	return TH_EUNSUPPORTED;
}

th_err th_subtask_announce(struct th_store *st, const char *parent_id, const char *child_id,
                           const char *name, struct th_error *e)
{
	struct th_task_row parent = {0};
	th_err rc = th_store_task_get(st, parent_id, &parent, e);
	if (rc == TH_OK) {
		json_object *payload = json_object_new_object();
		int bad = th_json_put(payload, "event", json_object_new_string("spawned"));
		bad |= th_json_put(payload, "task_id", json_object_new_string(child_id));
		bad |= th_json_put(payload, "name", json_object_new_string(name));
		bad |= th_json_put(payload, "state",
		                   json_object_new_string(th_state_name(TH_STATE_WORKING)));
		if (bad) {
			json_object_put(payload);
			rc = th_error_set(e, TH_ENOMEM, "out of memory building a subtask event");
		} else {
			rc = th_status_announce(st, &parent, "subtask", payload, e);
		}
	}
	th_task_row_free(&parent);
	return rc;
}

th_err th_subtask_spawn(struct th_store *st, const struct th_config *cfg,
                        const struct th_task_row *parent, const char *sender, const char *name,
                        const char *goal, char child[TH_ID_BUF], int64_t *turn_id,
                        struct th_error *e)
{
	struct th_participant *ps = NULL;
	size_t np = 0;
	th_err rc = th_subtask_parent_open(parent, e);
	if (rc == TH_OK)
		rc = th_subtask_next_id(st, cfg->lim.max_subtasks, parent->id, child, e);
	if (rc == TH_OK)
		rc = th_store_participants(st, parent->id, &ps, &np, e);
	if (rc != TH_OK)
		return rc;
	/* TASK-4: the parent's participants and roles, with the harness as assignee. */
	int has_agent = 0;
	for (size_t i = 0; i < np; i++)
		has_agent |= strcmp(ps[i].id, TH_AGENT_ID) == 0;
	struct th_participant_in *all = calloc(np + 1, sizeof *all);
	if (all == NULL) {
		th_participants_free(ps, np);
		return th_error_set(e, TH_ENOMEM, "out of memory");
	}
	size_t n = 0;
	for (size_t i = 0; i < np; i++) {
		all[n] = (struct th_participant_in){ps[i].id, ps[i].kind, ps[i].role,
		                                    ps[i].display_name};
		if (strcmp(ps[i].id, TH_AGENT_ID) == 0)
			all[n].role = "assignee";
		n++;
	}
	if (!has_agent)
		all[n++] = (struct th_participant_in){TH_AGENT_ID, "agent", "assignee", ""};
	char mid[TH_ID_BUF + 8];
	snprintf(mid, sizeof mid, "%s:goal", child);
	json_object *first = json_object_new_object(), *parts = json_object_new_array();
	json_object *meta = json_object_new_object(), *text = th_a2a_text_part(goal);
	int bad = parts == NULL || text == NULL || json_object_array_add(parts, text) != 0;
	if (bad)
		json_object_put(text);
	bad |= th_json_put(meta, "participant_id", json_object_new_string(sender));
	bad |= th_json_put(first, "messageId", json_object_new_string(mid));
	bad |= th_json_put(first, "role", json_object_new_string("ROLE_USER"));
	bad |= th_json_put(first, "parts", parts);
	bad |= th_json_put(first, "metadata", meta);
	if (bad) {
		json_object_put(first);
		free(all);
		th_participants_free(ps, np);
		return th_error_set(e, TH_ENOMEM,
		                    "out of memory building a sub-task's first message");
	}
	struct th_new_task nt = {
	    .id = child,
	    .context_id = parent->context_id,
	    .name = name,
	    .goal = goal,
	    .ps = all,
	    .nps = n,
	    .parent = parent->id,
	    .created_by = sender,
	    .first = first,
	    .first_sender = sender,
	    .lease_ms = cfg->lease_ms,
	};
	rc = th_task_create(st, &nt, turn_id, NULL, e);
	if (rc == TH_OK)
		rc = th_subtask_announce(st, parent->id, child, name, e);
	json_object_put(first);
	free(all);
	th_participants_free(ps, np);
	return rc;
}
