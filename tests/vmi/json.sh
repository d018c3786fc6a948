#!/bin/sh
# --json output carries the same facts as the text output.
. "$(dirname "$0")/lib.sh"

gen "$WORK/img" "$WIN11" --idt-shadow
vmi --memory "$WORK/img.elf" --json ps >"$WORK/ps.json" || fail "ps --json"
grep -q '"name": "kvashadow.exe"' "$WORK/ps.json" || fail "ps --json lacks kvashadow.exe"
grep -q '"pdb_id": "0CE4A95C0CD782A7596B034D8648E585-1"' "$WORK/ps.json" || fail "no pdb_id"
[ "$(grep -c '"pid":' "$WORK/ps.json")" -eq "$(grep -c '^process ' "$WORK/img.expect")" ] ||
	fail "ps --json has the wrong number of processes"

set -- $(grep '^entry 1240 ' "$WORK/img.expect")
vmi --memory "$WORK/img.elf" --json resolve 1240 >"$WORK/r.json" || fail "resolve --json"
grep -q "\"entry_gpa\": \"$3\"" "$WORK/r.json" || fail "resolve --json: entry_gpa is not $3"
grep -q '"resident": true' "$WORK/r.json" || fail "resolve --json: not resident?"
grep -q '"user_dtb": "0x' "$WORK/r.json" || fail "resolve --json: no user DTB for KVA shadow"

vmi --memory "$WORK/img.elf" --json resolve 1232 >"$WORK/nr.json"
[ $? -eq 3 ] || fail "resolve --json of a paged-out entry must exit 3"
grep -q '"resident": false' "$WORK/nr.json" || fail "resolve --json: resident should be false"
grep -q '"reason": ".*page file' "$WORK/nr.json" || fail "resolve --json: no reason"

vmi --memory "$WORK/img.raw" --json modules 1200 >"$WORK/m.json" || fail "modules --json"
grep -q '"name": "helper.dll"' "$WORK/m.json" || fail "modules --json lacks helper.dll"
vmi --memory "$WORK/img.elf" --json kernel >"$WORK/k.json" || fail "kernel --json"
grep -q '"idtr": {' "$WORK/k.json" || fail "kernel --json lacks the idtr method"
vmi --memory "$WORK/img.raw" --json kernel | grep -q '"bytes": 4294967296' ||
	fail "kernel --json: the raw image holds 4 GiB"
