#include "harness/stream.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

#include "config/config.h"
#include "harness/access.h"
#include "harness/intake.h"
#include "harness/turn.h"
#include "harness/view.h"
#include "store/store.h"
#include "util/ids.h"
#include "util/jsonx.h"

enum close_on { CLOSE_TERMINAL, CLOSE_TERMINAL_OR_INTERRUPTED };

/* The state a StreamResponse leaves the task in, or -1 if it says nothing of it. */
static int state_of(json_object *ev)
{
	json_object *holder = NULL, *status = NULL;
	if (!json_object_object_get_ex(ev, "statusUpdate", &holder) &&
	    !json_object_object_get_ex(ev, "task", &holder))
		return -1;
	if (!json_object_object_get_ex(holder, "status", &status))
		return -1;
	return th_state_from_json(json_object_object_get(status, "state"));
}

static int closes(json_object *ev, enum close_on when)
{
	int s = state_of(ev);
	if (s < 0)
		return 0;
	if (th_state_terminal((enum th_state)s))
		return 1;
	return when == CLOSE_TERMINAL_OR_INTERRUPTED && th_state_interrupted((enum th_state)s);
}

static void sleep_ms(int ms)
{
	struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
	nanosleep(&ts, NULL);
}

/* Sends a snapshot Task event numbered with the task's current last seq. *cursor
 * gets that number; *closed is set when the snapshot alone ends the stream. */
static th_err send_snapshot(struct th_app *app, const char *task_id, const char *viewer, int history,
                            enum close_on when, struct th_sink *sink, int64_t *cursor,
                            int *closed, struct th_error *e)
{
	struct th_task_row row = {0};
	json_object *task = NULL;
	/* One snapshot, so the Task event and its seq agree (TURN-7, STREAM-4). */
	int began = 0;
	th_err rc = th_store_read_begin(app->store, &began, e);
	if (rc == TH_OK)
		rc = th_store_task_get(app->store, task_id, &row, e);
	if (rc == TH_ENOTFOUND)
		rc = th_access_not_found(task_id, e);
	if (rc == TH_OK)
		rc = th_view_task(app->store, &row, viewer, history, 1, &task, e);
	th_store_read_end(app->store, began);
	if (rc == TH_OK) {
		json_object *ev = json_object_new_object();
		json_object_object_add(ev, "task", task);
		*cursor = row.last_seq;
		*closed = closes(ev, when);
		if (sink->event(sink->impl, row.last_seq, ev) != 0)
			*closed = 1;
		json_object_put(ev);
	}
	th_task_row_free(&row);
	return rc;
}

/* Streams events with seq > *cursor until one closes the stream, the client goes
 * away or the deadline passes. own_turn (0 = none) is a turn this request queued: it
 * runs here, in this worker, before the log is read further. */
/* Events of a side channel ("channel:<id>") reach only its members (CH-2, CH-3). */
static int visible(struct th_app *app, const char *task_id, const char *viewer,
                   const struct th_event *ev)
{
	if (strncmp(ev->kind, "channel:", 8) != 0)
		return 1;
	int member = 0;
	struct th_error e;
	th_error_clear(&e);
	if (th_store_channel_is_member(app->store, task_id, ev->kind + 8, viewer, NULL, &member, &e) !=
	    TH_OK)
		return 0;
	return member;
}

static th_err follow(struct th_app *app, const char *task_id, const char *viewer, int64_t cursor,
                     int64_t own_turn, enum close_on when, struct th_sink *sink,
                     struct th_error *e)
{
	const struct th_config *cfg = app->cfg;
	int64_t deadline = th_mono_ms() + cfg->stream_max_ms;
	int64_t last_beat = th_mono_ms();
	int64_t seen_version = -1;
	int64_t last_recover = th_mono_ms();
	for (;;) {
		if (own_turn > 0) {
			struct th_error te;
			th_error_clear(&te);
			if (th_turn_run(app, task_id, own_turn, &te) != TH_OK)
				fprintf(stderr, "tiny-harness: turn %lld on task %s: %s\n",
				        (long long)own_turn, task_id, te.msg);
			own_turn = 0;
			seen_version = -1;
		}
		/* Another connection's commit changes data_version; our own commits are read
		 * right after they happen (seen_version reset), so nothing is skipped. */
		int64_t version = th_store_data_version(app->store);
		if (version != seen_version) {
			struct th_event *ev = NULL;
			size_t n = 0;
			th_err rc = th_store_events_since(app->store, task_id, cursor, 100, &ev, &n, e);
			if (rc != TH_OK)
				return rc;
			int done = 0;
			for (size_t i = 0; i < n && !done; i++) {
				cursor = ev[i].seq;
				if (!visible(app, task_id, viewer, &ev[i]))
					continue;
				json_object *obj = json_tokener_parse(ev[i].json);
				if (obj == NULL)
					continue;
				done = sink->event(sink->impl, ev[i].seq, obj) != 0 || closes(obj, when);
				json_object_put(obj);
			}
			th_events_free(ev, n);
			if (done)
				return TH_OK;
			if (n == 100)
				continue; /* more may be waiting: read on before sleeping */
			seen_version = version;
		}
		int64_t now = th_mono_ms();
		if (now >= deadline)
			return TH_OK;
		/* TURN-7: a stream never runs a turn; once a second it looks for a turn whose
		 * worker died and leaves it to this worker's after-response work (or to
		 * `tiny-harness recover`, or to the next request that touches the task). */
		if (now - last_recover >= 1000) {
			if (th_turn_expired(app, task_id))
				(void)th_app_defer(app, task_id, 0);
			last_recover = now;
		}
		if (now - last_beat >= cfg->heartbeat_ms) {
			if (sink->heartbeat(sink->impl) != 0)
				return TH_OK;
			last_beat = now;
		}
		sleep_ms(cfg->stream_poll_ms);
	}
}

th_err th_harness_stream_send(struct th_app *app, const char *participant, unsigned extensions,
                              const struct th_send_req *req, struct th_sink *sink,
                              struct th_error *e)
{
	char id[TH_INTAKE_ID_MAX];
	int64_t turn_id = 0;
	json_object *final_task = NULL;
	/* A stream shows the turn's events one by one: never an inline turn. */
	th_err rc = th_intake_accept(app, participant, extensions, req, 0, id, &turn_id, &final_task,
	                             e);
	if (rc != TH_OK)
		return rc;
	json_object_put(final_task); /* the snapshot below reads the same state */
	if (sink->open(sink->impl) != 0)
		return TH_OK;
	int history = req->history_length >= 0 ? req->history_length : app->cfg->history_default;
	int64_t cursor = 0;
	int closed = 0;
	/* While this message's turn is still to run, only a terminal task ends the stream
	 * at the snapshot (a slash command answers a waiting task without moving it). */
	rc = send_snapshot(app, id, participant, history,
	                   turn_id > 0 ? CLOSE_TERMINAL : CLOSE_TERMINAL_OR_INTERRUPTED, sink, &cursor,
	                   &closed, e);
	if (rc != TH_OK || closed)
		return rc;
	return follow(app, id, participant, cursor, turn_id, CLOSE_TERMINAL_OR_INTERRUPTED, sink, e);
}

th_err th_harness_subscribe(struct th_app *app, const char *participant, const char *task_id,
                            int64_t last_event_id, struct th_sink *sink, struct th_error *e)
{
	th_err rc = th_access_check(app->store, task_id, participant, TH_ACCESS_READ, "read", NULL, e);
	struct th_task_row row = {0};
	if (rc == TH_OK)
		rc = th_store_task_get(app->store, task_id, &row, e);
	if (rc == TH_OK && last_event_id > row.last_seq)
		rc = th_error_set(e, TH_EINVAL,
		                  "Last-Event-ID %lld is past the last event (%lld) of task %.200s",
		                  (long long)last_event_id, (long long)row.last_seq, task_id);
	/* A2A §3.6: nothing more will happen to a terminal task, unless the client is
	 * catching up on events it missed (STREAM-4). */
	if (rc == TH_OK && last_event_id < 0 && th_state_terminal((enum th_state)row.state)) {
		rc = th_error_set(e, TH_EUNSUPPORTED,
		                  "task %.200s is %s; there is nothing left to subscribe to", task_id,
		                  th_state_name((enum th_state)row.state));
		snprintf(e->task_id, sizeof e->task_id, "%s", task_id);
	}
	th_task_row_free(&row);
	if (rc != TH_OK)
		return rc;
	if (sink->open(sink->impl) != 0)
		return TH_OK;
	int64_t cursor = last_event_id;
	if (last_event_id < 0) {
		int closed = 0;
		rc = send_snapshot(app, task_id, participant, app->cfg->history_default, CLOSE_TERMINAL,
		                   sink, &cursor, &closed, e);
		if (rc != TH_OK || closed)
			return rc;
	}
	return follow(app, task_id, participant, cursor, 0, CLOSE_TERMINAL, sink, e);
}
