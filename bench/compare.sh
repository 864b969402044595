#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# bench/compare.sh — tiny-harness side by side with a peer built on the official A2A JS
# SDK (bench/peer: @a2a-js/sdk 1.3.0, express, tasks in SQLite), doing the same echo work.
# Loopback only; every run is bounded in time; it stops both servers by itself.
#
#   (cd bench/peer && npm ci)          once: the peer's dependencies
#   bench/compare.sh                   uses build/src/tiny-harness; builds nothing
#   TH_BIN=/path/to/tiny-harness TH_SRCDIR=/path/to/checkout bench/compare.sh
#   ROUNDS=3 DURATION=8s THREADS=2 CONNS=16 PROCS=2 PEER_PROCS=1 bench/compare.sh
#   SYNCHRONOUS=full bench/compare.sh  both servers with synchronous=FULL (default normal)
#   NO_SAVE=1 bench/compare.sh         print only; do not write bench/results/compare-<date>.txt
#
# It starts tiny-harness under lighttpd with PROCS FastCGI workers (tests/lib/server.sh
# from TH_SRCDIR, echo model, a fresh database) and the peer (node bench/peer/server.mjs,
# PEER_PROCS processes, a fresh database), checks that each request it will send gets the
# expected answer from both, then runs wrk for ROUNDS rounds. Each round measures, for
# each request kind, tiny-harness and the peer one after the other, alternating which
# goes first (odd rounds tiny-harness, even rounds the peer):
#   send   JSON-RPC SendMessage, a new task per request (unique messageId)
#   get    JSON-RPC GetTask of one existing task
#   card   GET /.well-known/agent-card.json (the transport ceiling: no database)
# bench/compare.lua counts responses that are not HTTP 200 or carry no JSON-RPC result;
# a run with any of those, or with socket errors, is reported and left out of the medians.
# The table gives the median req/s and median p99 of the clean rounds, and the ratios
# tiny-harness/peer (SendMessage, GetTask) and GetTask/card. bench/README.md says more.
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=bench/lib.sh
. "$root/bench/lib.sh" # to_ms, median
TH_SRCDIR=${TH_SRCDIR:-$root}
TH_BIN=${TH_BIN:-$root/build/src/tiny-harness}
ROUNDS=${ROUNDS:-3}
DURATION=${DURATION:-8s}
THREADS=${THREADS:-2}
CONNS=${CONNS:-16}
PROCS=${PROCS:-1}
PEER_PROCS=${PEER_PROCS:-1}
SYNCHRONOUS=${SYNCHRONOUS:-normal}
peer_dir=$root/bench/peer
lua=$root/bench/compare.lua

die() { echo "compare: $*" >&2; exit 1; }
say() { echo "compare: $*" >&2; }

# ---------------------------------------------------------------- checks
[ -x "$TH_BIN" ] || die "no program at TH_BIN=$TH_BIN (build it first; this script builds nothing)"
[ -r "$TH_SRCDIR/tests/lib/server.sh" ] || die "no tests/lib/server.sh under TH_SRCDIR=$TH_SRCDIR"
for t in wrk curl jq node sqlite3; do
	command -v $t >/dev/null 2>&1 || die "$t is not installed"
done
if [ ! -d "$peer_dir/node_modules/@a2a-js/sdk" ] || [ ! -d "$peer_dir/node_modules/better-sqlite3" ]; then
	die "the peer's dependencies are missing: cd bench/peer && npm ci"
fi
case $ROUNDS in '' | *[!0-9]* | 0) die "ROUNDS must be a positive number" ;; esac
secs=${DURATION%s}
case $secs in '' | *[!0-9]* | 0) die "DURATION must be whole seconds, like 8s" ;; esac
case $SYNCHRONOUS in normal | full) ;; *) die "SYNCHRONOUS must be normal or full" ;; esac

# random_port, port_busy, alive, wait_card
# shellcheck source=../tests/lib/proc.sh
. "$TH_SRCDIR/tests/lib/proc.sh"

# Nothing from the caller's shell may change what tiny-harness does (model, echo delay,
# limits, a config file); only the durability setting is chosen here, for both servers.
for v in $(compgen -e | grep '^TINY_HARNESS_'); do unset "$v"; done
export TINY_HARNESS_SYNCHRONOUS=$SYNCHRONOUS
export TH_BIN TH_SRCDIR

state=$(mktemp -d "${TMPDIR:-/tmp}/th-compare.XXXXXX")
mkdir -p "$state/th" "$state/peer"
peer_pid=
cleanup() {
	sh "$TH_SRCDIR/tests/lib/server.sh" stop "$state/th"
	if [ -n "$peer_pid" ] && alive "$peer_pid"; then
		kill -TERM "$peer_pid" 2>/dev/null
		i=0
		while alive "$peer_pid" && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
		alive "$peer_pid" && kill -KILL "$peer_pid" 2>/dev/null
	fi
	rm -rf "$state"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

# ---------------------------------------------------------------- start both servers
th_url=$(sh "$TH_SRCDIR/tests/lib/server.sh" start "$state/th" "$PROCS") || die "tiny-harness (lighttpd) did not start"
case $th_url in http://127.0.0.1:*/) ;; *) die "refusing a non-loopback URL: $th_url" ;; esac
th_db=$state/th/tiny-harness.db

peer_db=$state/peer/peer.db
tries=0
while :; do
	tries=$((tries + 1))
	[ $tries -le 5 ] || die "no free port for the peer"
	port=$(random_port)
	port_busy "$port" && continue
	node "$peer_dir/server.mjs" --port "$port" --db "$peer_db" --procs "$PEER_PROCS" \
		--synchronous "$SYNCHRONOUS" </dev/null >"$state/peer/peer.log" 2>&1 &
	peer_pid=$!
	echo "$peer_pid" >"$state/peer/peer.pid"
	peer_url=http://127.0.0.1:$port/
	wait_card "$peer_pid" "$peer_url" && break
	alive "$peer_pid" || grep -q EADDRINUSE "$state/peer/peer.log" || {
		cat "$state/peer/peer.log" >&2
		die "the peer did not start"
	}
	alive "$peer_pid" && { cat "$state/peer/peer.log" >&2; die "the peer never served its card"; }
done
say "tiny-harness at $th_url ($PROCS workers), peer at $peer_url (pid $peer_pid, $PEER_PROCS process(es))"

# ---------------------------------------------------------------- check each request
rpc() { # URL BODY
	curl -s --max-time 10 -H 'Content-Type: application/json' -H 'A2A-Version: 1.0' \
		-H 'X-Participant-Id: bench' -d "$2" "$1"
}
declare -A URL TASK
URL[th]=$th_url
URL[peer]=$peer_url
for s in th peer; do
	out=$(rpc "${URL[$s]}" '{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"seed","role":"ROLE_USER","parts":[{"text":"the task GetTask reads"}]}}}')
	if [ "$(jq -r '.result.task.status.state' <<<"$out" 2>/dev/null)" != TASK_STATE_INPUT_REQUIRED ] ||
		[ "$(jq -r '.result.task.status.message.parts[0].text' <<<"$out" 2>/dev/null)" != "echo: the task GetTask reads" ]; then
		die "$s: SendMessage did not answer with an echo in TASK_STATE_INPUT_REQUIRED: $out"
	fi
	TASK[$s]=$(jq -r .result.task.id <<<"$out")
	out=$(rpc "${URL[$s]}" "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"GetTask\",\"params\":{\"id\":\"${TASK[$s]}\"}}")
	[ "$(jq -r .result.id <<<"$out" 2>/dev/null)" = "${TASK[$s]}" ] || die "$s: GetTask does not answer: $out"
	[ -n "$(curl -s --max-time 10 "${URL[$s]}.well-known/agent-card.json" | jq -r '.name // empty' 2>/dev/null)" ] ||
		die "$s: no agent card"
done

# ---------------------------------------------------------------- measure
# wrk latency ("812.00us", "3.21ms", "1.02s", "1.5m") in milliseconds.

# RPS[kind.server] / P99[…]: the clean rounds' values; ALL[…]: every round as printed;
# BAD[…]: rounds with errors; RESP[send.server]: responses counted by the send runs.
declare -A RPS P99 ALL BAD RESP
bad_runs=0
measure() { # ROUND KIND SERVER
	local round=$1 kind=$2 s=$3 out url rps p99 resp badst rpcerr sock non2xx
	out=$state/wrk-$round-$kind-$s.txt
	url=${URL[$s]}
	[ "$kind" = card ] && url=${url}.well-known/agent-card.json
	say "round $round/$ROUNDS: $kind on $s (wrk -t$THREADS -c$CONNS -d${secs}s)"
	# Each run starts with the disk quiet: what the previous run (either server) left
	# dirty in the page cache is written back now, not during this run.
	sync
	BENCH_KIND=$kind BENCH_TASK=${TASK[$s]} BENCH_RUN=r$round$s \
		timeout $((secs + 30)) wrk -t"$THREADS" -c"$CONNS" -d"${secs}s" --latency -s "$lua" "$url" >"$out" 2>&1
	rps=$(awk '/^Requests\/sec:/ { print $2 }' "$out")
	p99=$(to_ms "$(awk '$1 == "99%" { print $2 }' "$out")")
	resp=$(sed -n 's/^compare: responses=\([0-9]*\) .*/\1/p' "$out")
	badst=$(sed -n 's/^compare: .* bad-status=\([0-9]*\) .*/\1/p' "$out")
	rpcerr=$(sed -n 's/^compare: .* rpc-errors=\([0-9]*\).*/\1/p' "$out")
	non2xx=$(awk '/Non-2xx or 3xx responses:/ { print $NF }' "$out")
	sock=$(sed -n 's/^ *Socket errors: //p' "$out")
	local problem=
	if [ -z "$rps" ] || [ -z "$resp" ]; then
		problem="wrk failed: $(tr '\n' ' ' <"$out" | cut -c1-200)"
	else
		[ "${badst:-0}" = 0 ] || problem="$problem $badst non-200"
		[ "${rpcerr:-0}" = 0 ] || problem="$problem $rpcerr JSON-RPC errors"
		[ -z "$non2xx" ] || [ -n "$badst" ] || problem="$problem $non2xx non-2xx"
		[ -z "$sock" ] || problem="$problem socket errors ($sock)"
	fi
	local key=$kind.$s
	if [ -n "$problem" ]; then
		say "  $s $kind round $round NOT COUNTED:$problem"
		BAD[$key]="${BAD[$key]:-}round $round:$problem; "
		ALL[$key]="${ALL[$key]:-} ${rps:-?}!"
		bad_runs=$((bad_runs + 1))
	else
		RPS[$key]="${RPS[$key]:-} $rps"
		P99[$key]="${P99[$key]:-} $p99"
		ALL[$key]="${ALL[$key]:-} $rps"
	fi
	[ "$kind" = send ] && RESP[$s]=$((${RESP[$s]:-0} + ${resp:-0}))
	sleep 1 # let requests still in flight finish before the next run
}

count_tasks() { sqlite3 "$1" 'PRAGMA busy_timeout = 5000; SELECT COUNT(*) FROM tasks' 2>/dev/null | tail -n1; }
th_tasks0=$(count_tasks "$th_db")
peer_tasks0=$(count_tasks "$peer_db")
started=$(date +%s)
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
for round in $(seq 1 "$ROUNDS"); do
	if [ $((round % 2)) = 1 ]; then order="th peer"; else order="peer th"; fi
	for kind in send get card; do
		for s in $order; do measure "$round" "$kind" "$s"; done
	done
done
load_after=$(cut -d' ' -f1-3 /proc/loadavg)
th_tasks1=$(count_tasks "$th_db")
peer_tasks1=$(count_tasks "$peer_db")
th_parked=$(sqlite3 "$th_db" "SELECT COUNT(*) FROM tasks WHERE sub_state = 'awaiting-next-message'" 2>/dev/null)
peer_parked=$(sqlite3 "$peer_db" "SELECT COUNT(*) FROM tasks WHERE status_state = 'TASK_STATE_INPUT_REQUIRED'" 2>/dev/null)

# ---------------------------------------------------------------- report
# Word splitting of the value lists is intended.
declare -A MRPS MP99
for key in "${!ALL[@]}"; do
	# shellcheck disable=SC2086
	MRPS[$key]=$(median ${RPS[$key]:-})
	# shellcheck disable=SC2086
	MP99[$key]=$(median ${P99[$key]:-})
done
ratio() { # A B: A/B, or n/a
	awk -v a="$1" -v b="$2" 'BEGIN { if (a == "" || b == "" || b == 0) print "n/a"; else printf "%.2f", a / b }'
}
nrounds() { # KEY: clean rounds
	# shellcheck disable=SC2086
	set -- ${RPS[$1]:-}
	echo $#
}
ver() { "$@" 2>&1 | head -n1; }
pkgver() { jq -r .version "$peer_dir/node_modules/$1/package.json" 2>/dev/null; }
name_of() { case $1 in th) echo tiny-harness ;; peer) echo a2a-js-peer ;; esac; }
report=$state/report.txt
{
	echo "tiny-harness vs the A2A JS SDK peer, $(date -u '+%Y-%m-%d %H:%M UTC')"
	echo "commit:    $(git -C "$TH_SRCDIR" rev-parse --short HEAD 2>/dev/null)$(git -C "$TH_SRCDIR" diff --quiet 2>/dev/null || echo ' (work tree modified)') ($TH_SRCDIR)"
	echo "binary:    $TH_BIN, built $(date -u -r "$TH_BIN" '+%Y-%m-%d %H:%M UTC')"
	echo "machine:   $(nproc) CPUs, $(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo); load average $load_before before the runs, $load_after after"
	echo "software:  $(ver lighttpd -v | sed 's/ - a light.*//'), $(ver wrk -v | awk '{ print "wrk", $2 }'), SQLite $(sqlite3 --version | awk '{ print $1 }'); node $(node -v), @a2a-js/sdk $(pkgver @a2a-js/sdk), express $(pkgver express), better-sqlite3 $(pkgver better-sqlite3) (SQLite $(cd "$peer_dir" && node -e "const D=require('better-sqlite3');const d=new D(':memory:');console.log(d.prepare('select sqlite_version() v').get().v)" 2>/dev/null)), kysely $(pkgver kysely)"
	echo "th:        lighttpd on loopback, $PROCS FastCGI workers (conf/lighttpd.conf), echo model, synchronous=$SYNCHRONOUS"
	echo "peer:      bench/peer/server.mjs, $PEER_PROCS node process(es): express, jsonRpcHandler + DefaultRequestHandler,"
	echo "           echo executor (task event + status update to INPUT_REQUIRED), DatabaseTaskStore over better-sqlite3, WAL, synchronous=$SYNCHRONOUS"
	echo "load:      $ROUNDS rounds x wrk -t$THREADS -c$CONNS -d${secs}s --latency per request and server, alternating"
	echo "           (odd rounds tiny-harness first), client on the same machine; $(($(date +%s) - started)) s in all"
	echo
	printf '%-9s %-13s %10s %10s %7s   %s\n' request server "req/s" "p99 ms" rounds "req/s of each round (! = errors, not counted)"
	for kind in send get card; do
		for s in th peer; do
			key=$kind.$s
			printf '%-9s %-13s %10s %10s %7s  %s\n' "$kind" "$(name_of $s)" "${MRPS[$key]:-n/a}" \
				"${MP99[$key]:-n/a}" "$(nrounds "$key")/$ROUNDS" "${ALL[$key]:-}"
		done
	done
	echo
	echo "ratios of the median req/s:"
	echo "  SendMessage   tiny-harness / peer     $(ratio "${MRPS[send.th]:-}" "${MRPS[send.peer]:-}")"
	echo "  GetTask       tiny-harness / peer     $(ratio "${MRPS[get.th]:-}" "${MRPS[get.peer]:-}")"
	echo "  agent card    tiny-harness / peer     $(ratio "${MRPS[card.th]:-}" "${MRPS[card.peer]:-}")"
	echo "  tiny-harness  GetTask / agent card    $(ratio "${MRPS[get.th]:-}" "${MRPS[card.th]:-}")"
	echo "  peer          GetTask / agent card    $(ratio "${MRPS[get.peer]:-}" "${MRPS[card.peer]:-}")"
	echo
	echo "send: tiny-harness answered ${RESP[th]:-0} SendMessage, stored $((th_tasks1 - th_tasks0)) tasks ($th_parked parked awaiting-next-message in all);"
	echo "      peer answered ${RESP[peer]:-0}, stored $((peer_tasks1 - peer_tasks0)) tasks ($peer_parked in TASK_STATE_INPUT_REQUIRED in all)"
	if [ "$bad_runs" -gt 0 ]; then
		echo
		echo "RUNS WITH ERRORS ($bad_runs), left out of the medians:"
		for key in "${!BAD[@]}"; do echo "  $key: ${BAD[$key]%; }"; done
	fi
} >"$report"
cat "$report"
if [ "${NO_SAVE:-0}" != 1 ]; then
	mkdir -p "$root/bench/results"
	dest=$root/bench/results/compare-$(date -u +%Y-%m-%d).txt
	[ -e "$dest" ] && dest=$root/bench/results/compare-$(date -u +%Y-%m-%d-%H%M).txt
	cp "$report" "$dest"
	say "wrote ${dest#"$root"/}"
fi
[ "$bad_runs" = 0 ]
