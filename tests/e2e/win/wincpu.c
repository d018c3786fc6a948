// SPDX-License-Identifier: GPL-2.0
/*
 * Windows' CR4 (winlayout.h WIN_CR4_*) limited to what the vCPU's CPUID
 * offers, as Windows checks each feature before it sets its bit (and KVM
 * refuses a CR4 bit the guest's CPUID lacks).  pvhboot.S does the same
 * with the CPUID instruction.
 */
#include "wincpu.h"
#include "winlayout.h"

enum { EBX, ECX, EDX };

static const struct {
	uint64_t cr4;
	uint32_t leaf, reg, bit;
} features[] = {
	{ WIN_CR4_DE, 1, EDX, 2 },	 { WIN_CR4_PSE, 1, EDX, 3 },
	{ WIN_CR4_MCE, 1, EDX, 7 },	 { WIN_CR4_PGE, 1, EDX, 13 },
	{ WIN_CR4_UMIP, 7, ECX, 2 },	 { WIN_CR4_FSGSBASE, 7, EBX, 0 },
	{ WIN_CR4_OSXSAVE, 1, ECX, 26 }, { WIN_CR4_SMEP, 7, EBX, 7 },
	{ WIN_CR4_SMAP, 7, EBX, 20 },
};

static uint32_t reg_of(const struct kvm_cpuid_entry2 *e, uint32_t reg)
{
	return reg == EBX ? e->ebx : reg == ECX ? e->ecx : e->edx;
}

uint64_t win_cr4(const struct kvm_cpuid_entry2 *entries, unsigned int n)
{
	uint64_t cr4 = WIN_CR4_ALWAYS;
	unsigned int i, f;

	for (f = 0; f < sizeof(features) / sizeof(features[0]); f++)
		for (i = 0; i < n; i++)
			if (entries[i].function == features[f].leaf && !entries[i].index &&
			    reg_of(&entries[i], features[f].reg) >> features[f].bit & 1)
				cr4 |= features[f].cr4;
	return cr4;
}
