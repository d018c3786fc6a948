/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The Windows-layout guest's kernel: a cooperative scheduler at CPL 0.
 * The image builder (wingen.c) fills the thread slots in the data page
 * (winlayout.h); every process is a PE image whose threads run at CPL 3
 * under the process's own CR3 (its user DTB with KVA shadow), each with its
 * TEB as user GS base.
 *
 *   start     pick the first runnable slot and return into it.
 *   syscall   (ntoskrnl's KiSystemCall64[Shadow], the LSTAR, jumps here) SWAPGS
 *             to the KPCR,
 *             load the process's kernel DTB and the kernel stack, save the
 *             caller's context in its slot, count the call.  At the
 *             LINK_AT-th call the late process is linked at the tail of
 *             PsActiveProcessHead and becomes runnable, and the scheduler
 *             stops on PORT_GO so the VMM can hold it while a tracer looks
 *             for the new process.  Then the call: RAX = 1 (exit) retires
 *             the thread; 2 (NtContinue) takes the whole context from the
 *             CONTEXT record at R10 and returns into the same thread; 3
 *             (NtCreateThreadEx) makes the slot its process has ready for
 *             a new thread runnable, with start address R10 and parameter
 *             RDX, links its ETHREAD into the process's thread list and
 *             returns its thread ID; 4 (NtCreateUserProcess) links a
 *             process the builder prepared into the process list with the
 *             caller as its parent and makes its first thread runnable
 *             unless created suspended; 5 (NtWriteVirtualMemory) copies
 *             from the caller's memory into another process's; 6 and 7
 *             (NtGetContextThread, NtSetContextThread) read and write a
 *             thread's saved context; 8 (NtResumeThread) makes a
 *             suspended thread runnable; 0 (yield) and every other number
 *             go round robin to the next runnable slot.  Nothing left: PORT_DONE with the number of
 *             system calls.
 *   run       a slot: write its entry PTE if it has one pending (the page
 *             becomes resident only now, right before its first run), load
 *             its CR3.  A thread that never ran gets what Windows'
 *             PspUserThreadStartup gives it: its initial context (RIP
 *             RtlUserThreadStart, RCX the start address, RDX the
 *             parameter) goes into a CONTEXT record on its user stack, and
 *             it starts in ntdll's LdrInitializeThunk (the kernel variable
 *             the generator filled from the profile holds its address) with
 *             RCX = that CONTEXT, RDX = ntdll's base.  Its TEB goes into
 *             KERNEL_GS_BASE, SWAPGS; then SYSRETQ, or IRETQ when the whole
 *             context must come back (a first run, NtContinue), as Windows
 *             returns through IRETQ when a call changed the context.
 *   panic     stubs for vectors 1-31 report the vector on PORT_PANIC.
 * It keeps nothing on its stack between calls: the user RSP is saved and
 * restored as is.
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
	.set	D_SLOTS, start + (WIN_SCHED_DATA_VA - WIN_SCHED_CODE_VA) + WIN_D_SLOTS
	.set	D_SLOTS_END, start + (WIN_SCHED_DATA_VA - WIN_SCHED_CODE_VA) + WIN_D_SLOTS_END
	.set	D_LINK_AT, start + (WIN_SCHED_DATA_VA - WIN_SCHED_CODE_VA) + WIN_D_LINK_AT
	.set	D_LATE_LINKS, start + (WIN_SCHED_DATA_VA - WIN_SCHED_CODE_VA) + WIN_D_LATE_LINKS
	.set	D_LATE_SLOT, start + (WIN_SCHED_DATA_VA - WIN_SCHED_CODE_VA) + WIN_D_LATE_SLOT
	.set	D_LIST_HEAD, start + (WIN_SCHED_DATA_VA - WIN_SCHED_CODE_VA) + WIN_D_LIST_HEAD
	.set	D_EXITED, start + (WIN_SCHED_DATA_VA - WIN_SCHED_CODE_VA) + WIN_D_EXITED
	.set	D_LDR_INIT, start + (WIN_SCHED_DATA_VA - WIN_SCHED_CODE_VA) + WIN_D_LDR_INIT
	.set	D_NTDLL, start + (WIN_SCHED_DATA_VA - WIN_SCHED_CODE_VA) + WIN_D_NTDLL
	.set	D_CREATABLE, start + (WIN_SCHED_DATA_VA - WIN_SCHED_CODE_VA) + WIN_D_CREATABLE
	.set	D_NR_CREATABLE, start + (WIN_SCHED_DATA_VA - WIN_SCHED_CODE_VA) + WIN_D_NR_CREATABLE
	.set	MSR_KERNEL_GS_BASE, 0xc0000102

start:
	stac				/* AC: user memory is accessed (CR4.SMAP), as Windows' kernel runs */
	mov	rax, qword ptr [rip + D_CURRENT]
	jmp	pick

	.org WIN_SCHED_SYSCALL_OFF
syscall_entry:				/* RCX = user RIP, R11 = user RFLAGS */
	swapgs				/* GS: the KPCR; KERNEL_GS_BASE keeps the TEB */
	stac				/* the calls read and write user memory (CR4.SMAP) */
	mov	qword ptr [rip + D_SCRATCH], rax
	mov	rax, qword ptr [rip + D_CURRENT]
	mov	rax, qword ptr [rax + WIN_S_KCR3]
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
	movabs	rsp, WIN_KSTACK_VA + 0x1000
	mov	qword ptr [rax + WIN_S_FULL], 0
	inc	qword ptr [rip + D_SYSCALLS]
	mov	rcx, qword ptr [rip + D_SYSCALLS]
	cmp	rcx, qword ptr [rip + D_LINK_AT]
	jne	dispatch
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

dispatch:				/* RAX = the calling thread's slot */
	mov	rcx, qword ptr [rax + WIN_S_GPR + 0 * 8]
	cmp	ecx, WIN_SYS_CONTINUE
	je	sys_continue
	cmp	ecx, WIN_SYS_CREATE_THREAD
	je	sys_create_thread
	cmp	ecx, WIN_SYS_CREATE_PROCESS
	je	sys_create_process
	cmp	ecx, WIN_SYS_WRITE_VM
	je	sys_write_vm
	cmp	ecx, WIN_SYS_GET_CONTEXT
	je	sys_get_context
	cmp	ecx, WIN_SYS_SET_CONTEXT
	je	sys_set_context
	cmp	ecx, WIN_SYS_RESUME_THREAD
	je	sys_resume_thread
	cmp	ecx, WIN_SYS_EXIT
	jne	pick
	mov	qword ptr [rax + WIN_S_STATE], 2
	inc	qword ptr [rip + D_EXITED]

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

sys_continue:				/* NtContinue(R10 = CONTEXT *): the same thread goes on */
	mov	rsi, qword ptr [rax + WIN_S_GPR + 10 * 8]
	mov	rbx, rax
	call	context_to_slot
	jmp	run

sys_create_process:			/* R10 = which, RDX = flags */
	mov	rcx, qword ptr [rax + WIN_S_GPR + 10 * 8]
	mov	edx, WIN_STATUS_INVALID
	cmp	rcx, qword ptr [rip + D_NR_CREATABLE]
	jae	8f
	shl	rcx, 5				/* WIN_C_SIZE */
	add	rcx, qword ptr [rip + D_CREATABLE]
	cmp	qword ptr [rcx + WIN_C_USED], 0
	jne	8f
	mov	qword ptr [rcx + WIN_C_USED], 1
	mov	rdx, qword ptr [rcx + WIN_C_PPID]	/* the caller is its parent */
	mov	rbx, qword ptr [rax + WIN_S_PID]
	mov	qword ptr [rdx], rbx
	mov	rdx, qword ptr [rcx + WIN_C_LINKS]	/* at the process list's tail */
	mov	rbx, qword ptr [rip + D_LIST_HEAD]
	mov	rsi, qword ptr [rbx + 8]
	mov	qword ptr [rdx], rbx
	mov	qword ptr [rdx + 8], rsi
	mov	qword ptr [rsi], rdx
	mov	qword ptr [rbx + 8], rdx
	mov	rbx, qword ptr [rcx + WIN_C_SLOT]	/* its first thread, runnable unless suspended */
	mov	rdx, qword ptr [rax + WIN_S_GPR + 2 * 8]
	and	edx, WIN_CREATE_SUSPENDED
	xor	edx, WIN_CREATE_SUSPENDED
	mov	qword ptr [rbx + WIN_S_STATE], rdx
	mov	rdx, qword ptr [rbx + WIN_S_TID]
	mov	qword ptr [rax + WIN_S_GPR + 2 * 8], rdx
	mov	rdx, qword ptr [rbx + WIN_S_PID]
	jmp	8f

sys_write_vm:				/* R10 = PID, RDX = its VA, R8 = our VA, R9 = bytes */
	mov	rcx, qword ptr [rax + WIN_S_GPR + 10 * 8]
	mov	edx, WIN_S_PID
	call	find_slot
	mov	edx, WIN_STATUS_INVALID
	test	rbx, rbx
	jz	8f
	mov	rcx, qword ptr [rax + WIN_S_GPR + 9 * 8]
	mov	esi, ecx
	and	esi, 7
	jnz	8f
	cmp	rcx, 0x1000
	ja	8f
	shr	rcx, 3
	test	rcx, rcx
	jz	10f
	mov	rdi, qword ptr [rax + WIN_S_GPR + 2 * 8]
	mov	rsi, qword ptr [rax + WIN_S_GPR + 8 * 8]
	mov	r8, qword ptr [rax + WIN_S_KCR3]
	mov	r9, qword ptr [rbx + WIN_S_KCR3]
9:	mov	cr3, r8				/* a quadword from here ... */
	mov	rdx, qword ptr [rsi]
	mov	cr3, r9				/* ... to there */
	mov	qword ptr [rdi], rdx
	add	rsi, 8
	add	rdi, 8
	loop	9b
	mov	cr3, r8
10:	xor	edx, edx
	jmp	8f

sys_get_context:			/* R10 = thread ID, RDX = CONTEXT * */
	call	context_thread
	jz	8f
	call	slot_to_context
	xor	edx, edx
	jmp	8f

sys_set_context:			/* R10 = thread ID, RDX = CONTEXT * */
	call	context_thread
	jz	8f
	mov	rsi, rdi
	call	context_to_slot
	xor	edx, edx
	jmp	8f

sys_resume_thread:			/* R10 = thread ID */
	mov	rcx, qword ptr [rax + WIN_S_GPR + 10 * 8]
	mov	edx, WIN_S_TID
	call	find_slot
	mov	edx, WIN_STATUS_INVALID
	test	rbx, rbx
	jz	8f
	cmp	qword ptr [rbx + WIN_S_STATE], 0
	jne	13f
	mov	qword ptr [rbx + WIN_S_STATE], 1
13:	xor	edx, edx
	jmp	8f

sys_create_thread:			/* R10 = start address, RDX = parameter */
	mov	rcx, qword ptr [rax + WIN_S_SPARE]
	mov	edx, WIN_STATUS_NO_MEMORY
	test	rcx, rcx
	jz	8f
	mov	qword ptr [rax + WIN_S_SPARE], 0
	mov	rdx, qword ptr [rax + WIN_S_GPR + 10 * 8]
	mov	qword ptr [rcx + WIN_S_GPR + 1 * 8], rdx	/* its RtlUserThreadStart(start, */
	mov	rbx, qword ptr [rcx + WIN_S_W32START]
	mov	qword ptr [rbx], rdx		/* ETHREAD.Win32StartAddress */
	mov	rdx, qword ptr [rax + WIN_S_GPR + 2 * 8]
	mov	qword ptr [rcx + WIN_S_GPR + 2 * 8], rdx	/* parameter) */
	mov	qword ptr [rcx + WIN_S_STATE], 1
	mov	rdx, qword ptr [rcx + WIN_S_ETHREAD_LINKS]	/* at the thread list's tail */
	mov	rbx, qword ptr [rcx + WIN_S_THREAD_HEAD]
	mov	rsi, qword ptr [rbx + 8]
	mov	qword ptr [rdx], rbx
	mov	qword ptr [rdx + 8], rsi
	mov	qword ptr [rsi], rdx
	mov	qword ptr [rbx + 8], rdx
	mov	rdx, qword ptr [rcx + WIN_S_TID]
8:	mov	qword ptr [rax + WIN_S_GPR + 0 * 8], rdx	/* the caller's RAX */

run:					/* RAX = the slot to run */
	mov	qword ptr [rip + D_CURRENT], rax
	mov	rcx, qword ptr [rax + WIN_S_PTE_VA]
	test	rcx, rcx
	jz	5f
	mov	rdx, qword ptr [rax + WIN_S_PTE]
	mov	qword ptr [rcx], rdx		/* the entry page becomes resident */
	mov	qword ptr [rax + WIN_S_PTE_VA], 0
5:	cmp	qword ptr [rax + WIN_S_FRESH], 0
	je	6f
	mov	rdx, qword ptr [rax + WIN_S_KCR3]
	mov	cr3, rdx
	call	thread_startup
6:	mov	rdx, qword ptr [rax + WIN_S_CR3]
	mov	cr3, rdx
	mov	rbx, rax			/* its TEB becomes the user GS base */
	mov	rax, qword ptr [rbx + WIN_S_TEB]
	mov	rdx, rax
	shr	rdx, 32
	mov	ecx, MSR_KERNEL_GS_BASE
	wrmsr
	mov	rax, rbx
	cmp	qword ptr [rax + WIN_S_FULL], 0
	jne	full_return
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

full_return:				/* an IRETQ frame on the kernel stack, every GPR back */
	mov	edx, WIN_SEL_USER_SS
	push	rdx
	mov	rdx, qword ptr [rax + WIN_S_GPR + 4 * 8]
	push	rdx
	mov	rdx, qword ptr [rax + WIN_S_RFLAGS]
	push	rdx
	mov	edx, WIN_SEL_USER_CS
	push	rdx
	mov	rdx, qword ptr [rax + WIN_S_RIP]
	push	rdx
	mov	rcx, qword ptr [rax + WIN_S_GPR + 1 * 8]
	mov	rdx, qword ptr [rax + WIN_S_GPR + 2 * 8]
	mov	rbx, qword ptr [rax + WIN_S_GPR + 3 * 8]
	mov	rbp, qword ptr [rax + WIN_S_GPR + 5 * 8]
	mov	rsi, qword ptr [rax + WIN_S_GPR + 6 * 8]
	mov	rdi, qword ptr [rax + WIN_S_GPR + 7 * 8]
	mov	r8, qword ptr [rax + WIN_S_GPR + 8 * 8]
	mov	r9, qword ptr [rax + WIN_S_GPR + 9 * 8]
	mov	r10, qword ptr [rax + WIN_S_GPR + 10 * 8]
	mov	r11, qword ptr [rax + WIN_S_GPR + 11 * 8]
	mov	r12, qword ptr [rax + WIN_S_GPR + 12 * 8]
	mov	r13, qword ptr [rax + WIN_S_GPR + 13 * 8]
	mov	r14, qword ptr [rax + WIN_S_GPR + 14 * 8]
	mov	r15, qword ptr [rax + WIN_S_GPR + 15 * 8]
	mov	rax, qword ptr [rax + WIN_S_GPR + 0 * 8]
	swapgs
	iretq

/*
 * The slot whose quadword at offset RDX is RCX (a PID or a thread ID) in
 * RBX, else 0.  RAX stays.
 */
find_slot:
	mov	rbx, qword ptr [rip + D_SLOTS]
14:	cmp	qword ptr [rbx + rdx], rcx
	je	15f
	add	rbx, WIN_SLOT_SIZE
	cmp	rbx, qword ptr [rip + D_SLOTS_END]
	jb	14b
	xor	ebx, ebx
15:	ret

/*
 * NtGet/SetContextThread's arguments (RAX = the caller's slot): RBX = the
 * thread's slot, RDI = the CONTEXT (in the caller's memory, on its kernel
 * DTB); ZF set, with EDX = the status to return, when there is no such
 * thread.
 */
context_thread:
	mov	rcx, qword ptr [rax + WIN_S_GPR + 10 * 8]
	mov	edx, WIN_S_TID
	call	find_slot
	mov	edx, WIN_STATUS_INVALID
	mov	rdi, qword ptr [rax + WIN_S_GPR + 2 * 8]
	test	rbx, rbx
	ret

/*
 * The integer part of a thread's context (GPRs, RIP, EFLAGS) between its
 * slot (RBX) and a CONTEXT record: slot_to_context writes the record at RDI,
 * context_to_slot reads the record at RSI, and the thread then returns with
 * its whole context (IRETQ).  RCX and RDX change.
 */
slot_to_context:
	xor	ecx, ecx
16:	mov	rdx, qword ptr [rbx + rcx * 8 + WIN_S_GPR]
	mov	qword ptr [rdi + rcx * 8 + WIN_CTX_GPR], rdx
	inc	ecx
	cmp	ecx, 16
	jb	16b
	mov	rdx, qword ptr [rbx + WIN_S_RIP]
	mov	qword ptr [rdi + WIN_CTX_RIP], rdx
	mov	rdx, qword ptr [rbx + WIN_S_RFLAGS]
	mov	dword ptr [rdi + WIN_CTX_EFLAGS], edx
	ret

context_to_slot:
	xor	ecx, ecx
17:	mov	rdx, qword ptr [rsi + rcx * 8 + WIN_CTX_GPR]
	mov	qword ptr [rbx + rcx * 8 + WIN_S_GPR], rdx
	inc	ecx
	cmp	ecx, 16
	jb	17b
	mov	rdx, qword ptr [rsi + WIN_CTX_RIP]
	mov	qword ptr [rbx + WIN_S_RIP], rdx
	mov	edx, dword ptr [rsi + WIN_CTX_EFLAGS]
	mov	qword ptr [rbx + WIN_S_RFLAGS], rdx
	mov	qword ptr [rbx + WIN_S_FULL], 1
	ret

/*
 * PspUserThreadStartup's part (RAX = a slot that never ran, its process's
 * kernel DTB loaded):
 * its initial context goes into a CONTEXT record below its stack, and it
 * starts in LdrInitializeThunk(CONTEXT, ntdll base) on that record.
 */
thread_startup:
	mov	qword ptr [rax + WIN_S_FRESH], 0
	mov	rdi, qword ptr [rax + WIN_S_GPR + 4 * 8]
	sub	rdi, WIN_CTX_SIZE
	and	rdi, -16
	mov	rbx, rax
	call	slot_to_context
	mov	dword ptr [rdi + WIN_CTX_FLAGS], WIN_CTX_FULL
	mov	rdx, qword ptr [rip + D_LDR_INIT]
	mov	rdx, qword ptr [rdx]
	mov	qword ptr [rax + WIN_S_RIP], rdx
	mov	qword ptr [rax + WIN_S_GPR + 1 * 8], rdi
	mov	rdx, qword ptr [rip + D_NTDLL]
	mov	qword ptr [rax + WIN_S_GPR + 2 * 8], rdx
	mov	qword ptr [rax + WIN_S_GPR + 4 * 8], rdi
	mov	qword ptr [rax + WIN_S_FULL], 1
	ret

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
