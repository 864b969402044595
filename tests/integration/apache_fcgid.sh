#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Integration test: the Apache recipes (STORE-4) on loopback, run as an unprivileged user,
# each with three worker processes. Through each: the same conversation as
# tests/integration/lighttpd.sh over both bindings, the request body limits of the
# recipe, SSE through the module, completion with the control envelope ("completed by
# alice"), proof that the turns of concurrent writes ran in the worker that writes for
# the others (HOST-2; on PostgreSQL: in at least two worker processes, COUNT(DISTINCT
# worker_pid) in turns), and that stopping Apache stops the workers. Each recipe runs as
# shipped, with its login on (SEC-1, decision-040): every request logs in with HTTP
# Basic, and without a login (or with X-Participant-Id alone) the server answers 401.
# Each recipe's proxy idle timeout against the program's heartbeat_ms, model_timeout_ms and
# stream_max_ms (STREAM-PROXY-1), and, started again with that timeout cut to 1 s, a quiet
# SubscribeToTask that outlives it while a silenced one does not (STREAM-PROXY-2,
# tests/lib/keepalive.sh, decision-072).
# Then the two Apache recipes, nginx and the shared host again in their bearer variant (Apache -D
# TH_BEARER: CGIPassAuth On; nginx without auth_basic; identity = bearer): an API key from
# `tiny-harness keys add` is the sender, no key or X-Participant-Id alone get 401 with a
# Bearer challenge (SEC-1, decision-090).
#
#   apache_fcgid.sh          conf/apache-fcgid.conf (mod_fcgid starts the workers), then
#                            conf/htaccess.example on a simulated shared host (mod_fcgid
#                            at its defaults, everything set from .htaccess and the
#                            program's configuration file)
#   apache_fcgid.sh proxy    conf/apache-proxy-fcgi.conf (mod_proxy_fcgi + spawn-fcgi);
#                            tests/integration/apache_proxy_fcgi.sh runs this
#   apache_fcgid.sh nginx    conf/nginx.conf (nginx + spawn-fcgi, started by
#                            tests/lib/nginx.sh); tests/integration/nginx.sh runs this
#   apache_fcgid.sh MODE…    any of fcgid, htaccess, proxy, nginx
#
# TAP output; 77 (skip) when no mode can run (apache2, the module, spawn-fcgi, curl, jq
# or sqlite3 missing); a mode whose module is missing is skipped on its own.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
set -u

MODES=${*:-fcgid htaccess}
for m in $MODES; do
	case $m in fcgid | proxy | htaccess | nginx) ;; *)
		echo "usage: $0 [fcgid|proxy|htaccess|nginx]..." >&2
		exit 2
		;;
	esac
done

: "${TH_SRCDIR:=$(cd "$(dirname "$0")/../.." && pwd)}"
. "$TH_SRCDIR/tests/lib/tap.sh"
. "$TH_SRCDIR/tests/lib/proc.sh"
. "$TH_SRCDIR/tests/lib/a2a.sh"
. "$TH_SRCDIR/tests/lib/scenario.sh"
. "$TH_SRCDIR/tests/lib/keepalive.sh"
APACHE=$TH_SRCDIR/tests/lib/apache.sh
# The launcher of a mode: tests/lib/nginx.sh for nginx, tests/lib/apache.sh otherwise
# (the same check/start/workers/stop commands).
launcher() {
	if [ "$1" = nginx ]; then echo "$TH_SRCDIR/tests/lib/nginx.sh"; else echo "$APACHE"; fi
}

[ -x "$TH_BIN" ] || skip "no program at $TH_BIN"
require_tools curl jq sqlite3
runnable=
for m in $MODES; do
	sh "$(launcher "$m")" check "$m" >/dev/null && runnable="$runnable $m"
done
[ -n "$runnable" ] || skip "$(sh "$(launcher "${MODES%% *}")" check "${MODES%% *}")"

scratch th-apache
# The server runs as an unprivileged user when we are root: let it through to its dir.
chmod 711 "$T"
on_exit 'for m in $MODES; do sh "$(launcher "$m")" stop "$T/$m"; done'
# SEC-1 (decision-040): every recipe runs as shipped, with its login on; the requests
# below log in as their participant (tests/lib/a2a.sh basic_auth).
require_tools openssl
basic_auth "$T/auth"

# One recipe, start to stop.
run_mode() {
	MODE=$1
	BAIL_LOGS=("$T/$MODE/error.log" "$T/$MODE/apache.out" "$T/$MODE/nginx.out")
	LAUNCHER=$(launcher "$MODE")
	PIDFILE=apache.pid
	case $MODE in
	fcgid) RECIPE=conf/apache-fcgid.conf LABEL="Apache+mod_fcgid" ;;
	proxy) RECIPE=conf/apache-proxy-fcgi.conf LABEL="Apache+mod_proxy_fcgi" ;;
	htaccess) RECIPE=conf/htaccess.example LABEL="shared hosting (.htaccess + mod_fcgid)" ;;
	nginx) RECIPE=conf/nginx.conf LABEL="nginx+spawn-fcgi" PIDFILE=nginx.pid ;;
	esac
	local why
	if ! why=$(sh "$LAUNCHER" check "$MODE"); then
		n=$((n + 1))
		echo "ok $n - STORE-4 $MODE recipe # SKIP $why"
		return 0
	fi
	# ------------------------------------------------------------------ the recipe itself
	# apache2 -t with the variables the launcher sets, run as the server's user.
	if [ "$MODE" != htaccess ] && [ "$MODE" != nginx ]; then
		runas=
		if [ "$(id -u)" = 0 ]; then
			runas="setpriv --reuid=$(id -u nobody) --regid=$(id -g nobody) --clear-groups"
		fi
		mkdir -p "$T/syntax"
		[ -z "$runas" ] || chown nobody "$T/syntax"
		REQ_DESC="apache2 -t -f $TH_SRCDIR/$RECIPE"
		# shellcheck disable=SC2086
		syntax=$(TH_PORT=18099 TH_STATE_DIR=$T/syntax TH_HTPASSWD=$TH_HTPASSWD TH_PROCS=3 TH_APACHE_MODULES=${TH_APACHE_MODULES:-/usr/lib/apache2/modules} \
			TINY_HARNESS_DB=$T/syntax/x.db TINY_HARNESS_BASE_URL=http://127.0.0.1:18099/ \
			$runas "${APACHE2:-apache2}" -t -f "$TH_SRCDIR/$RECIPE" 2>&1)
		echo "$syntax" >"$T/body"
		check "STORE-4 $RECIPE passes apache2 -t" 'echo "$syntax" | grep -q "Syntax OK"'
	fi
	if [ "$MODE" = nginx ]; then
		check "PKG-3 STORE-4 STREAM-1 $RECIPE turns FastCGI buffering off, waits out long streams and matches the 1 MiB body limit" \
			'grep -Eq "^[[:space:]]*fastcgi_buffering off;" "$TH_SRCDIR/$RECIPE"' \
			'grep -Eq "^[[:space:]]*fastcgi_read_timeout 120s;" "$TH_SRCDIR/$RECIPE"' \
			'grep -Eq "^[[:space:]]*client_max_body_size 1m;" "$TH_SRCDIR/$RECIPE"'
	elif [ "$MODE" = htaccess ]; then
		check "STORE-4 $RECIPE runs the program as fcgid-script, routes every URL to it and turns big bodies into 413" \
			'grep -Eq "^[[:space:]]*SetHandler fcgid-script$" "$TH_SRCDIR/$RECIPE"' \
			'grep -Eq "^RewriteRule \^ tiny-harness.fcgi \[END\]$" "$TH_SRCDIR/$RECIPE"' \
			'grep -Eq "^RewriteCond %\{HTTP:Content-Length\} -gt131072$" "$TH_SRCDIR/$RECIPE"'
	elif [ "$MODE" = fcgid ]; then
		check "STORE-4 STREAM-1 $RECIPE turns mod_fcgid's output buffer off and matches the 1 MiB body limit" \
			'grep -Eq "^FcgidOutputBufferSize[[:space:]]+0$" "$TH_SRCDIR/$RECIPE"' \
			'grep -Eq "^FcgidMaxRequestLen[[:space:]]+1048576$" "$TH_SRCDIR/$RECIPE"' \
			'grep -Eq "^RewriteCond %\{HTTP:Content-Length\} -gt1048576$" "$TH_SRCDIR/$RECIPE"'
	else
		check "STORE-4 STREAM-1 $RECIPE proxies with flushpackets=on and the 1 MiB body limit" \
			'grep -Eq "^ProxyPass .*flushpackets=on" "$TH_SRCDIR/$RECIPE"' \
			'grep -Eq "^LimitRequestBody[[:space:]]+1048576$" "$TH_SRCDIR/$RECIPE"'
	fi

	# Every worker sleeps this long per turn, so concurrent turns overlap in time (and a
	# setting of the caller's environment must reach the workers to have this effect).
	export TINY_HARNESS_ECHO_DELAY_MS=300
	BASE=$(sh "$LAUNCHER" start "$MODE" "$T/$MODE" 3) || bail "$LABEL did not start"
	DB=$(th_db_of "$T/$MODE")
	echo "# $LABEL at $BASE, state in $T/$MODE"

	if [ "$MODE" = proxy ] || [ "$MODE" = nginx ]; then
		REQ_DESC="stat: $(stat -c '%a %U %n' "$T/$MODE/tiny-harness.sock" "$DB" 2>&1 | tr '\n' ' ')"
		check "SEC-6 spawn-fcgi's socket behind $LABEL is 0600 (the server's user only) and the database 0600" \
			'[ "$(stat -c %a "$T/$MODE/tiny-harness.sock")" = 600 ]' 'th_db_is_pg "$DB" || [ "$(stat -c %a "$DB")" = 600 ]'
	fi

	# ------------------------------------------------------------------ card
	http GET /.well-known/agent-card.json "" ""
	check "STORE-4 CARD-1 $LABEL serves the card with the base URL it was started on" \
		'[ "$STATUS" = 200 ]' '[ "$(jqb .name)" = tiny-harness ]' \
		'[ "$(jqb "[.supportedInterfaces[] | select(.protocolBinding == \"JSONRPC\") | .url][0]")" = "$BASE" ]'

	# ------------------------------------------------------------------ a conversation
	http POST / "$(rpc 1 SendMessage "$(msg m1 "plan the release")")"
	TASK=$(jqb .result.task.id)
	check "A2A-1 TASK-2 SendMessage through $LABEL creates a task parked in INPUT_REQUIRED" \
		'[ "$STATUS" = 200 ]' has_task \
		'[ "$(jqb .result.task.status.state)" = TASK_STATE_INPUT_REQUIRED ]' \
		'[ "$(jqb ".result.task.metadata[\"$STATUS_KEY\"].sub_state")" = awaiting-next-message ]' \
		'texts .result.task | grep -q "plan the release"'
	check "STORE-3 STORE-4 the caller's TINY_HARNESS_ECHO_DELAY_MS=300 reached the worker$([ "$MODE" = htaccess ] && echo " through conf/tiny-harness.conf") (turn took $(ms "$TIME") ms)" \
		'[ "$(ms "$TIME")" -ge 300 ]'

	http POST / "$(rpc 2 SendMessage "$(msg m2 "first follow-up" "$TASK")")"
	check "TASK-6 a JSON-RPC follow-up runs a turn and parks the task again" \
		'[ "$STATUS" = 200 ]' has_task '[ "$(jqb .result.task.id)" = "$TASK" ]' \
		'[ "$(jqb .result.task.status.state)" = TASK_STATE_INPUT_REQUIRED ]' \
		'texts .result.task | grep -q "first follow-up"'

	http POST /message:send "$(msg m3 "second follow-up" "$TASK")"
	check "A2A-1 TASK-6 a REST follow-up (POST /message:send) runs a turn" \
		'[ "$STATUS" = 200 ]' has_task '[ "$(jqb .task.id)" = "$TASK" ]' \
		'[ "$(jqb .task.status.state)" = TASK_STATE_INPUT_REQUIRED ]' \
		'texts .task | grep -q "second follow-up"'

	http POST / "$(rpc 3 GetTask "{\"id\":\"$TASK\"}")"
	check "A2A-1 GetTask returns the three user messages in order" \
		'[ "$STATUS" = 200 ]' has_task '[ "$(jqb .result.id)" = "$TASK" ]' \
		'[ "$(jqb "[.result.history[] | select(.role == \"ROLE_USER\") | .messageId] | join(\",\")")" = m1,m2,m3 ]'
	http GET "/tasks/$TASK?historyLength=1" ""
	check "A2A-1 STREAM-5 REST GET /tasks/{id}?historyLength=1 through $LABEL" \
		'[ "$STATUS" = 200 ]' '[ "$(jqb .id)" = "$TASK" ]' '[ "$(jqb ".history | length")" = 1 ]'

	http POST / "$(rpc 4 ListTasks '{}')"
	check "A2A-1 ListTasks lists the task for its participant" \
		'[ "$STATUS" = 200 ]' has_task \
		'[ "$(jqb "[.result.tasks[] | select(.id == \"$TASK\")] | length")" = 1 ]' \
		'[ "$(jqb .result.totalSize)" -ge 1 ]'
	http GET "/tasks?pageSize=10" "" bob
	check "ID-3 REST GET /tasks for another participant does not list it" \
		'[ "$STATUS" = 200 ]' has_task \
		'[ "$(jqb "[.tasks[]? | select(.id == \"$TASK\")] | length")" = 0 ]' \
		'[ "$(jqb ".totalSize // 0")" = 0 ]'
	# ------------------------------------------------------------------ the login (SEC-1)
	auth_checks "$LABEL"

	# ------------------------------------------------------------------ body limits (LIM-1)
	# 200 KB is above mod_fcgid's default FcgidMaxRequestLen (128 KiB, a bare 500 there)
	# and below the recipes' 1 MiB: the program itself must answer (its text limit). On the
	# shared host, where that default stays, .htaccess turns it into a 413 and 100 KB passes.
	if [ "$MODE" = htaccess ]; then small=100000; else small=200000; fi
	printf '%s' "$(rpc 6 SendMessage "$(msg big1 "$(head -c "$small" /dev/zero | tr '\0' a)" "$TASK")")" >"$T/big"
	REQ_DESC="POST / SendMessage with a $small-byte text part"
	STATUS=$(curl -s -o "$T/body" -w '%{http_code}' --max-time 30 -H 'A2A-Version: 1.0' -H 'X-Participant-Id: alice' "${ALICE[@]}" \
		-H 'Content-Type: application/json' --data-binary @"$T/big" "$BASE")
	check "LIM-1 STORE-4 a $((small / 1000)) KB request reaches the program through $LABEL (its own InvalidParams naming the text limit, not a server 500)" \
		'[ "$STATUS" = 200 ]' '[ "$(jqb .error.code)" = -32602 ]'
	if [ "$MODE" = htaccess ]; then
		printf '%s' "$(rpc 6 SendMessage "$(msg big2 "$(head -c 200000 /dev/zero | tr '\0' a)" "$TASK")")" >"$T/big"
		REQ_DESC="POST / SendMessage with a 200000-byte text part"
		STATUS=$(curl -s -o "$T/body" -w '%{http_code}' --max-time 30 -H 'A2A-Version: 1.0' -H 'X-Participant-Id: alice' "${ALICE[@]}" \
			-H 'Content-Type: application/json' --data-binary @"$T/big" "$BASE")
		check "LIM-1 a 200 KB body, over the host's FcgidMaxRequestLen, is refused with 413 by the .htaccess rule" '[ "$STATUS" = 413 ]'
	fi
	head -c 1048577 /dev/zero | tr '\0' a >"$T/huge"
	REQ_DESC="POST / with a 1048577-byte body (Content-Length)"
	STATUS=$(curl -s -o "$T/body" -w '%{http_code}' --max-time 30 -H 'Expect:' -H 'A2A-Version: 1.0' -H 'X-Participant-Id: alice' "${ALICE[@]}" \
		-H 'Content-Type: application/json' --data-binary @"$T/huge" "$BASE")
	check "LIM-1 a body of 1 MiB + 1 byte is refused with 413 through $LABEL" '[ "$STATUS" = 413 ]'
	http POST / "$(rpc 6 GetTask "{\"id\":\"$TASK\"}")"
	check "LIM-1 the refused bodies stored nothing: the task still has 3 user messages" \
		'[ "$(jqb "[.result.history[] | select(.role == \"ROLE_USER\")] | length")" = 3 ]'
	if [ "$MODE" = proxy ]; then
		# mod_proxy_fcgi would pass a chunked body on without CONTENT_LENGTH; the recipe
		# refuses it (mod_fcgid and lighttpd read it whole and set CONTENT_LENGTH).
		REQ_DESC="POST / with Transfer-Encoding: chunked"
		STATUS=$(curl -s -o "$T/body" -w '%{http_code}' --max-time 30 -H 'Transfer-Encoding: chunked' \
			-H 'A2A-Version: 1.0' -H 'X-Participant-Id: alice' "${ALICE[@]}" -H 'Content-Type: application/json' \
			--data-binary "$(rpc 6 GetTask "{\"id\":\"$TASK\"}")" "$BASE")
		check "LIM-1 a chunked request body is refused with 411 through $LABEL" '[ "$STATUS" = 411 ]'
	else
		REQ_DESC="POST / GetTask with Transfer-Encoding: chunked"
		STATUS=$(curl -s -o "$T/body" -w '%{http_code}' --max-time 30 -H 'Transfer-Encoding: chunked' \
			-H 'A2A-Version: 1.0' -H 'X-Participant-Id: alice' "${ALICE[@]}" -H 'Content-Type: application/json' \
			--data-binary "$(rpc 6 GetTask "{\"id\":\"$TASK\"}")" "$BASE")
		check "LIM-1 a chunked request body reaches the program whole through $LABEL" \
			'[ "$STATUS" = 200 ]' '[ "$(jqb .result.id)" = "$TASK" ]'
	fi

	# ------------------------------------------------------------------ SSE through Apache
	# With the recipe's buffering off, the first event (the Task) reaches the client before
	# the 300 ms turn ends; buffered, the whole body would arrive at once.
	REQ_DESC="SendStreamingMessage (curl -N)"
	timing=$(curl -s -N -o "$T/body" --max-time 30 -w '%{http_code}|%{content_type}|%{time_starttransfer}|%{time_total}' \
		-H 'Content-Type: application/json' -H 'A2A-Version: 1.0' -H 'X-Participant-Id: alice' "${ALICE[@]}" \
		--data-binary "$(rpc 7 SendStreamingMessage "$(msg m4 "stream this" "$TASK")")" "$BASE")
	IFS='|' read -r STATUS sse_type first total <<<"$timing"
	gap=$(awk -v a="${first:-0}" -v b="${total:-0}" 'BEGIN { printf "%d", (b - a) * 1000 }')
	if [ "$MODE" = htaccess ]; then
		# The host keeps FcgidOutputBufferSize at 64 KiB (.htaccess cannot change it): the
		# events come late, in one piece, but complete (docs/deployment.md, shared hosting).
		check "A2A-5 SSE through $LABEL delivers every event, held by the host's output buffer (first byte ${first}s, end ${total}s)" \
			'[ "$STATUS" = 200 ]' 'case "$sse_type" in text/event-stream*) true ;; *) false ;; esac' \
			'[ "$(grep -c "^data:" "$T/body")" -ge 2 ]' \
			'[ "$(grep "^data:" "$T/body" | tail -n1 | sed "s/^data: *//" | jq -r ".result.statusUpdate.status.state // .result.task.status.state")" = TASK_STATE_INPUT_REQUIRED ]'
	else
		check "STORE-4 A2A-5 SSE events stream through $LABEL as written (first byte ${first}s, end ${total}s)" \
			'[ "$STATUS" = 200 ]' 'case "$sse_type" in text/event-stream*) true ;; *) false ;; esac' \
			'[ "$(grep -c "^data:" "$T/body")" -ge 2 ]' \
			'[ "$gap" -ge 150 ]' \
			'[ "$(grep "^data:" "$T/body" | tail -n1 | sed "s/^data: *//" | jq -r ".result.statusUpdate.status.state // .result.task.status.state")" = TASK_STATE_INPUT_REQUIRED ]'
	fi

	if [ "$MODE" = htaccess ]; then
		# The same upload on a host that has not loaded mod_fcgid: every request is a 503
		# that says so, and the program is never served as a file.
		nof=$(TH_HOST_MODULES="mpm_event authz_core rewrite auth_basic authn_core authn_file authz_user" TH_SERVER_EXPECT=503 \
			sh "$APACHE" start htaccess "$T/nofcgid" 1) || nof=
		saved_base=$BASE
		BASE=${nof:-$BASE}
		http POST / "$(rpc 9 GetTask "{\"id\":\"$TASK\"}")"
		nof_status=$STATUS
		nof_says=$(grep -c "has not loaded mod_fcgid" "$T/body")
		http GET /tiny-harness.fcgi ""
		check "PKG-3 STORE-4 on a host without mod_fcgid $RECIPE answers 503 naming mod_fcgid ($nof_status) and never serves the program ($STATUS)" \
			'[ -n "$nof" ]' '[ "$nof_status" = 503 ]' '[ "$nof_says" -ge 1 ]' \
			'[ "$STATUS" != 200 ]' '! head -c 4 "$T/body" | grep -q ELF'
		sh "$APACHE" stop "$T/nofcgid"
		BASE=$saved_base
		http GET /conf/tiny-harness.conf ""
		conf_status=$STATUS
		conf_leak=$(grep -c '^base_url' "$T/body")
		http GET /tiny-harness.fcgi ""
		check "STORE-4 neither the site's configuration ($conf_status) nor the program ($STATUS) is served as a file" \
			'[ "$conf_status" != 200 ] && [ "$conf_leak" = 0 ]' \
			'[ "$STATUS" != 200 ]' '! head -c 4 "$T/body" | grep -q ELF'
	fi

	# ------------------------------------------------------------------ completion
	completion_checks " through $LABEL"

	# ------------------------------------------------------------------ several workers
	# On PostgreSQL: a shared host's mod_fcgid decides how many processes to start, and
	# one threaded worker (decision-023) takes the next request while its last one's turn
	# runs, so behind .htaccess one process may serve it all; the recipes configured here
	# must still show two. On SQLite every write goes to the writer (HOST-2).
	min_workers=2
	[ "$MODE" = htaccess ] && min_workers=1
	workers_checks " behind $LABEL" "$min_workers"

	# ------------------------------------------------------------------ lean processes
	# HOST-1 (decision-045): mod_fcgid sends a process one request at a time, so its
	# workers start a request thread only to have one waiting while another serves or
	# finishes after-response work: a few, not worker_threads (16). At most 8 threads in
	# all (the stream and recovery threads included; 18 when all 16 started at once).
	case $MODE in fcgid | htaccess)
		threads=
		for p in $(sh "$LAUNCHER" workers "$T/$MODE"); do
			threads="$threads $(ls "/proc/$p/task" 2>/dev/null | grep -c .)"
		done
		REQ_DESC="threads of each worker process behind $LABEL:$threads"
		check "HOST-1 worker processes behind $LABEL start few request threads (decision-045)" \
			'[ -n "$threads" ]' '[ "$(printf "%s\n" $threads | sort -n | tail -n1)" -le 8 ]'
		;;
	esac

	# ------------------------------------------------------------------ proxy timeouts
	recipe_timeout_checks "$MODE" "$RECIPE"

	# ------------------------------------------------------------------ shutdown
	workers=$(sh "$LAUNCHER" workers "$T/$MODE")
	apid=$(cat "$T/$MODE/$PIDFILE" 2>/dev/null)
	sh "$LAUNCHER" stop "$T/$MODE"
	left=
	for p in $apid $workers $pids; do alive "$p" && left="$left $p"; done
	REQ_DESC="$(basename "$LAUNCHER") stop; server $apid, workers $(echo $workers), turn workers $(echo $pids); still running:$left"
	check "STORE-4 stopping $LABEL stops its worker processes" '[ -n "$apid" ]' \
		'[ "$(printf "%s\n" $workers | grep -c .)" -ge "$min_workers" ]' '[ -z "$left" ]'
}

# The recipe's bearer variant (SEC-1, decision-037/040): started with -D TH_BEARER,
# Apache asks for no login and passes Authorization on (CGIPassAuth On), and the workers
# (identity = bearer) check an API key made with `tiny-harness keys add`; nginx's, without
# its auth_basic lines, passes Authorization on as it is (decision-090 names it the fast
# path for programs); the shared host's .htaccess with `CGIPassAuth On` in place of its
# login block (conf/htaccess.example's -D TH_BEARER branch).
bearer_mode() {
	local mode=$1 label dir key before after s1 how=-D\ TH_BEARER starter
	starter=$(launcher "$mode")
	case $mode in
	fcgid) label="Apache+mod_fcgid" ;;
	proxy) label="Apache+mod_proxy_fcgi" ;;
	nginx) label="nginx" how="without auth_basic" ;;
	htaccess) label="the shared host (.htaccess)" how="CGIPassAuth On in .htaccess" ;;
	*) return 0 ;;
	esac
	sh "$starter" check "$mode" >/dev/null || return 0 # its skip is reported above
	dir=$T/$mode-bearer
	BAIL_LOGS=("$dir/error.log" "$dir/apache.out" "$dir/nginx.out")
	on_exit "sh \"$starter\" stop \"$dir\""
	BASE=$(TINY_HARNESS_IDENTITY=bearer TINY_HARNESS_ECHO_DELAY_MS=0 sh "$starter" start "$mode" "$dir" 2) ||
		bail "$label ($how) did not start"
	DB=$(th_db_of "$dir")
	echo "# $label ($how) at $BASE, state in $dir"
	# The key is made as the workers' user, as an operator would (the files are theirs).
	key=$(cd "$dir" && TINY_HARNESS_DB=$DB th_db_as_owner "$DB" "$TH_BIN" keys add carol --name apache 2>"$dir/keys.err")
	raw_auth GET /.well-known/agent-card.json ""
	check "SEC-1 CARD-1 $label ($how) serves the card without a login, declaring HTTP Bearer" \
		'[ "$STATUS" = 200 ]' '[ "$(jqb "[.. | .scheme? // empty | ascii_downcase] | index(\"bearer\")")" != null ]'

	# The key is the sender whatever X-Participant-Id says.
	raw_auth POST / "$(rpc 1 SendMessage "$(msg b1 "sent with an API key")")" \
		-H "Authorization: Bearer $key" -H 'X-Participant-Id: alice'
	TASK=$(jqb .result.task.id)
	check "SEC-1 through $label ($how) an API key from tiny-harness keys add is the sender: task stored as carol" \
		'[ "${#key}" = 46 ]' '[ "$STATUS" = 200 ]' has_task \
		'[ "$(sq "SELECT sender FROM messages WHERE task_id = '"'"'$TASK'"'"' AND message_id = '"'"'b1'"'"'")" = carol ]' \
		'[ "$(sq "SELECT participant_id FROM participants WHERE task_id = '"'"'$TASK'"'"' AND participant_id != '"'"'tiny-harness'"'"'")" = carol ]'
	raw_auth GET "/tasks/$TASK" "" -H "Authorization: Bearer $key"
	check "SEC-1 the same key reads carol's task over REST through $label" \
		'[ "$STATUS" = 200 ]' '[ "$(jqb .id)" = "$TASK" ]'

	before=$(TH_DB_BUSY_MS=5000 th_db_sql "$DB" 'SELECT COUNT(*) FROM tasks' 2>/dev/null || echo unreadable)
	raw_auth POST / "$(rpc 2 GetTask "{\"id\":\"$TASK\"}")"
	check "SEC-1 no key through $label ($how): 401 with WWW-Authenticate: Bearer realm=\"tiny-harness\", nothing of the task" \
		'[ "$STATUS" = 401 ]' 'challenge | grep -q "^Bearer realm=\"tiny-harness\""' '! grep -qF "$TASK" "$T/body"'
	raw_auth POST / "$(rpc 3 SendMessage "$(msg b2 "acting as carol")")" -H 'X-Participant-Id: carol'
	s1=$STATUS
	raw_auth GET "/tasks/$TASK" "" -H 'X-Participant-Id: carol'
	after=$(TH_DB_BUSY_MS=5000 th_db_sql "$DB" 'SELECT COUNT(*) FROM tasks' 2>/dev/null || echo unreadable)
	check "SEC-1 X-Participant-Id: carol without a key through $label ($how): 401 on both bindings ($s1, $STATUS), no task stored ($before, $after)" \
		'[ "$s1" = 401 ]' '[ "$STATUS" = 401 ]' 'challenge | grep -q "^Bearer "' '! grep -qF "$TASK" "$T/body"' \
		'[ "$before" != unreadable ]' '[ "$after" = "$before" ]'
	raw_auth POST / "$(rpc 4 GetTask "{\"id\":\"$TASK\"}")" -H "Authorization: Bearer th_$(printf '%043d' 0)"
	check "SEC-1 a well-formed key that was never issued through $label ($how): 401 with error=\"invalid_token\"" \
		'[ "$STATUS" = 401 ]' 'challenge | grep -q "error=\"invalid_token\""' '! grep -qF "$TASK" "$T/body"'
	sh "$starter" stop "$dir"
}

for m in $MODES; do
	run_mode "$m"
done
for m in $MODES; do
	bearer_mode "$m"
done
# STREAM-PROXY-2 (decision-072): each recipe once more with its idle timeout for a silent
# worker cut to 1 s (tests/lib/keepalive.sh); not the shared host, whose timeouts are the
# host's (STREAM-PROXY-1 above reads them).
for m in $MODES; do
	case $m in fcgid | proxy | nginx)
		sh "$(launcher "$m")" check "$m" >/dev/null || continue # its skip is reported above
		case $m in
		fcgid) label="Apache+mod_fcgid" ;;
		proxy) label="Apache+mod_proxy_fcgi" ;;
		nginx) label="nginx+spawn-fcgi" ;;
		esac
		keepalive_checks "$m" "$label"
		;;
	esac
done

tap_done
