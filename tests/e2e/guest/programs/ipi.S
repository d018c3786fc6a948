/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ipi: x2APIC self-IPIs while stepped (the kmod's C1 review finding).  Run
 * with the VMM's --x2apic --cpl0: at CPL 0 with an in-kernel local APIC in
 * x2APIC mode, each WRMSR to the ICR (MSR 0x830) sends a fixed, physical
 * IPI to APIC ID 0 (itself).  On AMD hardware with NRIPS, KVM completes
 * that WRMSR in its IRQs-off fastpath (handle_fastpath_set_msr_irqoff ->
 * kvm_skip_emulated_instruction -> single-step); the lab gets there with
 * kvm-amd.svmtrace_test_fastpath=1.  IF stays 0, so the IPIs only stay
 * pending in the IRR.  RDI = iterations.
 */
#include "layout.h"

	.intel_syntax noprefix
	.code64
	.text
start:
	mov	ecx, 0x830		/* x2APIC ICR */
	xor	edx, edx		/* destination: APIC ID 0 */
	xor	ebx, ebx
	mov	eax, 0x40		/* fixed, physical, vector 0x40 */
	/*
	 * Four instructions, so that a ring of 2^n slots that fills up again
	 * after every drain stops the vCPU at each of them in turn.
	 */
1:	wrmsr
	add	rbx, rdi
	dec	rdi
	jnz	1b
	mov	eax, ebx
	out	PORT_DONE, eax
