/* SPDX-License-Identifier: GPL-2.0 */
/*
 * bench_tsc: bench's loop with an RDTSC in it: RDI iterations (the VMM's
 * --arg) of four instructions, one of them a read of the TSC, for what a
 * traced TSC read costs with and without --hide-time (make
 * bench-step-cost).  Steps before PORT_DONE: 1 + 4 * RDI + 1.
 */
#include "layout.h"
#include "program.h"

	.intel_syntax noprefix
	.code64
	.text
start:
	mov	rcx, rdi
1:	rdtsc
	xor	rbx, rax
	dec	rcx
	jnz	1b
	done
