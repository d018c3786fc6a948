# Bad input gets a clear error naming the file, offset or argument, a
# non-zero exit, and loses nothing: pack leaves no output, a truncated trace
# still gives every complete frame.
set -eu
D="$BIN/svmtrace-dump"

expect_fail() {	# expect_fail STATUS MESSAGE COMMAND...: fails with STATUS, stderr has MESSAGE
	status=$1 msg=$2
	shift 2
	if "$@" >"$WORK/out" 2>"$WORK/err"; then
		echo "expected failure: $*"; exit 1
	else
		rc=$?
	fi
	[ "$rc" = "$status" ] || { echo "exit $rc, expected $status: $*"; cat "$WORK/err"; exit 1; }
	grep -qF -- "$msg" "$WORK/err" || { echo "stderr lacks '$msg':"; cat "$WORK/err"; exit 1; }
}

# files that are not v5 traces
expect_fail 1 "svmtrace-dump: $WORK/none.bin: cannot open: No such file or directory" \
	$D dump "$WORK/none.bin"
printf 'NOPE5678abcdefgh' >"$WORK/magic.bin"
expect_fail 1 "$WORK/magic.bin: offset 0: bad magic 4e 4f 50 45 (expected \"FTRC\")" \
	$D inspect "$WORK/magic.bin"

# a truncated trace: every complete frame is dumped, then a non-zero exit
"$BIN/svmtrace-synth-raw" 300000 >"$WORK/big.raw"
$D pack "$WORK/big.raw" "$WORK/big.v5"
size=$(stat -c %s "$WORK/big.v5")
head -c $((size - 100)) "$WORK/big.v5" >"$WORK/cut.v5"
expect_fail 1 "truncated at offset" $D dump "$WORK/cut.v5"
grep -q "every complete frame before it was read (--allow-truncated accepts this)" "$WORK/err"
rows=$(($(wc -l <"$WORK/out") - 1))
[ "$rows" -gt 250000 ] && [ "$rows" -lt 300001 ] || { echo "only $rows rows survived"; exit 1; }
$D dump "$WORK/big.v5" | head -n $((rows + 1)) | cmp - "$WORK/out"
$D dump --allow-truncated "$WORK/cut.v5" >/dev/null 2>&1
$D inspect --allow-truncated "$WORK/cut.v5" | grep -q "truncated:   at offset"
expect_fail 1 "truncated at offset" $D stats "$WORK/cut.v5"

# pack: bad input leaves nothing under OUT
head -c 1000 "$WORK/big.raw" >"$WORK/odd.raw"
expect_fail 1 "$WORK/odd.raw: offset 840: input ends with 160 bytes, not a whole 168-byte record" \
	$D pack "$WORK/odd.raw" "$WORK/odd.v5"
[ ! -e "$WORK/odd.v5" ] && [ ! -e "$WORK/odd.v5.partial" ]
{ head -c 1680 "$WORK/big.raw"; head -c 168 "$WORK/big.raw"; } >"$WORK/back.raw"
expect_fail 1 "$WORK/back.raw: offset 1680 (record 10): sequence 1 does not follow 10" \
	$D pack "$WORK/back.raw" "$WORK/back.v5"
[ ! -e "$WORK/back.v5" ] && [ ! -e "$WORK/back.v5.partial" ]
# sequences are 64-bit and never wrap: the session end pack appends needs one
# more number (docs/format.md, "Raw records")
perl -e 'binmode STDOUT; print pack("Q<21", ~0 - 1, (0) x 20), pack("Q<21", ~0, (0) x 20)' \
	>"$WORK/last.raw"
expect_fail 1 "$WORK/last.raw: last sequence is 2^64-1, no number is left for the session end" \
	$D pack "$WORK/last.raw" "$WORK/last.v5"
[ ! -e "$WORK/last.v5" ] && [ ! -e "$WORK/last.v5.partial" ]
head -c 168 "$WORK/last.raw" >"$WORK/below.raw"
$D pack "$WORK/below.raw" "$WORK/below.v5"
$D dump "$WORK/below.v5" | grep -q '^0,18446744073709551615,session_end,'
: >"$WORK/empty.raw"
expect_fail 1 "$WORK/empty.raw: no records" $D pack "$WORK/empty.raw" "$WORK/empty.v5"
[ ! -e "$WORK/empty.v5" ]

# arguments
expect_fail 1 "--seq: range start 0x5 is above its end 0x3" $D dump --seq 5-3 "$WORK/big.v5"
expect_fail 1 "--format: expected csv or jsonl, got 'xml'" $D dump --format xml "$WORK/big.v5"
expect_fail 1 "--cr3: expected an unsigned number (decimal or 0x hex), got '0xzz'" \
	$D dump --cr3 0xzz "$WORK/big.v5"
expect_fail 1 "--anchor-interval: expected 1..4294967295, got 0" \
	$D pack --anchor-interval 0 "$WORK/big.raw" "$WORK/x.v5"
expect_fail 1 "LIMIT: expected an unsigned number" $D dump "$WORK/big.v5" ten
expect_fail 2 "unknown command 'frobnicate'" $D frobnicate
expect_fail 2 "usage: svmtrace-dump dump" $D dump

# help matches the commands
$D --help | grep -q "^  inspect"
for c in inspect dump stats pack; do
	$D "$c" --help | grep -q "^usage: svmtrace-dump $c"
done
