/* SPDX-License-Identifier: GPL-2.0 */
/*
 * mmio: instructions whose memory operand is device memory (layout.h, the
 * page at MMIO_VA): KVM emulates each and hands the access to the VMM
 * (KVM_EXIT_MMIO), which completes it.  A write is the last thing such an
 * instruction does, and stock KVM takes no single-step trap after it
 * (complete_emulated_mmio() returns to the guest): a tracer must record
 * its step all the same.  MOV to and from it, MOV of an immediate, XCHG
 * and XADD (a read, then a write), and with the stack there PUSH, ENTER
 * (a push), LEAVE and POP (reads).
 */
#include "layout.h"
#include "program.h"

	.intel_syntax noprefix
	.code64
	.text
start:
	mov	ebx, 3
	mov	esi, MMIO_VA
	mov	qword ptr [rsi], rbx
	add	ebx, 1
	mov	dword ptr [rsi + 8], 0x1234
	mov	rax, qword ptr [rsi + 16]
	add	rbx, rax
	xchg	qword ptr [rsi + 24], rbx
	xadd	qword ptr [rsi + 32], rbx
	mov	rdi, rsp
	lea	rsp, [rsi + 0x100]
	push	rbx
	enter	16, 0
	leave
	pop	rcx
	mov	rsp, rdi
	add	rbx, rcx
	mov	eax, ebx
	log_done
