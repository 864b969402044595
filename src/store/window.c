/* SPDX-License-Identifier: Apache-2.0 */
/* window.c — a task's history walked back from its newest message (SEC-3): for a reader
 * that wants the newest messages a filter keeps (a turn's model context) and stops as soon
 * as it has them, without reading the rest of a long history. Kept apart from history.c,
 * whose appends and event log are the write path. */
#include <stdint.h>
#include <stdlib.h>

#include "store/store.h"
#include "store/store_int.h"

#define PAGE_DEFAULT 32

/* th_store_texts' fn: hands each text to the walker's fn and counts it; a stop is carried
 * out as TH_EINTERNAL with stopped set, and taken back by th_store_history_back. */
struct walk {
	int (*fn)(void *arg, const char *text, struct th_error *e);
	void *arg;
	int64_t seen;
	int stopped;
};

static th_err one(void *arg, const char *const *col, struct th_error *e)
{
	struct walk *w = arg;
	w->seen++;
	/* The message as it was packed: messageId and role back in a compact one
	 * (decision-061), the task's ids left out. */
	char *text = col[0] != NULL ? th_ref_msg_unpack(col[0], col[1], col[2], NULL, NULL)
	                            : NULL; /* free */
	if (col[0] != NULL && text == NULL)
		return th_error_set(e, TH_ENOMEM, "out of memory (history)");
	int r = w->fn(w->arg, text != NULL ? text : "null", e);
	free(text);
	if (r > 0) {
		w->stopped = 1;
		return TH_EINTERNAL;
	}
	return r < 0 ? (e->code != TH_OK ? e->code : TH_EINTERNAL) : TH_OK;
}

th_err th_store_history_back(struct th_store *st, const char *task_id, int page,
                             int (*fn)(void *arg, const char *text, struct th_error *e), void *arg,
                             struct th_error *e)
{
	if (page < 1)
		page = PAGE_DEFAULT;
	/* Positions are 1..n per task (messages are only deleted with their task), so each
	 * page ends just below the last one read. */
	int64_t upto = th_store_history_last_pos(st, task_id);
	if (upto < 0)
		return th_error_set(e, TH_EINTERNAL, "reading the history of task %s failed",
		                    task_id);
	struct walk w = {fn, arg, 0, 0};
	th_err rc = TH_OK;
	while (rc == TH_OK && upto > 0) {
		w.seen = 0;
		rc = th_store_texts(st, TH_STMT_MSG_BACK,
		                    "SELECT json, message_id, role FROM messages "
		                    "WHERE task_id = ?1 AND pos <= ?2 ORDER BY pos DESC LIMIT ?3",
		                    TH_ARGS(TH_T(task_id), TH_I(upto), TH_I(page)), one, &w,
		                    "history", e);
		if (w.stopped) {
			th_error_clear(e);
			return TH_OK;
		}
		if (w.seen == 0)
			break;
		upto -= w.seen;
	}
	return rc;
}
