#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Integration test: A2A 1.0 tenants through the real lighttpd and two FastCGI workers
# (TEN-1..TEN-6, decision-074). One database serves the default tenant and "acme": a task
# id from one is TaskNotFound in the other for GetTask, CancelTask, a follow-up
# SendMessage, SubscribeToTask and push configs, over JSON-RPC (params.tenant) and
# HTTP+JSON (/{tenant}/ prefix); ListTasks lists one tenant; a resent first message and
# an Idempotency-Key are per tenant; an unconfigured tenant is refused. TAP output; 77
# (skip) when lighttpd, curl, jq or sqlite3 is missing.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
set -u

: "${TH_SRCDIR:=$(cd "$(dirname "$0")/../.." && pwd)}"
. "$TH_SRCDIR/tests/lib/tap.sh"
. "$TH_SRCDIR/tests/lib/proc.sh"
. "$TH_SRCDIR/tests/lib/a2a.sh"

[ -x "$TH_BIN" ] || skip "no program at $TH_BIN"
require_lighttpd
require_tools curl jq sqlite3

scratch th-tenants
TINY_HARNESS_TENANTS='acme | Acme help desk | Answers for Acme staff ; beta'
export TINY_HARNESS_TENANTS
BASE=$(sh "$SERVER" start "$T/srv" 2) || bail "lighttpd did not start"
DB=$(th_db_of "$T/srv")
echo "# lighttpd at $BASE, state in $T/srv"

# req METHOD PATH BODY [PARTICIPANT] [EXTRA HEADER]: body in $T/body, status in STATUS.
req() {
	local method=$1 path=$2 body=$3 part=${4:-alice} extra=${5:-X-Nothing: 1}
	REQ_DESC="$method $path participant=$part $(printf '%s' "$body" | head -c 200)"
	STATUS=$(curl -s -o "$T/body" -D "$T/headers" -w '%{http_code}' --max-time 30 -X "$method" \
		-H 'A2A-Version: 1.0' -H "X-Participant-Id: $part" -H "$extra" \
		-H 'Content-Type: application/json' ${body:+--data-binary "$body"} "$BASE${path#/}")
}
# with_tenant JSON TENANT: JSON (an object) with "tenant": TENANT added.
with_tenant() { printf '%s' "$1" | jq -c --arg t "$2" '. + {tenant: $t}'; }
not_found_rpc() { [ "$(jqb .error.code)" = -32001 ]; }
not_found_rest() { [ "$STATUS" = 404 ] && jqb .error.status | grep -q NOT_FOUND; }

# ------------------------------------------------------------------ one task in each
req POST / "$(rpc 1 SendMessage "$(msg m1 "default tenant's work")")"
T0=$(jqb .result.task.id)
req POST / "$(rpc 2 SendMessage "$(with_tenant "$(msg m1 "acme's work")" acme)")"
TA=$(jqb .result.task.id)
TASK=$TA
check "TEN-2 a SendMessage with params.tenant creates its task in that tenant" \
	has_task '[ "$T0" != "$TA" ]' \
	'[ "$(sq "SELECT tenant FROM tasks WHERE id = '"'"'$TA'"'"'")" = acme ]' \
	'[ "$(sq "SELECT tenant FROM tasks WHERE id = '"'"'$T0'"'"'")" = "" ]'
check "TEN-5 the same sender's same first messageId in another tenant is a new task, not a resend" \
	'[ "$(sq "SELECT count(*) FROM tasks")" = 2 ]'

req POST /acme/message:send "$(msg m2 "acme over REST")"
TR=$(jqb .task.id)
check "TEN-1 POST /{tenant}/message:send creates the task in the path's tenant" \
	'[ "$STATUS" = 200 ]' '[ "$(sq "SELECT tenant FROM tasks WHERE id = '"'"'$TR'"'"'")" = acme ]'

# ------------------------------------------------------------------ reads across
req POST / "$(rpc 3 GetTask "{\"id\":\"$TA\"}")"
check "TEN-2 GetTask of another tenant's id (JSON-RPC, default tenant) is TaskNotFound" not_found_rpc
req POST / "$(rpc 4 GetTask "{\"id\":\"$T0\",\"tenant\":\"acme\"}")"
check "TEN-2 GetTask of the default tenant's id with params.tenant acme is TaskNotFound" not_found_rpc
req POST / "$(rpc 5 GetTask "{\"id\":\"$TA\",\"tenant\":\"acme\"}")"
check "TEN-2 GetTask in the task's own tenant answers it" '[ "$(jqb .result.id)" = "$TA" ]'
req GET "/tasks/$TA" ""
check "TEN-2 GET /tasks/{acme's id} without a tenant prefix is 404 NOT_FOUND" not_found_rest
req GET "/acme/tasks/$TA" ""
check "TEN-1 GET /acme/tasks/{id} answers the task" '[ "$STATUS" = 200 ]' '[ "$(jqb .id)" = "$TA" ]'
req GET "/beta/tasks/$TA" ""
check "TEN-2 GET /beta/tasks/{acme's id} is 404 NOT_FOUND" not_found_rest
# The body names the default tenant, where T0 is; the path's acme must win.
req POST "/acme/tasks/$T0:cancel" '{"tenant":""}'
check "TEN-1 the path's tenant wins over the body's: POST /acme/tasks/{default's id}:cancel with tenant \"\" is 404; not canceled" \
	not_found_rest '[ "$(sq "SELECT state FROM tasks WHERE id = '"'"'$T0'"'"'")" != TASK_STATE_CANCELED ]'

# ------------------------------------------------------------------ writes across
req POST / "$(rpc 6 SendMessage "$(tmsg m3 "$TA" "sneaking in")")"
check "TEN-2 a follow-up SendMessage naming another tenant's taskId is TaskNotFound; nothing stored" \
	not_found_rpc '[ "$(sq "SELECT count(*) FROM messages WHERE message_id = '"'"'m3'"'"'")" = 0 ]'
req POST "/tasks/$TA:cancel" "{}"
check "TEN-2 POST /tasks/{acme's id}:cancel without the prefix is 404; the task is not canceled" \
	not_found_rest '[ "$(sq "SELECT state FROM tasks WHERE id = '"'"'$TA'"'"'")" != TASK_STATE_CANCELED ]'
req POST / "$(rpc 7 CancelTask "{\"id\":\"$T0\",\"tenant\":\"beta\"}")"
check "TEN-2 CancelTask of the default tenant's id in tenant beta is TaskNotFound" not_found_rpc
req POST / "$(rpc 8 SubscribeToTask "{\"id\":\"$TA\"}")"
check "TEN-2 TEN-3 SubscribeToTask of another tenant's id is TaskNotFound before any stream (its events stay out of reach)" not_found_rpc
req POST "/tasks/$TA/pushNotificationConfigs" "{\"url\":\"https://example.com/hook\"}"
check "TEN-2 creating a push config on another tenant's task is 404; none stored" \
	not_found_rest '[ "$(sq "SELECT count(*) FROM push_configs")" = 0 ]'
req GET "/tasks/$TA/pushNotificationConfigs" ""
check "TEN-2 TEN-3 listing push configs of another tenant's task is 404" not_found_rest

# TEN-3: a sub-task's parent is looked up in the request's tenant like any task id.
ENV=$(jq -nc --arg p "$T0" --arg mt "$EVENT_MT" '{message: {messageId: "sub1", role: "ROLE_USER",
	parts: [{data: {kind: "task", payload: {name: "child", goal: "in acme", parent_tasks: [{task_id: $p}]}}, mediaType: $mt}]}, tenant: "acme"}')
tasks0=$(sq "SELECT count(*) FROM tasks")
req POST / "$(rpc 10 SendMessage "$ENV")"
check "TEN-3 a task envelope in acme naming the default tenant's task as its parent is TaskNotFound; nothing stored" \
	not_found_rpc '[ "$(sq "SELECT count(*) FROM tasks")" = "$tasks0" ]'

# ------------------------------------------------------------------ lists
req POST / "$(rpc 9 ListTasks '{}')"
check "TEN-4 ListTasks without a tenant lists the default tenant's tasks only, totalSize too" \
	'[ "$(jqb "[.result.tasks[].id] | join(\",\")")" = "$T0" ]' '[ "$(jqb .result.totalSize)" = 1 ]'
req GET "/acme/tasks" ""
check "TEN-4 GET /acme/tasks lists acme's two tasks, totalSize 2" \
	'[ "$(jqb ".tasks | length")" = 2 ]' '[ "$(jqb .totalSize)" = 2 ]' \
	'jqb ".tasks[].id" | grep -qx "$TA"' '! jqb ".tasks[].id" | grep -qx "$T0"'
req GET "/beta/tasks" ""
check "TEN-4 a tenant with no tasks lists none" '[ "$(jqb ".tasks | length")" = 0 ]' '[ "$(jqb .totalSize)" = 0 ]'
# TEN-7: alice made the default tenant's task and acme's two; each list shows one side.
req GET "/tasks" ""
cp "$T/body" "$T/list0"
req GET "/acme/tasks" ""
check "TEN-7 the same participant sees disjoint sets of tasks in two tenants" \
	'[ "$(jq -r ".tasks[].id" "$T/list0")" = "$T0" ]' \
	'[ -z "$(jq -r ".tasks[].id" "$T/list0" | grep -Fxf <(jqb ".tasks[].id"))" ]' \
	'[ "$(sq "SELECT count(DISTINCT created_by) FROM tasks WHERE id IN ('"'"'$T0'"'"', '"'"'$TA'"'"')")" = 1 ]'

# ------------------------------------------------------------------ idempotency keys
req POST / "$(rpc 10 SendMessage "$(msg k1 "keyed")")" alice 'Idempotency-Key: key-t'
K0=$(jqb .result.task.id)
req POST /acme/message:send "$(msg k2 "keyed")" alice 'Idempotency-Key: key-t'
check "TEN-5 an Idempotency-Key used in the default tenant is a new key in acme: a new task there, no replay" \
	'[ "$STATUS" = 200 ]' '[ "$(jqb .task.id)" != "$K0" ]' '! grep -qi "^Idempotent-Replayed" "$T/headers"' \
	'[ "$(sq "SELECT tenant FROM tasks WHERE id = '"'"'$(jqb .task.id)'"'"'")" = acme ]'

# ------------------------------------------------------------------ which tenants
req POST /gamma/message:send "$(msg g1 "who is gamma")"
check "TEN-6 a tenant the configuration does not name is refused naming it; nothing stored" \
	'[ "$STATUS" = 400 ]' 'jqb .error.message | grep -q "gamma"' \
	'[ "$(sq "SELECT count(*) FROM tasks WHERE tenant = '"'"'gamma'"'"'")" = 0 ]'
req POST / "$(rpc 11 GetTask '{"id":"x","tenant":"a b"}')"
check "TEN-1 a tenant that breaks the name rule is InvalidParams naming the field" \
	'[ "$(jqb .error.code)" = -32602 ]' 'jqb .error.message | grep -q tenant'

# ------------------------------------------------------------------ cards
req GET /acme/.well-known/agent-card.json "" ""
check "TEN-6 /acme/.well-known/agent-card.json is the card with acme's name and description, every interface naming tenant acme, public" \
	'[ "$STATUS" = 200 ]' '[ "$(jqb .name)" = "Acme help desk" ]' \
	'[ "$(jqb .description)" = "Answers for Acme staff" ]' \
	'[ "$(jqb "[.supportedInterfaces[].tenant] | unique | join(\",\")")" = acme ]'
req GET /beta/.well-known/agent-card.json "" ""
check "TEN-6 a tenant named without card text keeps the agent's name" \
	'[ "$STATUS" = 200 ]' '[ "$(jqb .name)" = tiny-harness ]' \
	'[ "$(jqb ".supportedInterfaces[0].tenant")" = beta ]'
req GET /gamma/.well-known/agent-card.json "" ""
check "TEN-6 the card of a tenant that is not served is 404" '[ "$STATUS" = 404 ]'
req GET /.well-known/agent-card.json "" ""
check "TEN-6 the agent's own card names no tenant" \
	'[ "$STATUS" = 200 ]' '[ "$(jqb "[.supportedInterfaces[].tenant // empty] | length")" = 0 ]'

# ------------------------------------------------------------------ the web app
req GET /acme/ui/ "" "" "Accept: text/html"
check "TEN-8 GET <base>acme/ui/ serves the web app" '[ "$STATUS" = 200 ]' 'grep -q "<title>" "$T/body"'
req GET /acme/ui/session.json "" ""
check "TEN-8 the app's session.json under acme/ui/ names tenant acme (the app then sends it on every call)" \
	'[ "$STATUS" = 200 ]' '[ "$(jqb .tenant)" = acme ]'
req GET /ui/session.json "" ""
check "TEN-8 the app's own session.json names no tenant" '[ "$STATUS" = 200 ]' '[ "$(jqb ".tenant // empty")" = "" ]'
req GET /gamma/ui/ "" ""
check "TEN-8 the app under a tenant that is not served is 404" '[ "$STATUS" = 404 ]'
req GET /acme/ui "" ""
check "TEN-8 <base>acme/ui redirects to <base>acme/ui/" '[ "$STATUS" = 301 ]' \
	'grep -qi "^Location: /acme/ui/" "$T/headers"'

sh "$SERVER" stop "$T/srv"
tap_done
