/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The lines by which the test VMM and the reference model report a run of
 * a lab program.  The lab compares them as text, so both print them here.
 */
#ifndef E2E_GUEST_RESULTS_H
#define E2E_GUEST_RESULTS_H

#include <stdint.h>

/* "cpuN done status=... rip=... rflags=... rax=... ... r15=...";
 * gpr[] in the seed's order RAX RBX RCX RDX RSI RDI RBP RSP R8..R15. */
void results_print_cpu(int cpu, uint32_t status, uint64_t rip, uint64_t rflags,
		       const uint64_t gpr[16]);

/* "result db_count=... nmis=... nmi_frame_tf=... frame_tf=... irqs=... log_sum=...": the guest
 * kernel's counters,
 * read from guest memory, and the VMM's port totals. */
void results_print_totals(const uint8_t *mem, uint64_t log_sum, uint64_t log_count,
			  uint64_t input_count);

#endif /* E2E_GUEST_RESULTS_H */
