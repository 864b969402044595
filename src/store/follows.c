/* SPDX-License-Identifier: Apache-2.0 */
/* follows.c — which tasks streams follow, so that a commit on PostgreSQL announces itself
 * only when someone listens for it (SCALE-1, migration 023, decision-083). pg.c's
 * announce() reads the rows at COMMIT; SQLite announces nothing and keeps none. */
#include "store/store.h"
#include "store/store_int.h"
#include "util/buf.h"

th_err th_store_follow(struct th_store *st, const char *task_id, int on, struct th_error *e)
{
	if (st->own_pg == NULL)
		return TH_OK;
	if (task_id == NULL)
		return th_error_set(e, TH_EINVAL, "a follow needs a task");
	if (!on)
		return th_store_exec(
		    st, TH_STMT_PG_UNFOLLOW,
		    "DELETE FROM stream_follows WHERE task_id = ?1 AND follower = ?2",
		    TH_ARGS(TH_T(task_id), TH_T(st->pg_follower)), NULL, NULL, "unfollow", e);
	const char *ids[] = {task_id};
	return th_store_follows_renew(st, ids, 1, e);
}

th_err th_store_follows_renew(struct th_store *st, const char *const *task_ids, size_t n,
                              struct th_error *e)
{
	if (st->own_pg == NULL || n == 0)
		return TH_OK;
	struct th_buf ids; /* th_buf_free, below */
	th_buf_init(&ids);
	for (size_t i = 0; i < n; i++)
		th_pg_array_add(&ids, task_ids[i]);
	th_buf_append(&ids, "}", 1);
	th_err err =
	    ids.oom ? th_error_set(e, TH_ENOMEM, "out of memory following %zu tasks", n)
	            : th_store_exec(
	                  st, TH_STMT_PG_FOLLOW,
	                  "INSERT INTO stream_follows (task_id, follower, until_ms) "
	                  "SELECT DISTINCT unnest(?1::text[]), ?2, " TH_PG_NOW_MS " + ?3 "
	                  "ON CONFLICT (task_id, follower) "
	                  "DO UPDATE SET until_ms = excluded.until_ms",
	                  TH_ARGS(TH_T(ids.data), TH_T(st->pg_follower), TH_I(TH_FOLLOW_LAPSE_MS)),
	                  NULL, NULL, "follow", e);
	th_buf_free(&ids);
	return err;
}

th_err th_store_follows_prune(struct th_store *st, struct th_error *e)
{
	if (st->own_pg == NULL)
		return TH_OK;
	return th_store_exec(st, TH_STMT_PG_FOLLOWS_PRUNE,
	                     "DELETE FROM stream_follows WHERE until_ms <= " TH_PG_NOW_MS, NULL, 0,
	                     NULL, NULL, "follows prune", e);
}
