/* SPDX-License-Identifier: GPL-2.0 */
/*
 * PE32+ images as the Windows loader maps them (addressed by RVA): headers,
 * AddressOfEntryPoint, sections, the export directory and the CodeView
 * (RSDS) debug record.  The bytes come through a reader callback, so the
 * same parser reads an image in guest memory (where a page may be missing)
 * or in a buffer.  Every offset and count is checked before use.
 */
#ifndef SVMTRACE_VMI_PE_H
#define SVMTRACE_VMI_PE_H

#include <svmtrace/vmi.h>

#define PE_MAX_SECTIONS 96 /* the Windows loader's limit */
#define PE_DIR_EXPORT	0
#define PE_DIR_DEBUG	6

struct pe_reader {
	int (*read)(const void *ctx, uint32_t rva, void *buf, size_t len,
		    struct svmtrace_error *err);
	const void *ctx;
};

struct pe_section {
	char name[9];
	uint32_t rva, virtual_size, characteristics;
};

struct pe_image {
	uint16_t machine;
	uint32_t time_date_stamp; /* FileHeader.TimeDateStamp */
	uint32_t entry_rva;
	uint32_t size_of_image;
	uint32_t size_of_headers;
	uint64_t preferred_base;
	uint32_t nr_dirs;
	struct {
		uint32_t rva, size;
	} dir[16];
	uint16_t nr_sections;
	struct pe_section sections[PE_MAX_SECTIONS];
};

struct pe_codeview {
	uint8_t guid[16];
	uint32_t age;
	char pdb_name[64];
	char id[48]; /* "GUID-AGE" in the ISF naming */
};

/* Parse the DOS, NT and section headers of a PE32+ x86-64 image. */
int pe_parse(const struct pe_reader *r, struct pe_image *img, struct svmtrace_error *err);

/* The section holding @rva, or NULL. */
const struct pe_section *pe_section_of(const struct pe_image *img, uint32_t rva);

/* The first CodeView RSDS record of the debug directory. */
int pe_codeview(const struct pe_reader *r, const struct pe_image *img, struct pe_codeview *out,
		struct svmtrace_error *err);

/* The export directory's DLL name (e.g. "ntoskrnl.exe"). */
int pe_export_dll_name(const struct pe_reader *r, const struct pe_image *img, char *name,
		       size_t size, struct svmtrace_error *err);

/* RVA of the export named @name (forwarders are reported as not found). */
int pe_export_find(const struct pe_reader *r, const struct pe_image *img, const char *name,
		   uint32_t *rva, struct svmtrace_error *err);

/* Every export with an address (forwarders skipped): @fn gets the name (NULL
 * for an export by ordinal only), the ordinal (biased by Base) and the RVA. */
typedef int (*pe_export_fn)(void *ctx, const char *name, uint32_t ordinal, uint32_t rva);
int pe_exports_each(const struct pe_reader *r, const struct pe_image *img, pe_export_fn fn,
		    void *ctx, struct svmtrace_error *err);

#endif
