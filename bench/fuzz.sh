#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# bench/fuzz.sh — builds the libFuzzer targets with clang (ASan + UBSan) in their own
# directory and runs each for a bounded number of executions (LIM-3, LIM-4). Not part of
# CI: a run of the default size takes tens of minutes on 2 CPUs.
#
#   bench/fuzz.sh                      both targets, RUNS executions each (default 5000000)
#   RUNS=200000 bench/fuzz.sh          a short run
#   TARGETS="rest" bench/fuzz.sh       one target: serve (the request path, body fuzzed) or
#                                      rest (HTTP+JSON: method, path, query, participant,
#                                      extensions and body fuzzed)
#   FUZZ_DIR=/tmp/th-fuzz bench/fuzz.sh  where the build, corpora and crashes go
#
# Each target starts from its seed corpus (tests/fuzz/corpus, tests/fuzz/corpus-rest) and
# the dictionary tests/fuzz/a2a.dict; the grown corpus stays in FUZZ_DIR for the next run.
# libFuzzer stops at the first crash, sanitizer report or leak and leaves crash-<sha1> in
# FUZZ_DIR/<target>; the script then exits 1. At the end it prints, per target, the
# executions, executions per second, coverage and corpus size libFuzzer reported.
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
RUNS=${RUNS:-5000000}
TARGETS=${TARGETS:-"serve rest"}
FUZZ_DIR=${FUZZ_DIR:-/tmp/th-fuzz}
MAX_LEN=${MAX_LEN:-2048}

die() { echo "fuzz: $*" >&2; exit 1; }
command -v clang >/dev/null 2>&1 || die "clang is not installed (apt-get install clang)"
case $RUNS in '' | *[!0-9]*) die "RUNS must be a number" ;; esac

build=$FUZZ_DIR/build
mkdir -p "$build" || die "cannot create $build"
if [ ! -f "$build/src/.libs/libth.a" ] || [ -n "$(find "$root/src" -newer "$build/src/.libs/libth.a" -name '*.[ch]' | head -n 1)" ]; then
	echo "fuzz: building libth with -fsanitize=fuzzer-no-link,address,undefined in $build" >&2
	[ -x "$root/configure" ] || (cd "$root" && autoreconf -fi) || die "autoreconf failed"
	(cd "$build" && "$root/configure" -q CC=clang \
		CFLAGS="-g -O1 -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined" \
		LDFLAGS="-fsanitize=address,undefined" >/dev/null &&
		make -s -j2 src/libth.la >/dev/null) || die "building libth failed (see $build/config.log)"
fi
libs=$(pkg-config --libs fcgi json-c sqlite3 libcurl libcrypto 2>/dev/null) || libs="-lfcgi -ljson-c -lsqlite3 -lcurl -lcrypto"

status=0
summary=()
for t in $TARGETS; do
	case $t in
	serve) seeds=$root/tests/fuzz/corpus ;;
	rest) seeds=$root/tests/fuzz/corpus-rest ;;
	*) die "unknown target $t (serve or rest)" ;;
	esac
	bin=$build/fuzz_$t
	clang -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined -D_GNU_SOURCE \
		-I"$root/src" -I"$build" $(pkg-config --cflags json-c) \
		"$root/tests/fuzz/fuzz_$t.c" "$build/src/.libs/libth.a" -o "$bin" $libs -lm ||
		die "linking fuzz_$t failed"
	work=$FUZZ_DIR/$t
	mkdir -p "$work/corpus"
	cp -n "$seeds"/* "$work/corpus/" 2>/dev/null
	echo "fuzz: $t: $RUNS runs, corpus $work/corpus" >&2
	log=$work/last.log
	(cd "$work" && "$bin" -runs="$RUNS" -max_len="$MAX_LEN" -dict="$root/tests/fuzz/a2a.dict" \
		-print_final_stats=1 corpus) >"$log" 2>&1
	rc=$?
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
	speed=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log")
	cov=$(grep -Eo 'cov: [0-9]+' "$log" | tail -n 1)
	corp=$(find "$work/corpus" -type f | wc -l)
	crashes=$(find "$work" -maxdepth 1 -name 'crash-*' -o -maxdepth 1 -name 'leak-*' | wc -l)
	summary+=("$t: rc=$rc executions=${execs:-?} exec/s=${speed:-?} ${cov:-cov: ?} corpus=$corp crash/leak files=$crashes")
	if [ $rc != 0 ]; then
		tail -n 40 "$log"
		status=1
	fi
done
printf '%s\n' "${summary[@]}"
exit $status
