#!/bin/sh
# l1-stepcost.sh ITERATIONS ROUNDS (inside an L1 booted with run-l1.sh
# --icount): the cost of one single-step on each path, as the virtual time
# the test VMM's run takes for bench.bin (4 * ITERATIONS + 2 steps) -- 1 ns
# per instruction that L1 and L2 executed, the traced vCPU and the consumer
# together.  Per round, in $E2E_OUT/stepcost/:
#   packaged-rN.txt   stock KVM_SET_GUEST_DEBUG single-step, exit to the VMM
#                     per step, Debian's modules
#   guest-tf-rN.txt   bench_tf.bin on Debian's modules: the guest steps
#                     itself, each #DB exit is handled in the kernel and
#                     re-injected (the VMM's --quiet-db: the guest's handler
#                     makes no exit of its own, and adds 8 instructions)
#   ours-rN.txt       the same on our modules, unarmed
#   paused-rN/        our modules armed but paused: each step is a #DB exit
#                     handled in the kernel (KVM's #DB intercept + the
#                     tracer's lookup and session checks), nothing recorded
#   producer-rN/      ring capture with the consumer stopped until the guest
#                     is done: the vCPU side alone (every step published
#                     into a ring that holds the whole run)
#   foreign-rN/       not traced, but its page is a gate of a capture whose
#                     target is another address space (PML4_ALT): what a
#                     gate costs the rest of the guest, per instruction run
#                     on the gated page (stepped silently, gate closed again)
#   ring-rN/          ring capture: every step published, drained and
#                     encoded by svmtrace-capture meanwhile (LZ4 and all, on
#                     the same L1 CPU)
#   audit-rN/         the same with --audit: the exit audit's BPF programs
#                     run on every kvm_exit and kvm_entry of the VM
#   producer-xstate-rN/, ring-xstate-rN/
#                     producer-rN and ring-rN with --xstate: YMM0-15 and
#                     XSTATE_BV read and published with every step (768-byte
#                     slots: a 32768-slot ring holds the whole run)
#   producer-mem-rN/, ring-mem-rN/
#                     producer-rN and ring-rN with --mem: each instruction
#                     decoded before it runs and its memory operands read
#                     (1536-byte slots; every step takes the full exit path)
#   producer-hide-rN/ producer-rN with --hide-time: virtual time, plain steps
#   producer-tsc-rN/, producer-tsc-hide-rN/
#                     producer-rN of bench_tsc.bin (an RDTSC in every four
#                     steps), without and with --hide-time: what a traced
#                     TSC read costs, read natively or made virtual
#   {sys,int,cr3}-{packaged,ours}-I-rN.txt, {sys,int,cr3}-armed-I-rN/
#                     what arming costs the rest of the guest: bench_sys.bin
#                     (I SYSCALL / SYSRETQ round trips), bench_int.bin (I
#                     INT n / IRETQ) and bench_cr3.bin (I SYSCALL / MOV CR3
#                     / SYSRETQ) run untraced on each module set, and while
#                     a capture of another address space (PML4_ALT) is
#                     armed; I is ten times ITERATIONS and a fifth of
#                     that, so that the difference leaves out what a run
#                     costs besides its loop (step-cost.sh: the armed runs'
#                     first entries and gate faults, timer interrupts
#                     among them, vary by some 400 000 instructions, 10
#                     per round trip over 40 000)
#   {sys,int,cr3}-first-I-rN/
#                     the same armed with --first-rip (SVMTRACE_TARGET_F_FIRST:
#                     the target's returns to user mode are compared with
#                     where threads begin): what --from first costs the rest
#                     of the guest
#   {sys,int,cr3}-ask-I-rN/
#                     the same armed with --first-rip and --new-processes
#                     (SVMTRACE_TARGET_F_ASK: every vCPU intercepts IRET, a
#                     new process's first return to user mode may come
#                     under any CR3): what svmtraced's --follow (and
#                     --wait-name until its process started) costs the rest
#                     of the guest
#   {sys,int,cr3}-exits-I/
#                     the armed runs once more with the exit audit, not
#                     timed: its counts of the vCPU's exits per round trip
# Only audit-rN and the *-exits-I runs run the audit (capture_run's default
# is --audit).
set -u
iterations=$1 rounds=$2
arming=$((iterations * 10))	# the arming rows' iterations (step-cost.sh)
cd /e2e
. ./l1-capture.sh
CAPTURE_AUDIT=
out=$E2E_OUT/stepcost
mkdir -p "$out"

stock() {	# stock SET FILE
	{ kvm-modules load "$1" &&
		svmtrace-e2e-vmm -s -a "$iterations" kernel.bin bench.bin >"$2" 2>&1 &&
		kvm-modules unload; } || echo "stock single-step on $1 failed" >>"$out/failures"
}

plain() {	# plain SET ITERATIONS PROGRAM FILE: PROGRAM run untraced on module set SET
	{ kvm-modules load "$1" &&
		svmtrace-e2e-vmm -a "$2" kernel.bin "$3" >"$4" 2>&1 &&
		kvm-modules unload; } || echo "$3 -a $2 on $1 failed" >>"$out/failures"
}

r=1
while [ "$r" -le "$rounds" ]; do
	for count in $((arming / 5)) "$arming"; do
		for set in packaged ours; do
			for prog in sys int cr3; do
				plain $set "$count" bench_$prog.bin "$out/$prog-$set-$count-r$r.txt"
			done
		done
	done
	stock packaged "$out/packaged-r$r.txt"
	{ kvm-modules load packaged &&
		svmtrace-e2e-vmm -q -a "$iterations" kernel.bin bench_tf.bin >"$out/guest-tf-r$r.txt" 2>&1 &&
		kvm-modules unload; } || echo "bench_tf on packaged failed" >>"$out/failures"
	stock ours "$out/ours-r$r.txt"
	kvm-modules load ours
	CAPTURE_BEFORE_START='kill -USR1 $cap_pid; sleep 1' capture_run "$out/paused-r$r" \
		-a "$iterations" kernel.bin bench.bin -- --policy block --ring-slots 131072 ||
		echo "paused capture r$r failed" >>"$out/failures"
	CAPTURE_BEFORE_START='kill -STOP $cap_pid' \
		CAPTURE_AFTER_START='(wait_line "$dir/vmm.txt" "^holding" 300 "$vmm_pid"; kill -CONT $cap_pid) &' \
		capture_run "$out/producer-r$r" -a "$iterations" kernel.bin bench.bin -- \
		--policy block --ring-slots 131072 || echo "producer capture r$r failed" >>"$out/failures"
	CAPTURE_CR3=0xf000 capture_run "$out/foreign-r$r" -a "$iterations" kernel.bin bench.bin -- \
		--policy block || echo "foreign gate r$r failed" >>"$out/failures"
	# (capture_run's wait_line counts in $n)
	for count in $((arming / 5)) "$arming"; do
		for prog in sys int cr3; do
			CAPTURE_CR3=0xf000 capture_run "$out/$prog-armed-$count-r$r" -a "$count" \
				kernel.bin bench_$prog.bin -- --policy block ||
				echo "bench_$prog -a $count armed r$r failed" >>"$out/failures"
			CAPTURE_CR3=0xf000 capture_run "$out/$prog-first-$count-r$r" -a "$count" \
				kernel.bin bench_$prog.bin -- --policy block --first-rip 0x7ffb12341003 ||
				echo "bench_$prog -a $count armed --first-rip r$r failed" >>"$out/failures"
			CAPTURE_CR3=0xf000 capture_run "$out/$prog-ask-$count-r$r" -a "$count" \
				kernel.bin bench_$prog.bin -- --policy block --first-rip 0x7ffb12341003 \
				--new-processes ||
				echo "bench_$prog -a $count armed --new-processes r$r failed" >>"$out/failures"
		done
	done
	capture_run "$out/ring-r$r" -a "$iterations" kernel.bin bench.bin -- \
		--policy block --ring-slots 131072 || echo "ring capture r$r failed" >>"$out/failures"
	capture_run "$out/audit-r$r" -a "$iterations" kernel.bin bench.bin -- \
		--policy block --ring-slots 131072 --audit || echo "audit capture r$r failed" >>"$out/failures"
	for tail in xstate mem; do	# 32768 slots hold the whole run
		CAPTURE_BEFORE_START='kill -STOP $cap_pid' \
			CAPTURE_AFTER_START='(wait_line "$dir/vmm.txt" "^holding" 300 "$vmm_pid"; kill -CONT $cap_pid) &' \
			capture_run "$out/producer-$tail-r$r" -a "$iterations" kernel.bin bench.bin -- \
			--policy block --ring-slots 32768 "--$tail" ||
			echo "producer --$tail capture r$r failed" >>"$out/failures"
		capture_run "$out/ring-$tail-r$r" -a "$iterations" kernel.bin bench.bin -- \
			--policy block --ring-slots 32768 "--$tail" ||
			echo "ring --$tail capture r$r failed" >>"$out/failures"
	done
	for run in hide:bench:--hide-time tsc:bench_tsc: tsc-hide:bench_tsc:--hide-time; do
		name=${run%%:*} prog=${run#*:} args=${prog#*:} prog=${prog%%:*}
		CAPTURE_BEFORE_START='kill -STOP $cap_pid' \
			CAPTURE_AFTER_START='(wait_line "$dir/vmm.txt" "^holding" 300 "$vmm_pid"; kill -CONT $cap_pid) &' \
			capture_run "$out/producer-$name-r$r" -a "$iterations" kernel.bin "$prog.bin" -- \
			--policy block --ring-slots 131072 $args ||
			echo "producer $name capture r$r failed" >>"$out/failures"
	done
	kvm-modules unload
	r=$((r + 1))
done
kvm-modules load ours
for count in $((arming / 5)) "$arming"; do
	for prog in sys int cr3; do
		CAPTURE_AUDIT=--audit CAPTURE_CR3=0xf000 capture_run "$out/$prog-exits-$count" \
			-a "$count" kernel.bin bench_$prog.bin -- --policy block ||
			echo "bench_$prog -a $count armed with the audit failed" >>"$out/failures"
		CAPTURE_AUDIT=--audit CAPTURE_CR3=0xf000 capture_run "$out/$prog-ask-exits-$count" \
			-a "$count" kernel.bin bench_$prog.bin -- --policy block \
			--first-rip 0x7ffb12341003 --new-processes ||
			echo "bench_$prog -a $count asking with the audit failed" >>"$out/failures"
	done
done
kvm-modules unload
