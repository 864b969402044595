#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# bench/pgbouncer.sh — what a transaction pooler in front of PostgreSQL costs and saves
# (SCALE-1 item 4, decision-055), side by side in one run. Loopback only; every run is
# bounded in time; it stops what it started, by pid.
#
#   bench/pgbouncer.sh                      uses build/src/tiny-harness; builds nothing
#   ROUNDS=3 DURATION=5s CONNS=8 PROCS=1 POOL=4 CGI_N=40 bench/pgbouncer.sh
#   NO_SAVE=1 bench/pgbouncer.sh            print only; no bench/results/pgbouncer-<date>.txt
#
# One throwaway cluster (tests/lib/pg.sh), one database, three lighttpd servers on it
# (tests/lib/server.sh, PROCS FastCGI workers each, echo model):
#   named     straight to PostgreSQL, db_pooler = none: named prepared statements
#   unnamed   straight to PostgreSQL, db_pooler = transaction: unnamed statements and SET
#             LOCAL, so the difference to named is what the statement mode costs
#   bouncer   through PgBouncer (tests/lib/pgbouncer.sh, pool_mode = transaction,
#             default_pool_size POOL), db_pooler = transaction, db_listen straight
# Each round runs wrk -t2 -cCONNS (bench/compare.lua: send = SendMessage of a new task,
# get = GetTask of one task) on each server, the order rotating per round; a run with any
# failed answer is left out. Then CGI_N plain-CGI GetTasks one after another, straight
# (db_pooler = none) and through PgBouncer, alternating, ms per request.
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=bench/lib.sh
. "$root/bench/lib.sh" # median, sched_note
TH_BIN=${TH_BIN:-$root/build/src/tiny-harness}
ROUNDS=${ROUNDS:-3}
DURATION=${DURATION:-5s}
CONNS=${CONNS:-8}
PROCS=${PROCS:-1}
POOL=${POOL:-4}
CGI_N=${CGI_N:-40}
export TH_BIN TH_SRCDIR=$root
die() { echo "pgbouncer-bench: $*" >&2; exit 1; }
say() { echo "pgbouncer-bench: $*" >&2; }
[ -x "$TH_BIN" ] || die "no program at $TH_BIN (build it first)"
for t in wrk curl jq psql; do command -v $t >/dev/null 2>&1 || die "$t is not installed"; done
command -v pgbouncer >/dev/null 2>&1 || [ -x /usr/sbin/pgbouncer ] || die "pgbouncer is not installed"
secs=${DURATION%s}
case $secs in '' | *[!0-9]*) die "DURATION must be whole seconds, like 5s" ;; esac
unset TINY_HARNESS_CONF TINY_HARNESS_ECHO_DELAY_MS TINY_HARNESS_DB_POOLER TINY_HARNESS_DB_LISTEN \
	TH_TEST_PG TH_SERVER_DB

state=$(mktemp -d "${TMPDIR:-/tmp}/th-pgbbench.XXXXXX")
chmod 755 "$state"
cleanup() {
	for d in named unnamed bouncer; do
		[ -f "$state/$d/lighttpd.pid" ] && sh "$root/tests/lib/server.sh" stop "$state/$d"
	done
	sh "$root/tests/lib/pgbouncer.sh" stop "$state/pgb"
	sh "$root/tests/lib/pg.sh" stop "$state/cluster"
	rm -rf "$state"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

base=$(sh "$root/tests/lib/pg.sh" start "$state/cluster") || die "no PostgreSQL cluster"
direct=$(sh "$root/tests/lib/pg.sh" createdb "$base" th_bench) || die "no database"
bouncer=$(sh "$root/tests/lib/pgbouncer.sh" start "$state/pgb" "$base" "$POOL") || die "no pgbouncer"
pooled=${bouncer}th_bench
declare -A URL
URL[named]=$(TH_SERVER_DB=$direct sh "$root/tests/lib/server.sh" start "$state/named" "$PROCS") ||
	die "named did not start"
URL[unnamed]=$(TH_SERVER_DB=$direct TINY_HARNESS_DB_POOLER=transaction \
	sh "$root/tests/lib/server.sh" start "$state/unnamed" "$PROCS") || die "unnamed did not start"
URL[bouncer]=$(TH_SERVER_DB=$pooled TINY_HARNESS_DB_POOLER=transaction TINY_HARNESS_DB_LISTEN=$direct \
	sh "$root/tests/lib/server.sh" start "$state/bouncer" "$PROCS") || die "bouncer did not start"
for s in named unnamed bouncer; do
	case ${URL[$s]} in http://127.0.0.1:*) ;; *) die "refusing a non-loopback URL: ${URL[$s]}" ;; esac
done
task=$(curl -s --max-time 10 -H 'Content-Type: application/json' -H 'A2A-Version: 1.0' \
	-H 'X-Participant-Id: bench' --data-binary \
	'{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"bench-get","role":"ROLE_USER","parts":[{"text":"one task to read"}]}}}' \
	"${URL[named]}" | jq -r '.result.task.id // empty')
[ -n "$task" ] || die "SendMessage does not answer"

# wrk_run OUT URL KIND — one wrk run; prints its req/s, or "bad".
wrk_run() {
	BENCH_KIND=$3 BENCH_TASK=$task BENCH_RUN=$(basename "$1") \
		timeout $((secs + 30)) wrk -t2 -c"$CONNS" -d"${secs}s" -s "$root/bench/compare.lua" "$2" >"$1" 2>&1
	local rps bad
	rps=$(awk '/^Requests\/sec:/ { print $2 }' "$1")
	bad=$(sed -n 's/^compare: .* bad-status=\([0-9]*\) rpc-errors=\([0-9]*\).*/\1\2/p' "$1")
	[ -n "$rps" ] && [ "${bad:-x}" = 00 ] && ! grep -q 'Socket errors' "$1" && echo "$rps" || echo bad
}
declare -A RPS BADN
for round in $(seq 1 "$ROUNDS"); do
	case $((round % 3)) in 1) order="named unnamed bouncer" ;; 2) order="unnamed bouncer named" ;; 0) order="bouncer named unnamed" ;; esac
	for kind in send get; do
		for s in $order; do
			say "round $round/$ROUNDS: $kind on $s"
			r=$(wrk_run "$state/w-$round-$kind-$s" "${URL[$s]}" "$kind")
			if [ "$r" = bad ]; then
				BADN[$kind.$s]=$((${BADN[$kind.$s]:-0} + 1))
			else
				RPS[$kind.$s]="${RPS[$kind.$s]:-} $r"
			fi
			sleep 1
		done
	done
done

# Plain CGI: one GetTask per process, straight and through the pooler, alternating.
cgi_get() { # cgi_get DB POOLER — ms for one request
	local body t0 t1
	body="{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"GetTask\",\"params\":{\"id\":\"$task\"}}"
	t0=$(date +%s%N)
	(cd "$state" && printf '%s' "$body" | env -i PATH="$PATH" GATEWAY_INTERFACE=CGI/1.1 \
		SERVER_PROTOCOL=HTTP/1.1 SERVER_NAME=127.0.0.1 SERVER_PORT=8080 REMOTE_ADDR=127.0.0.1 \
		REQUEST_METHOD=POST REQUEST_URI=/ SCRIPT_NAME= PATH_INFO=/ QUERY_STRING= \
		CONTENT_TYPE=application/json CONTENT_LENGTH=${#body} HTTP_A2A_VERSION=1.0 \
		HTTP_X_PARTICIPANT_ID=bench TINY_HARNESS_DB="$1" TINY_HARNESS_DB_POOLER="$2" \
		TINY_HARNESS_BASE_URL=http://127.0.0.1:8080/ "$TH_BIN" >"$state/cgi.out" 2>/dev/null)
	t1=$(date +%s%N)
	grep -q '"result"' "$state/cgi.out" || { echo bad; return; }
	awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", (b - a) / 1e6 }'
}
CGI_D=
CGI_B=
for _ in $(seq 1 "$CGI_N"); do
	d=$(cgi_get "$direct" none)
	b=$(cgi_get "$pooled" transaction)
	[ "$d" != bad ] && CGI_D="$CGI_D $d"
	[ "$b" != bad ] && CGI_B="$CGI_B $b"
done

report() {
	echo "tiny-harness on PostgreSQL: named statements, unnamed ones, and through PgBouncer, $(date -u '+%Y-%m-%d %H:%M UTC')"
	echo "commit:    $(git -C "$root" rev-parse --short HEAD 2>/dev/null)"
	echo "machine:   $(nproc) CPUs shared with other work; PostgreSQL $(psql --version | awk '{ print $3 }') (throwaway cluster, fsync on), $(pgbouncer --version 2>/dev/null | head -n 1) (pool_mode = transaction, default_pool_size $POOL); $(sched_note)"
	echo "load:      $ROUNDS rounds x wrk -t2 -c$CONNS -d${secs}s per server and kind, order rotating; lighttpd with $PROCS worker(s), echo model"
	echo
	printf '%-6s %-8s %10s  %s\n' kind server req/s "rounds (req/s)"
	for kind in send get; do
		for s in named unnamed bouncer; do
			# shellcheck disable=SC2086
			printf '%-6s %-8s %10s  %s%s\n' "$kind" "$s" "$(median ${RPS[$kind.$s]:-})" "${RPS[$kind.$s]:-}" \
				"${BADN[$kind.$s]:+ ($((BADN[$kind.$s])) not counted)}"
		done
	done
	echo
	for kind in send get; do
		# shellcheck disable=SC2086
		echo "$kind: unnamed / named $(awk -v a="$(median ${RPS[$kind.unnamed]:-})" -v b="$(median ${RPS[$kind.named]:-})" 'BEGIN { if (b > 0) printf "%.2f", a / b }'), bouncer / named $(awk -v a="$(median ${RPS[$kind.bouncer]:-})" -v b="$(median ${RPS[$kind.named]:-})" 'BEGIN { if (b > 0) printf "%.2f", a / b }')"
	done
	echo
	# shellcheck disable=SC2086
	echo "plain CGI GetTask, $CGI_N each, alternating: straight $(median $CGI_D) ms, through PgBouncer $(median $CGI_B) ms (medians)"
}
report | tee "$state/report.txt"
if [ -z "${NO_SAVE:-}" ]; then
	mkdir -p "$root/bench/results"
	cp "$state/report.txt" "$root/bench/results/pgbouncer-$(date -u +%Y%m%d-%H%M).txt"
fi
