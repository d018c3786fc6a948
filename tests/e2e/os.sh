#!/bin/sh
# os.sh: a real operating system in L2, with an oracle that is not ours
# (docs/lab-internals.md, "A real Linux in L2").
#   tests/e2e/os.sh --modules DIR
# Boots an L1 with the host's userspace (run-l1.sh --hostroot) where
# l1-os.sh runs Debian's kernel (the one L1 runs) with a busybox initramfs
# and 2 vCPUs in QEMU, ASLR off, and seven deterministic programs in it
# (tests/e2e/os: sort, hash, three threads, PUSHF/POPF, system calls from
# execute-only code, system calls beside another process that makes
# nothing else, one of each memory operand form the capture decodes beyond
# plain MOVs), each twice: traced by
# svmtrace-capture --adopt-cr3 from its gate page, then single-stepped by
# ptrace inside the guest (svmtrace-steprec --threads).  os/judge.py
# compares every thread's user instruction stream record by record (RIP,
# RFLAGS less TF, the 16 GPRs) and names every difference it allows.
# Prints "os: N passed, N failed".
# Environment: BUILD, E2E_OS_TIMEOUT (L1 seconds, default 1800: four
# programs, each traced and ptraced, took over 1200 s of L1 at load 15),
# OS_SECONDS (L1's wait for each L2 stage, default 900: the L2's boot took
# 135 s at load 15, and over 7 minutes with two L1 vCPUs).
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
. "$top/tests/lib/need.sh"

modules=
while [ $# -gt 0 ]; do
	case $1 in
	--modules) modules=$2; shift 2 ;;
	*) echo "usage: os.sh --modules DIR" >&2; exit 2 ;;
	esac
done
[ -n "$modules" ] || { echo "os.sh: --modules DIR is required (make kmod)" >&2; exit 2; }
need_cmd qemu-system-x86_64 "booting L1 and L2 (qemu-system-x86)"
need_cmd python3 "the judge (os/judge.py)"

build=$top/${BUILD:-build}
bin=$build/bin
os=$build/e2e/os
for f in "$bin/svmtrace-capture" "$bin/svmtrace-dump" "$os/steprec" "$os/os-sort" "$os/os-hash" \
	"$os/os-threads" "$os/os-flags" "$os/os-xonly" "$os/os-calls" "$os/os-noise" "$os/os-memforms" \
	"$os/os-timing"; do
	[ -e "$f" ] || { echo "os.sh: $f missing (make e2e-os builds it)" >&2; exit 1; }
done
. "$here/lib/kernel.sh"
abi=$(kernel_abi_of_module "$modules/kvm.ko")
run=$build/e2e/$(kernel_series_of "$abi")/os-run
rm -rf "$run" && mkdir -p "$run/l1"
kdir=$build/e2e/kernel/$abi
kernel_fetch "$abi" "$kdir" || { echo "os.sh: cannot unpack linux-image-$abi" >&2; exit 1; }
cp "$kdir/vmlinuz" "$run/os.vmlinuz"
"$here/os/initramfs.sh" "$run/os.initrd" "$kdir/root/lib/modules/$abi" "$os" || exit 1

# One L1 vCPU: with two, QEMU 7.2's TCG can deliver an interrupt injected
# into L2 a second time and hang the Linux L2 (docs/lab-internals.md, "An
# interrupt delivered twice"); L2's two vCPUs are two threads of its QEMU in
# L1.  PKU: L2's Linux enables protection keys (xonly's execute-only code)
# only if L1's CPU has them.
nice "$here/run-l1.sh" --hostroot --cpus 1 --cpu-features +pku --modules "$modules" --mem 1536 \
	--out "$run/l1" \
	--timeout "${E2E_OS_TIMEOUT:-1800}" --add "$here/l1-os.sh" --add "$here/l1-capture.sh" \
	--add "$bin/svmtrace-capture" --add "$run/os.vmlinuz" --add "$run/os.initrd" \
	-- sh /e2e/l1-os.sh "${OS_SECONDS:-900}"
rc=$?
python3 "$here/os/judge.py" --l1-rc "$rc" --results "$run/l1/os" --bin "$os" \
	--dump "$bin/svmtrace-dump" --dmesg "$run/l1/dmesg.txt"
