// SPDX-License-Identifier: GPL-2.0
/*
 * Writer -> reader round trips: every field of every slot must come back,
 * for anchor intervals 1, 2, 64 and 1000, raw frames, fast LZ4 and LZ4HC,
 * with loops (prediction hits), random states (prediction misses), sequence
 * jumps, losses, CR3 changes, several sessions and YMM state.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include <svmtrace/trace.h>

#include "support.h"

#define STREAM_SLOTS 30000

struct stream {
	struct svmtrace_slot_xstate *s;
	size_t n;
};

/* A loop-heavy stream shaped like real code, with every irregularity sprinkled in. */
static void make_program_stream(struct stream *st, uint64_t seed, bool ymm)
{
	uint64_t r = seed, seq = 100;
	struct svmtrace_slot_xstate cur = { 0 };
	static const int body_len = 23;
	uint64_t effect[23];

	for (int i = 0; i < body_len; i++)
		effect[i] = test_rand(&r) % 7 == 0 ? 0 : (test_rand(&r) % 64) - 16;
	st->s = calloc(STREAM_SLOTS, sizeof(*st->s));
	ck_assert_ptr_nonnull(st->s);
	cur.base.cr3 = 0x1aa000;
	cur.base.rflags = 0x202;
	cur.base.rip = 0x140001000;
	for (size_t i = 0; i < STREAM_SLOTS; i++) {
		struct svmtrace_slot *s = &cur.base;
		uint64_t roll = test_rand(&r) % 1000;
		int pc = (int)(i % body_len);

		s->kind = SVMTRACE_SLOT_INSTRUCTION;
		s->flags = ymm ? SVMTRACE_SLOT_F_XSTATE : 0;
		s->reason = 0;
		s->dropped = 0;
		seq += roll < 20 ? 2 + test_rand(&r) % 5 : 1; /* another vCPU stepped */
		s->seq = seq;
		s->tsc += 50 + test_rand(&r) % 9;
		s->rip = 0x140001000 + (uint64_t)pc * 3 + (roll < 5 ? test_rand(&r) % 4096 : 0);
		s->gpr[pc % 16] += effect[pc];
		if (roll < 30)
			s->gpr[test_rand(&r) % 16] = test_rand(&r); /* a load */
		if (roll >= 30 && roll < 60)
			s->rflags ^= 0x40 | 0x1; /* compare flips ZF/CF */
		if (roll == 61) {
			s->flags |= SVMTRACE_SLOT_F_GAP;
			s->dropped = 1 + test_rand(&r) % 100;
			seq += s->dropped;
			s->seq = seq;
		}
		if (roll == 62)
			s->cr3 ^= 0x1000;
		if (roll == 63)
			s->reason = 0x41; /* an instruction slot with a reason */
		if (ymm && roll < 50)
			cur.ymm[test_rand(&r) % 16][test_rand(&r) % 4] = test_rand(&r);
		if (ymm && roll == 64)
			cur.xstate_bv ^= 4;
		if (i == 0 || roll == 70)
			s->kind = SVMTRACE_SLOT_SESSION_START;
		if (roll == 71 || i == STREAM_SLOTS - 1)
			s->kind = SVMTRACE_SLOT_SESSION_END;
		if (s->kind == SVMTRACE_SLOT_SESSION_START)
			s->reason = (uint32_t)(test_rand(&r) % 8);
		if (s->kind == SVMTRACE_SLOT_SESSION_END) {
			s->reason = SVMTRACE_END_CR3;
			if (test_rand(&r) & 1) { /* losses right before the end */
				s->flags |= SVMTRACE_SLOT_F_GAP;
				s->dropped = 5;
				seq += 5;
				s->seq = seq;
			}
		}
		st->s[i] = cur;
	}
	st->n = STREAM_SLOTS;
}

/* Every field random: no prediction ever hits, varints are at their longest. */
static void make_random_stream(struct stream *st, uint64_t seed)
{
	uint64_t r = seed, seq = 1;

	st->s = calloc(STREAM_SLOTS, sizeof(*st->s));
	ck_assert_ptr_nonnull(st->s);
	for (size_t i = 0; i < STREAM_SLOTS; i++) {
		struct svmtrace_slot *s = &st->s[i].base;

		s->kind = i ? SVMTRACE_SLOT_INSTRUCTION : SVMTRACE_SLOT_SESSION_START;
		seq += 1 + (test_rand(&r) % 3 == 0 ? test_rand(&r) % 1000 : 0);
		s->seq = seq;
		s->tsc = test_rand(&r);
		s->rip = test_rand(&r);
		s->rflags = test_rand(&r);
		s->cr3 = 0xdead000;
		for (int g = 0; g < SVMTRACE_NR_GPRS; g++)
			s->gpr[g] = test_rand(&r);
	}
	st->n = STREAM_SLOTS;
}

static void write_stream(const struct stream *st, const char *path,
			 const struct svmtrace_writer_options *o, bool ymm)
{
	struct svmtrace_writer *w;
	struct svmtrace_error err;

	ck_assert_msg(svmtrace_writer_open(path, o, &w, &err) == 0, "%s", err.message);
	for (size_t i = 0; i < st->n; i++) {
		int ret = ymm ? svmtrace_writer_append_xstate(w, &st->s[i], &err)
			      : svmtrace_writer_append(w, &st->s[i].base, &err);

		if (ret)
			ck_abort_msg("%s", err.message);
	}
	ck_assert_uint_eq(svmtrace_writer_stats(w)->records, st->n);
	ck_assert_msg(svmtrace_writer_close(w, &err) == 0, "%s", err.message);
}

static void check_stream(const struct stream *st, const char *path, uint32_t cpu, bool ymm)
{
	struct svmtrace_reader *r;
	struct svmtrace_error err;
	const struct svmtrace_record *rec;
	const struct svmtrace_summary *sum;
	uint64_t anchors_seen = 0;
	size_t i = 0;
	int ret;

	ck_assert_msg(svmtrace_reader_open(path, &r, &err) == 0, "%s", err.message);
	while ((ret = svmtrace_reader_next(r, &rec)) > 0) {
		const struct svmtrace_slot *s = &st->s[i].base;

		if (i >= st->n)
			ck_abort_msg("more records than slots written");
		expect_eq(rec->cpu, cpu, "cpu", i);
		expect_eq(rec->kind, s->kind, "kind", i);
		expect_eq(rec->sequence, s->seq, "sequence", i);
		expect_eq(rec->state->rip, s->rip, "rip", i);
		expect_eq(rec->reason, s->reason, "reason", i);
		if (rec->has_tsc)
			expect_eq(rec->tsc, s->tsc, "tsc", i);
		if (s->kind != SVMTRACE_SLOT_INSTRUCTION || s->reason ||
		    (s->flags & SVMTRACE_SLOT_F_GAP))
			expect_eq(rec->has_tsc, true, "has_tsc", i);
		expect_eq(rec->dropped, s->flags & SVMTRACE_SLOT_F_GAP ? s->dropped : 0, "dropped",
			  i);
		anchors_seen += rec->anchor;
		/* A session end too: its state is the slot's, also after losses. */
		expect_eq(rec->state->rflags, s->rflags, "rflags", i);
		expect_eq(rec->state->cr3, s->cr3, "cr3", i);
		for (int g = 0; g < SVMTRACE_NR_GPRS; g++)
			expect_eq(rec->state->gpr[g], s->gpr[g], svmtrace_gpr_names[g], i);
		if (s->kind != SVMTRACE_SLOT_SESSION_END) {
			expect_eq(rec->has_ymm, ymm, "has_ymm", i);
			if (ymm) {
				expect_eq(rec->state->xstate_bv, st->s[i].xstate_bv, "xstate_bv",
					  i);
				if (memcmp(rec->state->ymm, st->s[i].ymm, sizeof(st->s[i].ymm)))
					ck_abort_msg("ymm differs at %zu", i);
			}
		}
		i++;
	}
	ck_assert_msg(ret == 0, "%s", svmtrace_reader_error(r)->message);
	ck_assert_uint_eq(i, st->n);
	sum = svmtrace_reader_summary(r);
	ck_assert_uint_eq(sum->records, st->n);
	ck_assert_uint_eq(sum->anchors + sum->session_starts, anchors_seen);
	ck_assert(!sum->truncated);
	svmtrace_reader_close(r);
}

static const uint32_t intervals[] = { 1, 2, 64, 1000 };
static const int levels[] = { -1 /* raw */, 0, 2 };

/* _i enumerates interval x compression. */
static void round_trip(int _i, bool random, bool ymm)
{
	struct svmtrace_writer_options o;
	struct stream st;
	const char *path = scratch_path("roundtrip.bin");

	svmtrace_writer_options_init(&o);
	o.anchor_interval = intervals[_i % 4];
	o.raw_frames = levels[_i / 4] < 0;
	o.lz4_level = levels[_i / 4] < 0 ? 0 : levels[_i / 4];
	o.cpu = (uint32_t)_i + 1;
	if (random)
		make_random_stream(&st, 0x1234567 + (uint64_t)_i);
	else
		make_program_stream(&st, 0xabcdef + (uint64_t)_i, ymm);
	write_stream(&st, path, &o, ymm);
	check_stream(&st, path, o.cpu, ymm);
	free(st.s);
}

START_TEST(program_stream)
{
	round_trip(_i, false, false);
}
END_TEST

START_TEST(random_stream)
{
	round_trip(_i, true, false);
}
END_TEST

START_TEST(ymm_stream)
{
	round_trip(_i, false, true);
}
END_TEST

/* Anchors every N records: count them on a stream without irregularities. */
START_TEST(anchor_interval_is_kept)
{
	struct svmtrace_writer_options o;
	struct svmtrace_writer *w;
	struct svmtrace_error err;
	struct svmtrace_summary sum;
	struct svmtrace_slot s = { .cr3 = 0x1000, .rip = 0x400000 };
	const char *path = scratch_path("interval.bin");

	svmtrace_writer_options_init(&o);
	o.anchor_interval = intervals[_i];
	ck_assert_int_eq(svmtrace_writer_open(path, &o, &w, &err), 0);
	for (uint64_t i = 0; i < 1000; i++) {
		s.kind = i ? SVMTRACE_SLOT_INSTRUCTION : SVMTRACE_SLOT_SESSION_START;
		s.seq = i + 1;
		s.rip = 0x400000 + (i % 10) * 4;
		s.gpr[SVMTRACE_RCX] = i;
		if (svmtrace_writer_append(w, &s, &err))
			ck_abort_msg("%s", err.message);
	}
	ck_assert_int_eq(svmtrace_writer_close(w, &err), 0);
	ck_assert_int_eq(svmtrace_read(path, NULL, NULL, &sum, &err), 0);
	ck_assert_uint_eq(sum.records, 1000);
	/* the session start is the first full record; one more every interval */
	ck_assert_uint_eq(sum.anchors + 1, (1000 + o.anchor_interval - 1) / o.anchor_interval);
}
END_TEST

static Suite *roundtrip_suite(void)
{
	Suite *s = suite_create("trace round trip");
	TCase *tc = tcase_create("round trip");

	tcase_set_timeout(tc, 120);
	tcase_add_loop_test(tc, program_stream, 0, 12);
	tcase_add_loop_test(tc, random_stream, 0, 12);
	tcase_add_loop_test(tc, ymm_stream, 0, 12);
	tcase_add_loop_test(tc, anchor_interval_is_kept, 0, 4);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return run_suite(roundtrip_suite());
}
