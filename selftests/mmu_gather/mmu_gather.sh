#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# vm-args: --cpus 1
#
# Does munmap() of THP memory reach a reschedule point every 512 base
# pages, or every 512 THPs?  tlb_batch_pages_flush() frees the pages it
# gathered in chunks, one free_pages_and_swap_cache() call each, with
# cond_resched() in between; on a kernel without preemption
# (PREEMPT_VOLUNTARY, 6.12's Debian default) a task woken meanwhile waits
# for the chunk.  A PMD-mapped THP is gathered as one entry.
#
# Counts, not times: a process faults in THP_MB of MADV_HUGEPAGE memory
# and unmaps it; in it, every call of free_pages_and_swap_cache() (the
# function tracer) and every page freed (kmem:mm_page_free, with its
# order and a stack trace) is traced, and the base pages each call freed
# (those whose stack has the function) are summed.  Pages the process
# frees elsewhere are not the chunk's: on the debug config, KASAN's
# quarantine frees slab pages from the process's own allocations between
# two calls.  Passes if no chunk freed more than 1023 pages: the limit
# (MAX_NR_PAGES_PER_FREE, 512) counted in base pages ends a chunk at the
# first entry that reaches it, so at most 511 + 512.  Vanilla 6.12 fails
# it, with chunks of over a hundred THPs.  On 7.2 the chunk's size does not
# hold a woken task off the CPU (every x86 model preempts), which
# patches/7.2/known-failures says.  It fails as not exercised if fewer
# than 16 THPs were faulted or no free inside a call was traced, and
# skips without THP or the tracing it needs.
#
# Environment (default):
#   THP_MB     memory to fault in as THPs and unmap, MiB [256]
#   TRACE_KB   trace buffer per CPU, KiB [65536]
set -u
DIR=$(cd "$(dirname "$0")" && pwd)
. "$DIR/../lib/ktap.sh"
THP_MB=${THP_MB:-256}
TRACE_KB=${TRACE_KB:-65536}
T=$TRACEFS
FN=free_pages_and_swap_cache
EVENT=kmem/mm_page_free
# twice MAX_NR_PAGES_PER_FREE, less one
LIMIT=1023
DESC="mmu_gather: munmap() of THPs frees at most 1023 base pages between reschedule points"

cleanup() {
	trace_events_reset "$EVENT"
	function_trace_off
	trace_buffer_restore
}
trap cleanup EXIT

# chunks: from the trace, "CHUNKS MAX", the calls of FN and the most base
# pages freed inside one: a page counts for the call before it if the
# stack of its mm_page_free event has FN
chunks() {
	awk -v fn="$FN" '
	function close_chunk() { if (n > max) max = n; n = 0 }
	# the stack of a free ends at the first line that is not of it
	function end_free() { if (pages && inside) n += pages; pages = 0; inside = 0 }
	/^ => / { if (!irq && $2 == fn) inside = 1; next }
	# a free in an interrupt (flags h, s or H) and its stack are not the
	# call, though they carry the pid of the task, and its frames too
	$3 ~ /[hsH]/ { irq = 1; next }
	{ irq = 0 }
	/<stack trace>/ { next }
	{ end_free() }
	$0 ~ (": " fn " <-") { close_chunk(); calls++; next }
	/ mm_page_free: / {
		match($0, /order=[0-9]+/); pages = 2 ^ substr($0, RSTART + 6, RLENGTH - 6)
	}
	END { end_free(); close_chunk(); print calls + 0, max + 0 }' "$T/trace"
}

main() {
	local before after thps calls max lost
	ktap_print_header
	! thp_off || skip_all "no transparent huge pages"
	[ -z "$(trace_missing "$EVENT")" ] || skip_all "no trace event $EVENT"
	function_traceable "$FN" ||
		skip_all "the function tracer cannot trace $FN()"
	[ -w "$T/events/$EVENT/trigger" ] || skip_all "no event triggers for $EVENT"
	ktap_require_uint 16 THP_MB
	ktap_require_uint 1 TRACE_KB
	ktap_set_plan 1
	trace_buffer_set "$TRACE_KB"
	before=$(vmstat_snapshot thp_fault_alloc)
	# the process names itself to both tracers, then becomes thp-fault
	(
		echo "$BASHPID" >"$T/set_ftrace_pid"
		echo "common_pid == $BASHPID" >"$T/events/$EVENT/filter"
		echo "stacktrace if common_pid == $BASHPID" >"$T/events/$EVENT/trigger"
		function_trace_on "$FN"
		trace_events 1 "$EVENT"
		exec "$GUEST/thp-fault" --mb "$THP_MB"
	) >/dev/null
	trace_events 0 "$EVENT"
	after=$(vmstat_snapshot thp_fault_alloc)
	thps=$(vmstat_delta "$before" "$after" | awk '$1 == "thp_fault_alloc:" { print $2 }')
	lost=$(trace_overruns)
	read -r calls max < <(chunks)
	# only now: a change of tracer empties the buffer
	function_trace_off
	ktap_print_msg "${thps:-0} THPs faulted and unmapped; $calls calls of $FN()," \
		"at most $max base pages freed in one"
	if [ "$lost" -gt 0 ]; then
		ktap_test_skip "$DESC: the trace buffer dropped $lost events; raise TRACE_KB"
	elif [ "${thps:-0}" -lt 16 ] || [ "$calls" -eq 0 ]; then
		ktap_test_fail "$DESC: too few THPs faulted (${thps:-0}), nothing measured"
	elif [ "$max" -eq 0 ]; then
		ktap_test_fail "$DESC: no page freed inside $FN() traced (no stack traces?)"
	else
		ktap_test_result "$DESC" [ "$max" -le "$LIMIT" ]
	fi
	ktap_finished
}

main
