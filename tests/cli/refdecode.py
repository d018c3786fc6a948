#!/usr/bin/env python3
"""refdecode.py [--jsonl] [--mem] FILE: decode a v5 trace from docs/format.md alone.

The reference decoder for the format page: written from the page, sharing
no code with libsvmtrace (its own LZ4 block decoder, after the LZ4 block
format description), so that where it and `svmtrace-dump dump --regs`
disagree, the page or the library is wrong.  Prints what `dump --regs`
prints (CSV, or with --jsonl what `dump --format jsonl --regs` prints),
with xstate_bv and YMM0-15 when the first record has YMM state (man
svmtrace-dump: --regs), and with --mem the memory accesses as `dump --mem`
prints them (a file with the header flag M).

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


MEMKIND = ["u", "r", "w", "rw"]
MEMKIND_NAME = ["unrecorded", "read", "write", "rmw"]
WHY = ["", "fault", "too-large", "undecoded", "unreadable"]


def mem_text(a):
    """One access as `dump --mem` prints it in CSV: KIND:ADDRESS:SIZE:VALUES."""
    s = "%s:0x%x:%d:" % (MEMKIND[a["kind"]], a["addr"], a["size"])
    if a["kind"] == 0:
        return s + WHY[a["why"]]
    return s + ":".join(a[v].hex() for v in ("read", "written") if v in a)


def mem_json(a):
    s = '{"kind":"%s","addr":"0x%x","size":%d' % (MEMKIND_NAME[a["kind"]], a["addr"], a["size"])
    if a["kind"] == 0:
        return s + ',"why":"%s"}' % WHY[a["why"]]
    for v in ("read", "written"):
        if v in a:
            s += ',"%s":"%s"' % (v, a[v].hex())
    return s + "}"


def pindex(rip):
    return ((rip * 0x9E3779B97F4A7C15) & M64) >> 52


class Decoder:
    """Decoding state; reset() at every frame (each frame decodes on its own)."""

    def __init__(self, mem):
        self.last_seq = None
        self.rip = 0
        self.mem = mem  # the header's M: instruction records end with a memory part
        self.accesses = []

    def reset(self):
        self.mtable = {}  # index -> (tag, [learned access dicts])
        self.last_end = 0  # end of the frame's last access
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

    def values(self, f, a, regs, vals):
        """An access's read value, then its written value, from their sources."""
        for name, src, reg, has in (("read", a["desc"] >> 2 & 3, regs >> 4, a["kind"] in (1, 3)),
                                    ("written", a["desc"] >> 4 & 3, regs & 15, a["kind"] in (2, 3))):
            if not has:
                continue
            if src == 0:
                v = f.take(a["size"])
            elif src == 1:
                if a["size"] > 8:
                    raise Bad("a register value of more than 8 bytes")
                v = self.gpr[reg].to_bytes(8, "little")[:a["size"]]
            elif src == 2:
                if not vals or len(vals[-1]) != a["size"]:
                    raise Bad("a repeated value with none of its size before it")
                v = vals[-1]
            else:  # 3: the record's RIP
                if a["size"] > 8:
                    raise Bad("a RIP value of more than 8 bytes")
                v = self.rip.to_bytes(8, "little")[:a["size"]]
            vals.append(v)
            a[name] = v

    def mem_part(self, f, delta, frm):
        """The memory part after an instruction record (format.md, "Memory operands")."""
        e = self.mtable.get(pindex(frm)) if delta else None
        pred = e[1] if e is not None and e[0] == frm else None
        head = f.u8()
        accs, vals = [], []
        if head in (0x80, 0x81):  # the entry's accesses; with 0x81 at stored addresses
            if not pred:
                raise Bad("memory part predicted without an entry holding accesses")
            for l in pred:
                off = f.svarint() if head == 0x81 else 0
                a = dict(l, addr=(l["addr"] + l["stride"] + off) & M64)
                self.values(f, a, a["regs"], vals)
                accs.append(a)
        elif head <= 16:
            for k in range(head):
                desc = f.u8()
                kind, rs, ws = desc & 3, desc >> 2 & 3, desc >> 4 & 3
                if desc & 0x80:
                    raise Bad("memory descriptor has reserved bits")
                if (rs and kind not in (1, 3)) or (ws and kind not in (2, 3)):
                    raise Bad("memory descriptor gives a source to a value the kind has not")
                regs = f.u8() if 1 in (rs, ws) else 0
                if (rs != 1 and regs >> 4) or (ws != 1 and regs & 15):
                    raise Bad("registers nibble for a value not taken from a register")
                why = 0
                if kind == 0:
                    why = f.u8()
                    if not 1 <= why <= 4:
                        raise Bad("unrecorded access reason outside 1..4")
                if desc & 0x40:  # B: the address counts from a GPR of the record's state
                    b = f.u8()
                    if b > 15:
                        raise Bad("base register %d" % b)
                    base = self.gpr[b]
                elif pred and k < len(pred):
                    base = pred[k]["addr"] + pred[k]["stride"]
                elif k:
                    base = accs[k - 1]["addr"] + accs[k - 1]["size"]
                else:
                    base = self.last_end if delta else 0
                addr = (base + f.svarint()) & M64
                size = f.varint()
                if (kind and not 1 <= size <= 32) or size > 0xFFFFFFFF:
                    raise Bad("memory access size %d" % size)
                a = {"kind": kind, "why": why, "addr": addr, "size": size, "desc": desc & 0xBF, "regs": regs}
                self.values(f, a, regs, vals)
                accs.append(a)
        else:
            raise Bad("memory part header 0x%02x" % head)
        if accs:
            self.last_end = (accs[-1]["addr"] + accs[-1]["size"]) & M64
        if delta:
            learned = []
            for k, a in enumerate(accs if len(accs) <= 4 else []):
                stride = (a["addr"] - pred[k]["addr"]) & M64 if pred and k < len(pred) else 0
                learned.append({"kind": a["kind"], "why": a["why"], "addr": a["addr"], "size": a["size"],
                                "desc": a["desc"], "regs": a["regs"], "stride": stride})
            self.mtable[pindex(frm)] = (frm, learned)
        return accs

    def record(self, f):
        h = f.d[f.p]
        f.p += 1
        t = h & 3
        frm = self.rip
        self.accesses = []
        if t == 0:
            r = self.delta(f, h)
        elif t == 3:
            return self.end(f, h)
        else:
            r = self.full(f, h)
        if self.mem and r[0] in ("instruction", "session_start"):  # the records of a step
            self.accesses = self.mem_part(f, t == 0, frm)
        return r


def hex256(b):
    """A YMM register's 32 bytes (low byte first) as one 256-bit number, 64 digits."""
    return "0x" + b[::-1].hex()


def row(cpu, seq, kind, rip, state, reason, tsc, dropped, jsonl, ymm_cols, ymm, mem):
    """ymm: (xstate_bv, 16 registers) when the record has YMM state and its state is known;
    mem: the record's accesses with --mem, else None."""
    hx = "0x%x".__mod__
    if not jsonl:
        st = [hx(v) if state else "" for v in state_values(state)]
        y = []
        if ymm_cols:
            y = [hx(ymm[0])] + [hex256(r) for r in ymm[1]] if ymm else [""] * 17
        m = [" ".join(mem_text(a) for a in mem)] if mem is not None else []
        return ",".join([str(cpu), str(seq), kind, hx(rip)] + st[:2] + [str(reason)] + st[2:] + y + m)
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
    if mem is not None:
        s += ',"mem":[%s]' % ",".join(mem_json(a) for a in mem)
    return s + "}"


def header_line(ymm, jsonl, mem):
    """The CSV header (none for JSON lines): YMM columns when the first record of known
    state has YMM state (docs/format.md, "What svmtrace-dump dump prints"), mem with --mem."""
    if jsonl:
        return ""
    y = ",xstate_bv," + ",".join("ymm%d" % i for i in range(16)) if ymm else ""
    return "cpu,sequence,kind,rip,rflags,cr3,reason," + ",".join(GPRS) + y + (",mem" if mem else "") + "\n"


def state_values(state):
    return state if state else [0] * 18


def main():
    jsonl = "--jsonl" in sys.argv[1:-1]
    want_mem = "--mem" in sys.argv[1:-1]
    data = open(sys.argv[-1], "rb").read()
    out = sys.stdout
    header = None
    opened = False
    pending = []  # rows before the first record of known state: the header waits for it
    ymm_left_out = False

    def put(cpu, seq, kind, rip, state, reason, tsc, dropped, ymm, mem):
        nonlocal header, ymm_left_out
        if header is None and state is None:
            pending.append((cpu, seq, kind, rip, state, reason, tsc, dropped, ymm, mem))
            return
        if header is None:
            header = header_line(ymm is not None, jsonl, want_mem)
            out.write(header)
        cols = ",ymm15" in header
        for args in pending + [(cpu, seq, kind, rip, state, reason, tsc, dropped, ymm, mem)]:
            if args[8] and not cols and not jsonl and not ymm_left_out:
                sys.stderr.write("sequence %d has YMM state the CSV has no columns for\n" % args[1])
                ymm_left_out = True
            out.write(row(*args[:8], jsonl, cols, args[8], args[9]) + "\n")
        pending.clear()

    def flush_pending():
        nonlocal header
        if header is None and opened:
            header = header_line(False, jsonl, want_mem)
            out.write(header)
        for args in pending:
            out.write(row(*args[:8], jsonl, False, args[8], args[9]) + "\n")
        pending.clear()

    try:
        if len(data) < 16:
            raise Bad("offset 0: shorter than the 16-byte header")
        magic, version, cpu, flags = struct.unpack_from("<4sIII", data)
        if magic != b"FTRC" or version != 5 or flags not in (1, 3):
            raise Bad("offset 0: bad magic, version or flags")
        if want_mem and flags != 3:
            raise Bad("offset 12: the trace has no memory operands")
        opened = True  # dump prints a header once the file header is good
        dec = Decoder(flags == 3)
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
                    put(cpu, dec.last_seq, kind, dec.rip, state, reason, tsc, dropped, ymm,
                        dec.accesses if want_mem else None)
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
