#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# bench/cgi.sh — what one plain-CGI request costs: the median wall time of N sequential
# runs of the program as CGI (the agent card, and GetTask of one task), next to a minimal
# program linked with the same three core libraries (libfcgi, json-c, SQLite) that starts
# and exits. Each run is timed from a fork by this script to the program's exit, so the
# figures include the same fork/exec overhead for all rows. Local only; no server.
#
#   bench/cgi.sh                          TH_BIN (default build/src/tiny-harness), N=200
#   N=500 bench/cgi.sh
#   BEFORE_BIN=/other/tiny-harness bench/cgi.sh   a second binary measured alongside
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
TH_BIN=${TH_BIN:-$root/build/src/tiny-harness}
N=${N:-200}
[ -x "$TH_BIN" ] || { echo "cgi: no program at $TH_BIN" >&2; exit 1; }
work=$(mktemp -d "${TMPDIR:-/tmp}/th-cgi-bench.XXXXXX")
trap 'rm -rf "$work"' EXIT
export TINY_HARNESS_DB=$work/tiny-harness.db
for v in $(compgen -e | grep '^TINY_HARNESS_' | grep -v '^TINY_HARNESS_DB$'); do unset "$v"; done

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

"$TH_BIN" migrate >/dev/null || exit 1
body='{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"b1","role":"ROLE_USER","parts":[{"text":"hi"}]}}}'
task=$(printf '%s' "$body" | REQUEST_METHOD=POST REQUEST_URI=/ REMOTE_ADDR=127.0.0.1 CONTENT_TYPE=application/json \
	CONTENT_LENGTH=${#body} HTTP_A2A_VERSION=1.0 HTTP_X_PARTICIPANT_ID=alice "$TH_BIN" |
	sed -n 's/.*"task":{"id":"\([^"]*\)".*/\1/p')
[ -n "$task" ] || { echo "cgi: SendMessage over CGI made no task" >&2; exit 1; }

# median BIN KIND: the median of N runs, in ms
median() {
	local bin=$1 kind=$2 s e
	for _ in $(seq 1 "$N"); do
		s=$(date +%s%N)
		case $kind in
		card) REQUEST_METHOD=GET REQUEST_URI=/.well-known/agent-card.json "$bin" >/dev/null 2>&1 </dev/null ;;
		get) REQUEST_METHOD=GET REQUEST_URI=/tasks/$task REMOTE_ADDR=127.0.0.1 HTTP_A2A_VERSION=1.0 HTTP_X_PARTICIPANT_ID=alice \
			"$bin" >/dev/null 2>&1 </dev/null ;;
		mini) "$bin" >/dev/null ;;
		esac
		e=$(date +%s%N)
		echo $(((e - s) / 1000))
	done | sort -n | awk '{ a[NR] = $1 } END { printf "%.2f", a[int((NR + 1) / 2)] / 1000 }'
}

printf 'machine: %s CPUs; N=%s sequential runs per row; median wall ms (fork to exit)\n' "$(nproc)" "$N"
printf '%-44s %8s %8s %6s\n' "program" "card" "GetTask" "libs"
printf '%-44s %8s %8s %6s\n' "minimal (libfcgi, json-c, SQLite)" "$(median "$work/mini" mini)" "-" "$(ldd "$work/mini" | wc -l)"
for b in ${BEFORE_BIN:-} "$TH_BIN"; do
	printf '%-44s %8s %8s %6s\n' "$b" \
		"$(median "$b" card)" "$(median "$b" get)" "$(ldd "$b" | wc -l)"
done
