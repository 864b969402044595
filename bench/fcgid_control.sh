#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# bench/fcgid_control.sh — whose is mod_fcgid's one-second tail? (issue 28, HOST-1)
#
# A control experiment: bench/fcgi_hello.c, a FastCGI program that reads the request,
# optionally spins the CPU for HELLO_BUSY_US and answers a fixed small JSON body, runs
# under the SAME Apache + mod_fcgid setups as tiny-harness (tests/lib/apache.sh: the
# recipe conf/apache-fcgid.conf with TH_PROCS processes, and conf/htaccess.example on a
# simulated host whose mod_fcgid is at its defaults), measured with the same wrk load,
# the two programs alternating row by row in one run. A tail the hello program shows
# too is mod_fcgid's, and no worker can remove it.
#
#   bench/fcgid_control.sh                    uses build/src/tiny-harness, builds the
#                                             hello program with cc against libfcgi
#   SETUPS="fcgid:4 dflt" ROUNDS=1 bench/fcgid_control.sh
#   NO_SAVE=1 bench/fcgid_control.sh          print only (else bench/results/fcgid-control-<date>.txt)
#
# SETUPS (default "fcgid:1 fcgid:4 fcgid:16 fcgid:24 dflt"):
#   fcgid:N   conf/apache-fcgid.conf with TH_PROCS=N (FcgidMaxProcessesPerClass N, and
#             FcgidMinProcessesPerClass N and the spawn-score settings as shipped)
#   dflt      conf/htaccess.example on a host whose mod_fcgid is exactly at its defaults
#             (TH_HOST_FCGID=defaults: up to 100 processes a class, spawn score limit 10)
#   lighttpd:N  conf/lighttpd.conf with N processes: the reference, what the machine
#             gives a FastCGI program at that moment without mod_fcgid
# PROGRAMS (default "hello th"): hello = bench/fcgi_hello.c, th = TH_BIN. Each round
# runs every setup with both programs; odd rounds start with the first program, even
# rounds with the second.
# WARMUPS (default "0 3"): each setup is measured once per entry: 0 = a fresh server
# straight into the measured load (mod_fcgid spawns during it), N = N seconds of the
# same request at WARMUP_CONNS connections first (unmeasured), so that mod_fcgid has
# spawned what it will. WARMUP_TOOL=ab instead warms up as an operator's start script
# could: `ab -c WARMUP_CONNS -t N` on the agent card (no login; ab comes with Apache).
# Every row starts its server afresh (a free loopback port, a temporary state directory,
# a fresh database), with the recipe's HTTP Basic login on as shipped, checks one
# request, and runs wrk -tTHREADS -cCONNS -dDURATION --latency with a JSON-RPC
# SendMessage (echo model) as body — the hello program answers the same bytes with its
# fixed result; KIND=get sends GetTask of the task the first request made instead
# (read-only: no write lock shared by the processes). Knobs: ROUNDS (2), DURATION (5s), CONNS (16), THREADS (2), WARMUP_CONNS
# (2*CONNS), WARMUP_TOOL (wrk), HELLO_BUSY_US (1500: the worker's median SendMessage,
# written to conf/tiny-harness.conf beside the built program), CC (cc),
# TH_BIN, TH_SRCDIR, NO_SAVE=1. Loopback only; every wrk run is bounded by DURATION;
# every server started is stopped by its pid (tests/lib/apache.sh stop).
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
TH_SRCDIR=${TH_SRCDIR:-$root}
TH_BIN=${TH_BIN:-$root/build/src/tiny-harness}
SETUPS=${SETUPS:-fcgid:1 fcgid:4 fcgid:16 fcgid:24 dflt}
PROGRAMS=${PROGRAMS:-hello th}
WARMUPS=${WARMUPS:-0 3}
ROUNDS=${ROUNDS:-2}
DURATION=${DURATION:-5s}
THREADS=${THREADS:-2}
CONNS=${CONNS:-16}
WARMUP_CONNS=${WARMUP_CONNS:-$((CONNS * 2))}
WARMUP_TOOL=${WARMUP_TOOL:-wrk}
KIND=${KIND:-send}
case $KIND in send | get) ;; *) die "KIND is send or get" ;; esac
HELLO_BUSY_US=${HELLO_BUSY_US:-1500}
CC=${CC:-cc}
lua=$root/bench/fcgid_control.lua

die() { echo "fcgid_control: $*" >&2; exit 1; }
say() { echo "fcgid_control: $*" >&2; }

[ -x "$TH_BIN" ] || die "no program at TH_BIN=$TH_BIN (build it first)"
case $TH_BIN in /*) ;; *) TH_BIN=$(cd "$(dirname "$TH_BIN")" && pwd)/$(basename "$TH_BIN") ;; esac
case $WARMUP_TOOL in wrk | ab) ;; *) die "WARMUP_TOOL is wrk or ab" ;; esac
for t in wrk curl jq openssl base64 "$CC" "$WARMUP_TOOL"; do
	command -v "$t" >/dev/null 2>&1 || die "$t is not installed"
done
case ${DURATION%s} in '' | 0 | *[!0-9]*) die "DURATION must be whole seconds, like 5s" ;; esac
for w in $WARMUPS; do case $w in *[!0-9]*) die "WARMUPS are whole seconds, like \"0 3\"" ;; esac; done
sh "$TH_SRCDIR/tests/lib/apache.sh" check fcgid >/dev/null || die "$(sh "$TH_SRCDIR/tests/lib/apache.sh" check fcgid)"

# shellcheck source=../tests/lib/proc.sh
. "$TH_SRCDIR/tests/lib/proc.sh"
for v in $(compgen -e | grep '^TINY_HARNESS_'); do unset "$v"; done
export TH_SRCDIR

state=$(mktemp -d "${TMPDIR:-/tmp}/th-fcgid-control.XXXXXX")
chmod 711 "$state" # Apache drops to an unprivileged user when run by root
current=
stop_current() {
	[ -n "$current" ] || return 0
	case $current in
	*-lighttpd-*) sh "$TH_SRCDIR/tests/lib/server.sh" stop "$current" ;;
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

# The control program, built here (not part of the product build).
mkdir -p "$state/bin" && chmod 755 "$state/bin"
hello=$state/bin/fcgi_hello
# shellcheck disable=SC2046
"$CC" -O2 -Wall -Wextra -o "$hello" "$root/bench/fcgi_hello.c" \
	$(pkg-config --cflags --libs fcgi 2>/dev/null || echo -lfcgi) || die "cannot build bench/fcgi_hello.c (libfcgi-dev?)"
chmod 755 "$hello"
# Its busy time: every server here starts it in its own directory (the .htaccess host
# copies it and gets the setting through its conf/tiny-harness.conf instead).
mkdir -p "$state/bin/conf" && chmod 755 "$state/bin/conf"
echo "hello_busy_us = $HELLO_BUSY_US" >"$state/bin/conf/tiny-harness.conf"
chmod 644 "$state/bin/conf/tiny-harness.conf"

password=bench-$$-$RANDOM
mkdir -p "$state/auth" && chmod 755 "$state/auth"
printf 'bench:%s\n' "$(openssl passwd -apr1 "$password")" >"$state/auth/htpasswd" || die "openssl passwd failed"
chmod 644 "$state/auth/htpasswd"
AUTH="Basic $(printf 'bench:%s' "$password" | base64 | tr -d '\n')"

# start SETUP PROGRAM DIR: sets URL and current.
start() {
	local setup=$1 prog=$2 dir=$3 bin out
	mkdir -p "$dir"
	current=$dir
	bin=$TH_BIN
	[ "$prog" = hello ] && bin=$hello
	(
		export TH_BIN=$bin TINY_HARNESS_IDENTITY=remote_user TH_HTPASSWD=$state/auth/htpasswd
		[ "$prog" = hello ] && export TINY_HARNESS_HELLO_BUSY_US=$HELLO_BUSY_US
		case $setup in
		lighttpd:*) sh "$TH_SRCDIR/tests/lib/server.sh" start "$dir" "${setup#lighttpd:}" ;;
		fcgid:*) sh "$TH_SRCDIR/tests/lib/apache.sh" start fcgid "$dir" "${setup#fcgid:}" ;;
		dflt) TH_HOST_FCGID=defaults sh "$TH_SRCDIR/tests/lib/apache.sh" start htaccess "$dir" 1 ;;
		esac
	) >"$dir/start.out" || { cat "$dir/start.out" >&2; return 1; }
	out=$(tail -n1 "$dir/start.out")
	case $out in http://127.0.0.1:*/) URL=$out ;; *) return 1 ;; esac
}

to_ms() {
	awk -v v="$1" 'BEGIN {
		if (v ~ /us$/) printf "%.2f", v / 1000; else if (v ~ /ms$/) printf "%.2f", v + 0;
		else if (v ~ /s$/) printf "%.2f", v * 1000; else if (v ~ /m$/) printf "%.2f", v * 60000;
		else print "?" }'
}

# wrk CONNS DURATION OUT [KIND]
load() {
	BENCH_KIND=${4:-send} BENCH_TASK=${TASK:-none} BENCH_RUN=c$RANDOM$RANDOM BENCH_AUTH=$AUTH BENCH_LUA_DIR=$root/bench \
		timeout $((${2%s} + 30)) wrk -t"$THREADS" -c"$1" -d"$2" --latency -s "$lua" "$URL" >"$3" 2>&1
}

ROWS=()
bad=0
row() { # ROUND SETUP PROGRAM WARMUP
	local round=$1 setup=$2 prog=$3 warm=$4 dir out rps p50 p99 p999 max slow sock resp badst rpcerr errs n body
	dir=$state/r$round-${setup/:/-}-$prog-w$warm
	if ! start "$setup" "$prog" "$dir"; then
		ROWS+=("$(printf '%-3s %-9s %-5s %4s  %s' "$round" "$setup" "$prog" "${warm}s" "did not start")")
		bad=$((bad + 1))
		stop_current
		return
	fi
	body=$(curl -s --max-time 10 -H 'Content-Type: application/json' -H 'A2A-Version: 1.0' -H "Authorization: $AUTH" \
		-d '{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"probe-'"$RANDOM"'","role":"ROLE_USER","parts":[{"text":"probe"}]}}}' "$URL")
	if [ "$(jq -r 'has("result")' <<<"$body" 2>/dev/null)" != true ]; then
		ROWS+=("$(printf '%-3s %-9s %-5s %4s  %s' "$round" "$setup" "$prog" "${warm}s" "no result: $(printf '%s' "$body" | head -c 100)")")
		bad=$((bad + 1))
		stop_current
		return
	fi
	if [ "$warm" != 0 ] && [ "$WARMUP_TOOL" = ab ]; then
		timeout $((warm + 30)) ab -q -c "$WARMUP_CONNS" -t "$warm" -n 10000000 -s 10 \
			"${URL}.well-known/agent-card.json" >"$dir/warmup.txt" 2>&1
	elif [ "$warm" != 0 ]; then
		load "$WARMUP_CONNS" "${warm}s" "$dir/warmup.txt"
	fi
	out=$dir/wrk.txt
	TASK=$(jq -r '.result.task.id // "none"' <<<"$body" 2>/dev/null)
	load "$CONNS" "$DURATION" "$out" "$KIND"
	case $setup in
	lighttpd:*) n=${setup#lighttpd:} ;;
	*) n=$(sh "$TH_SRCDIR/tests/lib/apache.sh" workers "$dir" | grep -c .) ;;
	esac
	stop_current
	rps=$(awk '/^Requests\/sec:/ { printf "%.0f", $2 }' "$out")
	p50=$(to_ms "$(awk '$1 == "50%" { print $2 }' "$out")")
	p99=$(to_ms "$(awk '$1 == "99%" { print $2 }' "$out")")
	max=$(to_ms "$(awk '$1 == "Latency" { print $4 }' "$out")")
	p999=$(sed -n 's/^control: p999=\([0-9.]*\) .*/\1/p' "$out")
	slow=$(sed -n 's/^control: .* slow500=\([0-9.]*\).*/\1/p' "$out")
	sock=$(sed -n 's/^ *Socket errors: //p' "$out" | tr ',' '\n' | awk '$2 > 0 { printf "%s%s:%s", sep, $1, $2; sep = "," }')
	resp=$(sed -n 's/^compare: responses=\([0-9]*\) .*/\1/p' "$out")
	badst=$(sed -n 's/^compare: .* bad-status=\([0-9]*\) .*/\1/p' "$out")
	rpcerr=$(sed -n 's/^compare: .* rpc-errors=\([0-9]*\).*/\1/p' "$out")
	errs=
	[ -n "$resp" ] || errs="wrk-failed"
	[ "${badst:-0}" = 0 ] || errs="$errs non-200:$badst"
	[ "${rpcerr:-0}" = 0 ] || errs="$errs rpc-errors:$rpcerr"
	[ -z "$sock" ] || errs="$errs socket:$sock"
	errs=${errs# }
	ROWS+=("$(printf '%-3s %-9s %-5s %4s %7s %8s %9s %9s %9s %7s %5s  %s' "$round" "$setup" "$prog" "${warm}s" \
		"${rps:-?}" "$p50" "$p99" "${p999:-?}" "$max" "${slow:-?}" "$n" "${errs:-0}")")
	printf '%s\n' "${ROWS[-1]}" >&2
}

started=$(date +%s)
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
r=1
while [ "$r" -le "$ROUNDS" ]; do
	order=$PROGRAMS
	[ $((r % 2)) = 0 ] && order=$(printf '%s\n' $PROGRAMS | tac | tr '\n' ' ')
	for setup in $SETUPS; do
		case $setup in fcgid:[1-9]* | lighttpd:[1-9]* | dflt) ;; *) die "unknown setup '$setup' (fcgid:N, lighttpd:N or dflt)" ;; esac
		for warm in $WARMUPS; do
			for prog in $order; do row "$r" "$setup" "$prog" "$warm"; done
		done
	done
	r=$((r + 1))
done
load_after=$(cut -d' ' -f1-3 /proc/loadavg)

report() {
	echo "# bench/fcgid_control.sh — the hello control program beside tiny-harness under mod_fcgid (issue 28, HOST-1)"
	echo "date: $(date -u '+%Y-%m-%d %H:%M UTC')  commit: $(git -C "$TH_SRCDIR" rev-parse --short HEAD 2>/dev/null || echo '?')$(git -C "$TH_SRCDIR" diff --quiet 2>/dev/null || echo '+changes')"
	echo "th: $TH_BIN; hello: bench/fcgi_hello.c, busy ${HELLO_BUSY_US} us a request"
	echo "machine: $(nproc) CPUs; load before $load_before, after $load_after; $(($(date +%s) - started)) s"
	echo "versions: $(apache2 -v 2>/dev/null | head -n1 | sed 's/Server version: //'); mod_fcgid $(dpkg-query -W -f '${Version}' libapache2-mod-fcgid 2>/dev/null || echo '?')"
	if [ "$WARMUP_TOOL" = ab ]; then
		echo "wrk -t$THREADS -c$CONNS -d$DURATION --latency, HTTP Basic login; warm = seconds of ab -c $WARMUP_CONNS on the agent card first"
	else
		echo "wrk -t$THREADS -c$CONNS -d$DURATION --latency, HTTP Basic login; warm = seconds of SendMessage at $WARMUP_CONNS connections first"
	fi
	echo "setups: fcgid:N = conf/apache-fcgid.conf with TH_PROCS=N; dflt = conf/htaccess.example, host mod_fcgid at its defaults; lighttpd:N = conf/lighttpd.conf, N processes"
	echo "measured request: $KIND; latencies in ms; slow% = share of requests that took 500 ms or more; procs = processes mod_fcgid ran at the end"
	echo
	printf '%-3s %-9s %-5s %4s %7s %8s %9s %9s %9s %7s %5s  %s\n' rnd setup prog warm "req/s" p50 p99 p99.9 max slow% procs errors
	printf '%s\n' "${ROWS[@]}"
}
report
if [ "${NO_SAVE:-0}" != 1 ]; then
	mkdir -p "$root/bench/results"
	f=$root/bench/results/fcgid-control-$(date -u +%Y-%m-%d-%H%M).txt
	report >"$f"
	say "saved $f"
fi
[ "$bad" = 0 ] || { say "$bad row(s) did not run"; exit 1; }
exit 0
