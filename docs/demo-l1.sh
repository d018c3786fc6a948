#!/bin/sh
# The libvirt demo's second half, inside the lab's L1 (docs/demo-lab.sh
# boots it with the host's userspace): what a user types on an AMD host with
# our modules, shown as a transcript, one "demo:" line per stage.
set -u
cd /e2e
. ./lab-win.sh
export LIBVIRT_DEFAULT_URI=qemu:///system
stage_no=2	# (not n: lab-win.sh's loops use n)
stage() { stage_no=$((stage_no + 1)); echo; echo "demo: [$stage_no/7] $* (L1 uptime $(cut -d' ' -f1 /proc/uptime) s)"; }
run() { echo "\$ $*"; "$@"; }
die() { echo "demo: $*" >&2; exit 1; }
traces=/tmp/traces

stage "our kvm.ko + kvm-amd.ko, virtlogd, libvirtd"
kvm-modules load ours >/dev/null || die "cannot load our modules"
chgrp kvm /dev/kvm && chmod 660 /dev/kvm	# udev's job on a real host
virtlogd -d && libvirtd -d || die "libvirtd did not start"
i=0
until virsh version >/dev/null 2>&1; do
	i=$((i + 1)); [ $i -lt 180 ] || die "libvirtd did not answer"; sleep 1
done
run virsh version | grep hypervisor

stage "the Windows-layout guest: virsh define, virsh start"
lab_win_install bin/win11.pvh || die "cannot install the guest image"
run virsh define vm-configs/lab-win.xml
run virsh start lab-win
lab_win_wait ready 180 || die "the guest did not boot"
lab_win_console

stage "svmtraced --domain lab-win --wait-name late.exe"
echo "\$ svmtraced --domain lab-win --wait-name late.exe --profiles /e2e --out $traces &"
svmtraced --domain lab-win --wait-name late.exe --profiles /e2e --out "$traces" >/tmp/svmtraced.log 2>&1 &
cap=$!
i=0
until grep -q 'waiting for a new process' /tmp/svmtraced.log; do
	i=$((i + 1)); [ $i -lt 1200 ] || die "svmtraced: $(cat /tmp/svmtraced.log)"; sleep 0.1
done
cat /tmp/svmtraced.log

stage "launch late.exe in the guest (serial command), capture until it is done"
lab_win_launch 120 || die "the guest did not launch late.exe"
lab_win_wait done 120 || die "the guest did not finish"
lab_win_console | tail -n 2
kill -INT "$cap" && wait "$cap"
cat /tmp/svmtraced.log
virsh destroy lab-win >/dev/null

stage "the trace: inspect, the first rows from the PE entry, stats"
run svmtrace-dump inspect "$traces/svmtrace_trace_cpu0.bin"
run svmtrace-dump dump --regs "$traces/svmtrace_trace_cpu0.bin" 6
run svmtrace-dump stats --top 3 "$traces/svmtrace_trace_cpu0.bin"
cp -r "$traces" "$E2E_OUT/traces"
