/* SPDX-License-Identifier: GPL-2.0 */
/*
 * pause: PAUSE in a loop that is stepped, as in a spin-wait.  On hardware
 * PAUSE traps like any instruction; QEMU 7.2's TCG takes no single-step
 * trap after it (docs/lab.md), so there its step and the next instruction's
 * come as one: stock single-stepping sees the same, and the lab checks both
 * against the model with the rows after PAUSE taken out.  The label after
 * PAUSE names that RIP for the lab.
 */
#include "layout.h"
#include "program.h"

	.intel_syntax noprefix
	.code64
	.text
start:
	mov	ebx, 1
	mov	ecx, 4
1:	pause
after_pause:
	add	ebx, ebx
	dec	ecx
	jnz	1b
	mov	eax, ebx
	log_done
