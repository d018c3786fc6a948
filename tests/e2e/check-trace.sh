#!/bin/sh
# check-trace.sh [--gaps|--holes] EXPECTED.csv ACTUAL.csv...
#
# Compare what a tracer recorded with what the reference model says it must
# record.  EXPECTED.csv is one vCPU's svmtrace-e2e-model output
# (cpu,index,kind,rip,rflags,cr3,reason,rax..r15,rflags_undefined); each
# ACTUAL.csv is in `svmtrace-dump dump --regs` columns
# (cpu,sequence,kind,rip,rflags,cr3,reason,rax..r15) and only its rows of
# that vCPU count.  They must match row for row: same count (no missing,
# duplicated or extra step), same kind, RIP, RFLAGS (bits the model marks
# undefined excepted), CR3 and registers; the reason of session_start (gate
# id) and session_end (end reason); strictly increasing sequence numbers.
# With --gaps, records may be missing (the drop policy, a pause): every row
# present must equal the model's row at its sequence number counted from
# the first row's (a dropped or paused step takes a number too), and the
# last row must be the model's last.
# With --holes (a --kernel capture, svmtrace-e2e-model --kernel), the
# model's "hole" rows may be missing: those between a session end where an
# event took the tracer's TF and the row that is the next session's start
# at the latest.  The trace's session_start after that end is one of them
# or that row, and from there on every row is there again.
# Prints the first difference and exits 1, or prints one summary line.
set -eu
gaps= holes=
case ${1:-} in
--gaps) gaps=1; shift ;;
--holes) holes=1; shift ;;
esac
[ $# -ge 2 ] || { echo "usage: check-trace.sh [--gaps|--holes] EXPECTED.csv ACTUAL.csv..." >&2; exit 2; }
expected=$1; shift
for f in "$expected" "$@"; do [ -r "$f" ] || { echo "check-trace: cannot read $f" >&2; exit 2; }; done

awk -F, -v expected="$expected" -v gaps="$gaps" -v holes="$holes" '
# Portable awk (mawk has no 64-bit integers): compare hex as normalized
# strings, and RFLAGS (32 bits, exact in a double) bit by bit.
function hex(s) { s = tolower(s); sub(/^0x0*/, "", s); return s == "" ? "0" : s }
function num(s,   i, v) { s = hex(s); v = 0
	for (i = 1; i <= length(s); i++) v = v * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1
	return v }
function same_masked(a, b, und,   bit) {
	a = num(a); b = num(b); und = num(und)
	for (bit = 0; bit < 32; bit++) {
		if (int(und / 2 ^ bit) % 2 == 0 && int(a / 2 ^ bit) % 2 != int(b / 2 ^ bit) % 2) return 0
	}
	return 1 }
# Why the actual row ($0) differs from expected row e[] in state (kind aside).
function differs(   i, names, rn, why) {
	why = ""
	if (hex($4) != hex(e[4])) why = "rip " $4 " != " e[4]
	else if (hex($6) != hex(e[6])) why = "cr3 " $6 " != " e[6]
	else if (($3 == "session_start" || $3 == "session_end") && $7 + 0 != e[7] + 0) why = "reason " $7 " != " e[7]
	else {
		if (!same_masked($5, e[5], e[24])) why = "rflags " $5 " != " e[5]
		names = "rax rbx rcx rdx rsi rdi rbp rsp r8 r9 r10 r11 r12 r13 r14 r15"
		split(names, rn, " ")
		for (i = 8; i <= 23 && why == ""; i++)
			if (hex($i) != hex(e[i])) why = rn[i - 7] " " $i " != " e[i]
	}
	return why }
# --holes: the kind the actual row must have where the model has kind k.
function want_kind(k) {
	if (k == "hole" || k == "session_start") return started ? "instruction" : "session_start"
	return k }
BEGIN {
	n = 0
	while ((getline line < expected) > 0) {
		if (line ~ /^cpu,/) continue
		n++; exp_row[n] = line
		split(line, f, ","); cpu = f[1]
	}
	if (!n) { print "check-trace: " expected " has no rows"; exit 2 }
	m = 0; last_seq = -1; at = 0; missing = 0; gaps_n = 0; started = 0; restarts = 0
}
FNR == 1 && /^cpu,/ { next }
$1 == cpu {
	m++
	if ($2 + 0 <= last_seq && m > 1) {
		printf "check-trace: %s:%d: sequence %s after %s is not increasing\n", FILENAME, FNR, $2, last_seq
		bad = 1; exit 1
	}
	last_seq = $2 + 0
	if (m == 1) seq0 = $2 + 0
	if (holes != "") {
		# Skip the hole rows the trace lacks, until its session restarts.
		idx = at + 1
		while (!started && $3 == "session_start" && idx < n) {
			split(exp_row[idx], e, ",")
			if (e[3] != "hole" || differs() == "") break
			idx++; missing++
		}
	} else {
		idx = gaps == "" ? m : $2 - seq0 + 1
	}
	if (idx > n) { printf "check-trace: cpu %s: extra row %d (%s:%d): %s\n", cpu, m, FILENAME, FNR, $0; bad = 1; exit 1 }
	if (holes == "" && idx > at + 1) { missing += idx - at - 1; gaps_n++ }
	at = idx
	split(exp_row[idx], e, ",")
	k = holes == "" ? e[3] : want_kind(e[3])
	why = $3 != k ? "kind " $3 " != " k : differs()
	if (holes != "") {
		if (e[3] == "hole" && $3 == "session_start") started = 1
		else if (e[3] == "session_start") started = 0
		else if (e[3] == "session_end") started = 0
		if ($3 == "session_start") restarts++
	}
	if (why != "") {
		printf "check-trace: cpu %s row %d (%s:%d): %s\n  actual:   %s\n  expected: %s\n", cpu, m, FILENAME, FNR, why, $0, exp_row[idx]
		bad = 1; exit 1
	}
}
END {
	if (bad) exit 1
	if (gaps != "") {
		if (at < n) { printf "check-trace: cpu %s: the last row is the model'"'"'s %d of %d; first missing at the end: %s\n", cpu, at, n, exp_row[at + 1]; exit 1 }
		printf "check-trace: cpu %s: %d rows match the model'"'"'s at their sequence numbers, %d of its %d records missing in %d gaps\n", cpu, m, missing, n, gaps_n
		exit 0
	}
	if (holes != "") {
		for (i = at + 1; i <= n; i++) {
			split(exp_row[i], e, ",")
			if (e[3] != "hole") { printf "check-trace: cpu %s: %d rows; first missing: %s\n", cpu, m, exp_row[i]; exit 1 }
			missing++
		}
		printf "check-trace: cpu %s: %d rows match the model'"'"'s, %d session starts, %d of its %d rows in holes missing\n", cpu, m, restarts, missing, n
		exit 0
	}
	if (m < n) { printf "check-trace: cpu %s: %d rows, expected %d; first missing: %s\n", cpu, m, n, exp_row[m + 1]; exit 1 }
	printf "check-trace: cpu %s: %d rows match\n", cpu, m
}' "$@"
