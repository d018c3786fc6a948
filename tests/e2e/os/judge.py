#!/usr/bin/env python3
"""judge.py: the judge of `make e2e-os` (docs/lab-internals.md, "A real Linux in L2").

calls also shows what the capture costs another process: os-noise's system
calls on the other vCPU make no #UD or IRET exit (judge_other_process()).

For each program, the capture of its traced run (svmtrace-capture
--adopt-cr3, every vCPU's file merged by sequence) against the records of
its ptrace run inside the same guest (svmtrace-steprec --threads, one file
per thread).  Both are split by thread: the capture's records by RSP (the
main thread's stack is the process stack, the others' are thread_stacks in
the program's .bss), ptrace's by thread id (4001, 4002: clone3 set_tid).
Every thread's user instruction stream must be the same, record by record:
RIP, RFLAGS less TF, the 16 GPRs, and (the runs traced with --mem, ptrace's
with steprec --mem) each record's memory accesses: address, size, the bytes
read and written.  The differences allowed are named and
counted (syscall-return and ptrace-tf-in-r11, in compare()); anything else
fails the thread, named field by field.  threads is traced a second time
with --hide-time (threads-hide) and judged against the same ptrace records;
the timing checks are judged by judge_time.py.
"""
import argparse
import csv
import glob
import io
import os
import re
import subprocess
import sys
import types

import judge_time

TF = 0x100
GPRS = ["rax", "rbx", "rcx", "rdx", "rsi", "rdi", "rbp", "rsp",
        "r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15"]
PROGRAMS = {"flags": 1, "xonly": 1, "sort": 1, "hash": 1, "threads": 3,
            "calls": 1, "memforms": 1}   # threads per program
# What L2's Linux must have enabled of what L1's emulated CPU offers (os.sh
# gives L1 +pku): SMEP, SMAP and protection keys (ospke: CR4.PKE).  "pku"
# itself is not among them: L2's Linux turns XSAVE off (TCG's CPUID leaf
# 0xD fails its consistency check) and with it the pku flag, while CR4.PKE
# and the pkey system calls stay (xonly uses them).
PROTECTIONS = {"smep", "smap", "ospke"}
PINNED = {"calls": 0, "memforms": 0}   # programs that run on one vCPU alone (gate.h, OS_START_CPU)
STACK = 16384                                      # threads.c STACK
passed = failed = 0


def ok(check, text):
    global passed
    passed += 1
    print(f"PASS: os/{check}: {text}")


def bad(check, text):
    global failed
    failed += 1
    print(f"FAIL: os/{check}: {text}")


def rows(dump, files, merge, mem=False):
    cmd = [dump, "dump", "--regs"] + (["--merge"] if merge else []) + \
        (["--mem"] if mem else []) + files
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return [{k: (int(v, 0) if k not in ("kind", "mem") else v) for k, v in r.items()}
            for r in csv.DictReader(io.StringIO(out))]


UNKNOWN_CAPTURED = "u:0x0:0:undecoded"   # the capture lost the instruction's decode
UNKNOWN_PTRACE = "u:0x0:0:fault"         # a signal came in during ptrace's step


def tf_in_image(c, r):
    """An 8-byte access to a PUSHF image whose bytes differ only by TF (bit 8)
    set in ptrace's: the write that stored it, a read that loads it again
    (POP), or both values of a read-modify-write."""
    cf, rf = c.split(":"), r.split(":")
    if cf[:3] != rf[:3] or cf[2] != "8" or cf[0] not in ("r", "w", "rw") or len(cf) != len(rf):
        return False
    pairs = list(zip(cf[3:], rf[3:]))
    if any(len(a) != 16 or len(b) != 16 for a, b in pairs):
        return False
    ints = [(int.from_bytes(bytes.fromhex(a), "little"),
             int.from_bytes(bytes.fromhex(b), "little")) for a, b in pairs]
    return all(b == a or (b == a | TF and not a & TF) for a, b in ints) and \
        any(a != b for a, b in ints)


def compare_mem(c, r, counts, notes):
    """The accesses of one record; None when they agree (or differ as allowed)."""
    cm, rm = c.get("mem"), r.get("mem")
    if cm is None or rm is None:
        return None
    ca, ra = sorted(cm.split()), sorted(rm.split())
    if ca == ra:
        counts["mem-equal"] += 1
        return None
    if ca == [UNKNOWN_CAPTURED]:   # its decode lost, or no length known
        counts["mem-unknown-captured"] += 1
        notes.setdefault("mem-unknown-captured", []).append(c["rip"])
        return None
    if ra == [UNKNOWN_PTRACE]:
        counts["mem-unknown-ptrace"] += 1
        return None
    if len(ca) == len(ra) and all(x == y or tf_in_image(x, y) for x, y in zip(ca, ra)):
        counts["mem-ptrace-tf-in-pushf"] += 1
        return None
    # A form one side does not decode (or an operand too large for a
    # record): the accesses at that address are left out on both sides.
    gaps = {x.split(":")[1] for x in ca + ra
            if x.endswith(":undecoded") or x.endswith(":too_large")}
    if gaps and [x for x in ca if x.split(":")[1] not in gaps] == \
            [x for x in ra if x.split(":")[1] not in gaps]:
        side = "captured" if any(x.split(":")[1] in gaps and x.startswith("u:") for x in ca) \
            else "ptrace"
        counts[f"mem-not-decoded-{side}"] += 1
        notes.setdefault(f"mem-not-decoded-{side}", []).append(c["rip"])
        return None
    return f"mem captured '{cm}' ptrace '{rm}'"


def symbol(prog, name):
    out = subprocess.run(["nm", prog], check=True, capture_output=True, text=True).stdout
    m = re.search(r"^([0-9a-f]+) \w " + name + "$", out, re.M)
    return int(m.group(1), 16) if m else None


def thread_of_rsp(rsp, stacks):
    """0 for the main thread (the process stack), k for thread_stacks[k-1]."""
    if rsp >= 0x7f0000000000:
        return 0
    if stacks is not None:
        for k in (1, 2):
            base = stacks + (k - 1) * STACK
            if base <= rsp <= base + STACK:
                return k
    return None


def is_syscall_return(r, prev, code):
    """ptrace's record right after a SYSCALL: RIP = RCX = the SYSCALL + 2."""
    lo, data = code
    at = r["rip"] - 2 - lo
    return prev is not None and r["rip"] == r["rcx"] and prev["rip"] + 2 == r["rip"] and \
        0 <= at < len(data) - 1 and data[at:at + 2] == b"\x0f\x05"


def compare(cap, ref, code):
    """Record by record; returns (mismatch texts, counts of the allowed difference).

    Allowed, and counted:
      syscall-return  ptrace stops once more after every SYSCALL, at its
                      return address (the kernel's syscall-exit report of a
                      single-step).  Linux returns through IRET when the
                      saved RFLAGS has TF, and IRET's trap comes after the
                      next instruction: the capture's first record after a
                      SYSCALL is one instruction later.  ptrace's record is
                      skipped when RIP = RCX = the previous record's RIP + 2
                      and the bytes there are 0F 05.
      ptrace-tf-in-r11  R11 as ptrace's run has it, with TF, where the
                      capture's has none.  SYSCALL saves RFLAGS in R11, and
                      under ptrace TF is the guest's own: the program sees it
                      there until R11 is written again.  The kmod keeps its
                      TF out of R11 (EFER.SCE off: SYSCALL faults and is
                      emulated without it, docs/kmod.md, "Frames and R11"), so
                      the traced run sees the untraced value.
      ptrace-tf-in-pushf  GPRs (R11 among them, or not) as ptrace's run has
                      them, with TF, where the capture's have none: a PUSHF
                      image (flags) and what the program computes from it.  Under ptrace
                      the TF is the guest's own and PUSHF stores it; the kmod
                      clears its TF in the image, so the traced run sees
                      the untraced value.
    Not allowed: any other R11 or GPR difference, TF in the capture's
    registers above all (the kmod's TF visible to the guest).
    """
    errors, extra = [], 0
    counts = {"syscall-return": 0, "ptrace-tf-in-r11": 0, "ptrace-tf-in-pushf": 0,
              "mem-equal": 0, "mem-unknown-captured": 0, "mem-unknown-ptrace": 0,
              "mem-ptrace-tf-in-pushf": 0, "mem-not-decoded-captured": 0,
              "mem-not-decoded-ptrace": 0}
    notes = {}
    i, j, prev = 0, 0, None
    while i < len(cap) and j < len(ref):
        c, r = cap[i], ref[j]
        if c["rip"] != r["rip"] and is_syscall_return(r, prev, code):
            counts["syscall-return"] += 1
            prev, j = r, j + 1
            continue
        diffs = []
        if c["rip"] != r["rip"]:
            diffs.append("rip")
        if (c["rflags"] & ~TF) != (r["rflags"] & ~TF):
            diffs.append("rflags")
        diffs += [g for g in GPRS if c[g] != r[g]]
        if diffs == ["r11"] and r["r11"] == c["r11"] | TF and not c["r11"] & TF:
            counts["ptrace-tf-in-r11"] += 1
            diffs = []
        elif diffs and "rip" not in diffs and "rflags" not in diffs and \
                all(r[g] == c[g] | TF and not c[g] & TF for g in diffs):
            counts["ptrace-tf-in-pushf"] += 1
            diffs = []
        mem = compare_mem(c, r, counts, notes)
        if diffs or mem:
            if len(errors) < 6:
                errors.append(f"record {i} (ptrace {j}) at {c['rip']:#x}: " + ", ".join(
                    [f"{d} captured {c[d]:#x} ptrace {r[d]:#x}" for d in diffs] +
                    ([mem] if mem else [])))
            else:
                extra += 1
            if "rip" in diffs:
                break   # out of step: the rest would only repeat it
        prev, i, j = r, i + 1, j + 1
    if extra:
        errors.append(f"and {extra} more records")
    if i < len(cap) or j < len(ref):
        errors.append(f"compared {i} of {len(cap)} captured records, {j} of {len(ref)} "
                      "from ptrace")
    for k, rips in notes.items():
        counts[k + " at"] = " ".join(f"{x:#x}" for x in sorted(set(rips))[:8])
    return errors, counts


def labels(prog, prefix):
    """The program's symbols that start with PREFIX: {name: address}."""
    out = subprocess.run(["nm", prog], check=True, capture_output=True, text=True).stdout
    return {f[2]: int(f[0], 16) for f in (l.split() for l in out.splitlines())
            if len(f) == 3 and f[2].startswith(prefix)}


def judge_forms(run, exe, mine, counts):
    """memforms: each labelled instruction ran, and its accesses are what its
    label says -- mf_rec_* recorded in full (no unrecorded access),
    mf_none_* none at all (prefetches, CLFLUSH), mf_unrec_* unrecorded with
    their address (FNSAVE/FRSTOR too large, MASKMOVDQU masked), never the
    lost decode (u:0x0:0:undecoded).  A record holds the accesses of the
    instruction at the previous record's RIP.  No form the capture does not
    decode anywhere in the program, and none that ptrace's Capstone does not:
    every access set compared equal (compare_mem())."""
    forms = labels(exe, "mf_")
    after = {}
    for prev, r in zip(mine, mine[1:]):
        after.setdefault(prev["rip"], []).append(r.get("mem") or "")
    wrong = []
    for name, addr in sorted(forms.items()):
        seen = after.get(addr)
        if not seen:
            wrong.append(f"{name} never ran")
            continue
        for mem in seen:
            acc = mem.split()
            if name.startswith("mf_rec_"):
                good = acc and not any(a.startswith("u:") for a in acc)
            elif name.startswith("mf_none_"):
                good = not acc
            else:
                good = acc and all(a.startswith("u:") and a != UNKNOWN_CAPTURED for a in acc)
            if not good:
                wrong.append(f"{name} at {addr:#x}: '{mem}'")
                break
    gaps = {k: counts[k] for k in ("mem-unknown-captured", "mem-not-decoded-captured",
                                   "mem-not-decoded-ptrace") if counts[k]}
    if gaps:
        wrong.append(f"accesses not decoded: {gaps}")
    if wrong:
        bad(f"{run}/forms", "; ".join(wrong[:12]))
    else:
        ok(f"{run}/forms", f"{len(forms)} labelled forms ran with the accesses their labels "
           f"say ({sum(1 for n in forms if n.startswith('mf_rec_'))} recorded in full, "
           f"{sum(1 for n in forms if n.startswith('mf_none_'))} without access, "
           f"{sum(1 for n in forms if n.startswith('mf_unrec_'))} unrecorded with their "
           "address), no access left undecoded on either side")


def code_bytes(prog):
    """The executable segment's address and bytes (FileSiz: the code)."""
    out = subprocess.run(["readelf", "-lW", prog], check=True, capture_output=True,
                         text=True).stdout
    for line in out.splitlines():
        f = line.split()
        if f and f[0] == "LOAD" and f[-2] == "E":
            off, va, size = int(f[1], 16), int(f[2], 16), int(f[4], 16)
            with open(prog, "rb") as fh:
                fh.seek(off)
                return va, fh.read(size)
    return 0, b""


def judge(prog, threads, res, bindir, dump, run=None, mem=False):
    """RUN (default PROG): the capture's directory and the checks' name.

    MEM: the capture ran with --mem and ptrace's run wrote each step's
    accesses (steprec --mem): every record's memory accesses are compared
    too (compare_mem()), as sets: address, size, the bytes read and written.
    """
    run = run or prog
    d = os.path.join(res, run)
    exe = os.path.join(bindir, "os-" + prog)
    gate = symbol(exe, "gate_main")
    stacks = symbol(exe, "thread_stacks")
    rc = open(os.path.join(d, "capture.rc")).read().strip() if os.path.exists(
        os.path.join(d, "capture.rc")) else "missing"
    captxt = open(os.path.join(d, "capture.txt")).read() if os.path.exists(
        os.path.join(d, "capture.txt")) else ""
    total = next((l for l in captxt.splitlines() if l.startswith("total ")), "no total line")
    if rc == "0":
        ok(f"{run}/capture", f"svmtrace-capture --adopt-cr3 exit 0: {total}")
    else:
        bad(f"{run}/capture", f"svmtrace-capture exit {rc}: {captxt.strip()[-400:]}")
        return
    files = sorted(glob.glob(os.path.join(d, "trace", "svmtrace_trace_cpu*.bin")))
    cap = rows(dump, files, True, mem)
    ends = [r for r in cap if r["kind"] == "session_end"]
    starts = [r for r in cap if r["kind"] == "session_start"]
    cap = [r for r in cap if r["kind"] != "session_end"]
    cr3s = {r["cr3"] for r in cap}
    if cap and cap[0]["kind"] == "session_start" and cap[0]["reason"] == 0 and len(cr3s) == 1:
        ok(f"{run}/adopted", f"{len(cap)} records, all under the one CR3 the gate adopted "
           f"({cr3s.pop():#x}); first a session_start of gate 0 at {cap[0]['rip']:#x}; "
           f"{len(starts)} session starts, {len(ends)} ends")
    else:
        bad(f"{run}/adopted", f"first record {cap[0] if cap else None}, CR3s {sorted(cr3s)}")
    # Every record is the program's own: a process started after it could
    # get the page-table root the capture adopted (init.sh runs nothing but
    # builtins until L1 stopped the capture).
    code = code_bytes(exe)
    lo, hi = code[0], code[0] + len(code[1])
    foreign = [r for r in cap if not lo <= r["rip"] < hi]
    if foreign:
        bad(f"{run}/own-code", f"{len(foreign)} records outside the program's code "
            f"[{lo:#x}, {hi:#x}), first seq {foreign[0]['sequence']} at {foreign[0]['rip']:#x}")
    else:
        ok(f"{run}/own-code", f"every record's RIP is in the program's code [{lo:#x}, {hi:#x})")
    split = {k: [] for k in range(threads)}
    stray = [r for r in cap if thread_of_rsp(r["rsp"], stacks) not in split]
    for r in cap:
        k = thread_of_rsp(r["rsp"], stacks)
        if k in split:
            split[k].append(r)
    if stray:
        bad(f"{run}/threads", f"{len(stray)} records belong to no thread, first {stray[0]}")
    for k in range(threads):
        name = "main" if k == 0 else f"thread{k}"
        tids = sorted(t for t in glob.glob(os.path.join(res, f"{prog}.ptrace.*"))
                      if not t.endswith(".v5") and not t.endswith(".mem"))
        want = [t for t in tids if t.endswith(f".{4000 + k}")] if k else \
            [t for t in tids if not re.search(r"\.400[12]$", t)]
        if len(want) != 1:
            bad(f"{run}/{name}", f"no single ptrace file for it among {tids}")
            continue
        packed = want[0] + ".v5"
        accesses = want[0] + ".mem"
        if mem and not os.path.exists(accesses):
            bad(f"{run}/{name}", f"no memory accesses from ptrace ({accesses})")
            continue
        subprocess.run([dump, "pack"] + (["--mem", accesses] if mem else []) +
                       [want[0], packed], check=True, capture_output=True)
        # pack closes the file with a session_end that repeats the last record
        ref = [r for r in rows(dump, [packed], False, mem) if r["kind"] != "session_end"]
        if k == 0:
            # The trace starts after gate_main's first instruction: drop
            # ptrace's records up to the JMP into it (RIP = gate_main).
            first = next((i for i, r in enumerate(ref) if r["rip"] == gate), None)
            if first is None:
                bad(f"{run}/{name}", f"ptrace never reached gate_main {gate:#x}")
                continue
            ref = ref[first + 1:]
        mine = split[k]
        vcpus = {r["cpu"] for r in mine}
        moves = sum(1 for a, b in zip(mine, mine[1:]) if a["cpu"] != b["cpu"])
        errors, counts = compare(mine, ref, code)
        allowed = ", ".join(f"{k} {v}" for k, v in counts.items() if not k.startswith("mem"))
        if mem:
            allowed += "; memory accesses: " + ", ".join(
                f"{k[4:]} {v}" for k, v in counts.items() if k.startswith("mem"))
        if errors:
            bad(f"{run}/{name}", "; ".join(errors) + f" (allowed so far: {allowed})")
        else:
            ok(f"{run}/{name}", f"{len(mine)} records equal to ptrace's {len(ref)}: RIP, RFLAGS "
               f"less TF, 16 GPRs{', memory accesses' if mem else ''}; allowed differences: "
               f"{allowed}; on vCPUs "
               f"{sorted(vcpus)}, {moves} vCPU changes")
        if prog == "memforms":
            judge_forms(run, exe, mine, counts)
        if prog == "flags" and not errors:
            # Each of its 64 PUSHF images held ptrace's TF under ptrace and
            # none of the tracer's in the capture.
            n = counts["ptrace-tf-in-pushf"]
            if n >= 64:
                ok(f"{prog}/no-tf", f"the traced images lack the TF ptrace's have ({n} records)")
            else:
                bad(f"{prog}/no-tf", f"only {n} records differ by ptrace's TF (64 PUSHF images)")
        if prog in PINNED:
            if vcpus == {PINNED[prog]}:
                ok(f"{run}/{name}/pinned", f"the thread ran on vCPU {PINNED[prog]} alone")
            else:
                bad(f"{run}/{name}/pinned", f"vCPUs {sorted(vcpus)}, want {PINNED[prog]} alone")
        elif len(vcpus) == 2 and moves:
            ok(f"{run}/{name}/migrated", f"the thread ran on both vCPUs ({moves} changes)")
        else:
            bad(f"{run}/{name}/migrated", f"vCPUs {sorted(vcpus)} only")


def audit_field(line, name):
    m = re.search(rf" {name}=(\d+)", line)
    return int(m.group(1)) if m else None


def judge_other_process(res, console):
    """calls ran traced on vCPU 0 beside os-noise on vCPU 1 (init.sh).

    The exit audit (BPF on KVM's tracepoints) counted vCPU 1's exits while
    the capture was armed: not one #UD or IRET exit for the other process's
    system calls (SYSCALL/SYSRET and INT 0x80/IRET), and the other process
    did make them then: its progress lines came between the capture's arm
    and its stop.
    """
    d = os.path.join(res, "calls")
    captxt = open(os.path.join(d, "capture.txt")).read() if os.path.exists(
        os.path.join(d, "capture.txt")) else ""
    lines = [l for l in captxt.splitlines() if l.startswith("audit")]
    if "audit balanced" in lines:
        ok("calls/audit", "; ".join(re.sub(r" step_ns_mean.*", "", l)
                                    for l in lines if l.startswith("audit vcpu")))
    else:
        bad("calls/audit", "; ".join(lines) or "no audit lines")
    v1 = next((l for l in lines if l.startswith("audit vcpu1 ")), "")
    ud, iret, cr3, exits = (audit_field(v1, f) for f in
                            ("ud_exits", "iret_exits", "cr3_exits", "exits"))
    try:
        first, last = (int(x) for x in open(os.path.join(d, "console-lines")).read().split())
    except (OSError, ValueError):
        first = last = 0
    rounds = [l for l in console.splitlines()[first:last]
              if "svmtrace-os: noise rounds=" in l]
    if ud == 0 and iret == 0 and rounds:
        ok("calls/other-process-exits",
           f"vCPU 1, os-noise's system calls beside the capture ({len(rounds)} x 4096 rounds of "
           f"SYSCALL and INT 0x80 while it was armed): 0 #UD and 0 IRET exits; {cr3} CR3-write "
           f"and {exits} exits in all")
    else:
        bad("calls/other-process-exits",
            f"vCPU 1: ud_exits={ud} iret_exits={iret} (want 0 each), os-noise's progress lines "
            f"while armed: {len(rounds)} (want at least 1): {v1 or 'no audit line'}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--l1-rc", required=True)
    ap.add_argument("--results", required=True)
    ap.add_argument("--bin", required=True)
    ap.add_argument("--dump", required=True)
    ap.add_argument("--dmesg", required=True)
    a = ap.parse_args()
    if a.l1_rc == "0":
        ok("l1", "L1 ran l1-os.sh to its end")
    else:
        bad("l1", f"L1 exited {a.l1_rc}")
    fails = os.path.join(a.results, "failures")
    if os.path.exists(fails):
        bad("l2", open(fails).read().replace("\n", "; "))
    console = os.path.join(a.results, "console.txt")
    text = open(console, errors="replace").read() if os.path.exists(console) else ""
    m = re.search(r"svmtrace-os: cpu-protections(( \w+)*)", text)
    have = set(m.group(1).split()) if m else set()
    if PROTECTIONS <= have:
        ok("l2/protections", "L2's Linux runs with " + ", ".join(sorted(have)) +
           " (CR4.SMEP, CR4.SMAP, CR4.PKE)")
    else:
        bad("l2/protections", f"L2's Linux lacks {sorted(PROTECTIONS - have)} "
            f"(has {sorted(have)})")
    m = re.search(r"svmtrace-os: cpu-extensions(( \w+)*)", text)
    print(f"info: os/l2: CPU extensions{m.group(1) if m else ' unknown'}")
    m = re.search(r"svmtrace-os: aslr (\d+) cpus (\d+)", text)
    if m and m.group(1) == "0" and m.group(2) == "2":
        ok("l2/booted", "Debian's kernel reached its init with 2 vCPUs, ASLR off")
    else:
        bad("l2/booted", f"no init line with ASLR off and 2 vCPUs ({m.group(0) if m else 'none'})")
        print(f"os: {passed} passed, {failed} failed")
        return 1
    for prog, threads in PROGRAMS.items():
        pout = os.path.join(a.results, f"{prog}.ptrace-out")
        pl = [l for l in (open(pout).read().splitlines() if os.path.exists(pout) else [])
              if re.match(rf"svmtrace-os: {prog} (result|thread\d)=", l)]
        for run in (prog, "threads-hide") if prog == "threads" else (prog,):
            outs = [l for l in judge_time.run_lines(text.replace("\r", ""), run)
                    if re.match(rf"svmtrace-os: {prog} (result|thread\d)=", l)]
            if outs and sorted(outs) == sorted(pl) and len(outs) == threads:
                ok(f"{run}/results", "the traced run and ptrace's printed " +
                   ", ".join(sorted(outs)))
            else:
                bad(f"{run}/results", f"traced run {outs}, ptrace run {pl}")
        for run in ("rusage", "ptrace-rusage"):
            f = os.path.join(a.results, f"{prog}.{run}")
            v = open(f).read().split() if os.path.exists(f) else []
            if len(v) >= 4:
                print(f"info: os/{prog}: {run}: major faults {v[0]}, minor faults {v[1]}, "
                      f"voluntary switches {v[2]}, involuntary {v[3]}")
        t = [l for l in text.splitlines() if l.startswith(f"svmtrace-os: {prog} timer-")]
        for l in t:
            print("info: " + l.strip())
        try:
            judge(prog, threads, a.results, a.bin, a.dump, mem=True)
        except (OSError, subprocess.CalledProcessError) as e:
            bad(f"{prog}/judge", str(e))
    try:
        judge("threads", PROGRAMS["threads"], a.results, a.bin, a.dump, "threads-hide")
        tools = types.SimpleNamespace(rows=lambda files: rows(a.dump, files, True),
                                      code=code_bytes(os.path.join(a.bin, "os-timing")))
        judge_time.judge_all(a.results, tools, ok, bad)
    except (OSError, subprocess.CalledProcessError) as e:
        bad("timing/judge", str(e))
    judge_other_process(a.results, text)
    dm = open(a.dmesg, errors="replace").read() if os.path.exists(a.dmesg) else None
    if dm is not None and not re.search(r"WARNING|BUG|Oops|Call Trace", dm):
        ok("dmesg", "L1 kernel log has no WARNING/BUG/Oops")
    else:
        bad("dmesg", f"L1 kernel log missing or has warnings ({a.dmesg})")
    print(f"os: {passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
