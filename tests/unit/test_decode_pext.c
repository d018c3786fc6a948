// SPDX-License-Identifier: GPL-2.0
/*
 * The decoder reads varints with PEXT where the CPU does it fast and with
 * shift-and-mask steps elsewhere (lib/trace/decode.c, pack7()).  A machine
 * runs only one of the two through the public reader, so this test drives
 * the record decoder directly with each, frame by frame, over the same bytes
 * and requires the same records and the same errors: on streams the writer
 * made with varints of every length (1 to 10 bytes), on the committed fuzz
 * corpus, and on corrupted copies of both.  It also holds the decoder to
 * what the reader assumes of a record it reports as a predicted delta.
 */
#include <check.h>
#include <dirent.h>
#include <lz4.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <svmtrace/trace.h>

#include "lib/trace/decode.h"
#include "lib/trace/wire.h"
#include "support.h"

#define CORPUS "tests/fuzz/corpus/fuzz_trace_reader"

static size_t records_compared;

/* Decode @n frame bytes with PEXT and without, in lockstep: both must agree on everything. */
static void compare_frame(struct decoder *a, struct decoder *b, const uint8_t *f, size_t n)
{
	const uint8_t *pa = f, *pb = f, *end = f + n;
	bool qa, qb;
	uint64_t before = a->rec.sequence;

	decoder_frame_start(a);
	decoder_frame_start(b);
	while (pa < end) {
		pa = decoder_next(a, pa, end, &qa);
		pb = decoder_next(b, pb, end, &qb);
		ck_assert_ptr_eq(pa, pb);
		ck_assert_int_eq(qa, qb);
		if (!pa) {
			ck_assert_str_eq(a->why, b->why);
			return;
		}
		ck_assert_int_eq(a->rec.kind, b->rec.kind);
		/* what the reader counts a predicted delta as without asking */
		if (qa)
			ck_assert(a->rec.kind == SVMTRACE_SLOT_INSTRUCTION && !a->rec.has_tsc &&
				  a->rec.sequence == before + 1);
		before = a->rec.sequence;
		expect_eq(a->rec.sequence, b->rec.sequence, "sequence", records_compared);
		expect_eq(a->rec.tsc * a->rec.has_tsc, b->rec.tsc * b->rec.has_tsc, "tsc",
			  records_compared);
		expect_eq(a->rec.reason, b->rec.reason, "reason", records_compared);
		expect_eq(a->rec.dropped, b->rec.dropped, "dropped", records_compared);
		ck_assert_int_eq(a->rec.state_known, b->rec.state_known);
		ck_assert_int_eq(a->rec.has_ymm, b->rec.has_ymm);
		ck_assert_int_eq(a->rec.anchor, b->rec.anchor);
		ck_assert(!memcmp(&a->state, &b->state, sizeof(a->state)));
		records_compared++;
	}
}

/* Every frame of the v5 file in @data, as far as its frames are well formed. */
static void compare_file(const uint8_t *data, size_t size)
{
	static uint8_t frame[SVMTRACE_FRAME_MAX];
	struct decoder a, b;
	size_t at = WIRE_HEADER_SIZE;

	ck_assert_int_eq(decoder_init(&a, 0), 0);
	ck_assert_int_eq(decoder_init(&b, 0), 0);
	a.pext = true;
	b.pext = false;
	while (size - at >= WIRE_FRAME_HEADER_SIZE && size >= WIRE_HEADER_SIZE) {
		uint32_t decoded = le32(data + at), stored = le32(data + at + 4);
		const uint8_t *payload = data + at + WIRE_FRAME_HEADER_SIZE;

		if (decoded == 0 || decoded > SVMTRACE_FRAME_MAX || stored == 0 ||
		    stored > decoded || stored > size - at - WIRE_FRAME_HEADER_SIZE)
			break;
		if (stored < decoded) {
			if (LZ4_decompress_safe((const char *)payload, (char *)frame, (int)stored,
						(int)decoded) != (int)decoded)
				break;
			payload = frame;
		}
		compare_frame(&a, &b, payload, decoded);
		at += WIRE_FRAME_HEADER_SIZE + stored;
	}
	decoder_free(&a);
	decoder_free(&b);
}

/* The file, then copies with a few bytes past the header overwritten. */
static void compare_with_mutants(uint8_t *data, size_t size, uint64_t *r)
{
	uint8_t *copy = malloc(size);

	ck_assert_ptr_nonnull(copy);
	compare_file(data, size);
	for (int m = 0; m < 8 && size > WIRE_HEADER_SIZE + WIRE_FRAME_HEADER_SIZE; m++) {
		memcpy(copy, data, size);
		for (int k = 0; k < 1 + m; k++) {
			size_t i =
				WIRE_HEADER_SIZE + WIRE_FRAME_HEADER_SIZE +
				test_rand(r) % (size - WIRE_HEADER_SIZE - WIRE_FRAME_HEADER_SIZE);

			copy[i] = (uint8_t)test_rand(r);
		}
		compare_file(copy, size);
	}
	free(copy);
}

static uint8_t *read_file(const char *path, size_t *size)
{
	FILE *f = fopen(path, "rb");
	uint8_t *data;
	long n;

	ck_assert_msg(f, "cannot open %s", path);
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	data = malloc((size_t)n + 1);
	ck_assert_ptr_nonnull(data);
	ck_assert_int_eq(fread(data, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	*size = (size_t)n;
	return data;
}

/* A value of a random bit length, so that its varint (or its difference's) is 1 to 10 bytes. */
static uint64_t any_length(uint64_t *r)
{
	unsigned int bits = (unsigned int)(test_rand(r) % 65);

	return bits ? test_rand(r) >> (64 - bits) : 0;
}

START_TEST(written_streams)
{
	uint64_t r = 0x5eed0000u + (uint64_t)_i;
	const char *path = scratch_path("pext.v5");
	struct svmtrace_writer_options o;
	struct svmtrace_writer *w;
	struct svmtrace_error err;
	struct svmtrace_slot s = { 0 };
	uint8_t *data;
	size_t size;

	svmtrace_writer_options_init(&o);
	o.raw_frames = _i & 1;
	ck_assert_int_eq(svmtrace_writer_open(path, &o, &w, &err), 0);
	s.rip = 0x140001000;
	s.cr3 = 0x1aa000;
	for (int i = 0; i < 20000; i++) {
		int pc = i % 37;

		s.kind = i ? SVMTRACE_SLOT_INSTRUCTION : SVMTRACE_SLOT_SESSION_START;
		s.seq += 1 + (test_rand(&r) % 50 == 0 ? any_length(&r) % 100000 : 0);
		s.rip = 0x140001000 + (uint64_t)pc * 4 +
			(test_rand(&r) % 20 == 0 ? any_length(&r) : 0);
		s.rflags ^= test_rand(&r) % 4 == 0 ? any_length(&r) : 0;
		/* loops (hits), register moves (OPS), differences of every length (GPR) */
		s.gpr[pc % 16] += (uint64_t)pc;
		if (test_rand(&r) % 3 == 0)
			s.gpr[test_rand(&r) % 16] += any_length(&r);
		if (test_rand(&r) % 5 == 0)
			s.gpr[test_rand(&r) % 16] = s.gpr[test_rand(&r) % 16] ^ s.gpr[pc % 16];
		if (test_rand(&r) % 7 == 0) { /* xchg: two operations in one record */
			int x = (int)(test_rand(&r) % 16),
			    y = (x + 1 + (int)(test_rand(&r) % 15)) % 16;
			uint64_t t = s.gpr[x];

			s.gpr[x] = s.gpr[y];
			s.gpr[y] = t;
		}
		if (i == 19999)
			s.kind = SVMTRACE_SLOT_SESSION_END;
		ck_assert_int_eq(svmtrace_writer_append(w, &s, &err), 0);
	}
	ck_assert_int_eq(svmtrace_writer_close(w, &err), 0);
	data = read_file(path, &size);
	records_compared = 0;
	compare_with_mutants(data, size, &r);
	ck_assert_uint_ge(records_compared, 20000);
	free(data);
}
END_TEST

START_TEST(fuzz_corpus)
{
	DIR *dir = opendir(CORPUS);
	struct dirent *e;
	uint64_t r = 42;
	int files = 0;

	ck_assert_msg(dir, "cannot open %s (run from the source tree)", CORPUS);
	records_compared = 0;
	while ((e = readdir(dir))) {
		char path[512];
		uint8_t *data;
		size_t size;

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", CORPUS, e->d_name);
		data = read_file(path, &size);
		compare_with_mutants(data, size, &r);
		free(data);
		files++;
	}
	closedir(dir);
	ck_assert_int_ge(files, 10);
	ck_assert_uint_ge(records_compared, 1000);
}
END_TEST

static Suite *pext_suite(void)
{
	Suite *s = suite_create("decode with and without PEXT");
	TCase *tc = tcase_create("pext");

	tcase_set_timeout(tc, 120);
	/* the PEXT side needs BMI2: a CPU without it cannot run it (CI's machines have it) */
	if (!__builtin_cpu_supports("bmi2")) {
		fprintf(stderr, "test_decode_pext: NOT RUN: this CPU has no BMI2 (PEXT)\n");
		exit(getenv("CI") ? 1 : 0);
	}
	tcase_add_loop_test(tc, written_streams, 0, 4);
	tcase_add_test(tc, fuzz_corpus);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return run_suite(pext_suite());
}
