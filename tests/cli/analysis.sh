# The analysis commands on a small program whose every step is known
# (tests/cli/analysis/sample.py writes its raw states, capture.json with
# modules and exports, code.bin with a page that changes mid-trace, and an
# ISF file for ntdll): dump --symbols (automatic, and with --symbols DIR),
# dump --disasm, stats by module, the call tree, and each export format
# read back by a reader written from that format's published description
# (tests/cli/analysis/read_*.py), never by our writer's code.
set -eu
. tests/lib/need.sh
need_cmd python3 "the sample program and the independent format readers"

D="$BIN/svmtrace-dump"
A=tests/cli/analysis
S=$WORK/s
mkdir -p "$S"
python3 $A/sample.py "$S"
"$D" pack "$S/raw" "$S/svmtrace_trace_cpu0.bin"
T=$S/svmtrace_trace_cpu0.bin
n=$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["states"]))' "$S/expect.json")

# Symbols are automatic when capture.json is beside the trace.
"$D" dump "$T" >"$WORK/sym.csv"
head -n 1 "$WORK/sym.csv" | grep -qx 'cpu,sequence,kind,rip,rflags,cr3,reason,symbol'
python3 $A/check.py symbols "$S" "$WORK/sym.csv"
grep -q ',hidden.exe!main+0x5$' "$WORK/sym.csv"
grep -q ',ntdll.dll!NtYield$' "$WORK/sym.csv"
# ... and off on request; the plain columns are unchanged.
"$D" dump --no-symbols "$T" | head -n 1 | grep -qx 'cpu,sequence,kind,rip,rflags,cr3,reason'
# ISF files give names where exports do not.
"$D" dump --symbols "$S/isf" "$T" >"$WORK/isf.csv"
python3 $A/check.py isf "$S" "$WORK/isf.csv"
grep -q ',ntdll.dll!KiUserReturn$' "$WORK/isf.csv"
# JSON lines carry the same.
"$D" dump --format jsonl --disasm "$T" 3 | python3 -c '
import json, sys
rows = [json.loads(l) for l in sys.stdin]
assert rows[0]["symbol"] == "hidden.exe!main+0x5" and rows[0]["disasm"] == "mov rax, 5", rows[0]'

# Disassembly from code.bin, the changed page's new bytes from its sequence on.
"$D" dump --disasm "$T" >"$WORK/dis.csv"
python3 $A/check.py disasm "$S" "$WORK/dis.csv"
grep -q '"add rax, 1"' "$WORK/dis.csv"
grep -q '"add rax, 2"' "$WORK/dis.csv"
grep -q '"(bytes missing: page not in code.bin)"' "$WORK/dis.csv"
# Without code.bin, every instruction says its bytes are missing (and why).
mkdir "$WORK/nocode"
cp "$T" "$S/capture.json" "$WORK/nocode/"
"$D" dump --disasm "$WORK/nocode/svmtrace_trace_cpu0.bin" 2 2>"$WORK/nocode.err" | grep -q '"(bytes missing: no code.bin)"'
grep -q 'no code.bin there' "$WORK/nocode.err"
# A damaged code.bin is refused with its name and offset.
head -c 100 "$S/code.bin" >"$WORK/bad.bin"
if "$D" dump --disasm --code "$WORK/bad.bin" "$T" >/dev/null 2>"$WORK/bad.err"; then
	echo "a truncated code.bin was accepted"; exit 1
fi
grep -q 'bad.bin: offset 16: the last page entry is incomplete' "$WORK/bad.err"
# --symbols without a capture.json is an error, not silence.
if "$D" dump --symbols "$WORK/nocode/../bad.bin" >/dev/null 2>&1; then exit 1; fi
mkdir "$WORK/bare" && cp "$T" "$WORK/bare/"
if "$D" dump --symbols "$WORK/bare/svmtrace_trace_cpu0.bin" >/dev/null 2>"$WORK/bare.err"; then
	echo "--symbols without capture.json succeeded"; exit 1
fi
grep -q 'no capture.json there' "$WORK/bare.err"

# stats by module and by function.
"$D" stats "$T" >"$WORK/stats.txt"
loops=200
python3 - "$S/expect.json" "$WORK/stats.txt" <<'PY'
import json, re, sys
exp = json.load(open(sys.argv[1]))
text = open(sys.argv[2]).read()
n = {'hidden.exe': 0, 'ntdll.dll': 0}
for s in exp['states']:
    n['ntdll.dll' if s[0] >= 0x7FFB00000000 else 'hidden.exe'] += 1
for mod, c in n.items():
    if not re.search(r'^  %s +%d ' % (re.escape(mod), c), text, re.M):
        sys.exit('stats: %s should count %d instructions:\n%s' % (mod, c, text))
for f in ('hidden.exe!main', 'hidden.exe!helper', 'ntdll.dll!NtYield'):
    assert re.search(r'^  %s +\d+ ' % re.escape(f), text, re.M), f
PY

# The call tree: 200 calls of each callee, two instructions inside each call.
"$D" calltree "$T" >"$WORK/tree.txt"
grep -Eq "^ +$loops +$((2 * loops)) +$((2 * loops))    hidden.exe!helper\$" "$WORK/tree.txt" ||
	{ echo "calltree: helper"; cat "$WORK/tree.txt"; exit 1; }
grep -Eq "^ +$loops +$((2 * loops)) +$((2 * loops))    ntdll.dll!NtYield\$" "$WORK/tree.txt" ||
	{ echo "calltree: NtYield"; cat "$WORK/tree.txt"; exit 1; }
grep -Eq "^ +1 +$n +1202  hidden.exe!main\$" "$WORK/tree.txt" ||
	{ echo "calltree: root"; cat "$WORK/tree.txt"; exit 1; }

# Exports, each read back by an independent reader.
"$D" export --format drcov --out "$WORK/t.drcov" "$T"
python3 $A/read_drcov.py "$WORK/t.drcov" >"$WORK/drcov.json"
python3 $A/check.py drcov "$S" "$WORK/drcov.json"
"$D" export --format tenet "$T" >"$WORK/t.tenet"
python3 $A/read_tenet.py "$WORK/t.tenet" >"$WORK/tenet.json"
python3 $A/check.py tenet "$S" "$WORK/tenet.json"
"$D" export --format x64dbg --out "$WORK/t.trace64" "$T"
python3 $A/read_x64dbg.py "$WORK/t.trace64" >"$WORK/x64dbg.json"
python3 $A/check.py x64dbg "$S" "$WORK/x64dbg.json"
# x64dbg's memory entries: a trace of known accesses (x64dbg_vector.py: a
# read, stores of 4, 32 and 1 bytes, read-modify-writes of 8 and 2, reads of
# 16, 32 and 1, unrecorded ones, an instruction of 64 pieces) against the
# entries the specification demands, and the count of those left out.
X=$WORK/x64
mkdir -p "$X"
python3 $A/x64dbg_vector.py "$X"
"$D" pack --mem "$X/x64.mem" "$X/x64.raw" "$X/x64.v5"
"$D" export --format x64dbg --out "$X/t.trace64" "$X/x64.v5" 2>"$X/err"
python3 $A/read_x64dbg.py "$X/t.trace64" >"$X/got.json"
"$D" pack "$X/x64.raw" "$X/plain.v5"
"$D" export --format x64dbg --out "$X/plain.trace64" "$X/plain.v5" 2>"$X/plain.err"
python3 $A/read_x64dbg.py "$X/plain.trace64" >"$X/plain.json"
python3 - "$X/got.json" "$X/x64.expect.json" "$X/err" "$X/plain.json" "$X/plain.err" <<'PY'
import json, sys
got = json.load(open(sys.argv[1]))["blocks"]
exp = json.load(open(sys.argv[2]))
plain = json.load(open(sys.argv[4]))["blocks"]
assert len(got) == exp["records"], "%d blocks, %d records" % (len(got), exp["records"])
for i, b in enumerate(got):
    want = exp["blocks"].get(str(i), [])
    assert b["mem"] == want, "block %d: %s, the specification says %s" % (i, b["mem"], want)
err = open(sys.argv[3]).read().splitlines()
assert err == [exp["stderr"]], "stderr %s, want %s" % (err, exp["stderr"])
# Without memory operands: the same blocks, no entries, nothing said.
for b, p in zip(got, plain):
    b["mem"] = []
assert got == plain, "the blocks differ from the trace without memory operands"
assert open(sys.argv[5]).read() == "", "export without memory operands complained"
PY
# Usage errors.
if "$D" export "$T" 2>/dev/null; then echo "export without --format"; exit 1; fi
if "$D" export --format tenet "$T" "$T" 2>/dev/null; then echo "tenet of two files"; exit 1; fi
echo "analysis: ok"
