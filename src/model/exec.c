/* SPDX-License-Identifier: Apache-2.0 */
/* exec.c — the "exec" model backend (TURN-2): runs cfg->model_command with no shell,
 * writes the turn context to its stdin as one JSON object, and reads one JSON object
 * from its stdout (docs/models.md gives the protocol).
 *
 * The program gets an allow-list of the worker's environment (program_env), and
 * none of the worker's other file descriptors. It runs in a process group of its own;
 * the parent writes stdin and reads stdout and stderr in one poll loop (so neither
 * side can block the other), and every TH_MODEL_CUT_POLL_MS asks whether the turn was
 * cut (CTL-3) and whether the time limit passed. A cut or a timeout kills the whole
 * group with SIGKILL. The child is always reaped before returning. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "model/model_int.h"
#include "util/buf.h"
#include "util/ids.h"
#include "util/jsonx.h"

#define MAX_ARGS 64
#define MAX_STDERR 4096

/* The program and its arguments, split at spaces and tabs. argv[] points into *store,
 * which the caller frees (free). */
static th_err split_command(const char *command, char **store, char *argv[MAX_ARGS + 1],
                            struct th_error *e)
{
	*store = strdup(command);
	if (*store == NULL)
		return th_error_set(e, TH_ENOMEM, "out of memory");
	int n = 0;
	char *save = NULL;
	for (char *t = strtok_r(*store, " \t", &save); t != NULL;
	     t = strtok_r(NULL, " \t", &save)) {
		if (n == MAX_ARGS)
			return th_error_set(e, TH_EINTERNAL, "model_command has more than %d words",
			                    MAX_ARGS);
		argv[n++] = t;
	}
	argv[n] = NULL;
	if (n == 0 || argv[0][0] != '/')
		return th_error_set(e, TH_EINTERNAL,
		                    "model_command '%s' does not start with an absolute path",
		                    command);
	return TH_OK;
}

static json_object *str_or_null(const char *s)
{
	return s != NULL ? json_object_new_string(s) : NULL;
}

/* The stdin document: {"task_id","goal","task","history","prompt","tools","rounds"},
 * JSON null for what the input lacks. The caller puts it (json_object_put). */
static json_object *input_json(const struct th_model_input *in)
{
	json_object *o = json_object_new_object();
	if (o == NULL)
		return NULL;
	if (th_json_put_null(o, "task_id", str_or_null(in->task_id)) != 0 ||
	    th_json_put_null(o, "goal", str_or_null(in->goal)) != 0 ||
	    th_json_put_null(o, "task", json_object_get(in->task)) != 0 ||
	    th_json_put_null(o, "history", json_object_get(in->history)) != 0 ||
	    th_json_put_null(o, "prompt", str_or_null(in->prompt)) != 0 ||
	    th_json_put_null(o, "tools", json_object_get(in->tools)) != 0 ||
	    th_json_put_null(o, "rounds", json_object_get(in->rounds)) != 0) {
		json_object_put(o);
		return NULL;
	}
	return o;
}

static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

/* 1 when the NAME=value entry env names one of the words of list (spaces or commas
 * between them). */
static int env_listed(const char *env, const char *list)
{
	size_t en = strcspn(env, "=");
	for (const char *p = list != NULL ? list : ""; *p != '\0';) {
		size_t n = strcspn(p, " ,\t");
		if (n > 0 && n == en && memcmp(p, env, n) == 0)
			return 1;
		p += n;
		p += strspn(p, " ,\t");
	}
	return 0;
}

/* SEC-6: an allow-list, not a deny-list. Under CGI the worker's environment holds the
 * request's headers (HTTP_COOKIE, HTTP_AUTHORIZATION), and any deployment may hold API
 * keys and database passwords; a model program is often third-party code and needs
 * none of them. */
static int env_allowed(const char *env, const char *extra)
{
	static const char *const fixed[] = {
	    "PATH=", "HOME=", "LANG=", "LANGUAGE=", "TZ=", "TMPDIR=", "USER=", "LOGNAME="};
	for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++)
		if (strncmp(env, fixed[i], strlen(fixed[i])) == 0)
			return 1;
	if (strncmp(env, "LC_", 3) == 0)
		return 1;
	/* The harness's own settings never pass, even when listed. */
	return strncmp(env, "TINY_HARNESS_", 13) != 0 && env_listed(env, extra);
}

/* The program's environment: the allowed entries of the worker's. The array is the
 * caller's (free); its strings are environ's. */
static char **program_env(const char *extra)
{
	size_t n = 0;
	while (environ[n] != NULL)
		n++;
	char **envp = calloc(n + 1, sizeof *envp);
	if (envp == NULL)
		return NULL;
	size_t k = 0;
	for (size_t i = 0; i < n; i++)
		if (env_allowed(environ[i], extra))
			envp[k++] = environ[i];
	envp[k] = NULL;
	return envp;
}

/* The child side of fork: only async-signal-safe calls until execv. */
static void run_child(int in_fd, int out_fd, int err_fd, char *const argv[], char *const envp[],
                      int max_fd)
{
	setpgid(0, 0);
	signal(SIGPIPE, SIG_DFL);
	sigset_t none;
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	if (dup2(in_fd, 0) < 0 || dup2(out_fd, 1) < 0 || dup2(err_fd, 2) < 0)
		_exit(127);
		/* Nothing of the worker (its FastCGI connection, the database) reaches the program.
		 */
#ifdef SYS_close_range
	if (syscall(SYS_close_range, 3U, ~0U, 0U) != 0)
#endif
		for (int fd = 3; fd < max_fd; fd++)
			close(fd);
	execve(argv[0], argv, envp);
	static const char msg[] = "tiny-harness: execve of the model program failed\n";
	ssize_t w = write(2, msg, sizeof msg - 1);
	(void)w;
	_exit(127);
}

/* Reads what fd has now into b (up to cap bytes kept; more sets *over). Returns 0 at
 * end of file or error (the caller closes fd), 1 while more may come. */
static int drain(int fd, struct th_buf *b, size_t cap, int *over)
{
	char chunk[8192];
	for (;;) {
		ssize_t n = read(fd, chunk, sizeof chunk);
		if (n > 0) {
			size_t room = b->len < cap ? cap - b->len : 0;
			size_t take = (size_t)n < room ? (size_t)n : room;
			if (take > 0)
				th_buf_append(b, chunk, take);
			if ((size_t)n > take && over != NULL)
				*over = 1;
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return 1;
		return 0;
	}
}

/* The first line of what the program wrote to stderr, for messages; "" when none. */
static void first_line(const struct th_buf *err, char *out, size_t size)
{
	size_t n = 0;
	const char *s = err->len > 0 ? err->data : "";
	while (s[n] != '\0' && s[n] != '\n' && n + 1 < size && n < 200)
		n++;
	memcpy(out, s, n);
	out[n] = '\0';
	if (n > 0 && out[n - 1] == '\r')
		out[n - 1] = '\0';
}

/* Turns the program's stdout into out, or an error naming what is wrong. */
static th_err parse_reply(const char *who, const struct th_buf *b, struct th_model_output *out,
                          struct th_error *e)
{
	if (b->len == 0)
		return th_error_set(e, TH_EINTERNAL, "%s printed nothing on stdout", who);
	json_object *v = NULL;
	struct th_error pe;
	th_error_clear(&pe);
	if (th_json_parse(b->data, b->len, TH_MODEL_JSON_DEPTH, &v, &pe) != TH_OK)
		return th_error_set(e, TH_EINTERNAL, "%s printed something that is not JSON: %s",
		                    who, pe.msg);
	th_err rc = TH_OK;
	json_object *text = NULL, *calls = NULL;
	if (!json_object_is_type(v, json_type_object)) {
		rc = th_error_set(e, TH_EINTERNAL, "%s printed JSON that is not an object", who);
		goto done;
	}
	text = json_object_object_get(v, "text");
	calls = json_object_object_get(v, "tool_calls");
	if (text != NULL && !json_object_is_type(text, json_type_string)) {
		rc = th_error_set(e, TH_EINTERNAL, "%s: \"text\" is not a string", who);
		goto done;
	}
	if (calls != NULL && !json_object_is_type(calls, json_type_array)) {
		rc = th_error_set(e, TH_EINTERNAL, "%s: \"tool_calls\" is not an array", who);
		goto done;
	}
	size_t ncalls = calls != NULL ? json_object_array_length(calls) : 0;
	if (text == NULL && ncalls == 0) {
		rc = th_error_set(e, TH_EINTERNAL,
		                  "%s answered with neither \"text\" nor \"tool_calls\"", who);
		goto done;
	}
	if (ncalls > 0) {
		if ((out->tool_calls = json_object_new_array()) == NULL) {
			rc = th_error_set(e, TH_ENOMEM, "out of memory");
			goto done;
		}
		for (size_t i = 0; rc == TH_OK && i < ncalls; i++)
			rc = th_model_add_call(out->tool_calls, json_object_array_get_idx(calls, i),
			                       i, who, e);
	}
	if (rc == TH_OK && text != NULL &&
	    (out->text = strdup(json_object_get_string(text))) == NULL)
		rc = th_error_set(e, TH_ENOMEM, "out of memory");
done:
	if (rc != TH_OK)
		th_model_output_free(out);
	json_object_put(v);
	return rc;
}

/* One run of the program: its pipes, what it was given and what it wrote, and how it
 * ended. The phases below (spawn, pump, reap, classify) each take it in turn. */
struct child {
	pid_t pid;
	int in[2], out[2], err[2]; /* pipes; -1 when closed (close_fd) */
	const char *input;         /* borrowed: the input document's text */
	size_t input_len, written;
	struct th_buf ob, eb; /* stdout, stderr; th_buf_free (th_model_exec) */
	int over, was_cut, timed_out, exited;
	int status;                /* waitpid status once reaped */
	struct sigaction old_pipe; /* restored by reap */
};

/* Makes the pipes and forks the program in its own process group. */
static th_err spawn(struct child *c, char **argv, char **envp, const char *who, struct th_error *e)
{
	if (pipe2(c->in, O_CLOEXEC) != 0 || pipe2(c->out, O_CLOEXEC) != 0 ||
	    pipe2(c->err, O_CLOEXEC) != 0)
		return th_error_set(e, TH_EINTERNAL, "cannot make pipes for %s: %s", who,
		                    strerror(errno));
	long open_max = sysconf(_SC_OPEN_MAX);
	int max_fd = open_max > 0 && open_max < 65536 ? (int)open_max : 65536;
	/* A program that stops reading its stdin must not kill the worker with SIGPIPE. */
	struct sigaction ign = {0};
	ign.sa_handler = SIG_IGN;
	sigemptyset(&ign.sa_mask);
	sigaction(SIGPIPE, &ign, &c->old_pipe);
	c->pid = fork();
	if (c->pid < 0) {
		sigaction(SIGPIPE, &c->old_pipe, NULL);
		return th_error_set(e, TH_EINTERNAL, "cannot start %s: fork: %s", who,
		                    strerror(errno));
	}
	if (c->pid == 0)
		run_child(c->in[0], c->out[1], c->err[1], argv, envp, max_fd);
	/* Also from here, so a kill of the group cannot come before the child's own call. */
	setpgid(c->pid, c->pid);
	close_fd(&c->in[0]);
	close_fd(&c->out[1]);
	close_fd(&c->err[1]);
	fcntl(c->in[1], F_SETFL, O_NONBLOCK);
	fcntl(c->out[0], F_SETFL, O_NONBLOCK);
	fcntl(c->err[0], F_SETFL, O_NONBLOCK);
	if (c->input_len == 0)
		close_fd(&c->in[1]);
	return TH_OK;
}

/* Moves bytes for every pipe poll says is ready. */
static void move_ready(struct child *c, const struct pollfd *pf, int n)
{
	for (int i = 0; i < n; i++) {
		if (pf[i].revents == 0)
			continue;
		if (pf[i].fd == c->in[1]) {
			ssize_t w =
			    write(c->in[1], c->input + c->written, c->input_len - c->written);
			if (w > 0)
				c->written += (size_t)w;
			else if (w < 0 && errno != EAGAIN && errno != EINTR)
				c->written = c->input_len; /* EPIPE: the program does not read it */
			if (c->written == c->input_len)
				close_fd(&c->in[1]);
		} else if (pf[i].fd == c->out[0]) {
			if (!drain(c->out[0], &c->ob, TH_MODEL_MAX_REPLY, &c->over))
				close_fd(&c->out[0]);
		} else if (!drain(c->err[0], &c->eb, MAX_STDERR, NULL)) {
			close_fd(&c->err[0]);
		}
	}
}

/* Feeds stdin and collects stdout and stderr until the program exits, the turn is cut,
 * the time is up or the reply grows too large. */
static void pump(struct child *c, int timeout_ms, th_model_cut_fn cut, void *cut_arg)
{
	int64_t deadline = th_mono_ms() + timeout_ms;
	for (;;) {
		if (cut != NULL && cut(cut_arg)) {
			c->was_cut = 1;
			return;
		}
		int64_t left = deadline - th_mono_ms();
		if (left <= 0) {
			c->timed_out = 1;
			return;
		}
		siginfo_t si;
		memset(&si, 0, sizeof si);
		/* WNOWAIT: the child stays a zombie, so its pid (and group) cannot be reused
		 * before the group is killed in reap. */
		if (waitid(P_PID, (id_t)c->pid, &si, WEXITED | WNOHANG | WNOWAIT) == 0 &&
		    si.si_pid == c->pid) {
			c->exited = 1;
			return;
		}
		struct pollfd pf[3];
		int n = 0;
		if (c->in[1] >= 0)
			pf[n++] = (struct pollfd){.fd = c->in[1], .events = POLLOUT};
		if (c->out[0] >= 0)
			pf[n++] = (struct pollfd){.fd = c->out[0], .events = POLLIN};
		if (c->err[0] >= 0)
			pf[n++] = (struct pollfd){.fd = c->err[0], .events = POLLIN};
		int wait_ms = left < TH_MODEL_CUT_POLL_MS ? (int)left : TH_MODEL_CUT_POLL_MS;
		if (n == 0) {
			struct timespec ts = {0, (long)wait_ms * 1000000L};
			nanosleep(&ts, NULL);
			continue;
		}
		if (poll(pf, (nfds_t)n, wait_ms) < 0 && errno != EINTR)
			return;
		move_ready(c, pf, n);
		if (c->over)
			return;
	}
}

/* Collects what an exited program left in the pipes, then kills its whole group
 * (nothing it started outlives the call) and waits for it. */
static void reap(struct child *c)
{
	if (c->exited) {
		if (c->out[0] >= 0)
			drain(c->out[0], &c->ob, TH_MODEL_MAX_REPLY, &c->over);
		if (c->err[0] >= 0)
			drain(c->err[0], &c->eb, MAX_STDERR, NULL);
	}
	kill(-c->pid, SIGKILL);
	if (!c->exited)
		kill(c->pid, SIGKILL);
	while (waitpid(c->pid, &c->status, 0) < 0 && errno == EINTR)
		;
	sigaction(SIGPIPE, &c->old_pipe, NULL);
}

/* How the run ended, as the turn's result or an error naming the program. */
static th_err classify(struct child *c, const char *who, int timeout_ms,
                       struct th_model_output *out, struct th_error *e)
{
	char line[256];
	first_line(&c->eb, line, sizeof line);
	const char *sep = line[0] != '\0' ? ": " : "";
	int st = c->status;
	if (c->ob.oom || c->eb.oom)
		return th_error_set(e, TH_ENOMEM, "out of memory");
	if (c->was_cut) {
		out->cut = 1;
		return TH_OK;
	}
	if (c->timed_out)
		return th_error_set(e, TH_EINTERNAL,
		                    "%s did not answer within %d ms (model_timeout_ms)", who,
		                    timeout_ms);
	if (c->over)
		return th_error_set(e, TH_EINTERNAL, "%s printed more than %d bytes", who,
		                    TH_MODEL_MAX_REPLY);
	if (!c->exited)
		return th_error_set(e, TH_EINTERNAL, "waiting for %s failed: %s", who,
		                    strerror(errno));
	if (WIFSIGNALED(st))
		return th_error_set(e, TH_EINTERNAL, "%s was killed by signal %d%s%s", who,
		                    WTERMSIG(st), sep, line);
	if (WIFEXITED(st) && WEXITSTATUS(st) != 0)
		return th_error_set(e, TH_EINTERNAL, "%s exited with status %d%s%s", who,
		                    WEXITSTATUS(st), sep, line);
	return parse_reply(who, &c->ob, out, e);
}

th_err th_model_exec(const struct th_config *cfg, const struct th_model_input *in,
                     th_model_cut_fn cut, void *cut_arg, struct th_model_output *out,
                     struct th_error *e)
{
	if (cfg->model_command == NULL)
		return th_error_set(e, TH_EINTERNAL, "model = exec needs model_command");
	char *store = NULL;
	char *argv[MAX_ARGS + 1];
	th_err rc = split_command(cfg->model_command, &store, argv, e);
	if (rc != TH_OK) {
		free(store);
		return rc;
	}
	char who[300];
	snprintf(who, sizeof who, "model program %s", argv[0]);
	if (access(argv[0], X_OK) != 0) {
		rc = th_error_set(e, TH_EINTERNAL, "%s cannot be run: %s", who, strerror(errno));
		free(store);
		return rc;
	}
	json_object *doc = input_json(in);
	char **envp = program_env(cfg->model_env);
	if (doc == NULL || envp == NULL) {
		json_object_put(doc);
		free(envp);
		free(store);
		return th_error_set(e, TH_ENOMEM, "out of memory");
	}
	struct child c = {.in = {-1, -1}, .out = {-1, -1}, .err = {-1, -1}};
	c.input = th_json_text(doc);
	c.input_len = strlen(c.input);
	th_buf_init(&c.ob);
	th_buf_init(&c.eb);
	rc = spawn(&c, argv, envp, who, e);
	if (rc == TH_OK) {
		pump(&c, cfg->model_timeout_ms, cut, cut_arg);
		reap(&c);
		rc = classify(&c, who, cfg->model_timeout_ms, out, e);
	}
	th_buf_free(&c.ob);
	th_buf_free(&c.eb);
	for (int i = 0; i < 2; i++) {
		close_fd(&c.in[i]);
		close_fd(&c.out[i]);
		close_fd(&c.err[i]);
	}
	json_object_put(doc);
	free(envp);
	free(store);
	return rc;
}
