#!/usr/bin/env python3
# read_codebin.py FILE: code.bin read from docs/analysis.md alone: "SVMCODE\0",
# u32 version 1, u32 header size 16, then entries of u32 "PAGE", u32 4096,
# u64 VA, GPA, CR3, first sequence, u32 flags, u32 reserved, 4096 bytes.
# Prints JSON: one object per entry, bytes as hex.
import json, struct, sys

data = open(sys.argv[1], 'rb').read()
assert data[:8] == b'SVMCODE\0', 'magic'
assert struct.unpack_from('<II', data, 8) == (1, 16), 'version / header size'
pos, out = 16, []
while pos < len(data):
    assert len(data) - pos >= 48 + 4096, 'incomplete entry at %d' % pos
    magic, n, va, gpa, cr3, seq, flags, res = struct.unpack_from('<IIQQQQII', data, pos)
    assert magic == 0x45474150 and n == 4096 and va % 4096 == 0, 'entry at %d' % pos
    out.append({'va': va, 'gpa': gpa, 'cr3': cr3, 'first_sequence': seq, 'flags': flags,
                'bytes': data[pos + 48:pos + 48 + 4096].hex()})
    pos += 48 + 4096
print(json.dumps(out))
