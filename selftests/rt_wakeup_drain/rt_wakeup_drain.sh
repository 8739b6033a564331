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
# Does a woken real-time task get the CPU within one pcp batch, or one
# zone->lock hold, of page freeing?  cyclictest (rt-tests) runs at
# SCHED_FIFO 99 on CPU 0 while compaction, also on CPU 0, frees the pages
# it migrated from through the per-CPU page lists.  On CPU 0, with the
# trace clock set to CLOCK_MONOTONIC, the thread's timer
# (timer:hrtimer_start, whose "expires" is on that clock), the switch to
# the thread (sched:sched_switch) and the pages freed are traced; for each
# period of the thread, what was freed after its timer expired and before
# it ran is counted.  Counts, not times, so host noise cannot decide a
# result.
#
#  1. compact_memory over fragmented memory.  A full list goes back to the
#     buddy allocator hundreds of pages at a time, and without preemption
#     (PREEMPT_VOLUNTARY, 6.12's Debian default) the woken thread runs only
#     at the next reschedule point.  Counted: the blocks returned
#     (kmem:mm_page_pcpu_drain, one event per block).  Passes if no period
#     saw more than two pcp batches (the one under way, and one more) of
#     the largest batch in /proc/zoneinfo.  Vanilla 6.12 fails it; vanilla
#     7.2 passes it, as it should: upstream batches the free
#     (91e691296646), and every x86 preemption model of 7.2 preempts at
#     the first unlock.
#  2. THP faults (MADV_HUGEPAGE) that compact freshly fragmented memory.
#     Compaction at order > 0 drains the local lists after every pageblock
#     it migrated from, in lru_add_drain_cpu_zone(), whose lru local lock
#     keeps preemption off on !PREEMPT_RT for the whole drain.  Counted:
#     the calls of free_pcppages_bulk() begun (function tracer), one per
#     pcp lock hold of a drain (on vanilla, one zone->lock hold each; with
#     the series' patch 4 a call takes zone->lock once per batch).
#     Passes if no period saw more than two.  Vanilla 7.2 fails it: a
#     drain of an auto-tuned list is tens of calls.
#  3. The same periods, counted as in 1: the blocks drained.  Passes if no
#     period saw more than two pcp batches.  Each call that case 2 counts
#     frees up to batch << CONFIG_PCP_BATCH_SCALE_MAX pages under the pcp
#     lock, which keeps preemption off on !PREEMPT_RT, so vanilla 7.2
#     fails it (47,062 blocks in one wait), and so does a kernel that only
#     moved the drain out of the lru lock and bounded its zone->lock holds
#     (2,012): it passes only if the drain stops for a task that waits.
#
# Each case fails as not exercised if no period of the thread was traced,
# and skips, with the reason, if the trace buffer lost events; cases 2
# and 3 skip without THP or if free_pcppages_bulk() cannot be traced.
#
# Environment (default):
#   FRAG_MB    memory to fragment, MiB [40% of MemFree]
#   THP_MB     memory to fault in as THPs in case 2, MiB [the free order-9
#              blocks plus 256 MiB, so that the last 256 MiB need compaction]
#   TRACE_KB   trace buffer per CPU, KiB [65536]
set -u
DIR=$(cd "$(dirname "$0")" && pwd)
. "$DIR/../lib/ktap.sh"
FRAG_MB=${FRAG_MB:-$(($(meminfo_mb MemFree) * 4 / 10))}
THP_MB=${THP_MB:-}
TRACE_KB=${TRACE_KB:-65536}
T=/sys/kernel/tracing
EVENTS="timer/hrtimer_start sched/sched_switch kmem/mm_page_pcpu_drain"
HOLD_FN=free_pcppages_bulk
DESC="rt_wakeup_drain: a waiting SCHED_FIFO task waits through at most two pcp batches of page freeing"
DESC1="rt_wakeup_drain: compact_memory: a waiting SCHED_FIFO task waits through at most two pcp batches of page freeing"
DESC2="rt_wakeup_drain: THP-fault compaction: a waiting SCHED_FIFO task waits through at most two pcp drain calls"
DESC3="rt_wakeup_drain: THP-fault compaction: a waiting SCHED_FIFO task waits through at most two pcp batches of page freeing"
CLOCK0=
CYCLIC_PID=

cleanup() {
	stop_background "$CYCLIC_PID"
	# shellcheck disable=SC2086 # EVENTS is a list
	trace_events_reset $EVENTS
	function_trace_off
	trace_buffer_restore
	[ -z "$CLOCK0" ] || echo "$CLOCK0" >"$T/trace_clock"
	stop_fragment
}
trap cleanup EXIT

# From CPU 0's trace: "PERIODS BLOCKS HOLDS WHERE", the periods of the
# thread (a timer start, then the switch to it), and the most blocks
# drained and the most pcp drain calls begun (HOLD_FN called) in one of
# them after its timer expired; WHERE names the callers of the holds in
# the period with the most of them ("-" if none was traced), from the
# function tracer's stack traces.  Timestamps and "expires" are both
# CLOCK_MONOTONIC; the timestamps have microseconds.
drain_while_waiting() {
	awk -v pid="$1" '
	function ts(line) { match(line, /[0-9]+\.[0-9]+: /); return substr(line, RSTART, RLENGTH - 2) * 1e6 }
	function where(  k, s) { s = ""; for (k in calls) s = s (s == "" ? "" : ",") k "*" calls[k]; return s }
	function reset() { n = 0; h = 0; frames = 0; split("", calls) }
	# the stack of a counted hold ends at the first line that is not of it
	frames && !/^ => / && !/<stack trace>/ { calls[stack]++; frames = 0 }
	/ hrtimer_start: / && $0 ~ /function=hrtimer_wakeup / {
		match($0, /expires=[0-9]+/); expires = substr($0, RSTART + 8, RLENGTH - 8) / 1000
		armed = 1; reset(); next
	}
	/ mm_page_pcpu_drain: / { if (armed && ts($0) >= expires) n++; next }
	$0 ~ (": " fn " <-") {
		if (armed && ts($0) >= expires) { h++; frames = 1; stack = "" }
		next
	}
	# its first twelve callers, innermost first
	/^ => / {
		if (frames && frames <= 12 && $2 != fn) { stack = stack (stack == "" ? "" : "<") $2; frames++ }
		next
	}
	/ sched_switch: / && $0 ~ ("next_pid=" pid " ") {
		if (armed) {
			periods++
			if (n > max) max = n
			if (h > hmax) { hmax = h; maxwhere = where() }
		}
		armed = 0; reset()
	}
	END { print periods + 0, max + 0, hmax + 0, (maxwhere == "" ? "-" : maxwhere) }' fn="$HOLD_FN" "$T/per_cpu/cpu0/trace"
}

# traced_run TID CMD...: run CMD (a shell function) on CPU 0 with the
# thread's timer, the switches to it and the pcp drains traced (and
# HOLD_FN, if the function tracer was set up); then "LOST PERIODS BLOCKS
# HOLDS WHERE"
traced_run() {
	local tid=$1 lost
	shift
	trace_buffer_set "$TRACE_KB"
	echo "common_pid == $tid" >"$T/events/timer/hrtimer_start/filter"
	echo "next_pid == $tid" >"$T/events/sched/sched_switch/filter"
	# shellcheck disable=SC2086 # EVENTS is a list
	trace_events 1 $EVENTS
	# CMD is a shell function: pin the subshell that runs it
	(taskset -pc 0 "$BASHPID" >/dev/null && "$@") >/dev/null
	# shellcheck disable=SC2086
	trace_events 0 $EVENTS
	lost=$(trace_overruns)
	echo "$lost $(drain_while_waiting "$tid")"
}

# judge DESC LOST PERIODS COUNT LIMIT
judge() {
	ktap_count_result "$1" "$2" "$3" "no period of the thread on CPU 0 traced" "$4" "$5"
}

compact_memory() { echo 1 >/proc/sys/vm/compact_memory; }

# say_where COUNT LIMIT WHERE: over the limit, name the callers of the
# holds in the period with the most (the function tracer's, if it is on)
say_where() {
	[ "$1" -gt "$2" ] && [ "$3" != - ] || return 0
	ktap_print_msg "callers of the pcp drain calls in the period with the most" \
		"(innermost first, *count): $3"
}

case_compact_memory() {
	local tid=$1 batch lost periods blocks holds where
	batch=$(pcp_largest_batch)
	# the holds' callers are only a diagnosis here: trace them if we can
	function_trace_on "$HOLD_FN" stack || true
	read -r lost periods blocks holds where < <(traced_run "$tid" compact_memory)
	function_trace_off
	ktap_print_msg "$(sed -n 's/^fragment: //p' "$FRAG_LOG");" \
		"$periods periods of the SCHED_FIFO thread on CPU 0, at most $blocks" \
		"pcp blocks drained in one after its timer expired; largest pcp batch $batch"
	say_where "$blocks" $((2 * batch)) "$where"
	judge "$DESC1" "$lost" "$periods" "$blocks" $((2 * batch))
}

# both_skip REASON: cases 2 and 3 cannot run
both_skip() {
	ktap_test_skip "$DESC2: $1"
	ktap_test_skip "$DESC3: $1"
}

# both_fail REASON: cases 2 and 3 failed before measuring
both_fail() {
	ktap_test_fail "$DESC2: $1"
	ktap_test_fail "$DESC3: $1"
}

case_thp_faults() {
	local tid=$1 batch lost periods blocks holds where
	batch=$(pcp_largest_batch)
	if thp_off; then
		both_skip "no transparent huge pages"
		return
	fi
	stop_fragment
	if ! start_fragment --mb "$FRAG_MB" --pattern random >/dev/null 2>&1; then
		both_fail "fragment died: $(tail -n 1 "$FRAG_LOG")"
		return
	fi
	if ! function_trace_on "$HOLD_FN" stack; then
		both_skip "the function tracer cannot trace $HOLD_FN()"
		return
	fi
	prepare_compaction_trigger thp-faults
	read -r lost periods blocks holds where < <(traced_run "$tid" run_compaction_trigger thp-faults)
	function_trace_off
	ktap_print_msg "$THP_MB MiB of THP faults; $periods periods of the SCHED_FIFO thread" \
		"on CPU 0, at most $holds pcp drain calls begun in one after its timer" \
		"expired, at most $blocks pcp blocks drained in one; largest pcp batch $batch"
	say_where "$holds" 2 "$where"
	judge "$DESC2" "$lost" "$periods" "$holds" 2
	judge "$DESC3" "$lost" "$periods" "$blocks" $((2 * batch))
}

main() {
	local tid missing
	ktap_print_header
	[ -w /proc/sys/vm/compact_memory ] || skip_all "no /proc/sys/vm/compact_memory (CONFIG_COMPACTION off)"
	command -v cyclictest >/dev/null || skip_all "no cyclictest (rt-tests)"
	# shellcheck disable=SC2086 # EVENTS is a list
	missing=$(trace_missing $EVENTS)
	[ -z "$missing" ] || skip_all "no trace event $missing"
	ktap_require_uint 1 FRAG_MB TRACE_KB
	[ -z "$THP_MB" ] || ktap_require_uint 1 THP_MB
	ktap_set_plan 3
	start_fragment --mb "$FRAG_MB" --pattern random >/dev/null 2>&1 ||
		ktap_exit_fail_msg "$DESC: fragment died: $(tail -n 1 "$FRAG_LOG")"
	start_rt_cyclictest 30 ||
		ktap_exit_fail_msg "$DESC: cyclictest's SCHED_FIFO thread did not start in 30 s"
	tid=$CYCLIC_TID
	CLOCK0=$(sed 's/.*\[\(.*\)\].*/\1/' "$T/trace_clock")
	echo mono >"$T/trace_clock"
	case_compact_memory "$tid"
	case_thp_faults "$tid"
	ktap_finished
}

main
