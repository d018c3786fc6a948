# Sourced by e2e.sh after judge-capture.sh: what a capture costs another
# process (docs/lab.md, "What a capture costs the other processes").
# syscost.bin ran twice on our modules (l1-lab.sh, syscost_runs): unarmed,
# and while its vCPU 0 was captured, vCPU 1 being another process
# (--alt-cr3 1) that timed its SYSCALL and INT n round trips with RDTSC.
# The exit audit's counts decide; the cycles are TCG's and only reported.
# Uses judge-capture.sh's $cap and judge_* functions, e2e.sh's ok/bad,
# results, $run.

# syscost_values FILE: vCPU 1's PORT_VALUE reports, one decimal per line
# (progress at its start and end, 64 SYSCALL buckets, 64 INT n buckets).
syscost_values() {
	sed -n 's/^value cpu1 \(0x[0-9a-f]*\)$/\1/p' "$1" | while read -r v; do echo $((v)); done
}

# syscost_median FILE FIRST: the log2 bucket holding the median round trip
# of the 64 buckets from line FIRST of the values, and their sum.
syscost_median() {
	syscost_values "$1" | awk -v f="$2" 'NR >= f && NR < f + 64 { n[NR - f] = $1; s += $1 }
		END { for (b = 0; b < 64; b++) { c += n[b]; if (2 * c >= s) break } printf "%d %d\n", b, s }'
}

judge_syscost() {
	rounds=$1
	judge_capture_rc syscost
	judge_audit syscost
	# vCPU 0 alone is the model's (it depends on nothing vCPU 1 does).
	if results "$cap/syscost/vmm.txt" | grep -v '^cpu1 ' >"$run/capture-syscost.got" &&
		results "$run/expect/syscost/results.txt" | diff -u - "$run/capture-syscost.got" \
		>"$run/capture-syscost.diff"; then
		ok capture/syscost/results "vCPU 0's results and the kernel's counters equal the model's (no TF in R11 or a frame, no #DB for the other process's SYSCALL stepped silently off its gate)"
	else
		bad capture/syscost/results "differ from the model's:"
		cat "$run/capture-syscost.diff"
	fi
	judge_trace syscost "$run/expect/syscost"
	# The other process: one #UD exit, its first SYSCALL, stepped silently
	# on its gated entry page; none for its timed round trips.
	line=$(grep '^audit vcpu1 ' "$cap/syscost/capture.txt" 2>/dev/null)
	ud=$(echo "$line" | sed -n 's/.* ud_exits=\([0-9]*\) .*/\1/p')
	iret=$(echo "$line" | sed -n 's/.* iret_exits=\([0-9]*\) .*/\1/p')
	cr3=$(echo "$line" | sed -n 's/.* cr3_exits=\([0-9]*\)$/\1/p')
	if [ "$ud" = 1 ] && [ "$iret" = 0 ] && [ "$cr3" = 0 ]; then
		ok capture/syscost/other-process-exits "vCPU 1 ($rounds SYSCALL/SYSRETQ and $rounds INT n/IRETQ round trips beside the capture): $ud #UD exit (its SYSCALL on the gate), $iret IRET exits, $cr3 CR3-write exits"
	else
		bad capture/syscost/other-process-exits "vCPU 1: ud_exits=${ud:-?} (want 1: its SYSCALL on the gate) iret_exits=${iret:-?} cr3_exits=${cr3:-?} (want 0): ${line:-no audit line}"
	fi
	# What it measured: both runs complete, the armed one while vCPU 0 was
	# being traced (its progress between its first and its last round).
	unarmed=$cap/syscost-unarmed.txt armed=$cap/syscost/vmm.txt
	nu=$(syscost_values "$unarmed" | wc -l) na=$(syscost_values "$armed" | wc -l)
	from=$(syscost_values "$armed" | sed -n 1p)
	set -- $(syscost_median "$unarmed" 3) $(syscost_median "$unarmed" 67) \
		$(syscost_median "$armed" 3) $(syscost_median "$armed" 67)
	if [ "$nu" = 130 ] && [ "$na" = 130 ] && [ "${from:-0}" -gt 0 ] && [ "$from" -lt "$rounds" ] &&
		[ "$2" = "$rounds" ] && [ "$4" = "$rounds" ] && [ "$6" = "$rounds" ] && [ "$8" = "$rounds" ]; then
		ok capture/syscost/rdtsc "median round trip in TSC cycles (log2 bucket), unarmed / while vCPU 0 was traced (at its round $from of $rounds): SYSCALL 2^$1 / 2^$5, INT n 2^$3 / 2^$7 (TCG's cycles: reported, not judged)"
	else
		bad capture/syscost/rdtsc "values unarmed $nu, armed $na (want 130 each), progress at the start ${from:-?} (want 1 to $((rounds - 1))), round trips counted: $2 $4 $6 $8 (want $rounds)"
	fi
}
