#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# bench/pg_distance.sh — tiny-harness hosts on a PostgreSQL a simulated network distance
# away (issue 29, SCALE-1): SendMessage req/s, p50 and p99 with 1, 2 and 4 hosts at
# each round-trip time. A benchmark, not a test: not in `make check`, not in CI.
#
#   sudo bench/pg_distance.sh                  uses build/src/tiny-harness; builds only
#                                              the relay (bench/delay_relay.c)
#   RTTS="0.5:16 2:4 2:1" HOSTS="1 2 4" DURATION=6s bench/pg_distance.sh
#   NO_SAVE=1 bench/pg_distance.sh             print only
#
# The distance. This kernel has no netem, so the script makes one itself:
#   - a network namespace of its own (th-pgdist-PID) and a veth pair, 10.231.N.1/30 on
#     this side and 10.231.N.2/30 inside (N is picked so that no address of this machine
#     is in 10.231.N.0/30); nothing is routed anywhere else;
#   - a throwaway PostgreSQL cluster (tests/lib/pg.sh) started inside the namespace, so it
#     listens on the namespace's own 127.0.0.1 and nothing outside can reach it directly;
#   - for each RTT, bench/delay_relay.c inside the namespace on 10.231.N.2, forwarding to
#     that 127.0.0.1 and holding every chunk RTT/2 in each direction.
# The hosts reach PostgreSQL only as postgresql://th@10.231.N.2:RELAY_PORT/…, through
# the relay. The round trip a statement really sees is measured with pgbench (SELECT 1,
# one client, the simple protocol: one round trip a statement), directly inside the
# namespace and through each relay, and again during every run (PROBE_RATE statements a
# second alongside the load: what a statement sees while the machine is busy).
#
# The hosts. A "host" is lighttpd with PROCS FastCGI workers on a free loopback port
# (tests/lib/server.sh), all of a run's hosts on one fresh database: the first gets it
# through TH_TEST_PG, the others through TH_SERVER_DB, as in bench/pg.sh. For each RTT
# and each host count, every host's SendMessage is checked once, then WARMUP of load,
# then wrk -t1 -cCONNS -dDURATION on every host at once (bench/pg_distance.lua: a new
# task per request, messageIds unique to the run; answers that are not a success are
# counted and a run with any is marked and left out). req/s is the sum over the hosts;
# p50 and p99 are of all the run's requests together (merged from each wrk's quantiles).
#
# Needs: root (network namespaces, veth), ip (iproute2), cc, wrk, curl, jq, psql and
# pgbench (PostgreSQL's client programs), the PostgreSQL server programs tests/lib/pg.sh
# uses, lighttpd, and a built tiny-harness (TH_BIN). It stops what it started by pid, and
# deletes the namespace and the veth pair, on every exit (trap). Every wrk and pgbench run
# is bounded by `timeout`, the relay ends by itself after RELAY_LIFETIME seconds.
#
# Knobs: RTTS ("RTT_MS:CONNS_PER_HOST …", default "0.5:16 2:4 2:1"; an RTT may come with
# several connection counts, each a row of its own), HOSTS ("1 2 4"),
# DURATION (6s), WARMUP (2s), ROUNDS (1; host counts ascending in odd rounds, descending
# in even ones), PROCS (1 worker a host), RTT_SECS (3: each pgbench round-trip measure),
# PROBE_RATE (100), CALIBRATE (1: correct the relay's delay until SELECT 1 takes the RTT;
# 0: RTT/2 each way as given), RELAY_LIFETIME (1800), TH_BIN, NO_SAVE=1, NOTE (a line for
# the report), PEER (1: also run the official SDK peer, below; 0: not), PEER_POOL (16).
#
# The peer. bench/peer/server.mjs (@a2a-js/sdk's DatabaseTaskStore through Kysely's
# PostgresDialect and a `pg` pool of PEER_POOL connections: `cd bench/peer && npm ci`
# once) runs as one more "host" at each RTT, on a database of its own on the same
# PostgreSQL behind the same relay, with the same load as one tiny-harness host; the
# report gives tiny-harness's one host over the peer (issue 29's goal at 0.5 ms: >= 5).
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=bench/lib.sh
. "$root/bench/lib.sh" # to_ms, median, sched_note
TH_BIN=${TH_BIN:-$root/build/src/tiny-harness}
RTTS=${RTTS:-0.5:16 2:4 2:1}
HOSTS=${HOSTS:-1 2 4}
DURATION=${DURATION:-6s}
WARMUP=${WARMUP:-2s}
ROUNDS=${ROUNDS:-1}
PROCS=${PROCS:-1}
RTT_SECS=${RTT_SECS:-3}
PROBE_RATE=${PROBE_RATE:-100}
RELAY_LIFETIME=${RELAY_LIFETIME:-1800}
CALIBRATE=${CALIBRATE:-1}
NOTE=${NOTE:-}
PEER=${PEER:-1}
PEER_POOL=${PEER_POOL:-16}
export TH_BIN TH_SRCDIR=$root
# shellcheck source=tests/lib/proc.sh
. "$root/tests/lib/proc.sh" # random_port
die() { echo "pg-distance: $*" >&2; exit 1; }
say() { echo "pg-distance: $*" >&2; }

[ "$(id -u)" = 0 ] || die "needs root: it makes a network namespace and a veth pair"
[ -x "$TH_BIN" ] || die "no program at $TH_BIN (build it first)"
for t in ip cc wrk curl jq psql timeout; do
	command -v $t >/dev/null 2>&1 || die "$t is not installed"
done
peer_dir=$root/bench/peer
if [ "$PEER" = 1 ]; then
	command -v node >/dev/null 2>&1 || die "node is not installed (PEER=0 runs without the peer)"
	[ -d "$peer_dir/node_modules/pg" ] && [ -d "$peer_dir/node_modules/@a2a-js/sdk" ] ||
		die "the peer's dependencies are missing: cd bench/peer && npm ci (or PEER=0)"
fi
pgbindir=$(printf '%s\n' /usr/lib/postgresql/*/bin | sort -V | tail -n 1)
PGBENCH=$pgbindir/pgbench
[ -x "$PGBENCH" ] || PGBENCH=$(command -v pgbench) || die "pgbench is not installed (PostgreSQL's client programs)"
PG_ISREADY=$pgbindir/pg_isready
[ -x "$PG_ISREADY" ] || PG_ISREADY=$(command -v pg_isready) || die "pg_isready is not installed"
secs=${DURATION%s}
wsecs=${WARMUP%s}
case $secs in '' | *[!0-9]* | 0) die "DURATION must be whole seconds, like 6s" ;; esac
case $wsecs in '' | *[!0-9]*) die "WARMUP must be whole seconds, like 2s" ;; esac
for n in $ROUNDS $PROCS $RTT_SECS $PROBE_RATE $RELAY_LIFETIME $HOSTS; do
	case $n in '' | *[!0-9]* | 0) die "ROUNDS, PROCS, RTT_SECS, PROBE_RATE, RELAY_LIFETIME and HOSTS take positive whole numbers, not '$n'" ;; esac
done
for spec in $RTTS; do
	case $spec in
	*:*) ;;
	*) die "RTTS: RTT_MS:CONNS_PER_HOST pairs, like '0.5:16 2:4', not '$spec'" ;;
	esac
	awk -v r="${spec%%:*}" 'BEGIN { exit !(r ~ /^[0-9]+(\.[0-9]+)?$/ && r > 0 && r <= 1000) }' ||
		die "RTTS: the RTT in '$spec' must be 0 < ms <= 1000"
	case ${spec#*:} in '' | *[!0-9]* | 0) die "RTTS: the connections in '$spec' must be a positive number" ;; esac
done
unset TINY_HARNESS_CONF TINY_HARNESS_ECHO_DELAY_MS TH_TEST_PG TH_SERVER_DB

# ------------------------------------------------------------------ state and teardown
state=$(mktemp -d "${TMPDIR:-/tmp}/th-pgdist.XXXXXX") || die "no temporary directory"
chmod 755 "$state" # tests/lib/pg.sh runs postgres as nobody under it
ns=th-pgdist-$$
veth_out=thpd$$o
veth_in=thpd$$i
made_ns=
made_veth=
relay_pid=
peer_pid=
pg_started=
declare -a bg_pids=()   # wrk and pgbench runs in the background (timeout's pids)
declare -a host_dirs=() # tests/lib/server.sh state directories of running hosts

stop_hosts() {
	local d
	for d in "${host_dirs[@]}"; do
		sh "$root/tests/lib/server.sh" stop "$d"
	done
	host_dirs=()
}
stop_relay() {
	[ -n "$relay_pid" ] || return 0
	kill -TERM "$relay_pid" 2>/dev/null
	wait "$relay_pid" 2>/dev/null
	relay_pid=
}
stop_peer() {
	[ -n "$peer_pid" ] || return 0
	kill -TERM "$peer_pid" 2>/dev/null
	wait "$peer_pid" 2>/dev/null
	peer_pid=
}
cleanup() {
	local p
	for p in "${bg_pids[@]}"; do
		kill -TERM "$p" 2>/dev/null
	done
	stop_hosts
	stop_peer
	stop_relay
	[ -n "$pg_started" ] && sh "$root/tests/lib/pg.sh" stop "$state/cluster"
	# Deleting one end of a veth pair deletes the other.
	[ -n "$made_veth" ] && ip link del "$veth_out" 2>/dev/null
	[ -n "$made_ns" ] && ip netns del "$ns"
	rm -rf "$state"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

# ------------------------------------------------------------------ the namespace
# A /30 in 10.231.0.0/16 that no address of this machine is in.
oct=
for i in $(seq 0 255); do
	c=$(((($$ % 200) + 20 + i) % 256))
	if ! ip -4 -o addr show | grep -q " 10\.231\.$c\.[0-3]/"; then
		oct=$c
		break
	fi
done
[ -n "$oct" ] || die "no free 10.231.N.0/30"
out_ip=10.231.$oct.1
in_ip=10.231.$oct.2
ip netns add "$ns" || die "cannot create network namespace $ns"
made_ns=1
ip link add "$veth_out" type veth peer name "$veth_in" netns "$ns" || die "cannot create veth pair $veth_out/$veth_in"
made_veth=1
# shellcheck disable=SC2015
ip addr add "$out_ip/30" dev "$veth_out" &&
	ip link set "$veth_out" up &&
	ip -n "$ns" addr add "$in_ip/30" dev "$veth_in" &&
	ip -n "$ns" link set "$veth_in" up &&
	ip -n "$ns" link set lo up || die "cannot configure the veth pair"

cc -O2 -Wall -Wextra -o "$state/delay_relay" "$root/bench/delay_relay.c" || die "cannot build bench/delay_relay.c"
printf 'SELECT 1;\n' >"$state/select1.sql"

# PostgreSQL inside the namespace: it listens on the namespace's 127.0.0.1 only.
inner=$(ip netns exec "$ns" sh "$root/tests/lib/pg.sh" start "$state/cluster") || die "no PostgreSQL cluster in $ns"
pg_started=1
pg_port=${inner##*:}
pg_port=${pg_port%/}
case $pg_port in '' | *[!0-9]*) die "cannot read the port of $inner" ;; esac
pg_version=$(ip netns exec "$ns" psql -X -At -h 127.0.0.1 -p "$pg_port" -U th -d postgres -c 'SHOW server_version' 2>/dev/null)

# ------------------------------------------------------------------ helpers
# rtt_stats LOG… — "median p90 mean count" in ms of pgbench -l logs (a transaction's time
# less its schedule lag under --rate).
rtt_stats() {
	cat "$@" 2>/dev/null | awk '{ t = $3 - (NF >= 7 ? $7 : 0); print t / 1000 }' | sort -g | awk '
		{ a[NR] = $1; s += $1 }
		END { if (NR == 0) { print "- - - 0"; exit }
		      i = int(NR * 0.9 + 0.5); if (i < 1) i = 1
		      printf "%.3f %.3f %.3f %d\n", a[int((NR + 1) / 2)], a[i], s / NR, NR }'
}
# measure_rtt TAG HOST PORT [ip netns exec NS] — SELECT 1 for RTT_SECS from one client.
measure_rtt() {
	local tag=$1 host=$2 port=$3
	shift 3
	mkdir -p "$state/pgb"
	rm -f "$state/pgb/$tag".*
	timeout $((RTT_SECS + 30)) "$@" "$PGBENCH" -n -f "$state/select1.sql" -c1 -j1 -T "$RTT_SECS" \
		-h "$host" -p "$port" -U th -l --log-prefix="$state/pgb/$tag" postgres >"$state/pgb/$tag.out" 2>&1
	rtt_stats "$state/pgb/$tag".[0-9]*
}
# start_relay ONEWAY_US PORT — the relay inside the namespace; waits until PostgreSQL
# answers through it.
start_relay() {
	local i
	# `ip netns exec` execs the command: $! is the relay's own pid.
	ip netns exec "$ns" "$state/delay_relay" "$in_ip" "$2" 127.0.0.1 "$pg_port" "$1" "$RELAY_LIFETIME" \
		>"$state/relay-$2.log" 2>&1 &
	relay_pid=$!
	for i in $(seq 1 100); do
		"$PG_ISREADY" -q -h "$in_ip" -p "$2" -U th -d postgres -t 2 >/dev/null 2>&1 && return 0
		kill -0 "$relay_pid" 2>/dev/null || break
		sleep 0.1
	done
	cat "$state/relay-$2.log" >&2
	die "PostgreSQL does not answer through the relay on $in_ip:$2"
}
# relay_for RTT_MS PORT TAG — a relay whose SELECT 1 round trip is RTT_MS: it starts at
# RTT/2 each way, measures, and (CALIBRATE=1) restarts with the delay corrected by what
# the measured median missed, at most twice, until within 5 %. The machine's own share
# (timer wake-ups, scheduling, PostgreSQL's work) is thus inside RTT, not added to it.
# Sets oneway_us and m_med m_p90 m_n.
relay_for() {
	local rtt=$1 port=$2 tag=$3 try next
	oneway_us=$(awk -v r="$rtt" 'BEGIN { printf "%d", r * 500 + 0.5 }')
	for try in 1 2 3; do
		start_relay "$oneway_us" "$port"
		read -r m_med m_p90 _ m_n < <(measure_rtt "$tag-$try" "$in_ip" "$port")
		[ "$CALIBRATE" = 1 ] && [ "$try" -lt 3 ] || return 0
		next=$(awk -v r="$rtt" -v m="$m_med" -v o="$oneway_us" 'BEGIN {
			if (m !~ /^[0-9.]+$/ || (m - r) * (m - r) <= (0.05 * r) * (0.05 * r)) { print o; exit }
			n = int(o + (r - m) * 500 + 0.5); if (n < 0) n = 0; print n }')
		[ "$next" != "$oneway_us" ] || return 0
		say "  RTT $rtt ms: relay at $oneway_us us each way gives median $m_med ms; trying $next us"
		stop_relay
		oneway_us=$next
	done
}
# wrk_host OUT URL CONNS SECS RUN [QUANTILES] — one wrk run on one host, bounded. Run it
# in the background (&): it execs, so $! is timeout's pid (timeout passes SIGTERM on).
wrk_host() {
	exec env BENCH_KIND=send BENCH_RUN="$5" BENCH_QUANTILES="${6:-}" \
		timeout $(($4 + 30)) wrk -t1 -c"$3" -d"${4}s" --timeout 5s --latency \
		-s "$root/bench/pg_distance.lua" "$2" >"$1" 2>&1
}
# wrk_ok OUT — true when the run has a rate, no failed answer and no socket error.
wrk_ok() {
	local bad
	bad=$(sed -n 's/^compare: .* bad-status=\([0-9]*\) rpc-errors=\([0-9]*\).*/\1\2/p' "$1")
	grep -q '^Requests/sec:' "$1" && [ "${bad:-x}" = 00 ] && ! grep -q 'Socket errors' "$1"
}
# merged_quantiles FILE… — "p50 p99" in ms of the requests of several runs together: each
# run's 1,000 quantiles weigh count/1000.
merged_quantiles() {
	awk 'FNR == 1 { w = $2 / 1000; next } { print $1, w }' "$@" | sort -g | awk '
		{ v[NR] = $1; w[NR] = $2; tot += $2 }
		END { if (tot <= 0) { print "- -"; exit }
		      acc = 0; p50 = ""; p99 = ""
		      for (i = 1; i <= NR; i++) { acc += w[i]
		        if (p50 == "" && acc >= tot * 0.50) p50 = v[i]
		        if (p99 == "" && acc >= tot * 0.99) p99 = v[i] }
		      printf "%.2f %.2f\n", p50 / 1000, p99 / 1000 }'
}

# run_hosts RTT CONNS N ROUND URI — one run: N hosts on a fresh database at URI's server.
declare -A RPS P50 P99 PROBE EACH BADN
run_hosts() {
	local rtt=$1 conns=$2 n=$3 round=$4 base=$5 key="$1:$2.$3" tag h d url db i r p50 p99 probe bad=
	local -a urls=() outs=() qs=()
	tag=r$round-rtt$rtt-c$conns-n$n
	for h in $(seq 1 "$n"); do
		d=$state/hosts/$tag-h$h
		host_dirs+=("$d")
		if [ "$h" = 1 ]; then
			url=$(TH_TEST_PG=$base sh "$root/tests/lib/server.sh" start "$d" "$PROCS") || die "$tag: host $h did not start"
			db=$(cat "$d/db")
			case $db in "postgresql://th@$in_ip:"*) ;; *) die "$tag: host 1's database is not behind the relay: $db" ;; esac
		else
			url=$(TH_SERVER_DB=$db sh "$root/tests/lib/server.sh" start "$d" "$PROCS") || die "$tag: host $h did not start"
		fi
		case $url in http://127.0.0.1:*) ;; *) die "refusing a non-loopback URL: $url" ;; esac
		urls+=("$url")
		curl -s --max-time 20 -H 'Content-Type: application/json' -H 'A2A-Version: 1.0' \
			-H 'X-Participant-Id: bench' --data-binary \
			"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"SendMessage\",\"params\":{\"message\":{\"messageId\":\"check-$tag-$h\",\"role\":\"ROLE_USER\",\"parts\":[{\"text\":\"check\"}]}}}" \
			"$url" | jq -e '.result.task.id' >/dev/null || die "$tag: host $h ($url) does not answer SendMessage"
	done
	if [ "$wsecs" -gt 0 ]; then
		for i in $(seq 0 $((n - 1))); do
			wrk_host "$state/warm-$tag-$i" "${urls[$i]}" "$conns" "$wsecs" "warm-$tag-$i" &
			bg_pids+=($!)
		done
		wait "${bg_pids[@]}"
		bg_pids=()
	fi
	sync
	# The probe: what one statement's round trip is while the hosts are loaded.
	rm -f "$state/pgb/probe-$tag".*
	timeout $((secs + 30)) "$PGBENCH" -n -f "$state/select1.sql" -c1 -j1 -T "$secs" -R "$PROBE_RATE" \
		-h "$in_ip" -p "$relay_port" -U th -l --log-prefix="$state/pgb/probe-$tag" postgres \
		>"$state/pgb/probe-$tag.out" 2>&1 &
	bg_pids+=($!)
	for i in $(seq 0 $((n - 1))); do
		outs+=("$state/wrk-$tag-$i")
		qs+=("$state/q-$tag-$i")
		wrk_host "$state/wrk-$tag-$i" "${urls[$i]}" "$conns" "$secs" "$tag-$i" "$state/q-$tag-$i" &
		bg_pids+=($!)
	done
	wait "${bg_pids[@]}"
	bg_pids=()
	stop_hosts
	local sum=0 each=
	for i in $(seq 0 $((n - 1))); do
		if ! wrk_ok "${outs[$i]}"; then
			bad=1
			say "  host $((i + 1)): errors in the run: $(grep -E '^compare:|Socket errors|Non-2xx' "${outs[$i]}" | tr '\n' ' ')"
			continue
		fi
		r=$(awk '/^Requests\/sec:/ { print $2 }' "${outs[$i]}")
		sum=$(awk -v a="$sum" -v b="$r" 'BEGIN { printf "%.2f", a + b }')
		each="$each${each:+/}$(awk -v r="$r" 'BEGIN { printf "%.0f", r }')"
	done
	read -r probe _ < <(rtt_stats "$state/pgb/probe-$tag".[0-9]*)
	if [ -n "$bad" ]; then
		BADN[$key]=$((${BADN[$key]:-0} + 1))
		say "  $tag: not counted"
		return
	fi
	read -r p50 p99 < <(merged_quantiles "${qs[@]}")
	RPS[$key]="${RPS[$key]:-} $sum"
	P50[$key]="${P50[$key]:-} $p50"
	P99[$key]="${P99[$key]:-} $p99"
	PROBE[$key]="${PROBE[$key]:-} $probe"
	EACH[$key]="${EACH[$key]:-} $each"
	say "  $tag: $sum req/s (hosts $each), p50 $p50 ms, p99 $p99 ms, SELECT 1 under load $probe ms"
}

# run_peer RTT CONNS ROUND RELAY_PORT — one run of the SDK peer on a fresh database of its
# own at the relay's server, with the load one tiny-harness host gets.
run_peer() {
	local rtt=$1 conns=$2 round=$3 rport=$4 key="$1:$2.peer" tag dbname port url i p50 p99 r
	tag=r$round-rtt$rtt-c$conns-peer
	dbname=peer_r${round}_$(echo "$rtt" | tr . _)_c$conns
	timeout 30 psql -X -q -h "$in_ip" -p "$rport" -U th -d postgres -c "CREATE DATABASE $dbname" \
		>"$state/$tag.createdb" 2>&1 || die "$tag: cannot create database $dbname: $(head -c 200 "$state/$tag.createdb")"
	port=$(random_port)
	node "$peer_dir/server.mjs" --port "$port" --pool "$PEER_POOL" \
		--db "postgresql://th@$in_ip:$rport/$dbname" >"$state/$tag.log" 2>&1 &
	peer_pid=$!
	url=http://127.0.0.1:$port/
	for i in $(seq 1 100); do
		curl -s --max-time 2 -o /dev/null "${url}.well-known/agent-card.json" && break
		sleep 0.1
	done
	curl -s --max-time 20 -H 'Content-Type: application/json' -H 'A2A-Version: 1.0' \
		-H 'X-Participant-Id: bench' --data-binary \
		"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"SendMessage\",\"params\":{\"message\":{\"messageId\":\"check-$tag\",\"role\":\"ROLE_USER\",\"parts\":[{\"text\":\"check\"}]}}}" \
		"$url" | jq -e '.result.task.id' >/dev/null || die "$tag: the peer ($url) does not answer SendMessage: $(tail -c 300 "$state/$tag.log")"
	if [ "$wsecs" -gt 0 ]; then
		wrk_host "$state/warm-$tag" "$url" "$conns" "$wsecs" "warm-$tag" &
		bg_pids+=($!)
		wait "${bg_pids[@]}"
		bg_pids=()
	fi
	wrk_host "$state/wrk-$tag" "$url" "$conns" "$secs" "$tag" "$state/q-$tag" &
	bg_pids+=($!)
	wait "${bg_pids[@]}"
	bg_pids=()
	stop_peer
	if ! wrk_ok "$state/wrk-$tag"; then
		BADN[$key]=$((${BADN[$key]:-0} + 1))
		say "  $tag: errors in the run, not counted: $(grep -E '^compare:|Socket errors|Non-2xx' "$state/wrk-$tag" | tr '\n' ' ')"
		return
	fi
	r=$(awk '/^Requests\/sec:/ { print $2 }' "$state/wrk-$tag")
	read -r p50 p99 < <(merged_quantiles "$state/q-$tag")
	RPS[$key]="${RPS[$key]:-} $r"
	P50[$key]="${P50[$key]:-} $p50"
	P99[$key]="${P99[$key]:-} $p99"
	say "  $tag: $r req/s, p50 $p50 ms, p99 $p99 ms"
}

# ------------------------------------------------------------------ the runs
load_start=$(cut -d' ' -f1-3 /proc/loadavg)
declare -A RTT_MEAS RELAY_LOG
relay_port_base=15430
read -r direct_med direct_p90 _ direct_n < <(measure_rtt direct 127.0.0.1 "$pg_port" ip netns exec "$ns")
say "SELECT 1 inside the namespace, no relay: median $direct_med ms ($direct_n statements)"
start_relay 0 "$relay_port_base"
read -r zero_med zero_p90 _ zero_n < <(measure_rtt zero "$in_ip" "$relay_port_base")
stop_relay
say "SELECT 1 through the relay with no delay: median $zero_med ms ($zero_n statements)"
for round in $(seq 1 "$ROUNDS"); do
	# shellcheck disable=SC2086
	if [ $((round % 2)) = 1 ]; then order=$HOSTS; else order=$(printf '%s\n' $HOSTS | tac | tr '\n' ' '); fi
	k=0
	for spec in $RTTS; do
		rtt=${spec%%:*}
		conns=${spec#*:}
		k=$((k + 1))
		relay_port=$((relay_port_base + k))
		relay_for "$rtt" "$relay_port" "relay-r$round-$rtt-c$conns"
		RTT_MEAS[$spec]="${RTT_MEAS[$spec]:-}${RTT_MEAS[$spec]:+
    }round $round: median $m_med ms, p90 $m_p90 ms ($m_n statements), relay delay $oneway_us us each way"
		say "round $round/$ROUNDS, RTT $rtt ms ($conns connection(s) a host): SELECT 1 through the relay median $m_med ms, p90 $m_p90 ms ($oneway_us us each way)"
		for n in $order; do
			say "round $round/$ROUNDS, RTT $rtt ms: $n host(s), $conns connection(s) each"
			run_hosts "$rtt" "$conns" "$n" "$round" "postgresql://th@$in_ip:$relay_port/"
		done
		if [ "$PEER" = 1 ]; then
			say "round $round/$ROUNDS, RTT $rtt ms: the SDK peer, $conns connection(s)"
			run_peer "$rtt" "$conns" "$round" "$relay_port"
		fi
		stop_relay
		RELAY_LOG[$spec]="${RELAY_LOG[$spec]:-}$(tail -n 1 "$state/relay-$relay_port.log" | sed 's/^delay_relay: //')
"
	done
done

# ------------------------------------------------------------------ the report
report() {
	echo "tiny-harness on PostgreSQL at a simulated network distance, $(date -u '+%Y-%m-%d %H:%M UTC')"
	echo "commit:    $(git -C "$root" rev-parse --short HEAD 2>/dev/null)$(git -C "$root" diff --quiet HEAD 2>/dev/null || echo ' (with local changes)')"
	echo "machine:   $(nproc) CPUs, load average at start $load_start; PostgreSQL $pg_version (throwaway cluster, tests/lib/pg.sh: fsync on, defaults); $(sched_note)"
	[ -n "$NOTE" ] && echo "note:      $NOTE"
	echo "distance:  PostgreSQL in network namespace $ns; hosts reach it at $in_ip (veth $out_ip/30) through"
	echo "           bench/delay_relay.c ($([ "$CALIBRATE" = 1 ] && echo 'one-way delay calibrated on SELECT 1, below' || echo 'RTT/2 each way'));"
	echo "           hosts: lighttpd + $PROCS worker(s) each on 127.0.0.1, one database for a run's hosts"
	echo "load:      per run: $WARMUP warm-up, then wrk -t1 -cCONNS -d$DURATION on every host at once (SendMessage, a new"
	echo "           task each, echo model); $ROUNDS round(s); req/s summed over hosts; p50/p99 of all requests"
	echo
	echo "SELECT 1 round trip (pgbench, 1 client, ${RTT_SECS} s):"
	echo "  inside the namespace, no relay: median $direct_med ms, p90 $direct_p90 ms ($direct_n statements)"
	echo "  through the relay with no delay: median $zero_med ms, p90 $zero_p90 ms ($zero_n statements)"
	for spec in $RTTS; do
		echo "  through the relay, aiming at ${spec%%:*} ms (the runs with ${spec#*:} connection(s) a host):"
		echo "    ${RTT_MEAS[$spec]:-}"
		printf '%s' "${RELAY_LOG[$spec]:-}" | sed 's/^/    relay: /'
	done
	echo
	printf '%-7s %-6s %-5s %10s %9s %9s %11s  %-8s %s\n' rtt_ms conns hosts req/s p50_ms p99_ms sel1_load vs_1host "per host (req/s)"
	for spec in $RTTS; do
		rtt=${spec%%:*}
		conns=${spec#*:}
		# shellcheck disable=SC2086
		one=$(median ${RPS[$spec.1]:-})
		for n in $HOSTS; do
			# shellcheck disable=SC2086
			med=$(median ${RPS[$spec.$n]:-})
			ratio=$(awk -v a="$med" -v b="$one" 'BEGIN { if (a != "" && b > 0) printf "%.2f", a / b; else print "-" }')
			# shellcheck disable=SC2086
			printf '%-7s %-6s %-5s %10s %9s %9s %11s  %-8s %s%s\n' "$rtt" "$conns" "$n" "${med:--}" \
				"$(median ${P50[$spec.$n]:-})" "$(median ${P99[$spec.$n]:-})" "$(median ${PROBE[$spec.$n]:-})" \
				"$ratio" "${EACH[$spec.$n]:-}" "${BADN[$spec.$n]:+ ($((BADN[$spec.$n])) run(s) with errors, not counted)}"
		done
	done
	echo
	echo "sel1_load: median SELECT 1 round trip (ms) of a ${PROBE_RATE}/s pgbench probe through the relay during the run."
	if [ "$PEER" = 1 ]; then
		echo
		echo "The official SDK peer (bench/peer: @a2a-js/sdk DatabaseTaskStore, Kysely PostgresDialect, a pg pool"
		echo "of $PEER_POOL), one process, same relay, same load as one host:"
		printf '%-7s %-6s %10s %9s %9s  %s\n' rtt_ms conns req/s p50_ms p99_ms "tiny-harness 1 host / peer"
		for spec in $RTTS; do
			rtt=${spec%%:*}
			conns=${spec#*:}
			# shellcheck disable=SC2086
			pmed=$(median ${RPS[$spec.peer]:-})
			# shellcheck disable=SC2086
			one=$(median ${RPS[$spec.1]:-})
			# shellcheck disable=SC2086
			printf '%-7s %-6s %10s %9s %9s  %s%s\n' "$rtt" "$conns" "${pmed:--}" "$(median ${P50[$spec.peer]:-})" \
				"$(median ${P99[$spec.peer]:-})" \
				"$(awk -v a="$one" -v b="$pmed" 'BEGIN { if (a != "" && b > 0) printf "%.2f", a / b; else print "-" }')" \
				"${BADN[$spec.peer]:+ ($((BADN[$spec.peer])) run(s) with errors, not counted)}"
		done
		echo "(issue 29's goal: at 0.5 ms and 16 connections, tiny-harness >= 5x the peer)"
	fi
	for spec in $RTTS; do
		if [ -n "${RPS[$spec.1]:-}" ] && [ -n "${RPS[$spec.4]:-}" ]; then
			# shellcheck disable=SC2086
			echo "RTT ${spec%%:*} ms, ${spec#*:} connection(s) a host: 4 hosts / 1 host = $(awk -v a="$(median ${RPS[$spec.4]})" -v b="$(median ${RPS[$spec.1]})" 'BEGIN { printf "%.2f", a / b }') (issue 29's goal at 2 ms: >= 3, with the hosts bound by the network; decision-091)"
		fi
	done
}
report | tee "$state/report.txt"
if [ -z "${NO_SAVE:-}" ]; then
	mkdir -p "$root/bench/results"
	cp "$state/report.txt" "$root/bench/results/pg-distance-$(date -u +%Y%m%d-%H%M).txt"
fi
