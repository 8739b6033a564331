#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# vm-args: --timing icount --cpus 1
#
# Does a woken real-time task wait for khugepaged to isolate a whole
# PMD's worth of folios?  collapse_huge_page() isolates the folios of
# the range it collapses one by one, under the page table lock, which
# keeps preemption off on !PREEMPT_RT: a thread woken meanwhile gets the
# CPU only once all of them are isolated (the lock's unlock is its first
# chance on the lazy and full models).  cyclictest (rt-tests) runs at
# SCHED_FIFO 99 on CPU 0 while khugepaged, on the same CPU, collapses
# COLLAPSE_MB of PTE-mapped anonymous memory (scripts/guest/fragment:
# faulted in under MADV_NOHUGEPAGE, one page in 512 freed, then made
# eligible with --collapse), with its scan sleep at 0 for the test.
# Traced: the thread's wakings (sched:sched_waking) and the switches to
# it (sched:sched_switch), and khugepaged's calls of folio_isolate_lru()
# (function tracer, khugepaged's pid only); for each wait of the thread,
# its waking to its switch-in, the isolations counted.  Counts, not
# times.
#
# Passes if no wait saw more than two isolations: the folio being
# isolated when the thread woke, and at most one more.  Vanilla 7.2
# fails it (511 in one wait), and so does 6.12 with its backport's first
# 12 patches (506); the 7.2 series' patch 7 and the backport's patch 13
# make it pass.
# Fails as not exercised if khugepaged was never running when the thread
# woke; skips, with the reason, without THP, khugepaged, the trace
# events or a traceable folio_isolate_lru(), or if the trace buffer lost
# events.
#
# Environment (default):
#   COLLAPSE_MB   memory for khugepaged to collapse, MiB [128]
#   WAIT_S        how long to wait for the collapses, guest s [120]
#   TRACE_KB      trace buffer per CPU, KiB [65536]
set -u
DIR=$(cd "$(dirname "$0")" && pwd)
. "$DIR/../lib/ktap.sh"
COLLAPSE_MB=${COLLAPSE_MB:-128}
WAIT_S=${WAIT_S:-120}
TRACE_KB=${TRACE_KB:-65536}
KH=/sys/kernel/mm/transparent_hugepage/khugepaged
EVENTS="sched/sched_waking sched/sched_switch"
FN=folio_isolate_lru
LIMIT=2
DESC="rt_collapse_wait: a waiting SCHED_FIFO task waits through at most two folio isolations of a khugepaged collapse"
CYCLIC_PID=
SLEEP0=

cleanup() {
	stop_background "$CYCLIC_PID"
	[ -z "$SLEEP0" ] || echo "$SLEEP0" >"$KH/scan_sleep_millisecs"
	# shellcheck disable=SC2086 # EVENTS is a list
	trace_events_reset $EVENTS
	function_trace_off
	trace_buffer_restore
	stop_fragment
}
trap cleanup EXIT

# anon_huge_kb PID: the process's memory in THPs, KiB
anon_huge_kb() { awk '/^AnonHugePages:/ { s += $2 } END { print s + 0 }' "/proc/$1/smaps"; }

# waits_for_isolation TID KHUGEPAGED: from the trace, "WAITS KWAITS MAX":
# the thread's waits (its waking, then the switch to it), those that began
# with khugepaged on the CPU, and the most isolations by khugepaged in one
waits_for_isolation() {
	awk -v tid="$1" -v kh="khugepaged-$2 " -v fn="$FN" '
	/ sched_waking: / { armed = 1; n = 0; byk = (index($0, kh) > 0); next }
	$0 ~ (": " fn " <-") { if (armed) n++; next }
	/ sched_switch: / && $0 ~ ("next_pid=" tid " ") {
		if (armed) { waits++; if (byk) kwaits++; if (n > max) max = n }
		armed = 0
	}
	END { print waits + 0, kwaits + 0, max + 0 }' "$TRACEFS/trace"
}

main() {
	local tid kpid missing waits kwaits max huge n=0
	ktap_print_header
	command -v cyclictest >/dev/null || skip_all "no cyclictest (rt-tests)"
	! thp_off || skip_all "no transparent huge pages"
	[ -w "$KH/scan_sleep_millisecs" ] || skip_all "no khugepaged settings ($KH)"
	kpid=$(thread_pid khugepaged)
	[ -n "$kpid" ] || skip_all "no khugepaged thread"
	# shellcheck disable=SC2086 # EVENTS is a list
	missing=$(trace_missing $EVENTS)
	[ -z "$missing" ] || skip_all "no trace event $missing"
	function_traceable "$FN" || skip_all "the function tracer cannot trace $FN()"
	ktap_require_uint 4 COLLAPSE_MB
	ktap_require_uint 1 WAIT_S TRACE_KB
	ktap_set_plan 1
	start_rt_cyclictest 30 ||
		ktap_exit_fail_msg "$DESC: cyclictest's SCHED_FIFO thread did not start in 30 s"
	tid=$CYCLIC_TID
	start_fragment --mb "$COLLAPSE_MB" --pattern stride --stride 512 --collapse >/dev/null ||
		ktap_exit_fail_msg "$DESC: fragment died: $(tail -n 1 "$FRAG_LOG")"
	trace_buffer_set "$TRACE_KB"
	echo "pid == $tid" >"$TRACEFS/events/sched/sched_waking/filter"
	echo "next_pid == $tid" >"$TRACEFS/events/sched/sched_switch/filter"
	echo "$kpid" >"$TRACEFS/set_ftrace_pid"
	function_trace_on "$FN" ||
		ktap_exit_fail_msg "$DESC: the function tracer would not trace $FN()"
	# shellcheck disable=SC2086
	trace_events 1 $EVENTS
	read -r SLEEP0 <"$KH/scan_sleep_millisecs"
	echo 0 >"$KH/scan_sleep_millisecs"
	while [ $((huge = $(anon_huge_kb "$FRAG_PID"))) -lt $((COLLAPSE_MB * 1024 / 2)) ] &&
		[ "$n" -lt "$WAIT_S" ]; do
		sleep 1
		n=$((n + 1))
	done
	# shellcheck disable=SC2086
	trace_events 0 $EVENTS
	read -r waits kwaits max < <(waits_for_isolation "$tid" "$kpid")
	ktap_print_msg "$COLLAPSE_MB MiB to collapse; the process had $((huge / 1024)) MiB in THPs after ${n} s;" \
		"$waits waits of the SCHED_FIFO thread, $kwaits of them begun in khugepaged;" \
		"at most $max folios isolated by khugepaged in one"
	ktap_count_result "$DESC" "$(trace_overruns)" "$kwaits" \
		"the thread never woke while khugepaged ran" "$max" "$LIMIT"
	ktap_finished
}

main
