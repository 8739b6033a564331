# SPDX-License-Identifier: GPL-2.0
# compaction-latency: entry points.  The logic lives in scripts/; each
# target is one call, so the Makefile, the scripts and CI share one way of
# doing each thing.  Variables are passed on as environment, e.g.
#   make check VARIANT=vanilla CONFIG=debug
#   make kernel BASE=6.12 VARIANT=2
#   make kernel KSRC=/path/to/linux

VARIANT ?= patched
export BASE SERIES VARIANT CONFIG KSRC BUILD JOBS SELFTESTS

.PHONY: help check bench deps kernel module sparse checkpatch clean

help:
	@echo "make check      build, boot and run the selftests on each base, or on BASE (the test command)"
	@echo "make bench      build, boot, stress and print the report (the main job)"
	@echo "make deps       install the missing Debian packages, fetch every base's kernel source"
	@echo "make kernel     build the kernel of VARIANT (vanilla, patched or N) on BASE (7.2 or 6.12)"
	@echo "make module     build module/ against VARIANT on BASE"
	@echo "make sparse     build module/ with sparse (C=2); fail on warnings"
	@echo "make checkpatch checkpatch.pl --strict on patches/ and module/"
	@echo "make clean      remove build/ (kernel trees and builds included)"

check:
	scripts/check

bench:
	scripts/bench

deps:
	scripts/install-deps
	for b in $$(ls -d patches/*/series | cut -d/ -f2); do BASE=$$b scripts/fetch-base || exit 1; done

kernel:
	scripts/kernel-build $(VARIANT)

module:
	scripts/module-build $(VARIANT)

sparse:
	SPARSE=1 scripts/module-build $(VARIANT)

checkpatch:
	scripts/checkpatch

clean:
	rm -rf build
