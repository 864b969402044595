/* SPDX-License-Identifier: Apache-2.0 */
/* plan.h — a task's plan, its steps and its participants' roles, changed one way whoever
 * asks: the slash commands (turn/builtins.c), the model's intrinsic tools
 * (turn/intrinsics.c) and the task envelope (ops/intake.c). Each change is stored and
 * announced with its TASK-8 event here, once. */
#ifndef TH_DOMAIN_PLAN_H
#define TH_DOMAIN_PLAN_H

#include <stddef.h>

#include "store/store.h"
#include "util/err.h"

/* Replaces the plan of row's task with steps[0..n) and announces plan_updated with the
 * new plan (TASK-8). */
th_err th_plan_replace(struct th_store *st, const struct th_task_row *row,
                       const struct th_plan_step_in *steps, size_t n, struct th_error *e);

/* The step of steps[0..n) whose id or name is id_or_name (the first such), or NULL: how
 * /step and complete_step name a step. */
const struct th_plan_step *th_plan_find_step(const struct th_plan_step *steps, size_t n,
                                             const char *id_or_name);

/* Sets step step_id (an existing step's id) to state (TH_STEP_DONE or TH_STEP_FAILED),
 * with output when not NULL, and announces step_updated with the step and the plan. */
th_err th_plan_step_set(struct th_store *st, const struct th_task_row *row, const char *step_id,
                        int state, const char *output, struct th_error *e);

/* Makes step (a step of row's plan, as read) active and adds task_id to its linked
 * tasks, and announces step_updated with the step and the plan: a sub-task spawned to
 * work on it (the model's spawn_subtask). */
th_err th_plan_step_link(struct th_store *st, const struct th_task_row *row,
                         const struct th_plan_step *step, const char *task_id, struct th_error *e);

/* Puts participant p on row's task (a new one, or a new role, kind or display name for
 * one already on it) and announces participants_updated naming p and its role (ID-5). */
th_err th_plan_participant_set(struct th_store *st, const struct th_task_row *row,
                               const struct th_participant_in *p, struct th_error *e);

#endif
