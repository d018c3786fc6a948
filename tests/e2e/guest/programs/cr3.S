/* SPDX-License-Identifier: GPL-2.0 */
/*
 * cr3 (hazard 7): the traced thread leaves the target address space and
 * comes back.  A system call moves it to PML4_ALT_GPA (another CR3 mapping
 * the same memory): the tracer's next trap sees a foreign CR3, ends the
 * session (session_end, reason CR3) and closes the gate again.  Under that
 * CR3 the program runs the gate page's `twice` (a foreign fetch: stepped
 * silently, no session), moves back to the target CR3, and enters the gate
 * page again at `again`: a second session starts there and ends at stop.
 */
#include "layout.h"
#include "program.h"

	.intel_syntax noprefix
	.code64
	.text

/* Page 0, the gate. */
start:
	mov	ebx, 1
	add	ebx, 2
	jmp	away
twice:
	add	ebx, ebx
	ret
again:
	add	ebx, 5			/* the second session's session_start */
	call	twice
	mov	eax, ebx
	log_done

	.org 0x1000
/* Page 1: leave the target address space, come back, re-enter the gate. */
away:
	mov	esi, PML4_ALT_GPA
	syscall				/* CR3 = PML4_ALT_GPA: the session ends */
	add	ebx, 3
	call	twice			/* a gate fetch under a foreign CR3 */
	mov	esi, PML4_GPA
	syscall				/* back to the target CR3, no session yet */
	xor	esi, esi
	add	ebx, 4
	jmp	again
