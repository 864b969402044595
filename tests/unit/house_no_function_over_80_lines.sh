#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# The house rule (issue 30, ARCHITECTURE.md "The house, round 3"): no function of src/
# is longer than 80 lines. scripts/long-functions.sh lists the ones that are; any line
# it prints fails the run. TH_LONG_FUNCTION_LIMIT sets another limit (a lower one shows
# that the test can fail).
src=${TH_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
limit=${TH_LONG_FUNCTION_LIMIT:-80}
script="$src/scripts/long-functions.sh"
if [ ! -f "$script" ]; then
	echo "FAIL: $script is missing" >&2
	exit 1
fi
if ! out=$(bash "$script" "$limit"); then
	echo "FAIL: $script did not run" >&2
	exit 1
fi
if [ -n "$out" ]; then
	echo "FAIL: functions of src/ over $limit lines (lines file:line definition);" >&2
	echo "extract well-named helpers until each is at most $limit:" >&2
	echo "$out" >&2
	exit 1
fi
echo "ok: no function of src/ over $limit lines"
