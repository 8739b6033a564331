#!/bin/bash
# ad hoc: "atomic" (default boost), minimal config, icount: the series (4) against
# the rate-limited boost wakeup experiment (exp), 5 runs each, side by side
cd /work/main
KO=build/src/patched/obj-minimal/extmod/module/highorder_stress.ko
one() { # name kernel iter
	local d=/tmp/exp/out/$1/$3
	mkdir -p "$d"
	VM_QUIET=1 scripts/vm-run --kernel "$2" --cpus 2 --memory 2G --timing icount --timeout 900 \
		--scratch-mb 1024 --dir "$d" -- env ATOMIC_SECONDS=10 scripts/workloads/atomic "$KO" > "$d/host.log" 2>&1
}
for i in 1 2 3 4 5; do
	one 4 /tmp/exp/k4/bzImage $i &
	one exp /tmp/exp/kexp/bzImage $i &
	wait
	echo "iteration $i done $(date +%T)"
done
