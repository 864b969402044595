#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# OBS-1..OBS-4 through the real lighttpd (conf/lighttpd.conf, two FastCGI workers, the
# recipe's login on: identity = remote_user): requests move the shared counters of
# <base>metrics by exactly what was sent, whichever worker process served them; the
# latency histogram is well formed; open streams, turns, push backlog and database size
# read true; an anonymous or unlisted reader is refused; every request leaves one
# key=value line in the error log. TAP output; 77 (skip) when lighttpd, curl, jq, openssl
# or sqlite3 is missing. Then a second server with both off: no line, no counters, no
# route. About 8 s.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
set -u

: "${TH_SRCDIR:=$(cd "$(dirname "$0")/../.." && pwd)}"
. "$TH_SRCDIR/tests/lib/tap.sh"
. "$TH_SRCDIR/tests/lib/proc.sh"
. "$TH_SRCDIR/tests/lib/a2a.sh"

[ -x "$TH_BIN" ] || skip "no program at $TH_BIN"
require_lighttpd
require_tools curl jq sqlite3 openssl

scratch th-obs
basic_auth "$T/auth"
# OBS-3: only alice may read; bob logs in but is not listed.
export TINY_HARNESS_METRICS_READERS=alice
# The counters' file named outright, so that the PostgreSQL run counts too.
export TINY_HARNESS_METRICS_FILE=$T/metrics.counters
# A stream ends by itself after 1.5 s (the open-streams gauge goes back down).
export TINY_HARNESS_STREAM_MAX_MS=1500
# Push to a closed loopback port: deliveries stay in the backlog, retried.
export TINY_HARNESS_PUSH_ALLOW_PRIVATE=1 TINY_HARNESS_PUSH_RETRY_BASE_MS=60000
unset TINY_HARNESS_ECHO_DELAY_MS TINY_HARNESS_REQUEST_LOG TINY_HARNESS_METRICS
BASE=$(sh "$SERVER" start "$T/srv" 2) || bail "lighttpd did not start"
DB=$(th_db_of "$T/srv")
# The workers' stderr (their log) is lighttpd's stderr (lighttpd.out) or its error.log.
logs() { cat "$T/srv/lighttpd.out" "$T/srv/error.log" 2>/dev/null; }
echo "# lighttpd at $BASE (2 workers), identity = remote_user"

# scrape FILE [USER] — GET <base>metrics as USER (default alice) into FILE; STATUS.
scrape() {
	local who=${2-alice} login=()
	[ -n "$who" ] && login=(-u "$who:$TEST_PASSWORD")
	REQ_DESC="GET ${BASE}metrics as ${who:-nobody}"
	STATUS=$(curl -s -o "$1" -D "$T/headers" -w '%{http_code}' --max-time 30 "${login[@]}" "${BASE}metrics")
}
# val FILE SERIES — the value of one series (name and labels exactly), 0 when absent.
val() { awk -v s="$2" '$1 == s { v = $2 } END { print v + 0 }' "$1"; }
# delta SERIES — its value in after minus before.
delta() { echo $(($(val "$T/after" "$1") - $(val "$T/before" "$1"))); }
req() { printf 'tiny_harness_requests_total{method="%s",outcome="%s"}' "$1" "$2"; }

# ------------------------------------------------------------------ the guard (OBS-3)
scrape "$T/anon" ""
# The two 401s come from the recipe's login (lighttpd's mod_auth guards every path but the
# card), before the worker: they show the shipped recipe keeps the endpoint closed. The
# worker's own refusals are check_bind's test_obs3_*.
check "OBS-3 through the login recipe an anonymous reader is refused (401), no counter in the answer" \
	'[ "$STATUS" = 401 ]' '! grep -q tiny_harness_ "$T/anon"'
scrape "$T/bob" bob
check "OBS-3 an authenticated participant not in metrics_readers is refused (403 naming the key)" \
	'[ "$STATUS" = 403 ]' 'grep -q metrics_readers "$T/bob"' '! grep -q tiny_harness_ "$T/bob"'
curl -s -o "$T/xpid" -w '%{http_code}' --max-time 30 -H 'X-Participant-Id: alice' "${BASE}metrics" >"$T/xpid.status"
REQ_DESC="GET ${BASE}metrics with X-Participant-Id: alice and no login"
check "OBS-3 through the login recipe X-Participant-Id alone does not make a reader (401)" \
	'[ "$(cat "$T/xpid.status")" = 401 ]' '! grep -q tiny_harness_ "$T/xpid"'

# ------------------------------------------------------------------ counters (OBS-2)
http POST / "$(rpc 1 SendMessage "$(msg m-first "first")")"
TASK=$(jqb .result.task.id)
has_task || bail "no task: $(cat "$T/body")"
scrape "$T/before"
check "OBS-2 alice reads the metrics: 200, Prometheus text 0.0.4" \
	'[ "$STATUS" = 200 ]' \
	'tr -d "\r" <"$T/headers" | grep -qi "^content-type: text/plain; version=0.0.4"' \
	'grep -q "^# TYPE tiny_harness_requests_total counter$" "$T/before"'

# 6 SendMessages at once (spread over the two workers), 2 GetTasks, 1 GetTask of a
# missing task, 1 SendMessage without parts, 1 unknown JSON-RPC method.
for i in 1 2 3 4 5 6; do
	post_bg "send$i" alice "$BASE" "$(rpc "$i" SendMessage "$(msg "m-par-$i" "parallel $i")")"
done
wait
for i in 1 2 3 4 5 6; do
	jq -e .result.task.id "$T/send$i" >/dev/null 2>&1 || bail "send $i failed: $(cat "$T/send$i")"
done
http GET "/tasks/$TASK" ""
http GET "/tasks/$TASK?historyLength=1" ""
http GET /tasks/no-such-task ""
http POST / '{"jsonrpc":"2.0","id":9,"method":"SendMessage","params":{"message":{"messageId":"m-bad","role":"ROLE_USER"}}}'
http POST / '{"jsonrpc":"2.0","id":10,"method":"NoSuchMethod","params":{}}'
scrape "$T/after"
REQ_DESC="before/after scrapes; SendMessage ok +$(delta "$(req SendMessage ok)"), GetTask ok +$(delta "$(req GetTask ok)")"
check "OBS-2 requests_total moves by exactly what was sent, by method and outcome" \
	'[ "$(delta "$(req SendMessage ok)")" = 6 ]' \
	'[ "$(delta "$(req GetTask ok)")" = 2 ]' \
	'[ "$(delta "$(req GetTask task_not_found)")" = 1 ]' \
	'[ "$(delta "$(req SendMessage invalid_params)")" = 1 ]' \
	'[ "$(delta "$(req unknown method_not_found)")" = 1 ]' \
	'[ "$(delta "$(req ListTasks ok)")" = 0 ]'
check "OBS-2 turns_total counts the 6 echo turns" \
	'[ "$(delta "tiny_harness_turns_total{outcome=\"done\"}")" = 6 ]'
check "OBS-2 the SendMessage histogram count moved by the 7 SendMessages" \
	'[ "$(delta "tiny_harness_request_duration_seconds_count{method=\"SendMessage\"}")" = 7 ]'

# Every histogram: buckets in increasing le, counts never falling, +Inf equal to _count,
# and _sum present.
awk '
	/^tiny_harness_request_duration_seconds_bucket/ {
		match($1, /method="[^"]*"/); m = substr($1, RSTART, RLENGTH)
		match($1, /le="[^"]*"/); le = substr($1, RSTART + 4, RLENGTH - 5)
		if (m in last && $2 < last[m]) { print "falls at " m " le=" le; bad = 1 }
		if (m in lastle && le != "+Inf" && le + 0 <= lastle[m] + 0) { print "le out of order " m; bad = 1 }
		last[m] = $2; lastle[m] = le; if (le == "+Inf") inf[m] = $2; n[m]++
	}
	/^tiny_harness_request_duration_seconds_count/ { match($1, /method="[^"]*"/); cnt[substr($1, RSTART, RLENGTH)] = $2 }
	/^tiny_harness_request_duration_seconds_sum/ { match($1, /method="[^"]*"/); sum[substr($1, RSTART, RLENGTH)] = 1 }
	END {
		for (m in n) {
			if (!(m in inf) || inf[m] != cnt[m]) { print "+Inf != count for " m; bad = 1 }
			if (!(m in sum)) { print "no _sum for " m; bad = 1 }
			k++
		}
		if (k < 3) { print "only " k " histograms"; bad = 1 }
		exit bad
	}' "$T/after" >"$T/histo.txt"
HISTO_RC=$?
REQ_DESC="histogram check: $(tr '\n' ' ' <"$T/histo.txt")"
check "OBS-2 every latency histogram is well formed: cumulative buckets, +Inf = _count, a _sum" \
	'[ "$HISTO_RC" = 0 ]' 'grep -q "le=\"+Inf\"" "$T/after"'

# ------------------------------------------------------------------ the log line (OBS-1)
sleep 0.2
line_for() { logs | grep -F "info: request method=$1 " | grep -F "$2" | tail -n1; }
T1=$(jq -r .result.task.id "$T/send1")
L1=$(line_for SendMessage "task=$T1 ")
REQ_DESC="log line: $L1"
check "OBS-1 a SendMessage leaves one key=value line: method, binding, the task it made, participant, status, outcome, ms" \
	'[ "$(logs | grep -cF "task=$T1 ")" = 1 ]' \
	'printf "%s" "$L1" | grep -Eq "^tiny-harness\[[0-9]+\]: info: request method=SendMessage binding=jsonrpc task=$T1 participant=alice status=200 outcome=ok ms=[0-9]+\.[0-9]{3}$"'
L2=$(line_for GetTask "task=no-such-task ")
REQ_DESC="log line: $L2"
check "OBS-1 a refused GetTask's line says the REST binding, 404 and task_not_found" \
	'printf "%s" "$L2" | grep -Eq "request method=GetTask binding=rest task=no-such-task participant=alice status=404 outcome=task_not_found ms="'
PIDS=$(logs | grep -F "info: request method=SendMessage " | sed 's/^tiny-harness\[\([0-9]*\)\].*/\1/' | sort -u | wc -l)
echo "# SendMessage lines came from $PIDS worker process(es)"
# ------------------------------------------------------------------ gauges (OBS-2)
http POST / "$(rpc 20 CreateTaskPushNotificationConfig "{\"taskId\":\"$TASK\",\"url\":\"http://127.0.0.1:9/hook\"}")"
[ "$STATUS" = 200 ] && jq -e .result "$T/body" >/dev/null || bail "push config refused: $(cat "$T/body")"
http POST / "$(rpc 21 SendMessage "$(msg m-push "push me" "$TASK")")"
sleep 0.5
curl -s -N --max-time 5 -o "$T/stream" -H 'A2A-Version: 1.0' -u "alice:$TEST_PASSWORD" \
	"${BASE}tasks/$TASK:subscribe" &
SPID=$!
sleep 0.7
scrape "$T/open"
BACKLOG=$(sq "SELECT count(*) FROM push_outbox WHERE state IN ('pending', 'sending')")
REQ_DESC="open_streams=$(val "$T/open" tiny_harness_open_streams) push_backlog=$(val "$T/open" tiny_harness_push_backlog) outbox=$BACKLOG"
check "OBS-2 open_streams counts a subscriber; push_backlog is the outbox's undelivered rows" \
	'[ "$(val "$T/open" tiny_harness_open_streams)" = 1 ]' \
	'[ "$BACKLOG" -ge 1 ]' '[ "$(val "$T/open" tiny_harness_push_backlog)" = "$BACKLOG" ]'
wait "$SPID"
sleep 0.3
scrape "$T/closed"
check "OBS-2 open_streams is back to 0 once the stream ended (stream_max_ms)" \
	'[ "$(val "$T/closed" tiny_harness_open_streams)" = 0 ]'
if [ -f "$DB" ]; then
	REQ_DESC="database_bytes=$(val "$T/closed" tiny_harness_database_bytes) file=$(stat -c %s "$DB") wal_bytes=$(val "$T/closed" tiny_harness_wal_bytes)"
	check "OBS-2 database_bytes is the SQLite file's size, wal_bytes its WAL's" \
		'[ "$(val "$T/closed" tiny_harness_database_bytes)" = "$(stat -c %s "$DB")" ]' \
		'grep -q "^tiny_harness_wal_bytes [0-9]" "$T/closed"'
fi

# Every request the workers answered left one line: the lines equal the counters' total,
# plus the last scrape's own line (it is counted after its answer).
sleep 0.3
N_LINES=$(logs | grep -c "info: request method=")
N_COUNTED=$(awk '/^tiny_harness_requests_total/ { s += $2 } END { print s + 0 }' "$T/closed")
REQ_DESC="$N_LINES request lines, $N_COUNTED requests counted before the last scrape"
check "OBS-1 one line per request: as many lines as requests counted" \
	'[ "$N_LINES" -gt 20 ]' '[ "$N_LINES" = $((N_COUNTED + 1)) ]'

sh "$SERVER" stop "$T/srv"

# ------------------------------------------------------------------ the off switch
# request_log = 0 and metrics = 0: the same requests leave no line, no counters' file is
# made, and <base>metrics is a route that does not exist (404 naming the key).
rm -f "$T/metrics.counters"
BASE=$(TINY_HARNESS_REQUEST_LOG=0 TINY_HARNESS_METRICS=0 sh "$SERVER" start "$T/off" 1) ||
	bail "lighttpd (off) did not start"
offlogs() { cat "$T/off/lighttpd.out" "$T/off/error.log" 2>/dev/null; }
OFF_TASK=$(curl -s -u "alice:$TEST_PASSWORD" -H 'Content-Type: application/json' -H 'A2A-Version: 1.0' \
	-d '{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"off-1","role":"ROLE_USER","parts":[{"text":"hi"}]}}}' \
	"$BASE" | jq -r '.result.task.id // empty')
curl -s -o /dev/null -u "alice:$TEST_PASSWORD" -H 'A2A-Version: 1.0' "${BASE}tasks/$OFF_TASK"
scrape "$T/offmetrics"
sleep 0.3
REQ_DESC="task $OFF_TASK; metrics $STATUS: $(head -c 200 "$T/offmetrics"); $(offlogs | grep -c 'info: request method=') request lines"
check "OBS-1 OBS-2 with request_log = 0 and metrics = 0: no request line, no counters' file, metrics is 404 naming the key" \
	'[ -n "$OFF_TASK" ]' '[ "$(offlogs | grep -c "info: request method=")" = 0 ]' \
	'[ ! -e "$T/metrics.counters" ]' '[ "$STATUS" = 404 ]' 'grep -q "metrics = 0" "$T/offmetrics"'
sh "$SERVER" stop "$T/off"
tap_done
