#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Integration test: a worker heals by itself (STORE-9, issue 26 item 5), through the real
# lighttpd with conf/lighttpd.conf, one worker process with its request threads and their
# group writer. lighttpd and the worker run as an unprivileged user (nobody when this runs
# as root, else the caller), so a database file at 0444 really refuses writes. The worker
# starts on the read-only file: it warns in its log (stderr, which lighttpd leaves in
# lighttpd.out here), naming the file and the user;
# SendMessage answers -32603 naming read-only and stores nothing; after chmod 0644 the
# next SendMessage succeeds on the same worker, GetTask finds the task and
# integrity_check is ok. TAP output; 77 (skip) when lighttpd, curl, jq or sqlite3 is
# missing, when root cannot switch to nobody (setpriv), or on PostgreSQL (TH_TEST_PG: file
# permissions are SQLite's matter; pg.c reconnects by itself).
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
set -u

: "${TH_SRCDIR:=$(cd "$(dirname "$0")/../.." && pwd)}"
. "$TH_SRCDIR/tests/lib/tap.sh"
. "$TH_SRCDIR/tests/lib/proc.sh"
. "$TH_SRCDIR/tests/lib/a2a.sh"

[ -x "$TH_BIN" ] || skip "no program at $TH_BIN"
[ -z "${TH_TEST_PG:-}" ] || skip "a file's permissions are SQLite's matter (TH_TEST_PG is set)"
require_lighttpd
require_tools curl jq sqlite3

RUNAS=()
if [ "$(id -u)" = 0 ]; then
	command -v setpriv >/dev/null 2>&1 || skip "setpriv is not installed (util-linux): cannot run as nobody"
	id nobody >/dev/null 2>&1 || skip "no user nobody to run the server as"
	RUNAS=(setpriv "--reuid=$(id -u nobody)" "--regid=$(id -g nobody)" --clear-groups)
	RUN_USER=nobody
else
	RUN_USER=$(id -un)
fi
as_user() { "${RUNAS[@]}" "$@"; }
as_user test -x "$TH_BIN" || skip "$RUN_USER cannot run $TH_BIN (a build directory it cannot reach)"
as_user test -r "$TH_SRCDIR/conf/lighttpd.conf" || skip "$RUN_USER cannot read $TH_SRCDIR/conf"

scratch th-heal
chmod 0755 "$T"
mkdir "$T/srv"
[ "${#RUNAS[@]}" = 0 ] || chown nobody "$T/srv"
DB=$T/srv/tiny-harness.db

# The database exists (made by the user, as an install would), then becomes read-only.
TINY_HARNESS_DB=$DB as_user "$TH_BIN" migrate >"$T/migrate.out" 2>&1 || bail "migrate failed: $(cat "$T/migrate.out")"
chmod 0444 "$DB"
as_user sh -c "test ! -w '$DB'" || bail "$RUN_USER can still write $DB at 0444"

BASE=$(as_user sh "$SERVER" start "$T/srv" 1) || bail "lighttpd did not start"
echo "# lighttpd at $BASE as $RUN_USER, state in $T/srv"

# ------------------------------------------------------------------ start-up warning
REQ_DESC="$T/srv/error.log"
check "STORE-9 a worker started on a read-only database warns, naming the file and the user" \
	'grep -q "warning: database $DB is read-only" "$T/srv/error.log" "$T/srv/lighttpd.out"' \
	'grep "warning: database $DB is read-only" "$T/srv/error.log" "$T/srv/lighttpd.out" | grep -q "runs as user $RUN_USER (uid $(as_user id -u))"'

# ------------------------------------------------------------------ read-only: refused cleanly
http POST / "$(rpc 1 SendMessage "$(msg ro1 "while read-only")")"
check "STORE-9 SendMessage on a read-only database is -32603 naming read-only" \
	'[ "$STATUS" = 200 ]' '[ "$(jqb .error.code)" = -32603 ]' \
	'jqb .error.message | grep -q "read-only"'
http POST / "$(rpc 2 SendMessage "$(msg ro2 "still read-only")")"
check "STORE-9 a second SendMessage is refused the same way (nothing half-healed)" \
	'[ "$(jqb .error.code)" = -32603 ]' 'jqb .error.message | grep -q "read-only"'
sqlx() { sqlite3 -readonly "$DB" "$1" 2>/dev/null; }
check "STORE-9 nothing of the refused requests was stored" \
	'[ "$(sqlx "SELECT count(*) FROM tasks")" = 0 ]' \
	'[ "$(sqlx "SELECT count(*) FROM messages")" = 0 ]'

# ------------------------------------------------------------------ writable again: heals
pids_before=$(pgrep -u "$(as_user id -u)" -x tiny-harness 2>/dev/null | sort | tr '\n' ' ')
chmod 0644 "$DB"
http POST / "$(rpc 3 SendMessage "$(msg ok1 "writable again")")"
TASK=$(jqb .result.task.id)
check "STORE-9 after chmod 0644 the next SendMessage succeeds without a restart" \
	'[ "$STATUS" = 200 ]' '[ "$(jqb .error)" = null ]' has_task \
	'[ "$(jqb .result.task.status.state)" = TASK_STATE_INPUT_REQUIRED ]'
pids_after=$(pgrep -u "$(as_user id -u)" -x tiny-harness 2>/dev/null | sort | tr '\n' ' ')
check "STORE-9 the same worker process served it (no restart)" \
	'[ -n "$pids_before" ]' '[ "$pids_before" = "$pids_after" ]'
http POST / "$(rpc 4 GetTask "{\"id\":\"$TASK\"}")"
check "STORE-9 GetTask finds the task with its message" \
	'[ "$STATUS" = 200 ]' '[ "$(jqb .result.id)" = "$TASK" ]' \
	'[ "$(jqb "[.result.history[] | select(.role == \"ROLE_USER\") | .messageId] | join(\",\")")" = ok1 ]'
http POST / "$(rpc 5 SendMessage "$(msg ok2 "and again" "$TASK")")"
check "STORE-9 a follow-up is stored too" '[ "$STATUS" = 200 ]' '[ "$(jqb .error)" = null ]'
check "STORE-9 the database holds exactly the accepted task and messages; integrity_check ok" \
	'[ "$(sqlx "SELECT count(*) FROM tasks")" = 1 ]' \
	'[ "$(sqlx "SELECT group_concat(message_id) FROM (SELECT message_id FROM messages WHERE role = '"'"'ROLE_USER'"'"' ORDER BY pos)")" = ok1,ok2 ]' \
	'[ "$(sqlx "PRAGMA integrity_check")" = ok ]'
check "STORE-9 the worker logged that writes work again" \
	'grep -q "database $DB: opened again for writing" "$T/srv/error.log" "$T/srv/lighttpd.out"'

tap_done
