#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# bench/ab.sh — two or more builds side by side, in alternating rounds: SendMessage (or
# GetTask) req/s, p99, and the CPU each build's workers (and, on PostgreSQL, the database
# server) spend per answered request. For the before/after figures of one change on a
# shared machine, where one run's rate moves by ±15% but CPU per request far less.
#
#   bench/ab.sh OLD_BIN NEW_BIN [MORE_BIN...]
#   ROUNDS=4 DURATION=6 KIND=send CONNS=16 PROCS=1 bench/ab.sh A B
#   PG=1 bench/ab.sh A B      each build on its own database in one throwaway cluster
#   NO_SAVE=1 bench/ab.sh …   print only; no bench/results/ab-<date>.txt
#
# Each build gets a lighttpd with the recipe (tests/lib/server.sh, PROCS workers, a fresh
# database, loopback). Each round runs every build in turn, the order rotating by one each
# round: a 2 s warm-up, then wrk -t2 -cCONNS -dDURATIONs of KIND (bench/compare.lua: send =
# a new task per request, get = GetTask of one task made at start). Per run it prints
# req/s, p99 and the user + system CPU (/proc/PID/stat) of the build's workers (lighttpd's
# children) over the answers wrk counted; with PG=1 also the cluster's CPU over them: every
# live server process plus what the postmaster reaped (the workers' connections live as
# long as they do, so none is counted twice). The other builds' servers are idle meanwhile.
# At the end: each build's medians and each one's median over the first build's. A build
# against a copy of itself shows how far this machine's rounds spread (two rounds of 3 s
# gave the same program 0.83x and 1.10x of itself on 2026-12-07): read a difference only
# when it is larger than that, over ROUNDS >= 4 of DURATION >= 6.
# Loopback only; about ROUNDS x builds x (DURATION + 3) s; what it started it stops, by pid.
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=bench/lib.sh
. "$root/bench/lib.sh" # median, cpu_ticks_of, reaped_ticks_of
ROUNDS=${ROUNDS:-4}
DURATION=${DURATION:-6}
KIND=${KIND:-send}
CONNS=${CONNS:-16}
PROCS=${PROCS:-1}
PG=${PG:-0}
die() { echo "ab: $*" >&2; exit 1; }
[ $# -ge 2 ] || die "usage: bench/ab.sh BIN BIN [BIN...] (absolute paths of built programs)"
case $DURATION in '' | *[!0-9]*) die "DURATION must be whole seconds" ;; esac
case $KIND in send | get) ;; *) die "KIND must be send or get" ;; esac
for t in wrk curl jq; do command -v $t >/dev/null 2>&1 || die "$t is not installed"; done
bins=("$@")
for b in "${bins[@]}"; do [ -x "$b" ] || die "no program at $b"; done
tick=$(getconf CLK_TCK)
unset TINY_HARNESS_CONF TH_TEST_PG TH_SERVER_DB
export TH_SRCDIR=$root

state=$(mktemp -d "${TMPDIR:-/tmp}/th-ab.XXXXXX")
chmod 755 "$state"
cleanup() {
	for d in "$state"/s*; do
		[ -f "$d/lighttpd.pid" ] && sh "$root/tests/lib/server.sh" stop "$d"
	done
	[ "$PG" = 1 ] && sh "$root/tests/lib/pg.sh" stop "$state/cluster"
	rm -rf "$state"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

base=
if [ "$PG" = 1 ]; then
	base=$(sh "$root/tests/lib/pg.sh" start "$state/cluster") || die "no PostgreSQL cluster"
fi
declare -a url task
for i in "${!bins[@]}"; do
	url[i]=$(TH_BIN=${bins[i]} TH_TEST_PG=$base sh "$root/tests/lib/server.sh" start "$state/s$i" "$PROCS") ||
		die "build $i did not start: ${bins[i]}"
	case ${url[i]} in http://127.0.0.1:*) ;; *) die "refusing a non-loopback URL: ${url[i]}" ;; esac
	task[i]=$(curl -s --max-time 10 -H 'Content-Type: application/json' -H 'A2A-Version: 1.0' \
		-H 'X-Participant-Id: bench' --data-binary \
		'{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"ab-get","role":"ROLE_USER","parts":[{"text":"one task to read"}]}}}' \
		"${url[i]}" | jq -r '.result.task.id // empty')
	[ -n "${task[i]}" ] || die "build $i does not answer SendMessage"
done

# shellcheck disable=SC2046 # one pid a word
workers_ticks() { cpu_ticks_of $(pgrep -P "$(cat "$state/s$1/lighttpd.pid")"); }
pg_ticks() {
	local pm
	pm=$(cat "$state/cluster/pg.pid")
	# shellcheck disable=SC2046 # one pid a word
	echo $(($(cpu_ticks_of "$pm" $(pgrep -P "$pm")) + $(reaped_ticks_of "$pm")))
}
us_per() { awk -v t="$1" -v n="$2" -v hz="$tick" 'BEGIN { printf "%d", (n > 0 ? t * 1e6 / hz / n : 0) }'; }

declare -A rps cpu pgcpu
report=$state/report.txt
{
	echo "bench/ab.sh, $(date -u '+%Y-%m-%d %H:%M') UTC; commit $(git -C "$root" rev-parse --short HEAD 2>/dev/null)"
	echo "machine: $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg); KIND=$KIND CONNS=$CONNS PROCS=$PROCS DURATION=${DURATION}s ROUNDS=$ROUNDS PG=$PG"
	for i in "${!bins[@]}"; do echo "build $i: ${bins[i]}"; done
} | tee "$report"
n=${#bins[@]}
for r in $(seq "$ROUNDS"); do
	for k in $(seq 0 $((n - 1))); do
		i=$(((k + r - 1) % n))
		BENCH_KIND=$KIND BENCH_TASK=${task[i]} BENCH_RUN=ab-w$r-$i timeout 30 \
			wrk -t2 -c"$CONNS" -d2s -s "$root/bench/compare.lua" "${url[i]}" >/dev/null 2>&1
		w0=$(workers_ticks "$i")
		[ "$PG" = 1 ] && p0=$(pg_ticks)
		out=$state/r$r-$i.txt
		BENCH_KIND=$KIND BENCH_TASK=${task[i]} BENCH_RUN=ab-r$r-$i timeout $((DURATION + 30)) \
			wrk -t2 -c"$CONNS" -d"${DURATION}s" --latency -s "$root/bench/compare.lua" "${url[i]}" >"$out" 2>&1
		w1=$(workers_ticks "$i")
		[ "$PG" = 1 ] && p1=$(pg_ticks)
		answered=$(awk -F'[ =]' '/^compare:/ { print $3 }' "$out")
		bad=$(grep -o 'bad-status=[0-9]* rpc-errors=[0-9]*' "$out")
		rate=$(awk '/^Requests\/sec:/ { print $2 }' "$out")
		wus=$(us_per $((w1 - w0)) "${answered:-0}")
		rps[$i]="${rps[$i]:-} $rate"
		cpu[$i]="${cpu[$i]:-} $wus"
		line="round $r build $i: $rate req/s, p99 $(awk '$1 == "99%" { print $2 }' "$out"), workers $wus us/request"
		if [ "$PG" = 1 ]; then
			pus=$(us_per $((p1 - p0)) "${answered:-0}")
			pgcpu[$i]="${pgcpu[$i]:-} $pus"
			line="$line, PostgreSQL $pus us/request"
		fi
		echo "$line ($bad)" | tee -a "$report"
	done
done
{
	echo "medians over $ROUNDS rounds (ratio: over build 0):"
	# shellcheck disable=SC2086 # the lists are words
	m0=$(median ${rps[0]})
	# shellcheck disable=SC2086
	c0=$(median ${cpu[0]})
	for i in "${!bins[@]}"; do
		# shellcheck disable=SC2086
		m=$(median ${rps[$i]})
		# shellcheck disable=SC2086
		c=$(median ${cpu[$i]})
		line=$(awk -v i="$i" -v m="$m" -v c="$c" -v m0="$m0" -v c0="$c0" 'BEGIN {
			printf "build %s: %.0f req/s (%.2f), workers %d us/request (%.2f)", i, m, m / m0, c, (c0 > 0 ? c / c0 : 0) }')
		# shellcheck disable=SC2086
		[ "$PG" = 1 ] && line="$line, PostgreSQL $(median ${pgcpu[$i]}) us/request"
		echo "$line"
	done
} | tee -a "$report"
if [ "${NO_SAVE:-0}" != 1 ]; then
	mkdir -p "$root/bench/results"
	cp "$report" "$root/bench/results/ab-$(date -u '+%Y-%m-%d-%H%M').txt"
fi
