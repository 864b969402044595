#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Integration test: Idempotency-Key through the real lighttpd and two FastCGI workers
# (A2A-11-IDEM-1, decision-067). A retried send answers the task of the first one,
# marked Idempotent-Replayed: true, over JSON-RPC, HTTP+JSON and SSE; another message
# under the same key is refused naming the key; concurrent retries spread over both
# workers leave exactly one task. TAP output; 77 (skip) when lighttpd, curl, jq or
# sqlite3 is missing.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
set -u

: "${TH_SRCDIR:=$(cd "$(dirname "$0")/../.." && pwd)}"
. "$TH_SRCDIR/tests/lib/tap.sh"
. "$TH_SRCDIR/tests/lib/proc.sh"
. "$TH_SRCDIR/tests/lib/a2a.sh"

[ -x "$TH_BIN" ] || skip "no program at $TH_BIN"
require_lighttpd
require_tools curl jq sqlite3

scratch th-idempotency
BASE=$(sh "$SERVER" start "$T/srv" 2) || bail "lighttpd did not start"
DB=$(th_db_of "$T/srv")
echo "# lighttpd at $BASE, state in $T/srv"

# keyed KEY METHOD PATH BODY [PARTICIPANT]: a request with an Idempotency-Key; the
# response's body in $T/body, its headers in $T/headers, the status in STATUS.
keyed() {
	local key=$1 method=$2 path=$3 body=$4 part=${5:-alice} out
	REQ_DESC="$method $path Idempotency-Key: $key participant=$part $(printf '%s' "$body" | head -c 200)"
	out=$(curl -s -o "$T/body" -D "$T/headers" -w '%{http_code}' --max-time 30 -X "$method" \
		-H 'A2A-Version: 1.0' -H "X-Participant-Id: $part" -H "Idempotency-Key: $key" \
		-H 'Content-Type: application/json' --data-binary "$body" "$BASE${path#/}")
	STATUS=$out
}
replayed() { grep -qi '^Idempotent-Replayed: true' "$T/headers"; }
count() { sq "SELECT count(*) FROM $1"; }

# ------------------------------------------------------------------ JSON-RPC
keyed key-a POST / "$(rpc 1 SendMessage "$(msg m1 "ship the release")")"
TASK=$(jqb .result.task.id)
tasks0=$(count tasks)
msgs0=$(count messages)
check "A2A-11-IDEM-1 a first send with an Idempotency-Key creates its task, not marked a replay" \
	'[ "$STATUS" = 200 ]' has_task '! replayed' \
	'[ "$(sq "SELECT count(*) FROM idempotency_keys WHERE participant_id = '"'"'alice'"'"' AND key = '"'"'key-a'"'"'")" = 1 ]'

keyed key-a POST / "$(rpc 2 SendMessage "$(msg m1-retry "ship the release")")"
check "A2A-11-IDEM-1 a retried first send (new messageId, same key and message) answers the same task, Idempotent-Replayed: true, storing nothing" \
	'[ "$STATUS" = 200 ]' '[ "$(jqb .result.task.id)" = "$TASK" ]' replayed \
	'[ "$(count tasks)" = "$tasks0" ]' '[ "$(count messages)" = "$msgs0" ]'

# ------------------------------------------------------------------ HTTP+JSON
keyed key-a POST /message:send "$(msg m1-rest "ship the release")"
check "A2A-11-IDEM-1 the same key over HTTP+JSON answers the same task, marked a replay" \
	'[ "$STATUS" = 200 ]' '[ "$(jqb .task.id)" = "$TASK" ]' replayed \
	'[ "$(count tasks)" = "$tasks0" ]'

# ------------------------------------------------------------------ another message
keyed key-a POST / "$(rpc 3 SendMessage "$(msg m2 "sink the release")")"
check "A2A-11-IDEM-1 another message under a used key is refused naming the key and its task; nothing stored" \
	'[ "$(jqb .error.code)" = -32602 ]' 'jqb .error.message | grep -q "key-a"' \
	'jqb .error.message | grep -q "$TASK"' '[ "$(count tasks)" = "$tasks0" ]' \
	'[ "$(count messages)" = "$msgs0" ]'
keyed key-a POST /message:send "$(msg m2 "sink the release")"
check "A2A-11-IDEM-1 over HTTP+JSON the refusal is a 400 naming the key" \
	'[ "$STATUS" = 400 ]' 'jqb .error.message | grep -q "key-a"' '[ "$(count tasks)" = "$tasks0" ]'

keyed key-a POST / "$(rpc 4 SendMessage "$(msg m1 "ship the release")")" bob
check "A2A-11-IDEM-1 the same key from another participant is that participant's own: a new task" \
	'[ "$STATUS" = 200 ]' '[ -n "$(jqb .result.task.id)" ]' '[ "$(jqb .result.task.id)" != "$TASK" ]' \
	'! replayed'

keyed 'two words' POST / "$(rpc 5 SendMessage "$(msg m9 "x")")"
check "A2A-11-IDEM-1 a key that is not 1-255 visible ASCII characters is refused naming the header" \
	'[ "$(jqb .error.code)" = -32602 ]' 'jqb .error.message | grep -q "Idempotency-Key"'

# ------------------------------------------------------------------ SSE
tasks0=$(count tasks)
keyed key-a POST / "$(rpc 6 SendStreamingMessage "$(msg m1-sse "ship the release")")"
first=$(grep '^data:' "$T/body" | head -n1 | sed 's/^data: *//')
check "A2A-11-IDEM-1 a retried SendStreamingMessage streams the same task, marked a replay" \
	'[ "$STATUS" = 200 ]' replayed \
	'[ "$(printf "%s" "$first" | jq -r ".result.task.id // .result.statusUpdate.taskId")" = "$TASK" ]' \
	'[ "$(count tasks)" = "$tasks0" ]'

# ------------------------------------------------------------------ concurrent retries
# Eight copies of one first send, each with its own messageId, at once over both
# workers: the key is found or kept inside the send's write transaction, so exactly one
# creates the task and the others answer it.
N=8
tasks1=$(count tasks)
pids=()
for i in $(seq $N); do
	curl -s -o "$T/c$i" -D "$T/h$i" --max-time 30 -H 'A2A-Version: 1.0' -H 'X-Participant-Id: carol' \
		-H 'Idempotency-Key: key-burst' -H 'Content-Type: application/json' \
		--data-binary "$(rpc "$i" SendMessage "$(msg "burst-$i" "one task only")")" "$BASE" &
	pids+=($!)
done
wait "${pids[@]}"
ids=$(for i in $(seq $N); do jq -r '.result.task.id // "refused"' "$T/c$i"; done | sort -u)
marks=$(for i in $(seq $N); do cat "$T/h$i"; done | grep -ci '^Idempotent-Replayed: true')
REQ_DESC="$N concurrent SendMessage with Idempotency-Key: key-burst; answered tasks: $(echo $ids); replay marks: $marks"
check "A2A-11-IDEM-1 $N concurrent sends with one key over two workers make exactly one task; the other $((N - 1)) answers are replays of it" \
	'[ "$(echo "$ids" | wc -l)" = 1 ]' '[ "$ids" != refused ]' '[ "$(count tasks)" = $((tasks1 + 1)) ]' \
	'[ "$marks" = $((N - 1)) ]'

sh "$SERVER" stop "$T/srv"
tap_done
