#!/bin/sh
# svmtraced's code map (codemap.c) over the live memory driver on generated
# Windows memory (vmi-live-target --codemap): the entry page saved with the
# sequence that entered it, a DLL the process "loads" while traced found by
# re-walking the loader list and recorded with its first sequence and its
# export table, and the entry page saved again, with the new sequence, once
# its bytes changed in guest memory.  code.bin is read back with the
# reader written from docs/analysis.md (tests/cli/analysis/read_codebin.py).
. "$(dirname "$0")/lib.sh"
need_cmd python3 "reading code.bin and capture.json back"

for p in "$WIN10" "$WIN11"; do
	gen "$WORK/img" "$p"
	rm -rf "$WORK/cm"
	timeout 60 "$BIN/vmi-live-target" --memory "$WORK/img.elf" --profiles "$VMI_PROFILES" \
		--pid 1200 --codemap "$WORK/cm" >"$WORK/out" 2>"$WORK/err" || fail "codemap: $(cat "$WORK/err")"
	line=$(grep '^code ' "$WORK/out")
	# Not a check: what the map adds to the drain loop per slot.
	echo "info: $(grep '^observe' "$WORK/out")"
	echo "$line" | grep -q 'pages=2 versions=3 changed=1 walks=1 added=1 unreadable=0 ' ||
		fail "codemap counts: $line"
	entry_page=$(echo "$line" | sed 's/.* entry_page=\([^ ]*\).*/\1/')
	dll_page=$(echo "$line" | sed 's/.* dll_page=\([^ ]*\).*/\1/')
	python3 tests/cli/analysis/read_codebin.py "$WORK/cm/code.bin" >"$WORK/code.json" ||
		fail "code.bin does not read back"
	python3 - "$WORK/code.json" "$WORK/cm/capture.json" "$entry_page" "$dll_page" <<'PY' || fail "codemap: $(cat "$WORK/py.err" 2>/dev/null)"
import json, sys
code, cap = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
entry, dll = int(sys.argv[3], 16), int(sys.argv[4], 16)
got = [(e['va'], e['first_sequence']) for e in code]
assert got == [(entry, 10), (dll, 11), (entry, 40)], got
a, b = code[0]['bytes'], code[2]['bytes']
assert a != b and a[4:] == b[4:] and b[:4] == 'cccc', 'the second version is the patched page'
assert code[0]['gpa'] == code[2]['gpa'] and code[0]['gpa'] % 4096 == 0
assert cap['modules'][0]['name'] == 'plain.exe', cap['modules'][0]
assert cap['modules'][0]['first_seen_sequence'] is None, cap['modules'][0]
h = cap['modules'][1]
assert h['name'] == 'helper.dll', h
assert h['first_seen_sequence'] == 11, h
assert [e['name'] for e in h['exports']] == ['helper_add'], h['exports']
c = cap['code']
assert (c['pages'], c['versions'], c['changed'], c['module_walks'], c['modules_added']) == (2, 3, 1, 1, 1), c
PY
done
echo "codemap: ok"
