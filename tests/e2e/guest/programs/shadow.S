/* SPDX-License-Identifier: GPL-2.0 */
/*
 * shadow (hazard 6): MOV SS holds off the single-step trap for one
 * instruction, so a tracer gets one #DB for MOV SS and the instruction after
 * it and cannot record the state between them.  The program reloads SS
 * (with the selector it already has) in a loop; the model skips the record
 * after each MOV SS, as the CPU skips the trap.
 */
#include "layout.h"
#include "program.h"

	.intel_syntax noprefix
	.code64
	.text
start:
	mov	ebx, 5
	mov	ecx, 3
	mov	eax, SEL_USER_SS
1:	mov	ss, eax
	add	ebx, ecx		/* its trap also covers the MOV SS */
	shl	ebx, 1
	dec	ecx
	jnz	1b
	mov	eax, ebx
	log_done
