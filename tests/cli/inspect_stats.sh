# inspect describes sessions, gaps and sizes; stats counts what ran.
set -eu
D="$BIN/svmtrace-dump"

# a lossy two-session capture (svmtrace-gap-trace documents its shape)
"$BIN/svmtrace-gap-trace" "$WORK/gap.v5"
$D inspect "$WORK/gap.v5" >"$WORK/inspect"
cat "$WORK/inspect"
grep -qx '  header:      v5, cpu 1, framed' "$WORK/inspect"
# Which instructions are full records is the writer's choice (docs/format.md,
# "What a reader may rely on"), so the anchor count is not pinned here: it
# must be what the reference decoder (written from the page alone) finds --
# instruction rows that carry a TSC -- and anchors + deltas the instructions.
. tests/lib/need.sh
need_cmd python3 "the reference decoder"
anchors=$(python3 tests/cli/refdecode.py --jsonl "$WORK/gap.v5" | grep '"kind":"instruction"' |
	grep -c '"tsc"')
test "$anchors" -ge 1	# at least the one after the loss of 37 (the other loss is at the end)
grep -qx "  records:     252: 2 session_start, 248 instruction ($anchors anchors, $((248 - anchors)) deltas), 2 session_end" \
	"$WORK/inspect"
grep -qx '  sequence:    1..292, 2 jumps skipping 40 numbers' "$WORK/inspect"
grep -qx '  gaps:        2 (40 records dropped by the producer)' "$WORK/inspect"
grep -qx '  sessions:    2' "$WORK/inspect"
grep -qx '    #1: sequence 1..238, 201 records, gate 4, end: cr3' "$WORK/inspect"
grep -qx '    #2: sequence 239..292, 51 records, gate 9, end: stop' "$WORK/inspect"
# frame cuts and compression are the writer's choice too: only their sum is checked
frames=$(sed -n 's/^  frames:      \([0-9]*\) (\([0-9]*\) LZ4, \([0-9]*\) raw).*/\1 \2 \3/p' "$WORK/inspect")
set -- $frames
test "$#" = 3 && test "$1" -ge 1 && test "$1" = "$(($2 + $3))"
# the records after the losses carry them in JSON lines
$D dump --format jsonl "$WORK/gap.v5" | grep -c '"dropped":37' | grep -qx 1
$D dump --format jsonl "$WORK/gap.v5" | tail -n 1 | grep -q '"kind":"session_end".*"dropped":3'

# a synthetic loop of 37 instructions, 37000 times
"$BIN/svmtrace-synth-raw" 37000 >"$WORK/loop.raw"
$D pack --raw "$WORK/loop.raw" "$WORK/loop.v5"
$D inspect "$WORK/loop.v5" | grep -q '^  frames:      [0-9]* (0 LZ4, [0-9]* raw)'
$D stats --top 3 "$WORK/loop.v5" >"$WORK/stats"
cat "$WORK/stats"
grep -qx 'instructions: 37000' "$WORK/stats"
grep -qx 'sessions: 1' "$WORK/stats"
grep -qx 'unique RIPs: 37' "$WORK/stats"
grep -qx 'unique pages: 1' "$WORK/stats"
test "$(sed -n '/^hottest RIPs/,/^hottest pages/p' "$WORK/stats" | grep -c '  1000   ')" = 3
# the synthetic body adds pc to gpr[pc % 8] and moves rsi once more: per 37
# steps rsi changes 6 times, rsp 4 times, r8..r15 never
grep -q '^  rsi  *6000 ' "$WORK/stats"
grep -q '^  rsp  *4000 ' "$WORK/stats"
grep -q '^  r15  *0 ' "$WORK/stats"
