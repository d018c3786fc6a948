#!/bin/sh
# threads PID lists exactly the generator's threads of a process (ETHREAD
# list, TEB, start addresses) and its command line, on both profiles; without
# the kernel's record of where threads begin (these images lay none out)
# threads alone fails and says why.
. "$(dirname "$0")/lib.sh"

for p in "$WIN10" "$WIN11"; do
	gen "$WORK/img" "$p"
	pid=$(awk '/^thread / { print $2; exit }' "$WORK/img.expect")
	[ -n "$pid" ] || fail "the generator wrote no thread lines"
	vmi --memory "$WORK/img.elf" threads "$pid" >"$WORK/t" || fail "threads $pid: $(cat "$WORK/t")"
	awk -v p="$pid" '$1 ~ /^[0-9]+$/ { print "thread", p, $1, $3, $4, $5 }' "$WORK/t" >"$WORK/t.got"
	grep "^thread $pid " "$WORK/img.expect" >"$WORK/t.want"
	diff -u "$WORK/t.want" "$WORK/t.got" || fail "threads $pid differ from the generator's"
	want=$(grep "^cmdline $pid " "$WORK/img.expect" | cut -d' ' -f3-)
	grep -qxF "command line:      $want" "$WORK/t" || fail "command line of $pid is not '$want': $(cat "$WORK/t")"
	grep -q "^thread start:      not known: " "$WORK/t" || fail "threads $pid: no reason for the unknown thread start"
	expect_fail 1 "LdrInitializeThunk\|PspLoaderInitRoutine\|PsNtdllExports" vmi --memory "$WORK/img.elf" threads
	echo "ok: $(basename "$p") threads"
done
