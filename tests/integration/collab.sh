#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Integration test: collaboration through the real lighttpd (conf/lighttpd.conf) with two
# FastCGI workers on loopback. One conversation between alice (reporter), bob (admin) and
# wendy (watcher), created by a task envelope: a sub-task tree two levels deep (/subtask on
# the task and on its child, and a child made by a task envelope with parent_tasks), the
# task channel and a side channel between alice and bob, /ask with the help request
# answered by bob (after refused replies), slash commands, and completion refused while
# sub-tasks are open, then accepted. Both bindings (JSON-RPC and HTTP+JSON) are used.
# Every refusal checks the error code, a key word of its message and that nothing was
# stored (row counts in the database before and after, tests/lib/db.sh). TAP output; 77
# (skip) when lighttpd, curl, jq or sqlite3 is missing. Set TH_KEEP=1 to keep the state
# directory.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
set -u

: "${TH_SRCDIR:=$(cd "$(dirname "$0")/../.." && pwd)}"
TAP_BODY_WIDTH=1500
HTTP_DESC_BYTES=400
. "$TH_SRCDIR/tests/lib/tap.sh"
. "$TH_SRCDIR/tests/lib/proc.sh"
. "$TH_SRCDIR/tests/lib/a2a.sh"

[ -x "$TH_BIN" ] || skip "no program at $TH_BIN"
require_lighttpd
require_tools curl jq sqlite3

scratch th-collab

# A file command for CMD-1/CMD-4, in a commands directory of our own.
mkdir -p "$T/commands"
cat >"$T/commands/recap.md" <<'EOF'
---
description: Recap the discussion for a newcomer
argument-hint: TOPIC
---
Write a short recap about $ARGUMENTS for someone who just joined.
EOF
export TINY_HARNESS_COMMANDS_DIR=$T/commands
# Each echo turn takes this long, so turns sent at the same time overlap and lighttpd
# hands them to different workers.
export TINY_HARNESS_ECHO_DELAY_MS=250
BASE=$(sh "$SERVER" start "$T/srv" 2) || bail "lighttpd did not start"
DB=$(th_db_of "$T/srv")
echo "# lighttpd at $BASE, state in $T/srv"

TK=$TASK_KEY
SK=$STATUS_KEY
CH=$CHANNEL_MT

# ------------------------------------------------------------------ helpers
# send rpc|rest WHO PARAMS — SendMessage; the task (if any) in $T/task.
send() {
	BIND=$1
	if [ "$1" = rpc ]; then
		rpc_call SendMessage "$3" "$2"
		jq '.result.task // empty' "$T/body" >"$T/task" 2>/dev/null
	else
		http POST /message:send "$3" "$2"
		jq '.task // empty' "$T/body" >"$T/task" 2>/dev/null
	fi
}
# get rpc|rest WHO ID — GetTask; the task in $T/task.
get() {
	BIND=$1
	if [ "$1" = rpc ]; then
		rpc_call GetTask "$(jq -nc --arg id "$3" '{id: $id}')" "$2"
		jq '.result // empty' "$T/body" >"$T/task" 2>/dev/null
	else
		http GET "/tasks/$3" "" "$2"
		jq 'if .error then empty else . end' "$T/body" >"$T/task" 2>/dev/null
	fi
}
cancel() { # cancel rpc|rest WHO ID
	BIND=$1
	if [ "$1" = rpc ]; then
		rpc_call CancelTask "$(jq -nc --arg id "$3" '{id: $id}')" "$2"
		jq '.result // empty' "$T/body" >"$T/task" 2>/dev/null
	else
		http POST "/tasks/$3:cancel" '{}' "$2"
		jq 'if .error then empty else . end' "$T/body" >"$T/task" 2>/dev/null
	fi
}
# Message builders: each prints SendMessage params.
emsg() { # emsg MID TASK PAYLOAD [TEXT] — a task envelope, optionally with a text part
	jq -nc --arg m "$1" --arg t "$2" --argjson p "$3" --arg x "${4:-}" --arg mt "$EVENT_MT" \
		'{message: ({messageId: $m, role: "ROLE_USER",
		  parts: ([{data: {kind: "task", payload: $p}, mediaType: $mt}] + (if $x == "" then [] else [{text: $x}] end))}
		  + (if $t == "" then {} else {taskId: $t} end))}'
}
cmsg() { # cmsg MID TASK VALUE — a channel message
	jq -nc --arg m "$1" --arg t "$2" --argjson v "$3" --arg mt "$CH" \
		'{message: {messageId: $m, role: "ROLE_USER", taskId: $t, parts: [{data: $v, mediaType: $mt}]}}'
}

tj() { jq -r "$1" "$T/task" 2>/dev/null; }
state() { tj '.status.state'; }
sub_state() { tj ".metadata[\"$SK\"].sub_state // \"none\""; }
stext() { tj '[.status.message.parts[]?.text // empty] | join("\n")'; }
role_of() { tj "[.metadata[\"$TK\"].participants[]? | select(.id == \"$1\") | .role] | join(\",\")"; }
# Every text in the history: text parts and the text of channel data parts.
htexts() { tj '[.history[]?.parts[]? | .text // ((.data | objects | .text) // empty)] | join("\n")'; }
has_task() { [ -s "$T/task" ] && [ "$(tj .id)" != null ]; }

# is_err CODE — the last call failed with that A2A error: the JSON-RPC code, or on REST the
# HTTP status and ErrorInfo reason of the same error.
is_err() {
	if [ "$BIND" = rpc ]; then
		[ "$(jqb .error.code)" = "$1" ]
	else
		local want
		case $1 in
		-32001) want='404 TASK_NOT_FOUND' ;;
		-32002) want='400 TASK_NOT_CANCELABLE' ;;
		-32004) want='400 UNSUPPORTED_OPERATION' ;;
		-32602) want='400 INVALID_PARAMS' ;;
		*) want=unknown ;;
		esac
		[ "$STATUS $(jqb '[.error.details[]? | select(."@type" | endswith("ErrorInfo")) | .reason][0]')" = "$want" ]
	fi
}
err_text() { jqb '.error.message // empty'; }
err_has() { err_text | grep -qiF -- "$1"; }

# Row counts of every table a message, turn, channel post or sub-task could touch.
counts() {
	local t out=
	for t in tasks messages turns events participants channels channel_members channel_messages \
		help_requests subtask_links plan_steps; do
		out="$out $t=$(sq "SELECT COUNT(*) FROM $t")"
	done
	echo "$out"
}
# A /subtask's child runs a turn on its goal after the response has gone out: wait
# (bounded) until no turn is queued or running, so counts are not taken mid-turn.
snapshot() { wait_idle; BEFORE=$(counts); }
unchanged() {
	AFTER=$(counts)
	[ "$BEFORE" = "$AFTER" ] || { echo "#   rows before:$BEFORE"; echo "#   rows after: $AFTER"; return 1; }
}
turns_now() { sq 'SELECT COUNT(*) FROM turns'; }
# waiting ID — the task's waiting_tasks row as sub_state|waiting_for|question|request_id
waiting() { sq "SELECT sub_state || '|' || waiting_for || '|' || COALESCE(question, '') || '|' || COALESCE(request_id, '') FROM waiting_tasks WHERE id = '$1'"; }
members() { sq "SELECT participant_id FROM channel_members WHERE channel_id = '$1' ORDER BY participant_id" | th_join ' '; }
message_events() { th_db_events "$DB" "$1" | awk -F '\t' -v s="$2" '$2 == "message" && index($0, s) { n++ } END { print n + 0 }'; }
was() { echo "$BEFORE" | sed "s/.* $1=\([0-9]*\).*/\1/"; }   # a count in BEFORE
rows() { sq "SELECT COUNT(*) FROM $1"; }
task_state() { sq "SELECT state FROM tasks WHERE id = '$1'"; }
help_state() { sq "SELECT state FROM help_requests WHERE id = '$1'"; }
db_role() { sq "SELECT role FROM participants WHERE task_id = '$1' AND participant_id = '$2'"; }
db_roles() { sq "SELECT participant_id || ':' || role FROM participants WHERE task_id = '$1' ORDER BY participant_id" | th_join ' '; }
lists_all() { # lists_all "WORDS" NAME… — every NAME is a word of WORDS
	local words=" $1 " c
	shift
	for c in "$@"; do
		case $words in *" $c "*) ;; *) echo "#   $c is not in:$words"; return 1 ;; esac
	done
}

# ------------------------------------------------------------------ CMD-1: the card
http GET /.well-known/agent-card.json "" ""
cmds=$(jqb '[.capabilities.extensions[] | select(.uri | endswith("/a2a/ext/commands/v1")) | .params.commands[] | .name] | join(" ")')
recap=$(jqb '.capabilities.extensions[] | select(.uri | endswith("/a2a/ext/commands/v1")) | .params.commands[] | select(.name == "recap") | "\(.description)|\(.argument_hint)"')
check "CMD-1 the card's commands extension lists every built-in and the file command recap.md with its front matter" \
	'[ "$STATUS" = 200 ]' \
	'lists_all "$cmds" help status plan step ask subtask invite role recap' \
	'[ "$recap" = "Recap the discussion for a newcomer|TOPIC" ]'

# ------------------------------------------------------------------ the team task
snapshot
send rpc alice "$(emsg t1 '' '{"name":"Ship 1.0","goal":"Release version 1.0","description":"the first release","acceptance_criteria":[{"text":"all tests pass"}],"participants":[{"id":"bob","role":"admin"},{"id":"wendy","role":"watcher"}]}' 'Let us ship it')"
TASK=$(tj .id)
check "TASK-4 ID-2 a task envelope (JSON-RPC) creates the task: alice reporter, bob admin, wendy watcher, tiny-harness assignee" \
	'[ "$STATUS" = 200 ]' has_task \
	'[ "$(state)" = TASK_STATE_INPUT_REQUIRED ]' '[ "$(sub_state)" = awaiting-next-message ]' \
	'[ "$(tj ".metadata[\"$TK\"].name")" = "Ship 1.0" ]' \
	'[ "$(tj ".metadata[\"$TK\"].goal")" = "Release version 1.0" ]' \
	'[ "$(tj ".metadata[\"$TK\"].acceptance_criteria | tojson")" = "[{\"text\":\"all tests pass\",\"met\":false}]" ]' \
	'[ "$(role_of alice)" = reporter ]' '[ "$(role_of bob)" = admin ]' '[ "$(role_of wendy)" = watcher ]' \
	'[ "$(role_of tiny-harness)" = assignee ]' \
	'[ "$(db_roles "$TASK")" = "alice:reporter bob:admin tiny-harness:assignee wendy:watcher" ]' \
	'stext | grep -qF "Let us ship it"'
has_task || bail "no task: nothing else can run"

snapshot
send rest bob "$(emsg u1 "$TASK" '{"description":"the first public release","acceptance_criteria":[{"text":"all tests pass","met":true}]}')"
check "TASK-5 bob's task envelope (HTTP+JSON) updates description and acceptance_criteria; the goal stays" \
	'[ "$STATUS" = 200 ]' has_task \
	'[ "$(tj ".metadata[\"$TK\"].description")" = "the first public release" ]' \
	'[ "$(tj ".metadata[\"$TK\"].acceptance_criteria[0].met")" = true ]' \
	'[ "$(tj ".metadata[\"$TK\"].goal")" = "Release version 1.0" ]'

snapshot
send rpc bob "$(emsg u2 "$TASK" '{"goal":"something else"}')"
check "TASK-5 a task envelope may not change the goal: -32602 naming goal; nothing stored" \
	'is_err -32602' 'err_has goal' unchanged

# ------------------------------------------------------------------ the watcher
get rest wendy "$TASK"
check "ID-4 wendy (watcher) reads the task with GetTask (HTTP+JSON)" \
	'[ "$STATUS" = 200 ]' has_task '[ "$(tj .id)" = "$TASK" ]' '[ "$(role_of wendy)" = watcher ]'

snapshot
send rpc wendy "$(tmsg w1 "$TASK" 'I would ship on Friday')"
check "ID-4 wendy's ordinary message is -32004 naming the watcher role; nothing stored" \
	'is_err -32004' 'err_has watcher' unchanged

snapshot
send rest wendy "$(emsg w2 "$TASK" '{"name":"Ship it now"}')"
check "ID-4 TASK-5 wendy's task envelope (HTTP+JSON) is -32004 naming the watcher role; nothing stored" \
	'is_err -32004' 'err_has watcher' unchanged

# ------------------------------------------------------------------ sub-tasks
snapshot
send rpc alice "$(tmsg s1 "$TASK" '/subtask Docs: write the user guide')"
C1=$TASK.1
check "CMD-3 TASK-4 /subtask on the task creates $C1 (Docs), listed in the parent's sub_tasks" \
	'[ "$STATUS" = 200 ]' has_task \
	'stext | grep -qF "$C1"' \
	'[ "$(tj "[.metadata[\"$TK\"].sub_tasks[].task_id] | join(\",\")")" = "$C1" ]' \
	'[ "$(rows subtask_links)" = $(($(was subtask_links) + 1)) ]'

# The child's first turn runs after the answer (the worker's deferred work): wait for it.
wait_idle
get rpc wendy "$C1"
check "TASK-4 $C1 inherits the participants and roles, links its parent and waits for the next message" \
	'[ "$STATUS" = 200 ]' has_task '[ "$(tj .id)" = "$C1" ]' \
	'[ "$(role_of alice)" = reporter ]' '[ "$(role_of bob)" = admin ]' '[ "$(role_of wendy)" = watcher ]' \
	'[ "$(role_of tiny-harness)" = assignee ]' \
	'[ "$(tj ".metadata[\"$TK\"].name")" = Docs ]' \
	'[ "$(tj ".metadata[\"$TK\"].goal")" = "write the user guide" ]' \
	'[ "$(tj ".metadata[\"$TK\"].parent_tasks[0].task_id")" = "$TASK" ]' \
	'[ "$(state)" = TASK_STATE_INPUT_REQUIRED ]' '[ "$(sub_state)" = awaiting-next-message ]'

send rest bob "$(tmsg s2 "$C1" '/subtask Intro: write the introduction')"
C11=$C1.1
get rest alice "$C11"
check "TASK-4 /subtask on the child (HTTP+JSON, by bob) creates the grandchild $C11 (two levels)" \
	'[ "$STATUS" = 200 ]' has_task '[ "$(tj .id)" = "$C11" ]' \
	'[ "$(tj ".metadata[\"$TK\"].parent_tasks[0].task_id")" = "$C1" ]' \
	'[ "$(role_of wendy)" = watcher ]' '[ "$(role_of alice)" = reporter ]'
get rpc alice "$C1"
check "TASK-4 the child lists the grandchild in its sub_tasks" \
	'[ "$(tj "[.metadata[\"$TK\"].sub_tasks[].task_id] | join(\",\")")" = "$C11" ]'

CHILD_ENV=$(jq -nc --arg p "$TASK" '{name: "Tests", goal: "write the release tests", parent_tasks: [{task_id: $p}], participants: [{id: "alice", role: "admin"}]}')
snapshot
send rpc wendy "$(emsg k1 '' "$CHILD_ENV")"
check "TASK-4 ID-4 a task envelope with parent_tasks from wendy (watcher of the parent) is -32004; nothing stored" \
	'is_err -32004' 'err_has watcher' unchanged
send rest mallory "$(emsg k2 '' "$CHILD_ENV")"
check "TASK-4 ID-3 the same from a stranger is task-not-found; nothing stored" \
	'is_err -32001' 'err_has "not found"' unchanged

send rpc bob "$(emsg k3 '' "$CHILD_ENV")"
C2=$TASK.2
check "TASK-4 bob's task envelope with parent_tasks creates the sub-task $C2 (Tests)" \
	'[ "$STATUS" = 200 ]' has_task '[ "$(tj .id)" = "$C2" ]' \
	'[ "$(tj ".metadata[\"$TK\"].parent_tasks[0].task_id")" = "$TASK" ]' \
	'[ "$(role_of bob)" = reporter ]' '[ "$(role_of alice)" = admin ]' \
	'[ "$(state)" = TASK_STATE_INPUT_REQUIRED ]'
get rest alice "$TASK"
check "TASK-4 the root now lists both children, $C1 and $C2" \
	'[ "$(tj "[.metadata[\"$TK\"].sub_tasks[].task_id] | sort | join(\",\")")" = "$C1,$C2" ]'

snapshot
send rpc alice "$(tmsg s3 "$TASK" '/subtask no colon here')"
check "CMD-5 /subtask without NAME: GOAL replies with the usage; no sub-task, no participant added" \
	'[ "$STATUS" = 200 ]' has_task 'stext | grep -qF "Usage: /subtask"' \
	'[ "$(sub_state)" = awaiting-next-message ]' \
	'[ "$(sq "SELECT COUNT(*) FROM subtask_links")" = 3 ]' \
	'[ "$(sq "SELECT COUNT(*) FROM tasks")" = 4 ]'

# Work on the three sub-tasks at once: each turn takes 250 ms, so lighttpd has to hand
# them to both workers (checked at the end with turns.worker_pid).
i=0
for pair in "alice $C1" "bob $C11" "bob $C2" "alice $TASK"; do
	i=$((i + 1))
	set -- $pair
	post_bg "par.$i" "$1" "${BASE}message:send" "$(tmsg "par$i" "$2" "progress note $i")"
done
wait
parked=0
for j in 1 2 3 4; do
	[ "$(jq -r '.task.status.message.parts[0].text' "$T/par.$j" 2>/dev/null)" = "echo: progress note $j" ] && parked=$((parked + 1))
done
cp "$T/par.1" "$T/body"
REQ_DESC="four concurrent POST /message:send on $C1, $C11, $C2, $TASK"
check "TASK-6 four messages sent at once to the root and the sub-tasks each run a turn and park" '[ "$parked" = 4 ]'

# ------------------------------------------------------------------ channels
snapshot
send rpc alice "$(cmsg ch1 "$TASK" "$(jq -nc --arg c "$TASK" '{channel_id: $c, sender: "alice", kind: "message", text: "Docs are half done."}')")"
check "CH-1 CH-3 a message on the task channel is stored and delivered as a message event, and starts no turn" \
	'[ "$STATUS" = 200 ]' has_task \
	'[ "$(rows turns)" = "$(was turns)" ]' \
	'[ "$(rows channel_messages)" = $(($(was channel_messages) + 1)) ]' \
	'[ "$(message_events "$TASK" "Docs are half done.")" = 1 ]' \
	'[ "$(sub_state)" = awaiting-next-message ]'
get rpc wendy "$TASK"
check "CH-3 ID-4 the watcher sees the task-channel message in history" 'htexts | grep -qxF "Docs are half done."'

snapshot
send rest alice "$(cmsg sc1 "$TASK" '{"channel_id":"alice/release-side","sender":"alice","kind":"message","text":"Between us: tag tonight?","to":["bob"]}')"
r1=$STATUS
send rpc bob "$(cmsg sc2 "$TASK" '{"channel_id":"alice/release-side","sender":"bob","kind":"message","text":"Yes, after the tests."}')"
check "CH-1 alice opens the side channel alice/release-side with bob (HTTP+JSON) and bob answers on it; no turn" \
	'[ "$r1" = 200 ]' '[ "$STATUS" = 200 ]' has_task \
	'[ "$(members alice/release-side)" = "alice bob" ]' \
	'[ "$(rows turns)" = "$(was turns)" ]'

get rest bob "$TASK"
check "CH-3 bob's GetTask history holds both side-channel messages" \
	'htexts | grep -qxF "Between us: tag tonight?"' 'htexts | grep -qxF "Yes, after the tests."'
get rest wendy "$TASK"
check "CH-2 wendy's GetTask history lacks the side channel (still shows the task channel)" \
	'has_task' '! htexts | grep -qF "tag tonight"' '! htexts | grep -qF "after the tests"' \
	'htexts | grep -qxF "Docs are half done."'
get rpc wendy "$TASK"
check "CH-2 the same over JSON-RPC GetTask" \
	'has_task' '! htexts | grep -qF "tag tonight"' '! htexts | grep -qF "after the tests"'

snapshot
send rpc wendy "$(cmsg w3 "$TASK" '{"channel_id":"alice/release-side","sender":"wendy","kind":"message","text":"Can I see?"}')"
e_side=$(err_text)
ok_side=0
is_err -32004 && ok_side=1
send rpc wendy "$(cmsg w4 "$TASK" '{"channel_id":"no-such-channel","sender":"wendy","kind":"message","text":"Can I see?"}')"
e_none=$(err_text)
check "CH-2 ID-4 wendy's post to the side channel is -32004 naming the watcher role, with the same text as for a channel that does not exist; nothing stored" \
	'[ "$ok_side" = 1 ]' 'is_err -32004' 'err_has watcher' '[ -n "$e_side" ]' '[ "$e_side" = "$e_none" ]' \
	'! printf "%s" "$e_side" | grep -qF release-side' unchanged

send rpc alice "$(tmsg i1 "$TASK" '/invite carol assignee')"
check "ID-5 CMD-3 /invite carol assignee by the reporter adds carol" \
	'[ "$STATUS" = 200 ]' '[ "$(role_of carol)" = assignee ]' 'stext | grep -qF carol'
snapshot
send rest carol "$(cmsg x1 "$TASK" '{"channel_id":"alice/release-side","sender":"carol","kind":"message","text":"Hello side"}')"
e_side=$(err_text)
ok_side=0
is_err -32602 && ok_side=1
send rest carol "$(cmsg x2 "$TASK" '{"channel_id":"no-such-channel","sender":"carol","kind":"message","text":"Hello side"}')"
e_none=$(err_text)
check "CH-2 carol (participant, not a member) posting to the side channel gets the one membership error, worded as for a missing channel; nothing stored" \
	'[ "$ok_side" = 1 ]' 'is_err -32602' '[ -n "$e_side" ]' \
	'[ "$(printf "%s" "$e_side" | sed s,alice/release-side,ID,g)" = "$(printf "%s" "$e_none" | sed s/no-such-channel/ID/g)" ]' \
	'! printf "%s" "$e_side" | sed s,alice/release-side,ID,g | grep -qiE "alice|bob"' unchanged

snapshot
send rpc carol "$(tmsg r1 "$TASK" '/role bob watcher')"
check "ID-5 /role by carol (assignee) is -32004 naming admin and reporter; bob stays admin; nothing stored" \
	'is_err -32004' 'err_has admin' 'err_has reporter' unchanged \
	'[ "$(db_role "$TASK" bob)" = admin ]'

# ------------------------------------------------------------------ commands
send rpc alice "$(tmsg h1 "$TASK" '/help')"
check "CMD-3 /help lists the commands with their argument hints" \
	'[ "$STATUS" = 200 ]' 'stext | grep -qF "/ask PARTICIPANT QUESTION"' 'stext | grep -qF "/subtask NAME: GOAL"' \
	'stext | grep -qF "/recap TOPIC"'

send rest bob "$(tmsg st1 "$TASK" '/status')"
check "CMD-3 /status shows the state with its sub-state, the participants with roles and the sub-tasks" \
	'[ "$STATUS" = 200 ]' \
	'stext | grep -qF "alice (reporter)"' 'stext | grep -qF "bob (admin)"' 'stext | grep -qF "wendy (watcher)"' \
	'stext | grep -qF "$C1 Docs"' 'stext | grep -qF "$C2 Tests"' \
	'stext | grep -qF "awaiting-next-message"'

send rpc alice "$(tmsg rc1 "$TASK" '/recap the release')"
check "CMD-4 the file command /recap expands \$ARGUMENTS and runs a model turn with the prompt" \
	'[ "$STATUS" = 200 ]' 'stext | grep -qF "Write a short recap about the release for someone who just joined."' \
	'[ "$(sub_state)" = awaiting-next-message ]'

send rpc alice "$(tmsg nc1 "$TASK" '/nosuchcommand at all')"
check "CMD-2 text starting with an unregistered /name is an ordinary message" \
	'[ "$STATUS" = 200 ]' '[ "$(stext)" = "echo: /nosuchcommand at all" ]'

# ------------------------------------------------------------------ /ask and the answer
send rpc alice "$(tmsg a1 "$TASK" '/ask bob Which branch do we tag?')"
REQ=$(tj ".metadata[\"$SK\"].request_id")
check "CH-4 STATUS-1 /ask bob parks the task INPUT_REQUIRED · awaiting-answer naming bob and the request id" \
	'[ "$STATUS" = 200 ]' has_task '[ "$(state)" = TASK_STATE_INPUT_REQUIRED ]' \
	'[ "$(sub_state)" = awaiting-answer ]' \
	'[ "$(tj ".metadata[\"$SK\"].participant_id")" = bob ]' '[ -n "$REQ" ] && [ "$REQ" != null ]' \
	'[ "$(tj "[.status.message.parts[] | select(.mediaType == \"$CH\") | .data | \"\(.kind) \(.to | join(\",\")) \(.text)\"][0]")" = "help_request bob Which branch do we tag?" ]' \
	'stext | grep -qxF "Which branch do we tag?"'

REQ_DESC="$DB: SELECT … FROM waiting_tasks WHERE id = TASK"
check "STORE-1 waiting_tasks shows the task awaiting bob's answer to the question, with the request id" \
	'[ "$(waiting "$TASK")" = "awaiting-answer|bob|Which branch do we tag?|$REQ" ]'

snapshot
send rpc wendy "$(cmsg w5 "$TASK" "$(jq -nc --arg c "$TASK" --arg r "$REQ" '{channel_id: $c, sender: "wendy", kind: "help_reply", text: "main", in_reply_to: $r}')")"
check "CH-5 a help_reply from wendy to bob's request is -32602 naming bob; nothing stored" \
	'is_err -32602' 'err_has bob' unchanged \
	'[ "$(help_state "$REQ")" = pending ]'
send rest bob "$(cmsg b0 "$TASK" "$(jq -nc --arg c "$TASK" '{channel_id: $c, sender: "bob", kind: "help_reply", text: "main", in_reply_to: "no-such-request"}')")"
check "CH-5 a help_reply to an unknown request (HTTP+JSON) is -32602 saying there is no such request; nothing stored" \
	'is_err -32602' 'err_has "no help request"' unchanged

snapshot
send rest alice "$(tmsg a2 "$TASK" 'Any news, bob?')"
check "CH-5 alice's message while bob is asked is stored in history but starts no turn; still awaiting bob" \
	'[ "$STATUS" = 200 ]' has_task '[ "$(sub_state)" = awaiting-answer ]' \
	'[ "$(tj ".metadata[\"$SK\"].participant_id")" = bob ]' \
	'[ "$(rows turns)" = "$(was turns)" ]' \
	'[ "$(rows messages)" = $(($(was messages) + 1)) ]' \
	'htexts | grep -qxF "Any news, bob?"'

t_before=$(turns_now)
send rpc bob "$(tmsg b1 "$TASK" 'Tag the release-1.0 branch.')"
check "CH-5 STATUS-1 bob's plain answer resumes the task with a turn, which parks awaiting-next-message" \
	'[ "$STATUS" = 200 ]' has_task '[ "$(state)" = TASK_STATE_INPUT_REQUIRED ]' \
	'[ "$(sub_state)" = awaiting-next-message ]' \
	'[ "$(tj ".metadata[\"$SK\"] | keys | join(\",\")")" = sub_state ]' \
	'[ "$(stext)" = "echo: Tag the release-1.0 branch." ]' \
	'[ "$(turns_now)" = $((t_before + 1)) ]' \
	'[ "$(help_state "$REQ")" = answered ]' \
	'[ "$(waiting "$TASK")" = "awaiting-next-message|next message from any participant||" ]'

snapshot
send rpc bob "$(cmsg b2 "$TASK" "$(jq -nc --arg c "$TASK" --arg r "$REQ" '{channel_id: $c, sender: "bob", kind: "help_reply", text: "again", in_reply_to: $r}')")"
check "CH-5 a second help_reply to the answered request is -32602 saying it is already answered; nothing stored" \
	'is_err -32602' 'err_has "already answered"' unchanged

# A question to the watcher: she may answer it (with a help_reply), and nothing else.
send rest alice "$(tmsg a3 "$TASK" '/ask wendy Is the changelog readable?')"
REQ2=$(tj ".metadata[\"$SK\"].request_id")
send rest wendy "$(cmsg w6 "$TASK" "$(jq -nc --arg c "$TASK" --arg r "$REQ2" '{channel_id: $c, sender: "wendy", kind: "help_reply", text: "Yes, it reads well.", in_reply_to: $r}')")"
check "ID-4 CH-5 wendy answers the question addressed to her with a help_reply: the task resumes and parks" \
	'[ "$STATUS" = 200 ]' has_task '[ -n "$REQ2" ] && [ "$REQ2" != null ]' \
	'[ "$(sub_state)" = awaiting-next-message ]' '[ "$(stext)" = "echo: Yes, it reads well." ]' \
	'[ "$(help_state "$REQ2")" = answered ]'
snapshot
send rest wendy "$(tmsg w7 "$TASK" 'And one more thing')"
check "ID-4 after answering, wendy's next message is -32004 naming the watcher role again; nothing stored" \
	'is_err -32004' 'err_has watcher' unchanged

# ------------------------------------------------------------------ completion
snapshot
send rpc bob "$(ctl c0 "$TASK")"
check "CTL-4 completing the root with open sub-tasks parks it INPUT_REQUIRED · awaiting-next-message naming $C1 (Docs) and $C2 (Tests)" \
	'[ "$STATUS" = 200 ]' has_task '[ "$(state)" = TASK_STATE_INPUT_REQUIRED ]' \
	'[ "$(sub_state)" = awaiting-next-message ]' \
	'[ "$(tj .status.message.role)" = ROLE_AGENT ]' \
	'stext | grep -qF "$C1"' 'stext | grep -qF Docs' 'stext | grep -qF "$C2"' 'stext | grep -qF Tests' \
	'[ "$(task_state "$C1")" = TASK_STATE_INPUT_REQUIRED ]' \
	'[ "$(task_state "$C2")" = TASK_STATE_INPUT_REQUIRED ]'

send rest alice "$(ctl c1 "$C1")"
check "CTL-4 completing $C1 while $C11 (Intro) is open is refused in the same way (HTTP+JSON)" \
	'[ "$STATUS" = 200 ]' has_task '[ "$(state)" = TASK_STATE_INPUT_REQUIRED ]' \
	'[ "$(sub_state)" = awaiting-next-message ]' 'stext | grep -qF "$C11"' 'stext | grep -qF Intro'

snapshot
send rpc wendy "$(ctl c2 "$C11")"
check "ID-4 CTL-2 wendy may not complete a sub-task: -32004 naming the watcher role; nothing stored" \
	'is_err -32004' 'err_has watcher' unchanged

send rpc bob "$(ctl c3 "$C11")"
check "CTL-5 bob completes the grandchild $C11: COMPLETED \"completed by bob\"" \
	'[ "$STATUS" = 200 ]' '[ "$(state)" = TASK_STATE_COMPLETED ]' '[ "$(stext)" = "completed by bob" ]'
get rest alice "$C1"
check "CTL-4 the end of $C11 is noted in $C1's history" \
	'htexts | grep -qxF "sub-task $C11 (Intro) is TASK_STATE_COMPLETED"'

send rest alice "$(ctl c4 "$C1")"
check "CTL-5 $C1 completes now that its child has ended: \"completed by alice\"" \
	'[ "$STATUS" = 200 ]' '[ "$(state)" = TASK_STATE_COMPLETED ]' '[ "$(stext)" = "completed by alice" ]'

send rpc alice "$(ctl c5 "$C2")"
check "CTL-5 alice (admin of $C2) completes it" \
	'[ "$STATUS" = 200 ]' '[ "$(state)" = TASK_STATE_COMPLETED ]' '[ "$(stext)" = "completed by alice" ]'

get rpc wendy "$TASK"
check "CTL-4 ID-4 the root's history (read by the watcher) notes both children as TASK_STATE_COMPLETED" \
	'htexts | grep -qxF "sub-task $C1 (Docs) is TASK_STATE_COMPLETED"' \
	'htexts | grep -qxF "sub-task $C2 (Tests) is TASK_STATE_COMPLETED"'

send rpc alice "$(ctl c6 "$TASK")"
check "CTL-5 STATUS-2 the root completes: TASK_STATE_COMPLETED \"completed by alice\", no status key" \
	'[ "$STATUS" = 200 ]' has_task '[ "$(state)" = TASK_STATE_COMPLETED ]' \
	'[ "$(stext)" = "completed by alice" ]' '[ "$(sub_state)" = none ]' \
	'[ "$(sq "SELECT COUNT(*) FROM waiting_tasks WHERE id = '\''$TASK'\'' OR id LIKE '\''$TASK.%'\''")" = 0 ]'

snapshot
send rest bob "$(cmsg ch9 "$TASK" "$(jq -nc --arg c "$TASK" '{channel_id: $c, sender: "bob", kind: "message", text: "late"}')")"
check "CTL-6 a channel message to the completed task is -32004 naming TASK_STATE_COMPLETED; nothing stored" \
	'is_err -32004' 'err_has TASK_STATE_COMPLETED' unchanged

# ------------------------------------------------------------------ cancel takes the children along
send rpc alice "$(emsg n1 '' '{"name":"Retro","goal":"Hold the retrospective","participants":[{"id":"bob","role":"admin"},{"id":"wendy","role":"watcher"}]}')"
R=$(tj .id)
send rpc alice "$(tmsg n2 "$R" '/subtask Notes: take notes')"
send rpc bob "$(tmsg n3 "$R.1" '/subtask Photos: collect photos')"
snapshot
cancel rest wendy "$R"
check "CTL-8 ID-4 wendy's CancelTask (HTTP+JSON) is -32004 naming the watcher role; nothing stored" \
	'is_err -32004' 'err_has watcher' unchanged
cancel rpc alice "$R"
check "CTL-8 cancelling the parent cancels it (\"canceled by alice\") and its open sub-tasks two levels down" \
	'[ "$STATUS" = 200 ]' has_task '[ "$(state)" = TASK_STATE_CANCELED ]' '[ "$(stext)" = "canceled by alice" ]' \
	'[ "$(task_state "$R.1")" = TASK_STATE_CANCELED ]' \
	'[ "$(task_state "$R.1.1")" = TASK_STATE_CANCELED ]'

# ------------------------------------------------------------------ which workers wrote it
pids=$(sq "SELECT DISTINCT worker_pid FROM turns WHERE (task_id = '$TASK' OR task_id LIKE '$TASK.%') AND worker_pid > 0" | sort -n)
REQ_DESC="SELECT DISTINCT worker_pid FROM turns of $TASK and its sub-tasks → $(echo $pids)"
writes_in_writer_check "the conversation's turns" "$pids" 2

tap_done
