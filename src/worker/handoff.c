/* SPDX-License-Identifier: Apache-2.0 */
/* handoff.c — the writer's election and the hand-over of one request to it (HOST-2,
 * decision-084; handoff.h says why). A request goes whole, in one message on a
 * connection of its own to the writer's socket: a frame (struct frame) with the
 * request's parameters and body, and the web server's connection itself (SCM_RIGHTS),
 * on which the writer answers as this worker would have. This worker then forgets the
 * request: it waits for nothing, and relays nothing. */
#include "worker/handoff.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "http/http.h"
#include "util/buf.h"
#include "util/ids.h"
#include "util/log.h"

/* After no writer could be reached or claimed (it is starting, or ending), requests are
 * served where they arrive for this long before the next attempt. */
#define RETRY_MS 100
/* Connections the writer's socket queues beyond those its threads took: more are refused
 * at once, and the request is served where it arrived. So a writer that is stopped, or
 * whose threads are all in slow turns, holds at most this many other requests. */
#define BACKLOG 8
/* The most parameter text a frame carries (the web server's own header limits are far
 * below it). */
#define PARAMS_MAX (1024 * 1024)

/* What precedes a request's parameters ("NAME=value" strings, each ending in NUL) and
 * its body on the connection. Both ends are one program on one machine. */
struct frame {
	uint32_t magic; /* FRAME_MAGIC */
	uint32_t request_id;
	uint32_t params_len;
	uint32_t body_len;
};
#define FRAME_MAGIC 0x31484854u /* "THH1" */

struct th_handoff_point {
	pthread_mutex_t lock;
	char lock_path[4096];
	char sock_path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	int lock_fd;   /* the claim, held until the process ends or stops writing; -1: none */
	int listen_fd; /* the writer's socket; -1: not the writer */
	int writer;    /* guarded by lock (set once, never cleared) */
	int in_hand;   /* requests taken and not done (th_handoff_take, th_handoff_done);
	                  guarded by lock */
	int wait_ms;   /* the longest a request's frame may take to send */
	int64_t quiet_until_ms; /* guarded by lock */
	th_handoff_on_claim on_claim;
	void *arg;
	struct th_handoff hook;
};

static int forward(void *impl, struct th_http_io *io, const char *body, size_t len);

struct th_handoff_point *th_handoff_point_open(const char *db_path, int wait_ms,
                                               th_handoff_on_claim on_claim, void *arg)
{
	struct th_handoff_point *p = calloc(1, sizeof *p);
	if (p == NULL)
		return NULL;
	int a = snprintf(p->lock_path, sizeof p->lock_path, "%s-handoff.lock", db_path);
	int b = snprintf(p->sock_path, sizeof p->sock_path, "%s-handoff.sock", db_path);
	if (a < 0 || (size_t)a >= sizeof p->lock_path || b < 0 ||
	    (size_t)b >= sizeof p->sock_path) {
		th_log(TH_LOG_INFO,
		       "no write hand-over between worker processes: '%s-handoff.sock' is "
		       "longer than a Unix socket's path (%zu bytes); each process writes itself",
		       db_path, sizeof p->sock_path - 1);
		free(p);
		return NULL;
	}
	if (pthread_mutex_init(&p->lock, NULL) != 0) {
		free(p);
		return NULL;
	}
	p->lock_fd = -1;
	p->listen_fd = -1;
	p->wait_ms = wait_ms;
	p->on_claim = on_claim;
	p->arg = arg;
	p->hook.impl = p;
	p->hook.forward = forward;
	return p;
}

void th_handoff_point_free(struct th_handoff_point *p)
{
	if (p == NULL)
		return;
	pthread_mutex_destroy(&p->lock);
	free(p); /* lock_fd and listen_fd stay open: the claim lasts as long as the process */
}

struct th_handoff *th_handoff_point_hook(struct th_handoff_point *p)
{
	return p != NULL ? &p->hook : NULL;
}

/* The writer's socket, listening, only this user may connect (0600 before listen(), so no
 * connection is ever accepted under other modes); -1 (logged) when it cannot be made. */
static int listen_at(const char *path)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	memcpy(sa.sun_path, path, strlen(path) + 1);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		goto fail;
	/* A socket file left by a writer that ended: only the lock's holder gets here. */
	if (unlink(path) != 0 && errno != ENOENT)
		goto fail;
	if (bind(fd, (struct sockaddr *)&sa, sizeof sa) != 0 || chmod(path, 0600) != 0 ||
	    listen(fd, BACKLOG) != 0)
		goto fail;
	return fd;
fail:
	th_log(TH_LOG_WARN,
	       "cannot listen on %s for other workers' writes (%s); each writes itself", path,
	       strerror(errno));
	if (fd >= 0)
		close(fd);
	return -1;
}

/* ---- the writer's end (SIGTERM) ---------------------------------------------------- */

/* A web server ends a worker with SIGTERM (mod_fcgid ends one it thinks idle, which the
 * writer may seem to be while it serves other workers' writes). Ending at once, as the
 * signal's default does, would drop the requests handed over and not answered yet. So
 * the writer stops being one instead: its socket's name goes (the others serve their
 * requests themselves until one of them claims), the claim is released, what was handed
 * over is served for up to DRAIN_MS, and then the signal does what it always did. */
#define DRAIN_MS 5000

static int term_pipe[2] = {-1, -1};

static void on_term(int sig)
{
	(void)sig;
	int e = errno;
	ssize_t k = write(term_pipe[1], "", 1);
	(void)k;
	errno = e;
}

/* 1 while a request handed over waits in the socket's queue or is being served. */
static int handing_in_progress(struct th_handoff_point *p)
{
	struct pollfd pfd = {.fd = p->listen_fd, .events = POLLIN};
	int queued = poll(&pfd, 1, 0) > 0;
	pthread_mutex_lock(&p->lock);
	int busy = p->in_hand > 0;
	pthread_mutex_unlock(&p->lock);
	return queued || busy;
}

static void *term_watch(void *arg)
{
	struct th_handoff_point *p = arg;
	char c;
	ssize_t k;
	while ((k = read(term_pipe[0], &c, 1)) < 0 && errno == EINTR)
		;
	if (k != 1)
		return NULL; /* the pipe closed: SIGTERM was not taken over */
	unlink(p->sock_path);
	pthread_mutex_lock(&p->lock);
	close(p->lock_fd);
	p->lock_fd = -1;
	pthread_mutex_unlock(&p->lock);
	th_log(TH_LOG_INFO, "ending: the requests other workers handed over are served first");
	/* Twice idle in a row: a thread that has just accepted is counted by then. */
	int64_t end = th_mono_ms() + DRAIN_MS;
	for (int idle = 0; idle < 2 && th_mono_ms() < end;) {
		idle = handing_in_progress(p) ? 0 : idle + 1;
		usleep(20 * 1000);
	}
	signal(SIGTERM, SIG_DFL);
	raise(SIGTERM);
	return NULL;
}

/* Takes SIGTERM over for the writer (a thread waits for it); 0, or -1 when it cannot. */
static int watch_term(struct th_handoff_point *p)
{
	if (pipe2(term_pipe, O_CLOEXEC) != 0)
		return -1;
	pthread_t t;
	pthread_attr_t a;
	int rc = pthread_attr_init(&a);
	if (rc == 0) {
		pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
		rc = pthread_create(&t, &a, term_watch, p);
		pthread_attr_destroy(&a);
	}
	struct sigaction sa = {.sa_handler = on_term, .sa_flags = SA_RESTART};
	sigemptyset(&sa.sa_mask);
	if (rc == 0 && sigaction(SIGTERM, &sa, NULL) == 0)
		return 0;
	close(term_pipe[1]); /* the thread, if it started, ends */
	if (rc != 0)
		close(term_pipe[0]);
	return -1;
}

int th_handoff_point_claim(struct th_handoff_point *p)
{
	if (p->on_claim == NULL)
		return 0; /* this process never writes for the others */
	pthread_mutex_lock(&p->lock);
	if (p->writer) {
		pthread_mutex_unlock(&p->lock);
		return 1;
	}
	int fd = open(p->lock_path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (fd >= 0 && flock(fd, LOCK_EX | LOCK_NB) == 0) {
		p->listen_fd = listen_at(p->sock_path);
		if (p->listen_fd >= 0 && p->on_claim(p->arg, p) == 0) {
			p->lock_fd = fd;
			p->writer = 1;
			pthread_mutex_unlock(&p->lock);
			th_log(TH_LOG_INFO, "this worker writes for the others on %s",
			       p->sock_path);
			if (watch_term(p) != 0)
				th_log(TH_LOG_WARN,
				       "a SIGTERM will end this writer without serving "
				       "what other workers handed over first");
			return 1;
		}
		if (p->listen_fd >= 0)
			close(p->listen_fd);
		p->listen_fd = -1;
		unlink(p->sock_path);
	}
	if (fd >= 0)
		close(fd); /* drops the lock, if taken */
	pthread_mutex_unlock(&p->lock);
	return 0;
}

/* ---- this worker's side: handing a request over ------------------------------------ */

/* Serve requests here until now + ms. */
static void quiet(struct th_handoff_point *p, int64_t ms)
{
	pthread_mutex_lock(&p->lock);
	p->quiet_until_ms = th_mono_ms() + ms;
	pthread_mutex_unlock(&p->lock);
}

/* 1 when this worker serves its writes itself for now: it is the writer, or it found no
 * writer a moment ago. */
static int writes_here(struct th_handoff_point *p)
{
	pthread_mutex_lock(&p->lock);
	int here = p->writer || p->quiet_until_ms > th_mono_ms();
	pthread_mutex_unlock(&p->lock);
	return here;
}

/* One request's frame and where it goes. */
struct handing {
	struct th_handoff_point *p;
	struct th_http_io *io;
	const char *body;
	size_t len;
};

/* Room for the control message that carries one descriptor (SCM_RIGHTS), aligned as
 * its header. */
union fd_ctl {
	char buf[CMSG_SPACE(sizeof(int))];
	struct cmsghdr align;
};

/* Waits until sock is ready for events or the deadline (monotonic ms) comes; 0 to try
 * again, -1 when the deadline has passed. */
static int await(int sock, short events, int64_t deadline)
{
	int64_t left = deadline - th_mono_ms();
	if (left <= 0)
		return -1;
	struct pollfd pfd = {.fd = sock, .events = events};
	(void)poll(&pfd, 1, (int)left);
	return 0;
}

/* Sends n bytes on the writer's connection (non-blocking) within the deadline; the first
 * send carries fd. 0, or -1 when not all of it went. */
static int send_bytes(int sock, char *data, size_t n, int *fd, int64_t deadline)
{
	while (n > 0) {
		struct iovec iov = {.iov_base = data, .iov_len = n};
		union fd_ctl ctl;
		struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1};
		if (*fd >= 0) {
			memset(&ctl, 0, sizeof ctl);
			m.msg_control = ctl.buf;
			m.msg_controllen = sizeof ctl.buf;
			struct cmsghdr *c = CMSG_FIRSTHDR(&m);
			c->cmsg_level = SOL_SOCKET;
			c->cmsg_type = SCM_RIGHTS;
			c->cmsg_len = CMSG_LEN(sizeof(int));
			memcpy(CMSG_DATA(c), fd, sizeof(int));
		}
		ssize_t k = sendmsg(sock, &m, MSG_NOSIGNAL);
		if (k > 0) {
			*fd = -1; /* it went with the first byte */
			data += k;
			n -= (size_t)k;
			continue;
		}
		if (k < 0 && errno == EINTR)
			continue;
		if (k == 0 || errno != EAGAIN || await(sock, POLLOUT, deadline) != 0)
			return -1;
	}
	return 0;
}

/* hand_over's send(): 0 once the writer's connection has the whole frame and conn;
 * -1 when it does not (nothing of the request can be applied there: the writer reads a
 * frame whole or drops it). */
static int send_frame(void *arg, const struct th_http_conn *conn)
{
	struct handing *h = arg;
	struct th_handoff_point *p = h->p;
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	memcpy(sa.sun_path, p->sock_path, strlen(p->sock_path) + 1);
	int sock = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (sock < 0)
		return -1;
	if (connect(sock, (struct sockaddr *)&sa, sizeof sa) != 0) {
		int why = errno;
		close(sock);
		/* EAGAIN: the writer's queue is full; serve this one here. Otherwise no
		 * writer listens: this worker becomes it, or serves requests itself for a
		 * while. */
		if (why != EAGAIN && !th_handoff_point_claim(p))
			quiet(p, RETRY_MS);
		return -1;
	}
	struct th_buf b;
	th_buf_init(&b);
	struct frame f = {.magic = FRAME_MAGIC, .request_id = (uint32_t)conn->request_id};
	th_buf_append(&b, (const char *)&f, sizeof f);
	char *const *env = h->io->params(h->io->impl);
	for (; env != NULL && *env != NULL; env++)
		th_buf_append(&b, *env, strlen(*env) + 1);
	size_t params_len = b.len - sizeof f;
	th_buf_append(&b, h->body, h->len);
	int rc = -1;
	if (!b.oom && params_len <= PARAMS_MAX && h->len <= UINT32_MAX) {
		f.params_len = (uint32_t)params_len;
		f.body_len = (uint32_t)h->len;
		memcpy(b.data, &f, sizeof f);
		int fd = conn->fd;
		rc = send_bytes(sock, b.data, b.len, &fd, th_mono_ms() + p->wait_ms);
	}
	th_buf_free(&b);
	close(sock);
	return rc;
}

static int forward(void *impl, struct th_http_io *io, const char *body, size_t len)
{
	struct th_handoff_point *p = impl;
	if (io->hand_over == NULL || writes_here(p))
		return 0;
	struct handing h = {.p = p, .io = io, .body = body, .len = len};
	return io->hand_over(io->impl, send_frame, &h) == 0;
}

/* ---- the writer's side: taking one ------------------------------------------------- */

/* Splits the parameters' text into h->params; -1 when it is not NUL-terminated strings. */
static int index_params(struct th_http_handed *h, size_t len)
{
	size_t n = 0;
	for (size_t i = 0; i < len; i++)
		n += h->data[i] == '\0';
	if (len > 0 && h->data[len - 1] != '\0')
		return -1;
	h->params = calloc(n + 1, sizeof *h->params);
	if (h->params == NULL)
		return -1;
	size_t k = 0;
	for (size_t i = 0; i < len; i += strlen(h->data + i) + 1)
		h->params[k++] = h->data + i;
	return 0;
}

/* Reads n bytes by the deadline (the socket is non-blocking); the read that brings the
 * connection sent with the frame sets *fd. 0, or -1 (an end, an error, the deadline). */
static int recv_bytes(int sock, char *data, size_t n, int *fd, int64_t deadline)
{
	while (n > 0) {
		struct iovec iov = {.iov_base = data, .iov_len = n};
		union fd_ctl ctl;
		struct msghdr m = {.msg_iov = &iov,
		                   .msg_iovlen = 1,
		                   .msg_control = ctl.buf,
		                   .msg_controllen = sizeof ctl.buf};
		ssize_t k = recvmsg(sock, &m, MSG_CMSG_CLOEXEC);
		if (k > 0) {
			for (struct cmsghdr *c = CMSG_FIRSTHDR(&m); c != NULL;
			     c = CMSG_NXTHDR(&m, c))
				if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS &&
				    c->cmsg_len == CMSG_LEN(sizeof(int))) {
					int got;
					memcpy(&got, CMSG_DATA(c), sizeof got);
					if (*fd >= 0)
						close(got); /* one connection per frame */
					else
						*fd = got;
				}
			data += k;
			n -= (size_t)k;
			continue;
		}
		if (k == 0 || (errno != EINTR && errno != EAGAIN) ||
		    await(sock, POLLIN, deadline) != 0)
			return -1;
	}
	return 0;
}

/* Reads one frame (and the connection that comes with it) into h: its head, then its
 * parameters and body. 0, or -1 when it is not whole by the deadline or not well formed. */
static int recv_frame(int sock, size_t max_body, int64_t deadline, struct th_http_handed *h)
{
	struct frame f;
	if (recv_bytes(sock, (char *)&f, sizeof f, &h->conn.fd, deadline) != 0 ||
	    f.magic != FRAME_MAGIC || f.params_len > PARAMS_MAX || f.body_len > max_body)
		return -1;
	size_t len = (size_t)f.params_len + f.body_len;
	if ((h->data = malloc(len + 1)) == NULL ||
	    recv_bytes(sock, h->data, len, &h->conn.fd, deadline) != 0 || h->conn.fd < 0 ||
	    index_params(h, f.params_len) != 0)
		return -1;
	h->conn.request_id = (int)f.request_id;
	h->body = h->data + f.params_len;
	h->body_len = f.body_len;
	h->data[len] = '\0';
	return 0;
}

int th_handoff_take(struct th_handoff_point *p, size_t max_body, struct th_http_handed *h)
{
	memset(h, 0, sizeof *h);
	h->conn.fd = -1;
	th_buf_init(&h->out);
	int sock = accept4(p->listen_fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
	if (sock < 0)
		return errno == EBADF || errno == EINVAL || errno == ENOTSOCK ? -2 : -1;
	pthread_mutex_lock(&p->lock);
	p->in_hand++;
	pthread_mutex_unlock(&p->lock);
	/* Far longer than the sender's own limit, so that a sender gives up on a frame before
	 * the writer does: a frame the sender counts as sent is in the socket by then, and
	 * the writer still reads it. */
	int64_t deadline = th_mono_ms() + 4 * (int64_t)p->wait_ms + 1000;
	struct ucred peer;
	socklen_t plen = sizeof peer;
	int rc = -1;
	if (getsockopt(sock, SOL_SOCKET, SO_PEERCRED, &peer, &plen) == 0 && peer.uid == geteuid() &&
	    recv_frame(sock, max_body, deadline, h) == 0)
		rc = 0;
	close(sock);
	if (rc != 0) {
		th_http_handed_free(h); /* closes the web server's connection, if it came */
		th_handoff_done(p);
	}
	return rc;
}

void th_handoff_done(struct th_handoff_point *p)
{
	pthread_mutex_lock(&p->lock);
	p->in_hand--;
	pthread_mutex_unlock(&p->lock);
}
