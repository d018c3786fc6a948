// SPDX-License-Identifier: GPL-2.0
/*
 * pescan: the kernel from physical memory alone, when no register and no
 * start block leads to it.  One pass reads every page the source holds (a
 * live VM's, which it does not list, as far as they read):
 *
 *   - a CodeView record ("RSDS", GUID, age, then the PDB name at +24) that
 *     names a kernel PDB lies in ntoskrnl's image;
 *   - a page whose kernel-half entry points back at the page itself is a
 *     page-table root: Windows maps its tables through such a self-map
 *     entry in every address space.
 *
 * Each record is then looked for in each root (the vCPUs' CR3s and the
 * start block's first, then the self-mapped ones) by walking the root's
 * kernel half for a leaf that maps the record's page, and the image is
 * scanned down from the address found.  The walk is bounded, so memory
 * full of tables (or of garbage) cannot make it run away.
 */
#include "lib/vmi/mem_driver.h"
#include "lib/vmi/win_probe.h"
#include "lib/vmi/vmi_error.h"
#include "lib/vmi/x86_walk.h"

#include <stdio.h>
#include <string.h>

#define MAX_RECORDS	  16
#define MAX_ROOTS	  16
#define WALK_MAX_TABLES	  65536 /* tables one reverse lookup may read */
#define CV_NAME		  24	/* the PDB name's offset in a CodeView RSDS record */
#define KERNEL_HALF_FIRST 256	/* the first top-level entry of the kernel half */
#define UNLISTED_CHUNK	  (2ULL << 20)
#define UNLISTED_LOW	  (4ULL << 30)
#define UNLISTED_MAX	  (1ULL << 40)

struct finds {
	uint64_t records[MAX_RECORDS]; /* GPAs of kernel CodeView records */
	unsigned int nr_records;
	uint64_t roots[MAX_ROOTS]; /* self-mapped tables */
	unsigned int nr_roots;
};

static bool self_mapped(const uint64_t *e, uint64_t pa)
{
	unsigned int i;

	for (i = KERNEL_HALF_FIRST; i < 512; i++)
		if ((e[i] & X86_PTE_PRESENT) && (e[i] & X86_PTE_ADDR) == pa)
			return true;
	return false;
}

/* Kernel CodeView records in @page (4-byte aligned, the name NUL-terminated in the page). */
static void records_in(const uint8_t *page, uint64_t pa, struct finds *f)
{
	const uint8_t *p = page, *end = page + X86_PAGE_SIZE;

	while (f->nr_records < MAX_RECORDS &&
	       (p = memmem(p, (size_t)(end - p), "RSDS", 4)) != NULL) {
		size_t off = (size_t)(p - page), room = X86_PAGE_SIZE - off;

		if (!(off & 3) && room > CV_NAME &&
		    memchr(p + CV_NAME, 0, room - CV_NAME) != NULL &&
		    probe_kernel_pdb((const char *)p + CV_NAME))
			f->records[f->nr_records++] = pa + off;
		p++;
	}
}

static void scan_range(const struct svmtrace_vmi_mem *mem, uint64_t gpa, uint64_t size,
		       struct finds *f)
{
	uint64_t page[X86_PAGE_SIZE / 8], pa;

	for (pa = (gpa + X86_PAGE_SIZE - 1) & ~(X86_PAGE_SIZE - 1);
	     pa + X86_PAGE_SIZE <= gpa + size; pa += X86_PAGE_SIZE) {
		if (svmtrace_vmi_mem_read(mem, pa, page, sizeof(page), NULL))
			continue;
		records_in((const uint8_t *)page, pa, f);
		if (f->nr_roots < MAX_ROOTS && self_mapped(page, pa))
			f->roots[f->nr_roots++] = pa;
	}
}

/*
 * A source that does not list its RAM (a live VM) is read 2 MiB at a time
 * where the first page reads: all of the first 4 GiB (holes for MMIO and
 * the PCI window in between), then on from 4 GiB up to the first hole.
 */
static void scan_unlisted(const struct svmtrace_vmi_mem *mem, struct finds *f)
{
	uint64_t chunk, probe;

	for (chunk = 0; chunk < UNLISTED_MAX; chunk += UNLISTED_CHUNK) {
		if (svmtrace_vmi_mem_read(mem, chunk, &probe, sizeof(probe), NULL)) {
			if (chunk >= UNLISTED_LOW)
				break;
			continue;
		}
		scan_range(mem, chunk, UNLISTED_CHUNK, f);
	}
}

static void scan_pages(const struct svmtrace_vmi_mem *mem, struct finds *f)
{
	uint64_t gpa, size;
	unsigned int r;

	if (!svmtrace_vmi_mem_range_count(mem))
		scan_unlisted(mem, f);
	for (r = 0; r < svmtrace_vmi_mem_range_count(mem); r++) {
		svmtrace_vmi_mem_range(mem, r, &gpa, &size);
		scan_range(mem, gpa, size, f);
	}
}

struct lookup {
	const struct svmtrace_vmi_mem *mem;
	uint64_t root, page;
	int levels;
	unsigned int budget;
};

/* Find a leaf under @table (at @level, mapping from @prefix) that maps l->page. */
static bool walk(struct lookup *l, uint64_t table, int level, uint64_t prefix, uint64_t *va)
{
	uint64_t e[512];
	unsigned int i;

	if (!l->budget--)
		return false;
	if (svmtrace_vmi_mem_read(l->mem, table, e, sizeof(e), NULL))
		return false;
	for (i = level == l->levels ? KERNEL_HALF_FIRST : 0; i < 512; i++) {
		uint64_t span = x86_level_span(level), addr = e[i] & X86_PTE_ADDR;
		uint64_t at = prefix | (uint64_t)i * span;

		if (!(e[i] & X86_PTE_PRESENT))
			continue;
		if (level == X86_PTE ||
		    ((level == X86_PDE || level == X86_PDPTE) && (e[i] & X86_PTE_PS))) {
			addr &= ~(span - 1);
			if (l->page - addr < span) {
				*va = at + (l->page - addr);
				return true;
			}
			continue;
		}
		if (addr == l->root) /* the self-map: tables, not the kernel */
			continue;
		if (walk(l, addr, level - 1, at, va))
			return true;
	}
	return false;
}

/* The kernel-half VA at which @root maps guest-physical @pa. */
static bool find_va(const struct probe *pr, uint64_t root, uint64_t pa, uint64_t *va)
{
	int levels = (int)pr->s.kernel.paging_levels;
	struct lookup l = { pr->s.mem, root, pa & ~(X86_PAGE_SIZE - 1), levels, WALK_MAX_TABLES };
	uint64_t upper = ~0ULL << (12 + 9 * levels); /* sign extension of the kernel half */

	if (!walk(&l, root, levels, upper, va))
		return false;
	*va |= pa & (X86_PAGE_SIZE - 1);
	return true;
}

int probe_pescan(const struct probe *pr, struct svmtrace_vmi_kernel *k, struct svmtrace_error *err)
{
	uint64_t roots[PROBE_MAX_DTBS + MAX_ROOTS];
	unsigned int nr = 0, i, r;
	struct finds f = { 0 };

	scan_pages(pr->s.mem, &f);
	if (!f.nr_records)
		return vmi_fail(
			err, SVMTRACE_E_NOT_FOUND,
			"no CodeView record naming a kernel PDB in the physical memory of %s",
			svmtrace_vmi_mem_name(pr->s.mem));
	for (i = 0; i < pr->nr_dtbs; i++)
		roots[nr++] = pr->dtbs[i];
	for (i = 0; i < f.nr_roots; i++)
		roots[nr++] = f.roots[i];
	for (i = 0; i < f.nr_records; i++)
		for (r = 0; r < nr; r++) {
			uint64_t va;

			if (!find_va(pr, roots[r], f.records[i], &va) ||
			    probe_scan_down(pr, roots[r], va, 1, k, NULL))
				continue;
			k->anchor = va;
			snprintf(k->source, sizeof(k->source), "CodeView record at GPA 0x%llx",
				 (unsigned long long)f.records[i]);
			return 0;
		}
	return vmi_fail(err, SVMTRACE_E_NOT_FOUND,
			"%u kernel CodeView record(s) in physical memory (the first at GPA "
			"0x%llx), but none of %u page-table roots maps one inside ntoskrnl",
			f.nr_records, (unsigned long long)f.records[0], nr);
}
