#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# bench/obs.sh — what the request log line and the metrics counters cost SendMessage
# (issue 31 item 7, decision-070: at most 3 %).
#
#   bench/obs.sh                                   # ~2.5 min; bench/results/obs-<date>.txt
#   ROUNDS=7 DURATION=6s LANDED_BIN=/elsewhere/tiny-harness bench/obs.sh
#   INSTR=1 bench/obs.sh                           # also instructions per request (callgrind)
#
# One build (TH_BIN, default build/src/tiny-harness), two lighttpd servers with the recipe
# (tests/lib/server.sh, PROCS workers each, fresh databases, loopback): `on` with the
# defaults (request_log = 1, metrics = 1: a line per request in lighttpd's log file, the
# counters' file beside the database) and `off` (request_log = 0, metrics = 0). With
# LANDED_BIN a third server runs that build (one without the feature) as `landed`. Each
# round runs wrk -tTHREADS -cCONNS -dDURATION of SendMessage (bench/compare.lua: a new
# task per request, answers that are not a task counted) on every server, one after the
# other, the order rotating from round to round, `sync` before each run. The report gives
# every run, the per-round ratio on/off (and on/landed), and their medians and spread.
# Each run also reads the CPU time (user + system, /proc/PID/stat) the server's worker
# processes (lighttpd's children) used during it, divided by the answers wrk counted: CPU
# microseconds per request, which moves far less with the load of other work on the
# machine than the rate does (wrk and the other servers' idle threads are not in it).
# INSTR=1 then runs bench/instructions.sh on the same build, off and on alternating
# (INSTR_ROUNDS, N requests): instructions do not move with the machine's load.
# Loopback only; every run bounded by DURATION; the servers are stopped on exit.
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
. "$root/bench/lib.sh"
TH_BIN=${TH_BIN:-$root/build/src/tiny-harness}
LANDED_BIN=${LANDED_BIN:-}
ROUNDS=${ROUNDS:-5}
DURATION=${DURATION:-6s}
THREADS=${THREADS:-2}
CONNS=${CONNS:-16}
PROCS=${PROCS:-1}
INSTR=${INSTR:-0}
INSTR_ROUNDS=${INSTR_ROUNDS:-2}
N=${N:-200}
die() { echo "obs: $*" >&2; exit 1; }
for t in wrk curl jq; do command -v "$t" >/dev/null || die "needs $t"; done
[ -x "$TH_BIN" ] || die "no program at $TH_BIN"
[ -z "$LANDED_BIN" ] || [ -x "$LANDED_BIN" ] || die "no program at $LANDED_BIN"
for v in $(env | sed -n 's/^\(TINY_HARNESS_[A-Z0-9_]*\)=.*/\1/p'); do unset "$v"; done

T=$(mktemp -d "${TMPDIR:-/tmp}/th-obs.XXXXXX")
SERVERS=(on off)
[ -n "$LANDED_BIN" ] && SERVERS+=(landed)
cleanup() {
	for s in "${SERVERS[@]}"; do
		[ -f "$T/$s/lighttpd.pid" ] && sh "$root/tests/lib/server.sh" stop "$T/$s"
	done
	rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

declare -A URL
start() { # NAME BIN [VAR=VALUE...]
	local name=$1 bin=$2
	shift 2
	URL[$name]=$(env "$@" TH_BIN="$bin" TH_SRCDIR="$root" sh "$root/tests/lib/server.sh" start "$T/$name" "$PROCS") ||
		die "lighttpd ($name) did not start"
	case ${URL[$name]} in http://127.0.0.1:*) ;; *) die "refusing a non-loopback URL: ${URL[$name]}" ;; esac
	curl -s -H 'Content-Type: application/json' -H 'A2A-Version: 1.0' -H 'X-Participant-Id: bench' \
		--data-binary '{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"check","role":"ROLE_USER","parts":[{"text":"hi"}]}}}' \
		"${URL[$name]}" | jq -e .result.task.id >/dev/null || die "$name: SendMessage did not answer a task"
}
start on "$TH_BIN"
start off "$TH_BIN" TINY_HARNESS_REQUEST_LOG=0 TINY_HARNESS_METRICS=0
[ -n "$LANDED_BIN" ] && start landed "$LANDED_BIN"

out=$T/report
say() { echo "$*" | tee -a "$out"; }
say "# bench/obs.sh $(date -u +%Y-%m-%dT%H:%MZ), commit $(git -C "$root" rev-parse --short HEAD 2>/dev/null)"
say "# $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg); wrk -t$THREADS -c$CONNS -d$DURATION, $PROCS worker(s) a server, $ROUNDS rounds"
say "# on: $TH_BIN (request_log = 1, metrics = 1); off: the same, request_log = 0, metrics = 0${LANDED_BIN:+; landed: $LANDED_BIN}"
# Clock ticks of CPU the worker processes of server NAME have used so far.
cpu_ticks() {
	local lp
	lp=$(cat "$T/$1/lighttpd.pid")
	# shellcheck disable=SC2046 # one pid a word
	cpu_ticks_of $(cat /proc/"$lp"/task/*/children 2>/dev/null)
}
HZ=$(getconf CLK_TCK)
declare -A RATE CPU
bad=0
for r in $(seq "$ROUNDS"); do
	n=${#SERVERS[@]}
	order=()
	for i in $(seq 0 $((n - 1))); do order+=("${SERVERS[$(((i + r - 1) % n))]}"); done
	for s in "${order[@]}"; do
		sync
		c0=$(cpu_ticks "$s")
		f=$T/wrk.$s.$r
		BENCH_KIND=send BENCH_RUN="obs-$s-$r" timeout 120 wrk -t"$THREADS" -c"$CONNS" -d"$DURATION" \
			--latency -s "$root/bench/compare.lua" "${URL[$s]}" >"$f" 2>&1
		c1=$(cpu_ticks "$s")
		rate=$(awk '/^Requests\/sec:/ { print $2 }' "$f")
		answers=$(sed -n 's/^compare: responses=\([0-9]*\) .*/\1/p' "$f")
		cpu=$(awk -v t=$((c1 - c0)) -v hz="$HZ" -v n="${answers:-0}" 'BEGIN { if (n > 0) printf "%.1f", t * 1e6 / hz / n }')
		p99=$(to_ms "$(awk '$1 == "99%" { print $2 }' "$f")")
		errs=$(sed -n 's/^compare: responses=[0-9]* bad-status=\([0-9]*\) rpc-errors=\([0-9]*\)$/\1+\2/p' "$f")
		sock=$(grep -c "Socket errors" "$f")
		mark=
		if [ -z "$rate" ] || [ "$errs" != "0+0" ] || [ "$sock" != 0 ]; then mark='!'; bad=1; fi
		RATE[$s.$r]=$rate
		CPU[$s.$r]=$cpu
		say "$(printf 'round %d  %-7s %9s req/s  p99 %8s ms  worker CPU %7s us/req  errors %s%s' "$r" "$s" "${rate:-?}" "${p99:-?}" "${cpu:-?}" "${errs:-?}" "$mark")"
	done
done

ratios() { # ARRAY A B — per-round A/B of RATE or CPU
	local -n tab=$1
	local r
	for r in $(seq "$ROUNDS"); do
		[ -n "${tab[$2.$r]:-}" ] && [ -n "${tab[$3.$r]:-}" ] &&
			awk -v a="${tab[$2.$r]}" -v b="${tab[$3.$r]}" 'BEGIN { printf "%.4f\n", a / b }'
	done
}
summary() { # ARRAY A B
	local -a v
	mapfile -t v < <(ratios "$@")
	shift
	local lo hi
	lo=$(printf '%s\n' "${v[@]}" | sort -g | head -n1)
	hi=$(printf '%s\n' "${v[@]}" | sort -g | tail -n1)
	local med
	med=$(printf '%s\n' "${v[@]}" | sort -g | awk '{ a[NR] = $1 } END {
		if (NR % 2) printf "%.4f", a[(NR + 1) / 2]; else printf "%.4f", (a[NR / 2] + a[NR / 2 + 1]) / 2 }')
	say "$(printf '%s/%s per round: %s   median %s  (min %s, max %s)' "$1" "$2" "${v[*]}" "$med" "$lo" "$hi")"
}
for s in "${SERVERS[@]}"; do
	vals=() cpus=()
	for r in $(seq "$ROUNDS"); do vals+=("${RATE[$s.$r]:-}") cpus+=("${CPU[$s.$r]:-}"); done
	say "$(printf 'median %-7s %s req/s, worker CPU %s us/req' "$s" "$(median "${vals[@]}")" "$(median "${cpus[@]}")")"
done
say "req/s:"
summary RATE on off
[ -n "$LANDED_BIN" ] && summary RATE on landed && summary RATE off landed
say "worker CPU per request (above 1: on costs more):"
summary CPU on off
[ -n "$LANDED_BIN" ] && summary CPU on landed && summary CPU off landed
lines=$(cat "$T/on/lighttpd.out" "$T/on/error.log" 2>/dev/null | grep -c "info: request method=")
say "# the on server wrote $lines request lines; the off server $(cat "$T/off/lighttpd.out" "$T/off/error.log" 2>/dev/null | grep -c "info: request method=")"

if [ "$INSTR" = 1 ]; then
	for s in "${SERVERS[@]}"; do sh "$root/tests/lib/server.sh" stop "$T/$s"; done
	say "# bench/instructions.sh N=$N, off and on alternating, $INSTR_ROUNDS rounds"
	for r in $(seq "$INSTR_ROUNDS"); do
		for mode in off on; do
			if [ "$mode" = off ]; then
				line=$(TINY_HARNESS_REQUEST_LOG=0 TINY_HARNESS_METRICS=0 ROUNDS=1 N=$N "$root/bench/instructions.sh" "$TH_BIN" 2>&1 | tail -n1)
			else
				line=$(ROUNDS=1 N=$N "$root/bench/instructions.sh" "$TH_BIN" 2>&1 | tail -n1)
			fi
			say "instructions $mode: $(echo "$line" | sed 's/^[^ ]* *//')"
		done
	done
fi

if [ "${NO_SAVE:-0}" != 1 ]; then
	mkdir -p "$root/bench/results"
	dest=$root/bench/results/obs-$(date -u +%Y%m%d-%H%M).txt
	cp "$out" "$dest"
	echo "saved $dest"
fi
exit $bad
