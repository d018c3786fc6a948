/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The Windows-layout guest's kernel: a cooperative scheduler at CPL 0.
 * The image builder (wingen.c) fills the process slots in the data page
 * (winlayout.h); every process is a PE image whose entry point runs at
 * CPL 3 under the process's own CR3 (its user DTB with KVA shadow).
 *
 *   start     pick the first runnable slot and SYSRETQ into it.
 *   syscall   (ntoskrnl's KiSystemCall64[Shadow], the LSTAR, jumps here)
 *             SWAPGS, load the kernel DTB,
 *             save the caller's context in its slot, count the call;
 *             RAX = 1 (exit) retires the process.  At the LINK_AT-th call
 *             the late process is linked at the tail of PsActiveProcessHead
 *             and becomes runnable, and the scheduler stops on PORT_GO so
 *             the VMM can hold it while a tracer looks for the new process.
 *             Then round robin to the next runnable slot: write its entry
 *             PTE if it has one pending (the page becomes resident only
 *             now, right before its first instruction), load its CR3 and
 *             context, SWAPGS, SYSRETQ.  Nothing left: PORT_DONE with the number of
 *             system calls.
 *   panic     stubs for vectors 1-31 report the vector on PORT_PANIC.
 * It never touches a stack: the user RSP is saved and restored as is.
 *
 * Under QEMU (vm-configs/lab-win.xml, booted by pvhboot.S) nobody answers
 * the lab's ports: PORT_GO reads all ones, and PORT_DONE does not stop the
 * vCPU.  COM1 takes their place there: at PORT_GO the scheduler prints "go"
 * and waits for "l" (launch the late process) or "p" (power off through
 * ACPI, as a guest shutting down does), and after PORT_DONE it prints
 * "done" and halts.  The lab's VMM and the reference model never
 * run those paths (PORT_GO answers GO_VALUE, PORT_DONE ends the run), and
 * no user-mode register depends on them.
 */
#include "../guest/layout.h"
#include "winlayout.h"
#include "com1.h"

	.intel_syntax noprefix
	.code64
	.text

	.set	D_SYSCALLS, start + (WIN_SCHED_DATA_VA - WIN_SCHED_CODE_VA) + (KDATA_SYSCALLS - KDATA_GPA)
	.set	D_CURRENT, start + (WIN_SCHED_DATA_VA - WIN_SCHED_CODE_VA) + WIN_D_CURRENT
	.set	D_SCRATCH, start + (WIN_SCHED_DATA_VA - WIN_SCHED_CODE_VA) + WIN_D_SCRATCH
	.set	D_KCR3, start + (WIN_SCHED_DATA_VA - WIN_SCHED_CODE_VA) + WIN_D_KCR3
	.set	D_SLOTS, start + (WIN_SCHED_DATA_VA - WIN_SCHED_CODE_VA) + WIN_D_SLOTS
	.set	D_SLOTS_END, start + (WIN_SCHED_DATA_VA - WIN_SCHED_CODE_VA) + WIN_D_SLOTS_END
	.set	D_LINK_AT, start + (WIN_SCHED_DATA_VA - WIN_SCHED_CODE_VA) + WIN_D_LINK_AT
	.set	D_LATE_LINKS, start + (WIN_SCHED_DATA_VA - WIN_SCHED_CODE_VA) + WIN_D_LATE_LINKS
	.set	D_LATE_SLOT, start + (WIN_SCHED_DATA_VA - WIN_SCHED_CODE_VA) + WIN_D_LATE_SLOT
	.set	D_LIST_HEAD, start + (WIN_SCHED_DATA_VA - WIN_SCHED_CODE_VA) + WIN_D_LIST_HEAD
	.set	D_EXITED, start + (WIN_SCHED_DATA_VA - WIN_SCHED_CODE_VA) + WIN_D_EXITED

start:
	mov	rax, qword ptr [rip + D_CURRENT]
	jmp	pick

	.org WIN_SCHED_SYSCALL_OFF
syscall_entry:				/* RCX = user RIP, R11 = user RFLAGS */
	swapgs				/* GS base: the KPCR, as Windows' entry has it */
	mov	qword ptr [rip + D_SCRATCH], rax
	mov	rax, qword ptr [rip + D_KCR3]
	mov	cr3, rax
	mov	rax, qword ptr [rip + D_CURRENT]
	mov	qword ptr [rax + WIN_S_RIP], rcx
	mov	qword ptr [rax + WIN_S_RFLAGS], r11
	mov	rcx, qword ptr [rip + D_SCRATCH]
	mov	qword ptr [rax + WIN_S_GPR + 0 * 8], rcx
	mov	qword ptr [rax + WIN_S_GPR + 2 * 8], rdx
	mov	qword ptr [rax + WIN_S_GPR + 3 * 8], rbx
	mov	qword ptr [rax + WIN_S_GPR + 4 * 8], rsp
	mov	qword ptr [rax + WIN_S_GPR + 5 * 8], rbp
	mov	qword ptr [rax + WIN_S_GPR + 6 * 8], rsi
	mov	qword ptr [rax + WIN_S_GPR + 7 * 8], rdi
	mov	qword ptr [rax + WIN_S_GPR + 8 * 8], r8
	mov	qword ptr [rax + WIN_S_GPR + 9 * 8], r9
	mov	qword ptr [rax + WIN_S_GPR + 10 * 8], r10
	mov	qword ptr [rax + WIN_S_GPR + 12 * 8], r12
	mov	qword ptr [rax + WIN_S_GPR + 13 * 8], r13
	mov	qword ptr [rax + WIN_S_GPR + 14 * 8], r14
	mov	qword ptr [rax + WIN_S_GPR + 15 * 8], r15
	inc	qword ptr [rip + D_SYSCALLS]
	cmp	ecx, WIN_SYS_EXIT
	jne	1f
	mov	qword ptr [rax + WIN_S_STATE], 2
	inc	qword ptr [rip + D_EXITED]
1:	mov	rcx, qword ptr [rip + D_SYSCALLS]
	cmp	rcx, qword ptr [rip + D_LINK_AT]
	jne	pick
	/* The late process appears: link it at the tail of the process list. */
	mov	rcx, qword ptr [rip + D_LATE_LINKS]
	mov	rdx, qword ptr [rip + D_LIST_HEAD]
	mov	rbx, qword ptr [rdx + 8]
	mov	qword ptr [rcx], rdx
	mov	qword ptr [rcx + 8], rbx
	mov	qword ptr [rbx], rcx
	mov	qword ptr [rdx + 8], rcx
	mov	rcx, qword ptr [rip + D_LATE_SLOT]
	mov	qword ptr [rcx + WIN_S_STATE], 1
	mov	rdx, rax
	in	eax, PORT_GO
	cmp	eax, GO_VALUE
	jne	go_com1
go_resume:
	mov	rax, rdx

pick:					/* RAX = the slot that ran last */
	mov	edx, WIN_MAX_SLOTS
2:	add	rax, WIN_SLOT_SIZE
	cmp	rax, qword ptr [rip + D_SLOTS_END]
	jb	3f
	mov	rax, qword ptr [rip + D_SLOTS]
3:	cmp	qword ptr [rax + WIN_S_STATE], 1
	je	run
	dec	edx
	jnz	2b
	mov	eax, dword ptr [rip + D_SYSCALLS]
	out	PORT_DONE, eax
	jmp	done_com1

run:
	mov	qword ptr [rip + D_CURRENT], rax
	mov	rcx, qword ptr [rax + WIN_S_PTE_VA]
	test	rcx, rcx
	jz	4f
	mov	rdx, qword ptr [rax + WIN_S_PTE]
	mov	qword ptr [rcx], rdx		/* the entry page becomes resident */
	mov	qword ptr [rax + WIN_S_PTE_VA], 0
4:	mov	rdx, qword ptr [rax + WIN_S_CR3]
	mov	cr3, rdx
	mov	rcx, qword ptr [rax + WIN_S_RIP]
	mov	r11, qword ptr [rax + WIN_S_RFLAGS]
	mov	rdx, qword ptr [rax + WIN_S_GPR + 2 * 8]
	mov	rbx, qword ptr [rax + WIN_S_GPR + 3 * 8]
	mov	rsp, qword ptr [rax + WIN_S_GPR + 4 * 8]
	mov	rbp, qword ptr [rax + WIN_S_GPR + 5 * 8]
	mov	rsi, qword ptr [rax + WIN_S_GPR + 6 * 8]
	mov	rdi, qword ptr [rax + WIN_S_GPR + 7 * 8]
	mov	r8, qword ptr [rax + WIN_S_GPR + 8 * 8]
	mov	r9, qword ptr [rax + WIN_S_GPR + 9 * 8]
	mov	r10, qword ptr [rax + WIN_S_GPR + 10 * 8]
	mov	r12, qword ptr [rax + WIN_S_GPR + 12 * 8]
	mov	r13, qword ptr [rax + WIN_S_GPR + 13 * 8]
	mov	r14, qword ptr [rax + WIN_S_GPR + 14 * 8]
	mov	r15, qword ptr [rax + WIN_S_GPR + 15 * 8]
	mov	rax, qword ptr [rax + WIN_S_GPR + 0 * 8]
	swapgs				/* GS base: the TEB in user mode, the KPCR in KERNEL_GS_BASE */
	sysretq

go_com1:				/* RDX = the slot that ran last */
	mov	rbx, rdx
	com1_puts msg_go
2:	com1_getc
	cmp	al, 'p'
	je	poweroff
	cmp	al, 'l'
	jne	2b
	mov	rdx, rbx
	jmp	go_resume

poweroff:				/* PIIX4 PM1a_CNT (SeaBIOS puts the PM base at 0x600): SLP_EN, S5 */
	mov	edx, 0x604
	mov	eax, 0x2000
	out	dx, ax
	jmp	done_com1

done_com1:
	com1_puts msg_done
1:	cli
	hlt
	jmp	1b

msg_go:	.asciz	"svmtrace-lab: go\n"
msg_done: .asciz "svmtrace-lab: done\n"

	.org WIN_SCHED_PANIC_OFF
	.irp v, 0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,31
	.org WIN_SCHED_PANIC_OFF + \v * 16
	mov	eax, \v
	out	PORT_PANIC, eax
	jmp	.
	.endr
