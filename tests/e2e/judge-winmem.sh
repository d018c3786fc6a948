# Sourced by libvirt.sh: svmtraced --mem on the Windows-layout guest, run
# as users run it (svmtraced --domain through libvirtd, l1-libvirt.sh).
# Uses lib/judge.sh's ok/bad, $cap, $win, $bin.
#
# Oracle: the reference model's log of every data access of each record
# (expected_mem_cpuN.csv, as judge-mem.sh describes), for the records of
# the same trace (model_win).  The thread of a model record is the
# builder's (IMAGE.threads): its TEB, the model's GS base, in the process
# whose DTB is the model's CR3 (IMAGE.targets).

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
	python3 - "$d/mem.csv" "$3/expected_mem_cpu0.csv" "$3/expected_cpu0.csv" \
		"$win/$2.targets" "$win/$2.threads" "$4" >"$d/mem.verdicts" 2>&1 <<'PY' ||
import csv, sys
got_csv, model_mem, model_rec, targets, threads, min_threads = sys.argv[1:]
pid_of_dtb = {}
for line in open(targets):
    f = line.split()
    for dtb in f[2:4]:
        if int(dtb, 16):
            pid_of_dtb[int(dtb, 16) & ~0xfff] = int(f[1])
tid_of = {}
for line in open(threads):
    name, pid, tid, teb, how = line.split()
    tid_of[(int(pid), int(teb, 16))] = int(tid)
accesses = {}
for row in open(model_mem).read().splitlines()[1:]:
    index, _, mem = row.partition(",")
    accesses[int(index)] = sorted(mem.split())
want, got = {}, {}
for i, r in enumerate(csv.DictReader(open(model_rec))):
    if r["kind"] == "session_end":
        continue
    tid = tid_of[(pid_of_dtb[int(r["cr3"], 16) & ~0xfff], int(r["gs_base"], 16))]
    want.setdefault(tid, []).append((i, accesses.get(i, [])))
for i, r in enumerate(csv.DictReader(open(got_csv))):
    if r["kind"] == "session_end":
        continue
    got.setdefault(int(r["tid"]) if r["tid"] else None, []).append((i, sorted(r["mem"].split())))
for tid in sorted(set(want) | set(got), key=str):
    w, g = want.get(tid, []), got.get(tid, [])
    bad = next(((a, b) for a, b in zip(w, g) if a != b), None)
    if bad:
        print("bad|tid %s|the thread's record at row %d carries %s; the model's, at row %d, %s" % (
            tid, bad[1][0], " ".join(bad[1][1]) or "no access", bad[0][0], " ".join(bad[0][1]) or "no access"))
    elif len(w) != len(g):
        print("bad|tid %s|%d records, the model has %d" % (tid, len(g), len(w)))
    else:
        n = [a.split(":")[0] for _, acc in g for a in acc]
        print("ok|tid %s|%d records, their %d accesses (%d reads, %d writes, %d read-modify-writes) equal the model's" % (
            tid, len(g), len(n), n.count("r"), n.count("w"), n.count("rw")))
if len(want) < int(min_threads):
    print("bad|threads|the model ran %d threads, the scenario needs %s" % (len(want), min_threads))
PY
		bad "capture/$1/mem" "the judge failed: $(tail -n 3 "$d/mem.verdicts" | tr '\n' ' ')"
	while IFS='|' read -r verdict what msg; do
		if [ "$verdict" = ok ]; then ok "capture/$1/mem/${what#tid }" "$msg"
		else bad "capture/$1/mem/${what#tid }" "$msg"; fi
	done <"$d/mem.verdicts"
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
