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
# migration.c is not run: all its cases need two NUMA nodes, and the
# project's kernels are built without CONFIG_NUMA.
# One case per program; its own KTAP is shown indented beneath.
#
# Environment (default):
#   KERNEL_TREE  source tree of the running kernel (required)
#   KERNEL_OBJ   its build directory, with usr/include from "make headers"
#                (required)
#   THS_SECONDS  transhuge-stress duration, s [10]
#   THS_MB       memory transhuge-stress cycles through, MiB [half of
#                MemFree]
set -u
DIR=$(cd "$(dirname "$0")" && pwd)
. "$DIR/../lib/ktap.sh"

TREE=${KERNEL_TREE:-}
OBJ=${KERNEL_OBJ:-}
MM=$TREE/tools/testing/selftests/mm
THS_SECONDS=${THS_SECONDS:-10}
THS_MB=${THS_MB:-$(($(sed -n 's/^MemFree: *\([0-9]*\) kB/\1/p' /proc/meminfo) / 2048))}
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

# build NAME SOURCES...: compile $MM/SOURCES into $WORK/NAME
build() {
	local name=$1
	shift
	gcc -O2 -isystem "$OBJ/usr/include" -I "$TREE/tools/testing/selftests" \
		-o "$WORK/$name" "${@/#/$MM/}" -lm >"$WORK/$name.build" 2>&1
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

main() {
	local v
	ktap_print_header
	ktap_set_plan 2
	for v in THS_SECONDS THS_MB; do
		case "${!v}" in
		'' | *[!0-9]* | 0)
			ktap_test_fail "mm compaction_test: not run: bad $v '${!v}' (not a positive integer)"
			ktap_test_fail "mm transhuge-stress: not run: bad $v '${!v}' (not a positive integer)"
			ktap_finished ;;
		esac
	done
	if [ -z "$TREE" ] || [ ! -d "$MM" ] || [ ! -f "$OBJ/usr/include/linux/fs.h" ]; then
		ktap_test_skip "mm compaction_test: needs KERNEL_TREE and KERNEL_OBJ with uapi headers"
		ktap_test_skip "mm transhuge-stress: needs KERNEL_TREE and KERNEL_OBJ with uapi headers"
		ktap_finished
	fi
	kernel_test compaction_test compaction_test.c --
	kernel_test transhuge-stress transhuge-stress.c vm_util.c -- \
		-d "$THS_SECONDS" "$THS_MB"
	ktap_finished
}

main
