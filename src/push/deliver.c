/* SPDX-License-Identifier: Apache-2.0 */
/* deliver.c — the outbox sender (PUSH-2): POSTs queued StreamResponse bodies to their
 * configs' webhooks after a request has been answered, never inside a transaction.
 *
 * One delivery at a time: a short transaction records the previous outcome and claims
 * the next due row (th_store_push_claim_due, limit 1, a lease of one POST), then the
 * POST runs with no transaction open. 2xx → delivered; 4xx other than 408 and 429 →
 * dead; anything else → retried with exponential back-off (th_store_push_retry). A
 * worker killed mid-POST leaves a claim that expires and is claimed again, so a
 * delivery may repeat but is never lost (at-least-once).
 *
 * One sender at a time per database: workers take an flock on "<db>.push-lock" so that
 * events of a task reach a webhook in their order even when several workers finish
 * requests together. A worker that finds the lock taken leaves a mark in the file and
 * goes back to serving; the holder looks for the mark after releasing and runs again,
 * so rows committed while it worked are not left waiting for the next request. */
#include <curl/curl.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "config/settings.h"
#include "push/push.h"
#include "push/push_int.h"
#include "store/store.h"
#include "util/buf.h"
#include "util/ids.h"
#include "util/log.h"
#include "util/curlx.h"

/* A claim outlives its POST by this much, so no other sender takes a row in flight. */
#define LEASE_MARGIN_MS 5000
/* A POST is not started with less than this much budget left (or the timeout, if
 * shorter): it would only time out and use up an attempt. */
#define MIN_POST_MS 1000
/* Finished deliveries are pruned at most this often per process. */
#define PRUNE_EVERY_MS (10 * 60 * 1000)

enum outcome { O_NONE, O_DELIVERED, O_RETRY, O_DEAD };

struct result {
	enum outcome kind;
	int64_t id;
	char error[300];
};

/* ---- one POST ----------------------------------------------------------------------------- */

struct guard {
	int allow_private;
	const char *refused; /* why the last socket was refused, or NULL */
};

/* Every socket libcurl opens is checked once more against the address rules, so
 * nothing the name resolution did after our check can reach a refused address. */
static curl_socket_t open_guarded(void *clientp, curlsocktype purpose, struct curl_sockaddr *a)
{
	(void)purpose;
	struct guard *g = clientp;
	const char *why = th_push_addr_refusal(&a->addr, g->allow_private);
	if (why != NULL) {
		g->refused = why;
		return CURL_SOCKET_BAD;
	}
	return socket(a->family, a->socktype, a->protocol);
}

static size_t discard(char *data, size_t size, size_t n, void *arg)
{
	(void)data;
	(void)arg;
	return size * n;
}

/* Adds "name: value" to the header list, wiping the temporary copy. */
static int add_header(struct curl_slist **list, const char *name, const char *value)
{
	struct th_buf b;
	th_buf_init(&b);
	th_buf_printf(&b, "%s: %s", name, value);
	struct curl_slist *l = b.oom ? NULL : curl_slist_append(*list, b.data);
	th_push_wipe(b.data, b.len);
	th_buf_free(&b);
	if (l == NULL)
		return -1;
	*list = l;
	return 0;
}

static void set(struct result *r, enum outcome kind, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void set(struct result *r, enum outcome kind, const char *fmt, ...)
{
	r->kind = kind;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(r->error, sizeof r->error, fmt, ap);
	va_end(ap);
}

/* Opens the config's sealed secrets; *token and *credentials are NULL when not set. */
static th_err open_secrets(const struct th_push_config *c, char **token, char **credentials,
                           struct th_error *e)
{
	*token = *credentials = NULL;
	if (c->token_enc == NULL && c->auth_enc == NULL)
		return TH_OK;
	unsigned char key[TH_PUSH_KEY_LEN];
	th_err rc = th_push_key(key, e);
	if (rc == TH_OK && c->token_enc != NULL)
		rc = th_push_unseal(key, "token", c->task_id, c->config_id, c->token_enc,
		                    c->token_len, token, e);
	if (rc == TH_OK && c->auth_enc != NULL)
		rc = th_push_unseal(key, "credentials", c->task_id, c->config_id, c->auth_enc,
		                    c->auth_len, credentials, e);
	th_push_wipe(key, sizeof key);
	if (rc != TH_OK) {
		th_push_secret_free(*token);
		th_push_secret_free(*credentials);
		*token = *credentials = NULL;
	}
	return rc;
}

/* Whether d may be posted at all: its config still exists, its owner is still on the
 * task (ID-3), its URL still resolves to an allowed address (PUSH-3, into *t) and its
 * secrets open (*token, *credentials: th_push_secret_free). 0, or -1 with r set and
 * nothing left to free. */
static int ready(struct th_store *st, const struct th_config *cfg, const struct th_push_delivery *d,
                 struct th_push_config *c, struct th_push_target *t, char **token,
                 char **credentials, struct result *r)
{
	struct th_error e;
	th_error_clear(&e);
	th_err rc = th_store_push_config_get(st, d->task_id, d->config_id, NULL, c, &e);
	if (rc != TH_OK) {
		set(r, rc == TH_ENOTFOUND ? O_DEAD : O_RETRY, "%s",
		    rc == TH_ENOTFOUND ? "the push notification config was deleted" : e.msg);
		return -1;
	}
	char *role = NULL;
	rc = th_store_participant_role(st, c->task_id, c->participant_id, &role, &e);
	free(role);
	if (rc != TH_OK) {
		set(r, rc == TH_ENOTFOUND ? O_DEAD : O_RETRY, "%s",
		    rc == TH_ENOTFOUND ? "the config's owner is no longer a participant of the task"
		                       : e.msg);
		th_push_config_free(c);
		return -1;
	}
	/* The host is resolved and checked again: it may point elsewhere now. */
	if (th_push_url_check(c->url, cfg->push_allow_private, t, &e) != TH_OK) {
		set(r, t->transient ? O_RETRY : O_DEAD, "%s", e.msg);
		th_push_config_free(c);
		return -1;
	}
	if (open_secrets(c, token, credentials, &e) != TH_OK) {
		/* The operator may still put the right key in place. */
		set(r, O_RETRY, "%s", e.msg);
		th_push_target_free(t);
		th_push_config_free(c);
		return -1;
	}
	return 0;
}

/* The POST's headers into *headers and the pinned address into *pin (curl_slist_free_all
 * each); the secrets are wiped and freed here. -1 when out of memory. */
static int headers_for(const struct th_push_config *c, const struct th_push_delivery *d,
                       const struct th_push_target *t, char *token, char *credentials,
                       struct curl_slist **headers, struct curl_slist **pin)
{
	char seq[32];
	snprintf(seq, sizeof seq, "%" PRId64, d->seq);
	int bad = add_header(headers, "Content-Type", "application/a2a+json");
	/* No "Expect: 100-continue" round trip before larger bodies. */
	bad |= add_header(headers, "Expect", "");
	bad |= add_header(headers, "X-Tiny-Harness-Event-Seq", seq);
	if (token != NULL)
		bad |= add_header(headers, "X-A2A-Notification-Token", token);
	if (c->auth_scheme != NULL && credentials != NULL) {
		struct th_buf v;
		th_buf_init(&v);
		th_buf_printf(&v, "%s %s", c->auth_scheme, credentials);
		bad |= v.oom || add_header(headers, "Authorization", v.data);
		th_push_wipe(v.data, v.len);
		th_buf_free(&v);
	}
	th_push_secret_free(token);
	th_push_secret_free(credentials);
	if (t->resolve != NULL) {
		*pin = curl_slist_append(NULL, t->resolve);
		bad |= *pin == NULL;
	}
	return bad ? -1 : 0;
}

/* POSTs d's body to url with h, and sorts the outcome into r: delivered on 2xx, dead on
 * a refused address or a 4xx other than 408 and 429, else retried. */
static void perform(CURL *h, const char *url, const struct th_push_delivery *d,
                    struct curl_slist *headers, struct curl_slist *pin, int allow_private,
                    int timeout_ms, struct result *r)
{
	char errbuf[CURL_ERROR_SIZE] = "";
	struct guard g = {.allow_private = allow_private};
	th_curl_post(h, url, headers, d->body, (long)timeout_ms);
	/* What last_error and the log say: never the URL's credentials or tokens (SEC-6). */
	char shown[124];
	th_push_url_redact(url, shown, sizeof shown);
	/* Straight to the checked address: no proxy from the environment. */
	curl_easy_setopt(h, CURLOPT_PROXY, "");
	curl_easy_setopt(h, CURLOPT_RESOLVE, pin);
	curl_easy_setopt(h, CURLOPT_OPENSOCKETFUNCTION, open_guarded);
	curl_easy_setopt(h, CURLOPT_OPENSOCKETDATA, &g);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, discard);
	curl_easy_setopt(h, CURLOPT_ERRORBUFFER, errbuf);
	CURLcode cc = curl_easy_perform(h);
	long status = 0;
	if (cc == CURLE_OK)
		curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
	if (g.refused != NULL)
		set(r, O_DEAD, "%s: connecting to %s was refused (push_allow_private)", shown,
		    g.refused);
	else if (cc != CURLE_OK)
		set(r, O_RETRY, "%s: %s", shown, errbuf[0] ? errbuf : curl_easy_strerror(cc));
	else if (status >= 200 && status <= 299)
		set(r, O_DELIVERED, "%s", "");
	else if (status >= 400 && status <= 499 && status != 408 && status != 429)
		set(r, O_DEAD, "%s answered HTTP %ld", shown, status);
	else
		set(r, O_RETRY, "%s answered HTTP %ld", shown, status);
}

static void post(struct th_store *st, const struct th_config *cfg, const struct th_push_delivery *d,
                 int timeout_ms, struct result *r)
{
	r->id = d->id;
	struct th_push_config c;
	struct th_push_target t;
	char *token = NULL, *credentials = NULL;
	if (ready(st, cfg, d, &c, &t, &token, &credentials, r) != 0)
		return;
	CURL *h = curl_easy_init();
	struct curl_slist *headers = NULL, *pin = NULL;
	int bad = headers_for(&c, d, &t, token, credentials, &headers, &pin);
	if (h == NULL || bad)
		set(r, O_RETRY, "out of memory preparing the POST");
	else
		perform(h, c.url, d, headers, pin, cfg->push_allow_private, timeout_ms, r);
	curl_slist_free_all(headers);
	curl_slist_free_all(pin);
	if (h != NULL)
		curl_easy_cleanup(h);
	th_push_target_free(&t);
	th_push_config_free(&c);
}

/* ---- the loop ----------------------------------------------------------------------------- */

/* What step's transaction needs (step_part; the caller owns every pointer). */
struct step_arg {
	const struct th_config *cfg;
	const struct result *r;
	int claim;
	int timeout_ms;
	struct th_push_delivery **d;
	size_t *n;
};

static th_err step_part(struct th_store *st, void *arg, struct th_error *e)
{
	struct step_arg *a = arg;
	const struct result *r = a->r;
	th_err rc = TH_OK;
	if (r->kind != O_NONE) {
		const struct th_push_backoff b = {
		    .base_ms = a->cfg->push_retry_base_ms,
		    .max_ms = a->cfg->push_retry_max_ms,
		    .max_attempts = a->cfg->push_max_attempts,
		};
		int dead = 0;
		if (r->kind == O_DELIVERED)
			rc = th_store_push_delivered(st, r->id, e);
		else if (r->kind == O_DEAD)
			rc = th_store_push_dead(st, r->id, r->error, e);
		else
			rc = th_store_push_retry(st, r->id, th_now_ms(), r->error, &b, &dead, e);
		if (r->kind != O_DELIVERED)
			th_log(TH_LOG_WARN, "push delivery %" PRId64 " %s: %s", r->id,
			       r->kind == O_DEAD || dead ? "is dead" : "will be retried", r->error);
		/* Gone: its config was deleted meanwhile. */
		if (rc == TH_ENOTFOUND)
			rc = TH_OK;
	}
	if (rc == TH_OK && a->claim)
		rc = th_store_push_claim_due(st, th_now_ms(), a->timeout_ms + LEASE_MARGIN_MS, 1,
		                             a->d, a->n, e);
	return rc;
}

/* Records r (if any) and, when claim is set, claims the next due row, in one short
 * transaction. Returns -1 when the database failed (stop for now). */
static int step(struct th_store *st, const struct th_config *cfg, const struct result *r, int claim,
                int timeout_ms, struct th_push_delivery **d, size_t *n)
{
	struct th_error e;
	th_error_clear(&e);
	*d = NULL;
	*n = 0;
	struct step_arg a = {cfg, r, claim, timeout_ms, d, n};
	if (th_store_write(st, step_part, &a, &e) != TH_OK) {
		th_push_deliveries_free(*d, *n);
		*d = NULL;
		*n = 0;
		th_log(TH_LOG_ERROR, "push deliveries: %s", e.msg);
		return -1;
	}
	return 0;
}

static int run(struct th_store *st, const struct th_config *cfg, int64_t deadline)
{
	int delivered = 0;
	struct result r = {.kind = O_NONE};
	int timeout = cfg->push_timeout_ms;
	int floor = timeout < MIN_POST_MS ? timeout : MIN_POST_MS;
	for (;;) {
		int64_t left = deadline - th_mono_ms();
		int more = left >= floor;
		if (!more && r.kind == O_NONE)
			break;
		int t = left < timeout ? (int)(left > 0 ? left : 1) : timeout;
		struct th_push_delivery *d;
		size_t n;
		int failed = step(st, cfg, &r, more, t, &d, &n);
		if (r.kind == O_DELIVERED && !failed)
			delivered++;
		r.kind = O_NONE;
		if (failed || !more || n == 0) {
			th_push_deliveries_free(d, n);
			break;
		}
		post(st, cfg, &d[0], t, &r);
		th_push_deliveries_free(d, n);
	}
	return delivered;
}

/* Cut-offs of the pruning: delivered rows, dead letters (RET-4). */
struct prune_arg {
	int64_t delivered_before, dead_before;
};

static th_err prune_part(struct th_store *st, void *arg, struct th_error *e)
{
	const struct prune_arg *a = arg;
	return th_store_push_prune(st, a->delivered_before, a->dead_before, NULL, e);
}

void th_push_prune_cutoffs(const struct th_config *cfg, int64_t now_ms, int64_t *delivered_before,
                           int64_t *dead_before)
{
	*delivered_before = now_ms - (int64_t)cfg->push_keep_hours * 3600000;
	/* off: no dead letter is older than time 0 */
	*dead_before = cfg->retain_dead_letters_ms > 0 ? now_ms - cfg->retain_dead_letters_ms : 0;
}

static void prune(struct th_store *st, const struct th_config *cfg)
{
	static int64_t last;
	int64_t now = th_mono_ms();
	if (last != 0 && now - last < PRUNE_EVERY_MS)
		return;
	last = now;
	struct th_error e;
	th_error_clear(&e);
	struct prune_arg a;
	th_push_prune_cutoffs(cfg, th_now_ms(), &a.delivered_before, &a.dead_before);
	if (th_store_write(st, prune_part, &a, &e) != TH_OK)
		th_log(TH_LOG_ERROR, "pruning push deliveries: %s", e.msg);
}

/* The lock file beside the database, or -1 (then this worker sends without it). */
static int lock_open(const char *db_path)
{
	if (db_path == NULL)
		return -1;
	struct th_buf p;
	th_buf_init(&p);
	th_buf_printf(&p, "%s.push-lock", db_path);
	int fd = p.oom ? -1 : open(p.data, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	th_buf_free(&p);
	return fd;
}

static void mark(int fd)
{
	if (pwrite(fd, "1", 1, 0) != 1) {
		/* Without the mark the rows wait for the next request; nothing is lost. */
	}
}

static int marked(int fd)
{
	struct stat s;
	return fstat(fd, &s) == 0 && s.st_size > 0;
}

/* How often a worker looks, after a request, for deliveries it did not queue itself. */
#define PUSH_POLL_MS 250

int th_push_after_request(struct th_store *st, const struct th_config *cfg, int64_t *next_poll_ms,
                          int budget_ms)
{
	/* Deliveries this worker just queued go out now; those other workers queued, or
	 * retries coming due, are looked for at most every 250 ms (a read after every
	 * request cost a tenth of a GetTask), and by `tiny-harness push` from cron. */
	int64_t now = th_mono_ms();
	if (th_store_push_take_queued(st) == 0 && now < *next_poll_ms)
		return 0;
	*next_poll_ms = now + PUSH_POLL_MS;
	return th_push_deliver_due(st, cfg, budget_ms);
}

int th_push_deliver_due(struct th_store *st, const struct th_config *cfg, int budget_ms)
{
	if (st == NULL || cfg == NULL || budget_ms <= 0)
		return 0;
	/* Most looks find nothing to send: one indexed read, no lock, no write. */
	if (!th_store_push_any_due(st, th_now_ms()))
		return 0;
	int64_t deadline = th_mono_ms() + budget_ms;
	int fd = lock_open(cfg->db_path);
	int delivered = 0, ran = 0;
	for (;;) {
		if (fd >= 0) {
			mark(fd);
			if (flock(fd, LOCK_EX | LOCK_NB) != 0)
				break; /* the holder sees the mark and runs again */
			if (ftruncate(fd, 0) != 0) {
				/* A stale mark only costs the holder one more empty claim. */
			}
		}
		delivered += run(st, cfg, deadline);
		ran = 1;
		if (fd < 0)
			break;
		flock(fd, LOCK_UN);
		if (!marked(fd) || th_mono_ms() >= deadline)
			break;
	}
	if (ran)
		prune(st, cfg);
	if (fd >= 0)
		close(fd);
	return delivered;
}
