/* SPDX-License-Identifier: GPL-2.0 */
/*
 * tflost: the ways a tracer's TF disappears without a
 * trap, and the trace must say so instead of losing steps silently.
 *   - INT n: delivery clears TF; the lab kernel's INT_VECTOR handler
 *     returns through a frame without TF (as a kernel that resumes the
 *     thread from another context does);
 *   - an exception delivered to a handler (UD2 -> #UD, intercepted by KVM
 *     and injected back): the handler skips the UD2 and drops TF too.
 * Under --kernel, after each some instructions run untraced until the
 * next VM exit (an OUT, a CPUID), where the tracer notices: a session end
 * with reason "int" or "event", then a new session from that exit on.  A
 * user-only tracer intercepts both, keeps its TF out of their
 * frames and puts it back at the IRETQ to user mode, whatever the handler
 * did to the frame: one session, every instruction traced.
 */
#include "layout.h"
#include "program.h"

	.intel_syntax noprefix
	.code64
	.text
start:
	mov	ebx, 11
	add	ebx, 2
	int	INT_VECTOR		/* TF gone from here ... */
	add	ebx, 3
	add	ebx, ebx
	mov	eax, ebx
	out	PORT_LOG, eax		/* ... to this exit */
	add	ebx, 5
	shl	ebx, 1
	ud2				/* #UD, TF gone again ... */
	add	ebx, 7
	sub	ebx, 1
	xor	eax, eax
	cpuid				/* ... to this exit */
	add	ebx, 1
	mov	eax, ebx
	log_done
