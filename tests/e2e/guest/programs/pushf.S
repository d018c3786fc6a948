/* SPDX-License-Identifier: GPL-2.0 */
/*
 * pushf (hazard 2): the classic anti-debug check.  PUSHFQ stores RFLAGS to
 * the stack and the program logs the TF bit it finds there: 0 on stock KVM,
 * and it must stay 0 while a tracer single-steps it.
 */
#include "layout.h"

	.intel_syntax noprefix
	.code64
	.text
start:
	pushfq
	pop	rax
	and	eax, 0x100
	out	PORT_LOG, eax		/* the TF the guest saw */
	mov	ecx, 5
1:	pushfq
	pop	rdx
	or	rax, rdx
	dec	ecx
	jnz	1b
	and	eax, 0x100
	out	PORT_LOG, eax
	xor	eax, eax
	out	PORT_DONE, eax
