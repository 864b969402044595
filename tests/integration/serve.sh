#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Integration test: `tiny-harness serve` instances are independent (HOST-1, issue 28,
# decision-043).
#
# From one working directory, two `serve --port …` instances: A with TINY_HARNESS_DB=a.db,
# B with a relative TINY_HARNESS_CONF whose file says `db = b.db` and a small max_text.
# Each must run its own workers on its own state directory (var/serve-PORT), serve its
# own database, base URL and configuration. Then the refusals, each leaving A running: a
# second serve on A's port from the same directory (names var/serve-PORT and A's pid), and
# one from another directory (names the port and A's pid); a third instance on A's
# database starts with a note saying so; and a stale state directory (B's lighttpd killed
# with SIGKILL, its orphaned worker still listening on the old socket) is taken over by a
# new serve that starts workers of its own.
# Every process started here is stopped by its pid. TAP output; 77 (skip) when lighttpd,
# curl, jq or sqlite3 is missing, or in the PostgreSQL pass (nothing here is the store's).
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
set -u

: "${TH_SRCDIR:=$(cd "$(dirname "$0")/../.." && pwd)}"
. "$TH_SRCDIR/tests/lib/tap.sh"
. "$TH_SRCDIR/tests/lib/proc.sh"
. "$TH_SRCDIR/tests/lib/a2a.sh"

[ -x "$TH_BIN" ] || skip "no program at $TH_BIN"
[ -z "${TH_TEST_PG:-}" ] || skip "serve's state is not the store's: the SQLite pass covers it"
require_lighttpd
require_tools curl jq sqlite3 ps

scratch th-serve
W=$T/site
mkdir -p "$W" "$T/elsewhere" || bail "cannot create $W"
PIDS= # every serve (= its lighttpd) and orphaned worker started here
on_exit 'term_wait serve $PIDS'
tap_details() {
	echo "#   ${REQ_DESC:-}"
	for f in "$T"/*.out "$T"/*.err; do
		[ -s "$f" ] && head -n 5 "$f" | sed "s|^|#   $(basename "$f"): |"
	done
}

free_port() {
	local p i=0
	while [ $i -lt 20 ]; do
		p=$(random_port)
		port_busy "$p" || { echo "$p"; return 0; }
		i=$((i + 1))
	done
	bail "no free port"
}

# serve_in DIR NAME PORT [VAR=VALUE…]: `tiny-harness serve --port PORT` started in DIR
# with a clean environment plus the VARs; its pid in SERVE_PID, output in $T/NAME.out and
# $T/NAME.err.
serve_in() {
	local dir=$1 name=$2 port=$3
	shift 3
	(cd "$dir" && exec env -i PATH="$PATH" TH_SRCDIR="$TH_SRCDIR" \
		${ASAN_OPTIONS:+ASAN_OPTIONS=$ASAN_OPTIONS} ${UBSAN_OPTIONS:+UBSAN_OPTIONS=$UBSAN_OPTIONS} \
		${LSAN_OPTIONS:+LSAN_OPTIONS=$LSAN_OPTIONS} \
		"$@" "$TH_BIN" serve --port "$port") >"$T/$name.out" 2>"$T/$name.err" </dev/null &
	SERVE_PID=$!
	PIDS="$PIDS $SERVE_PID"
}
# refused DIR NAME PORT [VAR=VALUE…]: the same in the foreground (20 s at most); RC is its
# exit status.
refused() {
	local dir=$1 name=$2 port=$3
	shift 3
	(cd "$dir" && exec env -i PATH="$PATH" TH_SRCDIR="$TH_SRCDIR" \
		${ASAN_OPTIONS:+ASAN_OPTIONS=$ASAN_OPTIONS} ${UBSAN_OPTIONS:+UBSAN_OPTIONS=$UBSAN_OPTIONS} \
		${LSAN_OPTIONS:+LSAN_OPTIONS=$LSAN_OPTIONS} \
		"$@" timeout 20 "$TH_BIN" serve --port "$port") >"$T/$name.out" 2>"$T/$name.err" </dev/null
	RC=$?
}
workers_of() { ps -o pid= --ppid "$1" | tr -d ' ' | tr '\n' ' '; }
card_url() {
	curl -s --max-time 5 "http://127.0.0.1:$1/.well-known/agent-card.json" |
		jq -r '.supportedInterfaces[0].url' 2>/dev/null
}
send() { # send PORT TEXT: SendMessage through that instance; the task id in TASK
	HTTP_BASE=http://127.0.0.1:$1/ rpc_call SendMessage "$(tmsg "m-$RANDOM$RANDOM" "" "$2")"
	TASK=$(jqb .result.task.id)
}
tasks_in() { sqlite3 "$1" "SELECT COUNT(*) FROM tasks WHERE id = '$2'" 2>/dev/null; }

# ---------------------------------------------------------------- two instances, one directory
PA=$(free_port)
PB=$(free_port)
while [ "$PB" = "$PA" ]; do PB=$(free_port); done
printf 'db = b.db\nmax_text = 40\n' >"$W/b.conf"
serve_in "$W" a "$PA" TINY_HARNESS_DB=a.db
A=$SERVE_PID
serve_in "$W" b "$PB" TINY_HARNESS_CONF=b.conf
B=$SERVE_PID
wait_card "$A" "http://127.0.0.1:$PA/" || bail "instance A did not start: $(cat "$T/a.err")"
wait_card "$B" "http://127.0.0.1:$PB/" || bail "instance B did not start: $(cat "$T/b.err")"
echo "# A: port $PA pid $A; B: port $PB pid $B; both from $W"
WA=$(workers_of "$A")
WB=$(workers_of "$B")
REQ_DESC="workers of A: '$WA', of B: '$WB'; ls $W/var: $(ls "$W/var" | tr '\n' ' ')"
check "HOST-1 two serve instances from one directory each run workers of their own, with state in var/serve-PORT" \
	'[ -n "$WA" ]' '[ -n "$WB" ]' '[ "$WA" != "$WB" ]' \
	'[ -S "$W/var/serve-$PA/tiny-harness.sock-0" ]' '[ -S "$W/var/serve-$PB/tiny-harness.sock-0" ]' \
	'[ "$(cat "$W/var/serve-$PA/lighttpd.pid")" = "$A" ]' '[ "$(cat "$W/var/serve-$PB/lighttpd.pid")" = "$B" ]' \
	'[ -s "$W/var/serve-$PA/error.log" ]' '[ -s "$W/var/serve-$PB/error.log" ]'

UA=$(card_url "$PA")
UB=$(card_url "$PB")
REQ_DESC="card of A names '$UA', card of B names '$UB'"
check "HOST-1 each instance's agent card names its own base URL" \
	'[ "$UA" = "http://127.0.0.1:$PA/" ]' '[ "$UB" = "http://127.0.0.1:$PB/" ]'

send "$PA" "a task for site A"
TA=$TASK
REQ_DESC="SendMessage through A ($STATUS): $(head -c 200 "$T/body")"
check "HOST-1 a task created through A is in A's database (a.db) and not in B's (b.db)" \
	'[ "$STATUS" = 200 ]' '[ -n "$TA" ] && [ "$TA" != null ]' \
	'[ "$(tasks_in "$W/a.db" "$TA")" = 1 ]' '[ "$(tasks_in "$W/b.db" "$TA")" = 0 ]'
HTTP_BASE=http://127.0.0.1:$PB/ rpc_call GetTask "{\"id\":\"$TA\"}"
REQ_DESC="GetTask $TA through B ($STATUS): $(head -c 200 "$T/body")"
check "HOST-1 A's task is not visible through B (GetTask: TaskNotFoundError)" \
	'[ "$(jqb .error.code)" = -32001 ]' '[ "$(jqb .result)" = null ]'

send "$PB" "a task for site B"
TB=$TASK
HTTP_BASE=http://127.0.0.1:$PA/ rpc_call GetTask "{\"id\":\"$TB\"}"
REQ_DESC="GetTask $TB (made through B) through A ($STATUS): $(head -c 200 "$T/body")"
check "HOST-1 a task created through B is in b.db only and not visible through A" \
	'[ -n "$TB" ] && [ "$TB" != null ]' '[ "$(tasks_in "$W/b.db" "$TB")" = 1 ]' \
	'[ "$(tasks_in "$W/a.db" "$TB")" = 0 ]' '[ "$(jqb .error.code)" = -32001 ]'

LONG="a message of more than forty characters, which b.conf refuses"
send "$PB" "$LONG"
sb=$STATUS eb=$(jqb .error.message)
send "$PA" "$LONG"
REQ_DESC="long text through B: $sb '$eb'; through A: $STATUS"
check "HOST-1 B's workers read B's configuration file (relative TINY_HARNESS_CONF: max_text = 40), A's do not" \
	'[ -n "$eb" ] && [ "$eb" != null ]' '[ "$STATUS" = 200 ]' '[ "$(jqb .result.task.id)" != null ]'

# ---------------------------------------------------------------- collisions
refused "$W" same "$PA" TINY_HARNESS_DB=c.db
REQ_DESC="a second serve --port $PA from $W: exit $RC"
check "HOST-1 a second serve on the same port from the same directory exits 1, naming var/serve-PORT and the running pid" \
	'[ "$RC" = 1 ]' \
	'grep -qF "port $PA is already served from $W/var/serve-$PA by pid $A" "$T/same.err"' \
	'! grep -q serving "$T/same.out"' '[ ! -e "$W/c.db" ]'
check "HOST-1 the refused serve left the first instance running, with its state untouched" \
	'alive "$A"' '[ "$(card_url "$PA")" = "http://127.0.0.1:$PA/" ]' \
	'[ "$(cat "$W/var/serve-$PA/db")" = "$W/a.db" ]' '[ -S "$W/var/serve-$PA/tiny-harness.sock-0" ]' \
	'[ "$(workers_of "$A")" = "$WA" ]'

refused "$T/elsewhere" other "$PA"
REQ_DESC="serve --port $PA from $T/elsewhere: exit $RC"
check "HOST-1 a serve on a port another instance listens on (from another directory) exits 1, naming the port and its pid" \
	'[ "$RC" = 1 ]' \
	'grep -qF "port $PA on 127.0.0.1 is in use by pid $A (lighttpd)" "$T/other.err"' \
	'! grep -q serving "$T/other.out"' '[ ! -e "$T/elsewhere/var" ]' 'alive "$A"' \
	'[ "$(card_url "$PA")" = "http://127.0.0.1:$PA/" ]'

# ---------------------------------------------------------------- a shared database is said
PC=$(free_port)
while [ "$PC" = "$PA" ] || [ "$PC" = "$PB" ]; do PC=$(free_port); done
serve_in "$W" c "$PC" TINY_HARNESS_DB="$W/a.db"
C=$SERVE_PID
wait_card "$C" "http://127.0.0.1:$PC/"
REQ_DESC="serve --port $PC on a.db"
check "HOST-1 a third instance on A's database starts, with a note naming A's state directory and pid" \
	'[ "$code" = 200 ]' \
	'grep -qF "note: the instance in $W/var/serve-$PA (pid $A) serves the same database $W/a.db" "$T/c.err"'
term_wait serve "$C"

# ---------------------------------------------------------------- a stale state directory
# B's lighttpd dies with SIGKILL: its lock goes with it, its worker lives on as an orphan
# still accepting on var/serve-PB/tiny-harness.sock-0.
# serve_in's subshell became lighttpd, a child of this script: wait reaps it (with the
# shell's own "Killed" notice sent to /dev/null).
exec 3>&2 2>/dev/null
kill -KILL "$B"
wait "$B"
exec 2>&3 3>&-
PIDS="$PIDS $WB"
orphans=
for w in $WB; do alive "$w" && orphans="$orphans $w"; done
echo "# B ($B) killed; its worker(s) still running:${orphans:- none}"
serve_in "$W" b2 "$PB" TINY_HARNESS_DB=d.db
B2=$SERVE_PID
wait_card "$B2" "http://127.0.0.1:$PB/"
WB2=$(workers_of "$B2")
send "$PB" "a task after the takeover"
REQ_DESC="serve --port $PB again on d.db after SIGKILL of $B (workers before: $WB, now: $WB2)"
check "HOST-1 a stale state directory (its lighttpd killed) is taken over: the new instance starts its own workers and serves its own database" \
	'[ "$code" = 200 ]' '! grep -q "already served" "$T/b2.err"' '[ -n "$WB2" ]' \
	'[ "$WB2" != "$WB" ]' \
	'[ "$(cat "$W/var/serve-$PB/lighttpd.pid")" = "$B2" ]' \
	'[ "$(tasks_in "$W/d.db" "$TASK")" = 1 ]' '[ "$(tasks_in "$W/b.db" "$TASK")" = 0 ]'

tap_done
