# Sourced by e2e.sh: judge l1-debug.sh's scenarios, the guest's own
# debugging under a capture.  Uses e2e.sh's ok/bad/results, $run, $here,
# $bin, $guest and judge-capture.sh's functions.

# judge_debug_results NAME ORACLE-NAME: the traced program computed what it
# computes untraced on the packaged modules ($run/packaged-ORACLE.got).
judge_debug_results() {
	if [ -s "$run/packaged-$2.got" ] && results "$cap/$1/vmm.txt" | cmp -s - "$run/packaged-$2.got"; then
		ok "capture/$1/results" "as untraced on the packaged modules ($(grep -o 'r12=[^ ]* r13=[^ ]* r14=[^ ]*' "$run/packaged-$2.got"))"
	else
		bad "capture/$1/results" "differ from the packaged modules': $(results "$cap/$1/vmm.txt" | tr '\n' ';') vs $(tr '\n' ';' <"$run/packaged-$2.got" 2>/dev/null)"
	fi
}

# judge_debug_dump NAME: the capture's vCPU 0 records as dump --regs CSV in
# $cap/NAME/cpu0.csv; false (and a failed check) when it cannot be read.
judge_debug_dump() {
	if "$bin/svmtrace-dump" dump --regs "$cap/$1/trace/svmtrace_trace_cpu0.bin" >"$cap/$1/cpu0.csv" \
		2>"$cap/$1/cpu0.err"; then
		return 0
	fi
	bad "capture/$1/trace" "svmtrace-dump: $(cat "$cap/$1/cpu0.err")"
	return 1
}

# judge_debug_empty NAME: a user-only capture of a program that never runs
# at CPL 3 records nothing (the gate fetch at CPL 0 opens a session that
# no user-mode step ever starts).
judge_debug_empty() {
	judge_debug_dump "$1" || return
	rows=$(awk -F, '$1 != "cpu"' "$cap/$1/cpu0.csv" | wc -l)
	if [ "$rows" = 0 ] && [ "$(summary_field "$cap/$1/capture.txt" kmod_produced)" = 0 ]; then
		ok "capture/$1/trace" "no records: the program runs at CPL 0 only"
	else
		bad "capture/$1/trace" "$rows records of a program that never runs at CPL 3"
	fi
}

# judge_debug_trace NAME EXPECTED [--holes]: the records equal EXPECTED's
# (a model's expected_cpu0.csv or a stock single-step log).
judge_debug_trace() {
	judge_debug_dump "$1" || return
	if out=$("$here/check-trace.sh" ${3:-} "$2" "$cap/$1/cpu0.csv" 2>&1); then
		ok "capture/$1/trace" "$out"
	else
		bad "capture/$1/trace" "$out"
	fi
}

# judge_pause_steplog SET: QEMU's TCG takes no single-step trap after
# PAUSE (docs/lab.md): the stock single-step log of pause.bin is the
# model's records without the ones right after PAUSE (at after_pause).
judge_pause_steplog() {
	after=$(nm "$guest/pause.elf" | awk '$3 == "after_pause" { sub(/^0*/, "", $1); print $1 }')
	awk -F, -v a="$after" 'NR == 1 || tolower($4) !~ "^0x0*" a "$"' \
		"$run/expect/pause/expected_cpu0.csv" >"$run/expect/pause/tcg_cpu0.csv"
	if [ -n "$after" ] && out=$("$here/check-trace.sh" "$run/expect/pause/tcg_cpu0.csv" \
		"$run/l1/$1/pause.steps.csv" 2>&1); then
		ok "$1/pause/steplog" "stock single-stepping takes no trap after PAUSE either, $out"
	else
		bad "$1/pause/steplog" "stock single-step log vs the model without the rows after PAUSE: $out"
	fi
}

judge_debug() {
	for name in dbgregs int3k selfstep-cpl0-user pause dbgregs-kernel int3k-kernel pause-kernel \
		mmio-kernel nmi-kernel; do
		judge_capture_rc "$name"
		judge_audit "$name"
	done
	for name in dbgregs int3k; do
		judge_debug_results "$name" "$name"
		judge_debug_empty "$name"
		judge_debug_results "$name-kernel" "$name"
		judge_debug_trace "$name-kernel" "$run/expect/$name-kernel/expected_cpu0.csv" --holes
	done
	judge_debug_results selfstep-cpl0-user selfstep-cpl0
	judge_debug_empty selfstep-cpl0-user
	judge_pause_steplog packaged
	judge_pause_steplog ours
	for name in pause pause-kernel; do
		judge_armed_results "$name" "$run/expect/pause"
		judge_debug_trace "$name" "$run/l1/packaged/pause.steps.csv"
	done
	for name in mmio nmi; do
		judge_armed_results "$name-kernel" "$run/expect/$name"
		judge_debug_trace "$name-kernel" "$run/expect/$name-kernel/expected_cpu0.csv" --holes
	done
}
