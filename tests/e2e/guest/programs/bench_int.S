/* SPDX-License-Identifier: GPL-2.0 */
/*
 * bench_int: what an interrupt return costs the rest of the guest while a
 * capture is armed (make bench, tests/e2e/step-cost.sh).  RDI (the VMM's
 * --arg) round trips INT INT_VECTOR / IRETQ through the lab kernel.  While
 * a capture is armed IRET is intercepted on every vCPU and passed over with
 * one more exit (docs/kmod.md, "Frames and R11"); INT n is intercepted only
 * while a session steps user code, so here it is not.  The loop runs off
 * the entry page, which is the capture's gate: a foreign capture steps only
 * the first instructions silently.
 */
#include "layout.h"
#include "program.h"

	.intel_syntax noprefix
	.code64
	.text
start:
	mov	r12, rdi
	jmp	1f
	.org	0x1000			/* off the gate */
1:	int	INT_VECTOR
	dec	r12
	jnz	1b
	done
