/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Small builders for the VMI unit tests (tests/unit/test_vmi_*.c): guest
 * memory in a buffer with page tables, and a minimal PE32+ image.  Header
 * only, because every unit test is its own program.
 */
#ifndef SVMTRACE_VMI_UNIT_FIXTURE_H
#define SVMTRACE_VMI_UNIT_FIXTURE_H

#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define FX_PAGE 4096ULL

/* Guest memory: a zeroed buffer and a bump allocator for table pages. */
struct fx_mem {
	uint8_t *buf;
	uint64_t size, next;
};

static inline void fx_init(struct fx_mem *m, uint64_t size, uint64_t first_free)
{
	m->buf = calloc(1, size);
	m->size = size;
	m->next = first_free;
}

static inline uint64_t fx_page(struct fx_mem *m)
{
	uint64_t pa = m->next;

	m->next += FX_PAGE;
	return pa;
}

static inline void fx_put64(struct fx_mem *m, uint64_t pa, uint64_t v)
{
	memcpy(m->buf + pa, &v, 8);
}

static inline uint64_t fx_get64(struct fx_mem *m, uint64_t pa)
{
	uint64_t v;

	memcpy(&v, m->buf + pa, 8);
	return v;
}

/*
 * Map @va -> @pa in the tables of @levels levels (4, or 5 for LA57) rooted
 * at @root, with a leaf at @level (1 = 4K PTE, 2 = 2M PDE, 3 = 1G PDPTE).
 */
static inline uint64_t fx_map_in(struct fx_mem *m, uint64_t root, int levels, uint64_t va,
				 uint64_t pa, int level, uint64_t flags)
{
	uint64_t table = root, at = 0;
	int l;

	for (l = levels; l >= level; l--) {
		at = table + 8 * ((va >> (12 + 9 * (l - 1))) & 0x1ff);
		if (l == level)
			break;
		if (!fx_get64(m, at))
			fx_put64(m, at, fx_page(m) | 7);
		table = fx_get64(m, at) & 0x000ffffffffff000ULL;
	}
	fx_put64(m, at, pa | flags | 1 | (level > 1 ? 0x80 : 0));
	return at; /* where the leaf entry lives */
}

/* The same in four-level tables. */
static inline uint64_t fx_map(struct fx_mem *m, uint64_t pml4, uint64_t va, uint64_t pa, int level,
			      uint64_t flags)
{
	return fx_map_in(m, pml4, 4, va, pa, level, flags);
}

/*
 * A minimal PE32+ image in @img (RVA layout, @size bytes): two sections,
 * an export directory naming @dll with the sorted exports @names at RVAs
 * @rvas, and an RSDS record for @pdb with GUID bytes 0..15 and @age.
 */
static inline void fx_pe(uint8_t *img, uint32_t size, uint32_t entry, const char *dll,
			 const char *const *names, const uint32_t *rvas, int n, const char *pdb,
			 uint32_t age)
{
	uint8_t *nt = img + 0x80, *opt = nt + 24, *sec = opt + 240, *ed = img + 0x1000;
	uint32_t v, at = 0x1100;
	uint16_t h;
	int i;

#define FX_P32(p, x) (v = (uint32_t)(x), memcpy((p), &v, 4))
#define FX_P16(p, x) (h = (uint16_t)(x), memcpy((p), &h, 2))
	memset(img, 0, size);
	img[0] = 'M', img[1] = 'Z';
	FX_P32(img + 0x3c, 0x80);
	memcpy(nt, "PE\0\0", 4);
	FX_P16(nt + 4, 0x8664);
	FX_P16(nt + 6, 2);
	FX_P16(nt + 20, 240);
	FX_P16(opt, 0x20b);
	FX_P32(opt + 16, entry);
	FX_P32(opt + 56, size);
	FX_P32(opt + 60, 0x1000);
	FX_P32(opt + 108, 16);
	FX_P32(opt + 112, 0x1000);
	FX_P32(opt + 116, 0x800);
	FX_P32(opt + 112 + 48, 0x1800);
	FX_P32(opt + 116 + 48, 28);
	memcpy(sec, ".rdata", 6);
	FX_P32(sec + 8, 0x1000);
	FX_P32(sec + 12, 0x1000);
	memcpy(sec + 40, ".text", 5);
	FX_P32(sec + 48, size - 0x2000);
	FX_P32(sec + 52, 0x2000);
	FX_P32(ed + 12, at);
	strcpy((char *)img + at, dll);
	at += (uint32_t)strlen(dll) + 1;
	FX_P32(ed + 20, n);
	FX_P32(ed + 24, n);
	FX_P32(ed + 28, 0x1040);
	FX_P32(ed + 32, 0x1080);
	FX_P32(ed + 36, 0x10c0);
	for (i = 0; i < n; i++) {
		FX_P32(img + 0x1040 + 4 * i, rvas[i]);
		FX_P32(img + 0x1080 + 4 * i, at);
		FX_P16(img + 0x10c0 + 2 * i, i);
		strcpy((char *)img + at, names[i]);
		at += (uint32_t)strlen(names[i]) + 1;
	}
	FX_P32(img + 0x1800 + 12, 2);
	FX_P32(img + 0x1800 + 16, 24 + strlen(pdb) + 1);
	FX_P32(img + 0x1800 + 20, 0x1900);
	memcpy(img + 0x1900, "RSDS", 4);
	for (i = 0; i < 16; i++)
		img[0x1904 + i] = (uint8_t)i;
	FX_P32(img + 0x1914, age);
	strcpy((char *)img + 0x1918, pdb);
#undef FX_P32
#undef FX_P16
}

/* Run @n tests as one suite; the exit status for main(). */
static inline int fx_run(const char *name, void (*setup)(void), void (*teardown)(void),
			 const TTest *const *tests, size_t n)
{
	Suite *s = suite_create(name);
	TCase *tc = tcase_create(name);
	SRunner *sr;
	size_t i;
	int failed;

	if (setup || teardown)
		tcase_add_checked_fixture(tc, setup, teardown);
	for (i = 0; i < n; i++)
		tcase_add_test(tc, tests[i]);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}

#endif
