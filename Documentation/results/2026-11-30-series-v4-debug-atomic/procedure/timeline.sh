#!/bin/bash
# per-second: attempts, success %, kcompactd busy ms, kswapd wakes
d=$1
awk -f "$(dirname "$0")/episodes.awk" $d/trace.txt | awk '$2!="open"{printf "E %s %s\n",$1,$2}' > /tmp/tl.$$
grep -h 'mm_vmscan_kswapd_wake' $d/trace.txt | awk '{ts=$4; sub(/:$/,"",ts); print "K", ts}' >> /tmp/tl.$$
awk '{print "S", $1, $3, $5}' $d/success.txt >> /tmp/tl.$$
awk '
$1=="E" { b=int($2); busy[b]+=$3 }
$1=="K" { b=int($2); ks[b]++ }
$1=="S" { b=int($2); if (!(b in a0)) { a0[b]=$3; s0[b]=$4 } a1[b]=$3; s1[b]=$4; if (first=="") first=b; last=b }
END { pa=""; for (b=first; b<=last; b++) if (b in a0) { if (pa!="") { da=a1[b]-pa; ds=s1[b]-ps; if (da>0) printf "%d att=%d succ=%.0f%% kcd_busy=%.0fms kswapd=%d\n", b, da, 100*ds/da, 1000*busy[b], ks[b] } pa=a1[b]; ps=s1[b] } }
' /tmp/tl.$$
rm -f /tmp/tl.$$
