#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Integration test: a subscriber alone brings a dead worker's turn back (TURN-7, TURN-4,
# STORE-7) through lighttpd (tests/lib/server.sh) with 1 FastCGI worker, the echo model
# sleeping TINY_HARNESS_ECHO_DELAY_MS (2000) per turn, a 3000 ms lease and 3 attempts.
#
# The worker running a follow-up's turn is SIGKILLed (only that pid, after checking it is
# a child of our lighttpd, which starts another). Before the lease ends, a SubscribeToTask
# stream (REST GET …:subscribe) opens on the new worker and is parked in its stream
# thread. Then nothing else reaches the server: no GetTask, no message, no `tiny-harness
# recover`. The stream thread must notice the watched task's expired turn by itself and
# the worker's recovery thread take it over, so that:
#  - the subscriber receives the follow-up's reply within lease + echo delay + 5 s of the
#    kill (a few of the thread's once-a-second looks; measured: taken over 0.1 to 2 s
#    after the lease ended, the reply 4 to 7 s after the kill);
#  - the turn ends done on its second attempt, in another process than the killed one;
#  - the task ends parked (INPUT_REQUIRED) with exactly one reply per user message, the
#    follow-up once, no reply twice, and no task WORKING without a live turn (TURN-4,
#    TURN-6: tests/lib/turns.sh invariants).
# Bounded: about 15 s. TAP output; 77 (skip) when lighttpd, curl, jq or sqlite3 is missing.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
set -u

: "${TH_SRCDIR:=$(cd "$(dirname "$0")/../.." && pwd)}"
. "$TH_SRCDIR/tests/lib/tap.sh"
. "$TH_SRCDIR/tests/lib/proc.sh"
. "$TH_SRCDIR/tests/lib/a2a.sh"

[ -x "$TH_BIN" ] || skip "no program at $TH_BIN"
require_lighttpd
require_tools curl jq sqlite3

scratch th-stream-recover
BG=
on_exit 'for p in $BG; do kill "$p" 2>/dev/null; done'

DELAY=2000
LEASE=3000
export TINY_HARNESS_ECHO_DELAY_MS=$DELAY
export TINY_HARNESS_TURN_LEASE_MS=$LEASE
export TINY_HARNESS_TURN_MAX_ATTEMPTS=3
BASE=$(sh "$SERVER" start "$T/srv" 1) || bail "lighttpd did not start"
DB=$(th_db_of "$T/srv")
LPID=$(cat "$T/srv/lighttpd.pid")
export TINY_HARNESS_DB=$DB
echo "# lighttpd at $BASE (1 worker, echo delay $DELAY ms, lease $LEASE ms, 3 attempts)"

. "$TH_SRCDIR/tests/lib/turns.sh"

# events — the data lines the subscriber received so far, one JSON object a line.
events() { grep '^data:' "$T/sse" 2>/dev/null | sed 's/^data: *//'; }
# has_reply TEXT — the subscriber received an agent message quoting TEXT.
has_reply() { events | jq -r '.. | .text? // empty' 2>/dev/null | grep -qxF "echo: $1"; }

running_follow_up sr "recover first" "orphaned follow-up"
killed=1
our_worker "$P" && kill -KILL "$P" && killed=0
kill_ms=$(now_ms)
wait_gone "$SEND_BG" 100
lease_until=$(field "$(turn_row "$TASK" sr-m2)" 5)

# The subscriber, on the worker lighttpd started in the killed one's place.
curl -sN --max-time 60 -H 'A2A-Version: 1.0' -H 'X-Participant-Id: alice' \
	"${BASE}tasks/$TASK:subscribe" >"$T/sse" 2>/dev/null &
SSE_PID=$!
BG="$BG $SSE_PID"
i=0
while ! events | head -n 1 | grep -q . && [ $i -lt 100 ]; do
	sleep 0.05
	i=$((i + 1))
done
snap_ms=$(now_ms)
snap_task=$(events | head -n 1 | jq -r '.task.id // empty' 2>/dev/null)
echo "# task $TASK: worker $P SIGKILLed ($killed) at $kill_ms; lease until $lease_until; subscriber's snapshot at $snap_ms"
REQ_DESC="worker $P (our lighttpd's child: $(our_worker "$P" && echo yes || echo no)); lease until $lease_until; snapshot at $snap_ms for '$snap_task'"
check "TURN-7 (set-up) the worker running the follow-up's turn was SIGKILLed and a subscriber got the task's snapshot before the turn's lease ended" \
	'[ "$killed" = 0 ]' '[ "$snap_task" = "$TASK" ]' '[ "$snap_ms" -lt "${lease_until:-0}" ]'

# From here on nothing reaches the server: only the database is read.
bound=$((LEASE + DELAY + 5000))
got=
taken=
while [ "$(($(now_ms) - kill_ms))" -lt "$bound" ]; do
	if [ -z "$taken" ] && [ "$(field "$(turn_row "$TASK" sr-m2)" 3)" = 2 ]; then
		taken=$(now_ms)
	fi
	if has_reply "orphaned follow-up"; then
		got=$(now_ms)
		break
	fi
	sleep 0.05
done
row=$(turn_row "$TASK" sr-m2)
took=$([ -n "$got" ] && echo "$((got - kill_ms)) ms" || echo "nothing in $bound ms")
echo "# taken over $([ -n "$taken" ] && echo "$((taken - lease_until)) ms after the lease ended" || echo never); the subscriber had the reply $took after the kill; turn sr-m2 (state|cut|attempts|worker|lease): $row"
REQ_DESC="turn sr-m2: $row; subscriber $(alive "$SSE_PID" && echo open || echo closed); events: $(events | jq -c '[.statusUpdate.status.state // .task.status.state // empty][0]' 2>/dev/null | th_join ' ')"
check "TURN-7 TURN-4 with no request after the subscribe, the watched task's expired turn was taken over and its reply reached the subscriber within lease + echo delay + 5 s ($took)" \
	'[ -n "$got" ]'
settle "$TASK"
settled=$?
row=$(turn_row "$TASK" sr-m2)
REQ_DESC="turn sr-m2 (state|cut|attempts|worker|lease): $row; killed worker $P"
check "TURN-4 TURN-6 the follow-up's turn ended done on its second attempt, taken over by another process than the killed $P" \
	'[ "$settled" = 0 ]' '[ "$(field "$row" 1)" = done ]' '[ "$(field "$row" 2)" = 0 ]' \
	'[ "$(field "$row" 3)" = 2 ]' '[ "$(field "$row" 4)" != "$P" ]'
state=$(events | tail -n 1 | jq -r '.statusUpdate.status.state // .task.status.state // empty' 2>/dev/null)
REQ_DESC="the subscriber's last event: $(events | tail -n 1 | head -c 300)"
check "TURN-7 STREAM-2 the subscriber's stream stays open and its last event parks the task (TASK_STATE_INPUT_REQUIRED)" \
	'alive "$SSE_PID"' '[ "$state" = TASK_STATE_INPUT_REQUIRED ]'
invariants sr "$TASK" sr-m2 "orphaned follow-up"
sq 'PRAGMA integrity_check' >"$T/integrity"
REQ_DESC="integrity_check: $(head -c 200 "$T/integrity")"
th_db_is_pg "$DB" || check "STORE-7 the database is intact after the kill and the takeover (integrity_check ok)" \
	'[ "$(cat "$T/integrity")" = ok ]'

tap_done
