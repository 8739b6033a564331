# kcompactd episodes: wakeup -> switch-out with prev_state=S; prints start, duration
/^#/ { next }
{ ts = $4; sub(/:$/, "", ts); ts += 0 }
/sched_wakeup: comm=kcompactd0/ { if (!awake) { start = ts; awake = 1 } }
/sched_switch: prev_comm=kcompactd0/ && /prev_state=S / { if (awake) { printf "%.6f %.6f\n", start, ts - start; awake = 0 } }
END { if (awake) print start, "open" }
