#!/bin/sh
# l1-debug.sh: the guest's own debugging under a capture, run inside L1 by
# l1-lab.sh (sourced; uses l1-capture.sh and $set_dir).  Judged on the host
# by judge-debug.sh (docs/lab.md).
#
# DEBUG_PROGRAMS, one per line: SCENARIO PROGRAM VMM-ARGS
#   dbgregs        the guest's debug registers at CPL 0: an execute
#                  breakpoint whose handler sets RF, DR6.BS written by
#                  software, DR4/DR5, data watchpoints (never with
#                  --dr-intercept: dbgregs.S says why); on L1's CPU 0 only
#                  (--cpu 0): its breakpoints live in the TCG state of the
#                  L1 CPU that ran its MOV DR7, and a VMM moved to the other
#                  one meanwhile left them behind for every later guest
#                  there (docs/lab-internals.md, "A guest that loads DR7")
#   int3k          INT3 and INT n at CPL 0 whose handlers make no VM exit
#   selfstep-cpl0  the guest stepping itself at CPL 0 (selfstep.S)
#   pause          PAUSE in a stepped loop
# debug_untraced DIR: each run untraced (on the modules loaded), and pause
#   once more under stock single-stepping (pause.steps.csv: does QEMU's TCG
#   trap after PAUSE?).  selfstep-cpl0 runs in run_set already.
# debug_captured DIR: each captured user-only (DIR/SCENARIO) and with
#   --kernel (DIR/SCENARIO-kernel; selfstep-cpl0's with --kernel is run by
#   capture_set), and mmio and nmi (programs.list) with --kernel too.
DEBUG_PROGRAMS="dbgregs dbgregs --cpl0 --cpu 0
int3k int3k --cpl0
selfstep-cpl0 selfstep --cpl0 -a 1
pause pause"

debug_untraced() {
	echo "$DEBUG_PROGRAMS" | while read -r name prog args; do
		[ "$name" != selfstep-cpl0 ] || continue
		# shellcheck disable=SC2086
		svmtrace-e2e-vmm $args kernel.bin "$prog.bin" >"$1/$name.txt" 2>&1 ||
			echo "vmm $name exited $?" >>"$1/failures"
	done
	svmtrace-e2e-vmm -s -l "$1/pause.steps.csv" kernel.bin pause.bin >"$1/pause.steps.txt" 2>&1 ||
		echo "vmm --singlestep pause exited $?" >>"$1/failures"
}

debug_captured() {
	echo "$DEBUG_PROGRAMS" | while read -r name prog args; do
		for mode in user kernel; do
			scenario=$name
			[ "$mode" = user ] || scenario=$name-kernel
			[ "$scenario" != selfstep-cpl0-kernel ] || continue
			[ "$scenario" != selfstep-cpl0 ] || scenario=selfstep-cpl0-user
			# shellcheck disable=SC2086
			capture_run "$1/$scenario" $args kernel.bin "$prog.bin" -- --policy block \
				$([ "$mode" = user ] || echo --kernel) ||
				echo "capture $scenario: $(cat "$1/$scenario/timeout.txt")" >>"$set_dir/failures"
		done
	done
	for name in mmio nmi; do
		capture_run "$1/$name-kernel" kernel.bin "$name.bin" -- --policy block --kernel ||
			echo "capture $name-kernel: $(cat "$1/$name-kernel/timeout.txt")" >>"$set_dir/failures"
	done
}
