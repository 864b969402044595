#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Integration test: PostgreSQL through PgBouncer in transaction pooling mode (SCALE-1,
# STORE-6, decision-055), with the real pgbouncer (tests/lib/pgbouncer.sh) in front of the
# cluster of TH_TEST_PG and a server pool of 2, so the server sessions really are shared
# between the clients of lighttpd's workers and of plain-CGI processes.
#
#  (a) without db_pooler, plain-CGI SendMessages one after another through the pooler
#      fail on a named prepared statement another client's session left behind (42P05)
#      or never saw (26000): what db_pooler = transaction is for;
#  (b) with db_pooler = transaction, plain-CGI SendMessages one after another and 4 at
#      once all answer with a task;
#  (c) lighttpd with 2 worker processes through the pooler (db_listen straight to the
#      server, stream_poll_ms 10000 so only an announcement can wake a stream early): a
#      conversation: SendMessage, GetTask, ListTasks; a subscriber on lighttpd and a
#      plain-CGI subscriber both get, within 5 s, the reply to a follow-up another
#      process (plain CGI) wrote; the LISTEN connections are on the server, not the
#      pooler; PgBouncer held at most 2 server connections for more clients than that;
#      4 clients x 4 follow-ups at once all answered, events 1..n without a gap;
#      CancelTask ends both streams with TASK_STATE_CANCELED; no database error logged.
# Bounded: every request 30 s at most; about 15 s in all. TAP output; 77 (skip) without
# TH_TEST_PG (no PostgreSQL configured), or when pgbouncer, lighttpd, curl, jq or psql is
# missing.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
set -u

: "${TH_SRCDIR:=$(cd "$(dirname "$0")/../.." && pwd)}"
. "$TH_SRCDIR/tests/lib/tap.sh"
. "$TH_SRCDIR/tests/lib/proc.sh"
. "$TH_SRCDIR/tests/lib/a2a.sh"

[ -n "${TH_TEST_PG:-}" ] || skip "no PostgreSQL configured (TH_TEST_PG)"
[ -x "$TH_BIN" ] || skip "no program at $TH_BIN"
require_lighttpd
require_tools curl jq
command -v pgbouncer >/dev/null 2>&1 || [ -x /usr/sbin/pgbouncer ] || skip "pgbouncer is not installed"
[ -x "$(th_db_psql)" ] || command -v psql >/dev/null 2>&1 || skip "psql is not installed"

PGB=$TH_SRCDIR/tests/lib/pgbouncer.sh
scratch th-pgb
# As root pgbouncer runs as nobody (tests/lib/pgbouncer.sh), who must reach $T/pgb.
chmod 0755 "$T"
BG=
# lighttpd first (its workers hold client connections), then the pooler.
on_exit 'for p in $BG; do kill "$p" 2>/dev/null; done'
on_exit '[ -f "$T/srv/lighttpd.pid" ] && sh "$SERVER" stop "$T/srv"'
on_exit 'sh "$PGB" stop "$T/pgb"'

BOUNCER=$(sh "$PGB" start "$T/pgb" "$TH_TEST_PG" 2) || bail "pgbouncer did not start"
NAME=th_pgb_$(printf '%s' "$T" | cksum | cut -d' ' -f1)
DIRECT=$(sh "$TH_SRCDIR/tests/lib/pg.sh" createdb "$TH_TEST_PG" "$NAME") || bail "no database $NAME"
POOLED=$BOUNCER$NAME
DB=$DIRECT # the tests' own queries go straight to the server
echo "# pgbouncer at $BOUNCER (pool_mode = transaction, default_pool_size 2) in front of $TH_TEST_PG"

# cgi NAME POOLER METHOD PATH BODY [ENV…] — one plain-CGI request through the pooler,
# run as a web server's mod_cgi runs it; output in $T/cgi.NAME (headers and body),
# stderr in $T/cgi.NAME.err.
cgi() {
	local name=$1 pooler=$2 method=$3 path=$4 body=$5
	shift 5
	local envs=(
		"PATH=$PATH" GATEWAY_INTERFACE=CGI/1.1 SERVER_PROTOCOL=HTTP/1.1 SERVER_NAME=127.0.0.1
		SERVER_PORT=8080 REMOTE_ADDR=127.0.0.1 "REQUEST_METHOD=$method" "REQUEST_URI=$path"
		SCRIPT_NAME= "PATH_INFO=$path" QUERY_STRING= HTTP_A2A_VERSION=1.0
		HTTP_X_PARTICIPANT_ID=alice "TINY_HARNESS_DB=$POOLED"
		TINY_HARNESS_BASE_URL=http://127.0.0.1:8080/ "TINY_HARNESS_DB_POOLER=$pooler"
	)
	[ "$method" = GET ] || envs+=("CONTENT_LENGTH=${#body}" CONTENT_TYPE=application/json)
	# From the scratch directory, so no conf/tiny-harness.conf is read.
	(cd "$T" && printf '%s' "$body" | env -i "${envs[@]}" "$@" "$TH_BIN" >"$T/cgi.$name" 2>"$T/cgi.$name.err")
}
cgi_task() { tr -d '\r' <"$T/cgi.$1" | sed '1,/^$/d' | jq -r '.result.task.id // empty' 2>/dev/null; }

# ------------------------------------------------------------------ (a) without db_pooler
# The first request's process prepares th<id> on the server session it was given; the
# pooler hands that session to the next process, whose PQprepare of the same name fails.
refused=0
named=0
for i in 1 2 3; do
	cgi "none-$i" none POST / "$(rpc "$i" SendMessage "$(tmsg "none-$i" "" "no pooler $i")")"
	[ -n "$(cgi_task "none-$i")" ] || refused=$((refused + 1))
	grep -q 'prepared statement .*(SQLSTATE \(42P05\|26000\))' "$T/cgi.none-$i.err" && named=$((named + 1))
done
DETAIL="requests failed: $refused of 3, naming a prepared statement: $named; $(head -c 300 "$T/cgi.none-2.err")"
check "SCALE-1 (a) without db_pooler = transaction, requests through PgBouncer's transaction pool fail on named prepared statements" \
	'[ "$refused" -ge 1 ]' '[ "$named" -ge 1 ]'

# ------------------------------------------------------------------ (b) plain CGI, pooled
ok=0
for i in 1 2 3; do
	cgi "seq-$i" transaction POST / "$(rpc "$i" SendMessage "$(tmsg "seq-$i" "" "pooled $i")")"
	[ -n "$(cgi_task "seq-$i")" ] && ok=$((ok + 1))
done
pids=
for i in 1 2 3 4; do
	cgi "par-$i" transaction POST / "$(rpc "$i" SendMessage "$(tmsg "par-$i" "" "at once $i")")" &
	pids="$pids $!"
done
wait $pids
for i in 1 2 3 4; do [ -n "$(cgi_task "par-$i")" ] && ok=$((ok + 1)); done
DETAIL="answered with a task: $ok of 7; $(cat "$T"/cgi.seq-*.err "$T"/cgi.par-*.err 2>/dev/null | head -c 400)"
check "SCALE-1 (b) with db_pooler = transaction, plain-CGI SendMessages through PgBouncer, 3 one after another and 4 at once, all answer with a task" \
	'[ "$ok" = 7 ]'

# ------------------------------------------------------------------ (c) lighttpd, pooled
export TINY_HARNESS_DB_POOLER=transaction TINY_HARNESS_DB_LISTEN=$DIRECT TINY_HARNESS_STREAM_POLL_MS=10000
BASE=$(TH_SERVER_DB=$POOLED sh "$SERVER" start "$T/srv" 2) || bail "lighttpd did not start through pgbouncer"
echo "# lighttpd at $BASE, 2 workers, db = the pooler, db_listen = the server"

rpc_call SendMessage "$(tmsg talk-1 "" "plan the trip")"
TASK=$(jqb .result.task.id)
has_task || bail "no task through lighttpd: $(head -c 300 "$T/body")"
first=$STATUS
rpc_call GetTask "$(jq -nc --arg id "$TASK" '{id: $id}')"
got=$(jqb .result.id)
history=$(jqb '.result.history | length')
rpc_call ListTasks '{}'
listed=$(jq -r --arg id "$TASK" '[.result.tasks[]?.id] | index($id) != null' "$T/body" 2>/dev/null)
DETAIL="SendMessage $first task $TASK; GetTask ${got:-none}, history $history; ListTasks lists it: $listed"
check "SCALE-1 (c) through PgBouncer: SendMessage, GetTask and ListTasks answer on lighttpd's workers" \
	'[ "$first" = 200 ]' '[ "$got" = "$TASK" ]' '[ "$history" -ge 2 ]' '[ "$listed" = true ]'

# Two subscribers: one parked in a lighttpd worker's stream thread, one a plain-CGI
# process following the task itself; both wait on LISTEN (db_listen).
curl -sN --max-time 30 -H 'A2A-Version: 1.0' -H 'X-Participant-Id: alice' \
	"${BASE}tasks/$TASK:subscribe" >"$T/sse" 2>/dev/null &
SSE_PID=$!
BG="$BG $SSE_PID"
cgi sub transaction GET "/tasks/$TASK:subscribe" "" TINY_HARNESS_DB_LISTEN="$DIRECT" \
	TINY_HARNESS_STREAM_POLL_MS=10000 TINY_HARNESS_STREAM_MAX_MS=25000 &
CGI_SUB=$!
BG="$BG $CGI_SUB"
i=0
while { ! grep -q '^data:' "$T/sse" 2>/dev/null || ! grep -q '^data:' "$T/cgi.sub" 2>/dev/null; } && [ $i -lt 100 ]; do
	sleep 0.05
	i=$((i + 1))
done
sleep 0.3 # both are past their first read and waiting
listens=$(sq "SELECT count(*) FROM pg_stat_activity WHERE datname = '$NAME' AND query = 'LISTEN tiny_harness'")
servers=$("$(th_db_psql)" -X -q -At -F '|' -d "${BOUNCER}pgbouncer" -c 'SHOW SERVERS' 2>/dev/null | awk -F'|' -v d="$NAME" '$3 == d' | wc -l)
clients=$("$(th_db_psql)" -X -q -At -F '|' -d "${BOUNCER}pgbouncer" -c 'SHOW CLIENTS' 2>/dev/null | awk -F'|' -v d="$NAME" '$3 == d' | wc -l)
DETAIL="LISTEN connections on the server: $listens; PgBouncer: $clients clients, $servers server connections for $NAME"
check "SCALE-1 STORE-6 (c) the streams LISTEN on connections straight to the server (db_listen), and PgBouncer shares at most 2 server connections among more clients" \
	'[ "$listens" -ge 2 ]' '[ "$servers" -ge 1 ] && [ "$servers" -le 2 ]' '[ "$clients" -gt "$servers" ]'

sent=$(now_ms)
cgi follow transaction POST / "$(rpc 9 SendMessage "$(tmsg talk-2 "$TASK" "and book the hotel")")"
reply() { grep '^data:' "$1" 2>/dev/null | sed 's/^data: *//' | jq -r '.. | .text? // empty' 2>/dev/null | grep -q "echo: and book the hotel"; }
web_ms=
cgi_ms=
i=0
while { [ -z "$web_ms" ] || [ -z "$cgi_ms" ]; } && [ $i -lt 500 ]; do
	[ -z "$web_ms" ] && reply "$T/sse" && web_ms=$(($(now_ms) - sent))
	[ -z "$cgi_ms" ] && reply "$T/cgi.sub" && cgi_ms=$(($(now_ms) - sent))
	sleep 0.01
	i=$((i + 1))
done
echo "# the follow-up's reply reached lighttpd's subscriber after ${web_ms:-never} ms, the CGI subscriber after ${cgi_ms:-never} ms"
DETAIL="follow-up: $(head -c 200 "$T/cgi.follow.err"); lighttpd subscriber ${web_ms:-never} ms, CGI subscriber ${cgi_ms:-never} ms"
check "SCALE-1 STORE-6 STREAM-2 (c) a follow-up written by another process through PgBouncer reaches lighttpd's and a plain-CGI subscriber within 5 s (stream_poll_ms is 10 s: woken by NOTIFY)" \
	'[ -n "$(cgi_task follow)" ]' '[ -n "$web_ms" ] && [ "$web_ms" -lt 5000 ]' '[ -n "$cgi_ms" ] && [ "$cgi_ms" -lt 5000 ]'

# Several clients at once on one task: its lock and its event numbers through shared
# server sessions.
post() {
	curl -s -o "$3" -w '%{http_code}\n' --max-time 30 -H 'Content-Type: application/json' \
		-H 'A2A-Version: 1.0' -H 'X-Participant-Id: alice' --data-binary "$2" "$1"
}
load_pids=
for c in 1 2 3 4; do
	(for k in 1 2 3 4; do
		post "$BASE" "$(rpc "$k" SendMessage "$(tmsg "l$c-$k" "$TASK" "load $c $k")")" "$T/load-$c-$k" >>"$T/load-status"
	done) &
	load_pids="$load_pids $!"
done
BG="$BG $load_pids"
wait $load_pids
ok200=$(grep -c '^200$' "$T/load-status")
errors=$(cat "$T"/load-*-* | jq -s '[.[] | select(.error != null)] | length' 2>/dev/null)
wait_idle 100
gaps=$(sq "SELECT count(*) FROM (SELECT task_id, count(*) AS n, min(seq) AS lo, max(seq) AS hi, count(DISTINCT seq) AS d FROM events GROUP BY task_id) AS g WHERE lo <> 1 OR hi <> n OR d <> n")
stored=$(sq "SELECT count(DISTINCT message_id) FROM messages WHERE task_id = '$TASK' AND message_id LIKE 'l%-%'")
DETAIL="200s: $ok200 of 16; JSON-RPC errors: $errors; stored $stored; tasks whose events are not 1..n: $gaps"
check "SCALE-1 STREAM-3 (c) 4 clients x 4 follow-ups on one task at once through PgBouncer: all answered, all stored, every task's events numbered 1..n without a gap" \
	'[ "$ok200" = 16 ]' '[ "$errors" = 0 ]' '[ "$stored" = 16 ]' '[ "$gaps" = 0 ]'

rpc_call CancelTask "$(jq -nc --arg id "$TASK" '{id: $id}')"
cancel=$STATUS
state=$(jqb .result.status.state)
i=0
while { alive "$SSE_PID" || alive "$CGI_SUB"; } && [ $i -lt 100 ]; do
	sleep 0.05
	i=$((i + 1))
done
last() { grep '^data:' "$1" | tail -n 1 | sed 's/^data: *//' | jq -r '.statusUpdate.status.state // .task.status.state' 2>/dev/null; }
DETAIL="CancelTask $cancel $state; lighttpd stream open: $(alive "$SSE_PID" && echo yes || echo no), last $(last "$T/sse"); CGI stream open: $(alive "$CGI_SUB" && echo yes || echo no), last $(last "$T/cgi.sub")"
check "SCALE-1 (c) CancelTask through PgBouncer cancels the task and both subscribers get TASK_STATE_CANCELED and are closed" \
	'[ "$cancel" = 200 ]' '[ "$state" = TASK_STATE_CANCELED ]' '! alive "$SSE_PID"' '! alive "$CGI_SUB"' \
	'[ "$(last "$T/sse")" = TASK_STATE_CANCELED ]' '[ "$(last "$T/cgi.sub")" = TASK_STATE_CANCELED ]'

bad=$(grep -h 'database (' "$T/srv/error.log" "$T/srv/lighttpd.out" "$T"/cgi.seq-*.err "$T"/cgi.par-*.err "$T"/cgi.follow.err "$T"/cgi.sub.err 2>/dev/null | grep 'error: ' | head -n 5)
DETAIL=$bad
check "SCALE-1 (c) no database error (prepared statements, lost sessions) in the workers' and the pooled CGI processes' logs" '[ -z "$bad" ]'
DETAIL=

tap_done
