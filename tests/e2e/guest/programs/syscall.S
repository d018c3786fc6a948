/* SPDX-License-Identifier: GPL-2.0 */
/*
 * syscall (hazard 5): a CPL-3 loop making system calls into the lab kernel
 * (RAX += RDI there, RDX = calls so far).  FMASK clears TF on entry, so a
 * user-only tracer sees each SYSCALL as one step that lands on the return
 * address with the kernel's results in RAX/RDX and RCX/R11 as SYSCALL left
 * them.
 */
#include "layout.h"
#include "program.h"

	.intel_syntax noprefix
	.code64
	.text
start:
	mov	r12d, 4
	xor	ebp, ebp
1:	mov	eax, 1000
	mov	edi, r12d
	syscall
	add	rbp, rax
	add	rbp, rdx
	dec	r12d
	jnz	1b
	mov	eax, ebp
	log_done
