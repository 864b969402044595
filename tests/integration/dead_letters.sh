#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Integration test: the caller's push dead letters (RET-4, decision-076) through lighttpd
# (tests/lib/server.sh, conf/lighttpd.conf) with two FastCGI workers and identity = bearer
# (API keys from `tiny-harness keys add`).
#
# alice makes a task with bob on it, and a push config whose webhook is a loopback port
# nothing listens on, with a token, credentials and a secret in the URL's query
# (push_max_attempts = 1: the first refused POST gives up; each later event of the task is
# one more dead letter); and a second task in tenant acme with a dead webhook of its own.
# Then GET <base>pushNotificationDeadLetters and <base>acme/pushNotificationDeadLetters:
# alice sees her default-tenant letters there and only her acme letters under acme
# (TEN-2), with task, config, webhook, event seq, attempts, last error and when it died,
# newest first, a page at a time; bob, on the same task, sees none; the token, the
# credentials and the URL's secret are nowhere in the answers (SEC-6); without
# credentials, or with a bad key, it is 401 with WWW-Authenticate; a bad pageSize or
# pageToken is refused naming it; JSON-RPC has no such method. On PostgreSQL too
# (TH_TEST_PG). TAP output; 77 (skip) when lighttpd, curl or jq is missing.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
set -u

: "${TH_SRCDIR:=$(cd "$(dirname "$0")/../.." && pwd)}"
TAP_BODY_WIDTH=400
. "$TH_SRCDIR/tests/lib/tap.sh"
. "$TH_SRCDIR/tests/lib/proc.sh"
. "$TH_SRCDIR/tests/lib/a2a.sh"

[ -x "$TH_BIN" ] || skip "no program at $TH_BIN"
require_lighttpd
require_tools curl jq

scratch th-dead-letters
# A port nothing listens on: every POST to it is refused at once.
DEADPORT=$(random_port)
while port_busy "$DEADPORT"; do DEADPORT=$(random_port); done
export TINY_HARNESS_IDENTITY=bearer
export TINY_HARNESS_PUSH_ALLOW_PRIVATE=1
export TINY_HARNESS_PUSH_MAX_ATTEMPTS=1
export TINY_HARNESS_PUSH_KEY=5d0c3b2a19f8e7d6c5b4a3928170f6e5d4c3b2a1908f7e6d5c4b3a2918070605
BASE=$(sh "$SERVER" start "$T/srv" 2) || bail "lighttpd did not start"
DB=$(th_db_of "$T/srv")
echo "# lighttpd at $BASE (2 workers), identity = bearer, database $DB"
ALICE_KEY=$(TINY_HARNESS_DB=$DB "$TH_BIN" keys add alice --name alice-ci 2>/dev/null)
BOB_KEY=$(TINY_HARNESS_DB=$DB "$TH_BIN" keys add bob --name bob-ci 2>/dev/null)
[ "${#ALICE_KEY}" = 46 ] && [ "${#BOB_KEY}" = 46 ] || bail "keys add printed no keys"

# Secrets a dead letter must never show (SEC-6).
TOKEN=tok-secret-7f3a9
CREDS=cred-secret-c41e
URL_SECRET=qs-secret-9b2d

# raw METHOD PATH KEY [BODY] — a request as KEY's participant ("" sends no credentials).
raw() {
	local method=$1 path=$2 key=$3 body=${4:-} args=()
	args=(-s -o "$T/body" -D "$T/headers" -w '%{http_code}' --max-time 30 -X "$method")
	[ -n "$key" ] && args+=(-H "Authorization: Bearer $key")
	[ -n "$body" ] && args+=(-H 'Content-Type: application/json' -H 'A2A-Version: 1.0' --data-binary "$body")
	REQ_DESC="$method $path ${key:+(a key) }$(printf '%s' "$body" | head -c 200)"
	STATUS=$(curl "${args[@]}" "$BASE${path#/}")
}
header() { tr -d '\r' <"$T/headers" | grep -i "^$1:" | head -n1 | sed 's/^[^:]*: *//'; }
# rpc_as KEY METHOD PARAMS — one JSON-RPC call
rpc_as() { raw POST / "$1" "$(jq -nc --arg m "$2" --argjson p "$3" '{jsonrpc: "2.0", id: 1, method: $m, params: $p}')"; }
# letters PATH KEY — GET the dead letters; the body in $T/body
letters() { raw GET "$1" "$2"; }
# secrets FILE — 0 when FILE holds none of the config's secrets
no_secrets() { ! grep -qF -e "$TOKEN" -e "$CREDS" -e "$URL_SECRET" "$1"; }

# task_with_dead_hook TENANT CONFIG MID — a task of alice's (bob an assignee) in TENANT
# ("" the default) with a push config to the dead port; two more messages make events
# whose deliveries die (one per event, at least two). The task's id in TASK.
task_with_dead_hook() {
	local tenant=$1 config=$2 mid=$3
	rpc_as "$ALICE_KEY" SendMessage "$(jq -nc --arg t "$tenant" --arg m "$mid" --arg mt "$EVENT_MT" \
		'{message: {messageId: $m, role: "ROLE_USER", parts: [{data: {kind: "task", payload: {name: "Caterer",
		goal: "Tell the caterer", participants: [{id: "bob", role: "assignee"}]}}, mediaType: $mt},
		{text: "tell the caterer"}]}} + (if $t == "" then {} else {tenant: $t} end)')"
	TASK=$(jqb .result.task.id)
	has_task || bail "SendMessage $mid made no task: $(head -c 300 "$T/body")"
	rpc_as "$ALICE_KEY" CreateTaskPushNotificationConfig "$(jq -nc --arg t "$TASK" --arg c "$config" \
		--arg tn "$tenant" --arg u "http://127.0.0.1:$DEADPORT/hook/$config?key=$URL_SECRET" \
		--arg tok "$TOKEN" --arg cr "$CREDS" '{taskId: $t, id: $c, url: $u, token: $tok,
		authentication: {scheme: "Bearer", credentials: $cr}} + (if $tn == "" then {} else {tenant: $tn} end)')"
	[ "$(jqb .result.id)" = "$config" ] || bail "push config refused: $(head -c 300 "$T/body")"
	local k
	for k in 2 3; do
		rpc_as "$ALICE_KEY" SendMessage "$(jq -nc --arg t "$TASK" --arg tn "$tenant" --arg m "$mid-$k" \
			'{message: {messageId: $m, role: "ROLE_USER", taskId: $t, parts: [{text: "the date is set"}]}}
			+ (if $tn == "" then {} else {tenant: $tn} end)')"
		[ "$STATUS" = 200 ] && [ "$(jqb .result.task.id)" = "$TASK" ] ||
			bail "SendMessage $mid-$k failed: $(head -c 300 "$T/body")"
	done
}
task_with_dead_hook "" caterer dl-1
HOME_TASK=$TASK
task_with_dead_hook acme acme-hook dl-2
ACME_TASK=$TASK

# The workers POST after their answers (and after any later request: the loop's reads);
# each delivery gives up on its first refusal. Every event after a config was made is one
# delivery, so each task may have several.
i=0
while { [ "$(sq "SELECT count(*) FROM push_outbox WHERE state IN ('pending', 'sending')")" != 0 ] ||
	[ "$(sq "SELECT count(DISTINCT task_id) FROM push_outbox WHERE state = 'dead'")" != 2 ]; } &&
	[ $i -lt 100 ]; do
	letters pushNotificationDeadLetters "$BOB_KEY"
	sleep 0.1
	i=$((i + 1))
done
DEAD=$(sq "SELECT count(*) FROM push_outbox WHERE state = 'dead'")
ROWS=$(sq "SELECT count(*) FROM push_outbox")
# dead_seqs TASK — the seqs of TASK's dead deliveries, newest death first, one a line
dead_seqs() {
	sq "SELECT seq FROM push_outbox WHERE task_id = '$1' AND state = 'dead' ORDER BY updated_ms DESC, id DESC"
}
check "RET-4 the deliveries to the closed port gave up after one attempt, at least two on each task" \
	'[ "$ROWS" = "$DEAD" ]' '[ "$(dead_seqs "$HOME_TASK" | wc -l)" -ge 2 ]' \
	'[ "$(dead_seqs "$ACME_TASK" | wc -l)" -ge 2 ]' \
	'[ "$(sq "SELECT DISTINCT attempts FROM push_outbox")" = 1 ]'

letters pushNotificationDeadLetters "$ALICE_KEY"
cp "$T/body" "$T/alice.json"
check "RET-4 the owner sees her dead letters: 200 JSON, no-store, the task, config, webhook, event seq, attempts, last error, when it died" \
	'[ "$STATUS" = 200 ]' 'header Content-Type | grep -q "^application/json"' \
	'[ "$(header Cache-Control)" = no-store ]' \
	'[ "$(jqb ".deadLetters | length")" = "$(dead_seqs "$HOME_TASK" | wc -l)" ]' \
	'[ "$(jqb "[.deadLetters[].taskId] | unique | join(\" \")")" = "$HOME_TASK" ]' \
	'[ "$(jqb ".deadLetters[0].configId")" = caterer ]' \
	'[ "$(jqb ".deadLetters[0].url")" = "http://127.0.0.1:$DEADPORT/hook/caterer?key=***" ]' \
	'[ "$(jqb ".deadLetters[0].eventSeq | type")" = number ]' \
	'[ "$(jqb ".deadLetters[0].attempts")" = 1 ]' \
	'jqb ".deadLetters[0].lastError" | grep -q "127.0.0.1:$DEADPORT"' \
	'jqb ".deadLetters[0].diedAt" | grep -Eq "^20[0-9]{2}-[0-9]{2}-[0-9]{2}T[0-9:]{8}\.[0-9]{3}Z$"' \
	'[ "$(jqb .nextPageToken)" = "" ]'
check "RET-4 TEN-2 the default tenant's answer holds nothing of tenant acme" \
	'[ "$(jqb "[.deadLetters[] | select(.taskId == \"$ACME_TASK\" or .configId == \"acme-hook\")] | length")" = 0 ]'
check "RET-4 SEC-6 no token, no credentials and no secret of the URL in the answer or its headers" \
	'no_secrets "$T/alice.json"' 'no_secrets "$T/headers"'
# Each letter's seq is its event's: the same seqs, in the same order, as the outbox's dead
# rows of the task, newest death first.
check "RET-4 eventSeq is the seq of each event that was not delivered, newest death first" \
	'[ "$(jq -r ".deadLetters[].eventSeq" "$T/alice.json")" = "$(dead_seqs "$HOME_TASK")" ]'

letters acme/pushNotificationDeadLetters "$ALICE_KEY"
check "RET-4 TEN-2 under /acme/ the owner sees acme's dead letters only" \
	'[ "$STATUS" = 200 ]' '[ "$(jqb ".deadLetters[].eventSeq")" = "$(dead_seqs "$ACME_TASK")" ]' \
	'[ "$(jqb "[.deadLetters[].taskId] | unique | join(\" \")")" = "$ACME_TASK" ]' \
	'[ "$(jqb "[.deadLetters[].configId] | unique | join(\" \")")" = acme-hook ]' \
	'no_secrets "$T/body"'
letters other/pushNotificationDeadLetters "$ALICE_KEY"
check "RET-4 TEN-2 another tenant sees none of them" \
	'[ "$STATUS" = 200 ]' '[ "$(jqb ".deadLetters | length")" = 0 ]'

letters pushNotificationDeadLetters "$BOB_KEY"
check "RET-4 another participant, on the same task, sees none: the letters are the config owner's" \
	'[ "$STATUS" = 200 ]' '[ "$(jqb ".deadLetters | length")" = 0 ]' '! grep -q caterer "$T/body"'
letters acme/pushNotificationDeadLetters "$BOB_KEY"
check "RET-4 nor under /acme/" '[ "$STATUS" = 200 ]' '[ "$(jqb ".deadLetters | length")" = 0 ]'

letters pushNotificationDeadLetters ""
check "RET-4 SEC-1 without credentials: 401 with WWW-Authenticate, as every API call" \
	'[ "$STATUS" = 401 ]' '[ "$(header WWW-Authenticate)" = "Bearer realm=\"tiny-harness\"" ]' \
	'[ "$(jqb .error.status)" = UNAUTHENTICATED ]' '! grep -q caterer "$T/body"'
STATUS=$(curl -s -o "$T/body" -D "$T/headers" -w '%{http_code}' -H 'X-Participant-Id: alice' \
	"${BASE}pushNotificationDeadLetters")
REQ_DESC="GET pushNotificationDeadLetters with X-Participant-Id: alice only"
check "RET-4 SEC-1 X-Participant-Id alone names nobody here: 401" \
	'[ "$STATUS" = 401 ]' '! grep -q caterer "$T/body"'
letters pushNotificationDeadLetters "th_${ALICE_KEY#th_}x"
check "RET-4 SEC-1 a bad key: 401 saying invalid_token, the key not echoed" \
	'[ "$STATUS" = 401 ]' 'header WWW-Authenticate | grep -q "error=\"invalid_token\""' \
	'! grep -qF "${ALICE_KEY#th_}" "$T/body"'

letters "pushNotificationDeadLetters?pageSize=1" "$ALICE_KEY"
FIRST=$(jqb '.deadLetters[0].id')
NEXT=$(jqb .nextPageToken)
letters "pushNotificationDeadLetters?pageSize=1&pageToken=$NEXT" "$ALICE_KEY"
check "RET-4 a page is bounded by pageSize, and its nextPageToken gives the next one" \
	'[ -n "$NEXT" ]' '[ "$STATUS" = 200 ]' '[ "$(jqb ".deadLetters | length")" = 1 ]' \
	'[ "$(jqb ".deadLetters[0].id")" != "$FIRST" ]' \
	'[ "$(jqb ".deadLetters[0].eventSeq")" = "$(dead_seqs "$HOME_TASK" | sed -n 2p)" ]'
letters "pushNotificationDeadLetters?pageSize=1000" "$ALICE_KEY"
check "RET-4 pageSize over its limit is refused naming the field and the limit" \
	'[ "$STATUS" = 400 ]' 'jqb .error.message | grep -q "pageSize must be a whole number from 1 to 100"'
letters "pushNotificationDeadLetters?pageToken=nope" "$ALICE_KEY"
check "RET-4 a pageToken the server did not issue is refused naming it" \
	'[ "$STATUS" = 400 ]' 'jqb .error.message | grep -q "pageToken is not a token this server issued"'
raw POST pushNotificationDeadLetters "$ALICE_KEY" '{}'
check "RET-4 only GET and HEAD: POST is 405 with Allow" \
	'[ "$STATUS" = 405 ]' '[ "$(header Allow)" = "GET, HEAD" ]'
rpc_as "$ALICE_KEY" PushNotificationDeadLetters '{}'
check "RET-4 it is no JSON-RPC method" '[ "$(jqb .error.code)" = -32601 ]'
check "RET-4 the reads stored nothing: the outbox is as it was" \
	'[ "$(sq "SELECT count(*) FROM push_outbox")" = "$ROWS" ]' \
	'[ "$(sq "SELECT count(*) FROM push_outbox WHERE state = '"'dead'"'")" = "$DEAD" ]'

# The workers are still there: a request after all of it is answered.
letters pushNotificationDeadLetters "$ALICE_KEY"
check "RET-4 the workers are still serving" '[ "$STATUS" = 200 ]'

sh "$SERVER" stop "$T/srv"
tap_done
