#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Integration test: A2A 1.1 task generation through the real lighttpd and two FastCGI
# workers (A2A-11-GEN-1..6, decision-073). Behind A2A-Version: 1.1 a task's generation
# starts at 1 and grows by one per mutation, each mutation one event carrying it; a
# GetTask with currentGeneration waits on the stream thread (not a worker) until another
# request moves the task on, or for heartbeat_ms at most; a stale ifGenerationMatch is
# refused with -32010 / HTTP 409 and stores nothing; a 1.0 client's bytes are the 1.1
# bytes without the generation member, and its currentGeneration / ifGenerationMatch are
# not read; with TH_BASE_BIN (a build without 1.1) they are also byte for byte what that
# build answers on the same database. Runs on PostgreSQL too (TH_TEST_PG). TAP output; 77 (skip) when lighttpd,
# curl, jq or the database client is missing.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
set -u

: "${TH_SRCDIR:=$(cd "$(dirname "$0")/../.." && pwd)}"
. "$TH_SRCDIR/tests/lib/tap.sh"
. "$TH_SRCDIR/tests/lib/proc.sh"
. "$TH_SRCDIR/tests/lib/a2a.sh"

[ -x "$TH_BIN" ] || skip "no program at $TH_BIN"
require_lighttpd
require_tools curl jq

# The bound of a waiting GetTask is min(heartbeat_ms, stream_max_ms): 2 s here. Two request
# threads per worker (4 in all), so that waiting GetTasks that took threads would stall
# the eight-waiter check below.
HB_MS=2000
export TINY_HARNESS_HEARTBEAT_MS=$HB_MS TINY_HARNESS_WORKER_THREADS=2
scratch th-generation
BASE=$(sh "$SERVER" start "$T/srv" 2) || bail "lighttpd did not start"
DB=$(th_db_of "$T/srv")
echo "# lighttpd at $BASE, state in $T/srv"

# v11 / v10 METHOD PATH [BODY]: a request as a 1.1 / 1.0 client (alice); body in
# $T/body, headers in $T/headers, STATUS, TIME.
req() {
	local ver=$1 method=$2 path=$3 body=${4:-} out
	local args=(-s -o "$T/body" -D "$T/headers" -w '%{http_code} %{time_total}' --max-time 30
		-X "$method" -H "A2A-Version: $ver" -H 'X-Participant-Id: alice')
	[ -n "$body" ] && args+=(-H 'Content-Type: application/json' --data-binary "$body")
	REQ_DESC="A2A-Version: $ver $method $path $(printf '%s' "$body" | head -c 200)"
	out=$(curl "${args[@]}" "$BASE${path#/}")
	STATUS=${out%% *}
	TIME=${out#* }
}
v11() { req 1.1 "$@"; }
v10() { req 1.0 "$@"; }
mutations() { sq "SELECT count(*) FROM events WHERE task_id = '$1' AND kind IN ('task', 'status', 'artifact')"; }
count() { sq "SELECT count(*) FROM $1"; }
# The text with every generation member taken out: what a 1.0 client must get.
ungen() { sed -E 's/,?"generation":"[0-9]+"//g'; }

# ------------------------------------------------------------------ GEN-1
v11 POST / "$(rpc 1 SendMessage "$(msg m1 "ship it")")"
TASK=$(jqb .result.task.id)
check "A2A-11-GEN-1 a new task is at generation 1 and its first mutation makes it 2 (created, then INPUT_REQUIRED)" \
	'[ "$STATUS" = 200 ]' has_task '[ "$(jqb .result.task.generation)" = 2 ]' \
	'[ "$(mutations "$TASK")" = 2 ]'

v11 GET "/tasks/$TASK"
G=$(jqb .generation)
check "A2A-11-GEN-1 GetTask over HTTP+JSON shows the same generation, as a ProtoJSON int64 (a string)" \
	'[ "$STATUS" = 200 ]' '[ "$G" = 2 ]' '[ "$(jqb ".generation | type")" = string ]'

# ------------------------------------------------------------------ GEN-2
v11 POST / "$(rpc 2 SendStreamingMessage "$(msg m2 "and test it" "$TASK")")"
grep '^data:' "$T/body" | sed 's/^data: *//' >"$T/events11"
gens=$(jq -r '.result | (.task // .statusUpdate // .artifactUpdate // empty) | .generation' "$T/events11" | tr '\n' ' ')
v11 GET "/tasks/$TASK"
G=$(jqb .generation)
REQ_DESC="stream generations: $gens; task now $G"
check "A2A-11-GEN-2 a 1.1 stream: the Task and every status and artifact event carry the generation after it, one apart" \
	'[ -n "$gens" ]' \
	'jq -nr --arg g "$gens" '"'"'[$g | splits(" ") | select(. != "") | tonumber] | . as $a | (length > 1) and all(range(1; length); $a[.] == $a[. - 1] + 1)'"'"' | grep -qx true' \
	'[ "${gens% }" != "" ] && [ "$(echo $gens | awk "{print \$NF}")" = "$G" ]' \
	'[ "$(mutations "$TASK")" = "$G" ]'

# ------------------------------------------------------------------ GEN-4
# A waiting GetTask, then a SendMessage of another request: the wait ends with the task
# past it, well before the bound.
curl -s -o "$T/wait1" -w '%{time_total}' --max-time 30 -H 'A2A-Version: 1.1' -H 'X-Participant-Id: alice' \
	"${BASE}tasks/$TASK?currentGeneration=$G&historyLength=0" >"$T/wait1.time" &
waiter=$!
sleep 0.5
v11 POST / "$(rpc 3 SendMessage "$(msg m3 "once more" "$TASK")")"
wait "$waiter"
REQ_DESC="GET /tasks/$TASK?currentGeneration=$G: $(head -c 200 "$T/wait1"); $(cat "$T/wait1.time") s"
check "A2A-11-GEN-4 a GetTask with currentGeneration waits, and returns when another request moves the task past it" \
	'[ "$(jq -r .generation "$T/wait1")" = $((G + 1)) ]' \
	'awk -v t="$(cat "$T/wait1.time")" -v b="$HB_MS" "BEGIN { exit !(t * 1000 < b) }"'
G=$((G + 1))

v11 POST / "$(rpc 4 GetTask "{\"id\":\"$TASK\",\"currentGeneration\":\"$G\",\"historyLength\":0}")"
REQ_DESC="$REQ_DESC ($TIME s)"
check "A2A-11-GEN-4 with nothing moving the task it answers the task as it is after the bound (heartbeat_ms), not before" \
	'[ "$STATUS" = 200 ]' '[ "$(jqb .result.generation)" = "$G" ]' \
	'awk -v t="$TIME" -v b="$HB_MS" "BEGIN { exit !(t * 1000 >= b - 100 && t < 20) }"'

v11 GET "/tasks/$TASK?currentGeneration=$((G - 1))"
check "A2A-11-GEN-4 a task already past currentGeneration is answered at once" \
	'[ "$STATUS" = 200 ]' '[ "$(jqb .generation)" = "$G" ]' \
	'awk -v t="$TIME" -v b="$HB_MS" "BEGIN { exit !(t * 1000 < b) }"'

# Waiting GetTasks hold stream slots, not workers: with 8 of them waiting on two workers
# of two request threads each, a SendMessage is answered while they all still wait.
pids=()
for i in 1 2 3 4 5 6 7 8; do
	curl -s -o "$T/w$i" --max-time 30 -H 'A2A-Version: 1.1' -H 'X-Participant-Id: alice' \
		"${BASE}tasks/$TASK?currentGeneration=$G" &
	pids+=($!)
done
sleep 0.3
v10 POST / "$(rpc 5 SendMessage "$(msg m5 "a new task meanwhile")")"
other=$(jqb .result.task.id)
waiting=0
for i in 1 2 3 4 5 6 7 8; do [ -s "$T/w$i" ] || waiting=$((waiting + 1)); done
REQ_DESC="$REQ_DESC; still waiting when it was answered: $waiting of 8"
check "A2A-11-GEN-4 eight waiting GetTasks on two workers of two threads leave the workers free: a SendMessage is answered while they wait" \
	'[ "$STATUS" = 200 ]' '[ -n "$other" ] && [ "$other" != null ]' '[ "$waiting" = 8 ]'
wait "${pids[@]}"

# ------------------------------------------------------------------ GEN-5
msgs0=$(count messages)
evs0=$(count events)
v11 POST / "$(rpc 6 SendMessage "$(msg m6 "stale" "$TASK" "{\"ifGenerationMatch\":\"$((G - 1))\"}")")"
check "A2A-11-GEN-5 a stale ifGenerationMatch is TaskGenerationMismatchError (-32010) naming both generations; nothing stored" \
	'[ "$(jqb .error.code)" = -32010 ]' '[ "$(jqb ".error.data[0].reason")" = TASK_GENERATION_MISMATCH ]' \
	'[ "$(jqb ".error.data[0].metadata.currentGeneration")" = "$G" ]' \
	'[ "$(jqb ".error.data[0].metadata.expectedGeneration")" = $((G - 1)) ]' \
	'[ "$(count messages)" = "$msgs0" ]' '[ "$(count events)" = "$evs0" ]'
v11 POST /message:send "$(msg m6 "stale" "$TASK" "{\"ifGenerationMatch\":$((G - 1))}")"
check "A2A-11-GEN-5 over HTTP+JSON it is 409 Conflict, ABORTED; nothing stored" \
	'[ "$STATUS" = 409 ]' '[ "$(jqb .error.status)" = ABORTED ]' \
	'[ "$(count messages)" = "$msgs0" ]' '[ "$(count events)" = "$evs0" ]'
v11 POST /message:send "$(msg m7 "current" "$TASK" "{\"ifGenerationMatch\":$G}")"
check "A2A-11-GEN-5 the current generation goes through and moves the task on" \
	'[ "$STATUS" = 200 ]' '[ "$(jqb .task.generation)" = $((G + 1)) ]'
G=$((G + 1))

# ------------------------------------------------------------------ GEN-6: 1.0
v11 GET "/tasks/$TASK"
cp "$T/body" "$T/get11"
v10 GET "/tasks/$TASK"
cp "$T/body" "$T/get10"
v11 POST / "$(rpc 7 GetTask "{\"id\":\"$TASK\"}")"
cp "$T/body" "$T/rpc11"
v10 POST / "$(rpc 7 GetTask "{\"id\":\"$TASK\"}")"
cp "$T/body" "$T/rpc10"
check "A2A-11-GEN-6 a 1.0 GetTask is byte for byte the 1.1 answer without its generation, over both bindings" \
	'! grep -q generation "$T/get10"' '! grep -q generation "$T/rpc10"' \
	'[ "$(ungen <"$T/get11")" = "$(cat "$T/get10")" ]' '[ "$(ungen <"$T/rpc11")" = "$(cat "$T/rpc10")" ]' \
	'grep -q "\"generation\":\"$G\"" "$T/get11"'

v10 GET "/tasks/$TASK?currentGeneration=$G"
check "A2A-11-GEN-6 a 1.0 GetTask with currentGeneration is not held and carries no generation" \
	'[ "$STATUS" = 200 ]' '! grep -q generation "$T/body"' \
	'awk -v t="$TIME" -v b="$HB_MS" "BEGIN { exit !(t * 1000 < b) }"'

msgs0=$(count messages)
v10 POST /message:send "$(msg m8 "old client" "$TASK" '{"ifGenerationMatch":1}')"
check "A2A-11-GEN-6 a 1.0 send's ifGenerationMatch is not read: the message is kept" \
	'[ "$STATUS" = 200 ]' '! grep -q generation "$T/body"' '[ "$(count messages)" -gt "$msgs0" ]'

# A resumed subscription replays the stored events: 1.0 as stored, 1.1 with generations.
for v in 1.0 1.1; do
	curl -s -N --max-time 1 -o "$T/sub$v" -H "A2A-Version: $v" -H 'X-Participant-Id: alice' \
		-H 'Last-Event-ID: 0' "${BASE}tasks/$TASK:subscribe" || true
done
grep '^data:' "$T/sub1.1" >"$T/d11"
grep '^data:' "$T/sub1.0" >"$T/d10"
check "A2A-11-GEN-6 a 1.0 subscription's events are the 1.1 events without their generation, byte for byte" \
	'[ -s "$T/d10" ]' '! grep -q generation "$T/d10"' 'grep -q generation "$T/d11"' \
	'[ "$(ungen <"$T/d11")" = "$(cat "$T/d10")" ]'

# A2A-11-GEN-3: over the whole replay no event carries 0 and no two carry one number.
sed 's/^data: *//' "$T/d11" | jq -r '(.result // .) | (.task // .statusUpdate // .artifactUpdate // empty) | .generation // "none"' >"$T/gens11"
REQ_DESC="replayed generations: $(tr '\n' ' ' <"$T/gens11")"
check "A2A-11-GEN-3 a replayed 1.1 stream never carries generation 0 and never one number twice" \
	'[ "$(wc -l <"$T/gens11")" -ge 3 ]' '! grep -qx -e 0 -e none "$T/gens11"' \
	'[ -z "$(sort "$T/gens11" | uniq -d)" ]'

# TEN-1 with A2A-11-GEN-4's path: a 1.1 GetTask reads its tenant as every request does.
v11 POST / "$(jq -c '.params.tenant = "acme"' <<<"$(rpc 20 SendMessage "$(msg t1 "in a tenant")")")"
TT=$(jqb .result.task.id)
v11 GET "/acme/tasks/$TT"
check "A2A-11-GEN-1 TEN-1 a 1.1 GET /acme/tasks/{id} finds acme's task, with its generation" \
	'[ "$STATUS" = 200 ]' '[ "$(jqb .id)" = "$TT" ]' '[ "$(jqb .generation)" = 2 ]'
v11 GET "/tasks/$TT"
check "A2A-11-GEN-1 TEN-2 a 1.1 GetTask of acme's task without the tenant is 404" '[ "$STATUS" = 404 ]'

# With TH_BASE_BIN (a build without A2A 1.1, e.g. the landed one) a second server on the
# same database answers 1.0 requests with the very bytes this build does.
if [ -n "${TH_BASE_BIN:-}" ] && [ -x "$TH_BASE_BIN" ]; then
	BASE1=$BASE
	BASE0=$(TH_BIN=$TH_BASE_BIN TH_SERVER_DB=$DB sh "$SERVER" start "$T/base" 1) || bail "the base server did not start"
	for side in new old; do
		[ "$side" = new ] && BASE=$BASE1 || BASE=$BASE0
		v10 GET "/tasks/$TASK"
		cp "$T/body" "$T/$side-get"
		v10 POST / "$(rpc 9 GetTask "{\"id\":\"$TASK\"}")"
		cp "$T/body" "$T/$side-rpc"
		curl -s -N --max-time 1 -o "$T/$side-sub" -H 'A2A-Version: 1.0' -H 'X-Participant-Id: alice' \
			-H 'Last-Event-ID: 0' "${BASE}tasks/$TASK:subscribe" || true
	done
	BASE=$BASE1
	REQ_DESC="$TH_BASE_BIN at $BASE0 on the same database"
	check "A2A-11-GEN-6 a 1.0 GetTask (both bindings) and a resumed subscription are byte for byte what a build without 1.1 answers" \
		'cmp -s "$T/new-get" "$T/old-get"' 'cmp -s "$T/new-rpc" "$T/old-rpc"' \
		'[ "$(grep "^data:" "$T/new-sub")" = "$(grep "^data:" "$T/old-sub")" ]'
	sh "$SERVER" stop "$T/base"
fi

sh "$SERVER" stop "$T/srv"
tap_done
