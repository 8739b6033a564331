#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The kernel's own compaction selftest, tools/testing/selftests/mm/
# compaction_test.c from the running kernel's source tree, built in the
# guest with the host's compiler and run; its KTAP is passed through.
#
# Environment: KERNEL_TREE  source tree of the running kernel (required)
set -u
DIR=$(cd "$(dirname "$0")" && pwd)
. "$DIR/../lib/ktap.sh"

TREE=${KERNEL_TREE:-}
SRC=$TREE/tools/testing/selftests/mm/compaction_test.c
BIN=/tmp/compaction_test

if [ -z "$TREE" ] || [ ! -f "$SRC" ]; then
	ktap_print_header
	ktap_set_plan 1
	ktap_test_skip "mm compaction_test: KERNEL_TREE does not hold $SRC"
	ktap_finished
fi
if ! gcc -O2 -I "$TREE/tools/testing/selftests" -o "$BIN" "$SRC"; then
	ktap_print_header
	ktap_set_plan 1
	ktap_test_fail "mm compaction_test: does not build"
	ktap_finished
fi
# compaction_test prints its own KTAP and exits the kselftest way
exec "$BIN"
