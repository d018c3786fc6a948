/* SPDX-License-Identifier: GPL-2.0 */
/*
 * For lab programs that run at CPL 0 (VMM --cpl0) and handle a vector
 * themselves: idt_gate VECTOR, HANDLER writes a 64-bit interrupt gate
 * (DPL 0, the kernel's code selector) to HANDLER, a label of the program,
 * into the lab kernel's IDT (layout.h).  The program is linked at USER_VA
 * from its label "start".  Clobbers RAX.
 */
#ifndef E2E_GUEST_GATE_H
#define E2E_GUEST_GATE_H

#define GATE_TARGET(h) (USER_VA + (h) - start)

	.macro idt_gate vector, handler
	movabs	rax, (GATE_TARGET(\handler) & 0xffff) | (SEL_KERNEL_CS << 16) | (0x8e << 40) | \
		     (((GATE_TARGET(\handler) >> 16) & 0xffff) << 48)
	mov	qword ptr [IDT_GPA + \vector * 16], rax
	movabs	rax, GATE_TARGET(\handler) >> 32
	mov	qword ptr [IDT_GPA + \vector * 16 + 8], rax
	.endm

#endif /* E2E_GUEST_GATE_H */
