/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The user code of the Windows-layout guest's processes, linked by the
 * mingw-w64 binutils into real PE32+ images (one per process, differing in
 * SEED and ROUNDS).  Position independent: the image builder maps each
 * image at the generator's image base, not at ImageBase.
 *
 * ROUNDS times: compute on the entry page and on the next page (a call
 * across pages, a RIP-relative table in .data, a loop), call ntdll.dll's
 * NtTestAlert through the import address table (the image imports it; the
 * image builder binds it to wherever it put ntdll, as Windows' loader
 * does), log the result on PORT_LOG, yield (system call 0).  Then exit
 * (system call 1).  Every
 * yield switches to another process's CR3, so a tracer's session ends
 * there, and each resumption re-enters the entry page (the gate).
 *
 * A TLS callback (the PE's TLS directory, _tls_used) runs in the loader
 * before the entry point, as in malware that acts before a debugger's entry
 * breakpoint: it logs SEED + its reason.  It is on the second code page,
 * not on the entry page.
 *
 * With THREADS, the process first creates a thread (NtCreateThreadEx) that
 * starts at worker, on the second page: in a stack frame holding the key,
 * it decrypts cipher into plain (a dword at a time: load, XOR with the key
 * on the frame, store) and compares plain with the plaintext it expects,
 * dword by dword as a memcmp does (a mismatch changes what it logs); then
 * two rounds of its own, and it returns (RtlUserThreadStart ends it).  Its
 * memory traffic is what the lab's --mem captures of a Windows-layout
 * guest are judged on (the model replays these forms; no string
 * instructions, which it does not).
 *
 * With DROPPER, it first creates two processes, as droppers do: the first
 * plainly (NtCreateUserProcess); the second suspended, then hollows it
 * before it ever runs -- its thread's context (NtGetContextThread) gives
 * its start address, the image's entry point; the payload is written
 * 0x800 bytes further, on the entry page (NtWriteVirtualMemory), the
 * context's RCX moved there (NtSetContextThread), and the thread resumed
 * (NtResumeThread).  The child's loader then runs as always, and
 * RtlUserThreadStart starts the payload, not the image's code.
 */
#include "../../guest/layout.h"
#include "../winlayout.h"
#include "tls.h"

	.intel_syntax noprefix
	.text
	.globl	start
start:
	mov	ebx, SEED
	xor	r12d, r12d
	lea	r13, [rip + table]
#if THREADS
	lea	r10, [rip + worker]
	mov	edx, SEED
	mov	eax, WIN_SYS_CREATE_THREAD
	syscall
#endif
#if DROPPER
	xor	r10d, r10d			/* a child, as CreateProcess makes one */
	xor	edx, edx
	mov	eax, WIN_SYS_CREATE_PROCESS
	syscall
	mov	r10d, 1				/* a second one, suspended: hollowed */
	mov	edx, WIN_CREATE_SUSPENDED
	mov	eax, WIN_SYS_CREATE_PROCESS
	syscall
	mov	r14, rax			/* its PID */
	mov	r15, rdx			/* its thread's ID */
	sub	rsp, WIN_CTX_SIZE + 0x30
	mov	r10, r15
	mov	rdx, rsp
	mov	eax, WIN_SYS_GET_CONTEXT
	syscall
	mov	rbx, qword ptr [rsp + WIN_CTX_GPR + 1 * 8]	/* RCX: where it would start */
	add	rbx, 0x800
	mov	r10, r14
	mov	rdx, rbx
	lea	r8, [rip + payload]
	mov	r9d, payload_end - payload
	mov	eax, WIN_SYS_WRITE_VM
	syscall
	mov	qword ptr [rsp + WIN_CTX_GPR + 1 * 8], rbx	/* it starts at the payload */
	mov	r10, r15
	mov	rdx, rsp
	mov	eax, WIN_SYS_SET_CONTEXT
	syscall
	mov	r10, r15
	mov	eax, WIN_SYS_RESUME_THREAD
	syscall
	add	rsp, WIN_CTX_SIZE + 0x30
	mov	ebx, SEED			/* the rounds' value, as without DROPPER */
#endif
1:	call	work
	call	qword ptr [rip + __imp_NtTestAlert]
	add	r12d, 1
	mov	eax, ebx
	out	PORT_LOG, eax
	xor	eax, eax		/* WIN_SYS_YIELD */
	syscall
	cmp	r12d, ROUNDS
	jb	1b
	mov	eax, WIN_SYS_EXIT
	syscall
	jmp	.

	.globl	work
	.p2align 12
work:					/* the image's second code page */
	mov	ecx, 4
2:	mov	rax, qword ptr [r13 + rcx * 8 - 8]
	add	rbx, rax
	shl	rbx, 1
	xor	ebx, ecx
	loop	2b
	ret

	.globl	worker
worker:					/* RCX = its parameter */
	push	rbp
	mov	rbp, rsp
	sub	rsp, 16
	mov	ebx, ecx
	mov	dword ptr [rbp - 8], 0x5a5a5a5a	/* the key, on the frame */
	lea	rsi, [rip + cipher]
	lea	rdi, [rip + plain]
	xor	ecx, ecx
5:	mov	eax, dword ptr [rsi + rcx * 4]	/* decrypt: load, xor, store */
	xor	eax, dword ptr [rbp - 8]
	mov	dword ptr [rdi + rcx * 4], eax
	add	ecx, 1
	cmp	ecx, 8
	jne	5b
	lea	rsi, [rip + plaintext]
	xor	ecx, ecx
6:	mov	eax, dword ptr [rdi + rcx * 4]	/* memcmp(plain, plaintext, 32) */
	cmp	eax, dword ptr [rsi + rcx * 4]
	jne	7f
	add	ecx, 1
	cmp	ecx, 8
	jne	6b
	jmp	8f
7:	xor	ebx, 0xbad			/* a wrong decryption shows in the log */
8:	mov	r12d, 2
3:	add	ebx, 0x1111
	mov	eax, ebx
	out	PORT_LOG, eax
	xor	eax, eax		/* WIN_SYS_YIELD */
	syscall
	sub	r12d, 1
	jnz	3b
	mov	eax, ebx
	leave
	ret

	.globl	tls_callback
tls_callback:				/* RCX = image base, EDX = reason, R8 = reserved */
	lea	eax, [rdx + SEED]
	out	PORT_LOG, eax
	ret

	.data
table:
	.quad	1, 3, 5, SEED
cipher:					/* "svmtrace: the worker decrypted!!" ^ 0x5a */
	.long	0x2e372c29, 0x3f393b28, 0x322e7a60, 0x352d7a3f
	.long	0x283f3128, 0x393f3e7a, 0x2e2a2328, 0x7b7b3e3f
	.globl	plain			/* exported: where a user looks for it */
plain:
	.fill	8, 4, 0
plaintext:
	.ascii	"svmtrace: the worker decrypted!!"

#if DROPPER
	/* What runs in the hollowed child (position independent): two rounds, then exit. */
	.p2align 3
payload:
	mov	ebx, SEED + 0x1000
	mov	r12d, 2
4:	add	ebx, 0x2222
	mov	eax, ebx
	out	PORT_LOG, eax
	xor	eax, eax			/* WIN_SYS_YIELD */
	syscall
	sub	r12d, 1
	jnz	4b
	mov	eax, WIN_SYS_EXIT
	syscall
	.balign	8, 0x90
payload_end:
#endif

	tls_directory tls_callback
