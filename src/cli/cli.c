/* SPDX-License-Identifier: Apache-2.0 */
#include "cli/cli.h"

#include "config.h"

#include <curl/curl.h>
#include <errno.h>
#include <limits.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "app.h"
#include "worker/process.h"
#include "config/settings.h"
#include "config/layout.h"
#include "turn/commands.h"
#include "ops/ops.h"
#include "turn/turn.h"
#include "domain/events.h"
#include "domain/view.h"
#include "a2a/a2a.h"
#include "push/push.h"
#include "util/ids.h"
#include "service/card.h"
#include "service/cardsig.h"
#include "store/store.h"
#include "util/buf.h"
#include "util/jsonx.h"
#include "util/log.h"
#include "util/text.h"

static void print_usage(FILE *f)
{
	fputs(
	    "usage: tiny-harness                       (as a FastCGI or CGI program under a web "
	    "server)\n"
	    "       tiny-harness card [--jwks]         print the agent card (signed when\n"
	    "                                          card_signing_key is set), or the\n"
	    "                                          public JWKS of its signing key\n"
	    "       tiny-harness migrate               create or upgrade the database\n"
	    "       tiny-harness tasks [list [--state STATE] | show TASK |\n"
	    "                           events TASK [--after SEQ]]\n"
	    "                                          what the database holds\n"
	    "       tiny-harness keys add PARTICIPANT [--name N] | list | revoke ID|NAME\n"
	    "                                          API keys for identity = bearer (SEC-1)\n"
	    "       tiny-harness recover               finish or fail turns whose worker died\n"
	    "       tiny-harness push                  deliver due push notifications now\n"
	    "       tiny-harness purge [--older-than AGE] [--vacuum]\n"
	    "                                          delete what retain_ended, retain_stuck,\n"
	    "                                          retain_dead_letters say has expired\n"
	    "                                          (AGE instead of retain_ended: 30d, 12h),\n"
	    "                                          then shrink the database and its WAL\n"
	    "       tiny-harness complete TASK --as ID [--url URL] [--credentials FILE]\n"
	    "                                          complete a task with the control envelope\n"
	    "       tiny-harness serve [--port N] [--procs N]\n"
	    "                                          run lighttpd with conf/lighttpd.conf in the "
	    "foreground,\n"
	    "                                          its state in ./var/serve-PORT\n"
	    "       tiny-harness --help                this, and every configuration key\n"
	    "       tiny-harness --version             the program's version\n"
	    "Configuration: $TINY_HARNESS_CONF, else the file below, overridden by "
	    "TINY_HARNESS_* variables.\n",
	    f);
	fprintf(f, "Configuration file: %s%s\n", th_layout_conf_file(),
	        th_layout_installed() ? " (installed layout)"
	                              : " (relative to the working directory)");
}

void th_cli_usage(void)
{
	print_usage(stderr);
}

/* A command line that cannot run: says what was wrong, points at --help, exit status 2. */
static int bad_usage(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int bad_usage(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fputs("tiny-harness: ", stderr);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputs("\nTry 'tiny-harness --help'.\n", stderr);
	return 2;
}

static int cmd_version(void)
{
	printf("%s %s\nLicensed under the Apache License, Version 2.0.\n", PACKAGE_NAME,
	       PACKAGE_VERSION);
	return 0;
}

/* The key list comes from the configuration table itself, so it cannot fall behind. */
static int cmd_help(void)
{
	print_usage(stdout);
	puts("\nConfiguration keys (key = default, accepted range; TINY_HARNESS_<KEY> overrides):");
	const struct th_config_doc *k;
	for (size_t i = 0; (k = th_config_key(i)) != NULL; i++) {
		const char *def = th_config_default(k);
		printf("  %s = %s", k->name, def ? def : "(no default)");
		if (k->range != NULL)
			printf("  (%s)", k->range);
		printf("\n      %s\n", k->doc);
	}
	return 0;
}

/* The card as a web server would serve it, signed when card_signing_key is set
 * (pretty-printed: the signature covers the canonical form, not these bytes); or, with
 * --jwks, the public key set a verifier needs (CARD-SIG-2). Exits 1 naming the key
 * file's trouble: the check an operator runs after setting the key. */
static int cmd_card(int argc, char **argv)
{
	int jwks = argc > 2 && strcmp(argv[2], "--jwks") == 0;
	if (argc > 2 + jwks)
		return bad_usage("card takes no arguments but --jwks (got '%s')", argv[2 + jwks]);
	struct th_config *cfg = th_cli_load_config();
	if (cfg == NULL)
		return 1;
	struct th_registry *reg = NULL;
	struct th_error e;
	th_error_clear(&e);
	int status = 1;
	if (jwks) {
		char *set = th_card_jwks(cfg, &e); /* free (below) */
		if (set != NULL)
			puts(set);
		else
			fprintf(stderr, "tiny-harness: %s\n", e.msg);
		status = set != NULL ? 0 : 1;
		free(set);
	} else if (th_registry_load(cfg->commands_dir, &reg, &e) != TH_OK) {
		fprintf(stderr, "tiny-harness: %s\n", e.msg);
	} else {
		json_object *cmds = th_registry_card_params(reg);
		json_object *card = cmds ? th_card_build(cfg, cmds) : NULL;
		char *text = NULL, etag[TH_CARD_ETAG_MAX], cause[TH_ERRMSG_MAX] = "";
		if (card != NULL &&
		    th_card_serve(card, cfg, &text, etag, cause, sizeof cause, &e) == TH_OK) {
			puts(json_object_to_json_string_ext(
			    card, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED |
			              JSON_C_TO_STRING_NOSLASHESCAPE));
			status = 0;
		} else if (card != NULL) {
			fprintf(stderr, "tiny-harness: %s\n", cause[0] != '\0' ? cause : e.msg);
		}
		free(text);
		json_object_put(card);
		json_object_put(cmds);
	}
	th_registry_free(reg);
	th_config_free(cfg);
	free(cfg);
	return status;
}

/* PKG-3: a new database belongs to whoever ran migrate, and the user the web server runs
 * the program as must write it and its directory (SQLite adds -wal and -shm files there):
 * say whose it is, and warn when it is root's (no web server runs programs as root). */
static void report_owner(const char *db)
{
	struct stat st;
	if (stat(db, &st) != 0)
		return;
	const char *slash = strrchr(db, '/');
	const char *dir = slash == NULL ? "." : db;
	int dirlen = slash == NULL || slash == db ? 1 : (int)(slash - db);
	const struct passwd *pw = getpwuid(st.st_uid);
	printf("%s: owned by %s (uid %u); the user the web server runs tiny-harness as must be "
	       "able to write it and %.*s\n",
	       db, pw ? pw->pw_name : "?", (unsigned)st.st_uid, dirlen, dir);
	if (st.st_uid == 0)
		fprintf(stderr,
		        "tiny-harness: warning: %s belongs to root, but web servers do not run "
		        "programs as root: run migrate as the user yours runs tiny-harness as, or "
		        "chown -R USER %.*s\n",
		        db, dirlen, dir);
}

static int cmd_migrate(void)
{
	struct th_config *cfg = th_cli_load_config();
	if (cfg == NULL)
		return 1;
	struct th_app app;
	struct th_error e;
	th_error_clear(&e);
	if (th_app_open(&app, cfg, 0, &e) != TH_OK) {
		fprintf(stderr, "tiny-harness: %s\n", e.msg);
		return 1;
	}
	printf("%s: schema version %d\n", app.cfg->db_path, th_store_schema_version());
	report_owner(app.cfg->db_path);
	th_app_close(&app);
	return 0;
}

static size_t collect(char *data, size_t size, size_t n, void *arg)
{
	struct th_buf *b = arg;
	return th_buf_append(b, data, size * n) == 0 ? size * n : 0;
}

/* CTL-9: builds th_complete_message and sends it as a JSON-RPC SendMessage. */
/* CTL-9: the JSON-RPC SendMessage that carries th_complete_message (json_object_put), or NULL
 * when out of memory. */
static json_object *complete_request(const char *task, const char *as)
{
	json_object *req = json_object_new_object();
	json_object *params = json_object_new_object();
	int bad = th_json_put(req, "jsonrpc", json_object_new_string("2.0"));
	bad |= th_json_put(req, "id", json_object_new_int(1));
	bad |= th_json_put(req, "method", json_object_new_string("SendMessage"));
	bad |= th_json_put(params, "message", th_complete_message(task, as));
	bad |= th_json_put(req, "params", params);
	if (bad) {
		json_object_put(req);
		return NULL; /* decision-026: out of memory */
	}
	return req;
}

/* Prints the task the server answered (exit status 0), or its refusal in its own words
 * on stderr (1). */
static int report_answer(const char *url, const struct th_buf *body)
{
	json_object *resp = body->data ? json_tokener_parse(body->data) : NULL;
	json_object *err = NULL, *result = NULL;
	int status = 1;
	if (resp != NULL && json_object_object_get_ex(resp, "error", &err)) {
		fprintf(stderr, "tiny-harness: refused: %s\n",
		        th_json_str(err, "message") ? th_json_str(err, "message") : "?");
	} else if (resp != NULL && json_object_object_get_ex(resp, "result", &result)) {
		puts(json_object_to_json_string_ext(result, JSON_C_TO_STRING_PRETTY |
		                                                JSON_C_TO_STRING_NOSLASHESCAPE));
		status = 0;
	} else {
		fprintf(stderr, "tiny-harness: %s answered something that is not JSON-RPC\n", url);
	}
	json_object_put(resp);
	return status;
}

/* SEC-1: the first line of complete's --credentials file: NAME:PASSWORD (HTTP Basic, for
 * identity = remote_user behind a web server's login) or a bearer token (an API key or
 * a JWT, neither of which holds a ':'). A file keeps the secret off the command line,
 * where other users can read it. 0, or -1 with the reason printed. */
static int read_credentials(const char *path, char *out, size_t n)
{
	FILE *f = fopen(path, "r");
	if (f == NULL) {
		fprintf(stderr, "tiny-harness: complete: %s: %s\n", path, strerror(errno));
		return -1;
	}
	int ok = fgets(out, (int)n, f) != NULL;
	fclose(f);
	if (ok)
		out[strcspn(out, "\r\n")] = '\0';
	if (!ok || out[0] == '\0') {
		fprintf(stderr, "tiny-harness: complete: %s holds no credentials\n", path);
		return -1;
	}
	return 0;
}

/* POSTs req to url as `as` (with cred, a credentials line, when not NULL) and reports
 * the answer: the command's exit status. */
static int post_complete(const char *url, json_object *req, const char *as, const char *cred)
{
	struct th_buf body, hdr, bearer;
	th_buf_init(&body);
	th_buf_init(&hdr);
	th_buf_init(&bearer);
	th_buf_printf(&hdr, "X-Participant-Id: %s", as);
	int basic = cred != NULL && strchr(cred, ':') != NULL;
	if (cred != NULL && !basic)
		th_buf_printf(&bearer, "Authorization: Bearer %s", cred);
	int status = 1;
	CURL *c = curl_easy_init();
	struct curl_slist *h = NULL;
	h = curl_slist_append(h, "Content-Type: application/json");
	h = curl_slist_append(h, "A2A-Version: 1.0");
	h = curl_slist_append(h, hdr.data);
	if (bearer.len > 0)
		h = curl_slist_append(h, bearer.data);
	if (c != NULL && h != NULL && !hdr.oom && !bearer.oom) {
		curl_easy_setopt(c, CURLOPT_URL, url);
		curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
		if (basic) {
			curl_easy_setopt(c, CURLOPT_HTTPAUTH, (long)CURLAUTH_BASIC);
			curl_easy_setopt(c, CURLOPT_USERPWD, cred);
		}
		curl_easy_setopt(c, CURLOPT_POSTFIELDS, th_json_text(req));
		curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, collect);
		curl_easy_setopt(c, CURLOPT_WRITEDATA, &body);
		curl_easy_setopt(c, CURLOPT_TIMEOUT, 60L);
		CURLcode cc = curl_easy_perform(c);
		if (cc != CURLE_OK)
			fprintf(stderr, "tiny-harness: %s: %s\n", url, curl_easy_strerror(cc));
		else
			status = report_answer(url, &body);
	}
	curl_slist_free_all(h);
	if (c != NULL)
		curl_easy_cleanup(c);
	th_buf_free(&body);
	th_buf_free(&hdr);
	th_buf_free(&bearer);
	return status;
}

static int cmd_complete(int argc, char **argv)
{
	const char *task = NULL, *as = NULL, *url = NULL, *credfile = NULL;
	for (int i = 2; i < argc; i++) {
		if (strcmp(argv[i], "--as") == 0 && i + 1 < argc)
			as = argv[++i];
		else if (strcmp(argv[i], "--url") == 0 && i + 1 < argc)
			url = argv[++i];
		else if (strcmp(argv[i], "--credentials") == 0 && i + 1 < argc)
			credfile = argv[++i];
		else if (task == NULL && argv[i][0] != '-')
			task = argv[i];
		else if (strcmp(argv[i], "--as") == 0 || strcmp(argv[i], "--url") == 0 ||
		         strcmp(argv[i], "--credentials") == 0)
			return bad_usage("complete: %s needs a value", argv[i]);
		else
			return bad_usage("complete: unexpected argument '%s'", argv[i]);
	}
	if (task == NULL)
		return bad_usage("complete: name the task (tiny-harness complete TASK --as ID)");
	if (as == NULL)
		return bad_usage("complete: say who completes it with --as ID");
	char cred[1024];
	if (credfile != NULL && read_credentials(credfile, cred, sizeof cred) != 0)
		return 1;
	struct th_config *cfg = NULL;
	if (url == NULL) {
		if ((cfg = th_cli_load_config()) == NULL)
			return 1;
		url = cfg->base_url;
	}
	json_object *req = complete_request(task, as);
	int status = 1;
	if (req == NULL)
		fprintf(stderr, "tiny-harness: out of memory building the request\n");
	else
		status = post_complete(url, req, as, credfile != NULL ? cred : NULL);
	json_object_put(req);
	if (cfg != NULL) {
		th_config_free(cfg);
		free(cfg);
	}
	return status;
}

/* Task ids and names come from clients; an operator's terminal must not act on escape
 * codes in them (SEC-6), and a tab or newline in a name must not shift the columns. */
static void fputs_escaped(const char *s, const char *end)
{
	size_t n = strlen(s) * 4 + 1;
	char *out = malloc(n);
	if (out != NULL)
		th_log_escape(out, n, s);
	fputs(out != NULL ? out : "?", stdout);
	fputs(end, stdout);
	free(out); /* malloc'd above */
}

/* tasks events TASK [--after SEQ]: the task's event log as streams, resuming clients and
 * push deliveries get it (STREAM-3; stored with references, STORE-10), one event per line:
 * seq, kind and the StreamResponse, separated by tabs. */
static int cmd_task_events(int argc, char **argv)
{
	if (argc < 4 || argv[3][0] == '-')
		return bad_usage("tasks events: name one task (tiny-harness tasks events TASK "
		                 "[--after SEQ])");
	const char *task = argv[3];
	long long after = 0;
	for (int i = 4; i < argc; i++) {
		char *end = NULL;
		if (strcmp(argv[i], "--after") == 0 && i + 1 < argc &&
		    (after = strtoll(argv[i + 1], &end, 10)) >= 0 && end != argv[i + 1] &&
		    *end == '\0') {
			i++;
			continue;
		}
		if (strcmp(argv[i], "--after") == 0)
			return bad_usage("tasks events: --after needs an event number (0 or more)");
		return bad_usage("tasks events: unexpected argument '%s'", argv[i]);
	}
	struct th_app app;
	if (th_cli_open_app(&app) != 0)
		return 1;
	struct th_error e;
	th_error_clear(&e);
	int status = 0;
	struct th_task_row row;
	if (th_store_task_get(app.store, task, &row, &e) != TH_OK) {
		fprintf(stderr, "tiny-harness: %s\n", e.msg);
		th_app_close(&app);
		return 1;
	}
	th_task_row_free(&row);
	for (;;) {
		struct th_event *ev = NULL;
		size_t n = 0;
		if (th_events_since(app.store, task, after, 100, &ev, &n, &e) != TH_OK) {
			fprintf(stderr, "tiny-harness: %s\n", e.msg);
			status = 1;
			break;
		}
		for (size_t i = 0; i < n; i++) {
			printf("%lld\t", (long long)ev[i].seq);
			fputs_escaped(ev[i].kind, "\t");
			printf("%s\n", ev[i].json);
			after = ev[i].seq;
		}
		th_events_free(ev, n);
		if (n < 100)
			break;
	}
	th_app_close(&app);
	return status;
}

static int cmd_tasks(int argc, char **argv)
{
	const char *sub = argc > 2 ? argv[2] : "list";
	int state = 0;
	const char *show = NULL;
	if (strcmp(sub, "list") == 0) {
		for (int i = 3; i < argc; i++) {
			if (strcmp(argv[i], "--state") == 0 && i + 1 < argc &&
			    (state = th_state_from_text(argv[i + 1])) > 0) {
				i++;
				continue;
			}
			if (strcmp(argv[i], "--state") == 0 && i + 1 < argc)
				return bad_usage("tasks list: unknown state '%s' (e.g. "
				                 "TASK_STATE_INPUT_REQUIRED or input_required)",
				                 argv[i + 1]);
			if (strcmp(argv[i], "--state") == 0)
				return bad_usage("tasks list: --state needs a state");
			return bad_usage("tasks list: unexpected argument '%s'", argv[i]);
		}
	} else if (strcmp(sub, "show") == 0 && argc == 4) {
		show = argv[3];
	} else if (strcmp(sub, "show") == 0) {
		return bad_usage("tasks show: name one task (tiny-harness tasks show TASK)");
	} else if (strcmp(sub, "events") == 0) {
		return cmd_task_events(argc, argv);
	} else {
		return bad_usage("tasks: unknown sub-command '%s' (list, show or events)", sub);
	}
	struct th_app app;
	if (th_cli_open_app(&app) != 0)
		return 1;
	struct th_error e;
	th_error_clear(&e);
	int status = 0;
	if (show != NULL) {
		json_object *task = NULL;
		if (th_view_task_by_id(app.store, show, NULL, -1, 1, &task, &e) != TH_OK) {
			fprintf(stderr, "tiny-harness: %s\n", e.msg);
			status = 1;
		} else {
			puts(json_object_to_json_string_ext(
			    task, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE));
		}
		json_object_put(task);
	} else {
		struct th_task_brief *rows = NULL;
		size_t n = 0;
		if (th_store_tasks_overview(app.store, state, 0, &rows, &n, &e) != TH_OK) {
			fprintf(stderr, "tiny-harness: %s\n", e.msg);
			status = 1;
		}
		for (size_t i = 0; i < n; i++) {
			char ts[TH_TS_LEN + 1];
			th_ts_format(rows[i].updated_ms, ts);
			fputs_escaped(rows[i].id, "\t");
			printf("%s\t", th_state_name((enum th_state)rows[i].state));
			fputs_escaped(rows[i].sub_state ? rows[i].sub_state : "-", "\t");
			printf("%s\t", ts);
			fputs_escaped(rows[i].name, "\n");
		}
		th_task_briefs_free(rows, n);
	}
	th_app_close(&app);
	return status;
}

static int cmd_recover(void)
{
	struct th_app app;
	if (th_cli_open_app(&app) != 0)
		return 1;
	struct th_error e;
	th_error_clear(&e);
	int n = 0;
	struct th_turn_ctx tc = th_app_turns(&app);
	th_err rc = th_turn_recover(&tc, NULL, &n, &e);
	th_app_run_pending(&app);
	if (rc != TH_OK)
		fprintf(stderr, "tiny-harness: %s\n", e.msg);
	else
		printf("recovered %d turn%s\n", n, n == 1 ? "" : "s");
	th_app_close(&app);
	return rc == TH_OK ? 0 : 1;
}

/* PUSH-2: sends the due push deliveries now (from cron, or after a webhook is fixed). */
static int cmd_push(void)
{
	struct th_app app;
	if (th_cli_open_app(&app) != 0)
		return 1;
	int n = th_push_deliver_due(app.store, app.cfg, 60000);
	printf("delivered %d push notification%s\n", n, n == 1 ? "" : "s");
	th_app_close(&app);
	return 0;
}

/* One batch of the purge (cmd_purge): up to PURGE_BATCH ended tasks older than before,
 * or the stuck tasks among the next STUCK_WINDOW task numbers after cursor. Batches keep
 * each write transaction short next to live workers (RET-1, RET-2). */
#define PURGE_BATCH 200
#define STUCK_WINDOW 1000
struct purge_arg {
	int64_t before;
	int64_t cursor; /* stuck: the last task number looked at; 0 before the first */
	int64_t upto;   /* stuck: this window's last task number, 0 when none was left */
	int64_t n;      /* tasks deleted */
};

static th_err purge_part(struct th_store *st, void *arg, struct th_error *e)
{
	struct purge_arg *a = arg;
	return th_store_purge(st, a->before, PURGE_BATCH, &a->n, e);
}

static th_err purge_stuck_part(struct th_store *st, void *arg, struct th_error *e)
{
	struct purge_arg *a = arg;
	a->n = 0;
	th_err rc = th_store_task_window(st, a->cursor, STUCK_WINDOW, &a->upto, e);
	if (rc == TH_OK && a->upto > 0)
		rc = th_store_purge_stuck(st, a->before, a->cursor, a->upto, &a->n, e);
	return rc;
}

struct prune_arg {
	int64_t delivered_before, dead_before, n;
};

static th_err prune_part(struct th_store *st, void *arg, struct th_error *e)
{
	struct prune_arg *a = arg;
	return th_store_push_prune(st, a->delivered_before, a->dead_before, &a->n, e);
}

static th_err purge_ended(struct th_app *app, int64_t age, int64_t *total, struct th_error *e)
{
	th_err rc;
	int64_t n;
	do {
		struct purge_arg a = {.before = th_now_ms() - age};
		rc = th_store_write(app->store, purge_part, &a, e);
		n = rc == TH_OK ? a.n : 0;
		*total += n;
	} while (rc == TH_OK && n == PURGE_BATCH);
	return rc;
}

static th_err purge_stuck(struct th_app *app, int64_t age, int64_t *total, struct th_error *e)
{
	struct purge_arg a = {.before = th_now_ms() - age};
	th_err rc;
	do {
		rc = th_store_write(app->store, purge_stuck_part, &a, e);
		if (rc == TH_OK)
			*total += a.n;
		a.cursor = a.upto;
	} while (rc == TH_OK && a.upto > 0);
	return rc;
}

static const char *plural(int64_t n, const char *one, const char *many)
{
	return n == 1 ? one : many;
}

/* purge's command line: AGE into *age (-1 when not given), --vacuum into *vacuum;
 * non-zero (after saying why) when it cannot run. */
static int purge_args(int argc, char **argv, int64_t *age, int *vacuum)
{
	*age = -1;
	*vacuum = 0;
	for (int i = 2; i < argc; i++) {
		if (strcmp(argv[i], "--vacuum") == 0) {
			*vacuum = 1;
		} else if (strcmp(argv[i], "--older-than") == 0) {
			if (i + 1 >= argc)
				return bad_usage("purge: say how old with --older-than AGE (e.g. "
				                 "30d, 12h, 90m)");
			if (th_parse_age(argv[++i], age) != 0)
				return bad_usage(
				    "purge: '%s' is not an age (a number and d, h, m or s: "
				    "30d, 12h, 90m, 45s)",
				    argv[i]);
		} else {
			return bad_usage("purge: unknown argument '%s' (purge [--older-than AGE] "
			                 "[--vacuum])",
			                 argv[i]);
		}
	}
	return 0;
}

/* The tasks part of purge: ended ones after age (-1: kept), stuck ones after
 * retain_stuck; says how many went. *n gets the total. */
static th_err purge_tasks(struct th_app *app, int64_t age, int64_t *n, struct th_error *e)
{
	char when[32];
	int64_t ended = 0, stuck = 0;
	th_err rc = TH_OK;
	if (age >= 0) {
		rc = purge_ended(app, age, &ended, e);
		th_age_text(age, when, sizeof when);
		if (rc == TH_OK)
			printf("purged %lld ended %s (unchanged for %s)\n", (long long)ended,
			       plural(ended, "task", "tasks"), when);
	} else {
		printf("ended tasks kept (retain_ended = off)\n");
	}
	int64_t stuck_ms = app->cfg->retain_stuck_ms;
	if (rc == TH_OK && stuck_ms > 0) {
		rc = purge_stuck(app, stuck_ms, &stuck, e);
		th_age_text(stuck_ms, when, sizeof when);
		if (rc == TH_OK)
			printf("purged %lld stuck %s (idle for %s)\n", (long long)stuck,
			       plural(stuck, "task", "tasks"), when);
	} else if (rc == TH_OK) {
		printf("stuck tasks kept (retain_stuck = off)\n");
	}
	*n = ended + stuck;
	return rc;
}

static void compact_report(const struct th_compact *c)
{
	if (!c->known)
		return;
	printf("database %lld -> %lld bytes, WAL %lld -> %lld bytes%s\n", (long long)c->db_before,
	       (long long)c->db_after, (long long)c->wal_before, (long long)c->wal_after,
	       c->wal_truncated ? "" : " (a reader kept the WAL; the next checkpoint cuts it)");
	if (!c->incremental)
		printf("auto_vacuum is off in this older database: freed pages are reused but the "
		       "file keeps its size; `tiny-harness purge --vacuum` once switches it on\n");
}

/* RET-1..RET-5 (decision-071): `purge` deletes what the retain_* keys say has expired,
 * then gives the space back (th_store_compact); --older-than AGE replaces retain_ended
 * for this run; --vacuum rebuilds the file once (an older database's switch to
 * auto_vacuum = INCREMENTAL). */
static int cmd_purge(int argc, char **argv)
{
	int64_t age;
	int vacuum;
	int bad = purge_args(argc, argv, &age, &vacuum);
	if (bad != 0)
		return bad;
	struct th_app app;
	if (th_cli_open_app(&app) != 0)
		return 1;
	struct th_error e;
	th_error_clear(&e);
	if (age < 0)
		age = app.cfg->retain_ended_ms > 0 ? app.cfg->retain_ended_ms : -1;
	int64_t tasks = 0;
	th_err rc = purge_tasks(&app, age, &tasks, &e);
	struct prune_arg p = {0};
	if (rc == TH_OK) {
		th_push_prune_cutoffs(app.cfg, th_now_ms(), &p.delivered_before, &p.dead_before);
		rc = th_store_write(app.store, prune_part, &p, &e);
		if (rc == TH_OK)
			printf("purged %lld push %s\n", (long long)p.n,
			       plural(p.n, "delivery", "deliveries"));
	}
	struct th_compact c;
	memset(&c, 0, sizeof c);
	if (rc == TH_OK && vacuum)
		rc = th_store_vacuum(app.store, &c, &e);
	else if (rc == TH_OK && tasks + p.n > 0)
		rc = th_store_compact(app.store, &c, &e);
	if (rc == TH_OK)
		compact_report(&c);
	else
		fprintf(stderr, "tiny-harness: %s\n", e.msg);
	th_app_close(&app);
	return rc == TH_OK ? 0 : 1;
}

int th_cli_main(int argc, char **argv)
{
	const char *cmd = argv[1];
	static const struct {
		const char *name;
		int (*run)(void);
	} bare[] = {{"--help", cmd_help},     {"-h", cmd_help},         {"--version", cmd_version},
	            {"migrate", cmd_migrate}, {"recover", cmd_recover}, {"push", cmd_push}};
	for (size_t i = 0; i < sizeof bare / sizeof bare[0]; i++) {
		if (strcmp(cmd, bare[i].name) != 0)
			continue;
		if (argc > 2)
			return bad_usage("%s takes no arguments (got '%s')", cmd, argv[2]);
		return bare[i].run();
	}
	if (strcmp(cmd, "card") == 0)
		return cmd_card(argc, argv);
	if (strcmp(cmd, "complete") == 0)
		return cmd_complete(argc, argv);
	if (strcmp(cmd, "tasks") == 0)
		return cmd_tasks(argc, argv);
	if (strcmp(cmd, "purge") == 0)
		return cmd_purge(argc, argv);
	if (strcmp(cmd, "keys") == 0)
		return th_cli_keys(argc, argv);
	if (strcmp(cmd, "serve") == 0)
		return th_cli_serve(argc, argv);
	return bad_usage("unknown command '%s'", cmd);
}
