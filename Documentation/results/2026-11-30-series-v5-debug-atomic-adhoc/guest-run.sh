#!/bin/bash
set -eu
export FRAG_MB=$(($(sed -n "s/^MemFree: *\([0-9]*\) kB/\1/p" /proc/meminfo) / 1024 - 570 - 250))
/work/main/scripts/workloads/atomic "$1" > $RESULTS/atomic.log 2>&1 || echo "atomic failed"
grep -E "^(alloc_success_pct|pgsteal_kswapd|kswapd_runs|kswapd_wakeup_requests_order0|kswapd_wakeup_requests_highorder|kcompactd_cpu_seconds|compact_daemon_wake|free_mb_before):" $RESULTS/metrics.txt
grep -E "Node 0, zone +DMA32" /proc/buddyinfo
