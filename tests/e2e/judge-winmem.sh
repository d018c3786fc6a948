# Sourced by libvirt.sh: svmtraced --mem on the Windows-layout guest, run
# as users run it (svmtraced --domain through libvirtd, l1-libvirt.sh).
# Uses lib/judge.sh's ok/bad, $cap, $win, $bin, $here, $top.
#
# Oracle: the reference model's log of every data access of each record
# (expected_mem_cpuN.csv, as judge-mem.sh describes), for the records of
# the same trace (model_win); each model record's thread is the builder's
# (winmem.py).

# win_mem_verdicts CHECK VERDICTS: one check per line of winmem.py's output.
win_mem_verdicts() {
	[ -s "$2" ] || bad "$1" "winmem.py gave no verdict"
	while IFS='|' read -r verdict what msg; do
		if [ "$verdict" = ok ]; then ok "$1/$what" "$msg"
		elif [ "$verdict" = bad ]; then bad "$1/$what" "$msg"
		else bad "$1" "winmem.py: $verdict $what $msg"; fi
	done <"$2"
}

# judge_win_mem NAME IMAGE EXPECT THREADS: per thread (the tid svmtraced's
# capture.json gives each record, dump --threads), every record carries
# exactly the model's accesses of that instruction (compared as sets: the
# model logs in its interpreter's order) and the trace has the model's
# records of that thread, no more; at least THREADS threads have records.
judge_win_mem() {
	d=$cap/$1
	if ! "$bin/svmtrace-dump" dump --threads --mem "$d/trace/svmtrace_trace_cpu0.bin" \
		>"$d/mem.csv" 2>"$d/mem.err"; then
		bad "capture/$1/mem" "svmtrace-dump dump --threads --mem: $(cat "$d/mem.err")"
		return
	fi
	python3 "$here/winmem.py" dump "$d/mem.csv" "$3" "$win/$2" "$4" >"$d/mem.verdicts" 2>&1
	win_mem_verdicts "capture/$1/mem" "$d/mem.verdicts"
}

# judge_win_mem_tenet NAME IMAGE EXPECT: the Tenet export of the capture
# (judge_win_analysis wrote it: one file per thread), read back by the
# independent reader with its memory entries: each thread's lines carry
# the model's accesses of that thread's records.
judge_win_mem_tenet() {
	d=$cap/$1
	for f in "$d"/trace.tenet.*; do
		case $f in *.json) continue ;; esac
		[ -e "$f" ] || continue
		python3 "$top/tests/cli/analysis/read_tenet.py" --mem "$f" >"$d/tenet-mem${f##*/trace.tenet}.json" \
			2>>"$d/tenet-mem.err" ||
			bad "capture/$1/tenet-mem" "read_tenet.py --mem $f: $(tail -n 1 "$d/tenet-mem.err")"
	done
	python3 "$here/winmem.py" tenet "$d" "$3" "$win/$2" >"$d/tenet-mem.verdicts" 2>&1
	win_mem_verdicts "capture/$1/tenet-mem" "$d/tenet-mem.verdicts"
}

# judge_win_memrange NAME PID IMAGE-NAME: what a user does next: finds the
# buffer alpha.exe's worker thread decrypts (its export "plain", in
# capture.json's module list) and runs `dump --mem-range` over it: its 8
# dword stores in order, reading the plaintext proc.S says, then the 8
# loads of the memcmp that checks it.
judge_win_memrange() {
	d=$cap/$1
	lo=$(python3 -c 'import json, sys
cap = json.load(open(sys.argv[1]))
p = next(p for p in cap["processes"] if p["pid"] == int(sys.argv[2]))
m = next(m for m in p["modules"] if m["name"].lower() == sys.argv[3])
print(hex(int(m["base"], 16) + int(next(e["rva"] for e in m["exports"] if e["name"] == "plain"), 16)))' \
		"$d/trace/capture.json" "$2" "$3" 2>"$d/range.err")
	if [ -z "$lo" ]; then
		bad "capture/$1/mem-range" "no export plain of $3 in capture.json: $(tail -n 1 "$d/range.err")"
		return
	fi
	"$bin/svmtrace-dump" dump --mem-range "$lo-$((lo + 32))" "$d/trace/svmtrace_trace_cpu0.bin" \
		>"$d/range.csv" 2>"$d/range.err"
	if out=$(python3 - "$d/range.csv" "$lo" 2>&1 <<'PY'
import csv, sys
rows = [r["mem"].split() for r in csv.DictReader(open(sys.argv[1]))]
lo, text = int(sys.argv[2], 16), b"svmtrace: the worker decrypted!!"
want = [["w:0x%x:4:%s" % (lo + 4 * i, text[4 * i:4 * i + 4].hex())] for i in range(8)]
want += [["r:0x%x:4:%s" % (lo + 4 * i, text[4 * i:4 * i + 4].hex())] for i in range(8)]
if rows != want:
    sys.exit("rows %s, proc.S says %s" % (rows, want))
print("%d rows" % len(rows))
PY
); then
		ok "capture/$1/mem-range" "dump --mem-range over $3's export plain ($lo, 32 bytes): the worker's 8 stores in order, reading \"svmtrace: the worker decrypted!!\", then the memcmp's 8 loads ($out)"
	else
		bad "capture/$1/mem-range" "$out $(cat "$d/range.err")"
	fi
}

# judge_win_memstats NAME: svmtrace-dump stats on svmtraced's file: its
# access counts by kind and its hottest written 64-byte blocks are what
# the records carry (this scenario's dump --mem, mem.csv; a block counts
# each write and read-modify-write touching it).
judge_win_memstats() {
	d=$cap/$1
	if ! "$bin/svmtrace-dump" stats "$d/trace/svmtrace_trace_cpu0.bin" >"$d/stats.txt" 2>&1; then
		bad "capture/$1/mem-stats" "svmtrace-dump stats: $(tail -n 2 "$d/stats.txt" | tr '\n' ' ')"
		return
	fi
	if out=$(python3 - "$d/mem.csv" "$d/stats.txt" 2>&1 <<'PY'
import collections, csv, re, sys
kinds, blocks = collections.Counter(), collections.Counter()
for r in csv.DictReader(open(sys.argv[1])):
    for a in r["mem"].split():
        f = a.split(":")
        kinds[f[0]] += 1
        if f[0] in ("w", "rw"):
            addr, size = int(f[1], 16), int(f[2])
            for b in range(addr & ~63, addr + size, 64):
                blocks[b] += 1
text = open(sys.argv[2]).read()
m = re.search(r"^memory accesses: (\d+) \((\d+) reads, (\d+) writes, (\d+) rmw, (\d+) unrecorded\)$", text, re.M)
if not m:
    sys.exit("no 'memory accesses:' line")
want = [sum(kinds.values()), kinds["r"], kinds["w"], kinds["rw"], kinds["u"]]
if [int(x) for x in m.groups()] != want:
    sys.exit("stats says %s, the records (total r w rw u) %s" % (m.group(0), want))
listed = re.search(r"^hottest written regions \(64-byte blocks\):\n((?:  .*\n)*)", text, re.M)
top = [(int(a, 16), int(n)) for a, n in re.findall(r"^  0x([0-9a-f]+) +(\d+)", listed.group(1) if listed else "", re.M)]
if not top:
    sys.exit("no hottest written regions")
for a, n in top:
    if blocks[a] != n:
        sys.exit("block 0x%x: stats says %d writes, the records %d" % (a, n, blocks[a]))
if top[0][1] != max(blocks.values()):
    sys.exit("the hottest block has %d writes, stats lists %d first" % (max(blocks.values()), top[0][1]))
print("%s; %d blocks listed, hottest 0x%x with %d writes" % (m.group(0), len(top), top[0][0], top[0][1]))
PY
); then
		ok "capture/$1/mem-stats" "svmtrace-dump stats as the records say: $out"
	else
		bad "capture/$1/mem-stats" "$out"
	fi
}
