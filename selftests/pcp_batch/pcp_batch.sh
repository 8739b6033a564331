#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Does the page allocator give zone->lock, and with it interrupts, back
# after every pcp batch when it moves pages between the per-CPU lists and
# the buddy lists?  Vanilla 6.12 moves up to batch << 5 pages (2,016 on a
# 2 GiB guest) in one hold with IRQs off, in three places.  Vanilla 7.2
# fails the refill and drain cases (2,016 blocks in one section, distro
# config) and passes the free case, as it should: upstream batches the
# free since 91e691296646, which is 6.12's backported patch 1.
#
#  1. refill: rmqueue_bulk(), when an order-0 allocation finds its per-CPU
#     list empty.  Traced while the fragmenter faults in FRAG_MB of
#     anonymous memory: kmem:mm_page_alloc_zone_locked events with
#     percpu_refill set, one per block taken.
#  2. free: free_pcppages_bulk() from free_unref_page_commit(), when
#     migration's freed source pages overflow the list.  Traced while
#     "echo 1 > /proc/sys/vm/compact_memory" compacts the holed memory:
#     kmem:mm_page_pcpu_drain events, one per block returned.
#  3. drain: drain_pages_zone(), which compaction at order > 0 calls after
#     every pageblock it migrates from.  Traced as in 2 while THP faults
#     (MADV_HUGEPAGE, order 9) compact freshly holed memory.
#
# Counts, not times, so host noise cannot decide a result: the events one
# CPU logs between two of its preemptirq:irq_enable events happened in one
# IRQs-off section, which the irq_disable event before them opened (named
# when a case fails).  Events in hardirq context are left out: an interrupt
# handler's refill runs with interrupts off whatever the lock does.  So
# are sections opened outside mm/page_alloc.c (neither the opening event's
# caller nor its parent is a text symbol of KERNEL_OBJ's mm/page_alloc.o),
# such as allocations under a driver's spin_lock_irqsave(): there the
# allocator cannot give interrupts back.  Sections whose opening was not
# traced, or names an address (parent=0x0 without frame pointers), count,
# and without that object file all do.  A case passes if no section moved
# more blocks than the largest pcp "batch:" in /proc/zoneinfo (blocks, not
# pages: a THP is one block, and no more than a batch of pages is moved
# per hold, so the bound is loose only for higher orders).  It fails as
# not exercised unless the load moved more than a batch at once: a section
# over the batch, or a full batch followed on that CPU by another section
# that moved pages.  It skips, with the reason, if the trace buffer lost
# events.
#
# The refill case is skipped on SMP=n kernels, where the pcp trylock
# disables interrupts across the whole refill, and the test on PREEMPT_RT,
# where zone->lock does not disable them.
#
# Environment (default):
#   FRAG_MB    memory to fragment, MiB [40% of MemFree]
#   THP_MB     memory to fault in as THPs in case 3, MiB [the free order-9
#              blocks plus 256 MiB, so that the last 256 MiB need compaction]
#   TRACE_KB   trace buffer per CPU, KiB [65536]
#   KERNEL_OBJ the running kernel's build directory, for mm/page_alloc.o [none]
set -u
DIR=$(cd "$(dirname "$0")" && pwd)
. "$DIR/../lib/ktap.sh"
FRAG_MB=${FRAG_MB:-$(($(meminfo_mb MemFree) * 4 / 10))}
THP_MB=${THP_MB:-}
TRACE_KB=${TRACE_KB:-65536}
ALLOC=kmem/mm_page_alloc_zone_locked
DRAIN=kmem/mm_page_pcpu_drain
IRQ=preemptirq/irq_enable
IRQOFF=preemptirq/irq_disable

cleanup() {
	trace_events 0 "$ALLOC" "$DRAIN" "$IRQ" "$IRQOFF"
	[ ! -w "$TRACEFS/events/$ALLOC/filter" ] || echo 0 >"$TRACEFS/events/$ALLOC/filter"
	trace_buffer_restore
	stop_fragment
	rm -f "${SYMS:-}"
}
trap cleanup EXIT

# allocator_symbols: the text symbols of KERNEL_OBJ's mm/page_alloc.o, one
# a line; nothing if there is no such file or no nm
allocator_symbols() {
	local obj=${KERNEL_OBJ:-/nonexistent}/mm/page_alloc.o
	[ -r "$obj" ] && command -v nm >/dev/null || return 0
	nm --defined-only "$obj" | awk '$2 ~ /^[tT]$/ { print $3 }'
}

# sections EVENT: "SECTIONS MAX CHAINED OUTSIDE" from the trace: the
# IRQs-off sections mm/page_alloc.c opened in which EVENT was logged
# outside hardirq context, the most EVENTs one of them logged, how many
# followed, on their CPU, a section that logged exactly BATCH, and how many
# sections that logged EVENT were left out as opened elsewhere; then, on a
# second line, the irq_disable event that opened the counted section with
# the most and its last EVENT, to say whose section it was; on a third,
# the event that opened the left-out section with the most
sections() {
	awk -v ev=" ${1#*/}: " -v batch="$BATCH" '
	# the function a "key=symbol+0xoff/0xsize" field of an event names
	function field(line, key,    i) {
		i = index(line, " " key "=")
		if (!i)
			return ""
		line = substr(line, i + length(key) + 2)
		sub(/[+ ].*/, "", line)
		return line
	}
	# whether an event field names a function (not an address: without
	# frame pointers parent is 0x0)
	function named(f) {
		return f != "" && f !~ /^0x/
	}
	FILENAME != "-" && FNR == NR {
		allocator[$1] = 1
		nsyms++
		next
	}
	match($0, /\[[0-9]+\] [^ ]+ /) {
		cpu = substr($0, RSTART + 1, index(substr($0, RSTART), "]") - 2)
		flags = substr($0, RSTART, RLENGTH)
		sub(/^\[[0-9]+\] /, "", flags)
		if (index($0, ev)) {
			if (substr(flags, 3, 1) !~ /[hH]/) {
				n[cpu]++
				lastev[cpu] = $0
			}
		} else if ($0 ~ / irq_disable: /) {
			if (!n[cpu]) {
				first[cpu] = $0
				c = field($0, "caller")
				p = field($0, "parent")
				outsider[cpu] = nsyms && named(c) && named(p) &&
				    !(c in allocator) && !(p in allocator)
			}
		} else if ($0 ~ / irq_enable: /) {
			if (n[cpu] > 0 && outsider[cpu]) {
				outside++
				if (n[cpu] > outmax) {
					outmax = n[cpu]
					outworst = n[cpu] " blocks: " first[cpu]
				}
			} else if (n[cpu] > 0) {
				sections++
				if (n[cpu] > max) {
					max = n[cpu]
					worst = first[cpu] " ... " lastev[cpu]
				}
				if (last[cpu] == batch)
					chained++
				last[cpu] = n[cpu]
			}
			n[cpu] = 0
		}
	}
	END {
		print sections + 0, max + 0, chained + 0, outside + 0
		gsub(/  +/, " ", worst)
		gsub(/  +/, " ", outworst)
		print worst
		print outworst
	}' "$SYMS" - <"$TRACEFS/trace"
}

# traced EVENT CMD...: run CMD with EVENT, irq_enable and irq_disable
# traced, into an emptied buffer; returns CMD's status
traced() {
	local ev=$1 status=0
	shift
	trace_buffer_set "$TRACE_KB"
	trace_events 1 "$ev" "$IRQ" "$IRQOFF"
	"$@" || status=$?
	trace_events 0 "$ev" "$IRQ" "$IRQOFF"
	return "$status"
}

# judge DESC EVENT WHAT: the case's result from the trace just taken
judge() {
	local desc=$1 ev=$2 what=$3 lost sections max chained outside worst outworst
	lost=$(trace_overruns)
	{ read -r sections max chained outside; read -r worst; read -r outworst; } < <(sections "$ev")
	ktap_print_msg "$what: $sections IRQs-off sections moved pages, at most $max blocks in one," \
		"$chained after a full batch; largest pcp batch $BATCH;" \
		"$outside opened outside mm/page_alloc.c left out"
	[ "$max" -le "$BATCH" ] || ktap_print_msg "the largest section's opening and last events: $worst"
	[ "$outside" -eq 0 ] || ktap_print_msg "the largest left-out section, $outworst"
	if [ "$lost" -gt 0 ]; then
		ktap_test_skip "$desc: the trace buffer lost $lost events; raise TRACE_KB"
	elif [ "$max" -le "$BATCH" ] && [ "$chained" -eq 0 ]; then
		ktap_test_fail "$desc: not exercised, no more than a batch moved at once"
	else
		ktap_test_result "$desc" [ "$max" -le "$BATCH" ]
	fi
}

# fragment: start the fragmenter over FRAG_MB, random holes
fragment() {
	start_fragment --mb "$FRAG_MB" --pattern random >/dev/null 2>&1
}

case_refill() {
	local desc="pcp_batch: refill: rmqueue_bulk() takes at most one pcp batch per IRQs-off section"
	if ! uname -v | grep -qw SMP; then
		ktap_test_skip "$desc: SMP=n kernel, the pcp trylock disables interrupts for the whole refill"
		fragment || ktap_exit_fail_msg "pcp_batch: fragment died: $(tail -n 1 "$FRAG_LOG")"
		return 0
	fi
	echo "percpu_refill == 1" >"$TRACEFS/events/$ALLOC/filter"
	if ! traced "$ALLOC" fragment; then
		ktap_test_fail "$desc: fragment died: $(tail -n 1 "$FRAG_LOG")"
		return 1
	fi
	echo 0 >"$TRACEFS/events/$ALLOC/filter"
	judge "$desc" "$ALLOC" "faulting in $FRAG_MB MiB"
}

case_free() {
	local desc="pcp_batch: free: free_pcppages_bulk() frees at most one pcp batch per IRQs-off section (compact_memory)"
	traced "$DRAIN" run_compaction_trigger memory
	judge "$desc" "$DRAIN" "compact_memory, $(sed -n 's/^fragment: //p' "$FRAG_LOG")"
}

case_drain() {
	local desc="pcp_batch: drain: drain_pages_zone() frees at most one pcp batch per IRQs-off section (THP-fault compaction)"
	stop_fragment
	if ! fragment; then
		ktap_test_fail "$desc: fragment died: $(tail -n 1 "$FRAG_LOG")"
		return 1
	fi
	prepare_compaction_trigger thp-faults
	traced "$DRAIN" run_compaction_trigger thp-faults >/dev/null
	judge "$desc" "$DRAIN" "$THP_MB MiB of THP faults"
}

main() {
	local missing
	ktap_print_header
	if [ ! -w /proc/sys/vm/compact_memory ]; then
		ktap_skip_all "pcp_batch: no /proc/sys/vm/compact_memory (CONFIG_COMPACTION off)"
		exit "$KSFT_SKIP"
	fi
	if uname -v | grep -qw PREEMPT_RT; then
		ktap_skip_all "pcp_batch: PREEMPT_RT kernel, zone->lock does not disable interrupts"
		exit "$KSFT_SKIP"
	fi
	missing=$(trace_missing "$ALLOC" "$DRAIN" "$IRQ" "$IRQOFF")
	if [ -n "$missing" ]; then
		ktap_skip_all "pcp_batch: no trace event $missing (needs CONFIG_TRACE_IRQFLAGS, tracefs)"
		exit "$KSFT_SKIP"
	fi
	ktap_require_uint 1 FRAG_MB TRACE_KB
	[ -z "$THP_MB" ] || ktap_require_uint 1 THP_MB
	ktap_set_plan 3
	BATCH=$(pcp_largest_batch)
	SYMS=$(mktemp)
	allocator_symbols >"$SYMS"
	[ -s "$SYMS" ] || ktap_print_msg "no mm/page_alloc.o in KERNEL_OBJ: every IRQs-off section counts"
	if case_refill; then
		case_free
	else
		ktap_test_skip "pcp_batch: free: needs the fragmented memory of the refill case"
	fi
	if thp_off; then
		ktap_test_skip "pcp_batch: drain: transparent huge pages unavailable or disabled"
	else
		case_drain
	fi
	ktap_finished
}

main
