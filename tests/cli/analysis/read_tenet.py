#!/usr/bin/env python3
# read_tenet.py [--mem] FILE: a Tenet trace reader written from Tenet's
# tracer description: a text file, one line per executed instruction, each a
# comma-separated list of REG=0xVALUE (the registers that changed, with
# rip always present) and optionally memory entries ACCESS=ADDRESS:BYTES
# (ACCESS mr, mw or mrw, ADDRESS hex, BYTES the accessed bytes as hex digit
# pairs in memory order); the AMD64 registers are rax rbx rcx rdx rbp rsp
# rsi rdi r8-r15 rip.  Replays the deltas and prints the full register state
# of every line as JSON; with --mem, every line's memory entries instead:
# [[access, address, bytes], ...] per line.
import json, sys

REGS = ['rax', 'rbx', 'rcx', 'rdx', 'rbp', 'rsp', 'rsi', 'rdi'] + \
       ['r%d' % i for i in range(8, 16)] + ['rip']
HEX = set('0123456789abcdefABCDEF')
want_mem = sys.argv[1] == '--mem'
state, out, mems = {}, [], []
for n, text in enumerate(open(sys.argv[-1]), 1):
    text = text.strip()
    if not text or text.startswith('#'):
        continue
    seen, mem = set(), []
    for item in text.split(','):
        key, _, value = item.partition('=')
        if key in ('mr', 'mw', 'mrw'):
            addr, colon, data = value.partition(':')
            assert colon and addr.startswith('0x') and set(addr[2:]) <= HEX and addr[2:], \
                'line %d: %s address %r' % (n, key, addr)
            assert data and len(data) % 2 == 0 and set(data) <= HEX, \
                'line %d: %s data %r is not hex bytes' % (n, key, data)
            mem.append([key, '0x%x' % int(addr, 16), data.lower()])
            continue
        assert key in REGS, 'line %d: unknown register %r' % (n, key)
        assert key not in seen, 'line %d: %s twice' % (n, key)
        assert value.startswith('0x'), 'line %d: %s is not hex' % (n, key)
        seen.add(key)
        state[key] = int(value, 16)
    assert 'rip' in seen, 'line %d has no rip' % n
    missing = [r for r in REGS if r not in state]
    assert not missing, 'line %d: never set: %s' % (n, missing)
    out.append(dict(state))
    mems.append(mem)
print(json.dumps(mems if want_mem else out))
