#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Integration test: a real model program behind lighttpd (TURN-1..TURN-3, CTL-7, CH-4).
#
# lighttpd (tests/lib/server.sh) with 2 workers runs the exec backend
# (TINY_HARNESS_MODEL=exec) with tests/unit/scripted_model.py, a program that calls the
# intrinsic tools a message names ("call [...]") and then quotes their results. Through
# the real web server and both bindings: a plan is made and a step completed, a sub-task
# the model spawns completes by its own turn while the parent only parks, a question
# parks the task awaiting that participant's answer, a refused role change is an error
# result, and several worker processes served the turns.
# TAP output; 77 (skip) when lighttpd, curl, jq, sqlite3 or python3 is missing.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
set -u

: "${TH_SRCDIR:=$(cd "$(dirname "$0")/../.." && pwd)}"
. "$TH_SRCDIR/tests/lib/tap.sh"
. "$TH_SRCDIR/tests/lib/proc.sh"
. "$TH_SRCDIR/tests/lib/a2a.sh"

[ -x "$TH_BIN" ] || skip "no program at $TH_BIN"
require_lighttpd
require_tools curl jq sqlite3 python3

scratch th-models
export TINY_HARNESS_MODEL=exec
export TINY_HARNESS_MODEL_COMMAND="$TH_SRCDIR/tests/unit/scripted_model.py"
BASE=$(sh "$SERVER" start "$T/srv" 2) || bail "lighttpd did not start"
DB=$(th_db_of "$T/srv")
echo "# lighttpd at $BASE (2 workers, model exec $TINY_HARNESS_MODEL_COMMAND)"

# send WHO MID TEXT [TASK] — SendMessage over JSON-RPC; the task in $T/body .result.task
send() { rpc_call SendMessage "$(tmsg "$2" "${4:-}" "$3")" "$1"; }
reply() { jqb "[.result.task.status.message.parts[]?.text // empty] | join(\" \")"; }

send alice m1 "hello"
TASK=$(jqb .result.task.id)
check "TURN-2 the exec backend answers through lighttpd" \
	'[ "$STATUS" = 200 ]' '[ "$(reply)" = "model: hello" ]' \
	'[ "$(jqb ".result.task.metadata[\"$STATUS_KEY\"].sub_state")" = awaiting-next-message ]'

http POST /message:send "$(tmsg m2 "$TASK" 'call [{"name":"create_plan","arguments":{"steps":[{"name":"Write code"},{"name":"Ship","depends_on":["Write code"]}]}}]')"
check "TURN-3 create_plan over HTTP+JSON: the plan is in Task.metadata" \
	'[ "$STATUS" = 200 ]' \
	'[ "$(jqb "[.task.status.message.parts[]?.text // empty] | join(\" \")")" = "done: create_plan ok: plan attached with 2 steps" ]' \
	'[ "$(jqb ".task.metadata[\"$TASK_KEY\"].plan.steps | map(.id) | join(\",\")")" = "write-code,ship" ]'

send alice m3 'call [{"name":"complete_step","arguments":{"step":"write-code","output":"it builds"}}]' "$TASK"
check "TURN-3 complete_step marks the step done with its output" \
	'[ "$(sq "SELECT state || '\''|'\'' || output FROM plan_steps WHERE task_id = '\''$TASK'\'' AND step_id = '\''write-code'\''")" = "done|it builds" ]'

send alice m4 'call [{"name":"spawn_subtask","arguments":{"name":"Docs","goal":"write the docs"}}]' "$TASK"
wait_idle
check "CTL-7 a sub-task the model spawned is completed by its own turn" \
	'[ "$(sq "SELECT state FROM tasks WHERE id = '\''$TASK.1'\''")" = TASK_STATE_COMPLETED ]' \
	'[ "$(sq "SELECT created_by FROM tasks WHERE id = '\''$TASK.1'\''")" = tiny-harness ]'
check "CTL-7 the parent a participant started only parks" \
	'[ "$(sq "SELECT state || '\''|'\'' || sub_state FROM tasks WHERE id = '\''$TASK'\''")" = "TASK_STATE_INPUT_REQUIRED|awaiting-next-message" ]'

rpc_call SendMessage "$(jq -nc --arg t "$TASK" '{message: {messageId: "m5", role: "ROLE_USER", taskId: $t, parts: [{text: "call [{\"name\":\"set_participant_role\",\"arguments\":{\"participant_id\":\"alice\",\"role\":\"admin\"}}]"}]}}')" alice
check "TURN-3 ID-5 the reporter's turn may change a role" \
	'[ "$(reply)" = "done: set_participant_role ok: alice is now admin" ]'

send alice m6 'call [{"name":"ask_participant","arguments":{"participant_id":"nobody","question":"?"}}]' "$TASK"
check "TURN-3 bad arguments come back to the model as an error result, the turn goes on" \
	'[ "$(reply)" = "done: ask_participant error: '"'"'nobody'"'"' is not a participant that can be asked" ]'

send alice m7 'call [{"name":"ask_participant","arguments":{"participant_id":"alice","question":"Ready to ship?"}}]' "$TASK"
check "CH-4 ask_participant ends the turn awaiting that participant's answer" \
	'[ "$(reply)" = "Ready to ship?" ]' \
	'[ "$(jqb ".result.task.metadata[\"$STATUS_KEY\"].participant_id")" = alice ]' \
	'[ "$(sq "SELECT waiting_for FROM waiting_tasks WHERE id = '\''$TASK'\''")" = alice ]'

send alice m8 "yes" "$TASK"
check "CH-5 the answer resumes the task, which parks awaiting the next message" \
	'[ "$(reply)" = "model: yes" ]' \
	'[ "$(jqb ".result.task.metadata[\"$STATUS_KEY\"].sub_state")" = awaiting-next-message ]'

# Turns from two clients at once: on PostgreSQL they land on both workers; on SQLite
# both workers hand their writes to the one that writes for the others (HOST-2).
for i in 1 2 3 4; do
	post_bg "bg$i" alice "$BASE" "$(rpc "$i" SendMessage "$(tmsg "p$i" "" "parallel $i")")"
done
wait
wait_idle
writes_in_writer_check "the model's turns" "$(sq "SELECT DISTINCT worker_pid FROM turns WHERE worker_pid > 0" | sort -n)" 2

tap_done
