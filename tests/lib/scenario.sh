# SPDX-License-Identifier: Apache-2.0
# scenario.sh — the parts of the web-server conversation that every server's
# integration test runs the same way; sourced after tests/lib/a2a.sh, with BASE, DB, T
# and TASK (a parked task) set.
#
#   completion_checks SUFFIX   CTL-5 the control envelope completes TASK, CTL-6 a second
#                              completion is refused, CTL-9 `tiny-harness complete`
#                              completes a new task (SUFFIX ends the test names)
#   auth_checks LABEL          SEC-1 the recipe's login: 401 without one, with the header
#                              alone and with a wrong password; a login is the sender
#   workers_checks SUFFIX [MIN] LIM-3 6 concurrent SendMessage requests all park and are
#                              all stored, STORE-4 the turns ran in MIN (default 2) or
#                              more worker processes; leaves the worker pids in $pids.
#                              The counts read the database (th_db_sql, tests/lib/db.sh)
#                              with a busy timeout on SQLite: a worker resetting the WAL
#                              may hold a new reader off briefly.

completion_checks() {
	local suffix=$1
	rpc_call SendMessage "$(ctl c1 "$TASK")"
	check "CTL-5 the control envelope completes the task: TASK_STATE_COMPLETED \"completed by alice\"" \
		'[ "$STATUS" = 200 ]' has_task \
		'[ "$(jqb .result.task.status.state)" = TASK_STATE_COMPLETED ]' \
		'[ "$(texts .result.task)" = "completed by alice" ]'
	http GET "/tasks/$TASK" ""
	check "CTL-5 GetTask (REST) after completion shows TASK_STATE_COMPLETED" \
		'[ "$STATUS" = 200 ]' has_task '[ "$(jqb .status.state)" = TASK_STATE_COMPLETED ]'
	rpc_call SendMessage "$(ctl c2 "$TASK")"
	check "CTL-6 completing a completed task is -32004 naming TASK_STATE_COMPLETED" \
		'[ "$(jqb .error.code)" = -32004 ]' 'jqb .error.message | grep -qF TASK_STATE_COMPLETED'

	rpc_call SendMessage "$(msg m5 "finish me from the command line")"
	TASK2=$(jqb .result.task.id)
	REQ_DESC="$TH_BIN complete $TASK2 --as alice --url $BASE"
	if "$TH_BIN" complete "$TASK2" --as alice --url "$BASE" ${CLI_CREDENTIALS:+--credentials "$CLI_CREDENTIALS"} >"$T/cli.out" 2>&1; then cli=0; else cli=$?; fi
	rpc_call GetTask "{\"id\":\"$TASK2\"}"
	check "CTL-9 'tiny-harness complete TASK --as alice --url URL' completes the task$suffix" \
		'[ -n "$TASK2" ] && [ "$TASK2" != null ]' '[ "$cli" = 0 ]' \
		'[ "$(jqb .result.status.state)" = TASK_STATE_COMPLETED ]' \
		'[ "$(texts .result)" = "completed by alice" ]'
}

workers_checks() {
	local suffix=$1 min=${2:-2} before after parked i CONC=6
	before=$(TH_DB_BUSY_MS=5000 th_db_sql "$DB" 'SELECT COUNT(*) FROM tasks' 2>/dev/null || echo unreadable)
	for i in $(seq 1 $CONC); do
		post_bg "conc.$i" "user$i" "$BASE" "$(rpc "$i" SendMessage "$(msg "p$i" "parallel $i")")"
	done
	wait
	parked=0
	for i in $(seq 1 $CONC); do
		[ "$(jq -r .result.task.status.state "$T/conc.$i" 2>/dev/null)" = TASK_STATE_INPUT_REQUIRED ] && parked=$((parked + 1))
	done
	after=$(TH_DB_BUSY_MS=5000 th_db_sql "$DB" 'SELECT COUNT(*) FROM tasks' 2>/dev/null || echo unreadable)
	REQ_DESC="$CONC concurrent SendMessage ($parked parked; tasks before $before, after $after); body of the first:"
	cp "$T/conc.1" "$T/body"
	check "LIM-3 $CONC concurrent SendMessage requests all answer INPUT_REQUIRED and store $CONC tasks" \
		"[ \"\$parked\" = $CONC ]" "[ \"\$before\" != unreadable ] && [ \"\$after\" = $((before + CONC)) ]"
	pids=$(TH_DB_BUSY_MS=5000 th_db_sql "$DB" 'SELECT DISTINCT worker_pid FROM turns WHERE worker_pid > 0' 2>/dev/null | sort -n)
	REQ_DESC="SELECT DISTINCT worker_pid FROM turns → $(echo $pids)"
	writes_in_writer_check "the turns$suffix" "$pids" "$min"
}

# raw_auth METHOD PATH BODY CURL-ARGS… — one request with exactly the credentials in
# CURL-ARGS (none of a2a.sh's logins or default participant): $T/body, $T/headers, STATUS.
raw_auth() {
	local method=$1 path=$2 body=$3
	shift 3
	REQ_DESC="$method $path $* $(printf '%s' "$body" | head -c 120)"
	STATUS=$(curl -s -o "$T/body" -D "$T/headers" -w '%{http_code}' --max-time 30 -X "$method" \
		-H 'A2A-Version: 1.0' -H 'Content-Type: application/json' "$@" \
		${body:+--data-binary "$body"} "${HTTP_BASE:-$BASE}${path#/}")
}

# challenge — the WWW-Authenticate value of the last raw_auth answer.
challenge() { tr -d '\r' <"$T/headers" | grep -i '^WWW-Authenticate:' | head -n1 | sed 's/^[^:]*: *//'; }

# auth_checks LABEL — SEC-1 through a recipe run as shipped with its login on (after
# basic_auth, with TASK alice's): no credentials, the header alone, a wrong password are
# each 401 from the web server with a Basic challenge, and store nothing; a login is the
# participant whatever X-Participant-Id says.
auth_checks() {
	local label=$1 before after
	before=$(TH_DB_BUSY_MS=5000 th_db_sql "$DB" 'SELECT COUNT(*) FROM tasks' 2>/dev/null || echo unreadable)
	raw_auth POST / "$(rpc 11 GetTask "{\"id\":\"$TASK\"}")"
	check "SEC-1 no credentials through $label: 401 with WWW-Authenticate: Basic realm=\"tiny-harness\", nothing of the task" \
		'[ "$STATUS" = 401 ]' 'challenge | grep -q "^Basic realm=\"tiny-harness\""' '! grep -qF "$TASK" "$T/body"'
	raw_auth POST / "$(rpc 12 SendMessage "$(msg x1 "acting as alice")")" -H 'X-Participant-Id: alice'
	local s1=$STATUS
	raw_auth GET "/tasks/$TASK" "" -H 'X-Participant-Id: alice'
	after=$(TH_DB_BUSY_MS=5000 th_db_sql "$DB" 'SELECT COUNT(*) FROM tasks' 2>/dev/null || echo unreadable)
	check "SEC-1 X-Participant-Id: alice without a login through $label: 401 on both bindings ($s1, $STATUS), no task stored ($before, $after)" \
		'[ "$s1" = 401 ]' '[ "$STATUS" = 401 ]' '! grep -qF "$TASK" "$T/body"' \
		'[ "$before" != unreadable ]' '[ "$after" = "$before" ]'
	raw_auth POST / "$(rpc 13 GetTask "{\"id\":\"$TASK\"}")" -u "alice:not-$TEST_PASSWORD"
	check "SEC-1 a wrong password through $label: 401" '[ "$STATUS" = 401 ]' '! grep -qF "$TASK" "$T/body"'
	raw_auth POST / "$(rpc 14 GetTask "{\"id\":\"$TASK\"}")" -u "bob:$TEST_PASSWORD" -H 'X-Participant-Id: alice'
	check "SEC-1 ID-1 logged in as bob through $label, X-Participant-Id: alice counts for nothing (alice's task is not found)" \
		'[ "$STATUS" = 200 ]' '[ "$(jqb .error.code)" = -32001 ]'
}
