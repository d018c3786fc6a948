#!/bin/sh
# make demo: the README's worked example, end to end on this machine.  A real
# process (sort) is single-stepped with ptrace, its states packed into a v5
# trace, and the trace analysed with svmtrace-dump.
set -eu
BIN=${BIN:-build/bin}
OUT=${DEMO_DIR:-build/demo}
mkdir -p "$OUT"
run() { echo "\$ $*"; "$@"; echo; }

awk 'BEGIN { srand(1); for (i = 0; i < 2000; i++) print int(rand() * 100000) }' >"$OUT/numbers"
run "$BIN/svmtrace-steprec" -n 200000 -o "$OUT/sort.raw" -- sort -n "$OUT/numbers" >/dev/null
run "$BIN/svmtrace-dump" pack --cpu 0 "$OUT/sort.raw" "$OUT/svmtrace_trace_cpu0.bin"
run "$BIN/svmtrace-dump" inspect "$OUT/svmtrace_trace_cpu0.bin"
run "$BIN/svmtrace-dump" dump --regs "$OUT/svmtrace_trace_cpu0.bin" 4
run "$BIN/svmtrace-dump" stats --top 3 "$OUT/svmtrace_trace_cpu0.bin"
