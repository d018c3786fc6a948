#!/bin/sh
# libvirt.sh: the nested lab with the product's real stack (docs/lab.md,
# "libvirt in L1").
#   tests/e2e/libvirt.sh --modules DIR [--boots N] [--linux-boots N] [--hand-boots N]
# Boots an L1 that runs the host's userspace (run-l1.sh --hostroot) with our
# modules, where l1-libvirt.sh starts libvirtd and virtlogd, defines the
# vm-configs/lab-*.xml domains and runs the Windows-layout guest under QEMU
# through virsh; svmtraced --domain traces it.  Judged here:
#   - svmtraced --domain lab-win --pid and --wait-name: armed on the
#     builder's process, entry page and DTB, counts add up, the trace equals
#     the reference model's records and starts right after the entry point;
#   - svmtraced --mem (judge-winmem.sh): --pid --from first on alpha.exe
#     (two threads; its worker decrypts a buffer and compares it) and
#     --wait-name --from first --follow on late.exe's family: per thread,
#     every record's memory accesses equal the model's, and the Tenet
#     export's memory entries too; dump --mem-range
#     over the decrypted buffer (found by its export in capture.json) and
#     stats' access counts and hottest written blocks;
#   - the endings: the domain reset (virsh reset), powered off by
#     the guest, destroyed, or its QEMU killed while svmtraced captures: svmtraced ends by itself,
#     exit 0, one line saying why, files that decode, capture.json; after
#     the reset the guest boots again and runs to its end, untraced;
#   - svmtrace-lab --launch serial lab-win late.exe: one whole session
#     (revert, start, svmtraced --wait-name, launch, memory dump, inspect,
#     stats, session.json, revert), its trace equal to the model's;
#   - N plain boots (default 3) of lab-win all reach "ready";
#   - --linux-boots (default 2) boots of Debian's kernel (lab-linux.xml)
#     through virsh all reach init, with no kernel warning but TCG's known
#     XSAVE one, and L0 delivered none of the interrupts L1's KVM injected
#     twice (docs/lab-internals.md, "Limits of QEMU 7.2's TCG"); --hand-boots
#     (default 0) rounds of the same kernel in QEMU started by hand
#     (l1-handqemu.sh) are reported;
#   - our modules unload at the end (rmmod), and the L1 kernel log has no
#     WARNING/BUG/Oops.
# Prints each stage's L1 time and "N passed, N failed".
# Environment: BUILD, E2E_LIBVIRT_TIMEOUT (L1 seconds, default 1200 and
# 300 more per Linux L2 boot), E2E_WIN_SEED (the Windows-layout guests'
# placement; default: a new seed each run, printed).
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
. "$top/tests/lib/need.sh"

modules= boots=3 linux_boots=2 hand_boots=0
while [ $# -gt 0 ]; do
	case $1 in
	--modules) modules=$2; shift 2 ;;
	--boots) boots=$2; shift 2 ;;
	--linux-boots) linux_boots=$2; shift 2 ;;
	--hand-boots) hand_boots=$2; shift 2 ;;
	*) echo "usage: libvirt.sh --modules DIR [--boots N] [--linux-boots N] [--hand-boots N]" >&2; exit 2 ;;
	esac
done
[ -n "$modules" ] || { echo "libvirt.sh: --modules DIR is required (make kmod)" >&2; exit 2; }
need_cmd qemu-system-x86_64 "booting L1 and L2 (qemu-system-x86)"
need_cmd libvirtd "libvirt in L1 (libvirt-daemon)"
need_cmd virtlogd "libvirt in L1 (libvirt-daemon)"
need_cmd virsh "driving the lab's domains (libvirt-clients)"
need_file /usr/share/qemu/pvh.bin "QEMU's PVH boot of the lab's guest (qemu-system-data)"
getent passwd libvirt-qemu >/dev/null ||
	skip_or_fail "no user libvirt-qemu (needed for QEMU under libvirtd; make deps: libvirt-daemon-system)"

build=$top/${BUILD:-build}
bin=$build/bin
. "$here/lib/kernel.sh"
abi=$(kernel_abi_of_module "$modules/kvm.ko")
run=$build/e2e/$(kernel_series_of "$abi")/libvirt
win=$run/win
for f in "$bin/svmtraced" "$bin/svmtrace-lab" "$bin/svmtrace-vmi" "$bin/svmtrace-dump" "$bin/svmtrace-e2e-model" "$bin/svmtrace-e2e-wingen"; do
	[ -e "$f" ] || { echo "libvirt.sh: $f missing (make e2e builds it)" >&2; exit 1; }
done
rm -rf "$run" && mkdir -p "$run/l1" "$run/expect"
# The Windows-layout guests, laid out anew (win/images.sh), as PVH ELFs.
win_seed=${E2E_WIN_SEED:-$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')}
for image in win10 win11; do
	"$here/win/images.sh" "$build" "$win" "$win_seed" "$image" pvh >"$run/win-$image.log" 2>&1 ||
		{ echo "libvirt.sh: laying out $image: $(cat "$run/win-$image.log")" >&2; exit 1; }
done
echo "info: the Windows-layout guests laid out with seed $win_seed (E2E_WIN_SEED=$win_seed repeats them)"
# The Linux L2: the kernel L1 boots (our modules' ABI), a busybox initramfs.
kernel_fetch "$abi" "$build/e2e/kernel/$abi" || { echo "libvirt.sh: cannot unpack linux-image-$abi" >&2; exit 1; }
cp "$build/e2e/kernel/$abi/vmlinuz" "$run/lab-linux.vmlinuz"
"$here/l2-initramfs.sh" "$run/lab-linux.initrd" || exit 1
. "$here/lib/judge.sh"
. "$here/judge-capture.sh"
. "$here/judge-win.sh"
cap=$run/l1/libvirt

# NAME IMAGE MODE TARGET (l1-libvirt.sh); the traced ones have a model.
scenarios="libvirt-win10-pid win10 pid 1200
libvirt-win11-late win11 late late.exe
libvirt-win10-late-follow win10 late-follow late.exe
libvirt-win10-first-mem win10 pid 1200 --from first --mem
libvirt-win11-late-follow-mem win11 late-follow late.exe --mem
libvirt-reboot win10 reboot 1200
libvirt-shutdown win10 shutdown 1200
libvirt-destroy win10 destroy 1200
libvirt-kill win10 kill 1200
libvirt-lab-session win11 session late.exe"
echo "$scenarios" >"$run/libvirt-scenarios"
model_win libvirt-win10-pid win10 1200 pid
model_win libvirt-win11-late win11 1212 late
model_win libvirt-win10-late-follow win10 1212 late-follow
model_win libvirt-lab-session win11 1212 late
model_win libvirt-win10-first-mem win10 1200 first
model_win libvirt-win11-late-follow-mem win11 1212 late-follow

adds="--add $here/l1-libvirt.sh --add $here/l1-capture.sh --add $top/vm-configs/lab-win.sh"
adds="$adds --add $top/vm-configs --add $run/libvirt-scenarios --add $bin/svmtraced"
adds="$adds --add $bin/svmtrace-lab --add $bin/svmtrace-dump --add $bin/svmtrace-vmi"
adds="$adds --add $win/win10.pvh --add $win/win11.pvh --add $here/l1-handqemu.sh"
adds="$adds --add $run/lab-linux.vmlinuz --add $run/lab-linux.initrd"
adds="$adds $(ls "$top"/tests/data/profiles/*.json.xz | sed 's/^/--add /')"
# One L1 vCPU: with two, QEMU 7.2's round-robin TCG switches between them,
# and a switch right after L1's KVM injected an interrupt into L2 delivers
# it to L2 a second time, IF=0 or not; L2's handler then deadlocks on its
# own lock (docs/lab-internals.md, "Limits of QEMU 7.2's TCG").  One
# vCPU costs nothing: thread=single runs L1's vCPUs on one host thread anyway.
# shellcheck disable=SC2086
nice "$here/run-l1.sh" --hostroot --cpus 1 --modules "$modules" --mem 1536 --out "$run/l1" \
	--timeout "${E2E_LIBVIRT_TIMEOUT:-$((1200 + 300 * linux_boots))}" $adds -- sh /e2e/l1-libvirt.sh "$boots" "$linux_boots" "$hand_boots"
rc=$?
if [ $rc -eq 0 ]; then ok libvirt/l1 "L1 with the host's userspace ran the scenarios ($(tr '\n' ' ' <"$run/l1/timing"))"
else bad libvirt/l1 "L1 run exited $rc (see $run/l1/console.log)"; fi
[ ! -s "$cap/failures" ] || bad libvirt/scenarios "$(tr '\n' ';' <"$cap/failures")"
if [ -s "$cap/version.txt" ] && ! grep -q error "$cap/define.txt" 2>/dev/null; then
	ok libvirt/define "libvirtd up ($(grep -m 1 'Running hypervisor' "$cap/version.txt")); defined $(grep -c defined "$cap/define.txt") of vm-configs/*.xml"
else
	bad libvirt/define "libvirtd or virsh define failed: $(cat "$cap/version.txt" "$cap/define.txt" 2>/dev/null)"
fi

# --domain: the same checks as the lab VMM's svmtraced runs (judge-win.sh).
for s in "libvirt-win10-pid win10 1200 pid" "libvirt-win11-late win11 1212 late" \
	"libvirt-win10-late-follow win10 1212 late-follow" "libvirt-win10-first-mem win10 1200 first" \
	"libvirt-win11-late-follow-mem win11 1212 late-follow"; do
	set -- $s
	judge_win_armed "$1" "$2" "$3" "$4"
	judge_daemon_kernel "$1" "$2"
	judge_capture_rc "$1"
	judge_trace "$1" "$run/expect/$1"
	judge_win_first "$1" "$2" "$3" "$4"
	judge_win_only_target "$1" "$2" "$3" "$4"
done
# --follow through libvirt: the whole family, as with the lab's VMM.
judge_win_loader libvirt-win10-late-follow win10 1212
judge_win_threads libvirt-win10-late-follow win10 "$run/expect/libvirt-win10-late-follow"
judge_win_analysis libvirt-win10-late-follow late.exe late-follow
judge_win_follow libvirt-win10-late-follow win10 1212 late-follow
# --mem through libvirt: alpha.exe's two threads from their first
# instructions (its worker decrypts a buffer), and late.exe's family.
. "$here/judge-winmem.sh"
judge_win_loader libvirt-win10-first-mem win10 1200
judge_win_threads libvirt-win10-first-mem win10 "$run/expect/libvirt-win10-first-mem"
judge_win_mem libvirt-win10-first-mem win10 "$run/expect/libvirt-win10-first-mem" 2
judge_win_analysis libvirt-win10-first-mem alpha.exe first
judge_win_mem_tenet libvirt-win10-first-mem win10 "$run/expect/libvirt-win10-first-mem"
judge_win_memrange libvirt-win10-first-mem 1200 alpha.exe
judge_win_memstats libvirt-win10-first-mem
judge_win_threads libvirt-win11-late-follow-mem win11 "$run/expect/libvirt-win11-late-follow-mem"
judge_win_analysis libvirt-win11-late-follow-mem late.exe late-follow
judge_win_follow libvirt-win11-late-follow-mem win11 1212 late-follow
judge_win_mem libvirt-win11-late-follow-mem win11 "$run/expect/libvirt-win11-late-follow-mem" 3
judge_win_mem_tenet libvirt-win11-late-follow-mem win11 "$run/expect/libvirt-win11-late-follow-mem"

. "$here/judge-libvirt.sh"
judge_libvirt_endings
judge_libvirt_session libvirt-lab-session
judge_libvirt_dump_discovery libvirt-lab-session win11
judge_trace libvirt-lab-session "$run/expect/libvirt-lab-session"
judge_libvirt_boots "$boots"
judge_libvirt_linux

if grep -q '^unloaded$' "$cap/unload.txt" 2>/dev/null; then
	ok libvirt/rmmod "our modules unloaded after every scenario (libvirtd stopped first)"
else
	bad libvirt/rmmod "kvm-modules unload at the end: $(tr '\n' ' ' <"$cap/unload.txt" 2>/dev/null)"
fi
if [ -s "$run/l1/dmesg.txt" ] && ! grep -E 'WARNING|BUG|Oops|Call Trace' "$run/l1/dmesg.txt"; then
	ok libvirt/dmesg "L1 kernel log has no WARNING/BUG/Oops"
else
	bad libvirt/dmesg "L1 kernel log has warnings (see $run/l1/dmesg.txt)"
fi
[ ! -s "$cap/stages" ] || awk 'NR > 1 { printf "stage %s: %.1f s\n", $1, $2 - t } { t = $2 }' "$cap/stages"
[ $xfail -eq 0 ] || echo "libvirt: $xfail known failures (tests/e2e/known-failures)"
echo "libvirt: $pass passed, $fail failed"
[ $fail -eq 0 ]
