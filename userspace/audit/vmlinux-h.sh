#!/bin/sh
# vmlinux-h.sh BUILD OUT: write OUT, the vmlinux.h the exit-audit program is
# compiled against, from the BTF of the kernel the nested lab boots
# (Debian's linux-image-<abi>-amd64 of the pinned 6.1, unpacked by
# tests/e2e/lib/kernel.sh under BUILD/e2e/kernel/<abi>, shared with the lab).
#
# Why that kernel and not the build host's /sys/kernel/btf/vmlinux: the
# audit runs where our kvm.ko runs, i.e. on Debian's 6.1, and the build host
# may run anything (the machine that builds the lab runs a 6.18).  Why
# generated, not committed: 113 000 lines that must follow the pinned ABI,
# which moves with the archive.  The BTF is the .BTF section of vmlinux,
# inside vmlinuz's compressed payload (xz on Debian; gzip and zstd tried
# too).  Offline, VMLINUX_BTF=FILE (e.g. /sys/kernel/btf/vmlinux) takes the
# BTF from FILE instead: the program relocates the one vmlinux type it reads
# (struct trace_entry) with CO-RE, so any kernel's BTF builds a working
# object.
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
build=$1 out=$2
die() { echo "vmlinux-h: $*" >&2; exit 1; }
. "$top/tests/e2e/lib/kernel.sh"
command -v bpftool >/dev/null || PATH=$PATH:/usr/sbin
command -v bpftool >/dev/null || die "bpftool not installed (make deps)"

if [ -n "${VMLINUX_BTF:-}" ]; then
	mkdir -p "$(dirname "$out")"
	bpftool btf dump file "$VMLINUX_BTF" format c >"$out.tmp" || die "no BTF in $VMLINUX_BTF"
	mv "$out.tmp" "$out"
	echo "vmlinux-h: $out from $VMLINUX_BTF (VMLINUX_BTF)"
	exit 0
fi
abi=$(kernel_abi_pinned) || die "cannot resolve the lab kernel's ABI from apt (offline: VMLINUX_BTF=FILE)"
kdir=$build/e2e/kernel/$abi
kernel_fetch "$abi" "$kdir" || die "cannot unpack linux-image-$abi"
vmlinuz=$(readlink -f "$kdir/vmlinuz")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# unpack MAGIC TOOL: the payload behind the first MAGIC, through TOOL -dc.
unpack() {
	off=$(LC_ALL=C grep -obUaP "$1" "$vmlinuz" | head -n 1 | cut -d: -f1)
	[ -n "$off" ] || return 1
	tail -c +$((off + 1)) "$vmlinuz" | $2 -dc >"$tmp/vmlinux" 2>/dev/null || true
	bpftool btf dump file "$tmp/vmlinux" format c >"$tmp/vmlinux.h" 2>/dev/null
}
unpack '\xfd7zXZ\x00' xz || unpack '\x1f\x8b\x08' gzip || unpack '\x28\xb5\x2f\xfd' zstd ||
	die "no BTF found in $vmlinuz"
mkdir -p "$(dirname "$out")"
mv "$tmp/vmlinux.h" "$out"
echo "vmlinux-h: $out from the BTF of $abi"
