# dump --merge interleaves per-vCPU files into one stream in global sequence
# order.  One synthetic stream is dealt out to three "vCPUs" in runs of
# random length, each packed with its own --cpu; the merge must give back
# the original order with the right cpu on every row.
set -eu
. tests/lib/need.sh
need_cmd perl "splitting the stream and building the expected rows"

"$BIN/svmtrace-synth-raw" 20000 >"$WORK/all.raw"
perl -e 'srand(11); binmode STDIN; local $/ = \168;
	my @out; open($out[$_], ">", "'"$WORK"'/cpu$_.raw") or die for 0 .. 2;
	binmode $_ for @out; open(my $map, ">", "'"$WORK"'/cpu.map") or die;
	my ($cpu, $left) = (0, 0);
	while (my $r = <STDIN>) {
		if ($left-- <= 0) { $cpu = int(rand(3)); $left = 1 + int(rand(50)); }
		print { $out[$cpu] } $r;
		print $map "$cpu\n";
	}' <"$WORK/all.raw"
for c in 0 1 2; do
	"$BIN/svmtrace-dump" pack --cpu $c "$WORK/cpu$c.raw" "$WORK/cpu$c.v5"
done
"$BIN/svmtrace-dump" dump --merge --regs "$WORK/cpu2.v5" "$WORK/cpu0.v5" "$WORK/cpu1.v5" \
	>"$WORK/merged.csv"

# expected: the original stream's rows (sequence, state) with each row's cpu;
# session starts/ends are per file, so compare only instruction-state columns
perl tests/cli/raw2csv.pl 0 <"$WORK/all.raw" | sed '1d;$d' | cut -d, -f2,4- >"$WORK/states"
paste -d, "$WORK/cpu.map" "$WORK/states" >"$WORK/expect"
grep -v session_end "$WORK/merged.csv" | sed 1d | cut -d, -f1,2,4- >"$WORK/got"
cmp "$WORK/expect" "$WORK/got"

# sequence never decreases across the merged output (pack gives each file's
# session end its last sequence + 1, which another file may also use)
sed 1d "$WORK/merged.csv" | cut -d, -f2 | awk 'NR > 1 && $1 < prev { exit 1 } { prev = $1 }'
test "$(grep -c session_start "$WORK/merged.csv")" = 3
test "$(grep -c session_end "$WORK/merged.csv")" = 3
