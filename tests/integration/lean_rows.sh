#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Integration test: lean rows read as whole ones (STORE-10, decision-061), through
# lighttpd (tests/lib/server.sh) with one FastCGI worker.
#
# A task snapshot event is stored with its task extension without the defaults (under
# "$task"), a history message without its leading messageId and role (the row's
# columns), an event's status timestamp as the milliseconds it is older than the row's
# created_ms and a status update's extension under "$status" (decision-068), a task
# snapshot's name, goal and participants as "$first" (taken from its first history
# message), a user message's stamped metadata.participant_id as "$pid" and a status
# extension of only a sub-state as that string (decision-075). A client must not see the difference: two tasks are made (one waiting for
# its next message after a follow-up, one completed by its reporter), and GetTask,
# ListTasks, REST GetTask, a SubscribeToTask replayed from the start (Last-Event-ID 0)
# and `tiny-harness tasks events` are recorded. Then the rows are rewritten with sqlite3
# into the form every build before decision-061 wrote, and each answer must be the same,
# byte for byte. About 10 s. TAP output; 77 (skip) when lighttpd, curl, jq or sqlite3 is
# missing, or when the database is PostgreSQL (the rewrite is SQLite's; check_store runs
# the readers on PostgreSQL).
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
[ -z "${TH_TEST_PG:-}" ] || skip "the old rows are written with sqlite3 (the database is PostgreSQL)"

scratch th-lean
BASE=$(sh "$SERVER" start "$T/srv" 1) || bail "lighttpd did not start"
DB=$(th_db_of "$T/srv")
echo "# lighttpd at $BASE (1 worker), database $DB"

rpc_call SendMessage "$(tmsg lean-1 "" "first words")"
T1=$(jqb '.result.task.id')
rpc_call SendMessage "$(tmsg lean-2 "$T1" "second words")"
rpc_call SendMessage "$(tmsg lean-3 "" "to be completed")"
T2=$(jqb '.result.task.id')
rpc_call SendMessage "$(ctl lean-4 "$T2")"
wait_idle
check "STORE-10 two tasks, one waiting and one completed" \
	'[ "$(sq "SELECT state FROM tasks WHERE id = '"'$T1'"'")" = TASK_STATE_INPUT_REQUIRED ]' \
	'[ "$(sq "SELECT state FROM tasks WHERE id = '"'$T2'"'")" = TASK_STATE_COMPLETED ]'

# What a client receives, into $1/: the same requests, the same rpc ids, each round.
record() {
	local dir=$1 id
	mkdir -p "$dir"
	RPCID=100
	for id in "$T1" "$T2"; do
		rpc_call GetTask "{\"id\":\"$id\"}"
		cp "$T/body" "$dir/get-$id"
		rpc_call GetTask "{\"id\":\"$id\",\"historyLength\":1}"
		cp "$T/body" "$dir/get1-$id"
		http GET "/tasks/$id"
		cp "$T/body" "$dir/rest-$id"
		TINY_HARNESS_DB=$DB "$TH_BIN" tasks events "$id" >"$dir/events-$id" 2>&1
	done
	rpc_call ListTasks '{}'
	cp "$T/body" "$dir/list"
	# The stream stays open while the task waits: what came in 3 s, comments left out.
	curl -s -N --max-time 3 -H 'A2A-Version: 1.0' -H 'X-Participant-Id: alice' \
		-H 'Last-Event-ID: 0' "${BASE}tasks/$T1:subscribe" | grep -v '^:' >"$dir/replay"
}
record "$T/new"
check "STORE-10 the replay has the snapshot and both status updates" \
	'grep -c "^data:" "$T/new/replay" | grep -qx 3' \
	'grep -q "\"display_name\":\"\"" "$T/new/replay"' \
	'grep -q "\"acceptance_criteria\":\[\]" "$T/new/events-$T1"'

# The rows as written now: lean.
LEAN_MSG="SELECT count(*) FROM messages WHERE json NOT LIKE '{\"messageId\":%'"
LEAN_EV="SELECT count(*) FROM events WHERE json LIKE '%\"\$task\":%'"
check "STORE-10 every history message is stored without its messageId and role" \
	'[ "$(sq "SELECT count(*) FROM messages")" -ge 6 ]' \
	'[ "$(sq "$LEAN_MSG")" = "$(sq "SELECT count(*) FROM messages")" ]'
check "STORE-10 each task snapshot keeps its task extension without the defaults" \
	'[ "$(sq "$LEAN_EV")" = 2 ]' \
	'[ "$(sq "SELECT count(*) FROM events WHERE json LIKE '"'%display_name%'"'")" = 0 ]'

TS_D="coalesce(json_extract(json, '\$.task.status.timestamp'), json_extract(json, '\$.statusUpdate.status.timestamp'))"
LEAN_TS="SELECT count(*) FROM event_rows WHERE typeof($TS_D) = 'integer'"
STATUS_EV="SELECT count(*) FROM event_rows WHERE kind IN ('task', 'status')"
LEAN_ST="SELECT count(*) FROM event_rows WHERE json LIKE '%\"\$status\":%'"
OLD_ST="SELECT count(*) FROM event_rows WHERE json LIKE '%\"io.github.madarauchiha-314.tiny-harness/status\":%'"
check "STORE-10 each status update keeps its status extension under \$status" \
	'[ "$(sq "$LEAN_ST")" -ge 2 ]' '[ "$(sq "$OLD_ST")" = 0 ]'
check "STORE-10 every event's status timestamp is stored as milliseconds before its row" \
	'[ "$(sq "$STATUS_EV")" -ge 5 ]' \
	'[ "$(sq "$LEAN_TS")" = "$(sq "$STATUS_EV")" ]'

LEAN_FIRST="SELECT count(*) FROM event_rows WHERE json LIKE '%\"\$task\":{\"\$first\":\"gnp\"}%'"
LEAN_PID="SELECT count(*) FROM message_rows WHERE json LIKE '%,\"\$pid\":\"%'"
LEAN_SUB="SELECT count(*) FROM event_rows WHERE json_type(json, '\$.statusUpdate.metadata.\"\$status\"') = 'text'"
STAMPED="SELECT count(*) FROM message_rows WHERE json LIKE '%\"participant_id\"%'"
GOAL_EV="SELECT count(*) FROM event_rows WHERE json LIKE '%\"goal\":%'"
check "STORE-10 each snapshot takes its name, goal and participants from its first message" \
	'[ "$(sq "$LEAN_FIRST")" = 2 ]' '[ "$(sq "$GOAL_EV")" = 0 ]'
check "STORE-10 every stamped participant id is kept as \$pid" \
	'[ "$(sq "$LEAN_PID")" -ge 3 ]' '[ "$(sq "$STAMPED")" = 0 ]'
check "STORE-10 a status extension of only a sub-state is kept as that string" \
	'[ "$(sq "$LEAN_SUB")" -ge 2 ]'

# The rows as decision-068 wrote them: the snapshot's three members and the stamped
# metadata written out again (decision-075).
sqlite3 "$DB" >"$T/rewrite075.out" 2>&1 <<'SQL'
.timeout 5000
UPDATE event_rows SET json = replace(json, '"$task":{"$first":"gnp"}', '"$task":{"name":' || g
	|| ',"goal":' || g || ',"participants":[{"id":' || json_quote(s)
	|| ',"kind":"human","role":"reporter"},{"id":"tiny-harness","kind":"agent","role":"assignee"}]}')
	FROM (SELECT m.task_num AS n, m.sender AS s, json_quote((SELECT group_concat(
		json_extract(p.value, '$.text'), char(10)) FROM json_each(m.json, '$.parts') p
		WHERE json_type(p.value, '$.text') = 'text')) AS g FROM message_rows m WHERE m.pos = 1)
	WHERE event_rows.task_num = n AND event_rows.seq = 1;
UPDATE event_rows SET json = replace(json, '"$status":' || v, '"$status":{"sub_state":' || v || '}')
	FROM (SELECT rowid AS r, json_quote(json_extract(json, '$.statusUpdate.metadata."$status"')) AS v
		FROM event_rows WHERE json_type(json, '$.statusUpdate.metadata."$status"') = 'text')
	WHERE event_rows.rowid = r;
UPDATE message_rows SET json = substr(json, 1, instr(json, ',"$pid":') - 1)
	|| ',"metadata":{"participant_id":' || json_quote(json_extract(json, '$."$pid"')) || '}}'
	WHERE json LIKE '%,"$pid":"%';
SQL
check "STORE-10 the rows are rewritten as decision-068 wrote them" \
	'[ ! -s "$T/rewrite075.out" ]' \
	'[ "$(sq "$LEAN_FIRST")" = 0 ]' '[ "$(sq "$LEAN_PID")" = 0 ]' '[ "$(sq "$STAMPED")" -ge 3 ]' \
	'[ "$(sq "$LEAN_SUB")" = 0 ]'

# The rows as builds before decision-061 wrote them.
OLD_EV="SELECT count(*) FROM events WHERE json LIKE '%\"plan\":null}}}}'"
sqlite3 "$DB" >"$T/rewrite.out" 2>&1 <<'SQL'
.timeout 5000
UPDATE message_rows SET json = '{"messageId":' || json_quote(message_id) || ',"role":'
	|| json_quote(role) || ',' || substr(json, 2)
	WHERE json NOT LIKE '{"messageId":%';
UPDATE event_rows SET json = replace(replace(replace(replace(replace(json,
	'"$task":{', '"io.github.madarauchiha-314.tiny-harness/task":{'),
	',"participants":', ',"type":null,"description":"","acceptance_criteria":[],"participants":'),
	'"role":"reporter"}', '"role":"reporter","display_name":""}'),
	'"role":"assignee"}', '"role":"assignee","display_name":""}'),
	'}]}}}}', '}],"parent_tasks":[],"sub_tasks":[],"plan":null}}}}')
	WHERE json LIKE '%"$task":%';
UPDATE event_rows SET json = replace(json, '"timestamp":' || d || '}', '"timestamp":"'
	|| strftime('%Y-%m-%dT%H:%M:%S', (created_ms - d) / 1000, 'unixepoch')
	|| printf('.%03dZ', (created_ms - d) % 1000) || '"}')
	FROM (SELECT rowid AS r, coalesce(json_extract(json, '$.task.status.timestamp'),
		json_extract(json, '$.statusUpdate.status.timestamp')) AS d FROM event_rows)
	WHERE event_rows.rowid = r AND typeof(d) = 'integer';
UPDATE event_rows SET json = replace(json, '"$status":', '"io.github.madarauchiha-314.tiny-harness/status":')
	WHERE json LIKE '%"$status":%';
SQL
check "STORE-10 the rows are rewritten in the old form" \
	'[ ! -s "$T/rewrite.out" ]' \
	'[ "$(sq "$LEAN_MSG")" = 0 ]' '[ "$(sq "$LEAN_EV")" = 0 ]' '[ "$(sq "$LEAN_TS")" = 0 ]' \
	'[ "$(sq "$LEAN_ST")" = 0 ]' '[ "$(sq "$OLD_ST")" -ge 2 ]' \
	'[ "$(sq "$OLD_EV")" = 2 ]'

record "$T/old"
for f in $(cd "$T/new" && ls); do
	check "STORE-10 a client gets the same $f from old rows as from lean ones" \
		'cmp -s "$T/new/$f" "$T/old/$f"' || diff "$T/new/$f" "$T/old/$f" | head -n 6 | sed 's/^/# /'
done

sh "$SERVER" stop "$T/srv"
tap_done
