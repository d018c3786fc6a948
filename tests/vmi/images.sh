#!/bin/sh
# ps, resolve and modules are exact on generated images of both profiles,
# raw and ELF core; each entry GPA holds the program's real entry bytes.
. "$(dirname "$0")/lib.sh"

check_image() {	# check_image IMAGE EXPECT RAW
	img=$1 exp=$2 raw=$3

	vmi --memory "$img" ps >"$WORK/ps" || fail "ps on $img"
	tail -n +2 "$WORK/ps" | awk '{ print "process", $0 }' | tr -s ' ' >"$WORK/ps.got"
	grep '^process ' "$exp" >"$WORK/ps.want"
	diff -u "$WORK/ps.want" "$WORK/ps.got" || fail "ps on $img differs from the generator's"

	grep '^entry ' "$exp" | while read -r _ pid gpa va state size bytes; do
		if [ "$gpa" = notresident ]; then
			expect_fail 3 "not resident:.*$va" vmi --memory "$img" resolve "$pid"
			continue
		fi
		vmi --memory "$img" resolve "$pid" >"$WORK/r" || fail "resolve $pid on $img"
		grep -q "^entry-gpa: *$gpa\$" "$WORK/r" || fail "PID $pid: want GPA $gpa: $(cat "$WORK/r")"
		grep -q "^entry-va: *$va\$" "$WORK/r" || fail "PID $pid: want VA $va"
		grep -q "^state: *$state\$" "$WORK/r" || fail "PID $pid: want state $state"
		grep -q "^page-size: *$size\$" "$WORK/r" || fail "PID $pid: want page size $size"
		page=$(grep '^entry-page:' "$WORK/r" | awk '{ print $2 }')
		[ $((page)) -eq $((gpa & ~4095)) ] || fail "PID $pid: entry page $page"
		got=$(bytes_at "$raw" "$gpa")
		[ "$got" = "$bytes" ] || fail "PID $pid: bytes at GPA $gpa are $got, the PE has $bytes"
	done || exit 1

	for pid in $(grep '^module ' "$exp" | awk '{ print $2 }' | sort -u); do
		vmi --memory "$img" modules "$pid" >"$WORK/m" || fail "modules $pid on $img"
		tail -n +2 "$WORK/m" | awk -v p="$pid" '{ print "module", p, $1, $2, $4, $5 }' >"$WORK/m.got"
		grep "^module $pid " "$exp" >"$WORK/m.want"
		diff -u "$WORK/m.want" "$WORK/m.got" || fail "modules $pid on $img"
	done
	expect_fail 1 "PEB.Ldr is NULL" vmi --memory "$img" modules 1248
	expect_fail 1 "no process with PID 999" vmi --memory "$img" resolve 999
}

for p in "$WIN10" "$WIN11"; do
	gen "$WORK/img" "$p"
	for f in raw elf; do
		check_image "$WORK/img.$f" "$WORK/img.expect" "$WORK/img.raw"
		echo "ok: $(basename "$p") $f"
	done
done
