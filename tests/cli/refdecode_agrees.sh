# The reference decoder written from docs/format.md alone (refdecode.py, no
# code shared with libsvmtrace) must print exactly what `svmtrace-dump dump
# --regs` prints: every pack option (anchor intervals 1, 2, 64, 1000; raw,
# fast LZ4 and LZ4HC frames), lossy and YMM streams (CSV and JSONL), files
# whose first frame was removed, a session end that opens a frame (with S,
# and without S as writers before S made it), and files cut at every kind of
# place.  Where they disagree, the page or the library is wrong.
set -eu
. tests/lib/need.sh
. tests/lib/streams.sh
need_cmd python3 "the reference decoder written from docs/format.md (tests/cli/refdecode.py)"

REF="python3 tests/cli/refdecode.py"
DUMP="$BIN/svmtrace-dump"

# agree FILE [--jsonl]: same rows, and the same verdict (complete, truncated
# at the same offset, or rejected).
agree() {
	if [ "${2:-}" = --jsonl ]; then
		set +e
		"$DUMP" dump --format jsonl --regs "$1" >"$WORK/c.out" 2>"$WORK/c.err"
		c=$?
		$REF --jsonl "$1" >"$WORK/p.out" 2>"$WORK/p.err"
		p=$?
		set -e
	else
		set +e
		"$DUMP" dump --regs "$1" >"$WORK/c.out" 2>"$WORK/c.err"
		c=$?
		$REF "$1" >"$WORK/p.out" 2>"$WORK/p.err"
		p=$?
		set -e
	fi
	cmp -s "$WORK/c.out" "$WORK/p.out" ||
		{ echo "FAIL: $1 ${2:-}: rows differ"; diff "$WORK/c.out" "$WORK/p.out" | head -n 6; exit 1; }
	case "$c/$p" in
	0/0) ;;
	1/3)
		want=$(sed -n 's/.*truncated at offset \([0-9]*\).*/\1/p' "$WORK/c.err")
		grep -qx "truncated at offset $want" "$WORK/p.err" ||
			{ echo "FAIL: $1: C says '$(cat "$WORK/c.err")', reference '$(cat "$WORK/p.err")'"; exit 1; } ;;
	1/1)
		grep -q "truncated" "$WORK/c.err" &&
			{ echo "FAIL: $1: reference rejects what C reads as truncated: $(cat "$WORK/p.err")"; exit 1; }
		: ;;
	*) echo "FAIL: $1: exit $c (C) vs $p (reference): $(cat "$WORK/c.err" "$WORK/p.err")"; exit 1 ;;
	esac
}

# drop_first_frame IN OUT: the file header, then every frame but the first.
drop_first_frame() {
	python3 -c 'import struct, sys
d = open(sys.argv[1], "rb").read()
n = struct.unpack_from("<I", d, 20)[0]
open(sys.argv[2], "wb").write(d[:16] + d[24 + n:])' "$1" "$2"
}

make_streams 8000 6000

for stream in ptrace synth random; do
	for interval in 1 2 64 1000; do
		for mode in --raw "--lz4-level 0" "--lz4-level 2" "--lz4-level 12"; do
			f="$WORK/$stream-$interval.v5"
			# shellcheck disable=SC2086
			"$DUMP" pack --cpu 7 --anchor-interval $interval $mode "$WORK/$stream.raw" "$f"
			agree "$f"
		done
		drop_first_frame "$f" "$WORK/cut.v5"
		agree "$WORK/cut.v5"
	done
	agree "$f" --jsonl
	echo "ok: $stream x 4 intervals x 4 frame modes, and without its first frame"
done

# Lossy captures, with and without YMM state.
"$BIN/svmtrace-gap-trace" "$WORK/gap.v5"
"$BIN/svmtrace-gap-trace" --xstate "$WORK/gapx.v5"
for f in gap gapx; do
	agree "$WORK/$f.v5"
	agree "$WORK/$f.v5" --jsonl
done
"$BIN/svmtrace-gap-trace" --xstate-second "$WORK/gapx2.v5"
agree "$WORK/gapx2.v5"
agree "$WORK/gapx2.v5" --jsonl
echo "ok: lossy streams, with and without YMM (also from the second session on), CSV and JSONL"

# A session end that opens a frame: 1153 synthetic records at anchor interval
# 1 fill the first raw frame exactly, so pack's session end starts the second.
head -c $((1153 * 168)) "$WORK/synth.raw" >"$WORK/end.raw"
"$DUMP" pack --raw --anchor-interval 1 "$WORK/end.raw" "$WORK/end.v5"
python3 -c 'import struct, sys
d = open(sys.argv[1], "rb").read()
n = struct.unpack_from("<I", d, 20)[0]
assert len(d) > 24 + n + 8, "one frame only: the case is not reproduced"
assert d[24 + n + 8] == 0x0b, "the second frame opens with 0x%02x, not a session end with S" % d[24 + n + 8]' \
	"$WORK/end.v5"
agree "$WORK/end.v5"
drop_first_frame "$WORK/end.v5" "$WORK/end-alone.v5"
agree "$WORK/end-alone.v5"
tail -n 1 "$WORK/c.out" | grep -q '^0,1154,session_end,0x[0-9a-f]*,0x[0-9a-f]*,0x1aa000,0,0x' ||
	{ echo "FAIL: the frame-opening session end alone lost its state: $(tail -n 1 "$WORK/c.out")"; exit 1; }
# The same file as a writer before S made it: the end has no state in its
# frame, so both decoders print those fields empty, with or without frame 1.
python3 -c 'import struct, sys
d = open(sys.argv[1], "rb").read()
n = struct.unpack_from("<I", d, 20)[0]
o = 24 + n
end = b"\x03" + d[o + 9:o + 9 + 28]
open(sys.argv[2], "wb").write(d[:o] + struct.pack("<II", 29, 29) + end)' "$WORK/end.v5" "$WORK/old.v5"
for f in old.v5 old-alone.v5; do
	[ "$f" = old.v5 ] || drop_first_frame "$WORK/old.v5" "$WORK/$f"
	agree "$WORK/$f"
	agree "$WORK/$f" --jsonl
	tail -n 1 "$WORK/c.out" | grep -q '"rflags":null,"cr3":null' ||
		{ echo "FAIL: $f: unknown state not shown as null: $(tail -n 1 "$WORK/c.out")"; exit 1; }
done
echo "ok: a session end opening a frame, with S, alone, and without S (unknown state)"

# Files cut inside the file header, inside a frame header, inside an LZ4 and a
# raw payload, and exactly between frames.
"$DUMP" pack --anchor-interval 64 "$WORK/random.raw" "$WORK/lz4.v5"
for f in lz4 end; do
	for cut in $(python3 -c 'import struct, sys
d = open(sys.argv[1], "rb").read()
cuts, o = [5, 16, 20], 16
while o < len(d):
	n = struct.unpack_from("<I", d, o + 4)[0]
	cuts += [o + 3, o + 8, o + 8 + n // 2, o + 8 + n - 1, o + 8 + n]
	o += 8 + n
print(" ".join(str(c) for c in cuts[:20]))' "$WORK/$f.v5"); do
		head -c "$cut" "$WORK/$f.v5" >"$WORK/cut.v5"
		agree "$WORK/cut.v5"
	done
done
echo "ok: truncated files"

# An LZ4 block with a match offset of 0 (liblz4's decoder takes it): both reject it.
agree tests/fuzz/corpus/fuzz_trace_reader/lz4-offset-zero.v5
grep -q 'match offset 0' "$WORK/c.err" && grep -q 'match offset 0' "$WORK/p.err" ||
	{ echo "FAIL: LZ4 offset 0: $(cat "$WORK/c.err" "$WORK/p.err")"; exit 1; }
echo "ok: an LZ4 match offset of 0 is malformed"
