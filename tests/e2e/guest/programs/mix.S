/* SPDX-License-Identifier: GPL-2.0 */
/*
 * mix: user-mode instructions the reference model does not replay -- REP
 * string instructions (each iteration is its own single-step trap), DIV and
 * IDIV, MUL, LOCK-prefixed read-modify-writes, XCHG with memory, CMPXCHG16B,
 * indirect CALL and JMP through registers, memory and a jump table,
 * ENTER/LEAVE, RET imm16, LOOP, JRCXZ, XLAT, BSWAP, BT*, SHLD/SHRD, rotates
 * through carry, CMOVcc, SETcc, ADC/SBB, sign extensions.  Its oracle is
 * stock KVM single-stepping on the packaged modules (programs.list: STEPLOG
 * only): the capture must equal that log row by row.  Logs a checksum of
 * every result on PORT_LOG.
 */
#include "layout.h"
#include "program.h"

	.intel_syntax noprefix
	.code64
	.text

/* Page 0, the gate. */
start:
	lea	rbp, [rip + data]
	xor	r15, r15			/* the checksum */

	/* String instructions, forward and backward, with and without REP. */
	lea	rsi, [rbp + src - data]
	lea	rdi, [rbp + dst - data]
	mov	ecx, 5
	cld
	rep movsb
	mov	ecx, 3
	mov	rax, 0x0102030405060708
	rep stosq
	lea	rsi, [rbp + src - data]
	lea	rdi, [rbp + dst - data]
	mov	ecx, 8
	repe cmpsb				/* stops at the first difference */
	add	r15, rcx
	lea	rsi, [rbp + src - data + 7]
	std
	lodsb
	lodsb
	cld
	add	r15, rax
	lea	rdi, [rbp + src - data]
	mov	al, 0x33
	mov	ecx, 16
	repne scasb
	add	r15, rcx

	/* Division and multiplication. */
	mov	rax, 1000003
	xor	edx, edx
	mov	rbx, 97
	div	rbx
	add	r15, rdx
	mov	rax, -77777
	cqo
	mov	rcx, 13
	idiv	rcx
	add	r15, rax
	mov	rax, 0x123456789
	mul	rax
	add	r15, rdx
	imul	r8, rax, -7
	add	r15, r8
	jmp	page1

	.org 0x1000
/* Page 1: atomics, exchanges and indirect control flow. */
page1:
	mov	eax, 5
	lock xadd qword ptr [rbp + counter - data], rax
	add	r15, rax
	mov	rax, [rbp + counter - data]
	mov	rbx, 99
	lock cmpxchg qword ptr [rbp + counter - data], rbx
	add	r15, [rbp + counter - data]
	mov	rcx, 7
	xchg	rcx, [rbp + counter - data]
	add	r15, rcx
	lock inc qword ptr [rbp + counter - data]
	lock bts qword ptr [rbp + counter - data], 12
	add	r15, [rbp + counter - data]
	lea	rsi, [rbp + pair - data]
	mov	rax, [rsi]
	mov	rdx, [rsi + 8]
	mov	rbx, 0x1111
	mov	rcx, 0x2222
	lock cmpxchg16b xmmword ptr [rsi]
	add	r15, [rsi + 8]

	lea	rax, [rip + leaf]
	call	rax				/* through a register */
	call	qword ptr [rbp + fnptr - data]	/* through memory */
	mov	ecx, 2
	lea	rdx, [rip + table]
	jmp	qword ptr [rdx + rcx * 8 - 16]	/* through a jump table: case0 */
case1:
	add	r15, 11
	jmp	page2
case0:
	add	r15, 22
	mov	ecx, 3
	jmp	qword ptr [rdx + rcx * 8 - 16]	/* case1 */

leaf:
	add	r15, 1
	ret

	.org 0x2000
/* Page 2: frames, loops and bit operations. */
page2:
	push	0x55
	call	framed
	add	r15, rax
	mov	ecx, 4
1:	add	r15, rcx
	loop	1b
	xor	ecx, ecx
	jrcxz	2f
	add	r15, 1000			/* not taken */
2:	lea	rbx, [rbp + src - data]
	mov	al, 3
	xlatb
	add	r15, rax
	mov	rax, 0x1122334455667788
	bswap	rax
	add	r15, rax
	bt	rax, 3
	setc	cl
	add	r15, rcx
	btc	rax, 63
	btr	rax, 0
	shld	rax, r15, 7
	shrd	rax, r15, 3
	add	r15, rax
	stc
	rcl	rax, 5
	rcr	rax, 9
	add	r15, rax
	cmp	rax, r15
	cmovb	rax, r15
	cmova	rdx, r15
	setg	bl
	add	r15, rbx
	stc
	adc	r15, 3
	sbb	r15, rax
	movsx	rax, byte ptr [rbp + src - data + 6]
	movzx	edx, word ptr [rbp + src - data + 2]
	cdqe
	add	r15, rax
	add	r15, rdx
	neg	r15
	not	r15
	mov	eax, r15d
	xor	eax, dword ptr [rbp + counter - data]
	out	PORT_LOG, eax
	shr	r15, 32
	mov	eax, r15d
	log_done

/* ENTER/LEAVE and RET imm16: pops its one stack argument. */
framed:
	enter	32, 0
	mov	rax, [rbp + 16]
	mov	qword ptr [rbp - 8], rax
	add	rax, [rbp - 8]
	leave
	ret	8

	.org 0x3000
/* Page 3: data. */
data:
src:
	.byte	0x31, 0x32, 0x33, 0x34, 0x35, 0x36, 0x87, 0x38
	.byte	0x39, 0x3a, 0x3b, 0x3c, 0x3d, 0x3e, 0x3f, 0x40
dst:
	.byte	0x31, 0x32, 0x33, 0x34, 0x35, 0x00, 0x00, 0x00
	.quad	0, 0, 0
counter:
	.quad	40
	.balign	16
pair:
	.quad	0, 0
fnptr:
	.quad	leaf
table:
	.quad	case0, case1
