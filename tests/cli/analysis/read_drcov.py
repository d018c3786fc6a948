#!/usr/bin/env python3
# read_drcov.py FILE: a drcov reader written from DynamoRIO's description of
# the format (version 2): text header lines "DRCOV VERSION: 2", "DRCOV
# FLAVOR: ...", "Module Table: version 2, count N", "Columns: id, base, end,
# entry, checksum, timestamp, path", N module lines with those columns,
# "BB Table: M bbs", then M binary entries {u32 start; u16 size; u16 id}
# (start relative to the module base).  Prints JSON: modules and blocks.
import json, re, struct, sys

data = open(sys.argv[1], 'rb').read()
pos = 0
def line():
    global pos
    end = data.index(b'\n', pos)
    text = data[pos:end].decode()
    pos = end + 1
    return text

assert line() == 'DRCOV VERSION: 2', 'not drcov version 2'
assert line().startswith('DRCOV FLAVOR: ')
m = re.fullmatch(r'Module Table: version (\d+), count (\d+)', line())
assert m and m.group(1) == '2', 'module table version'
count = int(m.group(2))
cols = line()
assert cols.startswith('Columns: ')
names = [c.strip() for c in cols[len('Columns: '):].split(',')]
assert names == ['id', 'base', 'end', 'entry', 'checksum', 'timestamp', 'path'], names
modules = []
for i in range(count):
    parts = [p.strip() for p in line().split(',', len(names) - 1)]
    mod = dict(zip(names, parts))
    assert int(mod['id']) == i, 'module ids in order'
    modules.append({'id': i, 'base': int(mod['base'], 16), 'end': int(mod['end'], 16),
                    'path': mod['path'], 'timestamp': int(mod['timestamp'], 16)})
m = re.fullmatch(r'BB Table: (\d+) bbs', line())
assert m, 'BB Table line'
n = int(m.group(1))
assert len(data) - pos == 8 * n, 'BB table size: %d bytes for %d blocks' % (len(data) - pos, n)
blocks = []
for i in range(n):
    start, size, mid = struct.unpack_from('<IHH', data, pos + 8 * i)
    assert mid < count, 'block module id'
    mod = modules[mid]
    assert mod['base'] + start + size <= mod['end'], 'block outside its module'
    blocks.append([mid, start, size])
print(json.dumps({'modules': modules, 'blocks': blocks}))
