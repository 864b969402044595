/* SPDX-License-Identifier: Apache-2.0 */
/* push.c — push notification configs and the delivery outbox (PUSH-1, PUSH-2, CH-3).
 * Schema: sql/002. Tokens and credentials are opaque blobs here; encrypting them is the
 * caller's business (PUSH-4). */
#include <stdlib.h>
#include <string.h>

#include "store/store.h"
#include "store/store_int.h"
#include "util/ids.h"

/* ---- configs ----------------------------------------------------------------------------- */

void th_push_config_free(struct th_push_config *c)
{
	if (c == NULL)
		return;
	free(c->task_id);
	free(c->config_id);
	free(c->participant_id);
	free(c->url);
	free(c->token_enc);
	free(c->auth_scheme);
	free(c->auth_enc);
	memset(c, 0, sizeof *c);
}

void th_push_configs_free(struct th_push_config *c, size_t n)
{
	if (c == NULL)
		return;
	for (size_t i = 0; i < n; i++)
		th_push_config_free(&c[i]);
	free(c);
}

#define PUSH_COLS                                                                                  \
	"task_id, config_id, participant_id, url, token_enc, auth_scheme, auth_credentials_enc, "  \
	"created_ms"

/* Fills c from a row of PUSH_COLS; on allocation failure c is freed and -1 returned. */
static int read_config(sqlite3_stmt *s, struct th_push_config *c)
{
	memset(c, 0, sizeof *c);
	int bad = th_col_dup(s, 0, &c->task_id) | th_col_dup(s, 1, &c->config_id) |
	          th_col_dup(s, 2, &c->participant_id) | th_col_dup(s, 3, &c->url) |
	          th_col_blob(s, 4, &c->token_enc, &c->token_len) |
	          th_col_dup(s, 5, &c->auth_scheme) | th_col_blob(s, 6, &c->auth_enc, &c->auth_len);
	c->created_ms = sqlite3_column_int64(s, 7);
	if (bad) {
		th_push_config_free(c);
		return -1;
	}
	return 0;
}

th_err th_store_push_config_put(struct th_store *st, const struct th_push_config *c,
                                struct th_error *e)
{
	if (c == NULL || c->task_id == NULL || c->config_id == NULL || c->participant_id == NULL ||
	    c->url == NULL || c->config_id[0] == '\0' || c->url[0] == '\0')
		return th_error_set(e, TH_EINVAL,
		                    "push config needs a task, an id, a participant and a url");
	sqlite3_stmt *s;
	/* The upsert only replaces the owner's own config; another owner's id changes
	 * nothing, which is reported below. */
	th_err err = th_store_stmt(
	    st, TH_STMT_PUSH_PUT,
	    "INSERT INTO push_configs (task_id, config_id, participant_id, url, token_enc, "
	    "auth_scheme, auth_credentials_enc, created_ms, updated_ms) "
	    "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?8) ON CONFLICT (task_id, config_id) "
	    "DO UPDATE SET url = excluded.url, token_enc = excluded.token_enc, "
	    "auth_scheme = excluded.auth_scheme, "
	    "auth_credentials_enc = excluded.auth_credentials_enc, "
	    "updated_ms = excluded.updated_ms "
	    "WHERE push_configs.participant_id = excluded.participant_id",
	    &s, e);
	if (err != TH_OK)
		return err;
	int rc = th_bind_text(s, 1, c->task_id, SQLITE_OK);
	rc = th_bind_text(s, 2, c->config_id, rc);
	rc = th_bind_text(s, 3, c->participant_id, rc);
	rc = th_bind_text(s, 4, c->url, rc);
	rc = th_bind_blob(s, 5, c->token_enc, c->token_len, rc);
	rc = th_bind_text(s, 6, c->auth_scheme, rc);
	rc = th_bind_blob(s, 7, c->auth_enc, c->auth_len, rc);
	rc = th_bind_i64(s, 8, th_now_ms(), rc);
	rc = th_step_done(s, rc);
	if (rc == SQLITE_CONSTRAINT_FOREIGNKEY)
		return th_error_set(e, TH_ENOTFOUND, "task %s not found", c->task_id);
	if (rc != SQLITE_DONE)
		return th_store_fail(st, rc, "push config put", e);
	if (sqlite3_changes(st->db) == 0)
		return th_error_set(
		    e, TH_EINVAL, "push notification config id %s is already in use", c->config_id);
	return TH_OK;
}

th_err th_store_push_config_get(struct th_store *st, const char *task_id, const char *config_id,
                                const char *participant_id, struct th_push_config *out,
                                struct th_error *e)
{
	memset(out, 0, sizeof *out);
	sqlite3_stmt *s;
	th_err err = th_store_stmt(st, TH_STMT_PUSH_GET,
	                           "SELECT " PUSH_COLS " FROM push_configs WHERE task_id = ?1 "
	                           "AND config_id = ?2 AND (?3 IS NULL OR participant_id = ?3)",
	                           &s, e);
	if (err != TH_OK)
		return err;
	int rc = th_bind_text(s, 1, task_id, SQLITE_OK);
	rc = th_bind_text(s, 2, config_id, rc);
	rc = th_bind_text(s, 3, participant_id, rc);
	if (rc == SQLITE_OK)
		rc = sqlite3_step(s);
	if (rc == SQLITE_ROW)
		err = read_config(s, out) == 0
		          ? TH_OK
		          : th_error_set(e, TH_ENOMEM, "out of memory reading push config");
	else if (rc == SQLITE_DONE)
		err = th_error_set(e, TH_ENOTFOUND, "push notification config %s not found",
		                   config_id != NULL ? config_id : "");
	else
		err = th_store_fail(st, rc, "push config get", e);
	th_store_stmt_done(s);
	return err;
}

th_err th_store_push_configs(struct th_store *st, const char *task_id, const char *participant_id,
                             struct th_push_config **out, size_t *n, struct th_error *e)
{
	*out = NULL;
	*n = 0;
	sqlite3_stmt *s;
	th_err err = th_store_stmt(st, TH_STMT_PUSH_LIST,
	                           "SELECT " PUSH_COLS " FROM push_configs WHERE task_id = ?1 "
	                           "AND (?2 IS NULL OR participant_id = ?2) "
	                           "ORDER BY created_ms, rowid",
	                           &s, e);
	if (err != TH_OK)
		return err;
	int rc = th_bind_text(s, 1, task_id, SQLITE_OK);
	rc = th_bind_text(s, 2, participant_id, rc);
	struct th_push_config *v = NULL;
	size_t cnt = 0, cap = 0;
	while (rc == SQLITE_OK && (rc = sqlite3_step(s)) == SQLITE_ROW) {
		if (th_grow((void **)&v, &cap, cnt, sizeof *v) != 0 ||
		    read_config(s, &v[cnt]) != 0) {
			rc = SQLITE_NOMEM;
			break;
		}
		cnt++;
		rc = SQLITE_OK;
	}
	if (rc != SQLITE_DONE)
		err = rc == SQLITE_NOMEM
		          ? th_error_set(e, TH_ENOMEM, "out of memory listing push configs")
		          : th_store_fail(st, rc, "push configs", e);
	th_store_stmt_done(s);
	if (err != TH_OK) {
		th_push_configs_free(v, cnt);
		return err;
	}
	*out = v;
	*n = cnt;
	return TH_OK;
}

th_err th_store_push_config_delete(struct th_store *st, const char *task_id, const char *config_id,
                                   const char *participant_id, struct th_error *e)
{
	sqlite3_stmt *s;
	th_err err = th_store_stmt(st, TH_STMT_PUSH_DELETE,
	                           "DELETE FROM push_configs WHERE task_id = ?1 AND config_id = ?2 "
	                           "AND (?3 IS NULL OR participant_id = ?3)",
	                           &s, e);
	if (err != TH_OK)
		return err;
	int rc = th_bind_text(s, 1, task_id, SQLITE_OK);
	rc = th_bind_text(s, 2, config_id, rc);
	rc = th_bind_text(s, 3, participant_id, rc);
	rc = th_step_done(s, rc);
	if (rc != SQLITE_DONE)
		return th_store_fail(st, rc, "push config delete", e);
	if (sqlite3_changes(st->db) == 0)
		return th_error_set(e, TH_ENOTFOUND, "push notification config %s not found",
		                    config_id != NULL ? config_id : "");
	return TH_OK;
}

/* ---- outbox -----------------------------------------------------------------------------------
 */

th_err th_store_push_enqueue(struct th_store *st, const char *task_id, int64_t seq,
                             const char *body, const char *channel_id, int *n, struct th_error *e)
{
	if (n != NULL)
		*n = 0;
	if (task_id == NULL || body == NULL)
		return th_error_set(e, TH_EINVAL, "push delivery needs a task and a body");
	sqlite3_stmt *s;
	/* "WHERE 1" keeps the upsert clause from being read as a join constraint. */
	th_err err = th_store_stmt(
	    st, TH_STMT_PUSH_ENQUEUE,
	    "INSERT INTO push_outbox (task_id, config_id, seq, body, attempts, next_attempt_ms, "
	    "state, created_ms, updated_ms) SELECT c.task_id, c.config_id, ?2, ?3, 0, ?4, "
	    "'pending', ?4, ?4 FROM push_configs c WHERE c.task_id = ?1 AND (?5 IS NULL OR "
	    "?5 = ?1 OR EXISTS (SELECT 1 FROM channel_members m WHERE m.task_id = ?1 AND "
	    "m.channel_id = ?5 AND m.participant_id = c.participant_id)) "
	    "ON CONFLICT (task_id, config_id, seq) DO NOTHING",
	    &s, e);
	if (err != TH_OK)
		return err;
	int rc = th_bind_text(s, 1, task_id, SQLITE_OK);
	rc = th_bind_i64(s, 2, seq, rc);
	rc = th_bind_text(s, 3, body, rc);
	rc = th_bind_i64(s, 4, th_now_ms(), rc);
	rc = th_bind_text(s, 5, channel_id, rc);
	rc = th_step_done(s, rc);
	if (rc != SQLITE_DONE)
		return th_store_fail(st, rc, "push enqueue", e);
	int queued = sqlite3_changes(st->db);
	st->pushes_queued += queued;
	if (n != NULL)
		*n = queued;
	return TH_OK;
}

int th_store_push_take_queued(struct th_store *st)
{
	int n = st->pushes_queued;
	st->pushes_queued = 0;
	return n;
}

void th_push_deliveries_free(struct th_push_delivery *d, size_t n)
{
	if (d == NULL)
		return;
	for (size_t i = 0; i < n; i++) {
		free(d[i].task_id);
		free(d[i].config_id);
		free(d[i].body);
	}
	free(d);
}

static int by_id(const void *a, const void *b)
{
	const struct th_push_delivery *x = a, *y = b;
	return x->id < y->id ? -1 : x->id > y->id;
}

th_err th_store_push_claim_due(struct th_store *st, int64_t now_ms, int lease_ms, int limit,
                               struct th_push_delivery **out, size_t *n, struct th_error *e)
{
	*out = NULL;
	*n = 0;
	sqlite3_stmt *s;
	/* Due rows come from the (state, next_attempt_ms) index; a sending row's
	 * next_attempt_ms is the end of its claim, so a dead sender's rows come back. */
	th_err err = th_store_stmt(
	    st, TH_STMT_PUSH_CLAIM,
	    "UPDATE push_outbox SET state = 'sending', attempts = attempts + 1, "
	    "next_attempt_ms = ?2, updated_ms = ?3 WHERE id IN (SELECT id FROM push_outbox "
	    "WHERE state IN ('pending', 'sending') AND next_attempt_ms <= ?1 "
	    "ORDER BY id LIMIT ?4) RETURNING id, task_id, config_id, seq, body, attempts",
	    &s, e);
	if (err != TH_OK)
		return err;
	int rc = th_bind_i64(s, 1, now_ms, SQLITE_OK);
	rc = th_bind_i64(s, 2, now_ms + (lease_ms > 0 ? lease_ms : 0), rc);
	rc = th_bind_i64(s, 3, th_now_ms(), rc);
	rc = th_bind_i64(s, 4, limit > 0 ? limit : -1, rc);
	struct th_push_delivery *v = NULL;
	size_t cnt = 0, cap = 0;
	while (rc == SQLITE_OK && (rc = sqlite3_step(s)) == SQLITE_ROW) {
		if (th_grow((void **)&v, &cap, cnt, sizeof *v) != 0) {
			rc = SQLITE_NOMEM;
			break;
		}
		struct th_push_delivery *d = &v[cnt++];
		memset(d, 0, sizeof *d);
		d->id = sqlite3_column_int64(s, 0);
		d->seq = sqlite3_column_int64(s, 3);
		d->attempts = sqlite3_column_int(s, 5);
		if ((th_col_dup(s, 1, &d->task_id) | th_col_dup(s, 2, &d->config_id) |
		     th_col_dup(s, 4, &d->body)) != 0) {
			rc = SQLITE_NOMEM;
			break;
		}
		rc = SQLITE_OK;
	}
	if (rc != SQLITE_DONE)
		err = rc == SQLITE_NOMEM
		          ? th_error_set(e, TH_ENOMEM, "out of memory claiming push deliveries")
		          : th_store_fail(st, rc, "push claim", e);
	th_store_stmt_done(s);
	if (err != TH_OK) {
		th_push_deliveries_free(v, cnt);
		return err;
	}
	if (cnt > 1)
		qsort(v, cnt, sizeof *v, by_id);
	*out = v;
	*n = cnt;
	return TH_OK;
}

static th_err outbox_update(struct th_store *st, sqlite3_stmt *s, int rc, int64_t id,
                            const char *what, struct th_error *e)
{
	rc = th_step_done(s, rc);
	if (rc != SQLITE_DONE)
		return th_store_fail(st, rc, what, e);
	if (sqlite3_changes(st->db) == 0)
		return th_error_set(e, TH_ENOTFOUND, "push delivery %lld not found", (long long)id);
	return TH_OK;
}

th_err th_store_push_delivered(struct th_store *st, int64_t id, struct th_error *e)
{
	sqlite3_stmt *s;
	th_err err = th_store_stmt(st, TH_STMT_PUSH_DELIVERED,
	                           "UPDATE push_outbox SET state = 'delivered', last_error = NULL, "
	                           "updated_ms = ?2 WHERE id = ?1",
	                           &s, e);
	if (err != TH_OK)
		return err;
	int rc = th_bind_i64(s, 1, id, SQLITE_OK);
	rc = th_bind_i64(s, 2, th_now_ms(), rc);
	return outbox_update(st, s, rc, id, "push delivered", e);
}

th_err th_store_push_retry(struct th_store *st, int64_t id, int64_t now_ms, const char *error,
                           const struct th_push_backoff *b, int *dead, struct th_error *e)
{
	if (dead != NULL)
		*dead = 0;
	if (b == NULL || b->base_ms < 0 || b->max_ms < 0 || b->max_attempts < 1)
		return th_error_set(e, TH_EINVAL, "push retry needs a back-off policy");
	sqlite3_stmt *s;
	/* Doubling stops at 2^30 so the shift cannot overflow; the cap applies after it. */
	th_err err = th_store_stmt(
	    st, TH_STMT_PUSH_RETRY,
	    "UPDATE push_outbox SET last_error = ?3, updated_ms = ?7, "
	    "state = CASE WHEN attempts >= ?6 THEN 'dead' ELSE 'pending' END, "
	    "next_attempt_ms = ?2 + min(?5, ?4 * (1 << min(max(attempts - 1, 0), 30))) "
	    "WHERE id = ?1 AND state IN ('pending', 'sending') RETURNING state = 'dead'",
	    &s, e);
	if (err != TH_OK)
		return err;
	int rc = th_bind_i64(s, 1, id, SQLITE_OK);
	rc = th_bind_i64(s, 2, now_ms, rc);
	rc = th_bind_text(s, 3, error, rc);
	rc = th_bind_i64(s, 4, b->base_ms, rc);
	rc = th_bind_i64(s, 5, b->max_ms, rc);
	rc = th_bind_i64(s, 6, b->max_attempts, rc);
	rc = th_bind_i64(s, 7, th_now_ms(), rc);
	int found = 0, is_dead = 0;
	if (rc == SQLITE_OK)
		rc = sqlite3_step(s);
	if (rc == SQLITE_ROW) {
		found = 1;
		is_dead = sqlite3_column_int(s, 0) != 0;
		rc = sqlite3_step(s);
	}
	th_store_stmt_done(s);
	if (rc != SQLITE_DONE)
		return th_store_fail(st, rc, "push retry", e);
	if (!found)
		return th_error_set(e, TH_ENOTFOUND, "push delivery %lld not found or finished",
		                    (long long)id);
	if (dead != NULL)
		*dead = is_dead;
	return TH_OK;
}

th_err th_store_push_dead(struct th_store *st, int64_t id, const char *error, struct th_error *e)
{
	sqlite3_stmt *s;
	th_err err = th_store_stmt(st, TH_STMT_PUSH_DEAD,
	                           "UPDATE push_outbox SET state = 'dead', last_error = ?2, "
	                           "updated_ms = ?3 WHERE id = ?1",
	                           &s, e);
	if (err != TH_OK)
		return err;
	int rc = th_bind_i64(s, 1, id, SQLITE_OK);
	rc = th_bind_text(s, 2, error, rc);
	rc = th_bind_i64(s, 3, th_now_ms(), rc);
	return outbox_update(st, s, rc, id, "push dead", e);
}

th_err th_store_push_prune(struct th_store *st, int64_t before_ms, int64_t *n, struct th_error *e)
{
	if (n != NULL)
		*n = 0;
	sqlite3_stmt *s;
	/* Two index ranges of (state, ...) would need updated_ms in the index; finished rows
	 * are pruned rarely, so the state prefix is enough. */
	th_err err = th_store_stmt(st, TH_STMT_PUSH_PRUNE,
	                           "DELETE FROM push_outbox WHERE state IN ('delivered', 'dead') "
	                           "AND updated_ms < ?1",
	                           &s, e);
	if (err != TH_OK)
		return err;
	int rc = th_bind_i64(s, 1, before_ms, SQLITE_OK);
	rc = th_step_done(s, rc);
	if (rc != SQLITE_DONE)
		return th_store_fail(st, rc, "push prune", e);
	if (n != NULL)
		*n = sqlite3_changes64(st->db);
	return TH_OK;
}

int th_store_push_any_due(struct th_store *st, int64_t now_ms)
{
	sqlite3_stmt *s;
	if (th_store_stmt(st, TH_STMT_PUSH_ANY_DUE,
	                  "SELECT 1 FROM push_outbox WHERE state IN ('pending', 'sending') AND "
	                  "next_attempt_ms <= ?1 LIMIT 1",
	                  &s, NULL) != TH_OK)
		return 0;
	int rc = th_bind_i64(s, 1, now_ms, SQLITE_OK);
	int due = rc == SQLITE_OK && sqlite3_step(s) == SQLITE_ROW;
	th_store_stmt_done(s);
	return due;
}
