#!/bin/sh
# Corrupt process lists fail with a clear error, never hang (bounded by
# timeout in vmi()), for both profiles and both image formats.
. "$(dirname "$0")/lib.sh"

for p in "$WIN10" "$WIN11"; do
	for how in cycle blink unmapped outside; do
		gen "$WORK/img" "$p" --scenario small --mem-size 0x8000000 --corrupt "$how"
		case $how in
		cycle) msg="has a cycle" ;;
		blink) msg="has Blink" ;;
		unmapped) msg="cannot be read.*not mapped" ;;
		outside) msg="cannot be read.*outside the memory" ;;
		esac
		for f in raw elf; do
			expect_fail 1 "process list.*$msg" vmi --memory "$WORK/img.$f" ps
		done
	done
done
