# `dump` of a 100-million-record file stays under 50 MiB resident: the
# reader streams frame by frame.  The file is made through a pipe
# (svmtrace-synth-raw | pack -), so the 16.8 GB of raw records never touch disk.
set -eu
. tests/lib/need.sh
need_file /usr/bin/time "measuring the peak resident memory (Debian package time)"

N=100000000
"$BIN/svmtrace-synth-raw" $N | "$BIN/svmtrace-dump" pack - "$WORK/big.v5"
ls -l "$WORK/big.v5"
/usr/bin/time -f '%M' -o "$WORK/rss" "$BIN/svmtrace-dump" dump "$WORK/big.v5" | wc -l >"$WORK/rows"
echo "rows: $(cat "$WORK/rows"), peak RSS: $(cat "$WORK/rss") KiB"
test "$(cat "$WORK/rows")" = $((N + 2))	# header + N states + session end
test "$(cat "$WORK/rss")" -lt 51200
