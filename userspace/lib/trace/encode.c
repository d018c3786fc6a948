// SPDX-License-Identifier: GPL-2.0
#include "lib/trace/encode.h"

#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

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

/* Whether @s's RFLAGS, CR3 and GPRs are the last record's. */
static bool same_state(const struct encoder *e, const struct svmtrace_slot *s)
{
	return s->rflags == e->prev.rflags && s->cr3 == e->prev.cr3 &&
	       !memcmp(s->gpr, e->prev.gpr, sizeof(s->gpr));
}

/*
 * A session end repeats the state of the session's last step.  Usually
 * that is the last record written, and the end stores none.  It carries
 * the state itself (the slot's, and its YMM when @x has them) when no
 * record of this frame holds it (the frame opens with the end), so the
 * frame still decodes on its own, and when the last step was lost (the
 * drop policy: the end says G) and its state is not the last record's.
 */
static size_t put_end(struct encoder *e, const struct svmtrace_slot *s,
		      const struct svmtrace_slot_xstate *x, uint8_t *out)
{
	uint8_t *p = out;
	bool gap = s->flags & SVMTRACE_SLOT_F_GAP;
	bool own = e->any_state && !same_state(e, s);
	bool state = (!e->frame_state && e->any_state) || own;
	bool xstate = state && (x || e->xstate);

	*p++ = WIRE_SESSION_END | (gap ? WIRE_END_GAP : 0) | (state ? WIRE_END_STATE : 0) |
	       (xstate ? WIRE_END_XSTATE : 0);
	p = put_le64(p, s->seq);
	p = put_le64(p, s->tsc);
	p = put_le32(p, s->reason);
	p = put_le64(p, s->rip);
	if (state) {
		p = wire_put_varint(p, s->rflags);
		p = wire_put_varint(p, s->cr3);
		for (int i = 0; i < 16; i++)
			p = wire_put_varint(p, s->gpr[i]);
	}
	if (gap)
		p = wire_put_varint(p, s->dropped);
	if (xstate) {
		p = put_le64(p, x ? x->xstate_bv : e->prev.xstate_bv);
		memcpy(p, x ? (const void *)x->ymm : (const void *)e->prev.ymm,
		       sizeof(e->prev.ymm));
		p += sizeof(e->prev.ymm);
	}
	if (own) { /* readers take it as the last state: so do we */
		e->prev.rflags = s->rflags;
		e->prev.cr3 = s->cr3;
		memcpy(e->prev.gpr, s->gpr, sizeof(e->prev.gpr));
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

/*
 * Does the GPR change from @old to @new (@mask, @delta) equal what entry @pe
 * predicts: its register operation, then its deltas?
 */
static bool gprs_predicted(const struct predict_entry *pe, bool hit, unsigned int mask,
			   const uint64_t *delta, const uint64_t *old, const __u64 *new)
{
	unsigned int n = 0;

	if (!hit)
		return !mask;
	if (predict_has_op(pe)) {
		unsigned int dst = pe->opreg >> 4;

		if (new[dst] != wire_op_apply(pe->op, old[dst], old[pe->opreg & 15]))
			return false;
		mask &= ~(1u << dst);
	}
	if (mask != pe->mask)
		return false;
	while (mask) {
		if (delta[__builtin_ctz(mask)] != pe->delta[n++])
			return false;
		mask &= mask - 1;
	}
	return true;
}

static unsigned int popcount64(uint64_t v)
{
	v = v - ((v >> 1) & 0x5555555555555555ull);
	v = (v & 0x3333333333333333ull) + ((v >> 2) & 0x3333333333333333ull);
	v = (v + (v >> 4)) & 0x0f0f0f0f0f0f0f0full;
	return (unsigned int)((v * 0x0101010101010101ull) >> 56);
}

/*
 * Which GPRs of @old have the low and the high 32 bits of want[n], for the
 * four values of @want: bit 2j of m[n] for GPR j's low half, bit 2j + 1 for
 * its high half.  One pass over the registers, a compare per two of them
 * and value, no branch.
 */
static void dword_matches(const uint64_t *old, const uint64_t *want, uint32_t *m)
{
#ifdef __SSE2__
	const __m128i w0 = _mm_set1_epi64x((long long)want[0]);
	const __m128i w1 = _mm_set1_epi64x((long long)want[1]);
	const __m128i w2 = _mm_set1_epi64x((long long)want[2]);
	const __m128i w3 = _mm_set1_epi64x((long long)want[3]);
	uint32_t m0 = 0, m1 = 0, m2 = 0, m3 = 0;

#pragma GCC unroll 8
	for (unsigned int i = 0; i < SVMTRACE_NR_GPRS; i += 2) {
		__m128i x = _mm_loadu_si128((const __m128i *)&old[i]);

		m0 |= (uint32_t)_mm_movemask_ps(_mm_castsi128_ps(_mm_cmpeq_epi32(x, w0)))
		      << (2 * i);
		m1 |= (uint32_t)_mm_movemask_ps(_mm_castsi128_ps(_mm_cmpeq_epi32(x, w1)))
		      << (2 * i);
		m2 |= (uint32_t)_mm_movemask_ps(_mm_castsi128_ps(_mm_cmpeq_epi32(x, w2)))
		      << (2 * i);
		m3 |= (uint32_t)_mm_movemask_ps(_mm_castsi128_ps(_mm_cmpeq_epi32(x, w3)))
		      << (2 * i);
	}
	m[0] = m0;
	m[1] = m1;
	m[2] = m2;
	m[3] = m3;
#else
	for (unsigned int n = 0; n < 4; n++) {
		m[n] = 0;
		for (unsigned int i = 0; i < SVMTRACE_NR_GPRS; i++)
			m[n] |= ((uint32_t)((uint32_t)old[i] == (uint32_t)want[n]) |
				 (uint32_t)(old[i] >> 32 == want[n] >> 32) << 1)
				<< (2 * i);
	}
#endif
}

/* dword_matches' bits of the GPRs that match in all 64 bits (at 2j) */
#define MATCH_LOW  0x55555555u
#define MATCH64(m) ((m) & (m) >> 1 & MATCH_LOW)

/*
 * The smallest r in 1..@bits-1 that rotates the low @bits of @o left into
 * those of @v (64 or 32; both given within that width), 0 when none does.
 * A rotation carries the starts of @o's runs of ones (a one above a zero)
 * along, so @v's lowest run start comes from one of them: only those
 * amounts are tried, about a quarter of the bits, instead of every one.
 * With no run start @o is all zeros or all ones and every rotation is @o.
 */
static inline uint64_t rotl_in(uint64_t x, unsigned int r, unsigned int bits, uint64_t mask)
{
	return (x << r | x >> (bits - r)) & mask;
}

static inline unsigned int rol_amount(uint64_t o, uint64_t v, unsigned int bits)
{
	uint64_t mask = bits == 64 ? ~0ull : (1ull << bits) - 1;
	uint64_t so = o & ~rotl_in(o, 1, bits, mask), sv = v & ~rotl_in(v, 1, bits, mask);
	unsigned int a, r, best = 0;

	if (!so || !sv)
		return !so && o == v;
	a = (unsigned int)__builtin_ctzll(sv);
	for (; so; so &= so - 1) {
		r = (a - (unsigned int)__builtin_ctzll(so)) & (bits - 1);
		if (r && (!best || r < best) && rotl_in(o, r, bits, mask) == v)
			best = r;
	}
	return best;
}

/*
 * A register operation that gives register @k its new value @v from the
 * previous state @old, as the two bytes of an OPS pair: a copy of another
 * register, then add / sub / xor / 32-bit add with any register, then a
 * rotation of its own old value.  False when none does.  The lowest
 * register wins, and for one register the operations in that order: each
 * operation with source x is a compare of x with a constant (x == v - o for
 * add, o - v for sub, o ^ v for xor, and for the 32-bit add the low half
 * of v - o), so all sixteen sources are tried at once.
 */
static bool find_op(const uint64_t *old, unsigned int k, uint64_t v, uint8_t *pair)
{
	uint64_t o = old[k];
	const uint64_t want[4] = { v, v - o, o - v, o ^ v };
	uint32_t m[4], copy, add, add32, sub, eor, any;
	unsigned int r;

	dword_matches(old, want, m);
	copy = MATCH64(m[0]) & ~(1u << (2 * k));
	if (copy) {
		pair[0] = (uint8_t)(k << 4 | (unsigned int)__builtin_ctz(copy) / 2);
		pair[1] = WIRE_OP_COPY;
		return true;
	}
	add = MATCH64(m[1]);
	add32 = v >> 32 == 0 ? m[1] & MATCH_LOW : 0;
	sub = MATCH64(m[2]);
	eor = MATCH64(m[3]);
	any = add | sub | eor | add32;
	if (any) {
		uint32_t bit = any & (0u - any);

		pair[0] = (uint8_t)(k << 4 | (unsigned int)__builtin_ctz(any) / 2);
		pair[1] = (add & bit)	? WIRE_OP_ADD
			  : (sub & bit) ? WIRE_OP_SUB
			  : (eor & bit) ? WIRE_OP_XOR
					: WIRE_OP_ADD32;
		return true;
	}
	pair[0] = (uint8_t)(k << 4 | k);
	if (popcount64(o) == popcount64(v) && (r = rol_amount(o, v, 64)) != 0) {
		pair[1] = (uint8_t)(WIRE_OP_ROL | r);
		return true;
	}
	if (v >> 32 == 0 && popcount64((uint32_t)o) == popcount64(v) &&
	    (r = rol_amount((uint32_t)o, (uint32_t)v, 32)) != 0) {
		pair[1] = (uint8_t)(WIRE_OP_ROL32 | r);
		return true;
	}
	return false;
}

/*
 * The explicit GPR parts: a changed register whose difference would take 4
 * varint bytes or more and that one register operation explains (find_op)
 * is stored as that operation (two bytes) in OPS; the others in GPR.
 * Clears the operated registers from *mask; returns the operations' count.
 */
static unsigned int put_gprs(const uint64_t *old, const __u64 *new, const uint64_t *delta,
			     unsigned int *mask, uint8_t *ops, uint8_t **pp, uint8_t *h)
{
	unsigned int nops = 0;
	uint8_t *p = *pp;

	for (unsigned int m = *mask; m; m &= m - 1) {
		unsigned int k = (unsigned int)__builtin_ctz(m);

		if (zigzag(delta[k]) < (1u << 21) || !find_op(old, k, new[k], ops + 2 * nops))
			continue;
		nops++;
		*mask &= ~(1u << k);
	}
	if (nops) {
		*h |= WIRE_DELTA_OPS;
		*p++ = (uint8_t)nops;
		memcpy(p, ops, 2 * nops);
		p += 2 * nops;
	}
	if (*mask || !nops) {
		*h |= WIRE_DELTA_GPR;
		p = put_le16(p, (uint16_t)*mask);
		for (unsigned int m = *mask; m; m &= m - 1)
			p = wire_put_varint(p, zigzag(delta[__builtin_ctz(m)]));
	}
	*pp = p;
	return nops;
}

/*
 * delta[i] = new[i] - old[i] for the 16 GPRs; returns the mask of non-zero
 * ones.  With SSE2 the zero tests of all sixteen are packed into one byte
 * mask (a byte per register) without a loop or a branch: the per-register
 * loop this replaces cost more than the rest of a predicted delta.
 */
static unsigned int gpr_deltas(const __u64 *new, const uint64_t *old, uint64_t *delta)
{
#ifdef __SSE2__
	const __m128i zero = _mm_setzero_si128();
	__m128 z[8], lo, hi;
	__m128i q[4];

#pragma GCC unroll 8
	for (unsigned int i = 0; i < 8; i++) {
		__m128i d = _mm_sub_epi64(_mm_loadu_si128((const __m128i *)&new[2 * i]),
					  _mm_loadu_si128((const __m128i *)&old[2 * i]));

		_mm_storeu_si128((__m128i *)&delta[2 * i], d);
		z[i] = _mm_castsi128_ps(_mm_cmpeq_epi32(d, zero));
	}
	/* a register's delta is zero when both of its 32-bit halves are: one dword each */
#pragma GCC unroll 4
	for (unsigned int i = 0; i < 4; i++) {
		lo = _mm_shuffle_ps(z[2 * i], z[2 * i + 1], _MM_SHUFFLE(2, 0, 2, 0));
		hi = _mm_shuffle_ps(z[2 * i], z[2 * i + 1], _MM_SHUFFLE(3, 1, 3, 1));
		q[i] = _mm_castps_si128(_mm_and_ps(lo, hi));
	}
	/* saturating packs keep 0 and -1: one byte per register, in order */
	q[0] = _mm_packs_epi16(_mm_packs_epi32(q[0], q[1]), _mm_packs_epi32(q[2], q[3]));
	return ~(unsigned int)_mm_movemask_epi8(q[0]) & 0xffff;
#else
	unsigned int mask = 0;

	for (unsigned int i = 0; i < SVMTRACE_NR_GPRS; i++) {
		delta[i] = new[i] - old[i];
		mask |= (unsigned int)(delta[i] != 0) << i;
	}
	return mask;
#endif
}

static size_t put_delta(struct encoder *e, const struct svmtrace_slot *s,
			const struct svmtrace_slot_xstate *x, uint8_t *out)
{
	struct predict_entry *pe = predict_slot(&e->predict, e->prev.rip);
	bool hit = predict_hit(&e->predict, pe, e->prev.rip);
	uint64_t delta[SVMTRACE_NR_GPRS];
	uint64_t step = s->seq - e->prev_seq;
	uint64_t rflags_guess = hit ? pe->rflags : e->prev.rflags;
	unsigned int mask = 0, nops = 0;
	uint8_t ops[2 * WIRE_OPS_MAX];
	uint8_t *p = out + 1;
	uint8_t h = WIRE_DELTA;

	/* the next record's entry (the table is 256 KiB: often not in L1) */
	__builtin_prefetch(predict_slot(&e->predict, s->rip));
	mask = gpr_deltas(s->gpr, e->prev.gpr, delta);
	if (!hit || pe->next_rip != s->rip) {
		h |= WIRE_DELTA_RIP;
		p = wire_put_varint(p, zigzag(s->rip - e->prev.rip));
	}
	if (!gprs_predicted(pe, hit, mask, delta, e->prev.gpr, s->gpr))
		nops = put_gprs(e->prev.gpr, s->gpr, delta, &mask, ops, &p, &h);
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
		       (h & WIRE_DELTA_GPR) ? mask : 0, delta, nops, ops);
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
		return put_end(e, s, x, out);
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
