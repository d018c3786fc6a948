// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target: the PE parser.  The input is a PE image as the loader
 * maps it (RVA = offset); the first byte picks how much of it is "resident",
 * as pages of a guest image may be missing.
 */
#include "lib/vmi/pe.h"

#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct image {
	const uint8_t *bytes;
	size_t size;
};

static int read_image(const void *ctx, uint32_t rva, void *buf, size_t len,
		      struct svmtrace_error *err)
{
	const struct image *img = ctx;

	if (rva > img->size || len > img->size - rva) {
		err->status = SVMTRACE_E_NOT_RESIDENT;
		strcpy(err->message, "not resident");
		return err->status;
	}
	memcpy(buf, img->bytes + rva, len);
	return 0;
}

static int count_export(void *ctx, const char *name, uint32_t ordinal, uint32_t rva)
{
	(*(size_t *)ctx)++;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct image img = { data + 1, size ? size - 1 : 0 };
	struct pe_reader r = { read_image, &img };
	struct svmtrace_error err;
	struct pe_codeview cv;
	struct pe_image pe;
	char name[64];
	uint32_t rva;
	size_t exports = 0;

	if (!size)
		return 0;
	if (data[0] < 0x80 && img.size > (size_t)data[0] * 256)
		img.size = (size_t)data[0] * 256; /* a short "resident" prefix */
	if (pe_parse(&r, &pe, &err))
		return 0;
	pe_section_of(&pe, pe.entry_rva);
	pe_codeview(&r, &pe, &cv, &err);
	pe_export_dll_name(&r, &pe, name, sizeof(name), &err);
	pe_export_find(&r, &pe, "PsInitialSystemProcess", &rva, &err);
	pe_export_find(&r, &pe, "helper_add", &rva, &err);
	pe_exports_each(&r, &pe, count_export, &exports, &err); /* svmtraced's exports */
	return 0;
}
