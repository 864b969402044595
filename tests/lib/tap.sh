# SPDX-License-Identifier: Apache-2.0
# tap.sh — TAP output for the shell tests; sourced (bash) by tests/cgi and tests/integration.
#
#   skip REASON          print the plan "1..0 # SKIP REASON" and exit 77 (automake's SKIP)
#   ok NAME              one passing test line
#   not_ok NAME [LINE…]  one failing test line, each LINE as a diagnostic, then tap_details
#   check NAME COND…     ok when every COND (a shell snippet, eval'd in order) holds; else
#                        not_ok naming the first that failed
#   bail REASON          "Bail out!", the last lines of each file of BAIL_LOGS, exit 1
#   tap_done             the plan line "1..N"; exit 1 when a test failed, else 0
#
# tap_details prints the first 15 lines of DETAIL when a script set it (what its figures
# were made of), else what the failing request was: REQ_DESC, STATUS and the first
# TAP_BODY_LINES (15) lines of $T/body, each cut at TAP_BODY_WIDTH characters (0: whole
# lines). A script whose failures need other details redefines tap_details after sourcing.
# BAIL_LOGS (an array, default $T/srv/error.log) is read when bail runs.

n=0
failed=0
: "${TAP_BODY_LINES:=15}"
: "${TAP_BODY_WIDTH:=0}"

skip() {
	echo "1..0 # SKIP $*"
	exit 77
}
ok() {
	n=$((n + 1))
	echo "ok $n - $1"
}
tap_details() {
	if [ -n "${DETAIL:-}" ]; then
		printf '%s\n' "$DETAIL" | head -n 15 | sed 's/^/#   /'
		return
	fi
	echo "#   request: ${REQ_DESC:-}"
	echo "#   HTTP status: ${STATUS:-none}"
	# awk, not sed: a body without a final newline must not swallow the next TAP line.
	awk -v lines="$TAP_BODY_LINES" -v width="$TAP_BODY_WIDTH" \
		'NR <= lines { print "#   body: " (width > 0 ? substr($0, 1, width) : $0) }' "$T/body" 2>/dev/null
}
not_ok() {
	n=$((n + 1))
	failed=$((failed + 1))
	echo "not ok $n - $1"
	shift
	for line in "$@"; do echo "#   $line"; done
	tap_details
}
check() {
	local name=$1 c
	shift
	for c in "$@"; do
		if ! eval "$c"; then
			not_ok "$name" "failed: $c"
			return 1
		fi
	done
	ok "$name"
}
bail() {
	echo "Bail out! $*"
	[ "${BAIL_LOGS+set}" = set ] || BAIL_LOGS=("$T/srv/error.log")
	tail -n 20 "${BAIL_LOGS[@]}" 2>/dev/null | sed 's/^/# error.log: /'
	exit 1
}
tap_done() {
	echo "1..$n"
	if [ $failed -gt 0 ]; then
		echo "# $failed of $n failed"
		exit 1
	fi
	exit 0
}
