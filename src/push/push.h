/* SPDX-License-Identifier: Apache-2.0 */
/* push.h — push notifications (PUSH-2..PUSH-4): callback URL checks, the secrets sealed
 * for the store, and the delivery of queued events to webhooks. It knows the store,
 * config and util; the delivery is handed what it uses (the store, the settings and,
 * after a request, the time of the next poll), and knows nothing of requests,
 * participants, the process context or the service layer.
 * The config operations (PUSH-1) are ops/pushcfg.c's, their requests a2a/push.c's.
 *
 * Events are queued by domain/events.c in the transaction that records them (one
 * push_outbox row per config); th_push_deliver_due POSTs them later, outside any
 * transaction, with retries and back-off, so a slow webhook never blocks a request and
 * a worker crash loses no delivery. */
#ifndef TH_PUSH_PUSH_H
#define TH_PUSH_PUSH_H

#include <stddef.h>
#include <stdint.h>

#include "util/err.h"

struct th_config;
struct th_store;

/* ---- url.c: callback URLs (PUSH-3) ------------------------------------------------------- */

/* Longest callback URL accepted, in bytes. */
#define TH_PUSH_URL_MAX 2048

/* Where a checked URL goes. */
struct th_push_target {
	char *host;    /* host as libcurl uses it (IPv6 in brackets); free (th_push_target_free) */
	long port;     /* the URL's port, or the scheme's default */
	char *resolve; /* CURLOPT_RESOLVE entry "host:port:addr[,addr…]" pinning the checked
	                  addresses, NULL for an IP-literal host; free */
	int transient; /* set on failure when it may pass: the host did not resolve */
};
void th_push_target_free(struct th_push_target *t);

/* Checks a callback URL (PUSH-3): absolute http:// or https://, at most TH_PUSH_URL_MAX
 * printable ASCII bytes, no user name or password, an ASCII host; the host is resolved
 * (getaddrinfo) and every address it has must pass the address rules (push_int.h):
 * private, loopback, link-local and other special-purpose targets only when
 * allow_private is set. On failure TH_EINVAL with a message that starts with "url" and
 * says why, and out->transient set when the host did not resolve. out (may be NULL)
 * receives the target to connect to. Never call it inside a transaction (DNS). */
/* url as it may be shown in a log line, an error message or push_outbox.last_error
 * (SEC-6): a user name and password become "***@", every query value "***", and a
 * fragment is dropped; cut to fit cap with "...". */
void th_push_url_redact(const char *url, char *out, size_t cap);
th_err th_push_url_check(const char *url, int allow_private, struct th_push_target *out,
                         struct th_error *e);

/* ---- secret.c: tokens and credentials at rest (PUSH-4) ----------------------------------- */

#define TH_PUSH_KEY_ENV "TINY_HARNESS_PUSH_KEY"
#define TH_PUSH_KEY_LEN 32

/* Reads the key from TINY_HARNESS_PUSH_KEY (64 hex digits). Unset or empty →
 * TH_EUNSUPPORTED naming the variable; malformed → TH_EINTERNAL naming it (the value is
 * never echoed). */
th_err th_push_key(unsigned char key[TH_PUSH_KEY_LEN], struct th_error *e);

/* Seals plain (a NUL-terminated secret) for the field ("token" or "credentials") of
 * config config_id on task task_id: the three are authenticated with it, so a sealed
 * value copied to another config or field does not open. *blob is malloc'd (caller
 * frees): "th1" | 12-byte random nonce | ciphertext | 16-byte tag. */
th_err th_push_seal(const unsigned char key[TH_PUSH_KEY_LEN], const char *field,
                    const char *task_id, const char *config_id, const char *plain,
                    unsigned char **blob, size_t *len, struct th_error *e);

/* Opens a sealed value; any change to blob, key, field, task or config → TH_EINTERNAL
 * ("cannot decrypt"). *plain is malloc'd and NUL-terminated; wipe and free it with
 * th_push_secret_free. */
th_err th_push_unseal(const unsigned char key[TH_PUSH_KEY_LEN], const char *field,
                      const char *task_id, const char *config_id, const unsigned char *blob,
                      size_t len, char **plain, struct th_error *e);

/* Overwrites then frees a secret (NULL is fine). */
void th_push_secret_free(char *s);

/* Overwrites n bytes (keys on the stack). */
void th_push_wipe(void *p, size_t n);

/* ---- deliver.c: the outbox sender (PUSH-2) ----------------------------------------------- */

/* Delivers the due outbox rows of st for at most budget_ms (each POST with its own
 * timeout, cfg's push_* settings; the lock file beside cfg->db_path); returns how many
 * were delivered. For the CLI (`tiny-harness push`), the worker and tests. */
int th_push_deliver_due(struct th_store *st, const struct th_config *cfg, int budget_ms);
/* RET-4: the cut-offs pruning uses at now_ms: delivered rows older than push_keep_hours,
 * dead letters older than retain_dead_letters (0 when it is off: none is). For the
 * sender's own pruning and `tiny-harness purge`. */
void th_push_prune_cutoffs(const struct th_config *cfg, int64_t now_ms, int64_t *delivered_before,
                           int64_t *dead_before);
/* After a request: th_push_deliver_due when this connection queued deliveries or
 * *next_poll_ms (monotonic, the caller's: one a worker thread) has passed; then
 * *next_poll_ms is set 250 ms ahead. Otherwise nothing (no query). */
int th_push_after_request(struct th_store *st, const struct th_config *cfg, int64_t *next_poll_ms,
                          int budget_ms);

#endif
