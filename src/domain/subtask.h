/* SPDX-License-Identifier: Apache-2.0 */
/* subtask.h — sub-tasks a participant spawns with /subtask (TASK-4): the child's id is
 * "<parent>.<n>", it inherits the parent's participants and roles (the harness as
 * assignee), is linked in subtask_links and announced to the parent (TASK-8). It
 * counts as started by that participant (CTL-7). */
#ifndef TH_DOMAIN_SUBTASK_H
#define TH_DOMAIN_SUBTASK_H

#include <stdint.h>

#include "config/settings.h"
#include "store/store.h"
#include "util/err.h"

/* Inside the caller's transaction. child receives the new id; *turn_id its queued
 * first turn (to run after commit). TH_EINVAL naming the limit when parent may not have
 * one more (th_subtask_next_id); nothing is written then. */
th_err th_subtask_spawn(struct th_store *st, const struct th_config *cfg,
                        const struct th_task_row *parent, const char *sender, const char *name,
                        const char *goal, char child[TH_ID_BUF], int64_t *turn_id,
                        struct th_error *e);

/* SEC-5: how deep sub-tasks nest. A top-level task is at depth 0; a sub-task at depth
 * TH_SUBTASK_DEPTH_MAX has no children. It bounds the work of cancelling a tree. */
#define TH_SUBTASK_DEPTH_MAX 32

/* The id of parent's next child, "<parent>.<n>" (allocates n). The one place the
 * sub-task limits are checked, whoever spawns (a SendMessage's payload.parent_tasks,
 * /subtask, the model's spawn_subtask): a parent with max_subtasks children already, or
 * a child deeper than TH_SUBTASK_DEPTH_MAX, is refused with TH_EINVAL naming the limit,
 * before anything is written. */
th_err th_subtask_next_id(struct th_store *st, size_t max_subtasks, const char *parent_id,
                          char out[TH_ID_BUF], struct th_error *e);

/* TASK-4, CTL-6: a task in a terminal state takes no new sub-task (its event log ends
 * with its final status): TH_EUNSUPPORTED naming the state, else TH_OK. */
th_err th_subtask_parent_open(const struct th_task_row *parent, struct th_error *e);

/* Tells the parent's subscribers that child was spawned (TASK-8 "subtask"). */
th_err th_subtask_announce(struct th_store *st, const char *parent_id, const char *child_id,
                           const char *name, struct th_error *e);

#endif
