/* SPDX-License-Identifier: Apache-2.0 */
/* query.c — reading tasks: GetTask and ListTasks (ID-3, STREAM-5). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/settings.h"
#include "domain/access.h"
#include "ops/ops.h"
#include "turn/turn.h"
#include "domain/view.h"
#include "store/store.h"
#include "util/buf.h"
#include "util/ids.h"
#include "util/text.h"
#include "util/jsonx.h"
#include "util/memo.h"

/* Keeps view under key for stamp, as "<expiry>\n<the text it serialises to>"; the kept
 * text (borrowed from answers, as th_memo_get's), or NULL when it could not be kept. */
static const char *keep_answer(struct th_memo *answers, struct th_memo_stamp stamp, const char *key,
                               int64_t expiry, json_object *view)
{
	const char *kept = NULL;
	struct th_buf entry;
	th_buf_init(&entry);
	const char *text = th_json_text(view);
	if (text != NULL) {
		th_buf_put_i64(&entry, expiry);
		th_buf_puts(&entry, "\n");
		th_buf_puts(&entry, text);
	}
	if (text != NULL && !entry.oom) {
		th_memo_put(answers, stamp, key, entry.data);
		kept = th_memo_get(answers, stamp, key);
		kept = kept != NULL ? strchr(kept, '\n') : NULL;
		kept = kept != NULL ? kept + 1 : NULL;
	}
	th_buf_free(&entry);
	return kept;
}

/* The key a GetTask's answer is kept under (decision-029; TEN-2: the tenant is in it):
 * "<history>\n<participant>\n<tenant>\n<id>", put together without printf, which cost
 * ~3,700 instructions of every GetTask (callgrind). key.oom tells a failure. */
static void memo_key(struct th_buf *key, int history, const char *participant, const char *tenant,
                     const char *id)
{
	th_buf_put_i64(key, history);
	th_buf_puts(key, "\n");
	th_buf_puts(key, participant);
	th_buf_puts(key, "\n");
	th_buf_puts(key, tenant != NULL ? tenant : "");
	th_buf_puts(key, "\n");
	th_buf_puts(key, id);
}

th_err th_harness_get(const struct th_turn_ctx *tc, struct th_memo *answers,
                      const char *participant, const struct th_get_req *req, json_object **task,
                      struct th_error *e)
{
	*task = NULL;
	/* ID-3 before the memo: a request with no sender is refused, never answered from
	 * what another participant was told (SEC-5). */
	if (participant == NULL || *participant == '\0')
		return th_access_no_participant(e);
	int history = req->history_length >= 0 ? req->history_length : tc->cfg->history_default;
	/* The same question, asked again while nothing was committed anywhere, has the same
	 * answer: access and view included (decision-029). A process that answers one
	 * request (plain CGI) keeps none and asks for no stamp (PKG-4). */
	struct th_buf key;
	th_buf_init(&key);
	if (answers != NULL)
		memo_key(&key, history, participant, req->tenant, req->id);
	int keep = answers != NULL && !key.oom;
	/* The stamp is asked first when an answer is kept under the key (it may still hold);
	 * else it is read with the view, just before its snapshot: on PostgreSQL in the same
	 * round trip (SCALE-1, decision-069). */
	int probe = keep && th_memo_has(answers, key.data);
	struct th_memo_stamp stamp = {-1, answers != NULL ? th_store_changes(tc->store) : 0};
	if (probe)
		stamp.seen = th_store_data_version(tc->store);
	/* Kept as "<expiry>\n<the answer's text>": with the answer, when the task's first
	 * live turn expires (th_turn_expiry), which stays true while nothing is committed. */
	const char *kept = probe && stamp.seen >= 0 ? th_memo_get(answers, stamp, key.data) : NULL;
	int64_t expiry = -1;
	if (kept != NULL) {
		char *end = NULL;
		expiry = strtoll(kept, &end, 10);
		kept = end != NULL && *end == '\n' ? end + 1 : NULL;
	}
	th_err rc = TH_OK;
	json_object *view = NULL;
	/* ID-3 (may the sender read it), the lease and the view, in one snapshot: on
	 * PostgreSQL one round trip (SCALE-1, decision-069). */
	struct th_view_checks checks = {.access = "read",
	                                .tenant = req->tenant,
	                                .expiry = &expiry,
	                                .lease_ms = tc->cfg->lease_ms,
	                                .version = keep && !probe ? &stamp.seen : NULL};
	if (kept == NULL) {
		rc = th_view_task_read(tc->store, req->id, participant, history, 1, &checks, &view,
		                       e);
		if (expiry < -1 || stamp.seen < 0)
			keep = 0; /* not known: asked again next time */
	}
	/* TURN-7: a read never runs a turn; a turn whose worker died is taken over by this
	 * worker after the answer is sent, so the next read sees it finished (TURN-4). Time
	 * passes while the database stays the same, so the expiry is compared every time. */
	if (rc == TH_OK && expiry >= 0 && expiry < th_now_ms())
		(void)th_defer_turn(&tc->defer, req->id, 0);
	/* Kept as the text the answer serialises to, and answered as that text. */
	if (rc == TH_OK && kept == NULL && keep)
		kept = keep_answer(answers, stamp, key.data, expiry, view);
	if (rc == TH_OK && kept != NULL) {
		json_object_put(view);
		view = th_json_raw(kept);
		if (view == NULL)
			rc = th_error_set(e, TH_ENOMEM, "out of memory");
	}
	th_buf_free(&key);
	if (rc == TH_OK)
		*task = view;
	else
		json_object_put(view);
	return rc;
}

th_err th_harness_task_text(struct th_store *st, const char *participant, const char *tenant,
                            const char *task_id, int history, int lease_ms, int64_t *expiry,
                            char **text, int64_t *generation, int64_t *last_seq, struct th_error *e)
{
	*text = NULL;
	*generation = *last_seq = 0;
	if (participant == NULL || *participant == '\0')
		return th_access_no_participant(e);
	json_object *view = NULL;
	/* One snapshot: the access check, the Task, its generation and its last seq agree
	 * (A2A-11-GEN-1). */
	struct th_view_checks checks = {.access = "read",
	                                .tenant = tenant,
	                                .expiry = expiry,
	                                .lease_ms = lease_ms,
	                                .generation = generation,
	                                .last_seq = last_seq};
	th_err rc = th_view_task_read(st, task_id, participant, history, 1, &checks, &view, e);
	if (rc == TH_OK &&
	    (*text = th_a2a_with_generation(th_json_text(view), *generation)) == NULL)
		rc = th_error_set(e, TH_ENOMEM, "out of memory");
	json_object_put(view);
	return rc;
}

/* Page tokens are opaque to clients: "<status_ms>.<task id>" in hex, so that a
 * token is one URL-safe word and a hand-made one is easy to refuse. */
static char *token_encode(int64_t ms, const char *id)
{
	struct th_buf raw, hex;
	th_buf_init(&raw);
	th_buf_init(&hex);
	th_buf_printf(&raw, "%" PRId64 ".%s", ms, id);
	for (size_t i = 0; !raw.oom && i < raw.len; i++)
		th_buf_printf(&hex, "%02x", (unsigned char)raw.data[i]);
	char *out = raw.oom || hex.oom ? NULL : th_buf_take(&hex);
	th_buf_free(&raw);
	th_buf_free(&hex);
	return out;
}

/* LIM-4: strict, the exact form token_encode writes and nothing else: lowercase hex
 * pairs of "<ms>.<id>", ms in decimal without sign or leading zero, id 1 to TH_ID_MAX
 * bytes without control characters. 0 and *id (caller frees), or -1. */
static int token_decode(const char *tok, int64_t *ms, char **id)
{
	size_t n = strlen(tok);
	if (n == 0 || n % 2 != 0 || n > TH_PAGE_TOKEN_MAX)
		return -1;
	char raw[TH_PAGE_TOKEN_MAX / 2 + 1];
	for (size_t i = 0; i < n / 2; i++) {
		int hi = th_hexval_lower((unsigned char)tok[2 * i]);
		int lo = th_hexval_lower((unsigned char)tok[2 * i + 1]);
		if (hi < 0 || lo < 0)
			return -1;
		raw[i] = (char)(hi << 4 | lo);
		if ((unsigned char)raw[i] < 0x20 || raw[i] == 0x7f)
			return -1;
	}
	raw[n / 2] = '\0';
	char *dot = strchr(raw, '.');
	size_t digits = dot != NULL ? (size_t)(dot - raw) : 0;
	if (digits == 0 || digits > 18 || (raw[0] == '0' && digits > 1) || dot[1] == '\0' ||
	    strlen(dot + 1) > TH_ID_MAX)
		return -1;
	int64_t v = 0;
	for (size_t i = 0; i < digits; i++) {
		if (raw[i] < '0' || raw[i] > '9')
			return -1;
		v = v * 10 + (raw[i] - '0');
	}
	*ms = v;
	*id = strdup(dot + 1);
	return *id ? 0 : -1;
}

/* A2A-11-GEN-1: *task (a Task view) as its text with the task's generation, read in the
 * caller's snapshot. */
static th_err with_generation(struct th_store *st, const char *task_id, json_object **task,
                              struct th_error *e)
{
	int64_t gen = 0, last = 0; /* last: the read th_store_expect_generation sent ahead */
	th_err rc = th_store_task_generation(st, task_id, INT64_MAX, &gen, &last, e);
	return rc == TH_OK ? th_a2a_task_add_generation(task, gen, e) : rc;
}

th_err th_harness_list(struct th_store *st, const char *participant, const struct th_list_req *req,
                       json_object **response, struct th_error *e)
{
	*response = NULL;
	if (participant == NULL || *participant == '\0')
		return th_access_no_participant(e);
	struct th_list_query q = {
	    .participant = participant,
	    .context_id = req->context_id,
	    .state = req->status,
	    .status_after_ms = req->status_after_ms,
	    .limit = req->page_size + 1, /* one more tells whether a next page exists */
	    .tenant = req->tenant,       /* TEN-4 */
	};
	char *cursor_id = NULL;
	if (req->page_token != NULL) {
		if (token_decode(req->page_token, &q.cursor_ms, &cursor_id) != 0)
			return th_error_set(e, TH_EINVAL,
			                    "pageToken is not a token this server issued (use the "
			                    "nextPageToken of a previous ListTasks response)");
		q.cursor_id = cursor_id;
	}
	struct th_task_row *rows = NULL;
	size_t n = 0;
	int64_t total = 0;
	/* One snapshot for the page, its totalSize and every task view in it (TURN-7). */
	int began = 0;
	th_err rc = th_store_read_begin(st, &began, e);
	if (rc == TH_OK)
		rc = th_store_task_list(st, &q, &rows, &n, &total, e);
	free(cursor_id);
	if (rc != TH_OK) {
		th_store_read_end(st, began);
		return rc;
	}
	size_t shown = n > (size_t)req->page_size ? (size_t)req->page_size : n;
	/* Listing many tasks with their whole history would be large: history only when
	 * asked for (docs/decisions/decision-003-list-history.md). */
	int history = req->history_length >= 0 ? req->history_length : 0;
	json_object *tasks = json_object_new_array();
	/* SCALE-1: every view's reads leave together (one round trip on PostgreSQL). */
	for (size_t i = 0; i < shown; i++) {
		th_view_expect_within(st, &rows[i], participant, history, req->include_artifacts);
		if (req->generations)
			th_store_expect_generation(st, rows[i].id);
	}
	/* SEC-3: the page's histories share one byte budget, not one each. */
	size_t left = TH_HISTORY_BYTES_MAX;
	for (size_t i = 0; rc == TH_OK && i < shown; i++) {
		json_object *t = NULL;
		rc = th_view_task_within(st, &rows[i], participant, history, req->include_artifacts,
		                         &left, &t, e);
		if (rc == TH_OK && req->generations)
			rc = with_generation(st, rows[i].id, &t, e);
		if (rc == TH_OK && th_json_push(tasks, t) != 0)
			rc = th_error_set(e, TH_ENOMEM, "out of memory building a task list");
	}
	char *next = NULL;
	if (rc == TH_OK && n > shown &&
	    (next = token_encode(rows[shown - 1].status_ms, rows[shown - 1].id)) == NULL)
		rc = th_error_set(e, TH_ENOMEM, "out of memory");
	if (rc == TH_OK) {
		*response =
		    th_a2a_list_response(tasks, next ? next : "", req->page_size, (int)total);
		tasks = NULL;
	}
	th_store_read_end(st, began);
	json_object_put(tasks);
	free(next);
	th_task_rows_free(rows, n);
	return rc;
}
