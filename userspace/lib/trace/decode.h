/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Record decoder: the bytes of one decoded frame in, typed records out.
 * The mirror of encode.c; no I/O here (reader.c owns files and frames).
 */
#ifndef SVMTRACE_DECODE_H
#define SVMTRACE_DECODE_H

#include <stdbool.h>
#include <stdint.h>

#include <svmtrace/trace.h>

#include "lib/trace/predict.h"

struct decoder {
	struct svmtrace_state state;
	struct svmtrace_record rec; /* rec.state points at state */
	bool have_state;	    /* state can be a delta base in this frame */
	bool frame_state;	    /* this frame set a state a session end reports */
	bool have_seq;		    /* any record seen: sequence must increase */
	bool xstate;		    /* the last full record carried YMM state */
	bool ymm_clear;		    /* state.ymm and xstate_bv are all 0 */
	bool delta_fields;	    /* rec's kind, reason, TSC... are a delta's */
	bool pext;		    /* varints decode with PEXT (a fast one on this CPU) */
	struct predict_table predict;
	char why[160]; /* what was wrong, when decoder_next fails */
};

int decoder_init(struct decoder *d, uint32_t cpu);
void decoder_free(struct decoder *d);
void decoder_frame_start(struct decoder *d);
/*
 * Any delta record at @p; @pe is the entry for the previous RIP, @hit whether
 * it predicts.  decoder_next() calls it for what it does not decode itself.
 */
const uint8_t *decoder_delta(struct decoder *d, const uint8_t *p, const uint8_t *end,
			     struct predict_entry *pe, bool hit);
/* The same, its varints decoded with PEXT (only where d->pext says it is fast). */
const uint8_t *decoder_delta_pext(struct decoder *d, const uint8_t *p, const uint8_t *end,
				  struct predict_entry *pe, bool hit);
/* A full record or a session end at @p. */
const uint8_t *decoder_other(struct decoder *d, const uint8_t *p, const uint8_t *end);

/*
 * The predicted delta, most records, is decoded inline in the reader's loop
 * (below): a call per record, and the registers it saves, cost as much as
 * decoding it.
 */

/* Add entry @pe's deltas: all four, the unused ones being 0 for rax. */
static inline void add_deltas(uint64_t *gpr, const struct predict_entry *pe)
{
	unsigned int at = pe->gpr_at;
	uint64_t v0 = gpr[at & 15] + pe->delta[0], v1 = gpr[at >> 4 & 15] + pe->delta[1];
	uint64_t v2 = gpr[at >> 8 & 15] + pe->delta[2], v3 = gpr[at >> 12] + pe->delta[3];

	/*
	 * Loads first, stores last to first: no store waits on another to the
	 * same register (the unused slots all name rax), and a used rax, always
	 * slot 0, is written after the unused slots' unchanged copies of it.
	 */
	gpr[at >> 12] = v3;
	gpr[at >> 8 & 15] = v2;
	gpr[at >> 4 & 15] = v1;
	gpr[at & 15] = v0;
}

/*
 * The GPRs as hit entry @pe predicts them: its operation on the previous
 * state, its deltas added, then the operation's destination set.
 */
static inline __attribute__((always_inline)) void predicted_gprs(uint64_t *gpr,
								 const struct predict_entry *pe)
{
	unsigned int dst = pe->opreg >> 4;

	if (predict_has_op(pe)) {
		uint64_t res = wire_op_apply(pe->op, gpr[dst], gpr[pe->opreg & 15]);

		add_deltas(gpr, pe);
		gpr[dst] = res;
		return;
	}
	if (pe->mask)
		add_deltas(gpr, pe);
}

/*
 * A delta's record fields besides its state and sequence: the same for every
 * delta, so stored only after a full record or a session end changed them.
 */
static inline void instruction_record(struct decoder *d)
{
	struct svmtrace_record *r = &d->rec;

	if (__builtin_expect(d->delta_fields, 1))
		return;
	r->kind = SVMTRACE_SLOT_INSTRUCTION;
	r->state_known = true;
	r->has_tsc = false;
	r->anchor = false;
	r->reason = 0;
	r->dropped = 0;
	d->delta_fields = true;
}

/*
 * The delta most records are: a hit whose prediction holds except, at most,
 * for RFLAGS (header 0x00 or 0x10; no RIP, GPR, OPS, SEQ or XSTATE part).  It
 * takes no branch on the header beyond this test; the RFLAGS varint (one
 * byte, or two when SF or a flag above bit 6 flipped) is read with masks.
 * False when the record is not one (or its RFLAGS varint is longer than two
 * bytes, or the frame ends within three): decoder_delta() then decodes it.
 */
static inline __attribute__((always_inline)) bool
predicted_delta(struct decoder *d, struct predict_entry *pe, const uint8_t **pp, const uint8_t *end)
{
	const uint8_t *p = *pp;
	uint64_t flags, two, x, w;

	if ((p[0] & ~WIRE_DELTA_RFLAGS) != WIRE_DELTA || end - p < 3 ||
	    d->rec.sequence == UINT64_MAX)
		return false;
	flags = (p[0] & WIRE_DELTA_RFLAGS) >> 4; /* 1: an RFLAGS varint follows */
	w = le16(p + 1);			 /* its first two bytes */
	two = flags & w >> 7;			 /* 1: the varint has two bytes */
	if (two & w >> 15)
		return false;
	x = ((w & 0x7f) | (w >> 1 & (0x3f80 & (0 - two)))) & (0 - flags);
	d->state.rip = pe->next_rip;
	predicted_gprs(d->state.gpr, pe);
	d->state.rflags = pe->rflags ^ x;
	/*
	 * The learning rule for a hit with at most RFLAGS (predict_update()):
	 * the entry's tag, epoch and next RIP are already the ones it stores.
	 */
	pe->rflags = d->state.rflags;
	d->rec.sequence++;
	instruction_record(d);
	*pp = p + 1 + flags + two;
	return true;
}

/*
 * Decode the record at @p (frame bytes end at @end) into d->rec.  Returns the
 * first byte after it, or NULL with d->why set.  *@predicted tells whether it
 * was a predicted delta (an instruction one past the record before, without
 * TSC), so that a caller counting records need not ask the record.
 */
static inline __attribute__((always_inline)) const uint8_t *
decoder_next(struct decoder *d, const uint8_t *p, const uint8_t *end, bool *predicted)
{
	*predicted = false;
	if (__builtin_expect((*p & WIRE_TYPE_MASK) == WIRE_DELTA, 1)) {
		uint64_t from = d->state.rip;
		struct predict_entry *pe = predict_slot(&d->predict, from);
		bool hit = predict_hit(&d->predict, pe, from);

		if (hit && d->have_state && predicted_delta(d, pe, &p, end)) {
			*predicted = true;
			return p;
		}
		if (d->pext)
			return decoder_delta_pext(d, p, end, pe, hit);
		return decoder_delta(d, p, end, pe, hit);
	}
	return decoder_other(d, p, end);
}

#endif
