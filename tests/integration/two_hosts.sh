#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Integration test: two web hosts on one database (STORE-6, STREAM-2, STREAM-3, TASK-7,
# SCALE-1).
#
# Two lighttpd servers, each with its own FastCGI workers, share one database: in the
# PostgreSQL pass of scripts/test.sh (TH_TEST_PG) what a site with two hosts behind a load
# balancer runs; on SQLite the same two servers on one file of one host.
#  (a) a subscriber on host B follows, live, a task created, answered and completed
#      through host A: it gets the follow-up's events and the COMPLETED status as they are
#      committed, then its stream closes (the time from A's answer to B's event is printed);
#  (b) 20 clients x 20 follow-ups spread over both hosts (even clients A, odd B) on 10
#      tasks: every message stored once, each task's events gap-free 1..n, every message
#      answered once, both hosts' workers ran turns;
#  (c) SCALE-1: each host's clients write to tasks of their own, both hosts at once
#      (4 clients x 15 follow-ups per host, each client on its own task): every answer
#      200, each task's events gap-free 1..n, each task's messages all there;
#  (d) TASK-7 across hosts: the same new-task message (one messageId) sent to both hosts
#      at once, 6 times: both answers name one task, and one task was made of it;
#  (e) SCALE-1 TURN-4 TURN-6 the lease fence across hosts: two more hosts on the same
#      database with a 1000 ms lease and the echo model sleeping 2500 ms per turn (the
#      first two are stopped). A follow-up's turn runs in a worker of host A, which is
#      SIGSTOPped (that pid only, a child of A's lighttpd) past its lease; a GetTask to
#      host B hands the expired turn over (TURN-7) and a worker of host B runs it; host
#      A's worker is SIGCONTed while B's turn runs. A's late result must change nothing:
#      the turn ends done by B's worker on its second attempt, never cut, one reply per
#      user message, no reply twice, the task's events 1..n without a gap.
# Bounded: every request 30 s at most, the load 120 s. TAP output; 77 (skip) when
# lighttpd, curl or jq is missing.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
set -u

: "${TH_SRCDIR:=$(cd "$(dirname "$0")/../.." && pwd)}"
. "$TH_SRCDIR/tests/lib/tap.sh"
. "$TH_SRCDIR/tests/lib/proc.sh"
. "$TH_SRCDIR/tests/lib/a2a.sh"

[ -x "$TH_BIN" ] || skip "no program at $TH_BIN"
require_lighttpd
require_tools curl jq

CLIENTS=20
PER_CLIENT=20
TASKS=10
TOTAL=$((CLIENTS * PER_CLIENT))

scratch th-two
CLIENT_PIDS=
on_exit 'for p in $CLIENT_PIDS; do kill "$p" 2>/dev/null; done'

BASE_A=$(sh "$SERVER" start "$T/a" 2) || bail "host A did not start"
DB=$(th_db_of "$T/a")
BASE_B=$(TH_SERVER_DB=$DB sh "$SERVER" start "$T/b" 2) || bail "host B did not start"
echo "# host A at $BASE_A, host B at $BASE_B, one database: $DB"

# ------------------------------------------------------------------ (a) live across hosts
HTTP_BASE=$BASE_A rpc_call SendMessage "$(tmsg two-1 "" "plan the trip")"
TASK=$(jqb .result.task.id)
has_task || bail "no task from host A: $(head -c 300 "$T/body")"
# The subscriber on B: REST GET …:subscribe, as a browser's EventSource would.
curl -sN --max-time 30 -H 'A2A-Version: 1.0' -H 'X-Participant-Id: alice' \
	"${BASE_B}tasks/$TASK:subscribe" >"$T/sse" 2>/dev/null &
SSE_PID=$!
CLIENT_PIDS="$CLIENT_PIDS $SSE_PID"
# Wait (bounded) for the snapshot before anything else happens on A.
i=0
while ! grep -q '^data:' "$T/sse" 2>/dev/null && [ $i -lt 100 ]; do
	sleep 0.05
	i=$((i + 1))
done
events() { grep '^data:' "$T/sse" | sed 's/^data: *//'; }
check "STORE-6 STREAM-2 the subscriber on host B got the task's snapshot" \
	'[ "$(events | head -n 1 | jq -r .task.id)" = "$TASK" ]'

HTTP_BASE=$BASE_A rpc_call SendMessage "$(tmsg two-2 "$TASK" "and book the hotel")"
answered=$(now_ms)
got=
i=0
while [ $i -lt 200 ]; do
	if events | jq -r '.. | .text? // empty' 2>/dev/null | grep -q "and book the hotel"; then
		got=$(now_ms)
		break
	fi
	sleep 0.01
	i=$((i + 1))
done
[ -n "$got" ] && echo "# host B's subscriber had the follow-up's reply $((got - answered)) ms after host A answered"
check "STORE-6 STREAM-2 a follow-up sent through host A reaches host B's subscriber live" \
	'[ "$STATUS" = 200 ]' '[ -n "$got" ]'

HTTP_BASE=$BASE_A rpc_call SendMessage "$(ctl two-3 "$TASK")"
i=0
while kill -0 "$SSE_PID" 2>/dev/null && [ $i -lt 200 ]; do
	sleep 0.05
	i=$((i + 1))
done
DETAIL=$(events | jq -c '[.task.status.state // .statusUpdate.status.state] | .[0]' 2>&1)
check "STORE-6 CTL-1 the task completed through host A: host B's stream sends COMPLETED and closes" \
	'[ "$STATUS" = 200 ]' '! kill -0 "$SSE_PID" 2>/dev/null' \
	'[ "$(events | tail -n 1 | jq -r ".statusUpdate.status.state // .task.status.state")" = TASK_STATE_COMPLETED ]'
seqs=$(grep '^id:' "$T/sse" | sed 's/^id: *//' | tr '\n' ' ')
DETAIL="ids: $seqs"
check "STORE-6 STREAM-3 host B's stream numbered the events in order, none twice" \
	'[ -n "$seqs" ]' '[ "$(printf "%s\n" $seqs | sort -n | uniq | tr "\n" " ")" = "$seqs" ]'
DETAIL=

# ------------------------------------------------------------------ (b) load over both hosts
post() { # post BASE BODY OUTFILE — prints the status
	curl -s -o "$3" -w '%{http_code}\n' --max-time 30 -H 'Content-Type: application/json' \
		-H 'A2A-Version: 1.0' -H 'X-Participant-Id: alice' --data-binary "$2" "$1"
}
: >"$T/tasks"
for i in $(seq 1 "$TASKS"); do
	[ $((i % 2)) = 0 ] && base=$BASE_A || base=$BASE_B
	post "$base" "$(rpc "$i" SendMessage "$(tmsg "task-$i" "" "task $i")")" "$T/create" >/dev/null
	id=$(jq -r .result.task.id "$T/create" 2>/dev/null)
	[ -n "$id" ] && [ "$id" != null ] || bail "could not create task $i: $(head -c 300 "$T/create")"
	echo "$id" >>"$T/tasks"
done
mapfile -t TASK_IDS <"$T/tasks"

client() { # client N
	local n=$1 k base task
	[ $((n % 2)) = 0 ] && base=$BASE_A || base=$BASE_B
	for k in $(seq 1 "$PER_CLIENT"); do
		task=${TASK_IDS[$(((n + k) % TASKS))]}
		post "$base" "$(rpc "$k" SendMessage "$(tmsg "c$n-m$k" "$task" "client $n message $k")")" \
			"$T/out-$n-$k" >>"$T/status-$n"
	done
}
started=$(now_ms)
for c in $(seq 1 "$CLIENTS"); do # not n: tap.sh counts its checks in n
	client "$c" &
	CLIENT_PIDS="$CLIENT_PIDS $!"
done
deadline=$(($(now_ms) + 120000))
for p in $CLIENT_PIDS; do
	[ "$p" = "$SSE_PID" ] && continue
	while kill -0 "$p" 2>/dev/null && [ "$(now_ms)" -lt "$deadline" ]; do sleep 0.1; done
done
elapsed=$(($(now_ms) - started))
ok200=$(cat "$T"/status-* 2>/dev/null | grep -c '^200$')
errors=$(cat "$T"/out-* 2>/dev/null | jq -s '[.[] | select(.error != null)] | length' 2>/dev/null)
echo "# $TOTAL follow-ups over two hosts in $elapsed ms"
DETAIL="200s: $ok200 of $TOTAL; JSON-RPC errors: $errors"
check "STORE-6 LIM-3 all $TOTAL follow-ups spread over both hosts answered 200 with a result" \
	'[ "$ok200" = "$TOTAL" ]' '[ "$errors" = 0 ]'

wait_idle 300
stored=$(sq "SELECT count(*) FROM messages WHERE message_id LIKE 'c%-m%'")
distinct=$(sq "SELECT count(DISTINCT message_id) FROM messages WHERE message_id LIKE 'c%-m%'")
DETAIL="stored $stored, distinct $distinct"
check "STORE-6 TASK-7 every message sent through either host is stored exactly once" \
	'[ "$stored" = "$TOTAL" ]' '[ "$distinct" = "$TOTAL" ]'

gaps=$(sq "SELECT count(*) FROM (SELECT task_id, count(*) AS n, min(seq) AS lo, max(seq) AS hi, count(DISTINCT seq) AS d FROM events GROUP BY task_id) AS g WHERE lo <> 1 OR hi <> n OR d <> n")
DETAIL="tasks whose events are not 1..n: $gaps"
check "STORE-6 STREAM-3 each task's events are numbered 1..n without a gap or a repeat" \
	'[ "$gaps" = 0 ]'

answers=$(sq "SELECT count(*) FROM turns WHERE state = 'done' AND message_id LIKE 'c%-m%'")
open=$(sq "SELECT count(*) FROM turns WHERE state IN ('queued', 'running')")
pids=$(sq "SELECT DISTINCT worker_pid FROM turns WHERE worker_pid > 0" | sort -n)
DETAIL="done turns $answers, open $open, worker pids in turns $(echo $pids)"
check "STORE-6 TURN-4 every message got its turn once, none left open" \
	'[ "$answers" = "$TOTAL" ]' '[ "$open" = 0 ]'
# On PostgreSQL each host has 2 workers: 3 or more pids means both hosts ran turns. Two
# "hosts" on one SQLite file are one machine: their workers hand every write to the one
# that writes for all (HOST-2).
writes_in_writer_check "the turns of both hosts" "$pids" 3

# ------------------------------------------------------------------ (c) different tasks at once
# On PostgreSQL writes to different tasks do not wait for each other (SCALE-1, per-task
# locks, decision-051); whatever the backend, each task's order holds (STREAM-3).
OWN_CLIENTS=4
OWN_PER=15
: >"$T/own"
for h in A B; do
	[ "$h" = A ] && base=$BASE_A || base=$BASE_B
	for c in $(seq 1 "$OWN_CLIENTS"); do
		post "$base" "$(rpc "$c" SendMessage "$(tmsg "own-$h$c" "" "own task $h$c")")" "$T/create" >/dev/null
		id=$(jq -r .result.task.id "$T/create" 2>/dev/null)
		[ -n "$id" ] && [ "$id" != null ] || bail "could not create task $h$c: $(head -c 300 "$T/create")"
		echo "$h $c $id" >>"$T/own"
	done
done
own_client() { # own_client BASE HOSTCLIENT TASK
	local k
	for k in $(seq 1 "$OWN_PER"); do
		post "$1" "$(rpc "$k" SendMessage "$(tmsg "o$2-m$k" "$3" "own $2 message $k")")" \
			"$T/own-out-$2-$k" >>"$T/own-status-$2"
	done
}
OWN_PIDS=
started=$(now_ms)
while read -r h c id; do
	[ "$h" = A ] && base=$BASE_A || base=$BASE_B
	own_client "$base" "$h$c" "$id" &
	OWN_PIDS="$OWN_PIDS $!"
	CLIENT_PIDS="$CLIENT_PIDS $!"
done <"$T/own"
deadline=$(($(now_ms) + 120000))
for p in $OWN_PIDS; do
	while kill -0 "$p" 2>/dev/null && [ "$(now_ms)" -lt "$deadline" ]; do sleep 0.1; done
done
elapsed=$(($(now_ms) - started))
OWN_TOTAL=$((2 * OWN_CLIENTS * OWN_PER))
ok200=$(cat "$T"/own-status-* 2>/dev/null | grep -c '^200$')
errors=$(cat "$T"/own-out-* 2>/dev/null | jq -s '[.[] | select(.error != null)] | length' 2>/dev/null)
echo "# $OWN_TOTAL follow-ups, each host's clients on tasks of their own, in $elapsed ms"
DETAIL="200s: $ok200 of $OWN_TOTAL; JSON-RPC errors: $errors"
check "SCALE-1 STORE-6 two hosts writing different tasks at once: all $OWN_TOTAL follow-ups answered 200 with a result" \
	'[ "$ok200" = "$OWN_TOTAL" ]' '[ "$errors" = 0 ]'
wait_idle 300
own_ids=$(awk '{ printf "%s'"'"'%s'"'"'", (NR > 1 ? ", " : ""), $3 }' "$T/own")
gaps=$(sq "SELECT count(*) FROM (SELECT task_id, count(*) AS n, min(seq) AS lo, max(seq) AS hi, count(DISTINCT seq) AS d FROM events WHERE task_id IN ($own_ids) GROUP BY task_id) AS g WHERE lo <> 1 OR hi <> n OR d <> n")
with_events=$(sq "SELECT count(DISTINCT task_id) FROM events WHERE task_id IN ($own_ids)")
short=$(sq "SELECT count(*) FROM (SELECT task_id FROM messages WHERE task_id IN ($own_ids) AND message_id LIKE 'o%-m%' GROUP BY task_id HAVING count(*) <> $OWN_PER) AS s")
DETAIL="tasks: $((2 * OWN_CLIENTS)), with events: $with_events, not 1..n: $gaps, missing messages: $short"
check "SCALE-1 STREAM-3 TURN-4 each of the tasks written from both hosts at once has its events numbered 1..n without a gap, and all its messages" \
	'[ "$with_events" = $((2 * OWN_CLIENTS)) ]' '[ "$gaps" = 0 ]' '[ "$short" = 0 ]'

# ------------------------------------------------------------------ (d) one messageId, two hosts
# A client that resends a new task's message to another host (a retry through the load
# balancer) gets the task the first one made, never a second task (TASK-7): on
# PostgreSQL the check for a task started by that message and the new task are one
# transaction under the lock of the sender's messageId (src/store/pg.c).
same_ok=0
for r in $(seq 1 6); do
	post "$BASE_A" "$(rpc 1 SendMessage "$(tmsg "same-$r" "" "same message $r")")" "$T/same-a-$r" >"$T/same-sa-$r" &
	pa=$!
	post "$BASE_B" "$(rpc 1 SendMessage "$(tmsg "same-$r" "" "same message $r")")" "$T/same-b-$r" >"$T/same-sb-$r" &
	pb=$!
	wait "$pa" "$pb"
	a=$(jq -r '.result.task.id // empty' "$T/same-a-$r" 2>/dev/null)
	b=$(jq -r '.result.task.id // empty' "$T/same-b-$r" 2>/dev/null)
	[ -n "$a" ] && [ "$a" = "$b" ] && same_ok=$((same_ok + 1))
done
made=$(sq "SELECT count(DISTINCT task_id) FROM messages WHERE message_id LIKE 'same-%' AND pos = 1")
DETAIL="rounds where both hosts answered the same task: $same_ok of 6; tasks made: $made"
check "TASK-7 SCALE-1 one new-task message sent to both hosts at once makes one task, and both answers name it" \
	'[ "$same_ok" = 6 ]' '[ "$made" = 6 ]'
DETAIL=

# ------------------------------------------------------------------ (e) leases across hosts
# Per-task locks (decision-051) must keep the lease fence (TURN-4, TURN-6) when the turn's
# first worker and its taker are on different hosts: every write of a turn checks its
# lease and attempt in the transaction that writes, under the task's lock, so a worker
# that lost its lease while stopped writes nothing when it wakes. Hosts A2 and B2 run
# with a short lease and a slow model; A and B are stopped so only A2 and B2 serve.
sh "$SERVER" stop "$T/a"
sh "$SERVER" stop "$T/b"
for p in $CLIENT_PIDS; do kill "$p" 2>/dev/null; done
CLIENT_PIDS=
BG=
STOPPED=
on_exit '[ -n "$STOPPED" ] && kill -CONT "$STOPPED" 2>/dev/null'
on_exit 'for p in $BG; do kill "$p" 2>/dev/null; done'
DELAY=2500
LEASE=1000
BASE_A2=$(TH_SERVER_DB=$DB TINY_HARNESS_ECHO_DELAY_MS=$DELAY TINY_HARNESS_TURN_LEASE_MS=$LEASE \
	TINY_HARNESS_TURN_MAX_ATTEMPTS=3 sh "$SERVER" start "$T/a2" 2) || bail "host A2 did not start"
BASE_B2=$(TH_SERVER_DB=$DB TINY_HARNESS_ECHO_DELAY_MS=$DELAY TINY_HARNESS_TURN_LEASE_MS=$LEASE \
	TINY_HARNESS_TURN_MAX_ATTEMPTS=3 sh "$SERVER" start "$T/b2" 2) || bail "host B2 did not start"
LPID_A=$(cat "$T/a2/lighttpd.pid")
LPID_B=$(cat "$T/b2/lighttpd.pid")
echo "# (e) host A2 at $BASE_A2, host B2 at $BASE_B2 (echo delay $DELAY ms, lease $LEASE ms)"
. "$TH_SRCDIR/tests/lib/turns.sh"
BASE=$BASE_A2
LPID=$LPID_A
running_follow_up le "fence first" "fenced follow-up"
stopped=1
if our_worker "$P" && kill -STOP "$P"; then
	STOPPED=$P
	stopped=0
fi
echo "# (e) task $TASK, follow-up le-m2 running in host A2's worker $P; SIGSTOP $P (rc $stopped)"
wait_lease "$TASK" le-m2
expired=$?
# A read on host B after the lease ended hands the turn over to B's worker (TURN-7).
HTTP_BASE=$BASE_B2 http POST / "$(rpc 5 GetTask "{\"id\":\"$TASK\"}")"
get_b=$STATUS
took=1
taker=
i=0
while [ $i -lt 100 ]; do
	row=$(turn_row "$TASK" le-m2)
	if [ "$(field "$row" 1)" = running ] && [ "$(field "$row" 4)" != "$P" ]; then
		taker=$(field "$row" 4)
		took=0
		break
	fi
	sleep 0.05
	i=$((i + 1))
done
took_row=$(turn_row "$TASK" le-m2)
LPID=$LPID_B
b_worker=1
our_worker "$taker" && b_worker=0
[ -n "$STOPPED" ] && kill -CONT "$STOPPED" 2>/dev/null
STOPPED=
echo "# (e) lease expired ($expired); GetTask on B2 $get_b; taken over ($took) by $taker (B2's worker: $b_worker): $took_row; SIGCONT $P"
REQ_DESC="(e) worker $P on A2 stopped ($stopped) past its lease ($expired); GetTask on B2 $get_b; turn after the takeover: $took_row"
check "SCALE-1 TURN-6 TURN-7 (e) set-up: host A2's worker $P ran le-m2's turn and was stopped past its lease; a GetTask on host B2 handed the turn to B2's worker ${taker:-none} (attempt 2)" \
	'[ -n "$P" ] && [ "$P" -gt 0 ]' '[ "$stopped" = 0 ]' '[ "$expired" = 0 ]' '[ "$get_b" = 200 ]' \
	'[ "$took" = 0 ]' '[ "$b_worker" = 0 ]' '[ "$(field "$took_row" 3)" = 2 ]'
settle "$TASK"
settled=$?
wait_gone "$SEND_BG" 100
# Host A2's worker says (on its stderr, lighttpd.out), when it wakes and tries to write,
# that its attempt lost the lease and its result is discarded (src/turn/turn.c).
i=0
while ! grep -q "on task $TASK: attempt 1 no longer holds the lease" "$T/a2/lighttpd.out" 2>/dev/null && [ $i -lt 50 ]; do
	sleep 0.1
	i=$((i + 1))
done
discarded=$(grep -c "on task $TASK: attempt 1 no longer holds the lease" "$T/a2/lighttpd.out" 2>/dev/null)
row=$(turn_row "$TASK" le-m2)
gaps=$(sq "SELECT count(*) FROM (SELECT count(*) AS n, min(seq) AS lo, max(seq) AS hi, count(DISTINCT seq) AS d FROM events WHERE task_id = '$TASK') AS g WHERE lo <> 1 OR hi <> n OR d <> n")
REQ_DESC="(e) turn le-m2 (state|cut|attempts|worker|lease): $row; stalled worker $P on A2, taker $taker on B2; settled ($settled); A2's log lines discarding attempt 1: ${discarded:-0}; event numbering off: $gaps"
check "SCALE-1 TURN-4 TURN-6 (e) the turn host B2 took over ended done in B2's worker $taker; host A2's late worker $P found its lease gone and wrote nothing; the task's events are 1..n without a gap" \
	'[ "$settled" = 0 ]' '[ "${discarded:-0}" -ge 1 ]' '[ "$(field "$row" 1)" = done ]' '[ "$(field "$row" 2)" = 0 ]' \
	'[ "$(field "$row" 4)" = "$taker" ]' '[ "$gaps" = 0 ]' \
	'[ "$(sq "SELECT COUNT(*) FROM turns WHERE task_id = '\''$TASK'\'' AND message_id = '\''le-m2'\'' AND (state = '\''cut'\'' OR CAST(cut AS INTEGER) = 1)")" = 0 ]'
invariants e "$TASK" le-m2 "fenced follow-up"

tap_done
