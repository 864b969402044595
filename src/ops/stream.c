/* SPDX-License-Identifier: Apache-2.0 */
#include "ops/stream.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "config/settings.h"
#include "domain/access.h"
#include "domain/events.h"
#include "ops/intake.h"
#include "turn/turn.h"
#include "domain/view.h"
#include "store/store.h"
#include "util/ids.h"
#include "util/jsonx.h"
#include "util/log.h"
#include "a2a/a2a.h"

/* Whether an event that leaves the task as ends says closes a stream that ends when. */
static int closes(enum th_event_ends ends, enum th_close_on when)
{
	return ends == TH_ENDS_TERMINAL ||
	       (ends == TH_ENDS_INTERRUPTED && when == TH_CLOSE_TERMINAL_OR_INTERRUPTED);
}

void th_watch_free(struct th_watch *w)
{
	if (w == NULL)
		return;
	free(w->task_id);
	free(w->viewer);
	free(w->tenant);
	memset(w, 0, sizeof *w);
}

/* Sends a snapshot Task event numbered with the task's current last seq. *cursor
 * gets that number; *closed is set when the snapshot alone ends the stream. With
 * generation (A2A 1.1) the Task carries the task's generation at that seq, and
 * *generation gets it. */
static th_err send_snapshot(const struct th_turn_ctx *tc, const char *task_id, const char *viewer,
                            int history, enum th_close_on when, struct th_sink *sink,
                            int64_t *cursor, int64_t *generation, int *closed, struct th_error *e)
{
	struct th_task_row row = {0};
	json_object *task = NULL;
	/* One snapshot, so the Task event, its seq and its generation agree (TURN-7,
	 * STREAM-4, A2A-11-GEN-2). */
	int began = 0;
	th_err rc = th_store_read_begin(tc->store, &began, e);
	if (rc == TH_OK)
		rc = th_store_task_get(tc->store, task_id, &row, e);
	if (rc == TH_ENOTFOUND)
		rc = th_access_not_found(task_id, e);
	if (rc == TH_OK)
		rc = th_view_task(tc->store, &row, viewer, history, 1, &task, e);
	if (rc == TH_OK && generation != NULL)
		rc =
		    th_store_task_generation(tc->store, task_id, row.last_seq, generation, NULL, e);
	th_store_read_end(tc->store, began);
	if (rc == TH_OK) {
		json_object *ev = json_object_new_object();
		if (th_json_put(ev, "task", task) != 0) {
			json_object_put(ev);
			th_task_row_free(&row);
			return th_error_set(e, TH_ENOMEM,
			                    "out of memory building a stream's first event");
		}
		task = NULL;
		char *with = generation != NULL
		                 ? th_a2a_event_with_generation(th_json_text(ev), *generation)
		                 : NULL; /* free */
		if (generation != NULL && with == NULL)
			rc = th_error_set(e, TH_ENOMEM,
			                  "out of memory building a stream's first event");
		*cursor = row.last_seq;
		*closed = closes(th_event_ends_at((enum th_state)row.state), when);
		if (rc == TH_OK && sink->event(sink->impl, row.last_seq,
		                               with != NULL ? with : th_json_text(ev)) != 0)
			*closed = 1;
		free(with);
		json_object_put(ev);
	}
	json_object_put(task);
	th_task_row_free(&row);
	return rc;
}

/* Events of a side channel ("channel:<id>") reach only its members (CH-2, CH-3): 1 when
 * viewer may see ev, 0 when not, -1 when membership could not be read. */
static int visible(struct th_store *st, const char *task_id, const char *viewer,
                   const struct th_event *ev)
{
	if (strncmp(ev->kind, "channel:", 8) != 0)
		return 1;
	int member = 0;
	struct th_error e;
	th_error_clear(&e);
	if (th_store_channel_is_member(st, task_id, ev->kind + 8, viewer, NULL, &member, &e) !=
	    TH_OK) {
		th_log(TH_LOG_WARN, "stream of task %s: event %lld: %s", task_id,
		       (long long)ev->seq, e.msg);
		return -1;
	}
	return member;
}

int th_stream_deliver(struct th_store *st, struct th_watch *w, const struct th_event *ev, size_t n,
                      int (*emit)(void *arg, int64_t seq, const char *json), void *arg)
{
	for (size_t i = 0; i < n; i++) {
		if (ev[i].seq <= w->cursor)
			continue;
		/* Asked before the cursor moves: an event whose audience is unknown is
		 * neither sent nor skipped, but offered again by the next read. */
		int see = w->long_poll ? 0 : visible(st, w->task_id, w->viewer, &ev[i]);
		if (see < 0)
			return -1;
		w->cursor = ev[i].seq;
		/* A2A-11-GEN-1: every mutation counts, seen by this viewer or not. */
		int mutation = w->generations && th_event_is_mutation(ev[i].kind);
		if (mutation)
			w->generation++;
		if (w->long_poll) {
			if (w->generation > w->wait_above)
				return 1;
			continue;
		}
		if (!see)
			continue;
		/* A2A-11-GEN-2: the generation after the mutation, spliced into the event as
		 * it was stored; the 1.0 text is never touched. */
		char *with = mutation ? th_a2a_event_with_generation(ev[i].json, w->generation)
		                      : NULL; /* free */
		int gone = emit(arg, ev[i].seq, with != NULL ? with : ev[i].json) != 0;
		free(with);
		if (gone || closes((enum th_event_ends)ev[i].ends, w->close_on))
			return 1;
	}
	return 0;
}

static int sink_emit(void *arg, int64_t seq, const char *json)
{
	struct th_sink *sink = arg;
	return sink->event(sink->impl, seq, json);
}

/* One read of w's events after its cursor, delivered through sink. 1: the stream is
 * over; 0: all read were delivered (*full: a whole batch, more may wait); -1: read again
 * after the pause, for the read failed (the database busy, a disk error: logged once a
 * spell, th_log_spell) or a side-channel event's audience could not be read. A
 * failed read keeps the stream open, as the stream thread does, and loses nothing. */
static int read_log(const struct th_turn_ctx *tc, struct th_watch *w, struct th_sink *sink,
                    struct th_log_spell *spell, int *full)
{
	enum { BATCH = 100 };
	struct th_event *ev = NULL;
	size_t n = 0;
	struct th_error e;
	th_error_clear(&e);
	if (th_events_since(tc->store, w->task_id, w->cursor, BATCH, &ev, &n, &e) != TH_OK) {
		th_log_spell_failed(spell, "stream", e.msg);
		return -1;
	}
	th_log_spell_over(spell, "stream", "the event log reads");
	int done = th_stream_deliver(tc->store, w, ev, n, sink_emit, sink);
	th_events_free(ev, n);
	*full = n == BATCH;
	return done;
}

/* Streams the events after cursor until one closes the stream, the client goes away
 * or stream_max_ms passes. own_turn (0 = none) is a turn this request queued: it runs
 * here, in this worker, first. Then the stream is parked when the carrier can hand
 * it over (STREAM-6: a FastCGI worker's stream thread follows it from there);
 * otherwise (CGI, tests) this request polls the log itself. */
static void follow_loop(const struct th_turn_ctx *tc, struct th_watch *w, int64_t own_turn,
                        struct th_sink *sink, int64_t *renew_at)
{
	const struct th_config *cfg = tc->cfg;
	int64_t last_beat = th_mono_ms();
	int64_t seen_version = -1;
	struct th_log_spell failed_reads = {0}; /* reads of the log since one succeeded */
	int64_t last_recover = th_mono_ms();
	int parkable = sink->park != NULL;
	for (;;) {
		if (own_turn > 0) {
			struct th_error te;
			th_error_clear(&te);
			if (th_turn_run(tc, w->task_id, own_turn, &te) != TH_OK)
				th_log(TH_LOG_ERROR, "turn %lld on task %s: %s",
				       (long long)own_turn, w->task_id, te.msg);
			own_turn = 0;
			seen_version = -1;
		}
		/* Another connection's commit changes data_version; our own commits are read
		 * right after they happen (seen_version reset), so nothing is skipped. */
		int64_t version = th_store_data_version(tc->store);
		if (version != seen_version) {
			int full = 0;
			int done = read_log(tc, w, sink, &failed_reads, &full);
			if (done > 0)
				return;
			if (done == 0 && full)
				continue; /* more may be waiting: read on before sleeping */
			if (done == 0)    /* else read again after the pause */
				seen_version = version;
		}
		if (parkable) {
			if (sink->park(sink->impl, w) == 0)
				return;
			parkable = 0; /* it could not be handed over: follow it here */
		}
		int64_t now = th_mono_ms();
		if (now >= w->deadline_ms)
			return;
		/* TURN-7: a stream never runs a turn; once a second it looks for a turn whose
		 * worker died and leaves it to this worker's after-response work (or to
		 * `tiny-harness recover`, or to the next request that touches the task). */
		if (now - last_recover >= 1000) {
			if (th_turn_expired(tc->store, tc->cfg->lease_ms, w->task_id))
				(void)th_defer_turn(&tc->defer, w->task_id, 0);
			last_recover = now;
		}
		if (now - last_beat >= cfg->heartbeat_ms) {
			if (sink->heartbeat(sink->impl) != 0)
				return;
			last_beat = now;
		}
		/* decision-083: from its first wait on, the stream follows its task, so that
		 * a commit to it is announced; once followed, the log is read again before the
		 * wait, since a commit before that was not. */
		if (now >= *renew_at) {
			int first = *renew_at == 0;
			struct th_error fe;
			th_error_clear(&fe);
			if (th_store_follow(tc->store, w->task_id, 1, &fe) != TH_OK)
				th_log(TH_LOG_WARN, "task %s: %s", w->task_id, fe.msg);
			*renew_at = now + TH_FOLLOW_RENEW_MS;
			if (first && th_store_change_fd(tc->store) >= 0) {
				seen_version = -1;
				continue;
			}
		}
		/* Woken at once by an announced commit (PostgreSQL), else after the poll. */
		th_store_change_wait(tc->store, cfg->stream_poll_ms);
	}
}

/* follow_loop, and the end of the follow it put (renew_at set: it followed). */
static void follow_watch(const struct th_turn_ctx *tc, struct th_watch *w, int64_t own_turn,
                         struct th_sink *sink)
{
	int64_t renew_at = 0;
	follow_loop(tc, w, own_turn, sink, &renew_at);
	if (renew_at != 0) {
		struct th_error fe;
		th_error_clear(&fe);
		(void)th_store_follow(tc->store, w->task_id, 0, &fe);
	}
}

/* Streams the events after cursor until one closes the stream, the client goes away
 * or stream_max_ms passes. own_turn (0 = none) is a turn this request queued: it runs
 * here, in this worker, first. Then the stream is parked when the carrier can hand
 * it over (STREAM-6: a FastCGI worker's stream thread follows it from there);
 * otherwise (CGI, tests) this request polls the log itself. */
static th_err follow(const struct th_turn_ctx *tc, const char *task_id, const char *viewer,
                     int64_t cursor, const int64_t *generation, int64_t own_turn,
                     enum th_close_on when, struct th_sink *sink, struct th_error *e)
{
	struct th_watch w = {.task_id = strdup(task_id),
	                     .viewer = viewer != NULL ? strdup(viewer) : NULL,
	                     .cursor = cursor,
	                     .close_on = when,
	                     .deadline_ms = th_mono_ms() + tc->cfg->stream_max_ms,
	                     .generations = generation != NULL,
	                     .generation = generation != NULL ? *generation : 0};
	th_err rc = TH_OK;
	if (w.task_id == NULL || (viewer != NULL && w.viewer == NULL))
		rc = th_error_set(e, TH_ENOMEM, "out of memory following task %.200s", task_id);
	else
		follow_watch(tc, &w, own_turn, sink);
	th_watch_free(&w); /* nothing left to free once it was parked */
	return rc;
}

th_err th_harness_stream_send(const struct th_turn_ctx *tc, const char *participant,
                              unsigned extensions, const struct th_send_req *req, int generations,
                              struct th_sink *sink, struct th_error *e)
{
	struct th_intake in;
	/* A stream shows the turn's events one by one: never an inline turn. Its answer is
	 * the snapshot below, so nothing the commit returned is needed but the ids. */
	th_err rc = th_intake_accept(tc, participant, extensions, req, 0, &in, e);
	th_intake_free(&in);
	if (rc != TH_OK)
		return rc;
	th_intake_look_lease(tc, &in);
	const char *id = in.task_id;
	int64_t turn_id = in.turn_id;
	if (sink->open(sink->impl) != 0)
		return TH_OK;
	int history = req->history_length >= 0 ? req->history_length : tc->cfg->history_default;
	int64_t cursor = 0, gen = 0;
	int64_t *genp = generations ? &gen : NULL;
	int closed = 0;
	/* While this message's turn is still to run, only a terminal task ends the stream
	 * at the snapshot (a slash command answers a waiting task without moving it). */
	rc = send_snapshot(tc, id, participant, history,
	                   turn_id > 0 ? TH_CLOSE_TERMINAL : TH_CLOSE_TERMINAL_OR_INTERRUPTED, sink,
	                   &cursor, genp, &closed, e);
	if (rc != TH_OK || closed)
		return rc;
	return follow(tc, id, participant, cursor, genp, turn_id, TH_CLOSE_TERMINAL_OR_INTERRUPTED,
	              sink, e);
}

th_err th_harness_subscribe(const struct th_turn_ctx *tc, const char *participant,
                            const char *tenant, const char *task_id, int64_t last_event_id,
                            int generations, struct th_sink *sink, struct th_error *e)
{
	th_err rc = th_access_check(tc->store, tenant, task_id, participant, TH_ACCESS_READ, "read",
	                            NULL, e);
	struct th_task_row row = {0};
	if (rc == TH_OK)
		rc = th_store_task_get(tc->store, task_id, &row, e);
	if (rc == TH_OK && last_event_id > row.last_seq)
		rc = th_error_set(e, TH_EINVAL,
		                  "Last-Event-ID %lld is past the last event (%lld) of task %.200s",
		                  (long long)last_event_id, (long long)row.last_seq, task_id);
	/* A2A §3.6: nothing more will happen to a terminal task, unless the client is
	 * catching up on events it missed (STREAM-4). */
	if (rc == TH_OK && last_event_id < 0 && th_state_terminal((enum th_state)row.state)) {
		rc = th_error_set(e, TH_EUNSUPPORTED,
		                  "task %.200s is %s; there is nothing left to subscribe to",
		                  task_id, th_state_name((enum th_state)row.state));
		th_error_task(e, task_id);
	}
	th_task_row_free(&row);
	if (rc != TH_OK)
		return rc;
	if (sink->open(sink->impl) != 0)
		return TH_OK;
	int64_t cursor = last_event_id, gen = 0;
	int64_t *genp = generations ? &gen : NULL;
	if (last_event_id < 0) {
		int closed = 0;
		rc = send_snapshot(tc, task_id, participant, tc->cfg->history_default,
		                   TH_CLOSE_TERMINAL, sink, &cursor, genp, &closed, e);
		if (rc != TH_OK || closed)
			return rc;
	} else if (genp != NULL) {
		/* Resumed (STREAM-4): counting on from the generation at Last-Event-ID. */
		rc = th_store_task_generation(tc->store, task_id, cursor, genp, NULL, e);
		if (rc != TH_OK)
			return rc;
	}
	return follow(tc, task_id, participant, cursor, genp, 0, TH_CLOSE_TERMINAL, sink, e);
}
