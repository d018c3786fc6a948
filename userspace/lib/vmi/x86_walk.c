// SPDX-License-Identifier: GPL-2.0
#include "lib/vmi/x86_walk.h"
#include "lib/vmi/vmi_error.h"

#include <string.h>

const char *x86_level_name(int level)
{
	static const char *const names[] = { "?", "PTE", "PDE", "PDPTE", "PML4E" };

	return level >= X86_PTE && level <= X86_PML4E ? names[level] : names[0];
}

uint64_t x86_level_span(int level)
{
	return 1ULL << (12 + 9 * (level - 1));
}

int x86_canonical(uint64_t va)
{
	uint64_t top = va >> 47;

	return top == 0 || top == 0x1ffff;
}

static unsigned int level_index(uint64_t va, int level)
{
	return (va >> (12 + 9 * (level - 1))) & 0x1ff;
}

int x86_translate(const struct svmtrace_vmi_mem *mem, uint64_t dtb, uint64_t va,
		  const struct x86_decoder *dec, struct svmtrace_vmi_translation *out,
		  struct svmtrace_error *err)
{
	uint64_t table = dtb & X86_CR3_ADDR;
	int level, rc;

	memset(out, 0, sizeof(*out));
	out->va = va;
	out->page_size = x86_level_span(X86_PML4E);
	if (!x86_canonical(va))
		return vmi_fail(err, SVMTRACE_E_NOT_FOUND, "VA 0x%llx is not canonical",
				(unsigned long long)va);
	for (level = X86_PML4E;; level--) { /* every X86_PTE iteration returns */
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
