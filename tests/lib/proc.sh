# SPDX-License-Identifier: Apache-2.0
# proc.sh — ports and processes for tests/lib/server.sh, tests/lib/apache.sh and the tests
# (plain POSIX sh; sourced).
#
#   random_port          a random port in 20000–31999
#   port_busy PORT       true when something listens on 127.0.0.1:PORT
#   alive PID            true while PID runs (not gone, not a zombie)
#   wait_card PID URL [STATUS]  poll (every 0.1 s, TH_SERVER_TIMEOUT seconds) until
#                        URL's .well-known/agent-card.json answers STATUS (default 200;
#                        true) or PID dies or time runs out (false); the last HTTP status
#                        is left in `code`
#   term_wait WHAT PID…  SIGTERM to each pid, up to 10 s for them to go, then SIGKILL
#                        what is left (these pids only); WHAT names them in the message

# A random port in 20000–31999: below Linux's ephemeral range (32768–60999), so an
# outgoing connection's local port never takes it while we start.
random_port() {
	_rnd=$(od -An -N2 -tu2 /dev/urandom | tr -d ' ')
	echo $((20000 + _rnd % 12000))
}

# Is something listening on the port? (curl exit 7 = connection refused.)
port_busy() {
	curl -s -o /dev/null --max-time 1 "http://127.0.0.1:$1/" 2>/dev/null
	[ $? -ne 7 ]
}

# A process counts as running unless it is gone or a zombie (no init may reap it here).
alive() {
	[ -n "$1" ] || return 1
	kill -0 "$1" 2>/dev/null || return 1
	if [ -r "/proc/$1/stat" ]; then
		_state=$(sed 's/^.*) \(.\).*$/\1/' "/proc/$1/stat" 2>/dev/null)
		[ "$_state" != Z ] || return 1
	fi
	return 0
}

# The start time of a process (field 22 of /proc/PID/stat), to tell it from a later one
# with the same pid: pid_max can be 32768 and a full test run starts many processes and
# threads, so a pid comes back within seconds. Empty when there is no such process.
started() {
	sed 's/^.*) //' "/proc/$1/stat" 2>/dev/null | awk '{ print $20 }'
}

# alive_since PID START: the process that started at START is still running (not gone,
# not a zombie, and the pid not reused by another process).
alive_since() {
	alive "$1" || return 1
	[ "$(started "$1")" = "$2" ]
}

wait_card() {
	_i=0
	code=
	_limit=$((${TH_SERVER_TIMEOUT:-30} * 10))
	while [ $_i -lt $_limit ]; do
		alive "$1" || return 1
		code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 5 \
			"${2}.well-known/agent-card.json" 2>/dev/null)
		[ "$code" = "${3:-200}" ] && return 0
		sleep 0.1
		_i=$((_i + 1))
	done
	return 1
}

# SIGTERM to each pid, wait up to 10 s, then SIGKILL what is left (these pids only).
term_wait() {
	what=$1
	shift
	left=
	for p in "$@"; do alive "$p" && kill -TERM "$p" 2>/dev/null && left="$left $p"; done
	i=0
	while [ -n "$left" ] && [ $i -lt 100 ]; do
		sleep 0.1
		i=$((i + 1))
		still=
		for p in $left; do alive "$p" && still="$still $p"; done
		left=$still
	done
	if [ -n "$left" ]; then
		echo "${me:-proc.sh}: $what$left ignored SIGTERM for 10 s; sending SIGKILL" >&2
		for p in $left; do kill -KILL "$p" 2>/dev/null; done
	fi
}
