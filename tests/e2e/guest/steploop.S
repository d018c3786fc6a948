/* SPDX-License-Identifier: GPL-2.0 */
/*
 * steploop: the whole firmware of the QEMU guest that step-cost.sh
 * single-steps through QEMU's gdbstub (l1-gdbstep.sh).  QEMU maps this
 * 64 KiB image below 4 GiB (-bios) and the CPU starts in real mode at
 * its last 16 bytes; from there it runs bench.bin's four-instruction loop
 * for ever: no memory operand, no I/O, no interrupt (IF is clear at
 * reset), so every exit to QEMU is the single-step's own.
 */
	.intel_syntax noprefix
	.code16
	.text
	.org	0xff00
loop:
	add	eax, ecx
	xor	ebx, eax
	dec	ecx
	jmp	loop

	.org	0xfff0		/* the reset vector: CS base 0xffff0000, IP 0xfff0 */
	jmp	loop
	.org	0x10000		/* QEMU wants the BIOS in whole 64 KiB */
