#!/usr/bin/env python3
# sample.py DIR [LOOPS]: a small traced program with everything the analysis
# commands read beside a trace, written from the documented formats only
# (docs/analysis.md for code.bin, svmtraced(8) for capture.json, the raw
# 168-byte records of svmtrace-dump pack), and what a correct tool must
# find in it (DIR/expect.json).
#
# hidden.exe (exports main, helper) calls helper and, through r11,
# ntdll.dll!NtYield, 200 times in a loop.  At iteration 100 helper's page
# changes (add rax, 1 -> add rax, 2) and code.bin holds both versions;
# ntdll's page is not in code.bin (its bytes must print as missing).
# With LOOPS (the benchmark), that many rounds, the raw states on standard
# output (not DIR/raw) and no expect.json.
import json, struct, sys, os

out = sys.argv[1]
B, N = 0x7FF700000000, 0x7FFB00000000
MAIN, HELPER, NTYIELD = B + 0x1000, B + 0x1100, N + 0x2000
CR3 = 0x1ab000
BENCH = len(sys.argv) > 2
LOOPS = int(sys.argv[2]) if BENCH else 200
CHANGE_AT = LOOPS // 2

def le64(v): return struct.pack('<Q', v & (2**64 - 1))

main = (bytes([0xb9]) + struct.pack('<I', LOOPS) +  # +00 mov ecx, LOOPS
        bytes([0x48, 0xc7, 0xc0, 5, 0, 0, 0]) +  # +05 mov rax, 5
        bytes([0xe8]) + struct.pack('<i', HELPER - (MAIN + 0x11)) +  # +0c call helper
        bytes([0x49, 0xbb]) + le64(NTYIELD) +   # +11 mov r11, NtYield
        bytes([0x41, 0xff, 0xd3]) +              # +1b call r11
        bytes([0xff, 0xc9]) +                    # +1e dec ecx
        bytes([0x75, (0x05 - 0x22) & 0xff]) +    # +20 jnz +05
        bytes([0x90, 0x90]))                     # +22 nop, +23 nop
assert LOOPS < 2**31
def page(helper_add):
    p = bytearray(4096)
    p[0:len(main)] = main
    p[0x100:0x105] = bytes([0x48, 0x83, 0xc0, helper_add, 0xc3])
    return bytes(p)

GPR = ['rax', 'rbx', 'rcx', 'rdx', 'rsi', 'rdi', 'rbp', 'rsp',
       'r8', 'r9', 'r10', 'r11', 'r12', 'r13', 'r14', 'r15']
r = dict((g, 0) for g in GPR)
r['rsp'] = 0xc5a0c01fd8
rip, rflags = MAIN, 0x202
states = []
it = 0
change_seq = None
M = 2**64 - 1

# A tiny interpreter of exactly these instructions.
def step():
    global rip, it, change_seq
    off = rip
    if rip == MAIN:
        r['rcx'] = LOOPS; rip += 5; return 5
    if rip == MAIN + 0x05:
        it += 1
        r['rax'] = 5; rip += 7; return 7
    if rip == MAIN + 0x0c:
        r['rsp'] -= 8; rip = HELPER; return 5
    if rip == MAIN + 0x11:
        r['r11'] = NTYIELD; rip += 10; return 10
    if rip == MAIN + 0x1b:
        r['rsp'] -= 8; rip = NTYIELD; return 3
    if rip == MAIN + 0x1e:
        r['rcx'] = (r['rcx'] - 1) & 0xffffffff; rip += 2; return 2
    if rip == MAIN + 0x20:
        rip = MAIN + 0x05 if r['rcx'] else MAIN + 0x22; return 2
    if rip in (MAIN + 0x22,):
        rip += 1; return 1
    if rip == HELPER:
        r['rax'] = (r['rax'] + (2 if it > CHANGE_AT else 1)) & M; rip += 4; return 4
    if rip == HELPER + 4:
        r['rsp'] += 8
        rip = MAIN + 0x11 if True else 0
        return 1
    if rip == NTYIELD:
        r['rax'] = 0; rip += 2; return 2
    if rip == NTYIELD + 2:
        r['rsp'] += 8; rip = MAIN + 0x1e; return 1
    raise SystemExit('sample: no instruction at 0x%x' % rip)

executed = []  # (address, size) of every instruction whose record follows
count = 0
with (os.fdopen(sys.stdout.fileno(), 'wb', 1 << 20, closefd=False) if BENCH
      else open(os.path.join(out, 'raw'), 'wb')) as f:
    while rip != MAIN + 0x23:
        at = rip
        if at == MAIN + 0x05 and it == CHANGE_AT:
            change_seq = count  # the record of this step is the first after
        n = step()
        s = [rip] + [r[g] for g in GPR]
        f.write(struct.pack('<5Q16Q', count + 1, 1000 + count, s[0], rflags, CR3, *s[1:]))
        count += 1
        if BENCH:
            continue
        if at != MAIN:  # the entry instruction runs before the session starts
            executed.append((at, n))
        states.append(s)
# the record before the session end executes too (nop at +0x23)
executed.append((MAIN + 0x23, 1))

# The sequence numbers pack gives: 1.. in order (the first is the session start).
change_sequence = change_seq + 1
code = bytearray(b'SVMCODE\0' + struct.pack('<II', 1, 16))
def entry(va, gpa, seq, data):
    return (struct.pack('<IIQQQQI', 0x45474150, 4096, va, gpa, CR3, seq, 0) + b'\0' * 4 + data)
code += entry(MAIN & ~0xfff, 0x5a000, 1, page(1))
code += entry(MAIN & ~0xfff, 0x5a000, change_sequence, page(2))
open(os.path.join(out, 'code.bin'), 'wb').write(code)

GUID = '1B2C3D4E5F60718293A4B5C6D7E8F901'
capture = {
    'format': 'svmtrace-capture', 'version': 1, 'state': 'ended',
    'process': {'pid': 1234, 'name': 'hidden.exe'},
    'modules': [
        {'name': 'hidden.exe', 'path': 'C:\\lab\\hidden.exe', 'base': hex(B), 'size': 0x3000,
         'pe_timestamp': '0x5f000000', 'first_seen_sequence': None,
         'exports': [{'name': 'main', 'ordinal': 1, 'rva': '0x1000'},
                     {'name': 'helper', 'ordinal': 2, 'rva': '0x1100'}]},
        {'name': 'ntdll.dll', 'path': 'C:\\Windows\\System32\\ntdll.dll', 'base': hex(N),
         'size': 0x3000, 'pe_timestamp': '0x6a000000', 'pdb_id': GUID + '-1',
         'first_seen_sequence': None,
         'exports': [{'name': 'NtYield', 'ordinal': 7, 'rva': '0x2000'}]},
        {'name': 'late.dll', 'path': 'C:\\lab\\late.dll', 'base': '0x7ffc00000000',
         'size': 0x2000, 'first_seen_sequence': 42, 'exports': []},
    ],
}
json.dump(capture, open(os.path.join(out, 'capture.json'), 'w'), indent=1)

# An ISF file for ntdll (by its PDB GUID-AGE) naming the ret KiUserReturn.
isf = {'metadata': {'format': '6.2.0', 'windows': {'pdb': {
           'GUID': GUID, 'age': 1, 'database': 'ntdll.pdb', 'machine_type': 34404}}},
       'base_types': {}, 'user_types': {}, 'enums': {},
       'symbols': {'NtYield': {'address': 0x2000}, 'KiUserReturn': {'address': 0x2002}}}
os.makedirs(os.path.join(out, 'isf'), exist_ok=True)
json.dump(isf, open(os.path.join(out, 'isf', 'ntdll-%s-1.json' % GUID), 'w'))

if BENCH:
    sys.exit(0)
json.dump({'states': states, 'rflags': rflags, 'executed': executed,
           'change_sequence': change_sequence, 'loops': LOOPS,
           'code': {'main_page': MAIN & ~0xfff, 'v1': page(1).hex(), 'v2': page(2).hex()},
           'modules': [[B, B + 0x3000, 'hidden.exe'], [N, N + 0x3000, 'ntdll.dll'],
                       [0x7ffc00000000, 0x7ffc00002000, 'late.dll']]},
          open(os.path.join(out, 'expect.json'), 'w'))
