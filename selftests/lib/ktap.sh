# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# KTAP output helpers for the project's selftests, after the kernel's
# tools/testing/selftests/kselftest/ktap_helpers.sh.  Sourced, not run.

KSFT_PASS=0
KSFT_FAIL=1
KSFT_SKIP=4

KTAP_TESTNO=1
KTAP_CNT_PASS=0
KTAP_CNT_FAIL=0
KTAP_CNT_SKIP=0

ktap_print_header() { echo "TAP version 13"; }
ktap_set_plan() { echo "1..$1"; }
ktap_print_msg() { echo "# $*"; }

ktap_test_pass() {
	echo "ok $KTAP_TESTNO $*"
	KTAP_TESTNO=$((KTAP_TESTNO + 1))
	KTAP_CNT_PASS=$((KTAP_CNT_PASS + 1))
}

ktap_test_fail() {
	echo "not ok $KTAP_TESTNO $*"
	KTAP_TESTNO=$((KTAP_TESTNO + 1))
	KTAP_CNT_FAIL=$((KTAP_CNT_FAIL + 1))
}

ktap_test_skip() {
	echo "ok $KTAP_TESTNO $* # SKIP"
	KTAP_TESTNO=$((KTAP_TESTNO + 1))
	KTAP_CNT_SKIP=$((KTAP_CNT_SKIP + 1))
}

# ktap_test_result DESCRIPTION COMMAND...: pass if COMMAND succeeds.
ktap_test_result() {
	local desc=$1
	shift
	if "$@"; then
		ktap_test_pass "$desc"
	else
		ktap_test_fail "$desc"
	fi
}

ktap_print_totals() {
	echo "# Totals: pass:$KTAP_CNT_PASS fail:$KTAP_CNT_FAIL xfail:0 xpass:0 skip:$KTAP_CNT_SKIP error:0"
}

# Exit the kselftest way: 1 on any failure, 4 if everything was skipped.
ktap_finished() {
	ktap_print_totals
	if [ "$KTAP_CNT_FAIL" -gt 0 ]; then
		exit "$KSFT_FAIL"
	elif [ "$KTAP_CNT_PASS" -eq 0 ] && [ "$KTAP_CNT_SKIP" -gt 0 ]; then
		exit "$KSFT_SKIP"
	fi
	exit "$KSFT_PASS"
}
