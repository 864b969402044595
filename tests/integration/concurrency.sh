#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Integration test: concurrency through lighttpd (tests/lib/server.sh) with 4 FastCGI
# workers sharing one SQLite database (STORE-4, STREAM-3, TASK-7, LIM-3).
#
# 20 clients run at once, each sending 20 follow-up messages one after another, spread
# over 10 tasks (400 messages; every task gets messages from many clients at the same
# time). Then:
#  - every request answered 200 with a result: no 5xx, no JSON-RPC error, and no
#    "busy"/"locked"/SQLITE_BUSY text reaching a client (LIM-3);
#  - every message is stored exactly once, in its task (counted by message id);
#  - each task's event sequence is gap-free, 1..n (STREAM-3);
#  - every message got its turn and exactly one answer, and no turn is left unfinished;
#  - the turns ran in several worker processes.
# Prints the figures (requests, status codes, wall time, rate, latency percentiles).
# Bounded: 400 requests, 30 s each at most, 120 s for the whole load.
# TAP output; 77 (skip) when lighttpd, curl, jq or sqlite3 is missing.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
set -u

: "${TH_SRCDIR:=$(cd "$(dirname "$0")/../.." && pwd)}"
. "$TH_SRCDIR/tests/lib/tap.sh"
. "$TH_SRCDIR/tests/lib/proc.sh"
. "$TH_SRCDIR/tests/lib/a2a.sh"

[ -x "$TH_BIN" ] || skip "no program at $TH_BIN"
require_lighttpd
require_tools curl jq sqlite3

CLIENTS=${TH_CONC_CLIENTS:-20}
PER_CLIENT=${TH_CONC_MESSAGES:-20}
TASKS=${TH_CONC_TASKS:-10}
PROCS=4
TOTAL=$((CLIENTS * PER_CLIENT))

scratch th-conc
CLIENT_PIDS=
on_exit 'for p in $CLIENT_PIDS; do kill "$p" 2>/dev/null; done'

# Each process writes itself, as it does when no writer takes its writes (HOST-2,
# decision-084): this test is about several processes meeting at SQLite's lock;
# tests/integration/handoff.sh covers the hand-over.
export TINY_HARNESS_WRITE_HANDOFF_MS=0
BASE=$(sh "$SERVER" start "$T/srv" "$PROCS") || bail "lighttpd did not start"
DB=$(th_db_of "$T/srv")
echo "# lighttpd at $BASE ($PROCS workers); $CLIENTS clients x $PER_CLIENT messages on $TASKS tasks"

post() { # post BODY OUTFILE — prints "status time"
	curl -s -o "$2" -w '%{http_code} %{time_total}\n' --max-time 30 -H 'Content-Type: application/json' \
		-H 'A2A-Version: 1.0' -H 'X-Participant-Id: alice' --data-binary "$1" "$BASE"
}

# ------------------------------------------------------------------ the tasks
: >"$T/tasks"
for i in $(seq 1 "$TASKS"); do
	body=$(printf '{"jsonrpc":"2.0","id":%d,"method":"SendMessage","params":{"message":{"messageId":"task-%d","role":"ROLE_USER","parts":[{"text":"task %d"}]}}}' "$i" "$i" "$i")
	post "$body" "$T/create" >/dev/null
	id=$(jq -r .result.task.id "$T/create" 2>/dev/null)
	[ -n "$id" ] && [ "$id" != null ] || bail "could not create task $i: $(head -c 300 "$T/create")"
	echo "$id" >>"$T/tasks"
done
mapfile -t TASK_IDS <"$T/tasks"

# ------------------------------------------------------------------ the load
# Client c's message j goes to task (c * 7 + j) mod TASKS: every task gets messages from
# many clients at once. Each response line: "status time", then the body on one line.
client() {
	local c=$1 j t body start
	start=$(date +%s)
	for j in $(seq 1 "$PER_CLIENT"); do
		[ $(($(date +%s) - start)) -lt 120 ] || break
		t=${TASK_IDS[$(((c * 7 + j) % TASKS))]}
		body=$(printf '{"jsonrpc":"2.0","id":%d,"method":"SendMessage","params":{"message":{"messageId":"cc-%d-%d","role":"ROLE_USER","taskId":"%s","parts":[{"text":"msg[%d-%d]"}]}}}' \
			"$j" "$c" "$j" "$t" "$c" "$j")
		post "$body" "$T/resp.$c" >>"$T/codes.$c"
		{
			tr -d '\n' <"$T/resp.$c"
			echo
		} >>"$T/bodies.$c"
	done
}
t0=$(now_ms)
for c in $(seq 1 "$CLIENTS"); do
	: >"$T/codes.$c"
	: >"$T/bodies.$c"
	client "$c" &
	CLIENT_PIDS="$CLIENT_PIDS $!"
done
wait
CLIENT_PIDS=
t1=$(now_ms)

# Turns answered before their response returned; wait (bounded) for any still running.
wait_idle 300

cat "$T"/codes.* >"$T/codes"
cat "$T"/bodies.* >"$T/bodies"
sent=$(grep -c . "$T/codes")
wall=$((t1 - t0))
codes=$(cut -d' ' -f1 "$T/codes" | sort | uniq -c | awk '{ printf "%s%s x %s", sep, $2, $1; sep = ", " }')
lat=$(awk '{ printf "%d\n", $2 * 1000 }' "$T/codes" | sort -n | awk '{ a[NR] = $1 } END {
	if (NR == 0) { print "none"; exit }
	p50 = a[int(NR * 0.50 + 0.5) > 0 ? int(NR * 0.50 + 0.5) : 1]
	p99 = a[int(NR * 0.99 + 0.5) > 0 ? int(NR * 0.99 + 0.5) : 1]
	printf "median %d ms, p99 %d ms, max %d ms", p50, p99, a[NR] }')
echo "# $sent requests in $wall ms ($(awk -v s="$sent" -v w="$wall" 'BEGIN { printf "%.0f", (w > 0) ? s * 1000 / w : 0 }') req/s); HTTP: $codes; latency $lat"

# ------------------------------------------------------------------ the checks
fivexx=$(grep -c '^5' "$T/codes")
non200=$(grep -vc '^200 ' "$T/codes")
DETAIL=$(grep -v '^200 ' "$T/codes" | head -n 5)
check "LIM-3 STORE-4 all $TOTAL requests were sent and answered 200 (5xx: $fivexx, other non-200: $((non200 - fivexx)))" \
	'[ "$sent" = "$TOTAL" ]' '[ "$non200" = 0 ]'

errors=$(jq -c 'select(.error != null) | .error' "$T/bodies" 2>/dev/null | grep -c .)
noresult=$(jq -c 'select(.result.task.id == null)' "$T/bodies" 2>/dev/null | grep -c .)
busy=$(grep -Eic 'busy|locked' "$T/bodies")
DETAIL=$(jq -c 'select(.error != null) | .error' "$T/bodies" 2>/dev/null | sort | uniq -c | sort -rn | head -n 5; grep -Ei 'busy|locked' "$T/bodies" | head -n 3 | cut -c1-300)
check "LIM-3 no JSON-RPC error ($errors), every response a task ($noresult without), no busy/locked text reaching a client ($busy)" \
	'[ "$errors" = 0 ]' '[ "$noresult" = 0 ]' '[ "$busy" = 0 ]'

stored=$(sq "SELECT COUNT(*) FROM messages WHERE message_id LIKE 'cc-%'")
distinct=$(sq "SELECT COUNT(DISTINCT message_id) FROM messages WHERE message_id LIKE 'cc-%'")
dupes=$(sq "SELECT COUNT(*) FROM (SELECT message_id FROM messages WHERE message_id LIKE 'cc-%' GROUP BY message_id HAVING COUNT(*) > 1) AS d")
# Each in the task it was sent to (the text names client and message; the task follows).
misplaced=0
for c in $(seq 1 "$CLIENTS"); do
	for j in $(seq 1 "$PER_CLIENT"); do
		echo "cc-$c-$j|${TASK_IDS[$(((c * 7 + j) % TASKS))]}"
	done
done >"$T/expected"
sq "SELECT message_id || '|' || task_id FROM messages WHERE message_id LIKE 'cc-%'" | sort >"$T/actual"
sort "$T/expected" >"$T/expected.sorted"
misplaced=$(comm -3 "$T/expected.sorted" "$T/actual" | grep -c .)
DETAIL=$(comm -3 "$T/expected.sorted" "$T/actual" | head -n 5)
check "TASK-7 LIM-3 every message stored exactly once, in its task ($stored rows, $distinct ids, $dupes duplicated, $misplaced missing or misplaced)" \
	'[ "$stored" = "$TOTAL" ]' '[ "$distinct" = "$TOTAL" ]' '[ "$dupes" = 0 ]' '[ "$misplaced" = 0 ]'

# Per task: how many events, the first seq and the last; gap-free means 1..n.
PER_TASK="SELECT t.id, (SELECT COUNT(*) FROM events e WHERE e.task_id = t.id) AS n,
	(SELECT MIN(seq) FROM events e WHERE e.task_id = t.id) AS lo,
	(SELECT MAX(seq) FROM events e WHERE e.task_id = t.id) AS hi FROM tasks t"
gaps=$(sq "SELECT COUNT(*) FROM ($PER_TASK) AS p WHERE n = 0 OR lo <> 1 OR hi <> n")
events=$(sq "SELECT COUNT(*) FROM events")
seqs=$(sq "SELECT hi FROM ($PER_TASK) AS p" | th_join ' ')
DETAIL=$(sq "SELECT id || ' events ' || n || ' seq ' || CAST(lo AS TEXT) || '..' || CAST(hi AS TEXT) FROM ($PER_TASK) AS p")
check "STREAM-3 each task's events run 1..n without a gap ($TASKS tasks, $events events; last seqs: $seqs)" \
	'[ "$gaps" = 0 ]' '[ "$(sq "SELECT COUNT(*) FROM tasks")" = "$TASKS" ]'

turns=$(sq "SELECT state || ' ' || COUNT(*) FROM turns GROUP BY state" | th_join ', ')
unturned=$(sq "SELECT COUNT(*) FROM messages m WHERE m.message_id LIKE 'cc-%' AND
	(SELECT COUNT(*) FROM turns u WHERE u.task_id = m.task_id AND u.message_id = m.message_id) <> 1")
# The ids of the messages not answered exactly once: an answer is an agent message of the
# same task whose JSON holds the message's text. The JSON is taken apart by jq, not SQL.
sq "SELECT m.message_id, m.task_id, m.json FROM messages m WHERE m.message_id LIKE 'cc-%'" >"$T/sent.rows"
sq "SELECT a.task_id, a.json FROM messages a WHERE a.role = 'ROLE_AGENT' AND a.task_id IN
	(SELECT task_id FROM messages WHERE message_id LIKE 'cc-%')" >"$T/answers.rows"
jq -Rrn --rawfile answers "$T/answers.rows" '
	[$answers | split("\n")[] | select(. != "") | capture("^(?<t>[^|]*)[|](?<j>.*)$")] as $a
	| inputs | capture("^(?<m>[^|]*)[|](?<t>[^|]*)[|](?<j>.*)$") | . as $u
	| ($u.j | fromjson | .parts[0].text) as $x
	| [$a[] | select(.t == $u.t and ($x | type) == "string" and (.j | contains($x)))] | length
	| select(. != 1) | $u.m' "$T/sent.rows" >"$T/unanswered" 2>"$T/unanswered.err" ||
	echo "jq: $(head -c 300 "$T/unanswered.err")" >>"$T/unanswered"
unanswered=$(grep -c . "$T/unanswered")
open=$(sq "SELECT COUNT(*) FROM turns WHERE state <> 'done'")
DETAIL=$(head -n 5 "$T/unanswered")
check "TURN-1 every message had one turn and exactly one answer; no turn left unfinished (turns: $turns)" \
	'[ "$unturned" = 0 ]' '[ "$unanswered" = 0 ]' '[ "$open" = 0 ]'

pids=$(sq "SELECT COUNT(DISTINCT worker_pid) FROM turns WHERE worker_pid > 0")
check "STORE-4 the turns ran in $pids worker processes (of $PROCS)" '[ "$pids" -ge 2 ]'

tap_done
