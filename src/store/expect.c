/* SPDX-License-Identifier: Apache-2.0 */
/* expect.c — the reads a request or a view sends ahead on PostgreSQL (SCALE-1,
 * decision-060, decision-069): each file's own *_soon, in the order the reads will be
 * made, so that the first of them finds the others' answers on the way. Nothing on
 * SQLite, where a read is no round trip. */
#include <stdint.h>

#include "store/store.h"
#include "store/store_int.h"

void th_store_expect(struct th_store *st, const char *tenant, const char *task_id,
                     const char *participant_id, const char *message_id)
{
	if (st->pg == NULL || task_id == NULL)
		return; /* SQLite: nothing to gain */
	th_store_task_get_soon(st, task_id);
	if (participant_id != NULL)
		th_store_participant_role_soon(st, tenant, task_id, participant_id);
	if (message_id != NULL)
		th_store_message_exists_soon(st, task_id, message_id);
}

void th_store_expect_view(struct th_store *st, const char *task_id, int row, int history_page,
                          int side_channels, int artifacts)
{
	if (st->pg == NULL || task_id == NULL)
		return; /* SQLite: nothing to gain */
	/* In the order the view asks, so that its first read finds them all on the way. */
	if (row)
		th_store_task_get_soon(st, task_id);
	th_store_participants_soon(st, task_id);
	th_store_subtasks_soon(st, task_id, 0);
	th_store_plan_soon(st, task_id);
	if (side_channels)
		th_store_side_channels_soon(st, task_id);
	th_store_task_context_soon(st, task_id);
	if (history_page > 0)
		th_store_history_soon(st, task_id, history_page);
	if (artifacts)
		th_store_artifacts_soon(st, task_id);
}

void th_store_expect_view_checks(struct th_store *st, const char *tenant, const char *task_id,
                                 const char *participant_id, int64_t queued_lease_ms)
{
	if (st->pg == NULL || task_id == NULL)
		return; /* SQLite: nothing to gain */
	if (participant_id != NULL)
		th_store_participant_role_soon(st, tenant, task_id, participant_id);
	if (queued_lease_ms >= 0)
		th_store_turn_next_expiry_soon(st, task_id, queued_lease_ms);
}

void th_store_expect_generation(struct th_store *st, const char *task_id)
{
	if (st->pg == NULL || task_id == NULL)
		return; /* SQLite: nothing to gain */
	th_store_task_generation_soon(st, task_id, INT64_MAX);
}
