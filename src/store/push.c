/* SPDX-License-Identifier: Apache-2.0 */
/* push.c — push notification configs and the delivery outbox (PUSH-1, PUSH-2, CH-3).
 * Schema: sql/002. Tokens and credentials are opaque blobs here; encrypting them is the
 * caller's business (PUSH-4). */
#include <stdlib.h>
#include <string.h>

#include "store/store.h"
#include "store/store_int.h"
#include "util/ids.h"
#include "util/jsonx.h"

/* ---- configs ----------------------------------------------------------------------------- */

#define PUSH_COLS                                                                                  \
	"task_id, config_id, participant_id, url, token_enc, auth_scheme, auth_credentials_enc, "  \
	"created_ms"

/* A row of PUSH_COLS. */
static const struct th_col config_cols[] = {
    TH_COL_TEXT(struct th_push_config, task_id),
    TH_COL_TEXT(struct th_push_config, config_id),
    TH_COL_TEXT(struct th_push_config, participant_id),
    TH_COL_TEXT(struct th_push_config, url),
    TH_COL_BLOB(struct th_push_config, token_enc, token_len),
    TH_COL_TEXT(struct th_push_config, auth_scheme),
    TH_COL_BLOB(struct th_push_config, auth_enc, auth_len),
    TH_COL_I64(struct th_push_config, created_ms),
};
static const struct th_row_def config_row = TH_ROW_DEF(struct th_push_config, config_cols);

void th_push_config_free(struct th_push_config *c)
{
	th_row_free(&config_row, c); /* NULL: nothing */
}

void th_push_configs_free(struct th_push_config *c, size_t n)
{
	th_rows_free(&config_row, c, n); /* NULL: nothing */
}

th_err th_store_push_config_put(struct th_store *st, const struct th_push_config *c,
                                struct th_error *e)
{
	if (c == NULL || c->task_id == NULL || c->config_id == NULL || c->participant_id == NULL ||
	    c->url == NULL || c->config_id[0] == '\0' || c->url[0] == '\0')
		return th_error_set(e, TH_EINVAL,
		                    "push config needs a task, an id, a participant and a url");
	/* The upsert only replaces the owner's own config; another owner's id changes
	 * nothing, which is reported below. From here on the write's new task has a config
	 * to push to (configured). */
	if (strcmp(st->fresh_task, c->task_id) == 0)
		st->fresh_task[0] = '\0';
	int64_t changed = 0;
	th_err err = th_store_exec(
	    st, TH_STMT_PUSH_PUT,
	    "INSERT INTO push_configs (task_id, config_id, participant_id, url, token_enc, "
	    "auth_scheme, auth_credentials_enc, created_ms, updated_ms) "
	    "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?8) ON CONFLICT (task_id, config_id) "
	    "DO UPDATE SET url = excluded.url, token_enc = excluded.token_enc, "
	    "auth_scheme = excluded.auth_scheme, "
	    "auth_credentials_enc = excluded.auth_credentials_enc, "
	    "updated_ms = excluded.updated_ms "
	    "WHERE push_configs.participant_id = excluded.participant_id",
	    TH_ARGS(TH_T(c->task_id), TH_T(c->config_id), TH_T(c->participant_id), TH_T(c->url),
	            TH_B(c->token_enc, c->token_len), TH_T(c->auth_scheme),
	            TH_B(c->auth_enc, c->auth_len), TH_I(th_now_ms())),
	    NULL, &changed, "push config put", e);
	/* TH_ENOTFOUND only comes from the task foreign key. */
	if (err == TH_ENOTFOUND)
		return th_error_set(e, TH_ENOTFOUND, "task %s not found", c->task_id);
	if (err != TH_OK)
		return err;
	if (changed == 0)
		return th_error_set(
		    e, TH_EINVAL, "push notification config id %s is already in use", c->config_id);
	return TH_OK;
}

th_err th_store_push_config_get(struct th_store *st, const char *task_id, const char *config_id,
                                const char *participant_id, struct th_push_config *out,
                                struct th_error *e)
{
	th_err err = th_store_one(st, TH_STMT_PUSH_GET,
	                          "SELECT " PUSH_COLS " FROM push_configs WHERE task_id = ?1 "
	                          "AND config_id = ?2 AND (?3 IS NULL OR participant_id = ?3)",
	                          TH_ARGS(TH_T(task_id), TH_T(config_id), TH_T(participant_id)),
	                          &config_row, out, "push config get", e);
	if (err == TH_ENOTFOUND)
		return th_error_set(e, TH_ENOTFOUND, "push notification config %s not found",
		                    config_id != NULL ? config_id : "");
	return err;
}

th_err th_store_push_configs(struct th_store *st, const char *task_id, const char *participant_id,
                             struct th_push_config **out, size_t *n, struct th_error *e)
{
	return th_store_each(st, TH_STMT_PUSH_LIST,
	                     "SELECT " PUSH_COLS " FROM push_configs WHERE task_id = ?1 "
	                     "AND (?2 IS NULL OR participant_id = ?2) "
	                     "ORDER BY created_ms, rowid",
	                     TH_ARGS(TH_T(task_id), TH_T(participant_id)), &config_row,
	                     (void **)out, n, "push configs", e);
}

th_err th_store_push_config_delete(struct th_store *st, const char *task_id, const char *config_id,
                                   const char *participant_id, struct th_error *e)
{
	int64_t changed = 0;
	th_err err = th_store_exec(st, TH_STMT_PUSH_DELETE,
	                           "DELETE FROM push_configs WHERE task_id = ?1 AND config_id = ?2 "
	                           "AND (?3 IS NULL OR participant_id = ?3)",
	                           TH_ARGS(TH_T(task_id), TH_T(config_id), TH_T(participant_id)),
	                           NULL, &changed, "push config delete", e);
	if (err != TH_OK)
		return err;
	if (changed == 0)
		return th_error_set(e, TH_ENOTFOUND, "push notification config %s not found",
		                    config_id != NULL ? config_id : "");
	return TH_OK;
}

/* ---- outbox -----------------------------------------------------------------------------------
 */

/* The outbox rows of an event (th_store_push_enqueue). "WHERE 1" keeps the upsert clause
 * from being read as a join constraint. */
#define PUSH_ENQUEUE_SQL                                                                           \
	"INSERT INTO push_outbox (task_id, config_id, seq, body, attempts, next_attempt_ms, "      \
	"state, created_ms, updated_ms) SELECT c.task_id, c.config_id, ?2, ?3, 0, ?4, "            \
	"'pending', ?4, ?4 FROM push_configs c WHERE c.task_id = ?1 AND (?5 IS NULL OR "           \
	"?5 = ?1 OR EXISTS (SELECT 1 FROM channel_members m WHERE m.task_id = ?1 AND "             \
	"m.channel_id = ?5 AND m.participant_id = c.participant_id)) "                             \
	"ON CONFLICT (task_id, config_id, seq) DO NOTHING"

/* 0 when the task has no push notification config, so an event of it has nothing to
 * queue and its text need not be made: known without asking for a task the running write
 * made and put no config of (fresh_task, th_store_task_insert). Otherwise 1 when it has
 * one, when that could not be read, and always on PostgreSQL, where asking costs a round
 * trip that the queued insert does not (decision-054). */
static int configured(struct th_store *st, const char *task_id)
{
	if (st->fresh_task[0] != '\0' && strcmp(st->fresh_task, task_id) == 0)
		return 0;
	if (st->pg != NULL)
		return 1;
	int64_t rows = 0;
	th_err err = th_store_exec(st, TH_STMT_PUSH_CONFIGURED,
	                           "SELECT 1 FROM push_configs WHERE task_id = ?1 LIMIT 1",
	                           TH_ARGS(TH_T(task_id)), NULL, &rows, "push configured", NULL);
	return err != TH_OK || rows > 0;
}

th_err th_store_push_enqueue(struct th_store *st, const char *task_id, int64_t seq,
                             json_object *event, const char *channel_id, int *n, struct th_error *e)
{
	if (n != NULL)
		*n = 0;
	if (task_id == NULL || event == NULL)
		return th_error_set(e, TH_EINVAL, "push delivery needs a task and a body");
	if (!configured(st, task_id))
		return TH_OK;
	/* Deliveries carry the event whole, made only for a task that has a config. */
	const char *body = th_json_text(event);
	if (body == NULL) /* decision-026: json-c could not allocate the text */
		return th_error_set(e, TH_ENOMEM, "out of memory queueing event %lld of task %s",
		                    (long long)seq, task_id);
	int64_t queued = 0;
	/* decision-054: when the caller needs no count, queued on PostgreSQL; the rows it
	 * adds are counted into pushes_queued when its result is read (before COMMIT). */
	if (n == NULL)
		return th_store_exec_later(st, TH_STMT_PUSH_ENQUEUE, PUSH_ENQUEUE_SQL,
		                           TH_ARGS(TH_T(task_id), TH_I(seq), TH_T(body),
		                                   TH_I(th_now_ms()), TH_T(channel_id)),
		                           &st->pushes_queued, NULL, "push enqueue", e);
	th_err err = th_store_exec(
	    st, TH_STMT_PUSH_ENQUEUE, PUSH_ENQUEUE_SQL,
	    TH_ARGS(TH_T(task_id), TH_I(seq), TH_T(body), TH_I(th_now_ms()), TH_T(channel_id)),
	    NULL, &queued, "push enqueue", e);
	if (err != TH_OK)
		return err;
	st->pushes_queued += (int)queued;
	*n = (int)queued;
	return TH_OK;
}

int th_store_push_take_queued(struct th_store *st)
{
	int n = st->pushes_queued;
	st->pushes_queued = 0;
	return n;
}

/* A row of the claim's RETURNING clause. */
static const struct th_col delivery_cols[] = {
    TH_COL_I64(struct th_push_delivery, id),         TH_COL_TEXT(struct th_push_delivery, task_id),
    TH_COL_TEXT(struct th_push_delivery, config_id), TH_COL_I64(struct th_push_delivery, seq),
    TH_COL_TEXT(struct th_push_delivery, body),      TH_COL_INT(struct th_push_delivery, attempts),
};
static const struct th_row_def delivery_row = TH_ROW_DEF(struct th_push_delivery, delivery_cols);

void th_push_deliveries_free(struct th_push_delivery *d, size_t n)
{
	th_rows_free(&delivery_row, d, n); /* NULL: nothing */
}

static int by_id(const void *a, const void *b)
{
	const struct th_push_delivery *x = a, *y = b;
	return x->id < y->id ? -1 : x->id > y->id;
}

th_err th_store_push_claim_due(struct th_store *st, int64_t now_ms, int lease_ms, int limit,
                               struct th_push_delivery **out, size_t *n, struct th_error *e)
{
	/* Due rows come from the (state, next_attempt_ms) index; a sending row's
	 * next_attempt_ms is the end of its claim, so a dead sender's rows come back. */
	th_err err = th_store_each(
	    st, TH_STMT_PUSH_CLAIM,
	    "UPDATE push_outbox SET state = 'sending', attempts = attempts + 1, "
	    "next_attempt_ms = ?2, updated_ms = ?3 WHERE id IN (SELECT id FROM push_outbox "
	    "WHERE state IN ('pending', 'sending') AND next_attempt_ms <= ?1 "
	    "ORDER BY id LIMIT ?4) RETURNING id, task_id, config_id, seq, body, attempts",
	    TH_ARGS(TH_I(now_ms), TH_I(now_ms + (lease_ms > 0 ? lease_ms : 0)), TH_I(th_now_ms()),
	            TH_I(limit > 0 ? limit : -1)),
	    &delivery_row, (void **)out, n, "push claim", e);
	/* RETURNING gives no order; deliveries go out in enqueue order. */
	if (err == TH_OK && *n > 1)
		qsort(*out, *n, sizeof **out, by_id);
	return err;
}

/* The result of an outbox update by id that changed *changed rows. */
static th_err outbox_updated(th_err err, int64_t changed, int64_t id, struct th_error *e)
{
	if (err != TH_OK)
		return err;
	if (changed == 0)
		return th_error_set(e, TH_ENOTFOUND, "push delivery %lld not found", (long long)id);
	return TH_OK;
}

th_err th_store_push_delivered(struct th_store *st, int64_t id, struct th_error *e)
{
	int64_t changed = 0;
	th_err err = th_store_exec(st, TH_STMT_PUSH_DELIVERED,
	                           "UPDATE push_outbox SET state = 'delivered', last_error = NULL, "
	                           "updated_ms = ?2 WHERE id = ?1",
	                           TH_ARGS(TH_I(id), TH_I(th_now_ms())), NULL, &changed,
	                           "push delivered", e);
	return outbox_updated(err, changed, id, e);
}

th_err th_store_push_retry(struct th_store *st, int64_t id, int64_t now_ms, const char *error,
                           const struct th_push_backoff *b, int *dead, struct th_error *e)
{
	if (dead != NULL)
		*dead = 0;
	if (b == NULL || b->base_ms < 0 || b->max_ms < 0 || b->max_attempts < 1)
		return th_error_set(e, TH_EINVAL, "push retry needs a back-off policy");
	/* Doubling stops at 2^30 so the shift cannot overflow; the cap applies after it. */
	int64_t is_dead = 0, found = 0;
	th_err err = th_store_exec(
	    st, TH_STMT_PUSH_RETRY,
	    th_sql_for(st,
	               "UPDATE push_outbox SET last_error = ?3, updated_ms = ?7, "
	               "state = CASE WHEN attempts >= ?6 THEN 'dead' ELSE 'pending' END, "
	               "next_attempt_ms = ?2 + min(?5, ?4 * (1 << min(max(attempts - 1, 0), 30))) "
	               "WHERE id = ?1 AND state IN ('pending', 'sending') RETURNING state = 'dead'",
	               /* No scalar min/max; a bigint shifts by an int. */
	               "UPDATE push_outbox SET last_error = ?3, updated_ms = ?7, "
	               "state = CASE WHEN attempts >= ?6 THEN 'dead' ELSE 'pending' END, "
	               "next_attempt_ms = ?2 + LEAST(?5, ?4 * (1::bigint << "
	               "LEAST(GREATEST(attempts - 1, 0), 30)::int)) "
	               "WHERE id = ?1 AND state IN ('pending', 'sending') "
	               "RETURNING (state = 'dead')::int"),
	    TH_ARGS(TH_I(id), TH_I(now_ms), TH_T(error), TH_I(b->base_ms), TH_I(b->max_ms),
	            TH_I(b->max_attempts), TH_I(th_now_ms())),
	    &is_dead, &found, "push retry", e);
	if (err != TH_OK)
		return err;
	if (found == 0)
		return th_error_set(e, TH_ENOTFOUND, "push delivery %lld not found or finished",
		                    (long long)id);
	if (dead != NULL)
		*dead = is_dead != 0;
	return TH_OK;
}

th_err th_store_push_dead(struct th_store *st, int64_t id, const char *error, struct th_error *e)
{
	int64_t changed = 0;
	th_err err = th_store_exec(st, TH_STMT_PUSH_DEAD,
	                           "UPDATE push_outbox SET state = 'dead', last_error = ?2, "
	                           "updated_ms = ?3 WHERE id = ?1",
	                           TH_ARGS(TH_I(id), TH_T(error), TH_I(th_now_ms())), NULL,
	                           &changed, "push dead", e);
	return outbox_updated(err, changed, id, e);
}

th_err th_store_push_prune(struct th_store *st, int64_t delivered_before_ms, int64_t dead_before_ms,
                           int64_t *n, struct th_error *e)
{
	if (n != NULL)
		*n = 0;
	/* Two ranges of the (state, next_attempt_ms) index's state prefix; updated_ms is
	 * not in the index, but finished rows are pruned rarely. Dead letters are kept
	 * apart from delivered rows (RET-4): an operator reads them in push_dead_letters. */
	return th_store_exec(st, TH_STMT_PUSH_PRUNE,
	                     "DELETE FROM push_outbox WHERE (state = 'delivered' "
	                     "AND updated_ms < ?1) OR (state = 'dead' AND updated_ms < ?2)",
	                     TH_ARGS(TH_I(delivered_before_ms), TH_I(dead_before_ms)), NULL, n,
	                     "push prune", e);
}

int th_store_push_any_due(struct th_store *st, int64_t now_ms)
{
	int64_t rows = 0;
	th_err err =
	    th_store_exec(st, TH_STMT_PUSH_ANY_DUE,
	                  "SELECT 1 FROM push_outbox WHERE state IN ('pending', 'sending') AND "
	                  "next_attempt_ms <= ?1 LIMIT 1",
	                  TH_ARGS(TH_I(now_ms)), NULL, &rows, "push any due", NULL);
	return err == TH_OK && rows > 0;
}

th_err th_store_push_backlog(struct th_store *st, int64_t *backlog, int64_t *dead,
                             struct th_error *e)
{
	*backlog = *dead = 0;
	th_err err = th_store_exec(st, TH_STMT_PUSH_BACKLOG,
	                           "SELECT count(*) FROM push_outbox "
	                           "WHERE state IN ('pending', 'sending')",
	                           NULL, 0, backlog, NULL, "push backlog", e);
	if (err == TH_OK)
		err = th_store_exec(st, TH_STMT_PUSH_DEAD_COUNT,
		                    "SELECT count(*) FROM push_outbox WHERE state = 'dead'", NULL,
		                    0, dead, NULL, "push dead count", e);
	return err;
}

/* ---- dead letters (RET-4) ------------------------------------------------------------------ */

/* A row of the dead-letter page. */
static const struct th_col dead_cols[] = {
    TH_COL_I64(struct th_push_dead_letter, id),
    TH_COL_TEXT(struct th_push_dead_letter, task_id),
    TH_COL_TEXT(struct th_push_dead_letter, config_id),
    TH_COL_TEXT(struct th_push_dead_letter, url),
    TH_COL_I64(struct th_push_dead_letter, seq),
    TH_COL_INT(struct th_push_dead_letter, attempts),
    TH_COL_TEXT(struct th_push_dead_letter, last_error),
    TH_COL_I64(struct th_push_dead_letter, created_ms),
    TH_COL_I64(struct th_push_dead_letter, died_ms),
};
static const struct th_row_def dead_row = TH_ROW_DEF(struct th_push_dead_letter, dead_cols);

void th_push_dead_letters_free(struct th_push_dead_letter *d, size_t n)
{
	th_rows_free(&dead_row, d, n); /* NULL: nothing */
}

th_err th_store_push_dead_letters(struct th_store *st, const char *participant, const char *tenant,
                                  int64_t before_ms, int64_t before_id, int limit,
                                  struct th_push_dead_letter **out, size_t *n, struct th_error *e)
{
	*out = NULL;
	*n = 0;
	if (participant == NULL || participant[0] == '\0' || limit < 1 || limit > 1000)
		return th_error_set(e, TH_EINVAL, "dead letters need a participant and a limit");
	/* The view is the one definition of a dead letter (migration 017, both backends);
	 * the task's tenant keeps every tenant's letters apart (TEN-2). */
	return th_store_each(
	    st, TH_STMT_PUSH_DEAD_LETTERS,
	    "SELECT d.id, d.task_id, d.config_id, d.url, d.seq, d.attempts, d.last_error, "
	    "d.created_ms, d.died_ms FROM push_dead_letters d JOIN tasks t ON t.id = d.task_id "
	    "WHERE d.participant_id = ?1 AND t.tenant = ?2 AND (d.died_ms < ?3 OR "
	    "(d.died_ms = ?3 AND d.id < ?4)) ORDER BY d.died_ms DESC, d.id DESC LIMIT ?5",
	    TH_ARGS(TH_T(participant), TH_T(tenant != NULL ? tenant : ""), TH_I(before_ms),
	            TH_I(before_id), TH_I(limit)),
	    &dead_row, (void **)out, n, "dead letters", e);
}
