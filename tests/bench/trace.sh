#!/bin/sh
# make bench (trace part): v5 size and speed against xz -6, zstd -3 and
# zstd -d on the same raw states, measured in this one run, as ratios.
#
# Workloads are real programs single-stepped with ptrace by
# svmtrace-steprec: a numeric sort, a Perl interpreter loop, SHA-256 over a
# file, a crypto-style one (BLAKE2b: 64-bit adds, rotates and xors, b2sum)
# and a compression-style one (gzip -6 over text: LZ77 matching, Huffman
# coding).  The baselines compress the 168-byte raw records with TSC kept
# only in every Nth record, N the writer's default anchor interval (the
# information v5 keeps).  Times are CPU
# seconds (user + system, from wait4/clock_gettime), the best of BENCH_ROUNDS
# (default 9) rounds, and each round runs zstd -3, our encode, zstd -d, our
# decode and the CSV dump one after the other, so that a load that comes and
# goes on a shared machine hits both sides of a ratio alike.  The uptime line
# before the table tells how busy the machine was.
set -eu
. tests/lib/need.sh
need_cmd xz "the xz -6 size baseline"
need_cmd zstd "the zstd -3 / zstd -d speed baselines"
need_cmd perl "the interpreter workload"

BIN=${BIN:-build/bin}
OUT=${BENCH_DIR:-build/bench}
RECORDS=${BENCH_RECORDS:-400000}
LEVEL=${BENCH_LZ4_LEVEL:-}
ROUNDS=${BENCH_ROUNDS:-9}
# the default every v5 file below is written with: TSC on every Nth record
ANCHOR=$(sed -n 's/^#define SVMTRACE_DEFAULT_ANCHOR_INTERVAL *\([0-9]*\).*/\1/p' include/svmtrace/trace.h)
[ -n "$ANCHOR" ] || { echo "trace.sh: no SVMTRACE_DEFAULT_ANCHOR_INTERVAL in include/svmtrace/trace.h" >&2; exit 1; }
mkdir -p "$OUT"

. tests/bench/workloads.sh
record_workloads

echo "machine: $(nproc) CPUs, $(sed -n 's/^model name[^:]*: //p' /proc/cpuinfo | sed 1q);" \
	"load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-5s %7s | %6s %6s %6s %5s | %7s %6s %6s %5s | %7s %6s %5s | %6s\n' \
	work records "v5 B/r" "xz-6" "zstd-3" "v5/xz" "enc M/s" "zstd-3" "xz-6" ratio \
	"dec M/s" "zstd-d" ratio "csv M/s"
: >"$OUT/run"	# this run's rows, for the summary below
for w in $WORKLOADS; do
	raw="$OUT/$w.raw"
	n=$(( $(stat -c %s "$raw") / 168 ))
	perl -e 'local $/ = \168; my $i = 0; my $n = shift;
		while (<STDIN>) { substr($_, 8, 8) = "\0" x 8 if $i++ % $n; print }' "$ANCHOR" \
		<"$raw" >"$OUT/$w.tsc"
	T="$BIN/svmtrace-bench-trace"
	t_xz=$("$T" --time=1 xz -6 -T1 -c "$OUT/$w.tsc")
	xz -6 -T1 -c "$OUT/$w.tsc" >"$OUT/$w.xz"
	zstd -q -3 -c "$OUT/$w.tsc" >"$OUT/$w.zst"

	line=$("$T" "$raw" "$OUT/$w.v5" ${LEVEL:+--lz4-level $LEVEL} --repeat "$ROUNDS" \
		--zstd-c "$OUT/$w.tsc" --zstd-d "$OUT/$w.zst" --csv "$BIN/svmtrace-dump")
	eval "$line"	# records= bytes= encode_s= decode_s= zstd_c_s= zstd_d_s= csv_s=
	t_zc=$zstd_c_s t_zd=$zstd_d_s t_csv=$csv_s

	awk -v w="$w" -v n="$n" -v v5="$bytes" -v xz="$(stat -c %s "$OUT/$w.xz")" \
		-v zst="$(stat -c %s "$OUT/$w.zst")" -v txz="$t_xz" \
		-v enc="$encode_s" -v dec="$decode_s" -v zc="$t_zc" -v zd="$t_zd" -v csv="$t_csv" \
		-v recs="$records" 'BEGIN {
		printf "%-5s %7d | %6.2f %6.2f %6.2f %5.3f | %7.2f %6.2f %6.2f %5.2f | %7.2f %6.2f %5.2f | %6.2f\n",
			w, n, v5 / n, xz / n, zst / n, v5 / xz,
			recs / enc / 1e6, n / zc / 1e6, n / txz / 1e6, (recs / enc) / (n / zc),
			recs / dec / 1e6, n / zd / 1e6, (recs / dec) / (n / zd),
			recs / csv / 1e6
	}' | tee -a "$OUT/table" "$OUT/run"
	rm -f "$OUT/$w.tsc"
done
# The summary over this run's workloads: the
# geometric mean of each ratio and its worst workload.
awk -F'|' '{
	split($2, s, " "); split($3, e, " "); split($4, d, " ")
	n++; ls += log(s[4]); le += log(e[4]); ld += log(d[3])
	if (n == 1 || s[4] > smax) smax = s[4]
	if (n == 1 || e[4] < emin) emin = e[4]
	if (n == 1 || d[3] < dmin) dmin = d[3]
	if (n == 1 || $5 + 0 < cmin) cmin = $5 + 0
} END {
	printf "geometric mean: v5/xz %.3f, encode %.2fx zstd -3, decode %.2fx zstd -d\n",
		exp(ls / n), exp(le / n), exp(ld / n)
	printf "worst workload: v5/xz %.3f, encode %.2fx, decode %.2fx, CSV %.2f M rows/s\n",
		smax, emin, dmin, cmin
}' "$OUT/run" | tee -a "$OUT/table"
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
