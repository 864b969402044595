#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Integration test: the systemd units of conf/systemd (PKG-3). No systemd is needed to run
# it: it checks the units with `systemd-analyze verify` when that exists (else a TAP
# "# SKIP" line), then does what systemd would do with them, in a scratch directory:
#
#   - binds the UNIX socket named by ListenStream= of tiny-harness.socket (the path moved
#     under the scratch directory), SocketMode= applied, and passes it as fd 0
#     (StandardInput=socket, Accept=no) to the ExecStart= command of tiny-harness.service,
#     after its ExecStartPre=, with the unit's Environment= (paths moved the same way; the
#     program of ExecStart is replaced by TH_BIN), as an unprivileged user when run as root;
#   - sends FastCGI requests for the agent card to that one worker with cgi-fcgi
#     (libfcgi-bin) and through nginx with conf/nginx.conf pointed at the socket;
#   - stops the worker with SIGTERM, as `systemctl stop` does.
#
# TAP output; 77 (skip) when python3, curl or jq is missing, or when neither cgi-fcgi nor
# nginx can run here. Environment: TH_BIN, TH_SRCDIR, TH_APACHE_USER (default nobody),
# TH_KEEP=1 keeps the scratch directory.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
set -u

: "${TH_SRCDIR:=$(cd "$(dirname "$0")/../.." && pwd)}"
. "$TH_SRCDIR/tests/lib/tap.sh"
. "$TH_SRCDIR/tests/lib/proc.sh"
. "$TH_SRCDIR/tests/lib/a2a.sh"
: "${TH_APACHE_USER:=nobody}"
UNITS=$TH_SRCDIR/conf/systemd
SOCKET_UNIT=$UNITS/tiny-harness.socket
SERVICE_UNIT=$UNITS/tiny-harness.service

[ -x "$TH_BIN" ] || skip "no program at $TH_BIN"
require_tools python3 curl jq sqlite3
# The launcher runs as the unprivileged user: take the system's python3 over a per-user one.
PYTHON=/usr/bin/python3
[ -x "$PYTHON" ] || PYTHON=$(command -v python3)
[ -r "$SOCKET_UNIT" ] && [ -r "$SERVICE_UNIT" ] || bail "no $SOCKET_UNIT or $SERVICE_UNIT"
CGI_FCGI=$(command -v cgi-fcgi 2>/dev/null || true)
NGINX_WHY=$(sh "$TH_SRCDIR/tests/lib/nginx.sh" check nginx) && NGINX_WHY=
[ -n "$CGI_FCGI" ] || [ -z "$NGINX_WHY" ] ||
	skip "neither cgi-fcgi (libfcgi-bin) nor nginx can run here: $NGINX_WHY"
case $TH_BIN in /*) ;; *) TH_BIN=$(cd "$(dirname "$TH_BIN")" && pwd)/$(basename "$TH_BIN") ;; esac

scratch th-systemd
chmod 711 "$T"
RUNAS=
if [ "$(id -u)" = 0 ]; then
	RUNAS="setpriv --reuid=$(id -u "$TH_APACHE_USER") --regid=$(id -g "$TH_APACHE_USER") --clear-groups"
	command -v setpriv >/dev/null 2>&1 || skip "setpriv is not installed (util-linux)"
fi
BAIL_LOGS=("$T/worker.out" "$T/nginx/error.log" "$T/nginx/nginx.out")
WORKER=
on_exit '[ -n "$WORKER" ] && term_wait "the worker" "$WORKER"'
on_exit '[ -f "$T/nginx/nginx.pid" ] && term_wait nginx $(cat "$T/nginx/nginx.pid")'

# The value of KEY= in a unit file (the last one; continuation lines are not used in ours).
unit_value() { sed -n "s/^$2=//p" "$1" | tail -n 1; }
# Every value of KEY= (one a line).
unit_values() { sed -n "s/^$2=//p" "$1"; }
# A path of the units moved under the scratch directory ($T/root/…).
moved() { echo "$T/root$1"; }

# ------------------------------------------------------------------ systemd-analyze verify
if command -v systemd-analyze >/dev/null 2>&1; then
	# The units name /usr/bin/tiny-harness; verify checks that ExecStart's program exists.
	mkdir -p "$T/units"
	for f in "$UNITS"/*.socket "$UNITS"/*.service "$UNITS"/*.timer; do
		sed "s|/usr/bin/tiny-harness|$TH_BIN|g" "$f" >"$T/units/${f##*/}"
	done
	if systemd-analyze verify --man=no "$T"/units/* >"$T/verify.out" 2>&1 && ! [ -s "$T/verify.out" ]; then
		ok "PKG-3 systemd-analyze verify accepts every unit of conf/systemd"
	else
		not_ok "PKG-3 systemd-analyze verify accepts every unit of conf/systemd" \
			"$(sed 's/^/verify: /' "$T/verify.out")"
	fi
else
	n=$((n + 1))
	echo "ok $n - PKG-3 systemd-analyze verify accepts every unit of conf/systemd # SKIP systemd-analyze is not installed"
fi

# ------------------------------------------------------------------ what the units say
LISTEN=$(unit_value "$SOCKET_UNIT" ListenStream)
MODE=$(unit_value "$SOCKET_UNIT" SocketMode)
EXEC=$(unit_value "$SERVICE_UNIT" ExecStart)
PRE=$(unit_value "$SERVICE_UNIT" ExecStartPre)
check "PKG-3 tiny-harness.socket: one worker (Accept=no) on a UNIX socket under /run/tiny-harness/ for www-data" \
	'[ "$(unit_value "$SOCKET_UNIT" Accept)" = no ]' \
	'case $LISTEN in /run/tiny-harness/*) true ;; *) false ;; esac' \
	'[ "$(unit_value "$SOCKET_UNIT" SocketGroup)" = www-data ]' \
	'case $MODE in 06[06]0) true ;; *) false ;; esac'
check "PKG-3 tiny-harness.service: the socket on fd 0, www-data, EnvironmentFile, hardening, Restart=on-failure" \
	'[ "$(unit_value "$SERVICE_UNIT" StandardInput)" = socket ]' \
	'[ "$(unit_value "$SERVICE_UNIT" User)" = www-data ]' \
	'[ -z "$(unit_value "$SERVICE_UNIT" DynamicUser)" ]' \
	'[ -n "$(unit_value "$SERVICE_UNIT" EnvironmentFile)" ]' \
	'[ "$(unit_value "$SERVICE_UNIT" ReadWritePaths)" = /var/lib/tiny-harness ]' \
	'[ -n "$(unit_value "$SERVICE_UNIT" ProtectSystem)" ]' \
	'[ "$(unit_value "$SERVICE_UNIT" NoNewPrivileges)" = yes ]' \
	'[ "$(unit_value "$SERVICE_UNIT" PrivateTmp)" = yes ]' \
	'[ "$(unit_value "$SERVICE_UNIT" Restart)" = on-failure ]' \
	'[ "${EXEC%% *}" = /usr/bin/tiny-harness ]' \
	'[ "$PRE" = "/usr/bin/tiny-harness migrate" ]'

# ------------------------------------------------------------------ start it as systemd would
SOCK=$(moved "$LISTEN")
mkdir -p "${SOCK%/*}" "$(moved /var/lib/tiny-harness)" "$(moved /etc/tiny-harness)"
# What `make install` puts in sysconfdir: the example configuration.
cp "$TH_SRCDIR/conf/tiny-harness.conf" "$(moved /etc/tiny-harness/tiny-harness.conf)"
[ "$(id -u)" != 0 ] || chown -R "$TH_APACHE_USER" "$T/root"
# Environment= of the unit (no EnvironmentFile here), its paths moved under $T/root; nothing
# of the caller's TINY_HARNESS_* settings.
ENVS=()
while IFS= read -r kv; do
	case $kv in
	*=/etc/* | *=/var/*) ENVS+=("${kv%%=*}=$(moved "${kv#*=}")") ;;
	*) ENVS+=("$kv") ;;
	esac
done < <(unit_values "$SERVICE_UNIT" Environment)
PORT=$(random_port)
BASE=http://127.0.0.1:$PORT/
ENVS+=("TINY_HARNESS_BASE_URL=$BASE")
for v in $(env | sed -n 's/^\(TINY_HARNESS_[A-Z_0-9]*\)=.*/\1/p'); do unset "$v"; done
DB=$(printf '%s\n' "${ENVS[@]}" | sed -n 's/^TINY_HARNESS_DB=//p')
prog() { echo "$TH_BIN${1#/usr/bin/tiny-harness}"; }

# ExecStartPre=, then ExecStart= with the listening socket as its stdin. The launcher binds
# the socket as systemd does, applies SocketMode=, puts it on fd 0 and execs the command,
# so the worker's pid is the launcher's.
# shellcheck disable=SC2046
if ! (cd "$T/root" && env "${ENVS[@]}" $RUNAS $(prog "$PRE")) >"$T/pre.out" 2>&1; then
	BAIL_LOGS=("$T/pre.out")
	bail "ExecStartPre ($PRE) failed"
fi
cat >"$T/launch.py" <<'PY'
import os, socket, sys
stdin, path, mode, argv = sys.argv[1], sys.argv[2], int(sys.argv[3], 8), sys.argv[4:]
if stdin == 'socket':  # StandardInput=socket: the listening socket is fd 0
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.bind(path)
    os.chmod(path, mode)
    s.listen(128)
    os.dup2(s.fileno(), 0)
    s.close()
else:  # any other StandardInput= leaves the socket to nobody: the command gets /dev/null
    os.dup2(os.open(os.devnull, os.O_RDONLY), 0)
os.execv(argv[0], argv)
PY
# shellcheck disable=SC2046
(cd "$T/root" && exec env "${ENVS[@]}" $RUNAS "$PYTHON" "$T/launch.py" "$(unit_value "$SERVICE_UNIT" StandardInput)" "$SOCK" "$MODE" $(prog "$EXEC")) \
	</dev/null >"$T/worker.out" 2>&1 &
WORKER=$!
i=0
while [ ! -S "$SOCK" ] && alive "$WORKER" && [ $i -lt 100 ]; do
	sleep 0.1
	i=$((i + 1))
done
[ -S "$SOCK" ] || bail "the launcher did not create $SOCK"

# ------------------------------------------------------------------ FastCGI with cgi-fcgi
card_ok() { # FILE: the agent card as JSON, advertising BASE on every interface
	jq -e --arg base "$BASE" '.name == "tiny-harness" and (.supportedInterfaces | length) >= 2
		and all(.supportedInterfaces[]; .url == $base)' "$1" >/dev/null 2>&1
}
all_cards_ok() { # I…: the concurrent requests $T/codeI, $T/cardI all answered 200 with the card
	local i
	for i in "$@"; do
		[ "$(cat "$T/code$i")" = 200 ] && card_ok "$T/card$i" || return 1
	done
}
if [ -n "$CGI_FCGI" ]; then
	# cgi-fcgi prints the CGI response: Status:, the headers, an empty line, the body.
	REQ_DESC="cgi-fcgi -bind -connect $SOCK GET /.well-known/agent-card.json"
	env -i PATH="$PATH" REQUEST_METHOD=GET REQUEST_URI=/.well-known/agent-card.json \
		SCRIPT_NAME= QUERY_STRING= SERVER_NAME=127.0.0.1 SERVER_PORT="$PORT" SERVER_PROTOCOL=HTTP/1.1 \
		$RUNAS "$CGI_FCGI" -bind -connect "$SOCK" </dev/null >"$T/cgi.out" 2>"$T/cgi.err"
	tr -d '\r' <"$T/cgi.out" | awk 'body { print } /^$/ { body = 1 }' >"$T/body"
	STATUS=$(tr -d '\r' <"$T/cgi.out" | sed -n 's/^Status: \([0-9]*\).*/\1/p' | head -n 1)
	check "PKG-3 the socket-activated worker answers the agent card over FastCGI (cgi-fcgi): 200 and its JSON" \
		'[ "${STATUS:-200}" = 200 ]' 'grep -qi "^content-type: application/json" "$T/cgi.out"' \
		'card_ok "$T/body"'
else
	n=$((n + 1))
	echo "ok $n - PKG-3 the socket-activated worker answers the agent card over FastCGI (cgi-fcgi) # SKIP cgi-fcgi is not installed (libfcgi-bin)"
fi

# ------------------------------------------------------------------ nginx with conf/nginx.conf
if [ -z "$NGINX_WHY" ]; then
	NGINX=$(command -v nginx 2>/dev/null || echo /usr/sbin/nginx)
	N=$T/nginx
	mkdir -p "$N/tmp" "$N/www/static"
	cp /etc/nginx/fastcgi_params "$N/fastcgi_params"
	sed -e "s|@LISTEN@|127.0.0.1:$PORT|" -e "s|@SOCKET@|$SOCK|" -e "s|@STATIC@|$N/www|" \
		"$TH_SRCDIR/conf/nginx.conf" >"$N/site.conf"
	cat >"$N/nginx.conf" <<CONF
worker_processes 1;
error_log $N/error.log info;
pid $N/nginx-master.pid;
events { worker_connections 64; }
http {
    access_log off;
    client_body_temp_path $N/tmp/body;
    fastcgi_temp_path $N/tmp/fastcgi;
    proxy_temp_path $N/tmp/proxy;
    uwsgi_temp_path $N/tmp/uwsgi;
    scgi_temp_path $N/tmp/scgi;
    include $N/site.conf;
}
CONF
	: >"$N/error.log"
	[ "$(id -u)" != 0 ] || chown -R "$TH_APACHE_USER" "$N"
	# shellcheck disable=SC2086
	$RUNAS "$NGINX" -p "$N" -c "$N/nginx.conf" -g 'daemon off;' </dev/null >"$N/nginx.out" 2>&1 &
	echo $! >"$N/nginx.pid"
	if wait_card "$(cat "$N/nginx.pid")" "$BASE"; then
		# Several requests at once, all served by the one worker's threads.
		CURLS=()
		for i in 1 2 3 4; do
			curl -s -o "$T/card$i" -w '%{http_code}' --max-time 30 "${BASE}.well-known/agent-card.json" >"$T/code$i" &
			CURLS+=($!)
		done
		wait "${CURLS[@]}"
		http GET .well-known/agent-card.json "" >/dev/null
		check "PKG-3 nginx (conf/nginx.conf, fastcgi_pass to the unit's socket) serves the agent card: 200 and its JSON" \
			'[ "$STATUS" = 200 ]' 'card_ok "$T/body"' \
			'all_cards_ok 1 2 3 4' 'alive "$WORKER"'
	else
		STATUS=${code:-none} REQ_DESC="GET ${BASE}.well-known/agent-card.json through nginx"
		not_ok "PKG-3 nginx (conf/nginx.conf, fastcgi_pass to the unit's socket) serves the agent card: 200 and its JSON" \
			"$(tail -n 5 "$N/error.log" | sed 's/^/error.log: /')"
	fi
else
	n=$((n + 1))
	echo "ok $n - PKG-3 nginx (conf/nginx.conf, fastcgi_pass to the unit's socket) serves the agent card # SKIP $NGINX_WHY"
fi

# ------------------------------------------------------------------ stop, as systemctl stop does
DBROWS=$(sqlite3 "$DB" 'PRAGMA user_version' 2>/dev/null || echo "?")
check "PKG-3 the database is where the unit's Environment= puts it, migrated by ExecStartPre (user_version $DBROWS)" \
	'[ -s "$DB" ]' 'case $DBROWS in "?" | 0) false ;; *) true ;; esac'
kill -TERM "$WORKER" 2>/dev/null
wait "$WORKER" 2>/dev/null
RC=$?
# systemd counts an exit on SIGTERM (143) as clean as well as 0.
check "PKG-3 SIGTERM (systemctl stop) ends the worker cleanly (status $RC)" \
	'! alive "$WORKER"' 'case $RC in 0 | 143) true ;; *) false ;; esac'
WORKER=
tap_done
