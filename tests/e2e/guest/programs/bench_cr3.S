/* SPDX-License-Identifier: GPL-2.0 */
/*
 * bench_cr3: what a CR3 load costs the rest of the guest while a capture is
 * armed (make bench, tests/e2e/step-cost.sh): RDI (the VMM's --arg) counted
 * SYSCALL / SYSRETQ round trips whose kernel path loads CR3 (RSI =
 * PML4_GPA, the address space the program runs in: a context switch's MOV
 * CR3 without the switch).  While a capture is armed every vCPU intercepts
 * CR3 writes (docs/kmod.md, "Which vCPUs pay"), so each round trip makes
 * one VM exit, the MOV CR3 KVM completes; unarmed none.  The loop runs off
 * the entry page, which is the capture's gate: a foreign capture steps only
 * the first instructions silently.
 */
#include "layout.h"
#include "program.h"

	.intel_syntax noprefix
	.code64
	.text
start:
	mov	r12, rdi
	mov	esi, PML4_GPA		/* counted calls that load this CR3 */
	xor	edi, edi		/* RAX += 0 in the kernel */
	syscalls_off_gate
