#!/bin/sh
# check-suffix.sh EXPECTED.csv ACTUAL.csv
#
# For a capture that started in the middle of a run (--from-next): ACTUAL
# (one vCPU, `svmtrace-dump dump --regs` columns) must be EXPECTED (the
# model's records, check-trace.sh columns) from some record on.  Its first
# row, a session_start with reason 4294967295 (no gate), is looked up in
# EXPECTED by RIP, CR3 and the 16 registers; from there on check-trace.sh
# compares the two row by row.  Prints where the trace joined and the
# comparison's summary, or the first difference.
set -eu
[ $# -eq 2 ] || { echo "usage: check-suffix.sh EXPECTED.csv ACTUAL.csv" >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
tail=$(mktemp) && trap 'rm -f "$tail"' EXIT
first=$(awk -F, 'FNR > 1 && $1 != "cpu" { print; exit }' "$2")
[ -n "$first" ] || { echo "check-suffix: $2 has no rows" >&2; exit 1; }
awk -F, -v first="$first" '
function hex(s) { s = tolower(s); sub(/^0x0*/, "", s); return s == "" ? "0" : s }
function key(f,   k, i) { k = hex(f[4]) "," hex(f[6]); for (i = 8; i <= 23; i++) k = k "," hex(f[i]); return k }
BEGIN { split(first, a, ","); want = key(a) }
NR == 1 { print; next }
!found { split($0, e, ","); if (key(e) != want) next; found = NR - 1
	$3 = "session_start"; $7 = "4294967295" }
{ print }
END { if (!found) exit 3; printf "joined at record %d\n", found > "/dev/stderr" }
' OFS=, "$1" >"$tail" 2>"$tail.at" || {
	echo "check-suffix: the first record of $2 is no state the model went through: $first" >&2
	rm -f "$tail.at"; exit 1; }
at=$(cat "$tail.at") && rm -f "$tail.at"
out=$("$here/check-trace.sh" "$tail" "$2") || { echo "$out"; exit 1; }
echo "$at; $out"
