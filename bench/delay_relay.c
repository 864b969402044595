/* SPDX-License-Identifier: Apache-2.0 */
/*
 * delay_relay.c — a TCP relay that holds every chunk it forwards for a fixed one-way delay,
 * for bench/pg_distance.sh (issue 29, SCALE-1): it puts PostgreSQL a simulated network
 * distance away on a kernel without netem.
 *
 *   delay_relay LISTEN_ADDR LISTEN_PORT TARGET_ADDR TARGET_PORT DELAY_US LIFETIME_S
 *
 * It accepts TCP connections on LISTEN_ADDR:LISTEN_PORT (IPv4), opens one connection to
 * TARGET_ADDR:TARGET_PORT for each, and copies bytes both ways. What it reads at time t
 * it writes at t + DELAY_US, in order, whatever else is waiting: a request and its answer
 * each wait once, so a round trip costs 2 × DELAY_US more than without the relay, and
 * many connections (or several messages on one) wait side by side, as on a real link;
 * no bandwidth limit is modelled. An end of stream (a FIN) is delayed like the data
 * before it. TCP_NODELAY is set on both sockets, so the relay adds no Nagle wait of its
 * own; the kernel still acknowledges at once on each side (the delay applies to data).
 *
 * One thread, epoll, and a timerfd armed at the earliest chunk that is due (absolute
 * CLOCK_MONOTONIC, timer slack 1 ns), so the delay is kept to tens of microseconds on an
 * idle machine. At most QUEUE_MAX bytes wait in each direction; past that it stops
 * reading from that side until the queue drains.
 *
 * It exits by itself after LIFETIME_S seconds (a benchmark that forgets it does not leave
 * it running), and on SIGTERM or SIGINT; either way it prints to stderr how many
 * connections and chunks it relayed and how late, beyond the delay, the chunks went out
 * (the timer's and the scheduler's error: on a busy machine this is what to look at).
 *
 * Build: cc -O2 -Wall -Wextra -o delay_relay delay_relay.c (Linux only).
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#define CHUNK_MAX (64 * 1024)
#define QUEUE_MAX (4 * 1024 * 1024)

/* One chunk read from one side, waiting to be written to the other. len 0 is an end of
 * stream: shutdown(SHUT_WR) of the other side when it is due. */
struct chunk {
	struct chunk *next;
	uint64_t due_ns;
	size_t len, off;
	char data[];
};

/* One direction of a pair: bytes read from fd `from` go to fd `to`. */
struct dir {
	int from, to;
	struct chunk *head, *tail; /* owned: chunks freed by dir_flush() once written, or by
	                            * pair_free() */
	size_t queued;             /* bytes in the queue */
	int read_eof;              /* `from` said end of stream (or failed) */
	int write_done;            /* the end of stream went out to `to` */
	int blocked;               /* `to` would block: wait for EPOLLOUT */
};

struct pair;
/* What an epoll event points at: the listener, the timer, or one socket of a pair. */
struct end {
	int kind; /* 0 listener, 1 timer, 2 socket of a pair */
	struct pair *pair;
	int side; /* 0 client, 1 target */
};

struct pair {
	struct pair *next, *prev;
	int fd[2];             /* [0] the client's connection, [1] ours to the target */
	struct dir d[2];       /* d[0]: client → target, d[1]: target → client */
	struct end end[2];     /* epoll data of fd[0] and fd[1] */
	uint32_t armed[2];     /* the events registered for fd[0] and fd[1] */
	int gone[2];           /* fd[side] hung up after its end of stream: out of the set */
	int dead;              /* closed; freed at the end of the loop iteration */
};

static struct pair *pairs;      /* owned: the live pairs, freed by pair_free() */
static struct pair *dead_pairs; /* owned: closed pairs, freed by pair_free() after the
                                 * events of this iteration were handled */
static int epfd = -1;
static uint64_t delay_ns;
static volatile sig_atomic_t stop_signal;

/* Figures printed at exit. */
static unsigned long long n_conns, n_chunks[2], n_bytes[2], n_refused;
static unsigned long long late_sum_ns, late_max_ns, late_count;

static void on_signal(int sig)
{
	stop_signal = sig;
}

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void die(const char *what)
{
	fprintf(stderr, "delay_relay: %s: %s\n", what, strerror(errno));
	exit(1);
}

static int set_nonblock(int fd)
{
	int fl = fcntl(fd, F_GETFL);
	return fl < 0 ? -1 : fcntl(fd, F_SETFL, fl | O_NONBLOCK);
}

static int parse_addr(const char *host, const char *port, struct sockaddr_in *sa)
{
	char *endp;
	long p = strtol(port, &endp, 10);
	memset(sa, 0, sizeof *sa);
	sa->sin_family = AF_INET;
	if (*port == '\0' || *endp != '\0' || p <= 0 || p > 65535)
		return -1;
	sa->sin_port = htons((uint16_t)p);
	return inet_pton(AF_INET, host, &sa->sin_addr) == 1 ? 0 : -1;
}

/* The events fd `side` of p needs: EPOLLIN while its outgoing direction reads (not at end
 * of stream, queue not full), EPOLLOUT while the direction writing to it is blocked. */
static void pair_arm(struct pair *p, int side)
{
	struct dir *out = &p->d[side];     /* reads from fd[side] */
	struct dir *in = &p->d[1 - side];  /* writes to fd[side] */
	uint32_t ev = 0;
	struct epoll_event e;
	if (p->gone[side])
		return;
	if (!out->read_eof && out->queued < QUEUE_MAX)
		ev |= EPOLLIN;
	if (in->blocked)
		ev |= EPOLLOUT;
	if (ev == p->armed[side])
		return;
	memset(&e, 0, sizeof e);
	e.events = ev;
	e.data.ptr = &p->end[side];
	/* Registered with no events rather than removed: EPOLLERR and EPOLLHUP still come. */
	if (epoll_ctl(epfd, EPOLL_CTL_MOD, p->fd[side], &e) < 0)
		die("epoll_ctl MOD");
	p->armed[side] = ev;
}

/* Close both sockets and move p to dead_pairs (freed later: events of this iteration may
 * still point at it). */
static void pair_close(struct pair *p)
{
	if (p->dead)
		return;
	p->dead = 1;
	close(p->fd[0]); /* closing removes them from the epoll set */
	close(p->fd[1]);
	if (p->prev)
		p->prev->next = p->next;
	else
		pairs = p->next;
	if (p->next)
		p->next->prev = p->prev;
	p->prev = NULL;
	p->next = dead_pairs;
	dead_pairs = p;
}

/* Frees p and its queued chunks. */
static void pair_free(struct pair *p)
{
	for (int i = 0; i < 2; i++) {
		struct chunk *c = p->d[i].head;
		while (c) {
			struct chunk *n = c->next;
			free(c);
			c = n;
		}
	}
	free(p);
}

/* Read what fd `from` of direction i has into a new chunk due at now + delay. */
static void dir_read(struct pair *p, int i)
{
	struct dir *d = &p->d[i];
	/* owned: appended to d's queue, freed by dir_flush() or pair_free() */
	struct chunk *c = malloc(sizeof *c + CHUNK_MAX);
	ssize_t n;
	if (!c)
		die("malloc");
	n = read(d->from, c->data, CHUNK_MAX);
	if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
		free(c);
		return;
	}
	if (n < 0) { /* reset: nothing more to deliver either way */
		free(c);
		pair_close(p);
		return;
	}
	if (n > 0) {
		/* owned: the shrunk chunk replaces c (realloc); same owner as above */
		struct chunk *s = realloc(c, sizeof *c + (size_t)n);
		if (s)
			c = s;
	}
	c->next = NULL;
	c->due_ns = now_ns() + delay_ns;
	c->len = (size_t)n;
	c->off = 0;
	if (n == 0)
		d->read_eof = 1;
	if (d->tail)
		d->tail->next = c;
	else
		d->head = c;
	d->tail = c;
	d->queued += (size_t)n;
	n_chunks[i]++;
	n_bytes[i] += (size_t)n;
}

/* Write every chunk of direction i that is due at `now`, in order, until one would block. */
static void dir_flush(struct pair *p, int i, uint64_t now)
{
	struct dir *d = &p->d[i];
	while (d->head && !d->blocked && d->head->due_ns <= now) {
		struct chunk *c = d->head;
		if (c->off == 0) {
			uint64_t late = now - c->due_ns;
			late_sum_ns += late;
			late_count++;
			if (late > late_max_ns)
				late_max_ns = late;
		}
		if (c->len == 0) {
			shutdown(d->to, SHUT_WR);
			d->write_done = 1;
		} else {
			ssize_t n = write(d->to, c->data + c->off, c->len - c->off);
			if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
				d->blocked = 1;
				return;
			}
			if (n < 0) {
				pair_close(p);
				return;
			}
			c->off += (size_t)n;
			d->queued -= (size_t)n;
			if (c->off < c->len) {
				d->blocked = 1;
				return;
			}
		}
		d->head = c->next;
		if (!d->head)
			d->tail = NULL;
		free(c);
	}
}

static void accept_all(int lfd, const struct sockaddr_in *target)
{
	for (;;) {
		int one = 1;
		int cfd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		int tfd;
		struct pair *p;
		if (cfd < 0) {
			if (errno != EAGAIN && errno != EINTR && errno != ECONNABORTED)
				fprintf(stderr, "delay_relay: accept: %s\n", strerror(errno));
			return;
		}
		/* The target is on this machine's (or namespace's) loopback: a blocking connect
		 * returns at once. */
		tfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (tfd < 0 || connect(tfd, (const struct sockaddr *)target, sizeof *target) < 0) {
			fprintf(stderr, "delay_relay: connect to the target: %s\n", strerror(errno));
			if (tfd >= 0)
				close(tfd);
			close(cfd);
			n_refused++;
			continue;
		}
		if (set_nonblock(tfd) < 0)
			die("fcntl");
		setsockopt(cfd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
		setsockopt(tfd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
		/* owned: on the list `pairs`, freed by pair_free() after pair_close() */
		p = calloc(1, sizeof *p);
		if (!p)
			die("calloc");
		p->fd[0] = cfd;
		p->fd[1] = tfd;
		p->d[0].from = cfd;
		p->d[0].to = tfd;
		p->d[1].from = tfd;
		p->d[1].to = cfd;
		for (int s = 0; s < 2; s++) {
			struct epoll_event e;
			p->end[s].kind = 2;
			p->end[s].pair = p;
			p->end[s].side = s;
			memset(&e, 0, sizeof e);
			e.events = EPOLLIN;
			e.data.ptr = &p->end[s];
			if (epoll_ctl(epfd, EPOLL_CTL_ADD, p->fd[s], &e) < 0)
				die("epoll_ctl ADD");
			p->armed[s] = EPOLLIN;
		}
		p->next = pairs;
		if (pairs)
			pairs->prev = p;
		pairs = p;
		n_conns++;
	}
}

int main(int argc, char **argv)
{
	struct sockaddr_in listen_sa, target_sa;
	struct end listener_end = {0, NULL, 0}, timer_end = {1, NULL, 0};
	struct epoll_event e, evs[64];
	struct sigaction sa;
	char *endp;
	long long delay_us, lifetime_s;
	uint64_t deadline;
	int lfd, tfd, one = 1;

	if (argc != 7) {
		fprintf(stderr, "usage: delay_relay LISTEN_ADDR LISTEN_PORT TARGET_ADDR TARGET_PORT "
		                "DELAY_US LIFETIME_S\n");
		return 2;
	}
	if (parse_addr(argv[1], argv[2], &listen_sa) < 0) {
		fprintf(stderr, "delay_relay: LISTEN_ADDR LISTEN_PORT: an IPv4 address and a port, not '%s' '%s'\n",
		        argv[1], argv[2]);
		return 2;
	}
	if (parse_addr(argv[3], argv[4], &target_sa) < 0) {
		fprintf(stderr, "delay_relay: TARGET_ADDR TARGET_PORT: an IPv4 address and a port, not '%s' '%s'\n",
		        argv[3], argv[4]);
		return 2;
	}
	delay_us = strtoll(argv[5], &endp, 10);
	if (*argv[5] == '\0' || *endp != '\0' || delay_us < 0 || delay_us > 10000000) {
		fprintf(stderr, "delay_relay: DELAY_US: 0 to 10000000 microseconds, not '%s'\n", argv[5]);
		return 2;
	}
	lifetime_s = strtoll(argv[6], &endp, 10);
	if (*argv[6] == '\0' || *endp != '\0' || lifetime_s < 1 || lifetime_s > 86400) {
		fprintf(stderr, "delay_relay: LIFETIME_S: 1 to 86400 seconds, not '%s'\n", argv[6]);
		return 2;
	}
	delay_ns = (uint64_t)delay_us * 1000u;

	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_signal; /* no SA_RESTART: epoll_wait returns EINTR */
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	/* Timers fire as close to the due time as the kernel can (default slack: 50 µs). */
	prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);

	lfd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (lfd < 0)
		die("socket");
	setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
	if (bind(lfd, (struct sockaddr *)&listen_sa, sizeof listen_sa) < 0)
		die("bind");
	if (listen(lfd, 256) < 0)
		die("listen");
	tfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	if (tfd < 0)
		die("timerfd_create");
	epfd = epoll_create1(EPOLL_CLOEXEC);
	if (epfd < 0)
		die("epoll_create1");
	memset(&e, 0, sizeof e);
	e.events = EPOLLIN;
	e.data.ptr = &listener_end;
	if (epoll_ctl(epfd, EPOLL_CTL_ADD, lfd, &e) < 0)
		die("epoll_ctl listener");
	e.data.ptr = &timer_end;
	if (epoll_ctl(epfd, EPOLL_CTL_ADD, tfd, &e) < 0)
		die("epoll_ctl timer");
	fprintf(stderr, "delay_relay: %s:%s -> %s:%s, one-way delay %lld us, for at most %lld s\n",
	        argv[1], argv[2], argv[3], argv[4], delay_us, lifetime_s);

	deadline = now_ns() + (uint64_t)lifetime_s * 1000000000ull;
	while (!stop_signal) {
		uint64_t now = now_ns(), next = UINT64_MAX;
		struct itimerspec its;
		int n, timeout_ms;
		struct pair *p, *pn;

		if (now >= deadline)
			break;
		/* Write what is due; find when the next chunk is. */
		for (p = pairs; p; p = pn) {
			pn = p->next;
			for (int i = 0; i < 2 && !p->dead; i++)
				dir_flush(p, i, now);
			if (p->dead)
				continue;
			/* Both ends of stream delivered, or one side gone with nothing left to
			 * send: the pair is finished. */
			if ((p->d[0].write_done && p->d[1].write_done) ||
			    (p->d[0].read_eof && p->d[1].read_eof && !p->d[0].head && !p->d[1].head)) {
				pair_close(p);
				continue;
			}
			for (int i = 0; i < 2; i++) {
				if (p->d[i].head && !p->d[i].blocked && p->d[i].head->due_ns < next)
					next = p->d[i].head->due_ns;
				pair_arm(p, i);
			}
		}
		memset(&its, 0, sizeof its);
		if (next != UINT64_MAX) {
			its.it_value.tv_sec = (time_t)(next / 1000000000ull);
			its.it_value.tv_nsec = (long)(next % 1000000000ull);
		}
		/* it_value zero disarms the timer */
		if (timerfd_settime(tfd, TFD_TIMER_ABSTIME, &its, NULL) < 0)
			die("timerfd_settime");
		timeout_ms = (int)((deadline - now) / 1000000ull) + 1;
		n = epoll_wait(epfd, evs, 64, timeout_ms);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			die("epoll_wait");
		for (int k = 0; k < n; k++) {
			struct end *en = evs[k].data.ptr;
			if (en->kind == 0) {
				accept_all(lfd, &target_sa);
			} else if (en->kind == 1) {
				uint64_t ticks;
				if (read(tfd, &ticks, sizeof ticks) < 0 && errno != EAGAIN)
					die("read timerfd");
			} else {
				struct pair *q = en->pair;
				int s = en->side;
				if (q->dead)
					continue;
				if (evs[k].events & EPOLLOUT)
					q->d[1 - s].blocked = 0; /* flushed at the top of the loop */
				if (evs[k].events & (EPOLLIN | EPOLLHUP | EPOLLERR)) {
					if (!q->d[s].read_eof && q->d[s].queued < QUEUE_MAX) {
						dir_read(q, s);
					} else if (evs[k].events & EPOLLERR) {
						pair_close(q);
					} else if (q->d[s].read_eof && (evs[k].events & EPOLLHUP)) {
						/* Both ways shut on this socket: a hang-up is reported
						 * whatever was asked; stop hearing it (level-triggered, it
						 * would spin until the pair ends). */
						if (epoll_ctl(epfd, EPOLL_CTL_DEL, q->fd[s], NULL) < 0)
							die("epoll_ctl DEL");
						q->gone[s] = 1;
					}
				}
			}
		}
		while (dead_pairs) {
			p = dead_pairs;
			dead_pairs = p->next;
			pair_free(p);
		}
	}

	/* Its own CPU: on one machine the relay takes it from the hosts and the database,
	 * which a real network would not. */
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	fprintf(stderr,
	        "delay_relay: %s; %llu connections (%llu refused by the target), chunks to the "
	        "target %llu (%llu bytes), to the client %llu (%llu bytes); late beyond the "
	        "delay: mean %.1f us, max %.1f us; CPU %.2f s user, %.2f s system\n",
	        stop_signal ? "stopped by a signal" : "lifetime over", n_conns, n_refused,
	        n_chunks[0], n_bytes[0], n_chunks[1], n_bytes[1],
	        late_count ? (double)late_sum_ns / (double)late_count / 1000.0 : 0.0,
	        (double)late_max_ns / 1000.0, (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6,
	        (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6);
	while (pairs) {
		struct pair *p = pairs;
		pair_close(p);
	}
	while (dead_pairs) {
		struct pair *p = dead_pairs;
		dead_pairs = p->next;
		pair_free(p);
	}
	close(tfd);
	close(lfd);
	close(epfd);
	return 0;
}
