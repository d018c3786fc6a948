/* SPDX-License-Identifier: GPL-2.0 */
/*
 * guest_db (hazard 3): the guest's own #DBs, which must reach its kernel
 * exactly as on stock KVM whether or not a tracer is armed.  The program
 * single-steps itself twice: POPFQ sets TF, six instructions run with it,
 * POPFQ clears it (that POPFQ still traps: TF was set when it began).  Its
 * kernel counts the 14 #DBs and sums their frame RIPs.
 *
 * Not here: ICEBP, which raises #UD in L2 under QEMU 7.2's TCG
 * (docs/lab-internals.md), and DR0-DR3 breakpoints (dbgregs.S).
 */
#include "layout.h"
#include "program.h"

	.intel_syntax noprefix
	.code64
	.text
start:
	mov	ebx, 100
	mov	r12d, 2
1:	tf_on				/* TF on: traps start after the next one */
	add	ebx, 1
	add	ebx, 2
	nop
	sub	ebx, 4
	tf_off				/* TF off, but this one still traps */
	dec	r12d
	jnz	1b
	mov	eax, ebx
	log_done
