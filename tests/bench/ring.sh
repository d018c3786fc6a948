#!/bin/sh
# make bench (ring part): svmtrace-capture's consumer -- ring + v5 writer --
# against a producer thread using the kernel's ring protocol, replaying the
# real states of a single-stepped `sort` (svmtrace-steprec).  Target: the
# consumer keeps up with >= 10 M slots/s on one core.
set -eu
BIN=${BIN:-build/bin}
OUT=${BENCH_DIR:-build/bench}
SLOTS=${BENCH_RING_SLOTS:-20000000}
mkdir -p "$OUT"
if [ ! -s "$OUT/ring-sort.raw" ]; then
	awk 'BEGIN { srand(11); for (i = 0; i < 40000; i++) print int(rand() * 1000000) }' \
		>"$OUT/ring-numbers"
	"$BIN/svmtrace-steprec" -n 400000 -o "$OUT/ring-sort.raw" -- sort -n "$OUT/ring-numbers" \
		>/dev/null
fi
"$BIN/svmtrace-bench-ring" "$OUT/ring-sort.raw" "$OUT/ring.v5" --slots "$SLOTS"
