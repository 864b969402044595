#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# SEC-3 ceilings through the real lighttpd (conf/lighttpd.conf, one FastCGI worker so that
# every stream lands in the worker whose counts are asserted): one TAP row per limit.
#
#  SEC-3  a 900 KB JSON-RPC id is refused (-32600 naming max_id, id null); historyLength
#         5000 on a task of 1,100 messages gives the newest 1,000 (SQLite only: the
#         messages are written with sqlite3); a participant at stream_max_per_participant
#         (2 here, stream_max 3) gets 429 + Retry-After, also when twelve of its streams
#         open at once (exactly two accepted), while another participant still
#         gets a stream and ListTasks answers; a stream whose client went away gives its
#         slot back (a new stream is accepted again within 2 s, the heartbeat being 15 s:
#         lighttpd notices a gone client only when it writes to it); with
#         rate_limit_rps the burst passes, the next request is 429 + Retry-After naming the
#         key, and another participant is not affected.
# TAP output; 77 (skip) when lighttpd, curl, jq or sqlite3 is missing. TH_KEEP=1 keeps the
# scratch directory. About 4 s.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
set -u

: "${TH_SRCDIR:=$(cd "$(dirname "$0")/../.." && pwd)}"
TAP_BODY_WIDTH=400
. "$TH_SRCDIR/tests/lib/tap.sh"
. "$TH_SRCDIR/tests/lib/proc.sh"
. "$TH_SRCDIR/tests/lib/a2a.sh"

[ -x "$TH_BIN" ] || skip "no program at $TH_BIN"
require_lighttpd
require_tools curl jq sqlite3

scratch th-ceilings
header() { tr -d '\r' <"$1" | grep -i "^$2:" | head -n1 | sed 's/^[^:]*: *//'; }

# stream NAME PARTICIPANT TASK — SubscribeToTask in the background; its status line and
# headers go to $T/NAME.h, its pid to PIDS[NAME].
declare -A PIDS
stream() {
	curl -s -N --max-time 60 -D "$T/$1.h" -o "$T/$1.out" -H 'A2A-Version: 1.0' \
		-H "X-Participant-Id: $2" -H 'Accept: text/event-stream' \
		"${BASE}tasks/$3:subscribe" &
	PIDS[$1]=$!
	on_exit "kill ${PIDS[$1]} 2>/dev/null"
}
# status_of NAME — the HTTP status of a stream once its headers arrived (waits ≤ 5 s).
status_of() {
	local i
	for i in $(seq 50); do
		[ -s "$T/$1.h" ] && grep -q $'\r$' "$T/$1.h" && break
		sleep 0.1
	done
	head -n1 "$T/$1.h" 2>/dev/null | awk '{print $2}'
}

# stream_max 3: alice's two, bob's one. A slot alice's gone client kept would leave no
# room for her next stream under either limit.
export TINY_HARNESS_STREAM_MAX_PER_PARTICIPANT=2 TINY_HARNESS_STREAM_MAX=3
BASE=$(sh "$SERVER" start "$T/srv" 1) || bail "lighttpd did not start"
DB=$(th_db_of "$T/srv")
echo "# lighttpd at $BASE (1 worker)"

# ------------------------------------------------------------------ the JSON-RPC id
head -c 921600 /dev/zero | tr '\0' i >"$T/bigid"
printf '{"jsonrpc":"2.0","id":"%s","method":"ListTasks","params":{}}' "$(cat "$T/bigid")" >"$T/bigid.json"
REQ_DESC="POST / with a 900 KB string id"
STATUS=$(curl -s -o "$T/body" -w '%{http_code}' --max-time 30 -H 'A2A-Version: 1.0' \
	-H 'X-Participant-Id: alice' -H 'Content-Type: application/json' --data-binary @"$T/bigid.json" "$BASE")
check "SEC-3 a 900 KB JSON-RPC id is refused with -32600 naming max_id, the id not echoed" \
	'[ "$STATUS" = 200 ]' '[ "$(jqb .error.code)" = -32600 ]' 'jqb .error.message | grep -q max_id' \
	'[ "$(jqb .id)" = null ]' '[ "$(wc -c <"$T/body")" -lt 2000 ]'

# ------------------------------------------------------------------ historyLength
http POST /message:send "$(tmsg m1 '' 'a long conversation')"
TASK=$(jqb .task.id)
has_task || bail "SendMessage did not create a task: $(cat "$T/body")"
if [ -z "${TH_TEST_PG:-}" ]; then
	sq "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 1100)
	    INSERT INTO message_rows (task_num, pos, message_id, role, sender, json, created_ms)
	    SELECT (SELECT num FROM tasks WHERE id = '$TASK'), 1000 + i, 'bulk-' || i, 'ROLE_USER', 'alice',
	           '{\"messageId\":\"bulk-' || i || '\",\"role\":\"ROLE_USER\",\"parts\":[{\"text\":\"x\"}]}', 0
	    FROM n"
	http GET "/tasks/$TASK?historyLength=5000"
	check "SEC-3 historyLength 5000 of a 1,100-message history gives the newest 1,000" \
		'[ "$STATUS" = 200 ]' '[ "$(jqb ".history | length")" = 1000 ]' \
		'[ "$(jqb ".history[-1].messageId")" = bulk-1100 ]'
	rpc_call GetTask "{\"id\":\"$TASK\"}"
	check "SEC-3 GetTask without historyLength gives at most 1,000 messages" \
		'[ "$(jqb ".result.history | length")" = 1000 ]'
else
	ok "SEC-3 historyLength 5000 capped # SKIP the messages are written with sqlite3"
	ok "SEC-3 GetTask without historyLength capped # SKIP the messages are written with sqlite3"
fi

# ------------------------------------------------------------------ streams per participant
# Twelve streams of dave's opened at once, on the worker's request threads together: the
# cap is counted and claimed in one step, so exactly two are accepted.
http POST /message:send "$(tmsg md '' 'dave watches')" dave
DTASK=$(jqb .task.id)
for i in $(seq 12); do stream "d$i" dave "$DTASK"; done
dcodes=$(for i in $(seq 12); do status_of "d$i"; done | sort | uniq -c | tr -s ' \n' ' ')
d200=$(for i in $(seq 12); do status_of "d$i"; done | grep -c '^200$')
REQ_DESC="twelve SubscribeToTask streams of dave's at once: $dcodes"
check "SEC-3 twelve streams opened at once by one participant (stream_max_per_participant = 2): exactly 2 accepted, the rest 429" \
	'[ "$d200" = 2 ]' '[ "$(for i in $(seq 12); do status_of "d$i"; done | grep -c "^429$")" = 10 ]'
for i in $(seq 12); do kill "${PIDS[d$i]}" 2>/dev/null; wait "${PIDS[d$i]}" 2>/dev/null; done
# Their slots come back once the worker's probes find the clients gone (< 1 s).
for i in $(seq 20); do
	rm -f "$T/dx.h"
	stream dx dave "$DTASK"
	[ "$(status_of dx)" = 200 ] && break
	sleep 0.2
done
kill "${PIDS[dx]}" 2>/dev/null
wait "${PIDS[dx]}" 2>/dev/null
sleep 1

stream a1 alice "$TASK"
stream a2 alice "$TASK"
S1=$(status_of a1) S2=$(status_of a2)
stream a3 alice "$TASK"
S3=$(status_of a3)
REQ_DESC="three SubscribeToTask streams as alice: $S1 $S2 $S3; third: $(cat "$T/a3.out" 2>/dev/null | head -c 300)"
check "SEC-3 a participant's third stream (stream_max_per_participant = 2) is 429 with Retry-After, naming the key" \
	'[ "$S1" = 200 ]' '[ "$S2" = 200 ]' '[ "$S3" = 429 ]' '[ -n "$(header "$T/a3.h" Retry-After)" ]' \
	'grep -q stream_max_per_participant "$T/a3.out"'
http POST /message:send "$(tmsg mb '' 'bob asks')" bob
stream b1 bob "$(jqb .task.id)"
SB=$(status_of b1)
http GET /tasks "" carol
REQ_DESC="bob's stream: $SB; carol's ListTasks: $STATUS in $TIME s"
check "SEC-3 meanwhile another participant gets a stream and ListTasks answers" \
	'[ "$SB" = 200 ]' '[ "$STATUS" = 200 ]'

# ------------------------------------------------------------------ a gone client's slot
kill "${PIDS[a1]}" 2>/dev/null
wait "${PIDS[a1]}" 2>/dev/null
S4=
for i in $(seq 10); do
	rm -f "$T/a4.h"
	stream a4 alice "$TASK"
	S4=$(status_of a4)
	[ "$S4" = 200 ] && break
	sleep 0.2
done
echo "# alice's slot came back after $i tries"
REQ_DESC="alice's new stream after her first client went away: $S4 after $i tries"
check "SEC-3 a stream whose client went away frees its slot: a new one is accepted within 2 s (heartbeat 15 s)" \
	'[ "$S4" = 200 ]'
for k in "${!PIDS[@]}"; do kill "${PIDS[$k]}" 2>/dev/null; done
sh "$SERVER" stop "$T/srv"

# ------------------------------------------------------------------ request rate
export TINY_HARNESS_RATE_LIMIT_RPS=1 TINY_HARNESS_RATE_LIMIT_BURST=3
BASE=$(sh "$SERVER" start "$T/rate" 1) || bail "lighttpd did not start"
# A bucket of 3 that gains one a second: the first three pass, and then one more for each
# whole second the requests took (a loaded machine may take more than one for four).
codes= passed=0 start=$(date +%s%N)
for i in 1 2 3 4 5 6 7 8; do
	http GET /tasks "" alice
	codes="$codes $STATUS"
	if [ "$STATUS" != 200 ]; then
		cp "$T/headers" "$T/rate.h"
		break
	fi
	passed=$((passed + 1))
done
took=$((($(date +%s%N) - start) / 1000000))
LAST=$(cat "$T/body")
http GET /tasks "" bob
REQ_DESC="alice's requests:$codes in $took ms; the last: $LAST; bob: $STATUS"
check "SEC-3 over rate_limit_rps (1/s, burst 3) the burst passes, then 429 with Retry-After naming the key; bob is served" \
	'[ "${codes# 200 200 200}" != "$codes" ]' '[ "${codes##* }" = 429 ]' '[ "$passed" -le $((3 + took / 1000)) ]' \
	'[ -n "$(header "$T/rate.h" Retry-After)" ]' \
	'printf %s "$LAST" | grep -q rate_limit_rps' '[ "$STATUS" = 200 ]'

echo "1..$n"
[ "$failed" = 0 ]
