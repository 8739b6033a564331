#!/bin/bash
# Guest side of this result set, as run except for the path of the
# workload, which is now found from this file's place in the checkout.
# Traces kcompactd's sleeps and wakeups and kswapd's runs, polls the
# module's stats every 0.1 s, and runs scripts/workloads/atomic-noboost
# with the anonymous fill sized as selftests/kswapd_gating sizes it.
# usage (in the guest): guest-run.sh KO
set -eu
TOP=$(cd "$(dirname "$0")/../../../.." && pwd)
T=/sys/kernel/tracing
echo 32768 > $T/buffer_size_kb
echo 'prev_comm == "kcompactd0"' > $T/events/sched/sched_switch/filter
echo 'comm == "kcompactd0"' > $T/events/sched/sched_wakeup/filter
echo 1 > $T/events/sched/sched_switch/enable
echo 1 > $T/events/sched/sched_wakeup/enable
echo 1 > $T/events/vmscan/mm_vmscan_kswapd_wake/enable
export FRAG_MB=${FRAG_MB:-$(($(sed -n "s/^MemFree: *\([0-9]*\) kB/\1/p" /proc/meminfo) / 1024 - 570 - 250))}
cat /proc/uptime > $RESULTS/uptime0
poll() {
	while :; do
		if [ -r /sys/kernel/debug/highorder_stress/stats ]; then
			echo "$(cut -d' ' -f1 /proc/uptime) $(grep -E '^order3_(attempts|successes):' /sys/kernel/debug/highorder_stress/stats | tr '\n' ' ')"
		fi
		sleep 0.1
	done > $RESULTS/success.txt
}
poll & P=$!
"$TOP/scripts/workloads/atomic-noboost" "$1" || true
kill $P
echo 0 > $T/tracing_on
cp $T/trace $RESULTS/trace.txt
