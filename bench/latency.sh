#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# bench/latency.sh — cross-process event latency (STREAM-2, STREAM-3): how long after a
# worker commits an event another worker's SubscribeToTask delivers it to the client.
# Loopback only, bounded in events and time, stops by itself.
#
#   bench/latency.sh                      lighttpd, 3 workers, 200 events
#   SERVERS="lighttpd fcgid proxy" bench/latency.sh
#                                         also through Apache+mod_fcgid and
#                                         Apache+mod_proxy_fcgi (tests/lib/apache.sh)
#   EVENTS=200 PROCS=3 POLL_MS=50 bench/latency.sh
#   BUILD=/path/to/builddir bench/latency.sh
#   NO_SAVE=1 bench/latency.sh            print only; otherwise also writes
#                                         bench/results/latency-<date>.txt
#
# Per server: one task; a subscriber (node, plain HTTP, REST GET /tasks/{id}:subscribe)
# holds a stream open in one worker and stamps every event on arrival; meanwhile a
# client sends follow-ups one after another (SendMessage, echo model without delay) that
# other workers run, each writing a WORKING and an INPUT_REQUIRED status event. Latency
# of an event = its arrival at the subscriber minus its events.created_ms (both the
# machine's real-time clock, in ms). The subscriber polls PRAGMA data_version every
# TINY_HARNESS_STREAM_POLL_MS (POLL_MS, default 50 = the program's default), so the
# expected median is about half of it plus the write and the HTTP hop.
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILD:-$root/build}
TH_BIN=${TH_BIN:-$BUILD/src/tiny-harness}
EVENTS=${EVENTS:-200}
PROCS=${PROCS:-1}
POLL_MS=${POLL_MS:-50}
SERVERS=${SERVERS:-lighttpd}
export TH_BIN TH_SRCDIR=$root

die() {
	echo "latency: $*" >&2
	exit 1
}
[ -x "$TH_BIN" ] || die "no program at $TH_BIN; build first (./scripts/run.sh or ./scripts/test.sh)"
for t in curl jq sqlite3 node; do command -v $t >/dev/null 2>&1 || die "$t is not installed (scripts/deps.sh)"; done
case $EVENTS in '' | *[!0-9]*) die "EVENTS must be a number" ;; esac
[ "$EVENTS" -ge 10 ] && [ "$EVENTS" -le 5000 ] || die "EVENTS between 10 and 5000"
case $PROCS in '' | *[!0-9]*) die "PROCS must be a number" ;; esac
[ "$PROCS" -ge 2 ] || die "PROCS must be at least 2 (one worker streams, another writes)"

unset TINY_HARNESS_ECHO_DELAY_MS TINY_HARNESS_CONF
export TINY_HARNESS_STREAM_POLL_MS=$POLL_MS
# Heartbeats do not matter here; the stream must outlive the run.
export TINY_HARNESS_HEARTBEAT_MS=15000 TINY_HARNESS_STREAM_MAX_MS=300000

state=$(mktemp -d "${TMPDIR:-/tmp}/th-latency.XXXXXX")
chmod 711 "$state" # Apache's unprivileged user must reach its state directory
SUB_PID=
STARTED=
cleanup() {
	[ -z "$SUB_PID" ] || kill "$SUB_PID" 2>/dev/null
	for s in $STARTED; do
		case $s in
		lighttpd) sh "$root/tests/lib/server.sh" stop "$state/$s" ;;
		*) sh "$root/tests/lib/apache.sh" stop "$state/$s" ;;
		esac
	done
	rm -rf "$state"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

# The subscriber: prints "<id> <arrival epoch ms with fraction>" per event, stops after
# argv[4] events after the snapshot or argv[5] ms.
cat >"$state/sub.mjs" <<'JS'
import http from 'node:http';
import { performance } from 'node:perf_hooks';
const [base, task, who, want, limitMs] = process.argv.slice(2);
const now = () => performance.timeOrigin + performance.now();
let got = 0, buf = '', id = null, data = false, first = true;
const req = http.request(new URL(`${base}tasks/${task}:subscribe`), {
	headers: { 'A2A-Version': '1.0', 'X-Participant-Id': who, Accept: 'text/event-stream' },
}, (res) => {
	if (res.statusCode !== 200) { console.error(`subscribe: HTTP ${res.statusCode}`); process.exit(1); }
	res.setEncoding('utf8');
	res.on('data', (chunk) => {
		const t = now();
		buf += chunk;
		let nl;
		while ((nl = buf.indexOf('\n')) >= 0) {
			const line = buf.slice(0, nl).replace(/\r$/, '');
			buf = buf.slice(nl + 1);
			if (line.startsWith('id:')) id = line.slice(3).trim();
			else if (line.startsWith('data:')) data = true;
			else if (line === '' && data) {
				if (first) { console.log(`snapshot ${id}`); first = false; }
				else { console.log(`${id} ${t.toFixed(3)}`); got++; }
				id = null; data = false;
				if (got >= Number(want)) { req.destroy(); process.exit(0); }
			}
		}
	});
	res.on('end', () => process.exit(got >= Number(want) ? 0 : 2));
});
req.on('error', (e) => { console.error(String(e)); process.exit(1); });
req.end();
setTimeout(() => { console.error(`timeout after ${got} events`); req.destroy(); process.exit(3); }, Number(limitMs));
JS

rpc() { # rpc URL BODY
	curl -s --max-time 30 -H 'Content-Type: application/json' -H 'A2A-Version: 1.0' \
		-H 'X-Participant-Id: bench' --data-binary "$2" "$1"
}

commit=$(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)
dirty=$(git -C "$root" status --porcelain --untracked-files=no 2>/dev/null | grep -q . && echo "+changes")
report=$state/report.txt
{
	echo "tiny-harness cross-process event latency — $(date -u +%Y-%m-%dT%H:%M:%SZ)"
	echo "commit $commit$dirty; $(nproc) CPUs; $(uname -sr); node $(node --version)"
	echo "$("$TH_BIN" card 2>/dev/null | jq -r '"tiny-harness " + .version' 2>/dev/null)"
	command -v lighttpd >/dev/null && echo "$(lighttpd -v 2>&1 | head -n1)"
	command -v apache2 >/dev/null && echo "$(apache2 -v 2>/dev/null | head -n1)"
	echo "events per server: $EVENTS; workers: $PROCS; TINY_HARNESS_STREAM_POLL_MS=$POLL_MS; echo model, no delay"
	echo "latency = arrival at the subscriber - events.created_ms (same clock); one subscriber, one sender"
	echo
	printf '%-22s %7s %7s %7s %7s %7s %7s %9s\n' server events min median p90 p99 max "sender/s"
} >"$report"

for server in $SERVERS; do
	dir=$state/$server
	case $server in
	lighttpd) url=$(sh "$root/tests/lib/server.sh" start "$dir" "$PROCS") || die "lighttpd did not start" ;;
	fcgid | proxy)
		if ! why=$(sh "$root/tests/lib/apache.sh" check "$server"); then
			echo "latency: skipping $server: $why" >&2
			continue
		fi
		url=$(sh "$root/tests/lib/apache.sh" start "$server" "$dir" "$PROCS") || die "Apache ($server) did not start"
		;;
	*) die "unknown server '$server' (lighttpd, fcgid, proxy)" ;;
	esac
	STARTED="$STARTED $server"
	case $url in http://127.0.0.1:*) ;; *) die "refusing a non-loopback URL: $url" ;; esac
	db=$dir/tiny-harness.db

	task=$(rpc "$url" '{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"lat-0","role":"ROLE_USER","parts":[{"text":"latency"}]}}}' | jq -r .result.task.id)
	[ -n "$task" ] && [ "$task" != null ] || die "could not create a task through $server"

	node "$state/sub.mjs" "$url" "$task" bench "$EVENTS" 120000 >"$state/arrivals.$server" 2>"$state/sub.$server.err" &
	SUB_PID=$!
	# Wait (bounded) for the snapshot: the stream is open before the first follow-up.
	i=0
	while ! grep -q '^snapshot' "$state/arrivals.$server" 2>/dev/null && [ $i -lt 100 ]; do
		sleep 0.05
		i=$((i + 1))
	done
	grep -q '^snapshot' "$state/arrivals.$server" || die "the subscriber got no snapshot through $server: $(cat "$state/sub.$server.err")"

	# Follow-ups one after another until the subscriber has its events (or 120 s).
	t0=$(date +%s%3N)
	sent=0
	while kill -0 "$SUB_PID" 2>/dev/null && [ $(($(date +%s%3N) - t0)) -lt 120000 ]; do
		sent=$((sent + 1))
		rpc "$url" "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"SendMessage\",\"params\":{\"message\":{\"messageId\":\"lat-$sent\",\"role\":\"ROLE_USER\",\"taskId\":\"$task\",\"parts\":[{\"text\":\"ping $sent\"}]}}}" >/dev/null
		sleep 0.01
	done
	t1=$(date +%s%3N)
	wait "$SUB_PID"
	src=$?
	SUB_PID=
	[ "$src" = 0 ] || die "the subscriber through $server stopped early (status $src): $(cat "$state/sub.$server.err")"

	sqlite3 "$db" "SELECT seq, created_ms FROM events WHERE task_id = '$task'" | tr '|' ' ' | sort -k1,1 >"$state/created.$server"
	grep -v '^snapshot' "$state/arrivals.$server" | sort -k1,1 >"$state/arrived.$server"
	join "$state/arrived.$server" "$state/created.$server" | awk '{ printf "%.3f\n", $2 - $3 }' | sort -n >"$state/lat.$server"
	count=$(grep -c . "$state/lat.$server")
	[ "$count" -eq "$EVENTS" ] || die "$server: $count of $EVENTS events matched the events table"
	workers=$(sqlite3 "$db" "SELECT COUNT(DISTINCT worker_pid) FROM turns WHERE worker_pid > 0")
	rate=$(awk -v s="$sent" -v a="$t0" -v b="$t1" 'BEGIN { printf "%.0f", (b > a) ? s * 1000 / (b - a) : 0 }')
	awk -v name="$server" -v rate="$rate" '
		{ a[NR] = $1 }
		END {
			i50 = int(NR * 0.50 + 0.5); if (i50 < 1) i50 = 1
			i90 = int(NR * 0.90 + 0.5); if (i90 < 1) i90 = 1
			i99 = int(NR * 0.99 + 0.5); if (i99 < 1) i99 = 1
			printf "%-22s %7d %7.1f %7.1f %7.1f %7.1f %7.1f %9s\n", name, NR, a[1], a[i50], a[i90], a[i99], a[NR], rate
		}' "$state/lat.$server" >>"$report"
	echo "  ($server: $sent follow-ups, turns in $workers worker processes, subscriber in another)" >>"$state/notes"

	case $server in
	lighttpd) sh "$root/tests/lib/server.sh" stop "$dir" ;;
	*) sh "$root/tests/lib/apache.sh" stop "$dir" ;;
	esac
	STARTED=$(echo "$STARTED" | sed "s/ $server//")
done
{
	echo "(milliseconds)"
	cat "$state/notes" 2>/dev/null
} >>"$report"

cat "$report"
if [ "${NO_SAVE:-0}" != 1 ]; then
	mkdir -p "$root/bench/results"
	out=$root/bench/results/latency-$(date -u +%Y-%m-%d).txt
	cp "$report" "$out" && echo "latency: wrote ${out#"$root"/}"
fi
