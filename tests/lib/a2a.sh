# SPDX-License-Identifier: Apache-2.0
# a2a.sh — A2A over curl, jq and the database client for the shell tests; sourced (bash)
# after tests/lib/tap.sh and tests/lib/proc.sh, with TH_SRCDIR set; sources
# tests/lib/db.sh.
#
# Set-up
#   TH_BUILDDIR, TH_BIN get their defaults and are exported with TH_SRCDIR.
#   require_lighttpd / require_tools TOOL…   skip (exit 77) when missing
#   scratch PREFIX    T=a new scratch directory; at exit (INT/TERM: exit 1) the hooks of
#                     on_exit run, every lighttpd with its state in $T/* is stopped
#                     (tests/lib/server.sh) and T is removed (TH_KEEP=1 keeps it)
#   on_exit SNIPPET   run SNIPPET (eval) at exit, before the servers are stopped
#
# Authentication (SEC-1, decision-040)
#   basic_auth DIR    write DIR/htpasswd (every participant the tests use, one password),
#                     export TINY_HARNESS_IDENTITY=remote_user and TH_HTPASSWD for the
#                     launchers, and make every request below log in as its participant
#                     with HTTP Basic (AUTH=basic); DIR/credentials holds alice's login for
#                     `tiny-harness complete --credentials` (CLI_CREDENTIALS)
#   AUTH=basic        requests send "-u PARTICIPANT:$TEST_PASSWORD" besides the header
#   "${ALICE[@]}"     curl arguments logging alice in (none without basic_auth)
#
# Requests (to ${HTTP_BASE:-$BASE}; X-Participant-Id default alice, "" for none: then no
# login either)
#   http METHOD PATH [BODY] [PARTICIPANT] [CONTENT-TYPE]
#                     body in $T/body, headers in $T/headers, STATUS, TIME (seconds),
#                     REQ_DESC (the first HTTP_DESC_BYTES (200) bytes of the body)
#   rpc ID METHOD PARAMS            print a JSON-RPC request
#   rpc_call METHOD PARAMS [WHO]    POST one to / with the next id (RPCID)
#   msg MID TEXT [TASK] [CONFIGURATION]   SendMessage params with one text part
#   tmsg MID TASK TEXT              the same built with jq (TASK "" for none)
#   ctl MID TASK                    SendMessage params completing TASK
#   post_bg NAME PARTICIPANT URL BODY   a background POST, its body in $T/NAME
#
# Reading
#   jqb FILTER        jq -r FILTER on $T/body
#   texts PATH        the text parts of PATH's status message, joined with " "
#   has_task          TASK is set and not null
#   sq SQL            th_db_sql on $DB (tests/lib/db.sh: sqlite3 for a path, psql for a
#                     postgresql:// URI), errors discarded
#   wait_idle [TENTHS]  wait (default 10 s) until no turn is queued or running
#   ms SECONDS / now_ms   milliseconds

# Its variables are read by the scripts that source it.
# shellcheck disable=SC2034

: "${TH_BUILDDIR:=$TH_SRCDIR/build}"
: "${TH_BIN:=$TH_BUILDDIR/src/tiny-harness}"
export TH_SRCDIR TH_BUILDDIR TH_BIN
SERVER=$TH_SRCDIR/tests/lib/server.sh
. "$TH_SRCDIR/tests/lib/db.sh"
HTTP_BASE=
AUTH=
CLI_CREDENTIALS=
ALICE=()
TEST_PASSWORD=correct-horse-battery-staple
TEST_PARTICIPANTS="alice bob carol dave erin mallory user1 user2 user3 user4 user5 user6 user7 user8"
: "${HTTP_DESC_BYTES:=200}"

STATUS_KEY='io.github.madarauchiha-314.tiny-harness/status'
TASK_KEY='io.github.madarauchiha-314.tiny-harness/task'
EVENT_MT='application/vnd.tiny-harness.event+json'
CHANNEL_MT='application/vnd.tiny-harness.channel+json'

require_lighttpd() {
	command -v lighttpd >/dev/null 2>&1 || [ -x /usr/sbin/lighttpd ] || skip "lighttpd is not installed"
}
require_tools() {
	local tool
	for tool in "$@"; do
		command -v "$tool" >/dev/null 2>&1 || skip "$tool is not installed"
	done
}

ON_EXIT=()
on_exit() { ON_EXIT+=("$1"); }
scratch_cleanup() {
	local hook d
	for hook in "${ON_EXIT[@]}"; do eval "$hook"; done
	for d in "$T"/*/; do
		[ -f "$d/lighttpd.pid" ] && sh "$SERVER" stop "${d%/}"
	done
	[ "${TH_KEEP:-0}" = 1 ] && echo "# kept $T" || rm -rf "$T"
}
scratch() {
	T=$(mktemp -d "${TMPDIR:-/tmp}/$1.XXXXXX")
	trap scratch_cleanup EXIT
	trap 'exit 1' INT TERM
}

basic_auth() {
	local dir=$1 hash who
	mkdir -p "$dir" || bail "cannot create $dir"
	# apr1 (MD5, 1,000 rounds): lighttpd, Apache and nginx all check it, and quickly.
	hash=$(openssl passwd -apr1 "$TEST_PASSWORD") || bail "openssl passwd failed"
	: >"$dir/htpasswd"
	for who in $TEST_PARTICIPANTS; do printf '%s:%s\n' "$who" "$hash" >>"$dir/htpasswd"; done
	chmod 644 "$dir/htpasswd"
	printf 'alice:%s\n' "$TEST_PASSWORD" >"$dir/credentials"
	chmod 600 "$dir/credentials"
	AUTH=basic CLI_CREDENTIALS=$dir/credentials TH_HTPASSWD=$dir/htpasswd TINY_HARNESS_IDENTITY=remote_user
	ALICE=(-u "alice:$TEST_PASSWORD")
	export TH_HTPASSWD TINY_HARNESS_IDENTITY
}
http() {
	local method=$1 path=$2 body=${3:-} part=${4-alice} ctype=${5:-application/json} out
	local args=(-s -o "$T/body" -D "$T/headers" -w '%{http_code} %{time_total}' --max-time 30 -X "$method"
		-H 'A2A-Version: 1.0')
	[ -n "$part" ] && args+=(-H "X-Participant-Id: $part")
	[ "$AUTH" = basic ] && [ -n "$part" ] && args+=(-u "$part:$TEST_PASSWORD")
	[ -n "$body" ] && args+=(-H "Content-Type: $ctype" --data-binary "$body")
	REQ_DESC="$method $path participant=${part:-none} $(printf '%s' "$body" | head -c "$HTTP_DESC_BYTES")"
	out=$(curl "${args[@]}" "${HTTP_BASE:-$BASE}${path#/}")
	STATUS=${out%% *}
	TIME=${out#* }
}
rpc() { printf '{"jsonrpc":"2.0","id":%s,"method":"%s","params":%s}' "$1" "$2" "$3"; }
RPCID=0
rpc_call() {
	RPCID=$((RPCID + 1))
	http POST / "$(jq -nc --arg m "$1" --argjson p "$2" --argjson id "$RPCID" \
		'{jsonrpc: "2.0", id: $id, method: $m, params: $p}')" "${3-alice}"
}
msg() {
	printf '{"message":{"messageId":"%s","role":"ROLE_USER"%s,"parts":[{"text":"%s"}]}%s}' \
		"$1" "${3:+,\"taskId\":\"$3\"}" "$2" "${4:+,\"configuration\":$4}"
}
tmsg() {
	jq -nc --arg m "$1" --arg t "$2" --arg x "$3" \
		'{message: ({messageId: $m, role: "ROLE_USER", parts: [{text: $x}]} + (if $t == "" then {} else {taskId: $t} end))}'
}
ctl() {
	jq -nc --arg m "$1" --arg t "$2" --arg mt "$EVENT_MT" \
		'{message: {messageId: $m, role: "ROLE_USER", taskId: $t, parts: [{data: {kind: "control", action: "complete"}, mediaType: $mt}]}}'
}
post_bg() {
	local login=()
	[ "$AUTH" = basic ] && login=(-u "$2:$TEST_PASSWORD")
	curl -s -o "$T/$1" --max-time 30 -H 'Content-Type: application/json' -H 'A2A-Version: 1.0' \
		-H "X-Participant-Id: $2" "${login[@]}" --data-binary "$4" "$3" &
}

jqb() { jq -r "$1" "$T/body" 2>/dev/null; }
texts() { jqb "[$1.status.message.parts[]?.text // empty] | join(\" \")"; }
has_task() { [ -n "${TASK:-}" ] && [ "$TASK" != null ]; }
sq() { th_db_sql "$DB" "$1" 2>/dev/null; }
wait_idle() {
	local i=0
	while [ "$(sq "SELECT COUNT(*) FROM turns WHERE state IN ('queued', 'running')")" != 0 ] && [ $i -lt "${1:-100}" ]; do
		sleep 0.1
		i=$((i + 1))
	done
}
# The worker process that writes for the others on SQLite database DB (HOST-2,
# decision-084): the one holding DB-handoff.lock open; nothing when none does.
handoff_holder() {
	local d
	for d in /proc/[0-9]*; do
		ls -l "$d/fd" 2>/dev/null | grep -qF -- "$1-handoff.lock" && echo "${d#/proc/}"
	done
}
# writes_in_writer_check LABEL PIDS MIN: the check on the workers that ran a test's turns
# (PIDS, the distinct worker_pid values). On PostgreSQL every worker writes: at least MIN
# of them ran turns (STORE-4). On SQLite the workers hand their writes to the one that
# writes for all (HOST-2), which ran at least 9 in 10 of those turns: a write it cannot
# take at once (its queue full on a loaded machine, or a frame over 128 KiB) is served
# where it arrived (decisions 084 and 093). Without the hand-over each worker
# runs its own share.
writes_in_writer_check() {
	local label=$1 pids=$2 min=$3 distinct holder in total mine
	distinct=$(printf '%s\n' $pids | grep -c .)
	if th_db_is_pg "$DB"; then
		check "STORE-4 $label ran in at least $min worker process(es) (distinct worker_pid: $distinct)" \
			"[ \"$distinct\" -ge $min ]"
	else
		holder=$(handoff_holder "$DB")
		in=$(printf '%s\n' $pids | paste -sd, -)
		total=$(sqlite3 "$DB" "SELECT count(*) FROM turns WHERE worker_pid IN (${in:-0})")
		mine=$(sqlite3 "$DB" "SELECT count(*) FROM turns WHERE worker_pid IN (${in:-0}) AND worker_pid = ${holder:-0}")
		check "HOST-2 STORE-4 $label ran in the worker that writes for the others: $mine of $total in the claim's holder ${holder:-none} (worker_pid: $(echo $pids))" \
			"[ -n \"$holder\" ]" "[ \"${total:-0}\" -gt 0 ]" "[ $((${mine:-0} * 10)) -ge $((${total:-0} * 9)) ]"
	fi
}
ms() { awk -v t="$1" 'BEGIN { printf "%d", t * 1000 }'; }
now_ms() { date +%s%3N; }
