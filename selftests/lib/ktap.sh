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
