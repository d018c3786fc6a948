#!/bin/sh
# Kernel discovery, each path on its own, on generated images whose kernel,
# KPCR, IDT and start block the generator placed at random: every method
# must find the generator's kernel base and say how (the anchor, the
# profile symbol it is, where it came from).  Raw images have no registers
# (the start block and the physical scan); ELF cores have vCPU notes (KPCR
# through GS base in kernel mode and through KERNEL_GS_BASE in user mode,
# IDTR); with the start block wiped, only the physical scan is left.
. "$(dirname "$0")/lib.sh"

# found METHOD PATTERN: `kernel` found the generator's base by METHOD, and its
# "from ANCHOR [= SYMBOL] (SOURCE)" matches PATTERN
found() {
	grep -q "^method $1 *$base  from 0x[0-9a-f]*$2" "$WORK/k" ||
		fail "$1 ($what): want $base from ...$2: $(cat "$WORK/k")"
}

for p in "$WIN10" "$WIN11"; do
	for opts in "" "--idt-shadow" "--old-qemu-notes"; do
		what="$(basename "$p") ELF $opts"
		gen "$WORK/img" "$p" --scenario small --mem-size 0x8000000 $opts
		base=$(awk '/^kernel/ { print $2 }' "$WORK/img.expect")
		divide=KiDivideErrorFault
		[ "$opts" != --idt-shadow ] || divide=KiDivideErrorFaultShadow
		vmi --memory "$WORK/img.elf" kernel >"$WORK/k" || fail "kernel on ELF ($opts)"
		found kpcr " = $divide (vCPU 0 GS base -> KPCR $(layout kpcr) -> IDT\[0\])"
		found idtr " = $divide (vCPU 0 IDTR $(layout idt) -> IDT\[0\])"
		found startblock " (start block at GPA $(layout startblock))"
		found pescan " (CodeView record at GPA 0x[0-9a-f]*)"
		grep -q "^method lstar *-  lstar: qemu-elf-core.*records no LSTAR" "$WORK/k" ||
			fail "lstar should say why it cannot run"
		what="$(basename "$p") raw $opts"
		vmi --memory "$WORK/img.raw" kernel >"$WORK/k" || fail "kernel on raw"
		grep -q "^found-by: *startblock" "$WORK/k" || fail "raw image not found by startblock"
		found startblock " (start block at GPA $(layout startblock))"
		found pescan " (CodeView record at GPA 0x[0-9a-f]*)"
		grep -q "^method idtr *-  idtr: raw.*records no IDTR" "$WORK/k" || fail "idtr on raw"
	done
	# A dump taken while the only vCPU ran in user mode of a KVA-shadow
	# process: GS base is its TEB, the KPCR is in KERNEL_GS_BASE, CR3 the
	# user DTB (which maps the IDT and KPCR but not the kernel image).
	what="$(basename "$p") ELF, one vCPU in user mode"
	gen "$WORK/img" "$p" --scenario small --mem-size 0x8000000 --user-vcpu-only
	base=$(awk '/^kernel/ { print $2 }' "$WORK/img.expect")
	vmi --memory "$WORK/img.elf" kernel >"$WORK/k" || fail "kernel on a user-mode ELF"
	found kpcr " = KiDivideErrorFault (vCPU 0 KERNEL_GS_BASE -> KPCR $(layout kpcr) -> IDT\[0\])"
	found idtr " = KiDivideErrorFault (vCPU 0 IDTR $(layout idt) -> IDT\[0\])"
	check_image "$WORK/img.elf" "$WORK/img.expect" "$WORK/img.raw"
done

# Without the start block a raw image still has its physical memory: the
# physical scan finds the kernel's CodeView record and a self-mapped root.
gen "$WORK/img" "$WIN10" --scenario small --mem-size 0x8000000
base=$(awk '/^kernel/ { print $2 }' "$WORK/img.expect")
what="raw without start block"
dd if=/dev/zero of="$WORK/img.raw" bs=1 seek=$(($(layout startblock))) count=4096 conv=notrunc 2>/dev/null
vmi --memory "$WORK/img.raw" kernel >"$WORK/k" || fail "kernel on raw without start block"
grep -q "^found-by: *pescan" "$WORK/k" || fail "not found by the physical scan: $(cat "$WORK/k")"
found pescan " (CodeView record at GPA 0x[0-9a-f]*)"
grep -q "^method startblock *-  startblock: no processor start block" "$WORK/k" ||
	fail "startblock should say why it cannot run: $(cat "$WORK/k")"
check_image "$WORK/img.raw" "$WORK/img.expect" "$WORK/img.raw"
# ... and the ELF core still through the vCPU registers.
vmi --memory "$WORK/img.elf" ps >/dev/null || fail "ELF core without start block"
# Without the kernel's CodeView record too, nothing is left: say so.
cv=$(vmi --memory "$WORK/img.raw" kernel | sed -n 's/^method pescan .*CodeView record at GPA \(0x[0-9a-f]*\).*/\1/p')
[ -n "$cv" ] || fail "no CodeView record GPA"
dd if=/dev/zero of="$WORK/img.raw" bs=1 seek=$((cv)) count=4 conv=notrunc 2>/dev/null
expect_fail 1 "no Windows x64 kernel found.*no processor start block.*no CodeView record naming a kernel PDB" \
	vmi --memory "$WORK/img.raw" ps
