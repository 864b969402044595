#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Integration test: push notifications through the real lighttpd (conf/lighttpd.conf) with
# two FastCGI workers, delivering to a webhook receiver this script starts on 127.0.0.1
# (a small python3 http.server program written to the scratch directory, bounded to
# 180 s, stopped by its pid).
#
#  1. A config with a token and Bearer credentials (JSON-RPC); two follow-ups (JSON-RPC
#     and HTTP+JSON) and the completion: the receiver gets every event of the task after
#     the config was made, in order, each body the StreamResponse stored in `events`, with
#     Content-Type application/a2a+json, X-A2A-Notification-Token and Authorization; the
#     token is stored sealed and no operation answers it (PUSH-1, PUSH-2, PUSH-4).
#  2. A webhook that answers 500 first: the delivery is retried after its back-off by the
#     next request a worker serves, and arrives (attempts 2); `tiny-harness push` on the
#     command line delivers too (PUSH-2).
#  3. A second server without TINY_HARNESS_PUSH_ALLOW_PRIVATE and without
#     TINY_HARNESS_PUSH_KEY: loopback, private and link-local URLs are refused naming the
#     url and the reason, a token naming TINY_HARNESS_PUSH_KEY; nothing is stored
#     (PUSH-3, PUSH-4).
# TAP output; 77 (skip) when lighttpd, curl, jq, sqlite3 or python3 is missing. TH_KEEP=1
# keeps the scratch directory.
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
require_tools curl jq sqlite3 python3

scratch th-push
RXPID=
on_exit '[ -n "$RXPID" ] && kill "$RXPID" 2>/dev/null'

# ------------------------------------------------------------------ the webhook receiver
# Every POST becomes one JSON line in rx.log: path, the headers that matter, the body and
# the status answered. /hook answers 200; /flaky answers 500 to its first request, then
# 200. It writes its port to rx.port and exits by itself after its lifetime.
cat >"$T/rx.py" <<'EOF'
import json, os, sys, threading
from http.server import BaseHTTPRequestHandler, HTTPServer

port_file, log_file, lifetime = sys.argv[1], sys.argv[2], float(sys.argv[3])
seen = {}

class Hook(BaseHTTPRequestHandler):
    def do_POST(self):
        n = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(n).decode("utf-8", "replace")
        count = seen.get(self.path, 0)
        seen[self.path] = count + 1
        status = 500 if self.path == "/flaky" and count == 0 else 200
        rec = {"path": self.path, "status": status, "body": body,
               "ctype": self.headers.get("Content-Type"),
               "token": self.headers.get("X-A2A-Notification-Token"),
               "auth": self.headers.get("Authorization"),
               "seq": self.headers.get("X-Tiny-Harness-Event-Seq")}
        with open(log_file, "a") as f:
            f.write(json.dumps(rec) + "\n")
        self.send_response(status)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args):
        pass

srv = HTTPServer(("127.0.0.1", 0), Hook)
threading.Timer(lifetime, lambda: os._exit(0)).start()
with open(port_file + ".tmp", "w") as f:
    f.write(str(srv.server_address[1]))
os.rename(port_file + ".tmp", port_file)
srv.serve_forever()
EOF
: >"$T/rx.log"
python3 "$T/rx.py" "$T/rx.port" "$T/rx.log" 180 >"$T/rx.out" 2>&1 &
RXPID=$!
i=0
while [ ! -s "$T/rx.port" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
[ -s "$T/rx.port" ] || bail "the webhook receiver did not start: $(cat "$T/rx.out")"
RXPORT=$(cat "$T/rx.port")
HOOK=http://127.0.0.1:$RXPORT

# ------------------------------------------------------------------ the server
KEY=8f1c2b7a3e9d4c6b5a0f1e2d3c4b5a69788796a5b4c3d2e1f00112233445566f
export TINY_HARNESS_PUSH_ALLOW_PRIVATE=1
export TINY_HARNESS_PUSH_KEY=$KEY
export TINY_HARNESS_PUSH_RETRY_BASE_MS=300
export TINY_HARNESS_PUSH_RETRY_MAX_MS=600
export TINY_HARNESS_PUSH_TIMEOUT_MS=3000
BASE=$(sh "$SERVER" start "$T/srv" 2) || bail "lighttpd did not start"
DB=$(th_db_of "$T/srv")
echo "# lighttpd at $BASE (2 workers), webhook receiver at $HOOK (pid $RXPID)"

# received PATH — how many POSTs the receiver logged for PATH
received() { jq -s --arg p "$1" '[.[] | select(.path == $p)] | length' "$T/rx.log" 2>/dev/null; }
# wait_received PATH N — poll (10 s) until the receiver logged N POSTs for PATH
wait_received() {
	local i=0
	while [ "$(received "$1")" -lt "$2" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
	[ "$(received "$1")" -ge "$2" ]
}

# ------------------------------------------------------------------ 1. every event, in order
rpc_call SendMessage "$(tmsg m1 '' 'plan the release')"
TASK=$(jqb .result.task.id)
[ -n "$TASK" ] && [ "$TASK" != null ] || bail "SendMessage did not create a task"

rpc_call CreateTaskPushNotificationConfig "$(jq -nc --arg t "$TASK" --arg u "$HOOK/hook" \
	'{taskId: $t, id: "hook1", url: $u, token: "tok-abc-123", authentication: {scheme: "Bearer", credentials: "cred-xyz-789"}}')"
check "PUSH-1 CreateTaskPushNotificationConfig (JSON-RPC) answers the config, without token or credentials (PUSH-4)" \
	'[ "$STATUS" = 200 ]' '[ "$(jqb .result.id)" = hook1 ]' '[ "$(jqb .result.taskId)" = "$TASK" ]' \
	'[ "$(jqb .result.url)" = "$HOOK/hook" ]' '[ "$(jqb .result.authentication.scheme)" = Bearer ]' \
	'! grep -q -e tok-abc -e cred-xyz "$T/body"'
SEQ0=$(sq "SELECT max(seq) FROM events WHERE task_id = '$TASK'")

http GET "/tasks/$TASK/pushNotificationConfigs/hook1"
check "PUSH-1 GET /tasks/{id}/pushNotificationConfigs/{id} (HTTP+JSON) returns it, still without secrets" \
	'[ "$STATUS" = 200 ]' '[ "$(jqb .id)" = hook1 ]' '! grep -q -e tok-abc -e cred-xyz "$T/body"'
http GET "/tasks/$TASK/pushNotificationConfigs"
check "PUSH-1 GET /tasks/{id}/pushNotificationConfigs lists it with an empty nextPageToken" \
	'[ "$STATUS" = 200 ]' '[ "$(jqb ".configs | length")" = 1 ]' '[ "$(jqb .nextPageToken)" = "" ]'
REQ_DESC="$DB: push_configs row of hook1"
# "Not in clear text": no byte string of the secret inside the stored value. SQLite and
# PostgreSQL name that search differently (instr over hex, position over bytea).
if th_db_is_pg "$DB"; then
	not_in() { echo "position(CAST('$2' AS bytea) IN CAST($1 AS bytea)) = 0"; }
else
	not_in() { echo "instr(hex($1), hex('$2')) = 0"; }
fi
check "PUSH-4 token and credentials are stored sealed, not in clear text" \
	'[ "$(sq "SELECT count(*) FROM push_configs WHERE config_id = '"'hook1'"' AND length(token_enc) > 0 AND length(auth_credentials_enc) > 0 AND $(not_in token_enc tok-abc) AND $(not_in auth_credentials_enc cred-xyz)")" = 1 ]'

rpc_call SendMessage "$(tmsg m2 "$TASK" 'first follow-up')"
[ "$STATUS" = 200 ] || bail "follow-up failed: $(cat "$T/body")"
http POST /message:send "$(tmsg m3 "$TASK" 'second follow-up over REST')"
[ "$STATUS" = 200 ] || bail "REST follow-up failed: $(cat "$T/body")"
rpc_call SendMessage "$(ctl c1 "$TASK")"
check "the task completes" '[ "$(jqb .result.task.status.state)" = TASK_STATE_COMPLETED ]'

NEV=$(sq "SELECT count(*) FROM events WHERE task_id = '$TASK' AND seq > $SEQ0")
wait_received /hook "$NEV"
sq "SELECT seq FROM events WHERE task_id = '$TASK' AND seq > $SEQ0 ORDER BY seq" >"$T/want.seq"
jq -r 'select(.path == "/hook") | .seq' "$T/rx.log" >"$T/got.seq"
REQ_DESC="events seq > $SEQ0: $(tr '\n' ' ' <"$T/want.seq"); received: $(tr '\n' ' ' <"$T/got.seq")"
check "PUSH-2 the webhook received every event of the task ($NEV) once, in sequence order" \
	'[ "$NEV" -ge 3 ]' '[ "$(received /hook)" = "$NEV" ]' 'cmp -s "$T/want.seq" "$T/got.seq"'

# Bodies: each event's StreamResponse as the program gives it out (`tasks events`: the
# stored event with its references filled in, STORE-10), compared as JSON.
bodies_ok=1
th_db_events "$DB" "$TASK" >"$T/events.log"
while read -r seq; do
	awk -F '\t' -v s="$seq" '$1 == s { sub(/^[^\t]*\t[^\t]*\t/, ""); print }' "$T/events.log" |
		jq -S . >"$T/want.body"
	jq -r --arg s "$seq" 'select(.path == "/hook" and .seq == $s) | .body' "$T/rx.log" |
		jq -S . >"$T/got.body"
	cmp -s "$T/want.body" "$T/got.body" || { bodies_ok=0; REQ_DESC="body of seq $seq differs"; }
done <"$T/want.seq"
check "PUSH-2 each body is the event's StreamResponse as the event log holds it" '[ "$bodies_ok" = 1 ]'
jq -s '[.[] | select(.path == "/hook") | .body | fromjson | keys | length == 1 and (.[0] | IN("task", "message", "statusUpdate", "artifactUpdate"))] | all' "$T/rx.log" >"$T/kinds"
last_state=$(jq -s -r '[.[] | select(.path == "/hook")] | last | .body | fromjson | .statusUpdate.status.state // .task.status.state' "$T/rx.log")
check "PUSH-2 every body is a StreamResponse with one member; the last says TASK_STATE_COMPLETED" \
	'[ "$(cat "$T/kinds")" = true ]' '[ "$last_state" = TASK_STATE_COMPLETED ]'
check "PUSH-2 every POST carried Content-Type application/a2a+json, the token and the Authorization header" \
	'[ "$(jq -s "[.[] | select(.path == \"/hook\") | .ctype == \"application/a2a+json\" and .token == \"tok-abc-123\" and .auth == \"Bearer cred-xyz-789\"] | all" "$T/rx.log")" = true ]'
check "PUSH-2 the outbox holds every delivery as delivered, none pending" \
	'[ "$(sq "SELECT count(*) FROM push_outbox WHERE task_id = '"'$TASK'"' AND config_id = '"'hook1'"' AND state = '"'delivered'"'")" = "$NEV" ]' \
	'[ "$(sq "SELECT count(*) FROM push_outbox WHERE state IN ('"'pending'"', '"'sending'"')")" = 0 ]'

# ------------------------------------------------------------------ 2. retried after a 500
rpc_call SendMessage "$(tmsg f1 '' 'a flaky receiver')"
TASK2=$(jqb .result.task.id)
http POST "/tasks/$TASK2/pushNotificationConfigs" "$(jq -nc --arg u "$HOOK/flaky" '{id: "flaky", url: $u}')"
check "PUSH-1 POST /tasks/{id}/pushNotificationConfigs (HTTP+JSON) creates a config without secrets" \
	'[ "$STATUS" = 200 ] || [ "$STATUS" = 201 ]' '[ "$(jqb .id)" = flaky ]' '[ "$(jqb .taskId)" = "$TASK2" ]'
SEQ2=$(sq "SELECT max(seq) FROM events WHERE task_id = '$TASK2'")
rpc_call SendMessage "$(tmsg f2 "$TASK2" 'go')"
NEV2=$(sq "SELECT count(*) FROM events WHERE task_id = '$TASK2' AND seq > $SEQ2")
FIRST=$(sq "SELECT min(seq) FROM events WHERE task_id = '$TASK2' AND seq > $SEQ2")
wait_received /flaky "$NEV2"
first_status=$(jq -s -r '[.[] | select(.path == "/flaky")][0] | "\(.seq) \(.status)"' "$T/rx.log")
pending=$(sq "SELECT state || ' ' || attempts FROM push_outbox WHERE task_id = '$TASK2' AND seq = $FIRST")
REQ_DESC="first POST to /flaky: $first_status; outbox row: $pending"
check "PUSH-2 a 500 leaves the delivery pending with its attempt counted and the error kept" \
	'[ "$first_status" = "$FIRST 500" ]' '[ "$pending" = "pending 1" ]' \
	'[ "$(sq "SELECT last_error FROM push_outbox WHERE task_id = '"'$TASK2'"' AND seq = $FIRST" | grep -c "HTTP 500")" = 1 ]'
sleep 0.7 # past the back-off (300 ms)
http GET "/tasks/$TASK2"
wait_received /flaky $((NEV2 + 1))
row=$(sq "SELECT state || ' ' || attempts FROM push_outbox WHERE task_id = '$TASK2' AND seq = $FIRST")
REQ_DESC="after the next request: outbox row $row; /flaky POSTs $(received /flaky)"
check "PUSH-2 the next request a worker serves retries it after the back-off: delivered on attempt 2" \
	'[ "$row" = "delivered 2" ]' \
	'[ "$(jq -s -r "[.[] | select(.path == \"/flaky\" and .seq == \"$FIRST\") | .status] | join(\",\")" "$T/rx.log")" = "500,200" ]' \
	'[ "$(sq "SELECT count(*) FROM push_outbox WHERE task_id = '"'$TASK2'"' AND state != '"'delivered'"'")" = 0 ]'

# The command line delivers what is due, too (cron).
sq "UPDATE push_outbox SET state = 'pending', next_attempt_ms = 0 WHERE task_id = '$TASK2' AND seq = $FIRST" >/dev/null
before=$(received /flaky)
TINY_HARNESS_DB=$DB "$TH_BIN" push >"$T/cli.out" 2>&1
REQ_DESC="tiny-harness push: $(cat "$T/cli.out")"
check "PUSH-2 tiny-harness push delivers due rows from the command line" \
	'grep -q "delivered 1 push notification" "$T/cli.out"' '[ "$(received /flaky)" = $((before + 1)) ]'

# ------------------------------------------------------------------ 3. refusals on a server without the switches
HTTP_BASE=$(env -u TINY_HARNESS_PUSH_ALLOW_PRIVATE -u TINY_HARNESS_PUSH_KEY sh "$SERVER" start "$T/srv2" 1) ||
	bail "the second lighttpd did not start"
DB2=$(th_db_of "$T/srv2")
rpc_call SendMessage "$(tmsg s1 '' 'strict server')"
TASK3=$(jqb .result.task.id)
refused_rpc() { # refused_rpc URL WORDS [URL-AS-QUOTED]
	rpc_call CreateTaskPushNotificationConfig "$(jq -nc --arg t "$TASK3" --arg u "$1" '{taskId: $t, url: $u}')"
	local msg
	msg=$(jqb .error.message)
	[ "$STATUS" = 200 ] && [ "$(jqb .error.code)" = -32602 ] &&
		[[ "$msg" == "url '${3:-$1}'"* ]] && [[ "$msg" == *"$2"* ]]
}
check "PUSH-3 without push_allow_private a loopback webhook is refused (InvalidParams naming the url and the reason)" \
	'refused_rpc "$HOOK/hook" "loopback address"' 'jqb .error.message | grep -q push_allow_private'
check "PUSH-3 private and link-local webhooks are refused too" \
	'refused_rpc "http://10.1.2.3/hook" "private address"' \
	'refused_rpc "http://192.168.0.10/hook" "private address"' \
	'refused_rpc "http://169.254.1.1/latest" "link-local"' \
	'refused_rpc "http://[::1]:$RXPORT/hook" "loopback"'
check "PUSH-3 http(s) only, no userinfo" \
	'refused_rpc "ftp://93.184.216.34/x" "scheme ftp"' \
	'refused_rpc "http://u:p@93.184.216.34/x" "user name or password" "http://***@93.184.216.34/x"'
http POST "/tasks/$TASK3/pushNotificationConfigs" "$(jq -nc --arg u "$HOOK/hook" '{url: $u}')"
check "PUSH-3 A2A-4 over HTTP+JSON the refusal is 400 INVALID_ARGUMENT" \
	'[ "$STATUS" = 400 ]' '[ "$(jqb .error.status)" = INVALID_ARGUMENT ]' 'jqb .error.message | grep -q loopback'
rpc_call CreateTaskPushNotificationConfig "$(jq -nc --arg t "$TASK3" '{taskId: $t, url: "http://93.184.216.34/hook", token: "t"}')"
check "PUSH-4 without TINY_HARNESS_PUSH_KEY a token is refused naming the variable" \
	'[ "$(jqb .error.code)" = -32004 ]' 'jqb .error.message | grep -q TINY_HARNESS_PUSH_KEY'
REQ_DESC="$DB2: SELECT count(*) FROM push_configs"
check "PUSH-3 nothing was stored by the refused creates" \
	'[ "$(th_db_sql "$DB2" "SELECT count(*) FROM push_configs")" = 0 ]'
rpc_call CreateTaskPushNotificationConfig "$(jq -nc --arg t "$TASK3" '{taskId: $t, url: "http://93.184.216.34/hook"}')"
check "PUSH-3 a public address without secrets is accepted there" \
	'[ "$(jqb .result.url)" = http://93.184.216.34/hook ]'
rpc_call DeleteTaskPushNotificationConfig "$(jq -nc --arg t "$TASK3" --arg id "$(jqb .result.id)" '{taskId: $t, id: $id}')"
check "PUSH-1 DeleteTaskPushNotificationConfig answers result null and removes it" \
	'[ "$(jqb "has(\"result\") and .result == null")" = true ]' \
	'[ "$(th_db_sql "$DB2" "SELECT count(*) FROM push_configs")" = 0 ]'
HTTP_BASE=

tap_done
