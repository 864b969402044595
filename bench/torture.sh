#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# bench/torture.sh — the store torture run of tests/integration/torture.mjs for a long time
# (issue 26: at least 30 minutes, any seed) and its figures.
#
#   bench/torture.sh                        1,800 s in phases of 60 s, a random seed
#   SECONDS_=3600 SEED=42 bench/torture.sh  an hour with seed 42
#   BUILD=/path/to/other/build bench/torture.sh   another build (e.g. a landed commit)
#
# Knobs: SECONDS_ (TH_TORTURE_SECONDS, default 1800), PHASE (TH_TORTURE_PHASE_SECONDS, 60),
# SEED (TH_TORTURE_SEED), CLIENTS (6), PROCS (3), FS_MB (the tmpfs under the database as
# root, 1024; it grows between phases), BUILD (default build/), NO_SAVE=1 (print only).
# The TAP output goes to the terminal and, with the figures as JSON, to
# bench/results/torture-<date>.txt and .json. Loopback only; it stops by itself.
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILD:-$root/build}
export TH_BIN=${TH_BIN:-$BUILD/src/tiny-harness} TH_SRCDIR=$root TH_BUILDDIR=$BUILD
export TH_TORTURE_SECONDS=${SECONDS_:-1800}
export TH_TORTURE_PHASE_SECONDS=${PHASE:-60}
export TH_TORTURE_CLIENTS=${CLIENTS:-6} TH_TORTURE_PROCS=${PROCS:-3} TH_TORTURE_FS_MB=${FS_MB:-1024}
[ -z "${SEED:-}" ] || export TH_TORTURE_SEED=$SEED
[ -x "$TH_BIN" ] || { echo "torture: no program at $TH_BIN (build first)" >&2; exit 1; }
stamp=$(date -u +%Y-%m-%d-%H%M)
if [ "${NO_SAVE:-0}" = 1 ]; then
	out=/dev/null
	unset TH_TORTURE_REPORT
else
	mkdir -p "$root/bench/results"
	out=$root/bench/results/torture-$stamp.txt
	export TH_TORTURE_REPORT=$root/bench/results/torture-$stamp.json
fi
{
	echo "# torture run $stamp: commit $(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo '?'), $(nproc) CPUs, $(sqlite3 --version | cut -d' ' -f1)"
	node "$root/tests/integration/torture.mjs"
	rc=$?
	echo "# exit $rc"
	exit "$rc"
} 2>&1 | tee "$out"
exit "${PIPESTATUS[0]}"
