/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The lab guest's kernel: just enough CPL-0 code for the programs' hazards.
 *   - SYSCALL entry (LSTAR): RAX += RDI, RDX = calls so far, and when RSI
 *     is above 2 it becomes CR3 (the program moves to another address
 *     space); SYSRETQ straight back (FMASK cleared TF and IF on the way in).
 *     RSI 1 or 2 makes a quiet call, not counted, RDX = 0 (what two vCPUs
 *     calling at once see then does not depend on their interleaving);
 *     2 also moves to PML4_ALT_GPA.
 *     It collects the TF bit of R11 (the saved RFLAGS) in KDATA_FRAME_TF:
 *     a tracer's TF must not show there.  Then it ORs R10's TF
 *     bit into R11, so SYSRETQ returns with TF set, as a debugger resumes
 *     a thread with a single step (sysret_tf; R10 is 0 in the others).
 *   - #DB handler (IDT vector 1): counts the guest's own #DBs (TF, ICEBP)
 *     and sums their frame RIPs, so a tracer that swallows, duplicates or
 *     misplaces one changes the result the VMM prints.  Every other #DB
 *     it writes PORT_NOP: a VM exit inside the handler, where a --kernel
 *     tracer takes its TF back and follows the handler's IRETQ;
 *     the others return without a VM exit.  With KDATA_DB_QUIET set (the
 *     VMM's --quiet-db) none makes an exit: bench_tf's bare #DB.
 *   - NMI handler (IDT vector 2): counts NMIs, and collects the TF bit of
 *     the RFLAGS image in each NMI frame (hazard 2: a tracer's TF must not
 *     show there either).
 *   - #UD handler (vector 6) and INT_VECTOR handler (INT n, callable from
 *     CPL 3): both return with TF cleared in the frame they return
 *     through, as a kernel that resumes a thread from another context
 *     does (a way a tracer's TF can disappear); #UD also
 *     skips the two-byte UD2 that raised it (it dispatches the exception
 *     back to user mode at another RIP), and collects the TF bit of its
 *     frame's RFLAGS image in KDATA_FRAME_TF first (#UD is an
 *     event KVM injects, whose frame must not carry a tracer's TF).
 *   - #GP handler (vector 13): a HLT at CPL 3 raises it, a fault the CPU
 *     delivers without a VM exit unless a tracer intercepts it; it collects
 *     the TF bit of its frame in KDATA_FRAME_TF too, and returns past the
 *     one-byte HLT.
 *   - IRQ_VECTOR handler: an external interrupt the VMM injects
 *     (KVM_INTERRUPT, PORT_IRQ); counts it and collects its frame's TF.
 *   - #PF handler (vector 14): demand paging of the lazy pages (layout.h):
 *     writes the entry that maps the faulting page -- for LAZY_PML4_VA the
 *     missing PML4 entry and the tables below it first -- and returns to
 *     the faulting instruction; any other #PF is a panic.
 *   - #BP handler (vector 3, a DPL-3 gate: INT3 from CPL 3): collects the TF
 *     bit of its frame's RFLAGS image in KDATA_FRAME_TF (a tracer's TF must
 *     not show there) and returns past the INT3.
 *   - every other vector reports itself on PORT_PANIC and stops there.
 * Entry points sit at fixed addresses (layout.h) so the VMM and the model
 * need no symbol table.  It never touches the user stack.
 */
#include "layout.h"

	.intel_syntax noprefix
	.code64
	.text

	.org KERNEL_SYSCALL_ENTRY - KERNEL_GPA
syscall_entry:
	mov	rdx, r11
	and	edx, 0x100
	or	qword ptr [KDATA_FRAME_TF], rdx
	mov	rdx, r10
	and	edx, 0x100
	or	r11, rdx		/* R10's TF: SYSRETQ returns stepping */
	test	rsi, rsi
	jz	1f
	cmp	rsi, 2
	jbe	2f
	mov	cr3, rsi
1:	inc	qword ptr [KDATA_SYSCALLS]
	add	rax, rdi
	mov	rdx, qword ptr [KDATA_SYSCALLS]
	sysretq
2:	add	rax, rdi		/* quiet: not counted, RDX = 0 */
	cmp	esi, 2
	jne	3f
	mov	esi, PML4_ALT_GPA
	mov	cr3, rsi
3:	sysretq

	.org KERNEL_DB_HANDLER - KERNEL_GPA
db_handler:				/* trap frame: RIP CS RFLAGS RSP SS */
	push	rax
	inc	qword ptr [KDATA_DB_COUNT]
	mov	rax, qword ptr [rsp + 8]
	add	qword ptr [KDATA_DB_RIP_SUM], rax
	cmp	qword ptr [KDATA_DB_QUIET], 0
	jnz	1f			/* bench_tf: a bare #DB, no other exit */
	mov	rax, qword ptr [KDATA_DB_COUNT]
	and	eax, 1
	jz	1f
	out	PORT_NOP, eax		/* odd #DBs: a VM exit in the handler */
1:	pop	rax
	iretq

	.org KERNEL_NMI_HANDLER - KERNEL_GPA
nmi_handler:				/* frame: RIP CS RFLAGS RSP SS */
	push	rax
	inc	qword ptr [KDATA_NMIS]
	mov	rax, qword ptr [rsp + 24]
	and	eax, 0x100
	or	qword ptr [KDATA_NMI_FRAME_TF], rax
	pop	rax
	iretq

	.org KERNEL_EXC_STUBS - KERNEL_GPA
	.irp v, 0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,31
	.org KERNEL_EXC_STUBS - KERNEL_GPA + \v * KERNEL_EXC_STUB_SIZE
	mov	eax, \v
	out	PORT_PANIC, eax
	jmp	.
	.endr

	.org KERNEL_UD_HANDLER - KERNEL_GPA
ud_handler:				/* fault frame: RIP CS RFLAGS RSP SS */
	push	rax
	mov	rax, qword ptr [rsp + 24]
	and	eax, 0x100
	or	qword ptr [KDATA_FRAME_TF], rax
	pop	rax
	add	qword ptr [rsp], 2
	and	qword ptr [rsp + 16], ~0x100
	iretq

	.org KERNEL_INT_HANDLER - KERNEL_GPA
int_handler:				/* frame: RIP (after INT n) CS RFLAGS RSP SS */
	and	qword ptr [rsp + 16], ~0x100
	iretq

	.org KERNEL_GP_HANDLER - KERNEL_GPA
gp_handler:				/* frame: error code, RIP CS RFLAGS RSP SS */
	push	rax
	mov	rax, qword ptr [rsp + 32]
	and	eax, 0x100
	or	qword ptr [KDATA_FRAME_TF], rax
	pop	rax
	add	qword ptr [rsp + 8], 1	/* past the HLT that raised it */
	add	rsp, 8
	iretq

	.org KERNEL_IRQ_HANDLER - KERNEL_GPA
irq_handler:				/* frame: RIP CS RFLAGS RSP SS */
	push	rax
	inc	qword ptr [KDATA_IRQS]
	mov	rax, qword ptr [rsp + 24]
	and	eax, 0x100
	or	qword ptr [KDATA_FRAME_TF], rax
	pop	rax
	iretq

	.org KERNEL_PF_HANDLER - KERNEL_GPA
pf_handler:				/* frame: error code, RIP CS RFLAGS RSP SS */
	push	rax
	push	rcx
	mov	rax, cr2
	mov	rcx, rax
	shr	rcx, 39
	cmp	rcx, 1
	je	2f			/* under PML4 entry 1: LAZY_PML4_VA */
	sub	rax, LAZY_PTE_VA
	cmp	rax, LAZY_PAGES * 4096
	jae	9f
	shr	rax, 12			/* the page's entry in PT_USER */
	mov	rcx, rax
	shl	rcx, 12
	add	rcx, USER_GPA | 7
	mov	qword ptr [PT_USER_GPA + ((LAZY_PTE_VA - USER_VA) >> 12) * 8 + rax * 8], rcx
	jmp	8f
2:	shl	rax, 25			/* the offset under the PML4 entry */
	shr	rax, 25
	cmp	rax, LAZY_PAGES * 4096
	jae	9f
	mov	ecx, LAZY_PDPT_GPA | 7	/* the new PML4 entry first, then down */
	mov	qword ptr [PML4_GPA + 8], rcx
	mov	ecx, LAZY_PD_GPA | 7
	mov	qword ptr [LAZY_PDPT_GPA], rcx
	mov	ecx, LAZY_PT_GPA | 7
	mov	qword ptr [LAZY_PD_GPA], rcx
	shr	rax, 12
	mov	rcx, rax
	shl	rcx, 12
	add	rcx, USER_GPA | 7
	mov	qword ptr [LAZY_PT_GPA + rax * 8], rcx
8:	pop	rcx
	pop	rax
	add	rsp, 8			/* the error code */
	iretq				/* the faulting instruction again */
9:	mov	eax, 14
	out	PORT_PANIC, eax
	jmp	.

	.org KERNEL_BP_HANDLER - KERNEL_GPA
bp_handler:				/* trap frame: RIP (past INT3) CS RFLAGS RSP SS */
	push	rax
	mov	rax, qword ptr [rsp + 24]
	and	eax, 0x100
	or	qword ptr [KDATA_FRAME_TF], rax
	pop	rax
	iretq
