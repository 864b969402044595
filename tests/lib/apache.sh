#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# apache.sh — start and stop Apache httpd with conf/apache-fcgid.conf or
# conf/apache-proxy-fcgi.conf for tests and benchmarks (STORE-4).
#
#   apache.sh check MODE                 exit 0 when the mode can run here; else print
#                                        what is missing and exit 77 (automake's SKIP)
#   apache.sh start MODE DIR [PROCS]     start Apache (and, for proxy, PROCS spawn-fcgi
#                                        workers; default 2) with its state in DIR;
#                                        prints the base URL (http://127.0.0.1:PORT/)
#     MODE fcgid     conf/apache-fcgid.conf (mod_fcgid starts the workers)
#     MODE proxy     conf/apache-proxy-fcgi.conf + spawn-fcgi -F PROCS on a UNIX socket
#     MODE htaccess  shared hosting: a host-like server (mod_fcgid at its defaults,
#                    AllowOverride All on DIR/htdocs, written to DIR/httpd.conf) with
#                    conf/htaccess.example as DIR/htdocs/agent/.htaccess, the program
#                    copied to DIR/htdocs/agent/tiny-harness.fcgi and its settings in
#                    DIR/htdocs/agent/conf/tiny-harness.conf; base URL …/agent/
#     MODE htaccess-cgi  shared hosting with plain CGI: the same, with mod_cgid (default)
#                    or mod_cgi, conf/htaccess-cgi.example as the .htaccess and the
#                    program as DIR/htdocs/agent/tiny-harness.cgi (PKG-3)
#   apache.sh workers DIR                print the pids of the running tiny-harness
#                                        worker processes of that server, one a line
#   apache.sh stop DIR                   stop Apache and the workers by pid, wait until
#                                        they are gone
#
# start picks a free loopback port and sets TH_PORT/TH_BIN/TH_STATE_DIR/TH_PROCS/
# TH_APACHE_MODULES for the config, TINY_HARNESS_DB (DIR/tiny-harness.db, or under
# TH_TEST_PG a PostgreSQL database: tests/lib/db.sh th_db_for; written to DIR/db) and
# TINY_HARNESS_BASE_URL (and TINY_HARNESS_COMMANDS_DIR=$TH_SRCDIR/conf/commands and
# TINY_HARNESS_WEB_DIR=$TH_SRCDIR/web/dist when
# unset and present). Every other TINY_HARNESS_* variable of the caller's environment
# reaches the workers unchanged: mod_fcgid through DIR/fcgid-env.conf (one
# FcgidInitialEnv line each, included by the config), spawn-fcgi by inheritance, the
# htaccess mode as `key = value` lines of the program's configuration file.
# It applies the migrations once, runs `apache2 -D FOREGROUND` in the background,
# writes DIR/apache.pid, DIR/base_url and DIR/mode, and waits (bounded) until
# GET /.well-known/agent-card.json answers 200. Apache's error log is DIR/error.log,
# its console output DIR/apache.out; spawn-fcgi's child pids are in DIR/spawn-fcgi.pid.
#
# Apache refuses to run as root without a User directive, so when started by root
# everything (Apache, spawn-fcgi, its workers, the migration) runs as TH_APACHE_USER
# (default nobody) through setpriv, and DIR is given to that user; DIR's parent
# directories must let that user through (chmod 711 a mktemp -d directory).
# Otherwise it all runs as the caller.
#
# Environment: TH_BIN (default $TH_BUILDDIR/src/tiny-harness), TH_SRCDIR (default the
# repository holding this script), TH_BUILDDIR (default $TH_SRCDIR/build), APACHE2
# (default apache2 on PATH or /usr/sbin/apache2), TH_APACHE_MODULES (default
# /usr/lib/apache2/modules), SPAWN_FCGI (default spawn-fcgi on PATH),
# TH_APACHE_USER (default nobody), TH_SERVER_TIMEOUT (seconds to wait, default 30),
# TH_HOST_MODULES (htaccess mode: the modules the host loads, default "mpm_event
# authz_core rewrite fcgid auth_basic authn_core authn_file authz_user"; htaccess-cgi
# mode: "mpm_event authz_core rewrite env cgid" and the same four auth modules),
# TH_HOST_OVERRIDE (both: the web root's AllowOverride, default All), TH_HOST_FCGID
# (htaccess mode: "defaults" leaves out the host's FcgidMaxProcessesPerClass PROCS line,
# so mod_fcgid runs exactly at its defaults, up to 100 processes), TH_SERVER_EXPECT
# (the card's status that means started, default 200), TH_PROXY_TIMEOUT (fcgid, proxy: the
# recipe's idle timeout for a silent worker, in seconds, in a copy of it; decision-072).
#
# Authentication (SEC-1, decision-040): the recipes ask for an HTTP Basic login and give
# the workers identity = remote_user. With TINY_HARNESS_IDENTITY=remote_user the caller
# names the password file in TH_HTPASSWD (absolute, readable by TH_APACHE_USER) and the
# recipes run as shipped (the .htaccess files with their AuthUserFile line pointed at
# it). Unset or header (the default here, for the tests of other things), Apache is
# started with -D TH_IDENTITY_HEADER, the recipes' explicit loopback header mode. With
# TINY_HARNESS_IDENTITY=bearer (fcgid, proxy) Apache is started with -D TH_BEARER, the
# recipes' bearer variant: no login by Apache, Authorization passed on (CGIPassAuth).
#
# Plain POSIX sh: callers run it as `sh apache.sh …` or directly.

set -u

me=apache.sh
die() {
	echo "$me: $*" >&2
	exit 1
}

script_dir=$(cd "$(dirname "$0")" && pwd) || die "cannot find my directory"
: "${TH_SRCDIR:=$(cd "$script_dir/../.." && pwd)}"
: "${TH_BUILDDIR:=$TH_SRCDIR/build}"
: "${TH_BIN:=$TH_BUILDDIR/src/tiny-harness}"
: "${TH_SERVER_TIMEOUT:=30}"
: "${TH_APACHE_MODULES:=/usr/lib/apache2/modules}"
: "${TH_APACHE_USER:=nobody}"
if [ -z "${APACHE2:-}" ]; then
	APACHE2=$(command -v apache2 2>/dev/null || true)
	[ -n "$APACHE2" ] || APACHE2=/usr/sbin/apache2
fi
if [ -z "${SPAWN_FCGI:-}" ]; then
	SPAWN_FCGI=$(command -v spawn-fcgi 2>/dev/null || true)
	[ -n "$SPAWN_FCGI" ] || SPAWN_FCGI=/usr/bin/spawn-fcgi
fi

# The mode's prerequisites; prints the first missing one.
missing() {
	[ -x "$APACHE2" ] || { echo "apache2 is not installed (APACHE2=$APACHE2)"; return 0; }
	command -v curl >/dev/null 2>&1 || { echo "curl is not installed"; return 0; }
	[ -r "$TH_APACHE_MODULES/mod_mpm_event.so" ] || { echo "no Apache modules in $TH_APACHE_MODULES"; return 0; }
	case $1 in
	fcgid | htaccess)
		[ -r "$TH_APACHE_MODULES/mod_fcgid.so" ] || { echo "mod_fcgid is not installed (libapache2-mod-fcgid)"; return 0; }
		[ -r "$TH_APACHE_MODULES/mod_rewrite.so" ] || { echo "mod_rewrite is not in $TH_APACHE_MODULES"; return 0; }
		;;
	htaccess-cgi)
		[ -r "$TH_APACHE_MODULES/mod_cgid.so" ] || [ -r "$TH_APACHE_MODULES/mod_cgi.so" ] ||
			{ echo "neither mod_cgid nor mod_cgi is in $TH_APACHE_MODULES"; return 0; }
		[ -r "$TH_APACHE_MODULES/mod_rewrite.so" ] || { echo "mod_rewrite is not in $TH_APACHE_MODULES"; return 0; }
		;;
	proxy)
		[ -r "$TH_APACHE_MODULES/mod_proxy_fcgi.so" ] || { echo "mod_proxy_fcgi is not in $TH_APACHE_MODULES"; return 0; }
		[ -x "$SPAWN_FCGI" ] || { echo "spawn-fcgi is not installed"; return 0; }
		;;
	*) echo "unknown mode '$1' (fcgid, proxy, htaccess or htaccess-cgi)" ;;
	esac
	if [ "$(id -u)" = 0 ]; then
		command -v setpriv >/dev/null 2>&1 || { echo "setpriv is not installed (util-linux)"; return 0; }
		id -u "$TH_APACHE_USER" >/dev/null 2>&1 || { echo "no user $TH_APACHE_USER (TH_APACHE_USER)"; return 0; }
	fi
	return 0
}

# Runs a command as the server's user (root drops to TH_APACHE_USER). RUNAS is the
# same as a prefix, so that `$RUNAS prog &` gives the program's own pid (setpriv execs).
RUNAS=
if [ "$(id -u)" = 0 ] && id -u "$TH_APACHE_USER" >/dev/null 2>&1; then
	RUNAS="setpriv --reuid=$(id -u "$TH_APACHE_USER") --regid=$(id -g "$TH_APACHE_USER") --clear-groups"
fi
runas() {
	# shellcheck disable=SC2086
	$RUNAS "$@"
}

# shellcheck source-path=SCRIPTDIR source=proc.sh
. "$script_dir/proc.sh"
# shellcheck source-path=SCRIPTDIR source=db.sh
. "$script_dir/db.sh"

# All living descendants of a pid (children, grandchildren, …), one a line.
descendants() {
	ps -eo pid=,ppid= 2>/dev/null | awk -v root="$1" '
		{ parent[$1] = $2; pids[NR] = $1 }
		END {
			for (i = 1; i <= NR; i++) {
				p = pids[i]; q = parent[p]; depth = 0
				while (q != "" && q != 0 && q != 1 && depth < 16) {
					if (q == root) { print p; break }
					q = parent[q]; depth++
				}
			}
		}'
}

# Pids of living tiny-harness workers of the server whose state is in $1.
workers() {
	dir=$1
	mode=$(cat "$dir/mode" 2>/dev/null)
	if [ "$mode" = proxy ]; then
		for p in $(cat "$dir/spawn-fcgi.pid" 2>/dev/null); do
			alive "$p" && echo "$p"
		done
	else
		apid=$(cat "$dir/apache.pid" 2>/dev/null)
		[ -n "$apid" ] || return 0
		binname=$(basename "$(cat "$dir/th_bin" 2>/dev/null)")
		for p in $(descendants "$apid"); do
			comm=$(cat "/proc/$p/comm" 2>/dev/null)
			# /proc/PID/comm holds at most 15 characters of the name.
			case $binname in "$comm"*) [ -n "$comm" ] && alive "$p" && echo "$p" ;; esac
		done
	fi
}

# Writes the FcgidInitialEnv lines for the optional settings mod_fcgid's workers need.
write_fcgid_env() {
	out=$1
	: >"$out.tmp" || return 1
	echo "# Written by tests/lib/apache.sh: the caller's TINY_HARNESS_* settings (and" >>"$out.tmp"
	echo "# sanitizer options) for the mod_fcgid workers." >>"$out.tmp"
	env | LC_ALL=C sort | while IFS= read -r line; do
		name=${line%%=*}
		value=${line#*=}
		case $name in
		TINY_HARNESS_DB | TINY_HARNESS_BASE_URL | TINY_HARNESS_IDENTITY) continue ;; # in the config itself
		TINY_HARNESS_* | ASAN_OPTIONS | UBSAN_OPTIONS | LSAN_OPTIONS) ;;
		*) continue ;;
		esac
		case $name in *[!A-Za-z0-9_]*) continue ;; esac
		case $value in
		*'"'* | *'\'* | *'$'*)
			echo "$me: cannot pass $name to mod_fcgid: its value contains \", \\ or \$" >&2
			return 1
			;;
		esac
		if [ ${#value} -gt 127 ]; then
			echo "$me: cannot pass $name to mod_fcgid: values are cut at 127 bytes" >&2
			return 1
		fi
		printf 'FcgidInitialEnv %s "%s"\n' "$name" "$value" >>"$out.tmp"
	done || return 1
	mv "$out.tmp" "$out"
}

# The shared host's own server configuration (what a hosting company runs, not part of
# the recipe): mod_fcgid at its defaults but for its state and the process count (none
# with TH_HOST_FCGID=defaults),
# .htaccess allowed on the web root. Sanitizer options reach the workers as a host
# setting (a site cannot pass environment variables). MODE htaccess-cgi: a host with
# mod_cgid (its socket in the state directory) or mod_cgi instead, passing sanitizer
# options to CGI programs with SetEnv.
write_host_conf() {
	hdir=$1
	hmode=${3:-htaccess}
	if [ "$hmode" = htaccess-cgi ]; then
		hmods=${TH_HOST_MODULES:-mpm_event authz_core rewrite env cgid auth_basic authn_core authn_file authz_user}
		hrecipe=conf/htaccess-cgi.example
	else
		hmods=${TH_HOST_MODULES:-mpm_event authz_core rewrite fcgid auth_basic authn_core authn_file authz_user}
		hrecipe=conf/htaccess.example
	fi
	{
		echo "# Written by tests/lib/apache.sh: a shared host running $hrecipe."
		echo "ServerRoot \"\${TH_STATE_DIR}\""
		echo "ServerName 127.0.0.1"
		echo "Listen 127.0.0.1:\${TH_PORT}"
		echo "PidFile \"\${TH_STATE_DIR}/httpd.pid\""
		echo "DefaultRuntimeDir \"\${TH_STATE_DIR}\""
		echo "ErrorLog \"\${TH_STATE_DIR}/error.log\""
		echo "LogLevel warn"
		for m in $hmods; do
			echo "LoadModule ${m}_module \${TH_APACHE_MODULES}/mod_$m.so"
		done
		echo "<IfModule mod_cgid.c>"
		echo "ScriptSock \"\${TH_STATE_DIR}/cgid.sock\""
		echo "</IfModule>"
		echo "<IfModule mod_env.c>"
		for v in ASAN_OPTIONS UBSAN_OPTIONS LSAN_OPTIONS; do
			eval "val=\${$v:-}"
			[ -z "$val" ] || echo "SetEnv $v \"$val\""
		done
		echo "</IfModule>"
		echo "<IfModule mod_fcgid.c>"
		echo "FcgidIPCDir \"\${TH_STATE_DIR}/fcgid\""
		echo "FcgidProcessTableFile \"\${TH_STATE_DIR}/fcgid_shm\""
		# TH_HOST_FCGID=defaults: mod_fcgid exactly at its defaults (100 processes a class).
		[ "${TH_HOST_FCGID:-}" = defaults ] || echo "FcgidMaxProcessesPerClass \${TH_PROCS}"
		for v in ASAN_OPTIONS UBSAN_OPTIONS LSAN_OPTIONS; do
			eval "val=\${$v:-}"
			[ -z "$val" ] || echo "FcgidInitialEnv $v \"$val\""
		done
		echo "</IfModule>"
		echo "DocumentRoot \"\${TH_STATE_DIR}/htdocs\""
		echo "<Directory />"
		echo "    AllowOverride None"
		echo "    Require all denied"
		echo "</Directory>"
		echo "<Directory \"\${TH_STATE_DIR}/htdocs\">"
		echo "    Options None"
		echo "    AllowOverride ${TH_HOST_OVERRIDE:-All}"
		echo "    Require all granted"
		echo "</Directory>"
	} >"$hdir/httpd.conf"
}

# The site's conf/tiny-harness.conf: database, base URL and every TINY_HARNESS_<KEY> of
# the caller's environment as `key = value`.
write_site_conf() {
	out=$1
	{
		echo "# Written by tests/lib/apache.sh from its environment."
		echo "db = $TINY_HARNESS_DB"
		echo "base_url = $TINY_HARNESS_BASE_URL"
		env | LC_ALL=C sort | while IFS= read -r line; do
			name=${line%%=*}
			case $name in
			TINY_HARNESS_DB | TINY_HARNESS_BASE_URL | TINY_HARNESS_CONF) continue ;;
			TINY_HARNESS_*) ;;
			*) continue ;;
			esac
			key=$(echo "${name#TINY_HARNESS_}" | tr 'A-Z' 'a-z')
			echo "$key = ${line#*=}"
		done
	} >"$out.tmp" && mv "$out.tmp" "$out" && { [ "$(id -u)" != 0 ] || chown "$TH_APACHE_USER" "$out"; }
}

start() {
	[ $# -ge 2 ] || die "usage: apache.sh start fcgid|proxy|htaccess|htaccess-cgi DIR [PROCS]"
	mode=$1
	case $mode in fcgid | proxy | htaccess | htaccess-cgi) ;; *) die "mode must be fcgid, proxy, htaccess or htaccess-cgi, not '$mode'" ;; esac
	why=$(missing "$mode")
	[ -z "$why" ] || die "$why"
	mkdir -p "$2" || die "cannot create $2"
	dir=$(cd "$2" && pwd)
	procs=${3:-2}
	case $procs in '' | *[!0-9]* | 0) die "PROCS must be a positive number, not '$procs'" ;; esac
	[ -x "$TH_BIN" ] || die "no program at TH_BIN=$TH_BIN (build first)"
	case $TH_BIN in /*) ;; *) TH_BIN=$(cd "$(dirname "$TH_BIN")" && pwd)/$(basename "$TH_BIN") ;; esac
	case $mode in
	fcgid) conf=$TH_SRCDIR/conf/apache-fcgid.conf ;;
	proxy) conf=$TH_SRCDIR/conf/apache-proxy-fcgi.conf ;;
	htaccess)
		conf=$dir/httpd.conf site_recipe=$TH_SRCDIR/conf/htaccess.example site_bin=tiny-harness.fcgi
		;;
	htaccess-cgi)
		conf=$dir/httpd.conf site_recipe=$TH_SRCDIR/conf/htaccess-cgi.example site_bin=tiny-harness.cgi
		;;
	esac
	case $mode in htaccess*) [ -r "$site_recipe" ] || die "no $site_recipe" ;; *) [ -r "$conf" ] || die "no $conf" ;; esac
	if [ -f "$dir/apache.pid" ] && alive "$(cat "$dir/apache.pid")"; then
		die "a server is already running for $dir (pid $(cat "$dir/apache.pid"))"
	fi
	# TH_PROXY_TIMEOUT (seconds): a copy of the recipe in DIR with the longest silence of
	# a worker Apache waits out shortened — FcgidIOTimeout (fcgid), ProxyPass timeout=
	# (proxy) — for the keep-alive tests (STREAM-PROXY-2, decision-072); unset, the
	# recipe runs from where it is.
	if [ -n "${TH_PROXY_TIMEOUT:-}" ]; then
		case $mode in
		fcgid) idle="s|^FcgidIOTimeout\([[:space:]]*\)[0-9]*\$|FcgidIOTimeout\1$TH_PROXY_TIMEOUT|" shown="^FcgidIOTimeout[[:space:]]+$TH_PROXY_TIMEOUT\$" ;;
		proxy) idle="s|^\(ProxyPass .*\) timeout=[0-9]*|\1 timeout=$TH_PROXY_TIMEOUT|" shown="^ProxyPass .* timeout=$TH_PROXY_TIMEOUT( |\$)" ;;
		*) die "TH_PROXY_TIMEOUT: only the fcgid and proxy recipes have a timeout to shorten" ;;
		esac
		sed "$idle" "$conf" >"$dir/recipe.conf" || die "cannot write $dir/recipe.conf"
		grep -Eq "$shown" "$dir/recipe.conf" || die "TH_PROXY_TIMEOUT: no idle timeout in $conf to shorten"
		conf=$dir/recipe.conf
	fi

	if [ "$(id -u)" = 0 ]; then
		chown "$TH_APACHE_USER:$(id -g "$TH_APACHE_USER")" "$dir" || die "cannot give $dir to $TH_APACHE_USER"
	fi
	runas test -w "$dir" -a -x "$dir" ||
		die "$dir is not writable by $(if [ "$(id -u)" = 0 ]; then echo "$TH_APACHE_USER"; else id -un; fi) (let it through the parent directories: chmod 711)"
	runas test -x "$TH_BIN" || die "$TH_BIN is not executable by $TH_APACHE_USER"
	case $mode in htaccess*) ;; *) runas test -r "$conf" || die "$conf is not readable by $TH_APACHE_USER" ;; esac
	mkdir -p "$dir/fcgid" && { [ "$(id -u)" != 0 ] || chown "$TH_APACHE_USER" "$dir/fcgid"; } ||
		die "cannot create $dir/fcgid"

	TH_STATE_DIR=$dir
	TH_PROCS=$procs
	TINY_HARNESS_DB=$(th_db_for "$dir" "$script_dir") || die "no database for $dir"
	echo "$TINY_HARNESS_DB" >"$dir/db" || die "cannot write $dir/db"
	export TH_BIN TH_STATE_DIR TH_PROCS TH_APACHE_MODULES TINY_HARNESS_DB
	if [ -z "${TINY_HARNESS_COMMANDS_DIR:-}" ] && [ -d "$TH_SRCDIR/conf/commands" ]; then
		TINY_HARNESS_COMMANDS_DIR=$TH_SRCDIR/conf/commands
		export TINY_HARNESS_COMMANDS_DIR
	fi
	if [ -z "${TINY_HARNESS_WEB_DIR:-}" ] && [ -d "$TH_SRCDIR/web/dist" ]; then
		TINY_HARNESS_WEB_DIR=$TH_SRCDIR/web/dist
		export TINY_HARNESS_WEB_DIR
	fi
	echo "$mode" >"$dir/mode"
	: "${TINY_HARNESS_IDENTITY:=header}"
	export TINY_HARNESS_IDENTITY
	defines=
	if [ "$TINY_HARNESS_IDENTITY" = header ]; then
		defines="-D TH_IDENTITY_HEADER"
	elif [ "$TINY_HARNESS_IDENTITY" = bearer ]; then
		defines="-D TH_BEARER"
	elif [ "$TINY_HARNESS_IDENTITY" = remote_user ]; then
		case ${TH_HTPASSWD:-} in /*) ;; *) die "TINY_HARNESS_IDENTITY=remote_user needs TH_HTPASSWD, an absolute path" ;; esac
		runas test -r "$TH_HTPASSWD" || die "$TH_HTPASSWD is not readable by the server's user"
		export TH_HTPASSWD
	fi
	case $mode in htaccess*)
		# The site as a user would upload it: .htaccess, the program, its configuration.
		site=$dir/htdocs/agent
		mkdir -p "$site/conf" || die "cannot create $site"
		sed "s|^\([[:space:]]*AuthUserFile \).*|\1\"${TH_HTPASSWD:-/nonexistent}\"|" "$site_recipe" >"$site/.htaccess" &&
			cp "$TH_BIN" "$site/$site_bin" && chmod 755 "$site/$site_bin" ||
			die "cannot set up $site"
		[ "$(id -u)" != 0 ] || chown -R "$TH_APACHE_USER" "$dir/htdocs"
		echo "$site/$site_bin" >"$dir/th_bin"
		;;
	*)
		echo "$TH_BIN" >"$dir/th_bin"
		;;
	esac

	# Apply the schema once, as the workers' user, before several workers race to open
	# a new database (the files are then theirs).
	if ! (cd "$dir" && runas "$TH_BIN" migrate) >"$dir/migrate.out" 2>&1; then
		cat "$dir/migrate.out" >&2
		die "'$TH_BIN migrate' failed for $TINY_HARNESS_DB"
	fi
	th_db_has_schema "$TINY_HARNESS_DB" ||
		die "'$TH_BIN migrate' made no tables in $TINY_HARNESS_DB: does it take PostgreSQL URIs?"
	if [ "$mode" = fcgid ]; then
		write_fcgid_env "$dir/fcgid-env.conf" || die "cannot write $dir/fcgid-env.conf"
	fi
	case $mode in htaccess*) write_host_conf "$dir" "$procs" "$mode" || die "cannot write $dir/httpd.conf" ;; esac

	tries=0
	while [ $tries -lt 5 ]; do
		tries=$((tries + 1))
		port=$(random_port)
		if port_busy "$port"; then
			continue
		fi
		TH_PORT=$port
		TINY_HARNESS_BASE_URL=http://127.0.0.1:$port/
		case $mode in htaccess*) TINY_HARNESS_BASE_URL=http://127.0.0.1:$port/agent/ ;; esac
		export TH_PORT TINY_HARNESS_BASE_URL
		case $mode in htaccess*)
			write_site_conf "$dir/htdocs/agent/conf/tiny-harness.conf" || die "cannot write the site's configuration"
			;;
		esac

		if [ "$mode" = proxy ]; then
			start_spawn "$dir" "$procs" || return 1
		fi
		: >"$dir/error.log"
		[ "$(id -u)" != 0 ] || chown "$TH_APACHE_USER" "$dir/error.log"
		rm -f "$dir/httpd.pid"
		# shellcheck disable=SC2086
		$RUNAS "$APACHE2" -D FOREGROUND $defines -f "$conf" </dev/null >"$dir/apache.out" 2>&1 &
		pid=$!
		echo "$pid" >"$dir/apache.pid"
		echo "$TINY_HARNESS_BASE_URL" >"$dir/base_url"
		# Poll every 0.1 s until the card answers, Apache dies, or time runs out.
		if wait_card "$pid" "$TINY_HARNESS_BASE_URL" "${TH_SERVER_EXPECT:-200}"; then
			echo "$TINY_HARNESS_BASE_URL"
			return 0
		fi
		if alive "$pid"; then
			stop "$dir" >/dev/null 2>&1
			echo "$me: Apache ($mode) on port $port never served the agent card (last HTTP status '$code') within ${TH_SERVER_TIMEOUT}s" >&2
			tail -n 30 "$dir/error.log" "$dir/apache.out" >&2 2>/dev/null
			return 1
		fi
		stop "$dir" >/dev/null 2>&1
		# Apache exited: retry another port only when this one was taken meanwhile.
		if grep -q 'Address already in use' "$dir/error.log" "$dir/apache.out" 2>/dev/null; then
			continue
		fi
		echo "$me: Apache ($mode) exited during start-up" >&2
		tail -n 30 "$dir/error.log" "$dir/apache.out" >&2 2>/dev/null
		return 1
	done
	die "no free port after $tries tries"
}

# spawn-fcgi forks PROCS workers on DIR/tiny-harness.sock and exits; their pids go to
# DIR/spawn-fcgi.pid. The workers inherit this environment (TINY_HARNESS_*).
start_spawn() {
	dir=$1
	procs=$2
	sock=$dir/tiny-harness.sock
	for p in $(cat "$dir/spawn-fcgi.pid" 2>/dev/null); do
		alive "$p" && die "spawn-fcgi workers already running for $dir (pid $p)"
	done
	rm -f "$sock" "$dir/spawn-fcgi.pid"
	if ! (cd "$dir" && runas "$SPAWN_FCGI" -s "$sock" -M 0600 -F "$procs" -P "$dir/spawn-fcgi.pid" \
		-- "$TH_BIN") >"$dir/spawn-fcgi.out" 2>&1; then
		cat "$dir/spawn-fcgi.out" >&2
		die "spawn-fcgi failed"
	fi
	n=$(grep -c . "$dir/spawn-fcgi.pid" 2>/dev/null || echo 0)
	[ "$n" = "$procs" ] || {
		cat "$dir/spawn-fcgi.out" >&2
		die "spawn-fcgi started $n workers, not $procs"
	}
	return 0
}


stop() {
	[ $# -ge 1 ] || die "usage: apache.sh stop DIR"
	[ -d "$1" ] || return 0
	dir=$(cd "$1" && pwd)
	pid=$(cat "$dir/apache.pid" 2>/dev/null)
	case $pid in *[!0-9]*) pid= ;; esac
	kids=
	if [ -n "$pid" ] && alive "$pid"; then
		# mod_fcgid's process manager and its workers are Apache's descendants; note
		# them first so none outlives Apache.
		kids=$(descendants "$pid")
		# SIGTERM: Apache stops its children (mod_fcgid stops the workers) and exits.
		term_wait "Apache" "$pid"
		left=
		for p in $kids; do alive "$p" && left="$left $p"; done
		i=0
		while [ -n "$left" ] && [ $i -lt 50 ]; do
			sleep 0.1
			i=$((i + 1))
			still=
			for p in $left; do alive "$p" && still="$still $p"; done
			left=$still
		done
		# shellcheck disable=SC2086
		[ -z "$left" ] || term_wait "processes left behind by Apache:" $left
	fi
	rm -f "$dir/apache.pid"
	# spawn-fcgi's workers (proxy mode): libfcgi ends its accept loop on SIGTERM.
	if [ -f "$dir/spawn-fcgi.pid" ]; then
		# shellcheck disable=SC2046
		term_wait "spawn-fcgi workers" $(cat "$dir/spawn-fcgi.pid")
		rm -f "$dir/spawn-fcgi.pid" "$dir/tiny-harness.sock"
	fi
	return 0
}

case ${1:-} in
check)
	[ $# -ge 2 ] || die "usage: apache.sh check fcgid|proxy|htaccess|htaccess-cgi"
	why=$(missing "$2")
	if [ -n "$why" ]; then
		echo "$why"
		exit 77
	fi
	exit 0
	;;
start)
	shift
	start "$@"
	;;
workers)
	[ $# -ge 2 ] || die "usage: apache.sh workers DIR"
	[ -d "$2" ] || exit 0
	workers "$(cd "$2" && pwd)"
	;;
stop)
	shift
	stop "$@"
	;;
*)
	echo "usage: apache.sh check MODE | start MODE DIR [PROCS] | workers DIR | stop DIR (MODE: fcgid, proxy, htaccess, htaccess-cgi)" >&2
	exit 2
	;;
esac
