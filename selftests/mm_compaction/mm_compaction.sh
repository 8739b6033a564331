#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The kernel's own compaction-related mm selftests, from the running
# kernel's tools/testing/selftests/mm/, built in the guest with the host's
# compiler against the kernel's exported uapi headers (vm_util.c uses
# interfaces newer than the host's), and run:
#  - compaction_test: makes huge pages available by compaction;
#  - transhuge-stress: faults in THPs and splits them, for THS_SECONDS,
#    over THS_MB of memory, so compaction and migration run under load.
#  - migration: moves anonymous, THP and hugetlb pages between two NUMA
#    nodes while other threads touch them.  Its cases need two nodes with
#    memory and three CPUs; "make check CONFIG=numa" boots a CONFIG_NUMA
#    kernel with two emulated nodes (numa=fake=2) and four CPUs.  Skipped,
#    with the reason, on the single-node minimal and debug kernels.  The
#    hugetlb cases get MIGRATION_HUGEPAGES huge pages, restored afterwards.
# One case per program; its own KTAP is shown indented beneath.  Pass
# criterion: each program exits 0 (the kselftest way: 4 is a skip, with
# the program's reason); the test passes when no program fails.
#
# Environment (default):
#   KERNEL_TREE  source tree of the running kernel (required)
#   KERNEL_OBJ   its build directory, with usr/include from "make headers"
#                (required)
#   THS_SECONDS  transhuge-stress duration, s [10]
#   MIGRATION_HUGEPAGES  huge pages reserved for migration's hugetlb
#                cases [4]
#   THS_MB       memory transhuge-stress cycles through, MiB [half of
#                MemFree]
set -u
DIR=$(cd "$(dirname "$0")" && pwd)
. "$DIR/../lib/ktap.sh"

TREE=${KERNEL_TREE:-}
OBJ=${KERNEL_OBJ:-}
MM=$TREE/tools/testing/selftests/mm
THS_SECONDS=${THS_SECONDS:-10}
THS_MB=${THS_MB:-$(($(meminfo_mb MemFree) / 2))}
MIGRATION_HUGEPAGES=${MIGRATION_HUGEPAGES:-4}
NR_HUGEPAGES=/proc/sys/vm/nr_hugepages
HUGEPAGES0=
WORK=$(mktemp -d)

cleanup() {
	[ -z "$HUGEPAGES0" ] || echo "$HUGEPAGES0" >"$NR_HUGEPAGES"
	rm -rf "$WORK"
}
trap cleanup EXIT

# The helpers every mm selftest program links, as the directory's
# Makefile has it: vm_util.c and thp_settings.c (6.12), vm_util.c and
# hugepage_settings.c (7.2).
HELPERS="vm_util.c thp_settings.c hugepage_settings.c"

# build NAME FILE...: compile the FILEs of the mm selftests directory, and
# the helpers this kernel's directory has, into $WORK/NAME; a FILE that
# starts with -l is a library to link.
build() {
	local name=$1 f sources=() libs=(-lm)
	shift
	for f in $HELPERS; do
		[ ! -f "$MM/$f" ] || sources+=("$MM/$f")
	done
	for f in "$@"; do
		case "$f" in
		-l*) libs+=("$f") ;;
		*) sources+=("$MM/$f") ;;
		esac
	done
	gcc -O2 -isystem "$OBJ/usr/include" -I "$TREE/tools/testing/selftests" \
		-o "$WORK/$name" "${sources[@]}" "${libs[@]}" >"$WORK/$name.build" 2>&1
}

# run_program NAME ARGS...: one case: the program's exit status, the
# kselftest way (0 pass, 4 skip, else fail)
run_program() {
	local name=$1 status
	shift
	"$WORK/$name" "$@" 2>&1 | sed -u 's/^/  /'
	status=${PIPESTATUS[0]}
	case $status in
	0) ktap_test_pass "mm $name" ;;
	4) ktap_test_skip "mm $name" ;;
	*) ktap_test_fail "mm $name # exit=$status" ;;
	esac
}

# kernel_test NAME SOURCES -- ARGS...
kernel_test() {
	local name=$1 sources=()
	shift
	while [ $# -gt 0 ] && [ "$1" != -- ]; do
		sources+=("$1")
		shift
	done
	shift
	if [ ! -f "$MM/${sources[0]}" ]; then
		ktap_test_skip "mm $name: the kernel tree has no ${sources[0]}"
	elif ! build "$name" "${sources[@]}"; then
		sed 's/^/# /' "$WORK/$name.build" | tail -n 10
		ktap_test_fail "mm $name: does not build"
	else
		run_program "$name" "$@"
	fi
}

# memory_nodes: how many NUMA nodes have memory
memory_nodes() {
	local nodes
	nodes=$(cat /sys/devices/system/node/has_memory 2>/dev/null) || {
		echo 1
		return
	}
	echo "$nodes" | tr ',' '\n' |
		awk -F- '{ n += NF == 2 ? $2 - $1 + 1 : 1 } END { print n + 0 }'
}

# migration_test: the kernel's migration selftest, where it can run
migration_test() {
	local nodes cpus
	nodes=$(memory_nodes)
	cpus=$(nproc)
	if [ "$nodes" -lt 2 ] || [ "$cpus" -lt 3 ]; then
		ktap_test_skip "mm migration: needs two NUMA nodes with memory and three CPUs ($nodes and $cpus here; make check CONFIG=numa has them)"
		return
	fi
	HUGEPAGES0=$(cat "$NR_HUGEPAGES")
	echo "$MIGRATION_HUGEPAGES" >"$NR_HUGEPAGES"
	ktap_print_msg "migration: $nodes nodes, $cpus CPUs, $(cat "$NR_HUGEPAGES") huge pages"
	kernel_test migration migration.c -lnuma --
}

main() {
	local v t tests="compaction_test transhuge-stress migration"
	ktap_print_header
	ktap_require_uint 1 THS_SECONDS THS_MB MIGRATION_HUGEPAGES
	if [ -z "$TREE" ] || [ ! -d "$MM" ] || [ ! -f "$OBJ/usr/include/linux/fs.h" ]; then
		ktap_skip_all "mm ($tests): needs KERNEL_TREE and KERNEL_OBJ with uapi headers"
		exit "$KSFT_SKIP"
	fi
	ktap_set_plan 3
	kernel_test compaction_test compaction_test.c --
	kernel_test transhuge-stress transhuge-stress.c -- \
		-d "$THS_SECONDS" "$THS_MB"
	migration_test
	ktap_finished
}

main
