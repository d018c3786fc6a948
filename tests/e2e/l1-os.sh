#!/bin/sh
# l1-os.sh: inside L1 (run-l1.sh --hostroot, started by os.sh), the Linux
# L2 of `make e2e-os` (docs/lab-internals.md, "A real Linux in L2").  Loads our
# modules, boots Debian's kernel (/e2e/os.vmlinuz, /e2e/os.initrd: its
# /init is tests/e2e/os/init.sh) with 2 vCPUs in QEMU started by hand,
# ASLR off (norandmaps), and for each program: waits for its gate line,
# starts svmtrace-capture --gate-gpa GATE --adopt-cr3 --policy block (with
# the exit audit for calls, which runs beside os-noise), sends "go" on
# COM1, waits until the program exited, stops the capture, sends "go" again
# for the ptrace run and waits for it.  Results in
# Each wait for the L2 (its boot, each run) lasts at most SECONDS (the
# first argument, default 900).
# $E2E_OUT/os: console.txt, PROG/capture.txt, capture.rc, trace/, and the
# guest's ptrace records and rusage (from its 9p share), and for calls
# PROG/console-lines: the console's length when the capture was armed and
# when it was stopped (os-noise's lines between).  The console is
# written to the results share as it comes (watch a run from the host).
set -u
out=$E2E_OUT/os
mkdir -p "$out"
cd /e2e
. ./l1-capture.sh	# wait_line
fail() { echo "$*" >>"$out/failures"; }
stage() { echo "$1 $(cut -d' ' -f1 /proc/uptime)" >>"$out/stages"; }
seconds=${1:-900}

stage start
kvm-modules load ours >"$out/load.txt" 2>&1 || { fail "kvm-modules load ours"; exit 1; }
stage modules
share=/tmp/l2share console=$out/console.txt serial=/tmp/l2
rm -rf "$share" "$console" "$serial.in" "$serial.out"
mkdir -p "$share" && mkfifo "$serial.in" "$serial.out"
qemu-system-x86_64 -machine pc,accel=kvm -cpu host,-svm -m 256 -smp 2 -nodefaults \
	-kernel os.vmlinuz -initrd os.initrd \
	-append "console=ttyS0 panic=-1 loglevel=5 mitigations=off norandmaps" -display none \
	-chardev "pipe,id=com1,path=$serial,logfile=$console" -serial chardev:com1 \
	-virtfs "local,path=$share,mount_tag=out,security_model=none,id=out" \
	-no-reboot >"$out/qemu.txt" 2>&1 &
qemu=$!
# Nobody else reads COM1's output FIFO: drain it, the log has it all.
cat "$serial.out" >/dev/null &
drain=$!
send() { timeout 10 sh -c 'printf "go\n" >"$1"' - "$serial.in"; }
finish() {
	cp "$share"/* "$out/" 2>/dev/null
	kill -9 "$qemu" "$drain" 2>/dev/null
	wait "$qemu"
	stage end
}
if ! wait_line "$console" '^svmtrace-lab: ready' "$seconds" "$qemu"; then
	fail "the Linux L2 did not reach its init in $seconds s (docs/lab-internals.md, \"An interrupt delivered twice\")"
	finish
	exit 0
fi
stage booted
for p in flags xonly sort hash threads calls; do
	d=$out/$p
	mkdir -p "$d"
	if ! wait_line "$console" "^svmtrace-os: $p gate=" 120 "$qemu"; then
		fail "$p never printed its gate"
		break
	fi
	gpa=$(sed -n "s/^svmtrace-os: $p gate=\(0x[0-9a-f]*\).*/\1/p" "$console" | tr -d '\r')
	traces=/tmp/trace-$p
	rm -rf "$traces"
	audit=
	[ "$p" != calls ] || audit=--audit
	svmtrace-capture --vmm-pid "$qemu" --gate-gpa "$gpa" --adopt-cr3 --policy block \
		--out "$traces" --quiet $audit >"$d/capture.txt" 2>&1 &
	cap=$!
	wait_line "$d/capture.txt" '^armed' 60 "$cap" || fail "$p: svmtrace-capture never armed"
	stage "$p-armed"
	armed_at=$(wc -l <"$console")
	send
	wait_line "$console" "^svmtrace-os: $p exited" "$seconds" "$qemu" || fail "$p: the traced run never ended"
	stage "$p-traced"
	kill -INT "$cap"
	wait_line "$d/capture.txt" '^total ' 60 "$cap" || { fail "$p: svmtrace-capture did not end"; kill -9 "$cap"; }
	wait "$cap"; echo $? >"$d/capture.rc"
	echo "$armed_at $(wc -l <"$console")" >"$d/console-lines"
	cp -r "$traces" "$d/trace"
	send
	wait_line "$console" "^svmtrace-os: $p ptrace exited" "$seconds" "$qemu" || fail "$p: the ptrace run never ended"
	stage "$p-ptrace"
done
wait_line "$console" '^svmtrace-os: all done' 60 "$qemu" || fail "the L2 never said all done"
finish
kvm-modules unload >/dev/null 2>&1
true
