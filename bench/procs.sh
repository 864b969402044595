#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# bench/procs.sh — HOST-2: SendMessage with one worker process against several on one
# SQLite file, for one build or two builds side by side (before / after), alternating in
# the same run. Loopback only; every wrk run is bounded in time; it stops lighttpd and
# deletes its state by itself.
#
#   bench/procs.sh                                  build/src/tiny-harness, 1 and 4 processes
#   BEFORE=/path/to/old/tiny-harness bench/procs.sh adds the other build, measured alternately
#   PROCS="1 2 4" ROUNDS=4 DURATION=6s WARMUP=1s THREADS=2 CONNS=16 bench/procs.sh
#   WORKER_THREADS=1 bench/procs.sh                 worker_threads of each process (default: the
#                                                   program's, 16); 1 is how mod_fcgid uses a process
#   NO_SAVE=1 bench/procs.sh                        print only; no bench/results/procs-<date>.txt
#
# Each run starts a fresh lighttpd (tests/lib/server.sh, conf/lighttpd.conf) with N workers
# on a fresh database, checks one SendMessage, runs wrk for WARMUP (not counted), then
# `sync` and wrk for DURATION with bench/compare.lua (BENCH_KIND=send: a new task per
# request), and stops the server. The configurations (build × process count) run in a
# rotated order each round, so that drift on a shared machine hits each alike. It prints,
# per configuration, the median req/s, p50 and p99 and every round's req/s, and per build
# the ratio of each process count's median to the one-process median (the HOST-2 target is
# 0.9 or more). Since raw rates on a shared machine swing by tens of percent from run to
# run, it also prints the workers' figures per request, which other load moves much less:
# CPU time (utime + stime of the workers, /proc/PID/stat), context switches (voluntary and
# not, every thread), and read and write system calls (/proc/PID/io syscr, syscw: a read of
# a page SQLite had to load again is a pread). A run with non-200 answers, JSON-RPC errors or socket errors is marked `!`,
# left out of the medians, and the script exits 1.
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=bench/lib.sh
. "$root/bench/lib.sh" # to_ms
TH_SRCDIR=${TH_SRCDIR:-$root}
AFTER=${AFTER:-${TH_BIN:-$root/build/src/tiny-harness}}
BEFORE=${BEFORE:-}
PROCS=${PROCS:-1 4}
ROUNDS=${ROUNDS:-3}
DURATION=${DURATION:-6s}
WARMUP=${WARMUP:-1s}
THREADS=${THREADS:-2}
CONNS=${CONNS:-16}
WORKER_THREADS=${WORKER_THREADS:-}
lua=$root/bench/compare.lua

die() { echo "procs: $*" >&2; exit 1; }
say() { echo "procs: $*" >&2; }
for t in wrk curl jq sqlite3; do command -v $t >/dev/null 2>&1 || die "$t is not installed"; done
abs() { case $1 in /*) echo "$1" ;; *) echo "$(cd "$(dirname "$1")" && pwd)/$(basename "$1")" ;; esac; }
[ -x "$AFTER" ] || die "no program at $AFTER (build first; this script builds nothing)"
AFTER=$(abs "$AFTER")
builds=after
declare -A BIN=([after]=$AFTER)
if [ -n "$BEFORE" ]; then
	[ -x "$BEFORE" ] || die "no program at BEFORE=$BEFORE"
	BIN[before]=$(abs "$BEFORE")
	builds="before after"
fi
for n in $PROCS; do case $n in '' | *[!0-9]* | 0) die "PROCS must be positive whole numbers, not '$n'" ;; esac; done
secs=${DURATION%s}
wsecs=${WARMUP%s}
case $secs$wsecs in *[!0-9]*) die "DURATION and WARMUP are whole seconds like 6s" ;; esac

for v in $(compgen -e | grep '^TINY_HARNESS_'); do unset "$v"; done
[ -z "$WORKER_THREADS" ] || export TINY_HARNESS_WORKER_THREADS=$WORKER_THREADS
export TH_SRCDIR
state=$(mktemp -d "${TMPDIR:-/tmp}/th-procs.XXXXXX")
cur=
cleanup() {
	[ -z "$cur" ] || sh "$TH_SRCDIR/tests/lib/server.sh" stop "$cur" >/dev/null 2>&1
	rm -rf "$state"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

median() {
	[ $# -gt 0 ] || { echo; return; }
	printf '%s\n' "$@" | sort -g | awk '{ a[NR] = $1 } END {
		if (NR % 2) printf "%.1f", a[(NR + 1) / 2]; else printf "%.1f", (a[NR / 2] + a[NR / 2 + 1]) / 2 }'
}

# The workers' counters summed: CPU ticks, context switches, read and write system calls.
counters() { # PIDS...
	local p t=0 c=0 r=0 w=0 a b
	for p in "$@"; do
		read -r a b < <(cut -d' ' -f14,15 "/proc/$p/stat" 2>/dev/null) || continue
		t=$((t + a + b))
		c=$((c + $(cat /proc/"$p"/task/*/status 2>/dev/null | awk '/ctxt_switches/ { s += $2 } END { print s + 0 }')))
		r=$((r + $(awk '/^syscr/ { print $2 }' "/proc/$p/io" 2>/dev/null || echo 0)))
		w=$((w + $(awk '/^syscw/ { print $2 }' "/proc/$p/io" 2>/dev/null || echo 0)))
	done
	echo "$t $c $r $w"
}
hz=$(getconf CLK_TCK)

configs=()
for b in $builds; do for n in $PROCS; do configs+=("$b:$n"); done; done
declare -A RPS P50 P99 ALL CPU CSW RD WR
bad=0
run() { # ROUND BUILD N
	local round=$1 b=$2 n=$3 dir url out rps p50 p99 problem=
	dir=$state/r$round-$b-$n
	cur=$dir
	url=$(TH_BIN=${BIN[$b]} sh "$TH_SRCDIR/tests/lib/server.sh" start "$dir" "$n") || die "$b with $n processes did not start"
	case $url in http://127.0.0.1:*/) ;; *) die "refusing a non-loopback URL: $url" ;; esac
	out=$(curl -s --max-time 10 -H 'Content-Type: application/json' -H 'A2A-Version: 1.0' \
		-H 'X-Participant-Id: bench' -d '{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"seed","role":"ROLE_USER","parts":[{"text":"x"}]}}}' "$url")
	[ "$(jq -r '.result.task.status.state' <<<"$out" 2>/dev/null)" = TASK_STATE_INPUT_REQUIRED ] ||
		die "$b/$n: SendMessage did not answer with a task: $out"
	if [ "$wsecs" -gt 0 ]; then
		BENCH_KIND=send BENCH_RUN=w$round$b$n timeout $((wsecs + 30)) \
			wrk -t"$THREADS" -c"$CONNS" -d"${wsecs}s" -s "$lua" "$url" >/dev/null 2>&1
	fi
	sync
	say "round $round/$ROUNDS: $b with $n process(es)"
	local pids c0 c1 reqs
	pids=$(pgrep -P "$(cat "$dir/lighttpd.pid")" | tr '\n' ' ')
	# shellcheck disable=SC2086
	c0=$(counters $pids)
	BENCH_KIND=send BENCH_RUN=r$round$b$n timeout $((secs + 30)) \
		wrk -t"$THREADS" -c"$CONNS" -d"${secs}s" --latency -s "$lua" "$url" >"$dir/wrk.txt" 2>&1
	# shellcheck disable=SC2086
	c1=$(counters $pids)
	reqs=$(awk '/ requests in / { print $1 }' "$dir/wrk.txt")
	sh "$TH_SRCDIR/tests/lib/server.sh" stop "$dir" >/dev/null 2>&1
	cur=
	rps=$(awk '/^Requests\/sec:/ { print $2 }' "$dir/wrk.txt")
	p50=$(to_ms "$(awk '$1 == "50%" { print $2 }' "$dir/wrk.txt")")
	p99=$(to_ms "$(awk '$1 == "99%" { print $2 }' "$dir/wrk.txt")")
	[ -n "$rps" ] || problem="wrk failed"
	grep -q 'bad-status=0 rpc-errors=0' "$dir/wrk.txt" || problem="$problem bad answers"
	grep -q 'Socket errors' "$dir/wrk.txt" && problem="$problem socket errors"
	local key=$b:$n
	if [ -n "$problem" ]; then
		say "  $key round $round NOT COUNTED:$problem"
		ALL[$key]="${ALL[$key]:-} ${rps:-?}!"
		bad=$((bad + 1))
	else
		RPS[$key]="${RPS[$key]:-} $rps"
		P50[$key]="${P50[$key]:-} $p50"
		P99[$key]="${P99[$key]:-} $p99"
		ALL[$key]="${ALL[$key]:-} ${rps%.*}"
		if [ "${reqs:-0}" -gt 0 ]; then
			# shellcheck disable=SC2086
			set -- $c0 $c1
			CPU[$key]="${CPU[$key]:-} $(awk -v d=$(($5 - $1)) -v n="$reqs" -v hz="$hz" 'BEGIN { printf "%.0f", d / hz * 1e6 / n }')"
			CSW[$key]="${CSW[$key]:-} $(awk -v d=$(($6 - $2)) -v n="$reqs" 'BEGIN { printf "%.2f", d / n }')"
			RD[$key]="${RD[$key]:-} $(awk -v d=$(($7 - $3)) -v n="$reqs" 'BEGIN { printf "%.2f", d / n }')"
			WR[$key]="${WR[$key]:-} $(awk -v d=$(($8 - $4)) -v n="$reqs" 'BEGIN { printf "%.2f", d / n }')"
		fi
	fi
	rm -rf "$dir"
}

started=$(date +%s)
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
nc=${#configs[@]}
for round in $(seq 1 "$ROUNDS"); do
	for i in $(seq 0 $((nc - 1))); do
		cfg=${configs[$(((i + round - 1) % nc))]}
		run "$round" "${cfg%:*}" "${cfg#*:}"
	done
done
load_after=$(cut -d' ' -f1-3 /proc/loadavg)

report=$state/report.txt
{
	echo "SendMessage by worker processes on one database (HOST-2), $(date -u '+%Y-%m-%d %H:%M UTC')"
	echo "commit:   $(git -C "$root" rev-parse --short HEAD 2>/dev/null)$(git -C "$root" diff --quiet 2>/dev/null || echo ' (work tree modified)')"
	for b in $builds; do echo "$b:$(printf '%*s' $((7 - ${#b})) '') ${BIN[$b]}, built $(date -u -r "${BIN[$b]}" '+%Y-%m-%d %H:%M UTC')"; done
	echo "machine:  $(nproc) CPUs; load average $load_before before, $load_after after"
	echo "load:     $ROUNDS rounds x wrk -t$THREADS -c$CONNS -d${secs}s (after ${wsecs}s warm-up) per configuration, rotated order,"
	echo "          lighttpd (conf/lighttpd.conf), worker_threads ${WORKER_THREADS:-default}, echo model, a fresh database per run;"
	echo "          $(($(date +%s) - started)) s in all"
	echo
	printf '%-8s %5s %9s %8s %8s %8s   %s\n' build procs "req/s" "vs 1" "p50 ms" "p99 ms" "req/s of each round"
	for b in $builds; do
		# shellcheck disable=SC2086
		one=$(median ${RPS[$b:1]:-})
		for n in $PROCS; do
			k=$b:$n
			# shellcheck disable=SC2086
			m=$(median ${RPS[$k]:-})
			r=$(awk -v a="$m" -v b="$one" 'BEGIN { if (a == "" || b == "" || b == 0) print "n/a"; else printf "%.2f", a / b }')
			# shellcheck disable=SC2086
			printf '%-8s %5s %9s %8s %8s %8s  %s\n' "$b" "$n" "${m:-n/a}" "$r" "$(median ${P50[$k]:-})" "$(median ${P99[$k]:-})" "${ALL[$k]:-}"
		done
	done
	echo
	echo "per request, medians of the workers' counters (CPU us; context switches; read and write system calls):"
	printf '%-8s %5s %9s %8s %8s %8s\n' build procs "CPU us" "csw" "reads" "writes"
	for b in $builds; do
		for n in $PROCS; do
			k=$b:$n
			# shellcheck disable=SC2086
			printf '%-8s %5s %9s %8s %8s %8s\n' "$b" "$n" "$(median ${CPU[$k]:-})" "$(median ${CSW[$k]:-})" "$(median ${RD[$k]:-})" "$(median ${WR[$k]:-})"
		done
	done
	if [ -n "$BEFORE" ]; then
		echo
		for n in $PROCS; do
			# shellcheck disable=SC2086
			echo "after / before, $n process(es): $(awk -v a="$(median ${RPS[after:$n]:-})" -v b="$(median ${RPS[before:$n]:-})" 'BEGIN { if (a == "" || b == "" || b == 0) print "n/a"; else printf "%.2f", a / b }')"
		done
	fi
	[ "$bad" = 0 ] || echo "RUNS WITH ERRORS: $bad (marked !, not counted)"
} >"$report"
cat "$report"
if [ "${NO_SAVE:-0}" != 1 ]; then
	mkdir -p "$root/bench/results"
	dest=$root/bench/results/procs-$(date -u +%Y-%m-%d-%H%M).txt
	cp "$report" "$dest"
	say "wrote ${dest#"$root"/}"
fi
[ "$bad" = 0 ]
