# SPDX-License-Identifier: GPL-2.0
# Included by each test directory's Makefile: the kernel's kselftest rules,
# tools/testing/selftests/lib.mk of the kernel tree that KSELFTEST_DIR
# names (install, emit_tests, run_tests).  The helpers the tests share
# (lib/, and the project's scripts/guest and scripts/workloads they drive)
# are installed once, by ../Makefile.
ifeq ($(KSELFTEST_DIR),)
$(error KSELFTEST_DIR must name a kernel tree's tools/testing/selftests)
endif
include $(KSELFTEST_DIR)/lib.mk
