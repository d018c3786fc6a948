// SPDX-License-Identifier: GPL-2.0
/* ISF loader: the indexing scanner, lazy lookups, xz, and malformed input. */
#include "lib/vmi/isf.h"
#include "lib/vmi/win_profile.h"

#include "../vmi/unit_fixture.h"

#include <check.h>
#include <lzma.h>
#include <stdlib.h>
#include <string.h>

static const char mini[] =
	"{ \"metadata\": {\"format\": \"6.1.0\", \"windows\": {\"pdb\": {\"GUID\": "
	"\"00112233445566778899aabbccddeeff\", \"age\": 2, \"database\": \"ntkrnlmp.pdb\"}}},\n"
	"  \"base_types\": {\"pointer\": {\"size\": 8, \"signed\": false, \"kind\": \"int\"}},\n"
	"  \"symbols\": {\"PsActiveProcessHead\": {\"address\": 12705840},\n"
	"               \"Big\": {\"address\": 18446744073709551615},\n"
	"               \"Neg\": {\"address\": -1},\n"
	"               \"Esc\\\"aped\": {\"address\": 1, \"x\": [1.5e3, true, null, "
	"\"\\u00e9\"]}},\n"
	"  \"user_types\": {\"_S\": {\"size\": 32, \"fields\": {\n"
	"      \"a\": {\"offset\": 8, \"type\": {\"kind\": \"base\", \"name\": \"int\"}},\n"
	"      \"n\": {\"offset\": 16, \"type\": {\"kind\": \"array\", \"count\": 15,\n"
	"             \"subtype\": {\"kind\": \"base\", \"name\": \"char\"}}},\n"
	"      \"b\": {\"offset\": 0, \"type\": {\"kind\": \"bitfield\", \"bit_position\": 12,\n"
	"             \"bit_length\": 40, \"type\": {\"kind\": \"base\", \"name\": \"int\"}}},\n"
	"      \"bad\": {\"offset\": 0, \"type\": {\"kind\": \"bitfield\", \"bit_position\": 60,\n"
	"             \"bit_length\": 10}}}}},\n"
	"  \"enums\": {}\n}\n";

static struct isf *load(const char *text, struct svmtrace_error *err)
{
	struct isf *isf = NULL;

	isf_load_buffer(text, strlen(text), "mini.json", &isf, err);
	return isf;
}

START_TEST(loads_metadata_symbols_and_types)
{
	struct svmtrace_error err;
	struct isf *isf = load(mini, &err);
	struct isf_field f;
	uint64_t v;

	ck_assert_msg(isf != NULL, "%s", err.message);
	ck_assert_str_eq(isf_pdb_guid(isf), "00112233445566778899AABBCCDDEEFF");
	ck_assert_uint_eq(isf_pdb_age(isf), 2);
	ck_assert_int_eq(isf_symbol(isf, "PsActiveProcessHead", &v, &err), 0);
	ck_assert_uint_eq(v, 12705840);
	ck_assert_int_eq(isf_symbol(isf, "Big", &v, &err), 0);
	ck_assert_uint_eq(v, UINT64_MAX);
	ck_assert_int_eq(isf_symbol(isf, "Neg", &v, &err), SVMTRACE_E_FORMAT);
	ck_assert_int_eq(isf_symbol(isf, "Missing", &v, &err), SVMTRACE_E_NOT_FOUND);
	ck_assert_int_eq(isf_type_size(isf, "_S", &v, &err), 0);
	ck_assert_uint_eq(v, 32);
	ck_assert_int_eq(isf_field(isf, "_S", "a", &f, &err), 0);
	ck_assert_uint_eq(f.offset, 8);
	ck_assert_int_eq(isf_field(isf, "_S", "n", &f, &err), 0);
	ck_assert_uint_eq(f.count, 15);
	ck_assert_int_eq(isf_field(isf, "_S", "b", &f, &err), 0);
	ck_assert_uint_eq(f.bit_position, 12);
	ck_assert_uint_eq(f.bit_length, 40);
	ck_assert_int_eq(isf_field(isf, "_S", "bad", &f, &err), SVMTRACE_E_FORMAT);
	ck_assert_int_eq(isf_field(isf, "_S", "zz", &f, &err), SVMTRACE_E_NOT_FOUND);
	ck_assert_int_eq(isf_field(isf, "_T", "a", &f, &err), SVMTRACE_E_NOT_FOUND);
	/* A second lookup hits the cached object. */
	ck_assert_int_eq(isf_field(isf, "_S", "a", &f, &err), 0);
	isf_free(isf);
}
END_TEST

START_TEST(rejects_broken_json_with_offsets)
{
	static const char *const bad[] = {
		"",
		"[]",
		"{\"symbols\": {\"a\": {\"address\": 1}}",    /* unterminated */
		"{\"symbols\": {\"a\" {\"address\": 1}}}",    /* missing ':' */
		"{\"symbols\": {\"a\": {\"address\": 01x}}}", /* bad number */
		"{\"symbols\": {\"a\": \"\\q\"}}",	      /* bad escape */
		"{\"symbols\": {\"a\": \"\\u12\"}}",	      /* short \\u */
		"{\"symbols\": {\"a\": tru}}",		      /* bad literal */
		"{\"metadata\": {}} trailing",		      /* bytes after */
		"{\"a\": [1, 2,]}",			      /* bad array */
	};
	struct svmtrace_error err;
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		ck_assert_ptr_null(load(bad[i], &err));
		ck_assert_int_eq(err.status, SVMTRACE_E_FORMAT);
		ck_assert_msg(strstr(err.message, "mini.json: "), "%s", err.message);
	}
	/* Structurally fine, but not a Windows kernel profile. */
	ck_assert_ptr_null(load("{\"metadata\": {\"windows\": {}}}", &err));
	ck_assert_msg(strstr(err.message, "not a Windows kernel ISF"), "%s", err.message);
}
END_TEST

START_TEST(nesting_is_bounded)
{
	struct svmtrace_error err;
	char *deep = malloc(20000);
	int i;

	strcpy(deep, "{\"a\": ");
	for (i = 0; i < 5000; i++)
		strcat(deep, "[");
	ck_assert_ptr_null(load(deep, &err));
	ck_assert_msg(strstr(err.message, "nested too deeply"), "%s", err.message);
	free(deep);
}
END_TEST

START_TEST(reads_xz)
{
	struct svmtrace_error err;
	size_t cap = sizeof(mini) + 4096, used = 0;
	uint8_t *xz = malloc(cap);
	struct isf *isf = NULL;

	ck_assert_int_eq(lzma_easy_buffer_encode(6, LZMA_CHECK_CRC64, NULL, (const uint8_t *)mini,
						 strlen(mini), xz, &used, cap),
			 LZMA_OK);
	ck_assert_int_eq(isf_load_buffer(xz, used, "mini.json.xz", &isf, &err), 0);
	ck_assert_str_eq(isf_pdb_database(isf), "ntkrnlmp.pdb");
	isf_free(isf);
	ck_assert_int_ne(isf_load_buffer(xz, used - 10, "cut.json.xz", &isf, &err), 0);
	ck_assert_msg(strstr(err.message, "cut.json.xz: xz data ends early"), "%s", err.message);
	xz[used / 2] ^= 0xff;
	ck_assert_int_ne(isf_load_buffer(xz, used, "bad.json.xz", &isf, &err), 0);
	ck_assert_msg(strstr(err.message, "bad.json.xz: xz data is corrupt"), "%s", err.message);
	free(xz);
}
END_TEST

START_TEST(profile_names_missing_fields)
{
	struct svmtrace_error err;
	struct svmtrace_vmi_profile p;
	struct isf *isf = load(mini, &err);

	ck_assert_int_eq(win_profile_from_isf(isf, "mini.json", &p, &err), SVMTRACE_E_NOT_FOUND);
	ck_assert_msg(strstr(err.message, "_EPROCESS"), "%s", err.message);
	ck_assert_str_eq(p.id, "00112233445566778899AABBCCDDEEFF-2");
	isf_free(isf);
}
END_TEST

int main(void)
{
	const TTest *const tests[] = { loads_metadata_symbols_and_types,
				       rejects_broken_json_with_offsets, nesting_is_bounded,
				       reads_xz, profile_names_missing_fields };

	return fx_run("vmi-isf", NULL, NULL, tests, sizeof(tests) / sizeof(tests[0]));
}
