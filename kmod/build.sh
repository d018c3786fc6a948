#!/bin/bash
# kmod/build.sh [--lab] OUTDIR: build svmtrace's patched kvm.ko and kvm-amd.ko.
# --lab: the nested lab's build, with the test-only knobs (testparam.c, the
# patches named *-lab-*.patch, SVMTRACE_LAB); never install it on a host.
#
# 1. Resolve the pinned kernel from dpkg/apt: the installed linux-source-6.1
#    and the linux-headers-ABI-amd64 that Debian built from the same source
#    version.  Their SUBLEVELs must agree (the archive moves under us).
# 2. Extract only arch/x86/kvm and virt/kvm from the source tarball (once,
#    stamped by source version), apply kmod/patches/6.1/*.patch, copy our
#    sources in, generate the out-of-tree Kbuild.
# 3. make -C /usr/src/linux-headers-ABI M=... modules (CONFIG_KVM_WERROR:
#    warnings fail the build; incremental when only our files changed).
# 4. Check vermagic against the packaged modules of linux-image-ABI.
#
# Results: OUTDIR/kvm.ko, OUTDIR/kvm-amd.ko, OUTDIR/abi (e.g. 6.1.0-57-amd64).
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
lab=
[ "${1:-}" != --lab ] || { lab=yes; shift; }
[ $# = 1 ] || { echo "usage: kmod/build.sh [--lab] OUTDIR" >&2; exit 2; }
out=$(mkdir -p "$1" && cd "$1" && pwd)
tarball=/usr/src/linux-source-6.1.tar.xz
jobs=${KMOD_JOBS:-$(nproc)}

die() { echo "kmod: $*" >&2; exit 1; }
note() { echo "kmod: $*" >&2; }

# upstream_sublevel 6.1.192-3 -> 192
upstream_sublevel() { echo "$1" | sed -n 's/^6\.1\.\([0-9]*\)-.*/\1/p'; }

resolve_kernel() {
	src_ver=$(dpkg-query -W -f='${Version}' linux-source-6.1 2>/dev/null) ||
		die "linux-source-6.1 is not installed (run make deps)"
	[ -f "$tarball" ] || die "$tarball missing although linux-source-6.1 is installed"
	# The headers package built from this source version: an installed one,
	# else the one apt's linux-headers-amd64 of that version depends on.
	abi=$(dpkg-query -W -f='${Package} ${Version} ${Status}\n' 'linux-headers-6.1.*-amd64' \
		2>/dev/null | awk -v v="$src_ver" '$2 == v && / installed$/ {
			sub(/^linux-headers-/, "", $1); print $1 }' | sort -V | tail -n 1)
	[ -n "$abi" ] || abi=$(apt-cache show linux-headers-amd64 2>/dev/null | awk -v v="$src_ver" '
		/^Version: / { ver = $2 }
		/^Depends: / && ver == v { if (match($0, /linux-headers-[0-9.]+-[0-9]+-amd64/))
			print substr($0, RSTART + 14, RLENGTH - 14) }' | head -n 1)
	[ -n "$abi" ] || die "apt knows no linux-headers-amd64 of version $src_ver" \
		"(the archive moved: run apt-get update && make deps)"
	hdr=/usr/src/linux-headers-$abi
	hdr_ver=$(dpkg-query -W -f='${Version}' "linux-headers-$abi" 2>/dev/null) ||
		die "linux-headers-$abi is not installed (run make deps)"
	[ -d "$hdr" ] || die "$hdr missing although linux-headers-$abi is installed"
	src_sub=$(upstream_sublevel "$src_ver")
	hdr_sub=$(upstream_sublevel "$hdr_ver")
	[ -n "$src_sub" ] && [ "$src_sub" = "$hdr_sub" ] ||
		die "SUBLEVEL mismatch: linux-source-6.1 $src_ver is 6.1.$src_sub but" \
			"linux-headers-$abi $hdr_ver is 6.1.$hdr_sub"
	note "kernel 6.1.$src_sub: linux-source-6.1 $src_ver, linux-headers-$abi $hdr_ver"
}

# Extract once per source version; patches and our files are re-applied on
# a fresh copy whenever they change (tree/.stamp records what went in).
prepare_tree() {
	pristine=$out/pristine-$src_ver
	if [ ! -e "$pristine/.complete" ]; then
		note "extracting arch/x86/kvm and virt/kvm from $tarball"
		rm -rf "$out"/pristine-* && mkdir -p "$pristine"
		tar -xJf "$tarball" -C "$pristine" --strip-components=1 \
			linux-source-6.1/arch/x86/kvm linux-source-6.1/virt/kvm linux-source-6.1/Makefile
		sub=$(sed -n 's/^SUBLEVEL = //p' "$pristine/Makefile")
		[ "$sub" = "$src_sub" ] || die "$tarball says SUBLEVEL $sub, package says $src_sub"
		touch "$pristine/.complete"
	fi
	tree=$out/tree
	# What the tree depends on besides our sources (those are synced below,
	# so changing only kmod/src rebuilds only what changed).
	stamp="$src_ver $abi ${lab:+lab} $({ cat $(patches); write_kbuild; } | md5sum)"
	if [ "$(cat "$tree/.stamp" 2>/dev/null)" != "$stamp" ]; then
		note "applying kmod/patches/6.1 to a fresh copy${lab:+ (lab build)}"
		rm -rf "$tree" && cp -a "$pristine" "$tree"
		for p in $(patches); do
			patch -d "$tree" -p1 --quiet --no-backup-if-mismatch <"$p" ||
				die "$p does not apply to linux-source-6.1 $src_ver"
		done
		write_kbuild >"$tree/arch/x86/kvm/Kbuild"
		echo "$stamp" >"$tree/.stamp"
	fi
	sync "$top"/kmod/src/* "$tree/arch/x86/kvm/svmtrace"
	sync "$top/include/svmtrace/abi.h" "$tree/arch/x86/kvm/svmtrace/include/svmtrace"
}

# The patches of this build: the lab's test-only ones (*-lab-*) only with --lab.
patches() {
	for p in "$top"/kmod/patches/6.1/*.patch; do
		case ${p##*/} in *-lab-*) [ -n "$lab" ] || continue ;; esac
		echo "$p"
	done
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
	 svmtrace/xstate.o svmtrace/debugreg.o
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
	echo "$abi" >"$out/abi"
}

# The packaged kvm.ko of linux-image-ABI, unpacked (never installed).
packaged_module() {
	img=$out/image-$abi
	if [ ! -e "$img/.complete" ]; then
		note "fetching linux-image-$abi for its vermagic"
		rm -rf "$img" && mkdir -p "$img/deb"
		(cd "$img/deb" && apt-get download -q "linux-image-$abi" >"$img/apt.log" 2>&1) ||
			{ cat "$img/apt.log" >&2; die "apt-get download linux-image-$abi failed"; }
		dpkg-deb --fsys-tarfile "$img"/deb/*.deb |
			tar -x -C "$img" --wildcards '*/kernel/arch/x86/kvm/kvm.ko'
		rm -rf "$img/deb"
		touch "$img/.complete"
	fi
	find "$img" -name kvm.ko | head -n 1
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

resolve_kernel
prepare_tree
build_modules
check_vermagic
