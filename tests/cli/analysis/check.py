#!/usr/bin/env python3
# check.py WHAT DIR FILE: compare what svmtrace-dump wrote (FILE, or a
# reader's JSON of it) with what sample.py says the program did.
import csv, json, sys

what, d, path = sys.argv[1], sys.argv[2], sys.argv[3]
exp = json.load(open(d + '/expect.json'))
states = exp['states']
GPR = ['rax', 'rbx', 'rcx', 'rdx', 'rsi', 'rdi', 'rbp', 'rsp'] + ['r%d' % i for i in range(8, 16)]
B, N = 0x7FF700000000, 0x7FFB00000000
MAIN, HELPER, NTYIELD = B + 0x1000, B + 0x1100, N + 0x2000

def fail(msg):
    sys.exit('check %s: %s' % (what, msg))

def symbol(rip, isf):
    if MAIN <= rip < HELPER:
        return 'hidden.exe!main' + ('' if rip == MAIN else '+0x%x' % (rip - MAIN))
    if HELPER <= rip < B + 0x3000:
        return 'hidden.exe!helper' + ('' if rip == HELPER else '+0x%x' % (rip - HELPER))
    if rip == NTYIELD + 2 and isf:
        return 'ntdll.dll!KiUserReturn'
    if NTYIELD <= rip < N + 0x3000:
        return 'ntdll.dll!NtYield' + ('' if rip == NTYIELD else '+0x%x' % (rip - NTYIELD))
    return ''

DISASM = {MAIN + 0x05: 'mov rax, 5', MAIN + 0x0c: 'call 0x%x' % HELPER,
          MAIN + 0x11: 'movabs r11, 0x%x' % NTYIELD, MAIN + 0x1b: 'call r11',
          MAIN + 0x1e: 'dec ecx', MAIN + 0x20: 'jne 0x%x' % (MAIN + 5),
          MAIN + 0x22: 'nop', MAIN + 0x23: 'nop', HELPER + 4: 'ret'}

def rows(p):
    return [r for r in csv.DictReader(open(p))]

if what in ('symbols', 'isf', 'disasm'):
    got = rows(path)
    if len(got) != len(states) + 1:  # + the session end
        fail('%d rows, expected %d' % (len(got), len(states) + 1))
    for i, s in enumerate(states):
        row = got[i]
        want = symbol(s[0], what == 'isf')
        if row['symbol'] != want:
            fail('row %d (rip 0x%x): symbol %r, expected %r' % (i, s[0], row['symbol'], want))
        if what != 'disasm':
            continue
        seq = int(row['sequence'])
        if s[0] == HELPER:
            want = 'add rax, %d' % (2 if seq >= exp['change_sequence'] else 1)
        elif s[0] >= N:
            want = None
        else:
            want = DISASM[s[0]]
        if want is None:
            if not row['disasm'].startswith('(bytes missing'):
                fail('row %d: ntdll has no bytes in code.bin, got %r' % (i, row['disasm']))
        elif row['disasm'] != want:
            fail('row %d (rip 0x%x, seq %d): %r, expected %r' % (i, s[0], seq, row['disasm'], want))
elif what == 'drcov':
    j = json.load(open(path))
    paths = [m['path'] for m in j['modules']]
    if paths[:2] != ['C:\\lab\\hidden.exe', 'C:\\Windows\\System32\\ntdll.dll']:
        fail('module table %r' % paths)
    covered = set()
    for mid, start, size in j['blocks']:
        base = j['modules'][mid]['base']
        covered.update(range(base + start, base + start + size))
    want = set()
    for at, size in exp['executed']:
        want.update(range(at, at + size))
    if covered != want:
        fail('blocks cover %d bytes, the program executed %d; extra %s, missing %s' % (
            len(covered), len(want), sorted(map(hex, covered - want))[:5],
            sorted(map(hex, want - covered))[:5]))
    if len(j['blocks']) != len(set(map(tuple, j['blocks']))):
        fail('duplicate blocks')
elif what == 'tenet':
    lines = json.load(open(path))
    if len(lines) != len(states):
        fail('%d lines, expected %d' % (len(lines), len(states)))
    for i, (line, s) in enumerate(zip(lines, states)):
        want = dict(zip(['rip'] + GPR, s))
        if any(line[k] != v for k, v in want.items()):
            fail('line %d: %r, expected %r' % (i, line, want))
elif what == 'x64dbg':
    j = json.load(open(path))
    blocks = j['blocks']
    if len(blocks) != len(states):
        fail('%d blocks, expected %d' % (len(blocks), len(states)))
    v1, v2 = bytes.fromhex(exp['code']['v1']), bytes.fromhex(exp['code']['v2'])
    for i, (b, s) in enumerate(zip(blocks, states)):
        want = dict(zip(['rip'] + GPR, s), rflags=exp['rflags'])
        if any(b['regs'][k] != v for k, v in want.items()):
            fail('block %d: %r, expected %r' % (i, b['regs'], want))
        if b['full'] != (i % 512 == 0):
            fail('block %d: full register dump %s' % (i, b['full']))
        rip = s[0]
        if rip >= N:
            if b['opcode']:
                fail('block %d: ntdll bytes are unknown, opcode %s' % (i, b['opcode']))
            continue
        page = v2 if i + 1 >= exp['change_sequence'] else v1
        off = rip - exp['code']['main_page']
        if not b['opcode'] or page[off:off + len(b['opcode']) // 2].hex() != b['opcode']:
            fail('block %d (0x%x): opcode %r' % (i, rip, b['opcode']))
else:
    fail('unknown check')
print('%s: ok' % what)
