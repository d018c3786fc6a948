/* SPDX-License-Identifier: GPL-2.0 */
/*
 * emulated (hazard 4): instructions KVM emulates or completes itself, so
 * no hardware #DB follows them -- CPUID (in-kernel), OUT and IN (exits to
 * the VMM) -- inside traced code, each in a loop.  A tracer must record each
 * as one step, and the guest must see no #DB (its kernel counts them).
 */
#include "layout.h"
#include "program.h"

	.intel_syntax noprefix
	.code64
	.text
start:
	mov	r15d, 3
	xor	r14d, r14d
1:	xor	eax, eax
	cpuid				/* leaf 0: max leaf + "AuthenticAMD" */
	add	r14, rbx
	add	r14, rcx
	add	r14, rdx
	add	r14, rax
	mov	eax, r15d
	out	PORT_LOG, eax		/* the VMM sums 3 + 2 + 1 */
	in	eax, PORT_INPUT		/* INPUT_VALUE */
	add	r14, rax
	dec	r15d
	jnz	1b
	mov	eax, r14d
	log_done
