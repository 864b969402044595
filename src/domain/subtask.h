/* SPDX-License-Identifier: Apache-2.0 */
/* subtask.h — sub-tasks a participant spawns with /subtask (TASK-4): the child's id is
 * "<parent>.<n>", it inherits the parent's participants and roles (the harness as
 * assignee), is linked in subtask_links and announced to the parent (TASK-8). It
 * counts as started by that participant (CTL-7). */
#ifndef TH_DOMAIN_SUBTASK_H
#define TH_DOMAIN_SUBTASK_H

#include <stdint.h>

#include "config/config.h"
#include "store/store.h"
#include "util/err.h"

/* Inside the caller's transaction. child receives the new id; *turn_id its queued
 * first turn (to run after commit). */
th_err th_subtask_spawn(struct th_store *st, const struct th_config *cfg,
                        const struct th_task_row *parent, const char *sender, const char *name,
                        const char *goal, char child[TH_ID_BUF], int64_t *turn_id,
                        struct th_error *e);

/* SEC-5: how deep sub-tasks nest. A top-level task is at depth 0; a sub-task at depth
 * TH_SUBTASK_DEPTH_MAX has no children. It bounds the work of cancelling a tree. */
#define TH_SUBTASK_DEPTH_MAX 32

/* TH_EINVAL naming the limit when a child of parent_id would be deeper than
 * TH_SUBTASK_DEPTH_MAX; no write. */
th_err th_subtask_check_depth(struct th_store *st, const char *parent_id, struct th_error *e);

/* The id of parent's next child, "<parent>.<n>" (allocates n). A child deeper than
 * TH_SUBTASK_DEPTH_MAX is refused (TH_EINVAL naming the limit). */
th_err th_subtask_next_id(struct th_store *st, const char *parent_id, char out[TH_ID_BUF],
                          struct th_error *e);

/* Tells the parent's subscribers that child was spawned (TASK-8 "subtask"). */
th_err th_subtask_announce(struct th_store *st, const char *parent_id, const char *child_id,
                           const char *name, struct th_error *e);

#endif
