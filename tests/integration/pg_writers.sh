#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Integration test (PostgreSQL only, TH_TEST_PG): within one worker process, a write to
# one task does not wait for a write to another (SCALE-1, decision-059). One lighttpd with
# one FastCGI worker process (its request threads), the echo model.
#
#  1. Task A is made and answered.
#  2. A separate psql session takes task A's transaction-level advisory lock (the one
#     every write transaction about A takes first: src/store/pg.c, decision-051) and holds
#     it until this script says.
#  3. A follow-up to A is sent in the background: its write transaction waits for the lock
#     (busy_timeout_ms, which becomes PostgreSQL's lock_timeout, is raised to 60 s so that
#     it waits rather than fails).
#  4. While that request still waits and the lock is still held, a new task B is sent to
#     the same worker process: it must be answered (a task, INPUT_REQUIRED). With one
#     writer connection per process (group commit, as on SQLite) B's write would queue
#     behind A's on that connection and not be answered until the lock went away: this
#     step fails on such a build (curl gives up after 20 s).
#  5. The lock is released: A's follow-up is answered, A's events are 1..n with no gap
#     and its history holds each message once.
# Bounded: every request has a time limit; about 5 s in all. Exit 77 without PostgreSQL.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
set -u

: "${TH_SRCDIR:=$(cd "$(dirname "$0")/../.." && pwd)}"
. "$TH_SRCDIR/tests/lib/tap.sh"
. "$TH_SRCDIR/tests/lib/proc.sh"
. "$TH_SRCDIR/tests/lib/a2a.sh"

[ -n "${TH_TEST_PG:-}" ] || skip "PostgreSQL only (TH_TEST_PG is not set)"
[ -x "$TH_BIN" ] || skip "no program at $TH_BIN"
require_lighttpd
require_tools curl jq psql

scratch th-pgw
BG=
on_exit 'exec 7>&- 2>/dev/null; for p in $BG; do kill "$p" 2>/dev/null; done'

export TINY_HARNESS_BUSY_TIMEOUT_MS=60000
BASE=$(sh "$SERVER" start "$T/srv" 1) || bail "lighttpd did not start"
DB=$(th_db_of "$T/srv")
th_db_is_pg "$DB" || skip "the server's database is not PostgreSQL: $DB"
PG_TASK_LOCK=1950900594

# 1. Task A.
rpc_call SendMessage "$(tmsg pgw-a1 "" "first task")"
TASK=$(jqb .result.task.id)
has_task || bail "no task A: $(head -c 300 "$T/body")"
A=$TASK

# 2. Hold A's lock from psql, fed through a FIFO so that COMMIT comes when we say.
mkfifo "$T/lock.fifo" || bail "mkfifo failed"
psql -X -q -v ON_ERROR_STOP=1 -d "$DB" <"$T/lock.fifo" >"$T/lock.out" 2>&1 &
LOCK_PID=$!
BG="$BG $LOCK_PID"
exec 7>"$T/lock.fifo"
echo "BEGIN; SELECT pg_advisory_xact_lock($PG_TASK_LOCK, hashtext('$A'));" >&7
held=1
for _ in $(seq 1 100); do
	if [ "$(sq "SELECT pg_try_advisory_xact_lock($PG_TASK_LOCK, hashtext('$A'))")" = f ]; then
		held=0
		break
	fi
	sleep 0.05
done
check "SCALE-1 set-up: a psql session holds task A's write lock" '[ "$held" = 0 ]'

# 3. A's follow-up waits for the lock.
curl -s -o "$T/follow" --max-time 60 -H 'Content-Type: application/json' -H 'A2A-Version: 1.0' \
	-H 'X-Participant-Id: alice' --data-binary "$(rpc 90 SendMessage "$(tmsg pgw-a2 "$A" "second message")")" \
	"$BASE" &
FOLLOW_PID=$!
BG="$BG $FOLLOW_PID"
sleep 0.5
waiting=1
alive "$FOLLOW_PID" && waiting=0

# 4. Task B on the same worker process, while A's write waits.
rm -f "$T/body"
http POST / "$(rpc 91 SendMessage "$(tmsg pgw-b1 "" "another task")")" alice
b_status=$STATUS b_time=$TIME
B=$(jqb .result.task.id)
b_state=$(jqb .result.task.status.state)
still_waiting=1
alive "$FOLLOW_PID" && still_waiting=0
still_held=1
[ "$(sq "SELECT pg_try_advisory_xact_lock($PG_TASK_LOCK, hashtext('$A'))")" = f ] && still_held=0
REQ_DESC="B: HTTP $b_status in ${b_time}s, task $B ($b_state); A's follow-up waiting before ($waiting) and after ($still_waiting); lock held after ($still_held): $(head -c 200 "$T/body")"
check "SCALE-1 a new task is answered while another task's write on the same worker waits for its lock" \
	'[ "$waiting" = 0 ]' '[ "$b_status" = 200 ]' '[ -n "$B" ] && [ "$B" != null ] && [ "$B" != "$A" ]' \
	'[ "$b_state" = TASK_STATE_INPUT_REQUIRED ]' '[ "$still_waiting" = 0 ]' '[ "$still_held" = 0 ]'

# 5. Release the lock; A's follow-up completes.
echo "COMMIT;" >&7
exec 7>&-
wait "$FOLLOW_PID"
follow_rc=$?
a_state=$(jq -r '.result.task.status.state // .result.status.state // empty' "$T/follow" 2>/dev/null)
seqs=$(sq "SELECT string_agg(seq::text, ',' ORDER BY seq) FROM events WHERE task_id = '$A'")
nev=$(sq "SELECT count(*) FROM events WHERE task_id = '$A'")
want=$(seq -s, 1 "$nev")
copies=$(sq "SELECT count(*) FROM messages WHERE task_id = '$A' AND message_id = 'pgw-a2'")
REQ_DESC="A's follow-up: curl $follow_rc, state $a_state ($(head -c 200 "$T/follow")); events $seqs; copies of pgw-a2: $copies"
check "SCALE-1 STREAM-3 after the lock is released A's follow-up is answered, its events are 1..n and the message is kept once" \
	'[ "$follow_rc" = 0 ]' '[ "$a_state" = TASK_STATE_INPUT_REQUIRED ]' '[ "$seqs" = "$want" ]' \
	'[ "$copies" = 1 ]'

tap_done
