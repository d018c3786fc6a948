// SPDX-License-Identifier: GPL-2.0
/*
 * Loading a PE32+ file the way the Windows loader maps it: headers at RVA 0,
 * each section's raw data at its VirtualAddress, the rest zero.  The entry
 * bytes are taken from the file itself (via the section table), so a test
 * can compare them with what the library finds in guest memory.
 */
#include "gen.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint16_t get16(const uint8_t *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

static uint8_t *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf;
	long n;

	if (!f || fseek(f, 0, SEEK_END) || (n = ftell(f)) <= 0 || fseek(f, 0, SEEK_SET))
		gen_die("%s: cannot read", path);
	buf = malloc((size_t)n);
	if (!buf || fread(buf, 1, (size_t)n, f) != (size_t)n)
		gen_die("%s: cannot read", path);
	fclose(f);
	*len = (size_t)n;
	return buf;
}

void gen_pe_load(const char *path, struct gen_pe *pe)
{
	uint32_t nt, headers, nsec, opt, i;
	const uint8_t *sec;
	int entry_found = 0;
	size_t len;
	uint8_t *file = slurp(path, &len);

	if (len < 0x200 || file[0] != 'M' || file[1] != 'Z' ||
	    (nt = get32(file + 0x3c)) > len - 264 || memcmp(file + nt, "PE\0\0", 4) ||
	    get16(file + nt + 24) != 0x20b)
		gen_die("%s: not a PE32+ file", path);
	nsec = get16(file + nt + 6);
	opt = get16(file + nt + 20);
	pe->entry_rva = get32(file + nt + 24 + 16);
	pe->image_base = get32(file + nt + 24 + 24) | (uint64_t)get32(file + nt + 24 + 28) << 32;
	pe->size_of_image = get32(file + nt + 24 + 56);
	if (get32(file + nt + 24 + 108) > 5) { /* NumberOfRvaAndSizes */
		pe->reloc_rva = get32(file + nt + 24 + 112 + 5 * 8);
		pe->reloc_size = get32(file + nt + 24 + 112 + 5 * 8 + 4);
	}
	headers = get32(file + nt + 24 + 60);
	sec = file + nt + 24 + opt;
	if (headers > len || pe->size_of_image < headers || sec + 40 * nsec > file + len)
		gen_die("%s: bad headers", path);
	pe->image = calloc(1, pe->size_of_image);
	if (!pe->image)
		gen_die("out of memory");
	memcpy(pe->image, file, headers);
	for (i = 0; i < nsec; i++, sec += 40) {
		uint32_t vsize = get32(sec + 8), va = get32(sec + 12);
		uint32_t raw = get32(sec + 16), off = get32(sec + 20);
		uint32_t n = raw < vsize ? raw : vsize;

		if (off > len || n > len - off || va > pe->size_of_image ||
		    n > pe->size_of_image - va)
			gen_die("%s: section %u lies outside the file or image", path, i);
		memcpy(pe->image + va, file + off, n);
		if (pe->entry_rva >= va && pe->entry_rva + 16 <= va + n) {
			memcpy(pe->entry_bytes, file + off + (pe->entry_rva - va), 16);
			entry_found = 1;
		}
	}
	if (!entry_found)
		gen_die("%s: entry point RVA 0x%x is not in a section's file data", path,
			pe->entry_rva);
	if (pe->reloc_rva > pe->size_of_image || pe->reloc_size > pe->size_of_image - pe->reloc_rva)
		gen_die("%s: base relocations outside the image", path);
	free(file);
}

static void put64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static uint64_t get64(const uint8_t *p)
{
	return get32(p) | (uint64_t)get32(p + 4) << 32;
}

uint8_t *gen_pe_relocated(const struct gen_pe *pe, uint64_t base)
{
	uint8_t *img = malloc(pe->size_of_image);
	uint64_t delta = base - pe->image_base;
	uint32_t at = pe->reloc_rva, end = pe->reloc_rva + pe->reloc_size;

	if (!img)
		gen_die("out of memory");
	memcpy(img, pe->image, pe->size_of_image);
	put64(img + get32(img + 0x3c) + 24 + 24, base);
	while (at + 8 <= end) { /* blocks: page RVA, block size, then 16-bit entries */
		uint32_t page = get32(img + at), size = get32(img + at + 4), i;

		if (size < 8 || size > end - at)
			gen_die("base relocation block at RVA 0x%x: size 0x%x", at, size);
		for (i = 8; i + 2 <= size; i += 2) {
			uint16_t e = get16(img + at + i);
			uint32_t rva = page + (e & 0xfff);

			if (e >> 12 == 0) /* IMAGE_REL_BASED_ABSOLUTE: padding */
				continue;
			if (e >> 12 != 10 || rva > pe->size_of_image - 8)
				gen_die("base relocation 0x%04x at RVA 0x%x: only DIR64 inside the "
					"image",
					e, page);
			put64(img + rva, get64(img + rva) + delta);
		}
		at += size;
	}
	return img;
}
