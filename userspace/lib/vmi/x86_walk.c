// SPDX-License-Identifier: GPL-2.0
#include "lib/vmi/x86_walk.h"
#include "lib/vmi/vmi_error.h"

#include <string.h>

const char *x86_level_name(int level)
{
	static const char *const names[] = { "?", "PTE", "PDE", "PDPTE", "PML4E", "PML5E" };

	return level >= X86_PTE && level <= X86_PML5E ? names[level] : names[0];
}

uint64_t x86_level_span(int level)
{
	return 1ULL << (12 + 9 * (level - 1));
}

int x86_paging_levels(uint64_t cr4)
{
	return cr4 & X86_CR4_LA57 ? 5 : 4;
}

int x86_canonical(uint64_t va, int levels)
{
	unsigned int bits = 12 + 9 * (unsigned int)levels; /* 48 or 57 */
	uint64_t top = va >> (bits - 1);

	return top == 0 || top == (~0ULL >> (bits - 1));
}

static unsigned int level_index(uint64_t va, int level)
{
	return (va >> (12 + 9 * (level - 1))) & 0x1ff;
}

int x86_translate(const struct svmtrace_vmi_mem *mem, uint64_t dtb, int levels, uint64_t va,
		  const struct x86_decoder *dec, struct svmtrace_vmi_translation *out,
		  struct svmtrace_error *err)
{
	uint64_t table = dtb & X86_CR3_ADDR;
	int level, rc;

	memset(out, 0, sizeof(*out));
	out->va = va;
	if (levels != X86_PML4E && levels != X86_PML5E)
		return vmi_fail(err, SVMTRACE_E_INVALID, "%d levels of page tables (4 or 5)",
				levels);
	out->page_size = x86_level_span(levels);
	if (!x86_canonical(va, levels))
		return vmi_fail(err, SVMTRACE_E_NOT_FOUND, "VA 0x%llx is not canonical (%d-level "
				"paging)", (unsigned long long)va, levels);
	for (level = levels;; level--) { /* every X86_PTE iteration returns */
		uint64_t entry_pa = table + 8ULL * level_index(va, level);
		uint64_t entry, frame;

		out->page_size = x86_level_span(level);
		rc = svmtrace_vmi_mem_read(mem, entry_pa, &entry, sizeof(entry), err);
		if (rc)
			return vmi_prefix(err, rc, "VA 0x%llx: %s at GPA 0x%llx",
					  (unsigned long long)va, x86_level_name(level),
					  (unsigned long long)entry_pa);
		if (!(entry & X86_PTE_PRESENT)) {
			if (!dec)
				return vmi_fail(err, SVMTRACE_E_NOT_FOUND,
						"VA 0x%llx: %s 0x%llx not present",
						(unsigned long long)va, x86_level_name(level),
						(unsigned long long)entry);
			rc = dec->not_present(dec->ctx, level, entry, va, &frame, out, err);
			if (rc)
				return rc;
			if (level == X86_PTE) {
				out->va = va;
				out->page_size = X86_PAGE_SIZE;
				out->gpa = frame + (va & (X86_PAGE_SIZE - 1));
				return 0;
			}
			table = frame;
			continue;
		}
		if (level == X86_PTE ||
		    ((level == X86_PDE || level == X86_PDPTE) && (entry & X86_PTE_PS))) {
			uint64_t span = x86_level_span(level);

			out->state = SVMTRACE_VMI_PAGE_VALID;
			out->pte = entry;
			out->page_size = span;
			out->gpa = (entry & X86_PTE_ADDR & ~(span - 1)) + (va & (span - 1));
			return 0;
		}
		table = entry & X86_PTE_ADDR;
	}
}
