/* SPDX-License-Identifier: GPL-2.0 */
/*
 * bp: INT3 at CPL 3 in a loop, its #BP delivered to the lab kernel's
 * handler, which collects the TF bits of its frames (frame_tf): none of a
 * tracer's may show, and one session must trace it all.  QEMU's TCG takes
 * INT3 through the INT n intercept (hardware through the #BP one): a tracer
 * that knew only INT n's CD there exited on the INT3 forever.  Run with the
 * VMM's --debug-at-log too: at every PORT_LOG write the VMM calls
 * KVM_SET_GUEST_DEBUG, which makes KVM rewrite its own #BP intercept.
 */
#include "layout.h"
#include "program.h"

	.intel_syntax noprefix
	.code64
	.text
start:
	xor	ebx, ebx
	mov	ecx, 4
1:	add	ebx, ecx
	int3
	add	ebx, 1
	mov	eax, ebx
	out	PORT_LOG, eax		/* KVM_SET_GUEST_DEBUG after the first */
	dec	ecx
	jnz	1b
	done
