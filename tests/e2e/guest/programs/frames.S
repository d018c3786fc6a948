/* SPDX-License-Identifier: GPL-2.0 */
/*
 * frames: the frames and saved RFLAGS a guest kernel reads on
 * the way in from user mode carry the guest's own TF, never a tracer's.
 *   - SYSCALL: the lab kernel collects the TF bit of R11 (KDATA_FRAME_TF),
 *     and so does the program after SYSRET (R11 comes back as it was);
 *     once plain (0F 05) and once with a REX.W prefix (48 0F 05, a SYSCALL
 *     all the same, which a tracer decoding only 0F 05 leaves to KVM's
 *     emulator with its TF in R11);
 *   - UD2: #UD, intercepted by KVM and injected back; the kernel's handler
 *     collects the TF bit of its frame's RFLAGS image and dispatches the
 *     exception back to user mode two bytes further on;
 *   - HLT: #GP(0), which the CPU delivers itself (KVM does not intercept
 *     it); the handler does the same and returns past the HLT;
 *   - an external interrupt the VMM injects (PORT_IRQ, KVM_INTERRUPT) once
 *     POPFQ set IF; its handler collects its frame's TF too.
 * RDI (--arg) rounds of that.
 * Right after each return a PUSHFQ must not show a TF either: R13 collects
 * those bits, logged at the end.  Traced, the result line must still say
 * frame_tf=0x0 and log_sum=0x0, and the trace must equal the model's
 * without a session end: the tracer takes its TF back on the way to user
 * mode.
 */
#include "layout.h"
#include "program.h"

	.intel_syntax noprefix
	.code64
	.text
start:
	mov	r12d, edi		/* rounds: --arg */
	xor	r13d, r13d
1:	mov	eax, 1000
	mov	edi, r12d
	syscall
	mov	rax, r11		/* RFLAGS as SYSCALL saved them */
	and	eax, 0x100
	or	r13, rax
	mov	eax, 1000
	.byte	0x48, 0x0f, 0x05	/* REX.W SYSCALL */
	mov	rax, r11
	and	eax, 0x100
	or	r13, rax
	pushfq
	pop	rax
	and	eax, 0x100
	or	r13, rax
	ud2
	pushfq
	pop	rax
	and	eax, 0x100
	or	r13, rax
	hlt
	pushfq
	pop	rax
	and	eax, 0x100
	or	r13, rax
	mov	eax, IRQ_VECTOR
	out	PORT_IRQ, eax
	pushfq				/* IF on by POPFQ: no interrupt shadow, */
	or	qword ptr [rsp], 0x200	/* which would also hold off the */
	popfq				/* single-step trap under TCG (STI's does) */
	nop				/* the interrupt comes before this one */
	cli
	pushfq
	pop	rax
	and	eax, 0x100
	or	r13, rax
	dec	r12d
	jnz	1b
	mov	eax, r13d
	log_done
