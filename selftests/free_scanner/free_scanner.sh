#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Does whole-zone compaction find free pages laid out with a power-of-two
# period?  Fills memory with anonymous pages, frees some of them by their
# physical frame numbers (scripts/guest/fragment --pattern odd-pfn), runs
# "echo 1 > /proc/sys/vm/compact_memory" and checks that compaction
# migrated at least 1/COMPACT_MIN_FRACTION of the pages left in place.  A
# whole-zone pass over such memory moves about half of them; a free
# scanner that samples at strides that miss every free page moves next to
# none.  Three layouts:
#  - every odd frame freed: an even stride sees only the used half of
#    every pageblock (vanilla 6.12: a few hundred of about 150,000;
#    vanilla 7.2, distro config: 448 of 151,427, fails);
#  - the upper half of every other pageblock freed (frame bits 8 and 9
#    set: free order-8 blocks between fully used pageblocks): after a
#    used pageblock the stride becomes 3 or more, and an odd stride above
#    1 never lands on the free block's head, at offset 256, the only page
#    PageBuddy marks, unless the scanner looks for the free block a
#    sample lands in (bits 8 and 9 assume 512-page pageblocks, x86-64's;
#    with other sizes the case still runs, as another layout);
#  - holes at random pages, the control: it shows the criterion is
#    reachable on this machine whatever the stride.
#
# Environment (default):
#   FRAG_MB               memory to fragment, MiB [60% of MemFree]
#   COMPACT_MIN_FRACTION  see above [8]
set -u
DIR=$(cd "$(dirname "$0")" && pwd)
. "$DIR/../lib/ktap.sh"
FRAG_MB=${FRAG_MB:-$(($(meminfo_mb MemFree) * 6 / 10))}
COMPACT_MIN_FRACTION=${COMPACT_MIN_FRACTION:-8}
trap stop_fragment EXIT

# case NAME PATTERN [FRAGMENT-ARGS...]: one test case
compaction_case() {
	local name=$1 pattern=$2 desc freed total kept before delta migrated
	shift 2
	desc="free_scanner: compact_memory migrates pages into $name holes"
	if ! start_fragment --mb "$FRAG_MB" --pattern "$pattern" "$@" >/dev/null 2>&1; then
		ktap_print_msg "fragment died: $(tail -n 1 "$FRAG_LOG")"
		ktap_test_fail "$desc"
		return
	fi
	# "fragment: M MiB filled, FREED of TOTAL pages freed (PATTERN)"
	read -r freed total < <(sed -n 's/.* filled, \([0-9]*\) of \([0-9]*\) pages.*/\1 \2/p' "$FRAG_LOG")
	kept=$((total - freed))
	sync
	echo 3 >/proc/sys/vm/drop_caches
	before=$(vmstat_snapshot pgmigrate_success compact_free_scanned compact_isolated)
	echo 1 >/proc/sys/vm/compact_memory
	delta=$(vmstat_delta "$before" "$(vmstat_snapshot pgmigrate_success compact_free_scanned compact_isolated)")
	migrated=$(sed -n 's/^pgmigrate_success: //p' <<<"$delta")
	ktap_print_msg "$name: $freed of $total pages freed; migrated $migrated of the $kept kept;" \
		"free scanner scanned $(sed -n 's/^compact_free_scanned: //p' <<<"$delta")," \
		"isolated (both scanners) $(sed -n 's/^compact_isolated: //p' <<<"$delta")"
	stop_fragment
	ktap_test_result "$desc" [ $((migrated * COMPACT_MIN_FRACTION)) -ge "$kept" ]
}

main() {
	ktap_print_header
	if [ ! -w /proc/sys/vm/compact_memory ]; then
		ktap_skip_all "free_scanner: no /proc/sys/vm/compact_memory (CONFIG_COMPACTION off)"
		exit "$KSFT_SKIP"
	fi
	ktap_require_uint 1 FRAG_MB COMPACT_MIN_FRACTION
	ktap_set_plan 3
	compaction_case odd-pfn odd-pfn
	compaction_case aligned-order8 odd-pfn --pfn-bits 8,9
	compaction_case random random
	ktap_finished
}

main
