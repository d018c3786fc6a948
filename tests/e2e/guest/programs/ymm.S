/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ymm: known values in YMM registers, for svmtrace-capture --xstate.  VEX
 * loads and AVX2 arithmetic on all 256 bits, a legacy SSE load (the upper
 * half stays), a VEX.128 load (the upper half is zeroed), YMM15, transfers
 * to GPRs and VZEROUPPER.  Straight-line code: judge-capture.sh
 * (judge_xstate) derives the YMM state after every instruction from the
 * ISA's semantics and the two vectors below, and compares the captured one
 * with it.  Needs CR4.OSXSAVE and XCR0 = 7 (the VMM sets both when CPUID
 * has AVX; QEMU 7.2's TCG emulates AVX and AVX2).  Logs the sum of the
 * three GPR transfers on PORT_LOG.  The model does not replay VEX
 * instructions (programs.list: STEPLOG only).
 */
#include "layout.h"
#include "program.h"

	.intel_syntax noprefix
	.code64
	.text

/* Page 0, the gate.  Keep judge_xstate's table in step with this code. */
start:
	lea	rsi, [rip + vec_a]
	vmovdqu	ymm0, [rsi]			/* A */
	vmovdqu	ymm1, [rsi + 32]		/* B */
	vpaddq	ymm2, ymm0, ymm1		/* A + B, per quadword */
	vpxor	ymm3, ymm0, ymm1		/* A ^ B */
	vpermq	ymm4, ymm0, 0x1b		/* A's quadwords reversed */
	vpcmpeqb ymm5, ymm5, ymm5		/* all ones */
	movdqu	xmm5, [rsi + 32]		/* legacy SSE: B low, ones above */
	vmovdqu	xmm6, [rsi]			/* VEX.128: A low, zero above */
	vmovdqu	ymm15, ymm2			/* A + B */
	vmovq	rax, xmm2			/* quadword 0 of A + B */
	vpextrq	rbx, xmm3, 1			/* quadword 1 of A ^ B */
	vextracti128 xmm7, ymm4, 1		/* A3..A0 reversed, high half: A1 A0 */
	vzeroupper				/* bits 255:128 of every YMM zeroed */
	vmovq	rcx, xmm7			/* A1 */
	add	rax, rbx
	add	rax, rcx
	log_done

	.org 0x1000
/* Page 1: the two vectors, quadword 0 first. */
vec_a:
	.quad	0x0123456789abcdef, 0x1111111111111111, 0x8000000000000000, 0x00000000ffffffff
vec_b:
	.quad	0x1000000000000001, 0x2222222222222222, 0x8000000000000001, 0x0000000000000001
