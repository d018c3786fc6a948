#!/usr/bin/env python3
"""memprog.py DIR: two small programs and every memory access they make.

A model written from the instructions' definitions, sharing nothing with
libsvmtrace: it steps the programs below and writes, for `svmtrace-dump pack
--mem`, DIR/NAME.raw (168-byte states after each instruction) and
DIR/NAME.mem (88-byte access records, docs/format.md "Raw records"), and
DIR/NAME.json: per instruction its sequence and accesses as the model knows
them ({"kind", "addr", "size", "read", "written"}, values as hex bytes in
memory order).

  decrypt  call a routine that XORs 16 bytes at 0x5000 with 0x5a into 0x6000
           (movzx eax, byte [rsi+rcx]; xor al, 0x5a; mov [rdi+rcx], al;
           inc rcx; cmp rcx, 16; jne), then ret; add qword [rsp-8], 1 (an
           rmw) and a 64-byte store the capture cannot record
  strcmp   compare "hello" at 0x7000 with "help!" at 0x7100 byte by byte
           (mov al, [rsi]; cmp al, [rdi]; jne; inc rsi; inc rdi; jmp) until
           they differ
  random   (with --random N SEED) N states of a few instructions again and
           again with 0 to 5 random accesses each: every kind, sizes 1 to 32,
           consecutive and scattered addresses, values that registers hold
           and values none does, unrecorded accesses of any size
"""
import json
import struct
import sys

M64 = (1 << 64) - 1
RAX, RBX, RCX, RDX, RSI, RDI, RBP, RSP = range(8)
KIND = {"unrecorded": 0, "read": 1, "write": 2, "rmw": 3}
WHY = {"fault": 1, "too-large": 2, "undecoded": 3, "unreadable": 4}  # format.md

PLAIN = b"svmtrace decrypt"
CIPHER = bytes(b ^ 0x5A for b in PLAIN)


class Machine:
    def __init__(self, mem, rip, gpr):
        self.mem = dict(mem)  # address -> byte
        self.rip = rip
        self.gpr = gpr
        self.rflags = 0x202
        self.seq = 100
        self.states = []
        self.accesses = []  # per instruction: list of dicts

    def read(self, addr, size):
        return bytes(self.mem.get(addr + i, 0) for i in range(size))

    def write(self, addr, data):
        for i, b in enumerate(data):
            self.mem[addr + i] = b

    def state(self, acc):
        self.states.append((self.seq, 1000 + self.seq, self.rip, self.rflags, 0x1AA000, list(self.gpr)))
        self.accesses.append((self.seq, acc))
        self.seq += 1

    def flags_sub(self, a, b, bits=64):
        m = (1 << bits) - 1
        r = (a - b) & m
        f = 0x202
        if r == 0:
            f |= 0x40
        if r >> (bits - 1):
            f |= 0x80
        if bin(r & 0xFF).count("1") % 2 == 0:
            f |= 0x04
        if a & m < b & m:
            f |= 0x01
        return f

    def start(self):
        """The session start: the state before the first instruction."""
        self.state(None)


def acc(kind, addr, size, read=b"", written=b"", why=None):
    a = {"kind": kind, "addr": addr, "size": size}
    if kind in ("read", "rmw"):
        a["read"] = read.hex()
    if kind in ("write", "rmw"):
        a["written"] = written.hex()
    if why:
        a["why"] = why
    return a



def decrypt():
    mem = {0x5000 + i: b for i, b in enumerate(CIPHER)}
    gpr = [0] * 16
    gpr[RSI], gpr[RDI], gpr[RSP] = 0x5000, 0x6000, 0x7FF0
    m = Machine(mem, 0x400000, gpr)
    m.start()
    # 0x400000: call 0x401000 (5 bytes): pushes 0x400005
    m.gpr[RSP] -= 8
    ret = struct.pack("<Q", 0x400005)
    m.write(m.gpr[RSP], ret)
    m.rip = 0x401000
    m.state([acc("write", m.gpr[RSP], 8, written=ret)])
    for i in range(16):
        a = m.gpr[RSI] + m.gpr[RCX]
        b = m.read(a, 1)
        m.gpr[RAX] = b[0]
        m.rip = 0x401004
        m.state([acc("read", a, 1, read=b)])
        m.gpr[RAX] ^= 0x5A
        m.rflags = 0x202 | (0x04 if bin(m.gpr[RAX]).count("1") % 2 == 0 else 0)
        m.rip = 0x401006
        m.state([])
        a = m.gpr[RDI] + m.gpr[RCX]
        w = bytes([m.gpr[RAX] & 0xFF])
        m.write(a, w)
        m.rip = 0x401009
        m.state([acc("write", a, 1, written=w)])
        m.gpr[RCX] += 1
        m.rip = 0x40100C
        m.state([])
        m.rflags = m.flags_sub(m.gpr[RCX], 16)
        m.rip = 0x401010
        m.state([])
        m.rip = 0x401000 if m.gpr[RCX] != 16 else 0x401012
        m.state([])
    # 0x401012: ret
    r = m.read(m.gpr[RSP], 8)
    m.rip = struct.unpack("<Q", r)[0]
    m.gpr[RSP] += 8
    m.state([acc("read", m.gpr[RSP] - 8, 8, read=r)])
    # 0x400005: add qword [rsp-8], 1 (6 bytes)
    a = m.gpr[RSP] - 8
    old = m.read(a, 8)
    new = struct.pack("<Q", (struct.unpack("<Q", old)[0] + 1) & M64)
    m.write(a, new)
    m.rflags = 0x202
    m.rip = 0x40000B
    m.state([acc("rmw", a, 8, read=old, written=new)])
    # 0x40000b: a 64-byte store (AVX-512), 7 bytes: too large to record
    m.rip = 0x400012
    m.state([acc("unrecorded", 0x6100, 64, why="too-large")])
    return m


def strcmp():
    mem = {}
    for i, b in enumerate(b"hello"):
        mem[0x7000 + i] = b
    for i, b in enumerate(b"help!"):
        mem[0x7100 + i] = b
    gpr = [0] * 16
    gpr[RSI], gpr[RDI], gpr[RSP] = 0x7000, 0x7100, 0x7FF0
    m = Machine(mem, 0x402000, gpr)
    m.start()
    while True:
        b = m.read(m.gpr[RSI], 1)
        m.gpr[RAX] = (m.gpr[RAX] & ~0xFF) | b[0]
        m.rip = 0x402002
        m.state([acc("read", m.gpr[RSI], 1, read=b)])
        c = m.read(m.gpr[RDI], 1)
        m.rflags = m.flags_sub(b[0], c[0], 8)
        m.rip = 0x402004
        m.state([acc("read", m.gpr[RDI], 1, read=c)])
        if b != c:
            m.rip = 0x402010
            m.state([])
            break
        m.rip = 0x402006
        m.state([])
        m.gpr[RSI] += 1
        m.rip = 0x402009
        m.state([])
        m.gpr[RDI] += 1
        m.rip = 0x40200C
        m.state([])
        m.rip = 0x402000
        m.state([])
    return m


def write(m, base):
    with open(base + ".raw", "wb") as f:
        for seq, tsc, rip, rflags, cr3, gpr in m.states:
            f.write(struct.pack("<21Q", seq, tsc, rip, rflags, cr3, *gpr))
    with open(base + ".mem", "wb") as f:
        for seq, accs in m.accesses:
            for a in accs or []:
                f.write(struct.pack("<QQIBBH32s32s", seq, a["addr"], a["size"], KIND[a["kind"]],
                                    WHY.get(a.get("why"), 0), 0,
                                    bytes.fromhex(a.get("read", "")),
                                    bytes.fromhex(a.get("written", ""))))
    with open(base + ".json", "w") as f:
        json.dump([{"sequence": s, "mem": a} for s, a in m.accesses if a is not None], f)


def random_stream(n, seed):
    import random

    rnd = random.Random(seed)
    m = Machine({}, 0x400000, [rnd.getrandbits(64) for _ in range(16)])
    cursor = 0x10000
    for _ in range(n):  # the first is the session start: its step's accesses too
        m.rip = 0x400000 + 4 * rnd.randrange(8)
        m.gpr[rnd.randrange(16)] += rnd.randrange(3)
        m.gpr[rnd.randrange(16)] &= M64
        accs = []
        for _ in range(rnd.randrange(6)):
            kind = rnd.choice(["read", "write", "rmw", "unrecorded", "read", "write"])
            size = rnd.choice([1, 2, 4, 8, 16, 32, 3, 10])
            addr = cursor if rnd.random() < 0.8 else rnd.getrandbits(64)
            cursor = (cursor + size) & M64
            if kind == "unrecorded":
                accs.append(acc(kind, addr, rnd.randrange(1000), why=rnd.choice(list(WHY))))
                continue
            val = lambda: bytes(rnd.getrandbits(8) for _ in range(size))
            r, w = val(), val()
            if size <= 8 and rnd.random() < 0.5:  # a value a register (or the RIP) holds
                r = (m.gpr + [m.rip])[rnd.randrange(17)].to_bytes(8, "little")[:size]
            if rnd.random() < 0.2:
                w = r
            accs.append(acc(kind, addr, size, read=r, written=w))
        m.state(accs)
    return m


if __name__ == "__main__":
    if sys.argv[1] == "--random":
        write(random_stream(int(sys.argv[2]), int(sys.argv[3])), sys.argv[4] + "/random")
    else:
        write(decrypt(), sys.argv[1] + "/decrypt")
        write(strcmp(), sys.argv[1] + "/strcmp")
