// SPDX-License-Identifier: GPL-2.0
#include "support.h"

#include <check.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char scratch[PATH_MAX / 2];

const char *scratch_path(const char *name)
{
	static char path[PATH_MAX];

	if (!scratch[0]) {
		const char *tmp = getenv("TMPDIR");

		snprintf(scratch, sizeof(scratch), "%s/svmtrace-unit.XXXXXX", tmp ? tmp : "/tmp");
		ck_assert_ptr_nonnull(mkdtemp(scratch));
	}
	ck_assert_int_lt(snprintf(path, sizeof(path), "%.*s/%.*s", PATH_MAX / 2, scratch,
				  PATH_MAX / 4, name),
			 PATH_MAX);
	return path;
}

void write_bytes(const char *path, const void *data, size_t size)
{
	FILE *f = fopen(path, "wb");

	ck_assert_ptr_nonnull(f);
	ck_assert_uint_eq(fwrite(data, 1, size, f), size);
	ck_assert_int_eq(fclose(f), 0);
}

size_t decode_all(const void *data, size_t size, const char *name, size_t max,
		  record_check_fn check, const void *ctx, struct svmtrace_summary *sum)
{
	const struct svmtrace_record *r;
	struct svmtrace_reader *rd;
	struct svmtrace_error err;
	size_t n = 0;
	int ret;

	ck_assert_msg(svmtrace_reader_open_memory(data, size, name, &rd, &err) == 0, "%s",
		      err.message);
	while ((ret = svmtrace_reader_next(rd, &r)) > 0) {
		ck_assert_msg(n < max, "%s: more records than the %zu expected", name, max);
		check(ctx, n++, r);
	}
	ck_assert_msg(ret == 0, "%s: %s", name, svmtrace_reader_error(rd)->message);
	if (sum)
		*sum = *svmtrace_reader_summary(rd);
	svmtrace_reader_close(rd);
	return n;
}

uint8_t *read_whole(const char *path, size_t *size)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf;
	long n;

	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(fseek(f, 0, SEEK_END), 0);
	n = ftell(f);
	ck_assert_int_ge(n, 0);
	rewind(f);
	buf = malloc((size_t)n + 1);
	ck_assert_ptr_nonnull(buf);
	*size = fread(buf, 1, (size_t)n, f);
	ck_assert_uint_eq(*size, (size_t)n);
	fclose(f);
	return buf;
}

void expect_file_bytes(const char *path, const uint8_t *want, size_t size, const char *name)
{
	size_t got_size;
	uint8_t *got = read_whole(path, &got_size);

	ck_assert_msg(got_size == size, "%s: %zu bytes, the vector has %zu", name, got_size, size);
	for (size_t i = 0; i < size; i++)
		ck_assert_msg(got[i] == want[i], "%s: byte %zu is 0x%02x, the vector has 0x%02x",
			      name, i, got[i], want[i]);
	free(got);
}

void put_raw(struct bytes *b, const void *p, size_t n)
{
	ck_assert_uint_le(b->n + n, sizeof(b->b));
	memcpy(b->b + b->n, p, n);
	b->n += n;
}

void put8(struct bytes *b, uint8_t v)
{
	put_raw(b, &v, 1);
}

void put16(struct bytes *b, uint16_t v)
{
	put_raw(b, &v, 2);
}

void put32(struct bytes *b, uint32_t v)
{
	put_raw(b, &v, 4);
}

void put64(struct bytes *b, uint64_t v)
{
	put_raw(b, &v, 8);
}

void put_varint(struct bytes *b, uint64_t v)
{
	while (v >= 0x80) {
		put8(b, (uint8_t)(v | 0x80));
		v >>= 7;
	}
	put8(b, (uint8_t)v);
}

void put_svarint(struct bytes *b, int64_t v)
{
	put_varint(b, ((uint64_t)v << 1) ^ (uint64_t)(v >> 63));
}

uint64_t test_rand(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 0x2545f4914f6cdd1dull;
}

int run_suite(void *suite)
{
	SRunner *sr = srunner_create(suite);
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
