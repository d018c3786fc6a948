#!/usr/bin/env python3
# winmem.py: a --mem capture of the Windows-layout guest against the
# reference model's accesses, thread by thread (judge-winmem.sh).
#   winmem.py dump MEM.CSV EXPECT IMAGE MIN-THREADS
#       MEM.CSV: svmtrace-dump dump --threads --mem of the trace; every
#       thread (its tid in the trace) has exactly the model's records of
#       that thread, each carrying the model's accesses (as sets); the model
#       ran at least MIN-THREADS threads
#   winmem.py tenet DIR EXPECT IMAGE
#       DIR/tenet-mem.PID.TID.json: the per-thread Tenet files
#       (trace.tenet.PID.TID) read back with read_tenet.py --mem; each line's mr=/mw= entries are the
#       model's accesses of that thread's record (a read-modify-write is an
#       mr and an mw)
# EXPECT: the model's expected_cpu0.csv and expected_mem_cpu0.csv; IMAGE:
# the builder's IMAGE.targets and IMAGE.threads.  A model record's thread
# is the builder's: the process whose DTB is its CR3, the thread whose TEB
# is its GS base.  Prints ok|WHAT|TEXT or bad|WHAT|TEXT lines.
import csv, glob, json, os, sys


def model_threads(expect, image):
    """{(pid, tid): [(row, sorted accesses)]} of the model's records."""
    pid_of_dtb, tid_of = {}, {}
    for line in open(image + ".targets"):
        f = line.split()
        for dtb in f[2:4]:
            if int(dtb, 16):
                pid_of_dtb[int(dtb, 16) & ~0xfff] = int(f[1])
    for line in open(image + ".threads"):
        name, pid, tid, teb, how = line.split()
        tid_of[(int(pid), int(teb, 16))] = int(tid)
    accesses = {}
    for row in open(expect + "/expected_mem_cpu0.csv").read().splitlines()[1:]:
        index, _, mem = row.partition(",")
        accesses[int(index)] = sorted(mem.split())
    threads = {}
    for i, r in enumerate(csv.DictReader(open(expect + "/expected_cpu0.csv"))):
        if r["kind"] == "session_end":
            continue
        pid = pid_of_dtb[int(r["cr3"], 16) & ~0xfff]
        threads.setdefault((pid, tid_of[(pid, int(r["gs_base"], 16))]), []).append(
            (i, accesses.get(i, [])))
    return threads


def kinds(accesses):
    n = [a.split(":")[0] for a in accesses]
    return "%d accesses (%d reads, %d writes, %d read-modify-writes)" % (
        len(n), n.count("r"), n.count("w"), n.count("rw"))


def judge_dump(mem_csv, expect, image, min_threads):
    want = {tid: rows for (pid, tid), rows in model_threads(expect, image).items()}
    got = {}
    for i, r in enumerate(csv.DictReader(open(mem_csv))):
        if r["kind"] != "session_end":
            got.setdefault(int(r["tid"]) if r["tid"] else None, []).append(
                (i, sorted(r["mem"].split())))
    for tid in sorted(set(want) | set(got), key=str):
        w, g = want.get(tid, []), got.get(tid, [])
        diff = next(((a, b) for a, b in zip(w, g) if a != b), None)
        if diff:
            print("bad|%s|the thread's record at row %d carries %s; the model's, at row %d, %s" % (
                tid, diff[1][0], " ".join(diff[1][1]) or "no access", diff[0][0],
                " ".join(diff[0][1]) or "no access"))
        elif len(w) != len(g):
            print("bad|%s|%d records, the model has %d" % (tid, len(g), len(w)))
        else:
            print("ok|%s|%d records, their %s equal the model's" % (
                tid, len(g), kinds([a for _, acc in g for a in acc])))
    if len(want) < min_threads:
        print("bad|threads|the model ran %d threads, the scenario needs %d" % (len(want), min_threads))


def tenet_entries(accesses):
    out = []
    for a in accesses:
        f = a.split(":")
        if f[0] in ("r", "rw"):
            out.append(["mr", f[1], f[3]])
        if f[0] in ("w", "rw"):
            out.append(["mw", f[1], f[-1]])
    return sorted(out)


def judge_tenet(d, expect, image):
    for (pid, tid), rows in sorted(model_threads(expect, image).items()):
        path = "%s/tenet-mem.%d.%d.json" % (d, pid, tid)
        if not os.path.exists(path):
            print("bad|%s|no %s (files: %s)" % (tid, os.path.basename(path),
                                                 " ".join(map(os.path.basename, glob.glob(d + "/trace.tenet*")))))
            continue
        lines = [sorted(l) for l in json.load(open(path))]
        want = [tenet_entries(acc) for _, acc in rows]
        diff = next((i for i, (g, w) in enumerate(zip(lines, want)) if g != w), None)
        if diff is not None:
            print("bad|%s|line %d: %s, the model's row %d says %s" % (tid, diff + 1, lines[diff], rows[diff][0], want[diff]))
        elif len(lines) != len(want):
            print("bad|%s|%d lines, the model has %d records" % (tid, len(lines), len(want)))
        else:
            print("ok|%s|trace.tenet.%d.%d: %d lines, %d mr=/mw= entries, the model's accesses" % (
                tid, pid, tid, len(lines), sum(map(len, lines))))


if sys.argv[1] == "dump":
    judge_dump(sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5]))
else:
    judge_tenet(sys.argv[2], sys.argv[3], sys.argv[4])
