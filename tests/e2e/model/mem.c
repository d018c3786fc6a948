// SPDX-License-Identifier: GPL-2.0
/*
 * Guest-virtual memory for the model: a 4-level walk of the page tables in
 * the image (4 KiB pages only, as image.c builds them), enforcing present,
 * user and write bits, byte by byte so accesses may cross pages.
 */
#include <stdio.h>
#include <string.h>

#include "model.h"

#define PTE_P	 (1ull << 0)
#define PTE_W	 (1ull << 1)
#define PTE_U	 (1ull << 2)
#define PTE_PS	 (1ull << 7)
#define PTE_ADDR 0x000ffffffffff000ull

int model_translate(struct model_cpu *c, uint64_t va, int write, uint64_t *gpa)
{
	uint64_t table = c->cr3 & PTE_ADDR;

	for (int level = 3; level >= 0; level--) {
		uint64_t idx = (va >> (12 + 9 * level)) & 511, pte;

		if (table + idx * 8 + 8 > c->mem_size)
			goto fault;
		memcpy(&pte, c->mem + table + idx * 8, 8);
		if (!(pte & PTE_P) || (c->cpl == 3 && !(pte & PTE_U)) ||
		    (write && !(pte & PTE_W)) || (level && (pte & PTE_PS)))
			goto fault;
		table = pte & PTE_ADDR;
	}
	*gpa = table | (va & 0xfff);
	if (*gpa < c->mem_size)
		return 0;
fault:
	snprintf(c->error, sizeof(c->error), "page fault (%s) at 0x%llx, CPL %d, RIP 0x%llx",
		 write ? "write" : "read", (unsigned long long)va, c->cpl,
		 (unsigned long long)c->rip);
	return -1;
}

int model_read(struct model_cpu *c, uint64_t va, void *buf, unsigned int len)
{
	uint8_t *p = buf;
	uint64_t gpa;

	for (unsigned int i = 0; i < len; i++) {
		if (model_translate(c, va + i, 0, &gpa))
			return -1;
		p[i] = c->mem[gpa];
	}
	return 0;
}

int model_write(struct model_cpu *c, uint64_t va, const void *buf, unsigned int len)
{
	const uint8_t *p = buf;
	uint64_t gpa;

	for (unsigned int i = 0; i < len; i++) {
		if (model_translate(c, va + i, 1, &gpa))
			return -1;
		c->mem[gpa] = p[i];
	}
	return 0;
}
