/* SPDX-License-Identifier: GPL-2.0 */
/*
 * dbgregs: the guest's own debug registers at CPL 0 (VMM --cpl0), used as
 * a kernel debugger uses them; a tracer must change nothing of it.
 *   1. an instruction breakpoint (DR2, execute) whose #DB handler sets RF
 *      in the frame, as every OS does: one #DB, then the instruction runs;
 *   2. DR6.BS written by software stays set across a breakpoint's #DB
 *      (DR0, execute): the handler reads BS | B0;
 *   3. with CR4.DE clear, DR4 and DR5 are DR6 and DR7;
 *   4. data watchpoints (DR1 write, DR3 read/write): a #DB right after
 *      each access, B1 / B3 in DR6; then the same accesses stepped by the
 *      guest itself (TF by POPFQ): one #DB each, BS with B1 / B3.
 * Its own #DB handler (installed in the IDT's vector 1) counts the #DBs,
 * sums their frame RIPs and DR6 values, and escapes after 32 #DBs by
 * clearing DR7 (a breakpoint that fires again and again ends there).
 *
 * QEMU 7.2 as L0 (docs/lab.md): a MOV DR7 running in L2 makes TCG insert
 * breakpoints that outlive L2 and are removed by the types of the next
 * DR7 it loads.  So every DR7 here has the same type per register, the
 * addresses watched are in the program's first page (below the L1 busybox
 * code at 0x401000), and the last MOV DR7 clears them all.  The VMM runs
 * it without --dr-intercept: only a MOV DR7 executed by L2 itself makes
 * TCG's breakpoints fire.  And TCG reports a data breakpoint's B bit again
 * with every later single-step trap until the next access to the page it
 * watches (hardware reports it with the access's #DB alone): the handler's
 * first instruction touches that page, before any trap of a --kernel
 * tracer can come.
 */
#include "layout.h"
#include "program.h"
#include "gate.h"

#define DR6_FIXED 0xffff0ff0
#define DR6_BS	  0x4000
#define DR7_FIXED 0x400
/* DR0 execute, DR1 write 8 bytes, DR2 execute, DR3 read/write 8 bytes */
#define DR7_TYPES ((1 << 20) | (2 << 22) | (3 << 28) | (2 << 30))
#define DR7_L0	  0x1
#define DR7_L1	  0x4
#define DR7_L2	  0x10
#define DR7_L3	  0x40
#define DB_ESCAPE 32
	.intel_syntax noprefix
	.code64
	.text
start:
	idt_gate 1, db_handler
	xor	ebx, ebx
	/* 1. instruction breakpoint, RF set by the handler */
	lea	rax, [rip + bp1]
	mov	dr2, rax
	mov	eax, DR7_FIXED | DR7_TYPES | DR7_L2
	mov	dr7, rax
bp1:	add	ebx, 1
	/* 2. DR6.BS written by software */
	lea	rax, [rip + bp2]
	mov	dr0, rax
	mov	eax, DR7_FIXED | DR7_TYPES | DR7_L0
	mov	dr7, rax
	mov	eax, DR6_FIXED | DR6_BS | 2
	mov	dr6, rax
bp2:	add	ebx, 2
	/* 3. DR4 = DR6, DR5 = DR7 (CR4.DE clear) */
	mov	eax, DR6_FIXED | 4
	mov	dr4, rax
	mov	r8, dr6
	mov	r9, dr5
	mov	eax, DR7_FIXED | DR7_TYPES
	mov	dr5, rax
	mov	r10, dr7
	mov	r11, dr4
	/* 4. data watchpoints, then the same stepped by the guest itself */
	lea	rax, [rip + data]
	mov	dr1, rax
	lea	rax, [rip + data + 8]
	mov	dr3, rax
	mov	eax, DR7_FIXED | DR7_TYPES | DR7_L1 | DR7_L3
	mov	dr7, rax
	xor	r15d, r15d
4:	test	r15d, r15d
	jz	5f
	tf_on				/* TF: a #DB after each instruction */
5:	mov	qword ptr [rip + data], rbx	/* B1 */
	add	ebx, 4
	mov	rcx, qword ptr [rip + data + 8]	/* B3 */
	add	ebx, 8
	mov	qword ptr [rip + data + 8], rbx	/* B3 */
	add	ebx, 16
	tf_off				/* TF off (this one still traps) */
	inc	r15d
	cmp	r15d, 2
	jb	4b
	/* done: every breakpoint off in TCG as well */
	xor	eax, eax
	mov	dr7, rax
	mov	eax, DR6_FIXED
	mov	dr6, rax
	mov	r12, qword ptr [rip + db_count]
	mov	r13, qword ptr [rip + db_rip_sum]
	mov	r14, qword ptr [rip + db_dr6_sum]
	mov	eax, r12d
	out	PORT_LOG, eax
	mov	eax, r14d
	log_done

db_handler:				/* frame: RIP CS RFLAGS RSP SS */
	inc	qword ptr [rip + db_count]	/* first: see above */
	push	rax
	mov	rax, dr6
	add	qword ptr [rip + db_dr6_sum], rax
	test	eax, 5			/* B0 or B2: an instruction breakpoint */
	jz	1f
	or	qword ptr [rsp + 24], 0x10000	/* RF: resume without a second #DB */
1:	mov	rax, qword ptr [rsp + 8]
	add	qword ptr [rip + db_rip_sum], rax
	mov	eax, DR6_FIXED
	mov	dr6, rax
	cmp	qword ptr [rip + db_count], DB_ESCAPE
	jb	2f
	xor	eax, eax		/* a #DB storm: every breakpoint off */
	mov	dr7, rax
2:	pop	rax
	iretq

	.balign 8
db_count:
	.quad	0
db_rip_sum:
	.quad	0
db_dr6_sum:
	.quad	0
data:
	.quad	0, 0
