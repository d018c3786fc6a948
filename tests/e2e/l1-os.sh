#!/bin/sh
# l1-os.sh: inside L1 (run-l1.sh --hostroot, started by os.sh), the Linux
# L2 of `make e2e-os` (docs/lab-internals.md, "A real Linux in L2").  Boots
# Debian's kernel (/e2e/os.vmlinuz, /e2e/os.initrd: its /init is
# tests/e2e/os/init.sh) with 2 vCPUs in QEMU started by hand, ASLR off
# (norandmaps), twice:
#   1. on the packaged modules, with svmtrace_os=untraced: the timing
#      checks (os/timing.c) untraced; the L2 powers off;
#   2. on our modules: the timing checks traced by svmtrace-capture without
#      and with --hide-time; then each program (flags, xonly, sort, hash,
#      threads, calls, memforms) traced with --mem, L1 stopping the capture once it
#      exited, then run by ptrace inside the guest; then threads once more
#      with --hide-time.  calls is traced with the exit audit, beside
#      os-noise.
# Each traced run: wait for its gate line, start svmtrace-capture
# --gate-gpa GATE --adopt-cr3 --policy block (and the run's arguments),
# send "go" on COM1, wait until the program exited, stop the capture, send
# a line again.  Each wait for the L2 (its boot, each run) lasts at most
# SECONDS (the first argument, default 900).  Results in $E2E_OUT/os:
# console.txt (console-untraced.txt for boot 1), RUN/capture.txt,
# capture.rc, trace/, RUN/console-lines (the console's length when the
# capture was armed and when it was stopped: for calls, os-noise's lines
# between), and the guest's ptrace records and rusage (from its 9p share).
# The consoles are written to the results share as they come (watch a run
# from the host).
set -u
out=$E2E_OUT/os
mkdir -p "$out"
cd /e2e
. ./l1-capture.sh	# wait_line
fail() { echo "$*" >>"$out/failures"; }
stage() { echo "$1 $(cut -d' ' -f1 /proc/uptime)" >>"$out/stages"; }
seconds=${1:-900}
share=/tmp/l2share serial=/tmp/l2

# boot_l2 CONSOLE APPEND: QEMU with the L2 ($qemu), its console into CONSOLE.
boot_l2() {
	console=$1
	rm -rf "$share" "$console" "$serial.in" "$serial.out"
	mkdir -p "$share" && mkfifo "$serial.in" "$serial.out"
	qemu-system-x86_64 -machine pc,accel=kvm -cpu host,-svm -m 256 -smp 2 -nodefaults \
		-kernel os.vmlinuz -initrd os.initrd \
		-append "console=ttyS0 panic=-1 loglevel=5 mitigations=off norandmaps $2" \
		-display none -chardev "pipe,id=com1,path=$serial,logfile=$console" \
		-serial chardev:com1 \
		-virtfs "local,path=$share,mount_tag=out,security_model=none,id=out" \
		-no-reboot >"$out/qemu.txt" 2>&1 &
	qemu=$!
	# Nobody else reads COM1's output FIFO: drain it, the log has it all.
	cat "$serial.out" >/dev/null &
	drain=$!
	wait_line "$console" '^svmtrace-lab: ready' "$seconds" "$qemu" && return 0
	fail "the Linux L2 did not reach its init in $seconds s (docs/lab-internals.md, \"An interrupt delivered twice\")"
	return 1
}
send() { timeout 10 sh -c 'printf "go\n" >"$1"' - "$serial.in"; }
finish() {
	cp "$share"/* "$out/" 2>/dev/null
	kill -9 "$qemu" "$drain" 2>/dev/null
	wait "$qemu"
}

# wait_nth REGEX N SECONDS: the console has N lines matching REGEX (the
# same program printing again for another run).
wait_nth() {
	n=$(($3 * 10))
	while [ "$(grep -c "$1" "$console" 2>/dev/null)" -lt "$2" ]; do
		kill -0 "$qemu" 2>/dev/null && [ $n -gt 0 ] || return 1
		sleep 0.1
		n=$((n - 1))
	done
}

# traced_run NAME PROG N [CAPTURE-ARG...]: PROG's Nth run, traced into
# $out/NAME; the capture is stopped once the run exited.
traced_run() {
	name=$1 prog=$2 nth=$3
	shift 3
	d=$out/$name
	mkdir -p "$d"
	if ! wait_nth "^svmtrace-os: $prog gate=" "$nth" 120; then
		fail "$name: $prog never printed its gate"
		return 1
	fi
	gpa=$(sed -n "s/^svmtrace-os: $prog gate=\(0x[0-9a-f]*\).*/\1/p" "$console" | tail -n 1 | tr -d '\r')
	traces=/tmp/trace-$name
	rm -rf "$traces"
	svmtrace-capture --vmm-pid "$qemu" --gate-gpa "$gpa" --adopt-cr3 --policy block \
		--out "$traces" --quiet "$@" >"$d/capture.txt" 2>&1 &
	cap=$!
	wait_line "$d/capture.txt" '^armed' 60 "$cap" || fail "$name: svmtrace-capture never armed"
	stage "$name-armed"
	armed_at=$(wc -l <"$console")
	send
	wait_line "$console" "^svmtrace-os: $name exited" "$seconds" "$qemu" || fail "$name: the traced run never ended"
	stage "$name-traced"
	kill -INT "$cap"
	wait_line "$d/capture.txt" '^total ' 60 "$cap" || { fail "$name: svmtrace-capture did not end"; kill -9 "$cap"; }
	wait "$cap"; echo $? >"$d/capture.rc"
	echo "$armed_at $(wc -l <"$console")" >"$d/console-lines"
	cp -r "$traces" "$d/trace"
	send
}

stage start
# 1: the timing checks untraced, on the packaged modules.
kvm-modules load packaged >"$out/load-packaged.txt" 2>&1 || fail "kvm-modules load packaged"
if boot_l2 "$out/console-untraced.txt" svmtrace_os=untraced; then
	stage booted-untraced
	if wait_line "$console" '^svmtrace-os: timing gate=' 120 "$qemu"; then
		send
		wait_line "$console" '^svmtrace-os: timing-untraced exited' "$seconds" "$qemu" ||
			fail "timing-untraced: the run never ended"
	else
		fail "timing-untraced: never printed its gate"
	fi
	wait_line "$console" '^svmtrace-os: timing-untraced timer-after' 60 "$qemu"
fi
finish
stage untraced
kvm-modules unload >/dev/null 2>&1

# 2: our modules.
kvm-modules load ours >"$out/load.txt" 2>&1 || { fail "kvm-modules load ours"; exit 1; }
stage modules
if ! boot_l2 "$out/console.txt" ""; then
	finish
	exit 0
fi
stage booted
traced_run timing-traced timing 1 && traced_run timing-hide timing 2 --hide-time
for p in flags xonly sort hash threads calls memforms; do
	audit=
	[ "$p" != calls ] || audit=--audit
	traced_run "$p" "$p" 1 --mem $audit || break
	wait_line "$console" "^svmtrace-os: $p ptrace exited" "$seconds" "$qemu" || fail "$p: the ptrace run never ended"
	stage "$p-ptrace"
done
traced_run threads-hide threads 2 --hide-time
wait_line "$console" '^svmtrace-os: all done' 60 "$qemu" || fail "the L2 never said all done"
finish
stage end
kvm-modules unload >/dev/null 2>&1
true
