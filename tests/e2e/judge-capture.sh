# Sourced by e2e.sh: judge what l1-lab.sh's capture set recorded in
# $run/l1/capture.  Uses e2e.sh's ok/bad/results, $run, $here, $bin.

cap=$run/l1/capture

# summary_field FILE NAME: the value of NAME= on the capture's total line.
summary_field() {
	sed -n "s/^total .*[ ]$2=\([^ ]*\).*/\1/p" "$1"
}

# judge_capture_rc NAME: the capture ran and its counts added up.
judge_capture_rc() {
	if [ "$(cat "$cap/$1/capture.rc" 2>/dev/null)" = 0 ]; then
		ok "capture/$1/counts" "written + dropped = kmod produced ($(grep '^total' "$cap/$1/capture.txt" |
			sed 's/ db_exits.*//; s/^total //'))"
	else
		bad "capture/$1/counts" "svmtrace-capture exit $(cat "$cap/$1/capture.rc" 2>/dev/null):"
		tail -n 5 "$cap/$1/capture.txt"
	fi
}

# judge_audit NAME: the exit audit (--audit) balanced on every vCPU: the
# #DB exits its BPF program counted on KVM's tracepoints equal the module's
# steps plus the guest's own, and the records plus every reason a step
# leaves none (docs/audit.md).
judge_audit() {
	f=$cap/$1/capture.txt
	n=$(grep -c '^audit vcpu[0-9]* vcpu_id=[0-9]* db_exits=[0-9]* = .*: ok; = .*: ok; npf_exits=[0-9]* >= gate_faults [0-9]*: ok;' "$f" 2>/dev/null)
	if grep -q '^audit balanced$' "$f" 2>/dev/null && [ "${n:-0}" -gt 0 ] &&
		[ "$n" = "$(grep -c '^audit vcpu' "$f")" ]; then
		ok "capture/$1/audit" "$(grep '^audit vcpu' "$f" | sed 's/^audit //; s/ step_ns_mean.*//' | tr '\n' ';')"
	else
		bad "capture/$1/audit" "$(grep -h 'audit' "$f" 2>/dev/null | tr '\n' ';')"
	fi
}

# judge_armed_results NAME EXPECT-DIR: the armed VM computed what the model says.
judge_armed_results() {
	if results "$cap/$1/vmm.txt" >"$run/capture-$1.got" &&
		results "$2/results.txt" | diff -u - "$run/capture-$1.got" >"$run/capture-$1.diff"; then
		ok "capture/$1/results" "the traced program's results equal the model's"
	else
		bad "capture/$1/results" "the traced program's results differ from the model's:"
		cat "$run/capture-$1.diff"
	fi
}

# judge_trace NAME EXPECT-DIR: every vCPU's decoded trace equals the model's
# records, and the global sequence has no hole or repeat across vCPUs (every
# published slot takes one, session ends included).
judge_trace() {
	for exp in "$2"/expected_cpu*.csv; do
		n=${exp##*expected_cpu}; n=${n%.csv}
		file=$cap/$1/trace/svmtrace_trace_cpu$n.bin
		if ! "$bin/svmtrace-dump" dump --regs "$file" >"$cap/$1/cpu$n.csv" 2>"$cap/$1/cpu$n.err"; then
			bad "capture/$1/trace/cpu$n" "svmtrace-dump dump $file: $(cat "$cap/$1/cpu$n.err")"
			continue
		fi
		if out=$("$here/check-trace.sh" "$exp" "$cap/$1/cpu$n.csv" 2>&1); then
			ok "capture/$1/trace/cpu$n" "trace equals the model's records, $out"
		else
			bad "capture/$1/trace/cpu$n" "$out"
		fi
	done
	holes=$(cat "$cap/$1"/cpu*.csv 2>/dev/null | awk -F, '$1 != "cpu" { print $2 }' |
		sort -n | awk 'NR > 1 && $1 != prev + 1 { n++ } { prev = $1 } END { print n + 0 }')
	if [ "$holes" = 0 ]; then ok "capture/$1/sequence" "global sequence contiguous across vCPUs"
	else bad "capture/$1/sequence" "$holes holes or repeats in the global sequence"; fi
}

# judge_audit_lost_step: with one step lost silently by the module
# (kvm.svmtrace_test_lose_step=1), the capture's own count still adds up,
# but the audit must say which equation broke and fail the capture.
judge_audit_lost_step() {
	d=$cap/audit-lost-step
	if [ "$(cat "$d/capture.rc" 2>/dev/null)" = 1 ] && grep -q '^total .* consistent$' "$d/capture.txt" &&
		grep -q '^audit vcpu0 .*: ok; = .*: MISMATCH;' "$d/capture.txt" &&
		grep -q '^audit FAILED$' "$d/capture.txt" && grep -q 'a step vanished' "$d/capture.txt" &&
		[ "$(cat "$d/param-after" 2>/dev/null)" = 0 ]; then
		ok capture/audit-lost-step "a silently lost step passes the module's own count but fails the audit: $(grep -h '^audit vcpu0\|vanished' "$d/capture.txt" | sed 's/ npf_exits.*//' | tr '\n' ';')"
	else
		bad capture/audit-lost-step "rc $(cat "$d/capture.rc" 2>/dev/null), param $(cat "$d/param-after" 2>/dev/null): $(grep -h 'audit\|^total' "$d/capture.txt" 2>/dev/null | tr '\n' ';')"
	fi
}

# judge_audit_paused: paused before the guest ran, nothing is recorded and
# every step the module took must be one of its unrecorded ones -- the
# audit's "unrecorded" term carries the whole run.
judge_audit_paused() {
	line=$(grep '^audit vcpu0 ' "$cap/paused/capture.txt" 2>/dev/null)
	db=$(echo "$line" | sed -n 's/.* db_exits=\([0-9]*\) .*/\1/p')
	produced=$(echo "$line" | sed -n 's/.* produced \([0-9]*\) .*/\1/p')
	emulated=$(echo "$line" | sed -n 's/.* emulated \([0-9]*\) .*/\1/p')
	unrecorded=$(echo "$line" | sed -n 's/.* unrecorded \([0-9]*\) .*/\1/p')
	if [ "${db:-0}" -gt 0 ] && [ "$produced" = 0 ] && [ "$unrecorded" = $((db + emulated)) ]; then
		ok capture/paused/unrecorded "paused all along: $db #DB exits + $emulated emulated steps, all $unrecorded unrecorded, nothing produced"
	else
		bad capture/paused/unrecorded "'${line:-no audit line}'"
	fi
}

# judge_npt_refusal: with kvm_amd npt=0 the capture must refuse to arm, in
# one line that says why, and the guest run untraced to the model's end.
judge_npt_refusal() {
	d=$cap/npt0
	results "$run/expect/straight/results.txt" >"$run/capture-npt0.want"
	if [ "$(cat "$d/npt" 2>/dev/null)" = N ] && [ "$(cat "$d/capture.rc" 2>/dev/null)" = 1 ] &&
		grep -q 'arm: kvm_amd runs without nested paging (npt=0)' "$d/capture.txt" &&
		results "$d/vmm.txt" | cmp -s - "$run/capture-npt0.want"; then
		ok capture/npt0 "refused: $(grep 'arm:' "$d/capture.txt"); the guest ran untraced to the model's end"
	else
		bad capture/npt0 "npt $(cat "$d/npt" 2>/dev/null), capture rc $(cat "$d/capture.rc" 2>/dev/null): $(tr '\n' ' ' <"$d/capture.txt" 2>/dev/null); $(grep '^cpu0' "$d/vmm.txt" 2>/dev/null)"
	fi
}

judge_capture_set() {
	[ ! -s "$cap/failures" ] || bad capture/scenarios "$(tr '\n' ';' <"$cap/failures")"
	for name in $programs bench-r1 bench-r2 bench-r3 block-slow watch-pte watch-pml4; do
		case $name in
		bench-r*) expect=$run/expect/bench ;;
		block-slow) expect=$run/expect/straight ;;
		*) expect=$run/expect/$name ;;
		esac
		judge_capture_rc "$name"
		judge_audit "$name"
		judge_armed_results "$name" "$expect"
		judge_trace "$name" "$expect"
	done

	judge_npt_refusal

	judge_capture_rc drop
	judge_audit drop
	judge_armed_results drop "$run/expect/bench-drop"
	dropped=$(summary_field "$cap/drop/capture.txt" dropped)
	gaps=$("$bin/svmtrace-dump" inspect "$cap/drop/trace/svmtrace_trace_cpu0.bin" 2>&1 |
		sed -n 's/^  gaps: *\([0-9]*\) (\([0-9]*\) records dropped.*/\1 \2/p')
	if [ "${dropped:-0}" -gt 0 ] && [ "${gaps#* }" = "$dropped" ]; then
		ok capture/drop/gaps "$dropped drops, shown by svmtrace-dump inspect as ${gaps%% *} gaps"
	else
		bad capture/drop/gaps "capture says dropped=${dropped:-?}, inspect says gaps/dropped '${gaps:-none}'"
	fi
	# Between its gaps the trace is the model's: each record equals the
	# model's record at its sequence number (a dropped step takes one).
	if ! "$bin/svmtrace-dump" dump --regs "$cap/drop/trace/svmtrace_trace_cpu0.bin" \
		>"$cap/drop/cpu0.csv" 2>"$cap/drop/cpu0.err"; then
		bad capture/drop/trace/cpu0 "svmtrace-dump: $(cat "$cap/drop/cpu0.err")"
	elif out=$("$here/check-trace.sh" --gaps "$run/expect/bench-drop/expected_cpu0.csv" \
		"$cap/drop/cpu0.csv" 2>&1) && echo "$out" | grep -q " $dropped of its [0-9]* records missing"; then
		ok capture/drop/trace/cpu0 "between the gaps, the model's records: $out"
	else
		bad capture/drop/trace/cpu0 "$out (dropped=${dropped:-?})"
	fi

	for policy in block drop; do
		if [ ! -e "$cap/kill-$policy/timeout.txt" ]; then
			ok "capture/kill-$policy/finished" "the guest finished after its consumer was killed"
			judge_armed_results "kill-$policy" "$run/expect/bench-kill"
		else
			bad "capture/kill-$policy/finished" "the guest did not finish: $(cat "$cap/kill-$policy/timeout.txt")"
		fi
	done

	# C1: the --kernel capture of the self-IPI loop equals the stock
	# single-step log row by row (the kernel log check below is the other
	# half: no "scheduling while atomic").
	judge_capture_rc ipi
	judge_audit ipi
	read -r before after <"$cap/ipi/fastpath" 2>/dev/null
	if [ -n "${after:-}" ] && [ "$after" = "$before" ]; then
		ok capture/ipi/no-fastpath "no stepped WRMSR went through the IRQs-off fastpath"
	else
		bad capture/ipi/no-fastpath "stepped WRMSRs took the IRQs-off fastpath (hits ${before:-?} -> ${after:-?})"
	fi
	if results "$cap/ipi/vmm.txt" | cmp -s - "$run/packaged-ipi.got"; then
		ok capture/ipi/results "the traced self-IPI loop's results equal the packaged modules'"
	else
		bad capture/ipi/results "results differ: $(cat "$cap/ipi/vmm.txt" 2>/dev/null)"
	fi
	if ! "$bin/svmtrace-dump" dump --regs "$cap/ipi/trace/svmtrace_trace_cpu0.bin" \
		>"$cap/ipi/cpu0.csv" 2>"$cap/ipi/cpu0.err"; then
		bad capture/ipi/trace/cpu0 "svmtrace-dump: $(cat "$cap/ipi/cpu0.err")"
	elif out=$("$here/check-trace.sh" "$run/l1/packaged/ipi.steps.csv" "$cap/ipi/cpu0.csv" 2>&1); then
		ok capture/ipi/trace/cpu0 "--kernel trace equals the stock single-step log, $out"
	else
		bad capture/ipi/trace/cpu0 "$out"
	fi

	judge_hostile

	# M2: lossless while the consumer was stopped, and KVM_RUN still
	# returned to every kick.
	judge_capture_rc block-kick
	judge_audit block-kick
	judge_armed_results block-kick "$run/expect/bench-kick"
	judge_trace block-kick "$run/expect/bench-kick"
	kicks=$(grep '^kicks ' "$cap/block-kick/vmm.txt")
	ran=$(sed -n 's/^run seconds=\([0-9]*\).*/\1/p' "$cap/block-kick/vmm.txt")
	max=$(echo "$kicks" | sed -n 's/.*kvm_run_max_ms=\([0-9]*\).*/\1/p')
	eintr=$(echo "$kicks" | sed -n 's/.* eintr=\([0-9]*\).*/\1/p')
	if [ "${ran:-0}" -ge 2 ] && [ "${eintr:-0}" -gt 0 ] && [ "${max:-99999}" -lt 1000 ]; then
		ok capture/block-kick/leaves-run "blocked ${ran}+ s on a stopped consumer, yet the longest KVM_RUN was ${max} ms ($kicks)"
	else
		bad capture/block-kick/leaves-run "run ${ran:-?} s, $kicks (a blocked vCPU must leave KVM_RUN when signalled)"
	fi

	# --from-next: armed while running.bin already ran, no gate.
	judge_capture_rc from-next
	judge_audit from-next
	judge_audit paused
	judge_audit_paused
	judge_audit_lost_step
	judge_armed_results from-next "$run/expect/running"
	if ! "$bin/svmtrace-dump" dump --regs "$cap/from-next/trace/svmtrace_trace_cpu0.bin" \
		>"$cap/from-next/cpu0.csv" 2>"$cap/from-next/cpu0.err"; then
		bad capture/from-next/trace/cpu0 "svmtrace-dump: $(cat "$cap/from-next/cpu0.err")"
	elif out=$("$here/check-suffix.sh" "$run/expect/running/expected_cpu0.csv" "$cap/from-next/cpu0.csv" 2>&1) &&
		[ "$(echo "$out" | sed -n 's/^joined at record \([0-9]*\);.*/\1/p')" -gt 1 ]; then
		ok capture/from-next/trace/cpu0 "a running program traced from its next user instruction on: $out"
	else
		bad capture/from-next/trace/cpu0 "$out"
	fi

	thp=$(awk '{ print $2 }' "$cap/straight/thp.txt" 2>/dev/null)
	if [ "${thp:-0}" -ge 2048 ]; then
		ok capture/straight/thp "guest RAM was THP-backed ($thp kB in 2 MiB pages), yet the gate page alone faulted"
	else
		bad capture/straight/thp "guest RAM not THP-backed (${thp:-?} kB), hazard 8 not exercised"
	fi

	if [ "$(cat "$cap/abi-check/abi-check.rc" 2>/dev/null)" = 0 ] &&
		grep -q '^cpu0 done' "$cap/abi-check/vmm.txt"; then
		ok capture/abi-check "every documented control error: $(tail -n 1 "$cap/abi-check/abi-check.txt"); the VM ran on"
	else
		bad capture/abi-check "svmtrace-abi-check: $(grep -h 'FAIL\|passed' "$cap/abi-check/abi-check.txt" 2>/dev/null | tr '\n' ';')"
	fi

	if [ "$(cat "$cap/abi-check/nested.rc" 2>/dev/null)" = 0 ] &&
		grep -q '^cpu0 done' "$cap/abi-check/nested-vmm.txt"; then
		ok capture/nested-refused "a guest with EFER.SVME (VBS) is refused at arm: $(tail -n 1 "$cap/abi-check/nested.txt"); the VM ran on"
	else
		bad capture/nested-refused "$(grep -h 'FAIL\|passed' "$cap/abi-check/nested.txt" 2>/dev/null | tr '\n' ';')"
	fi

	if [ "$(cat "$cap/nonroot/capture.rc" 2>/dev/null)" != 0 ] &&
		grep -qi 'permi' "$cap/nonroot/capture.txt" && grep -q '^cpu0 done' "$cap/nonroot/vmm.txt"; then
		ok capture/nonroot "refused ($(head -n 1 "$cap/nonroot/capture.txt")), the VM ran on"
	else
		bad capture/nonroot "not refused: $(cat "$cap/nonroot/capture.txt" 2>/dev/null)"
	fi
}

# judge_hostile: the hostile program (20 rounds, hostile.S) ran the same
# untraced on both module sets and traced, and the tracer saw what it did:
# one session per return to the gate page, one CR3 end per round.
judge_hostile() {
	rounds=20
	pk=$run/l1/packaged/hostile.txt
	if results "$pk" >"$run/packaged-hostile.got" &&
		grep -q '^cpu0 failed: the guest shut down (triple fault)$' "$run/packaged-hostile.got" &&
		grep -q "^result db_count=$((6 * rounds)) .* syscalls=$((2 * rounds)) " "$run/packaged-hostile.got"; then
		ok packaged/hostile/results "$((6 * rounds)) guest #DBs, $((2 * rounds)) CR3 round trips, then a triple fault"
	else
		bad packaged/hostile/results "$(cat "$pk" 2>/dev/null)"
	fi
	for f in "$run/l1/ours/hostile.txt" "$cap/hostile/vmm.txt"; do
		name=ours/hostile/results
		[ "$f" = "$run/l1/ours/hostile.txt" ] || name=capture/hostile/results
		if results "$f" | cmp -s - "$run/packaged-hostile.got"; then
			ok "$name" "results equal the packaged modules' (untraced)"
		else
			bad "$name" "results differ from the packaged modules': $(results "$f")"
		fi
	done
	judge_capture_rc hostile
	if "$bin/svmtrace-dump" dump "$cap/hostile/trace/svmtrace_trace_cpu0.bin" >"$cap/hostile/cpu0.csv" \
		2>"$cap/hostile/cpu0.err"; then
		starts=$(grep -c ',session_start,' "$cap/hostile/cpu0.csv")
		cr3_ends=$(awk -F, '$3 == "session_end" && $7 == 1' "$cap/hostile/cpu0.csv" | wc -l)
		if [ "$starts" = $((rounds + 1)) ] && [ "$cr3_ends" = "$rounds" ]; then
			ok capture/hostile/sessions "$starts sessions, $cr3_ends ended by the CR3 change"
		else
			bad capture/hostile/sessions "$starts sessions (want $((rounds + 1))), $cr3_ends CR3 ends (want $rounds)"
		fi
	else
		bad capture/hostile/sessions "svmtrace-dump: $(cat "$cap/hostile/cpu0.err")"
	fi
}

# program_rows CSV SKIP [FROM]: the records of a lab program's own
# instructions (RIP in its image, session ends left out) as
# "rip,rflags,cr3,gprs", without the GPR columns listed in SKIP (e.g.
# " 13 21 22 ": RDI R13 R14), hex normalized, from the first record at RIP
# FROM (hex, no 0x) on.  A record right after one of the guest kernel's
# (a traced handler's IRETQ, a record the model has none of) is left out
# too, unless it is a SYSRETQ's (RIP = RCX, RFLAGS = R11, and not the
# state of the program's record before: a #DB handler's IRETQ returns to
# that): that is the SYSCALL's own record, when a VM exit inside the
# kernel's SYSCALL entry (a host interrupt) had the tracer follow the
# kernel up to it.  Left out as
# well: a session start that repeats the state of the session end 'event'
# just before it: under --kernel a handler is traced from its first VM exit
# on (step.c, lost_tf()), and when a host interrupt makes that exit at the
# handler's IRETQ, the IRETQ's step is the session's first record, with no
# kernel record before it (no instruction of the program can repeat its
# own state).
# Works on the model's expected_cpuN.csv and on dump --regs.
program_rows() {
	awk -F, -v skip="$2" -v from="${3:-}" 'function h(s) { s = tolower(s); sub(/^0x0*/, "", s); return s == "" ? "0" : s }
		function state(  s, i) { s = $4 "," $5 "," $6; for (i = 8; i <= NF; i++) s = s "," $i; return s }
		$3 == "session_end" && $7 == 6 { end_nr = NR; end_state = state() }
		$3 == "session_start" && NR == end_nr + 1 && state() == end_state { next }
		from != "" && h($4) == from { from = "" }
		NR > 1 && $3 != "session_end" && tolower($4) !~ /^0x4[0-3][0-9a-f][0-9a-f][0-9a-f][0-9a-f]$/ { kern = 1; next }
		NR > 1 && $3 != "session_end" && kern { kern = 0; if (h($4) != h($10) || h($5) != h($19) || state() == last) next }
		NR > 1 && $3 != "session_end" { last = state() }
		NR > 1 && from == "" && $3 != "session_end" && tolower($4) ~ /^0x4[0-3][0-9a-f][0-9a-f][0-9a-f][0-9a-f]$/ {
			line = h($4) "," h($5) "," h($6)
			for (i = 8; i <= 23; i++) if (index(skip, " " i " ") == 0) line = line "," h($i)
			print line
		}' "$1"
}

# judge_trace_holes NAME EXPECT-DIR ENDS MISSING: a --kernel trace with holes
# where TF was lost without a trap (tflost under --kernel): session ends
# ENDS, and its user-mode records are the model's (a user-only tracer's,
# which loses nothing) in order, at most MISSING of them absent.  A hole
# ends at the program's next I/O or CPUID exit at the latest; any earlier VM
# exit (a host interrupt, an NPF; one inside the handler, whose return is
# then followed) lets the tracer take TF back sooner.
judge_trace_holes() {
	csv=$cap/$1/cpu0.csv
	if ! "$bin/svmtrace-dump" dump --regs "$cap/$1/trace/svmtrace_trace_cpu0.bin" >"$csv" 2>"$csv.err"; then
		bad "capture/$1/trace" "svmtrace-dump: $(cat "$csv.err")"
		return
	fi
	got_ends=$(awk -F, '$3 == "session_end" { printf "%s ", $7 }' "$csv")
	program_rows "$2/expected_cpu0.csv" " " >"$csv.want"
	program_rows "$csv" " " >"$csv.got"
	if [ "$3" = "$got_ends" ] && awk -v most="$4" 'NR == FNR { w[++n] = $0; next }
		{ while (i < n && $0 != w[i + 1]) i++; if (i == n) bad = 1; else { i++; got++ } }
		END { exit bad || n - got > most }' "$csv.want" "$csv.got"; then
		ok "capture/$1/trace" "session ends '$got_ends' (stop=0 int=5 event=6), $(wc -l <"$csv.got") of the model's $(wc -l <"$csv.want") records in order"
	else
		bad "capture/$1/trace" "session ends '$got_ends' (want '$3'), or a record not the model's, out of order, or more than $4 missing"
	fi
}

# judge_self_kernel NAME: a CPL-3 program single-stepping itself,
# traced with --kernel: the guest's own #DBs (count and RIP sum)
# and its results are the model's, i.e. the untraced run's; its records are
# the model's, once each, in order, with the records of its kernel (the #DB
# handler, traced from its first VM exit on; SYSCALL's entry from the
# SYSRETQ on) in between, which program_rows leaves out as for
# selfstep-cpl0; every #DB handed to the handler ends a session 'event'.
judge_self_kernel() {
	judge_capture_rc "$1-kernel"
	judge_armed_results "$1-kernel" "$run/expect/$1"
	csv=$cap/$1-kernel/cpu0.csv
	if ! "$bin/svmtrace-dump" dump --regs "$cap/$1-kernel/trace/svmtrace_trace_cpu0.bin" >"$csv" 2>"$csv.err"; then
		bad "capture/$1-kernel/trace" "svmtrace-dump: $(cat "$csv.err")"
		return
	fi
	program_rows "$run/expect/$1/expected_cpu0.csv" " " >"$csv.want"
	program_rows "$csv" " " >"$csv.got"
	ends=$(awk -F, '$3 == "session_end" && $7 == 6' "$csv" | wc -l)
	dbs=$(sed -n 's/^result db_count=\([0-9]*\) .*/\1/p' "$run/expect/$1/results.txt")
	if [ -s "$csv.want" ] && diff -u "$csv.want" "$csv.got" >"$csv.diff" && [ "$ends" -ge "${dbs:-1}" ]; then
		ok "capture/$1-kernel/trace" "each of the program's $(wc -l <"$csv.got") instructions once, as the model's records; $ends session ends 'event' for its $dbs #DBs"
	else
		bad "capture/$1-kernel/trace" "program records differ from the model's, or session ends 'event' ($ends) < #DBs (${dbs:-?}):"
		head -n 20 "$csv.diff"
	fi
}

# judge_stepper_hazards: a guest stepping itself, TF lost without a trap,
# the guest's own debug registers (l1-lab.sh capture_set).
judge_stepper_hazards() {
	# 1. A guest single-stepping itself at CPL 0, traced with --kernel:
	# the #DBs it gets are the untraced run's, each of its instructions is
	# in the trace once, and every #DB delivered to its (untraced) handler
	# ends a session with reason 6 (event).
	judge_capture_rc selfstep-cpl0
	results "$run/l1/packaged/selfstep-cpl0.txt" >"$run/packaged-selfstep-cpl0.untraced"
	if grep -q '^result db_count=[1-9]' "$run/packaged-selfstep-cpl0.untraced" &&
		results "$cap/selfstep-cpl0/vmm.txt" | cmp -s - "$run/packaged-selfstep-cpl0.untraced"; then
		ok capture/selfstep-cpl0/results "the guest's own #DBs and results equal the untraced run's ($(grep -o 'db_count=[^ ]* db_rip_sum=[^ ]*' "$run/packaged-selfstep-cpl0.untraced"))"
	else
		bad capture/selfstep-cpl0/results "differ from the untraced run: $(results "$cap/selfstep-cpl0/vmm.txt" | tr '\n' ';') vs $(tr '\n' ';' <"$run/packaged-selfstep-cpl0.untraced")"
	fi
	csv=$cap/selfstep-cpl0/cpu0.csv
	if ! "$bin/svmtrace-dump" dump --regs "$cap/selfstep-cpl0/trace/svmtrace_trace_cpu0.bin" >"$csv" 2>"$csv.err"; then
		bad capture/selfstep-cpl0/trace "svmtrace-dump: $(cat "$csv.err")"
	else
		# The CPL-3 run's model records from selfstep.S's label
		# "common" on; only RDI (the argument), R13 and R14 (the
		# selectors) differ at CPL 0.
		from=$(nm "$guest/selfstep.elf" | awk '$3 == "common" { sub(/^0*/, "", $1); print $1 }')
		program_rows "$run/expect/selfstep/expected_cpu0.csv" " 13 21 22 " "$from" >"$csv.want"
		program_rows "$csv" " 13 21 22 " "$from" >"$csv.got"
		ends=$(awk -F, '$3 == "session_end" && $7 == 6' "$csv" | wc -l)
		dbs=$(sed -n 's/^result db_count=\([0-9]*\) .*/\1/p' "$run/packaged-selfstep-cpl0.untraced")
		if [ -s "$csv.want" ] && diff -u "$csv.want" "$csv.got" >"$csv.diff" && [ "$ends" = "$dbs" ]; then
			ok capture/selfstep-cpl0/trace "each of the program's $(wc -l <"$csv.got") instructions once, as the model's CPL-3 records; $ends session ends 'event' for its $dbs #DBs"
		else
			bad capture/selfstep-cpl0/trace "program records differ from the model's or session ends 'event' ($ends) != #DBs (${dbs:-?}):"
			head -n 20 "$csv.diff"
		fi
	fi

	# 1b. CPL-3 programs single-stepping themselves, traced with --kernel.
	for name in guest_db sysret_tf; do
		judge_self_kernel "$name"
	done

	# 2. tflost under --kernel (user-only: judge_capture_set).
	judge_capture_rc tflost-kernel
	judge_armed_results tflost-kernel "$run/expect/tflost"
	# Under --kernel TF is not parked (frames.c): INT n and #UD end a
	# session each ('int', 'event'), the three instructions after each
	# may be lost until the next exit.
	judge_trace_holes tflost-kernel "$run/expect/tflost" "5 6 0 " 6

	# 3. Five captured, then five untraced debug-register guests in one L1.
	results "$run/l1/packaged/drheavy.txt" >"$run/packaged-drheavy.untraced"
	n=0
	for r in armed1 armed2 armed3 armed4 armed5 unarmed1 unarmed2 unarmed3 unarmed4 unarmed5; do
		case $r in
		armed*) judge_capture_rc "drheavy/$r"; f=$cap/drheavy/$r/vmm.txt ;;
		*) f=$cap/drheavy/$r.txt ;;
		esac
		if grep -q '^cpu0 done' "$run/packaged-drheavy.untraced" && results "$f" | cmp -s - "$run/packaged-drheavy.untraced"; then
			n=$((n + 1))
		else
			bad "capture/drheavy/$r/results" "differ from the untraced run on the packaged modules: $(results "$f" | tr '\n' ';')"
		fi
	done
	if [ "$n" = 10 ]; then
		ok capture/drheavy/back-to-back "5 captured and 5 untraced debug-register guests ran in one L1, results as untraced (L0 QEMU survived)"
	else
		bad capture/drheavy/back-to-back "$n of 10 debug-register guests ran as untraced"
	fi
}
