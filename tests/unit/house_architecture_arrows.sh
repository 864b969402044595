#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# The house rule (issue 30, ARCHITECTURE.md "The house, round 3"): the picture of the
# rooms in docs/architecture.md is the code's. The picture is the first fenced block
# after "The rooms, top floor first"; in it
#   a line that starts with src/NAME/ (or src/NAME.c, src/NAME.h) is a room of the main
#   column,
#   "├──► src/NAME/" hangs a side room off the main room above it (an arrow to it),
#   "▼" is the arrow from the main room above it to the next one,
# and one line names one room. A room is a directory of src/ or a file at its top
# (main.c; app.h, a header without a .c of its own). The run fails when
#   - a room of src/ is not drawn, or a drawn room is not in src/;
#   - a drawn arrow A → B has no file of A that includes a header of B;
#   - a file of room A includes a header of room B that is drawn above A or on A's line
#     (every include points down the picture).
# TH_ARCH_DOC names another picture (a wrong one shows that the test can fail).
src=${TH_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
doc=${TH_ARCH_DOC:-$src/docs/architecture.md}
if [ ! -f "$doc" ] || [ ! -d "$src/src" ]; then
	echo "FAIL: $doc or $src/src is missing" >&2
	exit 1
fi
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT

# The picture: "room NAME POS" for each room in drawing order, "arrow A B LINE" for each
# arrow, "bad LINE TEXT" for a line the rules above do not read.
awk '
	/The rooms, top floor first/ { seen = 1 }
	seen && /^```/ { if (inside) exit; inside = 1; next }
	!inside { next }
	{
		n = 0; line = $0; names = ""
		while (match(line, /src\/[a-z0-9_]+(\/|\.c|\.h)/)) {
			name = substr(line, RSTART + 4, RLENGTH - 4)
			sub(/(\/|\.c|\.h)$/, "", name)
			names = names " " name; n++
			line = substr(line, RSTART + RLENGTH)
		}
		sub(/^ /, "", names)
		side = index($0, "├──►") > 0
		main = $0 ~ /^src\//
		if (n > 1 && (main || side)) { print "bad", NR, "names " n " rooms: one room a line"; next }
		if (main) {
			pos++
			print "room", names, pos
			if (down) print "arrow", above, names, NR
			above = names; down = 0
		} else if (side) {
			if (n != 1 || above == "") { print "bad", NR, "a side arrow without a room"; next }
			pos++
			print "room", names, pos
			print "arrow", above, names, NR
		} else if (index($0, "▼") > 0) {
			down = 1
		}
	}
' "$doc" >"$tmp/picture"

# The code: "include FROM TO FILE:LINE" for each include of a header of another room.
(
	cd "$src" || exit 1
	for f in $(find src -name '*.[ch]' | sort); do
		rel=${f#src/}
		case $rel in
		*/*) from=${rel%%/*} ;;
		*) from=${rel%.*} ;;
		esac
		dir=$(dirname "$f")
		grep -n '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' "$f" |
			sed 's/^\([0-9]*\):.*"\([^"]*\)".*/\1 \2/' |
			while read -r line h; do
				case $h in
				*/*) to=${h%%/*} ;;      # "room/header.h", from src/ (-I src)
				*) to=${h%.*} ;;         # "app.h": a file at the top of src/
				esac
				if [ "${h#*/}" = "$h" ] && [ -f "$dir/$h" ]; then
					to=$from # a header beside the file
				elif [ ! -f "src/$h" ]; then
					continue # not in src/ (autoconf's config.h in the build tree)
				fi
				[ "$to" = "$from" ] || echo "include $from $to $f:$line"
			done
	done
	# Every room of src/, drawn or not.
	for d in src/*/; do
		d=${d%/}
		echo "code ${d#src/}"
	done
	for f in src/*.c src/*.h; do
		[ -f "$f" ] || continue
		f=${f#src/}
		echo "code ${f%.*}"
	done | sort -u
) >"$tmp/code" || exit 1

awk -v DOC="$doc" '
	FNR == NR {
		if ($1 == "room") { pos[$2] = $3; rooms++ }
		else if ($1 == "arrow") { arrow[++na] = $2 " " $3; aline[na] = $4 }
		else if ($1 == "bad") { printf "FAIL: %s:%s %s\n", DOC, $2, substr($0, index($0, $3)); bad++ }
		next
	}
	$1 == "code" { code[$2] = 1; if (!($2 in pos)) { printf "FAIL: src/%s is not drawn in %s\n", $2, DOC; bad++ } next }
	$1 == "include" {
		edge[$2 " " $3] = 1; edges++
		if (($2 in pos) && ($3 in pos) && pos[$3] <= pos[$2]) {
			printf "FAIL: %s includes a header of %s, which is drawn %s %s\n", $4, $3,
			    pos[$3] == pos[$2] ? "on the line of" : "above", $2
			bad++
		}
	}
	END {
		if (rooms == 0) { printf "FAIL: no picture of the rooms found in %s\n", DOC; exit 1 }
		for (r in pos) if (!(r in code)) { printf "FAIL: %s draws src/%s, which is not in src/\n", DOC, r; bad++ }
		for (i = 1; i <= na; i++) if (!(arrow[i] in edge)) {
			split(arrow[i], ab, " ")
			printf "FAIL: %s:%s draws %s → %s, but no file of %s includes a header of %s\n",
			    DOC, aline[i], ab[1], ab[2], ab[1], ab[2]
			bad++
		}
		if (bad) exit 1
		n = 0; for (e in edge) n++
		printf "ok: %d rooms drawn, %d arrows drawn and found in the includes, %d room-to-room includes (%d pairs) all pointing down\n",
		    rooms, na, edges, n
	}
' "$tmp/picture" "$tmp/code"
