#!/bin/sh
# Five-level paging (CR4.LA57): the generator's images with a PML5 on top,
# for both profiles.  The ELF core's vCPU notes carry CR4.LA57; the raw image
# has no registers, so discovery must try five levels after four.  ps,
# resolve (every PTE state, 2 MiB and 1 GiB mappings) and modules must be
# exact, as on four-level images (check_image, in lib.sh).
. "$(dirname "$0")/lib.sh"

for p in "$WIN10" "$WIN11"; do
	gen "$WORK/img" "$p" --la57
	for f in raw elf; do
		vmi --memory "$WORK/img.$f" kernel >"$WORK/k" || fail "kernel on LA57 $f: $(cat "$WORK/k")"
		grep -q "^paging: *5 levels (LA57)\$" "$WORK/k" || fail "LA57 $f: $(cat "$WORK/k")"
		check_image "$WORK/img.$f" "$WORK/img.expect" "$WORK/img.raw"
		echo "ok: $(basename "$p") $f, five-level tables"
	done
done
# The same image without LA57 says four levels.
gen "$WORK/img" "$WIN10" --scenario small --mem-size 0x8000000
vmi --memory "$WORK/img.elf" kernel >"$WORK/k" || fail "kernel on a four-level ELF core"
grep -q "^paging: *4 levels\$" "$WORK/k" || fail "four-level ELF core: $(cat "$WORK/k")"
