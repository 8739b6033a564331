# shellcheck shell=bash
# Helpers shared by the guest-side workloads (scripts/workloads/) and
# selftests.  Sourced, not run.  GUEST is this directory, where the other
# guest-side helper programs are.

GUEST=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
FRAG_PID=

# kernel_is_rt: a PREEMPT_RT kernel (its version string says so), where
# the page allocator cannot be entered from a hard interrupt
# (highorder_stress refuses context=hardirq)
kernel_is_rt() { uname -v | grep -qw PREEMPT_RT; }

# preempt_model: the preemption model the kernel runs: rt on PREEMPT_RT;
# with PREEMPT_DYNAMIC the one selected (none, voluntary, full or lazy,
# in parentheses in debugfs's sched/preempt, which preempt= sets at boot);
# else "static" (a model fixed at build time, which uname -v does not
# name reliably: the kernel config says which).
preempt_model() {
	local f=/sys/kernel/debug/sched/preempt
	if kernel_is_rt; then
		echo rt
	elif [ -r "$f" ]; then
		sed -n 's/.*(\([a-z]*\)).*/\1/p' "$f"
	else
		echo static
	fi
}

# lru_gen_set VALUE: MGLRU on (y) or off (n, the classic LRU) for the
# run, by /sys/kernel/mm/lru_gen/enabled; empty leaves the kernel's.
# Prints the state after, for the metrics: "lru_gen_enabled: 0x..."
lru_gen_set() {
	local f=/sys/kernel/mm/lru_gen/enabled
	if [ -n "$1" ]; then
		case "$1" in y | n) ;; *) echo "bad LRU_GEN '$1' (y or n)" >&2; return 1 ;; esac
		[ -w "$f" ] || { echo "LRU_GEN=$1: no $f (CONFIG_LRU_GEN off)" >&2; return 1; }
		echo "$1" >"$f"
	fi
	[ ! -r "$f" ] || echo "lru_gen_enabled: $(cat "$f")"
}

meminfo_mb() { echo $(($(sed -n "s/^$1: *\([0-9]*\) kB/\1/p" /proc/meminfo) / 1024)); }

# fio_mb_per_s REPORT RW: the first job's read or write rate (RW: read or
# write), MB/s, from fio's JSON report; fio may put a line before the
# JSON ("terminating on signal 2").  Fails, saying so, without a report.
fio_mb_per_s() {
	python3 -c '
import json, sys
try:
    text = open(sys.argv[1]).read()
    job = json.loads(text[text.index("{"):])["jobs"][0]
except (OSError, ValueError, KeyError, IndexError):
    sys.exit("fio_mb_per_s: no fio report in " + sys.argv[1])
print("%.1f" % (job[sys.argv[2]]["bw"] / 1024))
' "$1" "$2"
}

# vmstat_snapshot KEY...: "key value" lines, sorted, for vmstat_delta.
vmstat_snapshot() { grep -E "^($(echo "$@" | tr ' ' '|')) " /proc/vmstat | sort; }
# vmstat_value NAME: a /proc/vmstat counter, or nothing if this kernel has
# no such counter
vmstat_value() { sed -n "s/^$1 //p" /proc/vmstat; }

# vmstat_delta BEFORE AFTER: "key: after - before" lines.
vmstat_delta() {
	join <(echo "$1") <(echo "$2") | awk '{ printf "%s: %d\n", $1, $3 - $2 }'
}

# tlb_shootdowns: TLB shootdown interrupts received, summed over CPUs:
# the flushes other CPUs asked of them (x86's TLB row of /proc/interrupts),
# or 0 where there is no such row.
tlb_shootdowns() {
	awk '$1 == "TLB:" { for (i = 2; i <= NF && $i ~ /^[0-9]+$/; i++) s += $i }
		END { print s + 0 }' /proc/interrupts
}

# start_fragment ARGS...: run scripts/workloads/fragment in the background
# and wait until its holes are punched; FRAG_PID is its PID and
# FRAG_LOG the file with its output.  Returns 1 if it dies first.
FRAG_LOG=/tmp/fragment.log
start_fragment() {
	rm -f /tmp/fragment.ready
	"$GUEST/fragment" "$@" --ready /tmp/fragment.ready >"$FRAG_LOG" 2>&1 &
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

# fragment_alive: whether the fragmenter started by start_fragment still
# runs.  If the OOM killer took it, its memory was freed in the middle of
# the measurement, and the run's numbers describe another setup: say so and
# return 1, for the caller to fail the run.
fragment_alive() {
	# a killed child stays a zombie until the shell reaps it
	case $([ -z "$FRAG_PID" ] || ps -o stat= -p "$FRAG_PID") in
	'' | Z*) ;;
	*) return 0 ;;
	esac
	echo "${0##*/}: the fragmenter died during the run (vmstat oom_kill" \
		"$(vmstat_value oom_kill); size the workload for the guest's memory)" >&2
	return 1
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

# pageblocks TYPE: pageblocks of migratetype TYPE (a column of
# /proc/pagetypeinfo's "Number of blocks type" table, e.g. Unmovable),
# summed over zones
pageblocks() {
	awk -v type="$1" '/^Number of blocks type/ { for (i = 5; i <= NF; i++) if ($i == type) col = i; next }
		col && /^Node .*, zone/ { s += $col } END { print s + 0 }' /proc/pagetypeinfo
}

# buddy_free_pages ORDER: "free_pages_order<ORDER>plus_<zone>: N" for the
# Normal and DMA32 zones of node 0, N counted in base pages from
# /proc/buddyinfo (the free blocks an allocation of ORDER could use).
buddy_free_pages() {
	grep -E 'Node 0, zone +(Normal|DMA32) ' /proc/buddyinfo |
		awk -v o="$1" '{ s = 0; for (i = 5 + o; i <= NF; i++) s += $i * 2 ^ (i - 5)
			printf "free_pages_order%dplus_%s: %d\n", o, $4, s }'
}

# thread_pid NAME: the PID of the first task named NAME (kswapd0), or
# nothing
thread_pid() { pgrep -x "$1" | head -n 1; }

# CPU time of a kernel thread, in seconds: the scheduler's
# se.sum_exec_runtime (ms, ns resolution) from /proc/PID/sched with
# CONFIG_SCHED_DEBUG; otherwise utime + stime from /proc/PID/stat, which
# count in clock ticks (10 ms at HZ=100: too coarse for kswapd once the
# series has made it idle).
thread_cpu_seconds() {
	local pid
	pid=$(thread_pid "$1")
	[ -n "$pid" ] || { echo 0; return; }
	if [ -r "/proc/$pid/sched" ]; then
		awk '$1 == "se.sum_exec_runtime" { printf "%.6f", $3 / 1000 }' "/proc/$pid/sched"
	else
		awk -v hz="$(getconf CLK_TCK)" '{ printf "%.3f", ($14 + $15) / hz }' "/proc/$pid/stat"
	fi
}

# is_uint VALUE [MIN]: VALUE is a decimal integer of at least MIN [0]
is_uint() {
	case "$1" in '' | *[!0-9]*) return 1 ;; esac
	[ "$1" -ge "${2:-0}" ]
}

# require_uint NAME...: exit 2 with a message unless every named variable holds
# a non-negative integer; require_count NAME...: a positive one.
require_uint() { require_at_least 0 "$@"; }
require_count() { require_at_least 1 "$@"; }

# require_at_least MIN NAME...: the check of both
require_at_least() {
	local v min=$1
	shift
	for v in "$@"; do
		is_uint "${!v}" "$min" ||
			{ echo "${0##*/}: bad $v '${!v}' (a whole number from $min)" >&2; exit 2; }
	done
}

# require_one_of NAME VALUE...: exit 2 with a message unless the variable
# NAME holds one of the VALUEs
require_one_of() {
	local v=$1 ok
	shift
	for ok in "$@"; do
		[ "${!v}" != "$ok" ] || return 0
	done
	echo "${0##*/}: bad $v '${!v}' (one of: $*)" >&2
	exit 2
}

# symbol_range FUNCTION: "LO HI", FUNCTION's text as offsets from _stext
# (as preemptirq's caller_offs and parent_offs give them): from its
# address to the next higher text symbol's, by /proc/kallsyms.  Fails,
# printing nothing, if the kernel has no such text symbol.
symbol_range() {
	local r
	r=$(LC_ALL=C sort /proc/kallsyms | awk -v fn="$1" '$2 ~ /^[tT]$/ {
			if ($3 == "_stext") s = $1
			if (a != "" && $1 != a) { print s, a, $1; exit }
			if ($3 == fn && a == "") a = $1 }')
	[ -n "$r" ] || return 1
	# shellcheck disable=SC2086 # three words
	set -- $r
	echo "$((0x$2 - 0x$1)) $((0x$3 - 0x$1))"
}

# Event counts with hist triggers.  hist_start EVENT KEYS [FILTER] adds
# "hist:keys=KEYS [if FILTER]" to tracing event EVENT (e.g.
# kmem/mm_page_alloc); hist_total EVENT [LO [HI]] prints the sum of its
# hitcounts, with LO only of the entries whose first key is LO..HI [LO];
# hist_stop EVENT removes every hist trigger of it.
TRACEFS=/sys/kernel/tracing
hist_start() {
	local spec="hist:keys=$2"
	[ -z "${3:-}" ] || spec="$spec if $3"
	# appended: opening a trigger file with O_TRUNC removes its triggers
	echo "$spec" >>"$TRACEFS/events/$1/trigger"
}

hist_total() {
	awk -v lo="${2:-}" -v hi="${3:-${2:-}}" '/^\{/ && (lo == "" || ($3 + 0 >= lo && $3 + 0 <= hi)) {
			for (i = 1; i < NF; i++) if ($i == "hitcount:") s += $(i + 1) }
		END { print s + 0 }' "$TRACEFS/events/$1/hist"
}

hist_stop() {
	local line
	grep '^hist:' "$TRACEFS/events/$1/trigger" 2>/dev/null | while read -r line; do
		echo "!${line%% \[*}" >>"$TRACEFS/events/$1/trigger" 2>/dev/null || true
	done
}

# The file the page-cache helpers below make on the scratch disk
CACHE_FILE=/mnt/scratch/cache

# write_cache_file MB: write CACHE_FILE, MB MiB, sync it and drop it from
# the page cache.
write_cache_file() {
	mountpoint -q /mnt/scratch || { echo "${0##*/}: needs the scratch disk (vm-run --scratch-mb)" >&2; exit 1; }
	dd if=/dev/zero of="$CACHE_FILE" bs=1M count="$1" status=none
	sync
	echo 3 >/proc/sys/vm/drop_caches
}

# read_cache_file FOLIOS: read CACHE_FILE back into the page cache.  large:
# with cat, so readahead caches it in large folios (up to PMD size);
# small: a page at a time with readahead off (POSIX_FADV_RANDOM), one
# order-0 folio a page, the folio size random reads leave (read in file
# order, though, so the pages likely lie in order in memory).
read_cache_file() {
	case "$1" in
	large) cat "$CACHE_FILE" >/dev/null ;;
	small)
		python3 - "$CACHE_FILE" <<'PY'
import os, sys
fd = os.open(sys.argv[1], os.O_RDONLY)
os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_RANDOM)
page = os.sysconf("SC_PAGE_SIZE")
for off in range(0, os.fstat(fd).st_size, page):
    os.pread(fd, page, off)
PY
		;;
	*) echo "${0##*/}: read_cache_file: bad folio size '$1' (large or small)" >&2; exit 1 ;;
	esac
}

# make_page_cache MB: CACHE_FILE as clean page cache in large folios
make_page_cache() {
	write_cache_file "$1"
	read_cache_file large
}

# frag_load KO RATE HOLD SECONDS: load highorder_stress for order-3
# GFP_ATOMIC "frag" requests from hardirq on CPU 0, RATE a second in
# bursts of 8, each held until HOLD later ones, for SECONDS; the cap on
# held memory is set so that it does not bind (the ring is the in-flight
# buffer pool).  frag_run starts them.
frag_load() {
	insmod "$1" cpus=0 order=3 mode=frag context=hardirq rate="$2" \
		burst=8 hold="$3" duration_ms=$(($4 * 1000)) \
		max_held_mb=$(($3 * 32 / 1024 + 64))
}

# frag_run: start the loaded requests and wait until they end
frag_run() {
	echo 1 >/sys/kernel/debug/highorder_stress/run
	while [ "$(cat /sys/kernel/debug/highorder_stress/run)" = 1 ]; do
		sleep 1
	done
}

# sysctl_set NAME VALUE: set /proc/sys/NAME (dots or slashes) and remember
# its old value for sysctl_restore_all.
SYSCTL_SAVED=
sysctl_set() {
	local f=/proc/sys/${1//.//}
	SYSCTL_SAVED="$SYSCTL_SAVED $f=$(cat "$f" | tr '\t' ' ' | sed 's/ /%20/g')"
	echo "$2" >"$f"
}

sysctl_restore_all() {
	local kv
	for kv in $SYSCTL_SAVED; do
		echo "${kv#*=}" | sed 's/%20/ /g' >"${kv%%=*}" 2>/dev/null || true
	done
	SYSCTL_SAVED=
}

# What compacts, for the workloads that measure compaction: "memory",
# echo 1 > compact_memory (whole zones, order -1); "thp-faults", THP_MB of
# MADV_HUGEPAGE faults (thp-fault: direct compaction at order 9); or
# "proactive", vm.compaction_proactiveness raised to PROACTIVENESS [100]
# for PROACTIVE_SECONDS (kcompactd in the background).  That default is
# the trigger's own, TRIGGER_PROACTIVENESS: PROACTIVENESS itself stays
# unset for the workloads that leave the sysctl at the kernel's (net).
# With THP_EXIT=1 thp-faults' process exits with its huge pages mapped,
# instead of unmapping them, so that exit_mmap() frees them.
THP_MB=${THP_MB:-}
THP_EXIT=${THP_EXIT:-0}
TRIGGER_PROACTIVENESS=${PROACTIVENESS:-100}
PROACTIVE_SECONDS=${PROACTIVE_SECONDS:-10}

check_compaction_trigger() {
	case "$1" in
	memory | thp-faults | proactive) ;;
	*) echo "${0##*/}: bad compaction trigger '$1' (memory, thp-faults or proactive)" >&2; exit 2 ;;
	esac
	[ -z "${PROACTIVENESS:-}" ] || require_uint PROACTIVENESS
	require_uint PROACTIVE_SECONDS
	if [ "$1" = thp-faults ] && [ ! -d /sys/kernel/mm/transparent_hugepage ]; then
		echo "${0##*/}: the thp-faults trigger needs THP, which this kernel lacks (CONFIG_TRANSPARENT_HUGEPAGE; PREEMPT_RT excludes it)" >&2
		exit 2
	fi
	case "$THP_EXIT" in 0 | 1) ;; *) echo "${0##*/}: bad THP_EXIT '$THP_EXIT' (0 or 1)" >&2; exit 2 ;; esac
}

# prepare_compaction_trigger TRIGGER, after the holes are punched: THP_MB
# defaults to the free memory in order-9 blocks plus 256 MiB, so that the
# last 256 MiB need compaction
prepare_compaction_trigger() {
	if [ "$1" = thp-faults ] && [ -z "$THP_MB" ]; then
		THP_MB=$(buddy_free_pages 9 | awk '{ s += $2 } END { printf "%d", s / 512 * 2 + 256 }')
	fi
}

run_compaction_trigger() {
	local old
	case "$1" in
	memory) echo 1 >/proc/sys/vm/compact_memory ;;
	thp-faults)
		if [ "$THP_EXIT" -eq 1 ]; then
			"$GUEST/thp-fault" --mb "$THP_MB" --exit
		else
			"$GUEST/thp-fault" --mb "$THP_MB"
		fi ;;
	proactive)
		# writing the sysctl wakes kcompactd at once.  Read it with the
		# shell's own small reads: cat's 128 KiB read() makes
		# proc_sys_call_handler() allocate and zero 256 KiB (order 6)
		# while cyclictest is sampling, which v7's bench measured as
		# the longest wait of the run.
		read -r old </proc/sys/vm/compaction_proactiveness
		echo "$TRIGGER_PROACTIVENESS" >/proc/sys/vm/compaction_proactiveness
		sleep "$PROACTIVE_SECONDS"
		echo "$old" >/proc/sys/vm/compaction_proactiveness ;;
	esac
}

# fifo_thread PID: the task of process PID that runs at SCHED_FIFO (as
# cyclictest's measuring thread), or nothing
fifo_thread() {
	local task
	for task in /proc/"$1"/task/*; do
		# field 41 is the policy; comm, field 2, has no spaces here
		[ "$(awk '{ print $41 }' "$task/stat" 2>/dev/null)" != 1 ] || { echo "${task##*/}"; return 0; }
	done
}

# thp_off: true if this kernel has no transparent huge pages, or they are
# set to "never"
thp_off() {
	local f=/sys/kernel/mm/transparent_hugepage/enabled
	[ ! -e "$f" ] || grep -q '\[never\]' "$f"
}

# start_rt_cyclictest S: cyclictest as a real-time client runs it
# (mlocked, SCHED_FIFO 99, 1 ms, one thread on CPU 0) in the background;
# sets CYCLIC_PID and, once the thread runs, CYCLIC_TID; fails if it has
# not started in S seconds (-m locks its memory first, which takes a while
# beside a fill on one CPU) or cyclictest exited
start_rt_cyclictest() {
	local n=0
	cyclictest -m -p 99 -i 1000 -t 1 -a 0 -q >/dev/null 2>&1 &
	CYCLIC_PID=$!
	CYCLIC_TID=
	while [ $n -lt $(($1 * 2)) ] && kill -0 "$CYCLIC_PID" 2>/dev/null; do
		sleep 0.5
		CYCLIC_TID=$(fifo_thread "$CYCLIC_PID")
		[ -z "$CYCLIC_TID" ] || return 0
		n=$((n + 1))
	done
	return 1
}

# pcp_largest FIELD: the largest FIELD ("batch", "high", "count") of any
# zone's per-CPU pageset
pcp_largest() {
	awk -v f="$1:" '$1 == f && $2 > m { m = $2 } END { print m + 0 }' /proc/zoneinfo
}

# pcp_largest_batch: the largest "batch:" of any zone's per-CPU pageset
pcp_largest_batch() { pcp_largest batch; }

# trace_overruns [DIR]: events the ring buffer of DIR (a trace instance;
# the top one by default) lost, summed over the CPUs: overwritten
# ("overrun:") or, with overwrite off, refused ("dropped events:")
trace_overruns() {
	cat "${1:-$TRACEFS}"/per_cpu/cpu*/stats |
		awk '$1 == "overrun:" { n += $2 } $1 == "dropped" { n += $3 } END { print n + 0 }'
}

# trace_buffer_set KB: KB of ring buffer per CPU, emptied; the size it had
# before the first call is kept for trace_buffer_restore
TRACE_KB_SAVED=
trace_buffer_set() {
	# "7 (expanded: 1408)" until the buffer was first used
	[ -n "$TRACE_KB_SAVED" ] ||
		TRACE_KB_SAVED=$(sed 's/.*expanded: \([0-9]*\)).*/\1/' "$TRACEFS/buffer_size_kb")
	echo "$1" >"$TRACEFS/buffer_size_kb"
	echo >"$TRACEFS/trace"
}

# trace_buffer_restore: back to the size before trace_buffer_set, emptied
trace_buffer_restore() {
	[ -n "$TRACE_KB_SAVED" ] || return 0
	echo "$TRACE_KB_SAVED" >"$TRACEFS/buffer_size_kb"
	echo >"$TRACEFS/trace"
	TRACE_KB_SAVED=
}

# trace_events VALUE EVENT...: write VALUE (1 or 0) to the enable file of
# each EVENT ("kmem/mm_page_pcpu_drain"); events this kernel lacks are
# passed over, so cleanup paths can call it unconditionally
trace_events() {
	local v=$1 e
	shift
	for e in "$@"; do
		[ ! -w "$TRACEFS/events/$e/enable" ] || echo "$v" >"$TRACEFS/events/$e/enable"
	done
}

# trace_events_reset EVENT...: disable each EVENT and clear its filter
# and a stacktrace trigger on it, for cleanup paths; events this kernel
# lacks are passed over
trace_events_reset() {
	local e
	trace_events 0 "$@"
	for e in "$@"; do
		[ ! -w "$TRACEFS/events/$e/filter" ] || echo 0 >"$TRACEFS/events/$e/filter"
		! grep -q '^stacktrace' "$TRACEFS/events/$e/trigger" 2>/dev/null ||
			echo '!stacktrace' >"$TRACEFS/events/$e/trigger"
	done
}

# stop_background PID: end a background process of this shell, if PID is
# set, and reap it
stop_background() {
	[ -n "$1" ] || return 0
	# "|| true": callers may run under set -e, and a killed process's
	# status is not 0
	kill "$1" 2>/dev/null || true
	wait "$1" 2>/dev/null || true
}

# function_traceable FN: true if the function tracer can trace FN (built
# in, and not inlined)
function_traceable() { grep -qx "$1" "$TRACEFS/available_filter_functions" 2>/dev/null; }

# function_trace_on FN [stack]: the function tracer on FN alone, with a
# stack trace at each call if asked; fails if FN cannot be traced.  A
# change of tracer empties the buffer, so read it before function_trace_off.
function_trace_on() {
	function_traceable "$1" || return 1
	echo "$1" >"$TRACEFS/set_ftrace_filter" &&
		echo function >"$TRACEFS/current_tracer" &&
		echo "$([ "${2:-}" = stack ] && echo 1 || echo 0)" >"$TRACEFS/options/func_stack_trace"
}

# function_trace_off: back to nop, with no function or pid filter
function_trace_off() {
	local f
	[ ! -w "$TRACEFS/options/func_stack_trace" ] || echo 0 >"$TRACEFS/options/func_stack_trace"
	[ ! -w "$TRACEFS/current_tracer" ] || echo nop >"$TRACEFS/current_tracer"
	for f in set_ftrace_filter set_ftrace_pid; do
		[ ! -w "$TRACEFS/$f" ] || echo >"$TRACEFS/$f"
	done
}

# trace_missing EVENT...: print the first EVENT this kernel cannot trace
trace_missing() {
	local e
	for e in "$@"; do
		[ -w "$TRACEFS/events/$e/enable" ] || { echo "$e"; return 0; }
	done
}
