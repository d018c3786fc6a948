/* SPDX-License-Identifier: GPL-2.0 */
/*
 * int3k: INT3 and INT n at CPL 0 (VMM --cpl0), whose handlers make no VM
 * exit before their IRETQ, as a kernel's breakpoint handler may.  Their
 * delivery takes a tracer's TF with it (and with it the single-step trap
 * that would say where the handler is): under --kernel the handler up to
 * its IRETQ is a hole, and the trace must mark it -- a session end 'int'
 * after the INT3 or INT n, a new session from the step of the IRETQ (which
 * a capture intercepts) on.  Its own #BP handler (the IDT's vector 3)
 * counts the breakpoints and sums their frame RIPs; INT_VECTOR goes to the
 * lab kernel's handler, which drops TF from its frame as well.
 */
#include "layout.h"
#include "program.h"
#include "gate.h"

	.intel_syntax noprefix
	.code64
	.text
start:
	idt_gate 3, bp_handler
	mov	ebx, 5
	int3
	add	ebx, 1
	int3
	add	ebx, ebx
	int	INT_VECTOR
	add	ebx, 3
	mov	r12, qword ptr [rip + bp_count]
	mov	r13, qword ptr [rip + bp_rip_sum]
	mov	eax, ebx
	log_done

bp_handler:				/* frame: RIP (after the INT3) CS RFLAGS RSP SS */
	inc	qword ptr [rip + bp_count]
	push	rax
	mov	rax, qword ptr [rsp + 8]
	add	qword ptr [rip + bp_rip_sum], rax
	pop	rax
	iretq

	.balign 8
bp_count:
	.quad	0
bp_rip_sum:
	.quad	0
