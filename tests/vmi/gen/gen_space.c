// SPDX-License-Identifier: GPL-2.0
/*
 * Building x86-64 page tables, and remembering what was mapped where so the
 * generator can write through virtual addresses without walking tables.
 */
#include "gen.h"
#include "gen_hash.h"

#include <stdlib.h>
#include <string.h>

#define ADDR_MASK   0x000ffffffffff000ULL
#define TABLE_FLAGS (GEN_P | GEN_RW | GEN_US)

struct gen_space {
	struct gen_phys *m;
	struct gen_space *kernel; /* consulted for upper-half VAs, may be NULL */
	uint64_t pml4;
	struct gen_hash pages; /* VA page -> PA page */
	struct gen_hash ptes;  /* VA page -> PA of its 4K leaf entry */
};

struct gen_space *gen_space_new(struct gen_phys *m, struct gen_space *kernel)
{
	struct gen_space *s = calloc(1, sizeof(*s));

	if (!s)
		gen_die("out of memory");
	s->m = m;
	s->kernel = kernel;
	s->pml4 = gen_phys_alloc(m);
	gen_hash_init(&s->pages);
	gen_hash_init(&s->ptes);
	return s;
}

uint64_t gen_space_pml4(const struct gen_space *s)
{
	return s->pml4;
}

static uint64_t *entry(struct gen_space *s, uint64_t table, uint64_t va, int level)
{
	unsigned int idx = (va >> (12 + 9 * (level - 1))) & 0x1ff;

	return (uint64_t *)gen_phys_page(s->m, table) + idx;
}

/* The table below @table's entry for @va at @level, created if needed. */
static uint64_t next_table(struct gen_space *s, uint64_t table, uint64_t va, int level)
{
	uint64_t *e = entry(s, table, va, level);

	if (!*e)
		*e = gen_phys_alloc(s->m) | TABLE_FLAGS; /* pages never move */
	if (*e & GEN_PS)
		gen_die("VA 0x%llx: a large page is in the way", (unsigned long long)va);
	return *e & ADDR_MASK;
}

void gen_map(struct gen_space *s, uint64_t va, uint64_t pa, uint64_t size, uint64_t flags)
{
	int leaf = size == GEN_1G ? 3 : size == GEN_2M ? 2 : 1;
	uint64_t table = s->pml4, off;
	int level;

	if (va % size || pa % size)
		gen_die("map 0x%llx -> 0x%llx: not aligned to 0x%llx", (unsigned long long)va,
			(unsigned long long)pa, (unsigned long long)size);
	for (level = gen_phys_paging(s->m); level > leaf; level--)
		table = next_table(s, table, va, level);
	*entry(s, table, va, leaf) = pa | flags | GEN_P | (leaf > 1 ? GEN_PS : 0);
	if (leaf == 1)
		gen_hash_put(&s->ptes, va / GEN_PAGE, table + 8 * ((va >> 12) & 0x1ff));
	for (off = 0; off < size; off += GEN_PAGE)
		gen_hash_put(&s->pages, (va + off) / GEN_PAGE, pa + off);
}

void gen_map_new(struct gen_space *s, uint64_t va, uint64_t npages, uint64_t flags)
{
	uint64_t i;

	for (i = 0; i < npages; i++)
		gen_map(s, va + i * GEN_PAGE, gen_phys_alloc(s->m), GEN_PAGE, flags);
}

void gen_set_pte(struct gen_space *s, uint64_t va, uint64_t value)
{
	uint64_t at;

	if (!gen_hash_get(&s->ptes, va / GEN_PAGE, &at))
		gen_die("VA 0x%llx has no 4K PTE to replace", (unsigned long long)va);
	gen_phys_write(s->m, at, &value, sizeof(value));
}

uint64_t gen_space_pte_pa(const struct gen_space *s, uint64_t va)
{
	uint64_t at;

	if (!gen_hash_get(&s->ptes, va / GEN_PAGE, &at))
		gen_die("VA 0x%llx has no 4K PTE", (unsigned long long)va);
	return at;
}

int gen_space_has(const struct gen_space *s, uint64_t va)
{
	uint64_t pa;

	return gen_hash_get(&s->pages, va / GEN_PAGE, &pa);
}

uint64_t gen_space_pa(const struct gen_space *s, uint64_t va)
{
	uint64_t pa;

	if (gen_hash_get(&s->pages, va / GEN_PAGE, &pa))
		return pa + va % GEN_PAGE;
	if (s->kernel && va >> 63)
		return gen_space_pa(s->kernel, va);
	gen_die("VA 0x%llx was never mapped", (unsigned long long)va);
}

void gen_vwrite(struct gen_space *s, uint64_t va, const void *buf, size_t len)
{
	const uint8_t *src = buf;

	while (len) {
		size_t n = GEN_PAGE - va % GEN_PAGE < len ? GEN_PAGE - va % GEN_PAGE : len;

		gen_phys_write(s->m, gen_space_pa(s, va), src, n);
		src += n;
		va += n;
		len -= n;
	}
}

void gen_vwrite_u64(struct gen_space *s, uint64_t va, uint64_t v)
{
	gen_vwrite(s, va, &v, sizeof(v));
}

void gen_vwrite_u32(struct gen_space *s, uint64_t va, uint32_t v)
{
	gen_vwrite(s, va, &v, sizeof(v));
}

void gen_vwrite_u16(struct gen_space *s, uint64_t va, uint16_t v)
{
	gen_vwrite(s, va, &v, sizeof(v));
}

void gen_space_share(struct gen_space *to, const struct gen_space *from, int first, int last)
{
	uint64_t *src = (uint64_t *)gen_phys_page(to->m, from->pml4);
	uint64_t copy[512];

	memcpy(copy, src, sizeof(copy));
	memcpy((uint64_t *)gen_phys_page(to->m, to->pml4) + first, copy + first,
	       (size_t)(last - first + 1) * sizeof(uint64_t));
}

uint64_t gen_space_top_entry(const struct gen_space *s, int slot)
{
	return ((const uint64_t *)gen_phys_page(s->m, s->pml4))[slot];
}

void gen_space_self_map(struct gen_space *s, int slot)
{
	((uint64_t *)gen_phys_page(s->m, s->pml4))[slot] = s->pml4 | GEN_P | GEN_RW | GEN_NX;
}
