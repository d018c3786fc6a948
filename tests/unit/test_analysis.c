// SPDX-License-Identifier: GPL-2.0
/*
 * The analysis library across processes and threads, on hand-written files:
 * two processes with different images at one VA (a parent and the child it
 * hollowed), their threads and which vCPU ran which thread when, and
 * code.bin pages of both at that VA.  The answers are written here from the
 * files' description (docs/analysis.md, svmtraced(8)), not taken from the
 * code.
 */
#include <check.h>
#include <stdio.h>
#include <string.h>

#include <svmtrace/analysis.h>

#include "support.h"

#define PARENT_DTB  0x1f92000ULL
#define PARENT_UDTB 0x1f93000ULL
#define CHILD_DTB   0x2a40000ULL
#define IMAGE	    0x7ff7a1230000ULL

static const char capture[] =
	"{ \"format\": \"svmtrace-capture\", \"version\": 1,\n"
	"  \"processes\": [\n"
	"    { \"pid\": 1212, \"ppid\": 4, \"name\": \"late.exe\", \"dtb\": \"0x1f92000\",\n"
	"      \"user_dtb\": \"0x1f93000\",\n"
	"      \"modules\": [ { \"name\": \"late.exe\", \"path\": \"C:\\\\late.exe\",\n"
	"                      \"base\": \"0x7ff7a1230000\", \"size\": 12288,\n"
	"                      \"exports\": [ { \"name\": \"Main\", \"ordinal\": 1,\n"
	"                                       \"rva\": \"0x1000\" } ] } ] },\n"
	"    { \"pid\": 1220, \"ppid\": 1212, \"name\": \"hollow.exe\", \"dtb\": \"0x2a40000\",\n"
	"      \"user_dtb\": null,\n"
	"      \"modules\": [ { \"name\": \"hollow.exe\", \"path\": \"C:\\\\hollow.exe\",\n"
	"                      \"base\": \"0x7ff7a1230000\", \"size\": 8192 } ] } ],\n"
	"  \"modules\": [ { \"name\": \"late.exe\", \"base\": \"0x7ff7a1230000\", \"size\": 12288 "
	"} ],\n"
	"  \"threads\": [\n"
	"    { \"teb\": \"0xa1b2c3d000\", \"cr3\": \"0x1f93000\", \"pid\": 1212, \"tid\": 2012,\n"
	"      \"process\": \"late.exe\", \"first_sequence\": 0 },\n"
	"    { \"teb\": \"0xa1b2c3f000\", \"cr3\": \"0x1f93000\", \"pid\": 1212, \"tid\": 2016,\n"
	"      \"process\": \"late.exe\", \"first_sequence\": 40 },\n"
	"    { \"teb\": \"0xa1b2c3d000\", \"cr3\": \"0x2a40000\", \"pid\": 1220, \"tid\": 2024,\n"
	"      \"process\": \"hollow.exe\", \"first_sequence\": 90 } ],\n"
	"  \"thread_switches\": [ [0, 0, \"0xa1b2c3d000\"], [0, 40, \"0xa1b2c3f000\"],\n"
	"                        [1, 90, \"0xa1b2c3d000\"], [0, 120, \"0xa1b2c3d000\"] ] }\n";

static const char *write_capture(void)
{
	const char *path = scratch_path("capture.json");

	write_bytes(path, capture, strlen(capture));
	return path;
}

/* One VA, two images: each process's module, by its DTBs; 0 takes any. */
START_TEST(symbols_per_process)
{
	struct svmtrace_symbols *s = svmtrace_symbols_new();
	struct svmtrace_symbol sym;
	struct svmtrace_error err;
	char buf[320];

	ck_assert_int_eq(svmtrace_symbols_load_capture(s, write_capture(), &err), 0);
	ck_assert_uint_eq(svmtrace_symbols_module_count(s), 2);
	svmtrace_symbols_format(s, PARENT_DTB, IMAGE + 0x1004, buf, sizeof(buf));
	ck_assert_str_eq(buf, "late.exe!Main+0x4");
	svmtrace_symbols_format(s, PARENT_UDTB | 0x5, IMAGE + 0x1004, buf, sizeof(buf));
	ck_assert_str_eq(buf, "late.exe!Main+0x4"); /* PCID bits are not the space */
	svmtrace_symbols_format(s, CHILD_DTB, IMAGE + 0x1004, buf, sizeof(buf));
	ck_assert_str_eq(buf, "hollow.exe+0x1004");
	/* beyond the child's smaller image: outside its modules, not the parent's */
	ck_assert(!svmtrace_symbols_lookup(s, CHILD_DTB, IMAGE + 0x2800, &sym));
	ck_assert(svmtrace_symbols_lookup(s, PARENT_DTB, IMAGE + 0x2800, &sym));
	ck_assert(svmtrace_symbols_lookup(s, 0, IMAGE + 0x2800, &sym));
	/* a DTB of no traced process sees none of them */
	ck_assert(!svmtrace_symbols_lookup(s, 0x9999000, IMAGE + 0x1004, &sym));
	svmtrace_symbols_free(s);
}
END_TEST

/* A record's thread: its vCPU's last switch at or before it, under its CR3. */
START_TEST(threads_by_switch)
{
	struct svmtrace_threads *t;
	struct svmtrace_error err;
	const struct svmtrace_thread_info *th;

	ck_assert_int_eq(svmtrace_threads_load(write_capture(), &t, &err), 0);
	ck_assert_uint_eq(svmtrace_threads_count(t), 3);
	ck_assert_int_eq(svmtrace_threads_find(t, 0, 0, PARENT_UDTB), 0);
	ck_assert_int_eq(svmtrace_threads_find(t, 0, 39, PARENT_UDTB), 0);
	ck_assert_int_eq(svmtrace_threads_find(t, 0, 40, PARENT_UDTB), 1);
	ck_assert_int_eq(svmtrace_threads_find(t, 0, 119, PARENT_UDTB), 1);
	ck_assert_int_eq(svmtrace_threads_find(t, 0, 120, PARENT_UDTB), 0);
	/* the child's thread has the parent's first TEB address: the CR3 tells */
	ck_assert_int_eq(svmtrace_threads_find(t, 1, 95, CHILD_DTB), 2);
	th = svmtrace_threads_at(t, 2);
	ck_assert_uint_eq(th->tid, 2024);
	ck_assert_str_eq(th->process, "hollow.exe");
	/* before any switch of its vCPU, or under an unknown CR3: not known */
	ck_assert_int_eq(svmtrace_threads_find(t, 1, 89, CHILD_DTB), -1);
	ck_assert_int_eq(svmtrace_threads_find(t, 0, 10, 0x9999000), -1);
	ck_assert_int_eq(svmtrace_threads_find(t, 7, 10, PARENT_UDTB), -1);
	svmtrace_threads_free(t);
}
END_TEST

/* One version of the page at IMAGE + 0x1000. */
static void add_page(struct svmtrace_code_writer *w, uint64_t gpa, uint64_t cr3, uint64_t seq,
		     const uint8_t *bytes)
{
	struct svmtrace_code_page p = {
		.va = IMAGE + 0x1000, .gpa = gpa, .cr3 = cr3, .first_sequence = seq, .bytes = bytes
	};
	struct svmtrace_error err;

	ck_assert_int_eq(svmtrace_code_writer_add(w, &p, &err), 0);
}

/* code.bin: the version read through the record's address space. */
START_TEST(code_per_address_space)
{
	static uint8_t parent[SVMTRACE_CODE_PAGE], child[SVMTRACE_CODE_PAGE],
		payload[SVMTRACE_CODE_PAGE];
	const char *path = scratch_path("code.bin");
	const struct svmtrace_code_page *v;
	struct svmtrace_code_writer *w;
	struct svmtrace_code *c;
	struct svmtrace_error err;
	uint8_t b[4];

	memset(parent, 0x90, sizeof(parent));
	memset(child, 0xcc, sizeof(child));
	memcpy(payload, child, sizeof(child));
	payload[0x800] = 0xe8; /* what the parent wrote into the child */
	ck_assert_int_eq(svmtrace_code_writer_open(path, &w, &err), 0);
	add_page(w, 0x11a9000, PARENT_UDTB, 5, parent);
	add_page(w, 0x2b00000, CHILD_DTB, 90, child);
	add_page(w, 0x2b00000, CHILD_DTB, 130, payload);
	ck_assert_int_eq(svmtrace_code_writer_close(w, &err), 0);
	ck_assert_int_eq(svmtrace_code_load(path, &c, &err), 0);

	/* the parent's page at every sequence, even after the child's versions */
	ck_assert_uint_eq(svmtrace_code_read(c, PARENT_UDTB, IMAGE + 0x1800, 200, b, 1, &v), 1);
	ck_assert_uint_eq(b[0], 0x90);
	ck_assert_uint_eq(v->gpa, 0x11a9000);
	/* the child's: before the rewrite, and the rewritten bytes after it */
	ck_assert_uint_eq(svmtrace_code_read(c, CHILD_DTB, IMAGE + 0x1800, 100, b, 1, NULL), 1);
	ck_assert_uint_eq(b[0], 0xcc);
	ck_assert_uint_eq(svmtrace_code_read(c, CHILD_DTB, IMAGE + 0x1800, 130, b, 1, &v), 1);
	ck_assert_uint_eq(b[0], 0xe8);
	ck_assert_uint_eq(v->first_sequence, 130);
	/* before the child's first version: its earliest, never the parent's */
	ck_assert_uint_eq(svmtrace_code_read(c, CHILD_DTB, IMAGE + 0x1800, 1, b, 1, NULL), 1);
	ck_assert_uint_eq(b[0], 0xcc);
	/* no address space named: every version counts */
	ck_assert_uint_eq(svmtrace_code_read(c, 0, IMAGE + 0x1800, 6, b, 1, NULL), 1);
	ck_assert_uint_eq(b[0], 0x90);
	ck_assert_uint_eq(svmtrace_code_read(c, 0, IMAGE + 0x1800, 131, b, 1, NULL), 1);
	ck_assert_uint_eq(b[0], 0xe8);
	svmtrace_code_free(c);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("analysis");
	TCase *tc = tcase_create("core");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, symbols_per_process);
	tcase_add_test(tc, threads_by_switch);
	tcase_add_test(tc, code_per_address_space);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
