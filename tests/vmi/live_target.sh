#!/bin/sh
# svmtraced's target resolution (target.c) over the live memory driver
# (mem_live.c), both unchanged, on generated Windows memory for both
# profiles: every resolvable process gives the DTBs and entry page the
# generator put there; names match as Windows stores them; a non-resident
# entry becomes a watched gate (and a resident one its page), never a
# guess; and a guest that
# renames a process while the list is walked never yields a mixed answer.
. "$(dirname "$0")/lib.sh"
LT=$BIN/vmi-live-target

for p in "$WIN10" "$WIN11"; do
	gen "$WORK/img" "$p"
	lt() { timeout 60 "$LT" --memory "$WORK/img.elf" --profiles "$VMI_PROFILES" "$@"; }

	# Every process with a resident entry: DTB and gate page as generated.
	grep '^entry [0-9]* 0x' "$WORK/img.expect" >"$WORK/entries"
	n=0
	while read -r _ pid gpa _; do
		n=$((n + 1))
		dtb=$(awk -v p="$pid" '$1 == "process" && $2 == p { print $5 }' "$WORK/img.expect")
		udtb=$(awk -v p="$pid" '$1 == "process" && $2 == p { print $6 }' "$WORK/img.expect")
		lt --pid "$pid" >"$WORK/out" 2>"$WORK/err" || fail "pid $pid: $(cat "$WORK/err")"
		line=$(head -n 1 "$WORK/out")
		[ "$(printf '%s' "$line" | sed 's/.* dtb=\([^ ]*\).*/\1/')" = "$(printf '0x%x' "$dtb")" ] ||
			fail "pid $pid: dtb: $line, expected $dtb"
		if [ "$udtb" != - ]; then
			echo "$line" | grep -q "user_dtb=$(printf '0x%x' "$udtb") " ||
				fail "pid $pid: user dtb: $line, expected $udtb"
		fi
		echo "$line" | grep -q "gate=$(printf '0x%x' $((gpa & ~0xfff)))\$" ||
			fail "pid $pid: gate: $line, expected page of $gpa"
	done <"$WORK/entries"
	[ $n -ge 8 ] || fail "only $n resolvable processes in the image"

	# Names: any case, and the 15 characters EPROCESS.ImageFileName keeps.
	lt --name PLAIN.EXE | grep -q '^pid=1200 name=plain.exe ' || fail "--name PLAIN.EXE"
	lt --name averylongprocessname.exe | grep -q '^pid=1244 ' || fail "--name truncated"
	[ "$(lt --name plain.exe | grep -c '^pid=')" = 1 ] || fail "--name plain.exe: one process"
	expect_fail 1 "no live process of that image" lt --name nosuch.exe
	expect_fail 1 "no process with PID 1234" lt --pid 1234

	# Not resident: a watched gate on the entry VA (the kernel closes it on
	# the page when Windows maps it), with the reason, never a guess ...
	lt --pid 1232 >"$WORK/out" 2>"$WORK/err" || fail "pid 1232: $(cat "$WORK/err")"
	grep -q "^pid=1232 .* entry=0x[0-9a-f]* gate=watch\$" "$WORK/out" ||
		fail "pid 1232 not resident: $(cat "$WORK/out")"
	grep -q "page file.*the kernel watches its page tables" "$WORK/err" ||
		fail "pid 1232: no watch line: $(cat "$WORK/err")"

	# ... and once Windows has brought it in (its PTE maps kvashadow.exe's
	# code page), exactly that page.
	page=$(($(awk '$1 == "entry" && $2 == 1240 { print $3 }' "$WORK/img.expect") & ~0xfff))
	lt --pid 1232 --make-resident $((page | 7)) --switch-after 0 >"$WORK/out" 2>"$WORK/err" ||
		fail "make-resident: $(cat "$WORK/err")"
	grep -q "^pid=1232 .* gate=$(printf '0x%x' $page)\$" "$WORK/out" ||
		fail "make-resident: $(cat "$WORK/out")"

	# The guest renames fresh.exe to plain.exe after R reads: the answer is
	# the list before (1200) or after (1200 and 1248), never anything else.
	before=0 after=0
	for r in 0 1 2 5 10 20 30 35 40 45 50 55 60 70 80 90 100 150; do
		lt --name plain.exe --rename fresh.exe=plain.exe --switch-after $r >"$WORK/out" 2>"$WORK/err" ||
			fail "switch after $r reads: $(cat "$WORK/err")"
		pids=$(sed -n 's/^pid=\([0-9]*\) .*/\1/p' "$WORK/out" | tr '\n' ' ')
		case "$pids" in
		"1200 ") before=$((before + 1)) ;;
		"1200 1248 ") after=$((after + 1)) ;;
		*) fail "switch after $r reads: a mixed answer: $pids" ;;
		esac
		[ $r -gt 2 ] || [ "$pids" = "1200 1248 " ] || fail "switch after $r reads: $pids"
	done
	[ $before -gt 0 ] && [ $after -gt 0 ] || fail "the switch points did not cover both sides"

	# --follow is refused at arm time, saying what is missing: a profile
	# without ETHREAD.Win32StartAddress cannot tell a new thread's start;
	# with it, these images lay out no record of where threads begin and
	# have no ntdll.dll to ask.
	mkdir -p "$WORK/stripped"
	python3 - "$p" "$WORK/stripped/$(basename "$p")" <<'PY' || fail "stripping the profile"
import json, lzma, sys
isf = json.load(lzma.open(sys.argv[1]))
del isf["user_types"]["_ETHREAD"]["fields"]["Win32StartAddress"]
with lzma.open(sys.argv[2], "wt") as f:
	json.dump(isf, f)
PY
	expect_fail 1 "--follow cannot tell which process a new thread is of: profile lacks what threads need: _ETHREAD.Win32StartAddress" \
		timeout 60 "$LT" --memory "$WORK/img.elf" --profiles "$WORK/stripped" --pid 1200 --follow
	expect_fail 1 "--follow needs where threads begin in the guest: where threads begin: " \
		lt --pid 1200 --follow
	rm -r "$WORK/stripped"
done
echo "live target resolution: ok"
