/* SPDX-License-Identifier: GPL-2.0 */
/*
 * x64dbg's memory entries of one instruction, made of our accesses.
 *
 * x64dbg's .trace64 block holds, per memory access, pointer-sized pieces:
 * an address, the 8 bytes there before the instruction and the 8 bytes
 * after it (left out when equal, flag bit 0).  Its dump view takes every
 * byte of a piece as memory's content at that point of the trace.  An
 * access of ours becomes the pieces at its address + 0, 8, 16, 24 (as
 * x64dbg's own tracer lays them out), and is in the file only when every
 * byte of every piece is known before and after the instruction: from the
 * instruction's own accesses (what it read, what it wrote), else from an
 * image of the bytes this thread's earlier records showed (see
 * x64dbg_mem_forget() for when the image is dropped).  Nothing is made up.
 */
#ifndef SVMTRACE_DUMP_X64DBG_MEM_H
#define SVMTRACE_DUMP_X64DBG_MEM_H

#include <stdbool.h>
#include <stdint.h>

#include <svmtrace/trace.h>

/* Entries x64dbg reads per block (its reader's MAX_MEMORY_OPERANDS). */
#define X64DBG_MAX_ENTRIES 32

struct x64dbg_entry {
	uint64_t addr;
	uint64_t old_bytes, new_bytes; /* little-endian: memory order */
};

/* What became of the accesses handed over, by reason. */
struct x64dbg_mem_counts {
	uint64_t accesses;   /* all of them */
	uint64_t unknown;    /* a byte of a piece not known before or after */
	uint64_t unrecorded; /* the capture could not record it: no values */
	uint64_t no_block;   /* its instruction has no block (see cmd_export.c) */
	uint64_t over_limit; /* past X64DBG_MAX_ENTRIES of its instruction */
};

/* The bytes known so far: 8-byte blocks, open addressing. */
struct x64dbg_image_slot {
	uint64_t block; /* address >> 3, plus 1 (0: free) */
	uint8_t bytes[8];
	uint8_t known; /* bit i: bytes[i] known */
};

/* Zeroed: nothing known, nothing counted. */
struct x64dbg_mem {
	struct x64dbg_image_slot *slots;
	size_t cap, used;
	struct x64dbg_mem_counts counts;
};

void x64dbg_mem_free(struct x64dbg_mem *m);

/*
 * Forget every byte.  The caller does it wherever the trace shows that code
 * it did not record may have run in between: a session start or end, lost
 * records, another thread's records, a SYSCALL's step.  What it cannot see
 * (another vCPU's or a device's writes, an interrupt inside a session) the
 * image cannot either: a byte is as the thread last saw it.
 */
void x64dbg_mem_forget(struct x64dbg_mem *m);

/*
 * One instruction's @n accesses @acc, in order: the entries of those that
 * x64dbg can hold go to @out (NULL: the instruction has no block, all are
 * counted no_block) and their number is returned; the image learns the
 * instruction's effect either way.
 */
unsigned int x64dbg_mem_step(struct x64dbg_mem *m, const struct svmtrace_mem_access *acc,
			     unsigned int n, struct x64dbg_entry *out);

/* Accesses not in the file, all reasons. */
uint64_t x64dbg_mem_left_out(const struct x64dbg_mem_counts *c);

#endif
