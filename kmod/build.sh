#!/bin/bash
# kmod/build.sh [--lab] --series SERIES | --kver KVER [--headers DIR]  OUTDIR
#
# Build svmtrace's patched kvm.ko and kvm-amd.ko for one Debian kernel:
# KVER (its `uname -r`), or the amd64 kernel built from the installed
# linux-source-SERIES (the lab's kernel of that series).  kmod/kernel.sh
# checks the target: a supported series (kmod/patches/SERIES), no
# PREEMPT_RT, headers (DIR, else /lib/modules/KVER/build) and
# linux-source-SERIES of one Debian version.
#
# 1. Extract only arch/x86/kvm and virt/kvm from the source tarball (once,
#    stamped by source version), apply kmod/patches/SERIES/*.patch, copy our
#    sources in, generate the out-of-tree Kbuild.
# 2. make -C /usr/src/linux-headers-KVER M=... modules (CONFIG_KVM_WERROR:
#    warnings fail the build; incremental when only our files changed).
# 3. Check vermagic against the distro's kvm.ko of KVER (installed, or
#    unpacked from linux-image-KVER fetched with apt-get download).
#
# Results: OUTDIR/kvm.ko, OUTDIR/kvm-amd.ko, OUTDIR/abi (KVER).
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
lab=
[ "${1:-}" != --lab ] || { lab=yes; shift; }
. "$top/kmod/kernel.sh"
jobs=${KMOD_JOBS:-$(nproc)}

usage() { kernel_die "usage: kmod/build.sh [--lab] --series SERIES | --kver KVER [--headers DIR]  OUTDIR"; }
kver= headers=
while [ $# -gt 1 ]; do
	case $1 in
	--series) kver=$(kernel_default "$2"); shift 2 ;;
	--kver) kver=$2; shift 2 ;;
	--headers) headers=$2; shift 2 ;;
	*) usage ;;
	esac
done
[ $# = 1 ] && [ -n "$kver" ] || usage
kernel_resolve "$kver" "$headers"
out=$(mkdir -p "$1" && cd "$1" && pwd)
die() { kernel_die "$@"; }
note() { kernel_note "$@"; }

# Extract once per source version; patches and our files are re-applied on
# a fresh copy whenever they change (tree/.stamp records what went in).
prepare_tree() {
	pristine=$out/pristine-$src_ver
	if [ ! -e "$pristine/.complete" ]; then
		note "extracting arch/x86/kvm and virt/kvm from $tarball"
		rm -rf "$out"/pristine-* && mkdir -p "$pristine"
		tar -xJf "$tarball" -C "$pristine" --strip-components=1 \
			"linux-source-$series/arch/x86/kvm" "linux-source-$series/virt/kvm" \
			"linux-source-$series/Makefile" \
			"linux-source-$series/arch/x86/include/asm/kvm_host.h"
		sub=$(sed -n 's/^SUBLEVEL = //p' "$pristine/Makefile")
		[ "$series.$sub" = "$(kernel_upstream "$src_ver")" ] ||
			die "$tarball holds Linux $series.$sub, its package says $src_ver"
		touch "$pristine/.complete"
	fi
	tree=$out/tree
	# What the tree depends on besides our sources (those are synced below,
	# so changing only kmod/src rebuilds only what changed).
	stamp="$src_ver $kver ${lab:+lab} $({ cat $(patches); write_kbuild; } | md5sum)"
	if [ "$(cat "$tree/.stamp" 2>/dev/null)" != "$stamp" ]; then
		note "applying kmod/patches/$series to a fresh copy${lab:+ (lab build)}"
		rm -rf "$tree" && cp -a "$pristine" "$tree"
		for p in $(patches); do
			patch -d "$tree" -p1 --quiet --no-backup-if-mismatch <"$p" ||
				die "$p does not apply to linux-source-$series $src_ver"
		done
		write_kbuild >"$tree/arch/x86/kvm/Kbuild"
		echo "$stamp" >"$tree/.stamp"
	fi
	sync "$top"/kmod/src/*.[ch] "$top/kmod/src/$series"/*.c "$tree/arch/x86/kvm/svmtrace"
	sync "$top/include/svmtrace/abi.h" "$tree/arch/x86/kvm/svmtrace/include/svmtrace"
}

# The patches of this build: the lab's test-only ones (*-lab-*) only with --lab.
patches() {
	for p in "$top/kmod/patches/$series"/*.patch; do
		case ${p##*/} in *-lab-*) [ -n "$lab" ] || continue ;; esac
		echo "$p"
	done
}

# KVM_REQ_SVMTRACE (kmod/src/hooks.h) must be an arch request this KVM
# leaves free: nothing else would notice two requests on one bit.
check_request() {
	ours=$(sed -n 's/^#define SVMTRACE_ARCH_REQ \([0-9]*\)$/\1/p' "$top/kmod/src/hooks.h")
	[ -n "$ours" ] || die "kmod/src/hooks.h defines no SVMTRACE_ARCH_REQ"
	if grep -Eo 'KVM_ARCH_REQ(_FLAGS)?\([0-9]+' "$pristine/arch/x86/include/asm/kvm_host.h" |
		grep -Eq "\\($ours\$"; then
		die "KVM of linux-source-$series $src_ver uses arch request $ours, which" \
			"kmod/src/hooks.h takes for KVM_REQ_SVMTRACE"
	fi
}

# sync FILE... DIR: copy the changed files only, so make stays incremental.
sync() {
	eval "dir=\${$#}"
	mkdir -p "$dir"
	while [ $# -gt 1 ]; do
		cmp -s "$1" "$dir/${1##*/}" || cp "$1" "$dir/"
		shift
	done
}

# The out-of-tree Kbuild: KVM's Makefile with the tree-relative paths pointed
# at the extracted copy, without kvm-intel, plus svmtrace's objects.
write_kbuild() {
	sed -e 's|\$(srctree)/arch/x86/kvm|$(src) -I $(src)/..|' \
	    -e 's|^include \$(srctree)/virt/kvm/Makefile.kvm|include $(src)/../../../virt/kvm/Makefile.kvm|' \
	    -e '/^obj-\$(CONFIG_KVM_INTEL)/d' \
	    "$pristine/arch/x86/kvm/Makefile"
	cat <<'KBUILD'

# svmtrace: the tracer lives in kvm.ko; kvm-amd.ko calls it from its hooks.
ccflags-y += -I $(src)/svmtrace/include
kvm-y += svmtrace/control.o svmtrace/attach.o svmtrace/ring.o svmtrace/gate.o \
	 svmtrace/introspect.o svmtrace/watch.o svmtrace/access.o svmtrace/decode.o \
	 svmtrace/step.o svmtrace/hide.o svmtrace/frames.o svmtrace/intercepts.o \
	 svmtrace/xstate.o svmtrace/debugreg.o svmtrace/compat.o svmtrace/first.o \
	 svmtrace/hidetime.o svmtrace/vstate.o svmtrace/memops.o svmtrace/memdecode.o
KBUILD
	[ -z "$lab" ] || cat <<'KBUILD'
# The lab build: the test-only knobs (kmod/src/testparam.c).
ccflags-y += -DSVMTRACE_LAB
kvm-y += svmtrace/testparam.o
KBUILD
}

build_modules() {
	note "building in $tree (make -j$jobs)"
	make -s -C "$hdr" M="$tree/arch/x86/kvm" -j"$jobs" CONFIG_KVM_WERROR=y \
		KBUILD_MODPOST_WARN= modules >"$out/build.log" 2>&1 ||
		{ cat "$out/build.log" >&2; die "module build failed (log: $out/build.log)"; }
	# Debug info is 90% of the size; the lab's initramfs wants them small.
	for m in kvm.ko kvm-amd.ko; do
		strip --strip-debug -o "$out/$m" "$tree/arch/x86/kvm/$m"
	done
	echo "$kver" >"$out/abi"
}

# The distro's kvm.ko of KVER: installed, else unpacked from linux-image-KVER
# (fetched, never installed).
packaged_module() {
	for m in /lib/modules/"$kver"/kernel/arch/x86/kvm/kvm.ko*; do
		[ -e "$m" ] && { echo "$m"; return; }
	done
	img=$out/image-$kver
	if [ ! -e "$img/.complete" ]; then
		note "fetching linux-image-$kver for its vermagic"
		rm -rf "$img" && mkdir -p "$img/deb"
		kernel_image_download "$kver" "$img/deb" ||
			{ cat "$img/deb/apt.log" >&2; die "apt-get download linux-image-$kver failed"; }
		dpkg-deb --fsys-tarfile "$img"/deb/*.deb |
			tar -x -C "$img" --wildcards '*/kernel/arch/x86/kvm/kvm.ko*'
		rm -rf "$img/deb"
		touch "$img/.complete"
	fi
	find "$img" -name 'kvm.ko*' | head -n 1
}

check_vermagic() {
	want=$(modinfo -F vermagic "$(packaged_module)")
	for m in kvm.ko kvm-amd.ko; do
		got=$(modinfo -F vermagic "$out/$m")
		[ "$got" = "$want" ] ||
			die "$m vermagic '$got' differs from the packaged kvm.ko's '$want'"
	done
	note "vermagic ok: $want"
}

note "kernel $kver: linux-source-$series and the headers in $hdr, $src_ver"
prepare_tree
check_request
build_modules
check_vermagic
