/* SPDX-License-Identifier: Apache-2.0 */
/* keys.c — API keys, table `api_keys` (sql/008, SEC-1): stored as hashes only. */
#include <stddef.h>

#include "store/store.h"
#include "store/store_int.h"
#include "util/ids.h"

static const struct th_col key_cols[] = {
    TH_COL_TEXT(struct th_api_key, id),        TH_COL_TEXT(struct th_api_key, participant),
    TH_COL_TEXT(struct th_api_key, name),      TH_COL_I64(struct th_api_key, created_ms),
    TH_COL_I64(struct th_api_key, revoked_ms),
};
static const struct th_row_def key_row = TH_ROW_DEF(struct th_api_key, key_cols);

void th_api_keys_free(struct th_api_key *keys, size_t n)
{
	th_rows_free(&key_row, keys, n);
}

th_err th_store_key_add(struct th_store *st, const char *id, const char *participant,
                        const char *name, const char *hash, struct th_error *e)
{
	return th_store_exec(
	    st, TH_STMT_KEY_ADD,
	    "INSERT INTO api_keys (id, participant, name, key_hash, created_ms) "
	    "VALUES (?1, ?2, ?3, ?4, ?5)",
	    TH_ARGS(TH_T(id), TH_T(participant), TH_T(name), TH_T(hash), TH_I(th_now_ms())), NULL,
	    NULL, "API key", e);
}

th_err th_store_key_find(struct th_store *st, const char *hash, char **participant,
                         struct th_error *e)
{
	return th_store_text(st, TH_STMT_KEY_FIND,
	                     "SELECT participant FROM api_keys WHERE key_hash = ?1 AND "
	                     "revoked_ms IS NULL",
	                     TH_ARGS(TH_T(hash)), participant, "API key", e);
}

th_err th_store_key_list(struct th_store *st, struct th_api_key **keys, size_t *n,
                         struct th_error *e)
{
	return th_store_each(st, TH_STMT_KEY_LIST,
	                     "SELECT id, participant, name, created_ms, COALESCE(revoked_ms, 0) "
	                     "FROM api_keys WHERE created_ms >= ?1 ORDER BY created_ms, id",
	                     TH_ARGS(TH_I(0)), &key_row, (void **)keys, n, "API key", e);
}

th_err th_store_key_revoke(struct th_store *st, const char *which, int64_t *n, struct th_error *e)
{
	return th_store_exec(st, TH_STMT_KEY_REVOKE,
	                     "UPDATE api_keys SET revoked_ms = ?2 WHERE (id = ?1 OR name = ?1) "
	                     "AND revoked_ms IS NULL",
	                     TH_ARGS(TH_T(which), TH_I(th_now_ms())), NULL, n, "API key", e);
}
