# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
# bench/lib.sh — helpers the benchmark scripts share; sourced (bash) after they set root.
#
#   to_ms VALUE        wrk's latency text (850.00us, 2.31ms, 1.02s, 1.10m) in milliseconds,
#                      three decimals; "" when it is none of these
#   median N…          the median of the numbers given, two decimals; "" for none
#   cpu_ticks_of PID…  the user + system clock ticks (CLK_TCK) the processes have used;
#                      a process that is gone counts 0
#   reaped_ticks_of PID  the same for the children PID has waited for (cutime + cstime)
#   sched_note         "scheduler autogroup on" / "off" / "n/a": the kernel shares the CPUs
#                      between sessions when it is on, and tests/lib/pg.sh starts PostgreSQL
#                      in a session of its own (bench/README.md, PostgreSQL's tail)

to_ms() {
	awk -v v="$1" 'BEGIN {
		if (v ~ /us$/) printf "%.3f", v / 1000; else if (v ~ /ms$/) printf "%.3f", v + 0;
		else if (v ~ /s$/) printf "%.3f", v * 1000; else if (v ~ /m$/) printf "%.3f", v * 60000;
		else print "" }'
}
median() {
	[ $# -gt 0 ] || { echo; return; }
	printf '%s\n' "$@" | sort -g | awk '{ a[NR] = $1 } END {
		if (NR % 2) printf "%.2f", a[(NR + 1) / 2]; else printf "%.2f", (a[NR / 2] + a[NR / 2 + 1]) / 2 }'
}
# stat_sum PID A B: fields A + B of /proc/PID/stat, counted as proc(5) does, read after
# the ")" that ends the process name (which may hold spaces); 0 for a process that is gone.
stat_sum() {
	sed 's/^.*) //' /proc/"$1"/stat 2>/dev/null | awk -v a="$2" -v b="$3" '{ s = $(a - 2) + $(b - 2) } END { print s + 0 }'
}
cpu_ticks_of() {
	local p sum=0
	for p in "$@"; do
		sum=$((sum + $(stat_sum "$p" 14 15))) # utime, stime
	done
	echo "$sum"
}
reaped_ticks_of() { stat_sum "$1" 16 17; } # cutime, cstime
sched_note() {
	case $(cat /proc/sys/kernel/sched_autogroup_enabled 2>/dev/null) in
	1) echo "scheduler autogroup on" ;;
	0) echo "scheduler autogroup off" ;;
	*) echo "scheduler autogroup n/a" ;;
	esac
}
