/* SPDX-License-Identifier: GPL-2.0 */
/*
 * bench_sys: what a system call costs the rest of the guest while a capture
 * is armed (make bench, tests/e2e/step-cost.sh).  RDI (the VMM's --arg)
 * counted SYSCALL / SYSRETQ round trips into the lab kernel, which counts
 * them (result syscalls=).  While a capture is armed every vCPU runs
 * without EFER.SCE, so each SYSCALL and each SYSRETQ is a #UD exit that the
 * host performs (docs/kmod.md, "Frames and R11"); unarmed both run in the
 * guest.  The loop runs off the entry page, which is the capture's gate: a
 * foreign capture steps only the first instructions silently.
 */
#include "layout.h"
#include "program.h"

	.intel_syntax noprefix
	.code64
	.text
start:
	mov	r12, rdi
	xor	esi, esi		/* counted calls */
	xor	edi, edi		/* RAX += 0 in the kernel */
	syscalls_off_gate
