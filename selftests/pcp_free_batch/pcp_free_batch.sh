#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Does free_pcppages_bulk() give zone->lock, and with it interrupts, back
# between batches?  Migration during compaction frees its source pages
# through the per-CPU page lists, and a full list goes back to the buddy
# allocator in free_pcppages_bulk(); vanilla 6.12 returns it under one
# hold of zone->lock with IRQs off, hundreds of pages at a time (the
# 1.2 ms section of the bench's "compact" workload, in guest time).
#
# Counts, not times, so host noise cannot decide the result: while
# "echo 1 > /proc/sys/vm/compact_memory" runs over fragmented memory, the
# kmem:mm_page_pcpu_drain event (one per block of pages returned) and the
# preemptirq:irq_enable event are traced on every CPU.  The drain events
# one CPU logs between two of its irq_enable events were freed in one
# IRQs-off section.  The case passes if no section freed more blocks than
# the largest pcp batch in /proc/zoneinfo: with the series, the lock is
# dropped once a batch of pages has been freed.
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
EVENTS="$T/events/kmem/mm_page_pcpu_drain $T/events/preemptirq/irq_enable"
DESC="pcp_free_batch: free_pcppages_bulk() frees at most one pcp batch per IRQs-off section"
TRACE_KB0=

cleanup() {
	local e
	for e in $EVENTS; do
		[ ! -w "$e/enable" ] || echo 0 >"$e/enable"
	done
	if [ -n "$TRACE_KB0" ]; then
		echo "$TRACE_KB0" >"$T/buffer_size_kb"
		echo >"$T/trace"
	fi
	stop_fragment
}
trap cleanup EXIT

# From the trace: "SECTIONS MAX", the number of IRQs-off sections in which
# blocks were drained and the most blocks drained in one of them.
drain_sections() {
	awk '
	match($0, /\[[0-9]+\]/) {
		cpu = substr($0, RSTART + 1, RLENGTH - 2)
		if ($0 ~ / mm_page_pcpu_drain: /) {
			n[cpu]++
		} else if ($0 ~ / irq_enable: /) {
			if (n[cpu] > 0) {
				sections++
				if (n[cpu] > max)
					max = n[cpu]
			}
			n[cpu] = 0
		}
	}
	END { print sections + 0, max + 0 }' "$T/trace"
}

main() {
	local e v batch sections max lost
	ktap_print_header
	if [ ! -w /proc/sys/vm/compact_memory ]; then
		ktap_skip_all "$DESC: no /proc/sys/vm/compact_memory (CONFIG_COMPACTION off)"
		exit "$KSFT_SKIP"
	fi
	for e in $EVENTS; do
		if [ ! -w "$e/enable" ]; then
			ktap_skip_all "$DESC: no trace event ${e#"$T"/events/} (needs CONFIG_TRACE_IRQFLAGS, tracefs)"
			exit "$KSFT_SKIP"
		fi
	done
	ktap_require_uint 1 FRAG_MB TRACE_KB
	ktap_set_plan 1
	batch=$(pcp_largest_batch)
	if ! start_fragment --mb "$FRAG_MB" --pattern random >/dev/null 2>&1; then
		ktap_print_msg "fragment died: $(tail -n 1 "$FRAG_LOG")"
		ktap_test_fail "$DESC"
		ktap_finished
	fi
	# "7 (expanded: 1408)" until the buffer was first used
	TRACE_KB0=$(sed 's/.*expanded: \([0-9]*\)).*/\1/' "$T/buffer_size_kb")
	echo "$TRACE_KB" >"$T/buffer_size_kb"
	echo >"$T/trace"
	for e in $EVENTS; do
		echo 1 >"$e/enable"
	done
	echo 1 >/proc/sys/vm/compact_memory
	for e in $EVENTS; do
		echo 0 >"$e/enable"
	done
	lost=$(trace_overruns)
	read -r sections max < <(drain_sections)
	ktap_print_msg "$(sed -n 's/^fragment: //p' "$FRAG_LOG");" \
		"$sections IRQs-off sections drained pcp pages, at most $max blocks in one;" \
		"largest pcp batch $batch"
	if [ "$lost" -gt 0 ]; then
		ktap_test_skip "$DESC: the trace buffer dropped $lost events; raise TRACE_KB"
	elif [ "$sections" -eq 0 ]; then
		ktap_test_fail "$DESC: compaction drained no pcp pages, nothing measured"
	else
		ktap_test_result "$DESC" [ "$max" -le "$batch" ]
	fi
	ktap_finished
}

main
