/* SPDX-License-Identifier: GPL-2.0 */
/*
 * twoproc (the ntdll case): two processes make system calls from
 * the same code page at the same time, one of them traced.  vCPU 0 runs
 * the target (PML4_GPA); vCPU 1's first system call moves it to
 * PML4_ALT_GPA, another address space mapping the same memory (its session
 * ends there, reason cr3), where it calls from page 2 as vCPU 0 does,
 * untraced.  A tracer that takes a page's execute permission while a
 * thread is in its system call, or matches returns by RIP alone, loses
 * vCPU 0's records or traces vCPU 1.  The calls are quiet (RSI 1, 2:
 * kernel.S counts none of them), so the registers do not depend on how the
 * two interleave.  Each logs RAX's sum plus the TF bits it saw in R11
 * after its calls (a tracer's TF there shows in the log).
 */
#include "layout.h"
#include "program.h"

	.intel_syntax noprefix
	.code64
	.text

/* Page 0: vCPU 0, the traced process. */
cpu0:
	mov	r12d, 24
	xor	ebp, ebp
	xor	r13d, r13d
	call	calls
	mov	eax, ebp
	add	eax, r13d
	log_done

	.org 0x1000
/* Page 1: vCPU 1 leaves for the other address space. */
cpu1:
	mov	eax, 7
	mov	edi, 1
	mov	esi, 2
	syscall				/* CR3 = PML4_ALT_GPA: its session ends */
	mov	r12d, 32
	mov	ebp, eax
	xor	r13d, r13d
	call	calls
	mov	eax, ebp
	add	eax, r13d
	log_done

	.org 0x2000
/* Page 2, shared: R12 quiet system calls, RBP sums RAX, R13 R11's TFs. */
calls:
1:	mov	eax, 1000
	mov	edi, r12d
	mov	esi, 1
	syscall
	add	rbp, rax
	mov	rax, r11
	and	eax, 0x100
	or	r13, rax
	dec	r12d
	jnz	1b
	ret
