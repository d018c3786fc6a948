// SPDX-License-Identifier: GPL-2.0
/* Sparse guest-physical memory: page frame -> 4 KiB buffer. */
#include "gen.h"
#include "gen_hash.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SCATTER_LOW  (16ULL << 20)
#define SCATTER_HIGH (1ULL << 30)

struct reserved {
	uint64_t pa, len;
};

struct gen_phys {
	uint64_t size;
	struct gen_hash index; /* pfn -> index into pages */
	uint8_t **pages;
	uint64_t *pfns; /* pfn of pages[i] */
	size_t nr_pages, cap;
	struct reserved res[8];
	int nr_res;
	uint64_t rng;
	int levels; /* of every address space's page tables */
};

void gen_die(const char *fmt, ...)
{
	va_list ap;

	fputs("vmi-genimage: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

struct gen_phys *gen_phys_new(uint64_t size, uint32_t seed)
{
	struct gen_phys *m = calloc(1, sizeof(*m));

	if (!m)
		gen_die("out of memory");
	if (size < 32ULL << 20 || size % GEN_PAGE)
		gen_die("memory size 0x%llx: at least 32 MiB, a multiple of 4 KiB",
			(unsigned long long)size);
	m->size = size;
	gen_hash_init(&m->index);
	m->rng = seed * 2654435761ULL + 1;
	m->levels = 4;
	return m;
}

void gen_phys_set_paging(struct gen_phys *m, int levels)
{
	if (levels != 4 && levels != 5)
		gen_die("%d levels of page tables (4 or 5)", levels);
	m->levels = levels;
}

int gen_phys_paging(const struct gen_phys *m)
{
	return m->levels;
}

void gen_phys_free(struct gen_phys *m)
{
	size_t i;

	for (i = 0; i < m->nr_pages; i++)
		free(m->pages[i]);
	free(m->pages);
	free(m->pfns);
	gen_hash_free(&m->index);
	free(m);
}

uint64_t gen_phys_size(const struct gen_phys *m)
{
	return m->size;
}

uint8_t *gen_phys_page(struct gen_phys *m, uint64_t pa)
{
	uint64_t i;

	if (pa % GEN_PAGE || pa >= m->size)
		gen_die("page 0x%llx is not a page of the %llu-byte memory", (unsigned long long)pa,
			(unsigned long long)m->size);
	if (gen_hash_get(&m->index, pa / GEN_PAGE, &i))
		return m->pages[i];
	if (m->nr_pages == m->cap) {
		m->cap = m->cap ? m->cap * 2 : 1024;
		m->pages = realloc(m->pages, m->cap * sizeof(*m->pages));
		m->pfns = realloc(m->pfns, m->cap * sizeof(*m->pfns));
		if (!m->pages || !m->pfns)
			gen_die("out of memory");
	}
	m->pages[m->nr_pages] = calloc(1, GEN_PAGE);
	if (!m->pages[m->nr_pages])
		gen_die("out of memory");
	m->pfns[m->nr_pages] = pa / GEN_PAGE;
	gen_hash_put(&m->index, pa / GEN_PAGE, m->nr_pages);
	return m->pages[m->nr_pages++];
}

void gen_phys_reserve(struct gen_phys *m, uint64_t pa, uint64_t len)
{
	if (m->nr_res == (int)(sizeof(m->res) / sizeof(m->res[0])))
		gen_die("too many reserved regions");
	m->res[m->nr_res++] = (struct reserved){ pa, len };
}

static uint64_t next_random(struct gen_phys *m)
{
	m->rng = m->rng * 6364136223846793005ULL + 1442695040888963407ULL;
	return m->rng >> 17;
}

/* Does [pa, pa + len) overlap a reserved region? */
static int is_reserved(const struct gen_phys *m, uint64_t pa, uint64_t len)
{
	int i;

	for (i = 0; i < m->nr_res; i++)
		if (m->res[i].pa < pa + len && pa < m->res[i].pa + m->res[i].len)
			return 1;
	return 0;
}

/* Pages scatter below here; above it (in memory of 2 GiB or more) large
 * pages find free runs. */
static uint64_t scatter_top(const struct gen_phys *m)
{
	return m->size >= 2 * SCATTER_HIGH ? SCATTER_HIGH : m->size;
}

uint64_t gen_phys_alloc(struct gen_phys *m)
{
	uint64_t frames = (scatter_top(m) - SCATTER_LOW) / GEN_PAGE, i;
	int tries;

	for (tries = 0; tries < 1000000; tries++) {
		uint64_t pa = SCATTER_LOW + next_random(m) % frames * GEN_PAGE;

		if (!is_reserved(m, pa, GEN_PAGE) && !gen_hash_get(&m->index, pa / GEN_PAGE, &i)) {
			gen_phys_page(m, pa);
			return pa;
		}
	}
	gen_die("guest memory is full");
}

bool gen_phys_has(const struct gen_phys *m, uint64_t pa)
{
	uint64_t i;

	return gen_hash_get(&m->index, pa / GEN_PAGE, &i);
}

uint64_t gen_phys_alloc_large(struct gen_phys *m, uint64_t size)
{
	uint64_t low = scatter_top(m) < m->size ? scatter_top(m) : SCATTER_LOW;
	uint64_t first = (low + size - 1) / size, slots = m->size / size, i;
	int tries;

	if (slots <= first)
		gen_die("a %llu MiB page needs more than %llu MiB of memory (--mem-size)",
			(unsigned long long)(size >> 20), (unsigned long long)(m->size >> 20));
	for (tries = 0; tries < 1000; tries++) {
		uint64_t pa = (first + next_random(m) % (slots - first)) * size;
		bool free = !is_reserved(m, pa, size);

		for (i = 0; free && i < m->nr_pages; i++)
			free = m->pfns[i] * GEN_PAGE - pa >= size;
		if (free) {
			gen_phys_reserve(m, pa, size);
			return pa;
		}
	}
	gen_die("no free %llu MiB run of memory left", (unsigned long long)(size >> 20));
}

void gen_phys_write(struct gen_phys *m, uint64_t pa, const void *buf, size_t len)
{
	const uint8_t *src = buf;

	while (len) {
		size_t in = pa % GEN_PAGE, n = GEN_PAGE - in < len ? GEN_PAGE - in : len;

		memcpy(gen_phys_page(m, pa - in) + in, src, n);
		src += n;
		pa += n;
		len -= n;
	}
}

static const struct gen_phys *sort_m;

static int by_pfn(const void *a, const void *b)
{
	uint64_t x = sort_m->pfns[*(const size_t *)a], y = sort_m->pfns[*(const size_t *)b];

	return x < y ? -1 : x > y;
}

void gen_phys_each(const struct gen_phys *m,
		   void (*fn)(void *ctx, uint64_t pa, const uint8_t *page), void *ctx)
{
	size_t *order = calloc(m->nr_pages ? m->nr_pages : 1, sizeof(*order)), i;

	if (!order)
		gen_die("out of memory");
	for (i = 0; i < m->nr_pages; i++)
		order[i] = i;
	sort_m = m;
	qsort(order, m->nr_pages, sizeof(*order), by_pfn);
	for (i = 0; i < m->nr_pages; i++)
		fn(ctx, m->pfns[order[i]] * GEN_PAGE, m->pages[order[i]]);
	free(order);
}
