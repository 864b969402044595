#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# nginx.sh — start and stop nginx with conf/nginx.conf in front of spawn-fcgi workers,
# for tests and benchmarks (STORE-4). The same commands as tests/lib/apache.sh:
#
#   nginx.sh check nginx                 exit 0 when it can run here; else print what is
#                                        missing and exit 77 (automake's SKIP)
#   nginx.sh start nginx DIR [PROCS]     start PROCS spawn-fcgi workers (default 2) on
#                                        DIR/tiny-harness.sock and nginx with conf/nginx.conf
#                                        (its @LISTEN@, @SOCKET@, @STATIC@ filled in) inside
#                                        DIR/nginx.conf; prints the base URL
#   nginx.sh workers DIR                 the pids of the worker processes, one a line
#   nginx.sh stop DIR                    stop nginx and the workers by pid, wait until gone
#
# start picks a free loopback port, sets TINY_HARNESS_DB (DIR/tiny-harness.db, or under
# TH_TEST_PG a PostgreSQL database: tests/lib/db.sh th_db_for; written to DIR/db) and
# TINY_HARNESS_BASE_URL (and TINY_HARNESS_COMMANDS_DIR=$TH_SRCDIR/conf/commands and
# TINY_HARNESS_WEB_DIR=$TH_SRCDIR/web/dist when unset and present); the workers inherit every TINY_HARNESS_* variable of the caller. It applies
# the migrations once, runs nginx in the foreground in the background, writes
# DIR/nginx.pid (the master), DIR/base_url and DIR/mode, and waits (bounded) until the
# card answers 200. nginx's error log is DIR/error.log.
#
# Run by root, everything (nginx, spawn-fcgi, the workers, the migration) runs as
# TH_APACHE_USER (default nobody) through setpriv, and DIR is given to that user.
#
# Authentication (SEC-1, decision-040): with TINY_HARNESS_IDENTITY=remote_user the recipe
# runs as shipped, its @HTPASSWD@ the caller's TH_HTPASSWD; unset or header (the default,
# for the tests of other things), or bearer (the recipe's bearer variant: the workers check
# the API key nginx passes on), its auth_basic line is turned off.
#
# Environment: TH_BIN, TH_SRCDIR, TH_BUILDDIR as in apache.sh; NGINX (default nginx on
# PATH or /usr/sbin/nginx), SPAWN_FCGI, TH_APACHE_USER, TH_SERVER_TIMEOUT (default 30),
# TH_PROXY_TIMEOUT (the recipe's fastcgi_read_timeout in seconds; decision-072).
set -u

me=nginx.sh
die() {
	echo "$me: $*" >&2
	exit 1
}

script_dir=$(cd "$(dirname "$0")" && pwd) || die "cannot find my directory"
: "${TH_SRCDIR:=$(cd "$script_dir/../.." && pwd)}"
: "${TH_BUILDDIR:=$TH_SRCDIR/build}"
: "${TH_BIN:=$TH_BUILDDIR/src/tiny-harness}"
: "${TH_APACHE_USER:=nobody}"
: "${TH_SERVER_TIMEOUT:=30}"
if [ -z "${NGINX:-}" ]; then
	NGINX=$(command -v nginx 2>/dev/null || true)
	[ -n "$NGINX" ] || NGINX=/usr/sbin/nginx
fi
if [ -z "${SPAWN_FCGI:-}" ]; then
	SPAWN_FCGI=$(command -v spawn-fcgi 2>/dev/null || true)
	[ -n "$SPAWN_FCGI" ] || SPAWN_FCGI=/usr/bin/spawn-fcgi
fi

# shellcheck source-path=SCRIPTDIR source=proc.sh
. "$script_dir/proc.sh"
# shellcheck source-path=SCRIPTDIR source=db.sh
. "$script_dir/db.sh"

RUNAS=
if [ "$(id -u)" = 0 ]; then
	RUNAS="setpriv --reuid=$(id -u "$TH_APACHE_USER" 2>/dev/null) --regid=$(id -g "$TH_APACHE_USER" 2>/dev/null) --clear-groups"
fi
runas() {
	# shellcheck disable=SC2086
	$RUNAS "$@"
}

missing() {
	[ -x "$NGINX" ] || { echo "nginx is not installed (NGINX=$NGINX)"; return 0; }
	[ -x "$SPAWN_FCGI" ] || { echo "spawn-fcgi is not installed"; return 0; }
	[ -r /etc/nginx/fastcgi_params ] || { echo "no /etc/nginx/fastcgi_params"; return 0; }
	command -v curl >/dev/null 2>&1 || { echo "curl is not installed"; return 0; }
	if [ "$(id -u)" = 0 ]; then
		command -v setpriv >/dev/null 2>&1 || { echo "setpriv is not installed (util-linux)"; return 0; }
		id -u "$TH_APACHE_USER" >/dev/null 2>&1 || { echo "no user $TH_APACHE_USER (TH_APACHE_USER)"; return 0; }
	fi
	return 1
}

workers() {
	dir=$(cd "$1" && pwd)
	for p in $(cat "$dir/spawn-fcgi.pid" 2>/dev/null); do
		alive "$p" && echo "$p"
	done
}


stop() {
	[ -d "$1" ] || return 0
	dir=$(cd "$1" && pwd)
	pid=$(cat "$dir/nginx.pid" 2>/dev/null)
	case $pid in *[!0-9]*) pid= ;; esac
	if [ -n "$pid" ] && alive "$pid"; then
		kids=$(pgrep -P "$pid" 2>/dev/null)
		# shellcheck disable=SC2086
		term_wait "nginx" "$pid" $kids
	fi
	rm -f "$dir/nginx.pid"
	if [ -f "$dir/spawn-fcgi.pid" ]; then
		# shellcheck disable=SC2046
		term_wait "spawn-fcgi workers" $(cat "$dir/spawn-fcgi.pid")
		rm -f "$dir/spawn-fcgi.pid" "$dir/tiny-harness.sock"
	fi
	return 0
}

start() {
	dir=$(mkdir -p "$1" && cd "$1" && pwd) || die "cannot create $1"
	procs=${2:-2}
	case $procs in '' | *[!0-9]* | 0) die "PROCS must be a positive number, not '$procs'" ;; esac
	[ -x "$TH_BIN" ] || die "no program at TH_BIN=$TH_BIN (build first)"
	case $TH_BIN in /*) ;; *) TH_BIN=$(cd "$(dirname "$TH_BIN")" && pwd)/$(basename "$TH_BIN") ;; esac
	recipe=$TH_SRCDIR/conf/nginx.conf
	[ -r "$recipe" ] || die "no $recipe"
	if [ "$(id -u)" = 0 ]; then
		chown "$TH_APACHE_USER:$(id -g "$TH_APACHE_USER")" "$dir" || die "cannot give $dir to $TH_APACHE_USER"
	fi
	runas test -w "$dir" -a -x "$dir" || die "$dir is not writable by the server's user (chmod 711 its parents)"
	mkdir -p "$dir/tmp" "$dir/www/static" && { [ "$(id -u)" != 0 ] || chown -R "$TH_APACHE_USER" "$dir/tmp" "$dir/www"; } ||
		die "cannot create $dir/tmp"
	TINY_HARNESS_DB=$(th_db_for "$dir" "$script_dir") || die "no database for $dir"
	echo "$TINY_HARNESS_DB" >"$dir/db" || die "cannot write $dir/db"
	export TINY_HARNESS_DB
	if [ -z "${TINY_HARNESS_COMMANDS_DIR:-}" ] && [ -d "$TH_SRCDIR/conf/commands" ]; then
		TINY_HARNESS_COMMANDS_DIR=$TH_SRCDIR/conf/commands
		export TINY_HARNESS_COMMANDS_DIR
	fi
	if [ -z "${TINY_HARNESS_WEB_DIR:-}" ] && [ -d "$TH_SRCDIR/web/dist" ]; then
		TINY_HARNESS_WEB_DIR=$TH_SRCDIR/web/dist
		export TINY_HARNESS_WEB_DIR
	fi
	echo nginx >"$dir/mode"
	: "${TINY_HARNESS_IDENTITY:=header}"
	export TINY_HARNESS_IDENTITY
	if [ "$TINY_HARNESS_IDENTITY" = remote_user ]; then
		case ${TH_HTPASSWD:-} in /*) ;; *) die "TINY_HARNESS_IDENTITY=remote_user needs TH_HTPASSWD, an absolute path" ;; esac
		runas test -r "$TH_HTPASSWD" || die "$TH_HTPASSWD is not readable by the server's user"
	fi
	echo "$TH_BIN" >"$dir/th_bin"
	if ! (cd "$dir" && runas "$TH_BIN" migrate) >"$dir/migrate.out" 2>&1; then
		cat "$dir/migrate.out" >&2
		die "'$TH_BIN migrate' failed for $TINY_HARNESS_DB"
	fi
	th_db_has_schema "$TINY_HARNESS_DB" ||
		die "'$TH_BIN migrate' made no tables in $TINY_HARNESS_DB: does it take PostgreSQL URIs?"
	tries=0
	while [ $tries -lt 5 ]; do
		tries=$((tries + 1))
		port=$(random_port)
		port_busy "$port" && continue
		TINY_HARNESS_BASE_URL=http://127.0.0.1:$port/
		export TINY_HARNESS_BASE_URL
		sock=$dir/tiny-harness.sock
		rm -f "$sock" "$dir/spawn-fcgi.pid"
		if ! (cd "$dir" && runas "$SPAWN_FCGI" -s "$sock" -M 0600 -F "$procs" -P "$dir/spawn-fcgi.pid" \
			-- "$TH_BIN") >"$dir/spawn-fcgi.out" 2>&1; then
			cat "$dir/spawn-fcgi.out" >&2
			die "spawn-fcgi failed"
		fi
		# The recipe's `include fastcgi_params` is relative to the main configuration's
		# directory: /etc/nginx on a Debian host, DIR here.
		cp /etc/nginx/fastcgi_params "$dir/fastcgi_params" || die "cannot copy fastcgi_params"
		# SEC-1 (decision-040): as shipped, with the caller's password file; in the
		# loopback header mode of the other tests, and in bearer mode (the workers check
		# Authorization, which nginx passes on: docs/deployment.md), the login is turned
		# off, the one change.
		if [ "$TINY_HARNESS_IDENTITY" = header ] || [ "$TINY_HARNESS_IDENTITY" = bearer ]; then
			auth='s|^\([[:space:]]*\)auth_basic "tiny-harness";|\1auth_basic off;|'
			htpasswd=/dev/null
		else
			auth='s|^$||'
			htpasswd=${TH_HTPASSWD:-/nonexistent}
		fi
		# TH_PROXY_TIMEOUT (seconds): the recipe's fastcgi_read_timeout, the longest
		# silence of a worker nginx waits out, shortened for the keep-alive tests
		# (STREAM-PROXY-2, decision-072); unset, the recipe's own value stays.
		idle='s|^$||'
		[ -z "${TH_PROXY_TIMEOUT:-}" ] ||
			idle="s|^\([[:space:]]*fastcgi_read_timeout\) [0-9a-z]*;|\1 ${TH_PROXY_TIMEOUT}s;|"
		sed -e "s|@LISTEN@|127.0.0.1:$port|" -e "s|@SOCKET@|$sock|" -e "s|@STATIC@|$dir/www|" \
			-e "s|@HTPASSWD@|$htpasswd|" -e "$auth" -e "$idle" \
			"$recipe" >"$dir/site.conf" || die "cannot write $dir/site.conf"
		[ -z "${TH_PROXY_TIMEOUT:-}" ] ||
			grep -Eq "^[[:space:]]*fastcgi_read_timeout ${TH_PROXY_TIMEOUT}s;" "$dir/site.conf" ||
			die "TH_PROXY_TIMEOUT: no fastcgi_read_timeout line in $recipe to shorten"
		cat >"$dir/nginx.conf" <<CONF
worker_processes 1;
error_log $dir/error.log info;
pid $dir/nginx-master.pid;
events { worker_connections 1024; }
http {
    access_log off;
    default_type application/octet-stream;
    client_body_temp_path $dir/tmp/body;
    fastcgi_temp_path $dir/tmp/fastcgi;
    proxy_temp_path $dir/tmp/proxy;
    uwsgi_temp_path $dir/tmp/uwsgi;
    scgi_temp_path $dir/tmp/scgi;
    include $dir/site.conf;
}
CONF
		: >"$dir/error.log"
		[ "$(id -u)" != 0 ] || chown "$TH_APACHE_USER" "$dir/error.log" "$dir/nginx.conf" "$dir/site.conf" "$dir/fastcgi_params"
		# shellcheck disable=SC2086
		$RUNAS "$NGINX" -p "$dir" -c "$dir/nginx.conf" -g 'daemon off;' </dev/null >"$dir/nginx.out" 2>&1 &
		pid=$!
		echo "$pid" >"$dir/nginx.pid"
		echo "$TINY_HARNESS_BASE_URL" >"$dir/base_url"
		if wait_card "$pid" "$TINY_HARNESS_BASE_URL"; then
			echo "$TINY_HARNESS_BASE_URL"
			return 0
		fi
		stop "$dir" >/dev/null 2>&1
		if grep -q 'Address already in use' "$dir/error.log" "$dir/nginx.out" 2>/dev/null; then
			continue
		fi
		echo "$me: nginx did not serve the agent card on port $port within ${TH_SERVER_TIMEOUT}s" >&2
		tail -n 30 "$dir/error.log" "$dir/nginx.out" >&2 2>/dev/null
		return 1
	done
	die "no free port after $tries tries"
}

case ${1:-} in
check)
	why=$(missing)
	if [ -n "$why" ]; then
		echo "$why"
		exit 77
	fi
	exit 0
	;;
start)
	[ $# -ge 3 ] || die "usage: nginx.sh start nginx DIR [PROCS]"
	why=$(missing)
	[ -z "$why" ] || die "$why"
	start "$3" "${4:-2}"
	;;
workers) workers "$2" ;;
stop) stop "$2" ;;
*) die "usage: nginx.sh check|start|workers|stop …" ;;
esac
