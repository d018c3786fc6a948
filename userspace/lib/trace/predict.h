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

#include "lib/trace/wire.h"

#define PREDICT_BITS	12
#define PREDICT_ENTRIES (1u << PREDICT_BITS)
#define PREDICT_GPRS	4 /* outcomes changing more GPRs predict "no change" */

struct predict_entry {
	uint64_t rip; /* the instruction's address (tag) */
	uint64_t next_rip;
	uint64_t rflags;	      /* RFLAGS after it */
	uint64_t delta[PREDICT_GPRS]; /* changes of the GPRs in mask, low bit first */
	uint16_t mask;		      /* GPRs it changed (0 when more than PREDICT_GPRS) */
	uint16_t pad;
	uint32_t epoch; /* valid when equal to the table's epoch */
};

struct predict_table {
	uint32_t epoch;
	struct predict_entry *entries;
};

int predict_init(struct predict_table *t);
void predict_free(struct predict_table *t);
/* Forget every entry (frame start). */
void predict_reset(struct predict_table *t);

/* popcount(mask) > n, without needing the POPCNT instruction (masks are sparse). */
static inline bool more_bits_than(unsigned int mask, unsigned int n)
{
	for (; mask; mask &= mask - 1)
		if (n-- == 0)
			return true;
	return false;
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
 * Remember that the instruction at @rip went to @next_rip and left @rflags.
 * A new entry starts out predicting no GPR change.
 */
static inline void predict_learn_flow(const struct predict_table *t, struct predict_entry *e,
				      uint64_t rip, uint64_t next_rip, uint64_t rflags)
{
	if (!predict_hit(t, e, rip)) {
		e->rip = rip;
		e->epoch = t->epoch;
		e->mask = 0;
	}
	e->next_rip = next_rip;
	e->rflags = rflags;
}

/*
 * Remember that it changed the GPRs in @mask by @delta (indexed by GPR
 * number).  Outcomes touching more than PREDICT_GPRS registers are not
 * kept: the entry then predicts no change.
 */
static inline void predict_learn_gprs(struct predict_entry *e, unsigned int mask,
				      const uint64_t *delta)
{
	unsigned int n = 0;

	if (more_bits_than(mask, PREDICT_GPRS)) {
		e->mask = 0;
		return;
	}
	e->mask = (uint16_t)mask;
	while (mask) {
		e->delta[n++] = delta[__builtin_ctz(mask)];
		mask &= mask - 1;
	}
}

/*
 * The learning rule (docs/format.md, "Prediction", step 5), the one place
 * both the encoder and the decoder take it from: after a delta with header
 * @h whose previous RIP @from selected entry @e (@hit: it predicted), the
 * new state has @rip and @rflags and the GPRs in @mask changed by @delta
 * (@mask is the stored mask, 0 when GPR was not stored).
 */
static inline void predict_update(const struct predict_table *t, struct predict_entry *e, bool hit,
				  uint8_t h, uint64_t from, uint64_t rip, uint64_t rflags,
				  unsigned int mask, const uint64_t *delta)
{
	if (hit && !(h & (WIRE_DELTA_RIP | WIRE_DELTA_GPR | WIRE_DELTA_RFLAGS)))
		return;
	predict_learn_flow(t, e, from, rip, rflags);
	if (!hit || (h & WIRE_DELTA_GPR))
		predict_learn_gprs(e, mask, delta);
}

#endif
