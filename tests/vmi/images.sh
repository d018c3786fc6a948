#!/bin/sh
# ps, resolve and modules are exact on generated images of both profiles,
# raw and ELF core; each entry GPA holds the program's real entry bytes
# (check_image, in lib.sh).
. "$(dirname "$0")/lib.sh"

for p in "$WIN10" "$WIN11"; do
	gen "$WORK/img" "$p"
	for f in raw elf; do
		check_image "$WORK/img.$f" "$WORK/img.expect" "$WORK/img.raw"
		echo "ok: $(basename "$p") $f"
	done
done
