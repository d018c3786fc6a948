/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Step prediction, shared by the encoder and the decoder so that both hold
 * the same table at every record.
 *
 * Traced code runs in loops: the instruction at a given address usually
 * goes to the same next RIP, changes the same registers by the same amounts
 * and leaves the same RFLAGS as the last time it ran.  The table remembers,
 * per instruction address, that last outcome; a delta record then stores
 * only the parts that differ from it (docs/format.md, "Prediction").
 *
 * The table is direct-mapped and forgets everything at each frame start
 * (an epoch bump, not a memset), so every frame decodes on its own.
 */
#ifndef SVMTRACE_PREDICT_H
#define SVMTRACE_PREDICT_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "lib/trace/wire.h"

#define PREDICT_BITS	12
#define PREDICT_ENTRIES (1u << PREDICT_BITS)
#define PREDICT_GPRS	4 /* outcomes changing more GPRs predict "no change" */

struct predict_entry {
	uint64_t rip; /* the instruction's address (tag) */
	uint64_t next_rip;
	uint64_t rflags; /* RFLAGS after it */
	/* changes of the GPRs in mask, low bit first; 0 past the last */
	uint64_t delta[PREDICT_GPRS];
	uint16_t mask;	/* GPRs it changed (0 when more than PREDICT_GPRS) */
	uint16_t epoch; /* valid when equal to the table's epoch */
	/*
	 * delta[k] belongs to GPR (gpr_at >> 4k) & 15: mask's bits as indexes,
	 * so a decoder adds all four deltas without looping over the mask (the
	 * unused ones add 0 to rax).
	 */
	uint16_t gpr_at;
	/*
	 * A register operation: destination << 4 | source, WIRE_OP_*.  A copy of
	 * rax into itself (0, 0) is invalid on the wire and here means none.
	 */
	uint8_t opreg;
	uint8_t op;
} __attribute__((aligned(64)));
_Static_assert(sizeof(struct predict_entry) == 64, "a prediction entry fills one cache line");

struct predict_table {
	uint16_t epoch;
	struct predict_entry *entries;
};

int predict_init(struct predict_table *t);
void predict_free(struct predict_table *t);
/* Forget every entry (frame start). */
void predict_reset(struct predict_table *t);

static inline bool predict_has_op(const struct predict_entry *e)
{
	return e->opreg | e->op;
}

static inline struct predict_entry *predict_slot(struct predict_table *t, uint64_t rip)
{
	return &t->entries[(rip * 0x9e3779b97f4a7c15ull) >> (64 - PREDICT_BITS)];
}

static inline bool predict_hit(const struct predict_table *t, const struct predict_entry *e,
			       uint64_t rip)
{
	return e->epoch == t->epoch && e->rip == rip;
}

/*
 * Remember that it changed the GPRs in @mask by @delta (indexed by GPR
 * number; only the entries of @mask are read).  Outcomes touching more than
 * PREDICT_GPRS registers are not kept: the entry then predicts no change.
 */
static inline void predict_learn_gprs(struct predict_entry *e, unsigned int mask,
				      const uint64_t *delta)
{
	unsigned int at = 0, n = 0, m = mask;

	memset(e->delta, 0, sizeof(e->delta));
	for (; m && n < PREDICT_GPRS; m &= m - 1, n++) {
		unsigned int i = (unsigned int)__builtin_ctz(m);

		e->delta[n] = delta[i];
		at |= i << (4 * n);
	}
	e->mask = (uint16_t)mask;
	e->gpr_at = (uint16_t)at;
	if (__builtin_expect(m != 0, 0)) {
		e->mask = 0;
		e->gpr_at = 0;
		memset(e->delta, 0, sizeof(e->delta));
	}
}

/*
 * The learning rule (docs/format.md, "Prediction", step 5), the one place
 * both the encoder and the decoder take it from: after a delta with header
 * @h whose previous RIP @from selected entry @e (@hit: it predicted), the
 * new state has @rip and @rflags, the GPRs in @mask changed by @delta
 * (@mask is the stored mask, 0 when GPR was not stored) and @nops register
 * operations @ops[] (pairs of register and operation bytes, as stored; 0
 * when OPS was not stored) were done.
 */
static inline void predict_update(const struct predict_table *t, struct predict_entry *e, bool hit,
				  uint8_t h, uint64_t from, uint64_t rip, uint64_t rflags,
				  unsigned int mask, const uint64_t *delta, unsigned int nops,
				  const uint8_t *ops)
{
	/*
	 * Stored unconditionally: on a hit without RIP and RFLAGS they are the
	 * values the entry holds already, and a store costs less than a branch.
	 * A miss always learns the GPRs below, which clears what a previous
	 * tag left in the entry.
	 */
	e->rip = from;
	e->epoch = t->epoch;
	e->next_rip = rip;
	e->rflags = rflags;
	if (!hit || (h & (WIRE_DELTA_GPR | WIRE_DELTA_OPS))) {
		predict_learn_gprs(e, mask, delta);
		e->opreg = nops == 1 ? ops[0] : 0;
		e->op = nops == 1 ? ops[1] : 0;
	}
}

#endif
