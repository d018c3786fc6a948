/* SPDX-License-Identifier: GPL-2.0 */
/*
 * hostile: a guest that does what it can against the tracer, in a loop of
 * --arg rounds, then triple-faults.  Each round:
 *   - storms its own #DBs: POPFQ sets TF over a few instructions and clears
 *     it again (6 guest-owned #DBs its kernel counts);
 *   - leaves the target address space (SYSCALL to PML4_ALT), calls code on
 *     the gate page there (a foreign fetch: a silent step), comes back and
 *     runs the gate page again (a new session);
 *   - rewrites the gate page: increments the immediate of an instruction on
 *     it and calls it.
 * Then it moves its CR3 to an empty page table from the SYSCALL: the
 * kernel's next fetch faults with no IDT mapped, a triple fault
 * (KVM_EXIT_SHUTDOWN).  The host must stay up with no WARN, and the
 * capture's counts must add up.  Beyond the model, and stock
 * single-stepping takes its #DBs: its untraced results on the packaged
 * modules are the oracle (docs/lab.md).
 */
#include "layout.h"
#include "program.h"

#define EMPTY_TABLE_GPA 0x3ff000	/* the last page of guest RAM: all zero */

	.intel_syntax noprefix
	.code64
	.text

/* Page 0, the gate. */
start:
	mov	r12, rdi
	xor	ebx, ebx
round:
	tf_on				/* TF on: the guest's own #DBs */
	add	ebx, 1
	nop
	add	ebx, 2
	tf_off				/* TF off (this one still traps) */
	call	away			/* a foreign fetch of gatefn, in page 1 */
	inc	byte ptr [rip + patched + 1]	/* rewrite the gate page... */
	call	patched			/* ...and run what was written */
	add	ebx, eax
	dec	r12
	jnz	round
	mov	eax, ebx
	out	PORT_LOG, eax
	mov	esi, EMPTY_TABLE_GPA
	syscall				/* never returns: triple fault */
	done

gatefn:
	add	ebx, 10
	ret

patched:
	mov	eax, 0x11223344		/* B8 imm32: the low byte is rewritten */
	ret

	.org 0x1000
/* Page 1: run the gate page's gatefn under the other CR3. */
away:
	mov	esi, PML4_ALT_GPA
	syscall
	call	gatefn
	mov	esi, PML4_GPA
	syscall
	xor	esi, esi
	ret
