/* SPDX-License-Identifier: GPL-2.0 */
/* The Windows-layout guest's CR4, from the CPUID its vCPU gets (winlayout.h). */
#ifndef E2E_WIN_CPU_H
#define E2E_WIN_CPU_H

#include <linux/kvm.h>
#include <stdint.h>

/* What Windows sets in CR4 on a CPU with these CPUID leaves. */
uint64_t win_cr4(const struct kvm_cpuid_entry2 *entries, unsigned int n);

#endif
