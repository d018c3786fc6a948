// SPDX-License-Identifier: GPL-2.0
#include "lib/common/le.h"
#include "lib/vmi/pe.h"
#include "lib/vmi/vmi_error.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PE_MAX_HEADER_OFFSET 0x10000 /* e_lfanew beyond this is not a real image */
#define PE_MACHINE_AMD64     0x8664
#define PE_MAGIC_PE32PLUS    0x20b
#define PE_DEBUG_CODEVIEW    2
#define PE_MAX_DEBUG_ENTRIES 64
#define PE_MAX_NAME	     256

/* Read [rva, rva + len) of an image whose size is known to be @limit. */
static int read_in(const struct pe_reader *r, uint32_t limit, uint32_t rva, void *buf, size_t len,
		   const char *what, struct svmtrace_error *err)
{
	int rc;

	if (rva > limit || len > limit - rva)
		return vmi_fail(err, SVMTRACE_E_FORMAT,
				"PE %s at RVA 0x%x (+%zu) lies outside the image (0x%x bytes)",
				what, rva, len, limit);
	rc = r->read(r->ctx, rva, buf, len, err);
	return rc ? vmi_prefix(err, rc, "PE %s at RVA 0x%x", what, rva) : 0;
}

/* A NUL-terminated name at @rva, read in small pieces (it may end a page early). */
static int read_name(const struct pe_reader *r, uint32_t limit, uint32_t rva, char *out,
		     size_t size, struct svmtrace_error *err)
{
	size_t got = 0;

	while (got + 1 < size) {
		size_t chunk = 16 - ((rva + got) & 15), i;
		uint8_t buf[16];
		int rc;

		if (rva + got >= limit)
			break;
		if (chunk > limit - (rva + got))
			chunk = limit - (rva + got);
		rc = read_in(r, limit, (uint32_t)(rva + got), buf, chunk, "name", err);
		if (rc)
			return rc;
		for (i = 0; i < chunk && got + 1 < size; i++) {
			out[got++] = (char)buf[i];
			if (!buf[i])
				return 0;
		}
	}
	out[got] = '\0';
	return vmi_fail(err, SVMTRACE_E_FORMAT,
			"PE name at RVA 0x%x is not terminated "
			"within %zu bytes",
			rva, size - 1);
}

static int parse_sections(const struct pe_reader *r, struct pe_image *img, uint32_t at,
			  struct svmtrace_error *err)
{
	uint8_t sh[40];
	unsigned int i;
	int rc;

	for (i = 0; i < img->nr_sections; i++) {
		struct pe_section *s = &img->sections[i];

		rc = read_in(r, img->size_of_headers, at + 40 * i, sh, sizeof(sh), "section header",
			     err);
		if (rc)
			return rc;
		memcpy(s->name, sh, 8);
		s->name[8] = '\0';
		s->virtual_size = le32(sh + 8);
		s->rva = le32(sh + 12);
		s->characteristics = le32(sh + 36);
		if (s->rva >= img->size_of_image || s->virtual_size > img->size_of_image - s->rva)
			return vmi_fail(err, SVMTRACE_E_FORMAT,
					"PE section %u (%s) at RVA 0x%x size 0x%x lies outside "
					"SizeOfImage 0x%x",
					i, s->name, s->rva, s->virtual_size, img->size_of_image);
	}
	return 0;
}

int pe_parse(const struct pe_reader *r, struct pe_image *img, struct svmtrace_error *err)
{
	uint8_t dos[64], nt[24], opt[240];
	uint32_t lfanew, opt_size, i;
	int rc;

	memset(img, 0, sizeof(*img));
	rc = read_in(r, PE_MAX_HEADER_OFFSET, 0, dos, sizeof(dos), "DOS header", err);
	if (rc)
		return rc;
	if (dos[0] != 'M' || dos[1] != 'Z')
		return vmi_fail(err, SVMTRACE_E_FORMAT, "no MZ signature at the image base");
	lfanew = le32(dos + 0x3c);
	rc = read_in(r, PE_MAX_HEADER_OFFSET, lfanew, nt, sizeof(nt), "NT headers", err);
	if (rc)
		return rc;
	if (memcmp(nt, "PE\0\0", 4))
		return vmi_fail(err, SVMTRACE_E_FORMAT, "no PE signature at e_lfanew 0x%x", lfanew);
	img->machine = le16(nt + 4);
	img->nr_sections = le16(nt + 6);
	img->time_date_stamp = le32(nt + 8);
	opt_size = le16(nt + 20);
	if (img->machine != PE_MACHINE_AMD64)
		return vmi_fail(err, SVMTRACE_E_FORMAT, "PE machine 0x%x, expected x86-64 (0x%x)",
				img->machine, PE_MACHINE_AMD64);
	if (img->nr_sections > PE_MAX_SECTIONS || opt_size < 112 || opt_size > sizeof(opt))
		return vmi_fail(err, SVMTRACE_E_FORMAT,
				"PE has %u sections and a %u-byte optional header (at most %d "
				"and 112..%zu expected)",
				img->nr_sections, opt_size, PE_MAX_SECTIONS, sizeof(opt));
	rc = read_in(r, PE_MAX_HEADER_OFFSET, lfanew + 24, opt, opt_size, "optional header", err);
	if (rc)
		return rc;
	if (le16(opt) != PE_MAGIC_PE32PLUS)
		return vmi_fail(err, SVMTRACE_E_FORMAT,
				"optional header magic 0x%x, expected PE32+ (0x%x)", le16(opt),
				PE_MAGIC_PE32PLUS);
	img->entry_rva = le32(opt + 16);
	img->preferred_base = le64(opt + 24);
	img->size_of_image = le32(opt + 56);
	img->size_of_headers = le32(opt + 60);
	img->nr_dirs = le32(opt + 108);
	if (img->nr_dirs > 16)
		img->nr_dirs = 16;
	if (112 + 8 * img->nr_dirs > opt_size)
		img->nr_dirs = (opt_size - 112) / 8;
	if (!img->size_of_image || img->entry_rva >= img->size_of_image ||
	    img->size_of_headers > img->size_of_image ||
	    lfanew + 24 + opt_size + 40ULL * img->nr_sections > img->size_of_headers)
		return vmi_fail(err, SVMTRACE_E_FORMAT,
				"PE headers are inconsistent: SizeOfImage 0x%x, SizeOfHeaders "
				"0x%x, AddressOfEntryPoint 0x%x, %u sections",
				img->size_of_image, img->size_of_headers, img->entry_rva,
				img->nr_sections);
	for (i = 0; i < img->nr_dirs; i++) {
		img->dir[i].rva = le32(opt + 112 + 8 * i);
		img->dir[i].size = le32(opt + 116 + 8 * i);
	}
	return parse_sections(r, img, lfanew + 24 + opt_size, err);
}

const struct pe_section *pe_section_of(const struct pe_image *img, uint32_t rva)
{
	unsigned int i;

	for (i = 0; i < img->nr_sections; i++) {
		const struct pe_section *s = &img->sections[i];

		if (rva >= s->rva && rva - s->rva < s->virtual_size)
			return s;
	}
	return NULL;
}

static void format_id(struct pe_codeview *cv)
{
	char *p = cv->id;
	int i;

	p += sprintf(p, "%08X%04X%04X", le32(cv->guid), le16(cv->guid + 4), le16(cv->guid + 6));
	for (i = 8; i < 16; i++)
		p += sprintf(p, "%02X", cv->guid[i]);
	sprintf(p, "-%u", cv->age);
}

static int read_rsds(const struct pe_reader *r, const struct pe_image *img, uint32_t rva,
		     uint32_t size, struct pe_codeview *out, struct svmtrace_error *err)
{
	uint8_t head[24];
	uint64_t end;
	int rc;

	if (size < sizeof(head) + 1)
		return vmi_fail(err, SVMTRACE_E_FORMAT,
				"CodeView record at RVA 0x%x is %u bytes, too short for RSDS", rva,
				size);
	rc = read_in(r, img->size_of_image, rva, head, sizeof(head), "CodeView record", err);
	if (rc)
		return rc;
	if (memcmp(head, "RSDS", 4))
		return vmi_fail(err, SVMTRACE_E_FORMAT,
				"CodeView record at RVA 0x%x is not RSDS (PDB 7.0)", rva);
	memcpy(out->guid, head + 4, 16);
	out->age = le32(head + 20);
	end = (uint64_t)rva + size;
	rc = read_name(r, end < img->size_of_image ? (uint32_t)end : img->size_of_image, rva + 24,
		       out->pdb_name, sizeof(out->pdb_name), err);
	if (rc)
		return rc;
	format_id(out);
	return 0;
}

int pe_codeview(const struct pe_reader *r, const struct pe_image *img, struct pe_codeview *out,
		struct svmtrace_error *err)
{
	uint32_t rva = img->dir[PE_DIR_DEBUG].rva, n, i;
	uint8_t d[28];
	int rc;

	memset(out, 0, sizeof(*out));
	n = img->nr_dirs > PE_DIR_DEBUG ? img->dir[PE_DIR_DEBUG].size / 28 : 0;
	if (n > PE_MAX_DEBUG_ENTRIES)
		n = PE_MAX_DEBUG_ENTRIES;
	for (i = 0; i < n; i++) {
		rc = read_in(r, img->size_of_image, rva + 28 * i, d, sizeof(d), "debug directory",
			     err);
		if (rc)
			return rc;
		if (le32(d + 12) == PE_DEBUG_CODEVIEW)
			return read_rsds(r, img, le32(d + 20), le32(d + 16), out, err);
	}
	return vmi_fail(err, SVMTRACE_E_NOT_FOUND, "PE has no CodeView debug record");
}

struct pe_exports {
	uint32_t name_rva, base, nr_functions, nr_names, functions, names, ordinals;
};

static int read_exports(const struct pe_reader *r, const struct pe_image *img,
			struct pe_exports *ex, struct svmtrace_error *err)
{
	uint8_t d[40];
	int rc;

	if (img->nr_dirs <= PE_DIR_EXPORT || !img->dir[PE_DIR_EXPORT].rva)
		return vmi_fail(err, SVMTRACE_E_NOT_FOUND, "PE has no export directory");
	rc = read_in(r, img->size_of_image, img->dir[PE_DIR_EXPORT].rva, d, sizeof(d),
		     "export directory", err);
	if (rc)
		return rc;
	ex->name_rva = le32(d + 12);
	ex->base = le32(d + 16);
	ex->nr_functions = le32(d + 20);
	ex->nr_names = le32(d + 24);
	ex->functions = le32(d + 28);
	ex->names = le32(d + 32);
	ex->ordinals = le32(d + 36);
	if (ex->nr_names > img->size_of_image / 4 || ex->nr_functions > img->size_of_image / 4)
		return vmi_fail(err, SVMTRACE_E_FORMAT,
				"export directory claims %u names and %u functions, more than "
				"the image can hold",
				ex->nr_names, ex->nr_functions);
	return 0;
}

int pe_export_dll_name(const struct pe_reader *r, const struct pe_image *img, char *name,
		       size_t size, struct svmtrace_error *err)
{
	struct pe_exports ex;
	int rc = read_exports(r, img, &ex, err);

	return rc ? rc : read_name(r, img->size_of_image, ex.name_rva, name, size, err);
}

/* Export name number @i into @name. */
static int export_name(const struct pe_reader *r, const struct pe_image *img,
		       const struct pe_exports *ex, uint32_t i, char *name,
		       struct svmtrace_error *err)
{
	uint8_t v[4];
	int rc = read_in(r, img->size_of_image, ex->names + 4 * i, v, 4, "export name table", err);

	return rc ? rc : read_name(r, img->size_of_image, le32(v), name, PE_MAX_NAME, err);
}

int pe_export_find(const struct pe_reader *r, const struct pe_image *img, const char *name,
		   uint32_t *rva, struct svmtrace_error *err)
{
	uint32_t lo = 0, hi, ordinal;
	struct pe_exports ex;
	char cur[PE_MAX_NAME];
	uint8_t v[4];
	int rc = read_exports(r, img, &ex, err);

	if (rc)
		return rc;
	hi = ex.nr_names;
	while (lo < hi) { /* the name table is sorted (PE specification) */
		uint32_t mid = lo + (hi - lo) / 2;
		int cmp;

		rc = export_name(r, img, &ex, mid, cur, err);
		if (rc)
			return rc;
		cmp = strcmp(name, cur);
		if (cmp < 0) {
			hi = mid;
		} else if (cmp > 0) {
			lo = mid + 1;
		} else {
			rc = read_in(r, img->size_of_image, ex.ordinals + 2 * mid, v, 2,
				     "export ordinal table", err);
			if (rc)
				return rc;
			ordinal = le16(v);
			if (ordinal >= ex.nr_functions)
				return vmi_fail(err, SVMTRACE_E_FORMAT,
						"export %s has ordinal index %u of %u", name,
						ordinal, ex.nr_functions);
			rc = read_in(r, img->size_of_image, ex.functions + 4 * ordinal, v, 4,
				     "export address table", err);
			if (rc)
				return rc;
			*rva = le32(v);
			if (*rva - img->dir[PE_DIR_EXPORT].rva < img->dir[PE_DIR_EXPORT].size)
				return vmi_fail(err, SVMTRACE_E_NOT_FOUND,
						"export %s is a forwarder", name);
			return 0;
		}
	}
	return vmi_fail(err, SVMTRACE_E_NOT_FOUND, "PE exports no %s", name);
}

#define PE_MAX_EXPORTS 65536 /* ordinals are 16 bits */

static int exports_walk(const struct pe_reader *r, const struct pe_image *img,
			const struct pe_exports *exp, uint8_t *named, pe_export_fn fn, void *ctx,
			struct svmtrace_error *err);

int pe_exports_each(const struct pe_reader *r, const struct pe_image *img, pe_export_fn fn,
		    void *ctx, struct svmtrace_error *err)
{
	uint8_t *named;
	struct pe_exports ex;
	int rc = read_exports(r, img, &ex, err);

	if (rc)
		return rc;
	if (ex.nr_functions > PE_MAX_EXPORTS)
		return vmi_fail(err, SVMTRACE_E_FORMAT, "export directory claims %u functions",
				ex.nr_functions);
	named = calloc(PE_MAX_EXPORTS / 8, 1);
	if (!named)
		return vmi_fail(err, SVMTRACE_E_NOMEM, "export list: out of memory");
	rc = exports_walk(r, img, &ex, named, fn, ctx, err);
	free(named);
	return rc;
}

static int exports_walk(const struct pe_reader *r, const struct pe_image *img,
			const struct pe_exports *exp, uint8_t *named, pe_export_fn fn, void *ctx,
			struct svmtrace_error *err)
{
	const struct pe_exports ex = *exp;
	char name[PE_MAX_NAME];
	uint32_t i, rva, idx;
	uint8_t v[4];
	int rc;

	for (i = 0; i < ex.nr_names; i++) {
		rc = read_in(r, img->size_of_image, ex.ordinals + 2 * i, v, 2,
			     "export ordinal table", err);
		if (!rc)
			rc = export_name(r, img, &ex, i, name, err);
		if (rc)
			return rc;
		idx = le16(v);
		if (idx >= ex.nr_functions)
			return vmi_fail(err, SVMTRACE_E_FORMAT,
					"export %s has ordinal index %u of %u", name, idx,
					ex.nr_functions);
		rc = read_in(r, img->size_of_image, ex.functions + 4 * idx, v, 4,
			     "export address table", err);
		if (rc)
			return rc;
		rva = le32(v);
		named[idx / 8] |= (uint8_t)(1u << (idx % 8));
		if (!rva || rva - img->dir[PE_DIR_EXPORT].rva < img->dir[PE_DIR_EXPORT].size)
			continue; /* a forwarder or an empty slot */
		rc = fn(ctx, name, ex.base + idx, rva);
		if (rc)
			return rc;
	}
	for (idx = 0; idx < ex.nr_functions; idx++) { /* exported by ordinal only */
		if (named[idx / 8] & (1u << (idx % 8)))
			continue;
		rc = read_in(r, img->size_of_image, ex.functions + 4 * idx, v, 4,
			     "export address table", err);
		if (rc)
			return rc;
		rva = le32(v);
		if (!rva || rva - img->dir[PE_DIR_EXPORT].rva < img->dir[PE_DIR_EXPORT].size)
			continue;
		rc = fn(ctx, NULL, ex.base + idx, rva);
		if (rc)
			return rc;
	}
	return 0;
}
