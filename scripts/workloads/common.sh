# shellcheck shell=bash
# Helpers shared by the guest-side workloads.  Sourced, not run.

WORKLOADS=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
FRAG_PID=

meminfo_mb() { echo $(($(sed -n "s/^$1: *\([0-9]*\) kB/\1/p" /proc/meminfo) / 1024)); }

# vmstat_snapshot KEY...: "key value" lines, sorted, for vmstat_delta.
vmstat_snapshot() { grep -E "^($(echo "$@" | tr ' ' '|')) " /proc/vmstat | sort; }

# vmstat_delta BEFORE AFTER: "key: after - before" lines.
vmstat_delta() {
	join <(echo "$1") <(echo "$2") | awk '{ printf "%s: %d\n", $1, $3 - $2 }'
}

# start_fragment ARGS...: run scripts/workloads/fragment in the background
# and wait until its holes are punched; FRAG_PID is its PID and
# FRAG_LOG the file with its output.  Returns 1 if it dies first.
FRAG_LOG=/tmp/fragment.log
start_fragment() {
	rm -f /tmp/fragment.ready
	"$WORKLOADS/fragment" "$@" --ready /tmp/fragment.ready >"$FRAG_LOG" 2>&1 &
	FRAG_PID=$!
	while [ ! -f /tmp/fragment.ready ]; do
		if ! kill -0 "$FRAG_PID" 2>/dev/null; then
			echo "${0##*/}: fragment died: $(tail -n 1 "$FRAG_LOG")" >&2
			FRAG_PID=
			return 1
		fi
		sleep 0.2
	done
	cat "$FRAG_LOG"
}

# stop_fragment: kill the fragmenter (its memory is freed) and reap it
stop_fragment() {
	[ -n "$FRAG_PID" ] || return 0
	kill "$FRAG_PID" 2>/dev/null || true
	wait "$FRAG_PID" 2>/dev/null || true
	FRAG_PID=
}

# system_cpu_seconds: CPU time all CPUs spent in the kernel (system, irq
# and softirq columns of /proc/stat), in seconds.
system_cpu_seconds() {
	awk -v hz="$(getconf CLK_TCK)" '/^cpu / { printf "%.2f\n", ($4 + $7 + $8) / hz }' /proc/stat
}

# buddy_free_pages ORDER: "free_pages_order<ORDER>plus_<zone>: N" for the
# Normal and DMA32 zones of node 0, N counted in base pages from
# /proc/buddyinfo (the free blocks an allocation of ORDER could use).
buddy_free_pages() {
	grep -E 'Node 0, zone +(Normal|DMA32) ' /proc/buddyinfo |
		awk -v o="$1" '{ s = 0; for (i = 5 + o; i <= NF; i++) s += $i * 2 ^ (i - 5)
			printf "free_pages_order%dplus_%s: %d\n", o, $4, s }'
}

# CPU time of a kernel thread, in seconds: the scheduler's
# se.sum_exec_runtime (ms, ns resolution) from /proc/PID/sched with
# CONFIG_SCHED_DEBUG; otherwise utime + stime from /proc/PID/stat, which
# count in clock ticks (10 ms at HZ=100: too coarse for kswapd once the
# series has made it idle).
thread_cpu_seconds() {
	local pid
	pid=$(pgrep -x "$1" | head -n 1)
	[ -n "$pid" ] || { echo 0; return; }
	if [ -r "/proc/$pid/sched" ]; then
		awk '$1 == "se.sum_exec_runtime" { printf "%.6f", $3 / 1000 }' "/proc/$pid/sched"
	else
		awk -v hz="$(getconf CLK_TCK)" '{ printf "%.3f", ($14 + $15) / hz }' "/proc/$pid/stat"
	fi
}
