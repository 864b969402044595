/* SPDX-License-Identifier: Apache-2.0 */
/* curlx.h — the settings every outgoing POST shares (the openai model backend, webhook
 * delivery): one place for what a request of ours may and may not do. */
#ifndef TH_UTIL_CURLX_H
#define TH_UTIL_CURLX_H

#include <curl/curl.h>

/* Sets h up to POST body (NUL-terminated; borrowed until the transfer ends) with headers
 * (borrowed likewise) to url: http and https only, no redirects followed, no signals
 * (request threads share the process), the whole transfer and the connection bounded by
 * timeout_ms, and tiny-harness's User-Agent. The caller adds how the answer is read. */
void th_curl_post(CURL *h, const char *url, struct curl_slist *headers, const char *body,
                  long timeout_ms);

#endif
