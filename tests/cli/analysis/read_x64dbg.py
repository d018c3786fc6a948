#!/usr/bin/env python3
# read_x64dbg.py FILE: an x64dbg .trace64 reader written from x64dbg's
# "trace file format specification": "TRAC", a u32 length and a JSON header
# (with "ver" 1, "arch" "x64" and, as x64dbg's reader demands, "compression"),
# then blocks of type 0: u8 type, u8 RegisterChanges, u8 MemoryAccesses,
# u8 flags (bit 7: a u32 ThreadId follows; bits 0-3: opcode size), the
# opcode bytes, RegisterChanges relative positions (absolute = previous
# absolute + 1 + relative; the first is absolute) into REGDUMP, as many
# pointer-sized new values (the registers before the instruction runs),
# then MemoryAccesses entries as structure of arrays: a flags byte each (bit
# 0: memory unchanged, no new content stored; bits 1-7 reserved, 0), a
# pointer-sized address each, the old content (before the instruction) of
# each, then the new content (after it) of each whose bit 0 is clear.
# x64dbg's reader refuses more than 32 entries in a block
# (MAX_MEMORY_OPERANDS).  REGDUMP.regcontext on x64: cax ccx cdx cbx csp
# cbp csi cdi r8-r15 cip eflags ...; a block with all registers has
# RegisterChanges = 172.
# Prints JSON: the header and, per block, thread, opcode, registers and
# memory entries [address, old, new] (contents as 16 hex digits, the
# 8 bytes in memory order; new = old for an unchanged entry).
import json, struct, sys

NAMES = ['rax', 'rcx', 'rdx', 'rbx', 'rsp', 'rbp', 'rsi', 'rdi'] + \
        ['r%d' % i for i in range(8, 16)] + ['rip', 'rflags']
data = open(sys.argv[1], 'rb').read()
assert data[:4] == b'TRAC', 'magic'
(hlen,) = struct.unpack_from('<I', data, 4)
header = json.loads(data[8:8 + hlen].decode())
assert header.get('arch') == 'x64', header
# x64dbg's reader (TraceFileReader.cpp, readFileHeader) refuses a header
# without "compression"; its own tracer writes "" (none).
assert header.get('compression') == '', header
pos = 8 + hlen
regdump = [None] * 172
tid = None
blocks = []
while pos < len(data):
    btype, nreg, nmem, flags = data[pos:pos + 4]
    pos += 4
    assert btype == 0, 'block type %d at %d' % (btype, pos - 4)
    assert flags & 0x70 == 0, 'reserved flag bits'
    if flags & 0x80:
        (tid,) = struct.unpack_from('<I', data, pos)
        pos += 4
    assert tid is not None, 'the first block must carry a thread id'
    size = flags & 0x0f
    opcode = data[pos:pos + size]
    pos += size
    rel = data[pos:pos + nreg]
    pos += nreg
    vals = struct.unpack_from('<%dQ' % nreg, data, pos)
    pos += 8 * nreg
    absolute = -1
    for r, v in zip(rel, vals):
        absolute += r + 1
        assert absolute < 172, 'register position past REGDUMP'
        regdump[absolute] = v
    assert nmem <= 32, 'block %d: %d memory entries' % (len(blocks), nmem)
    mflags = data[pos:pos + nmem]
    pos += nmem
    assert all(f & 0xfe == 0 for f in mflags), 'reserved memory flag bits'
    addrs = struct.unpack_from('<%dQ' % nmem, data, pos)
    pos += 8 * nmem
    old = [data[pos + 8 * i:pos + 8 * i + 8] for i in range(nmem)]
    pos += 8 * nmem
    mem = []
    for f, a, o in zip(mflags, addrs, old):
        if f & 1:
            n = o
        else:
            n = data[pos:pos + 8]
            pos += 8
        mem.append(['0x%x' % a, o.hex(), n.hex()])
    assert pos <= len(data), 'block %d is cut short' % len(blocks)
    assert None not in regdump[:18], 'block %d: registers never set' % len(blocks)
    blocks.append({'thread': tid, 'opcode': opcode.hex(), 'full': nreg == 172,
                   'regs': dict(zip(NAMES, regdump[:18])), 'mem': mem})
assert pos == len(data), 'trailing bytes'
print(json.dumps({'header': header, 'blocks': blocks}))
