/* SPDX-License-Identifier: GPL-2.0 */
/*
 * x86-64 paging as the hardware walks it: PML4 -> PDPT -> PD -> PT with
 * 48-bit linear addresses, or with CR4.LA57 five levels (PML5 first) and
 * 57-bit addresses; 1 GiB and 2 MiB leaves, PCID bits of CR3 masked.  What
 * a not-present entry means is the operating system's business: the caller
 * passes a decoder (Windows' software PTE states live in win_pte.c).
 */
#ifndef SVMTRACE_VMI_X86_WALK_H
#define SVMTRACE_VMI_X86_WALK_H

#include <svmtrace/vmi.h>

#define X86_PAGE_SIZE	4096ULL
#define X86_PTE_PRESENT (1ULL << 0)
#define X86_PTE_PS	(1ULL << 7)	      /* large page in a PDPTE or PDE */
#define X86_PTE_ADDR	0x000ffffffffff000ULL /* bits 51:12 */
#define X86_CR3_ADDR	X86_PTE_ADDR	      /* CR3 bits 11:0 are PCID/flags */
#define X86_CR4_LA57	(1ULL << 12)	      /* five-level paging */

/* Table levels, named by the entry they hold. */
enum x86_level { X86_PTE = 1, X86_PDE = 2, X86_PDPTE = 3, X86_PML4E = 4, X86_PML5E = 5 };

/* How many levels a guest's tables have: 4, or 5 with CR4.LA57. */
int x86_paging_levels(uint64_t cr4);

const char *x86_level_name(int level);

/* Bytes of address space one entry at @level maps. */
uint64_t x86_level_span(int level);

/* True if @va is canonical with @levels of paging (48- or 57-bit addresses). */
int x86_canonical(uint64_t va, int levels);

/*
 * Decoder for not-present entries.  It either resolves the entry to the
 * physical address of a 4 KiB frame (the next table, or the page itself
 * at X86_PTE) and returns 0, filling out->state / out->pte / prototype_va
 * for leaves, or returns a negative status with the reason in err.
 */
struct x86_decoder {
	int (*not_present)(const void *ctx, int level, uint64_t entry, uint64_t va, uint64_t *frame,
			   struct svmtrace_vmi_translation *out, struct svmtrace_error *err);
	const void *ctx;
};

/*
 * Translate @va through @dtb, the root of @levels (4 or 5) levels of
 * tables.  With @dec NULL only hardware-valid entries are followed.  On
 * failure out->page_size is the span of address space the failing entry
 * covers, so scanners can skip a whole hole at once.
 */
int x86_translate(const struct svmtrace_vmi_mem *mem, uint64_t dtb, int levels, uint64_t va,
		  const struct x86_decoder *dec, struct svmtrace_vmi_translation *out,
		  struct svmtrace_error *err);

#endif
