#!/usr/bin/env python3
"""refdecode.py [--jsonl] FILE: decode a v5 trace from docs/format.md alone.

The reference decoder for the format page: written from the page, sharing
no code with libsvmtrace (its own LZ4 block decoder, after the LZ4 block
format description), so that where it and `svmtrace-dump dump --regs`
disagree, the page or the library is wrong.  Prints what `dump --regs`
prints (CSV, or with --jsonl what `dump --format jsonl --regs` prints),
with xstate_bv and YMM0-15 when the first record has YMM state (man
svmtrace-dump: --regs).

Exit status: 0 for a complete file; 3 when the file ends inside a frame
(every complete frame printed first; "truncated at offset N" on stderr);
1 when the bytes break the format ("offset N: why" on stderr).
"""
import struct
import sys

GPRS = "rax rbx rcx rdx rsi rdi rbp rsp r8 r9 r10 r11 r12 r13 r14 r15".split()
M64 = (1 << 64) - 1


class Bad(Exception):
    pass


def regop(op, d, s, r):
    """A delta's register operation (format.md, the OPS table)."""
    k = op & 0x3F
    if op == 0 and r >> 4 != r & 15:
        return s
    if op == 1:
        return (d + s) & M64
    if op == 2:
        return (d - s) & M64
    if op == 3:
        return d ^ s
    if op == 4:
        return (d + s) & 0xFFFFFFFF
    if op & 0xC0 == 0x40 and k:
        return ((s << k) | (s >> (64 - k))) & M64
    if op & 0xC0 == 0x80 and 0 < k < 32:
        w = s & 0xFFFFFFFF
        return ((w << k) | (w >> (32 - k))) & 0xFFFFFFFF
    raise Bad("operation %02x %02x is not defined" % (r, op))


def lz4_block(src, size):
    """LZ4 block format: sequences of token, literals, offset, match; the
    last sequence is literals only, and in a block with matches the last
    5 bytes are literals and the last match starts 12 or more bytes before
    the end (docs/format.md, "Compression")."""
    out = bytearray()
    i = 0
    last_match = None
    while True:
        if i >= len(src):
            raise Bad("LZ4 block ends with a match: no last sequence of literals")
        token = src[i]
        i += 1
        n = token >> 4
        if n == 15:
            while True:
                if i >= len(src):
                    raise Bad("LZ4 literal length runs past the block")
                b = src[i]
                i += 1
                n += b
                if b != 255:
                    break
        if i + n > len(src):
            raise Bad("LZ4 literals run past the block")
        out += src[i:i + n]
        i += n
        if i == len(src):  # the last sequence has literals only
            break
        if i + 2 > len(src):
            raise Bad("LZ4 offset runs past the block")
        off = src[i] | src[i + 1] << 8
        i += 2
        if off == 0:
            raise Bad("LZ4 match offset 0")
        if off > len(out):
            raise Bad("LZ4 match offset outside the output")
        n = token & 15
        if n == 15:
            while True:
                if i >= len(src):
                    raise Bad("LZ4 match length runs past the block")
                b = src[i]
                i += 1
                n += b
                if b != 255:
                    break
        n += 4
        if len(out) + n > size:
            raise Bad("LZ4 block decodes to more than the frame's decoded size")
        start = len(out) - off
        last_match = len(out)
        while n > 0:  # a match may overlap its own output: copy what exists, repeat
            chunk = out[start:start + min(n, off)]
            out += chunk
            n -= len(chunk)
            start += len(chunk)
    if len(out) != size:
        raise Bad("LZ4 block decodes to %d bytes, not %d" % (len(out), size))
    if last_match is not None and n < 5:
        raise Bad("LZ4 block ends with %d literals, not 5 or more" % n)
    if last_match is not None and size - last_match < 12:
        raise Bad("LZ4 block's last match starts %d bytes before its end" % (size - last_match))
    return bytes(out)


class Frame:
    def __init__(self, data):
        self.d = data
        self.p = 0

    def take(self, n):
        if self.p + n > len(self.d):
            raise Bad("record runs past the end of its frame")
        b = self.d[self.p:self.p + n]
        self.p += n
        return b

    def u8(self):
        return self.take(1)[0]

    def u16(self):
        return struct.unpack("<H", self.take(2))[0]

    def u32(self):
        return struct.unpack("<I", self.take(4))[0]

    def u64(self):
        return struct.unpack("<Q", self.take(8))[0]

    def varint(self):
        v = 0
        for k in range(10):
            b = self.u8()
            v |= (b & 0x7F) << (7 * k)
            if not b & 0x80:
                if v > M64:
                    raise Bad("varint does not fit in 64 bits")
                return v
        raise Bad("varint longer than 10 bytes")

    def svarint(self):
        v = self.varint()
        return (v >> 1) ^ (M64 if v & 1 else 0)  # zigzag back; used modulo 2^64


def pindex(rip):
    return ((rip * 0x9E3779B97F4A7C15) & M64) >> 52


class Decoder:
    """Decoding state; reset() at every frame (each frame decodes on its own)."""

    def __init__(self):
        self.last_seq = None
        self.rip = 0

    def reset(self):
        self.table = {}  # index -> [tag, next_rip, rflags, mask, deltas]
        self.base = False  # a delta may follow (a full record, no end since)
        self.known = False  # a record of this frame holds rflags/cr3/GPRs
        self.ymm = False  # the last full record (or end with S) had X
        self.no_ymm()
        self.rflags = self.cr3 = 0
        self.gpr = [0] * 16

    def sequence(self, seq):
        if self.last_seq is not None and seq <= self.last_seq:
            raise Bad("sequence %d does not follow %d" % (seq, self.last_seq))
        self.last_seq = seq

    def no_ymm(self):
        self.xbv = 0
        self.yregs = [bytes(32)] * 16

    def xstate(self, f):
        self.xbv = f.u64()
        self.yregs = [f.take(32) for _ in range(16)]

    def full(self, f, h):
        if h & 0xF0:
            raise Bad("full record header has reserved bits")
        self.sequence(f.varint())
        tsc = f.u64()
        reason = f.varint()
        if reason > 0xFFFFFFFF:
            raise Bad("reason over 32 bits")
        self.rip = f.u64()
        self.rflags = f.varint()
        self.cr3 = f.varint()
        self.gpr = [f.varint() for _ in range(16)]
        dropped = f.varint() if h & 0x08 else 0
        self.ymm = bool(h & 0x04)
        if self.ymm:
            self.xstate(f)
        else:
            self.no_ymm()
        self.base = self.known = True
        kind = "instruction" if h & 3 == 1 else "session_start"
        return kind, reason, tsc, dropped

    def end(self, f, h):
        if h & 0xE0:
            raise Bad("session end header has reserved bits")
        if h & 0x10 and not h & 0x08:
            raise Bad("session end has X without S")
        self.sequence(f.u64())
        tsc = f.u64()
        reason = f.u32()
        self.rip = f.u64()
        if h & 0x08:  # S: the state follows
            self.rflags = f.varint()
            self.cr3 = f.varint()
            self.gpr = [f.varint() for _ in range(16)]
        dropped = f.varint() if h & 0x04 else 0
        if h & 0x08:
            self.ymm = bool(h & 0x10)
            if self.ymm:
                self.xstate(f)
            self.known = True
        if not self.known:
            self.ymm = False
        if not self.ymm:
            self.no_ymm()
        self.base = False
        return "session_end", reason, tsc, dropped

    def delta(self, f, h):
        if not self.base:
            raise Bad("delta without a full record before it in its frame")
        frm = self.rip
        e = self.table.get(pindex(frm))
        hit = e is not None and e[0] == frm
        if h & 0x04:
            self.rip = (frm + f.svarint()) & M64
        elif hit:
            self.rip = e[1]
        else:
            raise Bad("predicted RIP without history")
        ops = []
        if h & 0x80:  # OPS: count, then (destination << 4 | source, operation) pairs
            n = f.take(1)[0]
            if not 1 <= n <= 16:
                raise Bad("operation count outside 1..16")
            raw = f.take(2 * n)
            ops = [(raw[2 * i], raw[2 * i + 1]) for i in range(n)]
            if len(set(r >> 4 for r, _ in ops)) != n:
                raise Bad("a register written twice by OPS")
            old = list(self.gpr)
            for r, op in ops:
                self.gpr[r >> 4] = regop(op, old[r >> 4], old[r & 15], r)
        mask, deltas = 0, []
        if h & 0x08:
            mask = f.u16()
            if any(mask >> (r >> 4) & 1 for r, _ in ops):
                raise Bad("GPR mask has a register OPS wrote")
            for i in range(16):
                if mask >> i & 1:
                    d = f.svarint()
                    deltas.append(d)
                    self.gpr[i] = (self.gpr[i] + d) & M64
        elif hit and not h & 0x80:
            old = list(self.gpr)
            k = 0
            for i in range(16):
                if e[3] >> i & 1:
                    self.gpr[i] = (self.gpr[i] + e[4][k]) & M64
                    k += 1
            if e[5] is not None:
                r, op = e[5]
                self.gpr[r >> 4] = regop(op, old[r >> 4], old[r & 15], r)
        x = f.varint() if h & 0x10 else 0
        self.rflags = (e[2] if hit else self.rflags) ^ x
        step = f.varint() + 2 if h & 0x20 else 1
        seq = self.last_seq + step
        if seq > M64:
            raise Bad("sequence overflows")
        self.sequence(seq)
        if h & 0x40:
            if not self.ymm:
                raise Bad("YMM delta in a session without YMM state")
            self.xbv = f.u64()
            ymask = f.u16()
            for i in range(16):
                if ymask >> i & 1:
                    self.yregs[i] = f.take(32)
        if not hit or h & 0x9C:
            if not hit:
                e = [frm, 0, 0, 0, [], None]
                self.table[pindex(frm)] = e
            e[0], e[1], e[2] = frm, self.rip, self.rflags
            if not hit or h & 0x88:
                e[3], e[4] = (mask, deltas) if len(deltas) <= 4 else (0, [])
                e[5] = ops[0] if len(ops) == 1 else None
        return "instruction", 0, None, 0

    def record(self, f):
        h = f.d[f.p]
        f.p += 1
        t = h & 3
        if t == 0:
            return self.delta(f, h)
        if t == 3:
            return self.end(f, h)
        return self.full(f, h)


def hex256(b):
    """A YMM register's 32 bytes (low byte first) as one 256-bit number, 64 digits."""
    return "0x" + b[::-1].hex()


def row(cpu, seq, kind, rip, state, reason, tsc, dropped, jsonl, ymm_cols, ymm):
    """ymm: (xstate_bv, 16 registers) when the record has YMM state and its state is known."""
    hx = "0x%x".__mod__
    if not jsonl:
        st = [hx(v) if state else "" for v in state_values(state)]
        y = []
        if ymm_cols:
            y = [hx(ymm[0])] + [hex256(r) for r in ymm[1]] if ymm else [""] * 17
        return ",".join([str(cpu), str(seq), kind, hx(rip)] + st[:2] + [str(reason)] + st[2:] + y)
    v = state_values(state)
    q = (lambda k, i: '"%s":"%s"' % (k, hx(v[i]))) if state else (lambda k, i: '"%s":null' % k)
    s = '{"cpu":%d,"sequence":%d,"kind":"%s","rip":"%s",%s,%s,"reason":%d' % (
        cpu, seq, kind, hx(rip), q("rflags", 0), q("cr3", 1), reason)
    if tsc is not None:
        s += ',"tsc":"%s"' % hx(tsc)
    if dropped:
        s += ',"dropped":%d' % dropped
    s += ',"regs":{' + ",".join(q(g, 2 + i) for i, g in enumerate(GPRS)) + "}"
    if ymm:
        s += ',"xstate_bv":"%s","ymm":[%s]' % (hx(ymm[0]), ",".join('"%s"' % hex256(r) for r in ymm[1]))
    return s + "}"


def header_line(ymm, jsonl):
    """The CSV header (none for JSON lines): YMM columns when the first record of known
    state has YMM state (docs/format.md, "What svmtrace-dump dump prints")."""
    if jsonl:
        return ""
    y = ",xstate_bv," + ",".join("ymm%d" % i for i in range(16)) if ymm else ""
    return "cpu,sequence,kind,rip,rflags,cr3,reason," + ",".join(GPRS) + y + "\n"


def state_values(state):
    return state if state else [0] * 18


def main():
    jsonl = sys.argv[1:2] == ["--jsonl"]
    data = open(sys.argv[-1], "rb").read()
    out = sys.stdout
    header = None
    opened = False
    pending = []  # rows before the first record of known state: the header waits for it
    ymm_left_out = False

    def put(cpu, seq, kind, rip, state, reason, tsc, dropped, ymm):
        nonlocal header, ymm_left_out
        if header is None and state is None:
            pending.append((cpu, seq, kind, rip, state, reason, tsc, dropped, ymm))
            return
        if header is None:
            header = header_line(ymm is not None, jsonl)
            out.write(header)
        cols = header.endswith(",ymm15\n")
        for args in pending + [(cpu, seq, kind, rip, state, reason, tsc, dropped, ymm)]:
            if args[8] and not cols and not jsonl and not ymm_left_out:
                sys.stderr.write("sequence %d has YMM state the CSV has no columns for\n" % args[1])
                ymm_left_out = True
            out.write(row(*args[:8], jsonl, cols, args[8]) + "\n")
        pending.clear()

    def flush_pending():
        nonlocal header
        if header is None and opened:
            header = header_line(False, jsonl)
            out.write(header)
        for args in pending:
            out.write(row(*args[:8], jsonl, False, args[8]) + "\n")
        pending.clear()

    try:
        if len(data) < 16:
            raise Bad("offset 0: shorter than the 16-byte header")
        magic, version, cpu, flags = struct.unpack_from("<4sIII", data)
        if magic != b"FTRC" or version != 5 or flags != 1:
            raise Bad("offset 0: bad magic, version or flags")
        opened = True  # dump prints a header once the file header is good
        dec = Decoder()
        off = 16
        f = None
        while off < len(data):
            if off + 8 > len(data):
                raise EOFError(off)
            size, stored = struct.unpack_from("<II", data, off)
            if not 1 <= size <= 65536 or not 1 <= stored <= size:
                raise Bad("offset %d: frame sizes %d/%d" % (off, size, stored))
            if off + 8 + stored > len(data):
                raise EOFError(off)
            payload = data[off + 8:off + 8 + stored]
            f = None
            try:
                f = Frame(payload if stored == size else lz4_block(payload, size))
                dec.reset()
                while f.p < len(f.d):
                    kind, reason, tsc, dropped = dec.record(f)
                    state = ymm = None
                    if dec.known:
                        state = [dec.rflags, dec.cr3] + dec.gpr
                    if dec.known and dec.ymm:
                        ymm = (dec.xbv, dec.yregs)
                    put(cpu, dec.last_seq, kind, dec.rip, state, reason, tsc, dropped, ymm)
            except Bad as e:
                raise Bad("offset %d: frame byte %d: %s" % (off, f.p if f else 0, e))
            off += 8 + stored
    except EOFError as e:
        flush_pending()
        out.flush()
        sys.stderr.write("truncated at offset %d\n" % e.args[0])
        return 3
    except Bad as e:
        flush_pending()
        out.flush()
        sys.stderr.write("%s\n" % e)
        return 1
    flush_pending()
    return 1 if ymm_left_out else 0


if __name__ == "__main__":
    sys.exit(main())
