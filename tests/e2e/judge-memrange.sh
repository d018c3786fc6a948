# Sourced by e2e.sh after judge-mem.sh: what a user of the --mem captures
# (l1-mem.sh) sees of them.  Uses e2e.sh's ok/bad, $run, $here, $top, $bin.
#
#   - memops decrypts a buffer: `dump --mem --mem-range` over it shows its
#     eight dword stores, in order, and their bytes are the plaintext
#     memops.S says (its comment; the cipher XOR 0x5a reads back as it).
#   - strcmp does what a password check does with string instructions:
#     `dump --mem --mem-range` over its three strings shows every byte each
#     iteration of REPNE SCASB, REPE CMPSB and REP MOVSB read and wrote, in
#     order, as the strings' bytes and the instructions' definitions say
#     (SCASB reads [RDI]; CMPSB reads [RSI] and [RDI], REPE stops after the
#     first pair that differs; MOVSB reads [RSI] and writes [RDI]; each
#     iteration is one step).  The model replays no string instruction:
#     this expectation is written from the program's data alone.
#   - The Tenet export of the memops capture, read back by the reader
#     written from Tenet's description (tests/cli/analysis/read_tenet.py),
#     carries on each line exactly the model's accesses of that record
#     (mr= the bytes read, mw= the bytes written, both for a
#     read-modify-write).
#   - Its x64dbg export, read back by the reader written from x64dbg's
#     specification (read_x64dbg.py), carries in each block the model's
#     accesses of that block's instruction as x64dbg's 8-byte pieces, and
#     counts on stderr those whose bytes the trace does not hold.

# memrange_rows NAME LO HI: the mem column of each row dump --mem-range
# keeps of NAME's capture (vCPU 0), one per line; empty on failure.
memrange_rows() {
	"$bin/svmtrace-dump" dump --mem --mem-range "$2-$3" \
		"$run/l1/mem/$1/trace/svmtrace_trace_cpu0.bin" 2>"$run/l1/mem/$1/range.err" |
		awk -F, 'NR == 1 { if ($NF != "mem") exit 1; next } { print $NF }'
}

judge_memrange_decrypt() {
	# memops.S: plain is page 1 + 32 (after the 32-byte cipher), USER_VA 0x400000.
	got=$(memrange_rows memops 0x401020 0x401040)
	want=$(python3 - "$got" <<'PY'
import sys
rows = sys.argv[1].split("\n")
text = b"svmtrace decrypted this buffer!!"
want = ["w:0x%x:4:%s" % (0x401020 + 4 * i, text[4 * i:4 * i + 4].hex()) for i in range(8)]
print("ok" if rows == want else "want " + " ".join(want))
PY
)
	if [ "$want" = ok ]; then
		ok mem/range/decrypt "dump --mem-range over memops' buffer: its 8 stores in order, reading \"svmtrace decrypted this buffer!!\""
	else
		bad mem/range/decrypt "dump --mem-range 0x401020-0x401040 shows $(echo "$got" | tr '\n' ' ')$(cat "$run/l1/mem/memops/range.err"); $want"
	fi
}

judge_memrange_strcmp() {
	# strcmp.S: typed at page 1, secret at + 0x20, copy at + 0x40.
	memrange_rows strcmp 0x401000 0x401050 >"$run/l1/mem/strcmp/range.got"
	if out=$(python3 - "$run/l1/mem/strcmp/range.got" 2>&1 <<'PY'
import sys
typed, secret = b"hello, wxrld\0", b"hello, world"
T, S, C = 0x401000, 0x401020, 0x401040
r = lambda a, b: "r:0x%x:1:%02x" % (a, b)
w = lambda a, b: "w:0x%x:1:%02x" % (a, b)
want = [[r(T + i, typed[i])] for i in range(13)]              # REPNE SCASB up to the NUL
n = next(i for i in range(12) if typed[i] != secret[i]) + 1   # REPE CMPSB: up to the difference
want += [[r(T + i, typed[i]), r(S + i, secret[i])] for i in range(n)]
want += [[r(S + i, secret[i]), w(C + i, secret[i])] for i in range(12)]  # REP MOVSB
want += [[r(S + i, secret[i]), r(C + i, secret[i])] for i in range(12)]  # REPE CMPSB, all equal
got = [sorted(l.split()) for l in open(sys.argv[1]).read().splitlines()]
want = [sorted(x) for x in want]
for i, (g, x) in enumerate(zip(got, want)):
    if g != x:
        sys.exit("row %d of the range: %s, the strings say %s" % (i, " ".join(g), " ".join(x)))
if len(got) != len(want):
    sys.exit("%d rows, the strings say %d" % (len(got), len(want)))
print("%d rows, %d accesses" % (len(got), sum(map(len, got))))
PY
); then
		ok mem/range/strcmp "dump --mem-range over strcmp's strings: every SCASB, CMPSB and MOVSB iteration's bytes, in order ($out)"
	else
		bad mem/range/strcmp "${out:-no rows} $(cat "$run/l1/mem/strcmp/range.err")"
	fi
}

# judge_memrange_export FORMAT READER-OPTIONS WHAT: memops' export in
# FORMAT, read back by the reader written from that format's description
# (tests/cli/analysis/read_FORMAT.py), against the model's accesses
# (tests/e2e/lib/memexport.py says how each format places them).
judge_memrange_export() {
	d=$run/l1/mem/memops
	f=$d/export.$1
	# shellcheck disable=SC2086
	if ! "$bin/svmtrace-dump" export --format "$1" --out "$f" \
		"$d/trace/svmtrace_trace_cpu0.bin" >"$f.txt" 2>"$f.err" ||
		! python3 "$top/tests/cli/analysis/read_$1.py" $2 "$f" >"$f.json" 2>>"$f.txt"; then
		bad "mem/$1" "export --format $1 or its read-back failed: $(cat "$f.err" "$f.txt" | tr '\n' ';')"
		return
	fi
	if out=$(python3 "$top/tests/e2e/lib/memexport.py" "$1" "$f.json" "$d/cpu0.csv" \
		"$run/expect/memops/expected_mem_cpu0.csv" "$f.err" 2>&1); then
		ok "mem/$1" "memops' $1 export read back: $3 ($out)"
	else
		bad "mem/$1" "$out"
	fi
}

judge_memrange_set() {
	judge_memrange_decrypt
	judge_memrange_strcmp
	judge_memrange_export tenet --mem "every line's mr=/mw= entries are the model's accesses"
	judge_memrange_export x64dbg "" "every block's memory entries are its instruction's accesses as the model made them, in 8-byte pieces, those left out counted"
}
