/* SPDX-License-Identifier: GPL-2.0 */
/*
 * running: a process that is already running when the tracer arrives
 * (--from-next).  RDI iterations of a loop whose IN exits to the VMM, which
 * the VMM's --input-delay-us makes last as long as a test needs, so that a
 * capture armed part of the way through joins in the middle.
 */
#include "layout.h"

	.intel_syntax noprefix
	.code64
	.text
start:
	xor	ebx, ebx
1:	in	eax, PORT_INPUT		/* INPUT_VALUE, after the VMM's delay */
	add	rbx, rdi
	dec	rdi
	jnz	1b
	mov	eax, ebx
	out	PORT_DONE, eax
