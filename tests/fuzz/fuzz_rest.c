/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz_rest.c — libFuzzer target for the HTTP+JSON routes (LIM-3, LIM-4): the input is
 * one REST request, "<method byte><path and query>\n<X-Participant-Id>\n<A2A-Extensions>\n
 * <body>", so the router, percent-decoding, query parameters, the participant id rule and
 * the body decoders all see fuzzed bytes. It runs through th_bind_serve with the
 * in-memory carrier, the real service and a real SQLite store in a temp directory, where
 * one task of alice's exists so that routes naming it reach the harness. Any crash,
 * sanitizer report or leak is a bug. Not part of make check; bench/fuzz.sh builds and
 * runs it (tests/fuzz/README.md). */
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

static void serve(const char *const *params, const char *body, size_t len)
{
	struct th_http_mem *m = th_http_mem_new(params, body, len);
	if (m == NULL)
		return;
	struct th_http_io io;
	th_http_mem_io(m, &io);
	th_bind_serve(&app, &io);
	th_app_run_pending(&app);
	th_http_mem_free(m);
}

static void open_once(void)
{
	if (opened)
		return;
	fuzz_app_open(&app, "th-fuzz-rest");
	opened = 1;
	/* Task "seed" of alice's, made the way a client makes one. */
	static const char body[] = "{\"message\":{\"messageId\":\"seed\",\"role\":\"ROLE_USER\","
	                           "\"parts\":[{\"text\":\"seed\"}]}}";
	char clen[32];
	snprintf(clen, sizeof clen, "CONTENT_LENGTH=%zu", sizeof body - 1);
	const char *params[] = {"REQUEST_METHOD=POST",
	                        "REQUEST_URI=/message:send",
	                        clen,
	                        "CONTENT_TYPE=application/json",
	                        "HTTP_A2A_VERSION=1.0",
	                        "HTTP_X_PARTICIPANT_ID=alice",
	                        "REMOTE_ADDR=127.0.0.1",
	                        NULL};
	serve(params, body, sizeof body - 1);
}

/* The next line of data (up to '\n' or the end), copied into out with its length
 * bounded; *data and *size move past it. */
static void line(const uint8_t **data, size_t *size, char *out, size_t outsz)
{
	size_t i = 0;
	while (i < *size && (*data)[i] != '\n')
		i++;
	size_t n = i < outsz - 1 ? i : outsz - 1;
	memcpy(out, *data, n);
	out[n] = '\0';
	size_t skip = i < *size ? i + 1 : i;
	*data += skip;
	*size -= skip;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	open_once();
	if (size == 0)
		return 0;
	static const char *const methods[] = {"GET", "POST", "DELETE", "PUT", "HEAD"};
	char method[32], uri[1100], who[600], ext[600], clen[48];
	snprintf(method, sizeof method, "REQUEST_METHOD=%s", methods[data[0] % 5]);
	data++;
	size--;
	memcpy(uri, "REQUEST_URI=", 12);
	line(&data, &size, uri + 12, sizeof uri - 12);
	memcpy(who, "HTTP_X_PARTICIPANT_ID=", 22);
	line(&data, &size, who + 22, sizeof who - 22);
	memcpy(ext, "HTTP_A2A_EXTENSIONS=", 20);
	line(&data, &size, ext + 20, sizeof ext - 20);
	snprintf(clen, sizeof clen, "CONTENT_LENGTH=%zu", size);
	const char *params[] = {method,
	                        uri,
	                        clen,
	                        "CONTENT_TYPE=application/json",
	                        "HTTP_A2A_VERSION=1.0",
	                        who,
	                        ext,
	                        "REMOTE_ADDR=127.0.0.1",
	                        NULL};
	serve(params, (const char *)data, size);
	return 0;
}
