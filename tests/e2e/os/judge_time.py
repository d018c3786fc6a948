"""judge_time.py: the timing checks of `make e2e-os` (os/timing.c; docs/lab.md,
"Virtual time"), judged for judge.py.

Three runs of os-timing: untraced on the packaged modules (its own boot),
traced by svmtrace-capture, traced with --hide-time.  Each prints its least
samples, its verdict (a bit per check) and the counts of what virtual time
must keep whatever the mode.  The verdicts each mode must give are in WANT;
the bits the design cannot hide (docs/kmod.md, "Virtual time": another
process's view, the kernel's clock) are reported, and asserted where the
design says they show.  From the captures: every traced thread's reads
(the rows after RDTSC, RDTSCP) increase, on whichever vCPU.
"""
import glob
import os
import re

CHECKS = {1: "rdtsc", 2: "cpuid", 4: "rdtscp", 8: "tsc_aux", 16: "counter",
          32: "cross_tsc", 64: "kernel"}
# run: (bits that must be set, bits that must be clear, what it says)
WANT = {
    "timing-untraced": (0, 127, "untraced on the packaged modules, no check says traced"),
    "timing-traced": (1 | 2 | 4 | 16, 8 | 32 | 64,
                      "traced, every TSC check detects the tracer (and the second "
                      "process's counter); the TSC is the real one"),
    "timing-hide": (16 | 32 | 64, 1 | 2 | 4 | 8,
                    "traced with --hide-time, no TSC check detects the tracer; what "
                    "virtual time cannot hide shows: the second process's counter, "
                    "its TSC ahead of ours, the kernel's clock"),
}
GUARANTEES = ("backwards", "ahead", "early")


def run_lines(text, run):
    """The console lines of RUN (init.sh: from its timer-before line to its exit)."""
    out, on = [], False
    for line in text.splitlines():
        line = line.strip()
        if line.startswith(f"svmtrace-os: {run} timer-before"):
            on = True
        elif line.startswith(f"svmtrace-os: {run} exited"):
            break
        elif on:
            out.append(line)
    return out


def values(text, run):
    """The KEY=0x... lines os-timing printed in RUN."""
    out = {}
    for line in run_lines(text, run):
        m = re.match(r"svmtrace-os: timing (\w+)=0x([0-9a-f]+)$", line)
        if m:
            out[m.group(1)] = int(m.group(2), 16)
    return out


def timer_moved(text, run):
    """LOC (local timer interrupts) per CPU before and after RUN."""
    got = {}
    for when in ("before", "after"):
        m = re.search(rf"svmtrace-os: {run} timer-{when} LOC: ([0-9 ]+)", text)
        got[when] = [int(x) for x in m.group(1).split()] if m else []
    return got["before"], got["after"]


def reads(rows, code):
    """Per thread (by stack), the values of the reads: rows right after RDTSC/RDTSCP."""
    lo, data = code
    per = {}
    for r in rows:
        at = r["rip"] - lo
        if (at >= 2 and data[at - 2:at] == b"\x0f\x31") or \
                (at >= 3 and data[at - 3:at] == b"\x0f\x01\xf9"):
            per.setdefault(r["rsp"] >= 0x7f0000000000, []).append(
                (r["rdx"] & 0xffffffff) << 32 | (r["rax"] & 0xffffffff))
    return per


def judge_run(run, text, res, tools, ok, bad):
    v = values(text, run)
    must, never, says = WANT[run]
    if "verdict" not in v:
        bad(f"{run}/verdict", "no verdict line")
        return
    verdict = v["verdict"]
    shown = ", ".join(f"{name} {'DETECTS' if verdict & bit else 'passes'}"
                      for bit, name in CHECKS.items())
    least = ", ".join(f"{k} {v[k]}" for k in ("rdtsc", "cpuid", "rdtscp", "counter",
                                                 "cross_tsc_behind", "checks_rate_x1000",
                                                 "sleep_rate_x1000") if k in v)
    if verdict & must == must and not verdict & never:
        ok(f"{run}/verdict", f"{says} (verdict {verdict:#x}: {shown}; least samples: {least})")
    else:
        bad(f"{run}/verdict", f"verdict {verdict:#x} ({shown}), wanted bits {must:#x} set "
            f"and {never:#x} clear; least samples: {least}")
    kept = {g: v.get(g) for g in GUARANTEES}
    if all(x == 0 for x in kept.values()) and v.get("slept_ns", 0) >= 100000000:
        ok(f"{run}/guarantees", "no read below an earlier one of the process, none the "
           f"watcher saw ahead of its own, nanosleep(100 ms) slept {v['slept_ns']} ns")
    else:
        bad(f"{run}/guarantees", f"{kept}, slept {v.get('slept_ns')} ns")
    before, after = timer_moved(text, run)
    if before and len(before) == len(after) and all(a > b for a, b in zip(after, before)):
        ok(f"{run}/timer", f"the guest's timer interrupts went on on every vCPU: LOC "
           f"{before} -> {after}")
    else:
        bad(f"{run}/timer", f"LOC {before} -> {after}")
    if run == "timing-untraced":
        return
    d = os.path.join(res, run)
    rc = open(os.path.join(d, "capture.rc")).read().strip() \
        if os.path.exists(os.path.join(d, "capture.rc")) else "missing"
    if rc != "0":
        bad(f"{run}/capture", f"svmtrace-capture exit {rc}")
        return
    files = sorted(glob.glob(os.path.join(d, "trace", "svmtrace_trace_cpu*.bin")))
    rows = [r for r in tools.rows(files) if r["kind"] != "session_end"]
    per = reads(rows, tools.code)
    ups = {main: all(b > a for a, b in zip(vals, vals[1:])) for main, vals in per.items()}
    vcpus = sorted({r["cpu"] for r in rows})
    if len(per) == 2 and all(ups.values()):
        ok(f"{run}/trace", "every traced thread's reads increase in the trace ("
           + ", ".join(f"{'main' if m else 'thread1'} {len(x)}" for m, x in per.items())
           + f" reads), the threads on vCPUs {vcpus}")
    else:
        bad(f"{run}/trace", f"reads per thread {[(m, len(x)) for m, x in per.items()]}, "
            f"increasing {ups}")


def judge_all(res, tools, ok, bad):
    texts = {}
    for run, console in (("timing-untraced", "console-untraced.txt"),
                         ("timing-traced", "console.txt"), ("timing-hide", "console.txt")):
        f = os.path.join(res, console)
        texts[run] = open(f, errors="replace").read().replace("\r", "") \
            if os.path.exists(f) else ""
        judge_run(run, texts[run], res, tools, ok, bad)
