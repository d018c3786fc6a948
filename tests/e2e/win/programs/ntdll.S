/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ntdll.dll of the Windows-layout guest: the DLL every process has in its
 * loader list (second entry, after its own image), and where every thread
 * begins.  Its export table is what the lab's traces are symbolized with
 * (ntdll.dll!NtTestAlert), and what the programs' imports are bound to.
 *
 * LdrInitializeThunk is where the scheduler's PspUserThreadStartup starts
 * every new thread, as Windows x64 does: with the CONTEXT its creator gave
 * it (RtlUserThreadStart, the start address, the parameter) in RCX and
 * ntdll's base in RDX.  The process's first thread initializes the process
 * (LdrpInitializeProcess: PEB.Ldr is not Initialized yet), later threads
 * attach (LdrpInitializeThread): the DllMain of every DLL in the loader
 * list but ntdll, in load order, then the image's TLS callbacks, with
 * DLL_PROCESS_ATTACH or DLL_THREAD_ATTACH.  Then NtContinue resumes the
 * CONTEXT.  RtlUserThreadStart calls the start address and ends the thread
 * with its result, as ntdll's does when no kernel32 thread thunk is
 * registered (a native process).
 */
#include "../winlayout.h"

	.intel_syntax noprefix
	.text
	.globl	NtTestAlert
NtTestAlert:
	xor	eax, eax
	ret

	.globl	LdrInitializeThunk
LdrInitializeThunk:			/* RCX = CONTEXT *, RDX = ntdll's base */
	mov	r12, rcx
	mov	r13, rdx
	mov	rax, qword ptr gs:[WIN_TEB_SELF]
	mov	r14, qword ptr [rax + WIN_TEB_PEB]
	mov	rbx, qword ptr [r14 + WIN_PEB_LDR]
	mov	esi, WIN_DLL_THREAD_ATTACH
	mov	eax, dword ptr [rbx + WIN_LDR_INITIALIZED]
	test	eax, eax
	jnz	1f
	mov	esi, WIN_DLL_PROCESS_ATTACH
1:	lea	rdi, [rbx + WIN_LDR_LOAD_ORDER]		/* the list head */
	mov	r15, qword ptr [rdi]			/* the image's own entry */
2:	mov	r15, qword ptr [r15]
	cmp	r15, rdi
	je	3f
	mov	rcx, qword ptr [r15 + WIN_LDRE_DLL_BASE]
	mov	rax, qword ptr [r15 + WIN_LDRE_ENTRY_POINT]
	cmp	rcx, r13
	je	2b
	test	rax, rax
	jz	2b
	mov	edx, esi				/* DllMain(base, reason, 0) */
	xor	r8d, r8d
	call	rax
	jmp	2b
3:	mov	rcx, qword ptr [r14 + WIN_PEB_IMAGE_BASE]
	mov	edx, esi
	call	tls_callbacks
	cmp	esi, WIN_DLL_PROCESS_ATTACH
	jne	4f
	mov	dword ptr [rbx + WIN_LDR_INITIALIZED], 1
4:	mov	r10, r12				/* NtContinue(CONTEXT, TRUE) */
	mov	edx, 1
	mov	eax, WIN_SYS_CONTINUE
	syscall

/* Each callback of the image at RCX (IMAGE_TLS_DIRECTORY64.AddressOfCallBacks), reason EDX. */
tls_callbacks:
	push	rbx
	push	rbp
	push	rdi
	mov	rbx, rcx
	mov	ebp, edx
	mov	eax, dword ptr [rbx + 0x3c]		/* e_lfanew */
	add	rax, rbx
	mov	eax, dword ptr [rax + 0xd0]		/* DataDirectory[IMAGE_DIRECTORY_ENTRY_TLS] */
	test	eax, eax
	jz	6f
	add	rax, rbx
	mov	rdi, qword ptr [rax + 0x18]		/* AddressOfCallBacks */
	test	rdi, rdi
	jz	6f
5:	mov	rax, qword ptr [rdi]
	test	rax, rax
	jz	6f
	mov	rcx, rbx
	mov	edx, ebp
	xor	r8d, r8d
	call	rax
	add	rdi, 8
	jmp	5b
6:	pop	rdi
	pop	rbp
	pop	rbx
	ret

	.globl	RtlUserThreadStart
RtlUserThreadStart:			/* RCX = start address, RDX = its parameter */
	mov	rax, rcx
	mov	rcx, rdx
	call	rax
	mov	ecx, eax
	mov	eax, WIN_SYS_EXIT
	syscall

	.globl	DllMain
DllMain:
	mov	eax, 1
	ret
