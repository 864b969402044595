# SPDX-License-Identifier: Apache-2.0
# keepalive.sh — a quiet stream through a recipe whose proxy idle timeout is shortened
# (STREAM-PROXY-2), and each recipe's idle timeout against the program's defaults
# (STREAM-PROXY-1; decision-072); sourced after tests/lib/a2a.sh by the scripts that start
# the recipes (tests/integration/lighttpd.sh, apache_fcgid.sh for fcgid, htaccess, proxy
# and nginx), with T, SERVER and the login of basic_auth set.
#
#   keepalive_checks MODE LABEL   MODE lighttpd, fcgid, proxy or nginx. Starts the recipe
#                                 once more, in $T/MODE-keepalive with 2 workers, its
#                                 idle timeout for a silent worker cut to KA_TIMEOUT s
#                                 (TH_PROXY_TIMEOUT: tests/lib/server.sh, apache.sh,
#                                 nginx.sh) and heartbeat_ms to KA_HEARTBEAT ms, then
#   1. a SubscribeToTask on a parked task, with nothing happening, is still open after
#      2.5 s (4 s behind lighttpd, which looks at its timeouts once a second and so cuts
#      a silent worker 2-3 s after a 1 s timeout) and has seen heartbeat comments; the
#      completion sent then through another request reaches it, with exactly the events
#      the events table holds after the snapshot, and ends it cleanly;
#   2. the control: a second subscriber whose workers are all stopped (SIGSTOP: silent, as
#      a heartbeat longer than the timeout would leave it were the worker's 0.5 s probes
#      not there) is cut by the proxy within a few timeouts, long before its own
#      --max-time; the workers are continued (SIGCONT) and the server stopped.
# About 10 s per recipe: the server's start and stop, the quiet wait and the cut (which
# mod_proxy_fcgi's client sees some 5 s after its error, AH01075).

KA_TIMEOUT=1
KA_HEARTBEAT=250

# ka_launch MODE COMMAND DIR — the launcher of MODE run with COMMAND (start, workers, stop).
ka_launch() {
	local mode=$1 cmd=$2 dir=$3 lpid
	case $mode in
	lighttpd)
		case $cmd in
		start) sh "$SERVER" start "$dir" 2 ;;
		stop) sh "$SERVER" stop "$dir" ;;
		workers)
			lpid=$(cat "$dir/lighttpd.pid" 2>/dev/null) && ps -o pid= --ppid "$lpid" 2>/dev/null | tr -d ' '
			;;
		esac
		;;
	nginx) if [ "$cmd" = start ]; then sh "$TH_SRCDIR/tests/lib/nginx.sh" start nginx "$dir" 2; else sh "$TH_SRCDIR/tests/lib/nginx.sh" "$cmd" "$dir"; fi ;;
	*) if [ "$cmd" = start ]; then sh "$TH_SRCDIR/tests/lib/apache.sh" start "$mode" "$dir" 2; else sh "$TH_SRCDIR/tests/lib/apache.sh" "$cmd" "$dir"; fi ;;
	esac
}

# ka_subscribe TASK OUT — SubscribeToTask for alice in the background, the SSE body to
# OUT, curl's status line to OUT.curl; sets KA_PID.
ka_subscribe() {
	curl -s -N -o "$2" --max-time 20 -w '%{http_code} %{time_total}' \
		-H 'Content-Type: application/json' -H 'A2A-Version: 1.0' -H 'Accept: text/event-stream' \
		-H 'X-Participant-Id: alice' "${ALICE[@]}" \
		--data-binary "$(rpc 71 SubscribeToTask "{\"id\":\"$1\"}")" "$BASE" >"$2.curl" 2>&1 &
	KA_PID=$!
}

keepalive_checks() {
	local mode=$1 label=$2 dir=$T/$1-keepalive saved_base=$BASE saved_db=$DB task first rc
	local alive_after db_ids got_ids pings last_state workers t0 t1 cut_ms task2 quiet=2.5
	[ "$mode" != lighttpd ] || quiet=4
	on_exit "ka_launch $mode stop \"$dir\" >/dev/null 2>&1"
	if ! BASE=$(TH_PROXY_TIMEOUT=$KA_TIMEOUT TINY_HARNESS_HEARTBEAT_MS=$KA_HEARTBEAT TINY_HARNESS_ECHO_DELAY_MS=0 \
		ka_launch "$mode" start "$dir"); then
		not_ok "STREAM-PROXY-2 $label starts with its idle timeout cut to ${KA_TIMEOUT} s (TH_PROXY_TIMEOUT)"
		BASE=$saved_base
		return 1
	fi
	DB=$(th_db_of "$dir")
	echo "# $label with a ${KA_TIMEOUT} s idle timeout and heartbeat_ms = $KA_HEARTBEAT at $BASE, state in $dir"

	# ------------------------------------------------------------ 1. a quiet stream
	rpc_call SendMessage "$(msg ka1 "keep this stream open")"
	task=$(jqb .result.task.id)
	ka_subscribe "$task" "$dir/quiet.sse"
	t0=$(now_ms)
	# The control's task, made meanwhile: a commit on another task writes nothing to this
	# stream.
	rpc_call SendMessage "$(msg ka3 "then fall silent")"
	task2=$(jqb .result.task.id)
	sleep "$(awk -v q="$quiet" -v s="$(($(now_ms) - t0))" 'BEGIN { d = q - s / 1000; print (d > 0 ? d : 0) }')"
	alive_after=no
	alive "$KA_PID" && alive_after=yes
	rpc_call SendMessage "$(ctl ka2 "$task")"
	wait "$KA_PID"
	rc=$?
	cp "$dir/quiet.sse" "$T/body"
	first=$(sed -n 's/^id: *//p' "$dir/quiet.sse" | tr -d '\r' | head -n1)
	db_ids=$(sq "SELECT seq FROM events WHERE task_id = '$task' AND seq > ${first:-0} ORDER BY seq" | paste -sd, -)
	got_ids=$(sed -n 's/^id: *//p' "$dir/quiet.sse" | tr -d '\r' | tail -n +2 | paste -sd, -)
	pings=$(grep -c '^: *ping' "$dir/quiet.sse")
	last_state=$(grep '^data:' "$dir/quiet.sse" | tail -n1 | sed 's/^data: *//' |
		jq -r '.result.statusUpdate.status.state // .result.task.status.state' 2>/dev/null)
	REQ_DESC="SubscribeToTask $task, quiet $quiet s, then a completion; curl exit $rc, $(cat "$dir/quiet.sse.curl"); ids after the snapshot $got_ids, events table $db_ids; $pings heartbeats"
	check "STREAM-PROXY-2 STREAM-2 a quiet SubscribeToTask through $label is open after $quiet s behind a ${KA_TIMEOUT} s idle timeout (heartbeat_ms = $KA_HEARTBEAT) and still gets the later completion" \
		'[ -n "$task" ] && [ "$task" != null ]' '[ "$alive_after" = yes ]' \
		'[ "$pings" -ge 4 ]' \
		'[ "$rc" = 0 ]' '[ "$(cut -d" " -f1 "$dir/quiet.sse.curl")" = 200 ]' \
		'[ "$last_state" = TASK_STATE_COMPLETED ]'
	check "STREAM-PROXY-2 STREAM-3 the events after that stream's snapshot are exactly the events table's, each once ($got_ids)" \
		'[ -n "$first" ]' '[ -n "$db_ids" ]' '[ "$got_ids" = "$db_ids" ]'

	# ------------------------------------------------------------ 2. the control
	task=$task2
	ka_subscribe "$task" "$dir/silent.sse"
	for _ in $(seq 1 50); do
		grep -q '^data:' "$dir/silent.sse" 2>/dev/null && break
		sleep 0.1
	done
	workers=$(ka_launch "$mode" workers "$dir")
	# The proxy's idle clock runs from the worker's last write (a heartbeat every 250 ms,
	# later still on a loaded machine), before t0: the cut may come well inside one
	# timeout of t0, but not at once (seen: 622 ms of a 1 s timeout at load 15).
	t0=$(now_ms)
	# shellcheck disable=SC2086
	[ -z "$workers" ] || kill -STOP $workers 2>/dev/null
	for _ in $(seq 1 100); do
		alive "$KA_PID" || break
		sleep 0.1
	done
	t1=$(now_ms)
	# shellcheck disable=SC2086
	[ -z "$workers" ] || kill -CONT $workers 2>/dev/null
	wait "$KA_PID" 2>/dev/null
	cut_ms=$((t1 - t0))
	cp "$dir/silent.sse" "$T/body"
	REQ_DESC="SubscribeToTask $task, workers $(echo $workers) stopped; the stream ended ${cut_ms} ms later ($(cat "$dir/silent.sse.curl")); $(grep -i 'timeout\|timed out' "$dir/error.log" 2>/dev/null | tail -n1 | cut -c1-200)"
	check "STREAM-PROXY-2 the control: with its workers silent (SIGSTOP) the same stream through $label is cut by the ${KA_TIMEOUT} s idle timeout (after ${cut_ms} ms), so the check above can fail" \
		'[ -n "$workers" ]' 'grep -q "^data:" "$T/body"' \
		'[ "$cut_ms" -ge $((KA_TIMEOUT * 500)) ]' '[ "$cut_ms" -lt 9000 ]' \
		'! grep -q TASK_STATE_COMPLETED "$T/body"'
	ka_launch "$mode" stop "$dir"
	BASE=$saved_base DB=$saved_db
}

# ka_default KEY — the program's default of configuration KEY (tiny-harness --help).
ka_default() { "$TH_BIN" --help 2>/dev/null | sed -n "s/^  $1 = \([0-9]*\) .*/\1/p"; }

# recipe_timeout_checks MODE LABEL — STREAM-PROXY-1: the recipe of MODE waits out a silent
# worker longer than the program's heartbeat_ms and model_timeout_ms (read from
# tiny-harness --help) — the shared host's 40 s excepted for the model — and mod_fcgid's
# FcgidBusyTimeout outlasts stream_max_ms (a stream ends before its process is killed); on the
# shared host (htaccess), whose mod_fcgid runs at its defaults (FcgidIOTimeout 40 s,
# FcgidBusyTimeout 300 s), the example's configuration ends streams before 300 s.
recipe_timeout_checks() {
	local mode=$1 label=$2 idle_ms busy_ms= hb model smax f
	hb=$(ka_default heartbeat_ms)
	model=$(ka_default model_timeout_ms)
	smax=$(ka_default stream_max_ms)
	case $mode in
	lighttpd)
		f=$TH_SRCDIR/conf/lighttpd.conf
		idle_ms=$(sed -n 's/^[[:space:]]*"read-timeout"[[:space:]]*=> \([0-9]*\),.*/\1/p' "$f")
		;;
	nginx)
		f=$TH_SRCDIR/conf/nginx.conf
		idle_ms=$(sed -n 's/^[[:space:]]*fastcgi_read_timeout \([0-9]*\)s;.*/\1/p' "$f")
		;;
	proxy)
		f=$TH_SRCDIR/conf/apache-proxy-fcgi.conf
		idle_ms=$(sed -n 's/^ProxyPass .* timeout=\([0-9]*\).*/\1/p' "$f")
		;;
	fcgid)
		f=$TH_SRCDIR/conf/apache-fcgid.conf
		idle_ms=$(sed -n 's/^FcgidIOTimeout[[:space:]]*\([0-9]*\)$/\1/p' "$f")
		busy_ms=$(sed -n 's/^FcgidBusyTimeout[[:space:]]*\([0-9]*\)$/\1/p' "$f")
		;;
	htaccess)
		# mod_fcgid's defaults, which .htaccess cannot change.
		f=$TH_SRCDIR/conf/htaccess.example
		idle_ms=40 busy_ms=300
		smax=$(sed -n 's/^#[[:space:]]*stream_max_ms = \([0-9]*\).*/\1/p' "$f" | head -n1)
		;;
	esac
	idle_ms=$((${idle_ms:-0} * 1000))
	[ -z "$busy_ms" ] || busy_ms=$((busy_ms * 1000))
	REQ_DESC="$f: idle timeout ${idle_ms} ms${busy_ms:+, busy timeout $busy_ms ms}; program defaults heartbeat_ms $hb, model_timeout_ms $model, stream_max_ms ${smax:-none}"
	: >"$T/body"
	local also=" and model_timeout_ms ($model ms)"
	[ "$mode" != htaccess ] || also=" (the host's default)"
	check "STREAM-PROXY-1 $label waits out a silent worker ($((idle_ms / 1000)) s) longer than heartbeat_ms ($hb ms)$also${busy_ms:+, and ends no request before stream_max_ms ($smax ms)}" \
		'[ -n "$hb" ] && [ -n "$model" ] && [ -n "$smax" ]' \
		'[ "$idle_ms" -gt "$hb" ]' '[ "$idle_ms" -gt "$model" ] || [ "$mode" = htaccess ]' \
		'[ -z "$busy_ms" ] || [ "$busy_ms" -gt "$smax" ]'
}
