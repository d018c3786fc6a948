# Sourced by e2e.sh after judge-capture.sh: the --xstate capture of
# ymm.bin (l1-lab.sh, capture_set: $cap/ymm-xstate).  Uses judge-capture.sh's
# judge_* helpers and e2e.sh's ok/bad, $run, $bin.
#
# Oracles: RIP, RFLAGS and GPRs row by row against the packaged modules'
# stock single-step log (judge_trace, as for the plain capture of ymm);
# YMM0-15 and XSTATE_BV against the state ymm.S's instructions must leave
# after each step, derived here from the ISA's semantics and the program's
# two vectors -- no code of the capture path computes them.

# The vectors of ymm.S (vec_a, vec_b), quadword 0 first, and what its
# instructions make of them (A + B wraps in quadword 2).
xs_a="0123456789abcdef 1111111111111111 8000000000000000 00000000ffffffff"
xs_b="1000000000000001 2222222222222222 8000000000000001 0000000000000001"
xs_sum="1123456789abcdf0 3333333333333333 0000000000000001 0000000100000000"	# vpaddq
xs_xor="1123456789abcdee 3333333333333333 0000000000000001 00000000fffffffe"	# vpxor
xs_ones=ffffffffffffffff
xs_zero=0000000000000000

# The YMM writes of the instruction each row follows (row N = the state
# after ymm.S's instruction N; lanes quadword 0 first).  Rows not listed
# change no YMM register.
xs_effects() {
	set -- $xs_a; a0=$1 a1=$2 a2=$3 a3=$4
	set -- $xs_b; b0=$1 b1=$2
	cat <<EOF
2 0 $xs_a
3 1 $xs_b
4 2 $xs_sum
5 3 $xs_xor
6 4 $a3 $a2 $a1 $a0
7 5 $xs_ones $xs_ones $xs_ones $xs_ones
8 5 $b0 $b1 keep keep
9 6 $a0 $a1 $xs_zero $xs_zero
10 15 $xs_sum
13 7 $a1 $a0 $xs_zero $xs_zero
14 all keep keep $xs_zero $xs_zero
EOF
}

# judge_xstate_rows CSV: every row's xstate_bv and ymm0..15 columns (24..40
# of dump --regs) equal the derived state; a session end repeats the last
# step's.  XSTATE_BV is 0x7 (XCR0 = x87|SSE|AVX, which the VMM sets; QEMU's
# TCG reports every enabled component as in use).
judge_xstate_rows() {
	xs_effects | awk -F, -v csv="$1" '
	function reg(r) { return "0x" y[r, 3] y[r, 2] y[r, 1] y[r, 0] }
	function put(r, q0, q1, q2, q3) {
		if (q0 != "keep") y[r, 0] = q0; if (q1 != "keep") y[r, 1] = q1
		if (q2 != "keep") y[r, 2] = q2; if (q3 != "keep") y[r, 3] = q3 }
	BEGIN { for (r = 0; r < 16; r++) for (q = 0; q < 4; q++) y[r, q] = "0000000000000000" }
	{ split($0, f, " "); eff[f[1]] = $0 }
	END {
		FS = ","
		while ((getline line < csv) > 0) {
			if (line ~ /^cpu,/) { if (line !~ /,xstate_bv,ymm0,.*,ymm15/) { print "no ymm columns: " line; exit 1 } continue }
			split(line, c, ",")
			if (c[3] != "session_end") {
				n++
				if (n in eff) {
					split(eff[n], e, " ")
					if (e[2] == "all") { for (r = 0; r < 16; r++) put(r, e[3], e[4], e[5], e[6]) }
					else put(e[2], e[3], e[4], e[5], e[6])
				}
			}
			if (c[24] != "0x7") { printf "row %d (%s, rip %s): xstate_bv %s, expected 0x7\n", n, c[3], c[4], c[24]; exit 1 }
			for (r = 0; r < 16; r++)
				if (c[25 + r] != reg(r)) {
					printf "row %d (%s, rip %s): ymm%d %s, expected %s\n", n, c[3], c[4], r, c[25 + r], reg(r)
					exit 1
				}
			rows++
		}
		if (n < 14) { printf "only %d steps (ymm.S has 20)\n", n; exit 1 }
		printf "%d rows: YMM0-15 and xstate_bv as derived after every step, ymm0 = %s at the end\n", rows, reg(0)
	}'
}

judge_xstate() {
	d=$cap/ymm-xstate
	judge_capture_rc ymm-xstate
	judge_audit ymm-xstate
	judge_armed_results ymm-xstate "$run/expect/ymm"
	judge_trace ymm-xstate "$run/expect/ymm"
	# judge_trace wrote $d/cpu0.csv (dump --regs): its YMM columns.
	if out=$(judge_xstate_rows "$d/cpu0.csv" 2>&1); then
		ok capture/ymm-xstate/ymm "$out"
	else
		bad capture/ymm-xstate/ymm "$out"
	fi
	# JSON lines carry the same: the last row's ymm array, as CSV printed it.
	last=$(tail -n 1 "$d/cpu0.csv" | cut -d, -f24-40 | sed 's/,/","/g; s/^\([^"]*\)","/"xstate_bv":"\1","ymm":["/; s/$/"]/')
	if "$bin/svmtrace-dump" dump --regs --format jsonl "$d/trace/svmtrace_trace_cpu0.bin" |
		tail -n 1 | grep -qF "$last"; then
		ok capture/ymm-xstate/jsonl "dump --format jsonl --regs gives the same xstate_bv and ymm array"
	else
		bad capture/ymm-xstate/jsonl "the JSON line lacks $last"
	fi
	# Without --xstate (the plain capture of ymm) there is no YMM state.
	if head -n 1 "$cap/ymm/cpu0.csv" 2>/dev/null | grep -q '^cpu,.*,r15$'; then
		ok capture/ymm/no-xstate "without --xstate, dump --regs has no YMM columns"
	else
		bad capture/ymm/no-xstate "$(head -n 1 "$cap/ymm/cpu0.csv" 2>&1)"
	fi
}
