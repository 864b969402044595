#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Integration test: a refused request never damages another's commit (STORE-7), through
# lighttpd (tests/lib/server.sh) with the default recipe's one FastCGI worker.
#
# The sequence that destroyed every task on the build with the WAL-buffering VFS
# (issue 26): ten tasks are acknowledged; the WAL is reset (a checkpoint by an outside
# sqlite3); a SendMessage of about 1 MiB (16 parts of 60,000 bytes) is refused late, after its new task's rows were
# written (its inline taskPushNotificationConfig names another task: -32602); another
# process (the sqlite3 shell) commits; then ordinary SendMessages must succeed, every
# acknowledged task must be there with its history, nothing of the refused request may
# be, and PRAGMA integrity_check must say ok, from the worker's side and from the file.
# Three rounds, so the refused frames meet the outside commit at several WAL offsets.
# About 10 s. TAP output; 77 (skip) when lighttpd, curl, jq or sqlite3 is missing, or
# when the database is PostgreSQL (nothing of SQLite's WAL there).
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
[ -z "${TH_TEST_PG:-}" ] || skip "SQLite's WAL only (the database is PostgreSQL)"

scratch th-integrity
export TINY_HARNESS_PUSH_ALLOW_PRIVATE=1
BASE=$(sh "$SERVER" start "$T/srv" 1) || bail "lighttpd did not start"
DB=$(th_db_of "$T/srv")
echo "# lighttpd at $BASE (1 worker), database $DB"

ACKED=() # ids of acknowledged tasks
send_new() {
	rpc_call SendMessage "$(tmsg "$1" "" "$2")"
	TASK=$(jqb '.result.task.id')
}

# Sixteen text parts of 60,000 bytes: just under the default limits (1 MiB a body,
# 64 KiB a part), in a file since it is too long for an argument list.
head -c 60000 /dev/zero | tr '\0' 'q' >"$T/part.txt"
big_send() {
	jq -nc --rawfile x "$T/part.txt" --arg m "$1" --arg other "$2" \
		'{jsonrpc: "2.0", id: 7, method: "SendMessage", params: {
		   message: {messageId: $m, role: "ROLE_USER", parts: [range(16) | {text: $x}]},
		   configuration: {taskPushNotificationConfig: {taskId: $other,
		     url: "http://127.0.0.1:9/hook"}}}}' >"$T/big.json"
	curl -s -o "$T/body" -w '%{http_code}' --max-time 30 -H 'Content-Type: application/json' \
		-H 'A2A-Version: 1.0' -H 'X-Participant-Id: alice' --data-binary @"$T/big.json" "$BASE"
}

for i in $(seq 1 10); do
	send_new "before-$i" "task $i before"
	has_task && ACKED+=("$TASK")
done
check "STORE-7 ten tasks acknowledged before the refusals" '[ ${#ACKED[@]} = 10 ]'

for round in 1 2 3; do
	sqlite3 "$DB" 'PRAGMA busy_timeout = 5000; PRAGMA wal_checkpoint(TRUNCATE);' >/dev/null 2>&1
	code=$(big_send "refused-$round" "${ACKED[0]}")
	echo "# refused: $(jqb .error.message | cut -c1-200)"
	check "STORE-7 round $round: the 1 MiB SendMessage naming another task is refused (-32602)" \
		'[ "$code" = 200 ]' '[ "$(jqb .error.code)" = -32602 ]'
	sqlite3 "$DB" "PRAGMA busy_timeout = 5000;
		CREATE TABLE IF NOT EXISTS outside_writer (n INTEGER);
		WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c WHERE n < 300)
		INSERT INTO outside_writer SELECT n FROM c;" >/dev/null 2>&1
	send_new "after-$round" "task after round $round"
	check "STORE-7 round $round: the next SendMessage after an outside commit succeeds" \
		'has_task' '[ "$(jqb .result.task.status.state)" = TASK_STATE_INPUT_REQUIRED ]' &&
		ACKED+=("$TASK")
	rpc_call GetTask "{\"id\":\"${ACKED[0]}\"}"
	check "STORE-7 round $round: a task acknowledged before is read back whole" \
		'[ "$(jqb .result.id)" = "${ACKED[0]}" ]' '[ "$(jqb ".result.history | length")" = 2 ]'
done

missing=0
for id in "${ACKED[@]}"; do
	[ "$(sq "SELECT count(*) FROM messages WHERE task_id = '$id'")" = 2 ] || missing=$((missing + 1))
done
check "STORE-7 every acknowledged task is in the file with its message and reply" \
	'[ $missing = 0 ]' '[ "$(sq "SELECT count(*) FROM tasks")" = ${#ACKED[@]} ]'
check "STORE-7 nothing of the refused requests is stored" \
	'[ "$(sq "SELECT count(*) FROM messages WHERE message_id LIKE '"'refused-%'"'")" = 0 ]' \
	'[ "$(sq "SELECT count(*) FROM outside_writer")" = 900 ]'
check "STORE-7 integrity_check is ok" '[ "$(sq "PRAGMA integrity_check")" = ok ]'
sh "$SERVER" stop "$T/srv" >/dev/null 2>&1
check "STORE-7 integrity_check is ok after the worker closed the file" \
	'[ "$(sq "PRAGMA integrity_check")" = ok ]' '[ "$(sq "SELECT count(*) FROM tasks")" = ${#ACKED[@]} ]'
tap_done
