# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# Sourced by each selftest after it sets DIR (its own directory), not run.
#
# KTAP output: the kernel's own helpers,
# tools/testing/selftests/kselftest/ktap_helpers.sh, as the kselftest
# install the test runs from has them (make -C selftests install), or else
# from the kernel tree that KSELFTEST_DIR names (its
# tools/testing/selftests).  So the semantics are the kernel's: a plan
# (ktap_set_plan), ktap_skip_all before it for a test that cannot run at
# all (then exit $KSFT_SKIP), and ktap_finished exiting 0 only if every
# planned case passed or was skipped.
#
# SCRIPTS: the project's scripts/ directory (guest helpers, workloads),
# installed beside the tests or in the source tree; its guest helpers
# (scripts/guest/common.sh) are sourced here.

for KTAP_HELPERS in "$DIR/../kselftest/ktap_helpers.sh" \
	"${KSELFTEST_DIR:-/nonexistent}/kselftest/ktap_helpers.sh"; do
	[ -r "$KTAP_HELPERS" ] && break
done
if [ ! -r "$KTAP_HELPERS" ]; then
	echo "Bail out! no kselftest/ktap_helpers.sh: install the tests (make -C selftests install) or set KSELFTEST_DIR"
	exit 1
fi
# shellcheck source=/dev/null
. "$KTAP_HELPERS"

if [ -d "$DIR/../scripts/guest" ]; then
	SCRIPTS=$(cd "$DIR/../scripts" && pwd)
else
	SCRIPTS=$(cd "$DIR/../../scripts" && pwd)
fi
# the workloads' helpers: fragment, vmstat, meminfo, tracing, is_uint...
# shellcheck source=../../scripts/guest/common.sh
. "$SCRIPTS/guest/common.sh"

# ktap_require_uint MIN NAME...: bail out unless each named variable holds
# an integer of at least MIN
ktap_require_uint() {
	local min=$1 v
	shift
	for v in "$@"; do
		is_uint "${!v}" "$min" ||
			ktap_exit_fail_msg "${0##*/}: bad $v '${!v}' (an integer of at least $min)"
	done
}

# skip_all REASON: the test cannot run here at all: skip it, before the
# plan, under its description (DESC) and exit
skip_all() {
	ktap_skip_all "$DESC: $1"
	exit "$KSFT_SKIP"
}

# ktap_count_result DESC LOST RUNS WHAT COUNT LIMIT: the result of a case
# that counts COUNT in traced RUNS: skipped if the trace lost LOST events,
# failed as not exercised (WHAT: what was never seen) if RUNS is 0,
# passed if COUNT is at most LIMIT
ktap_count_result() {
	if [ "$2" -gt 0 ]; then
		ktap_test_skip "$1: the trace buffer dropped $2 events; raise TRACE_KB"
	elif [ "$3" -eq 0 ]; then
		ktap_test_fail "$1: $4, nothing measured"
	else
		ktap_test_result "$1" [ "$5" -le "$6" ]
	fi
}
