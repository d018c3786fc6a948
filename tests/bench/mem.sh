#!/bin/sh
# make bench (memory part): what memory operands cost in v5 files, on the
# workloads of tests/bench/workloads.sh recorded with their accesses
# (svmtrace-steprec --mem: each step's operands decoded with Capstone and
# read with process_vm_readv before and after the step).  Per workload: the
# accesses per record, the file without and with memory operands in bytes
# per record, what the memory parts add per access before LZ4 (decoded
# bytes) and after (file bytes), and the decode speed with and without them
# (CPU seconds of `svmtrace-dump inspect`, the best of BENCH_ROUNDS).
set -eu
. tests/lib/need.sh
need_cmd perl "the interpreter workload"

BIN=${BIN:-build/bin}
OUT=${BENCH_DIR:-build/bench}/mem
RECORDS=${BENCH_RECORDS:-400000}
ROUNDS=${BENCH_ROUNDS:-5}
mkdir -p "$OUT"

. tests/bench/workloads.sh
record_workloads --mem

# the best CPU time of ROUNDS runs of a command, in seconds
best() {
	b=
	for _ in $(seq "$ROUNDS"); do
		t=$("$BIN/svmtrace-bench-trace" --time=1 "$@")
		b=$(awk -v a="${b:-$t}" -v t="$t" 'BEGIN { print (t < a ? t : a) }')
	done
	echo "$b"
}

# decoded bytes and file bytes of a v5 file, from inspect
sizes() {
	"$BIN/svmtrace-dump" inspect "$1" | awk '/frames:/ { d = $(NF - 2) } /size:/ { f = $2 } END { print d, f }'
}

echo "machine: $(nproc) CPUs; load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-5s %7s %6s | %7s %7s | %8s %8s | %8s %8s\n' work records "acc/r" "B/r" "B/r mem" \
	"B/acc raw" "B/acc lz4" "dec M/s" "mem M/s"
for w in $WORKLOADS; do
	raw="$OUT/$w.raw"
	n=$(( $(stat -c %s "$raw") / 168 ))
	acc=$(( $(stat -c %s "$raw.mem") / 88 ))
	"$BIN/svmtrace-dump" pack "$raw" "$OUT/$w.v5"
	"$BIN/svmtrace-dump" pack --mem "$raw.mem" "$raw" "$OUT/$w-mem.v5"
	set -- $(sizes "$OUT/$w.v5") $(sizes "$OUT/$w-mem.v5")
	t_plain=$(best "$BIN/svmtrace-dump" inspect "$OUT/$w.v5")
	t_mem=$(best "$BIN/svmtrace-dump" inspect "$OUT/$w-mem.v5")
	awk -v w="$w" -v n="$n" -v acc="$acc" -v d0="$1" -v f0="$2" -v d1="$3" -v f1="$4" \
		-v t0="$t_plain" -v t1="$t_mem" 'BEGIN {
		printf "%-5s %7d %6.2f | %7.2f %7.2f | %8.2f %8.2f | %8.2f %8.2f\n",
			w, n, acc / n, f0 / n, f1 / n, (d1 - d0) / acc, (f1 - f0) / acc,
			n / t0 / 1e6, n / t1 / 1e6
	}'
done
