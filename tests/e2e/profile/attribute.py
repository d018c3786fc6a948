#!/usr/bin/env python3
"""attribute.py COUNTS KALLSYMS PATHS STEPS [TOP]

The step profile's report (tests/e2e/step-profile.sh): the instructions L1
executed per step in each kernel function, from the insncount plugin's
snapshots (COUNTS: a pair of marker snapshots per run, in the order of the
PATHS file) and L1's /proc/kallsyms.  Inlined code counts for the function
it was inlined into.  One column per path;
the first lines give the totals, then the TOP (default 40) functions
that cost most on some path.
"""
import bisect
import sys


def load_symbols(path):
    syms = []
    with open(path) as f:
        for line in f:
            p = line.split()
            if len(p) >= 3 and p[1] in 'tTwW':
                mod = p[3].strip('[]') if len(p) > 3 else 'vmlinux'
                syms.append((int(p[0], 16), p[2], mod))
    syms.sort()
    return syms


def load_snapshots(path):
    snaps, cur = [], None
    with open(path) as f:
        for line in f:
            if line.startswith('snapshot '):
                p = line.split()
                if 'table_full' in p:
                    sys.exit('attribute: the plugin ran out of counters (TABLE_BITS)')
                cur = {'why': p[2], 'total': int(p[4]), 'outside': int(p[6]), 'at': {}}
                snaps.append(cur)
            elif line.startswith('end'):
                cur = None
            elif cur is not None:
                a, c = line.split()
                cur['at'][int(a, 16)] = int(c)
    return [s for s in snaps if s['why'] == 'marker']


def main():
    if len(sys.argv) < 5:
        sys.exit(__doc__)
    syms = load_symbols(sys.argv[2])
    starts = [s[0] for s in syms]
    paths = open(sys.argv[3]).read().split()
    steps = int(sys.argv[4])
    top = int(sys.argv[5]) if len(sys.argv) > 5 else 40
    marks = load_snapshots(sys.argv[1])
    if len(marks) != 2 * len(paths):
        sys.exit(f'attribute: {len(marks)} marker snapshots for {len(paths)} runs (want two each)')
    per_path, totals = [], []
    for i in range(len(paths)):
        a, b = marks[2 * i], marks[2 * i + 1]
        funcs = {}
        for addr, n in b['at'].items():
            n -= a['at'].get(addr, 0)
            if n <= 0:
                continue
            j = bisect.bisect_right(starts, addr) - 1
            key = (syms[j][1], syms[j][2]) if j >= 0 else ('?', '?')
            funcs[key] = funcs.get(key, 0) + n
        per_path.append(funcs)
        total = b['total'] - a['total']
        outside = b['outside'] - a['outside']
        totals.append((total, outside))
    width = max(10, max(len(p) for p in paths) + 1)
    print('instructions per step (%d steps) between the markers of each run' % steps)
    print('%-40s %-8s' % ('', '') + ''.join('%*s' % (width, p) for p in paths))
    print('%-49s' % 'all, L1 and L2' + ''.join('%*.0f' % (width, t / steps) for t, _ in totals))
    print('%-49s' % 'L1 kernel' + ''.join('%*.0f' % (width, (t - o) / steps) for t, o in totals))
    print('%-49s' % 'L1 user mode and L2' + ''.join('%*.0f' % (width, o / steps) for _, o in totals))
    mods = sorted({m for f in per_path for _, m in f})
    for mod in mods:
        row = [sum(n for (_, m), n in f.items() if m == mod) / steps for f in per_path]
        if max(row) >= 1:
            print('%-49s' % ('module ' + mod) + ''.join('%*.1f' % (width, v) for v in row))
    keys = sorted({k for f in per_path for k in f}, key=lambda k: -max(f.get(k, 0) for f in per_path))
    for name, mod in keys[:top]:
        row = [f.get((name, mod), 0) / steps for f in per_path]
        print('%-40s %-8s' % (name[:40], mod) + ''.join('%*.1f' % (width, v) for v in row))


if __name__ == '__main__':
    main()
