/* SPDX-License-Identifier: GPL-2.0 */
/*
 * bench_tf: the step-cost benchmark's stock in-kernel #DB exit.  The
 * program sets its own TF and runs bench's loop, so every instruction
 * traps: KVM intercepts the #DB, finds it is the guest's and re-injects it,
 * and the guest kernel's #DB handler (six instructions and IRETQ, which
 * restores TF) counts it.  No exit reaches the VMM.  RDI = iterations.
 */
#include "layout.h"
#include "program.h"

	.intel_syntax noprefix
	.code64
	.text
start:
	xor	ebx, ebx
	tf_on				/* from the next instruction on, each traps */
1:	add	rbx, rdi
	dec	rdi
	jnz	1b
	done
