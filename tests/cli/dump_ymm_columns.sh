# dump --regs: when a CSV has YMM columns, and what happens to YMM state it
# has none for (docs/format.md, "What svmtrace-dump dump prints").
#   - the columns follow the first record of known state, not the first
#     record: a stream that opens with a session end whose frame holds no
#     state (a file whose first frame was lost, or an old writer's) still
#     shows the YMM state of the session after it;
#   - YMM state that comes only after that record (a stream whose first
#     session has none) has no column: dump says so and exits 1, and JSON
#     lines carry it.
set -eu
DUMP="$BIN/svmtrace-dump"

# Two raw frames, built from the spec: a session end without S (its frame
# holds no state), then a session start with X and a session end with S and
# X.  YMMi's 32 bytes are all i + 1.
python3 - "$WORK/late.v5" <<'PY'
import struct, sys
def varint(v):
    b = bytearray()
    while v >= 0x80:
        b.append(v & 0x7f | 0x80)
        v >>= 7
    return bytes(b + bytes([v]))
ymm = struct.pack("<Q", 7) + b"".join(bytes([i + 1]) * 32 for i in range(16))
gprs = b"".join(varint(i) for i in range(16))
end = b"\x03" + struct.pack("<QQIQ", 5, 100, 0, 0x401000)
start = (b"\x06" + varint(7) + struct.pack("<Q", 200) + varint(1) + struct.pack("<Q", 0x401003)
         + varint(0x202) + varint(0x1aa000) + gprs + ymm)
end2 = b"\x1b" + struct.pack("<QQIQ", 8, 300, 0, 0x401006) + varint(0x202) + varint(0x1aa000) + gprs + ymm
frame = lambda p: struct.pack("<II", len(p), len(p)) + p
open(sys.argv[1], "wb").write(b"FTRC" + struct.pack("<III", 5, 0, 1) + frame(end) + frame(start + end2))
PY
"$DUMP" dump --regs "$WORK/late.v5" >"$WORK/late.csv" ||
	{ echo "FAIL: dump of late.v5: exit $?"; exit 1; }
head -n 1 "$WORK/late.csv" | grep -q ',r15,xstate_bv,ymm0,.*,ymm15$' ||
	{ echo "FAIL: no YMM columns: $(head -n 1 "$WORK/late.csv")"; exit 1; }
awk -F, 'function ymm(b,  s, i) { for (i = 0; i < 32; i++) s = s b; return "0x" s }
	NR == 2 { ok = NF == 40 && $3 == "session_end" && $5 == "" && $24 == "" && $40 == "" }
	NR == 3 { ok = ok && $3 == "session_start" && $9 == "0x1" && $24 == "0x7" &&
		$25 == ymm("01") && $26 == ymm("02") && $40 == ymm("10") }
	NR == 4 { ok = ok && $3 == "session_end" && $24 == "0x7" && $40 == ymm("10") }
	END { exit !(ok && NR == 4) }' "$WORK/late.csv" ||
	{ echo "FAIL: late.v5's rows:"; cut -c1-200 "$WORK/late.csv"; exit 1; }
python3 tests/cli/refdecode.py "$WORK/late.v5" | cmp -s - "$WORK/late.csv" ||
	{ echo "FAIL: the reference decoder prints late.v5 otherwise"; exit 1; }
echo "ok: YMM columns follow the first record of known state"

"$BIN/svmtrace-gap-trace" --xstate-second "$WORK/second.v5"
set +e
"$DUMP" dump --regs "$WORK/second.v5" >"$WORK/second.csv" 2>"$WORK/second.err"
rc=$?
set -e
[ $rc = 1 ] && grep -q 'sequence 239 (cpu 1) has YMM state, but the CSV has no YMM columns' "$WORK/second.err" ||
	{ echo "FAIL: YMM state without columns: exit $rc, '$(cat "$WORK/second.err")'"; exit 1; }
[ "$(wc -l <"$WORK/second.csv")" = 253 ] && ! head -n 1 "$WORK/second.csv" | grep -q ymm ||
	{ echo "FAIL: second.v5: every row, no YMM column: $(head -n 1 "$WORK/second.csv")"; exit 1; }
"$DUMP" dump --regs --format jsonl "$WORK/second.v5" >"$WORK/second.jsonl"
[ "$(grep -c '"ymm":' "$WORK/second.jsonl")" = 51 ] ||
	{ echo "FAIL: JSON lines: $(grep -c '"ymm":' "$WORK/second.jsonl") records with YMM, want 51"; exit 1; }
echo "ok: YMM state with no column is an error in CSV, and JSON lines carry it"
