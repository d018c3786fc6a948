/* SPDX-License-Identifier: GPL-2.0 */
/*
 * sysret_tf (hazards 3 and 5): the guest's own TF through
 * SYSCALL and SYSRETQ while traced.  Twice over:
 *   - POPFQ sets TF; three instructions trap, then SYSCALL with TF set: R11
 *     holds it, FMASK clears it, so no #DB at the kernel entry (TF is
 *     checked after SYSCALL); SYSRETQ restores it from R11 and traps at
 *     once, at the user RIP, then every instruction traps until the POPFQ
 *     that clears TF (which still traps);
 *   - TF clear, SYSCALL with R10 = TF: the kernel sets TF in R11 (a
 *     debugger resuming the thread with a single step), SYSRETQ traps at
 *     the user RIP and after each instruction up to POPFQ clearing it.
 * The kernel counts the #DBs and sums their frame RIPs; its frame_tf has
 * R11's TF of the first kind.  Under a tracer the guest must get exactly
 * the #DBs it gets untraced (the model's, QEMU's).
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
	mov	eax, 1000
	mov	edi, r12d
	xor	esi, esi		/* a counted call */
	syscall				/* with TF: no trap at the kernel entry */
	add	ebx, eax		/* SYSRETQ's trap came before this */
	add	ebx, edx
	tf_off				/* TF off, but this one still traps */
	mov	r10d, 0x100		/* the kernel sets TF in R11 */
	mov	eax, 2000
	syscall
	xor	r10d, r10d		/* SYSRETQ's trap came before this */
	add	ebx, eax
	tf_off				/* TF off, but this one still traps */
	dec	r12d
	jnz	1b
	mov	eax, ebx
	log_done
