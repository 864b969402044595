#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# pg.sh — a throwaway PostgreSQL cluster on loopback for the tests (TH_TEST_PG).
#
#   pg.sh start DIR               initdb into DIR/data and start postgres on a free
#                                 loopback port; prints the base URI
#                                 (postgresql://th@127.0.0.1:PORT/)
#   pg.sh stop DIR                stop it (SIGINT, PostgreSQL's fast shutdown, by the pid
#                                 in DIR/pg.pid), wait until it is gone
#   pg.sh restart DIR [MODE]      stop it and start it again on the same data and port;
#                                 MODE fast (SIGINT, the default) or immediate (SIGQUIT:
#                                 no checkpoint, the WAL replayed at start, as after a
#                                 crash of the server)
#   pg.sh createdb BASE_URI NAME  a fresh database NAME (an existing one is dropped
#                                 first); prints its URI (BASE_URI + NAME)
#
# start takes the newest /usr/lib/postgresql/*/bin (TH_PG_BINDIR names another), runs
# initdb -A trust -U th --locale=C -E UTF8 (a DIR/data left by an earlier run is removed)
# and postgres with listen_addresses=127.0.0.1, its Unix socket in DIR, fsync on,
# max_connections=200, its log in DIR/postgres.log; it waits (bounded) until pg_isready
# says the server accepts connections, then writes DIR/pg.pid (the postmaster's pid) and
# DIR/base_uri. The cluster has one role, th, a superuser that needs no password on
# loopback (trust), so any client reaches it as postgresql://th@127.0.0.1:PORT/DB.
# initdb and postgres refuse to run as root: as root they run as TH_PG_USER:TH_PG_GROUP
# (default nobody:nogroup, through setpriv, else runuser), and DIR is given to that user;
# every directory above DIR must let that user through (o+x).
# stop signals only the pid in DIR/pg.pid (SIGKILL after TH_PG_TIMEOUT seconds).
#
# Environment: TH_PG_BINDIR (the PostgreSQL programs), TH_PG_TIMEOUT (seconds to wait for
# start-up and for shutdown, default 30), TH_PG_USER / TH_PG_GROUP (see above).
#
# Plain POSIX sh: callers run it as `sh pg.sh …` or directly.

set -u

me=pg.sh
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

# The directory of initdb and postgres: TH_PG_BINDIR, else the newest installed version.
find_bindir() {
	if [ -n "${TH_PG_BINDIR:-}" ]; then
		bindir=$TH_PG_BINDIR
	else
		bindir=$(printf '%s\n' /usr/lib/postgresql/*/bin | sort -V | tail -n 1)
	fi
	if [ ! -x "$bindir/initdb" ] || [ ! -x "$bindir/postgres" ]; then
		die "no PostgreSQL server programs (initdb, postgres) in $bindir (Debian package postgresql; TH_PG_BINDIR names another directory)"
	fi
}

# psql: the one next to the server programs, else the one on PATH.
find_psql() {
	psql=
	for _d in ${TH_PG_BINDIR:-} $(printf '%s\n' /usr/lib/postgresql/*/bin | sort -rV); do
		if [ -x "$_d/psql" ]; then
			psql=$_d/psql
			return 0
		fi
	done
	psql=$(command -v psql 2>/dev/null) || die "psql not found (Debian package postgresql-client)"
}

# owner_prefix — the words that run a command as the cluster's owner (in `owner`):
# nothing for ourselves, setpriv (which execs the command) or runuser to TH_PG_USER as root.
owner_prefix() {
	if [ "$(id -u)" != 0 ]; then
		owner=
	elif command -v setpriv >/dev/null 2>&1; then
		owner="setpriv --reuid=$TH_PG_USER --regid=$TH_PG_GROUP --clear-groups --"
	else
		owner="runuser -u $TH_PG_USER -g $TH_PG_GROUP --"
	fi
}
# as_owner CMD… — run CMD (in the foreground) as the cluster's owner.
as_owner() {
	owner_prefix
	# shellcheck disable=SC2086
	$owner "$@"
}

# launch — postgres on $dir/data and $port in the background; its pid in $pid. A simple
# command in the background: the shell forks and execs it (through setpriv, which execs
# postgres), so no shell of ours stays between, holding the caller's stdout. A caller
# reading our output through a pipe ($(pg.sh start …)) must not wait for the server to
# end: its stdin, stdout and stderr go elsewhere. In a session of its own (setsid): a
# test's Apache, stopping, sends SIGTERM to its whole process group, which would otherwise
# be ours too (seen: a "smart shutdown" of the cluster halfway through the PostgreSQL pass).
launch() {
	owner_prefix
	# shellcheck disable=SC2086
	setsid $owner "$bindir/postgres" -D "$dir/data" -p "$port" \
		-c listen_addresses=127.0.0.1 -c unix_socket_directories="$dir" \
		-c fsync=on -c max_connections=200 \
		</dev/null >>"$dir/postgres.log" 2>&1 &
	pid=$!
}

# note_pid — $dir/pg.pid gets the postmaster's own pid, as it wrote it (the same as $pid
# with setpriv).
note_pid() {
	ppid=$(head -n 1 "$dir/data/postmaster.pid" 2>/dev/null)
	case $ppid in '' | *[!0-9]*) ppid=$pid ;; esac
	echo "$ppid" >"$dir/pg.pid"
}

start() {
	[ $# -eq 1 ] || die "usage: pg.sh start DIR"
	find_bindir
	mkdir -p "$1" || die "cannot create $1"
	dir=$(cd "$1" && pwd)
	if [ -f "$dir/pg.pid" ] && alive "$(cat "$dir/pg.pid")"; then
		die "a PostgreSQL server is already running for $dir (pid $(cat "$dir/pg.pid"))"
	fi
	# The socket's path (DIR/.s.PGSQL.PORT) must fit in sun_path (108 bytes).
	[ ${#dir} -le 90 ] || die "$dir is too long for a Unix socket directory (90 characters at most)"
	rm -rf "$dir/data" "$dir/pg.pid" "$dir/base_uri" "$dir/.s.PGSQL."* ||
		die "cannot remove the old cluster in $dir/data"
	if [ "$(id -u)" = 0 ]; then
		chown "$TH_PG_USER:$TH_PG_GROUP" "$dir" || die "cannot give $dir to $TH_PG_USER:$TH_PG_GROUP"
		as_owner test -w "$dir" -a -x "$dir" ||
			die "$TH_PG_USER cannot write $dir: every directory above it must be searchable by others (chmod o+x)"
	fi

	if ! as_owner "$bindir/initdb" -D "$dir/data" -A trust -U th --locale=C -E UTF8 \
		</dev/null >"$dir/initdb.log" 2>&1; then
		tail -n 20 "$dir/initdb.log" >&2
		die "initdb failed (log: $dir/initdb.log)"
	fi

	tries=0
	while [ $tries -lt 5 ]; do
		tries=$((tries + 1))
		port=$(random_port)
		if port_busy "$port"; then
			continue
		fi
		: >"$dir/postgres.log"
		launch
		if wait_ready "$pid" "$port"; then
			note_pid
			echo "postgresql://th@127.0.0.1:$port/" >"$dir/base_uri"
			echo "postgresql://th@127.0.0.1:$port/"
			return 0
		fi
		if alive "$pid"; then
			# Up but never ready: stop it and report.
			echo "$pid" >"$dir/pg.pid"
			stop "$dir" >/dev/null 2>&1
			tail -n 30 "$dir/postgres.log" >&2
			die "postgres on port $port did not accept connections within ${TH_PG_TIMEOUT}s"
		fi
		# postgres exited: retry another port only when this one was taken meanwhile.
		if grep -q 'could not bind\|Address already in use' "$dir/postgres.log" 2>/dev/null; then
			continue
		fi
		tail -n 30 "$dir/postgres.log" >&2
		die "postgres exited during start-up (log: $dir/postgres.log)"
	done
	die "no free port after $tries tries"
}

# wait_ready PID PORT — poll every 0.1 s until the server on PORT accepts connections
# (true), PID dies or TH_PG_TIMEOUT runs out (false).
wait_ready() {
	_end=$(($(date +%s) + TH_PG_TIMEOUT))
	while [ "$(date +%s)" -le "$_end" ]; do
		alive "$1" || return 1
		"$bindir/pg_isready" -q -h 127.0.0.1 -p "$2" -U th -d postgres -t 2 >/dev/null 2>&1 && return 0
		sleep 0.1
	done
	return 1
}

stop() {
	case $# in 1 | 2) ;; *) die "usage: pg.sh stop DIR" ;; esac
	[ -d "$1" ] || return 0
	dir=$(cd "$1" && pwd)
	[ -f "$dir/pg.pid" ] || return 0
	pid=$(cat "$dir/pg.pid")
	case $pid in '' | *[!0-9]*) rm -f "$dir/pg.pid"; return 0 ;; esac
	if alive "$pid"; then
		# SIGINT: fast shutdown (open sessions are ended, a checkpoint is written);
		# SIGQUIT (restart's immediate): every process exits at once, no checkpoint.
		kill "-${2:-INT}" "$pid" 2>/dev/null
		i=0
		while alive "$pid" && [ $i -lt $((TH_PG_TIMEOUT * 10)) ]; do
			sleep 0.1
			i=$((i + 1))
		done
		if alive "$pid"; then
			echo "$me: postgres $pid ignored SIGINT for ${TH_PG_TIMEOUT} s; sending SIGKILL" >&2
			kill -KILL "$pid" 2>/dev/null
			i=0
			while alive "$pid" && [ $i -lt 50 ]; do
				sleep 0.1
				i=$((i + 1))
			done
		fi
	fi
	rm -f "$dir/pg.pid"
	return 0
}

restart() {
	case $# in 1 | 2) ;; *) die "usage: pg.sh restart DIR [fast|immediate]" ;; esac
	case ${2:-fast} in fast) sig=INT ;; immediate) sig=QUIT ;; *) die "restart: MODE is fast or immediate, not $2" ;; esac
	find_bindir
	dir=$(cd "$1" && pwd) || die "no cluster in $1"
	port=$(sed -n 's|^postgresql://th@127.0.0.1:\([0-9]*\)/$|\1|p' "$dir/base_uri" 2>/dev/null)
	if [ -z "$port" ] || [ ! -d "$dir/data" ]; then
		die "no cluster started in $dir (pg.sh start)"
	fi
	stop "$dir" "$sig"
	launch
	wait_ready "$pid" "$port" || die "postgres did not come back on port $port (log: $dir/postgres.log)"
	note_pid
}

createdb() {
	[ $# -eq 2 ] || die "usage: pg.sh createdb BASE_URI NAME"
	base=${1%/}/
	name=$2
	case $base in postgresql://* | postgres://*) ;; *) die "not a PostgreSQL URI: $1" ;; esac
	# A plain identifier: no quoting needed, and the URI needs no escaping either.
	case $name in '' | [!a-z_]* | *[!a-z0-9_]*) die "database name '$name': lower-case letters, digits and _ only" ;; esac
	[ ${#name} -le 63 ] || die "database name '$name' is longer than 63 characters"
	find_psql
	# Two commands, two transactions: CREATE DATABASE may not run inside a transaction block.
	PGOPTIONS='-c client_min_messages=warning' "$psql" -X -q -v ON_ERROR_STOP=1 -d "${base}postgres" \
		-c "DROP DATABASE IF EXISTS $name WITH (FORCE)" -c "CREATE DATABASE $name" >/dev/null ||
		die "could not create database $name at $base"
	echo "$base$name"
}

case ${1:-} in
start)
	shift
	start "$@"
	;;
stop)
	shift
	[ $# -eq 1 ] || die "usage: pg.sh stop DIR"
	stop "$@"
	;;
restart)
	shift
	restart "$@"
	;;
createdb)
	shift
	createdb "$@"
	;;
*)
	echo "usage: pg.sh start DIR | pg.sh stop DIR | pg.sh restart DIR [fast|immediate] | pg.sh createdb BASE_URI NAME" >&2
	exit 2
	;;
esac
