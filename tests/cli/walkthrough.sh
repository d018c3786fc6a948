# Seed 000's synthetic walkthrough, packed, dumps exactly as its illustrative
# CSV rows (mov eax, 7 at 0x140001000; add eax, 1; cpu 3; sequence 10, 11).
set -eu
. tests/lib/need.sh
need_cmd perl "building the raw records"

perl -e 'binmode STDOUT;
	print pack("Q<21", 10, 1000, 0x140001005, 0x202, 0x12345000, 7, (0) x 15);
	print pack("Q<21", 11, 1010, 0x140001008, 0x202, 0x12345000, 8, (0) x 15);' >"$WORK/walk.raw"
"$BIN/svmtrace-dump" pack --cpu 3 "$WORK/walk.raw" "$WORK/walk.v5"
"$BIN/svmtrace-dump" dump "$WORK/walk.v5" 2 >"$WORK/walk.csv"
cat >"$WORK/seed.csv" <<'ROWS'
cpu,sequence,kind,rip,rflags,cr3,reason
3,10,session_start,0x140001005,0x202,0x12345000,0
3,11,instruction,0x140001008,0x202,0x12345000,0
ROWS
diff "$WORK/seed.csv" "$WORK/walk.csv"
# without the limit, pack's session end follows
"$BIN/svmtrace-dump" dump "$WORK/walk.v5" | tail -n 1 | grep -qx '3,12,session_end,0x140001008,0x202,0x12345000,0'
# and the RAX the CSV does not show is in the record: 7, then 8
"$BIN/svmtrace-dump" dump --regs "$WORK/walk.v5" 2 | cut -d, -f8 | tr '\n' ' ' | grep -qx 'rax 0x7 0x8 '
