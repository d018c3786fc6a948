/* SPDX-License-Identifier: GPL-2.0 */
/*
 * timing.exe of the Windows-layout guest (the wintime image): the timing
 * checks anti-analysis code runs to tell that it is being traced, written
 * from their published descriptions -- pafish's rdtsc_diff and
 * rdtsc_diff_vmexit, al-khaser's rdtsc_diff_locky (the ratio of a cheap
 * and an expensive operation), and QueryPerformanceCounter as Windows
 * computes it in user mode from the Hyper-V reference TSC page.  Each check
 * is a bit of the verdict (set: "traced"):
 *    1  RDTSC   the least of 16 deltas of back-to-back RDTSCs above 750
 *               cycles (pafish: 750)
 *    2  CPUID   the least of 8 RDTSC deltas around CPUID, which exits to
 *               the hypervisor traced or not, below 10 times the least
 *               back-to-back delta: under a tracer an ordinary instruction
 *               costs as much as an exit (al-khaser's ratio: 10)
 *    4  RDTSCP  as 1, with RDTSCP
 *    8  TSC_AUX an RDTSCP that loads another ECX than the kernel's
 *               TSC_AUX (winlayout.h, WIN_TSC_AUX): a tracer's emulation
 *               that gets it wrong
 *   16  QPC     the least of 16 deltas of back-to-back reads of the
 *               reference time ((TSC * TscScale >> 64) + TscOffset, in 100
 *               ns) 2 or more
 * The least of several samples where the published checks average: in the
 * lab the TSC is the host's wall clock, and a host interrupt during one
 * sample must not make an untraced run look traced.  The process yields
 * (system call 0) between the checks, so they straddle the other
 * processes, then logs verdict << 20 on PORT_LOG and exits.  It calls
 * ntdll.dll's NtTestAlert once first, through its import address table, as
 * every program of the guest does (the builder binds it), and has a TLS
 * callback, as every image of the guest has (the loader runs it before the
 * entry point; timing.exe's does nothing: no check runs before the entry).
 * Within the reference model's subset (tests/e2e/model), which replays it.
 * At each *_least label R12 holds that check's least sample (the lab's
 * judge reads it from the trace).
 */
#include "../../guest/layout.h"
#include "../winlayout.h"
#include "tls.h"

	.set	TSC_LIMIT, 750
	.set	RATIO, 10
	.set	QPC_LIMIT, 2

.macro yield
	xor	eax, eax		/* WIN_SYS_YIELD */
	syscall
.endm

/*
 * The end of a sample: the delta DELTA - FIRST, kept in LEAST when below
 * it; R13 samples to go from label 1.
 */
.macro keep_least delta, first, least
	sub	\delta, \first
	cmp	\delta, \least
	jae	9f
	mov	\least, \delta
9:	dec	r13d
	jnz	1b
.endm

	.intel_syntax noprefix
	.text
	.globl	start
start:
	xor	r15d, r15d		/* the verdict */
	call	qword ptr [rip + __imp_NtTestAlert]	/* ntdll, bound by the builder */

	/* 1: RDTSC, back to back; R14 keeps the least delta for 2 */
	mov	r12d, -1
	mov	r13d, 16
1:	rdtsc
	mov	r8d, eax
	rdtsc
	keep_least eax, r8d, r12d
	.globl	rdtsc_least
rdtsc_least:
	mov	r14d, r12d
	cmp	r12d, TSC_LIMIT
	jbe	3f
	or	r15d, 1
3:	yield

	/* 2: RDTSC around CPUID, against RATIO times the back-to-back delta */
	mov	r12d, -1
	mov	r13d, 8
1:	rdtsc
	mov	r8d, eax
	xor	eax, eax
	cpuid
	rdtsc
	keep_least eax, r8d, r12d
	.globl	cpuid_least
cpuid_least:
	lea	eax, [r14 + r14 * 4]
	add	eax, eax		/* RATIO = 10 */
	cmp	r12d, eax
	jae	3f
	or	r15d, 2
3:	yield

	/* 4: RDTSCP, back to back; 8: its ECX */
	mov	r12d, -1
	mov	r13d, 16
1:	rdtscp
	mov	r8d, eax
	cmp	ecx, WIN_TSC_AUX
	je	2f
	or	r15d, 8
2:	rdtscp
	keep_least eax, r8d, r12d
	.globl	rdtscp_least
rdtscp_least:
	cmp	r12d, TSC_LIMIT
	jbe	4f
	or	r15d, 4
4:	yield

	/* 16: QueryPerformanceCounter through the reference TSC page */
	mov	r9d, WIN_HV_TSC_VA
	mov	r12d, -1
	mov	r13d, 16
1:	call	qpc
	mov	r8, rdx
	call	qpc
	keep_least rdx, r8, r12
	.globl	qpc_least
qpc_least:
	cmp	r12, QPC_LIMIT
	jb	3f
	or	r15d, 16
3:	mov	eax, r15d
	shl	eax, 20
	out	PORT_LOG, eax
	mov	eax, WIN_SYS_EXIT
	syscall
	jmp	.

/*
 * RDX = the reference time as ntdll reads it from the page at R9: again
 * while TscSequence changed meanwhile.  R10, RAX clobbered.
 */
qpc:
	mov	r10d, dword ptr [r9]
	rdtsc
	shl	rdx, 32
	or	rax, rdx
	mul	qword ptr [r9 + 8]
	add	rdx, qword ptr [r9 + 16]
	cmp	r10d, dword ptr [r9]
	jne	qpc
	ret

	/*
	 * On a page of its own: a capture from the entry point gates the
	 * entry page, and the loader's call of a callback there would start
	 * the trace before the entry.
	 */
	.p2align 12, 0xcc
	.globl	tls_callback
tls_callback:				/* RCX = image base, EDX = reason, R8 = reserved */
	ret

	.data
	tls_directory tls_callback
