/* SPDX-License-Identifier: Apache-2.0 */
/* serve.c — the request loops of a worker (STORE-4): FastCGI (accept, answer, finish,
 * then the after-response work: deferred turns, the push budget, the WAL, the stream
 * thread's wake-up), the FastCGI worker's recovery thread (the same after-response work
 * for the expired turns its stream thread finds, TURN-7) and plain CGI (one request from
 * the environment). */
#include "worker/serve.h"

#include <fcgiapp.h>
#include <pthread.h>
#include <pwd.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

#include "app.h"
#include "bind/bind.h"
#include "config/settings.h"
#include "http/http.h"
#include "push/push.h"
#include "store/store.h"
#include "util/log.h"
#include "worker/handoff.h"
#include "worker/process.h"
#include "worker/streams.h"

/* How long a worker spends delivering queued push notifications after a request. */
#define PUSH_BUDGET_MS 2000

/* Start-up failed before the app existed: answer the one CGI request with 500. The
 * reason can name files (the database, the configuration), so it goes to the error
 * log only (LIM-5); the client is told where to look. */
static void cgi_fail(void)
{
	/* A fixed text: nothing to allocate when the worker could not even start. */
	static const char body[] = "{\"error\":{\"code\":500,\"status\":\"INTERNAL\",\"message\":"
	                           "\"tiny-harness could not start; the web server's error log "
	                           "says why\"}}";
	struct th_http_io io;
	th_http_cgi_io(&io);
	th_http_respond(&io, 500, "application/json", NULL, body, sizeof body - 1);
}

static int open_app(struct th_app *app, int cgi)
{
	struct th_error e;
	th_error_clear(&e);
	struct th_config *cfg = malloc(sizeof *cfg);
	if (cfg == NULL) {
		th_error_set(&e, TH_ENOMEM, "out of memory");
	} else if (th_config_load(cfg, &e) != TH_OK) {
		free(cfg);
	} else if (th_config_check_serving(cfg, &e) != TH_OK) {
		th_config_free(cfg);
		free(cfg);
	} else if (th_app_open(app, cfg, cgi ? TH_APP_ONE_REQUEST : 1, &e) == TH_OK) {
		return 0;
	}
	th_log(TH_LOG_ERROR, "%s", e.msg);
	if (cgi)
		cgi_fail();
	return 1;
}

/* Issue 26: a worker that starts on a database it cannot write says so once, naming the
 * file and the user it runs as (the usual cause is a file or directory owned by another
 * user); requests that write fail until that is fixed, and the first one after heals
 * (STORE-9). */
static void warn_if_unwritable(const struct th_app *app)
{
	const char *why = th_store_trouble(app->store);
	if (why == NULL)
		return;
	uid_t uid = geteuid();
	struct passwd pw, *found = NULL;
	char buf[1024];
	if (getpwuid_r(uid, &pw, buf, sizeof buf, &found) != 0)
		found = NULL;
	th_log(TH_LOG_WARN,
	       "%s; this worker runs as user %s (uid %u): writes fail until the user may write "
	       "the file and its directory, then the worker recovers by itself",
	       why, found != NULL ? found->pw_name : "(no name)", (unsigned)uid);
}

/* The heap a plain-CGI request populates at start (PKG-4, decision-092): the card's
 * request uses ~320 KiB of heap. */
#define CGI_HEAP_BYTES (384 * 1024)

/* PKG-4: the process settings of a plain-CGI request, which lives for one request. Its
 * heap's pages are made in one madvise(MADV_POPULATE_WRITE) instead of a page fault
 * each as malloc reaches them: on a virtual machine a fault costs ~9 µs and a populated
 * page ~4 µs (decision-092). CGI_HEAP_BYTES is taken from the heap (not from mmap, whose
 * pages a free would give back) and freed into it at once, where it stays for the
 * request's allocations. Without MADV_POPULATE_WRITE (Linux before 5.14) the pages come
 * one fault at a time, as before. */
static void tune_cgi_process(void)
{
#if defined(__GLIBC__) && defined(MADV_POPULATE_WRITE)
	mallopt(M_MMAP_THRESHOLD, 2 * CGI_HEAP_BYTES);
	mallopt(M_TRIM_THRESHOLD, 4 * CGI_HEAP_BYTES);
	long page_size = sysconf(_SC_PAGESIZE);
	char *p = page_size > 0 ? malloc(CGI_HEAP_BYTES) : NULL; /* freed below */
	if (p == NULL)
		return;
	const uintptr_t page = (uintptr_t)page_size;
	uintptr_t a = ((uintptr_t)p + page - 1) & ~(page - 1);
	uintptr_t b = ((uintptr_t)p + CGI_HEAP_BYTES) & ~(page - 1);
	if (b > a)
		(void)madvise((void *)a, b - a, MADV_POPULATE_WRITE);
	free(p);
#endif
}

int th_worker_serve_cgi(void)
{
	tune_cgi_process();
	struct th_app app;
	if (open_app(&app, 1) != 0)
		return 1;
	warn_if_unwritable(&app);
	struct th_http_io io;
	th_http_cgi_io(&io);
	th_bind_serve(&app, &io);
	fflush(stdout);
	th_app_run_pending(&app);
	th_push_after_request(app.store, app.cfg, &app.push_poll_ms, PUSH_BUDGET_MS);
	th_store_wal_tend(app.store);
	th_app_close(&app);
	return 0;
}

/* What this worker committed reaches its streams now, not at the next poll: the
 * stream thread is woken when the worker's connection changed rows since *changes. */
static void poke_if_written(struct th_app *app, struct th_streams *streams, int64_t *changes)
{
	int64_t now = th_store_changes(app->store);
	if (now != *changes)
		th_streams_poke(streams);
	*changes = now;
}

/* One request thread of a FastCGI worker, or its recovery thread: its own context
 * (configuration, database connection, after-response queue), the process's streams and
 * write group shared. */
struct pool;
struct loop {
	struct th_app app;
	struct th_streams *streams; /* borrowed; NULL: no stream thread */
	struct pool *pool;          /* borrowed; NULL: the recovery thread */
	pthread_t thread;
	int started; /* the thread runs (joined by th_worker_serve_fcgi) */
};

/* decision-045: the request threads of a FastCGI worker. One waits in accept from the
 * start; the others (up to worker_threads) are started one at a time, each when a thread
 * has just accepted a request and no other is left waiting in accept, so that a request
 * arriving next (or while a slow turn runs) always finds a thread. A web server that sends
 * a process one request at a time (mod_fcgid) keeps its processes at two request threads,
 * the one serving and the one waiting: a fraction of the memory and the start-up work of
 * all worker_threads, which is what lets mod_fcgid run as many processes as it has
 * requests at once. */
struct pool {
	pthread_mutex_t lock;
	/* NULL: the threads accept on the web server's socket (serve_loop); else they take
	 * the requests other workers hand over to this one, the writer (HOST-2, handed_loop) */
	struct th_handoff_point *point;
	struct loop *loops; /* max entries, [0] the main thread's; freed by th_worker_serve_fcgi */
	int max;            /* worker_threads; lowered when a thread cannot start */
	int used;           /* entries taken (started or starting); guarded by lock */
	int idle;           /* threads waiting in FCGX_Accept_r or about to; guarded by lock */
	int stopping;       /* the main loop ended: start no more threads; guarded by lock */
	struct th_store_group *group; /* borrowed: the threads' write group */
	struct th_streams *streams;   /* borrowed; NULL: no stream thread */
	struct th_parker *parker;     /* borrowed: the stream thread's, for every thread */
	struct th_handoff *handoff;   /* borrowed: where the threads hand their writes; NULL:
	                                 they write themselves (the writer's threads) */
};

/* The work left for after a response, or found by the stream thread: deferred turns
 * (TURN-5, TURN-7), their commits announced to the streams, due pushes, the WAL. */
static void after_response(struct loop *l, int64_t *changes)
{
	struct th_app *app = &l->app;
	th_app_run_pending(app);
	if (l->streams != NULL)
		poke_if_written(app, l->streams, changes);
	th_push_after_request(app->store, app->cfg, &app->push_poll_ms, PUSH_BUDGET_MS);
	/* STORE-5: a WAL that overlapping workers kept from restarting is reset. */
	th_store_wal_tend(app->store);
}

/* After a request's answer is complete: its writes reach the streams before a deferred
 * turn runs, then the after-response work. */
static void after_answer(struct loop *l, int64_t *changes)
{
	if (l->streams != NULL)
		poke_if_written(&l->app, l->streams, changes);
	after_response(l, changes);
}

static void grow(struct pool *p);

/* Counts the calling thread out of (busy 1) or into (0) the threads waiting in accept;
 * a thread that just took a request starts another when none is left waiting. */
static void set_busy(struct pool *p, int busy)
{
	if (p == NULL)
		return;
	pthread_mutex_lock(&p->lock);
	p->idle += busy ? -1 : 1;
	int want = busy && p->idle == 0 && !p->stopping && p->used < p->max;
	pthread_mutex_unlock(&p->lock);
	if (want)
		grow(p);
}

static void *serve_loop(void *arg)
{
	struct loop *l = arg;
	struct th_app *app = &l->app;
	int64_t changes = th_store_changes(app->store);
	FCGX_Request req;
	if (FCGX_InitRequest(&req, 0, 0) != 0) {
		set_busy(l->pool, 1);
		return NULL;
	}
	for (;;) {
		int rc = FCGX_Accept_r(&req);
		set_busy(l->pool, 1);
		if (rc < 0)
			break;
		struct th_http_io io;
		th_http_fcgi_io(&io, &req);
		th_bind_serve(app, &io);
		/* The response is complete for the client before any deferred turn runs
		 * (TURN-5: returnImmediately). */
		th_http_fcgi_finish(&io);
		after_answer(l, &changes);
		set_busy(l->pool, 0);
	}
	FCGX_Free(&req, 0);
	return NULL;
}

/* HOST-2: a thread of the writer, serving the requests other workers hand over. */
static void *handed_loop(void *arg)
{
	struct loop *l = arg;
	struct th_app *app = &l->app;
	int64_t changes = th_store_changes(app->store);
	const struct th_config *cfg = app->cfg;
	for (;;) {
		struct th_http_handed h;
		int rc = th_handoff_take(l->pool->point, (size_t)cfg->lim.max_body, &h);
		set_busy(l->pool, 1);
		if (rc == -2)
			break;
		if (rc == 0) {
			struct th_http_io io;
			th_http_handed_io(&io, &h);
			th_bind_serve(app, &io);
			th_http_handed_finish(&io);
			th_http_handed_free(&h);
			th_handoff_done(l->pool->point);
			after_answer(l, &changes);
		}
		set_busy(l->pool, 0);
	}
	return NULL;
}

/* TURN-4, TURN-7: the worker's recovery thread. The stream thread never runs a turn; a
 * watched task whose turn expired is handed here as soon as it is seen and recovered by
 * the after-response work a request thread runs for a GetTask that noticed one
 * (th_turn_recover of that task), so it never waits for a request to reach this worker. */
static void *recover_loop(void *arg)
{
	struct loop *l = arg;
	int64_t changes = th_store_changes(l->app.store);
	char **ids = NULL;
	size_t n;
	while ((n = th_streams_wait_recoveries(l->streams, -1, &ids)) > 0) {
		for (size_t i = 0; i < n; i++) {
			(void)th_app_defer(&l->app, ids[i], 0);
			free(ids[i]);
		}
		free(ids);
		ids = NULL;
		after_response(l, &changes);
	}
	free(ids); /* the stream thread stopped */
	return NULL;
}

/* Starts the recovery thread with a context of its own (joined to group, when there is
 * one). Its loop is kept until exit, as the request loops are; NULL when it could not
 * start (logged): the stream thread's finds then wait for a request to the task or for
 * `tiny-harness recover`. */
static struct loop *start_recoverer(struct th_store_group *group, struct th_streams *streams)
{
	struct loop *r = calloc(1, sizeof *r);
	if (r == NULL || open_app(&r->app, 0) != 0) {
		free(r);
		return NULL;
	}
	if (group != NULL)
		th_store_join(r->app.store, group);
	r->streams = streams;
	if (pthread_create(&r->thread, NULL, recover_loop, r) != 0) {
		th_log(TH_LOG_WARN, "the recovery thread could not start: expired turns of "
		                    "watched tasks wait for a request to the task or for "
		                    "`tiny-harness recover`");
		th_app_close(&r->app);
		free(r);
		return NULL;
	}
	r->started = 1;
	return r;
}

/* A request thread started by grow(): it opens its own context (configuration,
 * database connection), joins the write group and serves. A context that cannot be
 * opened ends the thread and the growth (logged): the worker serves with fewer. */
static void *grown_loop(void *arg)
{
	struct loop *l = arg;
	struct pool *p = l->pool;
	if (open_app(&l->app, 0) != 0) {
		th_log(TH_LOG_WARN, "a request thread could not open its context; serving with "
		                    "the threads already running");
		pthread_mutex_lock(&p->lock);
		p->idle--; /* counted as waiting by grow() */
		p->max = p->used;
		pthread_mutex_unlock(&p->lock);
		return NULL;
	}
	th_store_join(l->app.store, p->group);
	l->streams = p->streams;
	l->app.parker = p->parker;
	l->app.handoff = p->handoff;
	return p->point != NULL ? handed_loop(l) : serve_loop(l);
}

/* Takes the next entry of the pool and starts its thread, counted as waiting in accept
 * from now on so that the requests accepted meanwhile do not start more. The thread
 * opens its own context, so the request that started it does not wait for that. */
static void grow(struct pool *p)
{
	pthread_mutex_lock(&p->lock);
	if (p->stopping || p->used >= p->max || p->idle > 0) {
		pthread_mutex_unlock(&p->lock);
		return;
	}
	struct loop *l = &p->loops[p->used];
	l->pool = p;
	p->idle++;
	if (pthread_create(&l->thread, NULL, grown_loop, l) != 0) {
		p->idle--;
		th_log(TH_LOG_WARN, "request thread %d could not start; serving with %d", p->used,
		       p->used);
		p->max = p->used;
	} else {
		l->started = 1;
		p->used++;
	}
	pthread_mutex_unlock(&p->lock);
}

/* The process settings a worker runs with, before it serves anything. */
static void tune_process(void)
{
#ifdef __GLIBC__
	/* A request allocates and frees a few hundred KiB; glibc's default trim returned it
	 * to the kernel after every request and took it back on the next (brk, six system
	 * calls a SendMessage). A worker keeps its heap instead. */
	mallopt(M_TRIM_THRESHOLD, 32 * 1024 * 1024);
	mallopt(M_TOP_PAD, 4 * 1024 * 1024);
#endif
	/* A client or model program that went away is a write error, never a signal that
	 * ends the process and every request its threads serve. */
	signal(SIGPIPE, SIG_IGN);
}

/* STREAM-6: open streams are followed by this worker's stream thread, not by the
 * request loop. Without the thread each stream keeps this loop until it ends. Returns
 * the stream thread (freed by th_streams_stop), or NULL when it could not start. */
static struct th_streams *start_streams(struct loop *first)
{
	struct th_streams *streams = NULL;
	struct th_error e;
	th_error_clear(&e);
	if (th_streams_start(first->app.cfg, &streams, &e) == TH_OK)
		first->app.parker = th_streams_parker(streams);
	else
		th_log(TH_LOG_WARN,
		       "no stream thread (%s); each open stream holds this worker until "
		       "it ends",
		       e.msg);
	first->streams = streams;
	return streams;
}

/* decision-023: the threads' write transactions commit together on one writer. It is
 * opened now, while this thread is the only user of its store, even if no other request
 * thread is ever started (decision-045). Returns the writer (freed by
 * th_store_group_close), or NULL with *nthreads set to 1 when there is none. On a
 * database server (PostgreSQL) there is none by design: each thread writes on its own
 * connection, side by side with the others under per-task locks (decision-059), and
 * NULL comes back with *nthreads unchanged. */
static struct th_store_group *open_group(struct loop *first, int *nthreads)
{
	struct th_store_group *group = NULL;
	if (*nthreads <= 1)
		return NULL;
	struct th_store_opts o;
	struct th_error e;
	th_worker_store_opts(first->app.cfg, 1, &o);
	if (th_store_writes_side_by_side(&o))
		return NULL;
	th_error_clear(&e);
	if (th_store_group_open(&o, &group, &e) != TH_OK) {
		th_log(TH_LOG_WARN, "no group writer (%s); serving one request at a time", e.msg);
		*nthreads = 1;
		return NULL;
	}
	th_store_join(first->app.store, group);
	return group;
}

/* HOST-2 (decision-084): the threads that serve the other workers' writes once this
 * process is its database's writer. They share the request threads' write group, so
 * that every process's writes commit together, and start as the request threads do,
 * one at a time as the waiting one takes a request. Static: they serve until the process
 * ends, as the request threads do. */
static struct pool writers;

static int start_writers(void *arg, struct th_handoff_point *point)
{
	struct pool *requests = arg;
	struct loop *loops = calloc((size_t)requests->max, sizeof *loops);
	if (loops == NULL)
		return -1;
	writers = (struct pool){
	    .point = point,
	    .loops = loops,
	    .max = requests->max,
	    .group = requests->group,
	    .streams = requests->streams,
	    .parker = requests->parker,
	};
	if (pthread_mutex_init(&writers.lock, NULL) != 0) {
		free(loops);
		return -1;
	}
	grow(&writers);
	if (writers.used == 0) {
		pthread_mutex_destroy(&writers.lock);
		free(loops);
		return -1;
	}
	return 0;
}

/* The hand-over point of a SQLite database, when write_handoff_ms allows one; this process
 * claims the writer's part at once if no other has it. The point is kept until exit: the
 * writer's threads and the claim last as long as the process. */
static void open_handoff(struct loop *first, struct pool *requests)
{
	struct th_store_opts o;
	th_worker_store_opts(first->app.cfg, 1, &o);
	if (first->app.cfg->write_handoff_ms <= 0 || th_store_writes_side_by_side(&o))
		return;
	/* One request thread (worker_threads = 1): no write group to commit handed writes
	 * together, so this process hands its writes over but never takes the writer's part. */
	struct th_handoff_point *point =
	    th_handoff_point_open(o.path, requests->group != NULL ? start_writers : NULL, requests);
	if (point == NULL)
		return;
	requests->handoff = th_handoff_point_hook(point);
	first->app.handoff = requests->handoff;
	(void)th_handoff_point_claim(point);
}

int th_worker_serve_fcgi(void)
{
	tune_process();
	if (FCGX_Init() != 0) {
		th_log(TH_LOG_ERROR, "FCGX_Init failed");
		return 1;
	}
	struct loop first = {0};
	if (open_app(&first.app, 0) != 0)
		return 1;
	warn_if_unwritable(&first.app);
	int nthreads = first.app.cfg->worker_threads;
	struct loop *loops = calloc((size_t)nthreads, sizeof *loops);
	if (loops == NULL) {
		th_log(TH_LOG_WARN, "out of memory: serving one request at a time");
		nthreads = 1;
		loops = &first;
	} else {
		loops[0] = first;
	}
	struct th_streams *streams = start_streams(&loops[0]);
	struct th_store_group *group = open_group(&loops[0], &nthreads);
	/* Static: when this function returns while other threads still serve (below), they
	 * keep using it until the process exits. One worker per process. */
	static struct pool pool;
	pool = (struct pool){
	    .loops = loops,
	    .max = nthreads,
	    .used = 1,
	    .idle = 1, /* this thread, about to accept */
	    .group = group,
	    .streams = streams,
	    .parker = loops[0].app.parker,
	};
	int pooled = nthreads > 1 && pthread_mutex_init(&pool.lock, NULL) == 0;
	if (pooled)
		loops[0].pool = &pool;
	open_handoff(&loops[0], &pool);
	struct loop *recoverer = streams != NULL ? start_recoverer(group, streams) : NULL;
	/* Thread 0 is this one. When its loop ends the process is stopping: the other
	 * threads, blocked in accept or finishing a request, end with it. */
	(void)serve_loop(&loops[0]);
	int others = 0;
	if (pooled) {
		pthread_mutex_lock(&pool.lock);
		pool.stopping = 1;
		for (int i = 1; i < pool.used; i++)
			others += loops[i].started;
		pthread_mutex_unlock(&pool.lock);
	}
	if (others > 0) {
		/* The pool, the contexts, the streams and the group stay allocated until
		 * exit: another thread may still be inside a request, or a recovered turn,
		 * that uses them. */
		return 0;
	}
	/* With no other request thread the recovery thread is the last user of the streams
	 * and the group: it ends its turn, if any, and is joined before they are freed. */
	if (recoverer != NULL) {
		th_streams_halt(streams);
		pthread_join(recoverer->thread, NULL);
		th_app_close(&recoverer->app);
		free(recoverer);
	}
	loops[0].app.parker = NULL;
	th_streams_stop(streams);
	th_app_close(&loops[0].app);
	th_store_group_close(group);
	if (pooled)
		pthread_mutex_destroy(&pool.lock);
	if (loops != &first)
		free(loops);
	return 0;
}
