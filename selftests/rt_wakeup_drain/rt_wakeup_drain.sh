#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# vm-args: --timing icount --cpus 1
#
# (scripts/check runs this test in a VM of its own under QEMU's icount
# mode, with one CPU.  It orders events by their time against the timer's
# expiry; under multi-threaded TCG guest time is host time, and a loaded
# host delivers the timer milliseconds late while compaction goes on, so
# even a kernel that yields at once failed it.)
#
# Does a woken real-time task get the CPU within one pcp batch of page
# freeing?  Compaction frees its migrated pages through the per-CPU page
# lists, and a full list goes back to the buddy allocator hundreds of
# pages at a time; the vmstat worker's decay_pcp_high() does the same.
# Dropping zone->lock between batches lets interrupts in, so the timer
# that wakes a SCHED_FIFO thread fires, but without preemption
# (PREEMPT_VOLUNTARY, Debian's default) the thread runs only at the next
# reschedule point, after the last page.
#
# Counts, not times, so host noise cannot decide the result: cyclictest
# (rt-tests) runs at SCHED_FIFO 99 on CPU 0 while "echo 1 >
# /proc/sys/vm/compact_memory", also on CPU 0, compacts fragmented memory.
# On CPU 0, with the trace clock set to CLOCK_MONOTONIC, the thread's
# timer (timer:hrtimer_start, whose "expires" is on that clock), the pages
# returned (kmem:mm_page_pcpu_drain, one event per block) and the switch to
# the thread (sched:sched_switch) are traced.  For each period, the blocks
# drained after the timer expired and before the thread ran are counted:
# they were freed while the thread waited, whether for interrupts (the
# timer fires late) or for the CPU (the wakeup waits for a reschedule
# point).  The case passes if no period saw more than two pcp batches (the
# batch under way when the timer expired, and one more) of the largest
# batch in /proc/zoneinfo.  Vanilla 6.12 and series v5 fail it: one hold
# or one call frees up to batch << CONFIG_PCP_BATCH_SCALE_MAX pages.
# Vanilla 7.2 passes it, as it should: upstream batches the free
# (91e691296646), and every x86 preemption model of 7.2 is preemptible,
# so the woken thread runs at the first unlock.
#
# Environment (default):
#   FRAG_MB    memory to fragment, MiB [40% of MemFree]
#   TRACE_KB   trace buffer per CPU, KiB [65536]
set -u
DIR=$(cd "$(dirname "$0")" && pwd)
. "$DIR/../lib/ktap.sh"
FRAG_MB=${FRAG_MB:-$(($(meminfo_mb MemFree) * 4 / 10))}
TRACE_KB=${TRACE_KB:-65536}
T=/sys/kernel/tracing
EVENTS="timer/hrtimer_start sched/sched_switch kmem/mm_page_pcpu_drain"
DESC="rt_wakeup_drain: a waiting SCHED_FIFO task waits through at most two pcp batches of page freeing"
CLOCK0=
CYCLIC_PID=

cleanup() {
	local e
	[ -z "$CYCLIC_PID" ] || { kill "$CYCLIC_PID" 2>/dev/null; wait "$CYCLIC_PID" 2>/dev/null; }
	# shellcheck disable=SC2086 # EVENTS is a list
	trace_events 0 $EVENTS
	for e in $EVENTS; do
		[ ! -w "$T/events/$e/filter" ] || echo 0 >"$T/events/$e/filter"
	done
	trace_buffer_restore
	[ -z "$CLOCK0" ] || echo "$CLOCK0" >"$T/trace_clock"
	stop_fragment
}
trap cleanup EXIT

# skip_all REASON: the test cannot run here (before the plan)
skip_all() {
	ktap_skip_all "$DESC: $1"
	exit "$KSFT_SKIP"
}

# From CPU 0's trace: "PERIODS MAX", the periods of the thread (a timer
# start, then the switch to it) and the most blocks drained in one of them
# after its timer expired.  Timestamps and "expires" are both
# CLOCK_MONOTONIC; the timestamps have microseconds.
drain_while_waiting() {
	awk -v pid="$1" '
	function ts(line) { match(line, /[0-9]+\.[0-9]+: /); return substr(line, RSTART, RLENGTH - 2) * 1e6 }
	/ hrtimer_start: / && $0 ~ /function=hrtimer_wakeup / {
		match($0, /expires=[0-9]+/); expires = substr($0, RSTART + 8, RLENGTH - 8) / 1000
		armed = 1; n = 0; next
	}
	/ mm_page_pcpu_drain: / { if (armed && ts($0) >= expires) n++; next }
	/ sched_switch: / && $0 ~ ("next_pid=" pid " ") {
		if (armed) { periods++; if (n > max) max = n }
		armed = 0; n = 0
	}
	END { print periods + 0, max + 0 }' "$T/per_cpu/cpu0/trace"
}

# cyclictest's thread: the one of its tasks at SCHED_FIFO
rt_thread() {
	local tid
	for tid in $(ls "/proc/$CYCLIC_PID/task"); do
		[ "$(awk '{ print $41 }' "/proc/$CYCLIC_PID/task/$tid/stat")" = 1 ] && { echo "$tid"; return; }
	done
}

# wait_rt_thread S: rt_thread, waited for up to S seconds: cyclictest
# locks its memory (-m) before its thread starts, which takes a while
# beside the fill on one CPU; nothing if cyclictest exited
wait_rt_thread() {
	local tid n=0
	while [ $n -lt $(($1 * 2)) ] && kill -0 "$CYCLIC_PID" 2>/dev/null; do
		sleep 0.5
		tid=$(rt_thread)
		[ -z "$tid" ] || { echo "$tid"; return; }
		n=$((n + 1))
	done
}

main() {
	local batch tid periods max lost missing
	ktap_print_header
	[ -w /proc/sys/vm/compact_memory ] || skip_all "no /proc/sys/vm/compact_memory (CONFIG_COMPACTION off)"
	command -v cyclictest >/dev/null || skip_all "no cyclictest (rt-tests)"
	# shellcheck disable=SC2086 # EVENTS is a list
	missing=$(trace_missing $EVENTS)
	[ -z "$missing" ] || skip_all "no trace event $missing"
	ktap_require_uint 1 FRAG_MB TRACE_KB
	ktap_set_plan 1
	batch=$(pcp_largest_batch)
	start_fragment --mb "$FRAG_MB" --pattern random >/dev/null 2>&1 ||
		ktap_exit_fail_msg "$DESC: fragment died: $(tail -n 1 "$FRAG_LOG")"
	cyclictest -m -p 99 -i 1000 -t 1 -a 0 -q >/dev/null 2>&1 &
	CYCLIC_PID=$!
	tid=$(wait_rt_thread 30)
	[ -n "$tid" ] || ktap_exit_fail_msg "$DESC: cyclictest's SCHED_FIFO thread did not start in 30 s"
	trace_buffer_set "$TRACE_KB"
	CLOCK0=$(sed 's/.*\[\(.*\)\].*/\1/' "$T/trace_clock")
	echo mono >"$T/trace_clock"
	echo "common_pid == $tid" >"$T/events/timer/hrtimer_start/filter"
	echo "next_pid == $tid" >"$T/events/sched/sched_switch/filter"
	# shellcheck disable=SC2086 # EVENTS is a list
	trace_events 1 $EVENTS
	taskset -c 0 sh -c 'echo 1 >/proc/sys/vm/compact_memory'
	# shellcheck disable=SC2086
	trace_events 0 $EVENTS
	lost=$(trace_overruns)
	read -r periods max < <(drain_while_waiting "$tid")
	ktap_print_msg "$(sed -n 's/^fragment: //p' "$FRAG_LOG");" \
		"$periods periods of the SCHED_FIFO thread on CPU 0, at most $max" \
		"pcp blocks drained in one after its timer expired; largest pcp batch $batch"
	if [ "$lost" -gt 0 ]; then
		ktap_test_skip "$DESC: the trace buffer dropped $lost events; raise TRACE_KB"
	elif [ "$periods" -eq 0 ]; then
		ktap_test_fail "$DESC: no period of the thread on CPU 0 traced, nothing measured"
	else
		ktap_test_result "$DESC" [ "$max" -le $((2 * batch)) ]
	fi
	ktap_finished
}

main
