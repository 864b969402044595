#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# bench/pages.sh — what one SendMessage writes: WAL frames (dirtied pages, counted once
# per commit that writes them), transactions, and bytes on disk per echo task.
#
#   bench/pages.sh            N=200 sequential SendMessages (new task each), 2 workers
#   N=500 PROCS=2 bench/pages.sh
#   CONNS=16 SECS=5 bench/pages.sh   SendMessage from wrk's CONNS connections for SECS
#                             seconds instead: what overlapping requests write, when
#                             their transactions commit together (decision-023)
#
# A second connection keeps a read transaction open for the whole run, so no
# checkpoint can reset the WAL: its growth divided by the frame size (page size + 24
# bytes) is the number of frames the N requests appended. Loopback only, bounded by N.
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILD:-$root/build}
TH_BIN=${TH_BIN:-$BUILD/src/tiny-harness}
N=${N:-200}
PROCS=${PROCS:-1}
export TH_BIN TH_SRCDIR=$root
die() { echo "pages: $*" >&2; exit 1; }
[ -x "$TH_BIN" ] || die "no program at $TH_BIN"
unset TINY_HARNESS_ECHO_DELAY_MS TINY_HARNESS_CONF
state=$(mktemp -d "${TMPDIR:-/tmp}/th-pages.XXXXXX")
holder=
cleanup() {
	[ -z "$holder" ] || kill "$holder" 2>/dev/null
	sh "$root/tests/lib/server.sh" stop "$state/srv"
	rm -rf "$state"
}
trap cleanup EXIT
url=$(sh "$root/tests/lib/server.sh" start "$state/srv" "$PROCS") || die "lighttpd did not start"
case $url in http://127.0.0.1:*) ;; *) die "refusing a non-loopback URL: $url" ;; esac
db=$state/srv/tiny-harness.db

send() { # send I
	curl -s -o /dev/null -w '%{http_code}' -H 'Content-Type: application/json' \
		-H 'A2A-Version: 1.0' -H 'X-Participant-Id: bench' --data-binary \
		"{\"jsonrpc\":\"2.0\",\"id\":$1,\"method\":\"SendMessage\",\"params\":{\"message\":{\"messageId\":\"p-$1\",\"role\":\"ROLE_USER\",\"parts\":[{\"text\":\"benchmark message $1\"}]}}}" \
		"$url"
}
# Warm up (schema pages, statement caches), then pin the WAL with a read snapshot.
for i in 1 2 3 4 5; do send "w$i" >/dev/null; done
mkfifo "$state/pin"
{ echo 'BEGIN; SELECT count(*) FROM tasks;'; cat "$state/pin"; echo 'COMMIT;'; } |
	sqlite3 "$db" >/dev/null &
holder=$!
exec 9>"$state/pin"
sleep 0.3
page=$(sqlite3 "$db" 'PRAGMA page_size')
wal0=$(stat -c %s "$db-wal" 2>/dev/null || echo 0)
size0=$(( $(sqlite3 "$db" 'PRAGMA page_count') * page ))
bad=0
if [ -n "${CONNS:-}" ]; then
	command -v wrk >/dev/null 2>&1 || die "CONNS needs wrk"
	out=$(timeout -s KILL $((${SECS:-5} + 30)) wrk -t2 -c"$CONNS" -d"${SECS:-5}s" \
		-s "$root/bench/send_message.lua" "$url") || die "wrk failed"
	N=$(echo "$out" | awk '/requests in/ { print $1 }')
	bad=$(echo "$out" | awk '/Non-2xx/ { print $NF }')
	bad=${bad:-0}
	sleep 0.5 # requests wrk left in flight finish
else
	for i in $(seq 1 "$N"); do
		[ "$(send "$i")" = 200 ] || bad=$((bad + 1))
	done
fi
wal1=$(stat -c %s "$db-wal")
[ -z "${PAGES_DETAIL:-}" ] || python3 "$PAGES_DETAIL" "$db" "$db-wal" "$wal0" "$N"
exec 9>&-
wait "$holder" 2>/dev/null
holder=
sqlite3 "$db" 'PRAGMA wal_checkpoint(TRUNCATE)' >/dev/null
size1=$(( $(sqlite3 "$db" 'PRAGMA page_count') * page ))
frames=$(( (wal1 - wal0) / (page + 24) ))
echo "requests            $N (non-200: $bad)"
echo "page size           $page"
echo "WAL frames          $frames ($(awk -v f="$frames" -v n="$N" 'BEGIN{printf "%.1f", f/n}') per SendMessage)"
echo "WAL bytes/request   $(( (wal1 - wal0) / N ))"
echo "db growth/task      $(( (size1 - size0) / N )) bytes"
echo "tasks               $(sqlite3 "$db" 'SELECT count(*) FROM tasks')"
echo "rows/task           messages $(sqlite3 "$db" 'SELECT count(*)*1.0/(SELECT count(*) FROM tasks) FROM messages'), events $(sqlite3 "$db" 'SELECT count(*)*1.0/(SELECT count(*) FROM tasks) FROM events'), turns $(sqlite3 "$db" 'SELECT count(*)*1.0/(SELECT count(*) FROM tasks) FROM turns')"
