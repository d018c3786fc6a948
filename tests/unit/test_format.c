// SPDX-License-Identifier: GPL-2.0
/*
 * v5 as docs/format.md specifies it: files built by hand byte by byte must
 * decode to the records the spec says, the writer must produce exactly those
 * bytes, and every defensive check rejects its broken file with its exact
 * message.
 */
#include <check.h>
#include <lz4.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <svmtrace/trace.h>

#include "support.h"

static void file_header(struct bytes *b, uint32_t cpu)
{
	put_raw(b, "FTRC", 4);
	put32(b, 5);
	put32(b, cpu);
	put32(b, 1);
}

/* Seed 000's walkthrough: session start after `mov eax, 7`, then `add eax, 1`. */
static void walkthrough_records(struct bytes *r)
{
	put8(r, 0x02);		   /* session start, no X, no G */
	put_varint(r, 10);	   /* sequence */
	put64(r, 1000);		   /* tsc */
	put_varint(r, 0);	   /* gate id */
	put64(r, 0x140001005);	   /* rip */
	put_varint(r, 0x202);	   /* rflags */
	put_varint(r, 0x12345000); /* cr3 */
	put_varint(r, 7);	   /* rax */
	for (int i = 1; i < 16; i++)
		put_varint(r, 0);
	put8(r, 0x0c);	   /* delta: RIP and GPR explicit */
	put_svarint(r, 3); /* rip + 3 */
	put16(r, 0x0001);  /* rax changed */
	put_svarint(r, 1); /* by + 1 */
	put8(r, 0x03);	   /* session end */
	put64(r, 12);
	put64(r, 1010);
	put32(r, SVMTRACE_END_STOP);
	put64(r, 0x140001008);
}

static void raw_frame(struct bytes *b, const struct bytes *records)
{
	put32(b, (uint32_t)records->n);
	put32(b, (uint32_t)records->n);
	put_raw(b, records->b, records->n);
}

static struct bytes *new_bytes(void)
{
	struct bytes *b = calloc(1, sizeof(*b));

	ck_assert_ptr_nonnull(b);
	return b;
}

START_TEST(walkthrough_decodes_as_specified)
{
	struct bytes *f = new_bytes(), *r = new_bytes();
	const char *path = scratch_path("walkthrough.bin");
	struct svmtrace_reader *rd;
	struct svmtrace_error err;
	const struct svmtrace_record *rec;

	walkthrough_records(r);
	file_header(f, 3);
	raw_frame(f, r);
	write_bytes(path, f->b, f->n);

	ck_assert_int_eq(svmtrace_reader_open(path, &rd, &err), 0);
	ck_assert_int_eq(svmtrace_reader_next(rd, &rec), 1);
	ck_assert_int_eq(rec->kind, SVMTRACE_SLOT_SESSION_START);
	ck_assert_uint_eq(rec->cpu, 3);
	ck_assert_uint_eq(rec->sequence, 10);
	ck_assert_uint_eq(rec->tsc, 1000);
	ck_assert_uint_eq(rec->state->rip, 0x140001005);
	ck_assert_uint_eq(rec->state->rflags, 0x202);
	ck_assert_uint_eq(rec->state->cr3, 0x12345000);
	ck_assert_uint_eq(rec->state->gpr[SVMTRACE_RAX], 7);

	ck_assert_int_eq(svmtrace_reader_next(rd, &rec), 1);
	ck_assert_int_eq(rec->kind, SVMTRACE_SLOT_INSTRUCTION);
	ck_assert_uint_eq(rec->sequence, 11);
	ck_assert(!rec->has_tsc);
	ck_assert_uint_eq(rec->state->rip, 0x140001008);
	ck_assert_uint_eq(rec->state->rflags, 0x202);
	ck_assert_uint_eq(rec->state->gpr[SVMTRACE_RAX], 8);

	ck_assert_int_eq(svmtrace_reader_next(rd, &rec), 1);
	ck_assert_int_eq(rec->kind, SVMTRACE_SLOT_SESSION_END);
	ck_assert_uint_eq(rec->sequence, 12);
	ck_assert_uint_eq(rec->tsc, 1010);
	ck_assert_uint_eq(rec->reason, SVMTRACE_END_STOP);
	ck_assert_uint_eq(rec->state->rip, 0x140001008);

	ck_assert_int_eq(svmtrace_reader_next(rd, &rec), 0);
	ck_assert_uint_eq(svmtrace_reader_summary(rd)->file_bytes, f->n);
	ck_assert_uint_eq(svmtrace_reader_summary(rd)->frames_raw, 1);
	svmtrace_reader_close(rd);
	free(f);
	free(r);
}
END_TEST

/*
 * The walkthrough's three slots through the writer, in raw frames for cpu 3;
 * with @cut_before_end the frame is flushed before the session end, which
 * then opens a frame of its own.
 */
static void write_walkthrough(const char *path, bool cut_before_end)
{
	struct svmtrace_writer_options o;
	struct svmtrace_writer *w;
	struct svmtrace_error err;
	struct svmtrace_slot s = { .kind = SVMTRACE_SLOT_SESSION_START,
				   .seq = 10,
				   .tsc = 1000,
				   .rip = 0x140001005,
				   .rflags = 0x202,
				   .cr3 = 0x12345000 };

	svmtrace_writer_options_init(&o);
	o.cpu = 3;
	o.raw_frames = true;
	ck_assert_int_eq(svmtrace_writer_open(path, &o, &w, &err), 0);
	s.gpr[SVMTRACE_RAX] = 7;
	ck_assert_int_eq(svmtrace_writer_append(w, &s, &err), 0);
	s.kind = SVMTRACE_SLOT_INSTRUCTION;
	s.seq = 11;
	s.tsc = 1010;
	s.rip = 0x140001008;
	s.gpr[SVMTRACE_RAX] = 8;
	ck_assert_int_eq(svmtrace_writer_append(w, &s, &err), 0);
	if (cut_before_end)
		ck_assert_int_eq(svmtrace_writer_flush(w, &err), 0);
	s.kind = SVMTRACE_SLOT_SESSION_END;
	s.seq = 12;
	s.reason = SVMTRACE_END_STOP;
	ck_assert_int_eq(svmtrace_writer_append(w, &s, &err), 0);
	ck_assert_int_eq(svmtrace_writer_close(w, &err), 0);
}

START_TEST(writer_produces_the_specified_bytes)
{
	struct bytes *f = new_bytes(), *r = new_bytes();
	const char *path = scratch_path("written.bin");
	FILE *in;
	uint8_t got[4096];
	size_t n;

	write_walkthrough(path, false);

	walkthrough_records(r);
	file_header(f, 3);
	raw_frame(f, r);
	in = fopen(path, "rb");
	ck_assert_ptr_nonnull(in);
	n = fread(got, 1, sizeof(got), in);
	fclose(in);
	ck_assert_uint_eq(n, f->n);
	ck_assert_mem_eq(got, f->b, n);
	free(f);
	free(r);
}
END_TEST

/* An LZ4 frame holding the walkthrough decodes the same. */
START_TEST(lz4_frame_decodes)
{
	struct bytes *f = new_bytes(), *r = new_bytes();
	const char *path = scratch_path("lz4.bin");
	struct svmtrace_summary sum;
	struct svmtrace_error err;
	char block[LZ4_COMPRESSBOUND(4096)];
	int stored;

	/* repeat the walkthrough's session so LZ4 has something to fold */
	for (int i = 0; i < 8; i++) {
		struct bytes *one = new_bytes();

		walkthrough_records(one);
		one->b[1] = (uint8_t)(10 + 3 * i); /* sequence 10, 13, ... (one-byte varint) */
		one->b[one->n - 28] = (uint8_t)(12 + 3 * i); /* session end sequence */
		put_raw(r, one->b, one->n);
		free(one);
	}
	stored = LZ4_compress_default((const char *)r->b, block, (int)r->n, sizeof(block));
	ck_assert_int_gt(stored, 0);
	ck_assert_int_lt(stored, (int)r->n);
	file_header(f, 0);
	put32(f, (uint32_t)r->n);
	put32(f, (uint32_t)stored);
	put_raw(f, block, (size_t)stored);
	write_bytes(path, f->b, f->n);
	ck_assert_msg(svmtrace_read(path, NULL, NULL, &sum, &err) == 0, "%s", err.message);
	ck_assert_uint_eq(sum.frames_lz4, 1);
	ck_assert_uint_eq(sum.records, 24);
	ck_assert_uint_eq(sum.session_starts, 8);
	ck_assert_uint_eq(sum.session_ends, 8);
	ck_assert_uint_eq(sum.last_sequence, 12 + 21);
	free(f);
	free(r);
}
END_TEST

/* ---- defensive checks: each broken file and its exact message ---- */

struct broken {
	const char *name;
	int status;
	const char *message; /* after "PATH: " */
	void (*build)(struct bytes *f);
};

static void empty(struct bytes *f)
{
	(void)f;
}

static void bad_magic(struct bytes *f)
{
	put_raw(f, "FTRD", 4);
	put32(f, 5);
	put32(f, 0);
	put32(f, 1);
}

static void bad_version(struct bytes *f)
{
	put_raw(f, "FTRC", 4);
	put32(f, 4);
	put32(f, 0);
	put32(f, 1);
}

static void unframed(struct bytes *f)
{
	put_raw(f, "FTRC", 4);
	put32(f, 5);
	put32(f, 0);
	put32(f, 0);
}

static void unknown_flags(struct bytes *f)
{
	put_raw(f, "FTRC", 4);
	put32(f, 5);
	put32(f, 0);
	put32(f, 5); /* framed, and bit 2 (bit 1 is M: memory operands) */
}

static void zero_frame(struct bytes *f)
{
	file_header(f, 0);
	put32(f, 0);
	put32(f, 0);
}

static void oversized_frame(struct bytes *f)
{
	file_header(f, 0);
	put32(f, 65537);
	put32(f, 100);
}

static void stored_over_decoded(struct bytes *f)
{
	file_header(f, 0);
	put32(f, 10);
	put32(f, 11);
}

/* A valid LZ4 block of 64 bytes whose frame header claims 64 + @extra. */
static void lz4_claiming(struct bytes *f, int extra)
{
	struct bytes *r = new_bytes();
	char block[LZ4_COMPRESSBOUND(4096)];
	int stored;

	for (int i = 0; i < 4; i++)
		put_raw(r, "\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a\x0b\x0c\x0d\x0e\x0f\x10", 16);
	stored = LZ4_compress_default((const char *)r->b, block, (int)r->n, sizeof(block));
	ck_assert_int_lt(stored, (int)r->n);
	file_header(f, 0);
	put32(f, (uint32_t)((int)r->n + extra));
	put32(f, (uint32_t)stored);
	put_raw(f, block, (size_t)stored);
	free(r);
}

static void lz4_short(struct bytes *f)
{
	lz4_claiming(f, 36);
}

static void lz4_long(struct bytes *f)
{
	lz4_claiming(f, -4);
}

static void lz4_corrupt(struct bytes *f)
{
	/* one literal 'A', then a match 5 bytes back when only 1 byte exists */
	file_header(f, 0);
	put32(f, 5);
	put32(f, 4);
	put_raw(f, "\x10\x41\x05\x00", 4);
}

/*
 * The walkthrough's 76 bytes of records as one LZ4 block whose one match has
 * offset 0, which the LZ4 block format calls invalid: 28 literals (up to
 * and including RBX's 0), a match of 14 (RCX..R15, all 0), 34 literals.
 * liblz4 1.9.4 decodes it without complaint, to the very records.
 */
static void lz4_offset_zero(struct bytes *f)
{
	struct bytes *r = new_bytes();

	walkthrough_records(r);
	ck_assert_uint_eq(r->n, 76);
	file_header(f, 0);
	put32(f, 76);
	put32(f, 68);
	put8(f, 0xfa); /* token: 15 literals and more, match 4 + 10 */
	put8(f, 13);   /* 15 + 13 = 28 literals */
	put_raw(f, r->b, 28);
	put16(f, 0);   /* match offset 0 */
	put8(f, 0xf0); /* the last sequence: 15 literals and more */
	put8(f, 19);   /* 15 + 19 = 34 */
	put_raw(f, r->b + 42, 34);
	free(r);
}

/* 28 literals and a match of 14 at offset 1 (what a compressor makes of
 * the same zeros); then @last literals, or none. */
static void lz4_ending(struct bytes *f, uint8_t match_nibble, int last)
{
	struct bytes *r = new_bytes();
	uint32_t decoded = 28 + 4 + match_nibble + (last > 0 ? (uint32_t)last : 0);

	walkthrough_records(r);
	file_header(f, 0);
	put32(f, decoded);
	put32(f, 2 + 28 + 2 + (last > 0 ? 1 + (uint32_t)last : 0));
	put8(f, 0xf0 | match_nibble);
	put8(f, 13);
	put_raw(f, r->b, 28);
	put16(f, 1);
	if (last > 0) {
		put8(f, (uint8_t)(last << 4));
		put_raw(f, r->b + 42, (size_t)last);
	}
	free(r);
}

static void lz4_ends_with_match(struct bytes *f)
{
	lz4_ending(f, 10, 0);
}

static void lz4_four_last_literals(struct bytes *f)
{
	lz4_ending(f, 10, 4);
}

static void lz4_match_near_end(struct bytes *f)
{
	lz4_ending(f, 2, 5); /* a match of 6, then 5 literals: it starts 11 bytes before the end */
}

static void truncated_header(struct bytes *f)
{
	file_header(f, 0);
	put8(f, 5);
	put8(f, 0);
	put8(f, 0);
}

static void truncated_payload(struct bytes *f)
{
	file_header(f, 0);
	put32(f, 100);
	put32(f, 100);
	put_raw(f, "\x02\x0a", 2);
}

/* One raw frame holding @n bytes of @rec. */
static void frame_of(struct bytes *f, const void *rec, size_t n)
{
	struct bytes *r = new_bytes();

	put_raw(r, rec, n);
	file_header(f, 0);
	raw_frame(f, r);
	free(r);
}

/* The walkthrough's session start record with its header byte replaced. */
static void start_record(struct bytes *r, uint8_t header, uint64_t seq)
{
	put8(r, header);
	put_varint(r, seq);
	put64(r, 1000);
	put_varint(r, 0);
	put64(r, 0x140001005);
	put_varint(r, 0x202);
	put_varint(r, 0x12345000);
	for (int i = 0; i < 16; i++)
		put_varint(r, 0);
}

static void frame_of_records(struct bytes *f, const struct bytes *r)
{
	file_header(f, 0);
	raw_frame(f, r);
}

static void delta_first(struct bytes *f)
{
	frame_of(f, "\x04\x06", 2);
}

/* After the walkthrough's start: a delta with RIP +3 and then @rest. */
static void delta_with(struct bytes *f, uint8_t header, const char *rest, size_t n)
{
	struct bytes *r = new_bytes();

	start_record(r, 0x02, 10);
	put8(r, header);
	put8(r, 0x06);
	put_raw(r, rest, n);
	frame_of_records(f, r);
	free(r);
}

static void ops_count_zero(struct bytes *f)
{
	delta_with(f, 0x84, "\x00", 1);
}

static void ops_count_17(struct bytes *f)
{
	delta_with(f, 0x84, "\x11", 1);
}

static void ops_cut_short(struct bytes *f)
{
	delta_with(f, 0x84, "\x02\x10\x00\x20", 4);
}

static void copy_into_itself(struct bytes *f)
{
	delta_with(f, 0x84, "\x01\x11\x00", 3);
}

static void op_undefined(struct bytes *f)
{
	delta_with(f, 0x84, "\x01\x10\x05", 3);
}

static void rol_by_0(struct bytes *f)
{
	delta_with(f, 0x84, "\x01\x11\x40", 3);
}

static void rol32_by_32(struct bytes *f)
{
	delta_with(f, 0x84, "\x01\x11\xa0", 3);
}

static void ops_twice(struct bytes *f)
{
	delta_with(f, 0x84, "\x02\x10\x00\x12\x01", 5);
}

static void ops_and_delta(struct bytes *f)
{
	/* OPS rbx <- rax, and GPR mask rbx +1 */
	delta_with(f, 0x8c, "\x01\x10\x00\x02\x00\x02", 6);
}

static void full_reserved(struct bytes *f)
{
	struct bytes *r = new_bytes();

	start_record(r, 0x12, 10);
	frame_of_records(f, r);
	free(r);
}

static void end_reserved(struct bytes *f)
{
	struct bytes *r = new_bytes();

	put8(r, 0x23); /* bit 5: bits 2..4 are G, S and X */
	for (int i = 0; i < 28; i++)
		put8(r, 0);
	frame_of_records(f, r);
	free(r);
}

static void end_x_without_s(struct bytes *f)
{
	struct bytes *r = new_bytes();

	put8(r, 0x13);
	for (int i = 0; i < 28; i++)
		put8(r, 0);
	frame_of_records(f, r);
	free(r);
}

static void record_past_frame(struct bytes *f)
{
	frame_of(f, "\x02\x0a\xe8\x03\x00", 5);
}

static void varint_past_frame(struct bytes *f)
{
	frame_of(f, "\x02\x80", 2);
}

static void varint_too_long(struct bytes *f)
{
	frame_of(f, "\x02\x80\x80\x80\x80\x80\x80\x80\x80\x80\x80\x01", 12);
}

static void varint_too_big(struct bytes *f)
{
	frame_of(f, "\x02\xff\xff\xff\xff\xff\xff\xff\xff\xff\x02", 11);
}

static void reason_too_big(struct bytes *f)
{
	struct bytes *r = new_bytes();

	put8(r, 0x02);
	put_varint(r, 10);
	put64(r, 1000);
	put_varint(r, 1ull << 32);
	frame_of_records(f, r);
	free(r);
}

static void rip_without_history(struct bytes *f)
{
	struct bytes *r = new_bytes();

	start_record(r, 0x02, 10);
	put8(r, 0x00); /* everything predicted, but nothing ran here before */
	frame_of_records(f, r);
	free(r);
}

static void ymm_without_xstate(struct bytes *f)
{
	struct bytes *r = new_bytes();

	start_record(r, 0x02, 10);
	put8(r, 0x44); /* RIP explicit + XSTATE */
	put_svarint(r, 3);
	put64(r, 7);
	put16(r, 0);
	frame_of_records(f, r);
	free(r);
}

static void sequence_repeats(struct bytes *f)
{
	struct bytes *r = new_bytes();

	start_record(r, 0x02, 10);
	start_record(r, 0x01, 10);
	frame_of_records(f, r);
	free(r);
}

static void delta_after_end(struct bytes *f)
{
	struct bytes *r = new_bytes();

	start_record(r, 0x02, 10);
	put8(r, 0x03);
	put64(r, 11);
	put64(r, 1010);
	put32(r, 0);
	put64(r, 0x140001008);
	put8(r, 0x04);
	put_svarint(r, 3);
	frame_of_records(f, r);
	free(r);
}

static const struct broken broken_files[] = {
	{ "empty", SVMTRACE_E_FORMAT,
	  "offset 0: file is 0 bytes, shorter than the 16-byte v5 header", empty },
	{ "magic", SVMTRACE_E_FORMAT, "offset 0: bad magic 46 54 52 44 (expected \"FTRC\")",
	  bad_magic },
	{ "version", SVMTRACE_E_FORMAT, "offset 4: format version 4 (this reader reads version 5)",
	  bad_version },
	{ "unframed", SVMTRACE_E_FORMAT, "offset 12: flags 0x0: the framed-body bit 0x1 is clear",
	  unframed },
	{ "flags", SVMTRACE_E_FORMAT, "offset 12: flags 0x5: unknown bits 0x4 set", unknown_flags },
	{ "zero frame", SVMTRACE_E_FORMAT, "offset 16: frame decoded size 0 is outside 1..65536",
	  zero_frame },
	{ "oversized frame", SVMTRACE_E_FORMAT,
	  "offset 16: frame decoded size 65537 is outside 1..65536", oversized_frame },
	{ "stored > decoded", SVMTRACE_E_FORMAT,
	  "offset 16: frame stored size 11 is outside 1..10 (its decoded size)",
	  stored_over_decoded },
	{ "lz4 short", SVMTRACE_E_FORMAT,
	  "offset 16: LZ4 block of 27 bytes decodes to 64 bytes, not 100", lz4_short },
	{ "lz4 long", SVMTRACE_E_FORMAT,
	  "offset 16: LZ4 block of 27 bytes decodes to more than the frame's 60 bytes", lz4_long },
	{ "lz4 corrupt", SVMTRACE_E_FORMAT,
	  "offset 16: LZ4 block byte 2 of 4: match offset 5 reaches before the block (1 decoded "
	  "so far)",
	  lz4_corrupt },
	{ "lz4 offset 0", SVMTRACE_E_FORMAT,
	  "offset 16: LZ4 block byte 30 of 68: match offset 0 (the LZ4 block format has no "
	  "offset 0)",
	  lz4_offset_zero },
	{ "lz4 ends with a match", SVMTRACE_E_FORMAT,
	  "offset 16: LZ4 block ends with a match at byte 32: its last sequence must be literals "
	  "only",
	  lz4_ends_with_match },
	{ "lz4 4 last literals", SVMTRACE_E_FORMAT,
	  "offset 16: LZ4 block's last sequence has 4 literals: the last 5 bytes of a block with "
	  "matches must be literals",
	  lz4_four_last_literals },
	{ "lz4 match near the end", SVMTRACE_E_FORMAT,
	  "offset 16: LZ4 block's last match starts 11 bytes before its end (at least 12)",
	  lz4_match_near_end },
	{ "truncated header", SVMTRACE_E_TRUNCATED,
	  "offset 16: truncated at offset 16: the frame header has 3 of 8 bytes",
	  truncated_header },
	{ "truncated payload", SVMTRACE_E_TRUNCATED,
	  "offset 16: truncated at offset 16: the frame has 10 of 108 bytes", truncated_payload },
	{ "delta first", SVMTRACE_E_FORMAT,
	  "offset 16: frame byte 0 of 2: delta record before any anchor in this frame",
	  delta_first },
	{ "ops count 0", SVMTRACE_E_FORMAT,
	  "offset 16: frame byte 42 of 45: operation count 0 is outside 1..16", ops_count_zero },
	{ "ops count 17", SVMTRACE_E_FORMAT,
	  "offset 16: frame byte 42 of 45: operation count 17 is outside 1..16", ops_count_17 },
	{ "ops cut short", SVMTRACE_E_FORMAT,
	  "offset 16: frame byte 42 of 48: operations needs 4 bytes, the frame has 3 left",
	  ops_cut_short },
	{ "copy into itself", SVMTRACE_E_FORMAT,
	  "offset 16: frame byte 42 of 47: operation 11 00 (rbx from rbx) is not defined",
	  copy_into_itself },
	{ "op undefined", SVMTRACE_E_FORMAT,
	  "offset 16: frame byte 42 of 47: operation 10 05 (rbx from rax) is not defined",
	  op_undefined },
	{ "rol by 0", SVMTRACE_E_FORMAT,
	  "offset 16: frame byte 42 of 47: operation 11 40 (rbx from rbx) is not defined",
	  rol_by_0 },
	{ "rol32 by 32", SVMTRACE_E_FORMAT,
	  "offset 16: frame byte 42 of 47: operation 11 a0 (rbx from rbx) is not defined",
	  rol32_by_32 },
	{ "ops twice", SVMTRACE_E_FORMAT,
	  "offset 16: frame byte 42 of 49: operation 12 01 writes rbx twice", ops_twice },
	{ "ops and delta", SVMTRACE_E_FORMAT,
	  "offset 16: frame byte 42 of 50: GPR mask 0x0002 has registers OPS wrote (0x0002)",
	  ops_and_delta },
	{ "full reserved", SVMTRACE_E_FORMAT,
	  "offset 16: frame byte 0 of 42: session start header 0x12 has reserved bits 0x10 set",
	  full_reserved },
	{ "end reserved", SVMTRACE_E_FORMAT,
	  "offset 16: frame byte 0 of 29: session end header 0x23 has reserved bits 0x20 set",
	  end_reserved },
	{ "end X without S", SVMTRACE_E_FORMAT,
	  "offset 16: frame byte 0 of 29: session end header 0x13 has X (0x10) without S (0x08)",
	  end_x_without_s },
	{ "record past frame", SVMTRACE_E_FORMAT,
	  "offset 16: frame byte 0 of 5: TSC needs 8 bytes, the frame has 3 left",
	  record_past_frame },
	{ "varint past frame", SVMTRACE_E_FORMAT,
	  "offset 16: frame byte 0 of 2: sequence varint runs past the end of the frame",
	  varint_past_frame },
	{ "varint too long", SVMTRACE_E_FORMAT,
	  "offset 16: frame byte 0 of 12: sequence varint is longer than 10 bytes",
	  varint_too_long },
	{ "varint too big", SVMTRACE_E_FORMAT,
	  "offset 16: frame byte 0 of 11: sequence varint does not fit in 64 bits",
	  varint_too_big },
	{ "reason too big", SVMTRACE_E_FORMAT,
	  "offset 16: frame byte 0 of 15: reason 4294967296 does not fit in 32 bits",
	  reason_too_big },
	{ "rip without history", SVMTRACE_E_FORMAT,
	  "offset 16: frame byte 42 of 43: delta predicts the RIP after 0x140001005, which has "
	  "no history",
	  rip_without_history },
	{ "ymm without xstate", SVMTRACE_E_FORMAT,
	  "offset 16: frame byte 42 of 54: delta carries YMM state, its anchor has none",
	  ymm_without_xstate },
	{ "sequence repeats", SVMTRACE_E_FORMAT,
	  "offset 16: frame byte 42 of 84: sequence 10 does not follow 10", sequence_repeats },
	{ "delta after end", SVMTRACE_E_FORMAT,
	  "offset 16: frame byte 71 of 73: delta record before any anchor in this frame",
	  delta_after_end },
};

START_TEST(broken_file_is_rejected)
{
	const struct broken *t = &broken_files[_i];
	struct bytes *f = new_bytes();
	const char *path = scratch_path("broken.bin");
	struct svmtrace_error err = { 0 };
	char expect[512];
	int ret;

	t->build(f);
	write_bytes(path, f->b, f->n);
	ret = svmtrace_read(path, NULL, NULL, NULL, &err);
	snprintf(expect, sizeof(expect), "%s: %s", path, t->message);
	ck_assert_msg(ret == t->status, "%s: status %d, expected %d (%s)", t->name, ret, t->status,
		      err.message);
	ck_assert_msg(err.status == t->status, "%s: error status %d", t->name, err.status);
	ck_assert_msg(!strcmp(err.message, expect), "%s:\n got  '%s'\n want '%s'", t->name,
		      err.message, expect);
	free(f);
}
END_TEST

/* The same bytes through the memory reader give the same verdict. */
START_TEST(memory_reader_agrees)
{
	const struct broken *t = &broken_files[_i];
	struct bytes *f = new_bytes();
	struct svmtrace_reader *r;
	struct svmtrace_error err = { 0 };
	const struct svmtrace_record *rec;
	char expect[512];
	int ret;

	t->build(f);
	ret = svmtrace_reader_open_memory(f->b, f->n, "mem", &r, &err);
	if (!ret) {
		while ((ret = svmtrace_reader_next(r, &rec)) > 0)
			;
		err = *svmtrace_reader_error(r);
		svmtrace_reader_close(r);
	}
	snprintf(expect, sizeof(expect), "mem: %s", t->message);
	ck_assert_int_eq(ret, t->status);
	ck_assert_str_eq(err.message, expect);
	free(f);
}
END_TEST

/* A file cut inside its third frame still yields every record of the first two. */
START_TEST(truncated_file_keeps_complete_frames)
{
	const char *path = scratch_path("cut.bin");
	struct svmtrace_writer_options o;
	struct svmtrace_writer *w;
	struct svmtrace_error err;
	struct svmtrace_reader *r;
	const struct svmtrace_record *rec;
	struct svmtrace_slot s = { .cr3 = 0x1000 };
	uint64_t rnd = 99, frame3 = 0, n = 0, in_two = 0;
	struct bytes *f = new_bytes();
	FILE *in;
	int ret;

	svmtrace_writer_options_init(&o);
	o.anchor_interval = 4; /* big records: three frames come quickly */
	ck_assert_int_eq(svmtrace_writer_open(path, &o, &w, &err), 0);
	for (uint64_t i = 0; i < 9000; i++) {
		s.kind = i ? SVMTRACE_SLOT_INSTRUCTION : SVMTRACE_SLOT_SESSION_START;
		s.seq = i + 1;
		s.rip = test_rand(&rnd);
		for (int g = 0; g < 16; g++)
			s.gpr[g] = test_rand(&rnd);
		ck_assert_int_eq(svmtrace_writer_append(w, &s, &err), 0);
	}
	ck_assert_int_eq(svmtrace_writer_close(w, &err), 0);
	ck_assert_uint_ge(svmtrace_reader_open(path, &r, &err), 0);
	while ((ret = svmtrace_reader_next(r, &rec)) > 0) {
		const struct svmtrace_summary *sum = svmtrace_reader_summary(r);

		if (sum->frames_raw + sum->frames_lz4 == 3 && !frame3)
			frame3 = rec->frame_offset;
		if (sum->frames_raw + sum->frames_lz4 <= 2)
			in_two++;
	}
	svmtrace_reader_close(r);
	ck_assert_uint_gt(frame3, 0);

	in = fopen(path, "rb");
	f->n = fread(f->b, 1, (size_t)frame3 + 100, in);
	fclose(in);
	ck_assert_uint_eq(f->n, frame3 + 100);
	write_bytes(path, f->b, f->n); /* keep frames 1-2 and 100 bytes of frame 3 */

	ck_assert_int_eq(svmtrace_reader_open(path, &r, &err), 0);
	while ((ret = svmtrace_reader_next(r, &rec)) > 0) {
		expect_eq(rec->sequence, n + 1, "sequence", n);
		n++;
	}
	ck_assert_int_eq(ret, SVMTRACE_E_TRUNCATED);
	ck_assert_uint_eq(n, in_two);
	ck_assert(svmtrace_reader_summary(r)->truncated);
	ck_assert_uint_eq(svmtrace_reader_summary(r)->truncated_at, frame3);
	ck_assert_ptr_nonnull(strstr(svmtrace_reader_error(r)->message, "truncated at offset"));
	svmtrace_reader_close(r);
	free(f);
}
END_TEST

/* The session end of the walkthrough as the first record of a frame: with S. */
static void walkthrough_end_with_state(struct bytes *r)
{
	put8(r, 0x0b); /* session end, S */
	put64(r, 12);
	put64(r, 1010);
	put32(r, SVMTRACE_END_STOP);
	put64(r, 0x140001008);
	put_varint(r, 0x202);	   /* rflags */
	put_varint(r, 0x12345000); /* cr3 */
	put_varint(r, 8);	   /* rax */
	for (int i = 1; i < 16; i++)
		put_varint(r, 0);
}

static void expect_walkthrough_end(const char *path)
{
	struct svmtrace_reader *rd;
	struct svmtrace_error err;
	const struct svmtrace_record *rec;

	ck_assert_int_eq(svmtrace_reader_open(path, &rd, &err), 0);
	do
		ck_assert_int_eq(svmtrace_reader_next(rd, &rec), 1);
	while (rec->kind != SVMTRACE_SLOT_SESSION_END);
	ck_assert(rec->state_known);
	ck_assert_uint_eq(rec->sequence, 12);
	ck_assert_uint_eq(rec->state->rip, 0x140001008);
	ck_assert_uint_eq(rec->state->rflags, 0x202);
	ck_assert_uint_eq(rec->state->cr3, 0x12345000);
	ck_assert_uint_eq(rec->state->gpr[SVMTRACE_RAX], 8);
	ck_assert_int_eq(svmtrace_reader_next(rd, &rec), 0);
	ck_assert_uint_eq(svmtrace_reader_summary(rd)->states_unknown, 0);
	svmtrace_reader_close(rd);
}

/*
 * A frame cut right before a session end: the end opens the next frame and
 * carries the state itself (S), so that frame alone still gives every field.
 */
/* docs/format.md: every session end reason has its documented name. */
START_TEST(end_reasons_have_their_names)
{
	static const char *const names[] = { "stop", "cr3", "vcpu-gone", "limit", "error",
					     "int", "event", "task-switch", "entry-failed" };

	for (uint32_t r = 0; r < sizeof(names) / sizeof(names[0]); r++)
		ck_assert_str_eq(svmtrace_end_reason_name(r), names[r]);
	ck_assert_str_eq(svmtrace_end_reason_name(9), "unknown");
}
END_TEST

START_TEST(end_opening_a_frame_carries_its_state)
{
	struct bytes *f = new_bytes(), *r = new_bytes(), *want = new_bytes();
	const char *path = scratch_path("end-first.bin");
	const char *alone = scratch_path("end-alone.bin");
	FILE *in;
	size_t first;

	write_walkthrough(path, true);

	walkthrough_end_with_state(r);
	in = fopen(path, "rb");
	ck_assert_ptr_nonnull(in);
	f->n = fread(f->b, 1, sizeof(f->b), in);
	fclose(in);
	first = 16 + 8 + 47; /* header, then the frame of the first two walkthrough records */
	ck_assert_uint_eq(f->n, first + 8 + r->n);
	raw_frame(want, r);
	ck_assert_mem_eq(f->b + first, want->b, want->n);
	expect_walkthrough_end(path);

	/* The second frame without the first: the end still knows its state. */
	memmove(f->b + 16, f->b + first, f->n - first);
	write_bytes(alone, f->b, f->n - (first - 16));
	expect_walkthrough_end(alone);
	free(f);
	free(r);
	free(want);
}
END_TEST

/*
 * A session end without S that opens its frame (an older writer, or the
 * frame before it lost): its RFLAGS, CR3 and GPRs are unknown and flagged.
 */
START_TEST(end_without_state_in_its_frame_is_flagged)
{
	struct bytes *f = new_bytes(), *r = new_bytes();
	const char *path = scratch_path("end-unknown.bin");
	struct svmtrace_reader *rd;
	struct svmtrace_error err;
	const struct svmtrace_record *rec;

	put8(r, 0x03);
	put64(r, 12);
	put64(r, 1010);
	put32(r, SVMTRACE_END_STOP);
	put64(r, 0x140001008);
	file_header(f, 3);
	raw_frame(f, r);
	write_bytes(path, f->b, f->n);
	ck_assert_int_eq(svmtrace_reader_open(path, &rd, &err), 0);
	ck_assert_int_eq(svmtrace_reader_next(rd, &rec), 1);
	ck_assert_int_eq(rec->kind, SVMTRACE_SLOT_SESSION_END);
	ck_assert(!rec->state_known);
	ck_assert_uint_eq(rec->state->rip, 0x140001008);
	ck_assert_int_eq(svmtrace_reader_next(rd, &rec), 0);
	ck_assert_uint_eq(svmtrace_reader_summary(rd)->states_unknown, 1);
	svmtrace_reader_close(rd);
	free(f);
	free(r);
}
END_TEST

/* With YMM state and a loss: S, X and G together, in the order the page gives. */
START_TEST(end_with_state_keeps_ymm_and_gap)
{
	struct bytes *f = new_bytes();
	const char *path = scratch_path("end-ymm.bin");
	struct svmtrace_writer_options o;
	struct svmtrace_writer *w;
	struct svmtrace_error err;
	struct svmtrace_reader *rd;
	const struct svmtrace_record *rec;
	struct svmtrace_slot_xstate x = { .base = { .kind = SVMTRACE_SLOT_SESSION_START,
						    .flags = SVMTRACE_SLOT_F_XSTATE,
						    .seq = 1,
						    .rip = 0x401000,
						    .rflags = 0x246,
						    .cr3 = 0x1aa000 },
					  .xstate_bv = 7 };
	struct svmtrace_slot end = { .kind = SVMTRACE_SLOT_SESSION_END,
				     .flags = SVMTRACE_SLOT_F_GAP,
				     .seq = 9,
				     .dropped = 5,
				     .reason = SVMTRACE_END_CR3,
				     .rip = 0x401010 };
	FILE *in;
	size_t first;

	svmtrace_writer_options_init(&o);
	o.raw_frames = true;
	ck_assert_int_eq(svmtrace_writer_open(path, &o, &w, &err), 0);
	for (int i = 0; i < 16; i++)
		x.ymm[i][i % 4] = 0x1111111111111111ull * (uint64_t)i;
	ck_assert_int_eq(svmtrace_writer_append_xstate(w, &x, &err), 0);
	x.base.kind = SVMTRACE_SLOT_INSTRUCTION;
	x.base.seq = 2;
	x.base.rip = 0x401004;
	x.base.gpr[SVMTRACE_RSP] = 0x7ffe0000;
	x.ymm[3][1] = 0xabcdef;
	ck_assert_int_eq(svmtrace_writer_append_xstate(w, &x, &err), 0);
	ck_assert_int_eq(svmtrace_writer_flush(w, &err), 0);
	/* As the kernel writes it: the end repeats the last step's state. */
	end.rflags = x.base.rflags;
	end.cr3 = x.base.cr3;
	memcpy(end.gpr, x.base.gpr, sizeof(end.gpr));
	ck_assert_int_eq(svmtrace_writer_append(w, &end, &err), 0);
	ck_assert_int_eq(svmtrace_writer_close(w, &err), 0);

	in = fopen(path, "rb");
	ck_assert_ptr_nonnull(in);
	f->n = fread(f->b, 1, sizeof(f->b), in);
	fclose(in);
	first = 16 + 8 + (f->b[16] | f->b[17] << 8);
	ck_assert_uint_eq(f->b[first + 8], 0x1f); /* session end, G, S, X */
	memmove(f->b + 16, f->b + first, f->n - first);
	write_bytes(path, f->b, f->n - (first - 16));

	ck_assert_int_eq(svmtrace_reader_open(path, &rd, &err), 0);
	ck_assert_int_eq(svmtrace_reader_next(rd, &rec), 1);
	ck_assert_int_eq(rec->kind, SVMTRACE_SLOT_SESSION_END);
	ck_assert(rec->state_known);
	ck_assert(rec->has_ymm);
	ck_assert_uint_eq(rec->dropped, 5);
	ck_assert_uint_eq(rec->reason, SVMTRACE_END_CR3);
	ck_assert_uint_eq(rec->state->rip, 0x401010);
	ck_assert_uint_eq(rec->state->rflags, 0x246);
	ck_assert_uint_eq(rec->state->gpr[SVMTRACE_RSP], 0x7ffe0000);
	ck_assert_uint_eq(rec->state->xstate_bv, 7);
	ck_assert_mem_eq(rec->state->ymm, x.ymm, sizeof(x.ymm));
	ck_assert_int_eq(svmtrace_reader_next(rd, &rec), 0);
	svmtrace_reader_close(rd);
	free(f);
}
END_TEST

static Suite *format_suite(void)
{
	Suite *s = suite_create("v5 format");
	TCase *tc = tcase_create("format");

	tcase_add_test(tc, walkthrough_decodes_as_specified);
	tcase_add_test(tc, end_reasons_have_their_names);
	tcase_add_test(tc, writer_produces_the_specified_bytes);
	tcase_add_test(tc, lz4_frame_decodes);
	tcase_add_loop_test(tc, broken_file_is_rejected, 0,
			    sizeof(broken_files) / sizeof(broken_files[0]));
	tcase_add_loop_test(tc, memory_reader_agrees, 0,
			    sizeof(broken_files) / sizeof(broken_files[0]));
	tcase_add_test(tc, truncated_file_keeps_complete_frames);
	tcase_add_test(tc, end_opening_a_frame_carries_its_state);
	tcase_add_test(tc, end_without_state_in_its_frame_is_flagged);
	tcase_add_test(tc, end_with_state_keeps_ymm_and_gap);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return run_suite(format_suite());
}
