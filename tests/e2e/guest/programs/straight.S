/* SPDX-License-Identifier: GPL-2.0 */
/*
 * straight: straight-line code and counted loops on the gate page (page 0)
 * and on other pages, memory loads from a table on a data page, a call and
 * return across pages.  Logs the table checksum on PORT_LOG.
 */
#include "layout.h"
#include "program.h"

	.intel_syntax noprefix
	.code64
	.text

/* Page 0, the gate: the first instruction here starts the session. */
start:
	mov	eax, 7
	add	eax, 1
	mov	rbx, 0x1122334455667788
	xor	rbx, rax
	lea	rsi, [rip + table]
	mov	ecx, 10
1:	add	rax, rcx		/* RAX = 8 + 10 + 9 + ... + 1 = 63 */
	dec	ecx
	jnz	1b
	jmp	page1

	.org 0x1000
/* Page 1: checksum the 16-entry table (load, add, shift, xor). */
page1:
	xor	edx, edx
	mov	ecx, 16
2:	mov	r8, qword ptr [rsi]
	add	rdx, r8
	shl	rdx, 1
	xor	rdx, rcx
	add	rsi, 8
	dec	ecx
	jnz	2b
	call	mix
	mov	eax, edx
	out	PORT_LOG, eax
	sub	r9, 3
	cmp	r9, rdx
	jb	3f
	mov	eax, 1			/* status 1: r9 >= rdx (not expected) */
	out	PORT_DONE, eax
3:	done

	.org 0x2000
/* Page 2: a function called from page 1. */
mix:
	push	rbx
	mov	rbx, rdx
	sub	rbx, rax
	mov	r9, rbx
	pop	rbx
	ret

	.org 0x3000
/* Page 3: data. */
table:
	.quad	0x0123456789abcdef, 0xfedcba9876543210, 0x1111111111111111, 0x8000000000000000
	.quad	0x7fffffffffffffff, 0x0000000100000001, 0xdeadbeefcafebabe, 0x0f0f0f0f0f0f0f0f
	.quad	1, 2, 3, 4, 5, 6, 7, 8
