#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# bench/streams.sh — many open streams, few workers (STREAM-6): do hundreds of idle
# SubscribeToTask streams leave other requests' throughput alone, what does a stream cost
# a worker, and how fast does an event reach a subscriber while they are open?
# Loopback only; every run is bounded in time and count; it stops what it started, by pid.
#
#   bench/streams.sh                  uses build/src/tiny-harness; builds nothing; ~3 min
#   TH_BIN=/path/to/tiny-harness TH_SRCDIR=/path/to/checkout bench/streams.sh
#   N=200 STREAM_TASKS=20 ROUNDS=3 DURATION=6s bench/streams.sh
#   STEPS="200 500 1000" STEP_DURATION=4s bench/streams.sh
#   NO_SAVE=1 bench/streams.sh        print only; do not write bench/results/streams-<date>.txt
#   HOLD_KIND=longpoll N=1000 STREAM_MAX_PER_PARTICIPANT=1000 STEPS= bench/streams.sh
#                                     the N held are waiting GetTasks (A2A 1.1
#                                     currentGeneration, A2A-11-GEN-4) instead of streams
#
# One lighttpd (tests/lib/server.sh, conf/lighttpd.conf) with PROCS=2 FastCGI workers, the
# echo model, every setting at its default (all TINY_HARNESS_* cleared; STREAM_MAX=n sets
# TINY_HARNESS_STREAM_MAX, STREAM_MAX_PER_PARTICIPANT=n TINY_HARNESS_STREAM_MAX_PER_PARTICIPANT:
# every held stream is the one participant "bench"'s, so N above 8 per worker needs it).
# The streams are held by bench/streams.mjs (node, plain http):
#   1. latency, 1 stream: one subscriber, LAT_SAMPLES follow-up SendMessages one at a time;
#      a sample = sending the follow-up -> its INPUT_REQUIRED status event at the subscriber
#   2. throughput: ROUNDS rounds of wrk (bench/compare.lua, -t THREADS -c CONNS -d DURATION)
#      on SendMessage (a new task each) and GetTask (one task), with 0 open streams and
#      with N idle streams over STREAM_TASKS tasks (odd rounds 0 first, even rounds N first);
#      the ratio with/without, goal >= GOAL (0.9); worker memory (Rss, Private_Dirty from
#      /proc/PID/smaps_rollup) with 0 and with N streams, per stream
#   3. latency, LAT_SUBS subscribers (other tasks) while the N idle streams stay open
#   4. STEPS: the same ratio (one round, STEP_DURATION) at more open streams, to find the
#      most the recipe holds at ratio >= GOAL; the limits of this shell, lighttpd and the
#      workers are printed, since lighttpd's max-connections caps the count before the
#      workers do
# A level whose streams do not all get their first event within OPEN_TIMEOUT seconds is a
# server that does not hold them (a worker per stream): its wrk runs are printed as "no
# answer", and the phases that need more streams are skipped rather than waited for.
# bench/README.md ("Many open streams") says how to read the table.
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=bench/lib.sh
. "$root/bench/lib.sh" # to_ms, median
TH_SRCDIR=${TH_SRCDIR:-$root}
TH_BIN=${TH_BIN:-$root/build/src/tiny-harness}
N=${N:-200}
STREAM_TASKS=${STREAM_TASKS:-20}
ROUNDS=${ROUNDS:-3}
DURATION=${DURATION:-6s}
STEPS=${STEPS:-200 500 1000}
STEP_DURATION=${STEP_DURATION:-4s}
THREADS=${THREADS:-2}
CONNS=${CONNS:-16}
PROCS=${PROCS:-2}
LAT_SUBS=${LAT_SUBS:-20}
LAT_SAMPLES=${LAT_SAMPLES:-200}
GAP_MS=${GAP_MS:-50}
OPEN_TIMEOUT=${OPEN_TIMEOUT:-15}
RECOVER_TIMEOUT=${RECOVER_TIMEOUT:-30}
GOAL=${GOAL:-0.9}
STREAM_MAX=${STREAM_MAX:-}
STREAM_MAX_PER_PARTICIPANT=${STREAM_MAX_PER_PARTICIPANT:-}
HOLD_KIND=${HOLD_KIND:-stream}
case $HOLD_KIND in stream | longpoll) ;; *) echo "streams: HOLD_KIND is stream or longpoll" >&2; exit 2 ;; esac
lua=$root/bench/compare.lua
helper=$root/bench/streams.mjs

die() { echo "streams: $*" >&2; exit 1; }
say() { echo "streams: $*" >&2; }

# ---------------------------------------------------------------- checks
[ -x "$TH_BIN" ] || die "no program at TH_BIN=$TH_BIN (build it first; this script builds nothing)"
[ -r "$TH_SRCDIR/tests/lib/server.sh" ] || die "no tests/lib/server.sh under TH_SRCDIR=$TH_SRCDIR"
for t in wrk curl jq node sqlite3 pgrep ss; do
	command -v $t >/dev/null 2>&1 || die "$t is not installed"
done
posint() { case $2 in '' | *[!0-9]* | 0) die "$1 must be a positive number, not '$2'" ;; esac; }
posint N "$N"
posint STREAM_TASKS "$STREAM_TASKS"
posint ROUNDS "$ROUNDS"
posint THREADS "$THREADS"
posint CONNS "$CONNS"
posint PROCS "$PROCS"
posint LAT_SUBS "$LAT_SUBS"
posint LAT_SAMPLES "$LAT_SAMPLES"
posint OPEN_TIMEOUT "$OPEN_TIMEOUT"
posint RECOVER_TIMEOUT "$RECOVER_TIMEOUT"
case $GAP_MS in '' | *[!0-9]*) die "GAP_MS must be a number" ;; esac
for s in $STEPS; do posint "a STEPS entry" "$s"; done
[ "$N" -le 20000 ] || die "N at most 20000"
[ "$LAT_SAMPLES" -le 5000 ] || die "LAT_SAMPLES at most 5000"
for s in $STEPS; do [ "$s" -le 20000 ] || die "STEPS entries at most 20000"; done
secs=${DURATION%s}
posint "DURATION (whole seconds, like 6s)" "$secs"
step_secs=${STEP_DURATION%s}
posint "STEP_DURATION (whole seconds, like 4s)" "$step_secs"
if [ "$secs" -gt 120 ] || [ "$step_secs" -gt 120 ]; then die "DURATION and STEP_DURATION at most 120s"; fi
awk -v g="$GOAL" 'BEGIN { exit !(g + 0 > 0 && g + 0 <= 2) }' || die "GOAL must be a ratio like 0.9"
if [ -n "$STREAM_MAX" ]; then posint STREAM_MAX "$STREAM_MAX"; fi
if [ -n "$STREAM_MAX_PER_PARTICIPANT" ]; then posint STREAM_MAX_PER_PARTICIPANT "$STREAM_MAX_PER_PARTICIPANT"; fi

# random_port, port_busy, alive, wait_card
# shellcheck source=../tests/lib/proc.sh
. "$TH_SRCDIR/tests/lib/proc.sh"

# The recipe's defaults, nothing from the caller's shell (model, delays, limits, a config
# file); STREAM_MAX is the one knob passed on.
for v in $(compgen -e | grep '^TINY_HARNESS_'); do unset "$v"; done
[ -z "$STREAM_MAX" ] || export TINY_HARNESS_STREAM_MAX=$STREAM_MAX
[ -z "$STREAM_MAX_PER_PARTICIPANT" ] || export TINY_HARNESS_STREAM_MAX_PER_PARTICIPANT=$STREAM_MAX_PER_PARTICIPANT
export TH_BIN TH_SRCDIR

state=$(mktemp -d "${TMPDIR:-/tmp}/th-streams.XXXXXX")
HOLD_PID=
cleanup() {
	[ -z "$HOLD_PID" ] || stop_pid "$HOLD_PID"
	sh "$TH_SRCDIR/tests/lib/server.sh" stop "$state/th"
	rm -rf "$state"
}
# stop_pid PID: SIGTERM, up to 5 s, then SIGKILL; only our own children come here.
stop_pid() {
	kill -TERM "$1" 2>/dev/null
	local i=0
	while alive "$1" && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
	alive "$1" && kill -KILL "$1" 2>/dev/null
	wait "$1" 2>/dev/null
}
trap cleanup EXIT
trap 'exit 1' INT TERM

# ---------------------------------------------------------------- start
start_server() { # sets url and lpid
	url=$(sh "$TH_SRCDIR/tests/lib/server.sh" start "$state/th" "$PROCS") || die "tiny-harness (lighttpd) did not start"
	case $url in http://127.0.0.1:*/) ;; *) die "refusing a non-loopback URL: $url" ;; esac
	lpid=$(cat "$state/th/lighttpd.pid")
	say "tiny-harness at $url (lighttpd $lpid, workers $(workers))"
}
workers() { pgrep -P "$lpid" | sort -n | tr '\n' ' '; }
start_server
db=$state/th/tiny-harness.db

rpc() { # BODY
	curl -s --max-time 10 -H 'Content-Type: application/json' -H 'A2A-Version: 1.0' \
		-H 'X-Participant-Id: bench' -d "$1" "$url"
}
new_task() { # MESSAGE-ID: prints the new task's id, or nothing
	rpc "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"SendMessage\",\"params\":{\"message\":{\"messageId\":\"$1\",\"role\":\"ROLE_USER\",\"parts\":[{\"text\":\"hi\"}]}}}" |
		jq -r 'select(.result.task.status.state == "TASK_STATE_INPUT_REQUIRED") | .result.task.id' 2>/dev/null
}
seed=$(new_task seed)
[ -n "$seed" ] || die "SendMessage did not answer with a task in TASK_STATE_INPUT_REQUIRED: $(rpc '{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"seed-2","role":"ROLE_USER","parts":[{"text":"hi"}]}}}')"
get_body="{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"GetTask\",\"params\":{\"id\":\"$seed\"}}"
[ "$(rpc "$get_body" | jq -r .result.id 2>/dev/null)" = "$seed" ] || die "GetTask does not answer: $(rpc "$get_body")"
# The idle streams' tasks and the latency subscribers' tasks: separate, so that the idle
# streams never see an event.
hold_tasks=
for i in $(seq 1 "$STREAM_TASKS"); do
	t=$(new_task "idle-$i")
	[ -n "$t" ] || die "could not make task idle-$i"
	hold_tasks=$hold_tasks${hold_tasks:+,}$t
done
lat_tasks=
for i in $(seq 1 "$LAT_SUBS"); do
	t=$(new_task "lat-$i")
	[ -n "$t" ] || die "could not make task lat-$i"
	lat_tasks=$lat_tasks${lat_tasks:+,}$t
done
lat_one=${lat_tasks%%,*}

# Does the server answer a GetTask within RECOVER_TIMEOUT? Prints the seconds it took.
answers() {
	local t0 now
	t0=$(date +%s%3N)
	while :; do
		if [ "$(curl -s --max-time 2 -H 'Content-Type: application/json' -H 'A2A-Version: 1.0' \
			-H 'X-Participant-Id: bench' -d "$get_body" "$url" | jq -r .result.id 2>/dev/null)" = "$seed" ]; then
			awk -v a="$t0" -v b="$(date +%s%3N)" 'BEGIN { printf "%.1f", (b - a) / 1000 }'
			return 0
		fi
		now=$(date +%s%3N)
		[ $((now - t0)) -lt $((RECOVER_TIMEOUT * 1000)) ] || return 1
		sleep 0.2
	done
}

# ---------------------------------------------------------------- limits
nofile() { awk '/^Max open files/ { print $4 "/" $5 }' "/proc/$1/limits" 2>/dev/null; }
conf=$TH_SRCDIR/conf/lighttpd.conf
conf_num() { sed -n "s/^[[:space:]]*$1[[:space:]]*=[[:space:]]*\([0-9][0-9]*\).*/\1/p" "$conf" | tail -n1; }
shell_nofile="$(ulimit -Sn)/$(ulimit -Hn)"
l_nofile=$(nofile "$lpid")
l_soft=${l_nofile%%/*}
c_maxfds=$(conf_num 'server\.max-fds')
c_maxconns=$(conf_num 'server\.max-connections')
# lighttpd 1.4.6x: without server.max-fds it uses its soft RLIMIT_NOFILE, at most 4096;
# without server.max-connections it allows max-fds/3 connections (at most max-fds/2).
if [ -n "$c_maxfds" ]; then l_maxfds=$c_maxfds; else
	case $l_soft in unlimited | '') l_maxfds=4096 ;; *) l_maxfds=$((l_soft < 4096 ? l_soft : 4096)) ;; esac
fi
if [ -n "$c_maxconns" ]; then l_maxconns=$((c_maxconns < l_maxfds / 2 ? c_maxconns : l_maxfds / 2)); else l_maxconns=$((l_maxfds / 3)); fi
# shellcheck disable=SC2046 # one word per worker pid
set -- $(workers)
w_nofile=$(nofile "${1:-0}")
w_soft=${w_nofile%%/*}
per_worker=${STREAM_MAX:-1000}
[ "$w_soft" != unlimited ] && [ -n "$w_soft" ] && [ $((w_soft - 64)) -lt "$per_worker" ] && per_worker=$((w_soft - 64))
# Each open stream is a client connection of lighttpd's (and a backend socket: 2 fds);
# wrk's and the latency subscribers' connections count too.
cap_lighttpd=$((l_maxconns - CONNS - LAT_SUBS - 4))
cap_workers=$((PROCS * per_worker))
cap=$((cap_lighttpd < cap_workers ? cap_lighttpd : cap_workers))
biggest=$N
for s in $STEPS; do [ "$s" -gt "$biggest" ] && biggest=$s; done
limit_notes=
note() { limit_notes="$limit_notes$1"$'\n'; }
# node raises its soft open-files limit to the hard one at start-up.
shell_hard=$(ulimit -Hn)
if [ "$shell_hard" != unlimited ] && [ $((biggest + LAT_SUBS + 64)) -gt "$shell_hard" ]; then
	note "  LIMIT: ulimit -Hn is $shell_hard here: the helper needs a descriptor per stream, so $biggest streams will not all open"
fi
for s in $N $STEPS; do
	if [ "$s" -gt "$cap_lighttpd" ]; then
		note "  LIMIT: $s streams + $CONNS wrk + $LAT_SUBS subscriber connections exceed lighttpd's max-connections $l_maxconns: at that step lighttpd, not tiny-harness, is the limit"
	elif [ "$s" -gt "$cap_workers" ]; then
		note "  LIMIT: $s streams exceed $PROCS workers x $per_worker (stream_max / open files): the rest are refused with 503"
	fi
done
limit_notes=$(printf '%s' "$limit_notes" | sort -u)

# ---------------------------------------------------------------- memory
# mem LABEL: one line per process (lighttpd and each worker): pid role Rss Private_Dirty
# threads fds (KiB; fds = open descriptors).
mem() {
	local p role
	for p in $lpid $(workers); do
		role=worker
		[ "$p" = "$lpid" ] && role=lighttpd
		awk -v p="$p" -v r="$role" -v th="$(awk '/^Threads:/ { print $2 }' "/proc/$p/status" 2>/dev/null)" \
			-v fd="$(find "/proc/$p/fd" -mindepth 1 -maxdepth 1 2>/dev/null | wc -l)" '
			/^Rss:/ { rss = $2 } /^Private_Dirty:/ { pd = $2 }
			END { print p, r, rss + 0, pd + 0, th + 0, fd + 0 }' "/proc/$p/smaps_rollup" 2>/dev/null
	done >"$state/mem-$1.txt"
}
# mem_delta A B COUNT [ROLE]: the summed Rss and Private_Dirty growth per stream (KiB) of
# the workers (or lighttpd), "rss pd"; n/a when COUNT is 0 or a worker was replaced.
mem_delta() {
	awk -v n="$3" -v role="${4:-worker}" '
		FNR == NR { if ($2 == role) { rss[$1] = $3; pd[$1] = $4 } next }
		$2 == role { if (!($1 in rss)) bad = 1; dr += $3 - rss[$1]; dp += $4 - pd[$1]; seen++ }
		END { if (bad || n == 0 || seen == 0) print "n/a n/a"; else printf "%.1f %.1f\n", dr / n, dp / n }' \
		"$state/mem-$1.txt" "$state/mem-$2.txt"
}

# ---------------------------------------------------------------- the stream holder
# hold_start COUNT TAG: starts bench/streams.mjs holding COUNT idle streams over the idle
# tasks and waits (bounded) until all have their first event or OPEN_TIMEOUT passed.
# Sets HOLD_FIRST (streams with a first event), HOLD_MS (time to get them) and HOLD_OK
# (1 when all COUNT opened).
hold_start() {
	local out=$state/hold-$2.out i=0 line
	node "$helper" hold --kind="$HOLD_KIND" --url="$url" --tasks="$hold_tasks" --n="$1" --open-ms=$((OPEN_TIMEOUT * 1000)) \
		--limit-ms=300000 --parent=$$ </dev/null >"$out" 2>"$state/hold-$2.err" &
	HOLD_PID=$!
	while [ $i -lt $(((OPEN_TIMEOUT + 10) * 10)) ]; do
		line=$(grep -m1 -E '^(ready|partial) ' "$out" 2>/dev/null)
		[ -n "$line" ] && break
		alive "$HOLD_PID" || break
		sleep 0.1
		i=$((i + 1))
	done
	# shellcheck disable=SC2086 # the words of the line
	set -- $line
	case ${1:-} in
	ready) HOLD_FIRST=$2 HOLD_MS=$3 HOLD_OK=1 ;;
	partial) HOLD_FIRST=$2 HOLD_MS=$4 HOLD_OK=0 ;;
	*) HOLD_FIRST=0 HOLD_MS='?' HOLD_OK=0 ;;
	esac
}
# hold_stop TAG: stops the holder; HOLD_FINAL = its final line (what happened to the streams).
hold_stop() {
	[ -n "$HOLD_PID" ] || return 0
	stop_pid "$HOLD_PID"
	HOLD_PID=
	HOLD_FINAL=$(grep -m1 '^final ' "$state/hold-$1.out" 2>/dev/null | sed 's/^final //')
	[ -n "$HOLD_FINAL" ] || HOLD_FINAL="(no final line: $(tr '\n' ' ' <"$state/hold-$1.err" | cut -c1-200))"
}

# drain_closed: waits (at most 25 s) until lighttpd holds no connection its client has
# closed (CLOSE-WAIT on the server's port). A waiting GetTask whose client left keeps its
# lighttpd connection until the wait ends (at most heartbeat_ms): lighttpd reads nothing
# from a client while the backend has not answered, so neither it nor the worker sees the
# close. Without this the next round's N would be measured with the last round's N still
# counted against lighttpd's max-connections. Prints the seconds it took.
drain_closed() {
	local port=${url##*:} i=0 n
	port=${port%%/*}
	while [ $i -lt 250 ]; do
		n=$(ss -Htn state close-wait "( sport = :$port )" 2>/dev/null | wc -l)
		[ "$n" -eq 0 ] && break
		sleep 0.1
		i=$((i + 1))
	done
	awk -v t="$i" 'BEGIN { printf "%.1f", t / 10 }'
}

# ---------------------------------------------------------------- wrk
ratio() {
	awk -v a="$1" -v b="$2" 'BEGIN { if (a == "" || b == "" || b == 0) print "n/a"; else printf "%.2f", a / b }'
}
# RPS[key] / P99[key]: the clean runs' values; ALL[key]: every run as printed; R1[key.round]:
# one run's req/s when clean; BAD[key]: what went wrong.
declare -A RPS P99 ALL BAD R1
bad_runs=0
sent=0
measure() { # KEY ROUND KIND SECONDS
	local key=$1 round=$2 kind=$3 d=$4 out rps p99 resp badst rpcerr sock non2xx problem=
	out=$state/wrk-$key-$round.txt
	say "$key round $round: $kind (wrk -t$THREADS -c$CONNS -d${d}s)"
	BENCH_KIND=$kind BENCH_TASK=$seed BENCH_RUN=$key-$round \
		timeout $((d + 30)) wrk -t"$THREADS" -c"$CONNS" -d"${d}s" --latency -s "$lua" "$url" >"$out" 2>&1
	rps=$(awk '/^Requests\/sec:/ { print $2 }' "$out")
	p99=$(to_ms "$(awk '$1 == "99%" { print $2 }' "$out")")
	resp=$(sed -n 's/^compare: responses=\([0-9]*\) .*/\1/p' "$out")
	badst=$(sed -n 's/^compare: .* bad-status=\([0-9]*\) .*/\1/p' "$out")
	rpcerr=$(sed -n 's/^compare: .* rpc-errors=\([0-9]*\).*/\1/p' "$out")
	non2xx=$(awk '/Non-2xx or 3xx responses:/ { print $NF }' "$out")
	sock=$(sed -n 's/^ *Socket errors: //p' "$out")
	if [ -z "$rps" ] || [ -z "$resp" ]; then
		problem=" wrk failed: $(tr '\n' ' ' <"$out" | cut -c1-200)"
	elif [ "$resp" = 0 ]; then
		problem=" no answer in ${d} s"
		NOANSWER=1
	else
		[ "${badst:-0}" = 0 ] || problem="$problem $badst non-200"
		[ "${rpcerr:-0}" = 0 ] || problem="$problem $rpcerr JSON-RPC errors"
		[ -z "$non2xx" ] || [ -n "$badst" ] || problem="$problem $non2xx non-2xx"
		[ -z "$sock" ] || problem="$problem socket errors ($sock)"
	fi
	if [ -n "$problem" ]; then
		say "  NOT COUNTED:$problem"
		BAD[$key]="${BAD[$key]:-}round $round:$problem; "
		if [ "${resp:-}" = 0 ]; then ALL[$key]="${ALL[$key]:-} no-answer!"; else ALL[$key]="${ALL[$key]:-} ${rps:-?}!"; fi
		bad_runs=$((bad_runs + 1))
	else
		RPS[$key]="${RPS[$key]:-} $rps"
		P99[$key]="${P99[$key]:-} $p99"
		ALL[$key]="${ALL[$key]:-} $rps"
		R1[$key.$round]=$rps
	fi
	[ "$kind" = send ] && sent=$((sent + ${resp:-0}))
	sleep 1 # requests still in flight finish before the next run
}
# Word splitting of the value lists is intended.
# shellcheck disable=SC2086
med_rps() { median ${RPS[$1]:-}; }
# shellcheck disable=SC2086
med_p99() { median ${P99[$1]:-}; }
# shellcheck disable=SC2086
clean() { set -- ${RPS[$1]:-}; echo $#; }

# ---------------------------------------------------------------- latency
declare -A LAT
lat_run() { # TAG TASKS: LAT[TAG] = the helper's line without "latency "
	local out=$state/lat-$1.out
	say "latency: $(tr ',' '\n' <<<"$2" | wc -l) subscriber(s), $LAT_SAMPLES follow-ups ($1)"
	timeout 200 node "$helper" latency --url="$url" --tasks="$2" --samples="$LAT_SAMPLES" \
		--open-ms=$((OPEN_TIMEOUT * 1000)) --sample-ms=5000 --gap-ms="$GAP_MS" --limit-ms=120000 \
		--parent=$$ </dev/null >"$out" 2>"$state/lat-$1.err"
	LAT[$1]=$(sed -n 's/^latency //p' "$out" | head -n1)
	[ -n "${LAT[$1]}" ] || LAT[$1]="none reason=helper-failed:$(tr '\n' ' ' <"$state/lat-$1.err" | cut -c1-100)"
	say "  ${LAT[$1]}"
}
field() { sed -n "s/.*\\b$2=\\([^ ]*\\).*/\\1/p" <<<"$1"; } # field LINE NAME

tasks0=$(sqlite3 "$db" 'PRAGMA busy_timeout = 5000; SELECT COUNT(*) FROM tasks' 2>/dev/null | tail -n1)
started=$(date +%s)
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
FROZEN= # why the phases that need N streams were skipped

# ---------------------------------------------------------------- 1. latency, one stream
lat_run one "$lat_one"
# A server that keeps a worker on a closed stream until its next heartbeat (15 s) would
# start the throughput runs a worker short: they start on a fresh lighttpd and workers
# (same database and tasks).
sh "$TH_SRCDIR/tests/lib/server.sh" stop "$state/th"
start_server
answers >/dev/null || FROZEN="after a restart the server did not answer for ${RECOVER_TIMEOUT} s"

# ---------------------------------------------------------------- 2. throughput, 0 vs N
declare -A OPENED OPEN_MS FINAL MEMD MEML RECOVER
mem_taken=
phase() { # KEY-PREFIX COUNT ROUND SECONDS: with COUNT idle streams, send then get
	local p=$1 count=$2 round=$3 d=$4
	if [ "$count" -gt 0 ]; then
		# The 0-stream sample: the first one, taken once the workers are warm. A heap keeps
		# what an earlier level freed, so a later level is measured against it too.
		[ -r "$state/mem-main-0.txt" ] || mem "main-0"
		say "$p round $round: opening $count idle streams"
		hold_start "$count" "$p-$round"
		OPENED[$p.$round]="$HOLD_FIRST/$count"
		OPEN_MS[$p.$round]=$HOLD_MS
		say "  $HOLD_FIRST/$count streams got their first event (${HOLD_MS} ms)"
		if [ -z "$mem_taken" ]; then
			mem "$p-N"
			MEMD[$p]="$(mem_delta main-0 "$p-N" "$HOLD_FIRST") $HOLD_FIRST"
			MEML[$p]=$(mem_delta main-0 "$p-N" "$HOLD_FIRST" lighttpd)
			mem_taken=1
		fi
		[ "$HOLD_OK" = 1 ] || FROZEN="${FROZEN:-only $HOLD_FIRST of $count streams got their first event within ${OPEN_TIMEOUT} s ($p, round $round)}"
	fi
	NOANSWER=0
	measure "send.$p.$count" "$round" send "$d"
	measure "get.$p.$count" "$round" get "$d"
	if [ "$count" -gt 0 ] && [ "$NOANSWER" = 1 ]; then
		FROZEN="${FROZEN:-with $count streams open the server did not answer wrk ($p, round $round)}"
	fi
	if [ "$count" -gt 0 ]; then
		[ "$p" != main ] || [ "$round" != "$ROUNDS" ] || [ -n "$FROZEN" ] || lat_run many "$lat_tasks"
		hold_stop "$p-$round"
		say "  closed connections gone from lighttpd after $(drain_closed) s"
		FINAL[$p.$round]=$HOLD_FINAL
		if RECOVER[$p.$round]=$(answers); then RECOVER[$p.$round]="GetTask answered ${RECOVER[$p.$round]} s after they closed"; else
			RECOVER[$p.$round]="GetTask got NO ANSWER for ${RECOVER_TIMEOUT} s after they closed"
			FROZEN="${FROZEN:-the server did not answer for ${RECOVER_TIMEOUT} s after the streams closed}"
		fi
	fi
}
for round in $(seq 1 "$ROUNDS"); do
	[ -z "$FROZEN" ] || break
	if [ $((round % 2)) = 1 ]; then order="0 $N"; else order="$N 0"; fi
	for c in $order; do phase main "$c" "$round" "$secs"; done
done
mem_main=${MEMD[main]:-}

# ---------------------------------------------------------------- 4. steps
declare -A STEP_DONE
for s in $STEPS; do
	[ "$s" = "$N" ] && continue
	if [ -n "$FROZEN" ]; then STEP_DONE[$s]=skipped; continue; fi
	mem_taken=
	phase "s$s" 0 1 "$step_secs"
	phase "s$s" "$s" 1 "$step_secs"
	STEP_DONE[$s]=measured
done
load_after=$(cut -d' ' -f1-3 /proc/loadavg)
tasks1=$(sqlite3 "$db" 'PRAGMA busy_timeout = 5000; SELECT COUNT(*) FROM tasks' 2>/dev/null | tail -n1)

# ---------------------------------------------------------------- report
ver() { "$@" 2>&1 | head -n1; }
fmt_rps() { # KEY: median req/s, or why not
	local m
	m=$(med_rps "$1")
	if [ -n "$m" ]; then echo "$m"
	elif [[ ${ALL[$1]:-} == *no-answer* ]]; then echo "no answer"
	elif [ -n "${ALL[$1]:-}" ]; then echo "errors"
	else echo "-"; fi
}
holds() { # SEND-RATIO GET-RATIO OPENED: yes/no
	local opened=$3
	[ "${opened%%/*}" = "${opened##*/}" ] || { echo "no (not all opened)"; return; }
	awk -v a="$1" -v b="$2" -v g="$GOAL" 'BEGIN {
		if (a == "n/a" || b == "n/a") print "no (no ratio)";
		else if (a + 0 >= g && b + 0 >= g) print "yes"; else print "no" }'
}
report=$state/report.txt
{
	echo "tiny-harness: many open streams, few workers (STREAM-6), $(date -u '+%Y-%m-%d %H:%M UTC')"
	echo "commit:    $(git -C "$TH_SRCDIR" rev-parse --short HEAD 2>/dev/null)$(git -C "$TH_SRCDIR" diff --quiet 2>/dev/null || echo ' (work tree modified)') ($TH_SRCDIR)"
	echo "binary:    $TH_BIN, built $(date -u -r "$TH_BIN" '+%Y-%m-%d %H:%M UTC')"
	echo "machine:   $(nproc) CPUs, $(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo); load average $load_before before, $load_after after"
	echo "software:  $(ver lighttpd -v | sed 's/ - a light.*//'), $(ver wrk -v | awk '{ print "wrk", $2 }'), SQLite $(sqlite3 --version | awk '{ print $1 }'), node $(node -v)"
	echo "server:    lighttpd on loopback, $PROCS FastCGI workers (conf/lighttpd.conf), echo model, defaults$([ -z "$STREAM_MAX" ] || echo ", TINY_HARNESS_STREAM_MAX=$STREAM_MAX")$([ -z "$STREAM_MAX_PER_PARTICIPANT" ] || echo ", TINY_HARNESS_STREAM_MAX_PER_PARTICIPANT=$STREAM_MAX_PER_PARTICIPANT")"
	echo "load:      wrk -t$THREADS -c$CONNS --latency (bench/compare.lua): send = SendMessage, a new task each; get = GetTask of one task;"
	if [ "$HOLD_KIND" = longpoll ]; then
		echo "           HOLD_KIND=longpoll: the \"idle streams\" below are waiting GetTasks (JSON-RPC, A2A-Version: 1.1,"
		echo "           currentGeneration never reached: held heartbeat_ms, then renewed; A2A-11-GEN-4), spread over $STREAM_TASKS tasks;"
	else
		echo "           idle streams = JSON-RPC SubscribeToTask held by bench/streams.mjs, spread over $STREAM_TASKS tasks that get no events;"
	fi
	echo "           client and server on the same machine; $(($(date +%s) - started)) s in all"
	echo "limits:    this shell ulimit -n $shell_nofile soft/hard (the helper: one descriptor per stream, up to the hard limit);"
	echo "           lighttpd open files $l_nofile -> max-fds $l_maxfds${c_maxfds:+ (server.max-fds)}, max-connections $l_maxconns${c_maxconns:+ (server.max-connections)}$([ -n "$c_maxconns" ] || echo ' (max-fds/3)');"
	echo "           workers open files $w_nofile, stream_max ${STREAM_MAX:-1000 (default)} each;"
	echo "           so this recipe holds at most about $cap streams next to the load (lighttpd: $cap_lighttpd, workers: $cap_workers)"
	[ -z "$limit_notes" ] || echo "$limit_notes"
	echo
	echo "1. Throughput with 0 and with N=$N idle open streams ($ROUNDS round$([ "$ROUNDS" = 1 ] || echo s) x ${secs} s, odd rounds 0 streams first)"
	printf '%-8s %8s %12s %9s %7s   %s\n' request streams "req/s" "p99 ms" rounds "req/s of each round (! = not counted)"
	for kind in send get; do
		for c in 0 "$N"; do
			key=$kind.main.$c
			printf '%-8s %8s %12s %9s %7s  %s\n' "$kind" "$c" "$(fmt_rps "$key")" "$(med_p99 "$key")" \
				"$(clean "$key")/$ROUNDS" "${ALL[$key]:-}"
		done
	done
	echo "ratio with/without (median req/s; goal >= $GOAL), and each round's own ratio:"
	for kind in send get; do
		r=$(ratio "$(med_rps "$kind.main.$N")" "$(med_rps "$kind.main.0")")
		each=
		for round in $(seq 1 "$ROUNDS"); do
			each="$each $(ratio "${R1[$kind.main.$N.$round]:-}" "${R1[$kind.main.0.$round]:-}")"
		done
		verdict=$(awk -v a="$r" -v g="$GOAL" 'BEGIN { if (a == "n/a") print "not measured"; else if (a + 0 >= g) print "met"; else print "NOT met" }')
		printf '  %-12s %6s  (%s)   %s\n' "$([ $kind = send ] && echo SendMessage || echo GetTask)" "$r" "${each# }" "$verdict"
	done
	for round in $(seq 1 "$ROUNDS"); do
		[ -n "${OPENED[main.$round]:-}" ] || continue
		echo "  round $round: ${OPENED[main.$round]} streams had their first event after ${OPEN_MS[main.$round]} ms;" \
			"after the run: ${FINAL[main.$round]:-?}; ${RECOVER[main.$round]:-}"
	done
	echo
	echo "2. Worker memory per open stream (/proc/PID/smaps_rollup; KiB; 0 streams, then $N held idle, before the load)"
	if [ -r "$state/mem-main-0.txt" ] && [ -r "$state/mem-main-N.txt" ]; then
		printf '%-9s %8s %9s %9s %9s %9s %8s %8s\n' process pid "Rss 0" "Rss N" "PDirty 0" "PDirty N" threads fds
		awk 'FNR == NR { a[$1] = $0; next } {
			split(a[$1], z, " ");
			printf "%-9s %8s %9s %9s %9s %9s %8s %8s\n", $2, $1, (z[3] == "" ? "-" : z[3]), $3,
				(z[4] == "" ? "-" : z[4]), $4, (z[5] == "" ? "-" : z[5]) "->" $5, (z[6] == "" ? "-" : z[6]) "->" $6 }' \
			"$state/mem-main-0.txt" "$state/mem-main-N.txt"
		# shellcheck disable=SC2086 # "rss pd count"
		set -- $mem_main
		echo "  workers together, per open stream (${3:-0} streams): Rss ${1:-n/a} KiB, Private_Dirty ${2:-n/a} KiB"
		# shellcheck disable=SC2086 # "rss pd"
		set -- ${MEML[main]:-}
		echo "  lighttpd, per open stream: Rss ${1:-n/a} KiB, Private_Dirty ${2:-n/a} KiB"
	else
		echo "  not measured"
	fi
	echo
	echo "3. Event latency: follow-up SendMessage sent -> its INPUT_REQUIRED status event at the subscriber (ms)"
	printf '%-34s %7s %5s %7s %7s %7s %7s %7s %11s\n' case samples lost min median p90 p99 max "resp med"
	for tag in one many; do
		case $tag in
		one) label="1 subscriber, no idle streams" ;;
		many) label="$LAT_SUBS subscribers + $N idle streams" ;;
		esac
		line=${LAT[$tag]:-none reason=skipped${FROZEN:+ ($FROZEN)}}
		case $line in
		none*) printf '%-34s %s\n' "$label" "no answer: ${line#none reason=}" ;;
		*) printf '%-34s %7s %5s %7s %7s %7s %7s %7s %11s\n' "$label" "$(field "$line" samples)" \
			"$(field "$line" lost)" "$(field "$line" min)" "$(field "$line" median)" "$(field "$line" p90)" \
			"$(field "$line" p99)" "$(field "$line" max)" "$(field "$line" resp_median)" ;;
		esac
	done
	echo "  one sample at a time, after a random 0-${GAP_MS} ms pause; resp med = the SendMessage's own median round trip."
	echo "  For comparison, the issue quotes 29 ms median / 56 ms p99 for one stream before STREAM-6 (bench/results/latency-2026-11-30.txt,"
	echo "  measured from the event's created_ms, 3 workers)."
	echo
	echo "4. More open streams (1 round x ${step_secs} s each; N=$N from section 1)"
	printf '%-8s %-10s %10s %10s %6s %10s %10s %6s %9s  %s\n' streams opened "send 0" "send N" ratio "get 0" "get N" ratio "Rss/str" "holds (both >= $GOAL)"
	best=
	# shellcheck disable=SC2086 # STEPS is a list
	for s in $(printf '%s\n' "$N" $STEPS | sort -nu); do
		if [ "$s" = "$N" ]; then
			p=main k0=send.main.0 kn=send.main.$N g0=get.main.0 gn=get.main.$N
			op=${OPENED[main.1]:-0/$N}
			for round in $(seq 1 "$ROUNDS"); do [ "${OPENED[main.$round]:-$op}" = "$op" ] || op=${OPENED[main.$round]}; done
			md=$mem_main
		elif [ "${STEP_DONE[$s]:-}" = measured ]; then
			p=s$s k0=send.s$s.0 kn=send.s$s.$s g0=get.s$s.0 gn=get.s$s.$s
			op=${OPENED[s$s.1]:-0/$s}
			md=${MEMD[s$s]:-}
		else
			printf '%-8s %s\n' "$s" "skipped${FROZEN:+: $FROZEN}"
			continue
		fi
		rs=$(ratio "$(med_rps "$kn")" "$(med_rps "$k0")")
		rg=$(ratio "$(med_rps "$gn")" "$(med_rps "$g0")")
		# shellcheck disable=SC2086 # "rss pd count"
		set -- $md
		h=$(holds "$rs" "$rg" "$op")
		[ "$h" = yes ] && best=$s
		printf '%-8s %-10s %10s %10s %6s %10s %10s %6s %9s  %s\n' "$s" "$op" "$(fmt_rps "$k0")" "$(fmt_rps "$kn")" "$rs" \
			"$(fmt_rps "$g0")" "$(fmt_rps "$gn")" "$rg" "${1:-n/a}" "$h"
	done
	echo "  most open streams held at ratio >= $GOAL: ${best:-none of those tried}$([ -z "$best" ] || [ "$best" != "$biggest" ] || echo " (the largest tried; the recipe's limit above is about $cap)")"
	echo "  (Rss/str: the workers' Rss growth per open stream since the first 0-stream sample, KiB)"
	# shellcheck disable=SC2086 # STEPS is a list
	for s in $(printf '%s\n' $STEPS | sort -nu); do
		[ -n "${OPENED[s$s.1]:-}" ] || continue
		echo "  $s: ${OPENED[s$s.1]} had their first event after ${OPEN_MS[s$s.1]} ms; after the run: ${FINAL[s$s.1]:-?}; ${RECOVER[s$s.1]:-}"
	done
	echo
	echo "send: wrk counted $sent SendMessage answers; the database gained $((tasks1 - tasks0)) tasks"
	if [ -n "$FROZEN" ]; then
		echo
		echo "STOPPED EARLY: $FROZEN; the phases that need more streams were skipped."
	fi
	if [ "$bad_runs" -gt 0 ]; then
		echo
		echo "RUNS WITH ERRORS OR NO ANSWER ($bad_runs), left out of the medians:"
		for key in "${!BAD[@]}"; do echo "  $key: ${BAD[$key]%; }"; done | sort
	fi
	errs=$(grep -v -e 'server started' -e 'server stopped' "$state/th/error.log" 2>/dev/null | grep -c .)
	if [ "$errs" -gt 0 ]; then
		echo
		echo "lighttpd error log: $errs lines; the last ones:"
		grep -v -e 'server started' -e 'server stopped' "$state/th/error.log" | tail -n 5 | cut -c1-200 | sed 's/^/  /'
	fi
} >"$report"
cat "$report"
if [ "${NO_SAVE:-0}" != 1 ]; then
	mkdir -p "$root/bench/results"
	kind_tag=
	[ "$HOLD_KIND" = stream ] || kind_tag=-$HOLD_KIND
	dest=$root/bench/results/streams$kind_tag-$(date -u +%Y-%m-%d).txt
	[ -e "$dest" ] && dest=$root/bench/results/streams$kind_tag-$(date -u +%Y-%m-%d-%H%M).txt
	cp "$report" "$dest"
	say "wrote ${dest#"$root"/}"
fi
[ "$bad_runs" = 0 ] && [ -z "$FROZEN" ]
