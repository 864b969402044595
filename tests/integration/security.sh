#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Security findings of issue 27 through the real lighttpd (conf/lighttpd.conf, two FastCGI
# workers) and, for the model's environment, the program run as plain CGI: one TAP row per
# finding, named with its requirement id.
#
#  SEC-4  the forged cancel (POST <base>/tasks/<id>:cancel?A2A-Version=1.0, empty body, no
#         Content-Type: what fetch no-cors sends) is refused and the task stays as it was;
#         Host: rebind.attacker.example is refused (DNS rebinding); a foreign Origin is
#         refused, the same origin accepted; API answers carry Cache-Control: no-store; the
#         web app's pages forbid framing.
#  CH-2   SEC-2: whether a side channel exists is news only to its members: carol's probes
#         of alice/secret (a message over HTTP+JSON, JSON-RPC and SendStreamingMessage,
#         opening it with 'to', a help_request, a help_reply) get byte-identical answers
#         from a task where it exists and one where it does not, and store nothing; her
#         GetTask, ListTasks and first SubscribeToTask Task are the same bytes before
#         and after alice and bob used it (decision-042).
#  SEC-6  a database, its WAL and SHM created under umask 000 are 0600 and its directory
#         0750; a model program run under CGI sees no HTTP_COOKIE, HTTP_AUTHORIZATION,
#         OPENAI_API_KEY or PGPASSWORD; `tiny-harness tasks list` prints a task name's ESC
#         escaped (log lines: check_util); a push to 168.63.129.16 is refused with push_allow_private = 1; a push URL's
#         query token reaches neither the log nor push_outbox.last_error.
# TAP output; 77 (skip) when lighttpd, curl, jq or sqlite3 is missing. TH_KEEP=1 keeps the
# scratch directory.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
set -u

: "${TH_SRCDIR:=$(cd "$(dirname "$0")/../.." && pwd)}"
TAP_BODY_WIDTH=600
. "$TH_SRCDIR/tests/lib/tap.sh"
. "$TH_SRCDIR/tests/lib/proc.sh"
. "$TH_SRCDIR/tests/lib/a2a.sh"

[ -x "$TH_BIN" ] || skip "no program at $TH_BIN"
require_lighttpd
require_tools curl jq sqlite3

scratch th-security

# raw METHOD URL [curl args...] — one request exactly as given (no helper headers); sets
# STATUS and leaves $T/body and $T/headers.
raw() {
	local method=$1 url=$2
	shift 2
	REQ_DESC="$method $url $*"
	STATUS=$(curl -s -o "$T/body" -D "$T/headers" -w '%{http_code}' --max-time 30 -X "$method" "$@" "$url")
}
header() { tr -d '\r' <"$T/headers" | grep -i "^$1:" | head -n1 | sed 's/^[^:]*: *//'; }
state_of() { # the task's state as its owner reads it; $T/body is kept
	cp "$T/body" "$T/body.keep"
	http GET "/tasks/$1" "" alice >/dev/null
	jqb .status.state
	mv "$T/body.keep" "$T/body"
}

# ------------------------------------------------------------------ the server
# umask 000: the modes below must not depend on it. anonymous_participant makes the
# forged cancel as dangerous as the audit found it (no header needed to act as alice).
export TINY_HARNESS_ANONYMOUS_PARTICIPANT=alice
export TINY_HARNESS_PUSH_ALLOW_PRIVATE=1
export TINY_HARNESS_PUSH_RETRY_BASE_MS=200
export TINY_HARNESS_PUSH_RETRY_MAX_MS=400
export TINY_HARNESS_PUSH_TIMEOUT_MS=2000
SQLITE=1
if [ -n "${TH_TEST_PG:-}" ]; then
	SQLITE=0
	BASE=$(umask 000 && sh "$SERVER" start "$T/srv" 2) || bail "lighttpd did not start"
else
	BASE=$(umask 000 && TH_SERVER_DB="$T/data/private/th.db" sh "$SERVER" start "$T/srv" 2) ||
		bail "lighttpd did not start"
fi
DB=$(th_db_of "$T/srv")
HOSTPORT=${BASE#http://}
HOSTPORT=${HOSTPORT%/}
echo "# lighttpd at $BASE (2 workers), database $DB"

http POST /message:send "$(tmsg m1 '' 'keep this task open')"
TASK=$(jqb .task.id)
has_task || bail "SendMessage did not create a task: $(cat "$T/body")"
BEFORE=$(state_of "$TASK")

# ------------------------------------------------------------------ SEC-4
raw POST "${BASE}tasks/$TASK:cancel?A2A-Version=1.0" -H 'Content-Type:' --data-binary ''
AFTER=$(state_of "$TASK")
check "SEC-4 a forged cancel (empty body, no Content-Type, A2A-Version in the query) is refused and the task is not canceled" \
	'[ "$STATUS" = 415 ] || [ "$STATUS" = 400 ]' '[ "$AFTER" = "$BEFORE" ]' '[ "$AFTER" != TASK_STATE_CANCELED ]'

raw POST "${BASE}tasks/$TASK:cancel?A2A-Version=1.0" -H 'Content-Type: application/json' --data-binary ''
AFTER=$(state_of "$TASK")
check "SEC-4 A2A-Version in the query does not count on a POST, even with a JSON type" \
	'[ "$STATUS" = 400 ]' 'grep -q "header" "$T/body"' '[ "$AFTER" = "$BEFORE" ]'

raw GET "${BASE}tasks/$TASK" -H 'A2A-Version: 1.0' -H 'X-Participant-Id: alice' \
	-H 'Host: rebind.attacker.example' -H 'Origin: http://rebind.attacker.example'
check "SEC-4 Host: rebind.attacker.example (DNS rebinding) is refused with 403 naming the header" \
	'[ "$STATUS" = 403 ]' 'grep -q "Host .rebind.attacker.example" "$T/body"' '! grep -q "$TASK" "$T/body"'

raw POST "$BASE" -H 'Content-Type: application/json' -H 'A2A-Version: 1.0' -H 'X-Participant-Id: alice' \
	-H 'Origin: https://evil.example' --data-binary "$(rpc 1 CancelTask "{\"id\":\"$TASK\"}")"
AFTER=$(state_of "$TASK")
check "SEC-4 a foreign Origin is refused with 403 naming the header, and nothing changes" \
	'[ "$STATUS" = 403 ]' 'grep -q "Origin .https://evil.example" "$T/body"' '[ "$AFTER" = "$BEFORE" ]'

raw POST "$BASE" -H 'Content-Type: application/json' -H 'A2A-Version: 1.0' -H 'X-Participant-Id: alice' \
	-H "Origin: http://$HOSTPORT" --data-binary "$(rpc 2 GetTask "{\"id\":\"$TASK\"}")"
check "SEC-4 the same origin is served" \
	'[ "$STATUS" = 200 ]' '[ "$(jqb .result.id)" = "$TASK" ]'
check "SEC-4 a JSON-RPC answer carries Cache-Control: no-store" '[ "$(header Cache-Control)" = no-store ]'
raw GET "${BASE}tasks/$TASK" -H 'A2A-Version: 1.0' -H 'X-Participant-Id: alice'
check "SEC-4 an HTTP+JSON answer carries Cache-Control: no-store" \
	'[ "$STATUS" = 200 ]' '[ "$(header Cache-Control)" = no-store ]'
raw GET "${BASE}tasks/no-such-task" -H 'A2A-Version: 1.0' -H 'X-Participant-Id: alice'
check "SEC-4 an error answer carries Cache-Control: no-store" \
	'[ "$STATUS" = 404 ]' '[ "$(header Cache-Control)" = no-store ]'

raw GET "${BASE}ui/" -H 'Accept: text/html'
check "SEC-4 the web app's page forbids framing (frame-ancestors 'none', X-Frame-Options: DENY)" \
	'[ "$STATUS" = 200 ]' "header Content-Security-Policy | grep -q \"frame-ancestors 'none'\"" \
	'[ "$(header X-Frame-Options)" = DENY ]'

raw POST "${BASE}tasks/$TASK:cancel" -H 'Content-Type: application/json' -H 'A2A-Version: 1.0' --data-binary ''
check "SEC-4 the same cancel as a client sends it (JSON type, header version) still cancels" \
	'[ "$STATUS" = 200 ]' '[ "$(jqb .status.state)" = TASK_STATE_CANCELED ]'

# ------------------------------------------------------------------ SEC-6 files
if [ $SQLITE = 1 ]; then
	mode() { stat -c %a "$1" 2>/dev/null || echo missing; }
	REQ_DESC="modes: dir $(mode "$T/data/private") db $(mode "$DB") wal $(mode "$DB-wal") shm $(mode "$DB-shm")"
	check "SEC-6 under umask 000 the database, its WAL and SHM are 0600 and its directory 0750" \
		'[ "$(mode "$DB")" = 600 ]' '[ "$(mode "$DB-wal")" = 600 ]' '[ "$(mode "$DB-shm")" = 600 ]' \
		'[ "$(mode "$T/data/private")" = 750 ]' '[ "$(mode "$T/data")" = 750 ]'
else
	ok "SEC-6 database file modes # SKIP PostgreSQL (TH_TEST_PG) has no database file"
fi

# ------------------------------------------------------------------ SEC-6 push
http POST "/tasks/$TASK/pushNotificationConfigs" '{"url":"http://168.63.129.16/machine"}'
check "SEC-6 a push to 168.63.129.16 (cloud metadata) is refused even with push_allow_private = 1" \
	'[ "$STATUS" = 400 ]' 'grep -q "cloud metadata" "$T/body"'

http POST /message:send "$(tmsg m2 '' 'a task with a webhook')"
TASK2=$(jqb .task.id)
CLOSED=$(random_port)
http POST "/tasks/$TASK2/pushNotificationConfigs" "{\"url\":\"http://127.0.0.1:$CLOSED/hook?token=Sekrit-Tok-42\"}"
[ "$STATUS" = 200 ] || bail "the push config was not created: $(cat "$T/body")"
http POST /message:send "$(tmsg m3 "$TASK2" 'an event to deliver')"
# Retries run on the next requests a worker serves; the workers' stderr (their log) is
# lighttpd's stderr, lighttpd.out, or its error.log.
LOGS=("$T/srv/lighttpd.out" "$T/srv/error.log")
i=0
while [ $i -lt 40 ]; do
	http GET "/tasks/$TASK2" >/dev/null
	grep -q 'push delivery' "${LOGS[@]}" 2>/dev/null && break
	sleep 0.2
	i=$((i + 1))
done
LASTERR=$(sq "SELECT COALESCE(max(last_error), '') FROM push_outbox WHERE task_id = '$TASK2'")
REQ_DESC="log: $(cat "${LOGS[@]}" 2>/dev/null | grep 'push delivery' | head -n 2) | last_error: $LASTERR"
check "SEC-6 a push URL's query token is neither in the log nor in push_outbox.last_error" \
	'[ -n "$LASTERR" ]' 'cat "${LOGS[@]}" | grep -q "push delivery"' \
	'! cat "${LOGS[@]}" | grep -q Sekrit-Tok' '! printf "%s" "$LASTERR" | grep -q Sekrit-Tok' \
	'printf "%s" "$LASTERR" | grep -q "token=\*\*\*"'

# A task's name comes from its first message; an operator's terminal must not run the
# escape codes in it (th_log escapes log lines the same way: check_util).
http POST /message:send "$(jq -nc --arg x "$(printf 'esc\033[31mRED\033]0;title\007')" \
	'{message: {messageId: "m9", role: "ROLE_USER", parts: [{text: $x}]}}')"
(cd "$T" && TINY_HARNESS_DB="$DB" "$TH_BIN" tasks list >"$T/list.out" 2>"$T/list.err")
REQ_DESC="tiny-harness tasks list: $(grep esc "$T/list.out" | cat -v)"
check "SEC-6 tasks list prints a name's escape codes escaped (\\x1b), never raw" \
	'grep -q "esc\\\\x1b\[31mRED" "$T/list.out"' '! grep -q "$(printf "\033")" "$T/list.out"' \
	'! grep -q "$(printf "\007")" "$T/list.out"'

# ------------------------------------------------------------------ SEC-6 model environment
# Under CGI the request's headers are environment variables of the worker; the exec
# backend must not hand them (or the deployment's secrets) to the model program.
cat >"$T/model.sh" <<'EOF'
#!/bin/sh
cat >/dev/null
env >"$(dirname "$0")/model.env"
printf '{"text":"seen"}\n'
EOF
chmod +x "$T/model.sh"
printf '%s' "$(rpc 1 SendMessage "$(tmsg m1 '' 'hello')")" >"$T/cgi.req"
(cd "$T" && env -i "PATH=$PATH" GATEWAY_INTERFACE=CGI/1.1 REQUEST_METHOD=POST REQUEST_URI=/ \
	SCRIPT_NAME= PATH_INFO=/ CONTENT_TYPE=application/json CONTENT_LENGTH="$(wc -c <"$T/cgi.req")" \
	HTTP_HOST=127.0.0.1:8080 HTTP_A2A_VERSION=1.0 HTTP_X_PARTICIPANT_ID=alice REMOTE_ADDR=127.0.0.1 \
	HTTP_COOKIE=sid=cookie-secret HTTP_AUTHORIZATION='Basic YWxpY2U6cHc=' \
	OPENAI_API_KEY=sk-secret PGPASSWORD=pg-secret TINY_HARNESS_PUSH_KEY=00 \
	TINY_HARNESS_DB="$T/cgi/th.db" TINY_HARNESS_MODEL=exec TINY_HARNESS_MODEL_COMMAND="$T/model.sh" \
	"$TH_BIN" <"$T/cgi.req" >"$T/cgi.out" 2>"$T/cgi.err")
REQ_DESC="CGI SendMessage with the exec model; the program saw: $(cut -d= -f1 "$T/model.env" 2>/dev/null | tr '\n' ' ')"
check "SEC-6 a model program under CGI sees no HTTP_COOKIE, HTTP_AUTHORIZATION, OPENAI_API_KEY, PGPASSWORD or TINY_HARNESS_*" \
	'[ -s "$T/model.env" ]' '! grep -q "^HTTP_" "$T/model.env"' '! grep -q -e cookie-secret -e sk-secret -e pg-secret "$T/model.env"' \
	'! grep -q "^TINY_HARNESS_" "$T/model.env"' 'grep -q "^PATH=" "$T/model.env"'

# ------------------------------------------------------------------ CH-2 SEC-2 channel probes
# Whether a side channel exists is news only to its members, by every path. Tasks A and B
# are alike (alice's, with bob and carol); on A alice and bob share the side channel
# alice/secret. carol sends each probe for alice/secret to both tasks, the same bytes but
# the task id; the two answers must be byte-identical once each task's id reads TASK.
mk_task() { # mk_task MID — a task of alice's with bob and carol on it; prints its id
	local id
	http POST /message:send "$(tmsg "$1" '' 'a task with three people')" alice
	id=$(jqb .task.id)
	http POST /message:send "$(tmsg "$1-b" "$id" '/invite bob assignee')" alice
	http POST /message:send "$(tmsg "$1-c" "$id" '/invite carol assignee')" alice
	printf %s "$id"
}
chan_msg() { # chan_msg MID TASK VALUE — a SendMessage params object with a channel part
	jq -nc --arg m "$1" --arg t "$2" --argjson v "$3" --arg mt "$CHANNEL_MT" \
		'{message: {messageId: $m, role: "ROLE_USER", taskId: $t, parts: [{data: $v, mediaType: $mt}]}}'
}
TA=$(mk_task pa)
TB=$(mk_task pb)
# carol's reads of A before the side channel exists, for the read rows below.
http GET "/tasks/$TA?historyLength=50" "" carol
cp "$T/body" "$T/get.before"
http GET "/tasks?historyLength=50" "" carol
cp "$T/body" "$T/list.before"
sub_first() { # sub_first OUT — carol's SubscribeToTask of A: its first event's data (its
	# id line is the task's last event sequence number, which counts every event: it tells
	# that something happened, never on which channel; decision-042)
	curl -s -N --max-time 2 -H 'A2A-Version: 1.0' -H 'X-Participant-Id: carol' \
		-H 'Accept: text/event-stream' "${BASE}tasks/$TA:subscribe" 2>/dev/null |
		tr -d '\r' | awk '/^$/ { if (seen) exit; next } /^data:/ { seen = 1; print }' >"$1"
}
sub_first "$T/sub.before"
http POST /message:send "$(chan_msg s1 "$TA" '{"channel_id":"alice/secret","sender":"alice","kind":"message","text":"the code is 4711","to":["bob"]}')" alice
S1=$STATUS
http POST /message:send "$(chan_msg s2 "$TA" '{"channel_id":"alice/secret","sender":"bob","kind":"message","text":"noted"}')" bob
[ "$S1" = 200 ] && [ "$STATUS" = 200 ] || bail "the side channel was not opened: $(cat "$T/body")"
ROWS_BEFORE=$(sq "SELECT (SELECT count(*) FROM messages) || ' ' || (SELECT count(*) FROM channels)")

# probe NAME HOW VALUE — carol sends VALUE (a channel part) to A and to B: HOW is rest
# (message:send), rpc (SendMessage) or stream (SendStreamingMessage over JSON-RPC).
probe() {
	local how=$1 value=$2 t out
	for t in "$TA" "$TB"; do
		case $how in
		rest) http POST /message:send "$(chan_msg probe "$t" "$value")" carol ;;
		rpc) http POST / "$(rpc 7 SendMessage "$(chan_msg probe "$t" "$value")")" carol ;;
		stream) http POST / "$(rpc 7 SendStreamingMessage "$(chan_msg probe "$t" "$value")")" carol ;;
		esac
		out=$T/probe.$([ "$t" = "$TA" ] && echo a || echo b)
		{ echo "$STATUS"; sed "s/$t/TASK/g" "$T/body"; } >"$out"
	done
	REQ_DESC="carol, $how, $value: A: $(head -c 300 "$T/probe.a" | tr '\n' ' ') | B: $(head -c 300 "$T/probe.b" | tr '\n' ' ')"
}
same() { cmp -s "$T/probe.a" "$T/probe.b"; }
refused() { grep -q "is not open to you" "$T/probe.a" && ! grep -q 4711 "$T/probe.a"; }

probe rest '{"channel_id":"alice/secret","sender":"carol","kind":"message","text":"hi"}'
check "CH-2 SEC-2 a message to a side channel (HTTP+JSON): the same bytes whether it exists or not" refused same
probe rpc '{"channel_id":"alice/secret","sender":"carol","kind":"message","text":"hi"}'
check "CH-2 SEC-2 a message to a side channel (JSON-RPC): the same bytes whether it exists or not" refused same
probe stream '{"channel_id":"alice/secret","sender":"carol","kind":"message","text":"hi"}'
check "CH-2 SEC-2 a message to a side channel (SendStreamingMessage): the same bytes whether it exists or not" refused same
probe rpc '{"channel_id":"alice/secret","sender":"carol","kind":"message","text":"hi","to":["bob"]}'
check "CH-2 SEC-2 opening a channel under the id (to: a participant): the same bytes whether it is taken or not" refused same
probe rpc '{"channel_id":"alice/secret","sender":"carol","kind":"message","text":"hi","to":["mallory"]}'
check "CH-2 SEC-2 opening it with a non-participant in to: the same bytes whether it is taken or not" refused same
probe rpc '{"channel_id":"alice/secret","sender":"carol","kind":"help_request","text":"hi","to":["bob"]}'
check "CH-2 SEC-2 a help_request on the channel: the same bytes whether it exists or not" refused same
probe rest '{"channel_id":"alice/secret","sender":"carol","kind":"help_reply","text":"hi","in_reply_to":"r1"}'
check "CH-2 SEC-2 a help_reply on the channel: the same bytes whether it exists or not" refused same
REQ_DESC="messages and channels before the probes: $ROWS_BEFORE, after: $(sq "SELECT (SELECT count(*) FROM messages) || ' ' || (SELECT count(*) FROM channels)")"
check "CH-2 SEC-2 no probe stored anything" \
	'[ "$ROWS_BEFORE" = "$(sq "SELECT (SELECT count(*) FROM messages) || '"' '"' || (SELECT count(*) FROM channels)")" ]'

http GET "/tasks/$TA?historyLength=50" "" carol
REQ_DESC="carol's GetTask of A before and after alice and bob used the side channel"
check "CH-2 SEC-2 carol's GetTask of a task is byte-identical before and after a side channel she is not in was opened and used" \
	'[ "$STATUS" = 200 ]' 'cmp -s "$T/get.before" "$T/body"'
http GET "/tasks?historyLength=50" "" carol
check "CH-2 SEC-2 carol's ListTasks is byte-identical before and after" \
	'[ "$STATUS" = 200 ]' 'cmp -s "$T/list.before" "$T/body"'
sub_first "$T/sub.after"
REQ_DESC="carol's first SubscribeToTask event before: $(head -c 200 "$T/sub.before") after: $(head -c 200 "$T/sub.after")"
check "CH-2 SEC-2 carol's SubscribeToTask starts with the same Task before and after" \
	'[ -s "$T/sub.before" ]' 'cmp -s "$T/sub.before" "$T/sub.after"'

echo "1..$n"
[ "$failed" = 0 ]
