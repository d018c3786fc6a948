/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the lab's guest programs (programs/*.S) repeat, as GNU as macros.
 * Included after layout.h; a program is run through cpp, then assembled,
 * so these expand to exactly the instructions written out by hand.
 */
#ifndef SVMTRACE_E2E_PROGRAM_H
#define SVMTRACE_E2E_PROGRAM_H

/*
 * The guest's own TF, set by POPFQ: the instruction after the POPFQ is the
 * first to trap.
 */
.macro tf_on
	pushfq
	or	qword ptr [rsp], 0x100
	popfq
.endm

/* TF cleared by POPFQ, which still traps itself: TF was set when it began. */
.macro tf_off
	pushfq
	and	qword ptr [rsp], ~0x100
	popfq
.endm

/* The end of a run: status 0 on PORT_DONE (an I/O exit, never HLT). */
.macro done
	xor	eax, eax
	out	PORT_DONE, eax
.endm

/* EAX into the checksum (PORT_LOG), then the end of the run. */
.macro log_done
	out	PORT_LOG, eax
	done
.endm

/*
 * R12 SYSCALLs (RSI, RDI as the caller set them) from the page after the
 * entry page, which is a capture's gate: a foreign capture steps only the
 * instructions before them silently.  Then the end of the run.
 */
.macro syscalls_off_gate
	jmp	1f
	.org	0x1000
1:	syscall
	dec	r12
	jnz	1b
	done
.endm

#endif
