#!/bin/sh
# Kernel discovery: raw images by the processor start block, ELF cores by
# the vCPU notes (KPCR via GS/KERNEL_GS_BASE, IDTR) too; the methods agree.
. "$(dirname "$0")/lib.sh"

for p in "$WIN10" "$WIN11"; do
	for opts in "" "--idt-shadow" "--old-qemu-notes"; do
		gen "$WORK/img" "$p" --scenario small --mem-size 0x8000000 $opts
		base=$(awk '/^kernel/ { print $2 }' "$WORK/img.expect")
		vmi --memory "$WORK/img.elf" kernel >"$WORK/k" || fail "kernel on ELF ($opts)"
		for m in kpcr idtr startblock; do
			grep -q "^method $m *$base\$" "$WORK/k" || fail "$m on ELF ($opts): $(cat "$WORK/k")"
		done
		grep -q "^method lstar *-  lstar: qemu-elf-core.*records no LSTAR" "$WORK/k" ||
			fail "lstar should say why it cannot run"
		vmi --memory "$WORK/img.raw" kernel >"$WORK/k" || fail "kernel on raw"
		grep -q "^found-by: *startblock" "$WORK/k" || fail "raw image not found by startblock"
		grep -q "^method idtr *-  idtr: raw.*records no IDTR" "$WORK/k" || fail "idtr on raw"
	done
done

# Without the start block a raw image has no way to the kernel: say so.
gen "$WORK/img" "$WIN10" --scenario small --mem-size 0x8000000
dd if=/dev/zero of="$WORK/img.raw" bs=4096 seek=1 count=1 conv=notrunc 2>/dev/null
expect_fail 1 "no Windows x64 kernel found.*no processor start block" vmi --memory "$WORK/img.raw" ps
# The ELF core still finds it through the vCPU registers.
vmi --memory "$WORK/img.elf" ps >/dev/null || fail "ELF core without start block"
