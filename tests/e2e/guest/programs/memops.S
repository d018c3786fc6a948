/* SPDX-License-Identifier: GPL-2.0 */
/*
 * memops: memory operands for a tracer that records them (--mem): loads and
 * stores through base + index * scale + displacement and RIP-relative
 * addresses, read-modify-writes (ALU to memory, INC, SHL, XCHG), a call
 * and a jump through memory, a frame built with PUSH and torn down with
 * LEAVE, and a buffer decrypted into another (each dword loaded, XORed with
 * a key and stored in order: plain, at page 1 + 32, ends up holding the 32
 * ASCII bytes of "svmtrace decrypted this buffer!!", judge-memrange.sh).
 * Logs a checksum of the decrypted buffer.
 */
#include "layout.h"
#include "program.h"

	.intel_syntax noprefix
	.code64
	.text
start:
	lea	rsi, [rip + cipher]
	lea	rdi, [rip + plain]
	xor	ecx, ecx
	xor	edx, edx
1:	mov	eax, dword ptr [rsi + rcx * 4]		/* decrypt: load, xor, store */
	xor	eax, 0x5a5a5a5a
	mov	dword ptr [rdi + rcx * 4], eax
	add	edx, eax
	add	ecx, 1
	cmp	ecx, 8
	jnz	1b
	mov	qword ptr [rip + scratch], rdx		/* RIP-relative store, then load */
	mov	rbx, qword ptr [rip + scratch]
	lea	rdi, [rip + scratch]
	add	qword ptr [rdi + 8], rbx		/* read-modify-writes */
	xor	dword ptr [rdi + 16], edx
	add	qword ptr [rdi + 24], 0x77
	inc	qword ptr [rdi + 8]
	shl	qword ptr [rdi + 24], 4
	mov	rax, 0x1122334455667788
	xchg	qword ptr [rdi + 32], rax
	mov	dword ptr [rdi + 40], 0x12345678	/* store an immediate */
	cmp	rax, qword ptr [rdi + 32]		/* loads into ALU, TEST */
	test	qword ptr [rdi + 24], rbx
	call	qword ptr [rip + fnptr]			/* through memory: read, push */
	jmp	qword ptr [rip + contptr]
	.org 0x400
cont:
	mov	eax, edx
	log_done

	.org 0x800
frame:						/* PUSH, stores in a frame, LEAVE, RET */
	push	rbp
	mov	rbp, rsp
	sub	rsp, 16
	mov	qword ptr [rbp - 8], rdx
	mov	rax, qword ptr [rbp - 8]
	add	rdx, rax
	leave
	ret

	.org 0x1000
/* Page 1: data. */
cipher:						/* "svmtrace decrypted this buffer!!" ^ 0x5a */
	.long	0x2e372c29, 0x3f393b28, 0x393f3e7a, 0x2e2a2328
	.long	0x2e7a3e3f, 0x7a293332, 0x3c3c2f38, 0x7b7b283f
plain:
	.fill	8, 4, 0
scratch:
	.quad	0, 0x100, 0xff00ff00, 3, 0, 0
fnptr:
	.quad	USER_VA + 0x800
contptr:
	.quad	USER_VA + 0x400
