# shellcheck shell=bash
# Common definitions for the compaction-latency scripts.  Sourced, not run.
#
# Environment (defaults in brackets):
#   BASE            kernel base: a directory of patches/ holding a series
#                   (7.2 or 6.12) [7.2, or the VERSION.PATCHLEVEL of KSRC]
#   SERIES          the series to apply, patches/SERIES/series [BASE]
#   KSRC            kernel tree to use instead of Debian's linux-source [unset]
#   BUILD           directory for every build output [<checkout>/build,
#                   or <checkout>/build/ksrc-<hash of KSRC> with KSRC]
#   DEBIAN_DIR      where scripts/fetch-base unpacks Debian's linux-source
#                   and linux-config packages [<checkout>/build/debian]
#   KERNEL_TARBALL  the base's source tarball
#                   [DEBIAN_DIR/usr/src/linux-source-BASE.tar.xz]
#   CONFIG          kernel config: a flavour (distro, minimal, rt), an
#                   overlay on distro (debug, numa, nosmp, preempt) or
#                   FLAVOUR+OVERLAY,
#                   e.g. minimal+preempt [distro]
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
DEBIAN_DIR=${DEBIAN_DIR:-$TOP/build/debian}
CONFIG=${CONFIG:-distro}
JOBS=${JOBS:-$(nproc)}
# what the user set, before set_base fills in the per-base defaults
USER_TARBALL=${KERNEL_TARBALL:-}
USER_SERIES=${SERIES:-}


log() { printf '[%s] %s\n' "${0##*/}" "$*" >&2; }
die() { printf '%s: error: %s\n' "${0##*/}" "$*" >&2; exit 1; }

# The bases there is a series for: the directories of patches/ with a
# series file.
known_bases() { (cd "$TOP/patches" && ls -d */series 2>/dev/null) | sed 's,/series$,,' | sort -rV | tr '\n' ' ' | sed 's/ $//'; }

# tree_base DIR: VERSION.PATCHLEVEL of the kernel tree in DIR
tree_base() {
	awk -F' *= *' '$1 == "VERSION" { v = $2 } $1 == "PATCHLEVEL" { p = $2 }
		END { if (v != "" && p != "") print v "." p }' "$1/Makefile" 2>/dev/null
}

# set_base BASE: select the base and its series; sets BASE, SERIES,
# SERIES_DIR, SERIES_FILE, SRC_DIR (the base's git repository and worktrees) and
# KERNEL_TARBALL
set_base() {
	BASE=$1
	if [ -n "$KSRC" ] && [ "$BASE" != "$(tree_base "$KSRC")" ]; then
		die "BASE=$BASE but KSRC=$KSRC is Linux $(tree_base "$KSRC") (unset BASE, or set SERIES= to apply another series)"
	fi
	SERIES=${USER_SERIES:-$BASE}
	SERIES_DIR=$TOP/patches/$SERIES
	SERIES_FILE=$SERIES_DIR/series
	if [ ! -f "$SERIES_FILE" ]; then
		if [ -n "$USER_SERIES" ]; then
			die "unknown SERIES '$SERIES' (use one of: $(known_bases))"
		fi
		die "unknown BASE '$BASE' (use one of: $(known_bases)${KSRC:+; or name the series for this tree with SERIES=})"
	fi
	if [ -n "$KSRC" ]; then
		SRC_DIR=$BUILD/src
	else
		SRC_DIR=$BUILD/src-$BASE
	fi
	KERNEL_TARBALL=${USER_TARBALL:-$DEBIAN_DIR/usr/src/linux-source-$BASE.tar.xz}
	export BASE
}


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

# guest_fs_args DIR: the QEMU options that give a guest the host's root
# file system, read-only, and the run directory DIR, read-write, over 9p
# (scripts/vm-run, scripts/lava-job)
guest_fs_args() {
	echo "-fsdev local,id=hostroot,path=/,security_model=none,readonly=on,multidevs=remap" \
		"-device virtio-9p-pci,fsdev=hostroot,mount_tag=/dev/root" \
		"-fsdev local,id=vmrun,path=$1,security_model=none" \
		"-device virtio-9p-pci,fsdev=vmrun,mount_tag=vmrun"
}

# guest_cmdline DIR: the kernel command line that boots from that root,
# with scripts/vm-init as PID 1 running DIR/vm-run.command
guest_cmdline() {
	echo "console=ttyS0 root=/dev/root rootfstype=9p rootflags=trans=virtio,version=9p2000.L,msize=262144,cache=loose ro init=$TOP/scripts/vm-init panic=-1 loglevel=5 VMRUN_DIR=$1"
}

# vm_args FILE...: the extra vm-run options a workload or selftest program
# asks for in a "# vm-args: OPTIONS" line (the first one), or nothing.
vm_args() { cat "$@" 2>/dev/null | sed -n 's/^# vm-args: //p' | head -n 1; }

# memory_mb SIZE: a vm-run size (1G, 512M, 2048) in MiB
memory_mb() {
	case "$1" in
	*G) echo $((${1%G} * 1024)) ;;
	*M) echo "${1%M}" ;;
	*) echo "$1" ;;
	esac
}

# The patches named in the series file, in order, one per line.
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

# Kernel specs name a kernel of any base: [BASE:]VARIANT, e.g. 6.12:vanilla
# or 7.2:patched; without BASE:, the selected base.
spec_base() { case "$1" in *:*) echo "${1%%:*}" ;; *) echo "$BASE" ;; esac; }
spec_variant() { echo "${1##*:}"; }

# in_spec SPEC CMD [ARGS...]: run CMD ARGS VARIANT with SPEC's base
# selected, in a subshell
in_spec() {
	local spec=$1
	shift
	(set_base "$(spec_base "$spec")" && "$@" "$(spec_variant "$spec")")
}

# run_script NAME VARIANT: scripts/NAME VARIANT for the selected base
run_script() { BASE=$BASE "$TOP/scripts/$1" "$2"; }

# Directory name of a variant: equal patch sets share one tree and one build.
variant_name() {
	local count total
	# explicit: under "||" a die in $(...) would not stop the caller
	count=$(variant_patch_count "$1") || exit 1
	total=$(series_length) || exit 1
	if [ "$count" -eq 0 ]; then
		echo vanilla
	elif [ "$count" -eq "$total" ]; then
		echo patched
	else
		echo "$count"
	fi
}

# Kernel configs.  A flavour is a whole config: "distro" and "rt" are
# Debian's values for the options the series' results depend on
# (scripts/distro-config), "minimal" is scripts/config/minimal.config.
# Each is merged with scripts/config/guest.config, what the VM and the
# harness need, which wins over it.  An overlay (any other fragment in
# scripts/config/) composes on top: CONFIG=numa is distro+numa.
CONFIG_FLAVOURS="distro minimal rt"

config_overlays() {
	# shellcheck disable=SC2086
	ls "$TOP/scripts/config" | sed -n 's/\.config$//p' |
		grep -vx -e guest $(printf -- '-e %s ' $CONFIG_FLAVOURS) | tr '\n' ' ' | sed 's/ $//'
}

config_usage() { echo "$CONFIG_FLAVOURS, an overlay on distro ($(config_overlays)) or FLAVOUR+OVERLAY"; }

# config_parts: the flavour of $CONFIG, then its overlays, one per line
config_parts() {
	local part first=1
	case "$CONFIG" in
	'' | *[!a-z0-9_+-]* | +* | *+ | *++*) die "unknown CONFIG '$CONFIG' (use $(config_usage))" ;;
	esac
	for part in ${CONFIG//+/ }; do
		case " $CONFIG_FLAVOURS " in
		*" $part "*)
			[ $first = 1 ] || die "CONFIG '$CONFIG': one flavour ($CONFIG_FLAVOURS), and only first"
			echo "$part" ;;
		*)
			case " $(config_overlays)" in *" $part "*) ;; *) die "unknown CONFIG part '$part' in '$CONFIG' (use $(config_usage))" ;; esac
			[ $first = 0 ] || echo distro
			echo "$part" ;;
		esac
		first=0
	done
}

config_flavour() { config_parts | head -n 1; }

# config_has OVERLAY: true when $CONFIG includes OVERLAY
config_has() { config_parts | tail -n +2 | grep -qx "$1"; }

# debian_fragment: the fragment scripts/distro-config writes for the
# distro and rt flavours (made by scripts/kernel-build)
debian_fragment() { echo "$SRC_DIR/debian-$(config_flavour).config"; }

# The fragments of $CONFIG in merge order: later ones win, as in
# merge_config.sh.  A flavour is its values (Debian's, for distro and rt),
# guest.config, then its own fragment (scripts/config/FLAVOUR.config) if
# any; an overlay is its fragment.  A base's own version of a fragment
# (scripts/config/BASE/NAME.config) follows the common one.
config_fragments() {
	local part
	for part in $(config_parts); do
		case "$part" in
		distro | rt) debian_fragment; echo "$TOP/scripts/config/guest.config" ;;
		minimal) echo "$TOP/scripts/config/guest.config" ;;
		esac
		[ ! -f "$TOP/scripts/config/$part.config" ] || echo "$TOP/scripts/config/$part.config"
		[ ! -f "$TOP/scripts/config/$BASE/$part.config" ] || echo "$TOP/scripts/config/$BASE/$part.config"
	done | tr '\n' ' '
}

# Output directory of a variant's kernel build.  A direct subdirectory of
# the variant's source tree: Kbuild then names sources by relative paths
# ("../mm/compaction.c"), so every variant compiles the same command lines
# and ccache serves one variant's objects to the next.
kernel_obj_dir() { echo "$SRC_DIR/$(variant_name "$1")/obj-$CONFIG"; }

# install_selftests DIR: the selftests, with the kernel tree's kselftest
# runner and KTAP helpers, as "make install" of tools/testing/selftests
# would lay them out
install_selftests() {
	local tree
	tree=$(dirname "$(kernel_obj_dir "$VARIANT")")
	make -s --no-print-directory -C "$TOP/selftests" install INSTALL_PATH="$1" \
		KSELFTEST_DIR="$tree/tools/testing/selftests" ||
		die "could not install the selftests to $1"
}

# known_failures: the series' list of selftest cases it is known to fail
# (patches/SERIES/known-failures: "COLLECTION CASE reason" lines, the
# form its header gives), or nothing
known_failures() {
	[ ! -f "$SERIES_DIR/known-failures" ] || echo "$SERIES_DIR/known-failures"
}

# selftests_argv KO DIR TESTS...: set SELFTESTS_ARGV to the guest command
# that runs TESTS (selftests/run) from DIR, where install_selftests put
# them, with KO as the module (scripts/check, scripts/lava-job)
selftests_argv() {
	local ko=$1 dir=$2
	shift 2
	SELFTESTS_ARGV=(env HIGHORDER_STRESS_KO="$ko" SELFTESTS="$*"
		SELFTEST_TIMEOUT="${SELFTEST_TIMEOUT:-}"
		KNOWN_FAILURES="$(known_failures)"
		CONFIG_PARTS="$(config_parts | tr '\n' ' ')"
		KERNEL_TREE="$(dirname "$(kernel_obj_dir "$VARIANT")")"
		KERNEL_OBJ="$(kernel_obj_dir "$VARIANT")"
		"$TOP/selftests/run" "$dir")
}

# Select the base (and check CONFIG) when sourced, so that a bad value
# stops every script at once; install-deps needs neither.
[ -n "${LIB_NO_BASE:-}" ] || if [ -n "$KSRC" ]; then
	[ -f "$KSRC/Makefile" ] && [ -n "$(tree_base "$KSRC")" ] ||
		die "KSRC=$KSRC is not a kernel tree (no VERSION and PATCHLEVEL in its Makefile)"
	set_base "${BASE:-$(tree_base "$KSRC")}"
else
	set_base "${BASE:-7.2}"
fi
[ -n "${LIB_NO_BASE:-}" ] || config_parts >/dev/null

# Every entry point installs what is missing first (quick when nothing is),
# except when asked only for its --help.
case " $* " in *" -h "* | *" --help "*) DEPS_CHECKED=${DEPS_CHECKED:-help} ;; esac
if [ -z "${DEPS_CHECKED:-}" ]; then
	DEPS_CHECKED=1 "$TOP/scripts/install-deps" || exit 1
	export DEPS_CHECKED=1
fi
