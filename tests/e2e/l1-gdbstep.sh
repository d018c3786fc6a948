#!/bin/sh
# l1-gdbstep.sh ROUNDS SMALL BIG (inside an L1 booted by step-cost.sh with
# run-l1.sh --icount --hostroot): single-step a guest the way a user of
# stock KVM does, with gdb through QEMU's gdbstub, on Debian's modules, and
# record how long gdb's `stepi N` takes in L1's virtual time (under
# -icount: instructions, L1 and L2 together), N = SMALL and N = BIG in each
# of ROUNDS rounds: $E2E_OUT/gdbstub-N-rR.txt, failures in
# $E2E_OUT/failures.
#
# Each run starts the host's QEMU paused with steploop.bin as its firmware
# (a loop of four register instructions from the reset vector,
# guest/steploop.S) and its gdbstub on a UNIX socket; gdb -batch
# (l1-gdbstep.py) connects, snapshots L1's clocks, runs `stepi N`,
# snapshots them again.  Each step is QEMU's KVM_SET_GUEST_DEBUG(SINGLESTEP)
# and a KVM_RUN that ends in KVM_EXIT_DEBUG, QEMU's stop, and gdb's packets:
# vCont;s, the stop reply, `g` (all registers) and two one-byte reads of the
# code at the new PC (seen with `set debug remote 1`, gdb 13.1, QEMU 7.2).
# gdb's start and connection fall outside the snapshots, and step-cost.sh
# takes the difference of the two runs of a round anyway.  A run's file has
# gdb's output (l1-gdbstep.py's lines, with "ecx", the loop's counter,
# which step-cost.sh checks to know that gdb stepped N instructions) and
# then QEMU's.
#
# Not in l1-stepcost.sh's L1: QEMU and gdb need the host's userspace, and
# with it the capture rows there rose by 65 to 134 instructions per step
# (the shell's polls during each capture, l1-capture.sh, run the host's
# dynamically linked tools instead of busybox; docs/bench.md).
set -u
rounds=$1 small=$2 big=$3
sock=/tmp/gdbstep.sock

gdbstep() {	# gdbstep STEPS OUT: one QEMU, one gdb stepping it STEPS times
	rm -f "$sock"
	qemu-system-x86_64 -machine pc,accel=kvm -cpu host,-svm -m 16 -nodefaults -display none \
		-monitor none -serial none -bios /e2e/steploop.bin -S \
		-gdb "unix:$sock,server=on,wait=off" >/tmp/gdbstep-qemu.txt 2>&1 &
	qemu=$!
	n=300
	while [ ! -S "$sock" ] && [ $n -gt 0 ] && kill -0 "$qemu" 2>/dev/null; do
		sleep 0.1
		n=$((n - 1))
	done
	rc=0
	if [ -S "$sock" ]; then
		GDBSTEP_SOCKET=$sock GDBSTEP_STEPS=$1 GDBSTEP_QEMU_PID=$qemu gdb -batch -nx -x /e2e/l1-gdbstep.py \
			>/tmp/gdbstep-gdb.txt 2>&1 || rc=$?
	else
		echo "no gdbstub socket from QEMU" >/tmp/gdbstep-gdb.txt
		rc=1
	fi
	kill "$qemu" 2>/dev/null
	wait "$qemu"
	{
		cat /tmp/gdbstep-gdb.txt
		echo "--- gdb exit status $rc; QEMU:"
		cat /tmp/gdbstep-qemu.txt
	} >"$2"
	[ "$rc" -eq 0 ]
}

kvm-modules load packaged || { echo "kvm-modules load packaged failed" >>"$E2E_OUT/failures"; exit 1; }
r=1
while [ "$r" -le "$rounds" ]; do
	for n in "$small" "$big"; do
		gdbstep "$n" "$E2E_OUT/gdbstub-$n-r$r.txt" ||
			echo "gdb stepping QEMU's gdbstub, $n steps, round $r failed" >>"$E2E_OUT/failures"
	done
	r=$((r + 1))
done
kvm-modules unload
