/* SPDX-License-Identifier: GPL-2.0 */
/*
 * intpfx: INT n with prefixes the CPU ignores -- a
 * segment override (2E CD), REX.W (48 CD), an operand size (66 CD), both
 * (66 48 CD) -- in --arg rounds.  Each raises the SVM INT n intercept with
 * RIP on its first prefix; a tracer that knows only a bare CD neither
 * queues the interrupt nor lets the instruction go, and the vCPU exits on
 * it forever (also after the capture stopped: its TF, and so the
 * intercept, stay until a trap that never comes).  The lab kernel's
 * INT_VECTOR handler returns through a frame without TF, as tflost's does:
 * a user-only tracer keeps its TF out of the frame and takes it back at the
 * IRETQ, one session, every instruction traced.
 */
#include "layout.h"
#include "program.h"

	.intel_syntax noprefix
	.code64
	.text
start:
	xor	ebx, ebx
	mov	r12, rdi
1:	add	ebx, 1
	.byte	0x2e, 0xcd, INT_VECTOR	/* cs int INT_VECTOR */
	add	ebx, 2
	.byte	0x48, 0xcd, INT_VECTOR	/* rex.w int INT_VECTOR */
	add	ebx, 3
	.byte	0x66, 0xcd, INT_VECTOR	/* data16 int INT_VECTOR */
	shl	ebx, 1
	.byte	0x66, 0x48, 0xcd, INT_VECTOR
	dec	r12
	jnz	1b
	mov	eax, ebx
	log_done
