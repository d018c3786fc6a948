# Sourced by e2e.sh: judge the Windows-layout guest's captures (l1-win.sh)
# in $run/l1/capture.  Uses e2e.sh's ok/bad/results/win_target, $run,
# $win_scenarios, and judge-capture.sh's judge_capture_rc,
# judge_armed_results and judge_trace.

# judge_win_resolved NAME IMAGE PID TAG: svmtrace-vmi, on the dump of the
# running guest's RAM taken at TAG, found the builder's entry page and DTBs.
judge_win_resolved() {
	name_=$1 d=$cap/$1 tag=$4
	want="$(win_target "$2" "$3" 6) $(win_target "$2" "$3" 3) $(win_target "$2" "$3" 4)"
	got=$(sed -n 's/^ *"\(entry_gpa\|dtb\|user_dtb\)": "*\([^",]*\)"*,*$/\2/p' "$d/resolve-$tag.json" 2>/dev/null |
		awk '{ if ($0 == "null") print "0x0"; else { sub(/^0x0*/, "0x"); if ($0 == "0x") $0 = "0x0"; print } }' | tr '\n' ' ')
	# resolve prints dtb, user_dtb, ..., entry_gpa: reorder to gpa dtb udtb
	# shellcheck disable=SC2086
	set -- $got
	got="${3:-?} ${1:-?} ${2:-?}"
	if [ "$(cat "$d/resolve-$tag.rc" 2>/dev/null)" = 0 ] && [ "$got" = "$want" ]; then
		ok "capture/$name_/resolve-$tag" "svmtrace-vmi on the live guest's RAM ($tag): entry GPA, DTB, user DTB = $got"
	else
		bad "capture/$name_/resolve-$tag" "svmtrace-vmi ($tag, exit $(cat "$d/resolve-$tag.rc" 2>/dev/null)): got '$got', builder says '$want': $(cat "$d/resolve-$tag.err" 2>/dev/null)"
	fi
}

# judge_win_first NAME IMAGE PID MODE: the trace's first record is the state
# after the entry point's instruction (mov ebx, SEED: 5 bytes), or, from
# the first instruction, after ntdll!LdrInitializeThunk's (mov r12, rcx: 3
# bytes), with the session start reason of a thread's first instruction.
judge_win_first() {
	first=$(awk -F, '$3 == "session_start" { print $4, $7; exit }' "$cap/$1/cpu0.csv" 2>/dev/null)
	if win_from_first "$4"; then
		at=$(win_loader "$2" LdrInitializeThunk) len=3 what="ntdll!LdrInitializeThunk" reason=4294967294
	else
		at=$(win_target "$2" "$3" 5) len=5 what="the entry point" reason=0
	fi
	if [ -n "$first" ] && [ $((${first% *})) -eq $((at + len)) ] && [ "${first#* }" = "$reason" ]; then
		ok "capture/$1/first" "first record at ${first% *} (reason ${first#* }): the instruction after $what $at"
	else
		bad "capture/$1/first" "first record '${first:-none}', expected $what $at + $len, reason $reason"
	fi
}

# judge_win_loader NAME IMAGE PID: traced from its first instruction, the
# process ran the loader's DllMain call (helper.dll) and its image's TLS
# callback before its entry point, all in the trace, in that order.
judge_win_loader() {
	got=$(awk -F, -v dm="$(win_loader "$2" DllMain)" -v tls="$(win_loader "$2" "tls_callback.$3")" \
		-v start="$(win_target "$2" "$3" 5)" '
		NR > 1 && $4 == dm && !a { a = NR }
		NR > 1 && $4 == tls && !b { b = NR }
		NR > 1 && $4 == start && !c { c = NR }
		END { print a + 0, b + 0, c + 0 }' "$cap/$1/cpu0.csv" 2>/dev/null)
	# shellcheck disable=SC2086
	set -- "$1" $got
	if [ "${2:-0}" -gt 0 ] && [ "$3" -gt "$2" ] && [ "${4:-0}" -gt "$3" ]; then
		ok "capture/$1/loader" "helper.dll!DllMain at row $2, the TLS callback at row $3, the entry point at row $4: the loader's calls are in the trace, before the entry point"
	else
		bad "capture/$1/loader" "rows of DllMain, TLS callback, entry point: '$got' (need 0 < a < b < c)"
	fi
}

# judge_win_threads NAME IMAGE EXPECT: svmtraced's capture.json says which
# thread each record ran in (svmtrace-dump dump --threads): the thread whose
# TEB the model's state has (its GS base), by the builder's record of each
# thread (IMAGE.threads: name pid tid teb); the thread list says so too.
judge_win_threads() {
	d=$cap/$1
	if ! "$bin/svmtrace-dump" dump --threads "$d/trace/svmtrace_trace_cpu0.bin" >"$d/threads.csv" 2>"$d/threads.err"; then
		bad "capture/$1/threads" "dump --threads: $(cat "$d/threads.err")"
		return
	fi
	if out=$(python3 - "$d/threads.csv" "$3/expected_cpu0.csv" "$win/$2.threads" "$d/trace/capture.json" 2>&1 <<'PY'
import csv, json, sys
got = list(csv.DictReader(open(sys.argv[1])))
exp = list(csv.DictReader(open(sys.argv[2])))
builder = {}
for line in open(sys.argv[3]):
    name, pid, tid, teb, how = line.split()
    builder.setdefault(int(teb, 16), {})[int(pid)] = int(tid)
assert len(got) == len(exp), '%d rows, the model has %d' % (len(got), len(exp))
pids = {int(r['pid']) for r in got if r['pid']}
seen = {}
for i, (g, e) in enumerate(zip(got, exp)):
    if g['kind'] == 'session_end':
        continue
    assert g['pid'] and g['tid'], 'row %d (sequence %s) has no thread' % (i, g['sequence'])
    want = builder[int(e['gs_base'], 16)][int(g['pid'])]
    assert int(g['tid']) == want, 'row %d (sequence %s): tid %s, the model ran TEB %s = tid %d' % (
        i, g['sequence'], g['tid'], e['gs_base'], want)
    seen[int(g['tid'])] = seen.get(int(g['tid']), 0) + 1
cap = json.load(open(sys.argv[4]))
# Win32StartAddress: a process's first thread starts at its entry point, a
# thread it creates at the routine it named (its image's export "worker").
entry = {p['pid']: int(p['entry_va'], 16) for p in cap['processes']}
exports = {p['pid']: {e['name']: int(m['base'], 16) + int(e['rva'], 16)
                      for m in p['modules'] for e in m['exports']} for p in cap['processes']}
kind = {(int(pid), int(tid)): how for name, pid, tid, teb, how in map(str.split, open(sys.argv[3]))}
for t in cap['threads']:
    assert t['tid'] and not t['error'], t
    w32 = int(t['win32_start_address'], 16)
    want = entry[t['pid']] if kind[(t['pid'], t['tid'])] == 'first' else exports[t['pid']]['worker']
    assert w32 == want, 'thread %d: Win32StartAddress 0x%x, expected 0x%x' % (t['tid'], w32, want)
print('%d rows attributed: %s' % (len(got), ', '.join('tid %d %d rows' % kv for kv in sorted(seen.items()))))
PY
); then
		ok "capture/$1/threads" "$out"
	else
		bad "capture/$1/threads" "$(echo "$out" | tail -n 1)"
	fi
}

# judge_win_only_target NAME IMAGE PID MODE: nothing of another process is
# in the trace: every record's CR3 is one of the DTBs of the target (and with
# --follow of its traced children, win_traced).
judge_win_only_target() {
	# shellcheck disable=SC2046
	if out=$(python3 - "$cap/$1/cpu0.csv" $(win_dtbs "$2" "$3" "$4") 2>&1 <<'PY'
import csv, sys
want = {int(a, 16) & ~0xfff for a in sys.argv[2:]} - {0}
rows = [r for r in csv.DictReader(open(sys.argv[1])) if r['cr3']]
others = [r for r in rows if int(r['cr3'], 16) & ~0xfff not in want]
assert rows and not others, '%d of %d records under another CR3 (first: %s)' % (
    len(others), len(rows), others[0] if others else None)
print('all %d records run under the target\'s DTBs (%s)' % (len(rows), ', '.join(sorted(map(hex, want)))))
PY
); then
		ok "capture/$1/only-target" "$out"
	else
		bad "capture/$1/only-target" "$(echo "$out" | tail -n 1)"
	fi
}

# judge_win_unseen NAME IMAGE: the traced guest printed what the untraced
# guest prints (the model's untraced run): the guest, kernel included,
# cannot tell it was traced.  (capture/NAME/results compares with the
# model's run *with* the tracer, which reproduces what the CPU leaks.)
judge_win_unseen() {
	if results "$run/expect/$2/results.txt" | diff -u - "$run/capture-$1.got" >"$run/capture-$1.unseen.diff"; then
		ok "capture/$1/unseen" "the traced guest's results equal the untraced guest's"
	else
		bad "capture/$1/unseen" "the traced guest's results differ from the untraced guest's:"
		cat "$run/capture-$1.unseen.diff"
	fi
}

# judge_win_armed NAME IMAGE PID [MODE]: svmtraced's "armed pid=N cr3=0x...
# user_cr3=0x... gate=0x..." names the builder's process, both its DTBs
# (user_cr3 is its KVA-shadow user DTB, 0x0 when it has none) and its entry
# page; for MODE lazy (not resident when armed) gate=watch.
judge_win_armed() {
	line=$(grep -m 1 '^armed ' "$cap/$1/capture.txt" 2>/dev/null)
	a_pid=$(echo "$line" | sed -n 's/.* pid=\([0-9]*\).*/\1/p')
	a_cr3=$(echo "$line" | sed -n 's/.* cr3=\(0x[0-9a-fA-F]*\).*/\1/p')
	a_ucr3=$(echo "$line" | sed -n 's/.* user_cr3=\(0x[0-9a-fA-F]*\).*/\1/p')
	a_gate=$(echo "$line" | sed -n 's/.* gate=\([0-9a-zA-Z]*\) .*/\1/p')
	w_dtb=$(win_target "$2" "$3" 3) w_udtb=$(win_target "$2" "$3" 4)
	gate=$(printf 0x%x $(($(win_target "$2" "$3" 6) & ~0xfff)))
	[ "${4:-}" != lazy ] || gate=watch
	! win_from_first "${4:-}" || gate=first
	if [ "$a_pid" = "$3" ] && [ "$a_gate" = "$gate" ] && [ -n "$a_cr3" ] && [ -n "$a_ucr3" ] &&
		[ $((a_cr3)) -eq $((w_dtb)) ] && [ $((a_ucr3)) -eq $((w_udtb)) ]; then
		ok "capture/$1/armed" "$line: the builder's process, DTB, user DTB and entry page"
	else
		bad "capture/$1/armed" "'${line:-no armed line}': builder says pid $3, DTB $w_dtb, user DTB $w_udtb, gate $gate"
	fi
}

# judge_win_analysis NAME PNAME MODE: svmtraced's capture of the process PNAME
# comes out symbolized from its capture.json (the images' export tables),
# disassembled from its code.bin, as a call tree, and exported in the
# three formats, each read back by the independent readers of
# tests/cli/analysis.
judge_win_analysis() {
	d=$cap/$1 pn=$2
	t=$d/trace/svmtrace_trace_cpu0.bin
	a=$top/tests/cli/analysis
	if ! "$bin/svmtrace-dump" dump --no-symbols "$t" 2>/dev/null | grep -q ',\(instruction\|session_start\),'; then
		bad "capture/$1/analysis" "the capture holds no steps to analyse (see capture/$1/trace/cpu0)"
		return
	fi
	info=$(python3 - "$d/trace/capture.json" "$pn" 2>&1 <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))
mods = dict((m['name'], m) for m in c['modules'])
ex = lambda n: sorted(e['name'] for e in mods[n]['exports'])
assert ex(sys.argv[2]) == ['_tls_used', 'plain', 'start', 'tls_callback', 'work', 'worker'], ex(sys.argv[2])
assert ex('ntdll.dll') == ['LdrInitializeThunk', 'NtTestAlert', 'RtlUserThreadStart'], ex('ntdll.dll')
assert ex('helper.dll') == ['DllMain'], ex('helper.dll')
k = c['code']
assert k['pages'] >= 3 and k['versions'] == k['pages'] and k['unreadable'] == 0, k
print('%d code pages, %d module walks, %.1f ms reading them (%.2f ms a page, L1 under TCG)' % (
    k['pages'], k['module_walks'], 1000 * k['seconds'], 1000 * k['seconds'] / k['pages']))
PY
) || { bad "capture/$1/analysis" "capture.json: $info"; return; }
	echo "info: capture/$1: code.bin: $info"
	if ! "$bin/svmtrace-dump" dump --disasm "$t" >"$d/analysis.csv" 2>"$d/analysis.err"; then
		bad "capture/$1/analysis" "dump --disasm: $(cat "$d/analysis.err")"; return
	fi
	first=$(sed -n 2p "$d/analysis.csv" | cut -d, -f8-)
	rows=$(grep -c ',\(instruction\|session_start\),' "$d/analysis.csv")
	missing=$(grep ',\(instruction\|session_start\),' "$d/analysis.csv" | grep -c -v ',"[a-z]' )
	# The first row is the entry's (or, from the first instruction,
	# LdrInitializeThunk's) next instruction (capture/NAME/first checks
	# that the trace starts there): here only that it is named and
	# decoded, and that each round's call of work is.
	at="$pn!start"
	! win_from_first "$3" || at="ntdll.dll!LdrInitializeThunk"
	if echo "$first" | grep -q "^$at+0x[0-9a-f]*,\"[a-z]" &&
		grep -q ",$pn!start+0x[0-9a-f]*,\"call 0x[0-9a-f]*2000\"\$" "$d/analysis.csv" &&
		grep -q ",$pn!work," "$d/analysis.csv" &&
		grep -q ',ntdll.dll!NtTestAlert,"xor eax, eax"$' "$d/analysis.csv" &&
		grep -q ',ntdll.dll!NtTestAlert+0x2,"ret"$' "$d/analysis.csv" && [ "$missing" = 0 ]; then
		ok "capture/$1/symbols" "$rows rows symbolized and disassembled: $(sed -n 2p "$d/analysis.csv" | cut -d, -f4,8-), ... $(grep -m 1 'ntdll.dll!NtTestAlert,' "$d/analysis.csv" | cut -d, -f4,8-)"
	else
		bad "capture/$1/symbols" "first row '$first', $missing of $rows rows without code bytes; see $d/analysis.csv"
	fi
	"$bin/svmtrace-dump" calltree "$t" >"$d/calltree.txt" 2>&1
	calls=$(awk '$NF == "ntdll.dll!NtTestAlert" { print $1 }' "$d/calltree.txt" | head -n 1)
	if [ -n "$calls" ] && [ "$calls" -ge 1 ] && grep -q " $pn!work\$" "$d/calltree.txt"; then
		ok "capture/$1/calltree" "$(tr -s ' ' <"$d/calltree.txt" | tr '\n' ';')"
	else
		bad "capture/$1/calltree" "$(cat "$d/calltree.txt")"
	fi
	n=$((rows))
	if "$bin/svmtrace-dump" export --format drcov --out "$d/cov.drcov" "$t" 2>"$d/export.err" &&
		python3 "$a/read_drcov.py" "$d/cov.drcov" >"$d/drcov.json" 2>>"$d/export.err" &&
		"$bin/svmtrace-dump" export --format x64dbg --out "$d/trace.trace64" "$t" 2>>"$d/export.err" &&
		python3 "$a/read_x64dbg.py" "$d/trace.trace64" >"$d/x64dbg.json" 2>>"$d/export.err" &&
		"$bin/svmtrace-dump" export --format tenet --out "$d/trace.tenet" "$t" >/dev/null 2>>"$d/export.err" &&
		read_tenets "$d" "$a" 2>>"$d/export.err" &&
		got=$(python3 - "$d" "$n" "$pn" 2>>"$d/export.err" <<'PY'
import csv, glob, json, sys
d, n, pn = sys.argv[1], int(sys.argv[2]), sys.argv[3]
cov, x = (json.load(open(d + f)) for f in ('/drcov.json', '/x64dbg.json'))
names = [m['path'].split('\\')[-1] for m in cov['modules']]
assert pn in names and 'ntdll.dll' in names, names
hit = set(names[b[0]] for b in cov['blocks'])
assert {pn, 'ntdll.dll'} <= hit, hit
# One Tenet file per thread (FILE.PID.TID) when the capture has several, else FILE.
rows = [r for r in csv.DictReader(open(d + '/threads.csv')) if r['kind'] != 'session_end']
tenet = {f[len(d) + len('/trace.tenet'):-len('.json')]: json.load(open(f))
         for f in glob.glob(d + '/trace.tenet*.json')}
threads = sorted({(r['pid'], r['tid']) for r in rows})
tids = [t for p, t in threads]
if len(threads) > 1:
    assert sorted(tenet) == sorted('.%s.%s' % t for t in threads), sorted(tenet)
    for t in threads:
        assert len(tenet['.%s.%s' % t]) == sum((r['pid'], r['tid']) == t for r in rows), t
else:
    assert list(tenet) == [''], sorted(tenet)
lines = sum(len(v) for v in tenet.values())
assert len(x['blocks']) == n and lines == n, (len(x['blocks']), lines, n)
assert all(b['opcode'] for b in x['blocks']), 'x64dbg block without opcode bytes'
assert [str(b['thread']) for b in x['blocks']] == [r['tid'] for r in rows], 'x64dbg thread ids'
print('drcov %d modules, %d blocks; x64dbg %d blocks with opcodes and thread ids %s; tenet %d lines in %d file(s)' % (
    len(names), len(cov['blocks']), len(x['blocks']), ','.join(tids), lines, len(tenet)))
PY
); then
		ok "capture/$1/export" "$got, read back by readers written from each format's description"
	else
		bad "capture/$1/export" "$(tail -n 3 "$d/export.err")"
	fi
}

# judge_daemon_kernel NAME IMAGE: svmtraced found the builder's kernel in
# the live guest through LSTAR (its first method), at the entry the image's
# kernel uses (KiSystemCall64, or KiSystemCall64Shadow with KVA shadow), and
# says so in capture.json.
judge_daemon_kernel() {
	if out=$(python3 -c '
import json, sys
k = json.load(open(sys.argv[1]))["kernel"]
want = dict(kv.split("=") for l in open(sys.argv[2]) if l.startswith("discovery ") for kv in l.split()[1:])
base = [int(l.split()[1], 16) for l in open(sys.argv[2]) if l.startswith("kernel ")][0]
assert int(k["base"], 16) == base and k["found_by"] == "lstar" and k["anchor_symbol"] == want["lstar"], k
print("kernel %s found by %s, from %s = %s (%s)" % (k["base"], k["found_by"], k["anchor"], k["anchor_symbol"], k["found_from"]))
' "$cap/$1/trace/capture.json" "$win/$2.expect" 2>&1); then
		ok "capture/$1/kernel" "$out"
	else
		bad "capture/$1/kernel" "capture.json: $(echo "$out" | tail -n 1)"
	fi
}

# judge_win_follow NAME IMAGE PID MODE: --follow traced the target's children
# from their first instruction (the trace equals the model's, which ran with
# every DTB of win_traced: judge_trace), capture.json's process tree is the
# builder's (IMAGE.targets, field 8), each process with the builder's command
# line (IMAGE.expect) and the sequence of its first record, a child beyond
# --max-processes is listed
# as lost, and the hollowed child's records decode from code.bin as the
# payload its parent wrote (not its image's bytes at that VA): the pages of
# each process, read through its own DTB.
judge_win_follow() {
	d=$cap/$1
	if out=$(python3 - "$d/trace/capture.json" "$win/$2.targets" "$3" "$d/analysis.csv" \
		"$(win_traced "$2" "$3" "$4" | tr '\n' ' ')" "$4" "$win/$2.expect" 2>&1 <<'PY'
import csv, json, sys
cap = json.load(open(sys.argv[1]))
builder = {int(f[1]): f for f in map(str.split, open(sys.argv[2]))}
root, traced, mode = int(sys.argv[3]), [int(p) for p in sys.argv[5].split()], sys.argv[6]
def tree(pid):
    return {'pid': pid, 'name': builder[pid][0],
            'children': [tree(c) for c in traced if int(builder[c][7]) == pid and c != pid]}
assert cap['process_tree'] == [tree(root)], 'process_tree %s, the builder\'s %s' % (
    cap['process_tree'], [tree(root)])
ps = [(p['pid'], p['ppid'], p['followed']) for p in cap['processes']]
assert ps == [(p, int(builder[p][7]), p != root) for p in traced], ps
# Each process's command line is the one the builder wrote into its
# ProcessParameters, and its first sequence that of its first record.
cmdline = {int(f[1]): f[2] for f in (l.rstrip('\n').split(' ', 2) for l in open(sys.argv[7]))
           if f[0] == 'cmdline'}
rows = list(csv.DictReader(open(sys.argv[4])))
for p in cap['processes']:
    assert p['command_line'] == cmdline[p['pid']], (p['pid'], p['command_line'], cmdline[p['pid']])
    dtbs = {int(builder[p['pid']][2], 16), int(builder[p['pid']][3], 16)} - {0}
    first = next(int(r['sequence']) for r in rows if r['cr3'] and int(r['cr3'], 16) & ~0xfff in dtbs)
    assert p['first_sequence'] == first, (p['pid'], p['first_sequence'], first)
family = [p for p in builder if p == root or int(builder[p][7]) == root]
lost = [(l['pid'], l['name'], l['reason']) for l in cap['lost']]
want = [(p, builder[p][0], '--max-processes 2 reached') for p in family if p not in traced]
assert lost == want, 'lost %s, expected %s' % (lost, want)
# The hollowed child (the builder's hollow.exe): its first instruction is
# the loader's as always, then it runs the payload at entry + 0x800.
hollow = [p for p in traced if builder[p][0] == 'hollow.exe']
note = ''
if hollow:
    h = builder[hollow[0]]
    dtbs = {int(h[2], 16), int(h[3], 16)} - {0}
    at = int(h[4], 16) + 0x800
    rows = [r for r in csv.DictReader(open(sys.argv[4])) if int(r['cr3'], 16) & ~0xfff in dtbs]
    assert rows, 'no records of hollow.exe'
    i = next((i for i, r in enumerate(rows) if int(r['rip'], 16) == at), None)
    assert i is not None, 'hollow.exe never ran its payload at 0x%x' % at
    # proc.S's payload: mov ebx, SEED + 0x1000; mov r12d, 2; add ebx, 0x2222
    pay = [r['disasm'] for r in rows[i:i + 3]]
    assert pay[0].startswith('mov ebx, 0x') and pay[1:] == ['mov r12d, 2', 'add ebx, 0x2222'], pay
    entry = [r for r in rows if int(r['rip'], 16) == int(h[4], 16)]
    assert not entry, 'hollow.exe ran its own entry point: %s' % entry[0]
    note = '; hollow.exe (DTB %s) ran the payload at 0x%x: code.bin decodes it as "%s", %d rows' % (
        h[2], at, '; '.join(pay), len(rows))
print('process_tree %s%s%s' % (json.dumps(cap['process_tree']),
                               ', lost %s' % lost if lost else '', note))
PY
); then
		ok "capture/$1/follow" "$out"
	else
		bad "capture/$1/follow" "$(echo "$out" | tail -n 1)"
	fi
}

# judge_win_asks NAME IMAGE PID MODE: which new threads svmtraced's capture
# held (capture.json asks) -- with --follow, every thread of another process
# (IMAGE.threads) and the awaited process's first: the asks last the whole
# capture; without, none of the awaited process's children: the asks ended
# when it joined (SVMTRACE_END_ASKS), and the rest of the guest stopped
# paying for them.
judge_win_asks() {
	if out=$(python3 - "$cap/$1/trace/capture.json" "$win/$2.targets" "$win/$2.threads" "$3" "$4" 2>&1 <<'PY'
import json, sys
a = json.load(open(sys.argv[1]))['asks']
parent = {int(f[1]): int(f[7]) for f in map(str.split, open(sys.argv[2]))}
pids = [int(f[1]) for f in map(str.split, open(sys.argv[3]))]
root, follow = int(sys.argv[4]), sys.argv[5].startswith('late-follow')
others = sum(p != root for p in pids) + 1
if follow:
    assert not a['ended'] and a['held'] == others, 'asks %s, expected %d held, not ended' % (a, others)
else:
    before = sum(p != root and parent[p] != root for p in pids) + 1
    assert a['ended'] and 1 <= a['held'] <= before, \
        'asks %s: ended, at most %d held (%d while asking)' % (a, before, others)
print('held %d, joined %d, ended %s' % (a['held'], a['joined'], a['ended']))
PY
); then
		ok "capture/$1/asks" "$out"
	else
		bad "capture/$1/asks" "$(echo "$out" | tail -n 1)"
	fi
}

# read_tenets DIR READERS: every Tenet file of DIR (trace.tenet, or one per
# thread, trace.tenet.PID.TID) read back into FILE.json.
read_tenets() {
	for f in "$1"/trace.tenet "$1"/trace.tenet.*; do
		case $f in *.json|*'*') continue ;; esac
		[ -e "$f" ] || continue
		python3 "$2/read_tenet.py" "$f" >"$f.json" || return 1
	done
}

# judge_daemon_audit_json NAME: svmtraced stored the balanced audit in capture.json.
judge_daemon_audit_json() {
	if out=$(python3 -c '
import json, sys
a = json.load(open(sys.argv[1]))["audit"]
assert a["balanced"] is True, "not balanced"
for v in a["vcpus"]:
    rhs = v["produced"] - v["emulated"] + v["unrecorded"] - v["stepless_ends"] + v["foreign"]
    assert v["db_exits"] == rhs == v["kmod_db_exits"] + v["foreign"], v
    assert v["balanced"] is True, v
print(" ".join("vcpu%d db_exits=%d produced=%d" % (v["vcpu"], v["db_exits"], v["produced"]) for v in a["vcpus"]))
' "$cap/$1/trace/capture.json" 2>&1); then
		ok "capture/$1/audit-json" "capture.json holds the balanced audit: $out"
	else
		bad "capture/$1/audit-json" "$(echo "$out" | tail -n 1)"
	fi
}

judge_win_set() {
	while read -r name image mode pid pname; do
		[ -n "$name" ] || continue
		case $mode in
		late-*) ;;	# svmtraced's alone (it waits for a name)
		*) judge_win_capture "$name" "$image" "$mode" "$pid" ;;
		esac
		[ -d "$cap/$name-daemon" ] || continue
		[ "$mode" != pid ] || judge_daemon_status "$name-daemon" "$pid"
		judge_win_armed "$name-daemon" "$image" "$pid" "$mode"
		judge_daemon_kernel "$name-daemon" "$image"
		judge_capture_rc "$name-daemon"
		judge_audit "$name-daemon"
		judge_daemon_audit_json "$name-daemon"
		judge_armed_results "$name-daemon" "$run/expect/$name"
		judge_trace "$name-daemon" "$run/expect/$name"
		judge_win_first "$name-daemon" "$image" "$pid" "$mode"
		judge_win_only_target "$name-daemon" "$image" "$pid" "$mode"
		! win_from_first "$mode" || judge_win_loader "$name-daemon" "$image" "$pid"
		judge_win_threads "$name-daemon" "$image" "$run/expect/$name"
		judge_win_analysis "$name-daemon" "$pname" "$mode"
		case $mode in late-follow*) judge_win_follow "$name-daemon" "$image" "$pid" "$mode" ;; esac
		case $mode in late-*) judge_win_asks "$name-daemon" "$image" "$pid" "$mode" ;; esac
	done <<WIN
$win_scenarios
WIN
}

# judge_win_new NAME IMAGE: svmtrace-capture --new-processes joined every
# process of the builder's (IMAGE.targets), each once (the CR3 of its first
# thread), and lost none.
judge_win_new() {
	want="joined=$(wc -l <"$win/$2.targets") lost=0"
	got=$(sed -n 's/^new address spaces: //p' "$cap/$1/capture.txt")
	if [ "$got" = "$want" ]; then
		ok "capture/$1/new-processes" "new address spaces: $got, the builder's processes"
	else
		bad "capture/$1/new-processes" "new address spaces: '$got', expected $want"
	fi
}

# judge_win_capture NAME IMAGE MODE PID: svmtrace-capture's run of a scenario.
judge_win_capture() {
	name=$1 image=$2 mode=$3 pid=$4
	judge_capture_rc "$name"
	judge_audit "$name"
	judge_armed_results "$name" "$run/expect/$name"
	judge_win_unseen "$name" "$image"
	judge_trace "$name" "$run/expect/$name"
	judge_win_first "$name" "$image" "$pid" "$mode"
	judge_win_only_target "$name" "$image" "$pid" "$mode"
	! win_from_first "$mode" || judge_win_loader "$name" "$image" "$pid"
	case $mode in
	new) judge_win_new "$name" "$image" ;;
	pid|first) judge_win_resolved "$name" "$image" "$pid" ready ;;
	lazy)
		if [ "$(cat "$cap/$name/resolve-ready.rc" 2>/dev/null)" = 3 ] &&
			grep -q '"resident": false' "$cap/$name/resolve-ready.json"; then
			ok "capture/$name/not-resident" "before its first run: $(cat "$cap/$name/resolve-ready.err")"
		else
			bad "capture/$name/not-resident" "the entry page should not be resident yet: exit $(cat "$cap/$name/resolve-ready.rc" 2>/dev/null)"
		fi
		judge_win_resolved "$name" "$image" "$pid" "done" ;;
	late)
		if [ "$(cat "$cap/$name/resolve-ready.rc" 2>/dev/null)" = 1 ] &&
			grep -q 'no process' "$cap/$name/resolve-ready.err"; then
			ok "capture/$name/absent" "not in the process list at start: $(cat "$cap/$name/resolve-ready.err")"
		else
			bad "capture/$name/absent" "PID $pid should not be listed before the scheduler links it: exit $(cat "$cap/$name/resolve-ready.rc" 2>/dev/null)"
		fi
		judge_win_resolved "$name" "$image" "$pid" go ;;
	esac
	# Not a check: how long resolving (svmtrace-vmi on a 32 MiB dump,
	# profile load included) and arming took in L1 under TCG.
	for tag in ready go; do
		[ "$(cat "$cap/$name/resolve-$tag.rc" 2>/dev/null)" = 0 ] && [ -s "$cap/$name/armed.uptime" ] || continue
		read -r t0 t1 <"$cap/$name/resolve-$tag.uptime"
		echo "info: capture/$name: resolve ($tag dump) $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }') s, resolve to armed $(awk -v a="$t0" -v b="$(cat "$cap/$name/armed.uptime")" 'BEGIN { printf "%.2f", b - a }') s (L1 under TCG)"
	done
}

# judge_daemon_endings: what win_daemon_ending (l1-win.sh) recorded.
judge_daemon_endings() {
	d=$cap/daemon-sigkill
	if [ "$(cat "$d/capture.rc" 2>/dev/null)" = 137 ] && grep -q '^cpu0 done' "$d/vmm.txt" &&
		[ "$(cat "$d/again.rc" 2>/dev/null)" = 0 ] && grep -q '^armed ' "$d/again.txt"; then
		ok capture/daemon-sigkill "svmtraced killed once armed: the guest ran to its end, and a new svmtraced armed at once (the kernel had detached)"
	else
		bad capture/daemon-sigkill "rc $(cat "$d/capture.rc" 2>/dev/null), guest: $(grep -c '^cpu0 done' "$d/vmm.txt" 2>/dev/null), again: rc $(cat "$d/again.rc" 2>/dev/null) $(tail -n 2 "$d/again.txt" 2>/dev/null | tr '\n' ' ')"
	fi
	d=$cap/daemon-vmm-gone
	if [ "$(cat "$d/capture.rc" 2>/dev/null)" = 0 ] && grep -q 'stop=VMM exited' "$d/capture.txt" &&
		"$bin/svmtrace-dump" inspect "$d"/trace/svmtrace_trace_cpu*.bin >"$d/inspect.txt" 2>&1 &&
		python3 -c 'import json, sys; j = json.load(open(sys.argv[1])); sys.exit(0 if j else 1)' \
			"$d/trace/capture.json" 2>"$d/json.err"; then
		ok capture/daemon-vmm-gone "the VMM died mid-capture: svmtraced ended by itself ($(grep '^total' "$d/capture.txt" | sed 's/.* stop=//')), its files decode and capture.json parses"
	else
		bad capture/daemon-vmm-gone "rc $(cat "$d/capture.rc" 2>/dev/null): $(tail -n 3 "$d/capture.txt" 2>/dev/null | tr '\n' ' ') $(tail -n 2 "$d/inspect.txt" "$d/json.err" 2>/dev/null | tr '\n' ' ')"
	fi
}

# judge_daemon_status NAME PID: `svmtraced status` from another process
# described the running capture, and `svmtraced stop` ended it.
judge_daemon_status() {
	d=$cap/$1
	if grep -q '^state: \(armed\|recording\)$' "$d/status.txt" 2>/dev/null &&
		grep -q "^target: pid=$2 " "$d/status.txt" && grep -q '^vcpu0: written=' "$d/status.txt" &&
		grep -q 'stop=svmtraced stop' "$d/capture.txt"; then
		ok "capture/$1/status" "svmtraced status: $(grep -h '^state\|^steps' "$d/status.txt" | tr '\n' ' ')and svmtraced stop ended it"
	else
		bad "capture/$1/status" "status: $(tr '\n' ' ' <"$d/status.txt" 2>/dev/null) stop: $(grep '^total' "$d/capture.txt" 2>/dev/null)"
	fi
}

# judge_win_discovery IMAGE: what win_discovery_run (l1-win.sh) recorded.
# Each method, at each moment, is its own check: it must find the builder's
# kernel base and say it got there its own way -- LSTAR from the vCPU (the
# symbol KiSystemCall64, KiSystemCall64Shadow in the KVA-shadow image), the
# KPCR through GS base in kernel mode and through KERNEL_GS_BASE in user
# mode, the IDTR, each at the builder's KPCR and IDT and with IDT[0] the
# builder's divide handler, the start block at the builder's page, the
# physical scan -- so a broken path fails here even when another one finds
# the kernel.  On the dump, the register methods must say they have no
# registers; without the start block only the physical scan is left.
judge_win_discovery() {
	d=$cap/discovery-$1
	cr4=$(sed -n 's/^ready .* cr4=\(0x[0-9a-f]*\).*/\1/p' "$d/vmm.txt" 2>/dev/null)
	if [ -n "$cr4" ] && [ $((cr4 & 0x100000)) -ne 0 ]; then
		ok "discovery/$1/cr4" "the guest runs with CR4 $cr4 ($(win_cr4_names "$cr4")): Windows' bits the vCPU offers"
	else
		bad "discovery/$1/cr4" "CR4 '${cr4:-none}' lacks SMEP, which Windows sets and every AMD CPU since Zen has: $(head -n 1 "$d/vmm.txt" 2>/dev/null)"
	fi
	python3 - "$d" "$win/$1.expect" >"$d/verdicts" 2>&1 <<'PY' || bad "discovery/$1" "$(tail -n 3 "$d/verdicts")"
import json, sys
d, expect = sys.argv[1], sys.argv[2]
want = {}
for line in open(expect):
    f = line.split()
    if f and f[0] == 'kernel':
        want['base'] = int(f[1], 16)
    elif f and f[0] == 'layout':
        want.update(kpcr=int(f[f.index('kpcr') + 1], 16), idt=int(f[f.index('idt') + 1], 16),
                    startblock=int(f[f.index('startblock') + 1], 16))
    elif f and f[0] == 'discovery':
        want.update(kv.split('=') for kv in f[1:])
kpcr = lambda reg: 'vCPU 0 %s -> KPCR 0x%x -> IDT[0]' % (reg, want['kpcr'])
idtr = 'vCPU 0 IDTR 0x%x -> IDT[0]' % want['idt']
sb = 'start block at GPA 0x%x' % want['startblock']
# moment -> method -> (source, symbol) it must report, or None: must fail
cases = {
    'ready': {'lstar': ('vCPU 0 LSTAR', want['lstar']), 'kpcr': (kpcr('GS base'), want['idt0']),
              'idtr': (idtr, want['idt0']), 'startblock': (sb, None),
              'pescan': ('CodeView record at GPA ', None)},
    'user': {'lstar': ('vCPU 0 LSTAR', want['lstar']),
             'kpcr': (kpcr('KERNEL_GS_BASE'), want['idt0']), 'idtr': (idtr, want['idt0']),
             'startblock': (sb, None), 'pescan': ('CodeView record at GPA ', None)},
    'dump': {'lstar': None, 'kpcr': None, 'idtr': None, 'startblock': (sb, None),
             'pescan': ('CodeView record at GPA ', None)},
    'nostartblock': {'startblock': None, 'pescan': ('CodeView record at GPA ', None)},
}
for moment, methods in cases.items():
    try:
        got = json.load(open('%s/kernel-%s.json' % (d, moment)))['methods']
    except Exception as e:
        err = open('%s/kernel-%s.err' % (d, moment)).read().strip() if moment else ''
        print('bad|%s|svmtrace-vmi kernel did not run: %s %s' % (moment, e, err))
        continue
    for m, w in methods.items():
        r = got.get(m, {})
        name = '%s/%s' % (moment, m)
        if w is None:
            print('%s|%s|%s' % ('bad' if r.get('ok') else 'ok', name,
                  'found it where it must not: %s' % r if r.get('ok') else 'cannot run: %s' % r.get('error')))
            continue
        source, symbol = w
        good = (r.get('ok') and int(r['base'], 16) == want['base'] and
                r.get('source', '').startswith(source) and r.get('anchor_symbol') == symbol and
                r.get('paging_levels') == 4)
        print('%s|%s|%s' % ('ok' if good else 'bad', name,
              'kernel 0x%x from %s%s (%s)' % (want['base'], r.get('anchor'),
              ' = %s' % symbol if symbol else '', r.get('source')) if good else
              'want base 0x%x from %s%s, got %s' % (want['base'], source,
              ' = %s' % symbol if symbol else '', r)))
PY
	while IFS='|' read -r verdict name msg; do
		if [ "$verdict" = ok ]; then ok "discovery/$1/$name" "$msg"; else bad "discovery/$1/$name" "$msg"; fi
	done <"$d/verdicts"
}

# win_cr4_names CR4: the names of its bits.
win_cr4_names() {
	n=
	for b in 3:DE 4:PSE 5:PAE 6:MCE 7:PGE 9:OSFXSR 10:OSXMMEXCPT 11:UMIP 12:LA57 16:FSGSBASE \
		17:PCIDE 18:OSXSAVE 20:SMEP 21:SMAP 22:PKE 23:CET; do
		[ $(($1 >> ${b%%:*} & 1)) -eq 0 ] || n="$n ${b#*:}"
	done
	echo "${n# }"
}
