/* SPDX-License-Identifier: Apache-2.0
 *
 * bench/fcgi_hello.c — the control program of bench/fcgid_control.sh (issue 28, HOST-1).
 * Not part of the product: the bench script builds it with `cc` against libfcgi.
 *
 * A FastCGI responder that does as little as a program can: for every request it reads
 * the whole request body (as mod_fcgid hands it over), optionally keeps the CPU busy for
 * a fixed time, and answers 200 with one small fixed JSON-RPC result. Run under the same
 * Apache + mod_fcgid recipe as tiny-harness, it tells whose a latency tail is: a tail
 * this program shows too belongs to the web server, not to the worker.
 *
 * The busy time, in microseconds, comes from the environment variable
 * TINY_HARNESS_HELLO_BUSY_US (the own-Apache recipe passes TINY_HARNESS_* variables to
 * its workers with FcgidInitialEnv), else from a line `hello_busy_us = N` of
 * conf/tiny-harness.conf in the working directory (the .htaccess host: mod_fcgid starts
 * the program in its own directory and tests/lib/apache.sh writes the settings there),
 * else 0. It spins on the monotonic clock rather than sleeping, to cost CPU as a worker's
 * request does.
 *
 * `fcgi_hello migrate` exits 0 at once, so that tests/lib/apache.sh, which applies the
 * program's schema before starting Apache, can start it like tiny-harness.
 */
#include <fcgiapp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static long busy_us_from_conf(void)
{
	FILE *f = fopen("conf/tiny-harness.conf", "r");
	char line[256];
	long us = 0;

	if (f == NULL)
		return 0;
	while (fgets(line, sizeof line, f) != NULL) {
		if (sscanf(line, " hello_busy_us = %ld", &us) == 1)
			break;
	}
	fclose(f);
	return us;
}

static long busy_us(void)
{
	const char *v = getenv("TINY_HARNESS_HELLO_BUSY_US");
	long us;

	if (v != NULL && *v != '\0')
		us = strtol(v, NULL, 10);
	else
		us = busy_us_from_conf();
	if (us < 0 || us > 10000000)
		us = 0;
	return us;
}

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void spin(long us)
{
	long long end;

	if (us <= 0)
		return;
	end = now_ns() + (long long)us * 1000LL;
	while (now_ns() < end)
		;
}

int main(int argc, char **argv)
{
	static const char body[] = "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"hello\":\"world\"}}";
	FCGX_Request req;
	char buf[8192];
	long us;

	if (argc > 1 && strcmp(argv[1], "migrate") == 0)
		return 0;
	us = busy_us();
	if (FCGX_Init() != 0)
		return 1;
	if (FCGX_InitRequest(&req, 0, 0) != 0)
		return 1;
	while (FCGX_Accept_r(&req) >= 0) {
		/* The whole body, whatever CONTENT_LENGTH says: libfcgi ends it at FCGI_STDIN's end. */
		while (FCGX_GetStr(buf, (int)sizeof buf, req.in) > 0)
			;
		spin(us);
		FCGX_FPrintF(req.out,
			     "Status: 200 OK\r\nContent-Type: application/json\r\nContent-Length: %u\r\n\r\n",
			     (unsigned)(sizeof body - 1));
		FCGX_PutStr(body, (int)(sizeof body - 1), req.out);
		FCGX_Finish_r(&req);
	}
	return 0;
}
