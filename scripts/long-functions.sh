#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# long-functions.sh — functions of src/ longer than LIMIT lines (default 80), longest
# first: "lines file:line first-line-of-the-definition". A function starts at a line
# that begins (column 0) with its definition and ends at the next "}" in column 0,
# which is how .clang-format lays every function out.
#   scripts/long-functions.sh [LIMIT]
limit=${1:-80}
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root" || exit 1
for f in $(find src -name '*.c' | sort); do
	awk -v F="$f" -v L="$limit" '
	/^[a-zA-Z_].*\(/ && !/;[ \t]*$/ { name = $0; start = NR; infn = 1 }
	/^}/ && infn { len = NR - start + 1; if (len > L) printf "%4d %s:%d %s\n", len, F, start, substr(name, 1, 70); infn = 0 }
	' "$f"
done | sort -rn
