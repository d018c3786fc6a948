#!/usr/bin/env python3
# read_tenet.py FILE: a Tenet trace reader written from Tenet's tracer
# description: a text file, one line per executed instruction, each a
# comma-separated list of REG=0xVALUE (the registers that changed, with
# rip always present) and optionally mr=/mw= memory entries; the AMD64
# registers are rax rbx rcx rdx rbp rsp rsi rdi r8-r15 rip.  Replays the
# deltas and prints the full register state of every line as JSON.
import json, sys

REGS = ['rax', 'rbx', 'rcx', 'rdx', 'rbp', 'rsp', 'rsi', 'rdi'] + \
       ['r%d' % i for i in range(8, 16)] + ['rip']
state, out = {}, []
for n, text in enumerate(open(sys.argv[1]), 1):
    text = text.strip()
    if not text or text.startswith('#'):
        continue
    seen = set()
    for item in text.split(','):
        key, _, value = item.partition('=')
        if key in ('mr', 'mw', 'mrw'):
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
print(json.dumps(out))
