#!/bin/sh
# Five-level paging (CR4.LA57): the generator's images with a PML5 on top,
# for both profiles.  The ELF core's vCPU notes carry CR4.LA57; the raw image
# has no registers, so discovery must try five levels after four.  ps,
# resolve (every PTE state, 2 MiB and 1 GiB mappings) and modules must be
# exact, as on four-level images (check_image, in lib.sh).
. "$(dirname "$0")/lib.sh"

for p in "$WIN10" "$WIN11"; do
	gen "$WORK/img" "$p" --la57
	vmi --memory "$WORK/img.elf" kernel >"$WORK/k" || fail "kernel on LA57 ELF: $(cat "$WORK/k")"
	grep -q "^paging: *5 levels (LA57)\$" "$WORK/k" || fail "LA57 ELF: $(cat "$WORK/k")"
	for f in raw elf; do
		check_image "$WORK/img.$f" "$WORK/img.expect" "$WORK/img.raw"
		echo "ok: $(basename "$p") $f, five-level tables"
	done
done
# Every method on a (smaller) raw LA57 image, which records no CR4.
gen "$WORK/img" "$WIN11" --la57 --scenario small --mem-size 0x8000000
vmi --memory "$WORK/img.raw" kernel >"$WORK/k" || fail "kernel on LA57 raw: $(cat "$WORK/k")"
grep -q "^paging: *5 levels (LA57)\$" "$WORK/k" || fail "LA57 raw: $(cat "$WORK/k")"
for m in startblock pescan; do
	grep -q "^method $m *$(awk '/^kernel/ { print $2 }' "$WORK/img.expect")  from" "$WORK/k" ||
		fail "LA57 raw, $m: $(cat "$WORK/k")"
done
# The same image without LA57 says four levels.
gen "$WORK/img" "$WIN10" --scenario small --mem-size 0x8000000
vmi --memory "$WORK/img.elf" kernel >"$WORK/k" || fail "kernel on a four-level ELF core"
grep -q "^paging: *4 levels\$" "$WORK/k" || fail "four-level ELF core: $(cat "$WORK/k")"
