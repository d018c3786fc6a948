# Sourced by e2e.sh: the --mem captures (l1-mem.sh, in $run/l1/mem).  Uses
# e2e.sh's ok/bad, $run, $here, $bin, and the model's expectations in
# $run/expect/NAME.
#
# Oracle: the reference model's log of every data access each instruction
# made (expected_mem_cpuN.csv: kind, address, size and the bytes read and
# written, a read and a later write of the same bytes being one
# read-modify-write), written by the model's interpreter, which shares no
# code with the capture path's decoder.  Every record of the trace must
# carry exactly those accesses: compared as sets per record (the model
# logs in the order its interpreter touches memory).

# mem_rows CSV: "INDEX<TAB>ACCESS ACCESS..." (sorted) of each record of a
# dump --mem CSV (session ends have none and are left out; INDEX counts
# every row, as the model's index does).
mem_rows() {
	awk -F, 'NR > 1 { i = NR - 2; if ($3 == "session_end") next
		n = split($NF, a, " "); s = ""
		for (k = 1; k <= n; k++) t[k] = a[k]
		for (k = 2; k <= n; k++) { v = t[k]; for (j = k - 1; j >= 1 && t[j] > v; j--) t[j + 1] = t[j]; t[j + 1] = v }
		for (k = 1; k <= n; k++) s = s (k > 1 ? " " : "") t[k]
		print i "\t" s }' "$1"
}

# model_mem_rows CSV: the same of the model's expected_mem_cpuN.csv.
model_mem_rows() {
	awk -F, 'NR > 1 { n = split($2, a, " "); s = ""
		for (k = 1; k <= n; k++) t[k] = a[k]
		for (k = 2; k <= n; k++) { v = t[k]; for (j = k - 1; j >= 1 && t[j] > v; j--) t[j + 1] = t[j]; t[j + 1] = v }
		for (k = 1; k <= n; k++) s = s (k > 1 ? " " : "") t[k]
		print $1 "\t" s }' "$1"
}

# judge_mem NAME: the records equal the model's (check-trace.sh), and every
# record's accesses equal the model's accesses of that instruction.
judge_mem() {
	d=$run/l1/mem/$1
	exp=$run/expect/$1
	if [ "$(cat "$d/capture.rc" 2>/dev/null)" != 0 ]; then
		bad "mem/$1/capture" "svmtrace-capture --mem exit $(cat "$d/capture.rc" 2>/dev/null): $(tail -n 3 "$d/capture.txt" 2>/dev/null | tr '\n' ';')"
		return
	fi
	for want in "$exp"/expected_mem_cpu*.csv; do
		n=${want##*expected_mem_cpu}; n=${n%.csv}
		file=$d/trace/svmtrace_trace_cpu$n.bin
		if "$bin/svmtrace-dump" dump --regs "$file" >"$d/cpu$n.csv" 2>"$d/cpu$n.err" &&
			out=$("$here/check-trace.sh" "$exp/expected_cpu$n.csv" "$d/cpu$n.csv" 2>&1); then
			ok "mem/$1/trace/cpu$n" "trace equals the model's records, $out"
		else
			bad "mem/$1/trace/cpu$n" "$(cat "$d/cpu$n.err") ${out:-}"
		fi
		if ! "$bin/svmtrace-dump" dump --mem "$file" >"$d/mem$n.csv" 2>"$d/mem$n.err"; then
			bad "mem/$1/cpu$n" "svmtrace-dump dump --mem $file: $(cat "$d/mem$n.err")"
			continue
		fi
		mem_rows "$d/mem$n.csv" >"$d/mem$n.got"
		model_mem_rows "$want" >"$d/mem$n.want"
		accesses=$(awk -F'\t' '$2 != "" { n += split($2, a, " ") } END { print n + 0 }' "$d/mem$n.want")
		if diff "$d/mem$n.want" "$d/mem$n.got" >"$d/mem$n.diff"; then
			ok "mem/$1/cpu$n" "$(wc -l <"$d/mem$n.got") records, their $accesses accesses (address, size, values read and written) equal the model's"
		else
			bad "mem/$1/cpu$n" "records whose accesses differ from the model's (< model, > trace):"
			head -n 20 "$d/mem$n.diff"
		fi
	done
}

# judge_mem_set: every program l1-mem.sh captured with --mem.
judge_mem_set() {
	. "$here/l1-mem.sh"
	for name in $(echo "$MEM_PROGRAMS" | awk '{ print $1 }'); do
		judge_mem "$name"
	done
	if [ -s "$run/l1/mem/failures" ]; then bad mem/runs "$(cat "$run/l1/mem/failures")"
	else ok mem/runs "every --mem capture ran to the end"; fi
}
