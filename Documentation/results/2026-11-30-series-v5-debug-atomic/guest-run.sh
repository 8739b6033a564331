#!/bin/bash
# debug-config "atomic" with a timeline (ad hoc)
set -eu
export FRAG_MB=$(($(sed -n "s/^MemFree: *\([0-9]*\) kB/\1/p" /proc/meminfo) / 1024 - 570 - 250))
. /work/main/scripts/workloads/common.sh
sample() {
	while :; do
		printf '%s kcompactd_s=%s kswapd_s=%s ' "$(cut -d' ' -f1 /proc/uptime)" \
			"$(thread_cpu_seconds kcompactd0)" "$(thread_cpu_seconds kswapd0)"
		grep -E '^(pgsteal_kswapd|pageoutrun|compact_daemon_wake|pgmigrate_success|compact_daemon_migrate_scanned|compact_stall) ' /proc/vmstat | tr ' \n' '= '
		echo
		sleep 1
	done
}
sample > "$RESULTS/timeline.txt" &
SP=$!
/work/main/scripts/workloads/atomic "$1" > "$RESULTS/atomic.log" 2>&1 || echo "atomic failed"
kill $SP
grep -E "^(alloc_success_pct|pgsteal_kswapd|kswapd_runs|kswapd_wakeup_requests_order0|kswapd_wakeup_requests_highorder|kcompactd_cpu_seconds|compact_daemon_wake|free_mb_before):" "$RESULTS/metrics.txt"
grep -E "Node 0, zone +DMA32" /proc/buddyinfo
