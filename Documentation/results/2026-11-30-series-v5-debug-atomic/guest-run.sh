#!/bin/bash
# debug-config "atomic" with a timeline; TRACE=1 also traces kcompactd and
# kswapd (the variant's runs).  Ad hoc, see README.
set -eu
export FRAG_MB=$(($(sed -n "s/^MemFree: *\([0-9]*\) kB/\1/p" /proc/meminfo) / 1024 - 570 - 250))
. /work/main/scripts/workloads/common.sh
I=/sys/kernel/tracing/instances/dbg
if [ "${TRACE:-0}" = 1 ]; then
	mkdir -p $I
	echo 4096 > $I/buffer_size_kb
	for e in compaction/mm_compaction_kcompactd_wake compaction/mm_compaction_kcompactd_sleep \
		compaction/mm_compaction_begin compaction/mm_compaction_end \
		vmscan/mm_vmscan_kswapd_wake vmscan/mm_vmscan_kswapd_sleep vmscan/mm_vmscan_wakeup_kswapd; do
		echo 1 > $I/events/$e/enable
	done
	echo 1 > $I/tracing_on
fi
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
if [ "${TRACE:-0}" = 1 ]; then
	echo 0 > $I/tracing_on
	cat $I/trace > "$RESULTS/trace.txt"
fi
grep -E "^(alloc_success_pct|pgsteal_kswapd|kswapd_runs|kswapd_wakeup_requests_order0|kswapd_wakeup_requests_highorder|kcompactd_cpu_seconds|compact_daemon_wake|free_mb_before):" "$RESULTS/metrics.txt"
grep -E "Node 0, zone +DMA32" /proc/buddyinfo
