/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The TSC the model's RDTSC and RDTSCP read (clock.c): a native clock, or
 * the values a capture recorded, with the rules of virtual time checked.
 */
#ifndef E2E_MODEL_CLOCK_H
#define E2E_MODEL_CLOCK_H

#include <stddef.h>
#include <stdio.h>

#include "model.h"

/* Cycles per instruction class: --hide-time's defaults, or --time-costs. */
struct model_costs {
	double insn;
	uint64_t tsc_read, exit;
};

struct model_clock {
	struct model_costs costs;
	double now;			/* the native clock (no --tsc-from) */
	const unsigned long long *row;	/* the row the next record takes (tracer.c) */
	uint64_t *values;		/* --tsc-from: EDX:EAX of each row */
	size_t nr_values;
	FILE *check;			/* --tsc-check: one line per read */
	int have_prev, exact;
	uint64_t prev;			/* the last value read */
	double owed;			/* what the steps since then cost at least */
	char why[160];
};

void clock_init(struct model_clock *k);
/* --time-costs I,T,E (as svmtrace-capture takes it); -1 on a bad argument. */
int clock_costs(struct model_clock *k, const char *arg);
/* --tsc-from: the rows of vCPU @cpu in a `svmtrace-dump dump --regs` CSV. */
int clock_from(struct model_clock *k, const char *path, int cpu, char *err, size_t len);
/*
 * After each instruction (@c->insn_class), @traced when it was a step of
 * the target's, @parked when the target's stepping broke there (a system
 * call, an event).
 */
void clock_account(struct model_clock *k, const struct model_cpu *c, int traced, int parked);

#endif /* E2E_MODEL_CLOCK_H */
