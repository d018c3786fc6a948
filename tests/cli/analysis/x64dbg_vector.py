#!/usr/bin/env python3
"""x64dbg_vector.py DIR: a trace with known memory accesses and, written by
hand from x64dbg's trace file specification, the memory entries its x64dbg
export must hold.

Writes DIR/x64.raw and DIR/x64.mem for `svmtrace-dump pack --mem` (the
formats of tests/cli/memprog.py, whose writer it uses) and DIR/x64.expect.json:
{"blocks": {block index: [[address, old, new], ...]}, "stderr": the line}.

x64dbg's block N is the instruction at record N's RIP, with the registers
before it; its memory entries are that instruction's accesses, which our
format stores with the next record (the state it produced).  An entry is
8 bytes at the access's address + 0, 8, 16, 24: the old content (before the
instruction) and the new one (after it), memory order.  Bytes the
instruction does not touch are only known from what the trace showed there
before in the session; where any byte is unknown the access is left out.
"""
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from memprog import Machine, acc, write  # noqa: E402

RCX = 2


def h(*b):
    return bytes(b)


def q(b):
    return b.hex()


V1 = h(1, 2, 3, 4, 5, 6, 7, 8)
R = (0x1234).to_bytes(8, "little")
R1 = (0x1235).to_bytes(8, "little")
B16 = bytes(range(0x40, 0x50))
C32 = bytes(range(0x80, 0xA0))
D32 = bytes(range(0xC0, 0xE0))
S8 = bytes(range(0x11, 0x19))

# Each record's accesses, in order, and (after #) what x64dbg's block of the
# instruction before it must say.
RECORDS = [
    # 0, session start: the session's first instruction has no block; the
    # export still learns the 8 bytes it wrote.
    [acc("write", 0xD000, 8, written=S8)],
    # 1: an 8-byte read: all its bytes known, unchanged (flag 1).
    [acc("read", 0x7000, 8, read=V1)],
    # 2: a 4-byte store: the old bytes and the 4 after it from record 1.
    [acc("write", 0x7000, 4, written=h(0xAA, 0xBB, 0xCC, 0xDD))],
    # 3: a store where nothing was seen: left out (old unknown).
    [acc("write", 0x8000, 4, written=h(1, 1, 1, 1))],
    # 4: a read-modify-write of 8 bytes: old read, new written.
    [acc("rmw", 0x7FF0, 8, read=R, written=R1)],
    # 5: a 16-byte read: two pieces.
    [acc("read", 0x9000, 16, read=B16)],
    # 6: a 32-byte read: four pieces.
    [acc("read", 0xA000, 32, read=C32)],
    # 7: a 32-byte store over them: old from record 6.
    [acc("write", 0xA000, 32, written=D32)],
    # 8: a 1-byte read inside the stored bytes: the piece's other 7 known.
    [acc("read", 0xA001, 1, read=D32[1:2])],
    # 9: a 1-byte read of bytes never seen: left out.
    [acc("read", 0xB000, 1, read=h(0x55))],
    # 10: an access the capture could not record: left out, and its bytes
    # (0xa000..0xa003) are no longer known.
    [acc("unrecorded", 0xA000, 4, why="unreadable")],
    # 11: so the piece at 0xa001 misses 0xa002 and 0xa003: left out.
    [acc("read", 0xA001, 1, read=D32[1:2])],
    # 12: a 1-byte store into what the session start wrote.
    [acc("write", 0xD000, 1, written=h(0x99))],
    # 13: sixteen 32-byte reads, 64 pieces: the first eight (32 entries) fit,
    # the other eight are past x64dbg's limit.
    [acc("read", 0xC000 + 32 * i, 32, read=bytes([i] * 32)) for i in range(16)],
    # 14: a 2-byte read-modify-write in known bytes.
    [acc("rmw", 0xD000, 2, read=h(0x99, 0x12), written=h(0xAA, 0x12))],
    # 15: a copy: the read is in, the store (to bytes never seen) is not.
    [acc("read", 0xD000, 8, read=h(0xAA) + S8[1:]), acc("write", 0xE000, 8, written=S8)],
    # 16: an access of unknown address and size: every byte may have changed.
    [acc("unrecorded", 0, 0, why="undecoded")],
    # 17: so this store's old bytes are unknown again: left out.
    [acc("write", 0xD000, 1, written=h(0x77))],
    # 18: nothing; its block's instruction has no record after it.
    [],
]

BLOCKS = {
    0: [["0x7000", q(V1), q(V1)]],
    1: [["0x7000", q(V1), q(h(0xAA, 0xBB, 0xCC, 0xDD, 5, 6, 7, 8))]],
    3: [["0x7ff0", q(R), q(R1)]],
    4: [["0x9000", q(B16[:8]), q(B16[:8])], ["0x9008", q(B16[8:]), q(B16[8:])]],
    5: [["0x%x" % (0xA000 + 8 * i), q(C32[8 * i:8 * i + 8]), q(C32[8 * i:8 * i + 8])]
        for i in range(4)],
    6: [["0x%x" % (0xA000 + 8 * i), q(C32[8 * i:8 * i + 8]), q(D32[8 * i:8 * i + 8])]
        for i in range(4)],
    7: [["0xa001", q(D32[1:9]), q(D32[1:9])]],
    11: [["0xd000", q(S8), q(h(0x99) + S8[1:])]],
    12: [["0x%x" % (0xC000 + 8 * i), q(bytes([i // 4] * 8)), q(bytes([i // 4] * 8))]
         for i in range(32)],
    13: [["0xd000", q(h(0x99) + S8[1:]), q(h(0xAA) + S8[1:])]],
    14: [["0xd000", q(h(0xAA) + S8[1:]), q(h(0xAA) + S8[1:])]],
}

STDERR = ("svmtrace-dump: x64dbg: 16 of 34 memory accesses not in the file (5 with bytes "
          "of their 8-byte pieces not known before or after, 2 unrecorded, 1 of "
          "instructions without a block, 8 past x64dbg's 32 entries per instruction); "
          "tenet and jsonl carry them")


def main():
    out = sys.argv[1]
    m = Machine({}, 0x400000, [0] * 16)
    m.gpr[4] = 0x7FF8
    for accs in RECORDS:
        m.gpr[RCX] = m.seq  # a register changes in every block
        m.state(accs)
        m.rip += 4
    write(m, os.path.join(out, "x64"))
    with open(os.path.join(out, "x64.expect.json"), "w") as f:
        json.dump({"blocks": BLOCKS, "records": len(RECORDS), "stderr": STDERR}, f)


main()
