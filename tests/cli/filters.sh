# dump's filters (--cr3, --rip-range, --seq, LIMIT/--limit) and --format jsonl
# select exactly the rows a plain dump filtered by hand gives.
set -eu
. tests/lib/need.sh
need_cmd perl "checking JSON lines (JSON::PP)"

"$BIN/svmtrace-synth-raw" 5000 100 >"$WORK/a.raw"
# the second half of the stream runs under another CR3
perl -e 'binmode STDIN; binmode STDOUT; local $/ = \168; my $i = 0;
	while (my $r = <STDIN>) { substr($r, 32, 8) = pack("Q<", 0x2bb000) if $i++ >= 2500; print $r }' \
	<"$WORK/a.raw" >"$WORK/b.raw"
"$BIN/svmtrace-dump" pack "$WORK/b.raw" "$WORK/b.v5"
D="$BIN/svmtrace-dump"
$D dump "$WORK/b.v5" >"$WORK/all.csv"

$D dump --cr3 0x2bb000 "$WORK/b.v5" | sed 1d >"$WORK/got"
awk -F, '$6 == "0x2bb000"' "$WORK/all.csv" >"$WORK/want"
cmp "$WORK/want" "$WORK/got"
test "$(wc -l <"$WORK/got")" = 2501	# 2500 instructions + the session end

$D dump --rip-range 0x140001010-0x140001020 "$WORK/b.v5" | sed 1d >"$WORK/got"
# half-open [A, B), as in svmtrace-capture and svmtraced: 0x140001020 itself is out
awk -F, 'NR > 1 && $4 >= "0x140001010" && $4 < "0x140001020" && length($4) == 11' \
	"$WORK/all.csv" >"$WORK/want"
cmp "$WORK/want" "$WORK/got"
test -s "$WORK/got"
grep -q ',0x140001020,' "$WORK/all.csv"	# the end is in the trace, and left out above
! grep -q ',0x140001020,' "$WORK/got"
# one-address range [A, A+1) and the empty range A-A (refused, as by the capture programs)
$D dump --rip-range 0x140001020-0x140001021 "$WORK/b.v5" | sed 1d | cut -d, -f4 | sort -u >"$WORK/got"
test "$(cat "$WORK/got")" = 0x140001020
if $D dump --rip-range 0x140001020-0x140001020 "$WORK/b.v5" >/dev/null 2>"$WORK/err"; then
	echo "an empty --rip-range was accepted"; exit 1
fi
grep -q 'empty range (the end is exclusive)' "$WORK/err"

$D dump --seq 1000-1099 "$WORK/b.v5" | sed 1d | cut -d, -f2 >"$WORK/got"
seq 1000 1099 >"$WORK/want"
cmp "$WORK/want" "$WORK/got"

test "$($D dump "$WORK/b.v5" 17 | wc -l)" = 18
test "$($D dump --limit 17 --cr3 0x2bb000 "$WORK/b.v5" | sed -n 2p | cut -d, -f2)" = 2600
test "$($D dump "$WORK/b.v5" 0 | wc -l)" = 1

# JSON lines: valid JSON, same values as the CSV
$D dump --format jsonl --regs "$WORK/b.v5" >"$WORK/all.jsonl"
perl -MJSON::PP -ne 'my $r = decode_json($_);
	print join(",", 0, $r->{sequence}, $r->{kind}, $r->{rip}, $r->{rflags}, $r->{cr3},
		$r->{reason}, map { $r->{regs}{$_} } qw(rax rbx rcx rdx rsi rdi rbp rsp r8 r9 r10 r11
		r12 r13 r14 r15)), "\n"' <"$WORK/all.jsonl" >"$WORK/got"
$D dump --regs "$WORK/b.v5" | sed 1d >"$WORK/want"
cmp "$WORK/want" "$WORK/got"
head -n 1 "$WORK/all.jsonl" | grep -q '"tsc":"0x'
