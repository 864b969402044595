/* SPDX-License-Identifier: Apache-2.0 */
/* serve.c — `tiny-harness serve`: lighttpd with the bundled recipe in the foreground.
 *
 * HOST-1, decision-043: each instance keeps its state (worker sockets, error.log,
 * lighttpd.pid, the lock) in var/serve-PORT under the working directory, so two
 * instances started from one directory on different ports never share a worker socket.
 * An instance holds a lock on var/serve-PORT/serve.lock for as long as it runs: serve
 * takes it with fcntl() and keeps the descriptor open through exec, so lighttpd (the same
 * process) holds it, and the kernel lets go of it when lighttpd ends, however it ends. A
 * second serve on the same state directory, or on a port something else listens on,
 * refuses with the path or port and the holder's pid; a state directory whose lock
 * nobody holds is a stale one, taken over after its old worker sockets are removed. */
#include "cli/cli.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "config/settings.h"
#include "config/layout.h"

/* lighttpd names the sockets SOCK_NAME-0, -1, …, one per worker (conf/lighttpd.conf). */
#define SOCK_NAME "tiny-harness.sock"
#define LOCK_NAME "serve.lock"

/* One serve's paths, all absolute: lighttpd runs the workers in the program's directory. */
struct serve_paths {
	char cwd[PATH_MAX];
	char var[PATH_MAX + 8];     /* cwd/var */
	char state[PATH_MAX + 32];  /* cwd/var/serve-PORT */
	char db[PATH_MAX + 64];     /* the database the workers get (a path or a URI) */
	char recipe[PATH_MAX + 32]; /* lighttpd.conf */
};

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fputs("tiny-harness serve: ", stderr);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/* Finds the lighttpd recipe: $TH_SRCDIR/conf, the installed recipes (decision-021), the
 * source tree around a build directory's src/ (build/src/tiny-harness ->
 * build/../conf), then ./conf. */
static int find_conf(char *out, size_t n)
{
	char self[PATH_MAX] = "", up[PATH_MAX + 16] = "";
	ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
	if (len > 0) {
		self[len] = '\0';
		char *slash = strrchr(self, '/');
		if (slash != NULL) {
			*slash = '\0';
			snprintf(up, sizeof up, "%s/../..", self);
		}
	}
	const char *recipes = th_layout_recipes_dir();
	char installed[PATH_MAX] = "";
	if (recipes != NULL)
		snprintf(installed, sizeof installed, "%s/lighttpd.conf", recipes);
	const char *src = getenv("TH_SRCDIR");
	const char *tries[][2] = {{src, "/conf/lighttpd.conf"},
	                          {installed, ""},
	                          {up, "/conf/lighttpd.conf"},
	                          {".", "/conf/lighttpd.conf"}};
	for (size_t i = 0; i < sizeof tries / sizeof tries[0]; i++) {
		if (tries[i][0] == NULL || *tries[i][0] == '\0')
			continue;
		snprintf(out, n, "%s%s", tries[i][0], tries[i][1]);
		if (access(out, R_OK) == 0)
			return 0;
	}
	return -1;
}

static int mkdir_one(const char *dir)
{
	if (mkdir(dir, 0750) != 0 && errno != EEXIST) {
		say("%s: %s", dir, strerror(errno));
		return -1;
	}
	return 0;
}

static int setenv_default(const char *name, const char *value)
{
	const char *cur = getenv(name);
	return cur != NULL && *cur != '\0' ? 0 : setenv(name, value, 1);
}

/* p made absolute against cwd ("./x" and "x" both become cwd/x); a URI is kept. */
static void absolute(const char *cwd, const char *p, char *out, size_t n)
{
	if (p[0] == '/' || strstr(p, "://") != NULL) {
		snprintf(out, n, "%s", p);
		return;
	}
	while (p[0] == '.' && p[1] == '/')
		p += 2;
	snprintf(out, n, "%s/%s", cwd, p);
}

/* --port N and --procs N; -1 when they are good, else the exit status. */
static int parse_args(int argc, char **argv, long *port, long *procs)
{
	for (int i = 2; i < argc; i++) {
		int known = strcmp(argv[i], "--port") == 0 || strcmp(argv[i], "--procs") == 0;
		if (!known || i + 1 >= argc) {
			fprintf(stderr,
			        known ? "tiny-harness: serve: %s needs a number\n"
			              : "tiny-harness: serve: unexpected argument '%s' (--port N, "
			                "--procs N)\n",
			        argv[i]);
			fputs("Try 'tiny-harness --help'.\n", stderr);
			return 2;
		}
		char *end;
		long v = strtol(argv[i + 1], &end, 10);
		if (*end != '\0' || v < 1 || v > 65535) {
			say("%s needs a number from 1 to 65535, got '%s'", argv[i], argv[i + 1]);
			return 2;
		}
		*(strcmp(argv[i], "--port") == 0 ? port : procs) = v;
		i++;
	}
	return -1;
}

/* The configuration file serve reads is the one the workers must read: they start in the
 * program's directory, where a relative name would find nothing (or another file). */
static void pin_conf_file(const char *cwd)
{
	char abs[PATH_MAX + 8];
	const char *set = getenv("TINY_HARNESS_CONF");
	if (set != NULL && *set != '\0') {
		absolute(cwd, set, abs, sizeof abs);
		setenv("TINY_HARNESS_CONF", abs, 1);
		return;
	}
	const char *file = th_layout_conf_file();
	if (file[0] != '/' && access(file, R_OK) == 0) {
		absolute(cwd, file, abs, sizeof abs);
		setenv("TINY_HARNESS_CONF", abs, 1);
	}
}

/* SEC-1: serve checks what its workers will check, so a refused configuration is
 * named on the terminal rather than in lighttpd's error log after it has started. The
 * recipe picks its authentication from TINY_HARNESS_IDENTITY (decision-040), so the
 * configured mode is handed to lighttpd there, and lighttpd and the workers agree.
 * HOST-1: the database is the configured one (environment or file), made absolute; with
 * none configured it is var/tiny-harness.db under the working directory, installed or
 * not, as before decision-043. */
static int serve_config(struct serve_paths *sp)
{
	static const char *const names[] = {
	    [TH_IDENTITY_HEADER] = "header",
	    [TH_IDENTITY_REMOTE_USER] = "remote_user",
	    [TH_IDENTITY_BEARER] = "bearer",
	};
	struct th_config cfg;
	struct th_error e;
	th_error_clear(&e);
	if (th_config_load(&cfg, &e) != TH_OK) {
		say("%s", e.msg);
		return 0;
	}
	th_err rc = th_config_check_serving(&cfg, &e);
	if (rc != TH_OK)
		say("%s", e.msg);
	const char *pw = getenv("TH_HTPASSWD");
	if (rc == TH_OK && cfg.identity == TH_IDENTITY_REMOTE_USER &&
	    (pw == NULL || pw[0] != '/' || access(pw, R_OK) != 0)) {
		say("identity = remote_user needs TH_HTPASSWD, the absolute path of a readable "
		    "password file (htpasswd -c -B FILE NAME), for lighttpd's login");
		rc = TH_EINVAL;
	}
	if (rc == TH_OK) {
		setenv("TINY_HARNESS_IDENTITY", names[cfg.identity], 1);
		const char *db = getenv("TINY_HARNESS_DB");
		if ((db == NULL || *db == '\0') && strcmp(cfg.db_path, th_layout_db()) == 0)
			snprintf(sp->db, sizeof sp->db, "%s/tiny-harness.db", sp->var);
		else
			absolute(sp->cwd, cfg.db_path, sp->db, sizeof sp->db);
		setenv("TINY_HARNESS_DB", sp->db, 1);
	}
	th_config_free(&cfg);
	return rc == TH_OK;
}

/* The variables conf/lighttpd.conf reads, and the workers' defaults that must be absolute. */
static int serve_env(struct serve_paths *sp, long port, long procs)
{
	char self[PATH_MAX], buf[64];
	ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
	if (len <= 0) {
		say("/proc/self/exe: %s", strerror(errno));
		return -1;
	}
	/* A libtool wrapper runs the real binary from .libs/; lighttpd must start the
	 * wrapper's target, which is what /proc/self/exe names. */
	self[len] = '\0';
	snprintf(buf, sizeof buf, "%ld", port);
	setenv("TH_PORT", buf, 1);
	snprintf(buf, sizeof buf, "%ld", procs);
	setenv("TH_PROCS", buf, 1);
	setenv("TH_BIN", self, 1);
	setenv("TH_STATE_DIR", sp->state, 1);
	pin_conf_file(sp->cwd);
	/* lighttpd starts workers in bin-path's directory: relative paths would not resolve. */
	char dir[PATH_MAX + 16];
	snprintf(dir, sizeof dir, "%s/conf/commands", sp->cwd);
	if (access(dir, R_OK) == 0)
		setenv_default("TINY_HARNESS_COMMANDS_DIR", dir);
	/* The web app (WEB-1) of a source tree, the same way. */
	snprintf(dir, sizeof dir, "%s/web/dist", sp->cwd);
	if (access(dir, R_OK) == 0)
		setenv_default("TINY_HARNESS_WEB_DIR", dir);
	snprintf(buf, sizeof buf, "http://127.0.0.1:%ld/", port);
	setenv_default("TINY_HARNESS_BASE_URL", buf);
	return 0;
}

/* The pid holding a write lock on fd's file, 0 when none does. */
static pid_t lock_holder(int fd)
{
	struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET};
	if (fcntl(fd, F_GETLK, &fl) != 0 || fl.l_type == F_UNLCK)
		return 0;
	return fl.l_pid;
}

static void say_held(const struct serve_paths *sp, long port, pid_t holder)
{
	say("port %ld is already served from %s by pid %ld (lighttpd); stop it (kill %ld) or "
	    "choose another --port",
	    port, sp->state, (long)holder, (long)holder);
}

/* 1 (said) when a running instance holds STATE/serve.lock; looks without creating
 * anything, so a refused serve leaves no trace. */
static int state_held(const struct serve_paths *sp, long port)
{
	char path[PATH_MAX + 64];
	snprintf(path, sizeof path, "%s/" LOCK_NAME, sp->state);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	pid_t holder = lock_holder(fd);
	close(fd); /* no lock of ours on it yet, so closing releases nothing */
	if (holder > 0)
		say_held(sp, port, holder);
	return holder > 0;
}

/* Takes STATE/serve.lock for this process and what it execs (the descriptor is left open
 * and inheritable on purpose: closing it would release the lock). The descriptor, or -1
 * with the reason said (another serve may have taken it since state_held looked). */
static int claim_state(const struct serve_paths *sp, long port)
{
	char path[PATH_MAX + 64];
	snprintf(path, sizeof path, "%s/" LOCK_NAME, sp->state);
	int fd = open(path, O_RDWR | O_CREAT, 0640);
	if (fd < 0) {
		say("%s: %s", path, strerror(errno));
		return -1;
	}
	struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET};
	if (fcntl(fd, F_SETLK, &fl) != 0) {
		say_held(sp, port, lock_holder(fd));
		close(fd);
		return -1;
	}
	return fd;
}

/* The inode of a socket listening on TCP port `port` in /proc/net/FILE, 0 when none. */
static unsigned long listen_inode(const char *file, long port)
{
	FILE *f = fopen(file, "r");
	if (f == NULL)
		return 0;
	char line[512];
	unsigned long found = 0;
	while (found == 0 && fgets(line, sizeof line, f) != NULL) {
		char local[128];
		unsigned st;
		unsigned long inode;
		/* sl local rem st tx:rx tr:when retrnsmt uid timeout inode */
		int got =
		    sscanf(line, " %*s %127s %*s %x %*s %*s %*s %*s %*s %lu", local, &st, &inode);
		if (got != 3)
			continue;
		const char *colon = strrchr(local, ':');
		if (st == 0x0A && colon != NULL && strtol(colon + 1, NULL, 16) == port)
			found = inode;
	}
	fclose(f);
	return found;
}

/* The process with a descriptor on socket `inode` (its name in comm), 0 when none is
 * visible to this user. */
static pid_t socket_owner(unsigned long inode, char *comm, size_t n)
{
	char want[64], path[PATH_MAX], link[64];
	snprintf(want, sizeof want, "socket:[%lu]", inode);
	DIR *proc = opendir("/proc");
	pid_t found = 0;
	struct dirent *p;
	while (proc != NULL && found == 0 && (p = readdir(proc)) != NULL) {
		if (p->d_name[0] < '1' || p->d_name[0] > '9')
			continue;
		snprintf(path, sizeof path, "/proc/%s/fd", p->d_name);
		DIR *fds = opendir(path);
		struct dirent *d;
		while (fds != NULL && found == 0 && (d = readdir(fds)) != NULL) {
			snprintf(path, sizeof path, "/proc/%s/fd/%s", p->d_name, d->d_name);
			ssize_t len = readlink(path, link, sizeof link - 1);
			if (len > 0 && (link[len] = '\0', strcmp(link, want) == 0))
				found = (pid_t)atol(p->d_name);
		}
		if (fds != NULL)
			closedir(fds);
	}
	if (proc != NULL)
		closedir(proc);
	snprintf(comm, n, "?");
	snprintf(path, sizeof path, "/proc/%ld/comm", (long)found);
	FILE *f = found ? fopen(path, "r") : NULL;
	if (f != NULL) {
		if (fgets(comm, (int)n, f) != NULL)
			comm[strcspn(comm, "\n")] = '\0';
		fclose(f);
	}
	return found;
}

/* 0 when 127.0.0.1:port can be bound (SO_REUSEADDR, as lighttpd binds it); else says who
 * listens there and returns -1. Other bind errors are left for lighttpd to report. */
static int port_free(long port)
{
	int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (s < 0)
		return 0;
	int one = 1;
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
	int busy = bind(s, (struct sockaddr *)&a, sizeof a) != 0 && errno == EADDRINUSE;
	close(s);
	if (!busy)
		return 0;
	unsigned long inode = listen_inode("/proc/net/tcp", port);
	if (inode == 0)
		inode = listen_inode("/proc/net/tcp6", port);
	char comm[64];
	pid_t pid = inode ? socket_owner(inode, comm, sizeof comm) : 0;
	if (pid > 0)
		say("port %ld on 127.0.0.1 is in use by pid %ld (%s); stop it or choose another "
		    "--port",
		    port, (long)pid, comm);
	else
		say("port %ld on 127.0.0.1 is in use (by a process this user cannot see); choose "
		    "another --port",
		    port);
	return -1;
}

/* A stale instance (its lock free) may have left worker sockets, and workers whose
 * lighttpd was killed may still listen on them: lighttpd would connect to those instead
 * of starting its own. Removing the names leaves such workers unreachable. */
static void remove_stale_sockets(const char *state)
{
	DIR *d = opendir(state);
	struct dirent *e;
	char path[PATH_MAX + 320];
	while (d != NULL && (e = readdir(d)) != NULL) {
		if (strncmp(e->d_name, SOCK_NAME, strlen(SOCK_NAME)) != 0)
			continue;
		snprintf(path, sizeof path, "%s/%s", state, e->d_name);
		if (unlink(path) != 0 && errno != ENOENT)
			say("warning: cannot remove the stale socket %s: %s", path,
			    strerror(errno));
	}
	if (d != NULL)
		closedir(d);
}

static void write_file(const char *dir, const char *name, const char *text)
{
	char path[PATH_MAX + 64];
	snprintf(path, sizeof path, "%s/%s", dir, name);
	FILE *f = fopen(path, "w");
	if (f == NULL || fprintf(f, "%s\n", text) < 0 || fclose(f) != 0)
		say("warning: cannot write %s: %s", path, strerror(errno));
}

/* The pid of the instance running in state directory DIR (0 when none) and, in db, the
 * database it serves. Opens DIR's lock file, so never call it on this instance's own: a
 * process's close() of any descriptor of a file releases its locks on that file. */
static pid_t running_db(const char *dir, char *db, size_t n)
{
	char path[PATH_MAX + 352]; /* dir is at most PATH_MAX + 320 */
	snprintf(path, sizeof path, "%s/" LOCK_NAME, dir);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	pid_t holder = lock_holder(fd);
	close(fd);
	snprintf(path, sizeof path, "%s/db", dir);
	FILE *f = holder > 0 ? fopen(path, "r") : NULL;
	if (f == NULL)
		return 0;
	if (fgets(db, (int)n, f) == NULL)
		holder = 0;
	db[strcspn(db, "\n")] = '\0';
	fclose(f);
	return holder;
}

/* Sharing a database is allowed (HOST-2: any number of workers on one file) but never
 * silent: says which running instance under the same var/ serves this database too. */
static void note_shared_db(const struct serve_paths *sp, long port)
{
	DIR *d = opendir(sp->var);
	struct dirent *e;
	char mine[32], dir[PATH_MAX + 320], other[sizeof sp->db + 2];
	snprintf(mine, sizeof mine, "serve-%ld", port);
	while (d != NULL && (e = readdir(d)) != NULL) {
		if (strncmp(e->d_name, "serve-", 6) != 0 || strcmp(e->d_name, mine) == 0)
			continue;
		snprintf(dir, sizeof dir, "%s/%s", sp->var, e->d_name);
		pid_t pid = running_db(dir, other, sizeof other);
		if (pid > 0 && strcmp(other, sp->db) == 0)
			say("note: the instance in %s (pid %ld) serves the same database %s; give "
			    "this one its own with TINY_HARNESS_DB or db in a configuration file",
			    dir, (long)pid, sp->db);
	}
	if (d != NULL)
		closedir(d);
}

/* The state directory var/serve-PORT under the working directory; -1 when its worker
 * sockets' names would be too long. */
static int state_paths(struct serve_paths *sp, long port, long procs)
{
	snprintf(sp->var, sizeof sp->var, "%s/var", sp->cwd);
	snprintf(sp->state, sizeof sp->state, "%s/serve-%ld", sp->var, port);
	/* lighttpd's worker sockets are named STATE/tiny-harness.sock-N. */
	struct sockaddr_un un;
	char last[32];
	int n = snprintf(last, sizeof last, "/" SOCK_NAME "-%ld", procs - 1);
	if (strlen(sp->state) + (size_t)n >= sizeof un.sun_path) {
		say("the worker socket %s%s would be longer than the %zu bytes a UNIX socket name "
		    "may have: run serve from a shorter directory",
		    sp->state, last, sizeof un.sun_path - 1);
		return -1;
	}
	return 0;
}

/* Claims the state directory, checks the port, and leaves in the state directory what a
 * person or a test looks for: the database (db), the base URL (base_url) and the pid (in
 * serve.lock; lighttpd writes lighttpd.pid too). The lock's descriptor or -1. */
static int serve_claim(const struct serve_paths *sp, long port)
{
	if (state_held(sp, port) || port_free(port) != 0)
		return -1;
	if (mkdir_one(sp->var) != 0 || mkdir_one(sp->state) != 0)
		return -1;
	int lock = claim_state(sp, port);
	if (lock < 0)
		return -1;
	char text[32];
	snprintf(text, sizeof text, "%ld\n", (long)getpid()); /* lighttpd's pid after exec */
	if (ftruncate(lock, 0) != 0 || pwrite(lock, text, strlen(text), 0) < 0)
		say("warning: cannot write the pid in %s/" LOCK_NAME ": %s", sp->state,
		    strerror(errno));
	write_file(sp->state, "db", sp->db);
	write_file(sp->state, "base_url", getenv("TINY_HARNESS_BASE_URL"));
	remove_stale_sockets(sp->state);
	note_shared_db(sp, port);
	return lock;
}

/* `tiny-harness serve [--port N] [--procs N]`: the exit status when it does not become
 * lighttpd (1, or 2 for a bad command line). */
int th_cli_serve(int argc, char **argv)
{
	long port = 8080, procs = 1;
	int status = parse_args(argc, argv, &port, &procs);
	if (status >= 0)
		return status;
	struct serve_paths sp;
	if (find_conf(sp.recipe, sizeof sp.recipe) != 0) {
		say("no lighttpd.conf recipe found (installed in the package's data directory, or "
		    "conf/ of a source tree: set TH_SRCDIR)");
		return 1;
	}
	if (getcwd(sp.cwd, sizeof sp.cwd) == NULL) {
		say("the working directory: %s", strerror(errno));
		return 1;
	}
	/* Everything that can be refused is checked before anything is written. */
	if (state_paths(&sp, port, procs) != 0 || serve_env(&sp, port, procs) != 0 ||
	    !serve_config(&sp))
		return 1;
	/* Left open through exec: lighttpd holds the instance's lock until it ends. */
	if (serve_claim(&sp, port) < 0)
		return 1;
	printf("tiny-harness: serving %s with %ld workers (lighttpd, %s); database %s; state %s\n"
	       "Try: curl -s -H 'Content-Type: application/json' -H 'A2A-Version: 1.0' "
	       "-H 'X-Participant-Id: alice' -d "
	       "'{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"SendMessage\","
	       "\"params\":{\"message\":{\"messageId\":\"m1\",\"role\":\"ROLE_USER\",\"parts\":[{"
	       "\"text\":\"hello\"}]}}}' %s\n",
	       getenv("TINY_HARNESS_BASE_URL"), procs, sp.recipe, sp.db, sp.state,
	       getenv("TINY_HARNESS_BASE_URL"));
	fflush(stdout);
	execlp("lighttpd", "lighttpd", "-D", "-f", sp.recipe, (char *)NULL);
	execl("/usr/sbin/lighttpd", "lighttpd", "-D", "-f", sp.recipe, (char *)NULL);
	say("cannot run lighttpd: %s", strerror(errno));
	return 1;
}
