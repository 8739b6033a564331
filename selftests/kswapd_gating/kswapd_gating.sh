#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# kswapd gating (patch "mm/vmscan: wake only kcompactd for high-order
# atomic requests on a balanced node"): with free memory well above the
# watermarks but fragmented below order 3, order-3 page-frag allocations
# from hardirq must not make kswapd reclaim: pageoutrun, pgscan_kswapd and
# pgsteal_kswapd stay at 0, while the allocations keep succeeding.
# On a kernel without the patch the first case fails (kswapd runs).
#
# Environment: HIGHORDER_STRESS_KO (required), GATING_SECONDS [5]
set -u
DIR=$(cd "$(dirname "$0")" && pwd)
. "$DIR/../lib/ktap.sh"

KO=${HIGHORDER_STRESS_KO:-}
GATING_SECONDS=${GATING_SECONDS:-5}
D=/sys/kernel/debug/highorder_stress
TOP=$(cd "$DIR/../.." && pwd)
FRAG_PID=

cleanup() {
	[ -z "$FRAG_PID" ] || kill "$FRAG_PID" 2>/dev/null
	rmmod highorder_stress 2>/dev/null
}
trap cleanup EXIT

vmstat() { sed -n "s/^$1 //p" /proc/vmstat; }
meminfo_mb() { echo $(($(sed -n "s/^$1: *\([0-9]*\) kB/\1/p" /proc/meminfo) / 1024)); }

# Fill 80% of memory with anonymous pages and free every other one: about
# 40% of memory free, nearly all of it in order-0 holes.
fragment() {
	rm -f /tmp/gating.ready
	"$TOP/scripts/workloads/fragment" --mb $(($(meminfo_mb MemTotal) * 8 / 10)) \
		--pattern alternate --ready /tmp/gating.ready >/dev/null &
	FRAG_PID=$!
	while [ ! -f /tmp/gating.ready ]; do
		kill -0 "$FRAG_PID" 2>/dev/null || return 1
		sleep 0.2
	done
}

main() {
	local pageout scan steal a s free
	ktap_print_header
	if [ "$(id -u)" != 0 ] || [ -z "$KO" ] || [ ! -f "$KO" ]; then
		ktap_set_plan 1
		ktap_test_skip "kswapd_gating: needs root and HIGHORDER_STRESS_KO"
		ktap_finished
	fi
	ktap_set_plan 2
	if ! fragment || ! insmod "$KO" order=3 mode=frag context=hardirq \
		rate=4000 burst=4 hold=2048 duration_ms=$((GATING_SECONDS * 1000)); then
		ktap_test_fail "setup (fragment, insmod)"
		ktap_test_fail "setup (fragment, insmod)"
		ktap_finished
	fi
	free=$(meminfo_mb MemFree)
	pageout=$(vmstat pageoutrun) scan=$(vmstat pgscan_kswapd) steal=$(vmstat pgsteal_kswapd)
	echo 1 >"$D/run"
	while [ "$(cat "$D/run")" = 1 ]; do
		sleep 0.5
	done
	pageout=$(($(vmstat pageoutrun) - pageout))
	scan=$(($(vmstat pgscan_kswapd) - scan))
	steal=$(($(vmstat pgsteal_kswapd) - steal))
	a=$(sed -n 's/^order3_attempts: //p' "$D/stats")
	s=$(sed -n 's/^order3_successes: //p' "$D/stats")
	ktap_print_msg "MemFree ${free} MiB at start; kswapd: pageoutrun $pageout, pgscan $scan, pgsteal $steal; order-3 $s of $a succeeded"
	ktap_test_result "kswapd does not reclaim for order-3 atomics on a balanced node" \
		[ "$pageout" -eq 0 -a "$scan" -eq 0 -a "$steal" -eq 0 ]
	# kcompactd keeps the allocations going: nearly all succeed
	ktap_test_result "order-3 allocations still succeed (>= 95%)" \
		[ "$a" -gt 0 -a $((s * 100)) -ge $((a * 95)) ]
	ktap_finished
}

main
