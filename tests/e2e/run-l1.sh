#!/bin/sh
# run-l1.sh: boot the L1 guest of the nested-SVM lab under QEMU TCG (an AMD
# EPYC CPU with SVM and NPT), load KVM in it, run one command, and bring the
# results back.
#
#   tests/e2e/run-l1.sh [--modules DIR] [--kabi ABI] [--out DIR] [--add FILE]...
#                       [--mem MB] [--cpus N] [--timeout S] [--icount] [--hostroot]
#                       [--plugin SO[,ARG...]] [--cpu-features +F,...] -- COMMAND [ARG...]
#
# L1 is Debian's packaged kernel (linux-image-ABI, unpacked under
# build/e2e/kernel, never installed) with a busybox initramfs built here.  It
# carries the packaged kvm.ko/kvm-amd.ko and their dependencies and, with
# --modules, DIR/kvm.ko + DIR/kvm-amd.ko (our build); ABI defaults to the
# vermagic of DIR/kvm.ko, else to the image matching the pinned
# linux-source-6.1.  Inside L1 `kvm-modules load packaged|ours` and
# `kvm-modules unload` switch between them.
#
# Every --add FILE lands in /e2e/bin (ELF executables, with the shared
# libraries they need) or /e2e (anything else); COMMAND runs in /e2e with PATH
# including /e2e/bin and $E2E_OUT pointing at a 9p share that is the host's
# --out DIR.  When COMMAND ends L1 writes DIR/rc (its exit status),
# DIR/dmesg.txt and DIR/timing (boot seconds), and powers off; the console is
# in DIR/console.log.  A COMMAND still running 30 s before --timeout ends
# with status 124 and the blocked tasks' stacks in DIR/dmesg.txt.  The exit
# status of this script is COMMAND's, or 2 when L1 did not get that far
# (timeout, panic).  Meanwhile l1-watchdog.py reads L1's local APICs through
# QMP and ends the interrupts QEMU 7.2's TCG leaves pending (one line for
# each in DIR/watchdog.log).  --cpus N gives L1 N vCPUs (default 2).  --icount runs
# QEMU with -icount shift=0,sleep=off and one vCPU: L1's clocks then count
# executed instructions (step-cost.sh).
# --plugin loads a QEMU TCG plugin with its arguments (step-profile.sh).
# --cpu-features adds CPU features to L1's emulated EPYC (os.sh: +pku).
# --hostroot gives L1 a real userspace (l1-hostroot.sh): the host's / shared
# read-only over virtio-9p under a tmpfs overlay, so libvirtd, virsh and
# QEMU run in L1 as installed on the host (make deps); COMMAND then runs
# there, with /e2e and the KVM modules carried over.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
. "$here/lib/kernel.sh"

usage() { sed -n '2,/^set -eu/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit "${1:-2}"; }
die() { echo "run-l1: $*" >&2; exit 2; }

modules= abi= out= mem=1024 timeout=600 adds= cpus=2 hostroot=
while [ $# -gt 0 ]; do
	case $1 in
	--modules) modules=$2; shift 2 ;;
	--kabi) abi=$2; shift 2 ;;
	--out) out=$2; shift 2 ;;
	--add) [ -e "$2" ] || die "--add $2: no such file"; adds="$adds $2"; shift 2 ;;
	--mem) mem=$2; shift 2 ;;
	--cpus) cpus=$2; shift 2 ;;
	--timeout) timeout=$2; shift 2 ;;
	--icount) icount="-icount shift=0,sleep=off"; cpus=1; shift ;;
	--hostroot) hostroot=yes; shift ;;
	--plugin) plugin="-plugin $2"; shift 2 ;;
	--cpu-features) cpu_features=,$2; shift 2 ;;
	-h | --help) usage 0 ;;
	--) shift; break ;;
	*) die "unknown argument '$1' (see --help)" ;;
	esac
done
[ $# -gt 0 ] || die "no COMMAND given after -- (see --help)"
[ -n "$out" ] || die "--out DIR is required"
if [ -n "$modules" ]; then
	for m in kvm.ko kvm-amd.ko; do
		[ -f "$modules/$m" ] || die "--modules $modules: no $m there (run make kmod)"
	done
	mabi=$(kernel_abi_of_module "$modules/kvm.ko")
	[ -z "$abi" ] || [ "$abi" = "$mabi" ] ||
		die "--kabi $abi but $modules/kvm.ko was built for $mabi"
	abi=$mabi
fi
[ -n "$abi" ] || abi=$(kernel_abi_pinned) || die "cannot resolve the kernel ABI from apt"
command -v qemu-system-x86_64 >/dev/null || die "qemu-system-x86_64 not installed (make deps)"

build=$top/build/e2e
kdir=$build/kernel/$abi
kernel_fetch "$abi" "$kdir" || die "cannot unpack linux-image-$abi"
moddir=$kdir/root/lib/modules/$abi
if [ -n "$modules" ]; then
	want=$(modinfo -F vermagic "$moddir"/kernel/arch/x86/kvm/kvm.ko*)
	for m in kvm.ko kvm-amd.ko; do
		got=$(modinfo -F vermagic "$modules/$m")
		[ "$got" = "$want" ] || die "$modules/$m vermagic '$got' differs from the image's '$want'"
	done
fi

mkdir -p "$out"
out=$(cd "$out" && pwd)
rm -f "$out/rc" "$out/dmesg.txt" "$out/timing" "$out/console.log" "$out/watchdog.log" "$out/qmp.sock"

# --- initramfs -------------------------------------------------------------
root=$(mktemp -d "$build/initramfs.XXXXXX") && chmod 755 "$root"
trap 'rm -rf "$root" "$root.cpio"' EXIT
mkdir -p "$root/bin" "$root/e2e/bin" "$root/lib/kvm/packaged" "$root/lib/kvm/ours" \
	"$root/proc" "$root/sys" "$root/dev" "$root/tmp" "$root/out" "$root/etc"
busybox=$(command -v busybox) || die "busybox not installed (make deps: busybox-static)"
ldd "$busybox" >/dev/null 2>&1 && die "$busybox is not static (install busybox-static)"
cp "$busybox" "$root/bin/busybox"
for a in $("$busybox" --list); do [ -e "$root/bin/$a" ] || ln -s busybox "$root/bin/$a"; done

# Modules, in load order: 9p for the results share (and overlay for the
# host's root), then KVM's closure.
kernel_modules_unpack "$moddir" "$root/lib/kvm/packaged" "$root/lib/kvm/share.order" \
	virtio_pci 9pnet_virtio 9p ${hostroot:+overlay} || die "cannot copy the image's modules"
kernel_modules_unpack "$moddir" "$root/lib/kvm/packaged" "$root/lib/kvm/packaged.order" kvm-amd ||
	die "cannot copy the image's modules"
if [ -n "$modules" ]; then
	cp "$modules/kvm.ko" "$modules/kvm-amd.ko" "$root/lib/kvm/ours/"
fi

# Executables keep their shared libraries (same paths as on the host).
add_libs() {
	ldd "$1" 2>/dev/null | awk '/=> \// { print $3 } /^\t\/lib/ { print $1 }' | while read -r lib; do
		[ -e "$root$lib" ] && continue
		mkdir -p "$root$(dirname "$lib")"
		cp -L "$lib" "$root$lib"
	done
}
for f in $adds; do
	if [ -f "$f" ] && [ "$(head -c 4 "$f" | tail -c 3)" = ELF ]; then
		cp "$f" "$root/e2e/bin/"
		! ldd "$f" >/dev/null 2>&1 || add_libs "$f"
	else
		cp -r "$f" "$root/e2e/"
	fi
done
printf 'root:x:0:0:root:/:/bin/sh\nnobody:x:65534:65534:nobody:/:/bin/sh\n' >"$root/etc/passwd"
printf 'root:x:0:\nnogroup:x:65534:\n' >"$root/etc/group"
cp "$here/l1-init.sh" "$root/init"
if [ -n "$hostroot" ]; then
	cp "$here/l1-hostroot.sh" "$root/e2e/"
	# The image's modules, for L1's modprobe (by their host path).
	echo "$abi $moddir" >"$root/e2e/hostroot"
	share_root="-fsdev local,id=hostroot,path=/,security_model=none,readonly=on,multidevs=remap"
	share_root="$share_root -device virtio-9p-pci,fsdev=hostroot,mount_tag=hostroot"
fi
cp "$here/kvm-modules.sh" "$root/bin/kvm-modules"
chmod 755 "$root/init" "$root/bin/kvm-modules"
for a in "$@"; do printf '%s\n' "$a"; done >"$root/e2e/command"
# L1 gives up on COMMAND a little before QEMU is killed, to save the logs.
echo $((timeout > 60 ? timeout - 30 : timeout / 2)) >"$root/e2e/deadline"
(cd "$root" && find . | cpio -o -H newc --quiet) >"$root.cpio"

# --- boot ------------------------------------------------------------------
# EPYC brings AMD's SVM; npt is all the nested paging TCG offers (DESIGN.md).
# The features TCG cannot emulate are switched off so QEMU does not warn.
cpu=EPYC,+svm,+npt,-rdseed,-sha-ni,-fxsr-opt,-misalignsse,-3dnowprefetch,-osvw,-topoext
cpu=$cpu,-nrip-save,-xsavec${cpu_features:-}
# mitigations=off: L1 is a throwaway test kernel, and TCG runs faster without.
# softlockup_panic, loglevel=5: a kernel that stops scheduling ends the run at
# once, with the stuck CPU's backtrace on the console.
# initcall_blacklist=jent_mod_init: 6.12 builds the jitter entropy RNG in
# (6.1 as a module L1 never loads), and its start-up self-test runs for tens
# of seconds of TCG without scheduling on a loaded host: a soft lockup, seen
# in a lab L1's boot.  L1 needs no entropy source of its own.
# no_timer_check: on a loaded host TCG can be too slow for the kernel's
# IO-APIC timer check, which then panics ("IO-APIC + timer doesn't work!",
# seen with five lab L1s on this 2-core machine); KVM guests skip it the same
# way (kvmclock), but L1 under TCG has no kvmclock.
# thread=single: one host thread runs both L1 vCPUs in turn.  Multi-threaded
# TCG froze L1 outright (no console output, no watchdog) in 3 of ~10 lab runs
# on this loaded 2-core machine, each time while a VMM was creating its VM.
accel=tcg,thread=single
echo "run-l1: booting linux-image-$abi with ${modules:-packaged} modules (log: $out/console.log)" >&2
start=$(date +%s.%N)
rc=0
python3 "$here/l1-watchdog.py" "$out/qmp.sock" "$cpus" "$out/watchdog.log" &
watchdog=$!
# --icount: QEMU's virtual clock advances 1 ns per guest instruction (and
# jumps to the next timer when every vCPU idles), so time measured inside L1
# over a busy interval counts the instructions L1 and L2 executed, the same
# on every run whatever the host's load.  One L1 vCPU: with two, QEMU 7.2's
# icount never brought the second one up (the boot hung in "Booting SMP
# configuration").
# shellcheck disable=SC2086 # icount, plugin and share_root are lists of arguments
timeout --foreground -k 10 "$timeout" qemu-system-x86_64 -accel "$accel" -cpu "$cpu" ${icount:-} ${plugin:-} \
	-m "$mem" -smp "$cpus" -kernel "$kdir/vmlinuz" -initrd "$root.cpio" \
	-append "console=ttyS0 panic=-1 oops=panic softlockup_panic=1 initcall_blacklist=jent_mod_init mitigations=off quiet loglevel=5 no_timer_check" \
	-display none -monitor none -qmp "unix:$out/qmp.sock,server=on,wait=off" \
	-serial "file:$out/console.log" -no-reboot \
	-virtfs "local,path=$out,mount_tag=out,security_model=none,id=out" ${share_root:-} </dev/null || rc=$?
end=$(date +%s.%N)
# The watchdog may be gone already (it ends when QEMU closes its socket).
kill "$watchdog" 2>/dev/null || true
wait "$watchdog" || true
[ ! -s "$out/watchdog.log" ] || cat "$out/watchdog.log" >&2
awk -v s="$start" -v e="$end" 'BEGIN { printf "wall_seconds %.1f\n", e - s }' >>"$out/timing"
if [ $rc -eq 124 ]; then
	echo "run-l1: L1 timed out after ${timeout}s; last console lines:" >&2
	tail -n 20 "$out/console.log" >&2
	exit 2
fi
[ $rc -eq 0 ] || { echo "run-l1: qemu exited with $rc" >&2; tail -n 20 "$out/console.log" >&2; exit 2; }
if [ ! -s "$out/rc" ]; then
	echo "run-l1: L1 stopped before COMMAND finished; last console lines:" >&2
	tail -n 30 "$out/console.log" >&2
	exit 2
fi
exit "$(cat "$out/rc")"
