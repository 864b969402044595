#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# bench/instructions.sh — what one request costs the worker in instructions, counted by
# callgrind: a figure that does not move with the machine's load, for before/after
# comparisons on a busy machine (this VM has no hardware counters for perf).
#
#   bench/instructions.sh BIN [BIN...]     each build in turn, in the order given
#   N=200 ROUNDS=2 bench/instructions.sh old/tiny-harness build/src/tiny-harness
#   KEEP=1 bench/instructions.sh BIN       keeps callgrind's files and prints where, for
#                                           callgrind_annotate (where the instructions went)
#
# Each build runs as the one FastCGI worker of a lighttpd (tests/lib/server.sh) under
# `valgrind --tool=callgrind`. After a warm-up (20 SendMessages, 20 GetTasks) the counters
# are dumped with callgrind_control, then N sequential SendMessages (new task each, echo
# model, its after-response turn included), N GetTasks of one task and N agent-card reads
# are sent, dumping after each block: the difference divided by N is printed per request. Loopback only,
# bounded by N.
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
N=${N:-100}
ROUNDS=${ROUNDS:-1}
die() { echo "instructions: $*" >&2; exit 1; }
[ $# -ge 1 ] || die "usage: bench/instructions.sh BIN [BIN...]"
command -v valgrind >/dev/null && command -v callgrind_control >/dev/null || die "needs valgrind"
unset TINY_HARNESS_ECHO_DELAY_MS TINY_HARNESS_CONF

one() { # one BIN
	local bin=$1 d url t a b c
	[ -x "$bin" ] || die "no program at $bin"
	d=$(mktemp -d "${TMPDIR:-/tmp}/th-instr.XXXXXX")
	printf '#!/bin/sh\nexec valgrind --tool=callgrind --callgrind-out-file=%s/cg.%%p.out %s "$@"\n' \
		"$d" "$bin" >"$d/wrap"
	chmod +x "$d/wrap"
	url=$(TH_BIN=$d/wrap TH_SRCDIR=$root sh "$root/tests/lib/server.sh" start "$d/srv" 1) ||
		die "lighttpd did not start"
	case $url in http://127.0.0.1:*) ;; *) die "refusing a non-loopback URL: $url" ;; esac
	send() {
		curl -s -H 'Content-Type: application/json' -H 'A2A-Version: 1.0' \
			-H 'X-Participant-Id: bench' --data-binary "$1" "$url"
	}
	msg() { echo "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"SendMessage\",\"params\":{\"message\":{\"messageId\":\"$1\",\"role\":\"ROLE_USER\",\"parts\":[{\"text\":\"benchmark $1\"}]}}}"; }
	get() { echo "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"GetTask\",\"params\":{\"id\":\"$1\"}}"; }
	# The sum of every dump so far: each dump holds what ran since the one before.
	total() {
		callgrind_control -d >/dev/null 2>&1
		sleep 1
		# A dump has both a "summary:" and a "totals:" line with the same count: one is
		# summed (until 2026-12-06 both were, so earlier figures here are twice the cost).
		cat "$d"/cg.*.out* 2>/dev/null | awk '/^totals:/ { s += $2 } END { print s + 0 }'
	}
	for i in $(seq 20); do send "$(msg "w-$i")" >/dev/null; done
	t=$(send "$(msg target)" | jq -r .result.task.id)
	for i in $(seq 20); do send "$(get "$t")" >/dev/null; done
	sleep 1
	a=$(total)
	for i in $(seq "$N"); do send "$(msg "p-$i")" >/dev/null; done
	sleep 2 # the last after-response turn
	b=$(total)
	for i in $(seq "$N"); do send "$(get "$t")" >/dev/null; done
	c=$(total)
	for i in $(seq "$N"); do curl -s "${url}.well-known/agent-card.json" >/dev/null; done
	e=$(total)
	printf '%-50s SendMessage %9d   GetTask %8d   card %8d   instructions per request\n' \
		"$bin" $(((b - a) / N)) $(((c - b) / N)) $(((e - c) / N))
	sh "$root/tests/lib/server.sh" stop "$d/srv"
	if [ "${KEEP:-0}" = 1 ]; then
		# The dumps in order: the SendMessage block's costs are in the second, the
		# GetTask block's in the third, the card's in the fourth (callgrind_annotate FILE).
		echo "kept: $d ($(ls "$d"/cg.*.out* | sort -V | tr '\n' ' '))"
	else
		rm -rf "$d"
	fi
}
for r in $(seq "$ROUNDS"); do
	for bin in "$@"; do one "$bin"; done
done
