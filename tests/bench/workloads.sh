# Sourced by the trace benchmarks (trace.sh, mem.sh): the workloads, real
# programs single-stepped with ptrace by svmtrace-steprec -- a numeric sort,
# a Perl interpreter loop, SHA-256 over a file, BLAKE2b (b2sum) and gzip -6
# over text.  record_workloads [STEPREC OPTION...] writes $OUT/NAME.raw for
# each (and NAME.raw.mem with --mem), $RECORDS records, unless already there.
WORKLOADS="sort perl sha b2 gzip"

record_workloads() {
	awk 'BEGIN { srand(7); for (i = 0; i < 40000; i++) print int(rand() * 1000000) }' >"$OUT/numbers"
	head -c 4000000 /dev/urandom >"$OUT/blob"
	_done=.raw
	[ "${1:-}" = --mem ] && _done=.raw.mem
	_record sort "$@" -- sort -n "$OUT/numbers"
	_record perl "$@" -- perl -e 'my %h; $h{"k$_"} = $_ * 7 % 1000 for 1 .. 50000; my $s = 0; $s += $_ for values %h; print "$s\n"'
	_record sha "$@" -- sha256sum "$OUT/blob"
	_record b2 "$@" -- b2sum "$OUT/blob"
	_record gzip "$@" -- gzip -6 -c "$OUT/numbers"
}

_record() {	# _record NAME [STEPREC OPTION...] -- COMMAND...
	_name=$1
	shift
	[ -s "$OUT/$_name$_done" ] && return 0
	"$BIN/svmtrace-steprec" -n "$RECORDS" -o "$OUT/$_name.raw" "$@" >/dev/null
}
