#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# vm-args: --tiers
#
# Does a NUMA promotion that finds no room on its target node still wake
# a daemon there?  With memory tiering (kernel.numa_balancing 2) a hot
# folio on a lower-tier node is promoted to the node of the CPU that
# touched it; when that node lacks its high watermark plus the folio's
# pages, the promotion fails and wakes the node's kswapd at the folio's
# order with gfp 0 (migrate_misplaced_folio_prepare()), the only wakeup
# that passes gfp 0 at an order above 0.  The 7.2 series' patch 10 (6.12: patch 15)
# sends a high-order wakeup that its futile-order record covers to
# kcompactd instead, so kswapd woken at order 9 with gfp 0, or kcompactd
# woken at order 9, on the target node passes.
#
# The VM (vm-run --tiers) has node 0 with every CPU and node 1 with none,
# which the ACPI HMAT makes slower, so that a kernel with CONFIG_ACPI_HMAT
# (CONFIG=numa) puts node 1 in a memory tier below node 0.  PROMOTE_MB of
# THPs are faulted in on node 1, node 0 is filled to midway between its
# low and high watermarks (vm.watermark_scale_factor at WSF, to widen
# that gap, so that no allocation wakes kswapd but a promotion does), and
# the THPs are touched from node 0 for SECONDS_RUN s.  Skipped, with the
# reason, without a lower tier or THP, if NUMA balancing made no
# promotion candidate, or if node 0 was back at its high watermark once
# the fill was in place (then nothing had to wake anybody).  The message
# gives node 0's watermarks and free pages per zone: a zone with room
# enough (free above high plus 512 pages and its lowmem reserve) lets
# promotions through without a wakeup.
# A guard against a gate that loses promotion's wakeup, not a test of a
# mechanism: the series passes it where no record stands (CONFIG=numa,
# 32,768 candidate pages, kswapd woken once: on 7.2 10 and 12 of 64 THPs
# promoted in two runs, on 6.12 12; vanilla not run), and 7.2 with that
# wakeup deleted from mm/migrate.c fails it (59,904 candidate pages,
# nobody woken).
#
# Environment (default):
#   PROMOTE_MB    THPs to fault in on node 1, MiB, even [128]
#   WSF           vm.watermark_scale_factor for the test [1000]
#   SECONDS_RUN   how long the THPs are touched, s [20]
set -u
DIR=$(cd "$(dirname "$0")" && pwd)
. "$DIR/../lib/ktap.sh"
PROMOTE_MB=${PROMOTE_MB:-128}
WSF=${WSF:-1000}
SECONDS_RUN=${SECONDS_RUN:-20}
KSWAPD=vmscan/mm_vmscan_wakeup_kswapd
KCOMPACTD=compaction/mm_compaction_wakeup_kcompactd
TIERS=/sys/devices/virtual/memory_tiering
THP_ENABLED=/sys/kernel/mm/transparent_hugepage/enabled
DESC="numa_promotion: a promotion that finds no room wakes kswapd or kcompactd at its order"
READY=/tmp/numa_promotion.ready

cleanup() {
	hist_stop "$KSWAPD"
	hist_stop "$KCOMPACTD"
	sysctl_restore_all
	rm -f "$READY"
}
trap cleanup EXIT

# lower_tier_node: node 1, if it is in a memory tier of its own (a tier
# directory's nodelist is exactly "1"); the tiers below DRAM have higher
# numbers
lower_tier_node() {
	local t
	for t in "$TIERS"/memory_tier*; do
		[ "$(cat "$t/nodelist" 2>/dev/null)" = 1 ] && return 0
	done
	return 1
}

# node0_pages FIELD: the sum over node 0's zones of a /proc/zoneinfo
# field ("pages free" as "free", or min, low, high)
node0_pages() {
	awk -v f="$1" '/^Node/ { n = $2 }
		n == "0," && (($1 == "pages" && $2 == f) || $1 == f) { s += $NF }
		END { print s + 0 }' /proc/zoneinfo
}

# node0_zones: "ZONE free/high" for each of node 0's zones with pages
node0_zones() {
	awk '/^Node/ { n = $2; z = $4 }
		n == "0," && $1 == "pages" && $2 == "free" { f = $3 }
		n == "0," && $1 == "high" { if (f) printf "%s %d/%d ", z, f, $2 }' /proc/zoneinfo
}

# wait_ready PID: wait up to 600 s for promote (PID) to have its memory in
# place; false if it ended first
wait_ready() {
	local n=0
	while [ ! -e "$READY" ] && [ $n -lt 600 ]; do
		kill -0 "$1" 2>/dev/null || return 1
		sleep 1
		n=$((n + 1))
	done
	[ -e "$READY" ]
}

main() {
	local low high fill_mb free zones v0 v1 pid k c
	ktap_print_header
	ktap_require_uint 1 PROMOTE_MB WSF SECONDS_RUN
	[ $((PROMOTE_MB % 2)) -eq 0 ] ||
		ktap_exit_fail_msg "numa_promotion: bad PROMOTE_MB '$PROMOTE_MB' (even: a THP is 2 MiB)"
	[ -n "$(trace_missing "$KSWAPD" "$KCOMPACTD")" ] &&
		skip_all "no wakeup trace events"
	[ -f /proc/sys/kernel/numa_balancing ] ||
		skip_all "no NUMA balancing (CONFIG_NUMA_BALANCING off)"
	grep -Eq '\[(always|madvise)\]' "$THP_ENABLED" 2>/dev/null ||
		skip_all "THP off (no $THP_ENABLED, or never): no order-9 folio to promote"
	lower_tier_node ||
		skip_all "node 1 is in no memory tier below node 0 (needs vm-run --tiers and CONFIG_ACPI_HMAT): $(cat "$TIERS"/memory_tier*/nodelist 2>/dev/null | tr '\n' ' ')"
	ktap_set_plan 1
	sysctl_set kernel.numa_balancing 2
	sysctl_set vm.watermark_scale_factor "$WSF"
	low=$(node0_pages low)
	high=$(node0_pages high)
	fill_mb=$((($(node0_pages free) - (low + high) / 2) / 256))
	[ "$fill_mb" -gt 0 ] || fill_mb=0
	hist_start "$KSWAPD" order "nid == 0 && gfp_flags == 0"
	hist_start "$KCOMPACTD" order "nid == 0"
	v0=$(vmstat_snapshot pgpromote_candidate pgpromote_candidate_nrl pgpromote_success)
	rm -f "$READY"
	"$SCRIPTS/guest/promote" --mb "$PROMOTE_MB" --node 1 \
		--seconds "$SECONDS_RUN" --fill-mb "$fill_mb" --fill-node 0 \
		--ready "$READY" >/dev/null &
	pid=$!
	wait_ready "$pid" || ktap_exit_fail_msg "numa_promotion: promote ended before its memory was in place"
	free=$(node0_pages free)
	zones=$(node0_zones)
	wait "$pid" || ktap_exit_fail_msg "numa_promotion: promote failed"
	v1=$(vmstat_snapshot pgpromote_candidate pgpromote_candidate_nrl pgpromote_success)
	v1=$(vmstat_delta "$v0" "$v1" | tr '\n' ' ')
	k=$(hist_total "$KSWAPD" 9 99)
	c=$(hist_total "$KCOMPACTD" 9 99)
	ktap_print_msg "node 0: watermarks low $low high $high pages, $fill_mb MiB filled, then $free pages free (zone free/high: $zones);" \
		"pages ${v1% }; kswapd woken $k times with gfp 0, kcompactd $c times, at order 9 or above"
	if [ "$(echo "$v1" | sed -n 's/.*pgpromote_candidate: \([0-9]*\).*/\1/p')" = 0 ]; then
		ktap_test_skip "$DESC: NUMA balancing made no promotion candidate"
	elif [ $((k + c)) -eq 0 ] && [ "$free" -ge "$high" ]; then
		ktap_test_skip "$DESC: node 0 was at its high watermark, nothing to wake for"
	else
		ktap_test_result "$DESC" [ $((k + c)) -gt 0 ]
	fi
	ktap_finished
}

main
