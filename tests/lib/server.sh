#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# server.sh — start and stop lighttpd with conf/lighttpd.conf for tests and benchmarks.
#
#   server.sh start DIR [PROCS]   start lighttpd (PROCS workers, default 2) with its
#                                 state in DIR; prints the base URL (http://127.0.0.1:PORT/)
#   server.sh stop DIR            stop it (SIGTERM by pid file), wait until it is gone
#
# start picks a free loopback port, sets TH_PORT/TH_BIN/TH_STATE_DIR/TH_PROCS for the
# config, TINY_HARNESS_DB=DIR/tiny-harness.db (or a PostgreSQL database: TH_TEST_PG
# below) and TINY_HARNESS_BASE_URL (and
# TINY_HARNESS_COMMANDS_DIR=$TH_SRCDIR/conf/commands and TINY_HARNESS_WEB_DIR=$TH_SRCDIR/web/dist
# when unset and present); any other
# TINY_HARNESS_* variable in the caller's environment reaches the workers unchanged.
# It applies the migrations once (`tiny-harness migrate`), runs lighttpd -D in the
# background, writes DIR/lighttpd.pid and DIR/base_url, and waits (bounded) until
# GET /.well-known/agent-card.json answers 200 (TH_SERVER_EXPECT: another status that
# means started, as in tests/lib/apache.sh). Output of lighttpd goes to
# DIR/lighttpd.out, its error log to DIR/error.log. The database the workers were given
# (TINY_HARNESS_DB: a path or a URI) is written to DIR/db, where tests read it
# (tests/lib/db.sh th_db_of, tests/lib/db.mjs dbOf).
#
# TH_SERVER_DB: the workers use this database (a path or URI) instead: a second server on
# the database of another (tests/integration/two_hosts.sh).
#
# TH_TEST_PG (a base URI printed by tests/lib/pg.sh start, postgresql://th@127.0.0.1:PORT/):
# the workers get a PostgreSQL database of their own in that cluster instead of
# DIR/tiny-harness.db, named th_CRC_LEN after `cksum` of DIR's absolute path, so each
# state directory has its own. A database of that name is dropped and made afresh, unless
# DIR/db already names it (a restart in the same DIR keeps its data, as the SQLite file
# would be kept). After `migrate` the database must hold tables, else start fails. stop
# leaves the database in place (tests read it after stopping).
#
# Environment: TH_BIN (default $TH_BUILDDIR/src/tiny-harness), TH_SRCDIR (default the
# repository holding this script), TH_BUILDDIR (default $TH_SRCDIR/build), LIGHTTPD
# (default: lighttpd on PATH or /usr/sbin/lighttpd), TH_SERVER_TIMEOUT (seconds to wait
# for the card, default 30), TH_LIGHTTPD_CONF (default $TH_SRCDIR/conf/lighttpd.conf: a
# test's own file that includes it and adds to it, e.g. Basic auth for identity =
# remote_user in tests/ui/webapp.mjs), TH_PROXY_TIMEOUT (below). TINY_HARNESS_IDENTITY (default header) picks the
# recipe's authentication; remote_user needs TH_HTPASSWD (decision-040).
#
# Plain POSIX sh: callers run it as `sh server.sh …` or directly.

set -u

me=server.sh
die() {
	echo "$me: $*" >&2
	exit 1
}

script_dir=$(cd "$(dirname "$0")" && pwd) || die "cannot find my directory"
: "${TH_SRCDIR:=$(cd "$script_dir/../.." && pwd)}"
: "${TH_BUILDDIR:=$TH_SRCDIR/build}"
: "${TH_BIN:=$TH_BUILDDIR/src/tiny-harness}"
: "${TH_SERVER_TIMEOUT:=30}"
if [ -z "${LIGHTTPD:-}" ]; then
	LIGHTTPD=$(command -v lighttpd 2>/dev/null || true)
	[ -n "$LIGHTTPD" ] || LIGHTTPD=/usr/sbin/lighttpd
fi

# shellcheck source-path=SCRIPTDIR source=proc.sh
. "$script_dir/proc.sh"
# shellcheck source-path=SCRIPTDIR source=db.sh
. "$script_dir/db.sh"

start() {
	[ $# -ge 1 ] || die "usage: server.sh start DIR [PROCS]"
	mkdir -p "$1" || die "cannot create $1"
	dir=$(cd "$1" && pwd)
	procs=${2:-2}
	case $procs in '' | *[!0-9]*) die "PROCS must be a number, not '$procs'" ;; esac
	[ -x "$TH_BIN" ] || die "no program at TH_BIN=$TH_BIN (build first)"
	[ -x "$LIGHTTPD" ] || die "lighttpd not found (LIGHTTPD=$LIGHTTPD)"
	conf=${TH_LIGHTTPD_CONF:-$TH_SRCDIR/conf/lighttpd.conf}
	[ -r "$conf" ] || die "no $conf"
	# TH_PROXY_TIMEOUT (seconds): a copy of the recipe in DIR with its backend
	# "read-timeout" (the longest silence of a worker lighttpd waits out) shortened, for
	# the keep-alive tests (STREAM-PROXY-2, decision-072), and the authentication files it
	# includes beside it; unset, the recipe runs from where it is.
	if [ -n "${TH_PROXY_TIMEOUT:-}" ]; then
		sed "s|^\([[:space:]]*\"read-timeout\"[[:space:]]*=>\) [0-9]*,|\1 $TH_PROXY_TIMEOUT,|" "$conf" >"$dir/lighttpd.conf" &&
			cp "$(dirname "$conf")"/lighttpd-auth-*.conf "$dir/" || die "cannot copy $conf to $dir"
		grep -Eq "^[[:space:]]*\"read-timeout\"[[:space:]]*=> $TH_PROXY_TIMEOUT,\$" "$dir/lighttpd.conf" ||
			die "TH_PROXY_TIMEOUT: no \"read-timeout\" line in $conf to shorten"
		conf=$dir/lighttpd.conf
	fi
	case $TH_BIN in /*) ;; *) TH_BIN=$(cd "$(dirname "$TH_BIN")" && pwd)/$(basename "$TH_BIN") ;; esac
	if [ -f "$dir/lighttpd.pid" ] && alive "$(cat "$dir/lighttpd.pid")"; then
		die "a server is already running for $dir (pid $(cat "$dir/lighttpd.pid"))"
	fi
	mkdir -p "$dir/www" || die "cannot create $dir/www"

	TH_STATE_DIR=$dir
	TH_PROCS=$procs
	if [ -n "${TH_SERVER_DB:-}" ]; then
		TINY_HARNESS_DB=$TH_SERVER_DB # a second host on another server's database
	else
		TINY_HARNESS_DB=$(th_db_for "$dir" "$script_dir") || die "no database for $dir"
	fi
	echo "$TINY_HARNESS_DB" >"$dir/db" || die "cannot write $dir/db"
	export TH_BIN TH_STATE_DIR TH_PROCS TINY_HARNESS_DB
	# The recipe authenticates as TINY_HARNESS_IDENTITY says (decision-040) and has no
	# default; the tests' own is the loopback header mode, as `serve` gives run.sh.
	# remote_user needs TH_HTPASSWD from the caller.
	: "${TINY_HARNESS_IDENTITY:=header}"
	export TINY_HARNESS_IDENTITY
	# lighttpd runs the workers in TH_BIN's directory, so the relative default
	# conf/commands would not be found: name the project's one, as `serve` does.
	if [ -z "${TINY_HARNESS_COMMANDS_DIR:-}" ] && [ -d "$TH_SRCDIR/conf/commands" ]; then
		TINY_HARNESS_COMMANDS_DIR=$TH_SRCDIR/conf/commands
		export TINY_HARNESS_COMMANDS_DIR
	fi
	if [ -z "${TINY_HARNESS_WEB_DIR:-}" ] && [ -d "$TH_SRCDIR/web/dist" ]; then
		TINY_HARNESS_WEB_DIR=$TH_SRCDIR/web/dist
		export TINY_HARNESS_WEB_DIR
	fi

	# Apply the schema once, before several workers race to open a new database.
	if ! "$TH_BIN" migrate >"$dir/migrate.out" 2>&1; then
		cat "$dir/migrate.out" >&2
		die "'$TH_BIN migrate' failed for $TINY_HARNESS_DB"
	fi
	th_db_has_schema "$TINY_HARNESS_DB" ||
		die "'$TH_BIN migrate' made no tables in $TINY_HARNESS_DB: does it take PostgreSQL URIs?"

	tries=0
	while [ $tries -lt 5 ]; do
		tries=$((tries + 1))
		port=$(random_port)
		if port_busy "$port"; then
			continue
		fi
		TH_PORT=$port
		TINY_HARNESS_BASE_URL=http://127.0.0.1:$port/
		export TH_PORT TINY_HARNESS_BASE_URL
		: >"$dir/error.log"
		"$LIGHTTPD" -D -f "$conf" </dev/null >"$dir/lighttpd.out" 2>&1 &
		pid=$!
		echo "$pid" >"$dir/lighttpd.pid"
		# Poll every 0.1 s until the card answers, lighttpd dies, or time runs out.
		if wait_card "$pid" "$TINY_HARNESS_BASE_URL" "${TH_SERVER_EXPECT:-200}"; then
			echo "$pid" >"$dir/lighttpd.pid"
			echo "$TINY_HARNESS_BASE_URL" >"$dir/base_url"
			echo "$TINY_HARNESS_BASE_URL"
			return 0
		fi
		if alive "$pid"; then
			# Up but the card never answered 200: stop it and report.
			stop "$dir" >/dev/null 2>&1
			echo "$me: lighttpd on port $port never served the agent card (last HTTP status '$code') within ${TH_SERVER_TIMEOUT}s" >&2
			tail -n 30 "$dir/error.log" "$dir/lighttpd.out" >&2 2>/dev/null
			return 1
		fi
		rm -f "$dir/lighttpd.pid"
		# lighttpd exited: retry another port only when this one was taken meanwhile.
		if grep -q 'Address already in use' "$dir/error.log" "$dir/lighttpd.out" 2>/dev/null; then
			continue
		fi
		echo "$me: lighttpd exited during start-up" >&2
		tail -n 30 "$dir/error.log" "$dir/lighttpd.out" >&2 2>/dev/null
		return 1
	done
	die "no free port after $tries tries"
}

stop() {
	[ $# -ge 1 ] || die "usage: server.sh stop DIR"
	[ -d "$1" ] || return 0
	dir=$(cd "$1" && pwd)
	[ -f "$dir/lighttpd.pid" ] || return 0
	pid=$(cat "$dir/lighttpd.pid")
	case $pid in '' | *[!0-9]*) rm -f "$dir/lighttpd.pid"; return 0 ;; esac
	if alive "$pid"; then
		# The workers lighttpd spawned: they may still be exiting (closing the database,
		# writing files into DIR) after lighttpd has gone, so they are waited for too.
		workers=
		for w in $(pgrep -P "$pid" 2>/dev/null || true); do
			workers="$workers $w:$(started "$w")"
		done
		# SIGTERM: lighttpd stops its FastCGI workers (kill-signal SIGTERM) and exits.
		kill -TERM "$pid" 2>/dev/null
		i=0
		while alive "$pid" && [ $i -lt 100 ]; do
			sleep 0.1
			i=$((i + 1))
		done
		if alive "$pid"; then
			echo "$me: lighttpd $pid ignored SIGTERM for 10 s; sending SIGKILL" >&2
			kill -KILL "$pid" 2>/dev/null
		fi
		for w in $workers; do
			i=0
			while alive_since "${w%%:*}" "${w#*:}" && [ $i -lt 100 ]; do
				sleep 0.1
				i=$((i + 1))
			done
		done
	fi
	rm -f "$dir/lighttpd.pid"
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
	echo "usage: server.sh start DIR [PROCS] | server.sh stop DIR" >&2
	exit 2
	;;
esac
