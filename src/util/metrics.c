/* SPDX-License-Identifier: Apache-2.0 */
#include "util/metrics.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAGIC "THMX0001"

/* The mapping, shared by every thread of the process; set once (release) by th_mx_open,
 * read (acquire) by every counting call. munmap: th_mx_close. */
static struct th_mx_data *mx;
static pthread_mutex_t open_mu = PTHREAD_MUTEX_INITIALIZER;
/* This process's stream slot: index + 1 (0: none yet) and the pid that claimed it (a
 * forked child claims its own). */
static int my_slot;
static pid_t my_slot_pid;
static pthread_mutex_t slot_mu = PTHREAD_MUTEX_INITIALIZER;

/* Prometheus's classic web-request buckets, shifted down one decade at the bottom: a
 * SendMessage here takes about a millisecond. */
static const int64_t bounds_us[TH_MX_BOUNDS] = {
    500, 1000, 2500, 5000, 10000, 25000, 50000, 100000, 250000, 500000, 1000000, 2500000, 10000000,
};

int64_t th_mx_bound_us(int i)
{
	return i >= 0 && i < TH_MX_BOUNDS ? bounds_us[i] : -1;
}

static struct th_mx_data *get(void)
{
	return __atomic_load_n(&mx, __ATOMIC_ACQUIRE);
}

int th_mx_on(void)
{
	return get() != NULL;
}

/* The refusal of a metrics_file that holds something else. */
static th_err foreign(const char *path, struct th_error *e)
{
	return th_error_set(e, TH_EINTERNAL,
	                    "metrics_file %s holds something else than this version's counters "
	                    "(%s); remove it or name another file",
	                    path, MAGIC);
}

th_err th_mx_open(const char *path, struct th_error *e)
{
	th_err rc = TH_OK;
	pthread_mutex_lock(&open_mu);
	if (mx != NULL)
		goto out;
	int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0) {
		rc = th_error_set(e, TH_EINTERNAL, "metrics_file %s: cannot open: %s", path,
		                  strerror(errno));
		goto out;
	}
	struct stat sb;
	/* Only a file that is empty, all zeroes where the magic goes, or ours is sized and
	 * counted into: any other file is refused below before anything is written to it. */
	char head[8] = {0}, zero[8] = {0};
	ssize_t got = fstat(fd, &sb) == 0 ? pread(fd, head, sizeof head, 0) : -1;
	if (got > 0 && memcmp(head, zero, (size_t)got) != 0 &&
	    ((size_t)got < sizeof head || memcmp(head, MAGIC, 8) != 0)) {
		close(fd);
		rc = foreign(path, e);
		goto out;
	}
	/* Several processes may grow a new file at once: each sets the same size, and the
	 * zeroes ftruncate adds are the counters' start. */
	if (got < 0 || (sb.st_size < (off_t)sizeof(struct th_mx_data) &&
	                ftruncate(fd, (off_t)sizeof(struct th_mx_data)) != 0)) {
		rc = th_error_set(e, TH_EINTERNAL, "metrics_file %s: cannot size it: %s", path,
		                  strerror(errno));
		close(fd);
		goto out;
	}
	void *m = mmap(NULL, sizeof(struct th_mx_data), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (m == MAP_FAILED) {
		rc = th_error_set(e, TH_EINTERNAL, "metrics_file %s: cannot map it: %s", path,
		                  strerror(errno));
		goto out;
	}
	struct th_mx_data *d = m;
	/* A new file is all zeroes: whoever comes first writes the magic (the same bytes
	 * whoever writes them). Anything else is not ours to count into. */
	if (memcmp(d->magic, zero, sizeof zero) == 0)
		memcpy(d->magic, MAGIC, 8);
	if (memcmp(d->magic, MAGIC, 8) != 0) {
		munmap(m, sizeof(struct th_mx_data));
		rc = foreign(path, e);
		goto out;
	}
	__atomic_store_n(&mx, d, __ATOMIC_RELEASE);
out:
	pthread_mutex_unlock(&open_mu);
	return rc;
}

void th_mx_close(void)
{
	pthread_mutex_lock(&open_mu);
	struct th_mx_data *d = mx;
	__atomic_store_n(&mx, NULL, __ATOMIC_RELEASE);
	if (d != NULL)
		munmap(d, sizeof *d);
	pthread_mutex_lock(&slot_mu);
	my_slot = 0;
	pthread_mutex_unlock(&slot_mu);
	pthread_mutex_unlock(&open_mu);
}

static void add(uint64_t *p, uint64_t v)
{
	__atomic_fetch_add(p, v, __ATOMIC_RELAXED);
}

void th_mx_request(int method, int outcome, int64_t duration_us)
{
	struct th_mx_data *d = get();
	if (d == NULL || method < 0 || method >= TH_MX_METHODS || outcome < 0 ||
	    outcome >= TH_MX_OUTCOMES)
		return;
	if (duration_us < 0)
		duration_us = 0;
	int b = 0;
	while (b < TH_MX_BOUNDS && duration_us > bounds_us[b])
		b++;
	add(&d->requests[method][outcome], 1);
	add(&d->latency[method][b], 1);
	add(&d->latency_sum_us[method], (uint64_t)duration_us);
}

void th_mx_turn(int failed)
{
	struct th_mx_data *d = get();
	if (d != NULL)
		add(&d->turns[failed ? 1 : 0], 1);
}

/* kill(pid, 0) finds the process (EPERM: it runs as another user, but it runs). */
static int alive(int32_t pid)
{
	return pid > 0 && (kill((pid_t)pid, 0) == 0 || errno == EPERM);
}

/* This process's slot, claimed on its first stream: a free one, or one whose process
 * is gone. NULL when all TH_MX_SLOTS belong to running processes (its streams are then
 * not counted). */
static struct th_mx_slot *slot(struct th_mx_data *d)
{
	pid_t me = getpid();
	struct th_mx_slot *s = NULL;
	pthread_mutex_lock(&slot_mu);
	if (my_slot > 0 && my_slot_pid == me) {
		s = &d->slots[my_slot - 1];
		goto out;
	}
	for (int i = 0; i < TH_MX_SLOTS; i++) {
		int32_t p = __atomic_load_n(&d->slots[i].pid, __ATOMIC_RELAXED);
		if (p != 0 && (p == (int32_t)me || alive(p)))
			continue;
		if (!__atomic_compare_exchange_n(&d->slots[i].pid, &p, (int32_t)me, 0,
		                                 __ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
			continue;
		__atomic_store_n(&d->slots[i].streams, 0, __ATOMIC_RELAXED);
		my_slot = i + 1;
		my_slot_pid = me;
		s = &d->slots[i];
		break;
	}
out:
	pthread_mutex_unlock(&slot_mu);
	return s;
}

void th_mx_streams(int delta)
{
	struct th_mx_data *d = get();
	struct th_mx_slot *s = d != NULL ? slot(d) : NULL;
	if (s != NULL)
		__atomic_fetch_add(&s->streams, delta, __ATOMIC_RELAXED);
}

static void copy_u64(uint64_t *dst, const uint64_t *src, size_t n)
{
	for (size_t i = 0; i < n; i++)
		dst[i] = __atomic_load_n(&src[i], __ATOMIC_RELAXED);
}

th_err th_mx_snapshot(struct th_mx_snapshot *out, struct th_error *e)
{
	memset(out, 0, sizeof *out);
	struct th_mx_data *d = get();
	if (d == NULL)
		return th_error_set(e, TH_EINTERNAL, "no metrics file is open in this process");
	memcpy(out->d.magic, d->magic, sizeof out->d.magic);
	copy_u64(&out->d.requests[0][0], &d->requests[0][0], TH_MX_METHODS * TH_MX_OUTCOMES);
	copy_u64(&out->d.latency[0][0], &d->latency[0][0], TH_MX_METHODS * (TH_MX_BOUNDS + 1));
	copy_u64(out->d.latency_sum_us, d->latency_sum_us, TH_MX_METHODS);
	copy_u64(out->d.turns, d->turns, TH_MX_TURN_OUTCOMES);
	for (int i = 0; i < TH_MX_SLOTS; i++) {
		struct th_mx_slot s = {__atomic_load_n(&d->slots[i].pid, __ATOMIC_RELAXED),
		                       __atomic_load_n(&d->slots[i].streams, __ATOMIC_RELAXED)};
		out->d.slots[i] = s;
		if (alive(s.pid) && s.streams > 0)
			out->open_streams += s.streams;
	}
	return TH_OK;
}
