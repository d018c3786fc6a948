#!/bin/sh
# l1-lifecycle.sh: a capture's lifecycle scenarios, run inside L1 by
# l1-lab.sh's capture set (sourced; uses l1-capture.sh and $set_dir).
# Judged on the host by judge-lifecycle.sh (docs/lab.md).
#
# lifecycle_runs DIR:
#   late-vcpu     smp's second vCPU created 300 ms after the first started,
#                 while armed: traced from its first instruction
#   vmm-killed    the VMM killed (SIGKILL) while armed, its vCPU blocked on a
#                 full ring: the capture ends by itself, the session with
#                 VCPU_GONE
#   stop-running  the capture stopped (SIGINT) while the vCPU runs: the guest
#                 finishes untraced
#   pause-resume  paused and resumed twice while the vCPU runs (SIGUSR1/2)
#   stop-frames   the capture stopped while frames loops through system
#                 calls, faults and interrupts (whatever was
#                 parked or being stepped over then, the guest finishes
#                 untraced with no TF in a frame or R11 and no #DB), 1 s in;
#                 stop-frames-S: the same S s in (STOP_FRAMES_AT, which
#                 judge-lifecycle.sh reads too): the race it looks for
#                 depends on where in a round the stop lands
#   stop-intpfx   the capture stopped 0.3 s into 400 rounds of prefixed
#                 INT n: no intercept of the tracer's may
#                 outlive the capture; the guest finishes untraced
STOP_FRAMES_AT="1 0.2 0.4 0.6 0.8"
lifecycle_runs() {
	capture_run "$1/late-vcpu" -c 2 --late-vcpu 300 kernel.bin smp.bin -- --policy block ||
		echo "capture late-vcpu: $(cat "$1/late-vcpu/timeout.txt")" >>"$set_dir/failures"
	vmm_killed_run "$1/vmm-killed"
	CAPTURE_AFTER_START='sleep 1; kill -INT $cap_pid' capture_run "$1/stop-running" \
		-a 25000 kernel.bin bench.bin -- --policy block ||
		echo "capture stop-running: $(cat "$1/stop-running/timeout.txt")" >>"$set_dir/failures"
	for at in $STOP_FRAMES_AT; do
		name=stop-frames
		[ "$at" = 1 ] || name=stop-frames-$at
		CAPTURE_AFTER_START="sleep $at; kill -INT \$cap_pid" capture_run "$1/$name" \
			-a 400 kernel.bin frames.bin -- --policy block ||
			echo "capture $name: $(cat "$1/$name/timeout.txt")" >>"$set_dir/failures"
	done
	CAPTURE_AFTER_START='sleep 0.3; kill -INT $cap_pid' capture_run "$1/stop-intpfx" \
		-a 400 kernel.bin intpfx.bin -- --policy block ||
		echo "capture stop-intpfx: $(cat "$1/stop-intpfx/timeout.txt")" >>"$set_dir/failures"
	CAPTURE_AFTER_START='sleep 0.5; kill -USR1 $cap_pid; sleep 0.3; kill -USR2 $cap_pid;
		sleep 0.3; kill -USR1 $cap_pid; sleep 0.3; kill -USR2 $cap_pid' \
		capture_run "$1/pause-resume" -a 25000 kernel.bin bench.bin -- --policy block ||
		echo "capture pause-resume: $(cat "$1/pause-resume/timeout.txt")" >>"$set_dir/failures"
}

# vmm_killed_run DIR: as capture_run, but the VMM is killed 1 s into a run
# whose 16-slot ring a slow consumer keeps full; the capture must then end
# by itself within 60 s.
vmm_killed_run() {
	mkdir -p "$1"
	traces=/tmp/trace.$$
	rm -rf "$traces"
	svmtrace-e2e-vmm --wait --hold -a 25000 kernel.bin bench.bin >"$1/vmm.txt" 2>&1 &
	vmm_pid=$!
	wait_line "$1/vmm.txt" '^ready ' 30 "$vmm_pid" || echo "no ready line" >>"$1/timeout.txt"
	ready=$(grep '^ready ' "$1/vmm.txt")
	svmtrace-capture --vmm-pid "$vmm_pid" \
		--gate-gpa "$(echo "$ready" | tr ' ' '\n' | sed -n 's/^gate0=//p')" \
		--cr3 "$(echo "$ready" | tr ' ' '\n' | sed -n 's/^cr3=//p')" --out "$traces" --quiet \
		--policy block --ring-slots 16 --wake-batch 1 --consumer-delay-us 2000 \
		>"$1/capture.txt" 2>&1 &
	cap_pid=$!
	wait_line "$1/capture.txt" '^armed$' 30 "$cap_pid" || echo "never armed" >>"$1/timeout.txt"
	kill -USR1 "$vmm_pid"
	sleep 1
	kill -9 "$vmm_pid"
	wait "$vmm_pid"; echo $? >"$1/vmm.rc"
	n=600
	while kill -0 "$cap_pid" 2>/dev/null && [ $n -gt 0 ]; do sleep 0.1; n=$((n - 1)); done
	if kill -0 "$cap_pid" 2>/dev/null; then
		echo "the capture did not end by itself" >>"$1/timeout.txt"
		kill -9 "$cap_pid"
	fi
	wait "$cap_pid"; echo $? >"$1/capture.rc"
	keep_traces "$1" || echo "capture vmm-killed: $(cat "$1/timeout.txt")" >>"$set_dir/failures"
}
