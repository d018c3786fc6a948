/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The user code of the Windows-layout guest's processes, linked by the
 * mingw-w64 binutils into real PE32+ images (one per process, differing in
 * SEED and ROUNDS).  Position independent: the image builder maps each
 * image at the generator's image base, not at ImageBase.
 *
 * ROUNDS times: compute on the entry page and on the next page (a call
 * across pages, a RIP-relative table in .data, a loop), call ntdll.dll's
 * NtTestAlert through the import address table (the image imports it; the
 * image builder binds it to wherever it put ntdll, as Windows' loader
 * does), log the result on PORT_LOG, yield (system call 0).  Then exit
 * (system call 1).  Every
 * yield switches to another process's CR3, so a tracer's session ends
 * there, and each resumption re-enters the entry page (the gate).
 */
#include "../../guest/layout.h"
#include "../winlayout.h"

	.intel_syntax noprefix
	.text
	.globl	start
start:
	mov	ebx, SEED
	xor	r12d, r12d
	lea	r13, [rip + table]
1:	call	work
	call	qword ptr [rip + __imp_NtTestAlert]
	add	r12d, 1
	mov	eax, ebx
	out	PORT_LOG, eax
	xor	eax, eax		/* WIN_SYS_YIELD */
	syscall
	cmp	r12d, ROUNDS
	jb	1b
	mov	eax, WIN_SYS_EXIT
	syscall
	jmp	.

	.globl	work
	.p2align 12
work:					/* the image's second code page */
	mov	ecx, 4
2:	mov	rax, qword ptr [r13 + rcx * 8 - 8]
	add	rbx, rax
	shl	rbx, 1
	xor	ebx, ecx
	loop	2b
	ret

	.data
table:
	.quad	1, 3, 5, SEED
