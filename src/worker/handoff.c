/* SPDX-License-Identifier: Apache-2.0 */
/* handoff.c — the writer's election and the hand-over of one request to it (HOST-2,
 * decisions 084 and 093; handoff.h says why). A request goes whole, in one datagram to
 * the writer's socket: a frame (struct frame) with the request's parameters and body,
 * and the web server's connection itself (SCM_RIGHTS), on which the writer answers as
 * this worker would have. This worker then forgets the request: it waits for nothing,
 * and relays nothing. A datagram arrives whole or not at all, and sending one takes one
 * system call where a connection of its own took five (decision-093). */
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
/* The largest frame (head, parameters, body) that goes as one datagram; a larger request
 * is served where it arrived. Below the kernel's default send buffer (net.core.wmem_default,
 * 208 KiB), which bounds one datagram; a SendMessage is far smaller unless it carries
 * files inline. */
#define FRAME_MAX (128 * 1024)

/* What precedes a request's parameters ("NAME=value" strings, each ending in NUL) and
 * its body in the datagram. Both ends are one program on one machine. */
struct frame {
	uint32_t magic; /* FRAME_MAGIC */
	uint32_t request_id;
	uint32_t params_len;
	uint32_t body_len;
};
#define FRAME_MAGIC 0x32484854u /* "THH2" */

/* A receive buffer of the writer's, kept for the next take (one per thread taking at
 * once). */
struct rx {
	struct rx *next;
	char data[FRAME_MAX];
};

struct th_handoff_point {
	pthread_mutex_t lock;
	char lock_path[4096];
	struct sockaddr_un addr; /* the writer's socket: <db>-handoff.sock */
	int lock_fd;      /* the claim, held until the process ends or stops writing; -1: none */
	int listen_fd;    /* the writer's datagram socket, bound; -1: not the writer */
	int send_fd;      /* this worker's socket for handing over, unbound; closed by
	                     th_handoff_point_free */
	uid_t uid;        /* this process's user: the only sender the writer takes from */
	int writer;       /* guarded by lock (set once, never cleared) */
	int in_hand;      /* requests taken and not done (th_handoff_take, th_handoff_done);
	                     guarded by lock */
	struct rx *spare; /* receive buffers not in use; guarded by lock; freed by
	                     th_handoff_point_free */
	int64_t quiet_until_ms; /* guarded by lock */
	th_handoff_on_claim on_claim;
	void *arg;
	struct th_handoff hook;
};

static int forward(void *impl, struct th_http_io *io, const char *body, size_t len);

struct th_handoff_point *th_handoff_point_open(const char *db_path, th_handoff_on_claim on_claim,
                                               void *arg)
{
	struct th_handoff_point *p = calloc(1, sizeof *p);
	if (p == NULL)
		return NULL;
	int a = snprintf(p->lock_path, sizeof p->lock_path, "%s-handoff.lock", db_path);
	p->addr.sun_family = AF_UNIX;
	int b = snprintf(p->addr.sun_path, sizeof p->addr.sun_path, "%s-handoff.sock", db_path);
	if (a < 0 || (size_t)a >= sizeof p->lock_path || b < 0 ||
	    (size_t)b >= sizeof p->addr.sun_path) {
		th_log(TH_LOG_INFO,
		       "no write hand-over between worker processes: '%s-handoff.sock' is "
		       "longer than a Unix socket's path (%zu bytes); each process writes itself",
		       db_path, sizeof p->addr.sun_path - 1);
		free(p);
		return NULL;
	}
	p->send_fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (p->send_fd < 0 || pthread_mutex_init(&p->lock, NULL) != 0) {
		if (p->send_fd >= 0)
			close(p->send_fd);
		free(p);
		return NULL;
	}
	p->lock_fd = -1;
	p->listen_fd = -1;
	p->uid = getuid();
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
	close(p->send_fd);
	while (p->spare != NULL) {
		struct rx *next = p->spare->next;
		free(p->spare);
		p->spare = next;
	}
	free(p); /* lock_fd and listen_fd stay open: the claim lasts as long as the process */
}

struct th_handoff *th_handoff_point_hook(struct th_handoff_point *p)
{
	return p != NULL ? &p->hook : NULL;
}

/* The writer's socket, bound, its file 0600: only this user's workers may send to it, and
 * every datagram carries its sender's credentials (SO_PASSCRED, set before the name
 * exists), which th_handoff_take checks as well; -1 (logged) when it cannot be made. */
static int listen_at(const struct sockaddr_un *sa)
{
	const char *path = sa->sun_path;
	int on = 1;
	int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_PASSCRED, &on, sizeof on) != 0)
		goto fail;
	/* A socket file left by a writer that ended: only the lock's holder gets here. */
	if (unlink(path) != 0 && errno != ENOENT)
		goto fail;
	if (bind(fd, (const struct sockaddr *)sa, sizeof *sa) != 0 || chmod(path, 0600) != 0)
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
	unlink(p->addr.sun_path);
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
		p->listen_fd = listen_at(&p->addr);
		if (p->listen_fd >= 0 && p->on_claim(p->arg, p) == 0) {
			p->lock_fd = fd;
			p->writer = 1;
			pthread_mutex_unlock(&p->lock);
			th_log(TH_LOG_INFO, "this worker writes for the others on %s",
			       p->addr.sun_path);
			if (watch_term(p) != 0)
				th_log(TH_LOG_WARN,
				       "a SIGTERM will end this writer without serving "
				       "what other workers handed over first");
			return 1;
		}
		if (p->listen_fd >= 0)
			close(p->listen_fd);
		p->listen_fd = -1;
		unlink(p->addr.sun_path);
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

/* hand_over's send(): 0 once the frame and conn are queued on the writer's socket; -1
 * when they are not (nothing of the request went: a datagram is queued whole or not at
 * all). The writer's queue full, a frame over FRAME_MAX: this worker serves it. No
 * writer there: this worker becomes it, or serves requests itself for a while. */
static int send_frame(void *arg, const struct th_http_conn *conn)
{
	struct handing *h = arg;
	struct th_handoff_point *p = h->p;
	if (h->len > FRAME_MAX)
		return -1;
	/* The head and the parameters in one buffer; the body goes from where it is. */
	struct th_buf b;
	th_buf_init(&b);
	struct frame f = {.magic = FRAME_MAGIC,
	                  .request_id = (uint32_t)conn->request_id,
	                  .body_len = (uint32_t)h->len};
	th_buf_append(&b, (const char *)&f, sizeof f);
	char *const *env = h->io->params(h->io->impl);
	for (; env != NULL && *env != NULL && b.len <= FRAME_MAX; env++)
		th_buf_append(&b, *env, strlen(*env) + 1);
	if (b.oom || b.len + h->len > FRAME_MAX) {
		th_buf_free(&b);
		return -1;
	}
	f.params_len = (uint32_t)(b.len - sizeof f);
	memcpy(b.data, &f, sizeof f);
	struct iovec iov[2] = {{.iov_base = b.data, .iov_len = b.len},
	                       {.iov_base = (void *)(uintptr_t)h->body, .iov_len = h->len}};
	/* sendmsg only reads from iov_base, which struct iovec does not say. */
	union fd_ctl ctl;
	memset(&ctl, 0, sizeof ctl);
	struct msghdr m = {.msg_name = &p->addr,
	                   .msg_namelen = sizeof p->addr,
	                   .msg_iov = iov,
	                   .msg_iovlen = 2,
	                   .msg_control = ctl.buf,
	                   .msg_controllen = sizeof ctl.buf};
	struct cmsghdr *c = CMSG_FIRSTHDR(&m);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &conn->fd, sizeof(int));
	ssize_t k;
	while ((k = sendmsg(p->send_fd, &m, MSG_DONTWAIT | MSG_NOSIGNAL)) < 0 && errno == EINTR)
		;
	int why = errno;
	th_buf_free(&b);
	if (k >= 0)
		return 0; /* a datagram goes whole */
	if ((why == ENOENT || why == ECONNREFUSED) && !th_handoff_point_claim(p))
		quiet(p, RETRY_MS);
	return -1;
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

/* A receive buffer from p's spares, or a new one; NULL when out of memory. */
static struct rx *rx_get(struct th_handoff_point *p)
{
	pthread_mutex_lock(&p->lock);
	struct rx *r = p->spare;
	if (r != NULL)
		p->spare = r->next;
	pthread_mutex_unlock(&p->lock);
	return r != NULL ? r : malloc(sizeof *r);
}

static void rx_put(struct th_handoff_point *p, struct rx *r)
{
	pthread_mutex_lock(&p->lock);
	r->next = p->spare;
	p->spare = r;
	pthread_mutex_unlock(&p->lock);
}

/* Room for what a frame's datagram brings besides its bytes: one descriptor and its
 * sender's credentials, and a second descriptor to notice (and close) one too many. */
union rx_ctl {
	char buf[CMSG_SPACE(2 * sizeof(int)) + CMSG_SPACE(sizeof(struct ucred))];
	struct cmsghdr align;
};

/* The descriptors and credentials m brought: *fd the one connection (-1: none; any
 * other is closed), 1 when the sender is uid. */
static int read_ctl(struct msghdr *m, uid_t uid, int *fd)
{
	int ours = 0;
	for (struct cmsghdr *c = CMSG_FIRSTHDR(m); c != NULL; c = CMSG_NXTHDR(m, c)) {
		if (c->cmsg_level != SOL_SOCKET)
			continue;
		if (c->cmsg_type == SCM_RIGHTS) {
			size_t n = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
			for (size_t i = 0; i < n; i++) {
				int got;
				memcpy(&got, CMSG_DATA(c) + i * sizeof(int), sizeof got);
				if (*fd >= 0)
					close(got); /* one connection per frame */
				else
					*fd = got;
			}
		} else if (c->cmsg_type == SCM_CREDENTIALS &&
		           c->cmsg_len == CMSG_LEN(sizeof(struct ucred))) {
			struct ucred who;
			memcpy(&who, CMSG_DATA(c), sizeof who);
			/* The kernel fills in the sender's real user (a sender may only claim
			 * ids it has); both ends are this program under one web server. */
			ours = who.uid == uid;
		}
	}
	return ours;
}

/* Checks the frame of n bytes in data and copies it into h; 0, or -1 when it is not
 * well formed or its body is over max_body. */
static int open_frame(const char *data, size_t n, size_t max_body, struct th_http_handed *h)
{
	struct frame f;
	if (n < sizeof f)
		return -1;
	memcpy(&f, data, sizeof f);
	size_t len = n - sizeof f;
	if (f.magic != FRAME_MAGIC || f.body_len > max_body || f.params_len > len ||
	    (size_t)f.params_len + f.body_len != len)
		return -1;
	if ((h->data = malloc(len + 1)) == NULL)
		return -1;
	memcpy(h->data, data + sizeof f, len);
	if (index_params(h, f.params_len) != 0)
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
	struct rx *r = rx_get(p);
	if (r == NULL) {
		usleep(10 * 1000); /* out of memory: the datagram waits in the queue */
		return -1;
	}
	struct iovec iov = {.iov_base = r->data, .iov_len = sizeof r->data};
	union rx_ctl ctl;
	struct msghdr m = {.msg_iov = &iov,
	                   .msg_iovlen = 1,
	                   .msg_control = ctl.buf,
	                   .msg_controllen = sizeof ctl.buf};
	ssize_t k = recvmsg(p->listen_fd, &m, MSG_CMSG_CLOEXEC);
	if (k < 0) {
		int why = errno;
		rx_put(p, r);
		return why == EBADF || why == EINVAL || why == ENOTSOCK ? -2 : -1;
	}
	pthread_mutex_lock(&p->lock);
	p->in_hand++;
	pthread_mutex_unlock(&p->lock);
	int rc = -1;
	if (read_ctl(&m, p->uid, &h->conn.fd) && h->conn.fd >= 0 &&
	    !(m.msg_flags & (MSG_TRUNC | MSG_CTRUNC)))
		rc = open_frame(r->data, (size_t)k, max_body, h);
	rx_put(p, r);
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
