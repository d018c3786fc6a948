/* SPDX-License-Identifier: GPL-2.0 */
/*
 * COM1, the Windows-layout guest's channel when QEMU runs it through
 * libvirt (vm-configs/lab-win.xml) instead of the lab's VMM: two GNU as
 * macros for the scheduler and the PVH boot stub, which have no stack and
 * no interrupts.  QEMU's 16550 needs no set-up for polled use.  Both
 * clobber AL, EDX and RSI.
 */
#ifndef E2E_WIN_COM1_H
#define E2E_WIN_COM1_H

#define COM1	 0x3f8
#define COM1_LSR (COM1 + 5) /* bit 0: a byte was received */

/* com1_puts LABEL: write the NUL-terminated string at LABEL. */
.macro com1_puts msg
	lea	rsi, [rip + \msg]
	mov	edx, COM1
91:	lodsb
	test	al, al
	jz	92f
	out	dx, al
	jmp	91b
92:
.endm

/* com1_getc: poll until a byte is received; it is in AL. */
.macro com1_getc
93:	mov	edx, COM1_LSR
	in	al, dx
	test	al, 1
	jz	93b
	mov	edx, COM1
	in	al, dx
.endm

/* com1_wait CHAR: poll until CHAR is received (other bytes are dropped). */
.macro com1_wait ch
94:	com1_getc
	cmp	al, \ch
	jne	94b
.endm

#endif /* E2E_WIN_COM1_H */
