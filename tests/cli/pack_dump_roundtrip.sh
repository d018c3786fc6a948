# Raw streams -> pack -> dump --regs reproduce every field of every record,
# for anchor intervals 1, 2, 64, 1000, with raw, fast LZ4 and LZ4HC frames.
# Streams: a real process stepped with ptrace, a synthetic loop, and random
# bytes (every field random, sequence increasing).
set -eu
. tests/lib/need.sh
. tests/lib/streams.sh
need_cmd perl "the independent raw-to-CSV reference (tests/cli/raw2csv.pl)"

make_streams 30000 20000

for stream in ptrace synth random; do
	perl tests/cli/raw2csv.pl 7 <"$WORK/$stream.raw" >"$WORK/$stream.expect"
	for interval in 1 2 64 1000; do
		for mode in --raw "--lz4-level 0" "--lz4-level 2"; do
			# shellcheck disable=SC2086
			"$BIN/svmtrace-dump" pack --cpu 7 --anchor-interval $interval $mode \
				"$WORK/$stream.raw" "$WORK/$stream.v5"
			"$BIN/svmtrace-dump" dump --regs "$WORK/$stream.v5" >"$WORK/$stream.csv"
			cmp "$WORK/$stream.expect" "$WORK/$stream.csv" ||
				{ echo "FAIL: $stream, interval $interval, $mode"; exit 1; }
		done
	done
	echo "ok: $stream ($(wc -l <"$WORK/$stream.expect") rows) x 4 intervals x 3 modes"
done
