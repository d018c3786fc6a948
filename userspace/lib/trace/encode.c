// SPDX-License-Identifier: GPL-2.0
#include "lib/trace/encode.h"

#include <string.h>

#include "lib/trace/wire.h"

int encoder_init(struct encoder *e, uint32_t anchor_interval)
{
	memset(e, 0, sizeof(*e));
	e->anchor_interval = anchor_interval;
	return predict_init(&e->predict);
}

void encoder_free(struct encoder *e)
{
	predict_free(&e->predict);
}

void encoder_frame_start(struct encoder *e)
{
	e->have_state = false;
	e->frame_state = false;
	predict_reset(&e->predict);
}

static void remember(struct encoder *e, const struct svmtrace_slot *s,
		     const struct svmtrace_slot_xstate *x)
{
	e->prev.rip = s->rip;
	e->prev.rflags = s->rflags;
	e->prev.cr3 = s->cr3;
	memcpy(e->prev.gpr, s->gpr, sizeof(e->prev.gpr));
	e->prev_seq = s->seq;
	e->have_state = true;
	e->frame_state = true;
	e->any_state = true;
	e->xstate = x != NULL;
	if (x) {
		e->prev.xstate_bv = x->xstate_bv;
		memcpy(e->prev.ymm, x->ymm, sizeof(e->prev.ymm));
	}
}

static size_t put_full(struct encoder *e, const struct svmtrace_slot *s,
		       const struct svmtrace_slot_xstate *x, uint8_t type, uint8_t *out)
{
	uint8_t *p = out + 1;
	bool gap = s->flags & SVMTRACE_SLOT_F_GAP;

	out[0] = type | (x ? WIRE_FULL_XSTATE : 0) | (gap ? WIRE_FULL_GAP : 0);
	p = wire_put_varint(p, s->seq);
	p = put_le64(p, s->tsc);
	p = wire_put_varint(p, s->reason);
	p = put_le64(p, s->rip);
	p = wire_put_varint(p, s->rflags);
	p = wire_put_varint(p, s->cr3);
	for (int i = 0; i < 16; i++)
		p = wire_put_varint(p, s->gpr[i]);
	if (gap)
		p = wire_put_varint(p, s->dropped);
	if (x) {
		p = put_le64(p, x->xstate_bv);
		memcpy(p, x->ymm, sizeof(x->ymm));
		p += sizeof(x->ymm);
	}
	remember(e, s, x);
	e->since_anchor = 1;
	return (size_t)(p - out);
}

/*
 * A session end reports the last state's RFLAGS, CR3, GPRs (and YMM).  When
 * no record of this frame holds that state (the frame opens with the end),
 * the end carries it itself, so the frame still decodes on its own.
 */
static size_t put_end(struct encoder *e, const struct svmtrace_slot *s, uint8_t *out)
{
	uint8_t *p = out;
	bool gap = s->flags & SVMTRACE_SLOT_F_GAP;
	bool state = !e->frame_state && e->any_state;
	bool xstate = state && e->xstate;

	*p++ = WIRE_SESSION_END | (gap ? WIRE_END_GAP : 0) | (state ? WIRE_END_STATE : 0) |
	       (xstate ? WIRE_END_XSTATE : 0);
	p = put_le64(p, s->seq);
	p = put_le64(p, s->tsc);
	p = put_le32(p, s->reason);
	p = put_le64(p, s->rip);
	if (state) {
		p = wire_put_varint(p, e->prev.rflags);
		p = wire_put_varint(p, e->prev.cr3);
		for (int i = 0; i < 16; i++)
			p = wire_put_varint(p, e->prev.gpr[i]);
	}
	if (gap)
		p = wire_put_varint(p, s->dropped);
	if (xstate) {
		p = put_le64(p, e->prev.xstate_bv);
		memcpy(p, e->prev.ymm, sizeof(e->prev.ymm));
		p += sizeof(e->prev.ymm);
	}
	e->prev_seq = s->seq;
	e->have_state = false;
	e->frame_state = e->frame_state || state;
	return (size_t)(p - out);
}

static uint8_t *put_xstate_delta(struct encoder *e, const struct svmtrace_slot_xstate *x,
				 uint8_t *p, uint8_t *h)
{
	unsigned int mask = 0;

	for (unsigned int i = 0; i < 16; i++)
		if (memcmp(x->ymm[i], e->prev.ymm[i], WIRE_YMM_BYTES))
			mask |= 1u << i;
	if (!mask && x->xstate_bv == e->prev.xstate_bv)
		return p;
	*h |= WIRE_DELTA_XSTATE;
	p = put_le64(p, x->xstate_bv);
	p = put_le16(p, (uint16_t)mask);
	for (unsigned int i = 0; i < 16; i++) {
		if (mask & (1u << i)) {
			memcpy(p, x->ymm[i], WIRE_YMM_BYTES);
			p += WIRE_YMM_BYTES;
		}
	}
	return p;
}

/* Does the GPR change (@mask, @delta) equal what entry @pe predicts? */
static bool gprs_predicted(const struct predict_entry *pe, bool hit, unsigned int mask,
			   const uint64_t *delta)
{
	unsigned int n = 0;

	if (!hit || mask != pe->mask)
		return !hit && !mask;
	while (mask) {
		if (delta[__builtin_ctz(mask)] != pe->delta[n++])
			return false;
		mask &= mask - 1;
	}
	return true;
}

static size_t put_delta(struct encoder *e, const struct svmtrace_slot *s,
			const struct svmtrace_slot_xstate *x, uint8_t *out)
{
	struct predict_entry *pe = predict_slot(&e->predict, e->prev.rip);
	bool hit = predict_hit(&e->predict, pe, e->prev.rip);
	uint64_t delta[SVMTRACE_NR_GPRS];
	uint64_t step = s->seq - e->prev_seq;
	uint64_t rflags_guess = hit ? pe->rflags : e->prev.rflags;
	unsigned int mask = 0;
	uint8_t *p = out + 1;
	uint8_t h = WIRE_DELTA;

	for (unsigned int i = 0; i < SVMTRACE_NR_GPRS; i++) {
		delta[i] = s->gpr[i] - e->prev.gpr[i];
		mask |= (unsigned int)(delta[i] != 0) << i;
	}
	if (!hit || pe->next_rip != s->rip) {
		h |= WIRE_DELTA_RIP;
		p = wire_put_varint(p, zigzag(s->rip - e->prev.rip));
	}
	if (!gprs_predicted(pe, hit, mask, delta)) {
		h |= WIRE_DELTA_GPR;
		p = put_le16(p, (uint16_t)mask);
		for (unsigned int m = mask; m; m &= m - 1)
			p = wire_put_varint(p, zigzag(delta[__builtin_ctz(m)]));
	}
	if (s->rflags != rflags_guess) {
		h |= WIRE_DELTA_RFLAGS;
		p = wire_put_varint(p, s->rflags ^ rflags_guess);
	}
	if (step != 1) {
		h |= WIRE_DELTA_SEQ;
		p = wire_put_varint(p, step - 2);
	}
	if (x)
		p = put_xstate_delta(e, x, p, &h);
	out[0] = h;

	predict_update(&e->predict, pe, hit, h, e->prev.rip, s->rip, s->rflags,
		       (h & WIRE_DELTA_GPR) ? mask : 0, delta);
	remember(e, s, x);
	e->since_anchor++;
	return (size_t)(p - out);
}

size_t encoder_put(struct encoder *e, const struct svmtrace_slot *s,
		   const struct svmtrace_slot_xstate *x, uint8_t *out, bool *full)
{
	*full = true;
	switch (s->kind) {
	case SVMTRACE_SLOT_SESSION_START:
		return put_full(e, s, x, WIRE_SESSION_START, out);
	case SVMTRACE_SLOT_SESSION_END:
		*full = false;
		return put_end(e, s, out);
	default:
		break;
	}
	/* What a delta cannot express needs a full record. */
	if (!e->have_state || e->since_anchor >= e->anchor_interval ||
	    (s->flags & SVMTRACE_SLOT_F_GAP) || s->reason || s->cr3 != e->prev.cr3 ||
	    (x != NULL) != e->xstate)
		return put_full(e, s, x, WIRE_ANCHOR, out);
	*full = false;
	return put_delta(e, s, x, out);
}
