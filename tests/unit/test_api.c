// SPDX-License-Identifier: GPL-2.0
/*
 * The library's one convention (svmtrace/status.h): one status type with
 * names, and every close/free accepting NULL.
 */
#include <check.h>
#include <string.h>

#include <svmtrace/ring.h>
#include <svmtrace/status.h>
#include <svmtrace/trace.h>
#include <svmtrace/vmi.h>

#include "support.h"

START_TEST(every_status_has_its_own_name)
{
	static const struct {
		int status;
		const char *name;
	} want[] = {
		{ SVMTRACE_OK, "ok" },
		{ SVMTRACE_E_IO, "io" },
		{ SVMTRACE_E_FORMAT, "format" },
		{ SVMTRACE_E_TRUNCATED, "truncated" },
		{ SVMTRACE_E_INVALID, "invalid" },
		{ SVMTRACE_E_NOMEM, "nomem" },
		{ SVMTRACE_E_NOT_FOUND, "not-found" },
		{ SVMTRACE_E_NOT_RESIDENT, "not-resident" },
		{ SVMTRACE_E_MISMATCH, "mismatch" },
		{ SVMTRACE_E_CORRUPT, "corrupt" },
	};

	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		ck_assert_str_eq(svmtrace_status_name(want[i].status), want[i].name);
		ck_assert_int_eq(want[i].status, -(int)i); /* dense, 0 down to -9 */
	}
	ck_assert_str_eq(svmtrace_status_name(-10), "unknown");
	ck_assert_str_eq(svmtrace_status_name(1), "unknown");
	ck_assert_str_eq(svmtrace_status_name(-1000000), "unknown");
}
END_TEST

START_TEST(every_close_accepts_null)
{
	svmtrace_reader_close(NULL);
	ck_assert_int_eq(svmtrace_writer_close(NULL, NULL), 0);
	svmtrace_writer_discard(NULL);
	svmtrace_ring_unmap(NULL);
	svmtrace_vmi_mem_close(NULL);
	svmtrace_vmi_profile_free(NULL);
	svmtrace_vmi_close(NULL);
}
END_TEST

/* Errors from trace, ring and vmi fill the same struct with the same codes. */
START_TEST(trace_ring_and_vmi_share_the_error)
{
	struct svmtrace_ring_consumer c;
	struct svmtrace_vmi_mem *mem = NULL;
	struct svmtrace_reader *r = NULL;
	struct svmtrace_error err;
	uint8_t small[16] = { 0 };

	ck_assert_int_eq(svmtrace_reader_open("/nonexistent/x.bin", &r, &err), SVMTRACE_E_IO);
	ck_assert_int_eq(err.status, SVMTRACE_E_IO);
	ck_assert_ptr_null(r);
	ck_assert_int_eq(svmtrace_ring_use_memory(small, sizeof(small), &c, &err),
			 SVMTRACE_E_FORMAT);
	ck_assert_int_eq(err.status, SVMTRACE_E_FORMAT);
	ck_assert_int_eq(svmtrace_vmi_mem_open("/nonexistent/x.elf", &mem, &err), SVMTRACE_E_IO);
	ck_assert_int_eq(err.status, SVMTRACE_E_IO);
	ck_assert_uint_eq(err.offset, 0);
	ck_assert_ptr_null(mem);
	/* NULL error pointers are allowed everywhere */
	ck_assert_int_eq(svmtrace_reader_open("/nonexistent/x.bin", &r, NULL), SVMTRACE_E_IO);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("api");
	TCase *tc = tcase_create("convention");

	tcase_add_test(tc, every_status_has_its_own_name);
	tcase_add_test(tc, every_close_accepts_null);
	tcase_add_test(tc, trace_ring_and_vmi_share_the_error);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
