#!/bin/sh
# make bench (analysis part): how fast `svmtrace-dump dump --symbols
# --disasm` goes on one core, against plain `dump` of the same trace in
# the same run.  The trace is tests/cli/analysis/sample.py's program (a
# module map with exports, code.bin with a page that changes mid-trace, a
# module without code bytes) run for BENCH_ANALYSIS_LOOPS rounds (10 rows
# each).  Times are CPU seconds (user + system), best of three; output
# goes to /dev/null.  The target: >= 1 M rows/s.
set -eu
. tests/lib/need.sh
need_cmd python3 "generating the benchmark program's trace"

BIN=${BIN:-build/bin}
OUT=${BENCH_DIR:-build/bench}/analysis
LOOPS=${BENCH_ANALYSIS_LOOPS:-500000}
D=$BIN/svmtrace-dump
PIN=
command -v taskset >/dev/null 2>&1 && PIN="taskset -c 0"
rm -rf "$OUT" && mkdir -p "$OUT"
python3 tests/cli/analysis/sample.py "$OUT" "$LOOPS" | "$D" pack - "$OUT/svmtrace_trace_cpu0.bin"
T=$OUT/svmtrace_trace_cpu0.bin
rows=$("$D" dump --no-symbols "$T" | wc -l)
rows=$((rows - 1))

# cpu_seconds ARGS...: best of three runs of svmtrace-dump ARGS.
cpu_seconds() {
	best=
	for _ in 1 2 3; do
		s=$( { /usr/bin/time -f '%U %S' $PIN "$D" "$@" >/dev/null; } 2>&1 | tail -n 1 |
			awk '{ print $1 + $2 }')
		best=$(awk -v a="$s" -v b="${best:-$s}" 'BEGIN { print (a < b) ? a : b }')
	done
	echo "$best"
}
plain=$(cpu_seconds dump --no-symbols "$T")
sym=$(cpu_seconds dump --symbols "$T")
dis=$(cpu_seconds dump --symbols --disasm "$T")
regs=$(cpu_seconds dump --regs --symbols --disasm "$T")
awk -v n="$rows" -v p="$plain" -v s="$sym" -v d="$dis" -v r="$regs" 'BEGIN {
	printf "analysis: %d rows; dump %.2f M rows/s; --symbols %.2f M rows/s; " \
		"--symbols --disasm %.2f M rows/s (%.2fx the plain dump time); " \
		"with --regs %.2f M rows/s\n",
		n, n / p / 1e6, n / s / 1e6, n / d / 1e6, d / p, n / r / 1e6 }'
