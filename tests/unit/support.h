/* SPDX-License-Identifier: GPL-2.0 */
/* Helpers shared by the Check unit tests (linked into every tests/unit program). */
#ifndef SVMTRACE_TEST_SUPPORT_H
#define SVMTRACE_TEST_SUPPORT_H

#include <stddef.h>
#include <stdint.h>

#include <svmtrace/trace.h>

/*
 * Check's ck_assert_* writes to a pipe on every call; loops over millions of
 * fields use this instead, which only reaches Check on a mismatch.
 */
#define expect_eq(a, b, what, index)                                                               \
	do {                                                                                       \
		unsigned long long a_ = (unsigned long long)(a), b_ = (unsigned long long)(b);     \
		if (a_ != b_)                                                                      \
			ck_abort_msg("%s at %zu: 0x%llx != 0x%llx", what, (size_t)(index), a_,     \
				     b_);                                                          \
	} while (0)

/*
 * A path "NAME" inside a scratch directory made for this test process, under
 * $TMPDIR (make check-unit points it at one directory it removes afterwards).
 */
const char *scratch_path(const char *name);

void write_bytes(const char *path, const void *data, size_t size);
/*
 * Read @size bytes at @data (@name in messages) to their end, calling
 * @check with @ctx on each record in order; the test fails on an error or on
 * more than @max records.  Fills *@sum (may be NULL); returns the count.
 */
typedef void (*record_check_fn)(const void *ctx, size_t i, const struct svmtrace_record *r);
size_t decode_all(const void *data, size_t size, const char *name, size_t max,
		  record_check_fn check, const void *ctx, struct svmtrace_summary *sum);
/* The whole file at @path (malloc'ed; *size its length). */
uint8_t *read_whole(const char *path, size_t *size);
/* The file at @path holds exactly @size bytes @want (@name for messages). */
void expect_file_bytes(const char *path, const uint8_t *want, size_t size, const char *name);

/* Byte builder for hand-made files, little-endian as docs/format.md says. */
struct bytes {
	uint8_t b[1 << 18];
	size_t n;
};

void put8(struct bytes *b, uint8_t v);
void put16(struct bytes *b, uint16_t v);
void put32(struct bytes *b, uint32_t v);
void put64(struct bytes *b, uint64_t v);
void put_varint(struct bytes *b, uint64_t v);
void put_svarint(struct bytes *b, int64_t v);
void put_raw(struct bytes *b, const void *p, size_t n);

/* xorshift64*: deterministic pseudo-random numbers for generated streams. */
uint64_t test_rand(uint64_t *state);

/* The Check suite runner every unit test program uses as its main(). */
int run_suite(void *suite);

#endif
