#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# bench/pg.sh — tiny-harness on SQLite and on PostgreSQL side by side in one run (issue 15,
# STORE-6): SendMessage and GetTask on each, then two hosts on one PostgreSQL database,
# and how long an event committed through one host takes to reach a subscriber on the
# other. Loopback only; every run is bounded in time; it stops what it started, by pid.
#
#   bench/pg.sh                      uses build/src/tiny-harness; builds nothing
#   ROUNDS=3 DURATION=6s CONNS=16 PROCS=1 LAT_N=200 bench/pg.sh
#   NO_SAVE=1 bench/pg.sh            print only; no bench/results/pg-<date>.txt
#
# Servers (tests/lib/server.sh, lighttpd, PROCS FastCGI workers each, echo model):
#   lite   a fresh SQLite file
#   pg     a fresh database in a throwaway PostgreSQL cluster (tests/lib/pg.sh)
#   pg2    host A = pg plus host B, a second lighttpd with its own workers on the same
#          database: wrk drives both at once with CONNS/2 connections each (summed)
# Each round runs wrk -t2 -cCONNS for each request kind (send: a new task per request;
# get: GetTask of one task) on lite, pg and pg2, the order rotating per round;
# bench/compare.lua counts answers that are not a success, and a run with any is left
# out. Then bench/cross_host.mjs sends LAT_N follow-ups through one host to a task a
# subscriber follows on the other: on SQLite (two servers on one file: woken by
# polling every stream_poll_ms) and on PostgreSQL (woken by NOTIFY).
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=bench/lib.sh
. "$root/bench/lib.sh" # to_ms, median, sched_note
TH_BIN=${TH_BIN:-$root/build/src/tiny-harness}
ROUNDS=${ROUNDS:-3}
DURATION=${DURATION:-6s}
CONNS=${CONNS:-16}
PROCS=${PROCS:-1}
LAT_N=${LAT_N:-200}
export TH_BIN TH_SRCDIR=$root
die() { echo "pg-bench: $*" >&2; exit 1; }
say() { echo "pg-bench: $*" >&2; }
[ -x "$TH_BIN" ] || die "no program at $TH_BIN (build it first)"
for t in wrk curl jq node psql; do command -v $t >/dev/null 2>&1 || die "$t is not installed"; done
secs=${DURATION%s}
case $secs in '' | *[!0-9]*) die "DURATION must be whole seconds, like 6s" ;; esac
unset TINY_HARNESS_CONF TINY_HARNESS_ECHO_DELAY_MS TH_TEST_PG TH_SERVER_DB

state=$(mktemp -d "${TMPDIR:-/tmp}/th-pgbench.XXXXXX")
chmod 755 "$state"
cleanup() {
	for d in liteb lite pgb pg; do
		[ -f "$state/$d/lighttpd.pid" ] && sh "$root/tests/lib/server.sh" stop "$state/$d"
	done
	sh "$root/tests/lib/pg.sh" stop "$state/cluster"
	rm -rf "$state"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

base=$(sh "$root/tests/lib/pg.sh" start "$state/cluster") || die "no PostgreSQL cluster"
declare -A URL TASK
URL[lite]=$(sh "$root/tests/lib/server.sh" start "$state/lite" "$PROCS") || die "lite did not start"
URL[liteb]=$(TH_SERVER_DB=$(cat "$state/lite/db") sh "$root/tests/lib/server.sh" start "$state/liteb" "$PROCS") ||
	die "liteb did not start"
URL[pg]=$(TH_TEST_PG=$base sh "$root/tests/lib/server.sh" start "$state/pg" "$PROCS") || die "pg did not start"
URL[pgb]=$(TH_SERVER_DB=$(cat "$state/pg/db") sh "$root/tests/lib/server.sh" start "$state/pgb" "$PROCS") ||
	die "pgb did not start"
for s in lite liteb pg pgb; do
	case ${URL[$s]} in http://127.0.0.1:*) ;; *) die "refusing a non-loopback URL: ${URL[$s]}" ;; esac
done
for s in lite pg; do
	TASK[$s]=$(curl -s --max-time 10 -H 'Content-Type: application/json' -H 'A2A-Version: 1.0' \
		-H 'X-Participant-Id: bench' --data-binary \
		'{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"bench-get","role":"ROLE_USER","parts":[{"text":"one task to read"}]}}}' \
		"${URL[$s]}" | jq -r '.result.task.id // empty')
	[ -n "${TASK[$s]}" ] || die "$s: SendMessage does not answer"
done
TASK[pg2]=${TASK[pg]}

# wrk_run OUT URL CONNS KIND TASK — one wrk run; prints "rps p99 problem".
wrk_run() {
	BENCH_KIND=$4 BENCH_TASK=$5 BENCH_RUN=$(basename "$1") \
		timeout $((secs + 30)) wrk -t2 -c"$3" -d"${secs}s" --latency -s "$root/bench/compare.lua" "$2" >"$1" 2>&1
	local rps p99 bad
	rps=$(awk '/^Requests\/sec:/ { print $2 }' "$1")
	p99=$(to_ms "$(awk '$1 == "99%" { print $2 }' "$1")")
	bad=$(sed -n 's/^compare: .* bad-status=\([0-9]*\) rpc-errors=\([0-9]*\).*/\1\2/p' "$1")
	[ -n "$rps" ] && [ "${bad:-x}" = 00 ] && ! grep -q 'Socket errors' "$1" && echo "$rps $p99" || echo "bad"
}
declare -A RPS P99 BADN
for round in $(seq 1 "$ROUNDS"); do
	case $((round % 3)) in 1) order="lite pg pg2" ;; 2) order="pg pg2 lite" ;; 0) order="pg2 lite pg" ;; esac
	for kind in send get; do
		for s in $order; do
			say "round $round/$ROUNDS: $kind on $s"
			sync
			if [ "$s" = pg2 ]; then
				half=$((CONNS / 2))
				wrk_run "$state/w-$round-$kind-a" "${URL[pg]}" "$half" "$kind" "${TASK[pg]}" >"$state/ra" &
				wrk_run "$state/w-$round-$kind-b" "${URL[pgb]}" "$half" "$kind" "${TASK[pg]}" >"$state/rb"
				wait
				read -r ra pa <"$state/ra"
				read -r rb pb <"$state/rb"
				if [ "$ra" = bad ] || [ "$rb" = bad ]; then r=bad; else
					r="$(awk -v a="$ra" -v b="$rb" 'BEGIN { printf "%.2f", a + b }') $(awk -v a="$pa" -v b="$pb" 'BEGIN { print (a > b ? a : b) }')"
				fi
			else
				r=$(wrk_run "$state/w-$round-$kind-$s" "${URL[$s]}" "$CONNS" "$kind" "${TASK[$s]}")
			fi
			if [ "$r" = bad ]; then
				BADN[$kind.$s]=$((${BADN[$kind.$s]:-0} + 1))
				say "  not counted: errors in the run"
			else
				RPS[$kind.$s]="${RPS[$kind.$s]:-} ${r% *}"
				P99[$kind.$s]="${P99[$kind.$s]:-} ${r#* }"
			fi
			sleep 1
		done
	done
done
say "cross-host latency, $LAT_N events each"
lat_lite=$(timeout 300 node "$root/bench/cross_host.mjs" "${URL[lite]}" "${URL[liteb]}" "$LAT_N" 2>&1 | tail -n 1)
lat_pg=$(timeout 300 node "$root/bench/cross_host.mjs" "${URL[pg]}" "${URL[pgb]}" "$LAT_N" 2>&1 | tail -n 1)

report() {
	echo "tiny-harness on SQLite and PostgreSQL, $(date -u '+%Y-%m-%d %H:%M UTC')"
	echo "commit:    $(git -C "$root" rev-parse --short HEAD 2>/dev/null)"
	echo "machine:   $(nproc) CPUs; PostgreSQL $(psql --version | awk '{ print $3 }') (throwaway cluster, fsync on, defaults), SQLite $(sqlite3 --version | awk '{ print $1 }') (WAL, synchronous=normal); $(sched_note)"
	echo "load:      $ROUNDS rounds x wrk -t2 -c$CONNS -d${secs}s; lighttpd with $PROCS worker(s) per host, echo model"
	echo
	printf '%-6s %-5s %10s %9s %s\n' kind server req/s p99_ms "rounds (req/s)"
	for kind in send get; do
		for s in lite pg pg2; do
			# shellcheck disable=SC2086
			printf '%-6s %-5s %10s %9s %s%s\n' "$kind" "$s" "$(median ${RPS[$kind.$s]:-})" \
				"$(median ${P99[$kind.$s]:-})" "${RPS[$kind.$s]:-}" \
				"${BADN[$kind.$s]:+ ($((BADN[$kind.$s])) not counted)}"
		done
	done
	echo
	for kind in send get; do
		# shellcheck disable=SC2086
		echo "$kind: pg / lite $(awk -v a="$(median ${RPS[$kind.pg]:-})" -v b="$(median ${RPS[$kind.lite]:-})" 'BEGIN { if (b > 0) printf "%.2f", a / b }'), two hosts / one $(awk -v a="$(median ${RPS[$kind.pg2]:-})" -v b="$(median ${RPS[$kind.pg]:-})" 'BEGIN { if (b > 0) printf "%.2f", a / b }')"
	done
	echo
	echo "SQLite, two servers on one file (polling):  $lat_lite"
	echo "PostgreSQL, two hosts (LISTEN/NOTIFY):      $lat_pg"
}
report | tee "$state/report.txt"
if [ -z "${NO_SAVE:-}" ]; then
	mkdir -p "$root/bench/results"
	cp "$state/report.txt" "$root/bench/results/pg-$(date -u +%Y%m%d-%H%M).txt"
fi
