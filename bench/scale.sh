#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# bench/scale.sh — GetTask and ListTasks pages on a database of 1,000 tasks and on one of
# 1,000,000, and the bytes on disk each echo task takes. Loopback only; every wrk run is
# bounded in time; it stops lighttpd and deletes its databases by itself.
#
#   bench/scale.sh                       uses build/src/tiny-harness; builds nothing
#   TH_BIN=/path/to/tiny-harness TH_SRCDIR=/path/to/checkout bench/scale.sh
#   SIZES="1000 100000 1000000"          task counts, measured in this order; the ratios
#                                        compare the last with the first (default 1000 1000000)
#   DURATION=5s ROUNDS=3 WARMUP=1s THREADS=2 CONNS=8 PROCS=2 PAGE_SIZE=50 bench/scale.sh
#   SCALE_DIR=/big/disk bench/scale.sh   where the databases go (default ${TMPDIR:-/tmp});
#                                        1,000,000 tasks take about 4.6 GB
#   BUILD_CACHE_MB=1024                  SQLite page cache of the build (memory)
#   NO_SAVE=1 bench/scale.sh             print only; do not write bench/results/scale-<date>.txt
#
# For each size N it
#   1. makes a fresh database with the schema (`tiny-harness migrate`);
#   2. fills it with N echo tasks of participant `bench`, in SQL alone (sqlite3 CLI, one
#      transaction, journal off during the fill, then back to WAL): for each task the rows
#      one real echo SendMessage writes — the task, two participants (`bench`, and the
#      harness `tiny-harness`), two messages, three events, one turn — with random v4 UUIDs
#      and a distinct status time per task, 10 ms apart, in the order the server would have
#      written them; participant_task_counts is kept by the schema's own trigger. It prints
#      the build time, the file size after a checkpoint and the bytes on disk per task;
#   3. starts lighttpd with PROCS workers on that database (tests/lib/server.sh of
#      TH_SRCDIR) and checks each request it will send.
# With every size built and serving, it runs wrk (bench/scale.lua) ROUNDS times over:
#        card    GET /.well-known/agent-card.json: the transport ceiling, no database
#        get     GetTask of the task in the middle of the data (one task, hot)
#        spread  GetTask cycling through 1,000 tasks spread over the whole database
#        list1   ListTasks, first page (pageSize PAGE_SIZE, default 50) with totalSize
#        list2   ListTasks, second page (the nextPageToken of the first)
#        deep    ListTasks, the page after the middle task (a token made by hand in the
#                server's format; skipped when the server refuses it)
# each kind against every size in turn (odd rounds in SIZES order, even rounds reversed),
# a WARMUP run before each measured one. It prints, for each N and kind, the median req/s,
# p50 and p99, and the cost ratio cost(last N)/cost(first N) = req/s(first)/req/s(last)
# against the 1.5 target. A run with non-200 answers, JSON-RPC errors, a wrong totalSize
# or socket errors is marked `!`, listed under RUNS WITH ERRORS, left out of the medians,
# and the script exits 1. bench/README.md says how to read the output.
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=bench/lib.sh
. "$root/bench/lib.sh" # to_ms, median
TH_SRCDIR=${TH_SRCDIR:-$root}
TH_BIN=${TH_BIN:-$TH_SRCDIR/build/src/tiny-harness}
SIZES=${SIZES:-1000 1000000}
DURATION=${DURATION:-5s}
WARMUP=${WARMUP:-1s}
THREADS=${THREADS:-2}
CONNS=${CONNS:-8}
PROCS=${PROCS:-1}
ROUNDS=${ROUNDS:-3}
PAGE_SIZE=${PAGE_SIZE:-50}
BUILD_CACHE_MB=${BUILD_CACHE_MB:-1024}
TARGET=1.5
SPREAD_IDS=1000
lua=$root/bench/scale.lua

die() { echo "scale: $*" >&2; exit 1; }
say() { echo "scale: $*" >&2; }

# ---------------------------------------------------------------- checks
[ -x "$TH_BIN" ] || die "no program at TH_BIN=$TH_BIN (build it first; this script builds nothing)"
case $TH_BIN in /*) ;; *) TH_BIN=$(cd "$(dirname "$TH_BIN")" && pwd)/$(basename "$TH_BIN") ;; esac
[ -r "$TH_SRCDIR/tests/lib/server.sh" ] || die "no tests/lib/server.sh under TH_SRCDIR=$TH_SRCDIR"
[ -r "$lua" ] || die "no $lua"
for t in wrk curl jq sqlite3 od; do
	command -v $t >/dev/null 2>&1 || die "$t is not installed"
done
num() { case $2 in '' | *[!0-9]*) die "$1 must be a positive whole number, not '$2'" ;; esac; [ "$2" -gt 0 ] || die "$1 must be positive"; }
secs() { # NAME VALUE: whole seconds like 8s (0s allowed for WARMUP)
	local s=${2%s}
	case $s in '' | *[!0-9]*) die "$1 must be whole seconds, like 8s, not '$2'" ;; esac
	echo "$s"
}
dur_s=$(secs DURATION "$DURATION") || exit 1
[ "$dur_s" -gt 0 ] || die "DURATION must be at least 1s"
warm_s=$(secs WARMUP "$WARMUP") || exit 1
num THREADS "$THREADS"
num CONNS "$CONNS"
num PROCS "$PROCS"
num ROUNDS "$ROUNDS"
num PAGE_SIZE "$PAGE_SIZE"
num BUILD_CACHE_MB "$BUILD_CACHE_MB"
read -r -a sizes <<<"$SIZES"
[ ${#sizes[@]} -gt 0 ] || die "SIZES is empty"
for n in "${sizes[@]}"; do
	num "a size in SIZES" "$n"
	case " ${seen:-} " in *" $n "*) die "SIZES names $n twice" ;; esac
	seen="${seen:-} $n"
	# Two full pages and a task in the middle that has a full page after it.
	[ "$n" -ge $((4 * PAGE_SIZE)) ] || die "each size must be at least 4 pages ($((4 * PAGE_SIZE)) tasks), not $n"
done

# random_port, port_busy, alive, wait_card
# shellcheck source=../tests/lib/proc.sh
. "$TH_SRCDIR/tests/lib/proc.sh"

# Nothing from the caller's shell may change what tiny-harness does (model, limits,
# durability, a config file): the workers run with the defaults.
for v in $(compgen -e | grep '^TINY_HARNESS_'); do unset "$v"; done
export TH_BIN TH_SRCDIR

parent=${SCALE_DIR:-${TMPDIR:-/tmp}}
[ -d "$parent" ] || die "no directory SCALE_DIR=$parent"
state=$(mktemp -d "$parent/th-scale.XXXXXX") || die "cannot make a directory under $parent"
running=() # directories of the lighttpd instances started
cleanup() {
	local d
	for d in "${running[@]}"; do sh "$TH_SRCDIR/tests/lib/server.sh" stop "$d"; done
	rm -rf "$state"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

# All the databases exist together: a generous 6 KB a task (4.6 KB measured) and 64 MB
# for each, and for the build's temporary files.
need=0
for n in "${sizes[@]}"; do need=$((need + (n * 6 + 65536) / 1024)); done
avail=$(df -Pm "$state" | awk 'NR == 2 { print $4 }')
case $avail in '' | *[!0-9]*) ;; *)
	[ "$avail" -ge "$need" ] || die "SIZES=\"$SIZES\" need about $need MB under $parent; $avail MB free (set SCALE_DIR)" ;;
esac

# ---------------------------------------------------------------- the fill
# uuid HEXCOLUMN: 32 hex digits as a version-4 UUID (8-4-4-4-12, variant 10xx).
uuid() {
	local c=$1
	printf "%s" "substr($c, 1, 8) || '-' || substr($c, 9, 4) || '-4' || substr($c, 14, 3) || '-' ||" \
		" substr('89ab', 1 + ((instr('0123456789abcdef', substr($c, 17, 1)) - 1) & 3), 1) ||" \
		" substr($c, 18, 3) || '-' || substr($c, 21, 12)"
}
# iso MS-EXPRESSION: the A2A timestamp the server writes (2026-12-01T20:24:25.704Z).
iso() { printf "strftime('%%Y-%%m-%%dT%%H:%%M:%%fZ', (%s) / 1000.0, 'unixepoch')" "$1"; }

# fill_sql N BASE_MS: the SQL that adds N echo tasks, created at BASE_MS + 10 ms * n for
# n = 1..N. Every row names its columns and no hidden rowid or column order is assumed
# (participants' rowid is an ordinary column since 016, given here). Events and messages
# go into their row tables (014), keyed by the task's number. Afterwards it prints lines
# the script reads: `mid|id|status_ms`, `next|id` (the task listed right after the middle
# one), `newest|id` and `spread|id` (SPREAD_IDS tasks evenly over n).
fill_sql() {
	local n=$1 base=$2
	local mid=$(((n + 1) / 2)) step=$((n / SPREAD_IDS))
	[ "$step" -ge 1 ] || step=1
	cat <<SQL
PRAGMA journal_mode = OFF;
PRAGMA synchronous = OFF;
PRAGMA foreign_keys = OFF;
PRAGMA temp_store = MEMORY;
PRAGMA cache_size = -$((BUILD_CACHE_MB * 1024));
BEGIN;
-- Random bits first, stored: each randomblob() is evaluated once, whatever the planner does.
CREATE TEMP TABLE bench_r (n INTEGER PRIMARY KEY, a TEXT, b TEXT, c TEXT, d TEXT);
WITH RECURSIVE k(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM k WHERE n < $n)
INSERT INTO bench_r (n, a, b, c, d)
SELECT n, lower(hex(randomblob(16))), lower(hex(randomblob(16))), lower(hex(randomblob(16))),
	lower(hex(randomblob(16)))
FROM k;
-- One row per task: task, context, user message and echo message ids; t0 = created (+1
-- participants and the user message, +2 the first event, +3 the echo, the status, the
-- turn), the text, the timestamps and the echo message as JSON.
CREATE TEMP TABLE bench_g (n INTEGER PRIMARY KEY, id TEXT, ctx TEXT, umid TEXT, amid TEXT,
	t0 INTEGER, txt TEXT, ts0 TEXT, ts2 TEXT, ts3 TEXT, amsg TEXT);
INSERT INTO bench_g (n, id, ctx, umid, amid, t0, txt, ts0, ts2, ts3, amsg)
SELECT n, id, ctx, umid, amid, t0, txt, $(iso t0), $(iso 't0 + 2'), $(iso 't0 + 3'),
	'{"messageId":"' || amid || '","contextId":"' || ctx || '","taskId":"' || id ||
	'","role":"ROLE_AGENT","parts":[{"text":"echo: ' || txt || '"}]}'
FROM (SELECT n, $(uuid a) AS id, $(uuid b) AS ctx, $(uuid c) AS umid, $(uuid d) AS amid,
	$base + 10 * n AS t0, 'benchmark message ' || n AS txt FROM bench_r);
DROP TABLE bench_r;

INSERT INTO tasks (id, context_id, state, sub_state, status_meta_json, status_message_json,
	status_ms, name, goal, ext_json, created_by, created_ms, updated_ms)
SELECT id, ctx, 'TASK_STATE_INPUT_REQUIRED', 'awaiting-next-message',
	'{"sub_state":"awaiting-next-message"}', amsg, t0 + 3, txt, txt,
	'{"type":null,"description":"","acceptance_criteria":[]}', 'bench', t0, t0 + 3
FROM bench_g ORDER BY n;

-- The schema's trigger counts bench's participations into participant_task_counts.
INSERT INTO participants (task_id, participant_id, kind, role, display_name, added_ms, status_ms,
	rowid)
SELECT g.id, p.pid, p.kind, p.role, '', g.t0 + 1, g.t0 + 3, p.k
FROM bench_g g
CROSS JOIN (SELECT 1 AS k, 'bench' AS pid, 'human' AS kind, 'reporter' AS role
	UNION ALL SELECT 2, 'tiny-harness', 'agent', 'assignee') p
ORDER BY g.n, p.k;

INSERT INTO message_rows (task_num, pos, message_id, role, sender, json, created_ms)
SELECT t.num, m.pos,
	CASE m.pos WHEN 1 THEN g.umid ELSE g.amid END,
	CASE m.pos WHEN 1 THEN 'ROLE_USER' ELSE 'ROLE_AGENT' END,
	CASE m.pos WHEN 1 THEN 'bench' ELSE 'tiny-harness' END,
	CASE m.pos WHEN 1 THEN '{"messageId":"' || g.umid || '","role":"ROLE_USER","parts":[{"text":"' ||
		g.txt || '"}],"metadata":{"participant_id":"bench"},"taskId":"' || g.id ||
		'","contextId":"' || g.ctx || '"}'
	ELSE g.amsg END,
	CASE m.pos WHEN 1 THEN g.t0 + 1 ELSE g.t0 + 3 END
FROM bench_g g JOIN tasks t ON t.id = g.id
CROSS JOIN (SELECT 1 AS pos UNION ALL SELECT 2) m
ORDER BY g.n, m.pos;

INSERT INTO event_rows (task_num, seq, kind, json, created_ms)
SELECT t.num, e.seq, CASE e.seq WHEN 1 THEN 'task' ELSE 'status' END,
	CASE e.seq
	WHEN 1 THEN '{"task":{"id":"' || g.id || '","contextId":"' || g.ctx ||
		'","status":{"state":"TASK_STATE_SUBMITTED","timestamp":"' || g.ts0 ||
		'"},"history":[{"messageId":"' || g.umid || '","role":"ROLE_USER","parts":[{"text":"' ||
		g.txt || '"}],"metadata":{"participant_id":"bench"},"taskId":"' || g.id ||
		'","contextId":"' || g.ctx ||
		'"}],"metadata":{"io.github.madarauchiha-314.tiny-harness/task":{"name":"' ||
		g.txt || '","goal":"' || g.txt || '","type":null,"description":"","acceptance_criteria":[],' ||
		'"participants":[{"id":"bench","kind":"human","role":"reporter","display_name":""},' ||
		'{"id":"tiny-harness","kind":"agent","role":"assignee","display_name":""}],' ||
		'"parent_tasks":[],"sub_tasks":[],"plan":null}}}}'
	WHEN 2 THEN '{"statusUpdate":{"taskId":"' || g.id || '","contextId":"' || g.ctx ||
		'","status":{"state":"TASK_STATE_WORKING","timestamp":"' || g.ts2 || '"}}}'
	ELSE '{"statusUpdate":{"taskId":"' || g.id || '","contextId":"' || g.ctx ||
		'","status":{"state":"TASK_STATE_INPUT_REQUIRED","message":' || g.amsg ||
		',"timestamp":"' || g.ts3 ||
		'"},"metadata":{"io.github.madarauchiha-314.tiny-harness/status":{"sub_state":"awaiting-next-message"}}}}'
	END,
	CASE e.seq WHEN 1 THEN g.t0 + 2 ELSE g.t0 + 3 END
FROM bench_g g JOIN tasks t ON t.id = g.id
CROSS JOIN (SELECT 1 AS seq UNION ALL SELECT 2 UNION ALL SELECT 3) e
ORDER BY g.n, e.seq;

-- The worker that ran the turn: one of two pids, as with two workers.
INSERT INTO turn_rows (task_num, message_id, state, attempts, worker_pid, cut, created_ms,
	updated_ms)
SELECT t.num, g.umid, 'done', 1, 40000 + g.n % 2, 0, g.t0 + 3, g.t0 + 3
FROM bench_g g JOIN tasks t ON t.id = g.id ORDER BY g.n;
COMMIT;

SELECT 'mid|' || id || '|' || (t0 + 3) FROM bench_g WHERE n = $mid;
SELECT 'next|' || id FROM bench_g WHERE n = $mid - 1;
SELECT 'newest|' || id FROM bench_g WHERE n = $n;
SELECT 'spread|' || id FROM bench_g WHERE n % $step = 0 ORDER BY n LIMIT $SPREAD_IDS;
SQL
}

now_s() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", b - a }'; }
filesize() { stat -c %s "$1" 2>/dev/null || echo 0; }

# build N DIR: DIR/tiny-harness.db with the schema and N tasks; sets MID MID_MS NEXT NEWEST
# and the BUILD_S FILE_B PER_TASK GROWTH_PER_TASK of N, and writes DIR/spread.txt.
declare -A BUILD_S FILE_B PER_TASK GROWTH_PER_TASK
empty_b=
build() {
	local n=$1 dir=$2 db=$2/tiny-harness.db t0 t1 out got
	mkdir -p "$dir" || die "cannot create $dir"
	TINY_HARNESS_DB=$db "$TH_BIN" migrate >"$dir/migrate.out" 2>&1 || {
		cat "$dir/migrate.out" >&2
		die "'$TH_BIN migrate' failed for $db"
	}
	if [ -z "$empty_b" ]; then
		sqlite3 "$db" 'PRAGMA wal_checkpoint(TRUNCATE)' >/dev/null
		empty_b=$(filesize "$db")
	fi
	say "N=$n: filling $db…"
	out=$dir/fill.out
	t0=$(now_s)
	fill_sql "$n" $(($(date +%s%3N) - 10 * n - 60000)) | sqlite3 -bail "$db" >"$out" 2>&1 || {
		tail -n 20 "$out" >&2
		die "N=$n: the fill failed"
	}
	# Back to WAL, as the server keeps it, with nothing left in the log.
	[ "$(sqlite3 "$db" 'PRAGMA journal_mode = WAL' 2>&1)" = wal ] || die "N=$n: cannot put the database back in WAL mode"
	sqlite3 "$db" 'PRAGMA wal_checkpoint(TRUNCATE)' >/dev/null || die "N=$n: the checkpoint failed"
	# Written back now, not by the kernel during the measurements.
	sync "$db" 2>/dev/null || sync
	t1=$(now_s)
	BUILD_S[$n]=$(elapsed "$t0" "$t1")
	IFS='|' read -r _ MID MID_MS < <(grep '^mid|' "$out")
	NEXT=$(sed -n 's/^next|//p' "$out")
	NEWEST=$(sed -n 's/^newest|//p' "$out")
	sed -n 's/^spread|//p' "$out" >"$dir/spread.txt"
	if [ -z "$MID" ] || [ -z "$MID_MS" ] || [ -z "$NEXT" ] || [ -z "$NEWEST" ] || [ ! -s "$dir/spread.txt" ]; then
		die "N=$n: the fill did not report its tasks"
	fi
	[ "$(sqlite3 "$db" 'PRAGMA journal_mode')" = wal ] || die "N=$n: the database is not in WAL mode after the fill"
	# Every table holds the rows N echo tasks write, and the kept count agrees.
	got=$(sqlite3 -separator ' ' "$db" "SELECT (SELECT count(*) FROM tasks), (SELECT count(*) FROM participants),
		(SELECT count(*) FROM messages), (SELECT count(*) FROM events), (SELECT count(*) FROM turns),
		(SELECT coalesce((SELECT tasks FROM participant_task_counts WHERE participant_id = 'bench'), -1)),
		(SELECT count(*) FROM participant_task_counts)")
	[ "$got" = "$n $((2 * n)) $((2 * n)) $((3 * n)) $n $n 1" ] ||
		die "N=$n: rows (tasks participants messages events turns bench-count counts-rows) are '$got', want '$n $((2 * n)) $((2 * n)) $((3 * n)) $n $n 1'"
	FILE_B[$n]=$(($(filesize "$db") + $(filesize "$db-wal")))
	PER_TASK[$n]=$((FILE_B[$n] / n))
	GROWTH_PER_TASK[$n]=$(((FILE_B[$n] - empty_b) / n))
	say "N=$n: built in ${BUILD_S[$n]} s; $(awk -v b="${FILE_B[$n]}" 'BEGIN { printf "%.1f MB", b / 1048576 }') on disk, ${PER_TASK[$n]} bytes a task (${GROWTH_PER_TASK[$n]} over the empty schema of $empty_b bytes)"
}

# ---------------------------------------------------------------- requests
rpc() { # URL BODY
	curl -s --max-time 30 -H 'Content-Type: application/json' -H 'A2A-Version: 1.0' \
		-H 'X-Participant-Id: bench' -d "$2" "$1"
}
list_body() { # [TOKEN]
	if [ -n "${1:-}" ]; then
		printf '{"jsonrpc":"2.0","id":1,"method":"ListTasks","params":{"pageSize":%d,"pageToken":"%s"}}' "$PAGE_SIZE" "$1"
	else
		printf '{"jsonrpc":"2.0","id":1,"method":"ListTasks","params":{"pageSize":%d}}' "$PAGE_SIZE"
	fi
}
get_body() { printf '{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"%s"}}' "$1"; }
hex() { printf '%s' "$1" | od -An -v -tx1 | tr -d ' \n'; }

# check N URL DIR: each request the runs will send answers as it should; sets PAGE2_TOKEN and
# DEEP_TOKEN (empty when the server refuses a hand-made token).
check() {
	local n=$1 url=$2 dir=$3 out ids1
	[ -n "$(curl -s --max-time 10 "${url}.well-known/agent-card.json" | jq -r '.name // empty' 2>/dev/null)" ] ||
		die "N=$n: no agent card"
	out=$(rpc "$url" "$(get_body "$MID")")
	[ "$(jq -r '[.result.id, .result.status.state, (.result.history | length),
		.result.status.message.parts[0].text] | join(" ")' <<<"$out" 2>/dev/null)" = \
		"$MID TASK_STATE_INPUT_REQUIRED 2 echo: benchmark message $(((n + 1) / 2))" ] ||
		die "N=$n: GetTask of the middle task does not answer with the echo task: ${out:0:600}"
	out=$(rpc "$url" "$(get_body "$(head -n1 "$dir/spread.txt")")")
	[ "$(jq -r .result.id <<<"$out" 2>/dev/null)" = "$(head -n1 "$dir/spread.txt")" ] ||
		die "N=$n: GetTask of a spread task does not answer: ${out:0:600}"
	# Page 1: a full page, newest first, the exact total, a token.
	out=$(rpc "$url" "$(list_body)")
	[ "$(jq -r '[(.result.tasks | length), .result.totalSize, .result.tasks[0].id,
		(.result.nextPageToken | length > 0)] | join(" ")' <<<"$out" 2>/dev/null)" = "$PAGE_SIZE $n $NEWEST true" ] ||
		die "N=$n: ListTasks page 1 is not $PAGE_SIZE tasks, newest first, totalSize $n and a nextPageToken: ${out:0:600}"
	TOKEN1=$(jq -r .result.nextPageToken <<<"$out")
	ids1=$(jq -r '.result.tasks[].id' <<<"$out" | sort)
	# Page 2: another full page, none of page 1's tasks, another token.
	out=$(rpc "$url" "$(list_body "$TOKEN1")")
	[ "$(jq -r '[(.result.tasks | length), .result.totalSize, (.result.nextPageToken | length > 0)] | join(" ")' <<<"$out" 2>/dev/null)" = \
		"$PAGE_SIZE $n true" ] || die "N=$n: ListTasks page 2 is not $PAGE_SIZE tasks, totalSize $n and a nextPageToken: ${out:0:600}"
	[ "$(jq -r .result.nextPageToken <<<"$out")" != "$TOKEN1" ] || die "N=$n: page 2 hands out page 1's token again"
	[ -z "$(comm -12 <(echo "$ids1") <(jq -r '.result.tasks[].id' <<<"$out" | sort))" ] ||
		die "N=$n: pages 1 and 2 share tasks"
	PAGE2_TOKEN=$TOKEN1
	# The page after the middle task, from a token in the server's format
	# (hex of "<status_ms>.<task id>"): it must start with the task listed after it.
	DEEP_TOKEN=$(hex "$MID_MS.$MID")
	out=$(rpc "$url" "$(list_body "$DEEP_TOKEN")")
	if [ "$(jq -r '[(.result.tasks | length), .result.totalSize, .result.tasks[0].id] | join(" ")' <<<"$out" 2>/dev/null)" != \
		"$PAGE_SIZE $n $NEXT" ]; then
		say "N=$n: the server does not take a hand-made page token; no deep row: ${out:0:300}"
		DEEP_TOKEN=
	fi
}

# wrk latency ("812.00us", "3.21ms", "1.02s", "1.5m") in milliseconds.

# wrk_run OUT SECONDS KIND URL [VAR=VALUE…]: one bounded wrk run with bench/scale.lua
# (list1, list2 and deep are its kind list with another token).
wrk_run() {
	local out=$1 s=$2 kind=$3 url=$4
	shift 4
	case $kind in list1 | list2 | deep) kind=list ;; esac
	env BENCH_KIND="$kind" BENCH_PAGE_SIZE="$PAGE_SIZE" "$@" \
		timeout $((s + 30)) wrk -t"$THREADS" -c"$CONNS" -d"${s}s" --latency -s "$lua" "$url" >"$out" 2>&1
}

# RPS/P50/P99[kind.N]: space-separated values of the clean rounds; ALL[kind.N]: every
# round's req/s as printed (`!` after a run with errors); ERRS[kind.N]: count of rounds
# with errors; BADLIST: their descriptions.
declare -A RPS P50 P99 ALL ERRS ROUND_RPS
BADLIST=()
measure() { # N ROUND KIND URL [VAR=VALUE…]
	local n=$1 round=$2 kind=$3 url=$4 out rps p50 p99 line sock non2xx resp bad rpcerr wrong
	shift 4
	out=$state/wrk-$n-$round-$kind.txt
	if [ "$warm_s" -gt 0 ]; then
		wrk_run "$out.warm" "$warm_s" "$kind" "$url" "$@"
	fi
	say "N=$n round $round: $kind (wrk -t$THREADS -c$CONNS -d$DURATION)…"
	wrk_run "$out" "$dur_s" "$kind" "$url" "$@"
	rps=$(awk '/^Requests\/sec:/ { print $2 }' "$out")
	p50=$(to_ms "$(awk '$1 == "50%" { print $2 }' "$out")")
	p99=$(to_ms "$(awk '$1 == "99%" { print $2 }' "$out")")
	line=$(grep '^scale: responses=' "$out")
	sock=$(awk '/Socket errors:/ { sub(/^.*Socket errors: /, ""); print }' "$out")
	non2xx=$(awk '/Non-2xx or 3xx responses:/ { print $NF }' "$out")
	if [ -z "$rps" ] || [ -z "$line" ]; then
		cat "$out" >&2
		die "wrk failed for $kind at N=$n"
	fi
	read -r resp bad rpcerr wrong < <(sed 's/^scale: responses=\([0-9]*\) bad-status=\([0-9]*\) rpc-errors=\([0-9]*\) wrong=\([0-9]*\)$/\1 \2 \3 \4/' <<<"$line")
	rps=$(awk -v r="$rps" 'BEGIN { printf "%.0f", r }')
	if [ "$bad" != 0 ] || [ "$rpcerr" != 0 ] || [ "$wrong" != 0 ] || [ -n "$sock" ] || [ -n "$non2xx" ] || [ "${resp:-0}" = 0 ]; then
		ALL[$kind.$n]="${ALL[$kind.$n]:+${ALL[$kind.$n]} }$rps!"
		ERRS[$kind.$n]=$((${ERRS[$kind.$n]:-0} + 1))
		BADLIST+=("N=$n round $round $kind: responses=$resp bad-status=$bad rpc-errors=$rpcerr wrong-totalSize=$wrong${non2xx:+ non-2xx=$non2xx}${sock:+ socket errors: $sock}")
		say "N=$n round $round: $kind had errors (${BADLIST[-1]})"
		return
	fi
	ALL[$kind.$n]="${ALL[$kind.$n]:+${ALL[$kind.$n]} }$rps"
	RPS[$kind.$n]="${RPS[$kind.$n]:-} $rps"
	ROUND_RPS[$kind.$n.$round]=$rps
	P50[$kind.$n]="${P50[$kind.$n]:-} $p50"
	P99[$kind.$n]="${P99[$kind.$n]:-} $p99"
}

# ---------------------------------------------------------------- build, start, check
# Every size gets its database and its own lighttpd first; the rounds then measure the
# sizes one after the other for each kind (odd rounds in SIZES order, even rounds
# reversed), so drift on a shared machine hits all sizes alike.
kinds=(card get spread list1 list2 deep)
declare -A URL GET_ID SPREAD_FILE PAGE2 DEEP
for n in "${sizes[@]}"; do
	dir=$state/n$n
	build "$n" "$dir"
	running+=("$dir")
	url=$(sh "$TH_SRCDIR/tests/lib/server.sh" start "$dir" "$PROCS") || die "N=$n: lighttpd did not start"
	case $url in http://127.0.0.1:*/) ;; *) die "refusing a non-loopback URL: $url" ;; esac
	check "$n" "$url" "$dir"
	URL[$n]=$url
	GET_ID[$n]=$MID
	SPREAD_FILE[$n]=$dir/spread.txt
	PAGE2[$n]=$PAGE2_TOKEN
	DEEP[$n]=$DEEP_TOKEN
done

# ---------------------------------------------------------------- measure
reversed=()
for ((i = ${#sizes[@]} - 1; i >= 0; i--)); do reversed+=("${sizes[$i]}"); done
for round in $(seq 1 "$ROUNDS"); do
	if [ $((round % 2)) = 1 ]; then order=("${sizes[@]}"); else order=("${reversed[@]}"); fi
	for kind in "${kinds[@]}"; do
		for n in "${order[@]}"; do
			url=${URL[$n]}
			case $kind in
			card) measure "$n" "$round" card "${url}.well-known/agent-card.json" ;;
			get) measure "$n" "$round" get "$url" BENCH_TASK="${GET_ID[$n]}" ;;
			spread) measure "$n" "$round" spread "$url" BENCH_IDS="${SPREAD_FILE[$n]}" ;;
			list1) measure "$n" "$round" list1 "$url" BENCH_TOTAL="$n" ;;
			list2) measure "$n" "$round" list2 "$url" BENCH_TOTAL="$n" BENCH_TOKEN="${PAGE2[$n]}" ;;
			deep)
				[ -z "${DEEP[$n]}" ] ||
					measure "$n" "$round" deep "$url" BENCH_TOTAL="$n" BENCH_TOKEN="${DEEP[$n]}"
				;;
			esac
		done
	done
done
for dir in "${running[@]}"; do sh "$TH_SRCDIR/tests/lib/server.sh" stop "$dir"; done
running=()

# ---------------------------------------------------------------- report
ver() { "$@" 2>&1 | head -n1; }
first=${sizes[0]}
last=${sizes[${#sizes[@]} - 1]}
report=$state/report.txt
{
	echo "tiny-harness scale benchmark, $(date -u '+%Y-%m-%d %H:%M UTC')"
	echo "commit:    $(git -C "$TH_SRCDIR" rev-parse --short HEAD 2>/dev/null)$(git -C "$TH_SRCDIR" diff --quiet 2>/dev/null || echo ' (work tree modified)')"
	echo "binary:    $TH_BIN, built $(date -u -r "$TH_BIN" '+%Y-%m-%d %H:%M UTC')"
	echo "machine:   $(nproc) CPUs, $(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo), $(awk '/^MemTotal/ { printf "%.0f GB RAM", $2 / 1048576 }' /proc/meminfo)"
	echo "software:  $(ver lighttpd -v | sed 's/ - a light.*//'), $(ver wrk -v | awk '{ print "wrk", $2 }'), SQLite $(sqlite3 --version | awk '{ print $1 }')"
	echo "setup:     lighttpd on loopback, $PROCS FastCGI workers (conf/lighttpd.conf), default settings; the database"
	echo "           made by SQL (N echo tasks of participant bench) and in the OS page cache (just written)"
	echo "load:      wrk -t$THREADS -c$CONNS -d$DURATION --latency after a ${WARMUP} warm-up, client on the same machine; $ROUNDS round(s), medians"
	echo
	echo "database (after PRAGMA wal_checkpoint(TRUNCATE); the empty schema is $empty_b bytes)"
	printf '%10s %10s %12s %12s %14s\n' tasks "build s" "file MB" "bytes/task" "growth/task"
	for n in "${sizes[@]}"; do
		printf '%10s %10s %12s %12s %14s\n' "$n" "${BUILD_S[$n]}" \
			"$(awk -v b="${FILE_B[$n]}" 'BEGIN { printf "%.1f", b / 1048576 }')" "${PER_TASK[$n]}" "${GROWTH_PER_TASK[$n]}"
	done
	echo
	printf '%-7s %10s %9s %9s %9s  %-20s %s\n' kind tasks req/s "p50 ms" "p99 ms" "req/s each round" errors
	for kind in "${kinds[@]}"; do
		for n in "${sizes[@]}"; do
			[ "$kind" != deep ] || [ -n "${DEEP[$n]}" ] || { printf '%-7s %10s %10s\n' "$kind" "$n" "(skipped: hand-made token refused)"; continue; }
			# shellcheck disable=SC2086
			printf '%-7s %10s %9s %9s %9s  %-20s %s\n' "$kind" "$n" "$(median ${RPS[$kind.$n]:-} | sed 's/\.[0-9]*$//')" \
				"$(median ${P50[$kind.$n]:-})" "$(median ${P99[$kind.$n]:-})" "${ALL[$kind.$n]:-}" \
				"$([ -n "${ERRS[$kind.$n]:-}" ] && echo "! ${ERRS[$kind.$n]} of $ROUNDS run(s) with errors" || echo 0)"
		done
	done
	if [ "$first" != "$last" ]; then
		echo
		echo "cost($last)/cost($first) = req/s($first) / req/s($last)   (target: at most $TARGET)"
		printf '%-7s %8s  %-20s %s\n' kind medians "each round" ""
		for kind in "${kinds[@]}"; do
			# shellcheck disable=SC2086
			a=$(median ${RPS[$kind.$first]:-})
			# shellcheck disable=SC2086
			b=$(median ${RPS[$kind.$last]:-})
			if [ -z "$a" ] || [ -z "$b" ]; then
				printf '%-7s %8s\n' "$kind" "-"
				continue
			fi
			r=$(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.2f", a / b }')
			# The same ratio within each round: the two runs were back to back.
			each=
			for round in $(seq 1 "$ROUNDS"); do
				a=${ROUND_RPS[$kind.$first.$round]:-}
				b=${ROUND_RPS[$kind.$last.$round]:-}
				[ -n "$a" ] && [ -n "$b" ] || continue
				each="$each $(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.2f", a / b }')"
			done
			case $kind in
			card) verdict="(transport only: the drift between the two runs)" ;;
			*) verdict=$(awk -v r="$r" -v t="$TARGET" 'BEGIN { print (r <= t ? "ok" : "OVER") }') ;;
			esac
			printf '%-7s %8s  %-20s %s\n' "$kind" "$r" "${each# }" "$verdict"
		done
	fi
	echo
	echo "kinds: card = GET /.well-known/agent-card.json; get = GetTask of the middle task;"
	echo "       spread = GetTask over $SPREAD_IDS tasks spread over the database; list1/list2 = ListTasks pages 1"
	echo "       and 2 (pageSize $PAGE_SIZE, totalSize checked on every answer); deep = the ListTasks page after the middle task"
	if [ ${#BADLIST[@]} -gt 0 ]; then
		echo
		echo "RUNS WITH ERRORS (left out of the medians):"
		printf '  %s\n' "${BADLIST[@]}"
	fi
} >"$report"
cat "$report"
if [ "${NO_SAVE:-0}" != 1 ]; then
	mkdir -p "$root/bench/results"
	dest=$root/bench/results/scale-$(date -u +%Y-%m-%d).txt
	[ -e "$dest" ] && dest=$root/bench/results/scale-$(date -u +%Y-%m-%d-%H%M).txt
	cp "$report" "$dest"
	say "wrote ${dest#"$root"/}"
fi
[ ${#BADLIST[@]} -eq 0 ] || exit 1
exit 0
