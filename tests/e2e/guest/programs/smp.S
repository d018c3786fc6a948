/* SPDX-License-Identifier: GPL-2.0 */
/*
 * smp: two vCPUs, two threads of one process (same CR3).  vCPU 0 enters on
 * page 0, vCPU 1 on page 1 (each entry page can be its own gate); both run
 * a loop of different length and call a shared function on page 2.  Each
 * logs its result, so a trace mixed up between vCPUs cannot match.
 */
#include "layout.h"
#include "program.h"

	.intel_syntax noprefix
	.code64
	.text

/* Page 0: vCPU 0. */
cpu0:
	mov	ecx, 40
	mov	r12, 0x1000
1:	add	r12, rcx
	dec	ecx
	jnz	1b
	mov	rdi, r12
	call	fold
	log_done

	.org 0x1000
/* Page 1: vCPU 1. */
cpu1:
	mov	ecx, 25
	mov	r13, 0x7777
1:	xor	r13, rcx
	add	r13, r13
	dec	ecx
	jnz	1b
	mov	rdi, r13
	call	fold
	log_done

	.org 0x2000
/* Page 2: shared code, RAX = low half + high half of RDI. */
fold:
	mov	rax, rdi
	mov	rdx, rdi
	shr	rdx, 1
	add	eax, edx
	ret
