#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Integration test: several worker processes on one SQLite file hand their writes to one
# of them, the writer (HOST-2, decision-084), through lighttpd (tests/lib/server.sh) with 4
# FastCGI workers. Requests are also sent to one worker's own FastCGI socket with
# cgi-fcgi, so that they enter through a worker that is not the writer.
#  - exactly one worker holds the writer's claim; its socket only this user may use;
#  - writes entering through every worker are answered, stored once, and their turns run
#    in the writer; a read is answered; a stream sent to another worker streams from the
#    writer;
#  - SIGTERM: the writer serves every write handed to it before it ends, and another
#    worker becomes the writer;
#  - SIGKILL: writes go on through a new writer; nothing is stored twice or half;
#  - SIGSTOP: a stopped writer holds at most its socket's small queue; the other workers
#    serve their writes meanwhile, and after SIGCONT every request is answered.
# Bounded: every request has a time limit of 20 s; the whole test takes about a minute.
# TAP output; 77 (skip) when lighttpd, curl, jq, sqlite3 or cgi-fcgi is missing, or on
# PostgreSQL (where every worker writes side by side, decision-059).
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
set -u

: "${TH_SRCDIR:=$(cd "$(dirname "$0")/../.." && pwd)}"
. "$TH_SRCDIR/tests/lib/tap.sh"
. "$TH_SRCDIR/tests/lib/proc.sh"
. "$TH_SRCDIR/tests/lib/a2a.sh"

[ -x "$TH_BIN" ] || skip "no program at $TH_BIN"
[ -z "${TH_TEST_PG:-}" ] || skip "the hand-over is SQLite's; on PostgreSQL workers write side by side"
require_lighttpd
require_tools curl jq sqlite3 cgi-fcgi

PROCS=4
scratch th-handoff
BG=
on_exit 'for p in $BG; do kill "$p" 2>/dev/null; done; [ -n "${STOPPED:-}" ] && kill -CONT "$STOPPED" 2>/dev/null'

# Each blocking SendMessage's turn takes this long, so that writes are in the writer's
# hands when it is signalled.
export TINY_HARNESS_ECHO_DELAY_MS=150
BASE=$(sh "$SERVER" start "$T/srv" "$PROCS") || bail "lighttpd did not start"
DB=$(th_db_of "$T/srv")
PORT=$(echo "$BASE" | sed 's|.*:\([0-9]*\)/.*|\1|')
LPID=$(cat "$T/srv/lighttpd.pid")

workers() { pgrep -P "$LPID" | sort -n; }
# The worker holding the claim (an open descriptor of <db>-handoff.lock).
writer() {
	local p
	for p in $(workers); do
		ls -l "/proc/$p/fd" 2>/dev/null | grep -q 'handoff\.lock' && echo "$p"
	done
}
# The FastCGI socket worker PID accepts on: its fd 0's inode, named in /proc/net/unix.
socket_of() {
	local ino
	ino=$(readlink "/proc/$1/fd/0" 2>/dev/null | sed -n 's/^socket:\[\([0-9]*\)\]$/\1/p')
	[ -n "$ino" ] && awk -v i="$ino" '$7 == i && $8 != "" { print $8; exit }' /proc/net/unix
}
# fcgi SOCKET BODY OUT: one JSON-RPC POST straight to a worker; prints the HTTP status
# (no Status: line means 200; nothing: no answer within 20 s).
fcgi() {
	local len
	len=$(printf '%s' "$2" | wc -c)
	printf '%s' "$2" | timeout 20 env -i PATH="$PATH" REQUEST_METHOD=POST REQUEST_URI=/ \
		SCRIPT_NAME= QUERY_STRING= CONTENT_TYPE=application/json CONTENT_LENGTH="$len" \
		SERVER_NAME=127.0.0.1 SERVER_PORT="$PORT" SERVER_PROTOCOL=HTTP/1.1 \
		REMOTE_ADDR=127.0.0.1 HTTP_HOST="127.0.0.1:$PORT" HTTP_A2A_VERSION=1.0 \
		HTTP_X_PARTICIPANT_ID=alice cgi-fcgi -bind -connect "$1" >"$3.raw" 2>/dev/null
	tr -d '\r' <"$3.raw" | awk 'body { print } /^$/ { body = 1 }' >"$3"
	if [ ! -s "$3.raw" ]; then
		echo none
	else
		tr -d '\r' <"$3.raw" | sed -n 's/^Status: \([0-9]*\).*/\1/p' | head -n 1 | grep . || echo 200
	fi
}
send_body() { # MESSAGE-ID
	printf '{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"%s","role":"ROLE_USER","parts":[{"text":"%s"}]}}}' "$1" "$1"
}
# send SOCKET MESSAGE-ID: appends "status task-id" to $T/sent.
send() {
	local code
	code=$(fcgi "$1" "$(send_body "$2")" "$T/out.$2")
	echo "$code $(jq -r '.result.task.id // .error.message // "none"' "$T/out.$2" 2>/dev/null) $2" >>"$T/sent"
}
ok_count() { grep -c '^200 [0-9a-f-]\{36\} ' "$T/sent"; }
stored_once() { # PREFIX: messages with that id prefix stored more than once (0 expected)
	sq "SELECT COUNT(*) FROM (SELECT message_id FROM messages WHERE message_id LIKE '$1%'
		GROUP BY message_id HAVING COUNT(*) > 1) AS d"
}
wait_writer() { # a worker other than $1 holds the claim (up to 10 s)
	local i=0 w
	while [ $i -lt 100 ]; do
		w=$(writer)
		[ -n "$w" ] && [ "$w" != "$1" ] && { echo "$w"; return 0; }
		sleep 0.1
		i=$((i + 1))
	done
	return 1
}

# ------------------------------------------------------------------ one writer
sleep 0.5
W=$(writer)
nw=$(writer | grep -c .)
SOCK=$(ls "$DB"-handoff.sock 2>/dev/null)
mode=$(stat -c %a "$DB-handoff.sock" 2>/dev/null)
DETAIL="workers: $(workers | tr '\n' ' '); holders: $(writer | tr '\n' ' ')"
check "HOST-2 SEC-6 exactly one of $PROCS workers holds the writer's claim ($nw); its socket is $SOCK, mode $mode" \
	'[ "$nw" = 1 ]' '[ "$mode" = 600 ]'
[ -n "$W" ] || bail "no writer"
OTHERS=
for p in $(workers); do
	[ "$p" != "$W" ] && s=$(socket_of "$p") && [ -n "$s" ] && OTHERS="$OTHERS $s"
done
set -- $OTHERS
[ $# -ge 2 ] || bail "found the sockets of $# other workers: $OTHERS"
S1=$1 S2=$2

# ------------------------------------------------------------------ writes go to the writer
: >"$T/sent"
for i in $(seq 1 6); do
	send "$S1" "a-$i" &
	send "$S2" "b-$i" &
	wait
done
for i in $(seq 1 6); do
	body=$(send_body "c-$i")
	curl -s -o /dev/null --max-time 20 -H 'Content-Type: application/json' -H 'A2A-Version: 1.0' \
		-H 'X-Participant-Id: alice' --data-binary "$body" "$BASE" &
done
wait
wait_idle 100
answered=$(ok_count)
turn_pids=$(sq "SELECT DISTINCT worker_pid FROM turns WHERE worker_pid > 0" | tr '\n' ' ')
dupes=$(stored_once a-)$(stored_once b-)$(stored_once c-)
nmsg=$(sq "SELECT COUNT(*) FROM messages WHERE message_id LIKE 'a-%' OR message_id LIKE 'b-%' OR message_id LIKE 'c-%'")
DETAIL=$(grep -v '^200 ' "$T/sent" | head -n 5)
check "HOST-2 12 writes sent to two other workers' sockets and 6 through lighttpd: all answered ($answered of 12), stored once ($nmsg messages), every turn in the writer $W (turns ran in: $turn_pids)" \
	'[ "$answered" = 12 ]' '[ "$nmsg" = 18 ]' '[ "$dupes" = 000 ]' '[ "$turn_pids" = "$W " ]'

task=$(awk 'NR == 1 { print $2 }' "$T/sent")
code=$(fcgi "$S1" "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"GetTask\",\"params\":{\"id\":\"$task\"}}" "$T/get")
check "HOST-2 a GetTask sent to another worker is answered (200, the task)" \
	'[ "$code" = 200 ]' "[ \"\$(jq -r .result.id \"\$T/get\")\" = \"$task\" ]"

# A stream sent to another worker is answered by the writer, whose stream thread follows
# it to its end (STREAM-6): the events arrive in order and the last one ends the turn.
sbody='{"jsonrpc":"2.0","id":3,"method":"SendStreamingMessage","params":{"message":{"messageId":"st-1","role":"ROLE_USER","parts":[{"text":"stream me"}]}}}'
code=$(fcgi "$S2" "$sbody" "$T/stream")
events=$(grep -c '^data:' "$T/stream")
last=$(grep '^data:' "$T/stream" | tail -n 1 | sed 's/^data: *//' | jq -r '.result.statusUpdate.status.state // .result.task.status.state' 2>/dev/null)
stream_pid=$(sq "SELECT u.worker_pid FROM turns u JOIN messages m ON m.task_id = u.task_id AND m.message_id = u.message_id WHERE m.message_id = 'st-1'")
DETAIL=$(head -c 600 "$T/stream")
check "HOST-2 STREAM-6 a SendStreamingMessage sent to another worker streams from the writer: $events events, the last $last, its turn in worker $stream_pid" \
	'[ "$code" = 200 ]' '[ "$events" -ge 2 ]' '[ "$last" = TASK_STATE_INPUT_REQUIRED ]' '[ "$stream_pid" = "$W" ]'

# ------------------------------------------------------------------ SIGTERM
: >"$T/sent"
load() { # PREFIX SOCKET COUNT
	local i
	for i in $(seq 1 "$3"); do send "$2" "$1-$i"; done
}
load t1 "$S1" 8 &
BG="$BG $!"
load t2 "$S2" 8 &
BG="$BG $!"
sleep 0.6
kill -TERM "$W"
t0=$(now_ms)
i=0
while alive "$W" && [ $i -lt 100 ]; do
	sleep 0.1
	i=$((i + 1))
done
gone_ms=$(($(now_ms) - t0))
wait
BG=
NEW=$(wait_writer "$W")
wait_idle 100
answered=$(ok_count)
dupes=$(stored_once t1-)$(stored_once t2-)
done_turns=$(sq "SELECT COUNT(*) FROM turns u JOIN messages m ON m.task_id = u.task_id AND m.message_id = u.message_id WHERE m.message_id LIKE 't_-%' AND u.state = 'done'")
DETAIL=$(grep -v '^200 ' "$T/sent" | head -n 5)
check "HOST-2 SIGTERM to the writer under load: it ended after $gone_ms ms, every one of 16 writes was answered ($answered) and stored once with its turn done ($done_turns), and worker ${NEW:-none} writes now" \
	'! alive "$W"' '[ "$answered" = 16 ]' '[ "$dupes" = 00 ]' '[ "$done_turns" = 16 ]' '[ -n "$NEW" ]'
W=$NEW

# ------------------------------------------------------------------ SIGKILL
# Sockets of workers other than the new writer (lighttpd started a new worker for the
# one that ended).
others() {
	local p s
	for p in $(workers); do
		[ "$p" != "$W" ] && s=$(socket_of "$p") && [ -n "$s" ] && echo "$s"
	done
}
set -- $(others)
S1=$1 S2=$2
: >"$T/sent"
load k1 "$S1" 6 &
BG="$BG $!"
sleep 0.3
kill -KILL "$W"
wait
BG=
NEW=$(wait_writer "$W")
W=$NEW
mv "$T/sent" "$T/sent.during"
: >"$T/sent"
set -- $(others)
load k2 "$1" 6
wait_idle 100
after=$(ok_count)
during=$(grep -c '^200 ' "$T/sent.during")
integrity=$(sq "PRAGMA integrity_check")
dupes=$(stored_once k1-)$(stored_once k2-)
gaps=$(sq "SELECT COUNT(*) FROM (SELECT t.id, (SELECT COUNT(*) FROM events e WHERE e.task_id = t.id) AS n,
	(SELECT MAX(seq) FROM events e WHERE e.task_id = t.id) AS hi FROM tasks t) AS p WHERE n <> hi")
DETAIL=$(cat "$T/sent.during" "$T/sent" | grep -v '^200 ' | head -n 5)
check "HOST-2 SIGKILL of the writer: worker ${W:-none} writes next; all 6 writes after it are answered ($after; $during of 6 answered around the kill); nothing stored twice, events gap-free, integrity $integrity" \
	'[ -n "$W" ]' '[ "$after" = 6 ]' '[ "$dupes" = 00 ]' '[ "$gaps" = 0 ]' '[ "$integrity" = ok ]'

# ------------------------------------------------------------------ SIGSTOP
set -- $(others)
S1=$1 S2=$2 S3=${3:-$1}
wait_idle 100
STOPPED=$W
kill -STOP "$W"
: >"$T/sent"
for i in $(seq 1 16); do
	case $((i % 3)) in 0) s=$S1 ;; 1) s=$S2 ;; *) s=$S3 ;; esac
	send "$s" "s-$i" &
	BG="$BG $!"
done
sleep 3
meanwhile=$(ok_count)
# The writer's datagram socket queues one more than the kernel's net.unix.max_dgram_qlen
# (10 by default) before senders are refused and serve their writes themselves.
held=$(($(cat /proc/sys/net/unix/max_dgram_qlen 2>/dev/null || echo 10) + 1))
kill -CONT "$W"
STOPPED=
wait
BG=
wait_idle 100
answered=$(ok_count)
dupes=$(stored_once s-)
DETAIL=$(grep -v '^200 ' "$T/sent" | head -n 5)
check "HOST-2 SIGSTOP of the writer: $meanwhile of 16 writes were answered while it was stopped (its queue holds at most $held), all 16 after SIGCONT ($answered), stored once" \
	'[ "$meanwhile" -ge $((16 - held)) ]' '[ "$answered" = 16 ]' '[ "$dupes" = 0 ]'

tap_done
