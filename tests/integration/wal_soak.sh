#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Integration test: the WAL stays bounded under continuous load (STORE-5), through
# lighttpd (tests/lib/server.sh) with 4 FastCGI workers sharing one SQLite database.
#
# wrk (-t2 -c16, TH_WAL_SOAK_SECONDS, default 20 s, loopback only) sends JSON-RPC
# SendMessage requests, each creating a new task (tests/integration/wal_soak.lua; the echo
# model answers at once). Meanwhile the size of tiny-harness.db-wal is sampled every
# 200 ms. Then:
#  - the largest WAL seen is under 64 MiB (STORE-5's default bound);
#  - wrk saw no non-2xx answer, no JSON-RPC error and no socket error (connect, read,
#    write, timeout), and at least one answer;
#  - PRAGMA integrity_check is ok once the load is over;
#  - every answered SendMessage's task exists (each task id a 2xx answer carried is in
#    `tasks`, all distinct), and the database holds no more tasks than were answered plus
#    those still in flight when wrk stopped (at most one a connection).
# Prints the largest WAL, the request count and requests/s as TAP comments.
# With the database in PostgreSQL (TH_TEST_PG, tests/lib/server.sh) the WAL bound and
# PRAGMA integrity_check are SQLite's alone: those two checks are skipped, the load and
# the task ids are checked as above.
# Environment: TH_WAL_SOAK_SECONDS (20), TH_WAL_SOAK_CONNS (16), TH_WAL_SOAK_LIMIT_MIB (64).
# Bounded: wrk runs the given seconds (killed 30 s later at most); about 30 s in all.
# TAP output; 77 (skip) when lighttpd, wrk, curl, jq or sqlite3 is missing.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
set -u

: "${TH_SRCDIR:=$(cd "$(dirname "$0")/../.." && pwd)}"
. "$TH_SRCDIR/tests/lib/tap.sh"
. "$TH_SRCDIR/tests/lib/proc.sh"
. "$TH_SRCDIR/tests/lib/a2a.sh"

[ -x "$TH_BIN" ] || skip "no program at $TH_BIN"
require_lighttpd
require_tools wrk curl jq sqlite3 timeout

SECS=${TH_WAL_SOAK_SECONDS:-20}
CONNS=${TH_WAL_SOAK_CONNS:-16}
LIMIT_MIB=${TH_WAL_SOAK_LIMIT_MIB:-64}
case "$SECS$CONNS$LIMIT_MIB" in *[!0-9]*) bail "TH_WAL_SOAK_SECONDS, _CONNS and _LIMIT_MIB must be numbers" ;; esac
LIMIT=$((LIMIT_MIB * 1024 * 1024))
PROCS=4
LUA=$TH_SRCDIR/tests/integration/wal_soak.lua
[ -r "$LUA" ] || bail "no $LUA"

scratch th-walsoak
WRK_PID=
on_exit '[ -n "$WRK_PID" ] && kill "$WRK_PID" 2>/dev/null'

# The echo model answers at once: the load is writes, as fast as the workers go.
unset TINY_HARNESS_ECHO_DELAY_MS
BASE=$(sh "$SERVER" start "$T/srv" "$PROCS") || bail "lighttpd did not start"
case $BASE in http://127.0.0.1:*) ;; *) bail "refusing a non-loopback URL: $BASE" ;; esac
DB=$(th_db_of "$T/srv")
WAL=$DB-wal
PG=
th_db_is_pg "$DB" && PG="the database is PostgreSQL"
echo "# lighttpd at $BASE ($PROCS workers); wrk -t2 -c$CONNS -d${SECS}s SendMessage, WAL limit $LIMIT_MIB MiB"

mib() { awk -v b="$1" 'BEGIN { printf "%.1f", b / 1048576 }'; }
wal_size() { stat -c %s "$WAL" 2>/dev/null || echo 0; }

# ------------------------------------------------------------------ the load
mkdir -p "$T/ids"
WAL_SOAK_OUT=$T/ids/ids WAL_SOAK_RUN=$$-$(now_ms) \
	timeout -s KILL $((SECS + 30)) wrk -t2 -c"$CONNS" -d"${SECS}s" --timeout 10s -s "$LUA" "$BASE" \
	>"$T/wrk.out" 2>&1 &
WRK_PID=$!
# The sampler forks only stat and sleep (bash's clock, /proc for liveness), and sleeps
# to the next 200 ms tick, so a loaded machine does not stretch the period.
clock_ms() { local t=${EPOCHREALTIME/[.,]/}; echo $((t / 1000)); }
running() { # running PID — not gone and not a zombie (builtins only)
	local st
	read -r st 2>/dev/null <"/proc/$1/stat" || return 1
	st=${st##*) }
	[ "${st%% *}" != Z ]
}
max=0
max_at=0
samples=0
t0=$(clock_ms)
next_report=5000
# PostgreSQL: no SQLite WAL to sample; the loop only waits for wrk.
while running "$WRK_PID"; do
	if [ -n "$PG" ]; then
		sleep 0.2
		continue
	fi
	s=$(wal_size)
	el=$(($(clock_ms) - t0))
	if [ "$s" -gt "$max" ]; then
		max=$s
		max_at=$el
	fi
	samples=$((samples + 1))
	if [ "$el" -ge "$next_report" ]; then
		echo "# $((el / 1000)) s: WAL $(mib "$s") MiB (max so far $(mib "$max") MiB)"
		next_report=$((next_report + 5000))
	fi
	nap=$((200 - ($(clock_ms) - t0) % 200))
	sleep "0.$(printf '%03d' "$((nap >= 200 ? 199 : nap))")"
done
wait "$WRK_PID"
wrk_rc=$?
WRK_PID=
elapsed=$(($(clock_ms) - t0))

line=$(grep '^WAL_SOAK ' "$T/wrk.out" | tail -n 1)
get() { echo "$line" | tr ' ' '\n' | awk -F= -v k="$1" '$1 == k { print $2 }'; }
requests=$(get requests)
okn=$(get ok)
noid=$(get noid)
non2xx=$(get non2xx)
sockerr=$(($(get connect) + $(get read) + $(get write) + $(get timeout)))
rps=$(awk '/^Requests\/sec:/ { print $2 }' "$T/wrk.out")
[ -n "$PG" ] || echo "# WAL max $(mib "$max") MiB ($max bytes, first seen $max_at ms into the load; $samples samples in $elapsed ms); after the load $(mib "$(wal_size)") MiB"
echo "# wrk: ${requests:-?} requests, ${rps:-?} requests/s, ${okn:-?} answered with a task"

DETAIL=$(tail -n 15 "$T/wrk.out")
if [ -n "$PG" ]; then
	ok "STORE-5 the WAL stayed under $LIMIT_MIB MiB # SKIP SQLite's WAL file only ($PG)"
else
	check "STORE-5 the WAL stayed under $LIMIT_MIB MiB during ${SECS} s of SendMessage load from $CONNS connections on $PROCS workers (max $(mib "$max") MiB)" \
		'[ "$samples" -gt 0 ]' '[ "$max" -lt "$LIMIT" ]'
fi
check "STORE-5 wrk saw no non-2xx answer, no JSON-RPC error and no socket error (${requests:-?} requests: ${okn:-?} ok, ${non2xx:-?} non-2xx, ${noid:-?} without a task, $sockerr socket errors)" \
	'[ "$wrk_rc" = 0 ]' '[ -n "$line" ]' '[ "${okn:-0}" -gt 0 ]' '[ "$non2xx" = 0 ]' '[ "$noid" = 0 ]' \
	'[ "$sockerr" = 0 ]'

# ------------------------------------------------------------------ afterwards
# Requests still in flight when wrk stopped finish; then the database is read alone.
wait_idle 100
sh "$SERVER" stop "$T/srv"
if [ -n "$PG" ]; then
	ok "STORE-5 PRAGMA integrity_check is ok after the load # SKIP a PRAGMA of SQLite ($PG)"
else
	integrity=$(sqlite3 "$DB" 'PRAGMA integrity_check;' 2>&1 | head -n 5)
	DETAIL=$integrity
	check "STORE-5 PRAGMA integrity_check is ok after the load" '[ "$integrity" = ok ]'
fi

# The ids answered (one a line, as wal_soak.lua wrote them) against the ids in `tasks`:
# how many, how many distinct, how many not in the table, and the table's row count.
cat "$T"/ids/ids.* >"$T/ids.all" 2>/dev/null
th_db_sql "$DB" "SELECT id FROM tasks" >"$T/tasks.ids" 2>"$T/db.err"
got=$(grep -c '' "$T/ids.all")
distinct=$(sort -u "$T/ids.all" | grep -c '')
missing=$(awk 'FILENAME == ARGV[1] { t[$0] = 1; next } !($0 in t) { m++ } END { print m + 0 }' "$T/tasks.ids" "$T/ids.all")
tasks=$(th_db_sql "$DB" "SELECT COUNT(*) FROM tasks" 2>>"$T/db.err")
DETAIL="task ids answered: $got ($distinct distinct), not in tasks: $missing; tasks in the database: $tasks; $DB: $(head -c 300 "$T/db.err")"
check "STORE-5 every answered SendMessage's task exists ($distinct task ids, $missing missing; $tasks tasks for ${okn:-?} answers + at most $CONNS in flight)" \
	'[ "$got" = "${okn:-x}" ]' '[ "$distinct" = "$got" ]' '[ "$missing" = 0 ]' \
	'[ "$tasks" -ge "$got" ]' '[ "$tasks" -le $((got + CONNS)) ]'

tap_done
