// SPDX-License-Identifier: GPL-2.0
#include "lib/trace/decode.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif
#ifdef __x86_64__
#include <cpuid.h>
#endif

#include "lib/trace/wire.h"

/*
 * Does this CPU have a fast PEXT?  Intel's since Haswell and AMD's since Zen 3
 * (family 19h) take one instruction of three cycles; AMD's before it (and
 * Hygon's, Zen 1 inside) microcode PEXT at tens to hundreds of cycles, far
 * slower than the shift-and-mask steps it replaces.  Other vendors: unknown,
 * so not used.
 */
static bool fast_pext(void)
{
#ifdef __x86_64__
	unsigned int a, b, c, dx, family;

	if (__get_cpuid_max(0, NULL) < 7)
		return false;
	__cpuid_count(7, 0, a, b, c, dx);
	if (!(b & bit_BMI2))
		return false;
	__cpuid(0, a, b, c, dx);
	if (b == signature_INTEL_ebx && c == signature_INTEL_ecx && dx == signature_INTEL_edx)
		return true;
	if (b != signature_AMD_ebx || c != signature_AMD_ecx || dx != signature_AMD_edx)
		return false;
	__cpuid(1, a, b, c, dx);
	family = a >> 8 & 0xf;
	if (family == 0xf)
		family += a >> 20 & 0xff;
	return family >= 0x19;
#else
	return false;
#endif
}

int decoder_init(struct decoder *d, uint32_t cpu)
{
	/* CPUID is a VM exit under a hypervisor: asked once, not per reader */
	static int pext = -1;

	if (__atomic_load_n(&pext, __ATOMIC_RELAXED) < 0)
		__atomic_store_n(&pext, fast_pext(), __ATOMIC_RELAXED);
	memset(d, 0, sizeof(*d));
	d->pext = pext;
	d->rec.cpu = cpu;
	d->rec.state = &d->state;
	return predict_init(&d->predict);
}

void decoder_free(struct decoder *d)
{
	predict_free(&d->predict);
}

void decoder_frame_start(struct decoder *d)
{
	d->have_state = false;
	d->frame_state = false;
	predict_reset(&d->predict);
}

__attribute__((format(printf, 2, 3), cold)) static const uint8_t *fail(struct decoder *d,
								       const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(d->why, sizeof(d->why), fmt, ap);
	va_end(ap);
	return NULL;
}

static const uint8_t *need(struct decoder *d, const uint8_t *p, const uint8_t *end, size_t n,
			   const char *what)
{
	if ((size_t)(end - p) >= n)
		return p;
	return fail(d, "%s needs %zu bytes, the frame has %zu left", what, n, (size_t)(end - p));
}

static __attribute__((noinline)) const uint8_t *
varint_slow(struct decoder *d, const uint8_t *p, const uint8_t *end, uint64_t *v, const char *what)
{
	const uint8_t *q = wire_get_varint(p, end, v);

	if (q)
		return q;
	*v = 0; /* never read (the caller sees NULL), but the compiler cannot tell */
	for (const uint8_t *s = p; s < end && s < p + 10; s++)
		if (!(*s & 0x80))
			return fail(d, "%s varint does not fit in 64 bits", what);
	if (end - p < 10)
		return fail(d, "%s varint runs past the end of the frame", what);
	return fail(d, "%s varint is longer than 10 bytes", what);
}

/*
 * The low seven bits of each of @x's eight bytes, packed: byte k's bits go
 * to bits 7k..7k+6.  One PEXT where the CPU does it fast (d->pext), else
 * three shift-and-mask steps instead of a loop.  The PEXT is inline assembly,
 * not the intrinsic, so that this file builds for any x86-64 and the caller
 * chooses at run time.
 */
static inline __attribute__((always_inline)) uint64_t pack7(uint64_t x, bool pext)
{
#ifdef __x86_64__
	if (pext) {
		uint64_t v;

		asm("pextq %2, %1, %0" : "=r"(v) : "r"(x), "r"(0x7f7f7f7f7f7f7f7full));
		return v;
	}
#endif
	x &= 0x7f7f7f7f7f7f7f7full;
	x = (x & 0x007f007f007f007full) | (x & 0x7f007f007f007f00ull) >> 1;
	x = (x & 0x00003fff00003fffull) | (x & 0x3fff00003fff0000ull) >> 2;
	return (x & 0x000000000fffffffull) | (x & 0x0fffffff00000000ull) >> 4;
}

/* Frame bytes a varint may read without a bounds check on each. */
#define VARINT_ROOM 16

/*
 * A varint.  With VARINT_ROOM bytes left in the frame it takes no branch on
 * its length up to eight bytes: one 8-byte load, its first byte without the
 * continuation bit found by a count of trailing zeros, and the bytes up to
 * it packed.  Record parts vary in length from one record to the next, so a
 * byte-by-byte loop mispredicts its exit on a large share of them.  Nine
 * and ten bytes (64-bit values with high bits set, common in anchors) take
 * one more test each; an overflowing varint and varints near the frame's
 * end take the checked path.
 */
static inline __attribute__((always_inline)) const uint8_t *
varint_as(struct decoder *d, const uint8_t *p, const uint8_t *end, uint64_t *v, const char *what,
	  bool pext)
{
	if (__builtin_expect(end - p >= VARINT_ROOM, 1)) {
		uint64_t x = le64(p), stop = ~x & 0x8080808080808080ull;

		if (__builtin_expect(stop != 0, 1)) {
			/* the bytes up to the first stop bit: x & (stop ^ (stop - 1)) */
			*v = pack7(x & (stop ^ (stop - 1)), pext);
			return p + (unsigned int)__builtin_ctzll(stop) / 8 + 1;
		}
		if (p[8] < 0x80) {
			*v = pack7(x, pext) | (uint64_t)p[8] << 56;
			return p + 9;
		}
		if (p[9] <= 1) { /* bit 63; more overflows */
			*v = pack7(x, pext) | (uint64_t)(p[8] & 0x7f) << 56 | (uint64_t)p[9] << 63;
			return p + 10;
		}
	}
	return varint_slow(d, p, end, v, what);
}

/* A varint off the hot paths: full records, session ends, states near a frame's end. */
static const uint8_t *varint(struct decoder *d, const uint8_t *p, const uint8_t *end, uint64_t *v,
			     const char *what)
{
	return varint_as(d, p, end, v, what, false);
}

/* Take @seq as the record's sequence if it follows the last one. */
static bool check_sequence(struct decoder *d, uint64_t seq)
{
	if (d->have_seq && seq <= d->rec.sequence) {
		fail(d, "sequence %llu does not follow %llu", (unsigned long long)seq,
		     (unsigned long long)d->rec.sequence);
		return false;
	}
	d->have_seq = true;
	d->rec.sequence = seq;
	return true;
}

/*
 * A state without YMM registers reads them as 0: zeroed once, not again at
 * each anchor (every 256th record by default) while nothing wrote them.
 */
static void clear_ymm(struct decoder *d)
{
	if (d->ymm_clear)
		return;
	d->state.xstate_bv = 0;
	memset(d->state.ymm, 0, sizeof(d->state.ymm));
	d->ymm_clear = true;
}

#ifdef __SSE2__
/* Bit i set when byte @p[i] ends a varint (its continuation bit is clear), for 64 bytes. */
static inline uint64_t varint_ends(const uint8_t *p)
{
	uint64_t more = 0;

	for (unsigned int k = 0; k < 4; k++)
		more |= (uint64_t)(uint16_t)_mm_movemask_epi8(
				_mm_loadu_si128((const __m128i *)(p + 16 * k)))
			<< (16 * k);
	return ~more;
}
#endif

/* Varints a full state holds in a row: RFLAGS, CR3, then the GPRs. */
#define STATE_VARINTS (2 + SVMTRACE_NR_GPRS)

/*
 * Anchors, session starts and session ends with S hold RFLAGS, CR3 and the
 * 16 GPRs as 18 varints in a row.  Read one after the other, each varint's
 * start waits on the length of the one before (a load, a count of trailing
 * zeros, an add: a dozen cycles each).  With room in the frame, the ends of
 * all varints in a 64-byte window are found at once instead, from the
 * continuation bits (SSE2), and each next end is the next set bit; the
 * values then decode independently.  Varints over 10 bytes or overflowing,
 * and states near the frame's end, take the checked path, which reports them.
 */
#ifdef __SSE2__
static inline __attribute__((always_inline)) const uint8_t *
state_window(struct decoder *d, const uint8_t *p, bool pext)
{
	const uint8_t *w = p, *q = p;
	uint64_t ends = varint_ends(w), v[STATE_VARINTS];
	unsigned int i;

	for (i = 0; i < STATE_VARINTS; i++) {
		const uint8_t *next;
		size_t len;

		if (!ends) {
			w = q;
			ends = varint_ends(w);
			if (!ends)
				return NULL;
		}
		next = w + __builtin_ctzll(ends) + 1;
		len = (size_t)(next - q);
		if (len <= 8)
			v[i] = pack7(le64(q) & (~0ull >> (64 - 8 * len)), pext);
		else if (len == 9)
			v[i] = pack7(le64(q), pext) | (uint64_t)q[8] << 56;
		else if (len == 10 && q[9] <= 1)
			v[i] = pack7(le64(q), pext) | (uint64_t)(q[8] & 0x7f) << 56 |
			       (uint64_t)q[9] << 63;
		else
			return NULL;
		q = next;
		ends &= ends - 1;
	}
	d->state.rflags = v[0];
	d->state.cr3 = v[1];
	memcpy(d->state.gpr, v + 2, sizeof(d->state.gpr));
	return q;
}
#endif

static const uint8_t *state_varints(struct decoder *d, const uint8_t *p, const uint8_t *end)
{
#ifdef __SSE2__
	/* the longest state is 180 bytes; a window read at its last varint's start */
	if (end - p >= STATE_VARINTS * 10 + 64) {
		const uint8_t *q = d->pext ? state_window(d, p, true) : state_window(d, p, false);

		if (q)
			return q;
	}
#endif
	if (!(p = varint(d, p, end, &d->state.rflags, "RFLAGS")) ||
	    !(p = varint(d, p, end, &d->state.cr3, "CR3")))
		return NULL;
	for (int i = 0; i < SVMTRACE_NR_GPRS; i++)
		if (!(p = varint(d, p, end, &d->state.gpr[i], svmtrace_gpr_names[i])))
			return NULL;
	return p;
}

static __attribute__((noinline)) const uint8_t *full_record(struct decoder *d, const uint8_t *p,
							    const uint8_t *end)
{
	uint8_t h = *p++;
	const char *what = (h & WIRE_TYPE_MASK) == WIRE_ANCHOR ? "anchor" : "session start";
	struct svmtrace_record *r = &d->rec;
	uint64_t seq, v;

	if (h & WIRE_FULL_RESERVED)
		return fail(d, "%s header 0x%02x has reserved bits 0x%02x set", what, h,
			    h & WIRE_FULL_RESERVED);
	if (!(p = varint(d, p, end, &seq, "sequence")) || !check_sequence(d, seq) ||
	    !need(d, p, end, 8, "TSC"))
		return NULL;
	r->tsc = le64(p);
	if (!(p = varint(d, p + 8, end, &v, "reason")))
		return NULL;
	if (v > UINT32_MAX)
		return fail(d, "reason %llu does not fit in 32 bits", (unsigned long long)v);
	r->reason = (uint32_t)v;
	if (!need(d, p, end, 8, "RIP"))
		return NULL;
	d->state.rip = le64(p);
	if (!(p = state_varints(d, p + 8, end)))
		return NULL;
	r->dropped = 0;
	if ((h & WIRE_FULL_GAP) && !(p = varint(d, p, end, &r->dropped, "dropped count")))
		return NULL;
	d->xstate = h & WIRE_FULL_XSTATE;
	if (d->xstate) {
		if (!need(d, p, end, WIRE_XSTATE_SIZE, "YMM state"))
			return NULL;
		d->state.xstate_bv = le64(p);
		memcpy(d->state.ymm, p + 8, sizeof(d->state.ymm));
		p += WIRE_XSTATE_SIZE;
		d->ymm_clear = false;
	} else {
		clear_ymm(d);
	}
	r->kind = (h & WIRE_TYPE_MASK) == WIRE_ANCHOR ? SVMTRACE_SLOT_INSTRUCTION
						      : SVMTRACE_SLOT_SESSION_START;
	r->has_tsc = true;
	r->has_ymm = d->xstate;
	r->anchor = true;
	d->delta_fields = false;
	r->state_known = true;
	d->have_state = true;
	d->frame_state = true;
	return p;
}

/*
 * Without S, a session end reports the state of the last record before it in
 * its frame.  When there is none (a writer that predates S cut the frame
 * right before the end) that state is unknown: it is flagged, never taken
 * from the previous frame, which a reader may not have, nor made up.
 */
static __attribute__((noinline)) const uint8_t *session_end(struct decoder *d, const uint8_t *p,
							    const uint8_t *end)
{
	struct svmtrace_record *r = &d->rec;
	uint8_t h = *p;
	bool state = h & WIRE_END_STATE;

	if (h & WIRE_END_RESERVED)
		return fail(d, "session end header 0x%02x has reserved bits 0x%02x set", h,
			    h & WIRE_END_RESERVED);
	if ((h & WIRE_END_XSTATE) && !state)
		return fail(d, "session end header 0x%02x has X (0x10) without S (0x08)", h);
	if (!need(d, p, end, WIRE_END_SIZE, "session end") || !check_sequence(d, le64(p + 1)))
		return NULL;
	r->kind = SVMTRACE_SLOT_SESSION_END;
	r->tsc = le64(p + 9);
	r->reason = le32(p + 17);
	d->state.rip = le64(p + 21);
	p += WIRE_END_SIZE;
	if (state && !(p = state_varints(d, p, end)))
		return NULL;
	r->dropped = 0;
	if ((h & WIRE_END_GAP) && !(p = varint(d, p, end, &r->dropped, "dropped count")))
		return NULL;
	if (state) {
		d->xstate = h & WIRE_END_XSTATE;
		if (d->xstate) {
			if (!need(d, p, end, WIRE_XSTATE_SIZE, "YMM state"))
				return NULL;
			d->state.xstate_bv = le64(p);
			memcpy(d->state.ymm, p + 8, sizeof(d->state.ymm));
			d->ymm_clear = false;
			p += WIRE_XSTATE_SIZE;
		}
		d->frame_state = true;
	}
	r->state_known = d->frame_state;
	if (!r->state_known) {
		d->xstate = false;
		d->state.rflags = d->state.cr3 = 0;
		memset(d->state.gpr, 0, sizeof(d->state.gpr));
	}
	if (!d->xstate)
		clear_ymm(d);
	r->has_tsc = true;
	r->has_ymm = d->xstate;
	r->anchor = false;
	d->delta_fields = false;
	d->have_state = false; /* the next session starts from a full record */
	return p;
}

static const uint8_t *ymm_delta(struct decoder *d, const uint8_t *p, const uint8_t *end)
{
	unsigned int mask;

	if (!d->xstate)
		return fail(d, "delta carries YMM state, its anchor has none");
	if (!need(d, p, end, 10, "YMM delta header"))
		return NULL;
	d->state.xstate_bv = le64(p);
	d->ymm_clear = false;
	mask = le16(p + 8);
	p += 10;
	for (; mask; mask &= mask - 1) {
		if (!need(d, p, end, WIRE_YMM_BYTES, "YMM register"))
			return NULL;
		memcpy(d->state.ymm[__builtin_ctz(mask)], p, WIRE_YMM_BYTES);
		p += WIRE_YMM_BYTES;
	}
	return p;
}

/* The first of @n operations at @p that is undefined or writes a register twice. */
static __attribute__((noinline, cold)) const uint8_t *ops_error(struct decoder *d, const uint8_t *p,
								unsigned int n)
{
	unsigned int written = 0;

	for (unsigned int i = 0; i < n; i++) {
		unsigned int dst = p[2 * i] >> 4, src = p[2 * i] & 15;

		if (!wire_op_valid(p[2 * i], p[2 * i + 1]))
			return fail(d, "operation %02x %02x (%s from %s) is not defined", p[2 * i],
				    p[2 * i + 1], svmtrace_gpr_names[dst], svmtrace_gpr_names[src]);
		if (written & (1u << dst))
			return fail(d, "operation %02x %02x writes %s twice", p[2 * i],
				    p[2 * i + 1], svmtrace_gpr_names[dst]);
		written |= 1u << dst;
	}
	return fail(d, "operations pass every check"); /* not reached */
}

/*
 * OPS: each listed register takes the result of its operation on the
 * previous state (every operand is read before any destination is written).
 * The checks only gather a verdict in the loop; ops_error() names the first
 * failure.
 */
static inline __attribute__((always_inline)) const uint8_t *
ops_part(struct decoder *d, const uint8_t *p, const uint8_t *end, const uint8_t **ops,
	 unsigned int *nops, unsigned int *written)
{
	uint64_t v[WIRE_OPS_MAX];
	unsigned int n, bad = 0, seen = 0;

	if (!need(d, p, end, 1, "operation count"))
		return NULL;
	n = *p++;
	if (n < 1 || n > WIRE_OPS_MAX)
		return fail(d, "operation count %u is outside 1..16", n);
	if (!need(d, p, end, 2 * n, "operations"))
		return NULL;
	if (n == 1) { /* most: no operand can be a destination */
		unsigned int dst = p[0] >> 4;

		if (__builtin_expect(!wire_op_valid(p[0], p[1]), 0))
			return ops_error(d, p, n);
		d->state.gpr[dst] = wire_op_apply(p[1], d->state.gpr[dst], d->state.gpr[p[0] & 15]);
		*written = 1u << dst;
		*ops = p;
		*nops = 1;
		return p + 2;
	}
	for (unsigned int i = 0; i < n; i++) {
		unsigned int dst = p[2 * i] >> 4, src = p[2 * i] & 15;

		bad |= (unsigned int)!wire_op_valid(p[2 * i], p[2 * i + 1]) | (seen >> dst & 1);
		seen |= 1u << dst;
		v[i] = wire_op_apply(p[2 * i + 1], d->state.gpr[dst], d->state.gpr[src]);
	}
	if (__builtin_expect(bad, 0))
		return ops_error(d, p, n);
	for (unsigned int i = 0; i < n; i++)
		d->state.gpr[p[2 * i] >> 4] = v[i];
	*written = seen;
	*ops = p; /* the pairs, as stored, for the learning rule */
	*nops = n;
	return p + 2 * n;
}

static inline __attribute__((always_inline)) const uint8_t *
explicit_gprs(struct decoder *d, const uint8_t *p, const uint8_t *end, unsigned int *maskp,
	      uint64_t *delta, unsigned int written, bool pext)
{
	unsigned int mask;

	if (!need(d, p, end, 2, "GPR mask"))
		return NULL;
	mask = le16(p);
	p += 2;
	if (mask & written)
		return fail(d, "GPR mask 0x%04x has registers OPS wrote (0x%04x)", mask, written);
	*maskp = mask;
	for (; mask; mask &= mask - 1) {
		unsigned int i = (unsigned int)__builtin_ctz(mask);
		uint64_t v;

		p = varint_as(d, p, end, &v, svmtrace_gpr_names[i], pext);
		if (!p)
			return NULL;
		delta[i] = unzigzag(v);
		d->state.gpr[i] += delta[i];
	}
	return p;
}

static inline __attribute__((always_inline)) const uint8_t *
delta_as(struct decoder *d, const uint8_t *p, const uint8_t *end, struct predict_entry *pe,
	 bool hit, bool pext, int header)
{
	uint64_t from = d->state.rip;
	uint64_t delta[SVMTRACE_NR_GPRS], v, step = 1, rip, rflags;
	unsigned int mask = 0, nops = 0, written = 0;
	const uint8_t *ops = NULL;
	uint8_t h;
	struct svmtrace_record *r = &d->rec;

	if (!d->have_state)
		return fail(d, "delta record before any anchor in this frame");
	h = header >= 0 ? (uint8_t)header : *p; /* the same byte, known or not */
	p++;

	if (h & WIRE_DELTA_RIP) {
		p = varint_as(d, p, end, &v, "RIP", pext);
		if (!p)
			return NULL;
		rip = from + unzigzag(v);
	} else if (hit) {
		rip = pe->next_rip;
	} else {
		return fail(d, "delta predicts the RIP after 0x%llx, which has no history",
			    (unsigned long long)from);
	}
	d->state.rip = rip;

	if (h & WIRE_DELTA_OPS) {
		p = ops_part(d, p, end, &ops, &nops, &written);
		if (!p)
			return NULL;
	}
	if (h & WIRE_DELTA_GPR) {
		p = explicit_gprs(d, p, end, &mask, delta, written, pext);
		if (!p)
			return NULL;
	} else if (hit && !(h & WIRE_DELTA_OPS)) {
		predicted_gprs(d->state.gpr, pe);
	}

	v = 0;
	if (h & WIRE_DELTA_RFLAGS) {
		p = varint_as(d, p, end, &v, "RFLAGS", pext);
		if (!p)
			return NULL;
	}
	rflags = (hit ? pe->rflags : d->state.rflags) ^ v;
	d->state.rflags = rflags;

	if (h & WIRE_DELTA_SEQ) {
		p = varint_as(d, p, end, &v, "sequence step", pext);
		if (!p)
			return NULL;
		if (r->sequence > UINT64_MAX - 2 || v > UINT64_MAX - 2 - r->sequence)
			return fail(d, "sequence step %llu overflows after %llu",
				    (unsigned long long)v, (unsigned long long)r->sequence);
		step = v + 2;
	} else if (r->sequence == UINT64_MAX) {
		return fail(d, "sequence overflows after %llu", (unsigned long long)r->sequence);
	}
	r->sequence += step;

	if (h & WIRE_DELTA_XSTATE) {
		p = ymm_delta(d, p, end);
		if (!p)
			return NULL;
	}

	/*
	 * rip and rflags from registers: reloading them as one 16-byte load
	 * from the two 8-byte stores just made stalls store forwarding.
	 */
	predict_update(&d->predict, pe, hit, h, from, rip, rflags, mask, delta, nops, ops);
	instruction_record(d);
	return p;
}

/*
 * The headers most explicit deltas have get a copy of the decoder each, in
 * which the header's bits are constants: such a record takes one jump on its
 * header instead of a test per part, tests that mispredict again and again
 * on register-noisy code, where these headers follow each other in no order.
 */
#define SPECIALISED(h)                                                                             \
	case h:                                                                                    \
		return delta_as(d, p, end, pe, hit, pext, h)

static inline __attribute__((always_inline)) const uint8_t *
delta_by_header(struct decoder *d, const uint8_t *p, const uint8_t *end, struct predict_entry *pe,
		bool hit, bool pext)
{
	switch (*p) {
		SPECIALISED(WIRE_DELTA_RIP);
		SPECIALISED(WIRE_DELTA_GPR);
		SPECIALISED(WIRE_DELTA_RIP | WIRE_DELTA_GPR);
		SPECIALISED(WIRE_DELTA_RIP | WIRE_DELTA_RFLAGS);
		SPECIALISED(WIRE_DELTA_GPR | WIRE_DELTA_RFLAGS);
		SPECIALISED(WIRE_DELTA_RIP | WIRE_DELTA_GPR | WIRE_DELTA_RFLAGS);
		SPECIALISED(WIRE_DELTA_RIP | WIRE_DELTA_OPS);
		SPECIALISED(WIRE_DELTA_RIP | WIRE_DELTA_RFLAGS | WIRE_DELTA_OPS);
	default:
		return delta_as(d, p, end, pe, hit, pext, -1);
	}
}

#undef SPECIALISED

const uint8_t *decoder_delta(struct decoder *d, const uint8_t *p, const uint8_t *end,
			     struct predict_entry *pe, bool hit)
{
	return delta_by_header(d, p, end, pe, hit, false);
}

const uint8_t *decoder_delta_pext(struct decoder *d, const uint8_t *p, const uint8_t *end,
				  struct predict_entry *pe, bool hit)
{
	return delta_by_header(d, p, end, pe, hit, true);
}

const uint8_t *decoder_other(struct decoder *d, const uint8_t *p, const uint8_t *end)
{
	if ((*p & WIRE_TYPE_MASK) == WIRE_SESSION_END)
		return session_end(d, p, end);
	return full_record(d, p, end);
}
