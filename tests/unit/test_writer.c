// SPDX-License-Identifier: GPL-2.0
/*
 * Writer contract: a file under its final name is always complete (frames
 * go to NAME.partial until close), a flushed .partial is readable, bad slots
 * are refused with a message, frames never exceed 64 KiB.
 */
#include <check.h>
#include <signal.h>
#include <stdio.h>
#include <sys/resource.h>
#include <string.h>
#include <unistd.h>

#include <svmtrace/trace.h>

#include "support.h"

static char partial[4200];

static struct svmtrace_writer *open_writer(const char *path, uint32_t interval)
{
	struct svmtrace_writer_options o;
	struct svmtrace_writer *w;
	struct svmtrace_error err;

	svmtrace_writer_options_init(&o);
	o.anchor_interval = interval;
	ck_assert_msg(svmtrace_writer_open(path, &o, &w, &err) == 0, "%s", err.message);
	snprintf(partial, sizeof(partial), "%s.partial", path);
	return w;
}

static void append_n(struct svmtrace_writer *w, uint64_t first, uint64_t n)
{
	struct svmtrace_slot s = { .cr3 = 0x1000, .rip = 0x400000 };
	struct svmtrace_error err;

	for (uint64_t i = 0; i < n; i++) {
		s.kind = first + i == 1 ? SVMTRACE_SLOT_SESSION_START : SVMTRACE_SLOT_INSTRUCTION;
		s.seq = first + i;
		s.rip = 0x400000 + (s.seq % 7) * 5;
		s.gpr[SVMTRACE_RAX] = s.seq * 3;
		if (svmtrace_writer_append(w, &s, &err))
			ck_abort_msg("%s", err.message);
	}
}

START_TEST(final_name_appears_only_at_close)
{
	const char *path = scratch_path("atomic.bin");
	struct svmtrace_writer *w = open_writer(path, 64);
	struct svmtrace_summary sum;
	struct svmtrace_error err;

	append_n(w, 1, 1000);
	ck_assert_int_ne(access(path, F_OK), 0);
	ck_assert_int_eq(access(partial, F_OK), 0);
	/* flushed frames of the unfinished file are readable */
	ck_assert_int_eq(svmtrace_writer_flush(w, &err), 0);
	ck_assert_int_eq(svmtrace_read(partial, NULL, NULL, &sum, &err), 0);
	ck_assert_uint_eq(sum.records, 1000);
	ck_assert_int_eq(svmtrace_writer_close(w, &err), 0);
	ck_assert_int_eq(access(path, F_OK), 0);
	ck_assert_int_ne(access(partial, F_OK), 0);
	ck_assert_int_eq(svmtrace_read(path, NULL, NULL, &sum, &err), 0);
	ck_assert_uint_eq(sum.records, 1000);
}
END_TEST

START_TEST(discard_leaves_nothing)
{
	const char *path = scratch_path("discarded.bin");
	struct svmtrace_writer *w = open_writer(path, 64);

	append_n(w, 1, 100);
	svmtrace_writer_discard(w);
	ck_assert_int_ne(access(path, F_OK), 0);
	ck_assert_int_ne(access(partial, F_OK), 0);
}
END_TEST

START_TEST(bad_slots_are_refused)
{
	const char *path = scratch_path("refuse.bin");
	struct svmtrace_writer *w = open_writer(path, 64);
	struct svmtrace_slot s = { .kind = SVMTRACE_SLOT_INSTRUCTION, .seq = 5 };
	struct svmtrace_error err;
	char want[4400];

	append_n(w, 1, 10);
	ck_assert_int_eq(svmtrace_writer_append(w, &s, &err), SVMTRACE_E_INVALID);
	snprintf(want, sizeof(want), "%s: slot sequence 5 does not follow 10", path);
	ck_assert_str_eq(err.message, want);
	s.seq = 11;
	s.kind = 7;
	ck_assert_int_eq(svmtrace_writer_append(w, &s, &err), SVMTRACE_E_INVALID);
	snprintf(want, sizeof(want), "%s: slot 11 has kind 7 (expected 1..3)", path);
	ck_assert_str_eq(err.message, want);
	svmtrace_writer_discard(w);
}
END_TEST

START_TEST(bad_options_are_refused)
{
	struct svmtrace_writer_options o;
	struct svmtrace_writer *w;
	struct svmtrace_error err;
	const char *path = scratch_path("options.bin");
	char want[4400];

	svmtrace_writer_options_init(&o);
	o.anchor_interval = 0;
	ck_assert_int_eq(svmtrace_writer_open(path, &o, &w, &err), SVMTRACE_E_INVALID);
	snprintf(want, sizeof(want), "%s: anchor interval must be at least 1", path);
	ck_assert_str_eq(err.message, want);
	svmtrace_writer_options_init(&o);
	o.lz4_level = 13;
	ck_assert_int_eq(svmtrace_writer_open(path, &o, &w, &err), SVMTRACE_E_INVALID);
	ck_assert_int_eq(svmtrace_writer_open("/nonexistent-dir/x.bin", &o, &w, &err),
			 SVMTRACE_E_INVALID);
	svmtrace_writer_options_init(&o);
	ck_assert_int_eq(svmtrace_writer_open("/nonexistent-dir/x.bin", &o, &w, &err),
			 SVMTRACE_E_IO);
	ck_assert_str_eq(
		err.message,
		"/nonexistent-dir/x.bin.partial: cannot create: No such file or directory");
}
END_TEST

START_TEST(frames_stay_within_64k)
{
	const char *path = scratch_path("frames.bin");
	struct svmtrace_writer *w = open_writer(path, 1); /* anchors only: big records */
	struct svmtrace_summary sum;
	struct svmtrace_error err;

	append_n(w, 1, 20000);
	ck_assert_int_eq(svmtrace_writer_close(w, &err), 0);
	ck_assert_int_eq(svmtrace_read(path, NULL, NULL, &sum, &err), 0);
	ck_assert_uint_gt(sum.frames_lz4 + sum.frames_raw, 3);
	/* the reader rejects frames over 64 KiB; the average proves they are full */
	ck_assert_uint_gt(sum.decoded_bytes / (sum.frames_lz4 + sum.frames_raw), 60000);
	ck_assert_uint_eq(sum.records, 20000);
}
END_TEST

/*
 * A disk that fills up (here: a file size limit, EFBIG, as ENOSPC would):
 * the torn frame is cut off, its records are counted as lost, and close
 * keeps a file that ends with a complete frame.
 */
START_TEST(a_failed_write_leaves_complete_frames)
{
	const char *path = scratch_path("full.bin");
	struct rlimit lim = { .rlim_cur = 150000, .rlim_max = RLIM_INFINITY };
	struct svmtrace_writer_options o;
	struct svmtrace_slot sl = { .cr3 = 0x1000 };
	struct svmtrace_writer *w;
	struct svmtrace_summary sum;
	struct svmtrace_error err;
	uint64_t i, records, lost;

	signal(SIGXFSZ, SIG_IGN);
	ck_assert_int_eq(setrlimit(RLIMIT_FSIZE, &lim), 0);
	svmtrace_writer_options_init(&o);
	o.raw_frames = true; /* frames of 64 KiB: the third one tears */
	ck_assert_int_eq(svmtrace_writer_open(path, &o, &w, &err), 0);
	for (i = 1; i < 1000000; i++) {
		sl.kind = SVMTRACE_SLOT_INSTRUCTION;
		sl.seq = i;
		sl.rip = 0x400000 + i * 977;
		sl.gpr[SVMTRACE_RAX] = i * 0x9e3779b97f4a7c15ULL;
		if (svmtrace_writer_append(w, &sl, &err))
			break;
	}
	ck_assert_uint_lt(i, 1000000);
	ck_assert_msg(strstr(err.message, "write failed"), "%s", err.message);
	records = svmtrace_writer_stats(w)->records;
	lost = svmtrace_writer_stats(w)->lost_records;
	ck_assert_uint_gt(lost, 0);
	ck_assert_uint_eq(records + lost, i - 1);
	ck_assert_uint_le(svmtrace_writer_stats(w)->file_bytes, 150000);
	ck_assert_int_ne(svmtrace_writer_append(w, &sl, &err), 0);
	ck_assert_int_eq(svmtrace_writer_close(w, &err), 0);
	ck_assert_int_eq(svmtrace_read(path, NULL, NULL, &sum, &err), 0);
	ck_assert_uint_eq(sum.records, records);
}
END_TEST

static Suite *writer_suite(void)
{
	Suite *s = suite_create("writer");
	TCase *tc = tcase_create("writer");

	tcase_add_test(tc, final_name_appears_only_at_close);
	tcase_add_test(tc, discard_leaves_nothing);
	tcase_add_test(tc, bad_slots_are_refused);
	tcase_add_test(tc, bad_options_are_refused);
	tcase_add_test(tc, frames_stay_within_64k);
	tcase_add_test(tc, a_failed_write_leaves_complete_frames);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return run_suite(writer_suite());
}
