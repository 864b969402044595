/* SPDX-License-Identifier: Apache-2.0 */
/* check_handoff.c — the hand-over of a write request from one worker process to the
 * database's writer (HOST-2, decisions 084 and 093), inside one process: two hand-over
 * points on one database path stand in for two workers (the exclusive lock is per open
 * file, so only one of them can claim it), and a socketpair stands in for the web
 * server's FastCGI connection, whose far end the test reads. */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "http/http.h"
#include "util/buf.h"
#include "worker/handoff.h"

#define REQ_ID 9
#define MAX_BODY 1024

static char dir[32];
static char db[64];

/* The on_claim of a test: counts claims, starts no thread (the test takes). */
static int claims;
static int on_claim(void *arg, struct th_handoff_point *p)
{
	(void)arg;
	(void)p;
	claims++;
	return 0;
}

static void setup(void)
{
	snprintf(dir, sizeof dir, "/tmp/th-handoff.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(db, sizeof db, "%s/x.db", dir);
	claims = 0;
}

static void teardown(void)
{
	char path[256];
	snprintf(path, sizeof path, "%s-handoff.sock", db);
	unlink(path);
	snprintf(path, sizeof path, "%s-handoff.lock", db);
	unlink(path);
	rmdir(dir);
}

/* ---- a FastCGI request as the forwarding worker's carrier holds it ---- */

struct fake {
	char params_text[3][40];
	char *params[4];
	int conn;      /* this worker's end of the web server's connection */
	int offered;   /* hand_over was called */
	int forgotten; /* send() took it: the carrier forgot the request */
};

static char *const *fake_params(void *impl)
{
	return ((struct fake *)impl)->params;
}

static int fake_hand_over(void *impl, int (*send)(void *arg, const struct th_http_conn *conn),
                          void *arg)
{
	struct fake *f = impl;
	f->offered = 1;
	struct th_http_conn c = {.fd = dup(f->conn), .request_id = REQ_ID};
	int rc = send(arg, &c);
	close(c.fd);
	if (rc == 0) {
		f->forgotten = 1;
		close(f->conn); /* as FCGX_Free does once detached */
		f->conn = -1;
	}
	return rc;
}

/* A POST with a body; *web is the web server's end of the connection. */
static void fake_request(struct fake *f, struct th_http_io *io, int *web)
{
	int sv[2];
	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
	*f = (struct fake){.params_text = {"REQUEST_METHOD=POST", "CONTENT_LENGTH=5",
	                                   "HTTP_X_PARTICIPANT_ID=alice"},
	                   .conn = sv[0]};
	for (int i = 0; i < 3; i++)
		f->params[i] = f->params_text[i];
	*web = sv[1];
	memset(io, 0, sizeof *io);
	io->impl = f;
	io->params = fake_params;
	io->hand_over = fake_hand_over;
}

/* A new request (fake_request) offered through f's hook: forward's answer. */
static int forward_new(struct th_handoff_point *f, struct fake *req, struct th_http_io *io,
                       int *web)
{
	fake_request(req, io, web);
	struct th_handoff *hook = th_handoff_point_hook(f);
	return hook->forward(hook->impl, io, "hello", 5);
}

/* Reads what the web server's end has until the writer closes it (bounded). */
static size_t read_all(int fd, unsigned char *buf, size_t cap)
{
	size_t n = 0;
	for (;;) {
		struct pollfd pfd = {.fd = fd, .events = POLLIN};
		ck_assert_int_eq(poll(&pfd, 1, 5000), 1);
		ssize_t k = read(fd, buf + n, cap - n);
		ck_assert_int_ge(k, 0);
		if (k == 0)
			return n;
		n += (size_t)k;
		ck_assert_uint_lt(n, cap);
	}
}

static struct th_handoff_point *writer_point(void)
{
	struct th_handoff_point *w = th_handoff_point_open(db, on_claim, NULL);
	ck_assert_ptr_nonnull(w);
	ck_assert_int_eq(th_handoff_point_claim(w), 1);
	ck_assert_int_eq(claims, 1);
	return w;
}

START_TEST(test_host2_a_write_handed_over_arrives_whole_and_is_answered_on_its_connection)
{
	struct th_handoff_point *w = writer_point();
	/* A second worker on the same database cannot claim: it hands over. */
	struct th_handoff_point *f = th_handoff_point_open(db, on_claim, NULL);
	ck_assert_int_eq(th_handoff_point_claim(f), 0);
	ck_assert_int_eq(claims, 1);
	char path[256];
	struct stat sb;
	snprintf(path, sizeof path, "%s-handoff.sock", db);
	ck_assert_int_eq(stat(path, &sb), 0);
	ck_assert_int_eq(sb.st_mode & 0777, 0600); /* only this user's workers */

	struct fake req;
	struct th_http_io io;
	int web;
	ck_assert_int_eq(forward_new(f, &req, &io, &web), 1);
	ck_assert(req.forgotten);

	/* The writer takes it: the same parameters, the body, the connection. */
	struct th_http_handed h;
	ck_assert_int_eq(th_handoff_take(w, MAX_BODY, &h), 0);
	ck_assert_int_eq(h.conn.request_id, REQ_ID);
	ck_assert_ptr_nonnull(h.params);
	ck_assert_str_eq(h.params[0], "REQUEST_METHOD=POST");
	ck_assert_str_eq(h.params[2], "HTTP_X_PARTICIPANT_ID=alice");
	ck_assert_ptr_null(h.params[3]);
	struct th_http_io hio;
	th_http_handed_io(&hio, &h);
	ck_assert_str_eq(th_http_param(&hio, "CONTENT_LENGTH"), "5");
	char body[16] = {0};
	ck_assert_int_eq(hio.read(hio.impl, body, sizeof body), 5);
	ck_assert_str_eq(body, "hello");
	ck_assert_int_eq(hio.read(hio.impl, body, sizeof body), 0);
	ck_assert_int_eq(th_http_respond(&hio, 200, "text/plain", NULL, "done", 4), 0);
	th_http_handed_finish(&hio);
	th_http_handed_free(&h);
	th_handoff_done(w);

	/* The web server reads the answer as FastCGI records of its own request id. */
	unsigned char got[4096];
	size_t n = read_all(web, got, sizeof got);
	struct th_buf want;
	th_buf_init(&want);
	const char *text = "Status: 200 OK\r\nContent-Type: text/plain\r\nContent-Length: "
	                   "4\r\n\r\ndone";
	th_fcgi_stdout(&want, REQ_ID, text, strlen(text));
	th_fcgi_end(&want, REQ_ID);
	ck_assert_uint_eq(n, want.len);
	ck_assert_int_eq(memcmp(got, want.data, n), 0);
	th_buf_free(&want);
	close(web);
	th_handoff_point_free(f);
	th_handoff_point_free(w);
}
END_TEST

/* Sends the writer's socket one datagram as a worker would, without a carrier: a frame
 * head announcing body_len body bytes, then sent_body bytes of body, with fd when it is
 * not -1. 0 when it was queued, else errno (EAGAIN: the writer's queue is full). */
static int raw_send(int fd, uint32_t body_len, size_t sent_body)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	snprintf(sa.sun_path, sizeof sa.sun_path, "%s-handoff.sock", db);
	int s = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	ck_assert_int_ge(s, 0);
	static char buf[16 + 2 * MAX_BODY];
	ck_assert_uint_le(sent_body, sizeof buf - 16);
	uint32_t head[4] = {0x32484854u, REQ_ID, 0, body_len};
	memcpy(buf, head, sizeof head);
	memset(buf + 16, 'x', sent_body);
	struct iovec iov = {.iov_base = buf, .iov_len = 16 + sent_body};
	union {
		char b[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} ctl;
	memset(&ctl, 0, sizeof ctl);
	struct msghdr m = {
	    .msg_name = &sa, .msg_namelen = sizeof sa, .msg_iov = &iov, .msg_iovlen = 1};
	if (fd >= 0) {
		m.msg_control = ctl.b;
		m.msg_controllen = sizeof ctl.b;
		struct cmsghdr *c = CMSG_FIRSTHDR(&m);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(c), &fd, sizeof fd);
	}
	int rc = sendmsg(s, &m, MSG_DONTWAIT) == (ssize_t)iov.iov_len ? 0 : errno;
	close(s);
	return rc;
}

/* Sends the writer a frame announcing body_len body bytes and carrying sent_body, with a
 * connection; 1 when the writer dropped it and answered nothing: the web server's end of
 * the connection then closes with no byte. */
static int dropped_unanswered(struct th_handoff_point *w, uint32_t body_len, size_t sent_body)
{
	int sv[2];
	unsigned char got[64];
	struct th_http_handed h;
	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
	ck_assert_int_eq(raw_send(sv[0], body_len, sent_body), 0);
	close(sv[0]);
	int taken = th_handoff_take(w, MAX_BODY, &h);
	size_t n = read_all(sv[1], got, sizeof got);
	close(sv[1]);
	return taken == -1 && n == 0;
}

START_TEST(test_host2_a_frame_not_well_formed_or_over_the_limit_is_dropped_unanswered)
{
	struct th_handoff_point *w = writer_point();
	ck_assert(dropped_unanswered(w, 10, 4)); /* the body shorter than its head says */
	ck_assert(dropped_unanswered(w, 4, 10)); /* longer */
	ck_assert(dropped_unanswered(w, MAX_BODY + 1, MAX_BODY + 1)); /* over max_body */
	/* And a frame without a connection: nothing to answer on. */
	ck_assert_int_eq(raw_send(-1, 4, 4), 0);
	struct th_http_handed h;
	ck_assert_int_eq(th_handoff_take(w, MAX_BODY, &h), -1);
	th_handoff_point_free(w);
}
END_TEST

START_TEST(test_host2_a_writer_that_takes_nothing_holds_a_bounded_queue_then_requests_stay)
{
	struct th_handoff_point *w = writer_point();
	struct th_handoff_point *f = th_handoff_point_open(db, on_claim, NULL);
	ck_assert_int_eq(th_handoff_point_claim(f), 0);
	/* A stopped writer: its socket's queue fills, and nothing takes from it. */
	int nq = 0, why = 0;
	while (nq < 64 && (why = raw_send(-1, 0, 0)) == 0)
		nq++;
	ck_assert_int_lt(nq, 64); /* bounded */
	ck_assert_int_eq(why, EAGAIN);
	struct fake req;
	struct th_http_io io;
	int web;
	/* Not handed over: this worker serves it, and still owns the connection. */
	ck_assert_int_eq(forward_new(f, &req, &io, &web), 0);
	ck_assert(req.offered);
	ck_assert(!req.forgotten);
	ck_assert_int_ge(req.conn, 0);
	close(req.conn);
	close(web);
	th_handoff_point_free(f);
	th_handoff_point_free(w);
}
END_TEST

START_TEST(test_host2_a_request_over_128_kib_stays_where_it_arrived)
{
	/* One datagram carries a frame of at most 128 KiB; a larger request (files inline) is
	 * served by the process it reached, which still owns its connection. */
	struct th_handoff_point *w = writer_point();
	struct th_handoff_point *f = th_handoff_point_open(db, on_claim, NULL);
	ck_assert_int_eq(th_handoff_point_claim(f), 0);
	size_t big = 128 * 1024;
	char *body = malloc(4 * big);
	ck_assert_ptr_nonnull(body);
	memset(body, 'x', 4 * big);
	struct fake req;
	struct th_http_io io;
	int web;
	struct th_handoff *hook = th_handoff_point_hook(f);
	/* The frame just over (the body at the limit, with the parameters), and far over. */
	size_t over[] = {big, 4 * big};
	for (size_t i = 0; i < 2; i++) {
		fake_request(&req, &io, &web);
		ck_assert_int_eq(hook->forward(hook->impl, &io, body, over[i]), 0);
		ck_assert(req.offered);
		ck_assert(!req.forgotten);
		close(req.conn);
		close(web);
	}
	/* Just under the limit, it goes. */
	fake_request(&req, &io, &web);
	ck_assert_int_eq(hook->forward(hook->impl, &io, body, big - 1024), 1);
	ck_assert(req.forgotten);
	/* The first frame in the writer's queue is this one: nothing of the others went. */
	struct th_http_handed h;
	ck_assert_int_eq(th_handoff_take(w, 4 * big, &h), 0);
	ck_assert_uint_eq(h.body_len, big - 1024);
	th_http_handed_free(&h);
	th_handoff_done(w);
	free(body);
	close(web);
	th_handoff_point_free(f);
	th_handoff_point_free(w);
}
END_TEST

START_TEST(test_host2_with_no_writer_the_first_worker_to_write_claims_and_serves_itself)
{
	struct th_handoff_point *f = th_handoff_point_open(db, on_claim, NULL);
	ck_assert_ptr_nonnull(f);
	struct fake req;
	struct th_http_io io;
	int web;
	ck_assert_int_eq(forward_new(f, &req, &io, &web), 0);
	ck_assert_int_eq(claims, 1); /* it became the writer */
	ck_assert(!req.forgotten);
	/* Now the writer, it never hands over: it serves its own. */
	req.offered = 0;
	struct th_handoff *hook = th_handoff_point_hook(f);
	ck_assert_int_eq(hook->forward(hook->impl, &io, "hello", 5), 0);
	ck_assert(!req.offered);
	/* A carrier that cannot hand over (CGI) is served where it arrived. */
	struct th_handoff_point *g = th_handoff_point_open(db, on_claim, NULL);
	ck_assert_int_eq(th_handoff_point_claim(g), 0);
	io.hand_over = NULL;
	ck_assert_int_eq(th_handoff_point_hook(g)->forward(g, &io, "hello", 5), 0);
	close(req.conn);
	close(web);
	th_handoff_point_free(g);
	th_handoff_point_free(f);
}
END_TEST

START_TEST(test_host2_sec6_a_peer_of_another_user_is_refused_unanswered)
{
	if (geteuid() != 0)
		return; /* needs another user to connect as: root's setuid */
	struct th_handoff_point *w = writer_point();
	char path[256];
	snprintf(path, sizeof path, "%s-handoff.sock", db);
	/* Opened up as a mistaken chmod would: the mode no longer keeps another user out, so
	 * the writer's check of its peer must. */
	ck_assert_int_eq(chmod(dir, 0755), 0);
	ck_assert_int_eq(chmod(path, 0666), 0);
	int sv[2];
	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
	pid_t child = fork();
	ck_assert_int_ge(child, 0);
	if (child == 0) {
		/* The child's copy of the point is not its own to keep (valgrind's leak check
		 * runs at its _exit too). */
		th_handoff_point_free(w);
		if (setgid(65534) != 0 || setuid(65534) != 0)
			_exit(2);
		/* A whole frame: head, no body, a connection. */
		_exit(raw_send(sv[0], 0, 0) == 0 ? 0 : 3);
	}
	close(sv[0]);
	int status = 0;
	ck_assert_int_eq(waitpid(child, &status, 0), child);
	ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	struct th_http_handed h;
	ck_assert_int_eq(th_handoff_take(w, MAX_BODY, &h), -1);
	unsigned char got[64];
	ck_assert_uint_eq(read_all(sv[1], got, sizeof got), 0);
	close(sv[1]);
	th_handoff_point_free(w);
}
END_TEST

START_TEST(test_host2_a_worker_that_cannot_write_for_others_never_claims)
{
	/* worker_threads = 1: no write group, so no on_claim. Writing finds no writer and
	 * stays here, and nothing is made beside the database (no socket bound and removed
	 * again at every write). */
	struct th_handoff_point *f = th_handoff_point_open(db, NULL, NULL);
	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(th_handoff_point_claim(f), 0);
	struct fake req;
	struct th_http_io io;
	int web;
	ck_assert_int_eq(forward_new(f, &req, &io, &web), 0);
	ck_assert(!req.forgotten);
	char path[256];
	struct stat sb;
	snprintf(path, sizeof path, "%s-handoff.lock", db);
	ck_assert_int_ne(stat(path, &sb), 0);
	/* A writer elsewhere still gets its writes, once the pause after finding none
	 * (100 ms) is over. */
	struct th_handoff_point *w = writer_point();
	close(req.conn);
	close(web);
	usleep(150 * 1000);
	ck_assert_int_eq(forward_new(f, &req, &io, &web), 1);
	ck_assert(req.forgotten);
	struct th_http_handed h;
	ck_assert_int_eq(th_handoff_take(w, MAX_BODY, &h), 0);
	th_http_handed_free(&h);
	th_handoff_done(w);
	close(web);
	th_handoff_point_free(w);
	th_handoff_point_free(f);
}
END_TEST

START_TEST(test_host2_a_database_path_too_long_for_a_socket_has_no_hand_over)
{
	char longer[200];
	memset(longer, 'a', sizeof longer - 1);
	longer[0] = '/';
	longer[sizeof longer - 1] = '\0';
	ck_assert_ptr_null(th_handoff_point_open(longer, on_claim, NULL));
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("handoff");
	TCase *tc = tcase_create("handoff");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(
	    tc, test_host2_a_write_handed_over_arrives_whole_and_is_answered_on_its_connection);
	tcase_add_test(tc,
	               test_host2_a_frame_not_well_formed_or_over_the_limit_is_dropped_unanswered);
	tcase_add_test(
	    tc, test_host2_a_writer_that_takes_nothing_holds_a_bounded_queue_then_requests_stay);
	tcase_add_test(
	    tc, test_host2_with_no_writer_the_first_worker_to_write_claims_and_serves_itself);
	tcase_add_test(tc, test_host2_a_request_over_128_kib_stays_where_it_arrived);
	tcase_add_test(tc, test_host2_sec6_a_peer_of_another_user_is_refused_unanswered);
	tcase_add_test(tc, test_host2_a_worker_that_cannot_write_for_others_never_claims);
	tcase_add_test(tc, test_host2_a_database_path_too_long_for_a_socket_has_no_hand_over);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(suite());
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? 0 : 1;
}
