/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz_serve.c — libFuzzer target for the whole request path (LIM-3): arbitrary bytes
 * become one HTTP request (the first byte picks a route and headers, the rest is the
 * body) and go through th_bind_serve with the in-memory carrier, the real service and a
 * real SQLite store in a temp directory. Any crash, sanitizer report or leak is a bug.
 * Not part of make check; see tests/fuzz/README.md for the build command. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app.h"
#include "bind/bind.h"
#include "config/settings.h"
#include "http/http.h"
#include "worker/process.h"

#include "fuzz_app.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct th_app app;
static int opened;

static void open_once(void)
{
	if (opened)
		return;
	fuzz_app_open(&app, "th-fuzz-serve");
	opened = 1;
}

static const char *const routes[][2] = {
    {"POST", "/"},
    {"POST", "/message:send"},
    {"POST", "/message:stream"},
    {"GET", "/tasks"},
    {"GET", "/tasks/t1"},
    {"POST", "/tasks/t1:cancel"},
    {"GET", "/tasks/t1:subscribe"},
    {"POST", "/tasks/t1/pushNotificationConfigs"},
    {"GET", "/.well-known/agent-card.json"},
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	open_once();
	if (size == 0)
		return 0;
	unsigned sel = data[0];
	const char *const *r = routes[sel % (sizeof routes / sizeof routes[0])];
	char method[32], uri[64], clen[48];
	snprintf(method, sizeof method, "REQUEST_METHOD=%s", r[0]);
	snprintf(uri, sizeof uri, "REQUEST_URI=%s", r[1]);
	snprintf(clen, sizeof clen, "CONTENT_LENGTH=%zu", size - 1);
	const char *params[] = {
	    method,
	    uri,
	    clen,
	    "CONTENT_TYPE=application/json",
	    "HTTP_A2A_VERSION=1.0",
	    "REMOTE_ADDR=127.0.0.1",
	    (sel & 0x10) ? "HTTP_X_PARTICIPANT_ID=alice" : "HTTP_X_PARTICIPANT_ID=bob",
	    (sel & 0x20) ? "HTTP_A2A_EXTENSIONS=https://a2ui.org/a2a-extension/a2ui/v0.9.1" : NULL,
	    NULL};
	struct th_http_mem *m = th_http_mem_new(params, (const char *)data + 1, size - 1);
	if (m == NULL)
		return 0;
	struct th_http_io io;
	th_http_mem_io(m, &io);
	th_bind_serve(&app, &io);
	th_app_run_pending(&app);
	th_http_mem_free(m);
	return 0;
}
