#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# test.sh — every test of tiny-harness, the one command CI runs.
#
#  1. scripts/deps.sh (Debian packages, npm ci)
#  2. autoreconf -fi when configure is missing (a fresh checkout); clang-format
#     --dry-run -Werror over every C file of src/ and tests/; an SPDX licence line in
#     every source file (decision-020)
#  3. build/       out-of-tree build with --enable-werror, `make -j2 check`
#                  (unit, contract, CGI, integration and interop layers: every test
#                  registered in TESTS by the local.mk files)
#     then the store's unit suites (check_store, check_group) and the integration and interop layers (the TESTS of
#     tests/integration/local.mk and tests/interop/local.mk) once more in build/ with
#     the databases in PostgreSQL (STORE-6): one throwaway cluster (tests/lib/pg.sh, in
#     build/pg) named to the tests by TH_TEST_PG; counted as the layers
#     "unit (PostgreSQL)", "integration (PostgreSQL)" and "interop (PostgreSQL)"
#  4. build-asan/  the same with --enable-sanitizers (ASan + UBSan, halting on the
#                  first error; reports of workers started by lighttpd land in
#                  build-asan/sanitizer-logs/ and fail the run, but for a LeakSanitizer
#                  file that only says it could not stop its process: named, left out)
#  5. valgrind over the CGI black-box tests (tests/cgi/cgi.sh with TH_WRAP) and over every
#     Check unit suite (CK_FORK=no, so a leak in any test is seen)
#  6. per-layer counts and a last line "N passed, N failed"
# Each stage's heading shows the seconds since the start ([N s]), so a CI log tells which
# stage took the time.
#
# Exits non-zero on any failure and prints the tail of each failing log.
#   TH_TEST_QUICK=1   only step 3 (no sanitizer build, no valgrind)
#   TH_TEST_PG_PASS=0 no PostgreSQL pass in step 3
#   TH_CONFIGURE_FLAGS="…"  extra flags for both configure runs
#   JOBS=N            make -jN (default 2)
#   TH_BUILD_DIR, TH_ASAN_BUILD_DIR   other build directories (default build/, build-asan/)
#   TH_AUTORECONF=1   run autoreconf -fi even when configure exists
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root" || exit 1
JOBS=${JOBS:-2}
BUILD_DIR=${TH_BUILD_DIR:-$root/build}
ASAN_DIR=${TH_ASAN_BUILD_DIR:-$root/build-asan}
stage_failures=0
failed_stages=()

say() { printf '\n==> [%d s] %s\n' "$SECONDS" "$*"; }
stage_failed() {
	stage_failures=$((stage_failures + 1))
	failed_stages+=("$1")
	echo "!!! $1 failed" >&2
}

say "dependencies"
./scripts/deps.sh || { echo "test.sh: scripts/deps.sh failed" >&2; exit 1; }

say "autotools"
# The generated Makefiles re-run automake/autoconf themselves when Makefile.am, a
# local.mk or configure.ac changes; autoreconf is needed only for a fresh checkout.
if [ ! -x configure ] || [ "${TH_AUTORECONF:-0}" = 1 ]; then
	autoreconf -fi || { echo "test.sh: autoreconf failed" >&2; exit 1; }
else
	echo "configure exists (TH_AUTORECONF=1 to regenerate)"
fi

# Issue 11: the committed .clang-format is the layout of every C file; a file that
# differs fails the run (fix with: clang-format -i FILE).
say "clang-format --dry-run -Werror over src/ and tests/"
unformatted=
for f in $(git ls-files 'src/*.c' 'src/*.h' 'tests/*.c' 'tests/*.h' 2>/dev/null); do
	clang-format --dry-run -Werror "$f" >/dev/null 2>&1 || unformatted="$unformatted $f"
done
if [ -n "$unformatted" ]; then
	echo "not formatted as .clang-format says:$unformatted" >&2
	stage_failed "clang-format"
else
	echo "every C file is formatted"
fi

# decision-020: every source file names its licence in an SPDX line near its top.
say "SPDX licence line in every source file"
unlicensed=
# web/dist/ is generated (web/build.mjs: our code bundled with third-party packages,
# whose own licence comments the bundle keeps); its sources in web/src/ are checked.
for f in $(git ls-files '*.c' '*.h' '*.sh' '*.mjs' '*.js' '*.lua' 2>/dev/null | grep -v '^web/dist/'); do
	head -n 3 "$f" | grep -q 'SPDX-License-Identifier: Apache-2.0' || unlicensed="$unlicensed $f"
done
if [ -n "$unlicensed" ]; then
	echo "no SPDX-License-Identifier line (docs/decisions/decision-020.md):$unlicensed" >&2
	stage_failed "SPDX"
else
	echo "every source file names the licence"
fi

# build DIR LABEL CONFIGURE-FLAGS… — configure (once) and `make check` in DIR.
build_and_check() {
	local dir=$1 label=$2
	shift 2
	mkdir -p "$dir"
	# Configure when the directory is new or was configured with other flags (run.sh
	# configures build/ without --enable-werror).
	local want have
	want=$(echo "$@" ${TH_CONFIGURE_FLAGS:-})
	have=$( [ -x "$dir/config.status" ] && "$dir/config.status" --config 2>/dev/null)
	if [ ! -f "$dir/Makefile" ] || [ "$(echo $have | tr -d "'")" != "$want" ]; then
		local old=
		[ -f "$dir/Makefile" ] && old=1
		(cd "$dir" && "$root/configure" "$@" ${TH_CONFIGURE_FLAGS:-} >configure.out 2>&1) || {
			tail -n 30 "$dir/configure.out"
			stage_failed "$label: configure"
			return 1
		}
		# Objects built with the old flags would not be rebuilt by make.
		[ -z "$old" ] || make -C "$dir" clean >/dev/null 2>&1
	fi
	# Old results would be counted again; make check rewrites the ones it runs.
	find "$dir" \( -name '*.log' -o -name '*.trs' \) -path '*/tests/*' -delete 2>/dev/null
	rm -f "$dir/test-suite.log"
	if ! make -C "$dir" -j"$JOBS" >"$dir/build.out" 2>&1; then
		grep -E 'error|Error' "$dir/build.out" | head -n 40
		tail -n 20 "$dir/build.out"
		stage_failed "$label: build"
		return 1
	fi
	if ! make -C "$dir" -j"$JOBS" check >"$dir/check.out" 2>&1; then
		if grep -qE '^(PASS|FAIL|XPASS|ERROR|SKIP|XFAIL):' "$dir/check.out"; then
			grep -E '^(PASS|FAIL|XPASS|ERROR|SKIP|XFAIL|# )' "$dir/check.out" | tail -n 40
		else
			# No test ran: building a test program failed.
			grep -E 'error:|Error [0-9]' "$dir/check.out" | head -n 30
			tail -n 10 "$dir/check.out"
		fi
		stage_failed "$label: make check"
		return 1
	fi
	grep -E '^(PASS|FAIL|XPASS|ERROR|SKIP|XFAIL|# )' "$dir/check.out" | tail -n 40
	return 0
}

say "build/ (--enable-werror): make -j$JOBS check"
build_and_check "$BUILD_DIR" "build" --enable-werror

# ---------------------------------------------------------------- the PostgreSQL pass
# The store suite, integration and interop layers again, each with a database of its own in one
# throwaway cluster (TH_TEST_PG, read by tests/lib/server.sh). This pass writes the same
# .log/.trs names as the first: the first pass's are moved aside meanwhile and put back,
# this pass's kept in $PG_RESULTS and counted as layers of their own.
PG_RESULTS=$BUILD_DIR/pg-check
pg_pass_ran=
PG_DIR=

# mk_tests FILE — the tests FILE adds to TESTS (`TESTS += …`, continuation lines too).
mk_tests() {
	awk '/^TESTS[ \t]*[+]?=/ { on = 1; sub(/^TESTS[ \t]*[+]?=/, "") }
		on { cont = sub(/\\[ \t]*$/, ""); print; if (!cont) on = 0 }' "$1"
}
# move_results FROM TO TEST… — each TEST's .log and .trs from under FROM to under TO.
move_results() {
	local from=$1 to=$2 t f
	shift 2
	for t in "$@"; do
		for f in "${t%.*}.log" "${t%.*}.trs"; do
			[ -f "$from/$f" ] || continue
			mkdir -p "$to/$(dirname "$f")" && mv -f "$from/$f" "$to/$f"
		done
	done
}
pg_stop() {
	[ -n "$PG_DIR" ] || return 0
	sh "$root/tests/lib/pg.sh" stop "$PG_DIR"
	# A cluster outside the build tree (see below) goes with it.
	[ "$PG_DIR" = "$BUILD_DIR/pg" ] || rm -rf "$PG_DIR"
	PG_DIR=
}
pg_pass() {
	local tests=() base rc=0 stash=$BUILD_DIR/pg-stash
	mapfile -t tests < <(echo tests/unit/check_store tests/unit/check_group tests/unit/check_pgtrips
		mk_tests tests/integration/local.mk
		mk_tests tests/interop/local.mk)
	read -r -a tests <<<"${tests[*]}"
	if [ ! -x "$BUILD_DIR/src/tiny-harness" ]; then
		stage_failed "PostgreSQL: no $BUILD_DIR/src/tiny-harness"
		return 1
	fi
	rm -rf "$PG_RESULTS" "$stash"
	# One left running by an interrupted run is stopped (by its pid file) and removed.
	sh "$root/tests/lib/pg.sh" stop "$BUILD_DIR/pg"
	rm -rf "$BUILD_DIR/pg"
	PG_DIR=$BUILD_DIR/pg
	# As root the cluster runs as nobody (tests/lib/pg.sh), who must reach its directory
	# and fit its socket's path: else it goes to a directory of its own under /tmp.
	if [ ${#PG_DIR} -gt 90 ] || { [ "$(id -u)" = 0 ] &&
		! setpriv --reuid="${TH_PG_USER:-nobody}" --regid="${TH_PG_GROUP:-nogroup}" --clear-groups -- \
			test -x "$BUILD_DIR" 2>/dev/null; }; then
		PG_DIR=$(mktemp -d "${TMPDIR:-/tmp}/th-pg.XXXXXX") || { stage_failed "PostgreSQL: mktemp"; return 1; }
	fi
	# Stopped on every way out of this script, failures and interruptions included.
	trap pg_stop EXIT
	trap 'exit 130' INT
	trap 'exit 143' TERM
	if ! base=$(sh "$root/tests/lib/pg.sh" start "$PG_DIR"); then
		stage_failed "PostgreSQL: tests/lib/pg.sh start"
		pg_stop
		trap - EXIT INT TERM
		return 1
	fi
	echo "PostgreSQL cluster at $base (in $PG_DIR): ${#tests[@]} tests"
	move_results "$BUILD_DIR" "$stash" "${tests[@]}"
	TH_TEST_PG=$base make -C "$BUILD_DIR" -j"$JOBS" check TESTS="${tests[*]}" \
		TEST_SUITE_LOG=test-suite-pg.log >"$BUILD_DIR/check-pg.out" 2>&1 || rc=$?
	grep -E '^(PASS|FAIL|XPASS|ERROR|SKIP|XFAIL|# )' "$BUILD_DIR/check-pg.out" | tail -n 40
	move_results "$BUILD_DIR" "$PG_RESULTS" "${tests[@]}"
	[ -f "$BUILD_DIR/test-suite-pg.log" ] && mv -f "$BUILD_DIR/test-suite-pg.log" "$PG_RESULTS/"
	move_results "$stash" "$BUILD_DIR" "${tests[@]}"
	rm -rf "$stash"
	pg_stop
	trap - EXIT INT TERM
	pg_pass_ran=1
	if [ $rc != 0 ]; then
		grep -qE '^(PASS|FAIL|XPASS|ERROR|SKIP|XFAIL):' "$BUILD_DIR/check-pg.out" ||
			tail -n 20 "$BUILD_DIR/check-pg.out"
		stage_failed "PostgreSQL: make check"
		return 1
	fi
	return 0
}

if [ "${TH_TEST_PG_PASS:-1}" = 1 ]; then
	say "build/: the store, integration and interop again with PostgreSQL"
	pg_pass
fi

if [ "${TH_TEST_QUICK:-0}" != 1 ]; then
	say "build-asan/ (--enable-sanitizers): make -j$JOBS check"
	sanlogs=$ASAN_DIR/sanitizer-logs
	rm -rf "$sanlogs"
	mkdir -p "$sanlogs"
	# Apache runs its workers as nobody: they must be able to write their reports too.
	chmod 1777 "$sanlogs"
	# Halt at the first error; reports go to files as well, because workers started by
	# lighttpd have no terminal (conf/lighttpd.conf passes these variables on).
	export ASAN_OPTIONS="halt_on_error=1:abort_on_error=0:detect_leaks=1:log_path=$sanlogs/asan"
	export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1:log_path=$sanlogs/ubsan"
	export LSAN_OPTIONS="log_path=$sanlogs/lsan"
	build_and_check "$ASAN_DIR" "build-asan" --enable-werror --enable-sanitizers
	unset ASAN_OPTIONS UBSAN_OPTIONS LSAN_OPTIONS
	# LeakSanitizer checks for leaks as a process exits, by stopping its threads through a
	# tracer. A process ended by a signal in the middle of that (a worker that was leaving
	# as its server stopped) leaves only "Unable to get registers from thread N": no check
	# was made, so it reports nothing. Such a file is named here and left out; any other
	# line in it (a leak, an error) still fails the run.
	for f in "$sanlogs"/lsan.*; do
		[ -e "$f" ] || continue
		if ! grep -qv 'Unable to get registers from thread [0-9]*\.$' "$f"; then
			echo "note: $f: LeakSanitizer could not stop the process to check it (no report)"
			rm -f "$f"
		fi
	done
	if [ -n "$(ls -A "$sanlogs" 2>/dev/null)" ]; then
		for f in "$sanlogs"/*; do
			echo "--- $f"
			head -n 40 "$f"
		done
		stage_failed "build-asan: sanitizer reports in $sanlogs"
	fi

	say "valgrind over the CGI black-box tests"
	vlog=$BUILD_DIR/tests/cgi/cgi-valgrind.log
	mkdir -p "$(dirname "$vlog")"
	if [ -x "$BUILD_DIR/src/tiny-harness" ]; then
		if command -v valgrind >/dev/null 2>&1; then
			TH_SRCDIR=$root TH_BUILDDIR=$BUILD_DIR TH_BIN=$BUILD_DIR/src/tiny-harness \
				TH_WRAP="valgrind --error-exitcode=1 --leak-check=full --errors-for-leak-kinds=definite --track-fds=no -q" \
				bash "$root/tests/cgi/cgi.sh" >"$vlog" 2>&1
			rc=$?
			grep -E '^(ok|not ok|1\.\.)' "$vlog" | tail -n 3
			if [ $rc = 77 ]; then
				echo "skipped: $(head -n1 "$vlog")"
			elif [ $rc != 0 ]; then
				echo "--- $vlog (failures)"
				grep -A 25 '^not ok' "$vlog" | head -n 80
				stage_failed "valgrind: tests/cgi/cgi.sh"
			fi
		else
			echo "valgrind is not installed" >&2
			stage_failed "valgrind: not installed"
		fi
	else
		stage_failed "valgrind: no $BUILD_DIR/src/tiny-harness"
	fi

	say "valgrind over the Check unit suites (no fork, so leaks are seen; $JOBS at a time)"
	if command -v valgrind >/dev/null 2>&1; then
		# vg_unit SUITE — SUITE under valgrind into SUITE-valgrind.log, its exit status
		# into SUITE-valgrind.rc.
		vg_unit() {
			(cd "$BUILD_DIR" && TH_SRCDIR=$root TH_BUILDDIR=$BUILD_DIR CK_FORK=no TH_UNDER_VALGRIND=1 \
				valgrind --error-exitcode=1 --leak-check=full \
				--errors-for-leak-kinds=definite --track-fds=no -q "$1") >"$1-valgrind.log" 2>&1
			echo $? >"$1-valgrind.rc"
		}
		suites=()
		for t in "$BUILD_DIR"/tests/unit/check_*; do
			[ -x "$t" ] && [ -f "$t" ] && suites+=("$t")
		done
		# Each suite is one process: JOBS of them at once keep every CPU busy (make check
		# runs the same suites side by side, so they share nothing that would collide).
		running=0
		for t in "${suites[@]}"; do
			rm -f "$t-valgrind.rc"
			vg_unit "$t" &
			running=$((running + 1))
			if [ $running -ge "$JOBS" ]; then
				wait -n
				running=$((running - 1))
			fi
		done
		wait
		for t in "${suites[@]}"; do
			ulog=$t-valgrind.log
			rc=$(cat "$t-valgrind.rc" 2>/dev/null || echo 1)
			printf '%s: %s\n' "$(basename "$t")" "$(grep -E 'Checks:|skipped' "$ulog" | tail -n 1)"
			# 77: the suite skips itself here (check_pgtrips without PostgreSQL).
			if [ "$rc" != 0 ] && [ "$rc" != 77 ]; then
				tail -n 30 "$ulog"
				stage_failed "valgrind: $(basename "$t")"
			fi
		done
	fi
fi

# ---------------------------------------------------------------- counting
# For each test log: Check's "Checks: N, Failures: F, Errors: E" lines and TAP
# "ok"/"not ok" lines. A test whose .trs says FAIL/ERROR but whose log has no failing
# line counts as one failure (a crash, a missing binary); PASS with no counted line as
# one pass; SKIP as one skip.
declare -A P F S
layers=(unit contract cgi integration interop other)
for l in "${layers[@]}"; do P[$l]=0; F[$l]=0; S[$l]=0; done
failing_logs=()

count_log() { # count_log LOG TRS-RESULT LAYER
	local log=$1 result=$2 layer=$3 p f s
	read -r p f s < <(awk '
		match($0, /Checks: [0-9]+, Failures: [0-9]+, Errors: [0-9]+/) {
			split(substr($0, RSTART, RLENGTH), a, /[^0-9]+/)
			p += a[2] - a[3] - a[4]; f += a[3] + a[4]; next
		}
		/^not ok / { if ($0 ~ /# (TODO|todo)/) next; f++; next }
		/^ok / { if ($0 ~ /# (SKIP|skip)/) s++; else p++; next }
		END { printf "%d %d %d\n", p, f, s }' "$log")
	case $result in
	FAIL | ERROR | XPASS) [ "$f" -gt 0 ] || f=1 ;;
	PASS | XFAIL) [ $((p + f)) -gt 0 ] || p=1 ;;
	SKIP) [ $((p + f + s)) -gt 0 ] || s=1 ;;
	esac
	P[$layer]=$((P[$layer] + p))
	F[$layer]=$((F[$layer] + f))
	S[$layer]=$((S[$layer] + s))
	[ "$f" -gt 0 ] && failing_logs+=("$log")
	return 0
}

for dir in "$BUILD_DIR" "$ASAN_DIR"; do
	[ -d "$dir/tests" ] || continue
	while IFS= read -r trs; do
		log=${trs%.trs}.log
		[ -f "$log" ] || continue
		result=$(sed -n 's/^:test-result: *//p' "$trs" | head -n1)
		rel=${trs#"$dir"/tests/}
		layer=${rel%%/*}
		case " ${layers[*]} " in *" $layer "*) ;; *) layer=other ;; esac
		count_log "$log" "$result" "$layer"
	done < <(find "$dir/tests" -name '*.trs' | sort)
done
# The PostgreSQL pass: its own layers, before "other".
if [ -n "$pg_pass_ran" ] && [ -d "$PG_RESULTS/tests" ]; then
	layers=(unit contract cgi integration interop "unit (PostgreSQL)" "integration (PostgreSQL)"
		"interop (PostgreSQL)" other)
	for l in "unit (PostgreSQL)" "integration (PostgreSQL)" "interop (PostgreSQL)"; do
		P[$l]=0
		F[$l]=0
		S[$l]=0
	done
	while IFS= read -r trs; do
		log=${trs%.trs}.log
		[ -f "$log" ] || continue
		result=$(sed -n 's/^:test-result: *//p' "$trs" | head -n1)
		rel=${trs#"$PG_RESULTS"/tests/}
		layer=${rel%%/*}
		case $layer in unit | integration | interop) layer="$layer (PostgreSQL)" ;; *) layer=other ;; esac
		count_log "$log" "$result" "$layer"
	done < <(find "$PG_RESULTS/tests" -name '*.trs' | sort)
fi
if [ -f "${vlog:-/nonexistent}" ]; then
	vr=PASS
	grep -q '^not ok' "$vlog" && vr=FAIL
	grep -q '^1\.\.0 # SKIP' "$vlog" && vr=SKIP
	count_log "$vlog" "$vr" cgi
fi

say "failing logs"
if [ ${#failing_logs[@]} -eq 0 ]; then
	echo "none"
else
	for log in "${failing_logs[@]}"; do
		echo "--- ${log#"$root"/} (tail)"
		tail -n 40 "$log"
	done
fi

if [ "${TH_TEST_QUICK:-0}" = 1 ]; then
	say "results (${BUILD_DIR#"$root"/})"
else
	say "results (${BUILD_DIR#"$root"/} + ${ASAN_DIR#"$root"/} + valgrind CGI run)"
fi
# The layer column is wider only when the PostgreSQL layers are in the table.
lw=12
[ -n "$pg_pass_ran" ] && lw=24
tp=0 tf=0 ts=0
printf "%-${lw}s %8s %8s %8s\n" layer passed failed skipped
for l in "${layers[@]}"; do
	[ $((P[$l] + F[$l] + S[$l])) -gt 0 ] || [ "$l" != other ] || continue
	printf "%-${lw}s %8d %8d %8d\n" "$l" "${P[$l]}" "${F[$l]}" "${S[$l]}"
	tp=$((tp + P[$l])); tf=$((tf + F[$l])); ts=$((ts + S[$l]))
done
if [ $stage_failures -gt 0 ]; then
	echo "failed stages: ${failed_stages[*]}"
	# A stage that failed without a failing test (build error, sanitizer report)
	# still counts, so the summary never reads "0 failed" on a failed run.
	[ "$tf" -gt 0 ] || tf=$stage_failures
fi
echo "skipped: $ts"
echo "$tp passed, $tf failed"
[ "$tf" -eq 0 ] && [ $stage_failures -eq 0 ]
