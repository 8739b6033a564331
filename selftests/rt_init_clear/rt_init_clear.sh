#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# vm-args: --timing icount --cpus 1
#
# Does a woken real-time task get the CPU while init_on_alloc clears a
# THP?  With init_on_alloc, post_alloc_hook() clears the 512 pages of a
# THP the fault allocates; the 6.12 backport's patch 14 reschedules
# between those pages for a caller that may sleep.  cyclictest (rt-tests)
# runs at SCHED_FIFO 99 on CPU 0 while a program on the same CPU faults
# in FAULT_MB of MADV_HUGEPAGE memory (scripts/guest/thp-fault), over and
# over for SECONDS.  Traced: the switches to the thread
# (sched:sched_switch, next_pid its tid) with a stack trace of the task
# switched out; counted, those whose stack holds get_page_from_freelist():
# the thread got the CPU in the middle of an allocation's preparation,
# where, without preemption, only the clearing's reschedule point can let
# it in.  Counts, not times.
#
# Passes if at least one switch came from there.  Vanilla 6.12 fails it
# (PREEMPT_VOLUNTARY, Debian 13's model: the clearing has no reschedule
# point, and the switch comes after the allocation: 0 of 6,582), as does
# the backport with its first 13 patches; with patch 14, 5,008 of 11,264.
# 7.2 with its series passes it (10,117 of 10,622): every x86 model of
# 7.2 preempts in the clearing, so it needs no patch.  Fails as not
# exercised if no
# THP fault was served or the thread never ran; skips, with the reason,
# without THP, without init_on_alloc, without the event or its stack
# trigger, or if the trace buffer lost events.
#
# Environment (default):
#   FAULT_MB   memory each round faults in, MiB [128]
#   ROUNDS_S   how long the rounds go on, guest s [10]
#   TRACE_KB   trace buffer per CPU, KiB [16384]
set -u
DIR=$(cd "$(dirname "$0")" && pwd)
. "$DIR/../lib/ktap.sh"
FAULT_MB=${FAULT_MB:-128}
ROUNDS_S=${ROUNDS_S:-10}
TRACE_KB=${TRACE_KB:-16384}
EVENT=sched/sched_switch
FN=get_page_from_freelist
DESC="rt_init_clear: a waiting SCHED_FIFO task gets the CPU while init_on_alloc clears a THP"
CYCLIC_PID=

cleanup() {
	stop_background "$CYCLIC_PID"
	trace_events_reset "$EVENT"
	trace_buffer_restore
}
trap cleanup EXIT

# switches_from_alloc: "SWITCHES FROM_ALLOC": the switches to the thread
# in the trace, and those whose stack trace (the " => " lines after the
# event) names $FN
switches_from_alloc() {
	awk -v fn="$FN" '
	/ sched_switch: / { if (hit) n++; sw++; hit = 0; next }
	$1 == "=>" && $2 == fn { hit = 1 }
	END { if (hit) n++; print sw + 0, n + 0 }' "$TRACEFS/trace"
}

main() {
	local tid sw n f0 f1
	ktap_print_header
	command -v cyclictest >/dev/null || skip_all "no cyclictest (rt-tests)"
	! thp_off || skip_all "no transparent huge pages"
	dmesg | grep -q 'mem auto-init:.*heap alloc:on' ||
		skip_all "init_on_alloc is off (dmesg: $(dmesg | grep -o 'mem auto-init:.*' | head -n 1))"
	[ -z "$(trace_missing "$EVENT")" ] || skip_all "no trace event $EVENT"
	ktap_require_uint 4 FAULT_MB
	ktap_require_uint 1 ROUNDS_S TRACE_KB
	ktap_set_plan 1
	start_rt_cyclictest 30 ||
		ktap_exit_fail_msg "$DESC: cyclictest's SCHED_FIFO thread did not start in 30 s"
	tid=$CYCLIC_TID
	trace_buffer_set "$TRACE_KB"
	echo "next_pid == $tid" >"$TRACEFS/events/$EVENT/filter"
	echo "stacktrace if next_pid == $tid" >"$TRACEFS/events/$EVENT/trigger" ||
		ktap_exit_fail_msg "$DESC: no stacktrace trigger on $EVENT"
	f0=$(vmstat_value thp_fault_alloc)
	trace_events 1 "$EVENT"
	"$GUEST/thp-fault" --mb "$FAULT_MB" --seconds "$ROUNDS_S" >/dev/null ||
		ktap_exit_fail_msg "$DESC: thp-fault failed"
	trace_events 0 "$EVENT"
	f1=$(vmstat_value thp_fault_alloc)
	read -r sw n < <(switches_from_alloc)
	ktap_print_msg "$((f1 - f0)) THP faults served in ${ROUNDS_S} s of ${FAULT_MB} MiB rounds;" \
		"$sw switches to the SCHED_FIFO thread, $n of them from inside $FN()"
	if [ "$(trace_overruns)" -gt 0 ]; then
		ktap_test_skip "$DESC: the trace buffer dropped events; raise TRACE_KB"
	elif [ "$((f1 - f0))" -eq 0 ]; then
		ktap_test_fail "$DESC: no THP fault was served, nothing measured"
	elif [ "$sw" -eq 0 ]; then
		ktap_test_fail "$DESC: the thread never ran, nothing measured"
	else
		ktap_test_result "$DESC" [ "$n" -ge 1 ]
	fi
	ktap_finished
}

main
