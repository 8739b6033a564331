#!/bin/bash
# Host side of this result set, as run except for paths: boots the
# vanilla and the whole-series debug kernels side by side under icount,
# once per round, and leaves each run in build/vm/debug-atomic/.
# usage: host-pairs.sh ROUND...   (after "CONFIG=debug scripts/kernel-build
#        vanilla|patched" and "CONFIG=debug scripts/module-build ...")
set -eu
HERE=$(cd "$(dirname "$0")" && pwd)
cd "$HERE/../../../.."
for i in "$@"; do
	for v in vanilla patched; do
		VM_QUIET=1 scripts/vm-run --kernel "build/src/$v/obj-debug/arch/x86/boot/bzImage" \
			--timing icount --scratch-mb 1024 --timeout 3600 \
			--dir "build/vm/debug-atomic/$v-$i" -- \
			"$HERE/guest-run.sh" "build/src/$v/obj-debug/extmod/module/highorder_stress.ko" &
	done
	wait
done
