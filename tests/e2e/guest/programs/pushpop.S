/* SPDX-License-Identifier: GPL-2.0 */
/*
 * pushpop (hazard 2 under SMAP): PUSHFQ, POP, PUSH, POPFQ in a loop, as code
 * that saves and restores its flags does.  A PUSHF image that keeps a
 * tracer's TF is popped back into RFLAGS: the tracer then takes that TF for
 * the guest's own and the guest gets #DBs it never asked for (its kernel
 * counts them: db_count).  The lab kernel runs with CR4.SMAP, where a
 * supervisor write to the user stack is refused: a tracer that cleans the
 * image that way leaves its TF there.  Logs the TF bits of the images.
 */
#include "layout.h"
#include "program.h"

	.intel_syntax noprefix
	.code64
	.text
start:
	xor	ebx, ebx
	mov	ecx, 6
1:	pushfq
	pop	rax
	or	rbx, rax
	push	rax
	popfq
	add	rax, rcx
	dec	ecx
	jnz	1b
	mov	eax, ebx
	and	eax, 0x100
	log_done			/* EAX: the TF the guest saw */
