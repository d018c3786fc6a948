# Sourced by test scripts: raw step streams for pack/dump tests, in $WORK.
# make_streams STEPS RANDOM: ptrace.raw (STEPS states of a real `sort -n`
# single-stepped with ptrace), synth.raw (STEPS states of a synthetic loop)
# and random.raw (RANDOM records, every field random, sequence increasing).
make_streams() {
	awk 'BEGIN { srand(3); for (i = 0; i < 3000; i++) print int(rand() * 100000) }' >"$WORK/numbers"
	"$BIN/svmtrace-steprec" -n "$1" -o "$WORK/ptrace.raw" -- sort -n "$WORK/numbers" >/dev/null
	"$BIN/svmtrace-synth-raw" "$1" >"$WORK/synth.raw"
	perl -e 'srand(5); binmode STDOUT; my $seq = 1;
		for (1 .. $ARGV[0]) {
			$seq += 1 + int(rand(3));
			print pack("Q<21", $seq, map { int(rand(2**32)) * 2**32 + int(rand(2**32)) } 1 .. 20);
		}' "$2" >"$WORK/random.raw"
}
