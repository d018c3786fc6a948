// SPDX-License-Identifier: GPL-2.0
/*
 * Binding a program's imports to the DLL, as Windows' loader fills the
 * import address table: for each import descriptor naming the DLL, each
 * entry of its lookup table (a hint/name RVA; ordinals are not used here)
 * is looked up in the DLL's export directory and the IAT slot gets the
 * DLL's base plus the export's RVA.  The images are the lab's own, but
 * every RVA is checked against the image all the same.
 */
#include "winbind.h"
#include "lib/vmi/pe.h"

#include <string.h>
#include <strings.h>

#define IMPORT_DIRECTORY 1
#define DESCRIPTOR_SIZE	 20
#define ORDINAL_FLAG	 (1ULL << 63)

static uint32_t get32(const struct gen_pe *pe, uint32_t rva, const char *path)
{
	uint32_t v;

	if (rva > pe->size_of_image || pe->size_of_image - rva < 4)
		gen_die("%s: RVA 0x%x outside the image", path, rva);
	memcpy(&v, pe->image + rva, 4);
	return v;
}

static const char *name_at(const struct gen_pe *pe, uint32_t rva, const char *path)
{
	if (rva >= pe->size_of_image ||
	    !memchr(pe->image + rva, 0, pe->size_of_image - rva))
		gen_die("%s: name at RVA 0x%x outside the image", path, rva);
	return (const char *)pe->image + rva;
}

static int dll_read(const void *ctx, uint32_t rva, void *buf, size_t len,
		    struct svmtrace_error *err)
{
	const struct gen_pe *pe = ctx;

	if (rva > pe->size_of_image || len > pe->size_of_image - rva)
		return SVMTRACE_E_FORMAT;
	memcpy(buf, pe->image + rva, len);
	return 0;
}

uint32_t win_export_rva(const struct gen_pe *dll, const char *dll_path, const char *name)
{
	struct pe_reader r = { dll_read, dll };
	struct svmtrace_error err;
	struct pe_image img;
	uint32_t rva;

	if (pe_parse(&r, &img, &err) || pe_export_find(&r, &img, name, &rva, &err))
		gen_die("%s: %s", dll_path, err.message);
	return rva;
}

/* The IAT slots of one descriptor's imports. */
static int bind_descriptor(struct gen_pe *exe, const char *exe_path, uint32_t desc,
			   const struct gen_pe *dll, const char *dll_path, uint64_t dll_base)
{
	struct pe_reader r = { dll_read, dll };
	uint32_t lookup = get32(exe, desc, exe_path), iat = get32(exe, desc + 16, exe_path);
	struct svmtrace_error err;
	struct pe_image img;
	int bound = 0;

	if (pe_parse(&r, &img, &err))
		gen_die("%s: %s", dll_path, err.message);
	for (;; lookup += 8, iat += 8) {
		uint64_t entry = get32(exe, lookup, exe_path) |
				 (uint64_t)get32(exe, lookup + 4, exe_path) << 32;
		const char *name;
		uint32_t rva;

		if (!entry)
			return bound;
		if (entry & ORDINAL_FLAG)
			gen_die("%s: imports by ordinal (not used by the lab's programs)",
				exe_path);
		name = name_at(exe, (uint32_t)entry + 2, exe_path); /* after the hint */
		if (pe_export_find(&r, &img, name, &rva, &err))
			gen_die("%s imports %s, which %s does not export: %s", exe_path, name,
				dll_path, err.message);
		get32(exe, iat + 4, exe_path); /* the slot lies inside the image */
		memcpy(exe->image + iat, &(uint64_t){ dll_base + rva }, 8);
		bound++;
	}
}

int win_bind_imports(struct gen_pe *exe, const char *exe_path, const struct gen_pe *dll,
		     const char *dll_path, uint64_t dll_base)
{
	const char *dll_name = strrchr(dll_path, '/') ? strrchr(dll_path, '/') + 1 : dll_path;
	uint32_t nt = get32(exe, 0x3c, exe_path), dir, desc, bound = 0;

	dir = get32(exe, nt + 24 + 112 + 8 * IMPORT_DIRECTORY, exe_path);
	if (!dir)
		return 0;
	for (desc = dir; get32(exe, desc + 12, exe_path); desc += DESCRIPTOR_SIZE) {
		const char *name = name_at(exe, get32(exe, desc + 12, exe_path), exe_path);

		if (strcasecmp(name, dll_name))
			gen_die("%s imports from %s; the guest has only %s", exe_path, name,
				dll_name);
		bound += (uint32_t)bind_descriptor(exe, exe_path, desc, dll, dll_path, dll_base);
	}
	return (int)bound;
}
