#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Integration test: fenced turn leases (TURN-6, TURN-4, TURN-7) through lighttpd
# (tests/lib/server.sh) with 2 FastCGI workers, the echo model sleeping
# TINY_HARNESS_ECHO_DELAY_MS (3000) per turn, a 1000 ms lease and 3 attempts.
#
#  a. Stall: the worker running a follow-up's turn is SIGSTOPped (only that pid, after
#     checking it is a child of our lighttpd) until its lease has expired; `tiny-harness
#     recover` takes the turn over; then the worker is SIGCONTed. The worker that lost its
#     lease must change nothing: the taker's turn ends `done` and the task parks.
#  c. Kept answer: on a worker with one request thread, the worker running a follow-up's
#     turn is SIGKILLed; a GetTask before its lease ends and one after, with nothing
#     committed in between: the second must hand the expired turn over (TURN-7).
#  b. Lock wait: ~200 ms before a follow-up's echo delay ends, a separate session holds
#     the write lock for 3 s, past the lease (sqlite3's BEGIN IMMEDIATE; on PostgreSQL,
#     TH_TEST_PG, psql holding the store's advisory write lock). While it is held (after
#     the lease expired) a GetTask is sent and `tiny-harness recover` is started; after
#     the lock is released everything settles.
#
# After each scenario, each its own check:
#  - no task in the database is TASK_STATE_WORKING without a live turn (queued, or
#    running with lease_until_ms in the future);
#  - the follow-up is in the history exactly once;
#  - one agent reply per accepted user message (or the task FAILED with a reason);
#  - no reply text appears twice;
#  - the final state is TASK_STATE_INPUT_REQUIRED (or FAILED with a reason);
#  - the follow-up's turn ended `done` (taken over: by the taker), never `cut` by the
#    worker that lost its lease.
# In b also: the GetTask answered without waiting for a model turn (TURN-7: a read never
# runs one; it answers in less than the echo delay, though it may wait for the lock).
# A stopped worker is always SIGCONTed at exit; only processes of this script are signalled.
# Bounded: each wait is capped (15 s to settle); about 40 s in all.
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

scratch th-lease
BG=
STOPPED=
# A worker this script stopped is resumed first (a stopped process would not act on the
# SIGTERM that stops lighttpd's workers); then the background processes of this script
# (by pid) end.
on_exit '[ -n "$STOPPED" ] && kill -CONT "$STOPPED" 2>/dev/null'
on_exit 'for p in $BG; do kill "$p" 2>/dev/null; done'

DELAY=${TH_LEASE_ECHO_DELAY_MS:-3000}
LEASE=1000
HOLD=3 # seconds the write lock is held in b
export TINY_HARNESS_ECHO_DELAY_MS=$DELAY
export TINY_HARNESS_TURN_LEASE_MS=$LEASE
export TINY_HARNESS_TURN_MAX_ATTEMPTS=3
BASE=$(sh "$SERVER" start "$T/srv" 2) || bail "lighttpd did not start"
DB=$(th_db_of "$T/srv")
LPID=$(cat "$T/srv/lighttpd.pid")
export TINY_HARNESS_DB=$DB
echo "# lighttpd at $BASE (2 workers, echo delay $DELAY ms, lease $LEASE ms, 3 attempts)"

. "$TH_SRCDIR/tests/lib/turns.sh"

# ================================================================== a. stall
running_follow_up la "lease stall first" "stalled follow-up"
stopped=1
if our_worker "$P" && kill -STOP "$P"; then
	STOPPED=$P
	stopped=0
fi
echo "# a: task $TASK, follow-up la-m2 running in worker $P; SIGSTOP $P (rc $stopped)"
sleep 1.5
wait_lease "$TASK" la-m2
expired=$?
"$TH_BIN" recover >"$T/recover.a" 2>&1 &
RPID=$!
BG="$BG $RPID"
# `recover` takes the turn over: the turn is running in its process.
wait_turn "$TASK" la-m2 running "$RPID"
took=$?
took_row=$(turn_row "$TASK" la-m2)
[ -n "$STOPPED" ] && kill -CONT "$STOPPED" 2>/dev/null
STOPPED=
echo "# a: lease expired ($expired), recover $RPID took over ($took: $took_row); SIGCONT $P"
REQ_DESC="a: worker $P (our lighttpd's child: $(our_worker "$P" && echo yes || echo no)) SIGSTOPped past its lease; recover $RPID; turn after the takeover: $took_row"
check "TURN-6 TURN-4 (a) set-up: worker $P ran la-m2's turn, was stopped past its lease, and 'tiny-harness recover' ($RPID) took the turn over (attempts 2)" \
	'[ -n "$P" ] && [ "$P" -gt 0 ]' '[ "$stopped" = 0 ]' '[ "$expired" = 0 ]' '[ "$took" = 0 ]' \
	'[ "$(field "$took_row" 3)" = 2 ]'
wait_gone "$RPID" 150
rrc=$?
rexit=$GONE_RC
settle "$TASK"
settled=$?
wait_gone "$SEND_BG" 100
row=$(turn_row "$TASK" la-m2)
REQ_DESC="a: recover $RPID ended: $([ "$rrc" = 0 ] && echo "exit $rexit" || echo "still running") ($(head -c 200 "$T/recover.a")); turn la-m2: $row"
check "TURN-4 (a) everything settled within 15 s: recover ended and no turn of the task is queued or running" \
	'[ "$rrc" = 0 ]' '[ "$rexit" = 0 ]' '[ "$settled" = 0 ]'
invariants a "$TASK" la-m2 "stalled follow-up"
REQ_DESC="a: turn la-m2 (state|cut|attempts|worker|lease): $row; stalled worker $P, taker $RPID; $(sq "SELECT COUNT(*) FROM turns WHERE task_id = '$TASK' AND message_id = 'la-m2' AND state = 'cut'") cut rows"
check "TURN-6 (a) the turn 'recover' ($RPID) took over ended done and was not cut by the stalled worker $P" \
	'[ "$(field "$row" 1)" = done ]' '[ "$(field "$row" 2)" = 0 ]' '[ "$(field "$row" 4)" = "$RPID" ]' \
	'[ "$(sq "SELECT COUNT(*) FROM turns WHERE task_id = '\''$TASK'\'' AND message_id = '\''la-m2'\'' AND (state = '\''cut'\'' OR CAST(cut AS INTEGER) = 1)")" = 0 ]'

# ================================================================== b. lock wait
# The write lock is held by a separate session: sqlite3's BEGIN IMMEDIATE on SQLite; on
# PostgreSQL psql taking the task's lock, the transaction-level advisory lock every write
# transaction of tiny-harness takes before its first statement about the task (the kind
# 0x74486172 and hashtext of the task id, src/store/pg.c, SCALE-1, decision-051).
PG_TASK_LOCK=1950900594
new_task lb-m1 "lease lock first"
if th_db_is_pg "$DB"; then
	lock_client() { psql -X -q -v ON_ERROR_STOP=1 -d "$DB"; }
	LOCK_SQL="BEGIN; SELECT pg_advisory_xact_lock($PG_TASK_LOCK, hashtext('$TASK'));"
	lock_free() { [ "$(th_db_sql "$DB" "SELECT pg_try_advisory_xact_lock($PG_TASK_LOCK, hashtext('$TASK'))")" = t ]; }
else
	lock_client() { sqlite3 -cmd '.timeout 2000' "$DB"; }
	LOCK_SQL='BEGIN IMMEDIATE;'
	lock_free() { sqlite3 "$DB" 'BEGIN IMMEDIATE; ROLLBACK;' >/dev/null 2>&1; }
fi
bg_post lb "$(rpc 3 SendMessage "$(msg lb-m2 "locked follow-up" "$TASK")")"
SEND_BG=$LAST_BG
wait_turn "$TASK" lb-m2 running
P=$TURN_PID
# The holder of the write lock: a sqlite3 connection reading its statements from a FIFO
# this script writes, so BEGIN and COMMIT come exactly when the script says.
mkfifo "$T/lock.fifo" || bail "mkfifo failed"
lock_client <"$T/lock.fifo" >"$T/lock.out" 2>&1 &
LOCK_PID=$!
BG="$BG $LOCK_PID"
exec 7>"$T/lock.fifo"
# The turn was created and claimed in one transaction: its echo delay ends a little
# after created_ms + DELAY. Take the lock 200 ms before that.
created=$(sq "SELECT created_ms FROM turns WHERE task_id = '$TASK' AND message_id = 'lb-m2' ORDER BY id DESC LIMIT 1")
wait_ms=$((created + DELAY - 200 - $(now_ms)))
[ "$wait_ms" -gt 0 ] && sleep "$(awk -v m="$wait_ms" 'BEGIN { printf "%.3f", m / 1000 }')"
echo "$LOCK_SQL" >&7
begin_ms=$(now_ms)
# Confirm the lock is held: a writer that does not wait is refused.
locked=1
i=0
while [ $i -lt 40 ]; do
	if ! lock_free; then
		locked=0
		break
	fi
	sleep 0.05
	i=$((i + 1))
done
lock_ms=$begin_ms
lock_row=$(turn_row "$TASK" lb-m2)
echo "# b: task $TASK, follow-up lb-m2 running in worker $P; write lock held $((created + DELAY - lock_ms)) ms before its echo delay ends (turn then: $lock_row)"
# While the lock is held: wait for the lease to expire, then a GetTask and `recover`.
wait_lease "$TASK" lb-m2
expired=$?
lease_row=$(turn_row "$TASK" lb-m2)
sleep 0.2
still_locked=1
! lock_free && still_locked=0
get_ms=$(now_ms)
bg_post lb-get "$(rpc 4 GetTask "{\"id\":\"$TASK\"}")"
GET_BG=$LAST_BG
"$TH_BIN" recover >"$T/recover.b" 2>&1 &
RPID=$!
BG="$BG $RPID"
echo "# b: lease expired ($expired) $((get_ms - lock_ms)) ms into the lock; GetTask and recover ($RPID) sent while locked ($still_locked)"
REQ_DESC="b: lock holder $LOCK_PID ($(head -c 200 "$T/lock.out")); turn when the lock was taken: $lock_row; after the lease: $lease_row"
check "TURN-6 (b) set-up: the write lock was held from before the turn's end ($((created + DELAY - lock_ms)) ms) until after its lease expired, when the GetTask and 'recover' started" \
	'[ "$locked" = 0 ]' '[ "$(field "$lock_row" 1)" = running ]' '[ "$(field "$lock_row" 4)" = "$P" ]' \
	'[ "$expired" = 0 ]' '[ "$still_locked" = 0 ]'
# Release the lock HOLD seconds after it was taken.
wait_ms=$((lock_ms + HOLD * 1000 - $(now_ms)))
[ "$wait_ms" -gt 0 ] && sleep "$(awk -v m="$wait_ms" 'BEGIN { printf "%.3f", m / 1000 }')"
echo 'COMMIT;' >&7
exec 7>&-
wait_gone "$LOCK_PID" 50
wait_gone "$RPID" 150
rrc=$?
rexit=$GONE_RC
settle "$TASK"
settled=$?
wait_gone "$GET_BG" 100
wait_gone "$SEND_BG" 100
row=$(turn_row "$TASK" lb-m2)
REQ_DESC="b: recover $RPID ended: $([ "$rrc" = 0 ] && echo "exit $rexit" || echo "still running") ($(head -c 200 "$T/recover.b")); turn lb-m2: $row"
check "TURN-4 (b) everything settled within 15 s of the lock's release: recover ended and no turn of the task is queued or running" \
	'[ "$rrc" = 0 ]' '[ "$rexit" = 0 ]' '[ "$settled" = 0 ]'
invariants b "$TASK" lb-m2 "locked follow-up"
# Taken over means claimed anew: attempt 2 (or later) with a lease of its own. The
# claimant may be recover, or a thread of either worker (a GetTask's hand-over, the
# recovery thread), so also one of worker $P's other threads: the process id alone does
# not tell the stalled thread from them. Its lease does: the stalled thread's lease is the
# one seen under the lock.
REQ_DESC="b: turn lb-m2 (state|cut|attempts|worker|lease): $row; first worker $P (lease $(field "$lock_row" 5)), recover $RPID"
check "TURN-6 (b) the follow-up's turn ended done, not cut (taken over: a new claim with a lease of its own, not worker $P's stalled turn)" \
	'[ "$(field "$row" 1)" = done ]' '[ "$(field "$row" 2)" = 0 ]' \
	'[ "$(field "$row" 3)" = 1 ] || { [ "$(field "$row" 3)" -ge 2 ] && [ "$(field "$row" 5)" != "$(field "$lock_row" 5)" ]; }' \
	'[ "$(sq "SELECT COUNT(*) FROM turns WHERE task_id = '\''$TASK'\'' AND message_id = '\''lb-m2'\'' AND (state = '\''cut'\'' OR CAST(cut AS INTEGER) = 1)")" = 0 ]'
read -r get_status get_time <"$T/bg.lb-get.status" 2>/dev/null
get_state=$(jq -r '.result.status.state // .error.message // empty' "$T/bg.lb-get" 2>/dev/null)
REQ_DESC="b: GetTask sent $((get_ms - lock_ms)) ms into the $HOLD s lock: HTTP ${get_status:-none} after $(ms "${get_time:-0}") ms, state '$get_state'"
check "TURN-7 (b) the GetTask sent while the lock was held answered the task without waiting for a model turn ($(ms "${get_time:-0}") ms < the $DELAY ms echo delay)" \
	'[ "${get_status:-}" = 200 ]' '[ -n "$get_state" ] && [ "${get_state#TASK_STATE_}" != "$get_state" ]' \
	'[ "$(ms "${get_time:-99}")" -lt "$DELAY" ]'

# ================================================================== c. a kept GetTask answer
# GetTask keeps its answer while nothing is committed (decision-029), and with it the
# moment the task's first live turn expires: a GetTask after that moment must still hand
# the expired turn over (TURN-7), though the database did not change. One worker with one
# request thread, so both GetTasks are answered by the same memo. The worker running the
# follow-up's turn is SIGKILLed (lighttpd starts another); the first GetTask comes before
# the lease ends, the second after it; nothing else touches the database in between.
export TINY_HARNESS_WORKER_THREADS=1
BASE=$(sh "$SERVER" start "$T/srv1" 1) || bail "the one-worker lighttpd did not start"
DB=$(th_db_of "$T/srv1")
LPID=$(cat "$T/srv1/lighttpd.pid")
export TINY_HARNESS_DB=$DB
running_follow_up lc "kept answer first" "killed follow-up"
killed=1
our_worker "$P" && kill -KILL "$P" && killed=0
wait_gone "$SEND_BG" 100
http POST / "$(rpc 3 GetTask "{\"id\":\"$TASK\"}")"
first="$STATUS $(jqb .result.status.state) at $(now_ms), lease until $(field "$(turn_row "$TASK" lc-m2)" 5)"
wait_lease "$TASK" lc-m2
expired=$?
http POST / "$(rpc 4 GetTask "{\"id\":\"$TASK\"}")"
second="$STATUS $(jqb .result.status.state)"
settle "$TASK"
settled=$?
row=$(turn_row "$TASK" lc-m2)
echo "# c: worker $P SIGKILLed ($killed); first GetTask $first; lease expired ($expired); second GetTask $second; turn lc-m2: $row"
REQ_DESC="c: first GetTask $first; second GetTask $second; turn lc-m2 (state|cut|attempts|worker|lease): $row"
check "TURN-7 TURN-4 (c) a GetTask after the lease ended hands the expired turn over though nothing was committed since the previous GetTask: it ends done on its second attempt" \
	'[ "$killed" = 0 ]' '[ "${first%% *}" = 200 ]' '[ "$expired" = 0 ]' '[ "${second%% *}" = 200 ]' \
	'[ "$settled" = 0 ]' '[ "$(field "$row" 1)" = done ]' '[ "$(field "$row" 3)" = 2 ]' \
	'[ "$(field "$row" 4)" != "$P" ]'
invariants c "$TASK" lc-m2 "killed follow-up"

tap_done
