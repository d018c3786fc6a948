/* SPDX-License-Identifier: GPL-2.0 */
/*
 * pushf (hazard 2): the classic anti-debug check.  PUSHFQ stores RFLAGS to
 * the stack and the program logs the TF bit it finds there: 0 on stock KVM,
 * and it must stay 0 while a tracer single-steps it -- also for the forms
 * a decoder of "9C" or "48 9C" alone misses: a REX without W (40 9C) and
 * the 16-bit PUSHFW (66 9C, 2 bytes).
 */
#include "layout.h"
#include "program.h"

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
	.byte	0x40, 0x9c		/* pushfq with an empty REX */
	pop	rax
	and	eax, 0x100
	out	PORT_LOG, eax
	sub	rsp, 6
	.byte	0x66, 0x9c		/* pushfw: the image is the low 2 bytes */
	pop	rax
	and	eax, 0x100
	log_done
