#!/usr/bin/env python3
"""memexport.py FORMAT READBACK ROWS MODEL [STDERR]: an export of a --mem
capture, read back by the format's independent reader
(tests/cli/analysis/read_FORMAT.py, READBACK its JSON), against the
reference model's accesses (MODEL, expected_mem_cpuN.csv: per row of dump's
numbering r:ADDR:SIZE:BYTES, w:ADDR:SIZE:BYTES, rw:ADDR:SIZE:OLD:NEW, and as
dump --mem writes it u:ADDR:SIZE:WHY for an access the capture could not
record).
ROWS is `svmtrace-dump dump --regs` of the trace, for each row's kind.
Prints what it compared; exits with the first difference.

  tenet   a line per record but the session end; its mr=/mw= entries are
          that record's accesses (Tenet puts the accesses of the instruction
          that produced a state on the state's line)
  x64dbg  a block per record but the session end, the instruction at its
          RIP; its entries are that instruction's accesses, which the next
          record carries, as docs/analysis.md says: 8-byte pieces at the
          address + 0, 8, 16, 24 with the bytes before and after the
          instruction, each byte from the instruction's own values, else as
          the session's earlier accesses left it (an unrecorded access makes
          its bytes unknown, all of them when its size is 0); an access with
          a byte unknown, an unrecorded one, one of the session's first
          instruction, or one past 32 entries of its block is left out, and
          STDERR counts what was
"""
import csv
import json
import re
import sys


M64 = 2**64


def span(addr, size):
    """The addresses of [addr, addr + size), modulo 2^64."""
    return [(addr + i) % M64 for i in range(size)]


def model_accesses(path):
    model = {}
    for row in open(path).read().splitlines()[1:]:
        index, _, text = row.partition(",")
        accesses = []
        for a in text.split():
            f = a.split(":")
            kind, addr, size = f[0], int(f[1], 16), int(f[2])
            if kind == "u":
                accesses.append((kind, addr, size, None, None))
                continue
            read = bytes.fromhex(f[3]) if kind in ("r", "rw") else None
            written = bytes.fromhex(f[-1]) if kind in ("w", "rw") else None
            accesses.append((kind, addr, size, read, written))
        model[int(index)] = accesses
    return model


def fail(why):
    sys.exit(why)


def tenet(lines, kinds, model):
    want = []
    for i, k in enumerate(kinds):
        if k == "session_end":
            continue
        entries = []
        for kind, addr, size, read, written in model.get(i, []):
            if read is not None:
                entries.append(["mr", "0x%x" % addr, read.hex()])
            if written is not None:
                entries.append(["mw", "0x%x" % addr, written.hex()])
        want.append(sorted(entries))
    got = [sorted(line) for line in lines]
    if len(got) != len(want):
        fail("%d lines, %d records" % (len(got), len(want)))
    for i, (g, w) in enumerate(zip(got, want)):
        if g != w:
            fail("line %d: %s, the model says %s" % (i + 1, g, w))
    return "%d lines, %d memory entries" % (len(got), sum(map(len, got)))


def replay(known, accesses, b):
    """Byte b before and after an instruction making these accesses (None: unknown)."""
    before, touched = known.get(b), False
    after = before
    for kind, addr, size, read, written in accesses:
        if (b - addr) % M64 >= size and not (kind == "u" and size == 0):
            continue
        if kind == "u":
            after, touched = None, True
            continue
        off = (b - addr) % M64
        if read is not None:
            if not touched:
                before = read[off]
            after = read[off]
        if written is not None:
            after = written[off]
        touched = True
    return before, after


def x64dbg(readback, kinds, model, stderr):
    blocks = readback["blocks"]
    want, known = [], {}
    total = left = 0
    for i, k in enumerate(kinds):
        follows = i > 0 and kinds[i - 1] != "session_end" and k == "instruction"
        if not follows:
            known = {}
        accesses = model.get(i, [])
        entries = []
        for kind, addr, size, read, written in accesses:
            total += 1
            if kind == "u":
                left += 1
                continue
            pieces = []
            for p in range((size + 7) // 8):
                bytes_ = [replay(known, accesses, (addr + 8 * p + j) % M64) for j in range(8)]
                if any(v is None for pair in bytes_ for v in pair):
                    break
                pieces.append(["0x%x" % ((addr + 8 * p) % M64), bytes(v[0] for v in bytes_).hex(),
                               bytes(v[1] for v in bytes_).hex()])
            else:
                if follows and len(entries) + len(pieces) <= 32:
                    entries += pieces
                    continue
            left += 1
        if follows:
            want[-1] = entries
        after = {b: replay(known, accesses, b)[1] for kind, addr, size, read, written
                 in accesses if kind != "u" for b in span(addr, size)}
        for kind, addr, size, read, written in accesses:
            if kind == "u" and not size:
                known = {}
            elif kind == "u":
                for b in (span(addr, size) if size < len(known) else list(known)):
                    if (b - addr) % M64 < size:
                        known.pop(b, None)
        for b, v in after.items():
            if v is None:
                known.pop(b, None)
            else:
                known[b] = v
        if k != "session_end":
            want.append([])
    if len(blocks) != len(want):
        fail("%d blocks, %d records" % (len(blocks), len(want)))
    for i, (b, w) in enumerate(zip(blocks, want)):
        if b["mem"] != w:
            fail("block %d: %s, the model says %s" % (i, b["mem"], w))
    said = re.findall(r"x64dbg: (\d+) of (\d+) memory accesses not in the file", stderr)
    if [tuple(map(int, s)) for s in said] != ([(left, total)] if left else []):
        fail("stderr says %s, the model %d of %d left out" % (said, left, total))
    return "%d blocks, %d memory entries, %d of %d accesses left out" % (
        len(blocks), sum(len(b["mem"]) for b in blocks), left, total)


def main():
    fmt, readback, rows, model_csv = sys.argv[1:5]
    kinds = [row["kind"] for row in csv.DictReader(open(rows))]
    model = model_accesses(model_csv)
    got = json.load(open(readback))
    if fmt == "tenet":
        print(tenet(got, kinds, model))
    else:
        print(x64dbg(got, kinds, model, open(sys.argv[5]).read()))


main()
