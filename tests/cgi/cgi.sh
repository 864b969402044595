#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# CGI black-box tests: the tiny-harness binary run as plain CGI (environment + stdin →
# "Status:" line, headers, body on stdout), exactly as a web server's mod_cgi runs it.
# TAP output; exit 1 on any failure, 77 (skip) when the binary or jq/sqlite3 is missing.
#
# Environment: TH_BIN (the program), TH_WRAP (a command to run it under, e.g.
# "valgrind --error-exitcode=1 --leak-check=full --errors-for-leak-kinds=definite -q"),
# TH_KEEP=1 keeps the scratch directory.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
set -u

: "${TH_SRCDIR:=$(cd "$(dirname "$0")/../.." && pwd)}"
: "${TH_WRAP:=}"
. "$TH_SRCDIR/tests/lib/tap.sh"
. "$TH_SRCDIR/tests/lib/a2a.sh"

[ -x "$TH_BIN" ] || skip "no program at $TH_BIN"
require_tools jq sqlite3

scratch th-cgi
DB=$T/tiny-harness.db
BASE=http://127.0.0.1:8080/
EXT_TASK='https://madarauchiha-314.github.io/tiny-harness/a2a/ext/task/v1'

# A failure shows the CGI request, its exit status and its stderr.
tap_details() {
	echo "#   request: $REQ_DESC"
	echo "#   status: ${STATUS:-none}  exit: ${RC:-none}"
	# awk, not sed: a body without a final newline must not swallow the next TAP line.
	awk 'NR <= 15 { print "#   body: " $0 }' "$T/body" 2>/dev/null
	awk 'NR <= 20 { print "#   stderr: " $0 }' "$T/stderr" 2>/dev/null
}

# req [options] — runs one CGI request; sets STATUS (number), RC (exit status) and
# leaves $T/headers (one per line, CR removed), $T/body and $T/stderr.
#   -m METHOD (POST)  -u REQUEST_URI (/)  -t CONTENT_TYPE (application/json; "" = none)
#   -d BODY           -f BODYFILE         -v A2A-Version (1.0; "" = header absent)
#   -p participant (alice; "" = absent)   -x A2A-Extensions   -e NAME=VALUE (extra env)
req() {
	local method=POST uri=/ ctype=application/json body= bodyfile= version=1.0 part=alice ext= extra=()
	local OPTIND opt
	while getopts 'm:u:t:d:f:v:p:x:e:' opt; do
		case $opt in
		m) method=$OPTARG ;;
		u) uri=$OPTARG ;;
		t) ctype=$OPTARG ;;
		d) body=$OPTARG ;;
		f) bodyfile=$OPTARG ;;
		v) version=$OPTARG ;;
		p) part=$OPTARG ;;
		x) ext=$OPTARG ;;
		e) extra+=("$OPTARG") ;;
		*) return 2 ;;
		esac
	done
	if [ -z "$bodyfile" ]; then
		bodyfile=$T/req
		printf '%s' "$body" >"$bodyfile"
	fi
	local len path query
	len=$(wc -c <"$bodyfile" | tr -d ' ')
	path=${uri%%\?*}
	query=
	case $uri in *\?*) query=${uri#*\?} ;; esac
	local envs=(
		"PATH=$PATH"
		"GATEWAY_INTERFACE=CGI/1.1"
		"SERVER_PROTOCOL=HTTP/1.1"
		"SERVER_NAME=127.0.0.1"
		"SERVER_PORT=8080"
		"REMOTE_ADDR=127.0.0.1"
		"REQUEST_METHOD=$method"
		"REQUEST_URI=$uri"
		"SCRIPT_NAME="
		"PATH_INFO=$path"
		"QUERY_STRING=$query"
		"TINY_HARNESS_DB=$DB"
		"TINY_HARNESS_BASE_URL=$BASE"
	)
	[ "$method" = GET ] || envs+=("CONTENT_LENGTH=$len")
	[ -n "$ctype" ] && envs+=("CONTENT_TYPE=$ctype")
	[ -n "$version" ] && envs+=("HTTP_A2A_VERSION=$version")
	[ -n "$part" ] && envs+=("HTTP_X_PARTICIPANT_ID=$part")
	[ -n "$ext" ] && envs+=("HTTP_A2A_EXTENSIONS=$ext")
	local v
	for v in ASAN_OPTIONS UBSAN_OPTIONS LSAN_OPTIONS HOME; do
		[ -n "${!v:-}" ] && envs+=("$v=${!v}")
	done
	REQ_DESC="$method $uri ctype=${ctype:-none} version=${version:-none} participant=${part:-none}${ext:+ ext=$ext}${extra[*]:+ ${extra[*]}} body=$(head -c 160 "$bodyfile")"
	# Run from the scratch directory so no conf/tiny-harness.conf is picked up.
	(cd "$T" && env -i "${envs[@]}" "${extra[@]}" $TH_WRAP "$TH_BIN" <"$bodyfile" >"$T/out" 2>"$T/stderr")
	RC=$?
	tr -d '\r' <"$T/out" | awk -v h="$T/headers" -v b="$T/body" '
		!done && /^$/ { done = 1; next }
		!done { print > h; next }
		{ print > b }' 
	[ -f "$T/headers" ] || : >"$T/headers"
	[ -f "$T/body" ] || : >"$T/body"
	STATUS=$(sed -n '1s/^Status: \([0-9][0-9]*\).*/\1/p' "$T/headers")
}
# Remove the files of the previous request first (awk appends otherwise).
fresh() { rm -f "$T/out" "$T/headers" "$T/body" "$T/stderr"; STATUS=; RC=; }
run() { fresh; req "$@"; }

header() { grep -i "^$1:" "$T/headers" | head -n1 | sed 's/^[^:]*: *//'; }
# The worker must exit 0 (valgrind's --error-exitcode turns its findings into 1).
clean_exit() { [ "$RC" = 0 ]; }
# Row counts of tasks/messages/events; a unique string when they cannot be read, so
# that a "nothing stored" comparison never passes on a missing database.
rows() {
	sqlite3 "$DB" "SELECT (SELECT COUNT(*) FROM tasks) || '/' || (SELECT COUNT(*) FROM messages) || '/' || (SELECT COUNT(*) FROM events)" 2>/dev/null ||
		echo "unreadable-$RANDOM$RANDOM"
}

# ---------------------------------------------------------------- card
run -m GET -u /.well-known/agent-card.json -t "" -v "" -p "" -d ""
check "CARD-1 card served over CGI without A2A-Version or participant" \
	'[ "$STATUS" = 200 ]' clean_exit \
	'header Content-Type | grep -q "^application/json"' \
	'[ "$(jqb .name)" = tiny-harness ]' \
	'[ "$(jqb "[.supportedInterfaces[] | select(.protocolBinding == \"JSONRPC\") | .url][0]")" = "$BASE" ]' \
	'[ "$(jqb "[.supportedInterfaces[] | select(.protocolBinding == \"HTTP+JSON\")] | length")" = 1 ]' \
	'[ "$(jqb "[.supportedInterfaces[].protocolVersion] | unique | join(\",\")")" = 1.0 ]'
cp "$T/body" "$T/card.json"
check "CARD-1 card is cacheable (Cache-Control and ETag)" \
	'[ -n "$(header Cache-Control)" ]' '[ -n "$(header ETag)" ]'
etag=$(header ETag)
check "CARD-2 card lists exactly five extensions, none required" \
	'[ "$(jq -r ".capabilities.extensions | length" "$T/card.json" 2>/dev/null)" = 5 ]' \
	'[ "$(jq -r "[.capabilities.extensions[] | select(.required == true)] | length" "$T/card.json" 2>/dev/null)" = 0 ]' \
	'[ "$(jq -r ".capabilities.streaming" "$T/card.json" 2>/dev/null)" = true ]'

if [ -n "$etag" ]; then
	run -m GET -u /.well-known/agent-card.json -t "" -v "" -p "" -d "" -e "HTTP_IF_NONE_MATCH=$etag"
	check "CARD-1 If-None-Match with the card's ETag answers 304" '[ "$STATUS" = 304 ]' clean_exit
else
	not_ok "CARD-1 If-None-Match with the card's ETag answers 304" "the card had no ETag"
fi

fresh
(cd "$T" && env -i PATH="$PATH" TINY_HARNESS_DB="$DB" TINY_HARNESS_BASE_URL="$BASE" \
	${ASAN_OPTIONS:+ASAN_OPTIONS=$ASAN_OPTIONS} ${UBSAN_OPTIONS:+UBSAN_OPTIONS=$UBSAN_OPTIONS} \
	$TH_WRAP "$TH_BIN" card >"$T/body" 2>"$T/stderr" </dev/null)
RC=$?
REQ_DESC="tiny-harness card"
check "CARD-1 'tiny-harness card' prints the same card as the HTTP route" clean_exit \
	'[ "$(jqb .name)" = tiny-harness ]' \
	'[ "$(jq -S . "$T/body" 2>/dev/null)" = "$(jq -S . "$T/card.json" 2>/dev/null)" ]'

# ---------------------------------------------------------------- configuration
# cli NAME ENV… — runs `tiny-harness card` with a clean environment plus ENV.
cli_card() {
	fresh
	STATUS=
	(cd "$T" && env -i PATH="$PATH" TINY_HARNESS_DB="$DB" TINY_HARNESS_BASE_URL="$BASE" "$@" \
		${ASAN_OPTIONS:+ASAN_OPTIONS=$ASAN_OPTIONS} ${UBSAN_OPTIONS:+UBSAN_OPTIONS=$UBSAN_OPTIONS} \
		$TH_WRAP "$TH_BIN" card >"$T/body" 2>"$T/stderr" </dev/null)
	RC=$?
	REQ_DESC="tiny-harness card with $*"
}
example=$TH_SRCDIR/conf/tiny-harness.conf
cli_card TINY_HARNESS_CONF="$example"
check "STORE-3 the example conf/tiny-harness.conf changes nothing (every line commented out)" \
	clean_exit '[ -f "$example" ]' '[ -z "$(grep -v "^[[:space:]]*#" "$example" | grep -v "^[[:space:]]*$")" ]' \
	'[ "$(jq -S . "$T/body" 2>/dev/null)" = "$(jq -S . "$T/card.json" 2>/dev/null)" ]'
sed 's/^# \([a-z_][a-z0-9_]* = \)/\1/' "$example" >"$T/all-keys.conf" 2>/dev/null
nkeys=$(grep -c '^[a-z_][a-z0-9_]* = ' "$T/all-keys.conf")
# The keys the program accepts, as `tiny-harness --help` lists them from the key table
# in src/config/config.c.
src_keys=$("$TH_BIN" --help 2>/dev/null | sed -n 's/^  \([a-z_][a-z0-9_]*\) = .*/\1/p' | sort)
conf_keys=$(grep -o '^[a-z_][a-z0-9_]* = ' "$T/all-keys.conf" | sed 's/ = $//' | sort)
# The example's card_signing_key does not exist here: a key made now stands in for it, and
# the card is the default card and its signature (CARD-SIG-1); without openssl the line
# is commented out again.
if command -v openssl >/dev/null 2>&1 &&
	openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$T/card-key.pem" 2>/dev/null; then
	sed -i "s|^card_signing_key = .*|card_signing_key = $T/card-key.pem|" "$T/all-keys.conf"
else
	sed -i 's|^card_signing_key = |# &|' "$T/all-keys.conf"
fi
cli_card TINY_HARNESS_CONF="$T/all-keys.conf"
check "STORE-3 the example lists every key of src/config/config.c ($nkeys keys); uncommented, it gives the default card" \
	clean_exit '[ -n "$src_keys" ]' '[ "$conf_keys" = "$src_keys" ]' \
	'[ "$(jq -S "del(.signatures)" "$T/body" 2>/dev/null)" = "$(jq -S . "$T/card.json" 2>/dev/null)" ]'
printf 'no_such_key = 1\n' >"$T/bad.conf"
cli_card TINY_HARNESS_CONF="$T/bad.conf"
check "STORE-3 an unknown key stops start-up with a message naming it" \
	'[ "$RC" != 0 ]' 'grep -q no_such_key "$T/stderr"'
cli_card TINY_HARNESS_IDENTITY=nobody
check "STORE-3 a bad value in the environment stops start-up naming the variable" \
	'[ "$RC" != 0 ]' 'grep -q TINY_HARNESS_IDENTITY "$T/stderr"'

# cli ARGS... — runs the program with a sub-command; sets RC, $T/body (stdout), $T/stderr.
cli() {
	STATUS=
	(cd "$T" && env -i PATH="$PATH" TINY_HARNESS_DB="$DB" \
		${ASAN_OPTIONS:+ASAN_OPTIONS=$ASAN_OPTIONS} ${UBSAN_OPTIONS:+UBSAN_OPTIONS=$UBSAN_OPTIONS} \
		$TH_WRAP "$TH_BIN" "$@" >"$T/body" 2>"$T/stderr" </dev/null)
	RC=$?
	REQ_DESC="tiny-harness $*"
}
cli --version
check "PKG-1 --version prints the name, the version and the licence, exit 0" \
	'[ "$RC" = 0 ]' 'grep -q "^tiny-harness [0-9][0-9.]*$" "$T/body"' 'grep -q "Apache License" "$T/body"'
cli frobnicate
check "PKG-1 an unknown command is named, with a pointer to --help, exit 2" \
	'[ "$RC" = 2 ]' 'grep -q "unknown command .frobnicate." "$T/stderr"' \
	'grep -q "tiny-harness --help" "$T/stderr"' '[ "$(wc -l <"$T/stderr")" -le 3 ]'
cli purge --older-than 5x
check "PKG-1 a bad argument is named (purge --older-than 5x)" \
	'[ "$RC" = 2 ]' 'grep -q "5x" "$T/stderr"'
cli card extra
check "PKG-1 an argument a command does not take is named (card extra)" \
	'[ "$RC" = 2 ]' 'grep -q "card takes no arguments but --jwks (got .extra.)" "$T/stderr"'
cli -h
check "PKG-1 -h prints the usage on stdout, exit 0" '[ "$RC" = 0 ]' 'grep -q "^usage:" "$T/body"'

# decision-022: a CGI request that needs no HTTP out and no secrets loads neither library
# (the dynamic loader says what it loads under LD_DEBUG=files).
if [ -z "$TH_WRAP" ]; then
	(cd "$T" && env -i PATH="$PATH" TINY_HARNESS_DB="$DB" REQUEST_METHOD=GET \
		REQUEST_URI=/.well-known/agent-card.json LD_DEBUG=files "$TH_BIN" >"$T/body" 2>"$T/stderr" </dev/null)
	RC=$?
	REQ_DESC="LD_DEBUG=files CGI GET /.well-known/agent-card.json"
	check "PKG-4 a CGI card request loads neither libcurl nor libcrypto, and ldd lists neither" \
		'[ "$RC" = 0 ]' 'grep -q "file=libc.so" "$T/stderr"' \
		'! grep -qE "libcurl|libcrypto" "$T/stderr"' '! ldd "$TH_BIN" | grep -qE "libcurl|libcrypto"'
fi

# PKG-4: the card is built by the first request that needs it, in that process; the
# extended card (SEC-1) is the same card, built the same way by a process that served
# nothing before.
run -m GET -u /.well-known/agent-card.json -t "" -v "" -p "" -d "" \
	-e TINY_HARNESS_IDENTITY=remote_user -e REMOTE_USER=alice
cp "$T/body" "$T/card-remote.json"
run -d "$(rpc 30 GetExtendedAgentCard '{}')" -e TINY_HARNESS_IDENTITY=remote_user -e REMOTE_USER=alice
check "PKG-4 SEC-1 GetExtendedAgentCard in a fresh CGI process is the card the card route serves" \
	clean_exit '[ "$(jqb .result.name)" = tiny-harness ]' \
	'[ "$(jq -S -c .result "$T/body")" = "$(jq -S -c . "$T/card-remote.json")" ]'

# ---------------------------------------------------------------- SendMessage
run -d "$(rpc 1 SendMessage "$(msg m1 hello)")"
TASK=$(jqb .result.task.id)
cp "$T/body" "$T/created.json"
check "A2A-1 TASK-2 JSON-RPC SendMessage creates a task in TASK_STATE_INPUT_REQUIRED" \
	'[ "$STATUS" = 200 ]' clean_exit \
	'header Content-Type | grep -q "^application/json"' \
	'[ "$(jqb .jsonrpc)" = 2.0 ]' '[ "$(jqb .id)" = 1 ]' \
	has_task \
	'[ "$(jqb .result.task.status.state)" = TASK_STATE_INPUT_REQUIRED ]' \
	'[ -n "$(jqb .result.task.contextId | grep -v "^null$")" ]'
check "STATUS-1 new task's metadata carries sub_state awaiting-next-message" \
	'[ "$(jqb ".result.task.metadata[\"$STATUS_KEY\"].sub_state")" = awaiting-next-message ]'
check "TURN-2 echo model's agent status message quotes the input" \
	'[ "$(jqb .result.task.status.message.role)" = ROLE_AGENT ]' \
	'jqb "[.result.task.status.message.parts[].text // empty] | join(\" \")" | grep -q hello'
check "TASK-2 plain text task: name and goal from the text, alice reporter, tiny-harness assignee" \
	'[ "$(jqb ".result.task.metadata[\"$TASK_KEY\"].name")" = hello ]' \
	'[ "$(jqb ".result.task.metadata[\"$TASK_KEY\"].goal")" = hello ]' \
	'[ "$(jqb ".result.task.metadata[\"$TASK_KEY\"].participants[] | select(.id == \"alice\") | .role")" = reporter ]' \
	'[ "$(jqb ".result.task.metadata[\"$TASK_KEY\"].participants[] | select(.id == \"tiny-harness\") | .role")" = assignee ]'
check "STATUS-4 sub_state is stored in its own column of tasks" \
	has_task \
	'[ "$(sqlite3 "$DB" "SELECT sub_state FROM tasks WHERE id = '"'"'$TASK'"'"'")" = awaiting-next-message ]' \
	'sqlite3 "$DB" "SELECT state FROM tasks WHERE id = '"'"'$TASK'"'"'" | grep -qi input_required'

# ---------------------------------------------------------------- GetTask
run -d "$(rpc 2 GetTask "{\"id\":\"$TASK\"}")"
check "A2A-1 JSON-RPC GetTask returns the task with its history" \
	has_task \
	'[ "$STATUS" = 200 ]' clean_exit '[ "$(jqb .id)" = 2 ]' \
	'[ "$(jqb .result.id)" = "$TASK" ]' \
	'[ "$(jqb .result.status.state)" = TASK_STATE_INPUT_REQUIRED ]' \
	'[ "$(jqb "[.result.history[] | select(.messageId == \"m1\" and .role == \"ROLE_USER\")] | length")" = 1 ]' \
	'[ "$(jqb ".result.metadata[\"$STATUS_KEY\"].sub_state")" = awaiting-next-message ]'

# The blocking answer to a new task is built from what its transaction wrote, not read
# back (issue 9): it must be the Task a read gives, byte for byte, key order included.
check "TURN-5 the blocking SendMessage answer is the Task GetTask then returns, byte for byte" \
	has_task \
	'[ "$(jq -c .result.task "$T/created.json")" = "$(jq -c .result "$T/body")" ]'
# The event log as streams get it (STREAM-3): stored with references to the history
# (STORE-10), printed whole by `tiny-harness tasks events`.
(cd "$T" && env -i PATH="$PATH" TINY_HARNESS_DB="$DB" $TH_WRAP "$TH_BIN" tasks events "$TASK" \
	>"$T/events.out" 2>"$T/events.err")
ev_rc=$?
(cd "$T" && env -i PATH="$PATH" TINY_HARNESS_DB="$DB" $TH_WRAP "$TH_BIN" tasks events "$TASK" \
	--after x >/dev/null 2>"$T/events-bad.err")
ev_bad=$?
REQ_DESC="tiny-harness tasks events $TASK: rc=$ev_rc $(head -c 300 "$T/events.out") / --after x: rc=$ev_bad $(cat "$T/events-bad.err")"
check "STREAM-3 STORE-10 tasks events prints the log whole: the snapshot's history and the reply, not references" \
	'[ "$ev_rc" = 0 ]' \
	'[ "$(awk -F "\t" "NR == 1 { print \$1 \" \" \$2 }" "$T/events.out")" = "1 task" ]' \
	'[ "$(cut -f3- "$T/events.out" | head -n 1 | jq -r .task.history[0].parts[0].text)" = hello ]' \
	'[ "$(cut -f3- "$T/events.out" | jq -r "select(.statusUpdate) | .statusUpdate.status.message.parts[0].text" | tail -n 1)" = "echo: hello" ]' \
	'! grep -q "\$message" "$T/events.out"' \
	'[ "$(sqlite3 "$DB" "SELECT count(*) FROM events WHERE task_id = '"'"'$TASK'"'"' AND json LIKE '"'"'%\$message%'"'"'")" -ge 1 ]' \
	'[ "$ev_bad" = 2 ]' 'grep -q -- "--after needs an event number" "$T/events-bad.err"'
run -d "$(rpc 3 GetTask "{\"id\":\"$TASK\",\"historyLength\":1}")"
check "STREAM-5 GetTask honours historyLength" '[ "$(jqb ".result.history | length")" = 1 ]'

run -m GET -u "/tasks/$TASK" -t "" -d ""
check "A2A-1 REST GET /tasks/{id} returns the task" \
	has_task \
	'[ "$STATUS" = 200 ]' clean_exit '[ "$(jqb .id)" = "$TASK" ]' \
	'[ "$(jqb .status.state)" = TASK_STATE_INPUT_REQUIRED ]'

# PKG-4, decision-062: what a plain-CGI GetTask does besides answering. tests/cgi/prep.c,
# preloaded, logs each statement the program prepares. A CGI process keeps no answers
# (no PRAGMA data_version), reads its identity from the header (no table-valued pragma),
# reads the task's context once (with its row) and no page_size; a statement added to
# this path has to be counted here on purpose. Not under TH_WRAP (valgrind preloads its
# own libraries), not for a sanitizer build (ASan insists on being the first library
# loaded) and only where a C compiler is at hand. A program with SQLite linked in
# (decision-094) calls it without the loader, so the count is taken on the same code
# linked against the shared SQLite (tests/cgi/tiny-harness-shared, a check program).
PREP=$T/prep.so
PREP_BIN=$TH_BIN
ldd "$TH_BIN" 2>/dev/null | grep -q libsqlite3 || PREP_BIN=${TH_BUILDDIR:-.}/tests/cgi/tiny-harness-shared
if [ -z "$TH_WRAP" ] && [ -x "$PREP_BIN" ] && ! ldd "$PREP_BIN" 2>/dev/null | grep -q libasan &&
	${CC:-cc} -shared -fPIC -o "$PREP" "$TH_SRCDIR/tests/cgi/prep.c" -ldl 2>"$T/prep.err"; then
	rm -f "$T/prep.log"
	TH_BIN=$PREP_BIN run -m GET -u "/tasks/$TASK" -t "" -d "" -e LD_PRELOAD="$PREP" -e TH_PREP_LOG="$T/prep.log"
	REQ_DESC="$REQ_DESC; statements: $(tr '\n' '|' <"$T/prep.log" 2>/dev/null | cut -c1-1500)"
	check "PKG-4 a CGI GetTask prepares at most 21 statements, none for an answer memo, a table-valued pragma, the page size or the task's context again" \
		'[ "$STATUS" = 200 ]' clean_exit '[ "$(jqb .id)" = "$TASK" ]' \
		'n=$(wc -l <"$T/prep.log") && [ "$n" -ge 10 ] && [ "$n" -le 21 ]' \
		'! grep -qiE "data_version|pragma_|page_size|^SELECT context_id FROM tasks" "$T/prep.log"'
else
	echo "# skipped: the statement count of a CGI GetTask (TH_WRAP set, a sanitizer build, no program linked against the shared SQLite, or no C compiler)"
fi

# PKG-4, decision-062: a CGI process keeps -wal and -shm for the next one instead of
# creating them and unlinking them again (two inodes per request); the last one to close
# still checkpoints and empties the WAL (STORE-5), so the database file alone holds every
# commit: a copy of it without its -wal has the task a CGI SendMessage made.
inode() { stat -c %i "$1" 2>/dev/null || echo "none-$RANDOM"; }
run -m GET -u "/tasks/$TASK" -t "" -d ""
wal_i=$(inode "$DB-wal") shm_i=$(inode "$DB-shm")
run -m GET -u "/tasks/$TASK" -t "" -d ""
check "PKG-4 a CGI GetTask leaves -wal (empty) and -shm beside the database, the same files it found" \
	'[ "$STATUS" = 200 ]' clean_exit '[ -f "$DB-wal" ] && [ -f "$DB-shm" ]' \
	'[ "$(stat -c %s "$DB-wal")" = 0 ]' \
	'[ "$(inode "$DB-wal")" = "$wal_i" ]' '[ "$(inode "$DB-shm")" = "$shm_i" ]'
run -d "$(rpc 40 SendMessage "$(msg m40 "written by CGI")")"
WTASK=$(jqb .result.task.id)
rm -f "$T/copy.db"
cp "$DB" "$T/copy.db"
check "PKG-4 STORE-5 a CGI SendMessage leaves the WAL checkpointed and empty: the database file alone has its task" \
	'[ "$STATUS" = 200 ]' clean_exit '[ -n "$WTASK" ]' '[ ! -s "$DB-wal" ]' \
	'[ "$(sqlite3 "$T/copy.db" "SELECT count(*) FROM tasks WHERE id = '"'"'$WTASK'"'"'")" = 1 ]'
run -m GET -u "/tasks/$WTASK" -t "" -d ""
check "PKG-4 the next CGI GetTask reads what the CGI SendMessage committed" \
	'[ "$STATUS" = 200 ]' clean_exit '[ "$(jqb .id)" = "$WTASK" ]' \
	'[ "$(jqb ".history | length")" = 2 ]'

run -d "$(rpc 4 GetTask "{\"id\":\"$TASK\"}")" -p bob
cp "$T/body" "$T/stranger.json"
run -d "$(rpc 4 GetTask '{"id":"00000000-0000-4000-8000-000000000000"}')" -p bob
check "ID-3 a stranger gets TaskNotFound with the same text as for a missing task" \
	has_task \
	'[ "$(jq -r .error.code "$T/stranger.json" 2>/dev/null)" = -32001 ]' \
	'[ "$(jqb .error.code)" = -32001 ]' \
	'[ "$(jq -r .error.message "$T/stranger.json" 2>/dev/null | sed "s/$TASK/ID/g")" = "$(jqb .error.message | sed "s/00000000-0000-4000-8000-000000000000/ID/g")" ]'

# ---------------------------------------------------------------- follow-up, REST send
run -d "$(rpc 5 SendMessage "$(msg m2 "second message" "$TASK")")"
check "TASK-6 a follow-up starts a turn and parks the task again" \
	has_task \
	'[ "$STATUS" = 200 ]' clean_exit '[ "$(jqb .result.task.id)" = "$TASK" ]' \
	'[ "$(jqb .result.task.status.state)" = TASK_STATE_INPUT_REQUIRED ]' \
	'jqb "[.result.task.status.message.parts[].text // empty] | join(\" \")" | grep -q "second message"'

run -u /message:send -t application/a2a+json -d "$(msg r1 "over rest")"
check "A2A-1 REST POST /message:send creates a task" \
	'[ "$STATUS" = 200 ]' clean_exit \
	'[ "$(jqb .task.status.state)" = TASK_STATE_INPUT_REQUIRED ]' \
	'[ "$(jqb ".task.metadata[\"$TASK_KEY\"].name")" = "over rest" ]'

# PKG-4 TURN-3: the intrinsic tools are parsed on the first turn that offers them (not
# at start-up), so a CGI turn of a model that takes tools must still be given all six.
# The model program keeps what it was given beside itself (it runs with a bare
# environment, SEC-6).
cat >"$T/model.sh" <<'EOF'
#!/bin/sh
cat >"$(dirname "$0")/model-input.json"
printf '{"text":"seen"}\n'
EOF
chmod +x "$T/model.sh"
run -d "$(rpc 31 SendMessage "$(msg m31 "plan it")")" -e TINY_HARNESS_DB="$T/tools.db" \
	-e TINY_HARNESS_MODEL=exec -e TINY_HARNESS_MODEL_COMMAND="$T/model.sh"
check "PKG-4 TURN-3 a CGI turn of the exec model is offered the six intrinsic tools" \
	clean_exit '[ "$(jqb .result.task.status.state)" = TASK_STATE_INPUT_REQUIRED ]' \
	'[ "$(jq -r "[.tools[].name] | sort | join(\",\")" "$T/model-input.json")" = ask_participant,complete_step,create_plan,emit_ui,set_participant_role,spawn_subtask ]' \
	'[ "$(jq -r "[.tools[] | select(.input_schema.type == \"object\")] | length" "$T/model-input.json")" = 6 ]'

# ---------------------------------------------------------------- protocol errors
before=$(rows)
run -d '{"jsonrpc":"2.0","id":7,"method":"SendMessage","params":{'
check "LIM-2 malformed JSON is -32700 with id null" \
	clean_exit '[ "$(jqb .error.code)" = -32700 ]' '[ "$(jqb .id)" = null ]' \
	'[ "$(rows)" = "$before" ]'

run -d '{"jsonrpc":"1.0","id":8,"method":"GetTask","params":{}}'
check "LIM-2 a request that is not JSON-RPC 2.0 is -32600" clean_exit '[ "$(jqb .error.code)" = -32600 ]'

run -d "$(rpc 9 NoSuchMethod '{}')"
check "LIM-2 an unknown method is -32601" clean_exit '[ "$(jqb .error.code)" = -32601 ]' '[ "$(jqb .id)" = 9 ]'

run -m PUT -d "$(rpc 10 GetTask "{\"id\":\"$TASK\"}")"
check "LIM-2 PUT to the JSON-RPC endpoint is HTTP 405" '[ "$STATUS" = 405 ]' clean_exit

run -m DELETE -u /message:send -t "" -d ""
check "LIM-2 DELETE on the REST route /message:send is HTTP 405" '[ "$STATUS" = 405 ]' clean_exit

run -m GET -u /no/such/route -t "" -d ""
check "LIM-2 an unknown REST route is HTTP 404" '[ "$STATUS" = 404 ]' clean_exit

before=$(rows)
run -t text/plain -d "$(rpc 11 SendMessage "$(msg m11 plain)")"
check "LIM-2 JSON-RPC with Content-Type text/plain is ContentTypeNotSupported (-32005)" \
	clean_exit '[ "$(jqb .error.code)" = -32005 ]' '[ "$(rows)" = "$before" ]'

run -u /message:send -t text/plain -d "$(msg r11 plain)"
check "LIM-2 A2A-4 REST with Content-Type text/plain is HTTP 415 CONTENT_TYPE_NOT_SUPPORTED" \
	'[ "$STATUS" = 415 ]' clean_exit \
	'[ "$(jqb .error.code)" = 415 ]' \
	'[ "$(jqb "[.error.details[]? | select(.reason == \"CONTENT_TYPE_NOT_SUPPORTED\" and .domain == \"a2a-protocol.org\")] | length")" = 1 ]' \
	'[ "$(rows)" = "$before" ]'

# Oversized body: a 5000-byte message against a 2048-byte limit (the smallest allowed is 1024).
big=$(head -c 5000 /dev/zero | tr '\0' x)
printf '%s' "$(rpc 12 SendMessage "$(msg m12 "$big")")" >"$T/big.json"
before=$(rows)
run -f "$T/big.json" -e TINY_HARNESS_MAX_BODY=2048
check "LIM-1 a JSON-RPC body over TINY_HARNESS_MAX_BODY is HTTP 413, nothing stored" \
	'[ "$STATUS" = 413 ]' clean_exit '[ "$(rows)" = "$before" ]'
run -u /message:send -f "$T/big.json" -e TINY_HARNESS_MAX_BODY=2048
check "LIM-1 a REST body over TINY_HARNESS_MAX_BODY is HTTP 413, nothing stored" \
	'[ "$STATUS" = 413 ]' clean_exit '[ "$(rows)" = "$before" ]'

# ---------------------------------------------------------------- A2A-Version
before=$(rows)
run -v "" -d "$(rpc 13 SendMessage "$(msg m13 "no version")")"
check "A2A-3 a missing A2A-Version header is VersionNotSupported (-32009), nothing stored" \
	clean_exit '[ "$(jqb .error.code)" = -32009 ]' '[ "$(rows)" = "$before" ]'
run -v 0.3 -d "$(rpc 14 GetTask "{\"id\":\"$TASK\"}")"
check "A2A-3 A2A-Version 0.3 is VersionNotSupported (-32009)" clean_exit '[ "$(jqb .error.code)" = -32009 ]'
run -m GET -v "" -u "/tasks/$TASK" -t "" -d ""
check "A2A-3 A2A-4 REST without A2A-Version is HTTP 400 VERSION_NOT_SUPPORTED" \
	'[ "$STATUS" = 400 ]' clean_exit \
	'[ "$(jqb "[.error.details[]? | select(.reason == \"VERSION_NOT_SUPPORTED\")] | length")" = 1 ]'
run -v 1.0.1 -d "$(rpc 15 GetTask "{\"id\":\"$TASK\"}")"
check "A2A-3 A2A-Version 1.0.1 is accepted" clean_exit has_task '[ "$(jqb .result.id)" = "$TASK" ]'
run -m GET -v "" -u "/tasks/$TASK?A2A-Version=1.0" -t "" -d ""
check "A2A-3 the A2A-Version query parameter is accepted" '[ "$STATUS" = 200 ]' clean_exit has_task '[ "$(jqb .id)" = "$TASK" ]'

# ---------------------------------------------------------------- extensions
before=$(rows)
unknown=https://example.com/ext/unknown/v9
run -x "$EXT_TASK, $unknown" -d "$(rpc 16 SendMessage "$(msg m16 "with unknown extension")")"
check "EXT-1 an unknown URI in A2A-Extensions is -32004 naming it, nothing stored" \
	clean_exit '[ "$(jqb .error.code)" = -32004 ]' \
	'jqb .error.message | grep -qF "$unknown"' '[ "$(rows)" = "$before" ]'
run -x "$EXT_TASK" -d "$(rpc 17 SendMessage "$(msg m17 "with task extension")")"
check "EXT-1 a listed extension in A2A-Extensions is accepted" \
	clean_exit '[ "$(jqb .result.task.status.state)" = TASK_STATE_INPUT_REQUIRED ]'

# ---------------------------------------------------------------- identity
before=$(rows)
run -p "" -d "$(rpc 18 SendMessage "$(msg m18 "nobody")")"
check "ID-3 SendMessage with no participant is -32602 \"no participant asserted\", nothing stored" \
	clean_exit '[ "$(jqb .error.code)" = -32602 ]' \
	'jqb .error.message | grep -qF "no participant asserted"' '[ "$(rows)" = "$before" ]'
run -p "" -d "$(rpc 19 GetTask "{\"id\":\"$TASK\"}")"
check "ID-3 GetTask with no participant is -32602 \"no participant asserted\"" \
	clean_exit '[ "$(jqb .error.code)" = -32602 ]' 'jqb .error.message | grep -qF "no participant asserted"'

run -p mallory -e TINY_HARNESS_IDENTITY=remote_user -e REMOTE_USER=carol \
	-d "$(rpc 20 SendMessage "$(msg m20 "as carol")")"
check "ID-1 identity=remote_user takes REMOTE_USER and ignores X-Participant-Id" \
	clean_exit '[ "$(jqb .result.task.status.state)" = TASK_STATE_INPUT_REQUIRED ]' \
	'[ "$(jqb ".result.task.metadata[\"$TASK_KEY\"].participants[] | select(.id == \"carol\") | .role")" = reporter ]' \
	'[ "$(jqb "[.result.task.metadata[\"$TASK_KEY\"].participants[] | select(.id == \"mallory\")] | length")" = 0 ]'

# SEC-1: the header mode believes X-Participant-Id only from loopback or trusted_proxies,
# and a serving process refuses it on a public base_url unless identity_header_public = 1.
before=$(rows)
run -e REMOTE_ADDR=203.0.113.7 -d "$(rpc 23 SendMessage "$(msg m23 "from afar")")"
check "SEC-1 identity=header: a client at 203.0.113.7 (not loopback, not trusted_proxies) gets 403 naming trusted_proxies, nothing stored" \
	clean_exit '[ "$STATUS" = 403 ]' 'jqb .error.message | grep -qF trusted_proxies' '[ "$(rows)" = "$before" ]'
run -e REMOTE_ADDR=203.0.113.7 -e TINY_HARNESS_TRUSTED_PROXIES=10.0.0.1,203.0.113.0/24 \
	-d "$(rpc 24 GetTask "{\"id\":\"$TASK\"}")"
check "SEC-1 identity=header: a client in trusted_proxies (203.0.113.0/24) is served" \
	clean_exit '[ "$STATUS" = 200 ]' '[ "$(jqb .result.id)" = "$TASK" ]'
run -e REMOTE_ADDR=203.0.113.7 -e TINY_HARNESS_IDENTITY=remote_user -e REMOTE_USER=alice \
	-d "$(rpc 25 GetTask "{\"id\":\"$TASK\"}")"
check "SEC-1 identity=remote_user serves a client at any address as the web server's user" \
	clean_exit '[ "$STATUS" = 200 ]' '[ "$(jqb .result.id)" = "$TASK" ]'
before=$(rows)
run -e TINY_HARNESS_BASE_URL=https://agents.example.com/ -d "$(rpc 26 SendMessage "$(msg m26 "public")")"
check "SEC-1 identity=header on base_url https://agents.example.com/ refuses to start: 500, the log names identity_header_public and identity = remote_user, nothing stored" \
	'[ "$STATUS" = 500 ]' 'grep -qF "identity_header_public = 1" "$T/stderr"' \
	'grep -qF "identity = remote_user" "$T/stderr"' '[ "$(rows)" = "$before" ]'
run -e TINY_HARNESS_BASE_URL=https://agents.example.com/ -e TINY_HARNESS_ANONYMOUS_PARTICIPANT=guest \
	-p "" -d "$(rpc 27 ListTasks '{}')"
check "SEC-1 anonymous_participant on a public base_url refuses to start the same way" \
	'[ "$STATUS" = 500 ]' 'grep -qF "with anonymous_participant" "$T/stderr"'
run -e TINY_HARNESS_BASE_URL=https://agents.example.com/ -e TINY_HARNESS_IDENTITY_HEADER_PUBLIC=1 \
	-e HTTP_HOST=agents.example.com -d "$(rpc 28 GetTask "{\"id\":\"$TASK\"}")"
check "SEC-1 identity_header_public = 1 lets it start on the public base_url (loopback client served)" \
	clean_exit '[ "$STATUS" = 200 ]' '[ "$(jqb .result.id)" = "$TASK" ]'
run -e TINY_HARNESS_BASE_URL=https://agents.example.com/ -e TINY_HARNESS_IDENTITY=remote_user \
	-e REMOTE_USER=alice -e HTTP_HOST=agents.example.com -d "$(rpc 29 GetTask "{\"id\":\"$TASK\"}")"
check "SEC-1 identity=remote_user starts on the public base_url" \
	clean_exit '[ "$STATUS" = 200 ]' '[ "$(jqb .result.id)" = "$TASK" ]'
(cd "$T" && env -i PATH="$PATH" TH_SRCDIR="$TH_SRCDIR" TINY_HARNESS_BASE_URL=https://agents.example.com/ \
	${ASAN_OPTIONS:+ASAN_OPTIONS=$ASAN_OPTIONS} ${UBSAN_OPTIONS:+UBSAN_OPTIONS=$UBSAN_OPTIONS} \
	timeout 10 $TH_WRAP "$TH_BIN" serve --port 1 >"$T/body" 2>"$T/stderr" </dev/null)
RC=$?
STATUS=
REQ_DESC="tiny-harness serve with TINY_HARNESS_BASE_URL=https://agents.example.com/"
check "SEC-1 'tiny-harness serve' in header mode on a public base_url exits 1 before starting lighttpd, naming identity_header_public" \
	'[ "$RC" = 1 ]' 'grep -qF "identity_header_public = 1" "$T/stderr"' '! grep -q "serving" "$T/body"'

# ---------------------------------------------------------------- complete
run -d "$(rpc 21 SendMessage "$(ctl c1 "$TASK")")"
check "CTL-5 STATUS-2 the control envelope completes the task: TASK_STATE_COMPLETED \"completed by alice\"" \
	clean_exit '[ "$(jqb .result.task.status.state)" = TASK_STATE_COMPLETED ]' \
	'[ "$(jqb "[.result.task.status.message.parts[].text // empty] | join(\" \")")" = "completed by alice" ]' \
	'[ "$(jqb ".result.task.metadata[\"$STATUS_KEY\"] // \"absent\"")" = absent ]'
before=$(rows)
run -d "$(rpc 22 SendMessage "$(msg m22 "too late" "$TASK")")"
check "CTL-6 a message for a completed task is -32004 naming TASK_STATE_COMPLETED, nothing stored" \
	clean_exit '[ "$(jqb .error.code)" = -32004 ]' \
	'jqb .error.message | grep -qF TASK_STATE_COMPLETED' '[ "$(rows)" = "$before" ]'

tap_done
