/* SPDX-License-Identifier: GPL-2.0 */
/*
 * nmi (hazard 1): NMIs arriving while user code is traced.  The program
 * asks the VMM for two NMIs at a time (PORT_NMI -> KVM_NMI twice): the
 * second is still pending when the first handler's IRETQ runs, so KVM
 * single-steps past that IRETQ with its own TF (nmi_singlestep) to find the
 * NMI window -- on top of the tracer's TF.  The trace must not change (the
 * NMI handler is kernel code, no step may be lost or doubled), the guest's
 * kernel must count every NMI, and the RFLAGS images in the NMI frames
 * must not carry the tracer's TF (nmi_frame_tf=0).
 */
#include "layout.h"
#include "program.h"

	.intel_syntax noprefix
	.code64
	.text
start:
	mov	r12d, 3
	xor	ebx, ebx
1:	mov	eax, 2
	out	PORT_NMI, eax		/* two NMIs, delivered once this completes */
	add	ebx, r12d
	add	ebx, ebx
	dec	r12d
	jnz	1b
	mov	eax, ebx
	log_done
