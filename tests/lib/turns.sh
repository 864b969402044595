# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
# turns.sh — turn and lease helpers for the integration tests that kill or stop the
# worker holding a turn (tests/integration/lease.sh, stream_recover.sh); sourced (bash)
# after tests/lib/tap.sh, proc.sh and a2a.sh, once T, BASE and DB are set.
#
# The script sets LPID (its lighttpd's pid, for our_worker) and keeps BG (pids of its
# background processes, added to by bg_post) to end them at exit; CUR_TASK names the task
# a failing check describes (tap_details, redefined here).
#
#   bg_post NAME BODY           background POST; LAST_BG its pid
#   wait_gone PID TENTHS        until PID ended (bounded), GONE_RC its status
#   turn_row TASK MID / field ROW N   a message's latest turn, "state|cut|attempts|pid|lease"
#   wait_turn TASK MID STATE [PID]    until that turn is in STATE; TURN_PID its worker
#   wait_lease TASK MID         until its lease has expired
#   our_worker PID              PID is a FastCGI worker of our lighttpd
#   settle TASK                 until no turn of TASK is queued or running
#   new_task MID TEXT / running_follow_up TAG FIRST FOLLOW-UP
#   invariants TAG TASK MID TEXT      the TURN-4/TURN-6 checks every scenario ends with

# Its variables are read by the scripts that source it.
# shellcheck disable=SC2034

# A failing check shows what it was about (REQ_DESC) and the task's turns and history.
CUR_TASK=
tap_details() {
	echo "#   context: ${REQ_DESC:-}"
	[ -n "$CUR_TASK" ] || return 0
	echo "#   task: $(sq "SELECT state FROM tasks WHERE id = '$CUR_TASK'") $(status_text "$CUR_TASK")"
	sq "SELECT 'turn ' || CAST(id AS TEXT) || ' ' || message_id || ': ' || state || ', cut ' || CAST(CAST(cut AS INTEGER) AS TEXT) || ', attempts ' || CAST(attempts AS TEXT) || ', worker ' || coalesce(CAST(worker_pid AS TEXT), '-') || ', lease ' || coalesce(CAST(lease_until_ms AS TEXT), '-') || coalesce(', error ' || error, '') FROM turns WHERE task_id = '$CUR_TASK' ORDER BY id" |
		sed 's/^/#   /'
	# "message POS ROLE ID: the first 80 characters of its first part's text"
	sq "SELECT CAST(pos AS TEXT) || ' ' || role || ' ' || message_id || '|' || CAST(json AS TEXT) FROM messages WHERE task_id = '$CUR_TASK' ORDER BY pos" |
		while IFS= read -r line; do
			echo "#   message ${line%%|*}: $(printf '%s\n' "${line#*|}" | first_text | cut -c1-80)"
		done
}

# JSON columns are taken apart here, not in SQL (tests/lib/db.sh).
# first_text — the text of the first part of each message JSON on stdin ("" when none).
first_text() { jq -r '.parts[0].text // ""' 2>/dev/null; }
# status_text TASK — the text of the first part of the task's status message.
status_text() { sq "SELECT CAST(status_message_json AS TEXT) FROM tasks WHERE id = '$1' AND status_message_json IS NOT NULL" | first_text; }
# agent_texts TASK — the first part's text of each agent message of TASK, as JSON strings
# (one a line; messages without one are left out).
agent_texts() { sq "SELECT CAST(json AS TEXT) FROM messages WHERE task_id = '$1' AND role = 'ROLE_AGENT'" | jq -c '.parts[0].text // empty' 2>/dev/null; }

# Background request to the server; output in $T/bg.NAME, "status seconds" in
# $T/bg.NAME.status; pid in LAST_BG and BG.
bg_post() { # bg_post NAME BODY
	curl -s -o "$T/bg.$1" -w '%{http_code} %{time_total}' --max-time 30 -H 'A2A-Version: 1.0' \
		-H 'X-Participant-Id: alice' -H 'Content-Type: application/json' --data-binary "$2" \
		"$BASE" >"$T/bg.$1.status" 2>/dev/null &
	LAST_BG=$!
	BG="$BG $LAST_BG"
}

# wait_gone PID TENTHS — until PID has ended (bounded); reaps it, its exit status in
# GONE_RC. False when it is still running.
wait_gone() {
	local i=0
	GONE_RC=
	while alive "$1" && [ $i -lt "$2" ]; do
		sleep 0.1
		i=$((i + 1))
	done
	alive "$1" && return 1
	wait "$1" 2>/dev/null
	GONE_RC=$?
	return 0
}

# turn_row TASK MESSAGE-ID — "state|cut|attempts|worker_pid|lease_until_ms" of the
# message's latest turn.
turn_row() {
	sq "SELECT state || '|' || CAST(CAST(cut AS INTEGER) AS TEXT) || '|' || CAST(attempts AS TEXT) || '|' || CAST(coalesce(worker_pid, 0) AS TEXT) || '|' || CAST(coalesce(lease_until_ms, 0) AS TEXT) FROM turns WHERE task_id = '$1' AND message_id = '$2' ORDER BY id DESC LIMIT 1"
}
field() { echo "$1" | cut -d'|' -f"$2"; }

# wait_turn TASK MESSAGE-ID STATE [PID] — poll (5 s) until the message's latest turn is
# in STATE (and held by PID when given); TURN_PID is its worker_pid.
wait_turn() {
	local i=0 row
	TURN_PID=
	while [ $i -lt 100 ]; do
		row=$(turn_row "$1" "$2")
		if [ "$(field "$row" 1)" = "$3" ] && { [ -z "${4:-}" ] || [ "$(field "$row" 4)" = "$4" ]; }; then
			TURN_PID=$(field "$row" 4)
			return 0
		fi
		sleep 0.05
		i=$((i + 1))
	done
	return 1
}

# wait_lease TASK MESSAGE-ID — until the latest turn's lease has expired (bounded 5 s).
wait_lease() {
	local i=0 until
	until=$(field "$(turn_row "$1" "$2")" 5)
	while [ "$(now_ms)" -le "${until:-0}" ] && [ $i -lt 50 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	[ "$(now_ms)" -gt "${until:-0}" ]
}

# our_worker PID — PID is a FastCGI worker of our lighttpd (its child running tiny-harness).
our_worker() {
	local ppid comm
	ppid=$(awk '{ print $4 }' "/proc/$1/stat" 2>/dev/null)
	comm=$(cat "/proc/$1/comm" 2>/dev/null)
	[ -n "$1" ] && [ "$ppid" = "$LPID" ] && [ "${comm#tiny-harness}" != "$comm" ]
}

# settle TASK — until no turn of TASK is queued or running (bounded 15 s).
settle() {
	local i=0
	while [ "$(sq "SELECT COUNT(*) FROM turns WHERE task_id = '$1' AND state IN ('queued', 'running')")" != 0 ] &&
		[ $i -lt 150 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	[ $i -lt 150 ]
}

new_task() { # new_task MESSAGE-ID TEXT — sets TASK (blocking: its first turn has run)
	http POST / "$(rpc 1 SendMessage "$(msg "$1" "$2")")"
	TASK=$(jqb .result.task.id)
	[ -n "$TASK" ] && [ "$TASK" != null ] || bail "could not create a task: $(head -c 300 "$T/body")"
	CUR_TASK=$TASK
}

# running_follow_up TAG FIRST FOLLOW-UP — a new task (message TAG-m1, text FIRST) and,
# in the background, a follow-up (TAG-m2) whose turn is then running: SEND_BG is the
# follow-up's request, P the worker running its turn.
running_follow_up() {
	new_task "$1-m1" "$2"
	bg_post "$1" "$(rpc 2 SendMessage "$(msg "$1-m2" "$3" "$TASK")")"
	SEND_BG=$LAST_BG
	wait_turn "$TASK" "$1-m2" running
	P=$TURN_PID
}

# invariants TAG TASK MESSAGE-ID TEXT — the checks every scenario ends with.
invariants() {
	local tag=$1 task=$2 mid=$3 text=$4 now orphans copies users agents replies dups state reason o turns
	now=$(now_ms)
	# "TASK (turns: STATE/lease MS, …); …" for each such task
	orphans=$(sq "SELECT t.id FROM tasks t WHERE t.state = 'TASK_STATE_WORKING' AND NOT EXISTS (SELECT 1 FROM turns u WHERE u.task_id = t.id AND (u.state = 'queued' OR (u.state = 'running' AND u.lease_until_ms > $now)))" |
		while IFS= read -r o; do
			turns=$(sq "SELECT u.state || '/lease ' || coalesce(CAST(u.lease_until_ms AS TEXT), '-') FROM turns u WHERE u.task_id = '$o'" </dev/null | th_join ', ')
			echo "$o (turns: ${turns:-none})"
		done | th_join '; ')
	REQ_DESC="$tag: tasks WORKING without a queued turn or a running one leased past $now: ${orphans:-none}"
	check "TURN-6 TURN-4 ($tag) no task in the database is TASK_STATE_WORKING without a live turn (queued, or running with an unexpired lease)" \
		'[ -z "$orphans" ]'

	copies=$(sq "SELECT COUNT(*) FROM messages WHERE task_id = '$task' AND message_id = '$mid'")
	REQ_DESC="$tag: copies of $mid in the history of $task: $copies"
	check "TURN-4 ($tag) the follow-up $mid is in the task's history exactly once ($copies)" '[ "$copies" = 1 ]'

	state=$(sq "SELECT state FROM tasks WHERE id = '$task'")
	reason=$(status_text "$task")
	users=$(sq "SELECT COUNT(*) FROM messages WHERE task_id = '$task' AND role = 'ROLE_USER'")
	agents=$(sq "SELECT COUNT(*) FROM messages WHERE task_id = '$task' AND role = 'ROLE_AGENT'")
	replies=$(agent_texts "$task" | grep -cxF "$(jq -nc --arg x "echo: $text" '$x')")
	REQ_DESC="$tag: task $task $state; $users user messages, $agents agent messages, $replies replies quoting '$text'; status text '$reason'"
	if [ "$state" = TASK_STATE_FAILED ]; then
		check "TURN-6 ($tag) one agent reply per accepted user message, or FAILED with a reason (users $users, agents $agents, FAILED: '$reason')" \
			'[ -n "$reason" ]' '[ "$agents" -le "$users" ]' '[ "$replies" -le 1 ]'
	else
		check "TURN-6 ($tag) exactly one agent reply per accepted user message (users $users, agents $agents, replies to $mid $replies)" \
			'[ "$users" -gt 0 ]' '[ "$agents" = "$users" ]' '[ "$replies" = 1 ]'
	fi

	# "TEXT xN" for each text stored N > 1 times (TEXT as a JSON string)
	dups=$(agent_texts "$task" | sort | uniq -c | awk '$1 > 1 { n = $1; sub(/^ *[0-9]+ /, ""); print $0 " x" n }' | th_join '; ')
	REQ_DESC="$tag: agent texts stored more than once: ${dups:-none}"
	check "TURN-6 ($tag) no reply text appears twice in the task's history" '[ -z "$dups" ]'

	REQ_DESC="$tag: task $task $state, status text '$reason'"
	check "TURN-6 TURN-4 ($tag) the task ends TASK_STATE_INPUT_REQUIRED, or TASK_STATE_FAILED with a reason (it is $state)" \
		'[ "$state" = TASK_STATE_INPUT_REQUIRED ] || { [ "$state" = TASK_STATE_FAILED ] && [ -n "$reason" ]; }'
}

