/* SPDX-License-Identifier: GPL-2.0 */
/*
 * syscost: what a capture of one process costs another one, seen from
 * inside the guest (docs/lab.md, "What a capture costs the other
 * processes").  Two vCPUs, two processes (the VMM's --alt-cr3 1):
 *   vCPU 0, the traced process (PML4_GPA): RDI rounds of a quiet SYSCALL
 *     and an INT n, each round counted in a word both address spaces map
 *     (progress); logs RAX's sum plus the TF bits it saw in R11.
 *   vCPU 1, another process (PML4_ALT_GPA from its first instruction):
 *     one quiet SYSCALL (on a gated page, below), waits until vCPU 0 has
 *     begun, then times RDI SYSCALL / SYSRETQ and
 *     RDI INT n / IRETQ round trips with RDTSC into two histograms of
 *     log2 buckets, and reports on PORT_VALUE, in this order: progress
 *     when it began and when it was done, the 64 SYSCALL buckets, the 64
 *     INT n buckets.
 * While vCPU 0's process is captured, vCPU 1's round trips must make no VM
 * exit: the exit audit counts one #UD exit on vCPU 1 (its first SYSCALL,
 * on the gate) and no IRET exit (under TCG the cycles are noise; the
 * counts decide).  vCPU 0 depends on nothing
 * vCPU 1 does, so the model replays it alone (-c 1).
 */
#include "layout.h"
#include "program.h"

	.intel_syntax noprefix
	.code64

/* One round trip of INSN timed with RDTSC, counted in HIST's log2 bucket. */
.macro timed hist:req, insn:vararg
	rdtsc
	shl	rdx, 32
	or	rax, rdx
	mov	r8, rax
	\insn
	rdtsc
	shl	rdx, 32
	or	rax, rdx
	sub	rax, r8
	or	rax, 1
	bsr	rcx, rax
	lea	rbx, [rip + \hist]
	inc	qword ptr [rbx + rcx * 8]
.endm

	.text

/* Page 0: vCPU 0, the traced process. */
cpu0:
	mov	r12, rdi
	xor	ebp, ebp
	xor	r13d, r13d
1:	mov	eax, 1000
	mov	edi, 1
	mov	esi, 1
	syscall				/* quiet: RAX += 1 */
	add	rbp, rax
	mov	rax, r11
	and	eax, 0x100
	or	r13, rax
	int	INT_VECTOR
	inc	qword ptr [rip + progress]
	dec	r12
	jnz	1b
	mov	eax, ebp
	add	eax, r13d
	log_done

	.org 0x1000
/*
 * Page 1: vCPU 1, another process.  Its entry page is a gate of the
 * capture too (one per vCPU, l1-capture.sh): each instruction it runs
 * there is stepped silently, a SYSCALL among them (one #UD exit, KVM
 * completes it), whose R11 must not get that TF (frame_tf, db_count).  The
 * rest runs off the gate.
 */
cpu1:
	mov	r12, rdi
	mov	eax, 1000
	mov	edi, 1
	mov	esi, 1
	syscall
	jmp	2f

	.org 0x2000
/* Page 2: vCPU 1's measurement. */
2:	pause
	mov	r14, qword ptr [rip + progress]
	test	r14, r14
	jz	2b			/* until vCPU 0 has begun */
	mov	r13, r12
3:	mov	edi, 1
	mov	esi, 1
	timed	hist_sys, syscall
	timed	hist_int, int INT_VECTOR
	dec	r13
	jnz	3b
	mov	r15, qword ptr [rip + progress]
	mov	eax, r14d
	out	PORT_VALUE, eax
	mov	eax, r15d
	out	PORT_VALUE, eax
	lea	rbx, [rip + hist_sys]
	mov	ecx, 128		/* hist_int follows hist_sys */
4:	mov	eax, dword ptr [rbx]
	out	PORT_VALUE, eax
	add	rbx, 8
	dec	ecx
	jnz	4b
	done

	.org 0x3000
/* Page 3: data both processes map (the same memory under either CR3). */
progress:
	.quad	0
	.org 0x3100
hist_sys:
	.fill	64, 8, 0
hist_int:
	.fill	64, 8, 0
