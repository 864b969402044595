/* SPDX-License-Identifier: Apache-2.0 */
/* metrics.c — observability at the binding (decision-070): the end of every request, counted
 * into the site's shared counters (util/metrics.c, OBS-2) and written as one key=value line
 * (OBS-1), and <base>metrics, those counters and the site's gauges in the Prometheus text
 * format for an authenticated reader (OBS-3). Called by the router; calls request.c
 * (identity, senders), errors.c (error bodies) and method.c (GET or HEAD). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bind/bind_int.h"
#include "config/settings.h"
#include "util/log.h"
#include "util/metrics.h"

static const char *const mx_methods[TH_BIND_MX_COUNT - TH_OP_COUNT] = {
    "AgentCard", "WebApp", "Metrics", "unknown", "PushNotificationDeadLetters",
};

const char *th_bind_mx_method_name(int m)
{
	if (m >= 0 && m < TH_OP_COUNT)
		return th_op_method((enum th_op)m);
	if (m >= TH_OP_COUNT && m < TH_BIND_MX_COUNT)
		return mx_methods[m - TH_OP_COUNT];
	return "unknown";
}

/* One label per th_err, in its order: the A2A error's name where it has one. */
static const char *const outcomes[] = {
    [TH_OK] = "ok",
    [TH_ENOMEM] = "out_of_memory",
    [TH_EPARSE] = "parse_error",
    [TH_EINVALREQ] = "invalid_request",
    [TH_ENOMETHOD] = "method_not_found",
    [TH_EMETHOD] = "http_method_not_allowed",
    [TH_EINVAL] = "invalid_params",
    [TH_ENOTFOUND] = "task_not_found",
    [TH_ENOTCANCELABLE] = "task_not_cancelable",
    [TH_EPUSHUNSUPPORTED] = "push_notification_not_supported",
    [TH_EUNSUPPORTED] = "unsupported_operation",
    [TH_ECONTENTTYPE] = "content_type_not_supported",
    [TH_EEXTCARD] = "extended_agent_card_not_configured",
    [TH_EEXTREQUIRED] = "extension_support_required",
    [TH_EVERSION] = "version_not_supported",
    [TH_ETOOLARGE] = "payload_too_large",
    [TH_EBUSY] = "busy",
    [TH_EINTERNAL] = "internal",
    [TH_ELENGTH] = "length_required",
    [TH_EUNAVAILABLE] = "unavailable",
    [TH_EFORBIDDEN] = "forbidden",
    [TH_EUNAUTHENTICATED] = "unauthenticated",
    [TH_ETOOMANY] = "too_many_requests",
    [TH_EGENERATION] = "task_generation_mismatch",
};
#define NOUTCOMES ((int)(sizeof outcomes / sizeof outcomes[0]))
_Static_assert(NOUTCOMES == TH_ERR_COUNT, "every th_err has a label");
_Static_assert(NOUTCOMES <= TH_MX_OUTCOMES, "every th_err has a counter");
_Static_assert(TH_BIND_MX_COUNT <= TH_MX_METHODS, "every method has a counter");

const char *th_bind_mx_outcome_name(int outcome)
{
	return outcome >= 0 && outcome < NOUTCOMES && outcomes[outcome] != NULL ? outcomes[outcome]
	                                                                        : "internal";
}

/* ---- the log line (OBS-1) ----------------------------------------------------- */

struct line {
	char *p;
	size_t n, len;
};

static void put(struct line *l, const char *s, size_t k)
{
	if (l->len + k >= l->n)
		k = l->len + 1 < l->n ? l->n - l->len - 1 : 0;
	memcpy(l->p + l->len, s, k);
	l->len += k;
	l->p[l->len] = '\0';
}

/* Appends v's bytes for a quoted value: '"' and '\' after a '\', control characters (C0,
 * DEL, UTF-8 C1) as \xHH (SEC-6, as th_log_escape writes them). */
static void put_quoted(struct line *l, const char *v)
{
	static const char hex[] = "0123456789abcdef";
	for (const unsigned char *c = (const unsigned char *)v; *c; c++) {
		size_t k = th_log_control_len((const char *)c);
		if (k > 0) {
			c += k - 1;
			char e[4] = {'\\', 'x', hex[*c >> 4], hex[*c & 15]};
			put(l, e, 4);
		} else {
			if (*c == '"' || *c == '\\')
				put(l, "\\", 1);
			put(l, (const char *)c, 1);
		}
	}
}

/* " key=value": "-" for none; quoted when the value holds a space, '"', '=', '\', a control
 * character, or is "-" itself. */
static void put_kv(struct line *l, const char *key, const char *v)
{
	put(l, " ", 1);
	put(l, key, strlen(key));
	put(l, "=", 1);
	if (v == NULL || *v == '\0') {
		put(l, "-", 1);
		return;
	}
	int quote = v[0] == '-' && v[1] == '\0';
	for (const unsigned char *c = (const unsigned char *)v; !quote && *c; c++)
		quote = *c == ' ' || *c == '"' || *c == '=' || *c == '\\' ||
		        th_log_control_len((const char *)c) > 0;
	if (!quote) {
		put(l, v, strlen(v));
		return;
	}
	put(l, "\"", 1);
	put_quoted(l, v);
	put(l, "\"", 1);
}

/* v in decimal; with frac, v / 1000 with three decimals. */
static void put_num(struct line *l, const char *key, int64_t v, int frac)
{
	char d[32];
	size_t n = 0;
	uint64_t u = v < 0 ? 0 : (uint64_t)v;
	for (int i = 0; n == 0 || u > 0 || (frac && i < 5); i++) {
		if (frac && i == 3)
			d[n++] = '.';
		else {
			d[n++] = (char)('0' + u % 10);
			u /= 10;
		}
	}
	char r[32];
	for (size_t i = 0; i < n; i++)
		r[i] = d[n - 1 - i];
	r[n] = '\0';
	put_kv(l, key, r);
}

void th_bind_log_line(char *out, size_t n, const char *method, const char *binding,
                      const char *task, const char *participant, int status, const char *outcome,
                      int64_t duration_us)
{
	if (n == 0)
		return;
	struct line l = {out, n, 0};
	out[0] = '\0';
	put(&l, "request", 7);
	put_kv(&l, "method", method);
	put_kv(&l, "binding", binding);
	put_kv(&l, "task", task);
	put_kv(&l, "participant", participant);
	put_num(&l, "status", status, 0);
	put_kv(&l, "outcome", outcome);
	put_num(&l, "ms", duration_us, 1);
}

void th_bind_request_done(struct th_bind_ctx *ctx, int64_t start_us)
{
	const struct th_config *cfg = ctx->app != NULL ? ctx->app->cfg : NULL;
	if (cfg == NULL || ctx->handed)
		return;
	int64_t us = th_bind_now_us() - start_us;
	/* The error it answered: every error answer (th_bind_rest_error, the JSON-RPC
	 * error, th_bind_send_oom, a stream's refusal) records it in ctx->outcome. */
	th_err outcome = ctx->outcome;
	th_mx_request(ctx->mx_method, (int)outcome, us); /* nothing when metrics = 0 */
	if (!cfg->request_log)
		return;
	/* The task the request named (or a SendMessage made); the line is escaped here and
	 * written without th_log's formatting passes (OBS-4). */
	char line[1024];
	th_bind_log_line(line, sizeof line, th_bind_mx_method_name(ctx->mx_method), ctx->binding,
	                 th_log_ctx_self()->task, ctx->call.participant, ctx->status,
	                 th_bind_mx_outcome_name(outcome), us);
	th_log_write(TH_LOG_INFO, line, strlen(line));
}

/* ---- the endpoint (OBS-2, OBS-3) ---------------------------------------------- */

/* 1 when list (names separated by spaces or commas) names who. */
static int listed(const char *list, const char *who)
{
	size_t n = strlen(who);
	for (const char *p = list; *p;) {
		p += strspn(p, " ,\t");
		size_t k = strcspn(p, " ,\t");
		if (k == n && k > 0 && memcmp(p, who, n) == 0)
			return 1;
		p += k;
	}
	return 0;
}

th_err th_bind_metrics_reader(struct th_bind_ctx *ctx, struct th_error *e)
{
	const struct th_config *cfg = ctx->app->cfg;
	if (cfg->identity == TH_IDENTITY_HEADER)
		return th_error_set(
		    e, TH_EFORBIDDEN,
		    "the metrics are for an authenticated participant, and identity = "
		    "header authenticates nobody (OBS-3); set identity = remote_user "
		    "or bearer to read them");
	th_err rc = th_bind_identify(ctx, e);
	if (rc != TH_OK)
		return rc;
	if (ctx->call.participant == NULL)
		return th_error_set(
		    e, TH_EUNAUTHENTICATED,
		    "the metrics need an authenticated caller (OBS-3): the web server "
		    "named no REMOTE_USER");
	if (cfg->metrics_readers != NULL && cfg->metrics_readers[0] != '\0' &&
	    !listed(cfg->metrics_readers, ctx->call.participant)) {
		char q[80];
		th_bind_quote(q, sizeof q, ctx->call.participant);
		return th_error_set(
		    e, TH_EFORBIDDEN,
		    "participant %s may not read the metrics: metrics_readers names "
		    "who may (OBS-3)",
		    q);
	}
	return TH_OK;
}

static void seconds(char *out, size_t n, uint64_t us)
{
	snprintf(out, n, "%llu.%06llu", (unsigned long long)(us / 1000000),
	         (unsigned long long)(us % 1000000));
}

static void render_requests(struct th_buf *b, const struct th_mx_snapshot *s)
{
	th_buf_puts(b, "# HELP tiny_harness_requests_total Requests answered, by A2A method (or "
	               "AgentCard, WebApp, Metrics, unknown, PushNotificationDeadLetters) and "
	               "outcome (ok or the error).\n"
	               "# TYPE tiny_harness_requests_total counter\n");
	for (int m = 0; m < TH_BIND_MX_COUNT; m++)
		for (int o = 0; o < NOUTCOMES; o++)
			if (s->d.requests[m][o] > 0)
				th_buf_printf(
				    b,
				    "tiny_harness_requests_total{method=\"%s\",outcome=\"%s\"} "
				    "%llu\n",
				    th_bind_mx_method_name(m), outcomes[o],
				    (unsigned long long)s->d.requests[m][o]);
	th_buf_puts(b, "# HELP tiny_harness_request_duration_seconds Time from a request's "
	               "arrival at the worker to its answer (a parked stream: to its hand-over).\n"
	               "# TYPE tiny_harness_request_duration_seconds histogram\n");
	for (int m = 0; m < TH_BIND_MX_COUNT; m++) {
		uint64_t cum = 0;
		for (int i = 0; i <= TH_MX_BOUNDS; i++)
			cum += s->d.latency[m][i];
		if (cum == 0)
			continue;
		const char *name = th_bind_mx_method_name(m);
		cum = 0;
		for (int i = 0; i <= TH_MX_BOUNDS; i++) {
			cum += s->d.latency[m][i];
			char le[32];
			if (i < TH_MX_BOUNDS)
				snprintf(le, sizeof le, "%g", (double)th_mx_bound_us(i) / 1e6);
			else
				snprintf(le, sizeof le, "+Inf");
			th_buf_printf(b,
			              "tiny_harness_request_duration_seconds_bucket{method=\"%s\","
			              "le=\"%s\"} %llu\n",
			              name, le, (unsigned long long)cum);
		}
		char sum[48];
		seconds(sum, sizeof sum, s->d.latency_sum_us[m]);
		/* The count is the buckets' total, so that it always equals +Inf's. */
		th_buf_printf(b,
		              "tiny_harness_request_duration_seconds_sum{method=\"%s\"} %s\n"
		              "tiny_harness_request_duration_seconds_count{method=\"%s\"} %llu\n",
		              name, sum, name, (unsigned long long)cum);
	}
}

void th_bind_metrics_render(struct th_buf *b, const struct th_mx_snapshot *s,
                            const struct th_site_gauges *g)
{
	render_requests(b, s);
	th_buf_printf(b,
	              "# HELP tiny_harness_turns_total Turns run to their end, by outcome.\n"
	              "# TYPE tiny_harness_turns_total counter\n"
	              "tiny_harness_turns_total{outcome=\"done\"} %llu\n"
	              "tiny_harness_turns_total{outcome=\"failed\"} %llu\n"
	              "# HELP tiny_harness_open_streams Streams open now in running worker "
	              "processes.\n"
	              "# TYPE tiny_harness_open_streams gauge\n"
	              "tiny_harness_open_streams %lld\n",
	              (unsigned long long)s->d.turns[0], (unsigned long long)s->d.turns[1],
	              (long long)s->open_streams);
	if (g->db_bytes >= 0)
		th_buf_printf(
		    b,
		    "# HELP tiny_harness_database_bytes Size of the SQLite database "
		    "file.\n"
		    "# TYPE tiny_harness_database_bytes gauge\n"
		    "tiny_harness_database_bytes %lld\n"
		    "# HELP tiny_harness_wal_bytes Size of its write-ahead log (0: none).\n"
		    "# TYPE tiny_harness_wal_bytes gauge\n"
		    "tiny_harness_wal_bytes %lld\n",
		    (long long)g->db_bytes, (long long)g->wal_bytes);
	th_buf_printf(b,
	              "# HELP tiny_harness_push_backlog Push deliveries not delivered yet "
	              "(pending or being sent).\n"
	              "# TYPE tiny_harness_push_backlog gauge\n"
	              "tiny_harness_push_backlog %lld\n"
	              "# HELP tiny_harness_push_dead Push deliveries that gave up, kept "
	              "push_keep_hours.\n"
	              "# TYPE tiny_harness_push_dead gauge\n"
	              "tiny_harness_push_dead %lld\n",
	              (long long)g->push_backlog, (long long)g->push_dead);
}

void th_bind_metrics(struct th_bind_ctx *ctx)
{
	struct th_error e;
	th_error_clear(&e);
	ctx->api = 1;
	if (!ctx->app->cfg->metrics) {
		th_error_set(&e, TH_ENOMETHOD,
		             "no route metrics: metrics = 0 turns it off (OBS-2)");
		th_bind_rest_error(ctx, 404, &e);
		return;
	}
	if (!th_bind_get_or_head(ctx, "the metrics"))
		return;
	if (th_bind_metrics_reader(ctx, &e) != TH_OK) {
		th_bind_rest_error(ctx, 0, &e);
		return;
	}
	struct th_mx_snapshot *s = malloc(sizeof *s); /* free below */
	struct th_site_gauges g;
	if (s == NULL) {
		th_bind_send_oom(ctx);
		return;
	}
	if (th_mx_snapshot(s, &e) != TH_OK) {
		th_error_set(&e, TH_EUNAVAILABLE,
		             "this worker counts no metrics: metrics_file could not be used, or is "
		             "unset with a PostgreSQL db (the error log says which)");
		free(s);
		th_bind_rest_error(ctx, 0, &e);
		return;
	}
	if (th_service_site_gauges(ctx->app, &g, &e) != TH_OK) {
		free(s);
		th_bind_rest_error(ctx, 0, &e);
		return;
	}
	struct th_buf b;
	th_buf_init(&b);
	th_bind_metrics_render(&b, s, &g);
	free(s);
	if (b.oom)
		th_bind_send_oom(ctx);
	else
		th_bind_send(ctx, 200, "text/plain; version=0.0.4; charset=utf-8", b.data, b.len);
	th_buf_free(&b);
}
