#!/bin/sh
# Regenerate the named seeds of fuzz_trace_reader's committed corpus: small
# valid files covering every record kind and frame mode, and broken ones.
# Run from the repository root after `make`.  The files named by a hash
# beside them are what fuzzing found (minimised with `-merge=1`); they reach
# the reader's error paths, so `make check` replays them too.
set -eu
BIN=build/bin
C=tests/fuzz/corpus/fuzz_trace_reader
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
mkdir -p "$C"

perl -e 'binmode STDOUT;
	print pack("Q<21", 10, 1000, 0x140001005, 0x202, 0x12345000, 7, (0) x 15);
	print pack("Q<21", 11, 1010, 0x140001008, 0x202, 0x12345000, 8, (0) x 15);' >"$T/walk.raw"
$BIN/svmtrace-dump pack --raw --cpu 3 "$T/walk.raw" "$C/walkthrough-raw.v5"
$BIN/svmtrace-dump pack --cpu 3 "$T/walk.raw" "$C/walkthrough-lz4.v5"
$BIN/svmtrace-gap-trace "$C/gaps-sessions.v5"
$BIN/svmtrace-gap-trace --xstate "$C/gaps-ymm.v5"
$BIN/svmtrace-synth-raw 700 >"$T/loop.raw"
$BIN/svmtrace-dump pack --anchor-interval 1000 "$T/loop.raw" "$C/loop-predicted.v5"
$BIN/svmtrace-dump pack --raw --anchor-interval 2 "$T/loop.raw" "$T/loop2.v5"
head -c 3000 "$T/loop2.v5" >"$C/loop-truncated.v5"
perl -e 'srand(5); binmode STDOUT; my $seq = 1;
	for (1 .. 40) {
		$seq += 1 + int(rand(3));
		print pack("Q<21", $seq, map { int(rand(2**32)) * 2**32 + int(rand(2**32)) } 1 .. 20);
	}' >"$T/random.raw"
$BIN/svmtrace-dump pack --lz4-level 0 "$T/random.raw" "$C/random-states.v5"
printf 'FTRC\005\000\000\000\000\000\000\000\001\000\000\000' >"$C/header-only.v5"
# docs/format.md's second worked frame: a session end with S, alone; and the
# same end without S, as writers before S could open a frame with it.
perl -e 'binmode STDOUT; print "FTRC", pack("V5", 5, 3, 1, 52, 52),
	pack("C Q< Q< V Q<", 0x0b, 12, 1010, 0, 0x140001008), "\x82\x04\x80\xa0\xd1\x91\x01\x08",
	"\0" x 15;' >"$C/end-with-state.v5"
perl -e 'binmode STDOUT; print "FTRC", pack("V5", 5, 3, 1, 29, 29),
	pack("C Q< Q< V Q<", 0x03, 12, 1010, 0, 0x140001008);' >"$C/end-without-state.v5"
# An LZ4 block whose one match has offset 0 (docs/format.md: malformed, though
# liblz4's decoder accepts it): the walkthrough's records, 28 literals, a
# match of 14 zeros, 34 literals.
perl -e 'binmode STDOUT; print "FTRC", pack("V5", 5, 0, 1, 76, 68), pack("H*",
	"fa0d020ae803000000000000000510004001000000820480a0d1910107" . "00" . "0000" .
	"f0130c0601000203" . "0c00000000000000" . "f203000000000000" . "00000000" .
	"0810004001000000");' >"$C/lz4-offset-zero.v5"
# Memory operands: the model's decrypt program (LZ4), and random accesses of
# every kind with anchors every 64 records (raw frames).
python3 tests/cli/memprog.py "$T"
$BIN/svmtrace-dump pack --mem "$T/decrypt.mem" "$T/decrypt.raw" "$C/mem-decrypt.v5"
python3 tests/cli/memprog.py --random 400 9 "$T"
$BIN/svmtrace-dump pack --raw --anchor-interval 64 --mem "$T/random.mem" "$T/random.raw" \
	"$C/mem-random.v5"
ls -l "$C"
