/* SPDX-License-Identifier: GPL-2.0 */
/*
 * drheavy: a CPL-0 program (VMM --cpl0) that loads the
 * debug registers over and over -- DR0-DR3 with an instruction and three
 * data addresses, DR7 alternating between two layouts whose breakpoint
 * types differ per register (execute, write, read/write) -- and leaves
 * DR7 enabled when it ends.  None of its breakpoints is ever hit (nothing
 * executes or touches the addresses), so its results do not depend on
 * whether an emulator delivers them.  RDI = iterations.
 *
 * Under QEMU 7.2 TCG as L0 this is what crashed the lab (docs/lab-internals.md):
 * VMRUN and #VMEXIT load DR7 by assignment, so the breakpoints and
 * watchpoints an L2 guest's own MOV DR7 made TCG insert outlive the guest,
 * and the next DR7 write on that CPU removes them by the wrong type.
 */
#include "layout.h"
#include "program.h"

/* L0-L3 enabled; RW/LEN per register: A = exec, write/4, rw/4, write/4;
 * B = write/4, exec, write/4, rw/4. */
#define DR7_A 0xdfd00455
#define DR7_B 0xfd0d0455

	.intel_syntax noprefix
	.code64
	.text
start:
	mov	r12, rdi
	xor	ebx, ebx
	lea	r8, [rip + never]
	lea	r9, [rip + data]
1:	mov	dr0, r8
	mov	dr1, r9
	lea	rax, [r9 + 4]
	mov	dr2, rax
	lea	rax, [r9 + 8]
	mov	dr3, rax
	mov	eax, DR7_A
	mov	dr7, rax
	mov	dr0, r9
	mov	dr1, r8
	mov	eax, DR7_B
	mov	dr7, rax
	xor	eax, eax
	mov	dr7, rax
	mov	eax, DR7_A
	mov	dr0, r8
	mov	dr1, r9
	mov	dr7, rax
	add	ebx, 3
	dec	r12
	jnz	1b
	mov	eax, ebx
	log_done			/* DR7 stays A: the VM ends with them armed */
never:
	hlt
	.balign 16
data:
	.quad	0, 0
