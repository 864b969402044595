#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Integration test: the real lighttpd with conf/lighttpd.conf (STORE-4), two FastCGI
# workers, on loopback. A whole conversation over both bindings, completion with the
# control envelope, SSE through the server, and proof that requests were served by
# different worker processes (turns.worker_pid), all with the recipe's login on (SEC-1:
# lighttpd's HTTP Basic, identity = remote_user; 401 without a login); then the recipe's
# idle timeout for a silent worker, and lighttpd with it cut to 1 s holding a quiet stream
# open (STREAM-PROXY-1, STREAM-PROXY-2). TAP output; 77
# (skip) when lighttpd, curl, jq, openssl or sqlite3 is missing.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
set -u

: "${TH_SRCDIR:=$(cd "$(dirname "$0")/../.." && pwd)}"
. "$TH_SRCDIR/tests/lib/tap.sh"
. "$TH_SRCDIR/tests/lib/proc.sh"
. "$TH_SRCDIR/tests/lib/a2a.sh"
. "$TH_SRCDIR/tests/lib/scenario.sh"
. "$TH_SRCDIR/tests/lib/keepalive.sh"

[ -x "$TH_BIN" ] || skip "no program at $TH_BIN"
require_lighttpd
require_tools curl jq sqlite3

scratch th-lighttpd

# SEC-1 (decision-040): the recipe as shipped for a public server, lighttpd asking for a
# login (TINY_HARNESS_IDENTITY=remote_user, TH_HTPASSWD); every request below logs in.
require_tools openssl
basic_auth "$T/auth"
# Every worker sleeps this long per turn, so concurrent turns overlap in time.
export TINY_HARNESS_ECHO_DELAY_MS=300
BASE=$(sh "$SERVER" start "$T/srv" 2) || bail "lighttpd did not start"
DB=$(th_db_of "$T/srv")
echo "# lighttpd at $BASE, state in $T/srv"

# ------------------------------------------------------------------ the recipe itself
# Workers get only the variables bin-copy-environment names: every configuration key
# (`tiny-harness --help` lists the table of src/config/config.c) must be there as
# TINY_HARNESS_<KEY>, or an override set for lighttpd silently never reaches the workers.
missing_env=
for key in $("$TH_BIN" --help 2>/dev/null | sed -n 's/^  \([a-z_][a-z0-9_]*\) = .*/\1/p'); do
	var=TINY_HARNESS_$(echo "$key" | tr a-z A-Z)
	grep -q "\"$var\"" "$TH_SRCDIR/conf/lighttpd.conf" || missing_env="$missing_env $var"
done
REQ_DESC="conf/lighttpd.conf bin-copy-environment; missing:${missing_env:- none}"
check "STORE-3 STORE-4 conf/lighttpd.conf passes every TINY_HARNESS_<KEY> and TINY_HARNESS_CONF to the workers" \
	'[ -n "${key:-}" ]' '[ -z "$missing_env" ]' 'grep -q "\"TINY_HARNESS_CONF\"" "$TH_SRCDIR/conf/lighttpd.conf"'

# ------------------------------------------------------------------ card
http GET /.well-known/agent-card.json "" ""
check "STORE-4 CARD-1 lighttpd serves the card with the base URL it was started on" \
	'[ "$STATUS" = 200 ]' '[ "$(jqb .name)" = tiny-harness ]' \
	'[ "$(jqb "[.supportedInterfaces[] | select(.protocolBinding == \"JSONRPC\") | .url][0]")" = "$BASE" ]'

# ------------------------------------------------------------------ a conversation
http POST / "$(rpc 1 SendMessage "$(msg m1 "plan the release")")"
TASK=$(jqb .result.task.id)
check "A2A-1 TASK-2 SendMessage through lighttpd creates a task parked in INPUT_REQUIRED" \
	'[ "$STATUS" = 200 ]' has_task \
	'[ "$(jqb .result.task.status.state)" = TASK_STATE_INPUT_REQUIRED ]' \
	'[ "$(jqb ".result.task.metadata[\"$STATUS_KEY\"].sub_state")" = awaiting-next-message ]' \
	'texts .result.task | grep -q "plan the release"'

http POST / "$(rpc 2 SendMessage "$(msg m2 "first follow-up" "$TASK")")"
check "TASK-6 a JSON-RPC follow-up runs a turn and parks the task again" \
	'[ "$STATUS" = 200 ]' has_task '[ "$(jqb .result.task.id)" = "$TASK" ]' \
	'[ "$(jqb .result.task.status.state)" = TASK_STATE_INPUT_REQUIRED ]' \
	'texts .result.task | grep -q "first follow-up"'

http POST /message:send "$(msg m3 "second follow-up" "$TASK")"
check "A2A-1 TASK-6 a REST follow-up (POST /message:send) runs a turn" \
	'[ "$STATUS" = 200 ]' has_task '[ "$(jqb .task.id)" = "$TASK" ]' \
	'[ "$(jqb .task.status.state)" = TASK_STATE_INPUT_REQUIRED ]' \
	'texts .task | grep -q "second follow-up"'

http POST / "$(rpc 3 GetTask "{\"id\":\"$TASK\"}")"
check "A2A-1 GetTask returns the three user messages in order" \
	'[ "$STATUS" = 200 ]' has_task '[ "$(jqb .result.id)" = "$TASK" ]' \
	'[ "$(jqb "[.result.history[] | select(.role == \"ROLE_USER\") | .messageId] | join(\",\")")" = m1,m2,m3 ]'

http POST / "$(rpc 4 ListTasks '{}')"
check "A2A-1 ListTasks lists the task for its participant" \
	'[ "$STATUS" = 200 ]' has_task \
	'[ "$(jqb "[.result.tasks[] | select(.id == \"$TASK\")] | length")" = 1 ]' \
	'[ "$(jqb .result.totalSize)" -ge 1 ]'
http GET "/tasks?pageSize=10" "" bob
check "ID-3 REST GET /tasks for another participant does not list it" \
	'[ "$STATUS" = 200 ]' has_task \
	'[ "$(jqb "[.tasks[]? | select(.id == \"$TASK\")] | length")" = 0 ]' \
	'[ "$(jqb ".totalSize // 0")" = 0 ]'

# ------------------------------------------------------------------ sockets and files (SEC-6)
socks=$(ls "$T/srv"/tiny-harness.sock-* 2>/dev/null)
REQ_DESC="stat: $(stat -c '%a %n' $socks "$DB" 2>&1 | tr '\n' ' ')"
open_socks=$(for s in $socks; do [ $((0$(stat -c %a "$s") & 2)) = 0 ] || echo "$s"; done)
check "SEC-6 the workers' sockets are not writable by other users (no connect) and the database is 0600" \
	'[ -n "$socks" ]' '[ -z "$open_socks" ]' 'th_db_is_pg "$DB" || [ "$(stat -c %a "$DB")" = 600 ]'

# ------------------------------------------------------------------ the login (SEC-1)
auth_checks lighttpd
# The recipe keeps a checked login for 60 s (auth.cache, decision-090): erin, checked here
# for the first time (so her entry is new: lighttpd's 8 s sweep cannot take it in between),
# is let in from the cache after the file loses her, still only with her password; dave,
# never checked, is refused as soon as the file loses him. The file is restored. Erin is
# no participant of alice's task: lighttpd lets her through and the program says so.
raw_auth POST / "$(rpc 15 GetTask "{\"id\":\"$TASK\"}")" -u "erin:$TEST_PASSWORD"
s_first=$STATUS
cp "$TH_HTPASSWD" "$T/htpasswd.kept"
grep -v '^erin:' "$T/htpasswd.kept" | grep -v '^dave:' >"$TH_HTPASSWD"
raw_auth POST / "$(rpc 16 GetTask "{\"id\":\"$TASK\"}")" -u "erin:$TEST_PASSWORD"
s_kept=$STATUS
code_kept=$(jqb .error.code)
raw_auth POST / "$(rpc 17 GetTask "{\"id\":\"$TASK\"}")" -u "erin:not-$TEST_PASSWORD"
s_wrong=$STATUS
raw_auth POST / "$(rpc 18 GetTask "{\"id\":\"$TASK\"}")" -u "dave:$TEST_PASSWORD"
s_dave=$STATUS
cp "$T/htpasswd.kept" "$TH_HTPASSWD"
REQ_DESC="erin before: $s_first; erin and dave out of the file: erin $s_kept ($code_kept), erin with a wrong password $s_wrong, dave $s_dave"
check "SEC-1 lighttpd keeps a checked login (auth.cache): erin is let in from it, a wrong password and an unchecked removed login are refused" \
	'[ "$s_first" = 200 ]' '[ "$s_kept" = 200 ]' '[ "$code_kept" = -32001 ]' \
	'[ "$s_wrong" = 401 ]' '[ "$s_dave" = 401 ]'
REQ_DESC="TINY_HARNESS_IDENTITY= lighttpd -tt -f conf/lighttpd.conf"
unset_out=$(env -u TINY_HARNESS_IDENTITY TH_PORT=1 TH_BIN=/bin/true TH_STATE_DIR=$T TH_PROCS=1 \
	"${LIGHTTPD:-$(command -v lighttpd || echo /usr/sbin/lighttpd)}" -tt -f "$TH_SRCDIR/conf/lighttpd.conf" 2>&1)
unset_rc=$?
echo "$unset_out" >"$T/body"
check "SEC-1 conf/lighttpd.conf has no unauthenticated default: without TINY_HARNESS_IDENTITY lighttpd refuses to start" \
	'[ "$unset_rc" != 0 ]' 'grep -q TINY_HARNESS_IDENTITY "$T/body"'

# ------------------------------------------------------------------ SSE through lighttpd
# With server.stream-response-body = 2 the first event (the Task) reaches the client
# before the 300 ms turn ends; with buffering the whole body would arrive at once.
REQ_DESC="SendStreamingMessage (curl -N)"
timing=$(curl -s -N -o "$T/body" --max-time 30 -w '%{http_code}|%{content_type}|%{time_starttransfer}|%{time_total}' \
	-H 'Content-Type: application/json' -H 'A2A-Version: 1.0' -H 'X-Participant-Id: alice' "${ALICE[@]}" \
	--data-binary "$(rpc 5 SendStreamingMessage "$(msg m4 "stream this" "$TASK")")" "$BASE")
IFS='|' read -r STATUS sse_type first total <<EOF2
$timing
EOF2
gap=$(awk -v a="${first:-0}" -v b="${total:-0}" 'BEGIN { printf "%d", (b - a) * 1000 }')
sse_name="STORE-4 A2A-5 SSE events stream through lighttpd as written (first event ${first}s, end ${total}s)"
if [ "$(jqb .error.code)" = -32004 ]; then
	# The server says it has no streaming yet: a known gap, reported as TODO (not a
	# pass). Any other answer, including a buffered stream, is judged below.
	n=$((n + 1))
	echo "not ok $n - $sse_name # TODO server answers -32004: $(jqb .error.message)"
else
	check "$sse_name" \
		'[ "$STATUS" = 200 ]' 'case "$sse_type" in text/event-stream*) true ;; *) false ;; esac' \
		'[ "$(grep -c "^data:" "$T/body")" -ge 2 ]' \
		'[ "$gap" -ge 150 ]' \
		'[ "$(grep "^data:" "$T/body" | tail -n1 | sed "s/^data: *//" | jq -r ".result.statusUpdate.status.state // .result.task.status.state")" = TASK_STATE_INPUT_REQUIRED ]'
fi

# ------------------------------------------------------------------ completion
completion_checks ""

# ------------------------------------------------------------------ several workers
workers_checks ""

# ------------------------------------------------------------------ shutdown
lpid=$(cat "$T/srv/lighttpd.pid" 2>/dev/null)
# The worker processes are lighttpd's children (procps' --ppid reads /proc).
children=$(ps -o pid= --ppid "$lpid" 2>/dev/null | tr -d ' ')
sh "$SERVER" stop "$T/srv"
left=
for i in $(seq 1 50); do
	left=
	for p in $lpid $children $pids; do alive "$p" && left="$left $p"; done
	[ -z "$left" ] && break
	sleep 0.1
done
REQ_DESC="server.sh stop; lighttpd $lpid, its children $(echo $children), turn workers $(echo $pids); still running:$left"
check "STORE-4 stopping lighttpd stops its two workers" '[ -n "$lpid" ]' \
	'[ "$(printf "%s\n" $children | grep -c .)" = 2 ]' '[ -z "$left" ]'

# ------------------------------------------------------------------ proxy timeouts
# STREAM-PROXY-1: the recipe's backend "read-timeout" against the program's defaults;
# STREAM-PROXY-2: lighttpd again with it cut to 1 s, a quiet stream outlives it and a
# silenced one does not (tests/lib/keepalive.sh, decision-072).
recipe_timeout_checks lighttpd conf/lighttpd.conf
keepalive_checks lighttpd lighttpd

tap_done
