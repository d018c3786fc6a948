/* SPDX-License-Identifier: GPL-2.0 */
/*
 * selfstep: a program that single-steps itself while it
 * is traced must get exactly the #DBs it gets untraced, and each of its
 * instructions must be in the trace once.  Twice over, with its own TF set
 *   - by POPFQ: over ordinary instructions, over instructions KVM
 *     completes itself (CPUID, IN, OUT: no hardware #DB, KVM queues one),
 *     and over MOV SS (its trap covers the next instruction too);
 *   - by IRETQ to its own privilege level;
 * and cleared by POPFQ again.  The kernel counts the #DBs and sums their
 * frame RIPs.  RDI 0 runs it at CPL 3 with the user selectors; RDI 1 with
 * the kernel's, for the VMM's --cpl0 (R13 = SS, R14 = CS: only those two
 * registers and RDI differ between the two runs).
 *
 * Not here: STI.  On hardware its interrupt shadow does not hold off the
 * single-step trap; QEMU 7.2's TCG suppresses the trap after STI, so the
 * lab cannot tell a tracer that merges STI with the next instruction
 * from one that does not (the model follows hardware).
 */
#include "layout.h"
#include "program.h"

	.intel_syntax noprefix
	.code64
	.text
start:
	mov	r13d, SEL_USER_SS
	mov	r14d, SEL_USER_CS
	test	edi, edi
	jz	0f
	mov	r13d, SEL_KERNEL_SS
	mov	r14d, SEL_KERNEL_CS
0:	xor	eax, eax		/* the same flags on both paths */
common:					/* from here on only RDI R13 R14 differ */
	mov	ebx, 7
	mov	r12d, 2
1:	tf_on				/* TF on: the next instruction traps */
	add	ebx, 1
	xor	eax, eax
	cpuid				/* completed by KVM */
	in	eax, PORT_INPUT		/* completed by KVM (userspace) */
	mov	eax, ebx
	out	PORT_LOG, eax		/* completed by KVM (userspace) */
	mov	ss, r13d		/* MOV SS: one trap for it and the next */
	add	ebx, 3
	tf_off				/* TF off; this one still traps */
	/* TF on through IRETQ to the same privilege level */
	mov	rcx, rsp
	push	r13			/* SS */
	push	rcx			/* RSP */
	pushfq
	or	qword ptr [rsp], 0x100	/* RFLAGS with TF */
	push	r14			/* CS */
	lea	rax, [rip + 2f]
	push	rax			/* RIP */
	iretq
2:	add	ebx, 9			/* traps */
	nop
	tf_off
	dec	r12d
	jnz	1b
	mov	eax, ebx
	log_done
