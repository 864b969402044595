/* SPDX-License-Identifier: Apache-2.0 */
/* streams.c — the stream thread of a FastCGI worker (STREAM-6); see streams.h.
 *
 * Threads: the worker's request threads only call the parker (room, take), poke and
 * count, and its recovery thread wait_recoveries; all of them touch only the fields under
 * mu. Everything else — the slots, the epoll set, the database connection — belongs to
 * the stream thread alone. */
#include "worker/streams.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "bind/bind.h"
#include "config/settings.h"
#include "domain/events.h"
#include "ops/ops.h"
#include "ops/stream.h"
#include "store/store.h"
#include "turn/turn.h"
#include "util/buf.h"
#include "util/ids.h"
#include "util/log.h"
#include "worker/process.h"

/* Events read per task per query; a longer backlog is read in several. */
#define EVENTS_BATCH 100
/* How often the thread looks for expired turns of the tasks it watches (TURN-7). */
#define RECOVER_EVERY_MS 1000
/* How often a quiet stream is probed (th_bind_parked_probe). lighttpd and Apache notice a
 * client that went away only when they write to it; until then the connection to the
 * worker stays open and the slot taken. Two probes (one accepted by the dead socket, the
 * next refused) free it; 16 bytes a second per stream. */
#define PROBE_MS 500
/* seen_version after a failed read of the log: equal to no version, so read again. */
#define VERSION_UNREAD INT64_MIN
/* A slot's expiry before its task was asked (th_turn_expiry answers -2 or more). */
#define EXPIRY_UNKNOWN INT64_MIN

struct slot {
	struct th_bind_parked p; /* owned; th_bind_parked_free (closes the connection) */
	struct th_buf out;       /* framed bytes not yet written; th_buf_free */
	size_t sent;             /* bytes of out already written */
	struct th_fcgi_input in; /* what the web server sends, watched for an abort */
	int64_t last_beat;       /* monotonic ms of the last heartbeat (or of parking) */
	int64_t last_probe;      /* monotonic ms of the last probe (or heartbeat, parking) */
	int64_t expiry;          /* th_turn_expiry of the watched task as of the thread's
	                            expiry_version; EXPIRY_UNKNOWN: not asked yet */
	int ending;              /* the end of the response is queued: close once written */
	int gone;                /* the connection is dead: close without writing more */
	int want_out;            /* EPOLLOUT is registered (a write would have blocked) */
	int rd_closed;           /* the web server shut its side for writing: no more input
	                            is watched; a full close still shows as EPOLLHUP or as
	                            a failed write by the next heartbeat */
};

/* One participant's open streams in this worker (SEC-3). */
struct owner {
	char *id; /* owned; free (release_owner, th_streams_stop) */
	size_t n;
};

struct th_streams {
	const struct th_config *cfg; /* borrowed */
	struct th_store *store;      /* owned; the thread's connection; th_streams_stop */
	pthread_t thread;
	int epfd;      /* owned; closed by th_streams_stop */
	int wakefd;    /* owned (eventfd); closed by th_streams_stop */
	int change_fd; /* the store's, registered in epfd: announced commits (STORE-6); -1 */
	struct th_parker parker;

	pthread_mutex_t mu;           /* guards inbox, open, recover, stop */
	pthread_cond_t recover_cv;    /* signalled when recover gains an id, or at stop */
	struct th_bind_parked *inbox; /* handed over, not yet adopted; free */
	size_t ninbox, capinbox;
	size_t open;          /* streams in inbox and slots */
	struct owner *owners; /* open streams per participant, those with any; array free */
	size_t nowners, capowners;
	char **recover; /* task ids for the recovery thread; each and array free
	                   (th_streams_wait_recoveries hands them over) */
	size_t nrecover, caprecover;
	int stop;

	/* the stream thread's own */
	struct slot **slots; /* each freed by drop(); array free */
	size_t nslots, capslots;
	int64_t seen_version;
	struct th_log_spell reads; /* failed reads of the log since the last that succeeded */
	int64_t next_recover_ms;
	int64_t expiry_version; /* data_version the slots' expiry values were read at */
	int64_t next_renew_ms;  /* when the follows are put again (TH_FOLLOW_RENEW_MS) */
};

static void wake(struct th_streams *s)
{
	uint64_t one = 1;
	if (write(s->wakefd, &one, sizeof one) < 0 && errno != EAGAIN)
		th_log(TH_LOG_ERROR, "stream thread wake-up: %s", strerror(errno));
}

/* ---- the main thread's side ---- */

/* The index of participant's entry in owners, or nowners. Under mu. */
static size_t find_owner(const struct th_streams *s, const char *participant)
{
	const char *id = participant != NULL ? participant : "";
	size_t i = 0;
	while (i < s->nowners && strcmp(s->owners[i].id, id) != 0)
		i++;
	return i;
}

/* Counts one more stream of participant: 0, or -1 out of memory. Under mu. */
static int hold_owner(struct th_streams *s, const char *participant)
{
	size_t i = find_owner(s, participant);
	if (i < s->nowners) {
		s->owners[i].n++;
		return 0;
	}
	if (s->nowners == s->capowners) {
		size_t cap = s->capowners ? s->capowners * 2 : 8;
		struct owner *v = realloc(s->owners, cap * sizeof *v);
		if (v == NULL)
			return -1;
		s->owners = v;
		s->capowners = cap;
	}
	char *id = strdup(participant != NULL ? participant : "");
	if (id == NULL)
		return -1;
	s->owners[s->nowners++] = (struct owner){id, 1};
	return 0;
}

/* One stream of participant less. Under mu. */
static void release_owner(struct th_streams *s, const char *participant)
{
	size_t i = find_owner(s, participant);
	if (i == s->nowners || --s->owners[i].n > 0)
		return;
	free(s->owners[i].id);
	s->owners[i] = s->owners[--s->nowners];
}

/* SEC-3: the check and the count are one step under mu, so that requests of one
 * participant on several threads cannot all pass the check before any is counted. */
static int room(void *impl, const char *participant)
{
	struct th_streams *s = impl;
	pthread_mutex_lock(&s->mu);
	int r = TH_PARKER_ROOM;
	if (s->open >= (size_t)s->cfg->stream_max) {
		r = TH_PARKER_FULL;
	} else {
		size_t i = find_owner(s, participant);
		if (i < s->nowners && s->owners[i].n >= (size_t)s->cfg->stream_max_per_participant)
			r = TH_PARKER_MINE;
		else if (hold_owner(s, participant) != 0)
			r = TH_PARKER_FULL; /* out of memory: as if full, retry later */
		else
			s->open++;
	}
	pthread_mutex_unlock(&s->mu);
	return r;
}

static void unreserve(void *impl, const char *participant)
{
	struct th_streams *s = impl;
	pthread_mutex_lock(&s->mu);
	s->open--;
	release_owner(s, participant);
	pthread_mutex_unlock(&s->mu);
}

static int take(void *impl, struct th_bind_parked *p)
{
	struct th_streams *s = impl;
	pthread_mutex_lock(&s->mu);
	if (s->ninbox == s->capinbox) {
		size_t cap = s->capinbox ? s->capinbox * 2 : 8;
		struct th_bind_parked *v = realloc(s->inbox, cap * sizeof *v);
		if (v == NULL) {
			pthread_mutex_unlock(&s->mu);
			return -1;
		}
		s->inbox = v;
		s->capinbox = cap;
	}
	s->inbox[s->ninbox++] = *p; /* on the slot room() counted */
	pthread_mutex_unlock(&s->mu);
	memset(p, 0, sizeof *p);
	p->conn.fd = -1;
	wake(s);
	return 0;
}

struct th_parker *th_streams_parker(struct th_streams *s)
{
	return &s->parker;
}

size_t th_streams_count(struct th_streams *s)
{
	pthread_mutex_lock(&s->mu);
	size_t n = s->open;
	pthread_mutex_unlock(&s->mu);
	return n;
}

void th_streams_poke(struct th_streams *s)
{
	if (th_streams_count(s) > 0)
		wake(s);
}

size_t th_streams_wait_recoveries(struct th_streams *s, int timeout_ms, char ***ids)
{
	struct timespec until;
	clock_gettime(CLOCK_REALTIME, &until);
	int64_t ns = until.tv_nsec + (int64_t)(timeout_ms > 0 ? timeout_ms : 0) * 1000000;
	until.tv_sec += (time_t)(ns / 1000000000);
	until.tv_nsec = (long)(ns % 1000000000);
	pthread_mutex_lock(&s->mu);
	int timed_out = 0;
	while (s->nrecover == 0 && !s->stop && !timed_out)
		timed_out = timeout_ms < 0 ? pthread_cond_wait(&s->recover_cv, &s->mu) != 0
		                           : pthread_cond_timedwait(&s->recover_cv, &s->mu,
		                                                    &until) == ETIMEDOUT;
	size_t n = s->nrecover;
	*ids = s->recover;
	s->recover = NULL;
	s->nrecover = s->caprecover = 0;
	pthread_mutex_unlock(&s->mu);
	return n;
}

/* ---- the stream thread ---- */

/* 1 when a slot other than slots[i] follows slots[i]'s task. */
static int followed_elsewhere(const struct th_streams *s, size_t i)
{
	for (size_t j = 0; j < s->nslots; j++)
		if (j != i &&
		    strcmp(s->slots[j]->p.watch.task_id, s->slots[i]->p.watch.task_id) == 0)
			return 1;
	return 0;
}

/* decision-083: the thread follows each task one of its slots watches, so that commits to
 * it are announced (on PostgreSQL). A follow that could not be put costs only the wait
 * until the next poll. */
static void follow(struct th_streams *s, const char *task_id, int on)
{
	struct th_error e;
	th_error_clear(&e);
	if (th_store_follow(s->store, task_id, on, &e) != TH_OK)
		th_log(TH_LOG_WARN, "stream thread: task %s: %s", task_id, e.msg);
}

/* Puts every follow again in one statement and takes away those of followers that died,
 * once in TH_FOLLOW_RENEW_MS; a follow lapses after TH_FOLLOW_LAPSE_MS. */
static void renew_follows(struct th_streams *s, int64_t now)
{
	if (s->nslots == 0 || now < s->next_renew_ms)
		return;
	int first = s->next_renew_ms == 0; /* adopt() has just put them */
	s->next_renew_ms = now + TH_FOLLOW_RENEW_MS;
	if (first)
		return;
	const char **ids = malloc(s->nslots * sizeof *ids); /* free, below */
	struct th_error e;
	th_error_clear(&e);
	if (ids == NULL) {
		th_log(TH_LOG_WARN, "stream thread: out of memory renewing %zu follows", s->nslots);
		return;
	}
	for (size_t i = 0; i < s->nslots; i++)
		ids[i] = s->slots[i]->p.watch.task_id;
	th_err rc = th_store_follows_renew(s->store, ids, s->nslots, &e);
	free(ids);
	if (rc == TH_OK)
		rc = th_store_follows_prune(s->store, &e);
	if (rc != TH_OK)
		th_log(TH_LOG_WARN, "stream thread: follows: %s", e.msg);
}

static void drop(struct th_streams *s, size_t i)
{
	struct slot *sl = s->slots[i];
	if (!followed_elsewhere(s, i))
		follow(s, sl->p.watch.task_id, 0);
	epoll_ctl(s->epfd, EPOLL_CTL_DEL, sl->p.conn.fd, NULL);
	pthread_mutex_lock(&s->mu);
	s->open--;
	release_owner(s, sl->p.watch.viewer);
	pthread_mutex_unlock(&s->mu);
	th_bind_parked_free(&sl->p);
	th_buf_free(&sl->out);
	free(sl);
	s->slots[i] = s->slots[--s->nslots];
}

static void end_slot(struct slot *sl)
{
	if (sl->ending || sl->gone)
		return;
	th_bind_parked_end(&sl->p, &sl->out);
	sl->ending = 1;
}

/* A2A-11-GEN-4: a waiting GetTask is answered with the task as it is now (its generation
 * passed, its wait timed out or the worker stops), read on the thread's own connection
 * in the caller's snapshot when there is one, else in a snapshot of its own. */
static void answer_slot(struct th_streams *s, struct slot *sl)
{
	if (sl->ending || sl->gone)
		return;
	const struct th_watch *w = &sl->p.watch;
	struct th_error e;
	th_error_clear(&e);
	char *text = NULL; /* free */
	int64_t gen = 0, last = 0;
	th_err rc = th_harness_task_text(s->store, w->viewer, w->tenant, w->task_id, w->history, 0,
	                                 NULL, &text, &gen, &last, &e);
	th_bind_parked_answer(&sl->p, text, rc == TH_OK ? NULL : &e, &sl->out);
	free(text);
	sl->ending = 1;
}

/* The end of what a slot follows: a stream's end, or a waiting GetTask's answer. */
static void finish_slot(struct th_streams *s, struct slot *sl)
{
	if (sl->p.watch.long_poll)
		answer_slot(s, sl);
	else
		end_slot(sl);
}

/* Takes what the main thread handed over; returns how many. */
static size_t adopt(struct th_streams *s)
{
	pthread_mutex_lock(&s->mu);
	struct th_bind_parked *in = s->inbox;
	size_t n = s->ninbox;
	s->inbox = NULL;
	s->ninbox = s->capinbox = 0;
	pthread_mutex_unlock(&s->mu);
	int64_t now = th_mono_ms();
	for (size_t i = 0; i < n; i++) {
		struct slot *sl = calloc(1, sizeof *sl);
		if (sl != NULL && s->nslots == s->capslots) {
			size_t cap = s->capslots ? s->capslots * 2 : 16;
			struct slot **v = realloc(s->slots, cap * sizeof *v);
			if (v == NULL) {
				free(sl);
				sl = NULL;
			} else {
				s->slots = v;
				s->capslots = cap;
			}
		}
		if (sl == NULL) {
			/* Out of memory: the client sees its stream end and resumes. */
			pthread_mutex_lock(&s->mu);
			s->open--;
			release_owner(s, in[i].watch.viewer);
			pthread_mutex_unlock(&s->mu);
			th_bind_parked_free(&in[i]);
			continue;
		}
		sl->p = in[i];
		th_buf_init(&sl->out);
		sl->last_beat = sl->last_probe = now;
		sl->expiry = EXPIRY_UNKNOWN;
		int fd = sl->p.conn.fd;
		int fl = fcntl(fd, F_GETFL);
		struct epoll_event ev = {.events = EPOLLIN | EPOLLRDHUP, .data.ptr = sl};
		if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0 ||
		    epoll_ctl(s->epfd, EPOLL_CTL_ADD, fd, &ev) < 0)
			sl->gone = 1;
		s->slots[s->nslots++] = sl;
		/* Followed before the read that adoption forces (run): a commit after that
		 * read is announced. */
		if (!followed_elsewhere(s, s->nslots - 1))
			follow(s, sl->p.watch.task_id, 1);
	}
	free(in);
	return n;
}

static void watch_events(struct th_streams *s, struct slot *sl)
{
	struct epoll_event ev = {.events = (sl->rd_closed ? 0u : (uint32_t)(EPOLLIN | EPOLLRDHUP)) |
	                                   (sl->want_out ? (uint32_t)EPOLLOUT : 0u),
	                         .data.ptr = sl};
	epoll_ctl(s->epfd, EPOLL_CTL_MOD, sl->p.conn.fd, &ev);
}

/* The web server wrote or closed: an abort or a close ends the stream. */
static void on_input(struct th_streams *s, struct slot *sl, uint32_t events)
{
	if (events & (EPOLLERR | EPOLLHUP)) {
		sl->gone = 1;
		return;
	}
	unsigned char buf[4096];
	for (;;) {
		ssize_t k = read(sl->p.conn.fd, buf, sizeof buf);
		if (k > 0) {
			if (th_fcgi_input_feed(&sl->in, buf, (size_t)k))
				end_slot(
				    sl); /* FCGI_ABORT_REQUEST: answer it with the end record */
			continue;
		}
		if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return;
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0) {
			sl->gone = 1;
			return;
		}
		/* End of input: a full close, or only a half-close after the request (the
		 * response may still be read). Stop watching input; a full close is seen as
		 * EPOLLHUP or by the next write, at the latest one heartbeat later. */
		sl->rd_closed = 1;
		watch_events(s, sl);
		return;
	}
}

static void flush_slot(struct th_streams *s, struct slot *sl)
{
	if (sl->gone)
		return;
	if (sl->out.oom) {
		sl->gone = 1;
		return;
	}
	while (sl->sent < sl->out.len) {
		ssize_t k = send(sl->p.conn.fd, sl->out.data + sl->sent, sl->out.len - sl->sent,
		                 MSG_NOSIGNAL | MSG_DONTWAIT);
		if (k > 0) {
			sl->sent += (size_t)k;
			continue;
		}
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			/* SEC-3: a client that reads nothing while stream_backlog_max bytes
			 * wait for it is dropped (it resumes with Last-Event-ID): the memory
			 * is better spent on others. */
			if (sl->out.len - sl->sent > (size_t)s->cfg->stream_backlog_max) {
				sl->gone = 1;
				return;
			}
			if (!sl->want_out) {
				sl->want_out = 1;
				watch_events(s, sl);
			}
			return;
		}
		sl->gone = 1; /* EPIPE, ECONNRESET: the web server closed it */
		return;
	}
	/* All written: start the buffer afresh. */
	th_buf_free(&sl->out);
	th_buf_init(&sl->out);
	sl->sent = 0;
	if (sl->want_out) {
		sl->want_out = 0;
		watch_events(s, sl);
	}
}

static int emit(void *arg, int64_t seq, const char *json)
{
	struct slot *sl = arg;
	th_bind_parked_event(&sl->p, seq, json, &sl->out);
	return sl->out.oom ? -1 : 0;
}

static int by_task(const void *a, const void *b)
{
	const struct slot *x = *(const struct slot *const *)a;
	const struct slot *y = *(const struct slot *const *)b;
	return strcmp(x->p.watch.task_id, y->p.watch.task_id);
}

static int live(const struct slot *sl)
{
	return !sl->gone && !sl->ending;
}

/* A read of the log failed: logged when a spell of failures begins or its cause
 * changes, not at every tick while the database stays busy (the next tick tries again). */
static void read_failed(struct th_streams *s, const char *task, const char *why)
{
	char who[TH_ID_BUF + 24];
	snprintf(who, sizeof who, "stream thread%s%s", task != NULL ? ": task " : "",
	         task != NULL ? task : "");
	th_log_spell_failed(&s->reads, who, why);
}

/* One read of the event log for every stream: the slots sorted by task, then one
 * query per task from the lowest cursor among its streams, all in one snapshot. 0 when
 * every task was read and delivered; -1 when a read failed (logged) or a stream stopped
 * before an event whose audience could not be read, so that the caller reads again at
 * the next tick rather than wait for another commit. */
static int read_log(struct th_streams *s)
{
	struct th_error e;
	th_error_clear(&e);
	int began = 0, failed = 0;
	if (th_store_read_begin(s->store, &began, &e) != TH_OK) {
		read_failed(s, NULL, e.msg);
		return -1;
	}
	qsort(s->slots, s->nslots, sizeof *s->slots, by_task);
	for (size_t i = 0; i < s->nslots;) {
		size_t j = i;
		int64_t from = INT64_MAX;
		for (; j < s->nslots && by_task(&s->slots[i], &s->slots[j]) == 0; j++)
			if (live(s->slots[j]) && s->slots[j]->p.watch.cursor < from)
				from = s->slots[j]->p.watch.cursor;
		const char *task = s->slots[i]->p.watch.task_id;
		while (from != INT64_MAX) {
			struct th_event *ev = NULL;
			size_t n = 0;
			if (th_events_since(s->store, task, from, EVENTS_BATCH, &ev, &n, &e) !=
			    TH_OK) {
				read_failed(s, task, e.msg);
				failed = 1;
				break;
			}
			int stuck = 0; /* a stream stopped before an event: read again later */
			for (size_t k = i; k < j; k++) {
				struct slot *sl = s->slots[k];
				int r = live(sl) ? th_stream_deliver(s->store, &sl->p.watch, ev, n,
				                                     emit, sl)
				                 : 0;
				if (r > 0)
					finish_slot(s, sl);
				stuck |= r < 0;
			}
			failed |= stuck;
			from = n == EVENTS_BATCH && !stuck ? ev[n - 1].seq : INT64_MAX;
			th_events_free(ev, n);
		}
		i = j;
	}
	th_store_read_end(s->store, began);
	if (!failed)
		th_log_spell_over(&s->reads, "stream thread", "the event log reads");
	return failed ? -1 : 0;
}

/* Queues task_id for the recovery thread (once while queued) and wakes it. */
static void hand_over(struct th_streams *s, const char *task_id)
{
	pthread_mutex_lock(&s->mu);
	int known = 0;
	for (size_t i = 0; i < s->nrecover && !known; i++)
		known = strcmp(s->recover[i], task_id) == 0;
	if (!known && s->nrecover == s->caprecover) {
		size_t cap = s->caprecover ? s->caprecover * 2 : 4;
		char **v = realloc(s->recover, cap * sizeof *v);
		if (v != NULL) {
			s->recover = v;
			s->caprecover = cap;
		}
	}
	/* Out of memory: the next look, a second later, hands it over again. */
	char *id = !known && s->nrecover < s->caprecover ? strdup(task_id) : NULL;
	if (id != NULL) {
		s->recover[s->nrecover++] = id;
		pthread_cond_signal(&s->recover_cv);
	}
	pthread_mutex_unlock(&s->mu);
}

/* TURN-7, TURN-4: each watched task's first live turn is asked for by the task's id
 * (th_turn_expiry, GetTask's indexed query), so expired turns elsewhere never hide it;
 * one that expired goes to the worker's recovery thread at once. The answer stays true
 * while nothing is committed, so it is asked again only after data_version moved: idle
 * streams cost no queries, only the comparison with the clock. */
static void look_for_expired(struct th_streams *s, int64_t version)
{
	if (version < 0 || version != s->expiry_version)
		for (size_t i = 0; i < s->nslots; i++)
			s->slots[i]->expiry = EXPIRY_UNKNOWN;
	s->expiry_version = version;
	qsort(s->slots, s->nslots, sizeof *s->slots, by_task);
	int64_t now = th_now_ms();
	int began = 0, snapshot = 0;
	for (size_t i = 0; i < s->nslots;) {
		size_t j = i;
		int watched = 0;
		int64_t at = EXPIRY_UNKNOWN; /* a stream adopted since the last look has none */
		for (; j < s->nslots && by_task(&s->slots[i], &s->slots[j]) == 0; j++) {
			watched |= live(s->slots[j]);
			if (s->slots[j]->expiry != EXPIRY_UNKNOWN)
				at = s->slots[j]->expiry;
		}
		const char *task = s->slots[i]->p.watch.task_id;
		if (watched && at == EXPIRY_UNKNOWN) {
			struct th_error e;
			th_error_clear(&e);
			/* One snapshot for every task asked in this look. */
			if (!snapshot++ && th_store_read_begin(s->store, &began, &e) != TH_OK)
				th_log(TH_LOG_ERROR, "stream thread: %s", e.msg);
			at = th_turn_expiry(s->store, s->cfg->lease_ms, task);
			/* -2: the database could not tell; asked again at the next look. */
			for (size_t k = i; k < j && at > -2; k++)
				s->slots[k]->expiry = at;
		}
		if (watched && at >= 0 && at < now)
			hand_over(s, task);
		i = j;
	}
	th_store_read_end(s->store, began);
}

static void tick(struct th_streams *s, int force)
{
	int64_t version = th_store_data_version(s->store);
	/* A version is seen once its commits were read: after a failed read (SQLITE_BUSY
	 * under load, say) the next tick reads again, for the commit that moved the version
	 * may be the task's last one for a long while. */
	if (force || version != s->seen_version)
		s->seen_version = read_log(s) == 0 ? version : VERSION_UNREAD;
	int64_t now = th_mono_ms();
	for (size_t i = 0; i < s->nslots; i++) {
		struct slot *sl = s->slots[i];
		if (!live(sl))
			continue;
		if (now >= sl->p.watch.deadline_ms) {
			finish_slot(s, sl);
		} else if (sl->p.watch.long_poll) {
			continue; /* no byte before a GetTask's answer: its headers come first */
		} else if (now - sl->last_beat >= s->cfg->heartbeat_ms) {
			th_bind_parked_heartbeat(&sl->p, &sl->out);
			sl->last_beat = sl->last_probe = now;
		} else if (now - sl->last_probe >= PROBE_MS) {
			th_bind_parked_probe(&sl->p, &sl->out);
			sl->last_probe = now;
		}
	}
	if (now >= s->next_recover_ms) {
		look_for_expired(s, version);
		s->next_recover_ms = now + RECOVER_EVERY_MS;
	}
}

/* Keeps the store's announcement descriptor (STORE-6: on PostgreSQL a commit on any host
 * makes it readable) in epfd; it can change when a lost connection was opened again. */
static void watch_changes(struct th_streams *s)
{
	int fd = th_store_change_fd(s->store);
	if (fd == s->change_fd)
		return;
	if (s->change_fd >= 0)
		(void)epoll_ctl(s->epfd, EPOLL_CTL_DEL, s->change_fd, NULL);
	s->change_fd = -1;
	struct epoll_event ev = {.events = EPOLLIN, .data.ptr = &s->change_fd};
	if (fd >= 0 && epoll_ctl(s->epfd, EPOLL_CTL_ADD, fd, &ev) == 0)
		s->change_fd = fd;
}

static void *run(void *arg)
{
	struct th_streams *s = arg;
	struct epoll_event evs[64];
	for (;;) {
		watch_changes(s);
		int timeout = s->nslots > 0 ? s->cfg->stream_poll_ms : -1;
		int n = epoll_wait(s->epfd, evs, 64, timeout);
		for (int i = 0; i < n; i++) {
			if (evs[i].data.ptr == &s->change_fd)
				continue; /* read below, with what came in with other results */
			if (evs[i].data.ptr == NULL) {
				uint64_t v;
				if (read(s->wakefd, &v, sizeof v) < 0 && errno != EAGAIN)
					th_log(TH_LOG_ERROR, "stream thread: %s", strerror(errno));
				continue;
			}
			struct slot *sl = evs[i].data.ptr;
			if (evs[i].events & ~(uint32_t)EPOLLOUT)
				on_input(s, sl, evs[i].events);
		}
		pthread_mutex_lock(&s->mu);
		int stop = s->stop;
		pthread_mutex_unlock(&s->mu);
		/* A stream just handed over is read at once: a commit that landed between
		 * its last read in the request and now may predate this connection's last
		 * look at data_version. A poke only wakes the thread for that look. */
		int adopted = adopt(s) > 0;
		/* An announced commit is read at once instead of at the next poll. */
		int announced = th_store_change_seen(s->store);
		if (s->nslots > 0 && !stop) {
			renew_follows(s, th_mono_ms());
			tick(s, adopted || announced);
		}
		for (size_t i = 0; i < s->nslots; i++) {
			if (stop)
				finish_slot(s, s->slots[i]);
			flush_slot(s, s->slots[i]);
		}
		for (size_t i = s->nslots; i-- > 0;) {
			struct slot *sl = s->slots[i];
			if (sl->gone || (sl->ending && sl->sent >= sl->out.len))
				drop(s, i);
		}
		if (stop)
			break;
	}
	while (s->nslots > 0)
		drop(s, s->nslots - 1);
	return NULL;
}

/* Each open stream holds one descriptor: take the whole allowance the process has. */
static void raise_fd_limit(const struct th_config *cfg)
{
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) != 0)
		return;
	if (rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		(void)setrlimit(RLIMIT_NOFILE, &rl);
	}
	if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < (rlim_t)cfg->stream_max + 64)
		th_log(TH_LOG_WARN,
		       "the open-file limit (%llu) is below stream_max (%d) + 64; streams past it "
		       "fail to open",
		       (unsigned long long)rl.rlim_cur, cfg->stream_max);
}

th_err th_streams_start(const struct th_config *cfg, struct th_streams **out, struct th_error *e)
{
	*out = NULL;
	raise_fd_limit(cfg);
	struct th_streams *s = calloc(1, sizeof *s);
	if (s == NULL)
		return th_error_set(e, TH_ENOMEM, "out of memory starting the stream thread");
	s->cfg = cfg;
	s->epfd = s->wakefd = s->change_fd = -1;
	s->seen_version = -1;
	s->parker = (struct th_parker){s, room, take, unreserve};
	s->expiry_version = -1;
	pthread_mutex_init(&s->mu, NULL);
	pthread_cond_init(&s->recover_cv, NULL);
	struct th_store_opts o;
	th_worker_store_opts(cfg, 1, &o);
	th_err rc = th_store_open(&o, &s->store, e);
	if (rc == TH_OK) {
		s->epfd = epoll_create1(EPOLL_CLOEXEC);
		s->wakefd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
		struct epoll_event ev = {.events = EPOLLIN, .data.ptr = NULL};
		if (s->epfd < 0 || s->wakefd < 0 ||
		    epoll_ctl(s->epfd, EPOLL_CTL_ADD, s->wakefd, &ev) < 0)
			rc = th_error_set(e, TH_EINTERNAL, "stream thread: %s", strerror(errno));
	}
	if (rc == TH_OK && pthread_create(&s->thread, NULL, run, s) != 0)
		rc = th_error_set(e, TH_EINTERNAL, "cannot start the stream thread");
	if (rc != TH_OK) {
		if (s->store != NULL)
			th_store_close(s->store);
		if (s->epfd >= 0)
			close(s->epfd);
		if (s->wakefd >= 0)
			close(s->wakefd);
		pthread_cond_destroy(&s->recover_cv);
		pthread_mutex_destroy(&s->mu);
		free(s);
		return rc;
	}
	*out = s;
	return TH_OK;
}

void th_streams_halt(struct th_streams *s)
{
	if (s == NULL)
		return;
	pthread_mutex_lock(&s->mu);
	s->stop = 1;
	pthread_cond_broadcast(&s->recover_cv);
	pthread_mutex_unlock(&s->mu);
	wake(s);
}

void th_streams_stop(struct th_streams *s)
{
	if (s == NULL)
		return;
	th_streams_halt(s);
	pthread_join(s->thread, NULL);
	for (size_t i = 0; i < s->ninbox; i++)
		th_bind_parked_free(&s->inbox[i]);
	free(s->inbox);
	for (size_t i = 0; i < s->nowners; i++)
		free(s->owners[i].id);
	free(s->owners);
	for (size_t i = 0; i < s->nrecover; i++)
		free(s->recover[i]);
	free(s->recover);
	free(s->slots);
	th_store_close(s->store);
	close(s->epfd);
	close(s->wakefd);
	pthread_cond_destroy(&s->recover_cv);
	pthread_mutex_destroy(&s->mu);
	free(s);
}
