/* SPDX-License-Identifier: Apache-2.0 */
/* check_model.c — the exec and openai model backends (TURN-2), their cuts (CTL-3) and
 * their configuration keys (STORE-3). exec runs real programs under tests/model/;
 * openai talks to tests/model/fake_openai.py, a Chat Completions server this suite
 * starts on 127.0.0.1 and stops by pid. Nothing leaves the machine. */
#include <check.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "config/settings.h"
#include "model/model.h"
#include "util/ids.h"
#include "util/jsonx.h"

static char dir[64];
static char srcdir[1024];
static pid_t server_pid; /* tests/model/fake_openai.py, while it runs */

static void setup(void)
{
	const char *s = getenv("TH_SRCDIR");
	snprintf(srcdir, sizeof srcdir, "%s", s != NULL && *s != '\0' ? s : TH_TEST_SRCDIR);
	snprintf(dir, sizeof dir, "/tmp/th-model-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	unsetenv("TINY_HARNESS_CONF");
	unsetenv("TINY_HARNESS_MODEL");
	unsetenv("TINY_HARNESS_OPENAI_BASE_URL");
	unsetenv("TINY_HARNESS_OPENAI_MODEL");
	unsetenv("TINY_HARNESS_MODEL_COMMAND");
}

static void server_stop(void);

static void teardown(void)
{
	server_stop();
	char cmd[128];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	ck_assert_int_eq(system(cmd), 0);
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	if (f == NULL)
		return NULL;
	static char buf[1 << 20];
	size_t n = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	buf[n] = '\0';
	return buf;
}

static json_object *read_json(const char *path)
{
	char *s = slurp(path);
	ck_assert_msg(s != NULL, "%s was not written", path);
	json_object *v = json_tokener_parse(s);
	ck_assert_msg(v != NULL, "%s is not JSON: %s", path, s);
	return v;
}

/* A configuration for model = exec running tests/model/<prog> [args]. */
static void exec_cfg(struct th_config *cfg, const char *prog, const char *args, int timeout_ms)
{
	struct th_error e;
	char cmd[2048], ms[32];
	ck_assert_int_eq(th_config_defaults(cfg), TH_OK);
	snprintf(cmd, sizeof cmd, "%s/tests/model/%s%s%s", srcdir, prog, args ? " " : "",
	         args ? args : "");
	snprintf(ms, sizeof ms, "%d", timeout_ms);
	ck_assert_int_eq(th_config_set(cfg, "model", "exec", &e), TH_OK);
	ck_assert_int_eq(th_config_set(cfg, "model_command", cmd, &e), TH_OK);
	ck_assert_int_eq(th_config_set(cfg, "model_timeout_ms", ms, &e), TH_OK);
	/* The test programs are told where to record what they received (SEC-6: only listed
	 * variables pass). */
	ck_assert_int_eq(th_config_set(cfg, "model_env", "TH_MODEL_RECORD", &e), TH_OK);
}

static json_object *parse(const char *s)
{
	json_object *v = json_tokener_parse(s);
	ck_assert_ptr_nonnull(v);
	return v;
}

/* A turn context with two tools and, when with_round, one earlier round. The caller
 * puts the three objects. */
struct ctx {
	json_object *task, *history, *tools, *rounds;
	struct th_model_input in;
};

static void ctx_init(struct ctx *c, int with_round)
{
	c->task = parse("{\"name\":\"trip\",\"goal\":\"plan a trip\",\"participants\":"
	                "[{\"id\":\"alice\",\"role\":\"owner\"}],\"plan\":null}");
	c->history = parse("[{\"role\":\"ROLE_USER\",\"messageId\":\"m1\",\"parts\":[{\"text\":"
	                   "\"earlier question\"}],\"metadata\":{\"participant_id\":\"alice\"}},"
	                   "{\"role\":\"ROLE_AGENT\",\"messageId\":\"m2\",\"parts\":[{\"text\":"
	                   "\"earlier answer\"},{\"data\":{\"k\":1}}]}]");
	c->tools = parse("[{\"name\":\"create_plan\",\"description\":\"Make a plan\","
	                 "\"input_schema\":{\"type\":\"object\",\"properties\":{\"steps\":"
	                 "{\"type\":\"array\"}}}},{\"name\":\"complete_step\",\"description\":"
	                 "\"Finish a step\",\"input_schema\":{\"type\":\"object\"}}]");
	c->rounds = with_round
	                ? parse("[{\"tool_calls\":[{\"id\":\"c1\",\"name\":\"create_plan\","
	                        "\"arguments\":{\"steps\":[\"a\",\"b\"]}}],\"results\":[{\"id\":"
	                        "\"c1\",\"name\":\"create_plan\",\"ok\":true,\"content\":"
	                        "\"plan created with 2 steps\"}]}]")
	                : NULL;
	c->in = (struct th_model_input){
	    .task_id = "t-1",
	    .goal = "plan a trip",
	    .task = c->task,
	    .history = c->history,
	    .prompt = "hello there",
	    .tools = c->tools,
	    .rounds = c->rounds,
	};
}

static void ctx_free(struct ctx *c)
{
	json_object_put(c->task);
	json_object_put(c->history);
	json_object_put(c->tools);
	json_object_put(c->rounds);
}

/* Cut callbacks: never, or once a deadline on the monotonic clock has passed. */
static int never(void *arg)
{
	(void)arg;
	return 0;
}

static int cut_after(void *arg)
{
	return th_mono_ms() >= *(int64_t *)arg;
}

/* No child of this test process is left, running or zombie. */
static void assert_no_children(void)
{
	int status;
	errno = 0;
	ck_assert_int_eq(waitpid(-1, &status, WNOHANG), -1);
	ck_assert_int_eq(errno, ECHILD);
}

static int pid_alive(pid_t pid)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
	char *s = slurp(path);
	if (s == NULL)
		return 0;
	const char *p = strrchr(s, ')');
	return p != NULL && p[1] == ' ' && p[2] != 'Z' && p[2] != 'X';
}

/* ------------------------------------------------------------------------- exec */

START_TEST(test_turn2_exec_answers_text_from_the_prompt_and_gets_the_context)
{
	struct th_config cfg;
	struct ctx c;
	struct th_model_output out;
	struct th_error e;
	char rec[128];
	snprintf(rec, sizeof rec, "%s/input.json", dir);
	setenv("TH_MODEL_RECORD", rec, 1);
	setenv("TINY_HARNESS_PUSH_KEY", "00", 1);
	exec_cfg(&cfg, "echo_prompt.py", "--flag  two", 10000);
	ctx_init(&c, 1);
	th_error_clear(&e);
	ck_assert_int_eq(th_model_run(&cfg, &c.in, never, NULL, &out, &e), TH_OK);
	ck_assert_int_eq(out.cut, 0);
	ck_assert_str_eq(out.text, "prog: hello there --flag two");
	ck_assert_ptr_null(out.tool_calls);
	json_object *r = read_json(rec);
	json_object *in = json_object_object_get(r, "input");
	ck_assert_str_eq(th_json_str(in, "task_id"), "t-1");
	ck_assert_str_eq(th_json_str(in, "goal"), "plan a trip");
	ck_assert_str_eq(th_json_str(in, "prompt"), "hello there");
	ck_assert(json_object_equal(json_object_object_get(in, "tools"), c.tools));
	ck_assert(json_object_equal(json_object_object_get(in, "rounds"), c.rounds));
	ck_assert(json_object_equal(json_object_object_get(in, "history"), c.history));
	ck_assert(json_object_equal(json_object_object_get(in, "task"), c.task));
	/* The harness's own variables (its push key) never reach the program. */
	ck_assert_uint_eq(json_object_array_length(json_object_object_get(r, "harness_env")), 0);
	json_object_put(r);
	th_model_output_free(&out);
	assert_no_children();

	/* Absent members are JSON null. */
	struct th_model_input bare = {.prompt = "x"};
	ck_assert_int_eq(th_model_run(&cfg, &bare, NULL, NULL, &out, &e), TH_OK);
	r = read_json(rec);
	in = json_object_object_get(r, "input");
	const char *names[] = {"task_id", "goal", "task", "history", "tools", "rounds"};
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
		json_object *v = NULL;
		ck_assert_msg(json_object_object_get_ex(in, names[i], &v) && v == NULL,
		              "%s is not null", names[i]);
	}
	json_object_put(r);
	th_model_output_free(&out);
	ctx_free(&c);
	th_config_free(&cfg);
	unsetenv("TINY_HARNESS_PUSH_KEY");
}
END_TEST

START_TEST(test_turn2_turn3_exec_tool_calls_then_text_quoting_the_results)
{
	struct th_config cfg;
	struct ctx c;
	struct th_model_output out;
	struct th_error e;
	char rec[128];
	snprintf(rec, sizeof rec, "%s/input.json", dir);
	setenv("TH_MODEL_RECORD", rec, 1);
	exec_cfg(&cfg, "tools.py", NULL, 10000);
	/* Round 1: no rounds yet → tool calls, ids kept or made. */
	ctx_init(&c, 0);
	ck_assert_int_eq(th_model_run(&cfg, &c.in, never, NULL, &out, &e), TH_OK);
	ck_assert_ptr_null(out.text);
	ck_assert_ptr_nonnull(out.tool_calls);
	ck_assert_uint_eq(json_object_array_length(out.tool_calls), 2);
	json_object *c0 = json_object_array_get_idx(out.tool_calls, 0);
	json_object *c1 = json_object_array_get_idx(out.tool_calls, 1);
	ck_assert_str_eq(th_json_str(c0, "id"), "c1");
	ck_assert_str_eq(th_json_str(c0, "name"), "create_plan");
	json_object *want = parse("{\"steps\":[\"a\",\"b\"]}");
	ck_assert(json_object_equal(json_object_object_get(c0, "arguments"), want));
	json_object_put(want);
	ck_assert_str_eq(th_json_str(c1, "name"), "complete_step");
	ck_assert_ptr_nonnull(th_json_str(c1, "id"));
	ck_assert_int_eq(strncmp(th_json_str(c1, "id"), "call_", 5), 0);
	ck_assert(json_object_is_type(json_object_object_get(c1, "arguments"), json_type_object));
	json_object *in = read_json(rec);
	ck_assert(json_object_equal(
	    json_object_object_get(json_object_object_get(in, "input"), "tools"), c.tools));
	json_object_put(in);
	th_model_output_free(&out);
	ctx_free(&c);
	/* Round 2: the results come back → text quoting them. */
	ctx_init(&c, 1);
	ck_assert_int_eq(th_model_run(&cfg, &c.in, never, NULL, &out, &e), TH_OK);
	ck_assert_ptr_null(out.tool_calls);
	ck_assert_str_eq(out.text, "done after 1 round(s): c1=ok:plan created with 2 steps");
	th_model_output_free(&out);
	ctx_free(&c);
	th_config_free(&cfg);
	assert_no_children();
}
END_TEST

START_TEST(test_ctl3_exec_cut_kills_the_program_quickly)
{
	struct th_config cfg;
	struct ctx c;
	struct th_model_output out;
	struct th_error e;
	char pidfile[128];
	snprintf(pidfile, sizeof pidfile, "%s/pid", dir);
	exec_cfg(&cfg, "sleep.sh", pidfile, 20000);
	ctx_init(&c, 0);
	int64_t start = th_mono_ms(), at = start + 300;
	ck_assert_int_eq(th_model_run(&cfg, &c.in, cut_after, &at, &out, &e), TH_OK);
	int64_t took = th_mono_ms() - start;
	ck_assert_int_eq(out.cut, 1);
	ck_assert_ptr_null(out.text);
	ck_assert_ptr_null(out.tool_calls);
	ck_assert_msg(took < 1500, "a cut took %lld ms to end the call", (long long)took);
	char *p = slurp(pidfile);
	ck_assert_ptr_nonnull(p);
	ck_assert(!pid_alive((pid_t)atoi(p)));
	assert_no_children();
	ctx_free(&c);
	th_config_free(&cfg);
}
END_TEST

START_TEST(test_turn2_exec_timeout_names_the_limit)
{
	struct th_config cfg;
	struct ctx c;
	struct th_model_output out;
	struct th_error e;
	exec_cfg(&cfg, "sleep.sh", NULL, 400);
	ctx_init(&c, 0);
	int64_t start = th_mono_ms();
	th_error_clear(&e);
	ck_assert_int_eq(th_model_run(&cfg, &c.in, never, NULL, &out, &e), TH_EINTERNAL);
	int64_t took = th_mono_ms() - start;
	ck_assert_msg(strstr(e.msg, "did not answer within 400 ms") != NULL, "%s", e.msg);
	ck_assert_msg(took >= 350 && took < 2000, "took %lld ms", (long long)took);
	ck_assert_int_eq(out.cut, 0);
	ck_assert_ptr_null(out.text);
	assert_no_children();
	ctx_free(&c);
	th_config_free(&cfg);
}
END_TEST

/* Each broken program gives TH_EINTERNAL with a message naming the problem. */
static void expect_failure(const char *prog, const char *needle)
{
	struct th_config cfg;
	struct ctx c;
	struct th_model_output out;
	struct th_error e;
	exec_cfg(&cfg, prog, NULL, 10000);
	ctx_init(&c, 0);
	th_error_clear(&e);
	ck_assert_int_eq(th_model_run(&cfg, &c.in, never, NULL, &out, &e), TH_EINTERNAL);
	ck_assert_msg(strstr(e.msg, needle) != NULL, "%s: '%s' lacks '%s'", prog, e.msg, needle);
	ck_assert_msg(strstr(e.msg, prog) != NULL, "%s: '%s' does not name the program", prog,
	              e.msg);
	ck_assert_ptr_null(out.text);
	ck_assert_ptr_null(out.tool_calls);
	assert_no_children();
	ctx_free(&c);
	th_config_free(&cfg);
}

START_TEST(test_turn2_exec_garbage_exit_codes_and_bad_types_are_errors)
{
	expect_failure("garbage.sh", "is not JSON");
	expect_failure("fail.sh", "exited with status 3: model exploded: no GPU");
	expect_failure("badtypes.sh", "\"text\" is not a string");
	expect_failure("badcall.sh", "tool_calls[0].arguments is not an object");
	expect_failure("flood.sh", "printed more than 1048576 bytes");
	expect_failure("no-such-program", "cannot be run");
}
END_TEST

/* ------------------------------------------------------------------------- config */

START_TEST(test_store3_model_keys_are_checked_and_named)
{
	struct th_config cfg;
	struct th_error e;
	ck_assert_int_eq(th_config_defaults(&cfg), TH_OK);
	ck_assert_int_eq(cfg.model_timeout_ms, 60000);
	ck_assert_str_eq(cfg.openai_api_key_env, "OPENAI_API_KEY");
	ck_assert_ptr_null(cfg.openai_base_url);
	ck_assert_ptr_null(cfg.model_command);
	ck_assert_int_eq(th_config_set(&cfg, "model", "exec", &e), TH_OK);
	ck_assert_int_eq(th_config_set(&cfg, "model", "openai", &e), TH_OK);
	ck_assert_int_eq(th_config_set(&cfg, "model", "gpt", &e), TH_EINVAL);
	ck_assert_ptr_nonnull(strstr(e.msg, "echo, exec, openai"));
	struct {
		const char *key, *good, *bad;
	} cases[] = {
	    {"model_command", "/bin/true --x", "true"},
	    {"model_timeout_ms", "1500", "10"},
	    {"openai_base_url", "http://127.0.0.1:9/v1/", "ftp://x/v1"},
	    {"openai_model", "m", ""},
	    {"openai_api_key_env", "MY_KEY_2", "MY-KEY"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		th_error_clear(&e);
		ck_assert_int_eq(th_config_set(&cfg, cases[i].key, cases[i].good, &e), TH_OK);
		ck_assert_int_eq(th_config_set(&cfg, cases[i].key, cases[i].bad, &e), TH_EINVAL);
		ck_assert_msg(strstr(e.msg, cases[i].key) != NULL, "'%s' does not name %s", e.msg,
		              cases[i].key);
	}
	/* The trailing slash goes, so <base>/chat/completions has one. */
	ck_assert_str_eq(cfg.openai_base_url, "http://127.0.0.1:9/v1");
	ck_assert_int_eq(cfg.model_timeout_ms, 1500);
	th_config_free(&cfg);
}
END_TEST

static th_err load_with(const char *text, struct th_config *cfg, struct th_error *e)
{
	char path[128];
	snprintf(path, sizeof path, "%s/th.conf", dir);
	FILE *f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
	setenv("TINY_HARNESS_CONF", path, 1);
	th_error_clear(e);
	th_err rc = th_config_load(cfg, e);
	unsetenv("TINY_HARNESS_CONF");
	return rc;
}

START_TEST(test_store3_openai_and_exec_need_their_keys_at_start_up)
{
	struct th_config cfg;
	struct th_error e;
	ck_assert_int_eq(load_with("model = openai\nopenai_model = m\n", &cfg, &e), TH_EINVAL);
	ck_assert_ptr_nonnull(strstr(e.msg, "openai_base_url"));
	ck_assert_int_eq(
	    load_with("model = openai\nopenai_base_url = http://127.0.0.1:9/v1\n", &cfg, &e),
	    TH_EINVAL);
	ck_assert_ptr_nonnull(strstr(e.msg, "openai_model"));
	ck_assert_int_eq(load_with("model = exec\n", &cfg, &e), TH_EINVAL);
	ck_assert_ptr_nonnull(strstr(e.msg, "model_command"));
	/* The order of the lines does not matter; the environment can complete the file. */
	setenv("TINY_HARNESS_OPENAI_BASE_URL", "http://127.0.0.1:9/v1", 1);
	ck_assert_int_eq(load_with("openai_model = m\nmodel = openai\n", &cfg, &e), TH_OK);
	ck_assert_str_eq(cfg.model, "openai");
	ck_assert_str_eq(cfg.openai_base_url, "http://127.0.0.1:9/v1");
	th_config_free(&cfg);
	unsetenv("TINY_HARNESS_OPENAI_BASE_URL");
}
END_TEST

/* ------------------------------------------------------------------------- openai */

static char record_path[128];

/* Starts tests/model/fake_openai.py with the given queue; returns its base URL's port. */
static int server_start(const char *queue_json)
{
	char queue[128], portfile[128], script[1200];
	snprintf(queue, sizeof queue, "%s/queue.json", dir);
	snprintf(record_path, sizeof record_path, "%s/requests.jsonl", dir);
	snprintf(portfile, sizeof portfile, "%s/port", dir);
	snprintf(script, sizeof script, "%s/tests/model/fake_openai.py", srcdir);
	FILE *f = fopen(queue, "w");
	ck_assert_ptr_nonnull(f);
	fputs(queue_json, f);
	fclose(f);
	server_pid = fork();
	ck_assert_int_ge(server_pid, 0);
	if (server_pid == 0) {
		execlp("python3", "python3", script, queue, record_path, portfile, (char *)NULL);
		_exit(127);
	}
	for (int i = 0; i < 250; i++) {
		char *p = slurp(portfile);
		if (p != NULL && atoi(p) > 0)
			return atoi(p);
		struct timespec ts = {0, 20000000L};
		nanosleep(&ts, NULL);
	}
	ck_abort_msg("fake_openai.py did not start");
	return 0;
}

static void server_stop(void)
{
	if (server_pid > 0) {
		kill(server_pid, SIGTERM);
		waitpid(server_pid, NULL, 0);
		server_pid = 0;
	}
}

static void openai_cfg(struct th_config *cfg, int port, int timeout_ms)
{
	struct th_error e;
	char url[128], ms[32];
	ck_assert_int_eq(th_config_defaults(cfg), TH_OK);
	snprintf(url, sizeof url, "http://127.0.0.1:%d/v1/", port);
	snprintf(ms, sizeof ms, "%d", timeout_ms);
	ck_assert_int_eq(th_config_set(cfg, "model", "openai", &e), TH_OK);
	ck_assert_int_eq(th_config_set(cfg, "openai_base_url", url, &e), TH_OK);
	ck_assert_int_eq(th_config_set(cfg, "openai_model", "test-model", &e), TH_OK);
	ck_assert_int_eq(th_config_set(cfg, "openai_api_key_env", "TH_TEST_API_KEY", &e), TH_OK);
	ck_assert_int_eq(th_config_set(cfg, "model_timeout_ms", ms, &e), TH_OK);
	/* The test programs are told where to record what they received (SEC-6: only listed
	 * variables pass). */
	ck_assert_int_eq(th_config_set(cfg, "model_env", "TH_MODEL_RECORD", &e), TH_OK);
}

/* The n-th request the server recorded (0 first). The caller puts it. */
static json_object *recorded(int n)
{
	char *s = slurp(record_path);
	ck_assert_msg(s != NULL, "no request reached the server");
	for (int i = 0; i < n && s != NULL; i++)
		if ((s = strchr(s, '\n')) != NULL)
			s++;
	ck_assert_msg(s != NULL && *s != '\0', "request %d was not recorded", n);
	char *end = strchr(s, '\n');
	if (end != NULL)
		*end = '\0';
	json_object *v = json_tokener_parse(s);
	ck_assert_ptr_nonnull(v);
	return v;
}

static const char *msg_role(json_object *msgs, size_t i)
{
	return th_json_str(json_object_array_get_idx(msgs, i), "role");
}

START_TEST(test_turn2_turn3_openai_request_shape_tool_calls_then_text)
{
	int port = server_start(
	    "[{\"status\":200,\"body\":{\"choices\":[{\"finish_reason\":\"tool_calls\","
	    "\"message\":{\"role\":\"assistant\",\"content\":null,\"tool_calls\":[{\"id\":"
	    "\"call_9\",\"type\":\"function\",\"function\":{\"name\":\"create_plan\","
	    "\"arguments\":\"{\\\"steps\\\":[\\\"a\\\",\\\"b\\\"]}\"}},{\"id\":\"call_10\","
	    "\"type\":\"function\",\"function\":{\"name\":\"complete_step\",\"arguments\":"
	    "\"not json\"}}]}}]}},"
	    "{\"status\":200,\"body\":{\"choices\":[{\"message\":{\"role\":\"assistant\","
	    "\"content\":\"All planned.\"}}]}}]");
	struct th_config cfg;
	struct ctx c;
	struct th_model_output out;
	struct th_error e;
	openai_cfg(&cfg, port, 10000);
	setenv("TH_TEST_API_KEY", "sk-test-123", 1);
	ctx_init(&c, 0);
	th_error_clear(&e);
	ck_assert_msg(th_model_run(&cfg, &c.in, never, NULL, &out, &e) == TH_OK, "%s", e.msg);
	ck_assert_ptr_null(out.text);
	ck_assert_uint_eq(json_object_array_length(out.tool_calls), 2);
	json_object *c0 = json_object_array_get_idx(out.tool_calls, 0);
	ck_assert_str_eq(th_json_str(c0, "id"), "call_9");
	ck_assert_str_eq(th_json_str(c0, "name"), "create_plan");
	json_object *want = parse("{\"steps\":[\"a\",\"b\"]}");
	ck_assert(json_object_equal(json_object_object_get(c0, "arguments"), want));
	json_object_put(want);
	/* Arguments that are not JSON reach the harness as an object no schema accepts. */
	json_object *c1 = json_object_array_get_idx(out.tool_calls, 1);
	ck_assert_str_eq(
	    th_json_str(json_object_object_get(c1, "arguments"), "_unparsed_arguments"),
	    "not json");
	th_model_output_free(&out);

	json_object *r = recorded(0);
	ck_assert_str_eq(th_json_str(r, "path"), "/v1/chat/completions");
	json_object *hd = json_object_object_get(r, "headers");
	ck_assert_str_eq(th_json_str(hd, "authorization"), "Bearer sk-test-123");
	json_object *body = json_object_object_get(r, "body");
	ck_assert_str_eq(th_json_str(body, "model"), "test-model");
	json_object *msgs = json_object_object_get(body, "messages");
	/* system, the two earlier messages, the prompt. */
	ck_assert_uint_eq(json_object_array_length(msgs), 4);
	ck_assert_str_eq(msg_role(msgs, 0), "system");
	const char *sys = th_json_str(json_object_array_get_idx(msgs, 0), "content");
	ck_assert_ptr_nonnull(strstr(sys, "plan a trip"));
	ck_assert_ptr_nonnull(strstr(sys, "alice"));
	ck_assert_str_eq(msg_role(msgs, 1), "user");
	ck_assert_str_eq(th_json_str(json_object_array_get_idx(msgs, 1), "content"),
	                 "[alice] earlier question");
	ck_assert_str_eq(msg_role(msgs, 2), "assistant");
	ck_assert_str_eq(th_json_str(json_object_array_get_idx(msgs, 2), "content"),
	                 "earlier answer\n[data: {\"k\":1}]");
	ck_assert_str_eq(msg_role(msgs, 3), "user");
	ck_assert_str_eq(th_json_str(json_object_array_get_idx(msgs, 3), "content"), "hello there");
	json_object *tools = json_object_object_get(body, "tools");
	ck_assert_uint_eq(json_object_array_length(tools), 2);
	json_object *f0 = json_object_object_get(json_object_array_get_idx(tools, 0), "function");
	ck_assert_str_eq(th_json_str(json_object_array_get_idx(tools, 0), "type"), "function");
	ck_assert_str_eq(th_json_str(f0, "name"), "create_plan");
	ck_assert_str_eq(th_json_str(f0, "description"), "Make a plan");
	ck_assert(json_object_equal(
	    json_object_object_get(f0, "parameters"),
	    json_object_object_get(json_object_array_get_idx(c.tools, 0), "input_schema")));
	json_object_put(r);
	ctx_free(&c);

	/* Round 2, without a key: the round goes back as tool_calls + tool messages. */
	unsetenv("TH_TEST_API_KEY");
	ctx_init(&c, 1);
	ck_assert_msg(th_model_run(&cfg, &c.in, never, NULL, &out, &e) == TH_OK, "%s", e.msg);
	ck_assert_str_eq(out.text, "All planned.");
	ck_assert_ptr_null(out.tool_calls);
	th_model_output_free(&out);
	r = recorded(1);
	ck_assert_ptr_null(th_json_str(json_object_object_get(r, "headers"), "authorization"));
	msgs = json_object_object_get(json_object_object_get(r, "body"), "messages");
	ck_assert_uint_eq(json_object_array_length(msgs), 6);
	json_object *a = json_object_array_get_idx(msgs, 4);
	ck_assert_str_eq(msg_role(msgs, 4), "assistant");
	json_object *tc = json_object_array_get_idx(json_object_object_get(a, "tool_calls"), 0);
	ck_assert_str_eq(th_json_str(tc, "id"), "c1");
	ck_assert_str_eq(th_json_str(json_object_object_get(tc, "function"), "name"),
	                 "create_plan");
	want = parse(th_json_str(json_object_object_get(tc, "function"), "arguments"));
	json_object *given = json_object_object_get(
	    json_object_array_get_idx(
	        json_object_object_get(json_object_array_get_idx(c.rounds, 0), "tool_calls"), 0),
	    "arguments");
	ck_assert(json_object_equal(want, given));
	json_object_put(want);
	ck_assert_str_eq(msg_role(msgs, 5), "tool");
	ck_assert_str_eq(th_json_str(json_object_array_get_idx(msgs, 5), "tool_call_id"), "c1");
	ck_assert_str_eq(th_json_str(json_object_array_get_idx(msgs, 5), "content"),
	                 "plan created with 2 steps");
	json_object_put(r);
	ctx_free(&c);
	th_config_free(&cfg);
	server_stop();
}
END_TEST

START_TEST(test_turn2_openai_http_error_names_status_and_message)
{
	int port = server_start("[{\"status\":500,\"body\":{\"error\":{\"message\":"
	                        "\"the GPU caught fire\",\"type\":\"server_error\"}}},"
	                        "{\"status\":200,\"body\":{\"choices\":[]}}]");
	struct th_config cfg;
	struct th_model_output out;
	struct th_error e;
	openai_cfg(&cfg, port, 10000);
	struct th_model_input in = {.prompt = "hi"};
	th_error_clear(&e);
	ck_assert_int_eq(th_model_run(&cfg, &in, never, NULL, &out, &e), TH_EINTERNAL);
	ck_assert_msg(strstr(e.msg, "HTTP 500: the GPU caught fire") != NULL, "%s", e.msg);
	ck_assert_ptr_null(out.text);
	/* No tools offered: no "tools" member at all. */
	json_object *r = recorded(0);
	ck_assert(!json_object_object_get_ex(json_object_object_get(r, "body"), "tools", NULL));
	json_object_put(r);
	/* A 200 without a message is an error too, never a crash. */
	ck_assert_int_eq(th_model_run(&cfg, &in, never, NULL, &out, &e), TH_EINTERNAL);
	ck_assert_msg(strstr(e.msg, "choices[0].message") != NULL, "%s", e.msg);
	th_config_free(&cfg);
	server_stop();
}
END_TEST

START_TEST(test_ctl3_openai_cut_aborts_a_slow_response)
{
	int port = server_start("[{\"status\":200,\"delay_ms\":8000,\"body\":{\"choices\":[{"
	                        "\"message\":{\"content\":\"too late\"}}]}},"
	                        "{\"status\":200,\"delay_ms\":8000,\"body\":{}}]");
	struct th_config cfg;
	struct th_model_output out;
	struct th_error e;
	openai_cfg(&cfg, port, 20000);
	struct th_model_input in = {.prompt = "hi"};
	int64_t start = th_mono_ms(), at = start + 300;
	th_error_clear(&e);
	ck_assert_int_eq(th_model_run(&cfg, &in, cut_after, &at, &out, &e), TH_OK);
	int64_t took = th_mono_ms() - start;
	ck_assert_int_eq(out.cut, 1);
	ck_assert_ptr_null(out.text);
	ck_assert_msg(took >= 290 && took < 1500, "a cut took %lld ms to end the call",
	              (long long)took);
	th_config_free(&cfg);
	/* The time limit ends a slow answer with an error naming it. */
	openai_cfg(&cfg, port, 400);
	start = th_mono_ms();
	ck_assert_int_eq(th_model_run(&cfg, &in, never, NULL, &out, &e), TH_EINTERNAL);
	ck_assert_msg(strstr(e.msg, "did not answer within 400 ms") != NULL, "%s", e.msg);
	ck_assert_int_lt(th_mono_ms() - start, 2000);
	th_config_free(&cfg);
	server_stop();
}
END_TEST

int main(void)
{
	Suite *s = suite_create("model");
	TCase *ex = tcase_create("exec");
	tcase_add_checked_fixture(ex, setup, teardown);
	tcase_set_timeout(ex, 30);
	tcase_add_test(ex, test_turn2_exec_answers_text_from_the_prompt_and_gets_the_context);
	tcase_add_test(ex, test_turn2_turn3_exec_tool_calls_then_text_quoting_the_results);
	tcase_add_test(ex, test_ctl3_exec_cut_kills_the_program_quickly);
	tcase_add_test(ex, test_turn2_exec_timeout_names_the_limit);
	tcase_add_test(ex, test_turn2_exec_garbage_exit_codes_and_bad_types_are_errors);
	suite_add_tcase(s, ex);
	TCase *oa = tcase_create("openai");
	tcase_add_checked_fixture(oa, setup, teardown);
	tcase_set_timeout(oa, 30);
	tcase_add_test(oa, test_turn2_turn3_openai_request_shape_tool_calls_then_text);
	tcase_add_test(oa, test_turn2_openai_http_error_names_status_and_message);
	tcase_add_test(oa, test_ctl3_openai_cut_aborts_a_slow_response);
	suite_add_tcase(s, oa);
	TCase *cf = tcase_create("config");
	tcase_add_checked_fixture(cf, setup, teardown);
	tcase_add_test(cf, test_store3_model_keys_are_checked_and_named);
	tcase_add_test(cf, test_store3_openai_and_exec_need_their_keys_at_start_up);
	suite_add_tcase(s, cf);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
