#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# bench/cgi.sh — what one plain-CGI request costs: the median wall time of N sequential
# runs of the program as CGI (the agent card, and GetTask of one task), next to a minimal
# program linked with the same three core libraries (libfcgi, json-c, SQLite) that starts
# and exits (PKG-4: GetTask at most ~1.5x its median). Each run is timed from before a
# small runner this script builds forks it to after it exits, so the figures include the
# same fork/exec overhead for all rows; the rows alternate run by run. Local only; no
# server.
#
#   bench/cgi.sh                          TH_BIN (default build/src/tiny-harness), N=200
#   N=500 bench/cgi.sh
#   BEFORE_BIN=/other/tiny-harness bench/cgi.sh   a second binary measured alongside, each
#                                         on a database it migrated itself (schemas may differ)
#   CARD_KEY=/path/key.pem bench/cgi.sh   one more row per program: the card with
#                                         card_signing_key = CARD_KEY (CARD-SIG-1; a program
#                                         that knows no such key serves it unsigned)
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
TH_BIN=${TH_BIN:-$root/build/src/tiny-harness}
N=${N:-200}
[ -x "$TH_BIN" ] || { echo "cgi: no program at $TH_BIN" >&2; exit 1; }
work=$(mktemp -d "${TMPDIR:-/tmp}/th-cgi-bench.XXXXXX")
trap 'rm -rf "$work"' EXIT
for v in $(compgen -e | grep '^TINY_HARNESS_'); do unset "$v"; done

cat >"$work/mini.c" <<'C'
#include <fcgiapp.h>
#include <json-c/json.h>
#include <sqlite3.h>
#include <stdio.h>
int main(void)
{
	json_object *o = json_object_new_object();
	printf("Status: 200 OK\r\n\r\n%s %s %d\n", json_object_to_json_string(o), sqlite3_libversion(),
	       FCGX_IsCGI());
	json_object_put(o);
	return 0;
}
C
cc -O2 "$work/mini.c" -o "$work/mini" -lfcgi -ljson-c -lsqlite3 || { echo "cgi: cannot build the minimal program" >&2; exit 1; }

bins=(${BEFORE_BIN:-} "$TH_BIN")
# Each program gets a database of its own, migrated and given its task by that program
# (a BEFORE_BIN of an older schema version refuses a database migrated by a newer one).
body='{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"b1","role":"ROLE_USER","parts":[{"text":"hi"}]}}}'
dbs=() tasks=()
for i in "${!bins[@]}"; do
	export TINY_HARNESS_DB=$work/tiny-harness.$i.db
	"${bins[$i]}" migrate >/dev/null 2>&1 || { echo "cgi: ${bins[$i]} migrate failed" >&2; exit 1; }
	task=$(printf '%s' "$body" | REQUEST_METHOD=POST REQUEST_URI=/ REMOTE_ADDR=127.0.0.1 CONTENT_TYPE=application/json \
		CONTENT_LENGTH=${#body} HTTP_A2A_VERSION=1.0 HTTP_X_PARTICIPANT_ID=alice "${bins[$i]}" |
		sed -n 's/.*"task":{"id":"\([^"]*\)".*/\1/p')
	[ -n "$task" ] || { echo "cgi: SendMessage over CGI made no task" >&2; exit 1; }
	dbs+=("$TINY_HARNESS_DB") tasks+=("$task")
done

# The runner: N rounds; in each, one run of every row, in turn, so that a machine whose
# load changes during the run (other builds, other benchmarks) weighs on every row alike.
# A run is timed from before the fork to after the exit (wall), and the child's own CPU
# time (user + system, from wait4) is kept too: on a loaded machine the wall time also
# holds the time the run waited for a CPU, its CPU time much less so.
cat >"$work/runner.c" <<'C'
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <fcntl.h>
static long us(struct timeval t) { return t.tv_sec * 1000000L + t.tv_usec; }
int main(int argc, char **argv)
{
	/* runner N OUTDIR mini [BIN TASK DB]... : files OUTDIR/{wall,cpu}.ROW, one time (us) a
	 * line; each BIN runs on its own database DB, GetTask of its TASK */
	int n = atoi(argv[1]);
	const char *dir = argv[2];
	int nb = 1 + (argc - 4) / 3;
	/* CARD_KEY: a third row per program, the card signed with that key */
	static char key[1100];
	int per = getenv("CARD_KEY") != NULL ? 3 : 2;
	if (per == 3)
		snprintf(key, sizeof key, "TINY_HARNESS_CARD_SIGNING_KEY=%s", getenv("CARD_KEY"));
	static char uri[32][512], db[32][1024];
	for (int b = 1; b < nb && b < 32; b++) {
		snprintf(uri[b], sizeof uri[b], "REQUEST_URI=/tasks/%s", argv[3 + 3 * (b - 1) + 2]);
		snprintf(db[b], sizeof db[b], "TINY_HARNESS_DB=%s", argv[3 + 3 * (b - 1) + 3]);
	}
	FILE *out[64][2];
	int rows = 0;
	for (int b = 0; b < nb; b++)
		for (int k = 0; k < (b == 0 ? 1 : per); k++, rows++)
			for (int w = 0; w < 2; w++) {
				char path[1024];
				snprintf(path, sizeof path, "%s/%s.%d", dir, w ? "cpu" : "wall", rows);
				if ((out[rows][w] = fopen(path, "w")) == NULL)
					return 1;
			}
	for (int r = 0; r < n; r++) {
		int row = 0;
		for (int b = 0; b < nb; b++)
			for (int k = 0; k < (b == 0 ? 1 : per); k++, row++) {
				struct timespec s, e;
				struct rusage ru;
				int st;
				clock_gettime(CLOCK_MONOTONIC, &s);
				pid_t p = fork();
				if (p == 0) {
					int fd = open("/dev/null", O_RDWR);
					dup2(fd, 0), dup2(fd, 1), dup2(fd, 2);
					char *card[] = {"REQUEST_METHOD=GET", "REQUEST_URI=/.well-known/agent-card.json", db[b], NULL};
					char *get[] = {"REQUEST_METHOD=GET", uri[b], "REMOTE_ADDR=127.0.0.1", "HTTP_A2A_VERSION=1.0",
					               "HTTP_X_PARTICIPANT_ID=alice", db[b], NULL};
					char *signed_card[] = {"REQUEST_METHOD=GET", "REQUEST_URI=/.well-known/agent-card.json",
					                       db[b], key, NULL};
					char **env = b == 0 ? NULL : k == 0 ? card : k == 1 ? get : signed_card;
					for (int i = 0; env != NULL && env[i] != NULL; i++)
						putenv(env[i]);
					const char *prog = b == 0 ? argv[3] : argv[3 + 3 * (b - 1) + 1];
					execl(prog, prog, (char *)NULL);
					_exit(127);
				}
				if (p < 0 || wait4(p, &st, 0, &ru) != p || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
					return 1;
				clock_gettime(CLOCK_MONOTONIC, &e);
				fprintf(out[row][0], "%ld\n", (e.tv_sec - s.tv_sec) * 1000000L + (e.tv_nsec - s.tv_nsec) / 1000);
				fprintf(out[row][1], "%ld\n", us(ru.ru_utime) + us(ru.ru_stime));
			}
	}
	return 0;
}
C
cc -O2 "$work/runner.c" -o "$work/runner" || { echo "cgi: cannot build the runner" >&2; exit 1; }
args=()
for i in "${!bins[@]}"; do args+=("${bins[$i]}" "${tasks[$i]}" "${dbs[$i]}"); done
"$work/runner" "$N" "$work" "$work/mini" "${args[@]}" || { echo "cgi: a run failed" >&2; exit 1; }

# stat FILE: "median p25-p75" of the times in FILE, in ms
stat() {
	sort -n "$1" | awk '{ a[NR] = $1 } END {
		printf "%.2f %.2f-%.2f", a[int((NR + 1) / 2)] / 1000, a[int((NR + 3) / 4)] / 1000, a[int((3 * NR + 3) / 4)] / 1000 }'
}
med() { stat "$1" | cut -d' ' -f1; }
ratio() { awk -v a="$(med "$1")" -v b="$(med "$2")" 'BEGIN { printf "%.2f", a / b }'; }

printf 'machine: %s CPUs, load %s; N=%s rounds, the rows alternating\n' \
	"$(nproc)" "$(cut -d' ' -f1-3 /proc/loadavg)" "$N"
printf 'each: median p25-p75 in ms; card/m, get/m: median / the minimal program'"'"'s median\n'
for w in wall cpu; do
	case $w in
	wall) echo "wall time, fork to exit:" ;;
	cpu) echo "CPU time of the process (user + system):" ;;
	esac
	printf '  %-40s %17s %17s %6s %6s %5s\n' "program" "card" "GetTask" "card/m" "get/m" "libs"
	printf '  %-40s %17s %17s %6s %6s %5s\n' "minimal (libfcgi, json-c, SQLite)" "$(stat "$work/$w.0")" "-" \
		"1.00" "-" "$(ldd "$work/mini" | wc -l)"
	per=2
	[ -n "${CARD_KEY:-}" ] && per=3
	for i in "${!bins[@]}"; do
		c=$work/$w.$((per * i + 1))
		g=$work/$w.$((per * i + 2))
		printf '  %-40s %17s %17s %6s %6s %5s\n' "${bins[$i]}" "$(stat "$c")" "$(stat "$g")" \
			"$(ratio "$c" "$work/$w.0")" "$(ratio "$g" "$work/$w.0")" "$(ldd "${bins[$i]}" | wc -l)"
		if [ "$per" = 3 ]; then
			sc=$work/$w.$((per * i + 3))
			printf '  %-40s %17s %17s %6s %6s %5s\n' "  the card signed (CARD_KEY)" "$(stat "$sc")" "-" \
				"$(ratio "$sc" "$work/$w.0")" "-" "-"
		fi
	done
done
