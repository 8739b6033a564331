# shellcheck shell=bash
# Common definitions for the compaction-latency scripts.  Sourced, not run.
#
# Environment (defaults in brackets):
#   BUILD           directory for every build output [<checkout>/build,
#                   or <checkout>/build/ksrc-<hash of KSRC> with KSRC]
#   KSRC            kernel tree to use instead of the Debian tarball [unset]
#   KERNEL_TARBALL  Debian linux-source tarball [/usr/src/linux-source-6.12.tar.xz]
#   CONFIG          kernel config flavour: a fragment in scripts/config/
#                   (minimal, debug, numa, preempt, nosmp) [minimal]
#   JOBS            parallel make jobs [nproc]

TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
KSRC=${KSRC:-}
# Another kernel tree gets its own build directory, so switching between
# trees never throws away the other's checkouts and builds.
if [ -n "$KSRC" ]; then
	BUILD=${BUILD:-$TOP/build/ksrc-$(printf '%s' "$KSRC" | sha256sum | cut -c1-12)}
else
	BUILD=${BUILD:-$TOP/build}
fi
KERNEL_TARBALL=${KERNEL_TARBALL:-/usr/src/linux-source-6.12.tar.xz}
CONFIG=${CONFIG:-minimal}
JOBS=${JOBS:-$(nproc)}
SERIES_FILE=$TOP/patches/series

# Every entry point installs what is missing first (quick when nothing is).
if [ -z "${DEPS_CHECKED:-}" ]; then
	DEPS_CHECKED=1 "$TOP/scripts/install-deps" || exit 1
	export DEPS_CHECKED=1
fi

log() { printf '[%s] %s\n' "${0##*/}" "$*" >&2; }
die() { printf '%s: error: %s\n' "${0##*/}" "$*" >&2; exit 1; }

# meminfo_mb NAME: the host's /proc/meminfo field NAME, in MiB
meminfo_mb() { awk -v name="$1:" '$1 == name { printf "%d", $2 / 1024 }' /proc/meminfo; }

# check_uint MIN NAME...: die unless each named variable holds a decimal
# integer of at least MIN
check_uint() {
	local min=$1 v
	shift
	for v in "$@"; do
		case "${!v}" in
		'' | *[!0-9]*) die "bad $v '${!v}' (an integer of at least $min)" ;;
		*) [ "${!v}" -ge "$min" ] || die "bad $v '${!v}' (an integer of at least $min)" ;;
		esac
	done
}

# vm_args FILE...: the extra vm-run options a workload or selftest program
# asks for in a "# vm-args: OPTIONS" line (the first one), or nothing.
vm_args() { cat "$@" 2>/dev/null | sed -n 's/^# vm-args: //p' | head -n 1; }

# The patches named in patches/series, in order, one per line.
series_patches() {
	[ -f "$SERIES_FILE" ] || die "missing $SERIES_FILE"
	sed -e 's/#.*//' -e 's/[[:space:]]*$//' -e '/^$/d' "$SERIES_FILE"
}

series_length() { series_patches | wc -l; }

# Number of series patches a variant applies: vanilla, patched or N.
variant_patch_count() {
	local variant=$1 total
	total=$(series_length)
	case "$variant" in
	vanilla) echo 0 ;;
	patched) echo "$total" ;;
	'' | *[!0-9]*) die "unknown variant '$variant' (use vanilla, patched or 0..$total)" ;;
	*)
		[ "$variant" -le "$total" ] ||
			die "variant $variant: the series has only $total patches"
		echo $((10#$variant)) ;;
	esac
}

# Directory name of a variant: equal patch sets share one tree and one build.
variant_name() {
	local count total
	count=$(variant_patch_count "$1")
	total=$(series_length)
	if [ "$count" -eq 0 ]; then
		echo vanilla
	elif [ "$count" -eq "$total" ]; then
		echo patched
	else
		echo "$count"
	fi
}

# The fragments of $CONFIG, minimal.config first: later ones win, as in
# merge_config.sh.  Every flavour is minimal.config plus the fragment of
# its name in scripts/config/.
config_flavours() { ls "$TOP/scripts/config" | sed -n 's/\.config$//p' | tr '\n' ' '; }

config_fragments() {
	case "$CONFIG" in
	minimal) echo "$TOP/scripts/config/minimal.config" ;;
	'' | *[!a-z0-9_-]*) die "unknown CONFIG '$CONFIG' (use one of: $(config_flavours))" ;;
	*)
		[ -f "$TOP/scripts/config/$CONFIG.config" ] ||
			die "unknown CONFIG '$CONFIG' (use one of: $(config_flavours))"
		echo "$TOP/scripts/config/minimal.config $TOP/scripts/config/$CONFIG.config" ;;
	esac
}

# Output directory of a variant's kernel build.  A direct subdirectory of
# the variant's source tree: Kbuild then names sources by relative paths
# ("../mm/compaction.c"), so every variant compiles the same command lines
# and ccache serves one variant's objects to the next.
kernel_obj_dir() { echo "$BUILD/src/$(variant_name "$1")/obj-$CONFIG"; }
