/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The memory part of instruction records (docs/format.md, "Memory
 * operands"): encoder and decoder of one part, and the prediction table
 * both keep so that a loop over consecutive addresses costs a byte per
 * instruction.  Used only for files with WIRE_FLAG_MEM; no I/O here.
 */
#ifndef SVMTRACE_MEM_H
#define SVMTRACE_MEM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <svmtrace/trace.h>

#define MEM_PREDICT_BITS     12
#define MEM_PREDICT_ENTRIES  (1u << MEM_PREDICT_BITS)
#define MEM_PREDICT_ACCESSES 4 /* instructions with more accesses predict none */

/* One access as an entry remembers it. */
struct mem_learned {
	uint64_t addr;
	uint64_t stride; /* its address minus the one before, modulo 2^64 */
	uint32_t size;
	uint8_t desc; /* descriptor byte: kind and value sources */
	uint8_t regs; /* read register << 4 | written register */
	uint8_t why;
};

struct mem_entry {
	uint64_t rip; /* the instruction's address (tag) */
	uint16_t epoch;
	uint8_t n; /* accesses remembered (0 when more than MEM_PREDICT_ACCESSES) */
	struct mem_learned acc[MEM_PREDICT_ACCESSES];
};

/* An encoder's or a decoder's memory state: the table, and the part last coded. */
struct mem_coder {
	uint16_t epoch;
	struct mem_entry *entries;
	uint64_t last_end; /* end of the frame's last access (address + size) */
	unsigned int n;	   /* accesses of the last part */
	struct svmtrace_mem_access acc[SVMTRACE_MEM_MAX_ACCESSES];
	uint8_t desc[SVMTRACE_MEM_MAX_ACCESSES];
	uint8_t regs[SVMTRACE_MEM_MAX_ACCESSES];
};

int mem_init(struct mem_coder *c);
void mem_free(struct mem_coder *c);
/* A new frame: forget every entry and the last address. */
void mem_frame_start(struct mem_coder *c);

/*
 * Encode the @n accesses @acc of an instruction record at @out (room for
 * WIRE_MEM_MAX bytes): a delta (@delta) whose previous RIP was @from, or a
 * full record; @st is the record's state (its GPRs and RIP).  The caller has checked them
 * (mem_access_check).  Returns the bytes written.
 */
size_t mem_encode(struct mem_coder *c, bool delta, uint64_t from, const struct svmtrace_state *st,
		  const struct svmtrace_mem_access *acc, unsigned int n, uint8_t *out);
/*
 * Decode the memory part at @p into c->acc[0..c->n); arguments as for
 * mem_encode.  Returns the byte after it, or NULL with @why set.
 */
const uint8_t *mem_decode(struct mem_coder *c, bool delta, uint64_t from,
			  const struct svmtrace_state *st, const uint8_t *p, const uint8_t *end,
			  char *why, size_t why_size);

/* NULL when @a is an access a file can hold, else what is wrong with it. */
const char *mem_access_check(const struct svmtrace_mem_access *a);

#endif
