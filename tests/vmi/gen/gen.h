/* SPDX-License-Identifier: GPL-2.0 */
/*
 * vmi-genimage: synthetic Windows x64 guest memory for the VMI tests.
 *
 * The generator is written apart from the library it tests: it builds page
 * tables, PE headers, kernel structures and ELF cores with its own code and
 * its own bookkeeping (it knows where it put every page), and shares only
 * the ISF loader to read offsets from the same profiles.
 */
#ifndef SVMTRACE_VMI_GEN_H
#define SVMTRACE_VMI_GEN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define GEN_PAGE 4096ULL
#define GEN_2M	 (2ULL << 20)
#define GEN_1G	 (1ULL << 30)

/* x86-64 entry bits the generator writes. */
#define GEN_P  0x1ULL
#define GEN_RW 0x2ULL
#define GEN_US 0x4ULL
#define GEN_A  0x20ULL
#define GEN_PS 0x80ULL
#define GEN_NX (1ULL << 63)

__attribute__((noreturn, format(printf, 1, 2))) void gen_die(const char *fmt, ...);

/* ---- sparse guest-physical memory (gen_phys.c) ---- */

struct gen_phys;

struct gen_phys *gen_phys_new(uint64_t size, uint32_t seed);
void gen_phys_free(struct gen_phys *m);
uint64_t gen_phys_size(const struct gen_phys *m);

/* Levels of page tables every address space gets: 4, or 5 (CR4.LA57). */
void gen_phys_set_paging(struct gen_phys *m, int levels);
int gen_phys_paging(const struct gen_phys *m);

/* The page at @pa (page-aligned), created zeroed; dies beyond memory. */
uint8_t *gen_phys_page(struct gen_phys *m, uint64_t pa);

/* A fresh page somewhere in memory, scattered like a real allocator's. */
uint64_t gen_phys_alloc(struct gen_phys *m);

/* Keep [pa, pa + len) out of gen_phys_alloc()'s reach (large pages). */
void gen_phys_reserve(struct gen_phys *m, uint64_t pa, uint64_t len);

/* A free, reserved, @size-aligned run of @size bytes (a large page), scattered. */
uint64_t gen_phys_alloc_large(struct gen_phys *m, uint64_t size);

/* Has the page at @pa been written or allocated? */
bool gen_phys_has(const struct gen_phys *m, uint64_t pa);

void gen_phys_write(struct gen_phys *m, uint64_t pa, const void *buf, size_t len);

/* Visit populated pages in address order. */
void gen_phys_each(const struct gen_phys *m,
		   void (*fn)(void *ctx, uint64_t pa, const uint8_t *page), void *ctx);

/* ---- address spaces (gen_space.c) ---- */

/*
 * An address space: a PML4 (a PML5 with five levels) the generator fills,
 * and its own record of which physical page backs each virtual page it
 * mapped (no page walk needed).
 */
struct gen_space;

struct gen_space *gen_space_new(struct gen_phys *m, struct gen_space *kernel);
uint64_t gen_space_pml4(const struct gen_space *s);

/* Map one page (@size 4K, 2M or 1G) of @va to @pa with leaf @flags. */
void gen_map(struct gen_space *s, uint64_t va, uint64_t pa, uint64_t size, uint64_t flags);

/* Allocate and map @npages fresh 4K pages at @va. */
void gen_map_new(struct gen_space *s, uint64_t va, uint64_t npages, uint64_t flags);

/* Replace the 4K leaf PTE of @va (which must be 4K-mapped) by @value. */
void gen_set_pte(struct gen_space *s, uint64_t va, uint64_t value);

/* Physical address of the 4K leaf PTE of @va (dies if none). */
uint64_t gen_space_pte_pa(const struct gen_space *s, uint64_t va);

/* Did this space (not its kernel) map @va? */
int gen_space_has(const struct gen_space *s, uint64_t va);

/* Physical address the generator put behind @va (dies if none). */
uint64_t gen_space_pa(const struct gen_space *s, uint64_t va);

void gen_vwrite(struct gen_space *s, uint64_t va, const void *buf, size_t len);
void gen_vwrite_u64(struct gen_space *s, uint64_t va, uint64_t v);
void gen_vwrite_u32(struct gen_space *s, uint64_t va, uint32_t v);
void gen_vwrite_u16(struct gen_space *s, uint64_t va, uint16_t v);

/* Copy @from's top-level (PML4 or PML5) entries [first, last] into @to. */
void gen_space_share(struct gen_space *to, const struct gen_space *from, int first, int last);

/* Top-level entry @slot of @s. */
uint64_t gen_space_top_entry(const struct gen_space *s, int slot);

/* Point top-level entry @slot of @s at its own table (Windows' self-map). */
void gen_space_self_map(struct gen_space *s, int slot);

/* ---- PE files (gen_pe.c) ---- */

struct gen_pe {
	uint8_t *image; /* the file laid out as the loader maps it */
	uint32_t size_of_image;
	uint32_t entry_rva;
	uint8_t entry_bytes[16]; /* read at the entry's file offset */
	uint64_t image_base;	 /* OptionalHeader.ImageBase */
	uint32_t reloc_rva, reloc_size; /* the base relocation directory */
};

void gen_pe_load(const char *path, struct gen_pe *pe);
/* A copy of the image as Windows maps it at @base: base relocations applied
 * (DIR64) and OptionalHeader.ImageBase = @base.  The caller frees it. */
uint8_t *gen_pe_relocated(const struct gen_pe *pe, uint64_t base);

/* ---- output (gen_out.c) ---- */

struct gen_vcpu {
	uint64_t cr3, gs_base, kernel_gs_base, idtr;
};

void gen_write_raw(const struct gen_phys *m, const char *path);
void gen_write_elf(const struct gen_phys *m, const struct gen_vcpu *vcpus, int nr_vcpus,
		   bool old_qemu_notes, const char *path);

#endif
