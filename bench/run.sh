#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# bench/run.sh — request rates of tiny-harness behind lighttpd, next to a static file
# served by the same lighttpd (the peer baseline). Loopback only, bounded, stops itself.
#
#   bench/run.sh                 uses build/src/tiny-harness (run ./scripts/run.sh or
#                                ./scripts/test.sh once to build it)
#   BUILD=/path/to/builddir bench/run.sh
#   DURATION=10s THREADS=2 CONNS=8 PROCS=2 bench/run.sh
#   NO_SAVE=1 bench/run.sh       do not write bench/results/<date>.txt
#
# Four wrk runs, one after another, against one lighttpd with PROCS workers:
#   static     GET /static/card.json (a copy of the agent card, served from disk)
#   card       GET /.well-known/agent-card.json (a worker answers)
#   get-task   JSON-RPC GetTask of one task (one read)
#   send       JSON-RPC SendMessage, echo model: a new task per request (writes)
# bench/README.md says how to read the output.
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILD:-$root/build}
TH_BIN=${TH_BIN:-$BUILD/src/tiny-harness}
DURATION=${DURATION:-10s}
THREADS=${THREADS:-2}
CONNS=${CONNS:-8}
PROCS=${PROCS:-1}
export TH_BIN TH_SRCDIR=$root

die() { echo "bench: $*" >&2; exit 1; }
[ -x "$TH_BIN" ] || die "no program at $TH_BIN; build first (./scripts/run.sh or ./scripts/test.sh)"
for t in wrk curl jq sqlite3; do command -v $t >/dev/null 2>&1 || die "$t is not installed (scripts/deps.sh)"; done
case $DURATION in *[!0-9smh]* | '') die "DURATION like 10s" ;; esac
secs=${DURATION%s}
case $secs in *[!0-9]*) secs=60 ;; esac

# The echo model must not sleep, and nothing else from the caller's shell may change
# what is measured.
unset TINY_HARNESS_ECHO_DELAY_MS TINY_HARNESS_CONF
state=$(mktemp -d "${TMPDIR:-/tmp}/th-bench.XXXXXX")
cleanup() {
	sh "$root/tests/lib/server.sh" stop "$state/srv"
	rm -rf "$state"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

url=$(sh "$root/tests/lib/server.sh" start "$state/srv" "$PROCS") || die "lighttpd did not start"
case $url in http://127.0.0.1:*) ;; *) die "refusing a non-loopback URL: $url" ;; esac
db=$state/srv/tiny-harness.db

# The static peer: the same bytes as the card, from disk.
mkdir -p "$state/srv/www/static"
curl -s "${url}.well-known/agent-card.json" >"$state/srv/www/static/card.json"
[ "$(jq -r .name "$state/srv/www/static/card.json" 2>/dev/null)" = tiny-harness ] || die "the card route does not answer"
[ "$(curl -s "${url}static/card.json" | jq -r .name 2>/dev/null)" = tiny-harness ] || die "lighttpd does not serve /static/"

# One task to read, and a check that each request the benchmark sends succeeds (a
# benchmark of error responses would measure nothing).
rpc() {
	curl -s --max-time 10 -H 'Content-Type: application/json' -H 'A2A-Version: 1.0' \
		-H 'X-Participant-Id: bench' -d "$1" "$url"
}
TH_BENCH_TASK=$(rpc '{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"seed","role":"ROLE_USER","parts":[{"text":"the task GetTask reads"}]}}}' |
	jq -r .result.task.id)
[ -n "$TH_BENCH_TASK" ] && [ "$TH_BENCH_TASK" != null ] || die "SendMessage did not create a task"
export TH_BENCH_TASK
[ "$(rpc "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"GetTask\",\"params\":{\"id\":\"$TH_BENCH_TASK\"}}" | jq -r .result.id)" = "$TH_BENCH_TASK" ] ||
	die "GetTask does not answer"

# run NAME WRK-ARGS… — one bounded wrk run; sets RPS[NAME], LAT[NAME] (mean), P50, P99, ERR.
declare -A RPS LAT P50 P99 ERR REQS
run() {
	local name=$1 out
	shift
	out=$state/wrk-$name.txt
	echo "bench: $name (wrk -t$THREADS -c$CONNS -d$DURATION)…" >&2
	timeout $((secs + 30)) wrk -t"$THREADS" -c"$CONNS" -d"$DURATION" --latency "$@" >"$out" 2>&1
	RPS[$name]=$(awk '/^Requests\/sec:/ { print $2 }' "$out")
	LAT[$name]=$(awk '$1 == "Latency" { print $2; exit }' "$out")
	P50[$name]=$(awk '$1 == "50%" { print $2 }' "$out")
	P99[$name]=$(awk '$1 == "99%" { print $2 }' "$out")
	REQS[$name]=$(awk '/requests in/ { print $1 }' "$out")
	local non2xx sock
	non2xx=$(awk '/Non-2xx or 3xx responses:/ { print $NF }' "$out")
	sock=$(awk '/Socket errors:/ { sub(/^.*Socket errors: /, ""); print }' "$out")
	ERR[$name]="${non2xx:-0} non-2xx${sock:+; socket errors: $sock}"
	[ -n "${RPS[$name]}" ] || { cat "$out" >&2; die "wrk failed for $name"; }
}

run static "${url}static/card.json"
run card "${url}.well-known/agent-card.json"
run get-task -s "$root/bench/get_task.lua" "$url"
tasks_before=$(sqlite3 "$db" 'SELECT COUNT(*) FROM tasks')
run send -s "$root/bench/send_message.lua" "$url"
tasks_after=$(sqlite3 "$db" 'SELECT COUNT(*) FROM tasks')
parked=$(sqlite3 "$db" "SELECT COUNT(*) FROM tasks WHERE sub_state = 'awaiting-next-message'")

# ---------------------------------------------------------------- report
ver() { "$@" 2>&1 | head -n1; }
report=$state/report.txt
{
	echo "tiny-harness benchmark, $(date -u '+%Y-%m-%d %H:%M UTC')"
	echo "commit:    $(git -C "$root" rev-parse --short HEAD 2>/dev/null)$(git -C "$root" diff --quiet 2>/dev/null || echo ' (work tree modified)')"
	echo "binary:    ${TH_BIN#"$root"/}, built $(date -u -r "$TH_BIN" '+%Y-%m-%d %H:%M UTC')"
	echo "machine:   $(nproc) CPUs, $(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo)"
	echo "software:  $(ver lighttpd -v | sed 's/ - a light.*//'), $(ver wrk -v | awk '{ print "wrk", $2 }'), SQLite $(sqlite3 --version | awk '{ print $1 }')"
	echo "setup:     lighttpd on loopback, $PROCS FastCGI workers (conf/lighttpd.conf), echo model, synchronous=NORMAL default"
	echo "load:      wrk -t$THREADS -c$CONNS -d$DURATION --latency, client on the same machine"
	echo
	printf '%-10s %10s %10s %10s %10s %10s  %s\n' request req/s "vs static" mean p50 p99 errors
	for name in static card get-task send; do
		ratio=$(awk -v a="${RPS[$name]}" -v b="${RPS[static]}" 'BEGIN { printf "%.2f", a / b }')
		printf '%-10s %10s %10s %10s %10s %10s  %s\n' "$name" "${RPS[$name]}" "$ratio" \
			"${LAT[$name]}" "${P50[$name]}" "${P99[$name]}" "${ERR[$name]}"
	done
	echo
	echo "send: wrk counted ${REQS[send]} requests; tasks stored $((tasks_after - tasks_before)); tasks parked awaiting-next-message in all: $parked"
	echo "requests: static = GET /static/card.json; card = GET /.well-known/agent-card.json;"
	echo "          get-task = JSON-RPC GetTask (bench/get_task.lua); send = JSON-RPC SendMessage, new task each (bench/send_message.lua)"
} >"$report"
cat "$report"
if [ "${NO_SAVE:-0}" != 1 ]; then
	mkdir -p "$root/bench/results"
	dest=$root/bench/results/$(date -u +%Y-%m-%d).txt
	[ -e "$dest" ] && dest=$root/bench/results/$(date -u +%Y-%m-%d-%H%M).txt
	cp "$report" "$dest"
	echo "bench: wrote ${dest#"$root"/}" >&2
fi
