#!/bin/sh
# l1-time.sh: virtual time (--hide-time) inside L1, sourced by l1-lab.sh
# after l1-capture.sh and l1-win.sh (docs/lab.md, "Virtual time").
#
# time_untraced DIR
#   The timing image (timing.exe's checks, tests/e2e/win/programs/timing.S)
#   untraced, PORT_GO answered at once: DIR/timing.txt.
# time_captures DIR
#   The timing image traced from timing.exe's entry point, found by
#   svmtrace-vmi on the running guest's memory as the win scenarios find
#   theirs (win_capture_run): time-traced (svmtrace-capture, no
#   --hide-time), time-hide (--hide-time), time-costs (--hide-time with
#   other costs), time-hide-daemon (svmtraced --hide-time), time-hide-first
#   (svmtraced --hide-time --from first: timing.exe's thread from its first
#   instruction, in ntdll's loader, a session of reason FIRST); then three lab
#   programs captured with --hide-time (TIME_PROGRAMS: NAME VCPUS ARG), which
#   read no TSC: their traces must be what they are without it.
TIME_PROGRAMS="emulated 1 0
frames 1 3
smp 2 0"

time_untraced() {
	svmtrace-e2e-vmm --win bin/timing.elf >"$1/timing.txt" 2>&1 ||
		echo "vmm --win timing exited $?" >>"$1/failures"
}

time_captures() {
	for run in "time-traced:" "time-hide:--hide-time" \
		"time-costs:--hide-time --time-costs 0.5,30,1000"; do
		WIN_CAPTURE_ARGS=${run#*:} win_capture_run "$1/${run%%:*}" timing pid 1200 ||
			echo "capture ${run%%:*}: $(cat "$1/${run%%:*}/timeout.txt")" >>"$1/failures"
	done
	if command -v svmtraced >/dev/null; then
		for mode in pid:time-hide-daemon first:time-hide-first; do
			WIN_DAEMON_ARGS=--hide-time win_daemon_run "$1/${mode#*:}" timing "${mode%%:*}" 1200 ||
				echo "svmtraced ${mode#*:}: $(cat "$1/${mode#*:}/timeout.txt")" >>"$1/failures"
		done
	fi
	echo "$TIME_PROGRAMS" | while read -r name vcpus arg; do
		capture_run "$1/$name-hide" -c "$vcpus" -a "$arg" kernel.bin "$name.bin" -- --hide-time ||
			echo "capture $name-hide: $(cat "$1/$name-hide/timeout.txt")" >>"$1/failures"
	done
}
