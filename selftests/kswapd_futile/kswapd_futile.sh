#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# vm-args: --timing icount --memory 2G
#
# (The memory option, which is the default, gives the test a VM of its
# own: it leaves compaction's failure record and kswapd's state behind,
# and kswapd_gating, run after it in a shared VM on 6.12 with the kswapd
# patch tried, then saw kswapd never woken.)
#
# Does kswapd stop reclaiming for a high order that compaction keeps
# failing at, while order-0 memory is plentiful?  Memory is filled with
# anonymous pages, one page in every 32 KiB is freed and the rest mlocked,
# with vm.compact_unevictable_allowed at 0 for the test: then no order-3
# block can be freed by reclaim (each free page sits between locked ones)
# or made by compaction (locked pages may not move), while the free pages
# keep order 0 above its watermarks.  highorder_stress makes order-3
# GFP_ATOMIC "frag" requests from hardirq, held until HOLD later ones, so
# that the large free blocks left outside the fill are used up and later
# requests fail; each that fails its watermark check may wake kswapd at
# order 3.  Traced, in order: compaction:mm_compaction_defer_compaction,
# mm_compaction_deferred and mm_compaction_defer_reset, which show a
# zone's deferral state (the lowest order compaction failed at since its
# last success, and the deferral limit), one event per kswapd reclaim
# pass with the order it reclaims at (vmscan:mm_vmscan_balance_pgdat_begin;
# on a kernel without it, such as 6.12, mm_vmscan_kswapd_wake, which gives
# the order kswapd was woken for, with the order of kswapd's first
# mm_vmscan_lru_isolate after it, which is the order the pass reclaims
# at), and the wakeups of a sleeping kswapd or
# kcompactd (mm_vmscan_wakeup_kswapd, mm_compaction_wakeup_kcompactd),
# which show that requests came.
#
# Case 1: while compaction is failing at an order on a node (limit above
# 1 and the order at or above the failed order, in every zone of the
# node the events name), that node's kswapd starts no reclaim pass at
# the order until compaction succeeds there again: at most one pass per
# success (mm_compaction_defer_reset), and one more per node that ran a
# high-order pass (its first futile pass, which makes the node's record,
# or a request that raised kswapd's order before the first failure).
# Where the trace has the pass's end (mm_vmscan_balance_pgdat_end), a
# pass counts only if it reclaimed pages, since one that reclaims none
# evicts nothing (one that finds the order met when it starts ends at
# once and leaves no record).  Where the kernel traces its record
# (mm_vmscan_kswapd_futile_order, patch 10's), a pass that began with no
# record covering its order and zone index (each index lowered, as the
# kernel does, to its node's highest zone with managed pages in
# /proc/zoneinfo) does not count either: no pass
# had recorded the order yet, or the last one made a block of it or ended
# with it met, as on node 0 of two fake NUMA nodes, which holds the memory
# outside the fill, where the base pages a pass frees do merge into
# order-3 blocks at times (patch 10's changelog).  That takes the
# kernel's own count of the blocks a pass made on trust: where more
# passes were left out than the case allows, the record must have turned
# some wakeup away (kswapd_futile_order_skip, one count for all nodes, so
# a kernel that sets its record but clears it too readily on one node
# may still pass), and a lost event skips the case.  Vanilla kernels
# have no such event, and every pass while compaction fails counts.
# Vanilla 6.12 and 7.2 start a pass for most requests that find kswapd
# asleep (7.2: 155, 6.12: 88 and 89); the 7.2 series' patch 10 and the
# 6.12 backport's patch 15 leave them to kcompactd, and their gated
# passes, woken at order 3 for order-0 work, reclaim at order 0 (on
# 6.12 with patches 1-14, on the distro config, this load seldom woke
# kswapd at order 3 at all, and the record turned nothing away).
# patches/7.2/experiments/kswapd-defer-with-compaction.patch started
# more passes than vanilla (177), since it lets kswapd back at every
# failed retry.
# Skipped, with the reason, if kswapd started no high-order pass at all
# (seen on 6.12: the requests' wakeups then never reached it), if
# compaction failed no more often than it succeeded, or no more
# high-order requests woke kswapd or kcompactd while it was failing than
# the case allows passes (then passing it shows nothing), as when the
# fill did not keep compaction failing (seen on the debug config: 4
# failures against 22 successes, and 6 against 5 with no pass in a
# failing spell; the 7.2 series without patch 10, on the distro
# config: 1,567 such wakeups against no success), if MemFree
# ended below the zones' high watermarks (kswapd then had order-0 work,
# which the series leaves alone), or, where the record is traced, if the
# trace lost events.
#
# Environment (default):
#   HIGHORDER_STRESS_KO   path of highorder_stress.ko (required)
#   FRAG_MB               memory to fill, MiB [MemFree - 300]
#   RATE                  order-3 requests per second [2000]
#   HOLD                  requests held [16384: 512 MiB, more than the
#                         free memory outside the fill]
#   SECONDS_RUN           how long the requests run, s [10]
set -u
DIR=$(cd "$(dirname "$0")" && pwd)
. "$DIR/../lib/ktap.sh"
KO=${HIGHORDER_STRESS_KO:-}
FRAG_MB=${FRAG_MB:-$(($(meminfo_mb MemFree) - 300))}
RATE=${RATE:-2000}
HOLD=${HOLD:-16384}
SECONDS_RUN=${SECONDS_RUN:-10}
# a kswapd reclaim pass and the event that gives the order it reclaims at
# (see the header)
PASS_EVENT=vmscan/mm_vmscan_balance_pgdat_begin
ORDER_EVENT=$PASS_EVENT
# the pass's end, with the pages it reclaimed (none where kswapd has no
# begin event)
END_EVENT=vmscan/mm_vmscan_balance_pgdat_end
if [ -n "$(trace_missing "$PASS_EVENT")" ]; then
	PASS_EVENT=vmscan/mm_vmscan_kswapd_wake
	ORDER_EVENT=vmscan/mm_vmscan_lru_isolate
	END_EVENT=
fi
# the order kswapd's record holds after each pass (none on a vanilla kernel)
RECORD_EVENT=vmscan/mm_vmscan_kswapd_futile_order
[ -z "$(trace_missing "$RECORD_EVENT")" ] || RECORD_EVENT=
EVENTS=(compaction/mm_compaction_defer_compaction compaction/mm_compaction_deferred
	compaction/mm_compaction_defer_reset "$PASS_EVENT"
	vmscan/mm_vmscan_wakeup_kswapd compaction/mm_compaction_wakeup_kcompactd)
[ "$ORDER_EVENT" = "$PASS_EVENT" ] || EVENTS+=("$ORDER_EVENT")
[ -z "$END_EVENT" ] || EVENTS+=("$END_EVENT")
[ -z "$RECORD_EVENT" ] || EVENTS+=("$RECORD_EVENT")
D=/sys/kernel/debug/highorder_stress
OUT=$(mktemp -d)

cleanup() {
	rmmod highorder_stress 2>/dev/null
	trace_events 0 "${EVENTS[@]}"
	trace_buffer_restore
	stop_fragment
	sysctl_restore_all
	rm -rf "$OUT"
}
trap cleanup EXIT

# skip_all REASON: the test cannot run here
skip_all() {
	ktap_skip_all "kswapd_futile: $1"
	exit "$KSFT_SKIP"
}

# high_wmark_mb: the zones' high watermarks, summed, MiB
high_wmark_mb() {
	awk '$1 == "high" && !done[zone]++ { n += $2 } $1 == "Node" { zone = $4 }
		END { print int(n * 4 / 1024) }' /proc/zoneinfo
}

# managed_zones: "NODE:ZONE" for each zone with managed pages
managed_zones() {
	awk '$1 == "Node" { n = $2 + 0; z = $4 }
		$1 == "managed" && $2 > 0 { printf "%d:%s ", n, z }' /proc/zoneinfo
}

# futile_passes: "PASSES FAILURES SUCCESSES FAILING IDLE UNGATED ASKED
# NODES WHICH" from the trace: kswapd passes at an order above 0,
# compaction's failures and successes, the passes that began while
# compaction was failing at their order on their node and reclaimed pages
# (with an end event; without one, every such pass), those that reclaimed
# none (IDLE), those that began with no record covering their order and
# zone index (with the record's event; UNGATED: left out of FAILING),
# the high-order requests that woke a sleeping kswapd or kcompactd
# meanwhile, and the nodes whose kswapd ran a pass at an order above 0;
# WHICH lists the first ten failing passes (time:node:order, the time of
# the event that gave the order, and the order and gfp flags of the last
# kswapd wakeup on the node before it), for a diagnosis
futile_passes() {
	awk -v pass="${PASS_EVENT#*/}:" -v order_of="${ORDER_EVENT#*/}:" \
	    -v managed="$(managed_zones)" \
	    -v pass_end="${END_EVENT:+${END_EVENT#*/}:}" \
	    -v record_of="${RECORD_EVENT:+${RECORD_EVENT#*/}:}" '
	# field NAME=VALUE of the current line
	function field(name,  i) {
		for (i = 1; i <= NF; i++)
			if (index($i, name "=") == 1)
				return substr($i, length(name) + 2)
		return ""
	}
	# whether compaction is failing at order o in every zone of node n
	# that the events named
	function failing(o, n,  z, k) {
		k = 0
		for (z in from) {
			if (node[z] != n)
				continue
			if (limit[z] <= 1 || o < from[z])
				return 0
			k++
		}
		return k > 0
	}
	# a failing pass that reclaimed pages, begun at STAMP
	function count_failing(n, o, stamp) {
		during++
		if (during <= 10)
			which = which " " stamp "s:node" n ":order" o "(" woke[n] ")"
		else if (during == 11)
			which = which " ..."
	}
	/mm_compaction_(defer_compaction|deferred|defer_reset):/ {
		z = field("node") ":" field("zone")
		node[z] = field("node"); from[z] = field("order_failed") + 0
		limit[z] = field("limit") + 0
		if ($0 ~ /mm_compaction_defer_compaction:/)
			failures++
		if ($0 ~ /mm_compaction_defer_reset:/)
			successes++
		next
	}
	/mm_vmscan_wakeup_kswapd:|mm_compaction_wakeup_kcompactd:/ {
		o = field("order") + 0
		if ($0 ~ /mm_vmscan_wakeup_kswapd:/)
			woke[field("nid")] = "order=" o ",gfp=" field("gfp_flags")
		if (o > 0 && failing(o, field("nid")))
			asked++
		next
	}
	# the index of a zone an event names (ZONE_TYPE) or numbers: the
	# x86_64 zones in enum zone_type order; none ranks lowest
	function zone_rank(name,  names, k, i) {
		if (name == "")
			return -1
		if (name ~ /^[0-9]+$/)
			return name + 0
		k = split("DMA DMA32 Normal Movable Device", names, " ")
		for (i = 1; i <= k; i++)
			if (names[i] == name)
				return i - 1
		return k
	}
	# the rank of the highest zone of node n at or below rank r with
	# managed pages ("n:zone" words of managed); none ranks lowest
	function managed_rank(n, r,  k, i, j, w) {
		if (!nmanaged) {
			k = split(managed, w, " ")
			for (i = 1; i <= k; i++) {
				j = index(w[i], ":")
				is_managed[substr(w[i], 1, j - 1) ":" \
				    zone_rank(substr(w[i], j + 1))] = 1
			}
			nmanaged = k + 1
		}
		while (r > 0 && !((n ":" r) in is_managed))
			r--
		return r
	}
	# the order and zone the record of a node holds after a pass (0: none)
	record_of != "" && index($0, record_of) {
		n = field("nid")
		record[n] = field("record_order") + 0
		record_zone[n] = field("record_zoneidx")
		next
	}
	# a pass without its order in its own event (it is traced by kswapd
	# itself): wait for the order, from the same kswapd
	index($0, pass) && pass != order_of {
		open_nid[$1] = field("nid")
		next
	}
	index($0, order_of) && (pass == order_of || ($1 in open_nid)) {
		n = pass == order_of ? field("nid") : open_nid[$1]
		delete open_nid[$1]
		o = field("order") + 0
		if (o == 0)
			next
		passes++
		if (!(n in nodes)) {
			nodes[n] = 1
			nnodes++
		}
		if (!failing(o, n))
			next
		zone = field(pass == order_of ? "highest_zoneidx" : "classzone")
		if (record_of != "" && !(record[n] > 0 && o >= record[n] &&
		    managed_rank(n, zone_rank(zone)) <= zone_rank(record_zone[n]))) {
			ungated++
			next
		}
		match($0, /[0-9]+\.[0-9]+: /)
		stamp = substr($0, RSTART, RLENGTH - 2)
		if (pass_end == "") {
			count_failing(n, o, stamp)
			next
		}
		# judged at its end: a pass that found the order met reclaims
		# nothing and ends at once
		open_order[n] = o
		open_stamp[n] = stamp
		next
	}
	pass_end != "" && index($0, pass_end) && (field("nid") in open_order) {
		n = field("nid")
		if (field("nr_reclaimed") + 0 > 0)
			count_failing(n, open_order[n], open_stamp[n])
		else
			idle++
		delete open_order[n]
	}
	END {
		printf "%d %d %d %d %d %d %d %d%s\n", passes, failures,
			successes, during, idle, ungated, asked, nnodes, which
	}' "$OUT/trace"
}

main() {
	local passes failures successes during idle ungated asked nodes which free_mb high_mb missing
	local skips skipped= lost limit ok
	ktap_print_header
	ktap_require_uint 1 FRAG_MB RATE HOLD SECONDS_RUN
	if [ -z "$KO" ] || [ ! -f "$KO" ]; then
		skip_all "needs HIGHORDER_STRESS_KO (got '$KO')"
	fi
	! kernel_is_rt ||
		skip_all "its load is order-3 allocations from hardirq, which PREEMPT_RT cannot make"
	missing=$(trace_missing "${EVENTS[@]}")
	[ -z "$missing" ] || skip_all "this kernel cannot trace $missing"
	[ -w /proc/sys/vm/compact_unevictable_allowed ] ||
		skip_all "no vm.compact_unevictable_allowed (CONFIG_COMPACTION=n)"
	[ "$FRAG_MB" -ge 512 ] ||
		skip_all "only $FRAG_MB MiB to fill: the test needs a 2 GiB guest"
	ktap_set_plan 1
	sysctl_set vm.compact_unevictable_allowed 0
	start_fragment --mb "$FRAG_MB" --pattern stride --stride 8 --mlock >/dev/null ||
		ktap_exit_fail_msg "kswapd_futile: the fill failed"
	trace_buffer_set 8192
	skips=$(vmstat_value kswapd_futile_order_skip)
	trace_events 1 "${EVENTS[@]}"
	frag_load "$KO" "$RATE" "$HOLD" "$SECONDS_RUN" ||
		ktap_exit_fail_msg "kswapd_futile: insmod failed"
	frag_run
	free_mb=$(meminfo_mb MemFree)
	trace_events 0 "${EVENTS[@]}"
	[ -z "$skips" ] || skipped=$(($(vmstat_value kswapd_futile_order_skip) - skips))
	lost=$(trace_overruns)
	cp "$TRACEFS/trace" "$OUT/trace"
	ktap_print_msg "kswapd_futile: highorder_stress: $(grep -E '^order3_(attempts|successes):' "$D/stats" | tr '\n' ' ')"
	rmmod highorder_stress
	high_mb=$(high_wmark_mb)
	read -r passes failures successes during idle ungated asked nodes which < <(futile_passes)
	limit=$((successes + nodes))
	ktap_print_msg "kswapd_futile: $passes kswapd passes at order > 0 (${PASS_EVENT#*/}$([ "$ORDER_EVENT" = "$PASS_EVENT" ] || echo ", order from ${ORDER_EVENT#*/}"))," \
		"$during of them while compaction was failing at their order$([ -z "$RECORD_EVENT" ] || echo " under the record")$([ -z "$END_EVENT" ] || echo " and reclaimed pages ($idle more reclaimed none)")$([ -z "$RECORD_EVENT" ] || echo "; $ungated more while it was failing began with no record covering them"), on $nodes nodes;" \
		"$asked wakeups of a daemon at order > 0 meanwhile;" \
		"compaction failed $failures times and succeeded $successes;" \
		"MemFree $free_mb MiB at the end, high watermarks $high_mb MiB;" \
		"$lost trace events lost$([ -z "$skipped" ] || echo "; $skipped wakeups left to compaction (kswapd_futile_order_skip)")"
	if [ "$passes" -eq 0 ]; then
		ktap_test_skip "kswapd_futile: kswapd passes at an order compaction fails at: at most one per success: kswapd started no pass at order > 0 at all, so nothing can be told (seen on 6.12)"
	elif [ "$failures" -le "$successes" ] ||
	     [ "$asked" -le "$limit" ]; then
		ktap_test_skip "kswapd_futile: kswapd passes at an order compaction fails at: at most one per success: compaction failed $failures times and succeeded $successes, and $asked requests woke a daemon while it was failing, no more than the case allows passes, so passing it would show nothing ($passes passes)"
	elif [ "$free_mb" -le "$high_mb" ]; then
		ktap_test_skip "kswapd_futile: kswapd passes at an order compaction fails at: at most one per success: MemFree $free_mb MiB ended at or below the high watermarks ($high_mb MiB), so kswapd had order-0 work"
	elif [ -n "$RECORD_EVENT" ] && [ "$lost" -gt 0 ]; then
		ktap_test_skip "kswapd_futile: kswapd passes at an order compaction fails at: at most one per success: the trace lost $lost events, so the record's state at each pass is not known"
	else
		ok=true
		if [ "$during" -gt "$limit" ]; then
			ktap_print_msg "kswapd_futile: the passes while it was failing: $which"
			ok=false
		fi
		# the record's event vouches for the passes it left out only if
		# the record was seen to work
		if [ -n "$RECORD_EVENT" ] && [ "$ungated" -gt "$limit" ] && [ "${skipped:-0}" -eq 0 ]; then
			ktap_print_msg "kswapd_futile: $ungated passes while compaction was failing began with no record covering them, more than the $limit allowed, and the record turned no wakeup away"
			ok=false
		fi
		ktap_test_result "kswapd_futile: kswapd passes at an order compaction fails at: at most one per success" "$ok"
	fi
	ktap_finished
}

main
