// SPDX-License-Identifier: GPL-2.0
/* PE parser: headers, sections, CodeView, exports, and strict bounds. */
#include "lib/vmi/pe.h"
#include "../vmi/unit_fixture.h"

#include <check.h>
#include <stdio.h>

#define IMG_SIZE 0x4000

static uint8_t img[IMG_SIZE];
static uint32_t readable = IMG_SIZE; /* bytes the reader serves, like resident pages */

static int read_buf(const void *ctx, uint32_t rva, void *buf, size_t len,
		    struct svmtrace_error *err)
{
	(void)ctx;
	if (rva >= readable || len > readable - rva) {
		err->status = SVMTRACE_E_NOT_RESIDENT;
		strcpy(err->message, "not resident");
		return err->status;
	}
	memcpy(buf, img + rva, len);
	return 0;
}

static const struct pe_reader reader = { read_buf, NULL };
static const char *const names[] = { "Alpha", "Beta", "Gamma" };
static const uint32_t rvas[] = { 0x2010, 0x2020, 0x1010 };

static void setup(void)
{
	readable = IMG_SIZE;
	fx_pe(img, IMG_SIZE, 0x2345, "test.dll", names, rvas, 3, "test.pdb", 7);
}

START_TEST(parses_headers_and_sections)
{
	struct svmtrace_error err;
	struct pe_image pe;
	const struct pe_section *s;

	ck_assert_int_eq(pe_parse(&reader, &pe, &err), 0);
	ck_assert_uint_eq(pe.entry_rva, 0x2345);
	ck_assert_uint_eq(pe.size_of_image, IMG_SIZE);
	ck_assert_uint_eq(pe.nr_sections, 2);
	s = pe_section_of(&pe, 0x2345);
	ck_assert_ptr_nonnull(s);
	ck_assert_str_eq(s->name, ".text");
	ck_assert_ptr_null(pe_section_of(&pe, 0x10));
}
END_TEST

START_TEST(reads_codeview_and_exports)
{
	struct svmtrace_error err;
	struct pe_codeview cv;
	struct pe_image pe;
	char dll[32];
	uint32_t rva;

	ck_assert_int_eq(pe_parse(&reader, &pe, &err), 0);
	ck_assert_int_eq(pe_codeview(&reader, &pe, &cv, &err), 0);
	ck_assert_str_eq(cv.pdb_name, "test.pdb");
	/* Data1..3 little-endian, Data4 in order: the PDB's GUID-age text. */
	ck_assert_str_eq(cv.id, "030201000504070608090A0B0C0D0E0F-7");
	ck_assert_int_eq(pe_export_dll_name(&reader, &pe, dll, sizeof(dll), &err), 0);
	ck_assert_str_eq(dll, "test.dll");
	ck_assert_int_eq(pe_export_find(&reader, &pe, "Beta", &rva, &err), 0);
	ck_assert_uint_eq(rva, 0x2020);
	ck_assert_int_eq(pe_export_find(&reader, &pe, "Alpha", &rva, &err), 0);
	ck_assert_uint_eq(rva, 0x2010);
	ck_assert_int_eq(pe_export_find(&reader, &pe, "Delta", &rva, &err), SVMTRACE_E_NOT_FOUND);
	/* Gamma points into the export directory: a forwarder, not code. */
	ck_assert_int_eq(pe_export_find(&reader, &pe, "Gamma", &rva, &err), SVMTRACE_E_NOT_FOUND);
	ck_assert_msg(strstr(err.message, "forwarder"), "%s", err.message);
}
END_TEST

START_TEST(rejects_bad_headers)
{
	struct svmtrace_error err;
	struct pe_image pe;
	uint32_t v;

	img[0] = 'X';
	ck_assert_int_eq(pe_parse(&reader, &pe, &err), SVMTRACE_E_FORMAT);
	ck_assert_msg(strstr(err.message, "no MZ"), "%s", err.message);
	setup();
	v = 0x7fffffff; /* e_lfanew far outside */
	memcpy(img + 0x3c, &v, 4);
	ck_assert_int_eq(pe_parse(&reader, &pe, &err), SVMTRACE_E_FORMAT);
	ck_assert_msg(strstr(err.message, "outside the image"), "%s", err.message);
	setup();
	v = IMG_SIZE; /* entry point at SizeOfImage */
	memcpy(img + 0x80 + 24 + 16, &v, 4);
	ck_assert_int_eq(pe_parse(&reader, &pe, &err), SVMTRACE_E_FORMAT);
	setup();
	v = 0x3800; /* .text would end beyond SizeOfImage */
	memcpy(img + 0x80 + 24 + 240 + 48, &v, 4);
	ck_assert_int_eq(pe_parse(&reader, &pe, &err), SVMTRACE_E_FORMAT);
	ck_assert_msg(strstr(err.message, "outside SizeOfImage"), "%s", err.message);
	setup();
	img[0x80 + 4] = 0x4c; /* i386 */
	img[0x80 + 5] = 0x01;
	ck_assert_int_eq(pe_parse(&reader, &pe, &err), SVMTRACE_E_FORMAT);
	ck_assert_msg(strstr(err.message, "machine 0x14c"), "%s", err.message);
}
END_TEST

START_TEST(bounds_checks_directories)
{
	struct svmtrace_error err;
	struct pe_codeview cv;
	struct pe_image pe;
	uint32_t v = 0xfffff000, rva;

	memcpy(img + 0x1000 + 32, &v, 4); /* export name table far away */
	ck_assert_int_eq(pe_parse(&reader, &pe, &err), 0);
	ck_assert_int_eq(pe_export_find(&reader, &pe, "Beta", &rva, &err), SVMTRACE_E_FORMAT);
	memcpy(img + 0x1800 + 20, &v, 4); /* RSDS far away */
	ck_assert_int_eq(pe_codeview(&reader, &pe, &cv, &err), SVMTRACE_E_FORMAT);
	setup();
	memset(img + 0x1918, 'A', 0x4000 - 0x1918); /* PDB name never ends */
	ck_assert_int_eq(pe_parse(&reader, &pe, &err), 0);
	ck_assert_int_eq(pe_codeview(&reader, &pe, &cv, &err), SVMTRACE_E_FORMAT);
}
END_TEST

START_TEST(reports_missing_pages)
{
	struct svmtrace_error err;
	struct pe_image pe;

	readable = 0x100; /* the header page is cut short */
	ck_assert_int_eq(pe_parse(&reader, &pe, &err), SVMTRACE_E_NOT_RESIDENT);
	ck_assert_msg(strstr(err.message, "PE optional header at RVA 0x98"), "%s", err.message);
}
END_TEST

struct seen_export {
	char name[16];
	uint32_t ordinal, rva;
};

static int collect(void *ctx, const char *name, uint32_t ordinal, uint32_t rva)
{
	struct seen_export *s = ctx;

	while (s->rva)
		s++;
	snprintf(s->name, sizeof(s->name), "%s", name ? name : "-");
	s->ordinal = ordinal;
	s->rva = rva;
	return 0;
}

/* Every export in directory order, with the ordinal base; forwarders and
 * empty slots left out; exports by ordinal only after the named ones. */
START_TEST(lists_every_export)
{
	struct seen_export seen[8];
	struct svmtrace_error err;
	struct pe_image pe;
	uint32_t v;

	memset(seen, 0, sizeof(seen));
	ck_assert_int_eq(pe_parse(&reader, &pe, &err), 0);
	ck_assert_int_eq(pe_exports_each(&reader, &pe, collect, seen, &err), 0);
	ck_assert_str_eq(seen[0].name, "Alpha");
	ck_assert_uint_eq(seen[0].rva, 0x2010);
	ck_assert_str_eq(seen[1].name, "Beta");
	ck_assert_uint_eq(seen[1].ordinal, 1);
	ck_assert_uint_eq(seen[2].rva, 0); /* Gamma (0x1010) forwards */

	/* Base 5, two more slots: one by ordinal only, one empty; Beta forwards. */
	v = 5, memcpy(img + 0x1000 + 16, &v, 4);
	v = 5, memcpy(img + 0x1000 + 20, &v, 4);
	v = 0x2030, memcpy(img + 0x1040 + 12, &v, 4);
	v = 0, memcpy(img + 0x1040 + 16, &v, 4);
	v = pe.dir[PE_DIR_EXPORT].rva + 2, memcpy(img + 0x1040 + 4, &v, 4);
	memset(seen, 0, sizeof(seen));
	ck_assert_int_eq(pe_exports_each(&reader, &pe, collect, seen, &err), 0);
	ck_assert_str_eq(seen[0].name, "Alpha");
	ck_assert_uint_eq(seen[0].ordinal, 5);
	ck_assert_str_eq(seen[1].name, "-");
	ck_assert_uint_eq(seen[1].ordinal, 8);
	ck_assert_uint_eq(seen[1].rva, 0x2030);
	ck_assert_uint_eq(seen[2].rva, 0);

	/* An ordinal index past the address table is an error, not a read past it. */
	v = 9, memcpy(img + 0x10c0, &v, 2);
	ck_assert_int_eq(pe_exports_each(&reader, &pe, collect, seen, &err),
			 SVMTRACE_E_FORMAT);
}
END_TEST

int main(void)
{
	const TTest *const tests[] = { parses_headers_and_sections, reads_codeview_and_exports,
				       rejects_bad_headers, bounds_checks_directories,
				       reports_missing_pages, lists_every_export };

	return fx_run("vmi-pe", setup, NULL, tests, sizeof(tests) / sizeof(tests[0]));
}
