#!/bin/sh
# l1-capture.sh: drive one capture inside L1 (sourced by l1-lab.sh).
#
# capture_run DIR VMM-ARGS -- CAPTURE-ARGS
#   Starts svmtrace-e2e-vmm VMM-ARGS --wait --hold, waits for its "ready"
#   line, starts svmtrace-capture for its pid with one --gate-gpa per vCPU
#   entry page, the guest CR3 and CAPTURE-ARGS, waits for "armed", lets the
#   guest run (SIGUSR1), waits until the program is done ("holding"), stops
#   the capture (SIGINT), lets the VMM exit (SIGUSR1).  DIR gets vmm.txt,
#   capture.txt, capture.rc, vmm.rc, trace/ (the v5 files), thp.txt (how
#   much of the VMM's memory THP backs: guest RAM in 2 MiB pages is what
#   makes the gate's 4 KiB split matter, hazard 8) and, when a step of this
#   dance times out, timeout.txt.
#
# CAPTURE_CR3, when set, replaces the guest's CR3 as the target (a gate
# fetched from a foreign address space); CAPTURE_GATES, when set, replaces
# the --gate-gpa options (e.g. a watched gate, --gate-va VA).  Every capture runs with the exit
# audit (--audit) unless CAPTURE_AUDIT is set to something else (empty).
# Hooks: CAPTURE_BEFORE_START and CAPTURE_AFTER_START, when set, are run
# (eval) right before and right after the guest is started, with $vmm_pid
# and $cap_pid set (e.g. to pause the capture, or to kill the consumer).

# wait_line FILE REGEX SECONDS PID: wait until FILE has a line matching
# REGEX; fail early if PID exits first, or after SECONDS.
wait_line() {
	n=$(($3 * 10))
	while [ $n -gt 0 ]; do
		grep -q "$2" "$1" 2>/dev/null && return 0
		kill -0 "$4" 2>/dev/null || { grep -q "$2" "$1" 2>/dev/null; return $?; }
		sleep 0.1
		n=$((n - 1))
	done
	return 1
}

capture_run() {
	dir=$1; shift
	vmm_args=
	while [ "$1" != -- ]; do vmm_args="$vmm_args $1"; shift; done
	shift
	mkdir -p "$dir"
	traces=/tmp/trace.$$
	rm -rf "$traces"

	# shellcheck disable=SC2086
	svmtrace-e2e-vmm --wait --hold $vmm_args >"$dir/vmm.txt" 2>&1 &
	vmm_pid=$!
	if ! wait_line "$dir/vmm.txt" '^ready ' 30 "$vmm_pid"; then
		echo "no ready line from the VMM" >>"$dir/timeout.txt"
		kill -9 "$vmm_pid" 2>/dev/null; wait "$vmm_pid"
		return 1
	fi
	grep AnonHugePages "/proc/$vmm_pid/smaps_rollup" >"$dir/thp.txt" 2>&1
	ready=$(grep '^ready ' "$dir/vmm.txt")
	gates=${CAPTURE_GATES:-$(echo "$ready" | tr ' ' '\n' | sed -n 's/^gate[0-9]*=/--gate-gpa /p' | tr '\n' ' ')}
	cr3=${CAPTURE_CR3:-$(echo "$ready" | tr ' ' '\n' | sed -n 's/^cr3=//p')}

	# shellcheck disable=SC2086
	svmtrace-capture --vmm-pid "$vmm_pid" $gates --cr3 "$cr3" --out "$traces" --quiet \
		${CAPTURE_AUDIT---audit} "$@" \
		>"$dir/capture.txt" 2>&1 &
	cap_pid=$!
	if ! wait_line "$dir/capture.txt" '^armed$' 30 "$cap_pid"; then
		echo "capture never armed" >>"$dir/timeout.txt"
		kill -9 "$cap_pid" "$vmm_pid" 2>/dev/null
		wait "$cap_pid"; echo $? >"$dir/capture.rc"
		wait "$vmm_pid"
		return 1
	fi
	[ -z "${CAPTURE_BEFORE_START:-}" ] || eval "$CAPTURE_BEFORE_START"
	kill -USR1 "$vmm_pid"
	[ -z "${CAPTURE_AFTER_START:-}" ] || eval "$CAPTURE_AFTER_START"
	finish_run "$dir" "${CAPTURE_RUN_SECONDS:-120}"
}

# finish_run DIR SECONDS: wait (at most SECONDS) for the guest to be done,
# stop the capture ($cap_pid, SIGINT), let the VMM ($vmm_pid) exit, and keep
# the traces; true when no step of the run timed out.
finish_run() {
	wait_line "$1/vmm.txt" '^holding$' "$2" "$vmm_pid" ||
		echo "the guest did not finish (no holding line)" >>"$1/timeout.txt"
	kill -INT "$cap_pid" 2>/dev/null
	wait "$cap_pid"; echo $? >"$1/capture.rc"
	kill -USR1 "$vmm_pid" 2>/dev/null
	# A vCPU the capture left in a loop of exits would hold the VMM (and
	# this lab) for good: a minute, then it is killed, and the run fails.
	n=600
	while kill -0 "$vmm_pid" 2>/dev/null && [ $n -gt 0 ]; do sleep 0.1; n=$((n - 1)); done
	if kill -0 "$vmm_pid" 2>/dev/null; then
		echo "the VMM did not exit within 60 s of the capture's stop" >>"$1/timeout.txt"
		kill -9 "$vmm_pid"
	fi
	wait "$vmm_pid"; echo $? >"$1/vmm.rc"
	keep_traces "$1"
}

# keep_traces DIR: move the run's trace files ($traces) into DIR/trace;
# true when no step of the run timed out.
keep_traces() {
	mkdir -p "$1/trace"
	cp "$traces"/* "$1/trace/" 2>/dev/null
	rm -rf "$traces"
	[ ! -e "$1/timeout.txt" ]
}
