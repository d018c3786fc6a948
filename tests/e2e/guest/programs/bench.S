/* SPDX-License-Identifier: GPL-2.0 */
/*
 * bench: a tight loop of RDI iterations (the VMM's --arg), four
 * instructions each, for single-step throughput measurements.
 * Steps before PORT_DONE: 1 + 4 * RDI + 1.
 */
#include "layout.h"
#include "program.h"

	.intel_syntax noprefix
	.code64
	.text
start:
	mov	rcx, rdi
1:	add	rax, rcx
	xor	rbx, rax
	dec	rcx
	jnz	1b
	done
