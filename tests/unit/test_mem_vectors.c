// SPDX-License-Identifier: GPL-2.0
/*
 * Memory operands in v5 files: byte vectors written by hand from
 * docs/format.md ("Memory operands") alone, every byte spelled out with the
 * rule that gives it, and the records and accesses the page says they mean.
 * The reader must decode each vector to exactly those, and our writer, given
 * them, must produce exactly those bytes.  Then: a writer/reader round trip
 * of generated accesses over many frames, the size of a loop over
 * consecutive addresses, and the reader's refusals of broken memory parts.
 *
 * Covered by the vectors: the header's M flag; parts with no access (session
 * starts have one too); an explicit read with its value stored; a write
 * repeating the value before it (source 2); a read of the RIP after the
 * instruction (source 3, a ret); addresses counted from a base register,
 * from the frame's last access and from the access before; the entry's
 * accesses at addresses it did not predict (0x81) and at the ones it did
 * (0x80 with a stored value); a full record's part (no table, base 0) with
 * a value from a register; a read-modify-write with its read value from a
 * register and its written value stored; an unrecorded access with its why.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <svmtrace/trace.h>

#include "support.h"

#define INS   SVMTRACE_SLOT_INSTRUCTION
#define START SVMTRACE_SLOT_SESSION_START
#define END   SVMTRACE_SLOT_SESSION_END
#define R     SVMTRACE_MEM_READ
#define W     SVMTRACE_MEM_WRITE
#define RMW   SVMTRACE_MEM_RMW
#define U     SVMTRACE_MEM_UNRECORDED

/* An access as the page says it decodes: values as little-endian numbers. */
struct want_access {
	uint8_t kind, why;
	uint64_t addr;
	uint32_t size;
	uint64_t read, written; /* the values' first 8 bytes */
};

struct expect {
	uint16_t kind;
	uint64_t seq, tsc;
	uint32_t reason;
	uint64_t rip, rflags, cr3;
	uint64_t gpr[16];
	uint64_t dropped;
	bool full;
	unsigned int nr;
	struct want_access acc[2];
};

struct vector {
	const char *name;
	uint32_t cpu;
	const uint8_t *bytes;
	size_t size;
	const struct expect *records;
	size_t count;
};

/* clang-format off */
/*
 * ---- 1. rep movsb at 0x401000 copying "ABC" from 0x2000 to 0x3000: each
 * iteration is one step (RIP stays until RCX is 0), a read and a write.
 */
static const uint8_t movs_bytes[] = {
	0x46, 0x54, 0x52, 0x43, 0x05, 0, 0, 0, 0, 0, 0, 0, /* FTRC v5 cpu 0 */
	0x03, 0, 0, 0,                    /* flags: framed | M (memory operands) */
	0x61, 0, 0, 0, 0x61, 0, 0, 0,     /* frame: 97 decoded = 97 stored (raw) */
	/* session start: seq 1, tsc 0x100, gate 1, rip 0x401000 */
	0x02, 0x01, 0x00, 0x01, 0, 0, 0, 0, 0, 0, 0x01, 0x00, 0x10, 0x40, 0, 0, 0, 0, 0,
	0x82, 0x04,                       /* rflags 0x202 */
	0x80, 0x20,                       /* cr3 0x1000 */
	0x00, 0x00, 0x03, 0x00,           /* rax 0, rbx 0, rcx 3, rdx 0 */
	0x80, 0x40, 0x80, 0x60,           /* rsi 0x2000, rdi 0x3000 */
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0,     /* rbp, rsp, r8-r15 */
	0x00,                             /* memory: none (the step into the gate accessed none) */
	/* seq 2: delta RIP|GPR (no history): rip +0; mask rcx rsi rdi: -1 +1 +1 */
	0x0c, 0x00, 0x34, 0x00, 0x01, 0x02, 0x02,
	/* memory: 2 explicit accesses (the entry for 0x401000 has no history) */
	0x02,
	0x41,                             /* read, value stored, base register */
	0x04,                             /* base: rsi (0x2001 after the step) */
	0x01,                             /* address: rsi - 1 (from the frame's last end 0: 3 bytes) */
	0x01, 0x41,                       /* size 1, value 'A' */
	0x22,                             /* write, value = the one before it */
	0xfe, 0x3f,                       /* address: 0x2000 + 1 (access before) + 0xfff;
					     rdi - 1 would take as many bytes */
	0x01,                             /* size 1 */
	/* seq 3: delta, everything predicted */
	0x00,
	/* memory: the entry's accesses, at addresses it did not predict (stride 0) */
	0x81,
	0x02, 0x42,                       /* the read at 0x2000 + 1, its stored value 'B' */
	0x02,                             /* the write at 0x3000 + 1 (its value repeated) */
	/* seq 4: rcx reached 0: RIP +2 (0x401002), GPRs predicted */
	0x04, 0x04,
	/* memory predicted: 0x2001 + 1, 0x3001 + 1; the read's stored value 'C' */
	0x80, 0x43,
	/* session end: seq 5, tsc 0x200, stop, rip 0x401002 (no memory part: no step) */
	0x03, 0x05, 0, 0, 0, 0, 0, 0, 0, 0x00, 0x02, 0, 0, 0, 0, 0, 0,
	0, 0, 0, 0, 0x02, 0x10, 0x40, 0, 0, 0, 0, 0,
};
/* clang-format on */

static const struct expect movs_records[] = {
	{ START,
	  1,
	  0x100,
	  1,
	  0x401000,
	  0x202,
	  0x1000,
	  { 0, 0, 3, 0, 0x2000, 0x3000 },
	  0,
	  true,
	  0,
	  {} },
	{ INS,
	  2,
	  0,
	  0,
	  0x401000,
	  0x202,
	  0x1000,
	  { 0, 0, 2, 0, 0x2001, 0x3001 },
	  0,
	  false,
	  2,
	  { { R, 0, 0x2000, 1, 0x41, 0 }, { W, 0, 0x3000, 1, 0, 0x41 } } },
	{ INS,
	  3,
	  0,
	  0,
	  0x401000,
	  0x202,
	  0x1000,
	  { 0, 0, 1, 0, 0x2002, 0x3002 },
	  0,
	  false,
	  2,
	  { { R, 0, 0x2001, 1, 0x42, 0 }, { W, 0, 0x3001, 1, 0, 0x42 } } },
	{ INS,
	  4,
	  0,
	  0,
	  0x401002,
	  0x202,
	  0x1000,
	  { 0, 0, 0, 0, 0x2003, 0x3003 },
	  0,
	  false,
	  2,
	  { { R, 0, 0x2002, 1, 0x43, 0 }, { W, 0, 0x3002, 1, 0, 0x43 } } },
	{ END,
	  5,
	  0x200,
	  0,
	  0x401002,
	  0x202,
	  0x1000,
	  { 0, 0, 0, 0, 0x2003, 0x3003 },
	  0,
	  false,
	  0,
	  {} },
};

/* clang-format off */
/*
 * ---- 2. the stack: after a loss, push rax (an anchor: its part uses no
 * table), inc qword [rsp], an access too large to record, a nop.
 */
static const uint8_t stack_bytes[] = {
	0x46, 0x54, 0x52, 0x43, 0x05, 0, 0, 0, 0x01, 0, 0, 0, /* FTRC v5 cpu 1 */
	0x03, 0, 0, 0,                    /* framed | M */
	0x95, 0, 0, 0, 0x95, 0, 0, 0,     /* frame: 149 decoded = 149 stored */
	/* session start: seq 10, tsc 0x10, gate 2, rip 0x500000 */
	0x02, 0x0a, 0x10, 0, 0, 0, 0, 0, 0, 0, 0x02, 0x00, 0x00, 0x50, 0, 0, 0, 0, 0,
	0xc6, 0x04,                       /* rflags 0x246 */
	0x80, 0x40,                       /* cr3 0x2000 */
	0xb4, 0x24,                       /* rax 0x1234 */
	0, 0, 0, 0, 0, 0,                 /* rbx rcx rdx rsi rdi rbp */
	0xf0, 0xff, 0x01,                 /* rsp 0x7ff0 */
	0, 0, 0, 0, 0, 0, 0, 0,           /* r8-r15 */
	0x00,                             /* memory: none */
	/* seq 13 after 2 lost: anchor with G */
	0x09, 0x0d, 0x20, 0, 0, 0, 0, 0, 0, 0, 0x00, 0x01, 0x00, 0x50, 0, 0, 0, 0, 0,
	0xc6, 0x04, 0x80, 0x40, 0xb4, 0x24, 0, 0, 0, 0, 0, 0,
	0xe8, 0xff, 0x01,                 /* rsp 0x7fe8 */
	0, 0, 0, 0, 0, 0, 0, 0,
	0x02,                             /* dropped 2 */
	/* memory: 1 access: write, value from a register, base register; registers: rax */
	0x01, 0x52, 0x00,
	0x07, 0x00,                       /* address: rsp + 0 (from a full record's base 0: 3 bytes) */
	0x08,                             /* size 8; the value is rax's 8 bytes */
	/* seq 14: inc qword [rsp] at 0x500001: RIP +4, RFLAGS 0x246 ^ 0x40 */
	0x14, 0x08, 0x40,
	/* memory: 1 access: rmw, read value from a register, written stored */
	0x01, 0x07, 0x00,                 /* registers: read rax, written (unused) 0 */
	0x0f,                             /* address: the frame's last end 0x7ff0 - 8 */
	0x08, 0x35, 0x12, 0, 0, 0, 0, 0, 0, /* size 8, written 0x1235 */
	/* seq 15: RIP +5, nothing else */
	0x04, 0x0a,
	/* memory: unrecorded (too large) at 0x7ff0 - 0x3f0 = 0x7c00, size 512 */
	0x01, 0x00, 0x02, 0xdf, 0x0f, 0x80, 0x04,
	/* seq 16: RIP +1, no access */
	0x04, 0x02, 0x00,
	/* session end: seq 17, tsc 0x30, stop, rip 0x50000b */
	0x03, 0x11, 0, 0, 0, 0, 0, 0, 0, 0x30, 0, 0, 0, 0, 0, 0, 0,
	0, 0, 0, 0, 0x0b, 0x00, 0x50, 0, 0, 0, 0, 0,
};
/* clang-format on */

#define STACK_GPRS(rsp)                                                                            \
	{                                                                                          \
		0x1234, 0, 0, 0, 0, 0, 0, rsp                                                      \
	}
static const struct expect stack_records[] = {
	{ START, 10, 0x10, 2, 0x500000, 0x246, 0x2000, STACK_GPRS(0x7ff0), 0, true, 0, {} },
	{ INS,
	  13,
	  0x20,
	  0,
	  0x500001,
	  0x246,
	  0x2000,
	  STACK_GPRS(0x7fe8),
	  2,
	  true,
	  1,
	  { { W, 0, 0x7fe8, 8, 0, 0x1234 } } },
	{ INS,
	  14,
	  0,
	  0,
	  0x500005,
	  0x206,
	  0x2000,
	  STACK_GPRS(0x7fe8),
	  0,
	  false,
	  1,
	  { { RMW, 0, 0x7fe8, 8, 0x1234, 0x1235 } } },
	{ INS,
	  15,
	  0,
	  0,
	  0x50000a,
	  0x206,
	  0x2000,
	  STACK_GPRS(0x7fe8),
	  0,
	  false,
	  1,
	  { { U, SVMTRACE_MEM_WHY_TOO_LARGE, 0x7c00, 512, 0, 0 } } },
	{ INS, 16, 0, 0, 0x50000b, 0x206, 0x2000, STACK_GPRS(0x7fe8), 0, false, 0, {} },
	{ END, 17, 0x30, 0, 0x50000b, 0x206, 0x2000, STACK_GPRS(0x7fe8), 0, false, 0, {} },
};

/* clang-format off */
/*
 * ---- 3. ret at 0x401000: the return address it reads is the RIP after it
 * (source 3).
 */
static const uint8_t ret_bytes[] = {
	0x46, 0x54, 0x52, 0x43, 0x05, 0, 0, 0, 0x02, 0, 0, 0, /* FTRC v5 cpu 2 */
	0x03, 0, 0, 0,                    /* framed | M */
	0x51, 0, 0, 0, 0x51, 0, 0, 0,     /* frame: 81 decoded = 81 stored */
	/* session start: seq 1, tsc 0, gate 0, rip 0x401000, rflags 0x202, cr3 0 */
	0x02, 0x01, 0, 0, 0, 0, 0, 0, 0, 0, 0x00, 0x00, 0x10, 0x40, 0, 0, 0, 0, 0,
	0x82, 0x04, 0x00,
	0, 0, 0, 0, 0, 0, 0,              /* rax rbx rcx rdx rsi rdi rbp */
	0xf8, 0xff, 0x01,                 /* rsp 0x7ff8 */
	0, 0, 0, 0, 0, 0, 0, 0,           /* r8-r15 */
	0x00,                             /* memory: none */
	/* seq 2: delta RIP|GPR: rip 0x400123 (-0xedd), rsp +8 */
	0x0c, 0xb9, 0x3b, 0x80, 0x00, 0x10,
	/* memory: 1 access: read, value = the RIP's 8 bytes, base register */
	0x01, 0x4d,
	0x07, 0x0f,                       /* address: rsp (0x8000 after the ret) - 8 */
	0x08,                             /* size 8 */
	/* session end: seq 3, tsc 0, stop, rip 0x400123 */
	0x03, 0x03, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	0, 0, 0, 0, 0x23, 0x01, 0x40, 0, 0, 0, 0, 0,
};
/* clang-format on */

static const struct expect ret_records[] = {
	{ START, 1, 0, 0, 0x401000, 0x202, 0, { 0, 0, 0, 0, 0, 0, 0, 0x7ff8 }, 0, true, 0, {} },
	{ INS,
	  2,
	  0,
	  0,
	  0x400123,
	  0x202,
	  0,
	  { 0, 0, 0, 0, 0, 0, 0, 0x8000 },
	  0,
	  false,
	  1,
	  { { R, 0, 0x7ff8, 8, 0x400123, 0 } } },
	{ END, 3, 0, 0, 0x400123, 0x202, 0, { 0, 0, 0, 0, 0, 0, 0, 0x8000 }, 0, false, 0, {} },
};

static const struct vector vectors[] = {
	{ "movs", 0, movs_bytes, sizeof(movs_bytes), movs_records, 5 },
	{ "stack", 1, stack_bytes, sizeof(stack_bytes), stack_records, 6 },
	{ "ret", 2, ret_bytes, sizeof(ret_bytes), ret_records, 3 },
};
#define NVECTORS (sizeof(vectors) / sizeof(vectors[0]))

static uint64_t le_value(const uint8_t *v, uint32_t size)
{
	uint64_t x = 0;

	for (uint32_t i = 0; i < size && i < 8; i++)
		x |= (uint64_t)v[i] << (8 * i);
	return x;
}

static void to_access(const struct want_access *w, struct svmtrace_mem_access *a)
{
	memset(a, 0, sizeof(*a));
	a->kind = w->kind;
	a->why = w->why;
	a->addr = w->addr;
	a->size = w->size;
	for (uint32_t i = 0; i < 8 && i < w->size && w->kind != U; i++) {
		a->read_value[i] = (uint8_t)(w->read >> (8 * i));
		a->write_value[i] = (uint8_t)(w->written >> (8 * i));
	}
	if (w->kind == W)
		memset(a->read_value, 0, sizeof(a->read_value));
	if (w->kind == R)
		memset(a->write_value, 0, sizeof(a->write_value));
}

static void check_record(const void *ctx, size_t i, const struct svmtrace_record *r)
{
	const struct vector *v = ctx;
	const struct expect *e = &v->records[i];

	ck_assert_msg(r->kind == e->kind, "%s record %zu: kind %u, want %u", v->name, i, r->kind,
		      e->kind);
	expect_eq(r->sequence, e->seq, "sequence", i);
	expect_eq(r->anchor, e->full, "full record", i);
	expect_eq(r->dropped, e->dropped, "dropped", i);
	if (r->has_tsc)
		expect_eq(r->tsc, e->tsc, "tsc", i);
	expect_eq(r->state->rip, e->rip, "rip", i);
	expect_eq(r->state->rflags, e->rflags, "rflags", i);
	for (int g = 0; g < 16; g++)
		expect_eq(r->state->gpr[g], e->gpr[g], svmtrace_gpr_names[g], i);
	ck_assert_msg(r->nr_mem == e->nr, "%s record %zu: %u accesses, want %u", v->name, i,
		      r->nr_mem, e->nr);
	for (unsigned int k = 0; k < e->nr; k++) {
		const struct svmtrace_mem_access *a = &r->mem[k];
		const struct want_access *w = &e->acc[k];

		expect_eq(a->kind, w->kind, "access kind", i);
		expect_eq(a->why, w->why, "access why", i);
		expect_eq(a->addr, w->addr, "access address", i);
		expect_eq(a->size, w->size, "access size", i);
		if (w->kind == R || w->kind == RMW)
			expect_eq(le_value(a->read_value, a->size), w->read, "read value", i);
		if (w->kind == W || w->kind == RMW)
			expect_eq(le_value(a->write_value, a->size), w->written, "written value",
				  i);
	}
}

START_TEST(reader_decodes_the_vector)
{
	const struct vector *v = &vectors[_i];
	struct svmtrace_summary sum;

	ck_assert_uint_eq(decode_all(v->bytes, v->size, v->name, v->count, check_record, v, &sum),
			  v->count);
	ck_assert(sum.has_mem);
}
END_TEST

/* Write the records of @v (with options @o) to @path. */
static void write_records(const char *path, const struct svmtrace_writer_options *o,
			  const struct expect *recs, size_t count)
{
	struct svmtrace_writer *w;
	struct svmtrace_error err;

	ck_assert_int_eq(svmtrace_writer_open(path, o, &w, &err), 0);
	for (size_t i = 0; i < count; i++) {
		const struct expect *e = &recs[i];
		struct svmtrace_mem_access acc[2];
		struct svmtrace_slot s;

		memset(&s, 0, sizeof(s));
		s.kind = e->kind;
		s.seq = e->seq;
		s.tsc = e->tsc;
		s.reason = e->reason;
		s.rip = e->rip;
		s.rflags = e->rflags;
		s.cr3 = e->cr3;
		memcpy(s.gpr, e->gpr, sizeof(e->gpr));
		s.dropped = e->dropped;
		s.flags = e->dropped ? SVMTRACE_SLOT_F_GAP : 0;
		for (unsigned int k = 0; k < e->nr; k++)
			to_access(&e->acc[k], &acc[k]);
		ck_assert_msg(svmtrace_writer_append_mem(w, &s, NULL, acc, e->nr, &err) == 0, "%s",
			      err.message);
	}
	ck_assert_msg(svmtrace_writer_close(w, &err) == 0, "%s", err.message);
}

START_TEST(writer_produces_the_vector)
{
	const struct vector *v = &vectors[_i];
	struct svmtrace_writer_options o;
	const char *path = scratch_path(v->name);

	svmtrace_writer_options_init(&o);
	o.cpu = v->cpu;
	o.raw_frames = true;
	o.mem = true;
	write_records(path, &o, v->records, v->count);
	expect_file_bytes(path, v->bytes, v->size, v->name);
}
END_TEST

/*
 * A file without memory operands is the same as before: the header's flags
 * are 1, and no record has accesses.
 */
START_TEST(without_mem_the_file_has_no_part)
{
	struct svmtrace_writer_options o;
	const char *path = scratch_path("nomem");
	struct expect recs[5];
	uint8_t *got;
	size_t size;

	memcpy(recs, movs_records, sizeof(recs));
	for (int i = 0; i < 5; i++)
		recs[i].nr = 0;
	svmtrace_writer_options_init(&o);
	o.raw_frames = true;
	write_records(path, &o, recs, 5);
	got = read_whole(path, &size);
	/* the movs vector less its M flag and its four memory parts (1 + 10 + 4 + 2 bytes) */
	ck_assert_uint_eq(size, sizeof(movs_bytes) - 17);
	ck_assert_uint_eq(got[12], 0x01);
	ck_assert_uint_eq(got[16], 97 - 17);
	free(got);
}
END_TEST

/* ---- generated accesses, many frames ---- */

static void random_access(uint64_t *rng, const uint64_t *gpr, uint64_t rip, uint64_t *base,
			  struct svmtrace_mem_access *a)
{
	uint64_t r = test_rand(rng);
	static const uint32_t sizes[] = { 1, 2, 4, 8, 16, 32, 3, 10 };

	memset(a, 0, sizeof(*a));
	a->kind = (uint8_t)(r & 3);
	a->size = sizes[r >> 2 & 7];
	a->addr = (r >> 5 & 7) ? *base : test_rand(rng);
	*base += a->size;
	if (a->kind == U) {
		a->why = (uint8_t)(1 + (r >> 8) % 4);
		a->size = (uint32_t)(test_rand(rng) % 1000);
		return;
	}
	for (uint32_t i = 0; i < a->size; i++) {
		a->read_value[i] = (uint8_t)test_rand(rng);
		a->write_value[i] = (uint8_t)test_rand(rng);
	}
	if (r >> 11 & 1 && a->size <= 8) /* a value a register holds, or the RIP */
		for (uint32_t i = 0; i < a->size; i++)
			a->read_value[i] =
				(uint8_t)((r >> 16 & 1 ? rip : gpr[r >> 12 & 15]) >> (8 * i));
}

START_TEST(round_trip_over_frames)
{
	enum { N = 60000 };
	struct svmtrace_writer_options o;
	struct svmtrace_writer *w;
	struct svmtrace_reader *rd;
	struct svmtrace_error err;
	const struct svmtrace_record *r;
	const char *path = scratch_path("random-mem");
	static struct svmtrace_mem_access want[N][4];
	static unsigned int nr[N];
	uint64_t rng = 0x1234567, base = 0x10000, i = 0;
	struct svmtrace_slot s;
	int ret;

	svmtrace_writer_options_init(&o);
	o.mem = true;
	o.anchor_interval = 50;
	ck_assert_int_eq(svmtrace_writer_open(path, &o, &w, &err), 0);
	memset(&s, 0, sizeof(s));
	s.rflags = 0x202;
	s.cr3 = 0x1000;
	for (uint64_t n = 0; n < N; n++) {
		s.seq = n + 1;
		s.kind = n == 0 ? START : INS;
		s.rip = 0x400000 +
			4 * (test_rand(&rng) % 8); /* a few instructions, again and again */
		s.gpr[test_rand(&rng) % 16] += test_rand(&rng) % 3;
		nr[n] = (unsigned int)(test_rand(&rng) % 5); /* the session start's step too */
		for (unsigned int k = 0; k < nr[n]; k++)
			random_access(&rng, (const uint64_t *)s.gpr, s.rip, &base, &want[n][k]);
		ck_assert_msg(svmtrace_writer_append_mem(w, &s, NULL, want[n], nr[n], &err) == 0,
			      "%s", err.message);
	}
	ck_assert_int_eq(svmtrace_writer_close(w, &err), 0);
	ck_assert_int_eq(svmtrace_reader_open(path, &rd, &err), 0);
	while ((ret = svmtrace_reader_next(rd, &r)) > 0) {
		ck_assert_uint_lt(i, N);
		expect_eq(r->nr_mem, nr[i], "access count", i);
		for (unsigned int k = 0; k < nr[i]; k++) {
			const struct svmtrace_mem_access *a = &r->mem[k], *b = &want[i][k];

			expect_eq(a->kind, b->kind, "kind", i);
			expect_eq(a->why, b->why, "why", i);
			expect_eq(a->addr, b->addr, "address", i);
			expect_eq(a->size, b->size, "size", i);
			if (b->kind == R || b->kind == RMW)
				ck_assert(!memcmp(a->read_value, b->read_value, b->size));
			if (b->kind == W || b->kind == RMW)
				ck_assert(!memcmp(a->write_value, b->write_value, b->size));
		}
		i++;
	}
	ck_assert_msg(ret == 0, "%s", svmtrace_reader_error(rd)->message);
	ck_assert_uint_eq(i, N);
	ck_assert_uint_gt(svmtrace_reader_summary(rd)->frames_lz4 +
				  svmtrace_reader_summary(rd)->frames_raw,
			  3);
	svmtrace_reader_close(rd);
}
END_TEST

/*
 * A byte loop (movzx eax, byte [rsi + rcx]; mov [rdi + rcx], al; inc rcx;
 * cmp rcx, rdx; jne): before LZ4 each of its two accesses costs one byte
 * (the predicted part of the load and of the store, values from rax), and
 * each of the three instructions without an access one byte (its empty
 * part): five bytes an iteration over the file without memory operands.
 */
START_TEST(loop_costs_a_byte_per_access)
{
	enum { ITER = 20000 };
	static const uint64_t rips[] = { 0x401000, 0x401004, 0x401008, 0x40100b, 0x40100e };
	struct svmtrace_writer_options o;
	struct svmtrace_writer *w;
	struct svmtrace_error err;
	uint64_t bytes[2], seq = 1, rng = 7;
	struct svmtrace_slot s;

	for (int mem = 0; mem < 2; mem++) {
		const char *path = scratch_path(mem ? "loop-mem" : "loop-plain");

		svmtrace_writer_options_init(&o);
		o.mem = mem;
		o.raw_frames = true;
		ck_assert_int_eq(svmtrace_writer_open(path, &o, &w, &err), 0);
		memset(&s, 0, sizeof(s));
		s.rflags = 0x202;
		s.cr3 = 0x1000;
		s.gpr[4] = 0x10000; /* rsi */
		s.gpr[5] = 0x20000; /* rdi */
		s.gpr[3] = ITER;    /* rdx */
		s.kind = START;
		s.rip = rips[0];
		s.seq = seq = 1;
		ck_assert_int_eq(svmtrace_writer_append(w, &s, &err), 0);
		s.kind = INS;
		rng = 7;
		for (uint64_t it = 0; it < ITER; it++) {
			for (int k = 0; k < 5; k++) {
				struct svmtrace_mem_access a;
				unsigned int n = 0;

				memset(&a, 0, sizeof(a));
				a.size = 1;
				if (k == 0) { /* the load */
					s.gpr[0] = test_rand(&rng) & 0xff;
					a.kind = R;
					a.addr = s.gpr[4] + s.gpr[2];
					a.read_value[0] = (uint8_t)s.gpr[0];
					n = 1;
				} else if (k == 1) { /* the store */
					a.kind = W;
					a.addr = s.gpr[5] + s.gpr[2];
					a.write_value[0] = (uint8_t)s.gpr[0];
					n = 1;
				} else if (k == 2) {
					s.gpr[2]++;
				} else if (k == 3) {
					s.rflags = s.gpr[2] == ITER ? 0x246 : 0x297;
				}
				s.rip = k == 4 && it + 1 < ITER ? rips[0] : rips[(k + 1) % 5];
				s.seq = ++seq;
				ck_assert_int_eq(svmtrace_writer_append_mem(w, &s, NULL, &a,
									    mem ? n : 0, &err),
						 0);
			}
		}
		ck_assert_int_eq(svmtrace_writer_close(w, &err), 0);
		free(read_whole(path, &bytes[mem]));
	}
	/*
	 * and the parts of full records (every 256th record) are explicit: a
	 * descriptor, the whole address, the size, the value, 8 bytes at most
	 * for a one-byte access
	 */
	ck_assert_msg(bytes[1] - bytes[0] <= 5 * (uint64_t)ITER + (5 * ITER / 256 + 1) * 8,
		      "memory parts cost %.2f bytes per iteration",
		      (double)(bytes[1] - bytes[0]) / ITER);
	fprintf(stderr, "loop: %llu bytes plain, %llu with memory: %.3f bytes per iteration\n",
		(unsigned long long)bytes[0], (unsigned long long)bytes[1],
		(double)(bytes[1] - bytes[0]) / ITER);
}
END_TEST

/* ---- refusals ---- */

/*
 * Vector @v with its byte at @at replaced by @b; the reader must stop with an
 * error whose message contains @want.
 */
struct broken {
	int v;
	size_t at;
	uint8_t b;
	const char *want;
};

static const struct broken broken[] = {
	/* movs: the session start's part, then the first delta's part at 24 + 42 + 7 */
	{ 0, 65, 0x80,
	  "memory part of a full record is predicted (0x80): full records predict nothing" },
	{ 0, 73, 0x11, "memory part header 0x11 (expected 0..16, 0x80 or 0x81)" },
	{ 0, 73, 0x81, "memory part predicts the accesses of 0x401000, which has no history" },
	{ 0, 73, 0x80, "memory part predicts the accesses of 0x401000, which has no history" },
	{ 0, 74, 0x81, "descriptor 0x81 has reserved bits 0x80 set" },
	{ 0, 75, 0x10, "base register 16 (expected 0..15)" },
	{ 0, 74, 0x21, "gives a source to a value a read access does not have" },
	{ 0, 74, 0x09, "read value repeats the value before it, and the record has none" },
	{ 0, 77, 0x00, "size 0 is outside 1..32" },
	{ 0, 77, 0x21, "size 33 is outside 1..32" },
	{ 0, 79, 0x12, "registers byte 0xfe names a register for a value not taken from one" },
	/* stack: the anchor's write from rax, size 8 at 24 + 43 + 43 + 5 */
	{ 1, 115, 0x10, "written value of 16 bytes from register rax (registers give at most 8)" },
	/* ret: the read from the RIP, size 8 at 24 + 41 + 6 + 4 */
	{ 2, 75, 0x09, "read value of 9 bytes from the RIP (at most 8)" },
};

START_TEST(reader_refuses_broken_parts)
{
	const struct broken *b = &broken[_i];
	const struct vector *v = &vectors[b->v];
	uint8_t buf[256];
	struct svmtrace_reader *rd;
	struct svmtrace_error err;
	const struct svmtrace_record *r;
	int ret;

	ck_assert_uint_le(v->size, sizeof(buf));
	memcpy(buf, v->bytes, v->size);
	buf[b->at] = b->b;
	ck_assert_int_eq(svmtrace_reader_open_memory(buf, v->size, "broken", &rd, &err), 0);
	while ((ret = svmtrace_reader_next(rd, &r)) > 0)
		;
	ck_assert_int_eq(ret, SVMTRACE_E_FORMAT);
	ck_assert_msg(strstr(svmtrace_reader_error(rd)->message, b->want),
		      "got \"%s\", want \"%s\"", svmtrace_reader_error(rd)->message, b->want);
	svmtrace_reader_close(rd);
}
END_TEST

/* The writer refuses accesses a file cannot hold, naming the slot and the access. */
START_TEST(writer_refuses_bad_accesses)
{
	struct svmtrace_writer_options o;
	struct svmtrace_writer *w;
	struct svmtrace_error err;
	struct svmtrace_mem_access a;
	struct svmtrace_slot s;

	svmtrace_writer_options_init(&o);
	ck_assert_int_eq(svmtrace_writer_open(scratch_path("refuse"), &o, &w, &err), 0);
	memset(&s, 0, sizeof(s));
	memset(&a, 0, sizeof(a));
	s.kind = INS;
	s.seq = 1;
	a.kind = R;
	a.size = 4;
	ck_assert_int_eq(svmtrace_writer_append_mem(w, &s, NULL, &a, 1, &err), SVMTRACE_E_INVALID);
	ck_assert(strstr(err.message, "opened without memory operands"));
	svmtrace_writer_discard(w);

	o.mem = true;
	ck_assert_int_eq(svmtrace_writer_open(scratch_path("refuse"), &o, &w, &err), 0);
	a.size = 33;
	ck_assert_int_eq(svmtrace_writer_append_mem(w, &s, NULL, &a, 1, &err), SVMTRACE_E_INVALID);
	ck_assert(strstr(err.message, "slot 1 memory access 0: recorded, size is not 1..32"));
	a.kind = U;
	a.why = 9;
	ck_assert_int_eq(svmtrace_writer_append_mem(w, &s, NULL, &a, 1, &err), SVMTRACE_E_INVALID);
	ck_assert(strstr(err.message, "unrecorded, why is not 1..4"));
	s.kind = END;
	a.why = 1;
	ck_assert_int_eq(svmtrace_writer_append_mem(w, &s, NULL, &a, 1, &err), SVMTRACE_E_INVALID);
	ck_assert(strstr(err.message, "slot 1 is a session end: it has no memory accesses"));
	svmtrace_writer_discard(w);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("mem");
	TCase *tc = tcase_create("memory operands");

	tcase_set_timeout(tc, 60);
	tcase_add_loop_test(tc, reader_decodes_the_vector, 0, NVECTORS);
	tcase_add_loop_test(tc, writer_produces_the_vector, 0, NVECTORS);
	tcase_add_test(tc, without_mem_the_file_has_no_part);
	tcase_add_test(tc, round_trip_over_frames);
	tcase_add_test(tc, loop_costs_a_byte_per_access);
	tcase_add_loop_test(tc, reader_refuses_broken_parts, 0, sizeof(broken) / sizeof(broken[0]));
	tcase_add_test(tc, writer_refuses_bad_accesses);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
