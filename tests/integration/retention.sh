#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Integration test: retention (RET-1..RET-5, decision-071) through lighttpd
# (tests/lib/server.sh) with one FastCGI worker, then `tiny-harness purge` with no
# arguments, as its timer runs it.
#
# Tasks are made through the server: 8 that end (each with a message of 60 kB, so that
# the database has something to give back), one that ends recently, one left waiting,
# one stuck, one waiting but spoken to recently, and one whose push config points at a
# closed loopback port (push_max_attempts = 1: its first delivery gives up). Then the
# clock is moved for some of them with sqlite3 (psql) instead of waiting: the ended ones
# 40 days back, the stuck one 100 days. purge (retain_ended = 30d by default,
# retain_stuck = 90d here) must take the old ended tasks with every row of theirs and
# the stuck one, leave everything else whole, list the given-up delivery in
# push_dead_letters before and after, and print the database and WAL sizes, smaller
# after (SQLite). A bad retain_* value stops it naming the key. 27 requests and about 60
# short processes (25 s on this 2-CPU VM at load average 18). TAP output;
# 77 (skip) when lighttpd, curl, jq or sqlite3 is missing.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
set -u

: "${TH_SRCDIR:=$(cd "$(dirname "$0")/../.." && pwd)}"
TAP_BODY_WIDTH=300
. "$TH_SRCDIR/tests/lib/tap.sh"
. "$TH_SRCDIR/tests/lib/proc.sh"
. "$TH_SRCDIR/tests/lib/a2a.sh"

[ -x "$TH_BIN" ] || skip "no program at $TH_BIN"
require_lighttpd
require_tools curl jq sqlite3

scratch th-retention
# A port nothing listens on: every POST to it is refused at once.
DEADPORT=$(random_port)
while port_busy "$DEADPORT"; do DEADPORT=$(random_port); done
export TINY_HARNESS_PUSH_ALLOW_PRIVATE=1
export TINY_HARNESS_PUSH_MAX_ATTEMPTS=1
BASE=$(sh "$SERVER" start "$T/srv" 1) || bail "lighttpd did not start"
DB=$(th_db_of "$T/srv")
echo "# lighttpd at $BASE (1 worker), database $DB"
PG=
th_db_is_pg "$DB" && PG=1

# new_task MID TEXT — a task made by SendMessage; its id in $TASK
new_task() {
	rpc_call SendMessage "$(tmsg "$1" "" "$2")"
	TASK=$(jqb .result.task.id)
	has_task || bail "SendMessage $1 made no task: $(head -c 300 "$T/body")"
}
# complete TASK MID — the reporter completes it with the control envelope
complete() { rpc_call SendMessage "$(ctl "$2" "$1")"; }

# The bulk without jq (a few hundred ms a call on a busy machine): printf's JSON, the id
# cut out with sed.
BIG=$(head -c 60000 /dev/zero | tr '\0' 'x')
OLD=()
for i in $(seq 1 8); do
	http POST / "$(rpc "$i" SendMessage "$(msg "old-$i" "$i $BIG")")"
	TASK=$(sed -n 's/^{"jsonrpc":"2.0","id":[0-9]*,"result":{"task":{"id":"\([^"]*\)".*/\1/p' "$T/body")
	has_task || bail "SendMessage old-$i made no task: $(head -c 300 "$T/body")"
	http POST / "$(rpc "$i" SendMessage "$(printf '{"message":{"messageId":"old-%s-done","role":"ROLE_USER","taskId":"%s","parts":[{"data":{"kind":"control","action":"complete"},"mediaType":"%s"}]}}' "$i" "$TASK" "$EVENT_MT")")"
	OLD+=("$TASK")
done
new_task recent "finished yesterday"
RECENT=$TASK
complete "$RECENT" recent-done
new_task waiting "still waiting for alice"
WAITING=$TASK
new_task stuck "nobody answers this one"
STUCK=$TASK
new_task spoken "old, but spoken to today"
SPOKEN=$TASK
new_task hooked "a webhook that is gone"
HOOKED=$TASK
rpc_call CreateTaskPushNotificationConfig "$(jq -nc --arg t "$HOOKED" \
	--arg u "http://127.0.0.1:$DEADPORT/gone" '{taskId: $t, id: "gone", url: $u}')"
[ "$(jqb .result.id)" = gone ] || bail "push config refused: $(head -c 300 "$T/body")"
rpc_call SendMessage "$(tmsg hooked-2 "$HOOKED" "this event is pushed, and fails")"
wait_idle
# The worker sends after the response; the delivery gives up on its first refusal.
i=0
while [ "$(sq "SELECT count(*) FROM push_outbox WHERE state = 'dead'")" = 0 ] && [ $i -lt 100 ]; do
	sleep 0.1
	i=$((i + 1))
done

in_list() { printf "'%s'," "$@" | sed 's/,$//'; }
OLDS=$(in_list "${OLD[@]}")
# The rows of the tasks $1 (a quoted list) in every table that refers to a task: one sum.
child_rows() {
	local t q="SELECT (SELECT count(*) FROM idempotency_keys WHERE task_num IN (SELECT num FROM tasks WHERE id IN ($1)))"
	for t in participants messages events artifacts turns channels channel_members \
		channel_messages help_requests plan_steps a2ui_registry push_configs push_outbox; do
		q="$q + (SELECT count(*) FROM $t WHERE task_id IN ($1))"
	done
	sq "$q"
}
# Every row of the tasks that must stay, as one fingerprint.
KEPT=$(in_list "$RECENT" "$WAITING" "$SPOKEN" "$HOOKED")
kept_rows() {
	sq "SELECT (SELECT count(*) FROM tasks WHERE id IN ($KEPT)), (SELECT count(*) FROM events WHERE task_id IN ($KEPT)), (SELECT count(*) FROM messages WHERE task_id IN ($KEPT)), (SELECT count(*) FROM participants WHERE task_id IN ($KEPT)), (SELECT count(*) FROM push_outbox WHERE task_id IN ($KEPT))"
}
check "RET-1 the old tasks ended, each with messages, events, participants and a turn" \
	'[ "$(sq "SELECT count(*) FROM tasks WHERE id IN ($OLDS) AND state = '"'TASK_STATE_COMPLETED'"'")" = 8 ]' \
	'[ "$(sq "SELECT count(DISTINCT task_id) FROM turns WHERE task_id IN ($OLDS)")" = 8 ]' \
	'[ "$(child_rows "$OLDS")" -ge $((8 * 6)) ]'
check "RET-4 the delivery to the closed port gave up after one attempt" \
	'[ "$(sq "SELECT state || '"' '"' || CAST(attempts AS TEXT) FROM push_outbox WHERE task_id = '"'$HOOKED'"'" | sort -u)" = "dead 1" ]'
REQ_DESC="SELECT * FROM push_dead_letters"
dead_letters() { sq "SELECT task_id, config_id, participant_id, url, attempts FROM push_dead_letters"; }
DEAD_ROW="$HOOKED|gone|alice|http://127.0.0.1:$DEADPORT/gone|1"
check "RET-4 push_dead_letters lists it: task, config, owner, webhook, attempts, the error" \
	'dead_letters | grep -qxF "$DEAD_ROW"' \
	'[ -n "$(sq "SELECT last_error FROM push_dead_letters")" ]' \
	'sq "SELECT died_at FROM push_dead_letters" | grep -Eq "^20[0-9]{2}-[0-9]{2}-[0-9]{2}T[0-9:]{8}Z$"'
if [ -z "$PG" ]; then
	check "RET-4 the view is there for an operator's sqlite3 -readonly" \
		'sqlite3 -readonly "$DB" "SELECT count(*) FROM push_dead_letters" | grep -qx 1'
fi

# The clock, moved: 40 days for the ended tasks, 100 for the stuck one, 100 for the
# one spoken to except its newest message, 8 days for the dead letter.
DAY=86400000
sq "UPDATE tasks SET updated_ms = updated_ms - $((40 * DAY)) WHERE id IN ($OLDS)" >/dev/null
sq "UPDATE tasks SET updated_ms = updated_ms - $((40 * DAY)) WHERE id = '$WAITING'" >/dev/null
for t in "$STUCK" "$SPOKEN"; do
	sq "UPDATE tasks SET updated_ms = updated_ms - $((100 * DAY)) WHERE id = '$t'" >/dev/null
	sq "UPDATE event_rows SET created_ms = created_ms - $((100 * DAY)) WHERE task_num = (SELECT num FROM tasks WHERE id = '$t')" >/dev/null
	sq "UPDATE message_rows SET created_ms = created_ms - $((100 * DAY)) WHERE task_num = (SELECT num FROM tasks WHERE id = '$t')" >/dev/null
done
rpc_call SendMessage "$(tmsg spoken-2 "$SPOKEN" "today's words")"
wait_idle
sq "UPDATE tasks SET updated_ms = updated_ms - $((100 * DAY)) WHERE id = '$SPOKEN'" >/dev/null
sq "UPDATE event_rows SET created_ms = created_ms - $((100 * DAY)) WHERE task_num = (SELECT num FROM tasks WHERE id = '$SPOKEN')" >/dev/null
CUT=$(($(now_ms) - 35 * DAY))
check "RET-1 RET-2 the clock moved back for the old, waiting, stuck and spoken-to tasks" \
	'[ "$(sq "SELECT count(*) FROM tasks WHERE updated_ms < $CUT")" = 11 ]'
KEPT_BEFORE=$(kept_rows)
TASKS_BEFORE=$(sq "SELECT count(*) FROM tasks")

# A bad value stops purge before it touches anything, naming the key and the value.
TINY_HARNESS_DB=$DB TINY_HARNESS_RETAIN_STUCK=90x "$TH_BIN" purge >"$T/bad.out" 2>&1
RC=$?
REQ_DESC="purge with TINY_HARNESS_RETAIN_STUCK=90x: $(cat "$T/bad.out")"
check "RET-5 a bad retain_stuck stops purge naming the key and the value" \
	'[ "$RC" != 0 ]' 'grep -q "TINY_HARNESS_RETAIN_STUCK" "$T/bad.out"' 'grep -q "90x" "$T/bad.out"' \
	'[ "$(sq "SELECT count(*) FROM tasks")" = "$TASKS_BEFORE" ]'

TINY_HARNESS_DB=$DB TINY_HARNESS_RETAIN_STUCK=90d "$TH_BIN" purge >"$T/purge.out" 2>&1
RC=$?
sed 's/^/# /' "$T/purge.out"
REQ_DESC="tiny-harness purge: $(tr '\n' ';' <"$T/purge.out")"
check "RET-5 purge with no arguments sweeps by retain_ended (30d) and retain_stuck" \
	'[ "$RC" = 0 ]' 'grep -qx "purged 8 ended tasks (unchanged for 30d)" "$T/purge.out"' \
	'grep -qx "purged 1 stuck task (idle for 90d)" "$T/purge.out"'
check "RET-1 the old ended tasks are gone with every row of theirs" \
	'[ "$(sq "SELECT count(*) FROM tasks WHERE id IN ($OLDS)")" = 0 ]' \
	'[ "$(child_rows "$OLDS")" = 0 ]'
check "RET-2 the stuck task is gone with its rows" \
	'[ "$(sq "SELECT count(*) FROM tasks WHERE id = '"'$STUCK'"'")" = 0 ]' \
	'[ "$(child_rows "'"'$STUCK'"'")" = 0 ]'
check "RET-1 RET-2 the recent ended task, the waiting one, the one spoken to and the hooked one are whole" \
	'[ "$(kept_rows)" = "$KEPT_BEFORE" ]' \
	'[ "$(sq "SELECT count(*) FROM tasks")" = $((TASKS_BEFORE - 9)) ]'
check "RET-4 the dead letter is still listed (retain_dead_letters = 7d)" \
	'dead_letters | grep -qxF "$DEAD_ROW"'
if [ -z "$PG" ]; then
	# database A -> B bytes, WAL C -> D bytes
	read -r DB0 DB1 WAL0 WAL1 <<EOF
$(sed -n 's/^database \([0-9]*\) -> \([0-9]*\) bytes, WAL \([0-9]*\) -> \([0-9]*\) bytes.*/\1 \2 \3 \4/p' "$T/purge.out")
EOF
	echo "# database $DB0 -> $DB1 bytes, WAL $WAL0 -> $WAL1 bytes; on disk now $(stat -c %s "$DB") and $(stat -c %s "$DB-wal" 2>/dev/null || echo 0)"
	check "RET-3 the database and its WAL shrink: the file gives the pages back, the WAL is cut to 0" \
		'[ -n "${DB1:-}" ]' '[ $((DB1 + WAL1)) -lt $(((DB0 + WAL0) / 2)) ]' '[ "$WAL1" = 0 ]' \
		'[ "$(sqlite3 "$DB" "PRAGMA freelist_count")" = 0 ]' \
		'[ "$(sqlite3 "$DB" "PRAGMA auto_vacuum")" = 2 ]' \
		'! grep -q "auto_vacuum is off" "$T/purge.out"'
fi

# The server goes on: the waiting task takes its next message.
rpc_call SendMessage "$(tmsg waiting-2 "$WAITING" "here I am")"
check "RET-1 the server serves the tasks that stayed" '[ "$(jqb .result.task.id)" = "$WAITING" ]'

# A dead letter older than retain_dead_letters goes at the next purge.
sq "UPDATE push_outbox SET updated_ms = updated_ms - $((8 * DAY)) WHERE state = 'dead'" >/dev/null
TINY_HARNESS_DB=$DB "$TH_BIN" purge >"$T/purge2.out" 2>&1
RC=$?
REQ_DESC="tiny-harness purge: $(tr '\n' ';' <"$T/purge2.out")"
check "RET-4 a dead letter older than retain_dead_letters is purged; its task stays" \
	'[ "$RC" = 0 ]' 'grep -qx "purged 1 push delivery" "$T/purge2.out"' \
	'[ -z "$(dead_letters)" ]' '[ "$(sq "SELECT count(*) FROM tasks WHERE id = '"'$HOOKED'"'")" = 1 ]'

sh "$SERVER" stop "$T/srv"
tap_done
