/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Memory accesses as text: the `mem` cell of `dump --mem` (CSV), its JSON
 * array, and the address filter --mem-range (docs/format.md, "What
 * svmtrace-dump dump prints").
 */
#ifndef SVMTRACE_DUMP_MEMTEXT_H
#define SVMTRACE_DUMP_MEMTEXT_H

#include <stdbool.h>
#include <stdint.h>

#include <svmtrace/trace.h>

/* The longest text of one access (CSV or JSON): an rmw of 32 bytes. */
#define MEMTEXT_ACCESS_MAX 256

struct mem_range {
	bool set;
	uint64_t lo, hi; /* [lo, hi) */
};

/* Does @a touch [lo, hi)?  An access of unknown size (0) touches its address. */
bool mem_in_range(const struct svmtrace_mem_access *a, const struct mem_range *range);

/* @n bytes as lowercase hex digits, memory order. */
char *put_hex_bytes(char *p, const uint8_t *b, uint32_t n);

/*
 * One access as KIND:ADDRESS:SIZE[:VALUES]: r:0x2000:1:41, w:0x3000:1:41,
 * rw:0x7fe8:8:3412000000000000:3512000000000000, u:0x7c00:512:too-large.
 */
char *put_mem_text(char *p, const struct svmtrace_mem_access *a);

/* One access as a JSON object: kind, addr, size, then read/written or why. */
char *put_mem_json(char *p, const struct svmtrace_mem_access *a);

#endif
