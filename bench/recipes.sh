#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# bench/recipes.sh — every shipped FastCGI recipe in one run (issue 28, HOST-1): lighttpd,
# Apache mod_fcgid, Apache mod_proxy_fcgi, nginx, and .htaccess + mod_fcgid on a simulated
# shared host, each with 1 and 4 worker processes, then the official-SDK peer
# (bench/peer) with as many processes; SendMessage and GetTask req/s, p50, p99 and max.
# Loopback only, every wrk run bounded by DURATION; it stops every server it started.
#
#   bench/recipes.sh                          builds nothing: uses build/src/tiny-harness
#   TH_BIN=/elsewhere/tiny-harness TH_SRCDIR=/elsewhere bench/recipes.sh
#   RECIPES="fcgid htaccess" PROCS_LIST="1 4" DURATION=5s CONNS=16 bench/recipes.sh
#   NO_SAVE=1 bench/recipes.sh                print only (else bench/results/recipes-<date>.txt)
#   LOGIN=apr1 bench/recipes.sh               how the bench user logs in (decision-090):
#                                             bcrypt (default: HTTP Basic, hashed as the
#                                             recipes say), apr1, or bearer (an API key)
#
# Each row starts its server afresh (tests/lib/server.sh, apache.sh, nginx.sh of
# TH_SRCDIR: a free loopback port, its own temporary state directory, a fresh database),
# with the recipe's login on as shipped (decision-040: HTTP Basic against a password file
# made here, identity = remote_user; the peer takes X-Participant-Id), checks that
# SendMessage answers with the echo and GetTask with the task, runs one unmeasured WARMUP
# of SendMessage with WARMUP_CONNS connections (mod_fcgid spawns processes only after a
# request has waited a second, so the warm-up is where it gets them; a burst above CONNS
# gets it past CONNS), then wrk --latency for SendMessage (a new task each) and for GetTask
# (one task), and stops the server. The mod_fcgid rows say how many processes ran.
#
# RECIPES (default: all, in this order):
#   lighttpd      conf/lighttpd.conf, PROCS processes of worker_threads threads
#   fcgid         conf/apache-fcgid.conf, TH_PROCS=PROCS (mod_fcgid's process limit), and
#                 once more with TH_PROCS=FCGID_PROCS (default CONNS+8: the recipe set up
#                 as docs/deployment.md says, more processes than requests at once)
#   proxy         conf/apache-proxy-fcgi.conf, PROCS spawn-fcgi workers
#   nginx         conf/nginx.conf, PROCS spawn-fcgi workers
#   htaccess      conf/htaccess.example on a host whose mod_fcgid is at its defaults but
#                 for FcgidMaxProcessesPerClass PROCS (what apache.sh's host does)
#   htaccess-dflt the same host with no process limit at all: mod_fcgid exactly at its
#                 defaults (up to 100 processes); run once, the PROCS column says "dflt"
#   peer          node bench/peer/server.mjs --procs PROCS (needs bench/peer/node_modules,
#                 or PEER_DIR naming a checkout's bench/peer that has them)
# Knobs: PROCS_LIST ("1 4"), DURATION (5s), WARMUP (3s), WARMUP_CONNS (2*CONNS), THREADS
# (2), CONNS (16), FCGID_PROCS (CONNS+8; 0: no such row), LOGIN (bcrypt),
# TH_BIN, TH_SRCDIR, PEER_DIR, NO_SAVE=1. Every TINY_HARNESS_* variable is cleared.
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
TH_SRCDIR=${TH_SRCDIR:-$root}
TH_BIN=${TH_BIN:-$root/build/src/tiny-harness}
RECIPES=${RECIPES:-lighttpd fcgid proxy nginx htaccess htaccess-dflt peer}
PROCS_LIST=${PROCS_LIST:-1 4}
DURATION=${DURATION:-5s}
WARMUP=${WARMUP:-3s}
THREADS=${THREADS:-2}
CONNS=${CONNS:-16}
WARMUP_CONNS=${WARMUP_CONNS:-$((CONNS * 2))}
FCGID_PROCS=${FCGID_PROCS:-$((CONNS + 8))}
LOGIN=${LOGIN:-bcrypt}
PEER_DIR=${PEER_DIR:-$root/bench/peer}
lua=$root/bench/compare.lua

die() { echo "recipes: $*" >&2; exit 1; }
say() { echo "recipes: $*" >&2; }

[ -x "$TH_BIN" ] || die "no program at TH_BIN=$TH_BIN (build it first; this script builds nothing)"
case $TH_BIN in /*) ;; *) TH_BIN=$(cd "$(dirname "$TH_BIN")" && pwd)/$(basename "$TH_BIN") ;; esac
for t in wrk curl jq openssl base64 htpasswd; do
	command -v $t >/dev/null 2>&1 || die "$t is not installed"
done
for d in "$DURATION" "$WARMUP"; do
	case ${d%s} in '' | *[!0-9]*) die "DURATION and WARMUP must be whole seconds, like 5s" ;; esac
done
secs=${DURATION%s}
[ "$secs" -gt 0 ] || die "DURATION must be at least 1s"

# shellcheck source=../tests/lib/proc.sh
. "$TH_SRCDIR/tests/lib/proc.sh"
# shellcheck source=../tests/lib/db.sh
. "$TH_SRCDIR/tests/lib/db.sh" # th_db_of, th_db_as_owner
for v in $(compgen -e | grep '^TINY_HARNESS_'); do unset "$v"; done
export TH_BIN TH_SRCDIR

state=$(mktemp -d "${TMPDIR:-/tmp}/th-recipes.XXXXXX")
# Apache and nginx drop to an unprivileged user when run by root: let it through.
chmod 711 "$state"
current= # the state directory of the server running now, stopped on exit
peer_pid=
stop_current() {
	[ -n "$current" ] || return 0
	case $current in
	*/lighttpd-*) sh "$TH_SRCDIR/tests/lib/server.sh" stop "$current" ;;
	*/nginx-*) sh "$TH_SRCDIR/tests/lib/nginx.sh" stop "$current" ;;
	*/peer-*)
		if [ -n "$peer_pid" ] && alive "$peer_pid"; then
			kill -TERM "$peer_pid" 2>/dev/null
			i=0
			while alive "$peer_pid" && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
			alive "$peer_pid" && kill -KILL "$peer_pid" 2>/dev/null
		fi
		peer_pid=
		;;
	*) sh "$TH_SRCDIR/tests/lib/apache.sh" stop "$current" ;;
	esac
	current=
}
cleanup() {
	stop_current
	rm -rf "$state"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

# The recipes' login (decision-040): one user. LOGIN=bcrypt hashes the password as the
# recipes tell an operator to (`htpasswd -B`, cost 5); LOGIN=apr1 as tests/lib/a2a.sh does
# (MD5, 1,000 rounds: cheaper to check); LOGIN=bearer runs the recipes' bearer variant
# (the program checks an API key, made per row with `tiny-harness keys add`; on the shared
# host the .htaccess with `CGIPassAuth On` in place of its login block; decision-090).
password=bench-$$-$RANDOM
mkdir -p "$state/auth" && chmod 755 "$state/auth"
case $LOGIN in
bcrypt) htpasswd -nbB bench "$password" | head -n1 >"$state/auth/htpasswd" || die "htpasswd -B failed" ;;
apr1 | bearer) printf 'bench:%s\n' "$(openssl passwd -apr1 "$password")" >"$state/auth/htpasswd" || die "openssl passwd failed" ;;
*) die "LOGIN must be bcrypt, apr1 or bearer" ;;
esac
chmod 644 "$state/auth/htpasswd"
basic="Basic $(printf 'bench:%s' "$password" | base64 | tr -d '\n')"

# Starts recipe $1 with $2 processes in a new state directory; sets URL, AUTH, current.
start_recipe() {
	local recipe=$1 procs=$2 dir out port tries
	dir=$state/$recipe-$procs
	mkdir -p "$dir"
	current=$dir
	AUTH=$basic
	export TINY_HARNESS_IDENTITY=remote_user TH_HTPASSWD=$state/auth/htpasswd
	[ "$LOGIN" = bearer ] && TINY_HARNESS_IDENTITY=bearer
	case $recipe in
	lighttpd) out=$(sh "$TH_SRCDIR/tests/lib/server.sh" start "$dir" "$procs") ;;
	nginx) out=$(sh "$TH_SRCDIR/tests/lib/nginx.sh" start nginx "$dir" "$procs") ;;
	fcgid | proxy | htaccess) out=$(sh "$TH_SRCDIR/tests/lib/apache.sh" start "$recipe" "$dir" "$procs") ;;
	htaccess-dflt) out=$(TH_HOST_FCGID=defaults sh "$TH_SRCDIR/tests/lib/apache.sh" start htaccess "$dir" 1) ;;
	peer)
		AUTH=
		[ -d "$PEER_DIR/node_modules/@a2a-js/sdk" ] || { say "peer: no $PEER_DIR/node_modules (cd bench/peer && npm ci, or PEER_DIR)"; return 1; }
		tries=0
		while [ $tries -lt 5 ]; do
			tries=$((tries + 1))
			port=$(random_port)
			port_busy "$port" && continue
			node "$PEER_DIR/server.mjs" --port "$port" --db "$dir/peer.db" --procs "$procs" \
				</dev/null >"$dir/peer.log" 2>&1 &
			peer_pid=$!
			if wait_card "$peer_pid" "http://127.0.0.1:$port/"; then
				out=http://127.0.0.1:$port/
				break
			fi
			alive "$peer_pid" && { cat "$dir/peer.log" >&2; return 1; }
			grep -q EADDRINUSE "$dir/peer.log" || { cat "$dir/peer.log" >&2; return 1; }
		done
		;;
	esac
	unset TINY_HARNESS_IDENTITY TH_HTPASSWD
	case ${out:-} in http://127.0.0.1:*/) URL=$out ;; *) say "$recipe ($procs) did not start"; return 1 ;; esac
	[ "$LOGIN" = bearer ] && [ "$recipe" != peer ] && { bearer_key "$dir" || return 1; }
	return 0
}

# LOGIN=bearer: an API key for the bench user in DIR's database, made as the user that owns
# the database (the workers' user, as an operator would make it); sets AUTH.
bearer_key() {
	local dir=$1 db key
	db=$(th_db_of "$dir")
	key=$(cd "$dir" && TINY_HARNESS_DB=$db th_db_as_owner "$db" "$TH_BIN" keys add bench --name bench 2>"$dir/keys.err") ||
		{ say "keys add failed: $(cat "$dir/keys.err")"; return 1; }
	AUTH="Bearer $key"
}

rpc() { # BODY: a JSON-RPC call to URL as the bench user
	local a=(-s --max-time 10 -H 'Content-Type: application/json' -H 'A2A-Version: 1.0'
		-H 'X-Participant-Id: bench')
	[ -z "$AUTH" ] || a+=(-H "Authorization: $AUTH")
	curl "${a[@]}" -d "$1" "$URL"
}

# wrk latency ("812.00us", "3.21ms", "1.02s") in milliseconds.
to_ms() {
	awk -v v="$1" 'BEGIN {
		if (v ~ /us$/) printf "%.2f", v / 1000; else if (v ~ /ms$/) printf "%.2f", v + 0;
		else if (v ~ /s$/) printf "%.2f", v * 1000; else if (v ~ /m$/) printf "%.2f", v * 60000;
		else print "?" }'
}

ROWS=()
bad=0
# One wrk run: LABEL PROCS KIND TASK DURATION [nosave]
run_wrk() {
	local label=$1 procs=$2 kind=$3 task=$4 dur=$5 out rps p50 p99 max sock resp badst rpcerr errs conns=$CONNS
	out=$state/wrk-$label-$procs-$kind-$dur.txt
	[ "${6:-}" = nosave ] && conns=$WARMUP_CONNS
	BENCH_KIND=$kind BENCH_TASK=$task BENCH_RUN=$label$procs$kind$dur$RANDOM BENCH_AUTH=$AUTH \
		timeout $((${dur%s} + 30)) wrk -t"$THREADS" -c"$conns" -d"$dur" --latency -s "$lua" "$URL" >"$out" 2>&1
	[ "${6:-}" = nosave ] && return 0
	rps=$(awk '/^Requests\/sec:/ { printf "%.0f", $2 }' "$out")
	p50=$(to_ms "$(awk '$1 == "50%" { print $2 }' "$out")")
	p99=$(to_ms "$(awk '$1 == "99%" { print $2 }' "$out")")
	max=$(to_ms "$(awk '$1 == "Latency" { print $4 }' "$out")")
	# "Socket errors: connect 0, read 0, write 0, timeout 5" -> "timeout:5" (non-zero only)
	sock=$(sed -n 's/^ *Socket errors: //p' "$out" | tr ',' '\n' | awk '$2 > 0 { printf "%s%s:%s", sep, $1, $2; sep = "," }')
	resp=$(sed -n 's/^compare: responses=\([0-9]*\) .*/\1/p' "$out")
	badst=$(sed -n 's/^compare: .* bad-status=\([0-9]*\) .*/\1/p' "$out")
	rpcerr=$(sed -n 's/^compare: .* rpc-errors=\([0-9]*\).*/\1/p' "$out")
	errs=
	[ -n "$resp" ] || errs="wrk-failed"
	[ "${badst:-0}" = 0 ] || errs="$errs non-200:$badst"
	[ "${rpcerr:-0}" = 0 ] || errs="$errs rpc-errors:$rpcerr"
	[ -z "$sock" ] || errs="$errs socket:$sock"
	[ -z "$errs" ] || bad=$((bad + 1))
	ROWS+=("$(printf '%-14s %5s %-5s %8s %9s %9s %9s  %s' "$label" "$procs" "$kind" "${rps:-?}" "$p50" "$p99" "$max" "${errs:-0}")")
	printf '%s\n' "${ROWS[-1]}" >&2
}

measure_recipe() { # RECIPE PROCS
	local recipe=$1 procs=$2 label=$1 shown=$2 out task
	[ "$recipe" = htaccess-dflt ] && shown=dflt
	if ! start_recipe "$recipe" "$procs"; then
		ROWS+=("$(printf '%-14s %5s %-5s %s' "$label" "$shown" "-" "did not start (see above)")")
		bad=$((bad + 1))
		stop_current
		return
	fi
	say "$label, $shown process(es) at $URL"
	out=$(rpc '{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"seed-'"$RANDOM"'","role":"ROLE_USER","parts":[{"text":"the task GetTask reads"}]}}}')
	task=$(jq -r 'select(.result.task.status.message.parts[0].text == "echo: the task GetTask reads") | .result.task.id' <<<"$out" 2>/dev/null)
	if [ -z "$task" ]; then
		ROWS+=("$(printf '%-14s %5s %-5s %s' "$label" "$shown" "-" "SendMessage gave no echo: $(printf '%s' "$out" | head -c 120)")")
		bad=$((bad + 1))
		stop_current
		return
	fi
	if [ "$(rpc '{"jsonrpc":"2.0","id":2,"method":"GetTask","params":{"id":"'"$task"'"}}' | jq -r .result.id 2>/dev/null)" != "$task" ]; then
		ROWS+=("$(printf '%-14s %5s %-5s %s' "$label" "$shown" "-" "GetTask does not answer")")
		bad=$((bad + 1))
		stop_current
		return
	fi
	[ "${WARMUP%s}" = 0 ] || run_wrk "$label" "$shown" send "$task" "$WARMUP" nosave
	sync
	run_wrk "$label" "$shown" send "$task" "$DURATION"
	run_wrk "$label" "$shown" get "$task" "$DURATION"
	case $recipe in
	fcgid | htaccess | htaccess-dflt)
		ROWS[-1]="${ROWS[-1]}  (mod_fcgid ran $(sh "$TH_SRCDIR/tests/lib/apache.sh" workers "$current" | grep -c .) processes)"
		;;
	esac
	stop_current
}

started=$(date +%s)
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
for recipe in $RECIPES; do
	case $recipe in
	lighttpd | fcgid | proxy | nginx | htaccess | peer)
		for procs in $PROCS_LIST; do measure_recipe "$recipe" "$procs"; done
		if [ "$recipe" = fcgid ] && [ "$FCGID_PROCS" -gt 0 ]; then
			case " $PROCS_LIST " in *" $FCGID_PROCS "*) ;; *) measure_recipe fcgid "$FCGID_PROCS" ;; esac
		fi
		;;
	htaccess-dflt) measure_recipe htaccess-dflt 1 ;;
	*) die "unknown recipe '$recipe'" ;;
	esac
done
load_after=$(cut -d' ' -f1-3 /proc/loadavg)

report() {
	echo "# bench/recipes.sh — every FastCGI recipe, SendMessage and GetTask (issue 28, HOST-1)"
	echo "date: $(date -u '+%Y-%m-%d %H:%M UTC')  commit: $(git -C "$TH_SRCDIR" rev-parse --short HEAD 2>/dev/null || echo '?')$(git -C "$TH_SRCDIR" diff --quiet 2>/dev/null || echo '+changes')"
	echo "binary: $TH_BIN"
	echo "machine: $(nproc) CPUs; load before $load_before, after $load_after; $(($(date +%s) - started)) s"
	echo "versions: $(lighttpd -v 2>/dev/null | head -n1 | cut -d' ' -f1); $(apache2 -v 2>/dev/null | head -n1 | sed 's/Server version: //'); mod_fcgid $(dpkg-query -W -f '${Version}' libapache2-mod-fcgid 2>/dev/null || echo '?'); $(nginx -v 2>&1 | sed 's/nginx version: //'); node $(node --version 2>/dev/null || echo '-')"
	echo "wrk -t$THREADS -c$CONNS -d$DURATION --latency after a ${WARMUP} SendMessage warm-up at $WARMUP_CONNS connections; latencies in ms; login: $LOGIN (HTTP Basic with a bcrypt or apr1 hash, or an API key) but for the peer"
	echo
	printf '%-14s %5s %-5s %8s %9s %9s %9s  %s\n' recipe procs kind "req/s" p50 p99 max errors
	printf '%s\n' "${ROWS[@]}"
}
report
if [ "${NO_SAVE:-0}" != 1 ]; then
	mkdir -p "$root/bench/results"
	f=$root/bench/results/recipes-$(date -u +%Y-%m-%d-%H%M).txt
	report >"$f"
	say "saved $f"
fi
[ "$bad" = 0 ] || { say "$bad row(s) with errors"; exit 1; }
exit 0
