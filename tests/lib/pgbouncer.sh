#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# pgbouncer.sh — a throwaway PgBouncer in transaction pooling mode on loopback, in front of
# the tests' PostgreSQL cluster (tests/lib/pg.sh), for tests/integration/pgbouncer.sh
# (SCALE-1, decision-055).
#
#   pgbouncer.sh start DIR URI [POOL]  start pgbouncer on a free loopback port in front of
#                                      the server URI names (postgresql://USER@HOST:PORT/…),
#                                      every database name passed through, pool_mode =
#                                      transaction, default_pool_size POOL (default 2);
#                                      prints the base URI (postgresql://USER@127.0.0.1:PORT/)
#   pgbouncer.sh stop DIR              stop it (SIGTERM, PgBouncer's immediate shutdown,
#                                      by the pid in DIR/pgbouncer.pid), wait until gone
#
# start writes DIR/pgbouncer.ini and DIR/userlist.txt (auth_type = trust: the user must
# still be listed there), runs pgbouncer in the foreground in a session of its own (setsid)
# with no Unix socket, its log (stderr) in DIR/pgbouncer.log, and waits (bounded) until a query
# through it answers; then writes DIR/pgbouncer.pid and DIR/base_uri. The user of URI is
# also PgBouncer's admin, so `psql postgresql://USER@127.0.0.1:PORT/pgbouncer -c 'SHOW
# SERVERS'` shows the server connections it holds. pgbouncer refuses to run as root: as
# root it runs as TH_PG_USER:TH_PG_GROUP (default nobody:nogroup, through setpriv, else
# runuser), and DIR is given to that user. stop signals only the pid in DIR/pgbouncer.pid
# (SIGKILL after 10 s, term_wait of proc.sh).
#
# Environment: TH_PGBOUNCER (the program; default pgbouncer on PATH, else
# /usr/sbin/pgbouncer), TH_PG_TIMEOUT (seconds to wait for start-up,
# default 30), TH_PG_USER / TH_PG_GROUP (see above), TH_PSQL (the psql to ask; default the
# newest /usr/lib/postgresql/*/bin/psql, else psql on PATH).
#
# Plain POSIX sh: callers run it as `sh pgbouncer.sh …` or directly.

set -u

me=pgbouncer.sh
die() {
	echo "$me: $*" >&2
	exit 1
}

script_dir=$(cd "$(dirname "$0")" && pwd) || die "cannot find my directory"
: "${TH_PG_TIMEOUT:=30}"
: "${TH_PG_USER:=nobody}"
: "${TH_PG_GROUP:=nogroup}"
case $TH_PG_TIMEOUT in '' | *[!0-9]*) die "TH_PG_TIMEOUT must be a number of seconds" ;; esac

# shellcheck source-path=SCRIPTDIR source=proc.sh
. "$script_dir/proc.sh"
# shellcheck source-path=SCRIPTDIR source=db.sh
. "$script_dir/db.sh"

find_pgbouncer() {
	if [ -z "${TH_PGBOUNCER:-}" ]; then
		TH_PGBOUNCER=$(command -v pgbouncer 2>/dev/null || true)
		[ -n "$TH_PGBOUNCER" ] || TH_PGBOUNCER=/usr/sbin/pgbouncer
	fi
	[ -x "$TH_PGBOUNCER" ] || die "no pgbouncer at $TH_PGBOUNCER (Debian package pgbouncer)"
}

# owner — the words that run a command as DIR's owner: nothing for ourselves, setpriv
# (which execs the command, so $! is pgbouncer's pid) or runuser to TH_PG_USER as root.
owner_prefix() {
	if [ "$(id -u)" != 0 ]; then
		owner=
	elif command -v setpriv >/dev/null 2>&1; then
		owner="setpriv --reuid=$TH_PG_USER --regid=$TH_PG_GROUP --clear-groups --"
	else
		owner="runuser -u $TH_PG_USER -g $TH_PG_GROUP --"
	fi
}

# ready PID URI — poll every 0.1 s until `SELECT 1` answers through URI (true), PID dies
# or TH_PG_TIMEOUT runs out (false).
ready() {
	_end=$(($(date +%s) + TH_PG_TIMEOUT))
	while [ "$(date +%s)" -le "$_end" ]; do
		alive "$1" || return 1
		[ "$(PGCONNECT_TIMEOUT=2 "$(th_db_psql)" -X -q -At -d "$2" -c 'SELECT 1' 2>/dev/null)" = 1 ] &&
			return 0
		sleep 0.1
	done
	return 1
}

start() {
	[ $# -ge 2 ] || die "usage: pgbouncer.sh start DIR URI [POOL]"
	find_pgbouncer
	pool=${3:-2}
	case $pool in '' | *[!0-9]*) die "POOL must be a number, not '$pool'" ;; esac
	# postgresql://USER@HOST:PORT/…: the tests' cluster has no passwords (trust).
	rest=${2#*://}
	auth=${rest%%/*}
	case $auth in *@*) user=${auth%%@*} ;; *) die "URI $2 names no user" ;; esac
	case $user in *:*) die "URI $2 carries a password; the test cluster has none" ;; esac
	hostport=${auth#*@}
	pg_host=${hostport%:*}
	pg_port=${hostport##*:}
	case $pg_port in '' | *[!0-9]*) die "URI $2 names no port" ;; esac
	mkdir -p "$1" || die "cannot create $1"
	dir=$(cd "$1" && pwd)
	if [ -f "$dir/pgbouncer.pid" ] && alive "$(cat "$dir/pgbouncer.pid")"; then
		die "a pgbouncer is already running for $dir (pid $(cat "$dir/pgbouncer.pid"))"
	fi
	rm -f "$dir/pgbouncer.pid" "$dir/base_uri"
	printf '"%s" ""\n' "$user" >"$dir/userlist.txt" || die "cannot write $dir/userlist.txt"
	if [ "$(id -u)" = 0 ]; then
		chown "$TH_PG_USER:$TH_PG_GROUP" "$dir" "$dir/userlist.txt" ||
			die "cannot give $dir to $TH_PG_USER:$TH_PG_GROUP"
	fi
	tries=0
	while [ $tries -lt 5 ]; do
		tries=$((tries + 1))
		port=$(random_port)
		port_busy "$port" && continue
		# Transaction pooling with a small server pool, so clients really share server
		# sessions. options: psql's PGOPTIONS (tests/lib/db.sh) is dropped, not refused.
		cat >"$dir/pgbouncer.ini" <<EOF || die "cannot write $dir/pgbouncer.ini"
[databases]
* = host=$pg_host port=$pg_port

[pgbouncer]
listen_addr = 127.0.0.1
listen_port = $port
unix_socket_dir =
auth_type = trust
auth_file = $dir/userlist.txt
admin_users = $user
stats_users = $user
pool_mode = transaction
default_pool_size = $pool
min_pool_size = 0
reserve_pool_size = 0
max_client_conn = 400
server_lifetime = 3600
server_idle_timeout = 600
ignore_startup_parameters = extra_float_digits,options
EOF
		[ "$(id -u)" = 0 ] && chown "$TH_PG_USER:$TH_PG_GROUP" "$dir/pgbouncer.ini"
		owner_prefix
		# A simple command in the background, in a session of its own (see pg.sh): no
		# shell of ours stays between, and a test's web server stopping its process group
		# does not reach it.
		# shellcheck disable=SC2086
		setsid $owner "$TH_PGBOUNCER" "$dir/pgbouncer.ini" </dev/null >"$dir/pgbouncer.log" 2>&1 &
		pid=$!
		uri="postgresql://$user@127.0.0.1:$port/"
		if ready "$pid" "${uri}postgres"; then
			echo "$pid" >"$dir/pgbouncer.pid"
			echo "$uri" >"$dir/base_uri"
			echo "$uri"
			return 0
		fi
		if alive "$pid"; then
			echo "$pid" >"$dir/pgbouncer.pid"
			stop "$dir" >/dev/null 2>&1
			tail -n 20 "$dir/pgbouncer.log" >&2
			die "pgbouncer on port $port did not answer within ${TH_PG_TIMEOUT}s"
		fi
		if grep -q 'Address already in use' "$dir/pgbouncer.log" 2>/dev/null; then
			continue
		fi
		tail -n 20 "$dir/pgbouncer.log" >&2
		die "pgbouncer exited during start-up (log: $dir/pgbouncer.log)"
	done
	die "no free port after $tries tries"
}

stop() {
	[ $# -eq 1 ] || die "usage: pgbouncer.sh stop DIR"
	[ -d "$1" ] || return 0
	dir=$(cd "$1" && pwd)
	[ -f "$dir/pgbouncer.pid" ] || return 0
	pid=$(cat "$dir/pgbouncer.pid")
	case $pid in '' | *[!0-9]*) rm -f "$dir/pgbouncer.pid"; return 0 ;; esac
	term_wait pgbouncer "$pid"
	rm -f "$dir/pgbouncer.pid"
	return 0
}

case ${1:-} in
start)
	shift
	start "$@"
	;;
stop)
	shift
	stop "$@"
	;;
*)
	echo "usage: pgbouncer.sh start DIR URI [POOL] | pgbouncer.sh stop DIR" >&2
	exit 2
	;;
esac
