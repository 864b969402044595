# SPDX-License-Identifier: Apache-2.0
# db.sh — the test server's database, SQLite or PostgreSQL, for the shell tests; sourced
# (plain POSIX sh; tests/lib/a2a.sh sources it).
#
#   th_db_of DIR       the database of the server whose state is in DIR: what
#                      tests/lib/server.sh wrote to DIR/db (a path, or a postgresql:// URI
#                      under TH_TEST_PG), else DIR/tiny-harness.db (servers started
#                      another way: tests/lib/apache.sh, tests/lib/nginx.sh)
#   th_db_is_pg DB     true when DB is a postgresql:// or postgres:// URI
#   th_db_sql DB SQL   run SQL against DB and print its rows as `sqlite3 DB SQL` does:
#                      columns joined by |, one row a line, no header, NULL as nothing.
#                      A path runs sqlite3 (with a busy timeout of TH_DB_BUSY_MS when
#                      that is set); a URI runs psql -X -q -At -F '|' -v ON_ERROR_STOP=1.
#                      The exit status is the client's.
#   th_join SEP        join the lines of stdin with SEP (what group_concat did in SQL)
#   th_db_for DIR LIB  the database a server started with its state in DIR gets:
#                      DIR/tiny-harness.db, or under TH_TEST_PG a PostgreSQL database
#                      of its own in that cluster, named th_CRC_LEN after `cksum` of DIR,
#                      made afresh by LIB/pg.sh unless DIR/db already names it (a
#                      restart in the same DIR keeps its data, as the file would be kept)
#   th_db_has_schema DB  true when DB (after `tiny-harness migrate`) holds tables: a
#                      program that took a URI for a file name would otherwise pass
#                      every test that does not read the database
#   th_db_as_owner DB CMD…  run CMD as the owner of DB's file when root runs this and
#                      the file is another user's (the workers' user: apache.sh and
#                      nginx.sh migrate as TH_APACHE_USER), so that what CMD writes stays
#                      theirs, as an operator would run it; as is for PostgreSQL, for a
#                      file root owns, or when not root
#
# SQL given to th_db_sql must mean the same on both: standard quoting ('text',
# "identifier"), an alias on every subquery in FROM, CAST(x AS TEXT) before || or
# coalesce with text, CASE instead of a boolean result (PostgreSQL prints t/f), no
# PRAGMA, group_concat, json_extract, instr, hex or rowid. JSON columns are read whole and
# taken apart with jq.
#
# Environment: TH_PSQL (the psql to run; default the newest
# /usr/lib/postgresql/*/bin/psql, else psql on PATH), TH_DB_BUSY_MS (see th_db_sql).

th_db_of() {
	if [ -s "$1/db" ]; then
		cat "$1/db"
	else
		echo "$1/tiny-harness.db"
	fi
}

th_db_is_pg() {
	case $1 in postgresql://* | postgres://*) return 0 ;; *) return 1 ;; esac
}

# The psql to run, found once.
th_db_psql() {
	if [ -z "${TH_PSQL:-}" ]; then
		TH_PSQL=$(printf '%s\n' /usr/lib/postgresql/*/bin/psql | sort -V | tail -n 1)
		[ -x "$TH_PSQL" ] || TH_PSQL=psql
	fi
	echo "$TH_PSQL"
}

th_db_sql() {
	if th_db_is_pg "$1"; then
		# Notices (DROP … IF EXISTS and the like) are not rows.
		PGOPTIONS='-c client_min_messages=warning' PGCONNECT_TIMEOUT=10 \
			"$(th_db_psql)" -X -q -At -F '|' -v ON_ERROR_STOP=1 -d "$1" -c "$2"
	elif [ -n "${TH_DB_BUSY_MS:-}" ]; then
		sqlite3 -cmd ".timeout $TH_DB_BUSY_MS" "$1" "$2"
	else
		sqlite3 "$1" "$2"
	fi
}

# th_db_events DB TASK [AFTER]: the task's events after seq AFTER (default 0) as the
# program gives them to streams and push deliveries (TH_BIN tasks events: stored events
# hold references, STORE-10), one a line: seq, kind and the StreamResponse, tab-separated.
th_db_events() {
	(cd / && env $(env | sed -n 's/^\(TINY_HARNESS_[A-Z_]*\)=.*/-u \1/p') TINY_HARNESS_DB="$1" \
		"$TH_BIN" tasks events "$2" --after "${3:-0}")
}

th_join() {
	awk -v sep="$1" '{ printf "%s%s", (NR > 1 ? sep : ""), $0 } END { if (NR > 0) print "" }'
}

th_db_for() {
	if [ -z "${TH_TEST_PG:-}" ]; then
		echo "$1/tiny-harness.db"
		return 0
	fi
	th_db_is_pg "$TH_TEST_PG" || {
		echo "TH_TEST_PG is not a PostgreSQL URI: $TH_TEST_PG" >&2
		return 1
	}
	_th_name=th_$(printf '%s' "$1" | cksum | awk '{ print $1 "_" $2 }')
	_th_uri=${TH_TEST_PG%/}/$_th_name
	if [ -s "$1/db" ] && [ "$(cat "$1/db")" = "$_th_uri" ] &&
		[ "$(th_db_sql "${TH_TEST_PG%/}/postgres" "SELECT count(*) FROM pg_database WHERE datname = '$_th_name'" 2>/dev/null)" = 1 ]; then
		echo "$_th_uri"
		return 0
	fi
	sh "$2/pg.sh" createdb "$TH_TEST_PG" "$_th_name"
}

th_db_has_schema() {
	th_db_is_pg "$1" || return 0
	_th_tables=$(th_db_sql "$1" "SELECT count(*) FROM information_schema.tables WHERE table_schema NOT IN ('pg_catalog', 'information_schema')" 2>&1)
	case $_th_tables in '' | 0 | *[!0-9]*) return 1 ;; esac
	return 0
}

th_db_as_owner() {
	_th_db=$1
	shift
	if [ "$(id -u)" = 0 ] && ! th_db_is_pg "$_th_db" && [ -e "$_th_db" ] &&
		[ "$(stat -c %u "$_th_db")" != 0 ]; then
		setpriv --reuid="$(stat -c %u "$_th_db")" --regid="$(stat -c %g "$_th_db")" \
			--clear-groups "$@"
	else
		"$@"
	fi
}
