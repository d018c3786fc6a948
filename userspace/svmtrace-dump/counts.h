/* SPDX-License-Identifier: GPL-2.0 */
/* A growing hash map from 64-bit keys (RIPs, pages) to hit counts. */
#ifndef SVMTRACE_DUMP_COUNTS_H
#define SVMTRACE_DUMP_COUNTS_H

#include <stddef.h>
#include <stdint.h>

struct count_entry {
	uint64_t key;
	uint64_t count; /* 0 = empty slot */
};

struct counts {
	struct count_entry *e;
	size_t cap; /* a power of two */
	size_t used;
};

void counts_init(struct counts *c);
void counts_free(struct counts *c);
void counts_add(struct counts *c, uint64_t key);
/* The @n entries with the highest counts, highest first, into @top; returns how many. */
size_t counts_top(const struct counts *c, struct count_entry *top, size_t n);

#endif
