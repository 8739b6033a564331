#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# vm-args: --timing icount --cpus 1
#
# Does a real-time thread whose mlocked page compaction migrates wait for
# that page alone, or for the batch it was unmapped with?  cyclictest
# (rt-tests, -m: its memory mlocked) runs at SCHED_FIFO 99 on CPU 0 while
# THP faults (MADV_HUGEPAGE) compact freshly fragmented memory, with
# vm.compact_unevictable_allowed at its default of 1.  migrate_pages()
# unmaps a whole batch before it copies any folio of it, so a thread that
# faults on one of them sleeps in migration_entry_wait() until its folio
# is remapped.
#
# Counts, not times: in a trace instance of its own, the thread's
# switches out in D state (sched:sched_switch, with a stacktrace trigger),
# its wakings (sched:sched_waking), its page faults
# (exceptions:page_fault_user) and every migration entry removed
# (migrate:remove_migration_pte, one per page table entry remapped, with
# its address, the pte and the folio's order) are traced.  For each sleep
# on a migration entry (migration_entry_wait() in its stack), the folios
# that the task which woke it (the migrating task, in folio_unlock())
# remapped before the waking are counted, a large folio once however
# many of its entries are remapped.  Only the waker's: on one CPU another
# compacting task may run while the waker holds the thread's folio
# unmapped, and what it remaps meanwhile is not the batch the thread
# waited for (counting every task's remaps, make check on 7.2 with the
# series failed about one run in six, once on a sleep through 297 folios,
# not traced further; vanilla 7.2 fails either way: 215 folios by the
# waker, 323 by all, in one sleep).
# Counted apart: sleeps whose own folio, the one remapped at the address
# of the thread's last fault, is large (mlock leaves a PTE-mapped large
# folio unmarked, so the series does not move it alone), and D sleeps
# elsewhere, named by their stack.  The case passes if no sleep on a
# migration entry saw the waker remap more than COMPACT_CLUSTER_MAX (32,
# include/linux/swap.h) folios, what compaction isolates at a time short
# of finishing a pageblock: a thread that waits for its own folio sees
# that one.  Vanilla 7.2 fails it, as the batches hold the thread's folio
# unmapped while their other folios get destinations and copies.  It
# fails as not exercised if none of the thread's pages moved (their pfns,
# from /proc/PID/pagemap, before and after), and skips when mlocked pages
# are not migrated (compact_unevictable_allowed 0, PREEMPT_RT's default),
# or without THP or the trace events.
#
# Environment (default):
#   FRAG_MB    memory to fragment, MiB [40% of MemFree]
#   THP_MB     memory to fault in as THPs, MiB [the free order-9 blocks
#              plus 256 MiB, so that the last 256 MiB need compaction]
#   TRACE_KB   trace buffer of the instance, KiB [65536]
set -u
DIR=$(cd "$(dirname "$0")" && pwd)
. "$DIR/../lib/ktap.sh"
FRAG_MB=${FRAG_MB:-$(($(meminfo_mb MemFree) * 4 / 10))}
THP_MB=${THP_MB:-}
TRACE_KB=${TRACE_KB:-65536}
I=$TRACEFS/instances/rt_migrate_wait
EVENTS="sched/sched_switch sched/sched_waking migrate/remove_migration_pte exceptions/page_fault_user"
# COMPACT_CLUSTER_MAX, a constant of the kernel's
BATCH=32
DESC="rt_migrate_wait: a SCHED_FIFO thread sleeping on a migration entry waits for at most one compaction batch of remaps"
CYCLIC_PID=

cleanup() {
	stop_background "$CYCLIC_PID"
	[ ! -d "$I" ] || { trace_events_in 0; rmdir "$I"; }
	stop_fragment
}
trap cleanup EXIT

# trace_events_in VALUE: enable (1) or disable (0) EVENTS in the instance
trace_events_in() {
	local e
	for e in $EVENTS; do
		echo "$1" >"$I/events/$e/enable"
	done
}

# pfns PID: "vaddr pfn" of every present page of process PID, from its
# maps and pagemap (bit 63 present, bits 0-54 the pfn; root sees them)
pfns() {
	python3 - "$1" <<'PY'
import struct, sys
pid = sys.argv[1]
with open(f"/proc/{pid}/pagemap", "rb") as pm:
    for line in open(f"/proc/{pid}/maps"):
        lo, hi = (int(x, 16) for x in line.split()[0].split("-"))
        if "[vsyscall]" in line:
            continue
        pm.seek(lo // 4096 * 8)
        data = pm.read((hi - lo) // 4096 * 8)
        for i in range(len(data) // 8):
            (v,) = struct.unpack_from("<Q", data, i * 8)
            if v >> 63:
                print(f"{lo + i * 4096:x} {v & ((1 << 55) - 1):x}")
PY
}

# waits_per_sleep: from the instance's trace, "SLEEPS WMAX MAX LARGE
# OTHERS OMAX WHERE": the thread's D sleeps on a migration entry of an
# order-0 folio, the most folios that the task that woke it (the
# migrating task, in folio_unlock()) remapped in one of them, and the
# most remapped in one by any task; its sleeps on an entry of a large
# folio (the remap at its last fault's address had order > 0), counted
# apart; then its other D sleeps, the most remapped in one of them, and
# that one's first frame outside the scheduler and the wait code ("-" if
# none).  A folio is its first pfn: the pte's bits 12-51 (hex digits 4-13
# of 16), rounded down to its order; a task is the pid of the event's
# line.
waits_per_sleep() {
	awk '
	function hex(h,  i, v) { v = 0; for (i = 1; i <= length(h); i++) v = v * 16 + index("0123456789abcdef", substr(h, i, 1)) - 1; return v }
	function task(  p) { match($0, /-[0-9]+ +\[[0-9]+\]/); p = substr($0, RSTART + 1, RLENGTH - 1); sub(/ .*/, "", p); return p }
	function field(name) { match($0, name "=[0-9a-fx]+"); return substr($0, RSTART + length(name) + 1, RLENGTH - length(name) - 1) }
	/ page_fault_user: / { fault = field("address"); sub(/^0x/, "", fault); fault = substr(fault, 1, length(fault) - 3) "000"; next }
	/ sched_switch: / { asleep = 1; n = 0; mig = 0; own = -1; frame = ""; split("", by); next }
	/^ => / {
		if (!asleep) next
		if ($2 ~ /migration_entry_wait/) mig = 1
		else if (frame == "" && $2 !~ /schedule|wait|stack_trace|trace_event|event_trigger|__traceiter/) frame = $2
		next
	}
	/ remove_migration_pte: / {
		if (!asleep) next
		pte = field("pte"); pte = substr("0000000000000000" pte, length(pte) + 1)
		order = field("order")
		if (field("addr") == fault) own = order
		folio = int(hex(substr(pte, 4, 10)) / 2 ^ order)
		if (!(folio in by)) { by[folio] = task(); n++ }
		next
	}
	/ sched_waking: / {
		if (asleep && mig && own > 0) large++
		else if (asleep && mig) {
			sleeps++; w = 0; waker = task()
			for (f in by) if (by[f] == waker) w++
			if (w > wmax) wmax = w
			if (n > max) max = n
		} else if (asleep) { others++; if (n >= omax) { omax = n; where = frame } }
		asleep = 0; next
	}
	END { print sleeps + 0, wmax + 0, max + 0, large + 0, others + 0, omax + 0, (where == "" ? "-" : where) }' "$I/trace"
}

main() {
	local tid missing before moved sleeps wmax max large others omax where
	ktap_print_header
	[ -w /proc/sys/vm/compact_memory ] || skip_all "no /proc/sys/vm/compact_memory (CONFIG_COMPACTION off)"
	command -v cyclictest >/dev/null || skip_all "no cyclictest (rt-tests)"
	[ "$(cat /proc/sys/vm/compact_unevictable_allowed)" = 1 ] ||
		skip_all "vm.compact_unevictable_allowed is 0 (PREEMPT_RT's default): mlocked pages are not migrated"
	! thp_off || skip_all "no transparent huge pages"
	# shellcheck disable=SC2086 # EVENTS is a list
	missing=$(trace_missing $EVENTS)
	[ -z "$missing" ] || skip_all "no trace event $missing"
	ktap_require_uint 1 FRAG_MB TRACE_KB
	[ -z "$THP_MB" ] || ktap_require_uint 1 THP_MB
	ktap_set_plan 1
	start_fragment --mb "$FRAG_MB" --pattern random >/dev/null 2>&1 ||
		ktap_exit_fail_msg "$DESC: fragment died: $(tail -n 1 "$FRAG_LOG")"
	start_rt_cyclictest 30 ||
		ktap_exit_fail_msg "$DESC: cyclictest's SCHED_FIFO thread did not start in 30 s"
	tid=$CYCLIC_TID
	before=$(pfns "$CYCLIC_PID")
	mkdir "$I"
	echo "$TRACE_KB" >"$I/buffer_size_kb"
	echo 0 >"$I/options/latency-format"
	echo "prev_pid == $tid && prev_state & 2" >"$I/events/sched/sched_switch/filter"
	echo "stacktrace if prev_pid == $tid && prev_state & 2" >"$I/events/sched/sched_switch/trigger"
	echo "pid == $tid" >"$I/events/sched/sched_waking/filter"
	echo "common_pid == $tid" >"$I/events/exceptions/page_fault_user/filter"
	trace_events_in 1
	prepare_compaction_trigger thp-faults
	(taskset -pc 0 "$BASHPID" >/dev/null && run_compaction_trigger thp-faults) >/dev/null
	trace_events_in 0
	moved=$(pfns "$CYCLIC_PID" | awk 'NR == FNR { pfn[$1] = $2; next }
		($1 in pfn) && pfn[$1] != $2 { n++ } END { print n + 0 }' <(echo "$before") -)
	read -r sleeps wmax max large others omax where < <(waits_per_sleep)
	ktap_print_msg "$THP_MB MiB of THP faults; $moved of the thread's pages moved;" \
		"$sleeps sleeps on a migration entry of an order-0 folio, at most $wmax" \
		"folios remapped in one by the task that woke it, $max by any task;" \
		"$large on a large folio's; $others other D sleeps, at most $omax" \
		"remapped in one (in $where)"
	ktap_count_result "$DESC" "$(trace_overruns "$I")" "$moved" \
		"none of the thread's pages moved" "$wmax" "$BATCH"
	ktap_finished
}

main
